/* cmd_analyze.c - `chainprof analyze`: traces and evidence in, one report out.
 *
 * Flow: expand the arguments (files, directories, globs) into input files;
 * sniff each one's content and hand it to the most confident trace reader;
 * read traces in parallel, one builder per file, one thread per file up to
 * --threads; freeze the timeline; run every analyzer; render. An input no
 * reader recognises stops the run with exit 3 and file:offset: reason,
 * because a wrong file on the command line is a user error worth fixing,
 * whereas damaged records inside a recognised file are counted and skipped.
 */
#include "cli.h"
#include "../analysis/analysis.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/paths.h"
#include "../base/src.h"
#include "../base/util.h"
#include "../readers/reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_GPUS_PER_NODE = 100, O_RANK_MAP, O_DB, O_NO_HISTORY };

static const cli_opt opts[] = {
    { "gpus-per-node", 0, "N", O_GPUS_PER_NODE, 0,
      "GPUs per node, for intra/inter-node scope (default: the trace's device count)" },
    { "rank-map", 0, "PID=RANK,...", O_RANK_MAP, 0,
      "ranks of processes in Nsight Systems reports (default: one rank per process, in pid order)" },
    { "db", 0, "PATH", O_DB, 0, "history database (default $XDG_DATA_HOME/chainprof/history.db)" },
    { "no-history", 0, NULL, O_NO_HISTORY, 0, "do not record this run in the history database" },
};

typedef struct input {
    const char *path;
    const rd_trace_reader *reader;
    tl_builder *builder;
    tl_builder **extra; /* more ranks from the same file (rd_opts.more) */
    size_t n_extra;
    cp_error err;
    int rc;
    uint64_t size_bytes;
    const char *compression;
} input;

typedef struct read_job {
    input *inputs;
    size_t n;
    const char *rank_map;
} read_job;

static tl_builder *more_builder(void *ctx, const char *source)
{
    input *in = ctx;
    in->extra = cp_xrealloc(in->extra, (in->n_extra + 1) * sizeof *in->extra);
    return in->extra[in->n_extra++] = tl_builder_new(source);
}

static void read_one(void *ctx, size_t i)
{
    read_job *job = ctx;
    input *in = &job->inputs[i];
    rd_opts ro = { .more = more_builder, .more_ctx = in, .rank_map = job->rank_map };
    cp_error_clear(&in->err);
    in->builder = tl_builder_new(in->path);
    in->rc = in->reader->read(in->path, in->builder, &ro, &in->err);
}

/* Sniff every input; returns an exit code (3 when one is not recognised). */
static int detect_inputs(input *inputs, size_t n)
{
    unsigned char *head = cp_xmalloc(RD_SNIFF_BYTES);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        cp_error err;
        cp_error_clear(&err);
        ssize_t got = cp_src_peek(inputs[i].path, head, RD_SNIFF_BYTES, &err);
        if (got < 0) {
            rc = cli_fail(&err);
            break;
        }
        cp_src *s;
        if (cp_src_open(&s, inputs[i].path, NULL) == 0) {
            inputs[i].size_bytes = cp_src_raw_size(s);
            inputs[i].compression = cp_src_kind_name(cp_src_get_kind(s));
            cp_src_close(s);
        }
        inputs[i].reader = rd_detect(inputs[i].path, head, (size_t)got);
        if (!inputs[i].reader) {
            cp_error_set(&err, CP_ERR_FORMAT, inputs[i].path, 0, 0, 0,
                         "input not recognised: not a trace or evidence format chainprof reads");
            rc = cli_fail(&err);
        }
    }
    free(head);
    return rc;
}

static bool keep_trace_file(const char *path, void *ctx)
{
    (void)ctx;
    return cp_str_ends(path, ".json") || cp_str_ends(path, ".json.gz") || cp_str_ends(path, ".json.zst") ||
           cp_str_ends(path, ".sqlite") || cp_str_ends(path, ".nsys-rep") || cp_str_ends(path, ".log") || cp_str_ends(path, ".txt");
}

int cmd_analyze(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done)
        return rc;
    if (ctx->args.n_pos == 0)
        return cli_usage_error(ctx, "no input: give trace files, directories or globs");
    long gpn;
    int nthreads = cli_threads(ctx);
    if (nthreads < 0 || cli_get_long(ctx, O_GPUS_PER_NODE, 0, 0, 4096, &gpn) < 0)
        return CLI_EXIT_USAGE;

    cp_paths paths = { 0 };
    cp_error err;
    cp_error_clear(&err);
    for (size_t i = 0; i < ctx->args.n_pos; i++)
        if (cp_paths_add(&paths, ctx->args.pos[i], keep_trace_file, NULL, &err) < 0) {
            cp_paths_free(&paths);
            return cli_fail(&err);
        }
    cp_paths_sort_unique(&paths);
    if (paths.n == 0) {
        cp_paths_free(&paths);
        return cli_usage_error(ctx, "no input files found in the given directories");
    }
    input *inputs = cp_xcalloc(paths.n, sizeof *inputs);
    for (size_t i = 0; i < paths.n; i++)
        inputs[i].path = paths.v[i];
    rc = detect_inputs(inputs, paths.n);
    rep_report *rep = NULL;
    tl_timeline *tl = NULL;
    an_ctx an = { 0 };
    if (rc)
        goto out;

    if (cp_log_stderr_is_tty() && cp_log_level() >= CP_LOG_WARN)
        fprintf(stderr, "chainprof: reading %zu file%s on %d thread%s...\r", paths.n, paths.n == 1 ? "" : "s",
                nthreads, nthreads == 1 ? "" : "s");
    read_job job = { inputs, paths.n, cli_get(ctx, O_RANK_MAP) };
    cp_par_for(paths.n, nthreads, read_one, &job);
    if (cp_log_stderr_is_tty() && cp_log_level() >= CP_LOG_WARN)
        fprintf(stderr, "\033[K");
    for (size_t i = 0; i < paths.n && !rc; i++)
        if (inputs[i].rc < 0)
            rc = cli_fail(&inputs[i].err);
    size_t n_builders = 0;
    for (size_t i = 0; i < paths.n; i++)
        n_builders += 1 + inputs[i].n_extra;
    tl_builder **bs = cp_xcalloc(n_builders, sizeof *bs);
    n_builders = 0;
    for (size_t i = 0; i < paths.n; i++) {
        bs[n_builders++] = inputs[i].builder;
        inputs[i].builder = NULL;
        for (size_t k = 0; k < inputs[i].n_extra; k++)
            bs[n_builders++] = inputs[i].extra[k];
        inputs[i].n_extra = 0;
    }
    if (rc) {
        for (size_t i = 0; i < n_builders; i++)
            tl_builder_free(bs[i]);
        free(bs);
        goto out;
    }
    tl_finish_opts fo = { .nthreads = nthreads };
    if (tl_finish(bs, n_builders, &fo, &tl, &err) < 0) {
        free(bs);
        rc = cli_fail(&err);
        goto out;
    }
    free(bs);

    rep = rep_new("chainprof.analyze/1", ctx->argc, ctx->argv);
    for (size_t i = 0; i < paths.n; i++) {
        rep_node *in = rep_input(rep, inputs[i].path, inputs[i].reader->name, inputs[i].size_bytes);
        rep_str(rep, in, "compression", "compression", inputs[i].compression);
    }
    rep_diagnostics(rep, &tl->diag);
    an_opts ao = { .gpus_per_node = (int)gpn, .nthreads = nthreads };
    if (an_run_all(&an, tl, rep, &ao, &err) < 0) {
        rc = cli_fail(&err);
        goto out;
    }
    if (tl->diag.count[DIAG_TRUNCATED_FILE])
        cp_log_warn("%s: truncated trace; events up to the last complete one were used",
                    tl->diag.first[DIAG_TRUNCATED_FILE]);
    rc = cli_emit(ctx, rep, paths.v, paths.n);
    if (!rc)
        cli_history_record(ctx, rep, NULL, cli_get(ctx, O_DB), cli_has(ctx, O_NO_HISTORY));
out:
    an_ctx_free(&an);
    rep_free(rep);
    tl_free(tl);
    for (size_t i = 0; i < paths.n; i++) {
        tl_builder_free(inputs[i].builder);
        for (size_t k = 0; k < inputs[i].n_extra; k++)
            tl_builder_free(inputs[i].extra[k]);
        free(inputs[i].extra);
    }
    free(inputs);
    cp_paths_free(&paths);
    return rc;
}
