/* cmd_history.c - `chainprof history`: list the runs recorded in the
 * history database, newest first (see src/history/history.h), with whether
 * the machine was quiet while a probe run measured it. */
#include "cli.h"
#include "../base/util.h"
#include "../history/history.h"

#include <stdio.h>
#include <time.h>

enum { O_DB = 100, O_LIMIT, O_COMMAND };

static const cli_opt opts[] = {
    { "db", 0, "PATH", O_DB, 0, "history database (default $XDG_DATA_HOME/chainprof/history.db)" },
    { "limit", 'n', "N", O_LIMIT, 0, "show the newest N runs (default 20; 0 = all)" },
    { "command", 0, "CMD", O_COMMAND, 0, "only runs of this command (probe, analyze)" },
};

/* ISO 8601 UTC time of a run, e.g. 2026-11-30T10:30:00Z. */
static void iso_time(int64_t ns, char *buf, size_t size)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int cmd_history(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done)
        return rc;
    if (ctx->args.n_pos)
        return cli_usage_error(ctx, "unexpected argument '%s'", ctx->args.pos[0]);
    long limit;
    if (cli_get_long(ctx, O_LIMIT, 20, 0, 1000000000, &limit) < 0)
        return CLI_EXIT_USAGE;
    cp_error err;
    cp_error_clear(&err);
    hist_db *db;
    if (hist_open_existing(cli_get(ctx, O_DB), &db, &err) < 0)
        return cli_fail(&err);
    hist_runs runs;
    if (hist_list(db, cli_get(ctx, O_COMMAND), (size_t)limit, &runs, &err) < 0) {
        hist_close(db);
        return cli_fail(&err);
    }
    rep_report *rep = rep_new("chainprof.history/1", ctx->argc, ctx->argv);
    static const rep_col cols[] = {
        { "id", "run", NULL, -1 },         { "time", "time (UTC)", NULL, -1 }, { "host", "host", NULL, -1 },
        { "command", "command", NULL, -1 }, { "version", "version", NULL, -1 }, { "metrics", "metrics", NULL, -1 },
        { "argv", "command line", NULL, -1 }, { "buffers", "coll buffers", NULL, -1 },
        { "quiet", "quiet", NULL, -1 },
    };
    rep_node *t = rep_table(rep, rep->root, "runs", "runs", cols, CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < runs.n; i++) {
        char when[32];
        iso_time(runs.v[i].time_ns, when, sizeof when);
        rep_node *row = rep_row(rep, t);
        rep_cell_int(rep, row, runs.v[i].id);
        rep_cell_str(rep, row, when);
        rep_cell_str(rep, row, runs.v[i].host);
        rep_cell_str(rep, row, runs.v[i].command);
        rep_cell_str(rep, row, runs.v[i].version);
        rep_cell_int(rep, row, runs.v[i].n_metrics);
        rep_cell_str(rep, row, runs.v[i].argv);
        if (runs.v[i].buffers[0])
            rep_cell_str(rep, row, runs.v[i].buffers);
        else
            rep_cell_null(rep, row);
        if (runs.v[i].quiet >= 0) /* null: not checked (analyze, or recorded before schema 3) */
            rep_cell_bool(rep, row, runs.v[i].quiet);
        else
            rep_cell_null(rep, row);
    }
    rc = cli_emit(ctx, rep, NULL, 0);
    rep_free(rep);
    hist_runs_free(&runs);
    hist_close(db);
    return rc;
}
