/* cmd_model.c - `chainprof model`: predict one training layout.
 *
 * Builds plan_inputs from flags / --config (plan_args.c), runs the
 * analytical model once (and once more per --what-if), and renders the
 * result through the report model as schema chainprof.model/2. With
 * --validate FILE.csv it instead replays a CSV of measured runs through the
 * model and reports the error of every row (the check the calibration test
 * enforces on the published runs).
 */
#include "cli.h"
#include "plan_args.h"
#include "../base/util.h"
#include "../plan/calib.h"
#include "../model/catalog.h"
#include "../plan/coll_check.h"
#include "../plan/presets.h"
#include "../plan/plan_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { O_WHAT_IF = 100, O_VALIDATE, O_MAX_ERR, O_LIST, O_COLL, O_BYTES, O_NODES, O_ALGO, O_PROTO, O_SHARP, O_NO_LOSO };

static const cli_opt own_opts[] = {
    {"what-if", 0, "KEY=VALUE[,...]", O_WHAT_IF, 0, "also model these changes and show the difference"},
    {"validate", 0, "FILE.csv", O_VALIDATE, 0, "compare the model with measured runs (or nccl-tests "
                                                  "measurements) in a CSV; repeatable"},
    {"max-median-error", 0, "PCT", O_MAX_ERR, 0, "with --validate: exit 4 when the median error (leave-one-"
                                                  "source-out for runs) exceeds PCT"},
    {"no-loso", 0, NULL, O_NO_LOSO, 0, "with --validate: skip the leave-one-source-out refits"},
    {"list", 0, NULL, O_LIST, 0, "list the hardware catalog and the model presets with their sources"},
    {"collective", 0, "OP", O_COLL, 0, "model one collective instead (all_reduce, all_gather, reduce_scatter, "
                                       "all_to_all, broadcast, reduce, send_recv)"},
    {"bytes", 0, "N", O_BYTES, 0, "with --collective: message size as nccl-tests prints it (K/M/G = 2^10/2^20/2^30)"},
    {"nodes", 0, "N", O_NODES, 0, "with --collective: hosts (default 1)"},
    {"algo", 0, "NAME", O_ALGO, 0, "with --collective: ring, tree, nvls, nvlstree, collnet, p2p (default: NCCL's choice)"},
    {"proto", 0, "NAME", O_PROTO, 0, "with --collective: LL, LL128 or Simple (default: NCCL's choice)"},
    {"sharp", 0, NULL, O_SHARP, 0, "with --collective: in-network reduction (SHARP/CollNet) is available"},
};

/* The catalog and the presets as two tables (the numbers the model uses). */
static int list_catalog(cli_ctx *ctx)
{
    rep_report *r = rep_new("chainprof.model/2", ctx->argc, ctx->argv);
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

/* The per-source and constants tables of a step-model validation. */
static void validation_tables(rep_report *r, rep_node *v, const plan_calib_summary *sum)
{
    static const rep_col scols[] = {
        {"source", "source", NULL, -1},           {"rows", "rows", NULL, -1},
        {"modelled", "modelled", NULL, -1},       {"median_abs_error_pct", "median |err| in-sample", "%", 1},
        {"max_abs_error_pct", "max |err|", "%", 1}, {"loso_median_abs_error_pct", "median |err| left out", "%", 1},
        {"loso_max_abs_error_pct", "max |err| left out", "%", 1},
    };
    rep_node *t = rep_table(r, v, "sources", "per source", scols, CP_ARRAY_LEN(scols));
    for (int i = 0; i < sum->n_sources; i++) {
        const plan_calib_source *s = &sum->sources[i];
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, s->key);
        rep_cell_int(r, row, s->rows);
        rep_cell_int(r, row, s->used);
        rep_cell_num(r, row, 100 * s->median_abs_err);
        rep_cell_num(r, row, 100 * s->max_abs_err);
        rep_cell_num(r, row, 100 * s->loso_median_abs_err);
        rep_cell_num(r, row, 100 * s->loso_max_abs_err);
    }
    static const rep_col pcols[] = {
        {"name", "constant", NULL, -1},      {"prior", "prior", NULL, -1},     {"lo", "min", NULL, -1},
        {"hi", "max", NULL, -1},             {"shipped", "shipped", NULL, -1}, {"fitted_all", "fit on all", NULL, -1},
        {"fold_min", "LOSO min", NULL, -1},  {"fold_max", "LOSO max", NULL, -1}, {"what", "meaning", NULL, -1},
    };
    t = rep_table(r, v, "constants", "fitted constants", pcols, CP_ARRAY_LEN(pcols));
    for (int i = 0; i < sum->n_params; i++) {
        const plan_calib_param *p = &sum->params[i];
        /* seconds-valued constants read better in microseconds */
        double sc = strstr(p->name, "_s") && p->hi < 1e-3 ? 1e6 : 1.0;
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, p->name);
        rep_cell_num(r, row, sc * p->prior);
        rep_cell_num(r, row, sc * p->lo);
        rep_cell_num(r, row, sc * p->hi);
        rep_cell_num(r, row, sc * p->shipped);
        rep_cell_num(r, row, sc * p->fitted_all);
        rep_cell_num(r, row, sc * p->fold_min);
        rep_cell_num(r, row, sc * p->fold_max);
        rep_cell_str(r, row, p->what);
    }
}

static void validation_runs(rep_report *r, rep_node *v, const plan_calib_row *rows, int n)
{
    static const rep_col cols[] = {
        {"file", "file", NULL, -1},          {"line", "line", NULL, -1},
        {"source", "source", NULL, -1},      {"model", "model", NULL, -1},
        {"metric", "metric", NULL, -1},      {"measured", "measured", NULL, 2},
        {"predicted", "predicted", NULL, 2}, {"error_pct", "step err", "%", 1},
        {"loso_predicted", "left out", NULL, 2}, {"loso_error_pct", "err left out", "%", 1},
        {"layout", "layout modelled", NULL, -1}, {"note", "note", NULL, -1},
    };
    rep_node *t = rep_table(r, v, "runs", "per run (step-time error = predicted / measured step - 1)", cols,
                            CP_ARRAY_LEN(cols));
    for (int i = 0; i < n; i++) {
        const plan_calib_row *x = &rows[i];
        rep_node *row = rep_row(r, t);
        rep_cell_int(r, row, x->file);
        rep_cell_int(r, row, x->line);
        rep_cell_str(r, row, x->source);
        rep_cell_str(r, row, x->model);
        rep_cell_str(r, row, x->metric);
        rep_cell_num(r, row, x->why[0] ? NAN : x->measured);
        rep_cell_num(r, row, x->why[0] ? NAN : x->predicted);
        rep_cell_num(r, row, x->why[0] ? NAN : 100 * x->err);
        rep_cell_num(r, row, x->why[0] ? NAN : x->loso_predicted);
        rep_cell_num(r, row, x->why[0] ? NAN : 100 * x->loso_err);
        rep_cell_str(r, row, x->layout);
        rep_cell_str(r, row, x->why[0] ? x->why : x->note);
    }
}

/* A validation's start: the error of a failed read, or the report with
 * every CSV among its inputs and the counts every validation has. */
static int io_fail(const char *err)
{
    cp_error e;
    cp_error_clear(&e);
    cp_error_set(&e, CP_ERR_IO, NULL, 0, 0, -1, "%s", err);
    return cli_fail(&e);
}

static rep_node *validation_head(cli_ctx *ctx, rep_report **out, const char *const *paths, int np, const char *kind,
                                 const char *key, const char *title, int rows, int used, int skipped)
{
    rep_report *r = rep_new("chainprof.model/2", ctx->argc, ctx->argv);
    struct stat st;
    for (int i = 0; i < np; i++) rep_input(r, paths[i], kind, stat(paths[i], &st) == 0 ? (uint64_t)st.st_size : 0);
    rep_node *v = rep_obj(r, r->root, key, title);
    rep_int(r, v, "rows", "rows", rows, NULL);
    rep_int(r, v, "modelled", "modelled", used, NULL);
    rep_int(r, v, "skipped", "skipped", skipped, NULL);
    *out = r;
    return v;
}

/* --validate on nccl-tests facts: the collective cost model per row. */
static int validate_collectives(cli_ctx *ctx, const char *const *paths, int np, double max_med)
{
    plan_coll_check_row *rows = cp_xcalloc(PLAN_COLL_CHECK_MAX_ROWS, sizeof *rows);
    plan_coll_check_summary sum;
    char err[512];
    if (plan_coll_check_files(paths, np, rows, PLAN_COLL_CHECK_MAX_ROWS, &sum, err, sizeof err) < 0) {
        free(rows);
        return io_fail(err);
    }
    rep_report *r;
    rep_node *v = validation_head(ctx, &r, paths, np, "nccl_tests_csv", "collective_validation",
                                  "collective cost model vs nccl-tests (busbw)", sum.rows, sum.used, sum.skipped);
    rep_num(r, v, "median_abs_error_pct", "median |error|", 100 * sum.median_abs_err, "%");
    rep_num(r, v, "mean_abs_error_pct", "mean |error|", 100 * sum.mean_abs_err, "%");
    rep_num(r, v, "max_abs_error_pct", "max |error|", 100 * sum.max_abs_err, "%");
    rep_int(r, v, "worst_line", "worst row (line)", sum.worst_line, NULL);
    static const rep_col scols[] = {
        {"source", "source", NULL, -1},  {"rows", "rows", NULL, -1}, {"modelled", "modelled", NULL, -1},
        {"median_abs_error_pct", "median |err|", "%", 1}, {"max_abs_error_pct", "max |err|", "%", 1},
    };
    rep_node *t = rep_table(r, v, "sources", "per source", scols, CP_ARRAY_LEN(scols));
    for (int i = 0; i < sum.n_sources; i++) {
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, sum.sources[i].key);
        rep_cell_int(r, row, sum.sources[i].rows);
        rep_cell_int(r, row, sum.sources[i].used);
        rep_cell_num(r, row, 100 * sum.sources[i].median_abs_err);
        rep_cell_num(r, row, 100 * sum.sources[i].max_abs_err);
    }
    static const rep_col cols[] = {
        {"file", "file", NULL, -1},     {"line", "line", NULL, -1},          {"op", "op", NULL, -1},
        {"bytes", "bytes", NULL, 0},    {"nodes", "nodes", NULL, -1},        {"gpus_per_node", "GPUs/node", NULL, -1},
        {"gpu", "GPU", NULL, -1},       {"algorithm", "algo", NULL, -1},     {"protocol", "proto", NULL, -1},
        {"measured_gbps", "measured", "GB/s", 1}, {"predicted_gbps", "predicted", "GB/s", 1},
        {"error_pct", "error", "%", 1}, {"note", "note", NULL, -1},
    };
    t = rep_table(r, v, "runs", "per measurement", cols, CP_ARRAY_LEN(cols));
    for (int i = 0; i < sum.rows && i < PLAN_COLL_CHECK_MAX_ROWS; i++) {
        const plan_coll_check_row *x = &rows[i];
        rep_node *row = rep_row(r, t);
        rep_cell_int(r, row, x->file);
        rep_cell_int(r, row, x->line);
        rep_cell_str(r, row, x->op);
        rep_cell_num(r, row, x->bytes);
        rep_cell_int(r, row, x->nodes);
        rep_cell_int(r, row, x->gpus_per_node);
        rep_cell_str(r, row, x->gpu);
        rep_cell_str(r, row, x->algo);
        rep_cell_str(r, row, x->proto);
        rep_cell_num(r, row, x->measured_gbps);
        rep_cell_num(r, row, x->why[0] ? NAN : x->predicted_gbps);
        rep_cell_num(r, row, x->why[0] ? NAN : 100 * x->err);
        rep_cell_str(r, row, x->why);
    }
    free(rows);
    int rc = cli_emit(ctx, r, NULL, 0);
    rep_free(r);
    if (rc == 0 && !isnan(max_med) && !(100 * sum.median_abs_err <= max_med)) rc = CLI_EXIT_CHECK;
    return rc;
}

/* Is this CSV a table of nccl-tests measurements (busbw_gbps column)? */
static int is_collective_csv(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096];
    int yes = fgets(line, sizeof line, f) && strstr(line, "busbw_gbps") != NULL;
    fclose(f);
    return yes;
}

static int validate(cli_ctx *ctx)
{
    double max_med;
    if (cli_get_double(ctx, O_MAX_ERR, NAN, 0, 1000, &max_med) < 0) return CLI_EXIT_USAGE;
    const char *paths[PLAN_CALIB_MAX_FILES];
    int np = 0;
    for (size_t i = 0; i < ctx->args.n_vals; i++)
        if (ctx->args.vals[i].id == O_VALIDATE) {
            if (np >= PLAN_CALIB_MAX_FILES)
                return cli_usage_error(ctx, "--validate: at most %d files", PLAN_CALIB_MAX_FILES);
            paths[np++] = ctx->args.vals[i].val;
        }
    int ncoll = 0;
    for (int i = 0; i < np; i++) ncoll += is_collective_csv(paths[i]);
    if (ncoll && ncoll != np)
        return cli_usage_error(ctx, "--validate: give either training-run CSVs or nccl-tests CSVs, not both");
    if (ncoll) return validate_collectives(ctx, paths, np, max_med);
    plan_calib_row *rows = cp_xcalloc(PLAN_CALIB_MAX_ROWS, sizeof *rows);
    plan_calib_summary sum;
    plan_calib_opts o = {.loso = !cli_has(ctx, O_NO_LOSO)};
    char err[512];
    if (plan_calib_files(paths, np, &o, rows, PLAN_CALIB_MAX_ROWS, &sum, err, sizeof err) < 0) {
        free(rows);
        return io_fail(err);
    }
    rep_report *r;
    rep_node *v = validation_head(ctx, &r, paths, np, "published_runs_csv", "validation",
                                  "model vs measured runs (step-time error)", sum.rows, sum.used, sum.skipped);
    rep_num(r, v, "median_abs_error_pct", "median |error|, shipped constants", 100 * sum.median_abs_err, "%");
    rep_num(r, v, "mean_abs_error_pct", "mean |error|", 100 * sum.mean_abs_err, "%");
    rep_num(r, v, "max_abs_error_pct", "max |error|", 100 * sum.max_abs_err, "%");
    rep_int(r, v, "worst_line", "worst row (line)", sum.worst_line, NULL);
    rep_int(r, v, "worst_file", "worst row (file index)", sum.worst_file, NULL);
    rep_int(r, v, "loso_rows", "rows predicted with their source left out", sum.loso_used, NULL);
    rep_num(r, v, "loso_median_abs_error_pct", "median |error|, leave-one-source-out", 100 * sum.loso_median_abs_err, "%");
    rep_num(r, v, "loso_mean_abs_error_pct", "mean |error|, leave-one-source-out", 100 * sum.loso_mean_abs_err, "%");
    rep_num(r, v, "loso_max_abs_error_pct", "max |error|, leave-one-source-out", 100 * sum.loso_max_abs_err, "%");
    rep_num(r, v, "refit_median_abs_error_pct", "median |error|, refit on all sources", 100 * sum.fit_median_abs_err, "%");
    rep_int(r, v, "memory_rows", "rows with measured memory", sum.mem_rows, NULL);
    rep_num(r, v, "memory_median_abs_error_pct", "memory median |error|", 100 * sum.mem_median_abs_err, "%");
    validation_tables(r, v, &sum);
    validation_runs(r, v, rows, sum.rows);
    free(rows);
    int rc = cli_emit(ctx, r, NULL, 0);
    rep_free(r);
    double gate = o.loso ? sum.loso_median_abs_err : sum.median_abs_err;
    if (rc == 0 && !isnan(max_med) && !(100 * gate <= max_med)) rc = CLI_EXIT_CHECK;
    return rc;
}

/* "8G", "512M", "1048576", "1e9": bytes, K/M/G/T binary as nccl-tests. */
static int parse_bytes(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || !(x >= 0)) return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0, end++; break;
    case 'm': case 'M': mul = 1048576.0, end++; break;
    case 'g': case 'G': mul = 1073741824.0, end++; break;
    case 't': case 'T': mul = 1099511627776.0, end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end || !(x * mul <= 1e18)) return -1;
    *out = x * mul;
    return 0;
}

/* --collective: one collective through the cost model (src/model/collmodel.h). */
static int run_collective(cli_ctx *ctx, const char *opname)
{
    collm_query q;
    collm_query_init(&q);
    int op = coll_op_parse(opname);
    if (op < 0) return cli_usage_error(ctx, "--collective: unknown operation '%s'", opname);
    q.op = (coll_op)op;
    const char *b = cli_get(ctx, O_BYTES);
    if (!b) return cli_usage_error(ctx, "--collective needs --bytes N");
    if (parse_bytes(b, &q.bytes) < 0) return cli_usage_error(ctx, "--bytes: '%s' is not a size", b);
    double nodes;
    if (cli_get_double(ctx, O_NODES, 1, 1, 1048576, &nodes) < 0) return CLI_EXIT_USAGE;
    q.nodes = (int)nodes;
    if (nodes != q.nodes) return cli_usage_error(ctx, "--nodes: not a whole number");
    plan_args pa;
    int rc = plan_args_build(ctx, &pa);
    if (rc) return rc;
    q.gpu = pa.in.gpu;
    q.gpus_per_node = pa.in.gpus_per_node > 0 ? pa.in.gpus_per_node : q.gpu->gpus_per_node;
    q.nic_gbit_s = pa.in.nic_gbit_s;
    q.nics_per_node = pa.in.nics_per_node;
    q.nvlink_gbps = pa.in.nvlink_gbytes;
    q.sharp = cli_has(ctx, O_SHARP);
    const char *a = cli_get(ctx, O_ALGO), *p = cli_get(ctx, O_PROTO);
    if ((q.algo = collm_algo_parse(a)) == -2) return cli_usage_error(ctx, "--algo: unknown algorithm '%s'", a);
    if ((q.proto = collm_proto_parse(p)) == -2) return cli_usage_error(ctx, "--proto: unknown protocol '%s'", p);
    collm_topo t;
    collm_result res;
    char err[256];
    if (collm_topo_for(&q, &t, err, sizeof err) < 0 ||
        collm_model(q.op, q.bytes, &t, q.algo, q.proto, &res, err, sizeof err) < 0)
        return cli_usage_error(ctx, "cannot model this collective: %s", err);
    rep_report *r = rep_new("chainprof.model/2", ctx->argc, ctx->argv);
    rep_arr(r, r->root, "inputs", "inputs");
    plan_report_collective(r, r->root, &q, &t, &res);
    rc = cli_emit(ctx, r, NULL, 0);
    rep_free(r);
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
    const char *coll = cli_get(ctx, O_COLL);
    if (coll) {
        rc = run_collective(ctx, coll);
        goto out;
    }
    if (cli_get(ctx, O_VALIDATE)) {
        rc = validate(ctx);
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
    rep_report *r = rep_new("chainprof.model/2", ctx->argc, ctx->argv);
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
