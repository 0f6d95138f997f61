/* evidence_testutil.h - helpers shared by the evidence reader tests.
 *
 * Header-only (static functions) because every tests/unit/test_*.c is its own
 * executable. Two kinds of input:
 *   - the project's real samples under ../shared/data/logs (found through the
 *     CP_DATA_DIR define, the CHAINPROF_DATA environment variable, or by
 *     walking up from this file); read in place, never copied; their `#@`
 *     provenance lines are blanked first, as users' files do not have them;
 *   - fixtures written by the project in tests/fixtures/<fmt>/.
 * A test binary runs its fixture tests always and its sample tests only when
 * the data is present; with no data it exits 77 (ctest's skip) unless a
 * fixture test failed.
 */
#ifndef CP_TESTS_EVIDENCE_TESTUTIL_H
#define CP_TESTS_EVIDENCE_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/readers/rd_text.h"

static int ev_is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* cmocka's float assertion works in single precision; the readers' numbers
 * are doubles (sizes up to 2^33, bandwidths with 6 digits). Needs cmocka.h
 * included before this header. */
#define assert_near(a, b, eps)                                                      \
    do {                                                                            \
        double ev_a_ = (a), ev_b_ = (b);                                            \
        if (!(fabs(ev_a_ - ev_b_) <= (eps))) {                                      \
            print_error("%s = %.17g, expected %.17g\n", #a, ev_a_, ev_b_);           \
            fail();                                                                 \
        }                                                                           \
    } while (0)

/* Directory holding logs/, or NULL when the data is absent. */
static const char *ev_data_dir(void)
{
    static char found[1024];
    const char *env = getenv("CHAINPROF_DATA");
    if (env && ev_is_dir(env))
        return env;
#ifdef CP_DATA_DIR
    if (ev_is_dir(CP_DATA_DIR))
        return CP_DATA_DIR;
#endif
    /* tests/unit/<this file> -> repository root -> ../shared/data, or
     * ../../shared/data for a worktree under wt/. */
    char root[900];
    snprintf(root, sizeof root, "%s", __FILE__);
    char *slash = strrchr(root, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    const char *ups[] = {"/../../../shared/data", "/../../../../shared/data"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(found, sizeof found, "%s%s", root, ups[i]);
        if (ev_is_dir(found))
            return found;
    }
    return NULL;
}

/* Absolute path of tests/fixtures/<rel>. */
static const char *ev_fixture_path(const char *rel, char *buf, size_t cap)
{
    char dir[900];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(buf, cap, "%s/../fixtures/%s", dir, rel);
    return buf;
}

/* Loads a file (blanking `#@` lines); aborts the test run when unreadable,
 * since callers only ask for files they know exist. Caller frees. */
static char *ev_load(const char *path, size_t *len)
{
    char *data = NULL;
    cp_error err;
    if (rd_load_file(path, &data, len, &err) < 0) {
        fprintf(stderr, "cannot load %s: %s\n", path, err.msg);
        abort();
    }
    rd_blank_annotations(data, *len);
    return data;
}

/* Sample logs/<rel> (e.g. "nccl-tests/x.txt"); NULL when the data is absent. */
static char *ev_load_sample(const char *rel, size_t *len, char *path, size_t cap)
{
    const char *dir = ev_data_dir();
    if (!dir)
        return NULL;
    snprintf(path, cap, "%s/logs/%s", dir, rel);
    return ev_load(path, len);
}

static char *ev_load_fixture(const char *rel, size_t *len, char *path, size_t cap)
{
    return ev_load(ev_fixture_path(rel, path, cap), len);
}

/* Exit status of a test binary: fixture failures fail; otherwise skip when
 * the samples could not run. */
static int ev_exit(int fixture_failures, int sample_failures)
{
    if (fixture_failures || sample_failures)
        return 1;
    return ev_data_dir() ? 0 : 77;
}

#endif
