/* test_an_queue.c - launch queue length on fixture A. Stream 7 (HTA view):
 * +1 at 1, 20, 22, 26, 50 us, -1 at 8, 58, 70, 80, 96 us: samples
 * 1 0 1 2 3 4 3 2 1 0. Stream 20: 1 0 1 0. */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    assert_int_equal(fx_num(&r, "ranks.0.queue_length.0.stream"), 7);
    assert_int_equal(fx_num(&r, "ranks.0.queue_length.0.count"), 10);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.0.mean"), 1.7, 1e-12);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.0.max"), 4, 0);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.0.min"), 0, 0);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.0.p50"), 1.5, 1e-12);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.0.p25"), 1, 1e-12);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.0.std"), sqrt(16.1 / 9), 1e-12);
    assert_int_equal(fx_num(&r, "ranks.0.queue_length.1.stream"), 20);
    assert_int_equal(fx_num(&r, "ranks.0.queue_length.1.count"), 4);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.queue_length.1.mean"), 0.5, 1e-12);
    /* exact: the last step's launch and kernel add the samples 1 0 */
    assert_int_equal(fx_num(&r, "ranks.0.exact.queue_length.0.count"), 12);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.exact.queue_length.0.mean"), 18.0 / 12, 1e-12);
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
