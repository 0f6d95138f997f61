/* test_plan_coll.c - the collective cost model (src/plan/coll.h): the
 * bandwidth bound of every algorithm, the latency terms, the tuner's
 * choice, what cannot run where, NVL72 domains spanning hosts, and the
 * published nccl-tests facts in docs/data/nccl_tests_published.csv within
 * 15 % median. */
#include "test_util.h"

#include "model/collmodel.h"
#include "plan/coll_check.h"

#include <math.h>

static collm_result run(coll_op op, double bytes, int nodes, int gpn, const char *gpu, int algo)
{
    collm_query q;
    collm_query_init(&q);
    q.op = op, q.bytes = bytes, q.nodes = nodes, q.gpus_per_node = gpn, q.gpu = hw_gpu_find(gpu), q.algo = algo;
    assert_non_null(q.gpu);
    collm_result r;
    char err[256];
    if (collm_estimate(&q, &r, err, sizeof err) != 0) fail_msg("%s", err);
    return r;
}

static void bandwidth_bounds(void **state)
{
    (void)state;
    const collm_consts *k = collm_consts_get();
    double big = 8.0 * 1073741824.0;
    /* one HGX H100 board: NVLS all-reduce moves each byte up and down once */
    collm_result r = run(COLL_ALL_REDUCE, big, 1, 8, "H100", COLLM_ALGO_AUTO);
    assert_int_equal(r.algo, COLLM_ALGO_NVLS);
    CP_ASSERT_NEAR(r.peak_busbw_gbps, k->nvls_eta_hopper * 450 * 2.0 * 7 / 8, 0.5);
    /* forced ring: NCCL's achieved NVLink fraction */
    r = run(COLL_ALL_REDUCE, big, 1, 8, "H100", COLLM_ALGO_RING);
    CP_ASSERT_NEAR(r.peak_busbw_gbps, k->nvlink_eff * 450, 0.5);
    assert_true(r.busbw_gbps < r.peak_busbw_gbps && r.busbw_gbps > 0.99 * r.peak_busbw_gbps);
    /* the terms add up and the nccl-tests factor holds */
    CP_ASSERT_NEAR(r.time_s, r.latency_s + r.bandwidth_s, 1e-12);
    CP_ASSERT_NEAR(r.algbw_gbps, big / r.time_s / 1e9, 1e-6);
    CP_ASSERT_NEAR(r.busbw_gbps, r.algbw_gbps * 2.0 * 7 / 8, 1e-6);
    /* two nodes of 8x 400 Gb/s: the ring is bound by the slower of NVLink
     * and the node's NICs; the tree may exceed the NICs on two nodes */
    r = run(COLL_ALL_REDUCE, big, 2, 8, "H100", COLLM_ALGO_RING);
    CP_ASSERT_NEAR(r.net_busbw_gbps, 8 * 50.0 * k->net_eff, 0.5);
    CP_ASSERT_NEAR(r.peak_busbw_gbps, fmin(k->nvlink_eff * 450, 8 * 50.0 * k->net_eff), 0.5);
    collm_result t = run(COLL_ALL_REDUCE, big, 2, 8, "H100", COLLM_ALGO_TREE);
    CP_ASSERT_NEAR(t.net_busbw_gbps, 2 * 8 * 50.0 * k->net_eff * k->tree_eff, 0.5);
    /* all-to-all across 4 nodes: each rank's own NIC carries 24/32 of its data */
    r = run(COLL_ALL_TO_ALL, big, 4, 8, "H100", COLLM_ALGO_AUTO);
    assert_int_equal(r.algo, COLLM_ALGO_P2P);
    CP_ASSERT_NEAR(r.peak_busbw_gbps, 50.0 * k->net_eff / (24.0 / 32) * 31 / 32, 0.5);
    assert_string_equal(r.bound, "network");
    /* GB200: two trays of four share the NVL72 domain (MNNVL), no NIC hop */
    r = run(COLL_ALL_REDUCE, big, 2, 4, "GB200", COLLM_ALGO_AUTO);
    assert_int_equal(r.domains, 1);
    assert_true(isnan(r.net_busbw_gbps));
    /* a single rank moves nothing */
    r = run(COLL_ALL_REDUCE, big, 1, 1, "H100", COLLM_ALGO_AUTO);
    assert_true(r.time_s == 0 && r.busbw_gbps == 0);
}

static void latency_and_tuner(void **state)
{
    (void)state;
    /* 8 bytes are latency-bound: the low-latency protocol wins */
    collm_result r = run(COLL_ALL_REDUCE, 8, 1, 8, "A100", COLLM_ALGO_AUTO);
    assert_int_equal(r.proto, COLLM_PROTO_LL);
    assert_string_equal(r.bound, "latency");
    /* NCCL's ring LL latency on one NVLink node: base 6.6 + 2(n-1) x 0.6 us */
    collm_topo t = {.ranks = 8, .per_domain = 8, .intra_gbps = 300, .arch = COLLM_ARCH_AMPERE, .nvswitch = true};
    char err[128];
    assert_int_equal(collm_model(COLL_ALL_REDUCE, 8, &t, COLLM_ALGO_RING, COLLM_PROTO_LL, &r, err, sizeof err), 0);
    CP_ASSERT_NEAR(r.latency_s * 1e6, 6.6 + 14 * 0.6, 1e-9);
    /* the tuner's pick is never slower than any forced pair */
    double sizes[] = {1e3, 1e5, 1e7, 1e9};
    for (int i = 0; i < 4; i++) {
        collm_result best = run(COLL_ALL_REDUCE, sizes[i], 4, 8, "H100", COLLM_ALGO_AUTO);
        for (int a = COLLM_ALGO_RING; a <= COLLM_ALGO_NVLSTREE; a++) {
            collm_topo tt;
            collm_query q;
            collm_query_init(&q);
            q.bytes = sizes[i], q.nodes = 4, q.gpus_per_node = 8, q.gpu = hw_gpu_find("H100");
            assert_int_equal(collm_topo_for(&q, &tt, err, sizeof err), 0);
            collm_result one;
            if (collm_model(COLL_ALL_REDUCE, sizes[i], &tt, a, COLLM_PROTO_AUTO, &one, NULL, 0) == 0)
                assert_true(best.time_s <= one.time_s + 1e-15);
        }
    }
    /* a bigger message never takes less time */
    double prev = 0;
    for (double b = 1024; b < 1e10; b *= 4) {
        collm_result x = run(COLL_ALL_GATHER, b, 2, 8, "B200", COLLM_ALGO_AUTO);
        assert_true(x.time_s >= prev);
        prev = x.time_s;
    }
}

static void what_cannot_run(void **state)
{
    (void)state;
    collm_query q;
    collm_query_init(&q);
    q.bytes = 1e9, q.nodes = 1, q.gpus_per_node = 8, q.gpu = hw_gpu_find("A100");
    collm_result r;
    char err[256];
    q.algo = COLLM_ALGO_NVLS; /* no NVLink SHARP before Hopper */
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "Hopper"));
    q.gpu = hw_gpu_find("H100"), q.nodes = 2, q.algo = COLLM_ALGO_COLLNET; /* no SHARP said */
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), -1);
    q.sharp = true;
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), 0);
    /* CollNet wants a NIC per GPU: two GPUs a NIC cost NCCL's (1 + 2) / 2 */
    q.gpu = hw_gpu_find("A100"), q.nic_gbit_s = 200, q.nics_per_node = 8;
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), 0);
    double own_nic = r.busbw_gbps;
    q.nics_per_node = 4;
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), 0);
    assert_true(r.busbw_gbps < own_nic / 1.5 * 1.01);
    q.gpu = hw_gpu_find("H100"), q.nic_gbit_s = 0, q.nics_per_node = 0;
    q.op = COLL_ALL_GATHER, q.algo = COLLM_ALGO_TREE;
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), -1);
    q.op = COLL_ALL_TO_ALL, q.algo = COLLM_ALGO_RING;
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), -1);
    q.algo = COLLM_ALGO_AUTO, q.nodes = 0;
    assert_int_equal(collm_estimate(&q, &r, err, sizeof err), -1);
    assert_int_equal(collm_algo_parse("NVLSTree"), COLLM_ALGO_NVLSTREE);
    assert_int_equal(collm_algo_parse("collnetchain"), COLLM_ALGO_COLLNET);
    assert_int_equal(collm_algo_parse("bogus"), -2);
    assert_int_equal(collm_proto_parse("ll128"), COLLM_PROTO_LL128);
}

static void published_measurements(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/data/nccl_tests_published.csv", CP_SOURCE_DIR);
    const char *files[] = {path};
    plan_coll_check_summary s;
    char err[256];
    assert_int_equal(plan_coll_check_files(files, 1, NULL, 0, &s, err, sizeof err), 0);
    assert_true(s.rows >= 40);
    assert_int_equal(s.skipped, 0);
    printf("nccl-tests facts: %d rows, %d sources, median |busbw error| %.1f%%, max %.1f%%\n", s.used, s.n_sources,
           100 * s.median_abs_err, 100 * s.max_abs_err);
    assert_true(s.median_abs_err <= 0.15);
    /* and the check can fail: busbw twice the truth */
    static const char wrong[] = "collective,size_bytes,nodes,gpus_per_node,gpu,busbw_gbps\n"
                                "all_reduce,8589934592,1,8,H100-SXM5-80GB,960\n";
    assert_int_equal(plan_coll_check_mem(wrong, sizeof wrong - 1, "wrong.csv", NULL, 0, &s, err, sizeof err), 0);
    assert_true(s.median_abs_err > 0.4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bandwidth_bounds),
        cmocka_unit_test(latency_and_tuner),
        cmocka_unit_test(what_cannot_run),
        cmocka_unit_test(published_measurements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
