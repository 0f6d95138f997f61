/* test_an_expert.c - Nsight Systems' expert rules on a timeline built here. */
#include "test_util.h"

#include "analysis/an_expert.h"
#include "analysis/analysis.h"
#include "model/timeline.h"

static uint32_t S(tl_builder *b, const char *s) { return cp_intern_s(tl_builder_strings(b), s); }

static void ev(tl_builder *b, uint32_t track, tl_cat cat, const char *name, int64_t ts, int64_t dur, int64_t corr)
{
    tl_ev e = { .ts_ns = ts, .dur_ns = dur, .name = S(b, name), .cat = cat, .track = track, .corr = corr, .ext_id = -1 };
    tl_builder_add(b, &e);
}

static void test_rules(void **state)
{
    (void)state;
    const int64_t MS = 1000000;
    tl_builder *b = tl_builder_new("r0.json");
    tl_builder_meta(b)->rank = 0;
    tl_track_key ck = { TL_TRACK_CPU, 1, 1, -1, -1 }, gk = { TL_TRACK_GPU, 1, 7, 0, 7 };
    uint32_t cpu = tl_builder_track(b, &ck), gpu = tl_builder_track(b, &gk);
    /* 0..100 ms busy, gap 600 ms, 700..1000 ms busy with a 40 % utilization stretch */
    ev(b, gpu, TL_CAT_KERNEL, "gemm", 0, 100 * MS, 1);
    ev(b, gpu, TL_CAT_KERNEL, "gemm", 700 * MS, 300 * MS, 2);
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 1, 10, 2);
    /* a synchronous copy, an async pageable copy, a sync memset, two sync calls */
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaMemcpy", 2, 10, 3);
    ev(b, gpu, TL_CAT_GPU_MEMCPY, "Memcpy HtoD (Pinned -> Device)", 100 * MS, 5, 3);
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaMemcpyAsync", 3, 10, 4);
    ev(b, gpu, TL_CAT_GPU_MEMCPY, "Memcpy HtoD (Pageable -> Device)", 100 * MS + 10, 7, 4);
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaMemset", 4, 10, 5);
    ev(b, gpu, TL_CAT_GPU_MEMSET, "Memset (Device)", 100 * MS + 20, 3, 5);
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaDeviceSynchronize", 5, 1000, -1);
    ev(b, cpu, TL_CAT_CUDA_RUNTIME, "cudaStreamSynchronize", 2000, 500, -1);
    tl_timeline *tl;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    char *argv[] = { "chainprof" };
    rep_report *rep = rep_new("chainprof.analyze/1", 1, argv);
    an_ctx ctx = { 0 };
    an_opts o = { 0 };
    assert_int_equal(an_run_all(&ctx, tl, rep, &o, NULL), 0);
    an_expert_results *r = ctx.results[AN_expert];
    assert_non_null(r);
    an_expert_hits *h = r->hits;
    assert_int_equal(h[AN_EXPERT_GPU_GAPS].count, 1);
    assert_int_equal(h[AN_EXPERT_GPU_GAPS].total_ns, 600 * MS - 23);
    /* span 1000 ms in 30 chunks of ~33.3 ms: chunks entirely inside the gap
     * are idle; the two partial ones at the gap's edges are under 50 % too */
    assert_true(h[AN_EXPERT_GPU_TIME_UTIL].count >= 17 && h[AN_EXPERT_GPU_TIME_UTIL].count <= 19);
    assert_int_equal(h[AN_EXPERT_MEMCPY_SYNC].count, 1);
    assert_int_equal(h[AN_EXPERT_MEMCPY_PAGEABLE].count, 1);
    assert_int_equal(h[AN_EXPERT_MEMSET_SYNC].count, 1);
    assert_int_equal(h[AN_EXPERT_API_SYNC].count, 2);
    assert_int_equal(h[AN_EXPERT_API_SYNC].total_ns, 1500);
    rep_node *gap = rep_path(rep, "expert.gpu_gaps.0.dur_ns");
    assert_non_null(gap);
    assert_int_equal(gap->v.i, 600 * MS - 23);
    assert_string_equal(an_expert_rule_key(AN_EXPERT_GPU_TIME_UTIL), "gpu_time_util");
    an_ctx_free(&ctx);
    rep_free(rep);
    tl_free(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_rules) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
