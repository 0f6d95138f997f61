/* test_an_steps.c - profiler steps on fixture A: steps 1 (100 us) and 2
 * (200 us); HTA drops step 2; stats over both. */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    const an_steps_result *sr = r.ctx.results[AN_steps];
    assert_int_equal(sr->ranks[0].n, 2);
    assert_int_equal(sr->ranks[0].steps[0].id, 1);
    assert_false(sr->ranks[0].steps[0].hta_dropped);
    assert_true(sr->ranks[0].steps[1].hta_dropped);
    assert_int_equal(fx_num(&r, "ranks.0.steps.1.id"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.steps.1.dur_ns"), 200 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.step_time.mean_ns"), 150 * US, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.step_time.p50_ns"), 150 * US, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.step_time.p95_ns"), 195 * US, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.step_time.max_ns"), 200 * US, 1e-9);
    fx_done(&r);
}

static void test_no_steps(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("nosteps.json");
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 };
    fx_add(b, tl_builder_track(b, &cpu), TL_CAT_CPU_OP, "aten::mm", 0, 10, -1);
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    assert_int_equal(fx_num(&r, "ranks.0.step_time.count"), 0);
    assert_true(fx_is_null(&r, "ranks.0.step_time.mean_ns"));
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
        cmocka_unit_test(test_no_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
