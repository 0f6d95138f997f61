/* test_an_temporal.c - temporal breakdown on fixture A (hand-computed),
 * both views, and the nulls of a rank without GPU work. */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    /* HTA view: last step dropped (gemm_b at 120 us gone), the sync event
     * counts as a compute kernel. Span 8..97 us = 89; union 45.5; compute 28.5 */
    assert_int_equal(fx_num(&r, "ranks.0.temporal.kernel_time_ns"), 89 * US);
    assert_int_equal(fx_num(&r, "ranks.0.temporal.idle_ns"), 43500);
    assert_int_equal(fx_num(&r, "ranks.0.temporal.compute_ns"), 28500);
    assert_int_equal(fx_num(&r, "ranks.0.temporal.noncompute_ns"), 17 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.temporal.idle_pct"), 100.0 * 43.5 / 89, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.temporal.compute_pct"), 100.0 * 28.5 / 89, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.temporal.noncompute_pct"), 100.0 * 17 / 89, 1e-9);
    /* exact: every step, no sync: span 8..130 = 122, union 55.5, compute 38.5 */
    assert_int_equal(fx_num(&r, "ranks.0.exact.temporal.kernel_time_ns"), 122 * US);
    assert_int_equal(fx_num(&r, "ranks.0.exact.temporal.idle_ns"), 66500);
    assert_int_equal(fx_num(&r, "ranks.0.exact.temporal.compute_ns"), 38500);
    assert_int_equal(fx_num(&r, "ranks.0.exact.temporal.noncompute_ns"), 17 * US);
    const an_temporal *h = an_dual_get(&r.ctx, AN_temporal, 0, false), *e = an_dual_get(&r.ctx, AN_temporal, 0, true);
    assert_true(h->has_gpu);
    assert_int_equal(e->compute_ns, 38500);
    fx_done(&r);
}

static void test_no_gpu_gives_nulls(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("cpu_only.json");
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 };
    uint32_t c = tl_builder_track(b, &cpu);
    fx_add(b, c, TL_CAT_CPU_OP, "aten::add", 0, 5000, -1);
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    assert_true(fx_is_null(&r, "ranks.0.temporal.idle_pct"));
    assert_true(fx_is_null(&r, "ranks.0.temporal.kernel_time_ns"));
    assert_true(fx_is_null(&r, "ranks.0.overlap_pct"));
    assert_true(fx_is_null(&r, "ranks.0.exact.temporal.compute_pct"));
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
        cmocka_unit_test(test_no_gpu_gives_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
