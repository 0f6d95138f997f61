/* test_an_whatif.c - the what-if analysis (OSDI'25 definitions) on small
 * data-parallel jobs built in code, whose answer follows from the
 * parameters: every rank computes c ns (the straggler f * c), then an
 * all-reduce whose transfer takes T from the last arrival; so the traced
 * step time is max(c) + T, the ideal step time is mean(c) + T (computation
 * ideal = the mean over workers and steps, communication = the median),
 * S_w is S for the straggler and 1 for every other rank, and fixing the
 * top 3 % of workers (one rank of 8) removes the whole slowdown (M_W = 1).
 * Also: the critical path's sums on the same jobs, and the shared replay
 * model (an_whatif.h) on a graph written by hand. */
#include "test_util.h"

#include "verdict_job.h"
#include "analysis/an_critpath.h"
#include "analysis/an_whatif.h"

#include <math.h>

typedef struct run_t {
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    an_opts o;
} run_t;

static void run_job(run_t *x, const job_spec *j)
{
    x->tl = job_build(j);
    assert_non_null(x->tl);
    x->rep = rep_new("chainprof.analyze/1", 0, NULL);
    x->o = (an_opts){ .gpus_per_node = j->gpus_per_node, .nthreads = 2 };
    memset(&x->ctx, 0, sizeof x->ctx);
    assert_int_equal(an_run_all(&x->ctx, x->tl, x->rep, &x->o, NULL), 0);
}

static void run_free(run_t *x)
{
    an_ctx_free(&x->ctx);
    rep_free(x->rep);
    tl_free(x->tl);
}

static double num(const run_t *x, const char *path)
{
    rep_node *n = rep_path(x->rep, path);
    assert_non_null(n);
    assert_int_equal(n->type, REP_NUM);
    return n->v.d;
}

static void test_straggler(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.straggler = 5;
    j.straggler_factor = 1.3;
    run_t x;
    run_job(&x, &j);
    double T = (double)js_transfer_ns(&j), c = (double)j.compute_ns;
    double t_orig = 1.3 * c + T, t_ideal = (7 * c + 1.3 * c) / 8 + T;
    CP_ASSERT_NEAR(num(&x, "whatif.t_original_ns"), t_orig, 1.0);
    CP_ASSERT_NEAR(num(&x, "whatif.t_ideal_ns"), t_ideal, 1.0);
    CP_ASSERT_NEAR(num(&x, "whatif.slowdown"), t_orig / t_ideal, 1e-6);
    CP_ASSERT_NEAR(num(&x, "whatif.worker_metric"), 1.0, 1e-6);
    assert_int_equal(rep_path(x.rep, "whatif.workers_fixed.0")->v.i, 5);
    assert_null(rep_path(x.rep, "whatif.workers_fixed.1"));
    for (int r = 0; r < j.ranks; r++) {
        char p[64];
        snprintf(p, sizeof p, "whatif.by_dp_rank.%d.slowdown", r);
        CP_ASSERT_NEAR(num(&x, p), r == 5 ? t_orig / t_ideal : 1.0, 1e-6);
    }
    /* the compute kernel type carries the slowdown, the all-reduce none */
    assert_string_equal(rep_path(x.rep, "whatif.by_op_type.0.op")->v.s, "sm80_xmma_gemm_bf16bf16_bf16f32");
    CP_ASSERT_NEAR(num(&x, "whatif.by_op_type.0.slowdown"), t_orig / t_ideal, 1e-6);
    assert_string_equal(rep_path(x.rep, "whatif.by_op_type.1.op")->v.s, "all_reduce");
    CP_ASSERT_NEAR(num(&x, "whatif.by_op_type.1.slowdown"), 1.0, 1e-6);
    assert_int_equal(rep_path(x.rep, "whatif.stage_metric")->type, REP_NULL);
    run_free(&x);
}

static void test_even_job(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.net_frac = 0.3; /* a slow network slows every worker alike: no straggler */
    run_t x;
    run_job(&x, &j);
    CP_ASSERT_NEAR(num(&x, "whatif.slowdown"), 1.0, 1e-9);
    assert_int_equal(rep_path(x.rep, "whatif.worker_metric")->type, REP_NULL); /* nothing to remove */
    run_free(&x);
}

/* The critical path's hops add up on the same job, and the replayed trace
 * is the trace: the dependency graph reproduces every instant. */
static void test_path_adds_up(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.straggler = 2;
    j.straggler_factor = 1.5;
    run_t x;
    run_job(&x, &j);
    const an_critpath_result *cr = x.ctx.results[AN_critpath];
    assert_non_null(cr);
    assert_int_equal(cr->n_steps, (size_t)j.steps);
    rep_node *steps = rep_path(x.rep, "critical_path.steps");
    assert_non_null(steps);
    for (rep_node *s = steps->first; s; s = s->next) {
        int64_t len = rep_child(s, "length_ns")->v.i, sum = 0, rsum = 0;
        rep_node *l = rep_child(s, "layers");
        for (rep_node *k = l->first; k; k = k->next)
            sum += k->v.i;
        rep_node *rk = rep_child(s, "ranks");
        for (rep_node *k = rk->first; k; k = k->next)
            rsum += rep_child(k, "ns")->v.i;
        assert_int_equal(sum, len);
        assert_int_equal(rsum, len);
    }
    CP_ASSERT_NEAR(num(&x, "whatif.t_original_ns"), 1.5 * (double)j.compute_ns + (double)js_transfer_ns(&j), 1.0);
    run_free(&x);
}

/* A graph by hand (node: predecessors, the first binding; lag; traced instant):
 *   0: source 100;  1: 0 +10 = 110;  2: 1 + A (50) = 160;  3: 2 +5 and 11 = 165;
 *   4: 3 + B (30) = 195;  5: 7;  6: 7;  7: 6 + C (a cycle 6 <-> 7, and 5 after it);
 *   8: source 300;  9: 8 + A' (90) = 390;  10: 8 + A'' (40) = 340;  11: source 120.
 * Step 0 holds A and B (110 .. 195 = 85), step 1 A' and A'' (300 .. 390 = 90):
 * T_original 87.5. A, A', A'' are one communication identity: ideal = the
 * median 50, so step 0 stays 85 and step 1 is 50: T_ideal 67.5. The ops are
 * not in end order (the index path) and C, on the cycle, is not timed. */
static const uint32_t g_pstart[13] = { 0, 0, 1, 2, 4, 5, 6, 7, 8, 8, 9, 10, 10 };
static const uint32_t g_pred[10] = { 0, 1, 2, 11, 3, 7, 7, 6, 8, 8 };
static const int64_t g_lag[12] = { 100, 10, 50, 5, 30, 0, 0, 20, 300, 90, 40, 120 };
static const int64_t g_ts[12] = { 100, 110, 160, 165, 195, 0, 0, 0, 300, 390, 340, 120 };

static size_t h_preds(const void *ctx, uint64_t v, const uint32_t **src)
{
    (void)ctx;
    *src = g_pred + g_pstart[v];
    return g_pstart[v + 1] - g_pstart[v];
}

static size_t h_binding(const void *ctx, uint64_t v, const uint32_t *src, size_t np)
{
    (void)ctx;
    (void)v;
    (void)src;
    return np ? 0 : SIZE_MAX;
}

static int64_t h_lag0(const void *ctx, uint64_t v, const uint32_t *src, size_t b)
{
    (void)ctx;
    (void)src;
    (void)b;
    return g_lag[v];
}

static int64_t h_ts(const void *ctx, uint64_t v)
{
    (void)ctx;
    return g_ts[v];
}

static uint64_t h_key(const wi_op *o) { return o->name; }

static void replay_by_hand(int64_t (*ts)(const void *, uint64_t))
{
    wi_model m = { .nthreads = 2 };
    static const wi_op ops[5] = {
        { .start = 3, .end = 4, .dur_ns = 30, .name = 2, .type = 1, .step = 0 },
        { .start = 1, .end = 2, .dur_ns = 50, .name = 1, .type = 0, .step = 0, .comm = true },
        { .start = 6, .end = 7, .dur_ns = 20, .name = 3, .type = 2, .step = 0 },
        { .start = 8, .end = 9, .dur_ns = 90, .name = 1, .type = 0, .step = 1, .comm = true },
        { .start = 8, .end = 10, .dur_ns = 40, .name = 1, .type = 0, .step = 1, .comm = true },
    };
    m.n_ops = 5;
    m.ops = malloc(sizeof ops);
    memcpy(m.ops, ops, sizeof ops);
    const char *names[2] = { "A", "B" };
    uint32_t zero = 0;
    int64_t label = 0;
    m.n_steps = 2;
    m.n_types = 2;
    m.type_name = names;
    m.n_workers = m.n_dp = m.n_stages = 1;
    m.w_dp = m.w_stage = m.w_tp = &zero;
    m.dp_label = m.stage_label = m.worker_label = &label;
    wi_graph_src gs = { 12, 10, NULL, h_preds, h_binding, h_lag0, ts };
    wi_ideals(&m, h_key);
    assert_int_equal(m.n_groups, 3);
    wi_compact(&m, &gs);
    assert_int_equal(m.n_cycle, 3);
    assert_int_equal(m.n_sources, 3);
    assert_int_equal(m.ops[2].step, -1);
    rep_report *rp = rep_new("chainprof.analyze/1", 0, NULL);
    rep_node *top = rep_obj(rp, rp->root, "whatif", NULL);
    wi_report(rp, top, &m);
    assert_true(rep_path(rp, "whatif.t_original_ns")->v.d == 87.5);
    assert_true(rep_path(rp, "whatif.t_ideal_ns")->v.d == 67.5);
    rep_free(rp);
    wi_model_free(&m);
}

static void test_replay_by_hand(void **state)
{
    (void)state;
    replay_by_hand(NULL); /* offsets stored per node */
    replay_by_hand(h_ts); /* offsets derived from the instants */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straggler),
        cmocka_unit_test(test_even_job),
        cmocka_unit_test(test_path_adds_up),
        cmocka_unit_test(test_replay_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
