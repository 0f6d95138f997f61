/* test_an_annotations.c - user annotations on fixture A. HTA view: the last
 * step's ProfilerStep#2 is dropped; gemm_a [8,18) and the NCCL kernel
 * [15,35) both overlap "inner" [8,17), the innermost of "fwd" [7,36). */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.cpu.0.name")->v.s, "ProfilerStep#1");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.0.sum_ns"), 100 * US);
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.cpu.1.name")->v.s, "## forward ##");
    assert_null(rep_path(r.rep, "ranks.0.annotations.cpu.2"));
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.gpu.0.name")->v.s, "fwd");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.gpu.0.count"), 1);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.gpu.0.sum_ns"), 29 * US);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.gpu_kernels"), 8);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.unattributed_kernels"), 6);
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.kernels_by_annotation.0.annotation")->v.s, "inner");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.kernels_by_annotation.0.kernels"), 2);
    assert_null(rep_path(r.rep, "ranks.0.annotations.kernels_by_annotation.1"));
    /* exact: every step */
    assert_string_equal(rep_path(r.rep, "ranks.0.exact.annotations.cpu.0.name")->v.s, "ProfilerStep#2");
    assert_int_equal(fx_num(&r, "ranks.0.exact.annotations.gpu_kernels"), 8);
    fx_done(&r);
}

/* HTA's folding into "others", worked out by hand (us; no profiler step, so
 * both views hold every event): totals A 100 (50+30+20), B 60, C 40 (20+20),
 * D 25, E_keep 10, F 5; cumulative 100 160 200 225 235 240, whose 0.8
 * quantile is 235 (position 4). A name folds when cumulative > 235 or at
 * position >= top, unless allowlisted. */
static tl_timeline *fold_fixture(void)
{
    tl_builder *b = tl_builder_new("fold.json");
    tl_builder_meta(b)->rank = 0;
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 };
    uint32_t c = tl_builder_track(b, &cpu);
    static const struct { const char *name; int64_t t0, dur; } A[] = {
        { "A", 0, 50 },   { "A", 100, 30 }, { "A", 200, 20 }, { "B", 300, 60 },     { "C", 400, 20 },
        { "C", 500, 20 }, { "D", 600, 25 }, { "E_keep", 700, 10 }, { "F", 800, 5 },
    };
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++)
        fx_add(b, c, TL_CAT_USER_ANNOTATION, A[i].name, A[i].t0 * US, A[i].dur * US, -1);
    return fx_finish(b);
}

static void run_fold(fx_run *r, int64_t top, const char *keep)
{
    static const char *keeps[1];
    memset(r, 0, sizeof *r);
    r->tl = fold_fixture();
    r->rep = rep_new("chainprof.analyze/1", 0, NULL);
    r->opts.nthreads = 1;
    r->opts.annot_top = top;
    keeps[0] = keep;
    r->opts.annot_keep = keeps;
    r->opts.n_annot_keep = keep ? 1 : 0;
    assert_int_equal(an_run_all(&r->ctx, r->tl, r->rep, &r->opts, NULL), 0);
}

static const char *cpu_name(const fx_run *r, const char *view, int k)
{
    char p[96];
    snprintf(p, sizeof p, "ranks.0.%sannotations.cpu.%d.name", view, k);
    const rep_node *n = rep_path(r->rep, p);
    return n ? n->v.s : NULL;
}

static void test_fold(void **state)
{
    (void)state;
    fx_run r;
    /* top 3, allowlist "keep": D (position 3) and F (cumulative 240) fold, E_keep stays */
    run_fold(&r, 3, "keep");
    static const char *const want[] = { "A", "B", "C", "E_keep", "others" };
    for (int k = 0; k < 5; k++) {
        assert_string_equal(cpu_name(&r, "", k), want[k]);
        assert_string_equal(cpu_name(&r, "exact.", k), want[k]);
    }
    assert_null(cpu_name(&r, "", 5));
    /* HTA view: rows from the per-name totals */
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.0.mean_ns"), 100 * US, 0);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.0.min_ns"), 100 * US, 0);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.0.std_ns"), 0, 0);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.4.count"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.4.sum_ns"), 30 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.4.mean_ns"), 15 * US, 1e-9);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.4.min_ns"), 5 * US);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.4.max_ns"), 25 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.4.std_ns"), sqrt(200.0) * US, 1e-6);
    /* exact view: true per-event statistics */
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.exact.annotations.cpu.0.mean_ns"), 100.0 / 3 * US, 1e-6);
    assert_int_equal(fx_num(&r, "ranks.0.exact.annotations.cpu.0.min_ns"), 20 * US);
    assert_int_equal(fx_num(&r, "ranks.0.exact.annotations.cpu.0.max_ns"), 50 * US);
    fx_done(&r);
    /* without the allowlist E_keep folds too: others = D, E_keep, F */
    run_fold(&r, 3, NULL);
    assert_string_equal(cpu_name(&r, "", 3), "others");
    assert_null(cpu_name(&r, "", 4));
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.3.sum_ns"), 40 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.3.mean_ns"), 40.0 / 3 * US, 1e-6);
    fx_done(&r);
    /* top 5: only the quantile folds F (cumulative 240 > 235; E_keep's 235 is not above it) */
    run_fold(&r, 5, NULL);
    assert_string_equal(cpu_name(&r, "", 4), "E_keep");
    assert_string_equal(cpu_name(&r, "", 5), "others");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.5.sum_ns"), 5 * US);
    fx_done(&r);
    /* the default (1000): nothing folds, true statistics in both views */
    run_fold(&r, 0, NULL);
    assert_string_equal(cpu_name(&r, "", 5), "F");
    assert_null(cpu_name(&r, "", 6));
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.annotations.cpu.0.mean_ns"), 100.0 / 3 * US, 1e-6);
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
        cmocka_unit_test(test_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
