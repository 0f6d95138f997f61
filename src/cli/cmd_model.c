/* cmd_model.c - `chainprof model`: predict one training layout.
 *
 * Builds plan_inputs from flags / --config (plan_args.c), runs the
 * analytical model once (and once more per --what-if), and renders the
 * result through the report model as schema chainprof.model/1. With
 * --validate FILE.csv it instead replays a CSV of measured runs through the
 * model and reports the error of every row (the check the calibration test
 * enforces on the published runs).
 */
#include "cli.h"
#include "plan_args.h"
#include "../base/util.h"
#include "../plan/calib.h"
#include "../model/catalog.h"
#include "../plan/presets.h"
#include "../plan/plan_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { O_WHAT_IF = 100, O_VALIDATE, O_MAX_ERR, O_LIST };

static const cli_opt own_opts[] = {
    {"what-if", 0, "KEY=VALUE[,...]", O_WHAT_IF, 0, "also model these changes and show the difference"},
    {"validate", 0, "FILE.csv", O_VALIDATE, 0, "compare the model with measured runs in a CSV"},
    {"max-median-error", 0, "PCT", O_MAX_ERR, 0, "with --validate: exit 4 when the median error exceeds PCT"},
    {"list", 0, NULL, O_LIST, 0, "list the hardware catalog and the model presets with their sources"},
};

/* The catalog and the presets as two tables (the numbers the model uses). */
static int list_catalog(cli_ctx *ctx)
{
    rep_report *r = rep_new("chainprof.model/1", ctx->argc, ctx->argv);
    rep_arr(r, r->root, "inputs", "inputs");
    static const rep_col gcols[] = {
        {"name", "GPU", NULL, -1},           {"bf16_tflops", "BF16", "TFLOP/s", 0},
        {"fp8_tflops", "FP8", "TFLOP/s", 0}, {"hbm_bytes", "HBM", "bytes", -1},
        {"hbm_gbytes_per_s", "HBM bw", "GB/s", 0}, {"scaleup_gbytes_per_s", "NVLink/dir", "GB/s", 0},
        {"scaleup_domain", "domain", NULL, -1}, {"mamf_frac", "MAMF", NULL, 3},
        {"node", "default node", NULL, -1},  {"source", "source", NULL, -1},
    };
    rep_node *t = rep_table(r, r->root, "gpus", "hardware catalog", gcols, CP_ARRAY_LEN(gcols));
    for (size_t i = 0; i < hw_gpu_count(); i++) {
        const hw_gpu *g = hw_gpu_at(i);
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, g->name);
        rep_cell_num(r, row, g->bf16_tflops);
        rep_cell_num(r, row, g->fp8_tflops > 0 ? g->fp8_tflops : NAN);
        rep_cell_num(r, row, g->hbm_bytes);
        rep_cell_num(r, row, g->hbm_gbps);
        rep_cell_num(r, row, g->scaleup_gbps > 0 ? g->scaleup_gbps : NAN);
        rep_cell_int(r, row, g->scaleup_domain);
        rep_cell_num(r, row, g->mamf_frac > 0 ? g->mamf_frac : NAN);
        rep_cell_str(r, row, g->node_name);
        rep_cell_str(r, row, g->source);
    }
    static const rep_col pcols[] = {
        {"name", "preset", NULL, -1},  {"layers", "layers", NULL, -1}, {"hidden", "hidden", NULL, -1},
        {"heads", "heads", NULL, -1},  {"kv_heads", "KV", NULL, -1},   {"ffn_hidden", "FFN", NULL, -1},
        {"experts", "experts", NULL, -1}, {"topk", "top-k", NULL, -1},
        {"params_total", "params", NULL, 3}, {"params_active", "active", NULL, 3},
        {"source", "source", NULL, -1},
    };
    t = rep_table(r, r->root, "presets", "model presets", pcols, CP_ARRAY_LEN(pcols));
    for (size_t i = 0; i < plan_preset_count(); i++) {
        const plan_preset *p = plan_preset_at(i);
        const plan_shape *m = &p->shape;
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, p->name);
        rep_cell_int(r, row, m->layers);
        rep_cell_int(r, row, m->hidden);
        rep_cell_int(r, row, m->heads);
        rep_cell_int(r, row, m->kv_heads > 0 ? m->kv_heads : m->heads);
        rep_cell_int(r, row, m->ffn_hidden > 0 ? m->ffn_hidden : 4 * m->hidden);
        rep_cell_int(r, row, m->experts);
        rep_cell_int(r, row, m->experts > 0 ? m->topk : 0);
        rep_cell_num(r, row, plan_params_total(m));
        rep_cell_num(r, row, plan_params_active(m));
        rep_cell_str(r, row, p->source);
    }
    int rc = cli_emit(ctx, r, NULL, 0);
    rep_free(r);
    return rc;
}

static int validate(cli_ctx *ctx, const char *path)
{
    double max_med;
    if (cli_get_double(ctx, O_MAX_ERR, NAN, 0, 1000, &max_med) < 0) return CLI_EXIT_USAGE;
    enum { CAP = 4096 };
    plan_calib_row *rows = cp_xcalloc(CAP, sizeof *rows);
    plan_calib_summary sum;
    char err[512];
    if (plan_calib_file(path, rows, CAP, &sum, err, sizeof err) < 0) {
        free(rows);
        cp_error e;
        cp_error_clear(&e);
        cp_error_set(&e, CP_ERR_IO, NULL, 0, 0, -1, "%s", err);
        return cli_fail(&e);
    }
    rep_report *r = rep_new("chainprof.model/1", ctx->argc, ctx->argv);
    struct stat st;
    rep_input(r, path, "published_runs_csv", stat(path, &st) == 0 ? (uint64_t)st.st_size : 0);
    rep_node *v = rep_obj(r, r->root, "validation", "model vs measured runs");
    rep_int(r, v, "rows", "rows", sum.rows, NULL);
    rep_int(r, v, "modelled", "modelled", sum.used, NULL);
    rep_int(r, v, "skipped", "skipped", sum.skipped, NULL);
    rep_num(r, v, "median_abs_error_pct", "median |error|", 100 * sum.median_abs_err, "%");
    rep_num(r, v, "mean_abs_error_pct", "mean |error|", 100 * sum.mean_abs_err, "%");
    rep_num(r, v, "max_abs_error_pct", "max |error|", 100 * sum.max_abs_err, "%");
    rep_int(r, v, "worst_line", "worst row (line)", sum.worst_line, NULL);
    rep_int(r, v, "memory_rows", "rows with measured memory", sum.mem_rows, NULL);
    rep_num(r, v, "memory_median_abs_error_pct", "memory median |error|", 100 * sum.mem_median_abs_err, "%");
    static const rep_col cols[] = {
        {"line", "line", NULL, -1},          {"model", "model", NULL, -1},
        {"metric", "metric", NULL, -1},      {"measured", "measured", NULL, 2},
        {"predicted", "predicted", NULL, 2}, {"error_pct", "error", "%", 1},
        {"layout", "layout modelled", NULL, -1}, {"note", "note", NULL, -1},
    };
    rep_node *t = rep_table(r, v, "runs", "per run", cols, 8);
    for (int i = 0; i < sum.rows && i < CAP; i++) {
        const plan_calib_row *x = &rows[i];
        rep_node *row = rep_row(r, t);
        rep_cell_int(r, row, x->line);
        rep_cell_str(r, row, x->model);
        rep_cell_str(r, row, x->metric);
        rep_cell_num(r, row, x->why[0] ? NAN : x->measured);
        rep_cell_num(r, row, x->why[0] ? NAN : x->predicted);
        rep_cell_num(r, row, x->why[0] ? NAN : 100 * x->err);
        rep_cell_str(r, row, x->layout);
        rep_cell_str(r, row, x->why[0] ? x->why : x->note);
    }
    free(rows);
    int rc = cli_emit(ctx, r, NULL, 0);
    rep_free(r);
    if (rc == 0 && !isnan(max_med) && !(100 * sum.median_abs_err <= max_med)) rc = CLI_EXIT_CHECK;
    return rc;
}

/* Each change of a multi-change --what-if alone, ranked by its gain, so the
 * report says which fix matters first (e.g. the network before the
 * checkpoint) and by how much. */
static int each_change(cli_ctx *ctx, rep_report *r, rep_node *w, const plan_args *pa, const plan_result *base,
                       const char *list)
{
    enum { MAXCH = 32 };
    typedef struct one_change {
        char change[128];
        double step_s, gain_pct;
    } one_change;
    one_change ch[MAXCH];
    int n = 0;
    char *copy = cp_xstrdup(list);
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && n < MAXCH && !rc;
         tok = strtok_r(NULL, ",", &save)) {
        plan_args one = *pa;
        plan_result res;
        char err[256];
        if ((rc = plan_args_apply_list(ctx, &one, tok)) != 0) break;
        if (plan_model(&one.in, &res, err, sizeof err) < 0) {
            rc = cli_usage_error(ctx, "--what-if %s: cannot model: %s", tok, err);
            break;
        }
        snprintf(ch[n].change, sizeof ch[n].change, "%s", tok);
        ch[n].step_s = res.step_time_s;
        ch[n].gain_pct = 100.0 * (base->step_time_s / res.step_time_s - 1.0);
        n++;
    }
    free(copy);
    if (rc) return rc;
    for (int i = 1; i < n; i++) /* insertion sort by gain, largest first */
        for (int j = i; j > 0 && ch[j].gain_pct > ch[j - 1].gain_pct; j--) {
            one_change t = ch[j];
            ch[j] = ch[j - 1];
            ch[j - 1] = t;
        }
    static const rep_col cols[] = {
        {"change", "change alone", NULL, -1},
        {"step_time_s", "step time", "s", 3},
        {"gain_pct", "throughput gain", "%", 1},
    };
    rep_node *t = rep_table(r, w, "each", "each change alone, largest gain first", cols, 3);
    for (int i = 0; i < n; i++) {
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, ch[i].change);
        rep_cell_num(r, row, ch[i].step_s);
        rep_cell_num(r, row, ch[i].gain_pct);
    }
    return 0;
}

int cmd_model(cli_ctx *ctx)
{
    size_t n;
    cli_opt *table = plan_cli_table(own_opts, CP_ARRAY_LEN(own_opts), &n);
    bool done;
    int rc = cli_parse_cmd(ctx, table, n, true, &done);
    if (rc || done) goto out;
    if (ctx->args.n_pos) {
        rc = cli_usage_error(ctx, "unexpected argument '%s'", ctx->args.pos[0]);
        goto out;
    }
    if (cli_has(ctx, O_LIST)) {
        rc = list_catalog(ctx);
        goto out;
    }
    const char *vpath = cli_get(ctx, O_VALIDATE);
    if (vpath) {
        rc = validate(ctx, vpath);
        goto out;
    }
    plan_args pa;
    if ((rc = plan_args_build(ctx, &pa)) != 0) goto out;
    const plan_shape *sh = &pa.in.shape;
    if (sh->layers <= 0 || sh->hidden <= 0 || sh->heads <= 0 || sh->seq <= 0 || sh->vocab <= 0) {
        rc = cli_usage_error(ctx, "no model: give --preset NAME or --layers, --hidden, --heads, --seq and --vocab");
        goto out;
    }
    if (pa.in.gpus <= 0 && pa.in.dp <= 0) {
        rc = cli_usage_error(ctx, "no GPU count: give --gpus N");
        goto out;
    }
    plan_result res;
    char err[256];
    if (plan_model(&pa.in, &res, err, sizeof err) < 0) {
        rc = cli_usage_error(ctx, "cannot model this job: %s", err);
        goto out;
    }
    rep_report *r = rep_new("chainprof.model/1", ctx->argc, ctx->argv);
    const char *cfg = cli_get(ctx, plan_config_opt_id());
    struct stat cst;
    if (cfg) rep_input(r, cfg, "model_config_json", stat(cfg, &cst) == 0 ? (uint64_t)cst.st_size : 0);
    else rep_arr(r, r->root, "inputs", "inputs");
    char lay[160];
    plan_layout_text(&pa.in, &res, lay, sizeof lay);
    rep_str(r, r->root, "layout_text", "layout", lay);
    plan_report_result(r, r->root, &pa.in, &res);
    plan_report_inputs(r, r->root, pa.model_name, &pa.in, &res);
    const char *wi = cli_get(ctx, O_WHAT_IF);
    if (wi) {
        plan_args alt = pa;
        plan_result ares;
        if ((rc = plan_args_apply_list(ctx, &alt, wi)) != 0) {
            rep_free(r);
            goto out;
        }
        if (plan_model(&alt.in, &ares, err, sizeof err) < 0) {
            rep_free(r);
            rc = cli_usage_error(ctx, "--what-if %s: cannot model: %s", wi, err);
            goto out;
        }
        plan_report_delta(r, r->root, "what_if", wi, &res, &ares);
        rep_node *w = rep_child(r->root, "what_if");
        if (strchr(wi, ',') && (rc = each_change(ctx, r, w, &pa, &res, wi)) != 0) {
            rep_free(r);
            goto out;
        }
        rep_node *m = rep_obj(r, w, "memory", "what-if memory per GPU");
        rep_num(r, m, "total_bytes", "total", ares.memory.total_bytes, "bytes");
        rep_bool(r, m, "fits", "fits", ares.memory.fits);
    }
    rc = cli_emit(ctx, r, NULL, 0);
    rep_free(r);
out:
    free(table);
    return rc;
}
