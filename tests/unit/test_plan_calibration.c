/* test_plan_calibration.c - the performance model against published runs.
 *
 * Reads ../shared/data/model/published_runs.csv in place (Megatron-LM SC21,
 * Korthikanti et al., torchtitan) and requires, with the one set of model
 * defaults: every row modelled, median |error| <= 10 % and every row
 * <= 25 % of its measured step time / throughput. Skips (77) when the data
 * is absent. The bounds are the acceptance criteria of the model; a change
 * to the model that breaks them fails here.
 */
#include "test_util.h"

#include "plan/calib.h"

#include <math.h>
#include <unistd.h>

static plan_calib_row g_rows[512];

static void published_runs(void **state)
{
    const char *path = *state;
    plan_calib_summary s;
    char err[512];
    assert_int_equal(plan_calib_file(path, g_rows, 512, &s, err, sizeof err), 0);
    assert_true(s.rows >= 60);
    for (int i = 0; i < s.rows && i < 512; i++) {
        const plan_calib_row *r = &g_rows[i];
        if (r->why[0]) fail_msg("line %ld (%s) not modelled: %s", r->line, r->model, r->why);
        if (!(fabs(r->err) <= 0.25))
            fail_msg("line %ld (%s, %s): measured %.3g predicted %.3g (%+.1f%%) [%s]", r->line, r->model,
                     r->metric, r->measured, r->predicted, 100 * r->err, r->layout);
    }
    assert_int_equal(s.used, s.rows);
    printf("published runs: %d rows, median |error| %.1f%%, mean %.1f%%, max %.1f%% (line %ld)\n", s.rows,
           100 * s.median_abs_err, 100 * s.mean_abs_err, 100 * s.max_abs_err, s.worst_line);
    assert_true(s.median_abs_err <= 0.10);
    assert_true(s.max_abs_err <= 0.25);
}

/* The validator must be able to fail: a file whose measured figures are
 * twice the real ones gives large errors. */
static void validator_detects_wrong_data(void **state)
{
    const char *path = *state;
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char tmp[] = "/tmp/cp_calib_XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    char line[8192];
    int first = 1, step_col = -1;
    while (fgets(line, sizeof line, in)) {
        if (first) {
            /* find step_time_s column index */
            int col = 0;
            for (char *p = line, *tok; (tok = strsep(&p, ",")) != NULL; col++)
                if (strncmp(tok, "step_time_s", 11) == 0) step_col = col;
            first = 0;
            fputs("source,model,params_b,layers,hidden,heads,seq_len,vocab,gpu_type,num_gpus,tp,pp,dp,cp_sp,ep,"
                  "micro_batch,global_batch,recompute,precision,step_time_s\n", out);
            continue;
        }
    }
    assert_true(step_col >= 0);
    /* Korthikanti 22B row with its step time doubled */
    fputs("Korthikanti et al. 2022 Table 5,GPT (Megatron) 22B,22,48,6144,64,2048,51200,A100-SXM4-80GB,8,8,1,1,,,4,4,"
          "full,mixed 16-bit,2.84\n", out);
    fclose(out);
    fclose(in);
    plan_calib_summary s;
    char err[256];
    assert_int_equal(plan_calib_file(tmp, g_rows, 512, &s, err, sizeof err), 0);
    unlink(tmp);
    assert_int_equal(s.used, 1);
    assert_true(s.max_abs_err > 0.4);
}

/* Rows from other sources get modern defaults: FlashAttention, the
 * distributed optimizer, Korthikanti selective recompute, SP with TP, the
 * MoE shape of the matching preset and the stated EP degree; optional
 * shape columns override the preset. */
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
    assert_int_equal(plan_calib_mem(csv, sizeof csv - 1, "mem.csv", g_rows, 512, &s, err, sizeof err), 0);
    assert_int_equal(s.rows, 2);
    assert_int_equal(s.used, 2);
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
    assert_int_equal(plan_calib_file(tmp, NULL, 0, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "lacks column"));
    unlink(tmp);
    assert_int_equal(plan_calib_file("/nonexistent/runs.csv", NULL, 0, &s, err, sizeof err), -1);
}

int main(void)
{
    char buf[4096];
    const char *path = cp_test_data("model/published_runs.csv", buf, sizeof buf);
    if (!path) return 77;
    void *st = (void *)path;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(published_runs, st),
        cmocka_unit_test_prestate(validator_detects_wrong_data, st),
        cmocka_unit_test_prestate(other_sources_and_moe, st),
        cmocka_unit_test_prestate(bad_header_is_an_error, st),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
