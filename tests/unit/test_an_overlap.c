/* test_an_overlap.c - communication/computation overlap on fixture A:
 * comm = [15,35) + [80,82) us = 22 us, hidden under compute [15,18) + [80,82) = 5 us. */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.overlap_pct"), 100.0 * 5 / 22, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.exact.overlap_pct"), 100.0 * 5 / 22, 1e-9);
    const an_temporal *t = an_dual_get(&r.ctx, AN_temporal, 0, false);
    assert_int_equal(t->comm_ns, 22 * US);
    assert_int_equal(t->comm_compute_overlap_ns, 5 * US);
    assert_null(an_dual_get(&r.ctx, AN_temporal, 1, false));
    fx_done(&r);
}

static void test_helpers(void **state)
{
    (void)state;
    int64_t a[] = { 0, 10, 20, 30 }, b[] = { 5, 25 };
    assert_int_equal(an_intersect_len(a, 2, b, 1), 10);
    assert_int_equal(an_union_len(a, 2), 20);
    assert_int_equal(an_intersect_len(a, 2, b, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
        cmocka_unit_test(test_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
