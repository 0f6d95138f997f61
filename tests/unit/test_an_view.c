/* test_an_view.c - HTA's preprocessing replayed: rounding to whole us
 * (start up, end down, negative durations), the last-step drop, and the
 * duplication of a kernel whose correlation id two kept CPU events share. */
#include "test_util.h"
#include "an_fixture.h"

static void test_rounding(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("frac.json");
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 }, g = { TL_TRACK_GPU, 0, 7, 0, 7 };
    uint32_t c = tl_builder_track(b, &cpu), t = tl_builder_track(b, &g);
    fx_add(b, c, TL_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 10 * US, -1);
    fx_add(b, c, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 200, 100, 1);
    fx_add(b, t, TL_CAT_KERNEL, "a", 1500, 700, 1);
    fx_add(b, c, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 400, 100, 2);
    fx_add(b, t, TL_CAT_KERNEL, "b", 3200, 500, 2);
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    const an_rank_views *rv = an_views(&r.ctx, 0);
    assert_true(rv->hta.rounded);
    assert_false(rv->hta.dropped_last_step); /* one step only */
    assert_int_equal(rv->hta.n_gpu, 2);
    size_t ka = rv->hta.gpu[0], kb = rv->hta.gpu[1];
    assert_int_equal(rv->hta.t0[ka], 2000);
    assert_int_equal(rv->hta.t1[ka], 2000); /* 1.5 .. 2.2 us -> 2 .. 2 */
    assert_int_equal(rv->hta.t0[kb], 4000);
    assert_int_equal(rv->hta.t1[kb], 3000); /* 3.2 .. 3.7 us -> 4 .. 3: negative */
    assert_true(rep_path(r.rep, "ranks.0.hta_preprocessing.rounded_to_us")->v.b);
    /* HTA arithmetic on the rounded intervals: span 1 us, busy -1 us */
    assert_int_equal(fx_num(&r, "ranks.0.temporal.kernel_time_ns"), 1000);
    assert_int_equal(fx_num(&r, "ranks.0.temporal.idle_ns"), 2000);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.temporal.compute_ns"), -1000, 0);
    /* exact: 1.5 .. 3.7 us, busy 1.2 us */
    assert_int_equal(fx_num(&r, "ranks.0.exact.temporal.kernel_time_ns"), 2200);
    assert_int_equal(fx_num(&r, "ranks.0.exact.temporal.idle_ns"), 1000);
    assert_false(an_views(&r.ctx, 0)->exact.rounded);
    fx_done(&r);
}

static void test_drop_and_duplicates(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("dup.json");
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 }, g = { TL_TRACK_GPU, 0, 7, 0, 7 };
    uint32_t c = tl_builder_track(b, &cpu), t = tl_builder_track(b, &g);
    fx_add(b, c, TL_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 50 * US, -1);
    fx_add(b, c, TL_CAT_USER_ANNOTATION, "ProfilerStep#2", 50 * US, 50 * US, -1);
    fx_add(b, c, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 1 * US, 1 * US, 1);
    fx_add(b, c, TL_CAT_CUDA_DRIVER, "cuLaunchKernel", 1 * US, 500, 1);
    fx_add(b, t, TL_CAT_KERNEL, "k", 5 * US, 1 * US, 1);
    fx_add(b, c, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 60 * US, 1 * US, 2);
    fx_add(b, t, TL_CAT_KERNEL, "k", 65 * US, 1 * US, 2);
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    const an_views_result *vr = r.ctx.results[AN_view];
    assert_int_equal(vr->n_step_names, 2);
    const an_rank_views *rv = an_views(&r.ctx, 0);
    assert_true(rv->hta.dropped_last_step);
    assert_int_equal(rv->hta.last_step_start_ns, 50 * US);
    assert_false(rv->hta.rounded);
    assert_int_equal(rv->hta.n_gpu, 2); /* the first kernel twice, the second dropped */
    assert_int_equal(rv->hta.gpu[0], rv->hta.gpu[1]);
    assert_int_equal(rv->exact.n_gpu, 2); /* both kernels once */
    assert_int_not_equal(rv->exact.gpu[0], rv->exact.gpu[1]);
    assert_int_equal(fx_num(&r, "ranks.0.kernels.0.count"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.kernels.0.sum_ns"), 2 * US);
    /* the inner join of 2 CPU rows with 2 GPU rows */
    assert_int_equal(fx_num(&r, "ranks.0.launch_stats.launches"), 4);
    assert_int_equal(fx_num(&r, "ranks.0.exact.launch_stats.launches"), 3);
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_drop_and_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
