/* test_an_launch.c - launch statistics on fixture A: per correlation cpu
 * duration, gpu duration, launch delay; HTA clamps the negative delay of
 * corr 1 (the kernel started while the 60 us call was still running). */
#include "test_util.h"
#include "an_fixture.h"

static const an_launch *find(const an_launch_rank *lr, int64_t corr)
{
    for (size_t i = 0; i < lr->n_rows; i++)
        if (lr->rows[i].corr == corr)
            return &lr->rows[i];
    return NULL;
}

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    const an_launch_rank *h = an_dual_get(&r.ctx, AN_launch, 0, false);
    const an_launch_rank *e = an_dual_get(&r.ctx, AN_launch, 0, true);
    assert_int_equal(h->n, 7); /* corr 9 is in the dropped step; corr 7 is not a launch */
    assert_int_equal(e->n, 8);
    /* by default only the listed rows are kept: the outliers, corr 1 and 5 */
    assert_int_equal(h->n_rows, 2);
    assert_non_null(find(h, 1));
    assert_non_null(find(h, 5));
    assert_null(find(h, 6));
    assert_true(h->sum_cpu_ns / (double)h->n == fx_num(&r, "ranks.0.launch_stats.cpu_duration_mean_ns"));
    assert_int_equal(h->short_kernels, 1);    /* corr 5: 0.5 us of work for a 1 us call */
    assert_int_equal(h->runtime_outliers, 1); /* corr 1: 60 us call */
    assert_int_equal(h->delay_outliers, 0);
    assert_int_equal(fx_num(&r, "ranks.0.launch_stats.launches"), 7);
    /* by default the table lists the outliers only: the short kernel and the runtime outlier */
    assert_int_equal(fx_num(&r, "ranks.0.launch_stats.by_correlation.0.correlation"), 1);
    assert_non_null(rep_path(r.rep, "ranks.0.launch_stats.by_correlation.1"));
    assert_null(rep_path(r.rep, "ranks.0.launch_stats.by_correlation.2"));
    assert_false(rep_path(r.rep, "ranks.0.launch_stats.by_correlation_complete")->v.b);
    /* --launch-table: every launch */
    rep_report *full = rep_new("chainprof.analyze/1", 0, NULL);
    an_ctx c2 = { 0 };
    an_opts o2 = { .nthreads = 1, .launch_table = true };
    assert_int_equal(an_run_all(&c2, r.tl, full, &o2, NULL), 0);
    h = an_dual_get(&c2, AN_launch, 0, false);
    e = an_dual_get(&c2, AN_launch, 0, true);
    assert_int_equal(h->n_rows, 7);
    assert_int_equal(e->n_rows, 8);
    const an_launch *c1 = find(h, 1);
    assert_non_null(c1);
    assert_int_equal(c1->cpu_ns, 60 * US);
    assert_int_equal(c1->gpu_ns, 10 * US);
    assert_int_equal(c1->delay_ns, 0);
    assert_int_equal(find(e, 1)->delay_ns, -53 * US);
    assert_int_equal(find(h, 6)->delay_ns, 57 * US);
    assert_null(find(h, 9));
    assert_int_equal(find(e, 9)->delay_ns, 5 * US);
    assert_null(find(h, 7));
    assert_int_equal(fx_rep_num(full, "ranks.0.launch_stats.by_correlation.0.correlation"), 1);
    assert_int_equal(fx_rep_num(full, "ranks.0.launch_stats.by_correlation.1.launch_delay_ns"), 6 * US);
    assert_null(rep_path(full, "ranks.0.launch_stats.by_correlation.7"));
    assert_true(rep_path(full, "ranks.0.launch_stats.by_correlation_complete")->v.b);
    an_ctx_free(&c2);
    rep_free(full);
    assert_int_equal(fx_num(&r, "ranks.0.exact.launch_stats.launches"), 8);
    assert_true(an_is_launch_name("cudaLaunchKernelExC"));
    assert_true(an_is_launch_name("hipLaunchKernel"));
    assert_false(an_is_launch_name("cudaStreamWaitEvent"));
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
