/* test_plan_calibration.c - the performance model against published runs,
 * in-sample and leave-one-source-out.
 *
 * Reads ../shared/data/model/published_runs.csv and published_runs_more.csv
 * in place (Megatron-LM SC21, Korthikanti et al., torchtitan, NeMo
 * performance tables, MosaicML llm-foundry) together with the project's own
 * docs/data/published_runs_nvidia.csv (DGX Cloud benchmarking recipes) and
 * requires: every row modelled, the leave-one-source-out median step-time
 * error <= 10 % overall and <= 12 % for every source, the shipped constants
 * <= 10 % in-sample. Skips (77) when the shared data is absent. The bounds
 * are the acceptance criteria of issue 17; a change to the model that breaks
 * them fails here.
 */
#include "test_util.h"

#include "plan/calib.h"

#include <math.h>
#include <unistd.h>

static plan_calib_row g_rows[PLAN_CALIB_MAX_ROWS];

typedef struct paths {
    char a[4096], b[4096], c[4096];
} paths;

static void published_runs_loso(void **state)
{
    paths *p = *state;
    const char *files[] = {p->a, p->b, p->c};
    plan_calib_summary s;
    plan_calib_opts o = {.loso = true};
    char err[512];
    assert_int_equal(plan_calib_files(files, 3, &o, g_rows, PLAN_CALIB_MAX_ROWS, &s, err, sizeof err), 0);
    assert_true(s.rows >= 380);
    for (int i = 0; i < s.rows; i++)
        if (g_rows[i].why[0])
            fail_msg("file %d line %ld (%s) not modelled: %s", g_rows[i].file, g_rows[i].line, g_rows[i].model,
                     g_rows[i].why);
    assert_int_equal(s.used, s.rows);
    assert_int_equal(s.loso_used, s.used);
    printf("published runs: %d rows in %d sources; median |step error| %.1f%% shipped, %.1f%% leave-one-source-out "
           "(mean %.1f%%)\n",
           s.rows, s.n_sources, 100 * s.median_abs_err, 100 * s.loso_median_abs_err, 100 * s.loso_mean_abs_err);
    for (int i = 0; i < s.n_sources; i++) {
        const plan_calib_source *src = &s.sources[i];
        printf("  %-40s %4d rows  in-sample %5.1f%%  left out %5.1f%%\n", src->key, src->used,
               100 * src->median_abs_err, 100 * src->loso_median_abs_err);
        if (!(src->loso_median_abs_err <= 0.12))
            fail_msg("source %s: leave-one-source-out median %.1f%%", src->key, 100 * src->loso_median_abs_err);
    }
    assert_true(s.median_abs_err <= 0.10);
    assert_true(s.loso_median_abs_err <= 0.10);
    /* every fitted constant stays inside its physical bounds */
    for (int i = 0; i < s.n_params; i++) {
        const plan_calib_param *q = &s.params[i];
        assert_true(q->fitted_all >= q->lo && q->fitted_all <= q->hi);
        assert_true(q->fold_min >= q->lo && q->fold_max <= q->hi);
        assert_true(q->shipped >= q->lo && q->shipped <= q->hi);
    }
}

/* The validator must be able to fail: a run whose step time is twice the
 * real one gives a large error. */
static void validator_detects_wrong_data(void **state)
{
    (void)state;
    static const char csv[] =
        "source,model,params_b,layers,hidden,heads,seq_len,vocab,gpu_type,num_gpus,tp,pp,dp,cp_sp,ep,"
        "micro_batch,global_batch,recompute,precision,step_time_s\n"
        "Korthikanti et al. 2022 Table 5,GPT (Megatron) 22B,22,48,6144,64,2048,51200,A100-SXM4-80GB,8,8,1,1,,,4,4,"
        "full,mixed 16-bit,2.84\n";
    plan_calib_summary s;
    char err[256];
    assert_int_equal(plan_calib_mem(csv, sizeof csv - 1, "mem.csv", NULL, g_rows, 16, &s, err, sizeof err), 0);
    assert_int_equal(s.used, 1);
    assert_true(s.max_abs_err > 0.4);
    assert_true(isnan(s.loso_median_abs_err)); /* no LOSO asked */
}

/* NeMo rows: VP= and CP= from cp_sp, ETP and EP folded over TP x CP x DP
 * (EP 64 does not divide DP x CP = 32 here), the vocabulary from the family
 * with a note, Megatron-Core's no-recompute default, TP overlap on. */
static void nemo_rows_as_megatron_core_runs_them(void **state)
{
    (void)state;
    static const char csv[] =
        "source,model,layers,hidden,heads,seq_len,vocab,gpu_type,num_gpus,tp,pp,dp,cp_sp,ep,micro_batch,"
        "global_batch,recompute,precision,tokens_per_s_per_gpu\n"
        "NVIDIA/NeMo performance_summary.md,GPT3-175B,96,12288,96,2048,,H100-SXM5-80GB (DGX-H100),128,4,8,,"
        "CP=1; VP=6,,1,256,,fp8 (Transformer Engine),726\n"
        "NVIDIA/dgxc-benchmarking deepseek_v3,DeepSeek-V3 671B,61,7168,128,4096,,H100,1024,2,16,,"
        "CP=1; ETP=1,64,1,8192,,bf16,630\n"
        "docs.nvidia.com/nemo-framework performance,LLAMA3-8B,32,4096,32,8192,128256,GB200,8,1,1,,CP=1,,2,128,,"
        "mxfp8,30000\n";
    plan_calib_summary s;
    char err[256];
    assert_int_equal(plan_calib_mem(csv, sizeof csv - 1, "mem.csv", NULL, g_rows, 16, &s, err, sizeof err), 0);
    assert_int_equal(s.rows, 3);
    for (int i = 0; i < 3; i++)
        if (g_rows[i].why[0]) fail_msg("row %d not modelled: %s", i, g_rows[i].why);
    if (!strstr(g_rows[0].layout, "vpp6") || !strstr(g_rows[0].layout, "rc=none") || !strstr(g_rows[0].layout, "fp8"))
        fail_msg("GPT3 row modelled as '%s'", g_rows[0].layout);
    if (!strstr(g_rows[0].note, "vocab 51200 assumed")) fail_msg("GPT3 note '%s'", g_rows[0].note);
    if (!strstr(g_rows[1].layout, "ep64") || !strstr(g_rows[1].layout, "dp32"))
        fail_msg("DeepSeek row modelled as '%s'", g_rows[1].layout);
    assert_string_equal(g_rows[0].source, "NVIDIA NeMo performance summary");
    assert_string_equal(g_rows[1].source, "NVIDIA DGX Cloud benchmarking recipes");
    assert_int_equal(s.n_sources, 2);
}

/* Rows from other sources get the generic modern stack; the MoE shape of
 * the matching preset and the stated EP degree; optional shape columns
 * override the preset. */
static void other_sources_and_moe(void **state)
{
    (void)state;
    static const char csv[] =
        "source,model,layers,hidden,heads,seq_len,vocab,gpu_type,num_gpus,tp,pp,dp,ep,micro_batch,"
        "global_batch,recompute,precision,tokens_per_s_per_gpu,kv_heads\n"
        "vendor table,Mixtral 8x7B,32,4096,32,4096,32000,H100 SXM,64,2,1,32,8,1,256,selective,fp8,4000,\n"
        "vendor table,Llama 2 70B,80,8192,64,4096,32000,H100,64,4,4,4,,1,128,,bf16,500,8\n";
    plan_calib_summary s;
    char err[256];
    plan_calib_opts o = {.loso = true}; /* one source: nothing to leave out */
    assert_int_equal(plan_calib_mem(csv, sizeof csv - 1, "mem.csv", &o, g_rows, 16, &s, err, sizeof err), 0);
    assert_int_equal(s.rows, 2);
    assert_int_equal(s.used, 2);
    assert_int_equal(s.loso_used, 0);
    if (!strstr(g_rows[0].layout, "ep8") || !strstr(g_rows[0].layout, "zero1") ||
        !strstr(g_rows[0].layout, "rc=selective") || !strstr(g_rows[0].layout, " sp") || !strstr(g_rows[0].layout, "fp8"))
        fail_msg("mixtral row modelled as '%s'", g_rows[0].layout);
    /* unstated recompute: the planner's best fitting choice, layout kept */
    if (!strstr(g_rows[1].layout, "tp4 pp4 dp4")) fail_msg("llama row modelled as '%s'", g_rows[1].layout);
    assert_true(isfinite(g_rows[0].err) && isfinite(g_rows[1].err));
}

static void bad_header_is_an_error(void **state)
{
    (void)state;
    char tmp[] = "/tmp/cp_calib_XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    fputs("model,layers\nx,1\n", out);
    fclose(out);
    plan_calib_summary s;
    char err[256];
    const char *one[] = {tmp};
    assert_int_equal(plan_calib_files(one, 1, NULL, NULL, 0, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "lacks column"));
    unlink(tmp);
    const char *none[] = {"/nonexistent/runs.csv"};
    assert_int_equal(plan_calib_files(none, 1, NULL, NULL, 0, &s, err, sizeof err), -1);
}

static void source_keys(void **state)
{
    (void)state;
    char k[96];
    plan_calib_source_key("pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md @31a17bf", k, sizeof k);
    assert_string_equal(k, "torchtitan");
    plan_calib_source_key("Some Paper (arXiv:1234) Table 2", k, sizeof k);
    assert_string_equal(k, "Some Paper");
}

int main(void)
{
    static paths p;
    const char *a = cp_test_data("model/published_runs.csv", p.a, sizeof p.a);
    const char *b = cp_test_data("model/published_runs_more.csv", p.b, sizeof p.b);
    snprintf(p.c, sizeof p.c, "%s/docs/data/published_runs_nvidia.csv", CP_SOURCE_DIR);
    const char *c = p.c;
    if (!a || !b || !c) return 77;
    void *st = &p;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(published_runs_loso, st),
        cmocka_unit_test(validator_detects_wrong_data),
        cmocka_unit_test(nemo_rows_as_megatron_core_runs_them),
        cmocka_unit_test(other_sources_and_moe),
        cmocka_unit_test(bad_header_is_an_error),
        cmocka_unit_test(source_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
