/* cli_history.c - record a finished run in the history database.
 *
 * Called by probe and analyze after their report is out. A failure to
 * record (read-only home, locked beyond the busy timeout) is a warning, not
 * a failed run: the measurement itself succeeded and is already printed.
 */
#include "cli.h"
#include "../base/log.h"
#include "../history/history.h"

#include <stdlib.h>

void cli_history_record(const cli_ctx *ctx, const rep_report *r, const hist_metrics *metrics, const char *db_path,
                        bool no_history)
{
    cli_history_record_info(ctx, r, metrics, NULL, db_path, no_history);
}

void cli_history_record_info(const cli_ctx *ctx, const rep_report *r, const hist_metrics *metrics,
                             const hist_run_info *info, const char *db_path, bool no_history)
{
    if (no_history || getenv("CHAINPROF_NO_HISTORY"))
        return;
    hist_metrics flat = { 0 };
    if (!metrics) {
        hist_flatten_report(r, &flat, 100000);
        metrics = &flat;
    }
    hist_db *db;
    cp_error err;
    cp_error_clear(&err);
    int64_t id = 0;
    if (hist_open(db_path, &db, &err) == 0) {
        hist_record(db, ctx->cmd, ctx->argc, ctx->argv, metrics, info, &id, &err);
        hist_close(db);
    }
    if (err.code) {
        char buf[1200];
        cp_log_warn("run not recorded in history: %s", cp_error_format(&err, buf, sizeof buf));
    } else {
        cp_log_info("recorded as history run %lld", (long long)id);
    }
    hist_metrics_free(&flat);
}
