/* an_fixture.h - small timelines built in code for the analyzer tests, and
 * a helper that runs every analyzer on one.
 *
 * Fixture A (one rank, whole-microsecond timestamps, two profiler steps;
 * times below in us). CPU thread:
 *   ProfilerStep#1 [0,100)   ProfilerStep#2 [100,300)   "## forward ##" [1,40)
 *   cudaLaunchKernel corr 1 [1,61)  -> gemm_a      stream 7  [8,18)
 *   cudaLaunchKernel corr 3 [12,14) -> ncclKernel  stream 20 [15,35)
 *   cudaLaunchKernel corr 5 [20,21) -> elementwise stream 7  [70,70.5)
 *   cudaLaunchKernel corr 6 [22,23) -> gemm_a      stream 7  [80,95)
 *   cudaStreamWaitEvent corr 7 [24,25) -> "Event Sync" (cuda_sync) stream 7 [82,84)
 *   cudaLaunchKernel corr 8 [26,27) -> elementwise stream 7  [96,97)
 *   cudaLaunchKernel corr 10 [28,29) -> ncclKernel stream 20 [80,82)
 *   cudaLaunchKernel corr 2 [50,52) -> gemm_b      stream 7  [58,60)
 *   cudaLaunchKernel corr 9 [110,115) -> gemm_b    stream 7  [120,130)  (in the last step)
 * GPU annotations (no stream): "fwd" [7,36), "inner" [8,17).
 */
#ifndef CP_TEST_AN_FIXTURE_H
#define CP_TEST_AN_FIXTURE_H

#include "analysis/an_results.h"
#include "analysis/analysis.h"
#include "model/report.h"
#include "model/timeline.h"

#include <math.h>

#define US 1000

static inline uint32_t fx_s(tl_builder *b, const char *s) { return cp_intern_s(tl_builder_strings(b), s); }

static inline size_t fx_add(tl_builder *b, uint32_t track, tl_cat cat, const char *name, int64_t ts, int64_t dur,
                            int64_t corr)
{
    tl_ev ev = { .ts_ns = ts, .dur_ns = dur, .name = fx_s(b, name), .cat_name = fx_s(b, tl_cat_name(cat)),
                 .cat = cat, .track = track, .corr = corr, .ext_id = -1 };
    return tl_builder_add(b, &ev);
}

static inline tl_timeline *fx_finish(tl_builder *b)
{
    tl_timeline *tl = NULL;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    return tl;
}

static inline tl_timeline *fixture_a(void)
{
    tl_builder *b = tl_builder_new("fixture_a.json");
    tl_builder_meta(b)->rank = 0;
    tl_track_key cpu = { TL_TRACK_CPU, 100, 100, -1, -1 };
    tl_track_key s7 = { TL_TRACK_GPU, 0, 7, 0, 7 }, s20 = { TL_TRACK_GPU, 0, 20, 0, 20 };
    uint32_t c = tl_builder_track(b, &cpu), g7 = tl_builder_track(b, &s7), g20 = tl_builder_track(b, &s20);
    fx_add(b, c, TL_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 100 * US, -1);
    fx_add(b, c, TL_CAT_USER_ANNOTATION, "ProfilerStep#2", 100 * US, 200 * US, -1);
    fx_add(b, c, TL_CAT_USER_ANNOTATION, "## forward ##", 1 * US, 39 * US, -1);
    static const struct { const char *call; int64_t t0, t1, corr; const char *kname; tl_cat kcat; int stream;
                          int64_t k0, k1; } L[] = {
        { "cudaLaunchKernel", 1, 61, 1, "gemm_a", TL_CAT_KERNEL, 7, 8000, 18000 },
        { "cudaLaunchKernel", 12, 14, 3, "ncclKernel_AllReduce", TL_CAT_KERNEL, 20, 15000, 35000 },
        { "cudaLaunchKernel", 20, 21, 5, "elementwise", TL_CAT_KERNEL, 7, 70000, 70500 },
        { "cudaLaunchKernel", 22, 23, 6, "gemm_a", TL_CAT_KERNEL, 7, 80000, 95000 },
        { "cudaStreamWaitEvent", 24, 25, 7, "Event Sync", TL_CAT_CUDA_SYNC, 7, 82000, 84000 },
        { "cudaLaunchKernel", 26, 27, 8, "elementwise", TL_CAT_KERNEL, 7, 96000, 97000 },
        { "cudaLaunchKernel", 28, 29, 10, "ncclKernel_AllReduce", TL_CAT_KERNEL, 20, 80000, 82000 },
        { "cudaLaunchKernel", 50, 52, 2, "gemm_b", TL_CAT_KERNEL, 7, 58000, 60000 },
        { "cudaLaunchKernel", 110, 115, 9, "gemm_b", TL_CAT_KERNEL, 7, 120000, 130000 },
    };
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        fx_add(b, c, TL_CAT_CUDA_RUNTIME, L[i].call, L[i].t0 * US, (L[i].t1 - L[i].t0) * US, L[i].corr);
        fx_add(b, L[i].stream == 7 ? g7 : g20, L[i].kcat, L[i].kname, L[i].k0, L[i].k1 - L[i].k0, L[i].corr);
    }
    /* GPU annotations carry no stream argument; readers flag that */
    tl_ev an = { .ts_ns = 7 * US, .dur_ns = 29 * US, .name = fx_s(b, "fwd"), .cat = TL_CAT_GPU_USER_ANNOTATION,
                 .track = g7, .corr = -1, .ext_id = -1, .flags = TL_F_NO_STREAM_ARG };
    tl_builder_add(b, &an);
    an.ts_ns = 8 * US;
    an.dur_ns = 9 * US;
    an.name = fx_s(b, "inner");
    tl_builder_add(b, &an);
    return fx_finish(b);
}

typedef struct fx_run {
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    an_opts opts;
} fx_run;

static inline void fx_run_all(fx_run *r, tl_timeline *tl)
{
    memset(r, 0, sizeof *r);
    r->tl = tl;
    r->rep = rep_new("chainprof.analyze/1", 0, NULL);
    r->opts.nthreads = 2;
    assert_int_equal(an_run_all(&r->ctx, tl, r->rep, &r->opts, NULL), 0);
}

static inline void fx_done(fx_run *r)
{
    an_ctx_free(&r->ctx);
    rep_free(r->rep);
    tl_free(r->tl);
}

/* A number or integer node at a report path, as double. */
static inline double fx_rep_num(const rep_report *rep, const char *path)
{
    const rep_node *n = rep_path(rep, path);
    if (!n)
        fail_msg("no report node at %s", path);
    if (n->type == REP_INT)
        return (double)n->v.i;
    if (n->type == REP_NUM)
        return n->v.d;
    fail_msg("report node %s is not a number (type %d)", path, (int)n->type);
    return 0;
}

static inline double fx_num(const fx_run *r, const char *path) { return fx_rep_num(r->rep, path); }

static inline bool fx_is_null(const fx_run *r, const char *path)
{
    const rep_node *n = rep_path(r->rep, path);
    return n && (n->type == REP_NULL || (n->type == REP_NUM && isnan(n->v.d)));
}

#endif
