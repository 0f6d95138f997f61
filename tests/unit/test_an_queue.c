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

/* The series behind the statistics (the overlay's counter tracks): stream
 * 7's points at the times above, in order, then stream 20's. */
static void test_series(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    an_counter_track *t;
    size_t n = an_counter_tracks_of(&r.ctx, &an_views(&r.ctx, 0)->hta, &t);
    assert_true(n >= 2);
    static const int64_t at_us[] = { 1, 8, 20, 22, 26, 50, 58, 70, 80, 96 };
    static const double len[] = { 1, 0, 1, 2, 3, 4, 3, 2, 1, 0 };
    assert_string_equal(t[0].name, "Queue Length");
    assert_int_equal(t[0].stream, 7);
    assert_int_equal(t[0].n, 10);
    for (size_t k = 0; k < 10; k++) {
        assert_int_equal(t[0].pts[k].t_ns, at_us[k] * US);
        CP_ASSERT_NEAR(t[0].pts[k].value, len[k], 0);
    }
    assert_int_equal(t[1].stream, 20);
    assert_int_equal(t[1].n, 4);
    for (size_t i = 2; i < n; i++) /* fixture A has no copies: any further track is a memory kind */
        assert_int_equal(t[i].stream, -1);
    an_counter_tracks_free(t, n);
    assert_int_equal(fx_num(&r, "ranks.0.counter_tracks.events"), 14);
    assert_int_equal(fx_num(&r, "ranks.0.counter_tracks.tracks.0.max"), 4);
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
        cmocka_unit_test(test_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
