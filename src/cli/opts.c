/* opts.c - option parsing driven by the commands' option tables.
 *
 * Long options as --name, --name=value or --name value; short options as
 * -x value or -xvalue (flags can be grouped: -qv). "--" ends options. The
 * same tables print --help, so the two cannot drift apart. */
#include "cli.h"
#include "../base/afile.h"
#include "../base/jsonw.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_opt cli_output_opts[] = {
    { "format", 'f', "FMT", CLI_O_FORMAT, 0, "output format on stdout: text (default), json, csv" },
    { "json", 0, NULL, CLI_O_JSON, 0, "same as --format json" },
    { "output", 'o', "FILE", CLI_O_OUTPUT, CLI_OPT_REPEAT,
      "also write the report to FILE, format from its extension (.txt .json .csv .html); repeatable" },
    { "quiet", 'q', NULL, CLI_O_QUIET, 0, "print errors only on stderr" },
    { "verbose", 'v', NULL, CLI_O_VERBOSE, CLI_OPT_REPEAT, "more detail on stderr" },
    { "threads", 'j', "N", CLI_O_THREADS, 0, "worker threads (default: CPU count)" },
    { "no-color", 0, NULL, CLI_O_NO_COLOR, 0, "no colour in text output (also NO_COLOR)" },
};
const size_t cli_n_output_opts = CP_ARRAY_LEN(cli_output_opts);

static const cli_opt help_opt = { "help", 'h', NULL, CLI_O_HELP, 0, "show this help" };

/* With CHAINPROF_ERROR_FILE set, the error that ends the run is also written
 * there as JSON (chainprof.error/1: code, status, exit, file, line, col,
 * offset, sys_errno, message), atomically: what the Python package turns into
 * an exception carrying the C error's code and position (docs/FORMATS.md). */
static void record_error(const cp_error *err)
{
    const char *path = getenv("CHAINPROF_ERROR_FILE");
    if (!path || !*path)
        return;
    cp_buf b = { 0 };
    cp_jw w;
    cp_jw_init(&w, &b, 0);
    cp_jw_obj_begin(&w);
    cp_jw_key(&w, "schema");
    cp_jw_str(&w, "chainprof.error/1");
    cp_jw_key(&w, "code");
    cp_jw_int(&w, err->code);
    cp_jw_key(&w, "status");
    cp_jw_str(&w, cp_status_name(err->code));
    cp_jw_key(&w, "exit");
    cp_jw_int(&w, cp_status_exit_code(err->code));
    cp_jw_key(&w, "file");
    if (err->file[0])
        cp_jw_str(&w, err->file);
    else
        cp_jw_null(&w);
    cp_jw_key(&w, "line");
    if (err->line > 0) cp_jw_int(&w, err->line); else cp_jw_null(&w);
    cp_jw_key(&w, "col");
    if (err->col > 0) cp_jw_int(&w, err->col); else cp_jw_null(&w);
    cp_jw_key(&w, "offset");
    if (err->offset >= 0) cp_jw_int(&w, err->offset); else cp_jw_null(&w);
    cp_jw_key(&w, "sys_errno");
    cp_jw_int(&w, err->sys_errno);
    cp_jw_key(&w, "message");
    cp_jw_str(&w, err->msg);
    cp_jw_obj_end(&w);
    cp_buf_putc(&b, '\n');
    cp_afile_write(path, b.data, b.len, NULL);
    cp_buf_free(&b);
}

int cli_usage_error(const cli_ctx *ctx, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cp_log_error("%s: %s (see 'chainprof %s --help')", ctx->cmd, msg, ctx->cmd);
    cp_error err;
    cp_error_clear(&err);
    cp_error_set(&err, CP_ERR_USAGE, "", 0, 0, -1, "%s: %.400s", ctx->cmd, msg);
    record_error(&err);
    return CLI_EXIT_USAGE;
}

/* A file found inside an input directory that is one of this run's -o
 * outputs is the previous run's report, not an input: `analyze DIR -o
 * DIR/report.json` must work the second time too. Named explicitly, it is
 * still refused by cli_emit. */
typedef struct keep_ctx {
    cp_path_keep_fn keep;
    const char *outs[64];
    size_t n_out;
} keep_ctx;

static bool keep_not_output(const char *path, void *arg)
{
    const keep_ctx *k = arg;
    for (size_t i = 0; i < k->n_out; i++)
        if (!strcmp(path, k->outs[i]) || cp_same_file(path, k->outs[i]))
            return false;
    return !k->keep || k->keep(path, NULL);
}

int cli_expand_inputs(const cli_ctx *ctx, cp_path_keep_fn keep, cp_paths *out)
{
    memset(out, 0, sizeof *out);
    cp_error err;
    cp_error_clear(&err);
    keep_ctx k = { .keep = keep };
    k.n_out = cli_get_all(ctx, CLI_O_OUTPUT, k.outs, CP_ARRAY_LEN(k.outs));
    if (k.n_out > CP_ARRAY_LEN(k.outs))
        k.n_out = CP_ARRAY_LEN(k.outs);
    for (size_t i = 0; i < ctx->args.n_pos; i++)
        if (cp_paths_add(out, ctx->args.pos[i], keep_not_output, &k, &err) < 0) {
            cp_paths_free(out);
            return cli_fail(&err);
        }
    cp_paths_sort_unique(out);
    if (out->n == 0) {
        cp_paths_free(out);
        return cli_usage_error(ctx, "no input files found in the given directories");
    }
    return 0;
}

void cli_paths_diag(const cp_paths *p, diag_set *d)
{
    if (p->n_unreadable)
        diag_count_n(d, DIAG_UNREADABLE_FILE, p->n_unreadable, p->first_skipped, -1);
    if (p->n_too_deep)
        diag_count_n(d, DIAG_LIMIT_REACHED, p->n_too_deep, p->first_skipped, -1);
}

int cli_fail(const cp_error *err)
{
    char buf[1200];
    cp_log_error("%s", cp_error_format(err, buf, sizeof buf));
    record_error(err);
    return cp_status_exit_code(err->code);
}

static const cli_opt *find_long(const cli_ctx *ctx, const char *name, size_t len)
{
    for (size_t i = 0; i < ctx->n_opts; i++)
        if (strlen(ctx->opts[i].name) == len && !strncmp(ctx->opts[i].name, name, len))
            return &ctx->opts[i];
    if (ctx->with_output)
        for (size_t i = 0; i < cli_n_output_opts; i++)
            if (strlen(cli_output_opts[i].name) == len && !strncmp(cli_output_opts[i].name, name, len))
                return &cli_output_opts[i];
    if (strlen(help_opt.name) == len && !strncmp(help_opt.name, name, len))
        return &help_opt;
    return NULL;
}

static const cli_opt *find_short(const cli_ctx *ctx, char c)
{
    for (size_t i = 0; i < ctx->n_opts; i++)
        if (ctx->opts[i].short_name == c)
            return &ctx->opts[i];
    if (ctx->with_output)
        for (size_t i = 0; i < cli_n_output_opts; i++)
            if (cli_output_opts[i].short_name == c)
                return &cli_output_opts[i];
    return c == 'h' ? &help_opt : NULL;
}

static void push_val(cli_args *a, int id, const char *v)
{
    a->vals = cp_xrealloc(a->vals, (a->n_vals + 1) * sizeof *a->vals);
    a->vals[a->n_vals++] = (cli_val){ id, v };
}

int cli_parse_cmd(cli_ctx *ctx, const cli_opt *opts, size_t n_opts, bool with_output, bool *done)
{
    ctx->opts = opts;
    ctx->n_opts = n_opts;
    ctx->with_output = with_output;
    *done = false;
    cli_args *a = &ctx->args;
    memset(a, 0, sizeof *a);
    a->pos = cp_xcalloc((size_t)ctx->sub_argc + 1, sizeof *a->pos);
    bool only_pos = false;
    for (int i = 0; i < ctx->sub_argc; i++) {
        char *s = ctx->sub_argv[i];
        if (only_pos || s[0] != '-' || s[1] == 0) {
            a->pos[a->n_pos++] = s;
            continue;
        }
        if (!strcmp(s, "--")) {
            only_pos = true;
            continue;
        }
        if (s[1] == '-') {
            const char *name = s + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const cli_opt *o = find_long(ctx, name, len);
            if (!o)
                return cli_usage_error(ctx, "unknown option '--%.*s'", (int)len, name);
            const char *v = NULL;
            if (o->arg) {
                if (eq)
                    v = eq + 1;
                else if (i + 1 < ctx->sub_argc)
                    v = ctx->sub_argv[++i];
                else
                    return cli_usage_error(ctx, "option '--%s' needs a value (%s)", o->name, o->arg);
            } else if (eq) {
                return cli_usage_error(ctx, "option '--%s' takes no value", o->name);
            }
            push_val(a, o->id, v);
            continue;
        }
        for (const char *p = s + 1; *p; p++) {
            const cli_opt *o = find_short(ctx, *p);
            if (!o)
                return cli_usage_error(ctx, "unknown option '-%c'", *p);
            if (!o->arg) {
                push_val(a, o->id, NULL);
                continue;
            }
            if (p[1])
                push_val(a, o->id, p + 1);
            else if (i + 1 < ctx->sub_argc)
                push_val(a, o->id, ctx->sub_argv[++i]);
            else
                return cli_usage_error(ctx, "option '-%c' needs a value (%s)", *p, o->arg);
            break;
        }
    }
    if (cli_has(ctx, CLI_O_HELP)) {
        cli_print_opts_help(ctx);
        *done = true;
        return 0;
    }
    if (cli_has(ctx, CLI_O_QUIET))
        cp_log_set_level(CP_LOG_ERROR);
    size_t nv = 0;
    for (size_t i = 0; i < a->n_vals; i++)
        nv += a->vals[i].id == CLI_O_VERBOSE;
    if (nv)
        cp_log_set_level(CP_LOG_WARN + (int)nv);
    return 0;
}

void cli_args_free(cli_args *a)
{
    free(a->vals);
    free(a->pos);
    memset(a, 0, sizeof *a);
}

const char *cli_get(const cli_ctx *ctx, int id)
{
    const char *v = NULL;
    for (size_t i = 0; i < ctx->args.n_vals; i++)
        if (ctx->args.vals[i].id == id)
            v = ctx->args.vals[i].val;
    return v;
}

bool cli_has(const cli_ctx *ctx, int id)
{
    for (size_t i = 0; i < ctx->args.n_vals; i++)
        if (ctx->args.vals[i].id == id)
            return true;
    return false;
}

size_t cli_get_all(const cli_ctx *ctx, int id, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < ctx->args.n_vals; i++)
        if (ctx->args.vals[i].id == id) {
            if (n < max)
                out[n] = ctx->args.vals[i].val;
            n++;
        }
    return n;
}

static const char *opt_name(const cli_ctx *ctx, int id)
{
    for (size_t i = 0; i < ctx->n_opts; i++)
        if (ctx->opts[i].id == id)
            return ctx->opts[i].name;
    for (size_t i = 0; i < cli_n_output_opts; i++)
        if (cli_output_opts[i].id == id)
            return cli_output_opts[i].name;
    return "?";
}

int cli_get_long(const cli_ctx *ctx, int id, long def, long min, long max, long *out)
{
    const char *v = cli_get(ctx, id);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    if (errno || end == v || *end || x < min || x > max) {
        cli_usage_error(ctx, "--%s: '%s' is not a whole number from %ld to %ld", opt_name(ctx, id), v, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

int cli_get_double(const cli_ctx *ctx, int id, double def, double min, double max, double *out)
{
    const char *v = cli_get(ctx, id);
    if (!v) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= min && x <= max)) {
        cli_usage_error(ctx, "--%s: '%s' is not a number from %g to %g", opt_name(ctx, id), v, min, max);
        return -1;
    }
    *out = x;
    return 0;
}

int cli_threads(const cli_ctx *ctx)
{
    long n;
    if (cli_get_long(ctx, CLI_O_THREADS, cp_cpu_count(), 1, 1024, &n) < 0)
        return -1;
    return (int)n;
}

static void print_table(const cli_opt *opts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char left[64];
        if (opts[i].short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", opts[i].short_name, opts[i].name,
                     opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", opts[i].name, opts[i].arg ? " " : "",
                     opts[i].arg ? opts[i].arg : "");
        printf("  %-28s %s\n", left, opts[i].help);
    }
}

void cli_print_opts_help(const cli_ctx *ctx)
{
    size_t n;
    const cli_command *cmds = cli_commands(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cmds[i].name, ctx->cmd))
            printf("chainprof %s: %s\n\n", ctx->cmd, cmds[i].summary);
    printf("usage: chainprof %s [options] [--] args\n\noptions:\n", ctx->cmd);
    print_table(ctx->opts, ctx->n_opts);
    if (ctx->with_output) {
        printf("\noutput options:\n");
        print_table(cli_output_opts, cli_n_output_opts);
    }
    print_table(&help_opt, 1);
    printf("\nThe manual: chainprof help %s\n", ctx->cmd);
}
