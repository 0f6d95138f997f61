/* evidence_testutil.h - helpers shared by the evidence reader tests.
 *
 * Header-only (static functions) because every tests/unit/test_*.c is its own
 * executable; builds on test_util.h (data location, CP_ASSERT_NEAR). Two kinds
 * of input:
 *   - the project's real samples under ../shared/data/logs, read in place and
 *     never copied, as analyze reads them (the line iterator skips their
 *     `#@` provenance lines, which users' files do not have);
 *   - fixtures written by the project in tests/fixtures/<fmt>/.
 * A test binary runs its fixture tests always and its sample tests only when
 * the data is present; with no data it exits 77 (ctest's skip) unless a
 * fixture test failed.
 */
#ifndef CP_TESTS_EVIDENCE_TESTUTIL_H
#define CP_TESTS_EVIDENCE_TESTUTIL_H

#include "test_util.h"

#include <math.h>

#include "model/evidence.h"
#include "readers/evidence.h"
#include "readers/rd_text.h"

/* 1 when ../shared/data/logs is there (quietly: no skip message). */
static inline int ev_have_data(void)
{
    const char *root = getenv("CHAINPROF_DATA");
    if (!root)
        root = CP_DATA_DIR;
    char p[1024];
    snprintf(p, sizeof p, "%s/logs", root);
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Loads a file as it is (the readers skip the samples' `#@` lines, as
 * analyze gets them); aborts the test run when unreadable,
 * since callers only ask for files they know exist. Caller frees. */
static inline char *ev_load(const char *path, size_t *len)
{
    char *data = NULL;
    cp_error err;
    if (rd_load_file(path, &data, len, &err) < 0) {
        fprintf(stderr, "cannot load %s: %s\n", path, err.msg);
        abort();
    }
    return data;
}

/* Sample logs/<rel> (e.g. "nccl-tests/x.txt"); NULL when the data is absent.
 * path receives the file's path. */
static inline char *ev_load_sample(const char *rel, size_t *len, char *path, size_t cap)
{
    char sub[512];
    snprintf(sub, sizeof sub, "logs/%s", rel);
    if (!cp_test_data(sub, path, cap))
        return NULL;
    return ev_load(path, len);
}

static inline const char *ev_fixture_path(const char *rel, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", CP_FIXTURES, rel);
    return buf;
}

static inline char *ev_load_fixture(const char *rel, size_t *len, char *path, size_t cap)
{
    return ev_load(ev_fixture_path(rel, path, cap), len);
}

/* The damage the last ev_parse_as counted (the facts carry none: the
 * evidence set keeps it beside them). */
static diag_set ev_last_diag;

/* Parse a buffer with one kind's reader (rd_ev_parse), keeping its damage
 * in ev_last_diag. */
static inline int ev_parse_as(ev_kind kind, const char *data, size_t len, const char *name, void **out, cp_error *err)
{
    diag_init(&ev_last_diag);
    return rd_ev_parse(kind, data, len, name, out, &ev_last_diag, err);
}

/* Defines `static T *parse(const char *rel, int sample)` for evidence kind
 * KIND (reader prefix p): loads the sample logs/<rel> (returns NULL when the
 * data is absent) or the fixture <rel>, checks that the reader's sniffer
 * claims it, parses it with rel as the file name, and fails the test when
 * parsing fails; the damage is in ev_last_diag. */
#define EV_DEFINE_PARSE(KIND, p, T)                                                      \
    static T *parse(const char *rel, int sample)                                         \
    {                                                                                    \
        char path[1200];                                                                 \
        size_t len;                                                                      \
        char *data = sample ? ev_load_sample(rel, &len, path, sizeof path)               \
                            : ev_load_fixture(rel, &len, path, sizeof path);             \
        if (!data)                                                                       \
            return NULL;                                                                 \
        void *r = NULL;                                                                  \
        cp_error err;                                                                    \
        if (ev_parse_as(EV_##KIND, data, len, rel, &r, &err) < 0)                        \
            fail_msg("%s: %s", rel, err.msg);                                            \
        if (rd_##p##_sniff(data, len) < 50)                                              \
            fail_msg("%s: sniffer confidence %d", rel, rd_##p##_sniff(data, len));       \
        free(data);                                                                      \
        return r;                                                                        \
    }

/* Line number of the first occurrence of a diag code ("file:line"), 0 if none. */
static inline long ev_first_line(const diag_set *d, diag_code code)
{
    const char *colon = strrchr(d->first[code], ':');
    return d->count[code] && colon ? strtol(colon + 1, NULL, 10) : 0;
}

/* Exit status of a test binary: failures fail; otherwise skip when the
 * samples could not run. */
static inline int ev_exit(int fixture_failures, int sample_failures)
{
    if (fixture_failures || sample_failures)
        return 1;
    return ev_have_data() ? 0 : 77;
}

#endif
