/* test_util.h - shared helpers for the cmocka tests. */
#ifndef CP_TEST_UTIL_H
#define CP_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Path under the real data folder, or NULL (and a message) when absent:
 * the caller then returns 77 (skip). */
static inline const char *cp_test_data(const char *rel, char *buf, size_t size)
{
    const char *root = getenv("CHAINPROF_DATA");
    if (!root)
        root = CP_DATA_DIR;
    snprintf(buf, size, "%s/%s", root, rel);
    struct stat st;
    if (stat(buf, &st) != 0) {
        fprintf(stderr, "skip: %s is absent (real data is read in place from ../shared/data)\n", buf);
        return NULL;
    }
    return buf;
}

/* Path of a fixture under tests/fixtures (written by the project, always there). */
static inline const char *cp_test_fixture(const char *rel, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", CP_FIXTURES, rel);
    return buf;
}

#define CP_ASSERT_NEAR(a, b, tol)                                                            \
    do {                                                                                     \
        double _a = (a), _b = (b), _t = (tol);                                               \
        if (!(_a - _b <= _t && _b - _a <= _t))                                               \
            fail_msg("%s = %.6f, expected %.6f +- %g", #a, _a, _b, _t);                      \
    } while (0)

#endif
