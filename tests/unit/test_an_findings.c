/* test_an_findings.c - the verdict on jobs built in code: the reference case
 * (slow inter-node network + synchronous checkpoint) ranks the network first
 * and the checkpoint second at several sizes; each injected problem is found
 * on its layer (and rank); a healthy job has no significant finding; gains
 * follow the documented formulas. */
#include "test_util.h"

#include "verdict_job.h"

#include <math.h>

typedef struct run_t {
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    an_opts o;
    const an_findings_result *fr;
} run_t;

static void run_job(run_t *x, const job_spec *j)
{
    x->tl = job_build(j);
    assert_non_null(x->tl);
    x->rep = rep_new("chainprof.analyze/1", 0, NULL);
    x->o = (an_opts){ .gpus_per_node = j->gpus_per_node, .nthreads = 1 };
    memset(&x->ctx, 0, sizeof x->ctx);
    assert_int_equal(an_run_all(&x->ctx, x->tl, x->rep, &x->o, NULL), 0);
    job_assert_layers_add_up(x->ctx.results[AN_layers]);
    x->fr = x->ctx.results[AN_findings];
    assert_non_null(x->fr);
    for (size_t i = 1; i < x->fr->n; i++)
        assert_true(x->fr->v[i - 1].gain_pct >= x->fr->v[i].gain_pct);
}

static void run_free(run_t *x)
{
    an_ctx_free(&x->ctx);
    rep_free(x->rep);
    tl_free(x->tl);
}

static const an_finding *find(const run_t *x, const char *code)
{
    for (size_t i = 0; i < x->fr->n; i++)
        if (!strcmp(x->fr->v[i].code, code))
            return &x->fr->v[i];
    return NULL;
}

static void reference_case(int ranks, int gpn)
{
    job_spec j = job_default();
    j.ranks = ranks;
    j.gpus_per_node = gpn;
    j.net_frac = 0.4;
    j.ckpt_every = 5;
    j.ckpt_ns = 20000000;
    run_t x;
    run_job(&x, &j);
    assert_true(x.fr->n >= 2);
    assert_string_equal(x.fr->v[0].code, "NET_INTER_SLOW");
    assert_int_equal(x.fr->v[0].layer, CP_LAYER_INTER);
    assert_string_equal(x.fr->v[1].code, "CKPT_SYNC_STALL");
    assert_int_equal(x.fr->v[1].layer, CP_LAYER_STORAGE);
    /* gains from the breakdown: the checkpoint costs 2 x 20 ms of the job */
    CP_ASSERT_NEAR(x.fr->v[1].gain_pct, 100.0 * 40e6 / x.fr->job_ns, 1e-6);
    /* network: exposed transfer x (1 - 0.4 / 0.8) */
    double transfer = (double)js_transfer_ns(&j) * j.steps;
    CP_ASSERT_NEAR(x.fr->v[0].gain_pct, 100.0 * transfer * 0.5 / x.fr->job_ns, 0.5);
    assert_true(x.fr->v[0].severity >= AN_SEV_HIGH);
    assert_null(find(&x, "STRAGGLER_RANK")); /* rank 0's checkpoint is not a second finding */
    assert_null(find(&x, "LOW_OVERLAP"));
    assert_string_equal(rep_path(x.rep, "findings.0.code")->v.s, "NET_INTER_SLOW");
    assert_string_equal(rep_path(x.rep, "verdict.bottleneck_layer")->v.s, "inter");
    assert_non_null(rep_path(x.rep, "findings.1.evidence.0"));
    run_free(&x);
}

static void test_reference_case_sizes(void **state)
{
    (void)state;
    reference_case(8, 4);
    reference_case(16, 8);
    reference_case(32, 8);
}

static void test_healthy_job(void **state)
{
    (void)state;
    job_spec j = job_default();
    run_t x;
    run_job(&x, &j);
    /* the network runs at 90 % of the link: the only problem left is that
     * the all-reduce never overlaps compute */
    assert_int_equal(x.fr->n, 1);
    assert_string_equal(x.fr->v[0].code, "LOW_OVERLAP");
    assert_int_equal(x.fr->v[0].layer, CP_LAYER_INTER);
    assert_null(find(&x, "NET_INTER_SLOW"));
    run_free(&x);
}

static void test_straggler_and_dataloader(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.straggler = 6;
    j.straggler_factor = 1.5;
    j.dataloader_ns = 4000000;
    run_t x;
    run_job(&x, &j);
    const an_finding *s = find(&x, "STRAGGLER_RANK");
    assert_non_null(s);
    assert_int_equal(s->rank, 6);
    assert_int_equal(s->layer, CP_LAYER_COMPUTE);
    const an_finding *d = find(&x, "DATALOADER_STALL");
    assert_non_null(d);
    assert_int_equal(d->layer, CP_LAYER_HOST);
    /* 5 ms straggler excess vs 4 ms data loading per step: straggler first */
    assert_true(s->gain_pct > d->gain_pct);
    assert_string_equal(x.fr->v[0].code, "STRAGGLER_RANK");
    run_free(&x);
}

/* One node: the all-reduce stays inside it and runs far below the
 * catalog's NVLink busbw of the A100: NET_INTRA_SLOW, scaled to 70 %. */
static void test_intra_slow(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.ranks = 4;
    j.gpus_per_node = 4;
    run_t x;
    run_job(&x, &j);
    const an_collectives_result *cr = x.ctx.results[AN_collectives];
    assert_true(isfinite(cr->expected_intra_gbps) && isfinite(cr->intra_busbw_gbps));
    assert_false(isfinite(cr->inter_busbw_gbps));
    const an_finding *f = find(&x, "NET_INTRA_SLOW");
    assert_non_null(f);
    assert_int_equal(f->layer, CP_LAYER_INTRA);
    assert_string_equal(x.fr->v[0].code, "NET_INTRA_SLOW");
    double ratio = cr->intra_busbw_gbps / cr->expected_intra_gbps;
    assert_true(ratio < 0.3);
    double transfer = (double)js_transfer_ns(&j) * j.steps;
    CP_ASSERT_NEAR(f->gain_pct, 100.0 * transfer * (1 - ratio / AN_INTRA_TARGET_FRAC) / x.fr->job_ns, 0.5);
    assert_null(find(&x, "NET_INTER_SLOW"));
    run_free(&x);
}

static void test_severity_names(void **state)
{
    (void)state;
    assert_int_equal(an_severity_parse("HIGH"), AN_SEV_HIGH);
    assert_int_equal(an_severity_parse("info"), AN_SEV_INFO);
    assert_int_equal(an_severity_parse("bogus"), -1);
    assert_string_equal(an_severity_name(AN_SEV_CRITICAL), "critical");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_case_sizes),
        cmocka_unit_test(test_healthy_job),
        cmocka_unit_test(test_straggler_and_dataloader),
        cmocka_unit_test(test_intra_slow),
        cmocka_unit_test(test_severity_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
