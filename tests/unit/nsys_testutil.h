/* nsys_testutil.h - shared by the Nsight Systems reader tests: the real
 * exports under ../shared/data/nsys and a loader that reads one into as
 * many builders as it has processes, then freezes them. Header-only:
 * every test executable includes what it needs. */
#ifndef CP_TESTS_NSYS_TESTUTIL_H
#define CP_TESTS_NSYS_TESTUTIL_H

#include "test_util.h"

#include "model/timeline.h"
#include "readers/rd_nsys.h"

/* The seven exports, four export schema versions. */
static const char *const nsys_exports[] = {
    "nsys/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", /* 2.9.1 */
    "nsys/pipit/perlmutter-cloverleaf-cuda.sqlite",      /* 3.13.2 */
    "nsys/nsys-ai/mock.sqlite",                          /* 3.24.14 */
    "nsys/nsys-ai/healthy_1pct.sqlite",                  /* 3.24.14, reduced */
    "nsys/nsys-ai/h100_2gpu_1s.sqlite",                  /* 3.25.0, 2 processes */
    "nsys/nsys-ai/mfu_2gpu_before.sqlite",
    "nsys/nsys-ai/mfu_2gpu_after.sqlite",
};

typedef struct nsys_extra {
    tl_builder *b[16];
    size_t n;
} nsys_extra;

static tl_builder *nsys_more(void *ctx, const char *src)
{
    nsys_extra *x = ctx;
    assert_true(x->n < 15);
    return x->b[++x->n] = tl_builder_new(src);
}

/* Read path with rd_nsys_read (one builder per process) on `threads`
 * threads in parts of split_rows rows (0: the reader's default), and freeze. */
static tl_timeline *nsys_load_split(const char *path, int threads, size_t split_rows)
{
    nsys_extra x = { { tl_builder_new(path) }, 0 };
    rd_opts o = { .more = nsys_more, .more_ctx = &x, .threads = threads, .split_rows = split_rows };
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_nsys_read(path, x.b[0], &o, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    tl_timeline *tl;
    assert_int_equal(tl_finish(x.b, x.n + 1, NULL, &tl, NULL), 0);
    return tl;
}

/* Read path with rd_nsys_read (one builder per process) and freeze. */
static tl_timeline *nsys_load(const char *path) { return nsys_load_split(path, 1, 0); }

#endif
