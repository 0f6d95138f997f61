/* cmd_diff.c - `chainprof diff BEFORE... -- AFTER...`: two trace sets
 * compared (HTA TraceDiff's operator and kernel diff, step time, exposed
 * time per layer, findings; see analysis/an_diff.h), with --fail-on PCT
 * for CI (exit 4 when the step time grew by more than PCT percent).
 *
 * Each set is read like `analyze` reads traces (files, directories, globs;
 * files in a directory that are no trace format are skipped, a named one
 * stops the run) into its own timeline and analyzed with the defaults;
 * evidence files are not part of a diff.
 */
#include "cli.h"
#include "../analysis/an_diff.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/src.h"
#include "../base/util.h"
#include "../readers/reader.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { O_RANK = 100, O_ITERATION, O_FAIL_ON };

static const cli_opt opts[] = {
    { "rank", 0, "N", O_RANK, 0, "rank compared op by op (default: each set's first rank)" },
    { "iteration", 0, "N|all", O_ITERATION, 0,
      "profiler step compared op by op (default: each set's first; all: every step)" },
    { "fail-on", 0, "PCT", O_FAIL_ON, 0, "exit 4 when the step time regressed by more than PCT percent" },
};

typedef struct set_file {
    const char *path;
    const rd_trace_reader *reader;
    tl_builder *builder;
    tl_builder **extra;
    size_t n_extra;
    cp_error err;
    int rc;
} set_file;

static bool trace_name(const char *path, void *ctx)
{
    (void)ctx;
    return cp_str_ends(path, ".json") || cp_str_ends(path, ".json.gz") || cp_str_ends(path, ".json.zst") ||
           cp_str_ends(path, ".sqlite") || cp_str_ends(path, ".nsys-rep") || cp_str_ends(path, ".cptrace");
}

static tl_builder *more_builder(void *ctx, const char *source)
{
    set_file *f = ctx;
    f->extra = cp_xrealloc(f->extra, (f->n_extra + 1) * sizeof *f->extra);
    return f->extra[f->n_extra++] = tl_builder_new(source);
}

static void read_one(void *ctx, size_t i)
{
    set_file *f = &((set_file *)ctx)[i];
    rd_opts ro = { .more = more_builder, .more_ctx = f };
    cp_error_clear(&f->err);
    f->builder = tl_builder_new(f->path);
    f->rc = f->reader->read(f->path, f->builder, &ro, &f->err);
}

static bool is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Read one trace set (args[0..n)) into a timeline; returns an exit code. */
static int load_set(const cli_ctx *ctx, char **args, size_t n, int nthreads, const char *which, tl_timeline **out,
                    cp_paths *paths)
{
    memset(paths, 0, sizeof *paths);
    cp_error err;
    cp_error_clear(&err);
    for (size_t i = 0; i < n; i++)
        if (cp_paths_add(paths, args[i], trace_name, NULL, &err) < 0)
            return cli_fail(&err);
    cp_paths_sort_unique(paths);
    set_file *f = cp_xcalloc(paths->n ? paths->n : 1, sizeof *f);
    unsigned char *head = cp_xmalloc(RD_SNIFF_BYTES);
    size_t nf = 0;
    int rc = 0;
    for (size_t i = 0; i < paths->n && !rc; i++) {
        ssize_t got = cp_src_peek(paths->v[i], head, RD_SNIFF_BYTES, &err);
        if (got < 0) {
            rc = cli_fail(&err);
            break;
        }
        const rd_trace_reader *rd = rd_detect(paths->v[i], head, (size_t)got);
        bool named = false;
        for (size_t k = 0; k < n; k++)
            named |= !strcmp(args[k], paths->v[i]) && is_regular(args[k]);
        if (!rd && named) {
            cp_log_error("%s: not a trace format chainprof reads", paths->v[i]);
            rc = CLI_EXIT_INPUT;
        } else if (rd) {
            f[nf++] = (set_file){ .path = paths->v[i], .reader = rd };
        }
    }
    free(head);
    if (!rc && nf == 0)
        rc = cli_usage_error(ctx, "no trace among the %s inputs", which);
    if (!rc) {
        cp_par_for(nf, nthreads, read_one, f);
        for (size_t i = 0; i < nf && !rc; i++)
            if (f[i].rc < 0)
                rc = cli_fail(&f[i].err);
    }
    size_t nb = 0;
    for (size_t i = 0; i < nf; i++)
        nb += (f[i].builder != NULL) + f[i].n_extra;
    tl_builder **bs = cp_xcalloc(nb ? nb : 1, sizeof *bs);
    nb = 0;
    for (size_t i = 0; i < nf; i++) {
        if (f[i].builder)
            bs[nb++] = f[i].builder;
        for (size_t k = 0; k < f[i].n_extra; k++)
            bs[nb++] = f[i].extra[k];
        free(f[i].extra);
    }
    free(f);
    if (rc) {
        for (size_t i = 0; i < nb; i++)
            tl_builder_free(bs[i]);
    } else if (tl_finish(bs, nb, &(tl_finish_opts){ .nthreads = nthreads }, out, &err) < 0) {
        rc = cli_fail(&err);
    }
    free(bs);
    return rc;
}

/* Index in sub_argv of the first "--", or -1. */
static int dashdash(const cli_ctx *ctx)
{
    for (int i = 0; i < ctx->sub_argc; i++)
        if (!strcmp(ctx->sub_argv[i], "--"))
            return i;
    return -1;
}

static int argv_index(const cli_ctx *ctx, const char *s)
{
    for (int i = 0; i < ctx->sub_argc; i++)
        if (ctx->sub_argv[i] == s)
            return i;
    return -1;
}

int cmd_diff(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done)
        return rc;
    int dd = dashdash(ctx);
    size_t n_before = 0;
    for (size_t i = 0; i < ctx->args.n_pos; i++)
        n_before += dd >= 0 && argv_index(ctx, ctx->args.pos[i]) < dd;
    if (dd < 0 || n_before == 0 || n_before == ctx->args.n_pos)
        return cli_usage_error(ctx, "expected BEFORE... -- AFTER... (two trace sets separated by --)");
    an_diff_opts o = { .fail_on_pct = -1 };
    long rank;
    if (cli_get_long(ctx, O_RANK, -1, 0, INT32_MAX, &rank) < 0 ||
        cli_get_double(ctx, O_FAIL_ON, -1, 0, 1e9, &o.fail_on_pct) < 0)
        return CLI_EXIT_USAGE;
    o.has_rank = rank >= 0;
    o.rank = (int32_t)rank;
    const char *it = cli_get(ctx, O_ITERATION);
    if (it && !strcmp(it, "all")) {
        o.all_iterations = true;
    } else if (it) {
        char *end;
        long long v = strtoll(it, &end, 10);
        if (end == it || *end || v < 0)
            return cli_usage_error(ctx, "--iteration '%s': expected a profiler step number or all", it);
        o.has_iteration = true;
        o.iteration = v;
    }
    int nthreads = cli_threads(ctx);
    if (nthreads < 0)
        return CLI_EXIT_USAGE;
    tl_timeline *tl[2] = { NULL, NULL };
    cp_paths paths[2] = { { 0 }, { 0 } };
    an_ctx an[2] = { { 0 }, { 0 } };
    rep_report *rep = rep_new("chainprof.diff/1", ctx->argc, ctx->argv);
    char **pos = ctx->args.pos;
    rc = load_set(ctx, pos, n_before, nthreads, "BEFORE", &tl[0], &paths[0]);
    if (!rc)
        rc = load_set(ctx, pos + n_before, ctx->args.n_pos - n_before, nthreads, "AFTER", &tl[1], &paths[1]);
    cp_error err;
    cp_error_clear(&err);
    an_opts ao = { .nthreads = nthreads };
    rep_report *scratch[2] = { NULL, NULL }; /* each set's full analysis: the diff shows the comparison */
    for (int s = 0; s < 2 && !rc; s++) {
        scratch[s] = rep_new("chainprof.analyze/1", 0, NULL);
        if (an_run_all(&an[s], tl[s], scratch[s], &ao, &err) < 0)
            rc = cli_fail(&err);
    }
    bool regressed = false;
    if (!rc && an_diff(&an[0], &an[1], &o, rep, &regressed, &err) < 0)
        rc = cli_fail(&err);
    for (int s = 0; s < 2 && !rc; s++)
        for (size_t i = 0; i < paths[s].n; i++)
            rep_str(rep, rep_input(rep, paths[s].v[i], s ? "after" : "before", 0), "set", "set",
                    s ? "after" : "before");
    if (!rc) {
        char **all = cp_xcalloc(paths[0].n + paths[1].n + 1, sizeof *all);
        memcpy(all, paths[0].v, paths[0].n * sizeof *all);
        memcpy(all + paths[0].n, paths[1].v, paths[1].n * sizeof *all);
        rc = cli_emit(ctx, rep, all, paths[0].n + paths[1].n);
        free(all);
    }
    if (!rc && regressed) {
        cp_log_warn("--fail-on %g: step time changed by %+.2f %%", o.fail_on_pct,
                    rep_path(rep, "step_time.change_pct")->v.d);
        rc = CLI_EXIT_CHECK;
    }
    for (int s = 0; s < 2; s++) {
        an_ctx_free(&an[s]);
        rep_free(scratch[s]);
        tl_free(tl[s]);
        cp_paths_free(&paths[s]);
    }
    rep_free(rep);
    return rc;
}
