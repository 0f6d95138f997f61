/* test_coll.c - the slow host/link decision on hand-made matrices, and the collective
 * sweep on the one-process comm (every row checked, #wrong must be 0). */
#include "test_util.h"

#include "comm/comm.h"
#include "probe/coll_bench.h"
#include "model/p2p_slow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Four hosts, one rank each; host "c" has every link at 1/10 the rate. */
static void test_slow_host(void **state)
{
    (void)state;
    const char *hosts[4] = {"a", "b", "c", "d"};
    double bw[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            bw[i * 4 + j] = i == j ? NAN : (i == 2 || j == 2) ? 1.0 : 10.0 + i + j;
    p2p_slow_result r;
    p2p_slow_analyze(4, hosts, bw, P2P_SLOW_MARGIN, &r);
    assert_true(r.by_host);
    assert_true(r.decidable);
    assert_int_equal(r.n_ents, 4);
    assert_int_equal(r.n_links, 6);
    for (size_t e = 0; e < r.n_ents; e++)
        assert_int_equal(r.ents[e].slow, e == 2);
    for (size_t l = 0; l < r.n_links; l++)
        assert_int_equal(r.links[l].slow, r.links[l].a == 2 || r.links[l].b == 2);
    /* hosts a, b, d: medians of {fast, fast, 1.0} are fast; reference is
     * the median of {13, 1, 14, 15}... computed from pairs: a:{11,1,13}->11 */
    CP_ASSERT_NEAR(r.ents[0].score_gbps, 11.0, 1e-12);
    CP_ASSERT_NEAR(r.ents[2].score_gbps, 1.0, 1e-12);
    p2p_slow_free(&r);
}

/* Two ranks per host on 3 hosts; the link between h1 and h2 alone is slow:
 * no host is slow (each has one fast link of two -> median is the mean),
 * but the link is flagged. Intra-host pairs (fast shared memory) ignored. */
static void test_slow_link_and_intra(void **state)
{
    (void)state;
    const char *hosts[6] = {"h0", "h0", "h1", "h1", "h2", "h2"};
    double bw[36];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            int hi = i / 2, hj = j / 2;
            bw[i * 6 + j] = i == j ? NAN : hi == hj ? 100.0 : (hi + hj == 3) ? 1.0 : 10.0;
        }
    p2p_slow_result r;
    p2p_slow_analyze(6, hosts, bw, P2P_SLOW_MARGIN, &r);
    assert_int_equal(r.n_ents, 3);
    assert_true(r.decidable);
    for (size_t l = 0; l < r.n_links; l++)
        assert_int_equal(r.links[l].slow, r.links[l].a == 1 && r.links[l].b == 2);
    CP_ASSERT_NEAR(r.ents[0].score_gbps, 10.0, 1e-12); /* never 100: intra pairs left out */
    p2p_slow_free(&r);
    /* two entities only: not decidable, nothing flagged */
    const char *h2[2] = {"x", "y"};
    double b2[4] = {NAN, 1.0, 50.0, NAN};
    p2p_slow_analyze(2, h2, b2, P2P_SLOW_MARGIN, &r);
    assert_false(r.decidable);
    assert_false(r.ents[0].slow || r.ents[1].slow);
    p2p_slow_free(&r);
}

/* The sweep on one process: every op checked, nothing wrong, sizes follow
 * the factor, bandwidths consistent with the formulas. */
static void test_sweep_local(void **state)
{
    (void)state;
    comm *c = NULL;
    assert_int_equal(comm_open(&c, true, 10, NULL), 0);
    assert_string_equal(comm_backend(c), "local");
    coll_cfg cfg = {.min_bytes = 64, .max_bytes = 4096, .factor = 4, .warmup = 1, .iters = 3, .check = true};
    coll_cfg_defaults(&cfg, false);
    coll_result *res = NULL;
    size_t n = 0;
    cp_error err;
    assert_int_equal(coll_sweep(c, &cfg, &res, &n, &err), 0);
    /* 4 ops x 2 forms + broadcast x 1, 4 sizes each (64, 256, 1024, 4096);
     * send-recv needs two ranks */
    assert_int_equal(n, 9 * 4);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(res[i].wrong, 0);
        assert_true(res[i].time_us > 0);
        CP_ASSERT_NEAR(res[i].algbw_gbps, res[i].size_bytes / (res[i].time_us * 1e-6) / 1e9, 1e-6);
        assert_true(res[i].busbw_gbps == 0 || res[i].op == COLL_BROADCAST);
    }
    assert_int_equal(res[0].size_bytes, 64);
    assert_int_equal(res[2].size_bytes, 256);
    cp_error perr;
    char buf[8];
    assert_int_equal(comm_send(c, buf, 8, 1, 0, &perr), CP_ERR_USAGE);
    free(res);
    comm_close(c);
}

/* A mock engine with its own "device" buffers, one rank: what the sweep
 * fills must reach them through upload, and the check must read them
 * through download, or the rows come out wrong. */
typedef struct mock_eng {
    float *dsend, *drecv;
    int setups, teardowns, uploads, waits, downloads, runs, fail_at_run;
    bool pending; /* a run not yet waited on */
} mock_eng;

static int mock_setup(void *self, size_t max_count, cp_error *err)
{
    (void)err;
    mock_eng *m = self;
    m->setups++;
    m->dsend = calloc(max_count, sizeof(float));
    m->drecv = calloc(max_count, sizeof(float));
    return 0;
}
static int mock_upload(void *self, const float *send, const float *recv, size_t count, cp_error *err)
{
    (void)err;
    mock_eng *m = self;
    m->uploads++;
    memcpy(m->dsend, send, count * sizeof(float));
    memcpy(m->drecv, recv, count * sizeof(float));
    return 0;
}
static int mock_run(void *self, coll_op op, bool in_place, size_t count, cp_error *err)
{
    mock_eng *m = self;
    if (++m->runs == m->fail_at_run)
        return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "mock failure");
    m->pending = true;
    if (!in_place && op != COLL_BROADCAST) /* one rank: every op is a copy */
        memcpy(m->drecv, m->dsend, count * sizeof(float));
    return 0;
}
static int mock_wait(void *self, cp_error *err)
{
    (void)err;
    mock_eng *m = self;
    m->waits++;
    m->pending = false;
    return 0;
}
static int mock_download(void *self, float *recv, size_t count, cp_error *err)
{
    (void)err;
    mock_eng *m = self;
    assert_false(m->pending); /* the sweep waits before it reads results */
    m->downloads++;
    memcpy(recv, m->drecv, count * sizeof(float));
    return 0;
}
static void mock_teardown(void *self)
{
    mock_eng *m = self;
    m->teardowns++;
    free(m->dsend);
    free(m->drecv);
}

static void test_sweep_engine(void **state)
{
    (void)state;
    comm *c = NULL;
    assert_int_equal(comm_open(&c, true, 10, NULL), 0);
    coll_cfg cfg = {.min_bytes = 64, .max_bytes = 4096, .factor = 4, .warmup = 2, .iters = 3, .check = true};
    coll_cfg_defaults(&cfg, false);
    mock_eng m = {0};
    coll_engine eng = {.self = &m, .setup = mock_setup, .upload = mock_upload, .run = mock_run, .wait = mock_wait,
                       .download = mock_download, .teardown = mock_teardown, .rs_in_place_at_block = true,
                       .no_in_place_all_to_all = true};
    coll_result *res = NULL;
    size_t n = 0;
    cp_error err;
    assert_int_equal(coll_sweep_engine(c, &eng, &cfg, &res, &n, &err), 0);
    /* as the host sweep less the 4 in-place all-to-all rows */
    assert_int_equal(n, 8 * 4);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(res[i].wrong, 0);
        assert_false(res[i].op == COLL_ALL_TO_ALL && res[i].in_place);
    }
    assert_int_equal(m.setups, 1);
    assert_int_equal(m.teardowns, 1);
    assert_int_equal(m.uploads, 2 * (int)n);   /* timed run and check */
    assert_int_equal(m.downloads, (int)n);     /* check only */
    assert_int_equal(m.waits, 3 * (int)n);     /* after warm-up, after the timed calls, before the check */
    assert_int_equal(m.runs, (2 + 3 + 1) * (int)n);
    free(res);

    /* a failing call: the error comes back, rows so far are kept, buffers released */
    m = (mock_eng){.fail_at_run = 6 * 3 + 2};
    assert_int_equal(coll_sweep_engine(c, &eng, &cfg, &res, &n, &err), CP_ERR_IO);
    assert_int_equal(n, 3);
    assert_string_equal(err.msg, "mock failure");
    assert_int_equal(m.teardowns, 1);
    free(res);
    comm_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_host), cmocka_unit_test(test_slow_link_and_intra),
        cmocka_unit_test(test_sweep_local), cmocka_unit_test(test_sweep_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
