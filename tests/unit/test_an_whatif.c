/* test_an_whatif.c - the what-if analysis (OSDI'25 definitions) on small
 * data-parallel jobs built in code, whose answer follows from the
 * parameters: every rank computes c ns (the straggler f * c), then an
 * all-reduce whose transfer takes T from the last arrival; so the traced
 * step time is max(c) + T, the ideal step time is mean(c) + T (computation
 * ideal = the mean over workers and steps, communication = the median),
 * S_w is S for the straggler and 1 for every other rank, and fixing the
 * top 3 % of workers (one rank of 8) removes the whole slowdown (M_W = 1).
 * Also: the critical path's sums on the same jobs. */
#include "test_util.h"

#include "verdict_job.h"
#include "analysis/an_critpath.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straggler),
        cmocka_unit_test(test_even_job),
        cmocka_unit_test(test_path_adds_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
