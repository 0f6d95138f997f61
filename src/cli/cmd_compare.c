/* cmd_compare.c - `chainprof compare RUN_A RUN_B`: two recorded runs side
 * by side, metric by metric, with the change in percent and a verdict
 * (hist_judge): a difference inside the noise of both runs (their p10-p90
 * bands overlap) is "no change", with the bands; otherwise a change in the
 * bad direction beyond --threshold is a regression. Which direction is bad
 * comes from the unit (throughputs should not fall, durations should not
 * rise; see hist_unit_direction). A run recorded as not quiet is said so
 * in the header and the summary, with the probe's numbers. With
 * --fail-on-regression a flagged metric makes the exit status 4.
 * Metrics pair by path only: a collective's path carries its buffer kind
 * (host or device, hist_coll_path), so an MPI all-reduce on host memory and
 * an NCCL one on GPU memory of the same size appear as two one-sided rows,
 * never as a change.
 */
#include "cli.h"
#include "../base/util.h"
#include "../history/history.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { O_DB = 100, O_THRESHOLD, O_FAIL };

static const cli_opt opts[] = {
    { "db", 0, "PATH", O_DB, 0, "history database (default $XDG_DATA_HOME/chainprof/history.db)" },
    { "threshold", 0, "PCT", O_THRESHOLD, 0, "flag changes worse than PCT percent (default 5)" },
    { "fail-on-regression", 0, NULL, O_FAIL, 0, "exit 4 when a metric regressed beyond the threshold" },
};

static void run_header(rep_report *rep, const char *key, const hist_run *r)
{
    rep_node *o = rep_obj(rep, rep->root, key, key);
    rep_int(rep, o, "id", "run", r->id, NULL);
    rep_str(rep, o, "host", "host", r->host);
    rep_str(rep, o, "command", "command", r->command);
    rep_str(rep, o, "argv", "command line", r->argv);
    if (r->quiet >= 0)
        rep_bool(rep, o, "quiet", "quiet", r->quiet);
    else
        rep_null(rep, o, "quiet", "quiet", NULL);
    if (r->quiet_verdict[0])
        rep_str(rep, o, "quiet_verdict", "quietness", r->quiet_verdict);
    else
        rep_null(rep, o, "quiet_verdict", "quietness", NULL);
}

/* The p10/p90 cells of one side: null without a spread. */
static void band_cells(rep_report *rep, rep_node *row, const hist_metric *m)
{
    bool has = m && m->spread.rounds >= 2;
    rep_cell_num(rep, row, has ? m->spread.p10 : NAN);
    rep_cell_num(rep, row, has ? m->spread.p90 : NAN);
    if (m && m->spread.rounds > 0)
        rep_cell_int(rep, row, m->spread.rounds);
    else
        rep_cell_null(rep, row);
}

int cmd_compare(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done)
        return rc;
    if (ctx->args.n_pos != 2)
        return cli_usage_error(ctx, "give two runs: RUN_A RUN_B (ids from 'chainprof history', 'last', 'prev')");
    double threshold;
    if (cli_get_double(ctx, O_THRESHOLD, 5.0, 0, 1e9, &threshold) < 0)
        return CLI_EXIT_USAGE;
    cp_error err;
    cp_error_clear(&err);
    hist_db *db;
    if (hist_open_existing(cli_get(ctx, O_DB), &db, &err) < 0)
        return cli_fail(&err);
    int64_t ida, idb;
    hist_run ra = { 0 }, rb = { 0 };
    hist_metrics ma = { 0 }, mb = { 0 };
    rep_report *rep = NULL;
    if (hist_resolve(db, ctx->args.pos[0], &ida, &err) < 0 || hist_resolve(db, ctx->args.pos[1], &idb, &err) < 0 ||
        hist_get_run(db, ida, &ra, &err) < 0 || hist_get_run(db, idb, &rb, &err) < 0 ||
        hist_metrics_of(db, ida, &ma, &err) < 0 || hist_metrics_of(db, idb, &mb, &err) < 0) {
        rc = err.code == CP_ERR_USAGE ? cli_usage_error(ctx, "%s", err.msg) : cli_fail(&err);
        goto out;
    }
    rep = rep_new("chainprof.compare/1", ctx->argc, ctx->argv);
    run_header(rep, "run_a", &ra);
    run_header(rep, "run_b", &rb);
    rep_num(rep, rep->root, "threshold_pct", "regression threshold", threshold, "%");
    static const rep_col cols[] = {
        { "metric", "metric", NULL, -1 }, { "unit", "unit", NULL, -1 },       { "a", "run A", NULL, 3 },
        { "b", "run B", NULL, 3 },        { "change_pct", "change", "%", 1 }, { "regression", "regression", NULL, -1 },
        { "buffers", "buffers", NULL, -1 },
        /* the noise each side measured (schema 3 history; null before) */
        { "verdict", "verdict", NULL, -1 }, { "a_p10", "A p10", NULL, 3 }, { "a_p90", "A p90", NULL, 3 },
        { "a_rounds", "A rounds", NULL, -1 }, { "b_p10", "B p10", NULL, 3 }, { "b_p90", "B p90", NULL, 3 },
        { "b_rounds", "B rounds", NULL, -1 }, { "why", "why", NULL, -1 },
    };
    rep_node *t = rep_table(rep, rep->root, "metrics", "metrics", cols, CP_ARRAY_LEN(cols));
    size_t i = 0, k = 0, n_reg = 0, n_both = 0, n_noise = 0, n_better = 0;
    /* both lists are sorted by path: merge them */
    while (i < ma.n || k < mb.n) {
        int c = i >= ma.n ? 1 : k >= mb.n ? -1 : strcmp(ma.v[i].path, mb.v[k].path);
        const hist_metric *a = c <= 0 ? &ma.v[i] : NULL, *b = c >= 0 ? &mb.v[k] : NULL;
        rep_node *row = rep_row(rep, t);
        rep_cell_str(rep, row, a ? a->path : b->path);
        rep_cell_str(rep, row, a && a->unit ? a->unit : b && b->unit ? b->unit : "");
        rep_cell_num(rep, row, a ? a->value : NAN);
        rep_cell_num(rep, row, b ? b->value : NAN);
        char why[400] = "";
        hist_verdict v = HIST_V_UNKNOWN;
        if (a && b) {
            v = hist_judge(a, b, threshold, why, sizeof why);
            rep_cell_num(rep, row, hist_change_pct(a->value, b->value));
            rep_cell_bool(rep, row, v == HIST_V_REGRESSION);
            n_reg += v == HIST_V_REGRESSION;
            n_noise += v == HIST_V_NO_CHANGE;
            n_better += v == HIST_V_IMPROVEMENT;
            n_both++;
        } else {
            rep_cell_null(rep, row);
            rep_cell_null(rep, row);
            snprintf(why, sizeof why, "only in run %s", a ? "A" : "B");
        }
        /* the kind is part of the path, so a paired row has one kind */
        const char *kind = a && a->buffers ? a->buffers : b ? b->buffers : NULL;
        if (kind)
            rep_cell_str(rep, row, kind);
        else
            rep_cell_null(rep, row);
        rep_cell_str(rep, row, hist_verdict_name(v));
        band_cells(rep, row, a);
        band_cells(rep, row, b);
        rep_cell_str(rep, row, why);
        i += c <= 0;
        k += c >= 0;
    }
    rep_node *sum = rep_obj(rep, rep->root, "summary", "summary");
    rep_int(rep, sum, "compared", "metrics in both runs", (int64_t)n_both, NULL);
    rep_int(rep, sum, "regressions", "regressions beyond the threshold", (int64_t)n_reg, NULL);
    rep_int(rep, sum, "no_change_in_noise", "differences inside the noise of both runs", (int64_t)n_noise, NULL);
    rep_int(rep, sum, "improvements", "improvements beyond the threshold", (int64_t)n_better, NULL);
    if (ra.quiet == 0 || rb.quiet == 0)
        rep_str(rep, sum, "note", "note",
                ra.quiet == 0 && rb.quiet == 0 ? "neither run was quiet: their figures say as much about the load"
                : ra.quiet == 0 ? "run A was not quiet: see run_a.quiet_verdict"
                                : "run B was not quiet: see run_b.quiet_verdict");
    rc = cli_emit(ctx, rep, NULL, 0);
    if (!rc && n_reg && cli_has(ctx, O_FAIL)) {
        cp_error_set(&err, CP_ERR_CHECK, NULL, 0, 0, -1, "%zu metric%s regressed by more than %g %%", n_reg,
                     n_reg == 1 ? "" : "s", threshold);
        rc = cli_fail(&err);
    }
out:
    rep_free(rep);
    hist_run_free(&ra);
    hist_run_free(&rb);
    hist_metrics_free(&ma);
    hist_metrics_free(&mb);
    hist_close(db);
    return rc;
}
