/* test_an_idle.c - idle time breakdown on fixture A, hand-computed.
 * HTA view, stream 7: gemm_b waits on its late launch (host 40 us);
 * elementwise 10, gemm_a 9.5, elementwise 1: kernel wait 20.5 us (current
 * HTA looks only at kernel/memcpy/memset categories, so the cuda_sync event
 * that overlaps gemm_a is left out; HTA before Sept 2025 summed its -13 us
 * overlap as kernel wait and measured the next gap from its end: 18.5 us). Stream 20: a 45 us gap
 * with an early launch: other. Exact view: no sync, gaps from the running
 * maximum end (elementwise after gemm_a: 1 us), and the last step's gemm_b
 * (host 23 us). */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    const an_idle_rank *h = an_dual_get(&r.ctx, AN_idle, 0, false), *e = an_dual_get(&r.ctx, AN_idle, 0, true);
    assert_non_null(h);
    assert_non_null(e);
    assert_int_equal(h->n, 2);
    assert_int_equal(h->streams[0].stream, 7);
    assert_int_equal(h->streams[0].idle_ns[AN_IDLE_HOST], 40 * US);
    assert_int_equal(h->streams[0].idle_ns[AN_IDLE_KERNEL], 20500);
    assert_int_equal(h->streams[0].idle_ns[AN_IDLE_OTHER], 0);
    assert_int_equal(h->streams[1].stream, 20);
    assert_int_equal(h->streams[1].idle_ns[AN_IDLE_OTHER], 45 * US);
    assert_int_equal(e->streams[0].idle_ns[AN_IDLE_HOST], 63 * US);
    assert_int_equal(e->streams[0].idle_ns[AN_IDLE_KERNEL], 20500);
    assert_int_equal(e->streams[1].idle_ns[AN_IDLE_OTHER], 45 * US);
    /* the report: rows stream x category, ratio of the stream's idle time */
    assert_string_equal(rep_path(r.rep, "ranks.0.idle_breakdown.0.category")->v.s, "host_wait");
    assert_int_equal(fx_num(&r, "ranks.0.idle_breakdown.0.idle_ns"), 40 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.idle_breakdown.0.ratio"), 40 / 60.5, 1e-12);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.idle_breakdown.5.ratio"), 1.0, 1e-12);
    assert_int_equal(fx_num(&r, "ranks.0.exact.idle_breakdown.1.idle_ns"), 20500);
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
