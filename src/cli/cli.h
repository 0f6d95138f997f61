/* cli.h - the command-line layer: command table, option tables, outputs.
 *
 * Only this directory exits or picks exit codes. A command is one file
 * cmd_<name>.c with `int cmd_<name>(cli_ctx *ctx)` returning an exit code,
 * one row in commands.def, an option table (which also drives --help), and
 * a manual page docs/man/chainprof-<name>.txt (printed by `chainprof help
 * <name>`). Checklist for a new command:
 *   1. src/cli/cmd_<name>.c with its cli_opt table and cmd_<name>();
 *   2. X(<name>, "summary") in commands.def;
 *   3. docs/man/chainprof-<name>.txt (NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
 *      EXIT STATUS, EXAMPLES);
 *   4. its JSON schema in docs/FORMATS.md; its metrics in docs/METRICS.md;
 *   5. a test in tests/ that runs it.
 *
 * Exit codes (documented in every man page):
 *   0 ok, 1 runtime failure, 2 usage, 3 input not recognised,
 *   4 a requested check failed, 5 a required optional component unavailable.
 */
#ifndef CP_CLI_CLI_H
#define CP_CLI_CLI_H

#include "../base/error.h"
#include "../base/paths.h"
#include "../model/report.h"
#include "../render/render.h"

#include <stdbool.h>
#include <stddef.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_INPUT = 3, CLI_EXIT_CHECK = 4,
       CLI_EXIT_UNAVAILABLE = 5 };

#define CLI_OPT_REPEAT 0x1u /* may be given several times; all values kept */

typedef struct cli_opt {
    const char *name;   /* long name without "--" */
    char short_name;    /* 0 if none */
    const char *arg;    /* argument name for help; NULL for a flag */
    int id;             /* value handed back to the command */
    unsigned flags;
    const char *help;   /* one line */
} cli_opt;

/* Options every reporting command shares (ids below 100). */
enum {
    CLI_O_HELP = 1, CLI_O_FORMAT, CLI_O_JSON, CLI_O_OUTPUT, CLI_O_QUIET, CLI_O_VERBOSE,
    CLI_O_THREADS, CLI_O_NO_COLOR,
};
extern const cli_opt cli_output_opts[];
extern const size_t cli_n_output_opts;

typedef struct cli_val {
    int id;
    const char *val; /* NULL for flags */
} cli_val;

typedef struct cli_args {
    cli_val *vals;
    size_t n_vals;
    char **pos;      /* positional arguments (borrowed from argv) */
    size_t n_pos;
} cli_args;

typedef struct cli_ctx {
    const char *cmd;       /* command name */
    int argc;              /* full argv of the process, for the report envelope */
    char **argv;
    int sub_argc;          /* arguments after the command name */
    char **sub_argv;
    cli_args args;         /* filled by cli_parse_cmd */
    const cli_opt *opts;   /* the command's own table */
    size_t n_opts;
    bool with_output;      /* the command accepts the shared output options */
} cli_ctx;

/* Parse ctx->sub_argv against the command's table (plus the shared output
 * options when with_output). Returns 0, or an exit code after printing the
 * error (2) or the help (0, *done set). */
int cli_parse_cmd(cli_ctx *ctx, const cli_opt *opts, size_t n_opts, bool with_output, bool *done);
void cli_args_free(cli_args *a);

const char *cli_get(const cli_ctx *ctx, int id);       /* last value or NULL */
bool cli_has(const cli_ctx *ctx, int id);
size_t cli_get_all(const cli_ctx *ctx, int id, const char **out, size_t max);
/* Parse a numeric option; on a bad value prints the error and returns -1. */
int cli_get_long(const cli_ctx *ctx, int id, long def, long min, long max, long *out);
int cli_get_double(const cli_ctx *ctx, int id, double def, double min, double max, double *out);
int cli_threads(const cli_ctx *ctx); /* --threads or the CPU count */

/* Expand the positional arguments (files, directories, globs) into a sorted
 * list without duplicates; keep() filters the files found inside
 * directories. Returns 0, or an exit code after printing the error (an
 * unreadable argument, or no file found at all). The caller frees *out. */
int cli_expand_inputs(const cli_ctx *ctx, cp_path_keep_fn keep, cp_paths *out);
/* What the walk skipped (warned already) into the report's diagnostics:
 * unreadable entries as unreadable_file, too deep ones as limit_reached. */
void cli_paths_diag(const cp_paths *p, diag_set *d);
/* Re-execute this command once with glibc's huge-page and heap tunables
 * (main.c says why); returns only when it does not (already done,
 * CHAINPROF_NO_THP=1, or exec failed). */
void cli_reexec_with_thp(char **argv);

/* Print "chainprof: <cmd>: msg" for a usage problem and return 2. */
int cli_usage_error(const cli_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a cp_error and return its exit code. */
int cli_fail(const cp_error *err);

/* Render the report to stdout in --format (default text; --json = json) and
 * to every -o FILE in the format of its extension, each written atomically.
 * `inputs` (n_inputs) are never overwritten. Returns an exit code. */
int cli_emit(const cli_ctx *ctx, const rep_report *r, char *const *inputs, size_t n_inputs);

/* Record a finished run in the history database (cli_history.c): metrics
 * NULL = every number of the report; db_path NULL = the default database.
 * Failures are warnings. */
struct hist_metrics;
struct hist_run_info;
void cli_history_record(const cli_ctx *ctx, const rep_report *r, const struct hist_metrics *metrics,
                        const char *db_path, bool no_history);
/* The same with what the run says about itself (its quietness; NULL: nothing). */
void cli_history_record_info(const cli_ctx *ctx, const rep_report *r, const struct hist_metrics *metrics,
                             const struct hist_run_info *info, const char *db_path, bool no_history);

/* Help and manuals. */
void cli_print_opts_help(const cli_ctx *ctx);
const char *cli_man_page(const char *cmd); /* NULL if none */

typedef int (*cli_cmd_fn)(cli_ctx *ctx);
typedef struct cli_command {
    const char *name;
    const char *summary;
    cli_cmd_fn fn;
} cli_command;
const cli_command *cli_commands(size_t *n);

#define X(name, summary) int cmd_##name(cli_ctx *ctx);
#include "commands.def"
#undef X

#endif
