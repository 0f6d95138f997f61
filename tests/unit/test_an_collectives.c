/* test_an_collectives.c - bytes and busbw by the nccl-tests conventions,
 * wait vs transfer from the cross-rank match, the op x size x scope table,
 * expected busbw from the catalog and from --nic-gbps; and the straggler
 * analysis on the same jobs (a 30 % slower rank among 8 is found with its
 * layer; an even job has no straggler). */
#include "test_util.h"

#include "verdict_job.h"
#include "model/collmodel.h"

#include <math.h>

typedef struct run_t {
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    an_opts o;
} run_t;

static void run_job(run_t *x, const job_spec *j, double nic_gbit_s)
{
    x->tl = job_build(j);
    assert_non_null(x->tl);
    x->rep = rep_new("chainprof.analyze/1", 0, NULL);
    x->o = (an_opts){ .gpus_per_node = j->gpus_per_node, .nthreads = 1, .nic_gbit_s = nic_gbit_s };
    memset(&x->ctx, 0, sizeof x->ctx);
    assert_int_equal(an_run_all(&x->ctx, x->tl, x->rep, &x->o, NULL), 0);
    job_assert_layers_add_up(x->ctx.results[AN_layers]);
}

static void run_free(run_t *x)
{
    an_ctx_free(&x->ctx);
    rep_free(x->rep);
    tl_free(x->tl);
}

static void test_factors(void **state)
{
    (void)state;
    CP_ASSERT_NEAR(an_busbw_factor(COLL_ALL_REDUCE, 8), 1.75, 1e-12);
    CP_ASSERT_NEAR(an_busbw_factor(COLL_ALL_GATHER, 4), 0.75, 1e-12);
    CP_ASSERT_NEAR(an_busbw_factor(COLL_REDUCE_SCATTER, 2), 0.5, 1e-12);
    CP_ASSERT_NEAR(an_busbw_factor(COLL_ALL_TO_ALL, 16), 15.0 / 16, 1e-12);
    CP_ASSERT_NEAR(an_busbw_factor(COLL_BROADCAST, 8), 1, 1e-12);
    CP_ASSERT_NEAR(an_busbw_factor(COLL_SEND_RECV, 8), 1, 1e-12);
}

static void test_busbw_wait_and_straggler(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.net_frac = 0.4;
    j.straggler = 5;
    j.straggler_factor = 1.3;
    run_t x;
    run_job(&x, &j, 0); /* expected from the catalog: A100 DGX node, 8 x 200 Gb/s / 8 GPUs = 25 GB/s */
    const an_collectives_result *cr = x.ctx.results[AN_collectives];
    assert_int_equal(cr->n_kernels, 80);
    assert_int_equal(cr->n_matched, 80);
    assert_int_equal(cr->n_groups, 1);
    const an_coll_group *g = &cr->groups[0];
    assert_int_equal(g->op, COLL_ALL_REDUCE);
    assert_true(g->inter);
    assert_int_equal(g->median_bytes, 100000000);
    assert_int_equal(g->count, 80);
    CP_ASSERT_NEAR(g->p50_busbw_gbps, 10.0, 0.01); /* 40 % of 25 GB/s, wait excluded */
    /* expected: the collective cost model for 100 MB over 2 nodes of 4 A100
     * (their four 200 Gb/s NICs, NCCL's two-node tree), not one NIC's rate */
    collm_query q;
    collm_query_init(&q);
    q.op = COLL_ALL_REDUCE, q.bytes = 1e8, q.nodes = 2, q.gpus_per_node = 4, q.gpu = hw_gpu_find("A100");
    collm_result mr;
    assert_int_equal(collm_estimate(&q, &mr, NULL, 0), 0);
    CP_ASSERT_NEAR(g->expected_busbw_gbps, mr.busbw_gbps, 1e-9);
    assert_true(g->expected_busbw_gbps > 4 * 25.0 * 0.5 && g->expected_busbw_gbps < 2 * 4 * 25.0);
    CP_ASSERT_NEAR(cr->expected_inter_gbps, 25.0, 1e-9); /* the scope's line rate stays in the summary */
    CP_ASSERT_NEAR(cr->inter_busbw_gbps, 10.0, 0.01);
    /* the 7 fast ranks wait 3 ms per step for rank 5 */
    assert_int_equal(g->wait_ns, 7 * 10 * 3000000LL);
    const an_layers_result *lr = x.ctx.results[AN_layers];
    assert_int_equal(lr->ranks[0].steps[2].comm_wait_ns, 3000000);
    assert_int_equal(lr->ranks[5].steps[2].comm_wait_ns, 0);
    rep_node *n = rep_path(x.rep, "collectives.0.p50_busbw_gbps");
    assert_non_null(n);
    CP_ASSERT_NEAR(n->v.d, 10.0, 0.01);
    assert_string_equal(rep_path(x.rep, "collectives.0.scope")->v.s, "inter");

    const an_stragglers_result *sr = x.ctx.results[AN_stragglers];
    assert_int_equal(sr->n, 1);
    assert_int_equal(sr->v[0].rank, 5);
    assert_int_equal(sr->v[0].layer, CP_LAYER_COMPUTE);
    assert_int_equal(sr->v[0].n_steps, 10);
    assert_true(sr->v[0].slowdown_pct > 10 && sr->v[0].slowdown_pct < 20);
    assert_int_equal(rep_path(x.rep, "stragglers.0.rank")->v.i, 5);
    run_free(&x);
}

static void test_intra_scope_and_option(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.gpus_per_node = 8; /* one node */
    j.straggler = 2;
    j.straggler_factor = 1.2; /* own time (step minus wait) persistently ~11 % longer */
    run_t x;
    run_job(&x, &j, 400);
    const an_collectives_result *cr = x.ctx.results[AN_collectives];
    assert_false(cr->groups[0].inter);
    CP_ASSERT_NEAR(cr->expected_intra_gbps, 300, 1e-9); /* A100 NVLink 3 */
    CP_ASSERT_NEAR(cr->expected_inter_gbps, 50, 1e-9);  /* --nic-gbps 400 / 8 */
    assert_true(isnan(cr->inter_busbw_gbps));
    const an_stragglers_result *sr = x.ctx.results[AN_stragglers];
    assert_int_equal(sr->n, 1);
    assert_int_equal(sr->v[0].rank, 2);
    run_free(&x);
}

static void test_even_job_has_no_straggler(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.ranks = 16;
    run_t x;
    run_job(&x, &j, 0);
    const an_stragglers_result *sr = x.ctx.results[AN_stragglers];
    assert_int_equal(sr->n, 0);
    const an_collectives_result *cr = x.ctx.results[AN_collectives];
    assert_int_equal(cr->groups[0].wait_ns, 0);
    CP_ASSERT_NEAR(cr->groups[0].p50_busbw_gbps, 22.5, 0.01);
    run_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factors),
        cmocka_unit_test(test_busbw_wait_and_straggler),
        cmocka_unit_test(test_intra_scope_and_option),
        cmocka_unit_test(test_even_job_has_no_straggler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
