/* cmd_probe.c - `chainprof probe`: measure this machine layer by layer.
 *
 * `chainprof probe` alone runs a quick pass of every probe that applies;
 * naming probes or layers runs those in full. The probes themselves live in
 * src/probe (one file each, table in probes.def); this file only maps
 * options to probe_opts, runs the selection, renders the chainprof.probe/1
 * report through cli_emit and records the run in the history database.
 *
 * Exit status: 0 when every selected probe that applies ran; 1 when one
 * failed (its rows so far and its error are still reported); 2 usage;
 * 5 when a probe was named explicitly and cannot run here.
 */
#include "cli.h"
#include "../base/util.h"
#include "../history/history.h"
#include "../probe/probe.h"
#include "../comm/comm.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_LIST = 100, O_QUICK, O_FULL, O_DIR, O_SIZE, O_ROUNDS, O_SECONDS, O_LISTEN, O_CONNECT, O_STREAMS, O_MIN_BYTES,
    O_MAX_BYTES, O_ITERS, O_WARMUP, O_TIMEOUT, O_DB, O_NO_HISTORY, O_FACTOR, O_BACKEND, O_RDMA, O_NO_RDMA,
    O_RDMA_DEV, O_IB_PORT, O_GID_INDEX, O_QPS,
};

static const cli_opt opts[] = {
    { "list", 0, NULL, O_LIST, 0, "list the probes and their layers, then exit" },
    { "quick", 0, NULL, O_QUICK, 0, "quick pass (a few seconds per probe) even for named probes" },
    { "full", 0, NULL, O_FULL, 0, "full measurements even when no probe is named" },
    { "dir", 0, "DIR", O_DIR, 0, "storage: directory to test (default: the current directory)" },
    { "size", 0, "BYTES", O_SIZE, 0, "memory/storage working size, e.g. 512M, 4G (default: per probe)" },
    { "rounds", 0, "N", O_ROUNDS, 0,
      "rounds of every measurement, reported with their median and spread (default: per probe, 3-10)" },
    { "seconds", 0, "S", O_SECONDS, 0, "time budget per measurement (default: per probe)" },
    { "listen", 0, "[ADDR:]PORT", O_LISTEN, 0, "net: serve a peer on this address" },
    { "connect", 0, "HOST:PORT", O_CONNECT, 0, "net: measure towards a peer serving with --listen" },
    { "streams", 0, "N", O_STREAMS, 0, "net: parallel TCP streams / RDMA QPs (default 1)" },
    { "rdma", 0, NULL, O_RDMA, 0, "net: RDMA is required: fail when it cannot run (default: when a device exists)" },
    { "no-rdma", 0, NULL, O_NO_RDMA, 0, "net: no RDMA measurement (a server refuses a client's request)" },
    { "rdma-dev", 0, "NAME", O_RDMA_DEV, 0, "net: RDMA device (default: the first libibverbs lists)" },
    { "ib-port", 0, "N", O_IB_PORT, 0, "net: RDMA port number (default 1)" },
    { "gid-index", 0, "N", O_GID_INDEX, 0, "net: GID index for RoCE/global routing (default: 0 on RoCE, none on IB)" },
    { "qps", 0, "N", O_QPS, 0, "net: RDMA RC queue pairs per side (default 1)" },
    { "min-bytes", 0, "BYTES", O_MIN_BYTES, 0, "coll, RDMA: smallest message size (default 8; RDMA 2, quick 4K)" },
    { "max-bytes", 0, "BYTES", O_MAX_BYTES, 0, "coll, RDMA: largest message size (default 64M, RDMA 8M; quick 1M)" },
    { "iters", 0, "N", O_ITERS, 0, "coll: timed iterations per size (default 20); RDMA: messages per QP (1000)" },
    { "warmup", 0, "N", O_WARMUP, 0, "coll: untimed warm-up iterations per size (default 5)" },
    { "factor", 0, "F", O_FACTOR, 0, "coll, RDMA: message size multiplier between sweep steps (default 2; quick 4)" },
    { "backend", 0, "auto|mpi|nccl", O_BACKEND, 0,
      "coll: host buffers through MPI, or GPU buffers through NCCL (auto: NCCL when every rank has it and a GPU)" },
    { "timeout", 0, "S", O_TIMEOUT, 0, "every network wait gives up after S seconds (default 30)" },
    { "db", 0, "PATH", O_DB, 0, "history database (default $XDG_DATA_HOME/chainprof/history.db)" },
    { "no-history", 0, NULL, O_NO_HISTORY, 0, "do not record this run in the history database" },
};

/* "4G", "512M", "64k", "1000" -> bytes (binary multiples). -1 when bad. */
static int parse_size(const char *s, uint64_t *out)
{
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0))
        return -1;
    double mul = 1;
    switch (tolower((unsigned char)*end)) {
    case 'k': mul = 1024.0; end++; break;
    case 'm': mul = 1024.0 * 1024; end++; break;
    case 'g': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || v * mul > 1e18)
        return -1;
    *out = (uint64_t)(v * mul);
    return 0;
}

static int size_opt(cli_ctx *ctx, int id, uint64_t *out)
{
    const char *v = cli_get(ctx, id);
    if (v && parse_size(v, out) < 0)
        return cli_usage_error(ctx, "bad size '%s' (a number with an optional k, M, G or T suffix)", v);
    return 0;
}

/* The spread of a row for history (none for a single figure). */
static void row_spread(const probe_row *w, hist_spread *sp)
{
    hist_spread_none(sp);
    snprintf(sp->stat, sizeof sp->stat, "%s", probe_stat_name(w->stat));
    if (w->stats.n == 0)
        return;
    sp->rounds = (int64_t)w->stats.n;
    sp->median = w->stats.median;
    sp->p10 = w->stats.p10;
    sp->p90 = w->stats.p90;
    sp->min = w->stats.min;
    sp->max = w->stats.max;
    sp->cv = w->stats.cv;
}

/* History paths: "probe/metric"; a collective row adds what tells it apart,
 * the buffer kind included (hist_coll_path):
 * "coll/busbw/all_reduce/host/1048576/out_of_place/busbw_gbps" (and time_us).
 * Each keeps the spread of its rounds, so compare can tell noise from a
 * change; an impossible figure is stored as unknown (NULL), never as a value. */
static void history_metrics(const probe_ctx *pc, hist_metrics *m)
{
    char path[512];
    for (size_t i = 0; i < pc->n_results; i++) {
        const probe_result *r = &pc->results[i];
        hist_spread sp;
        row_spread(&r->row, &sp);
        if (!r->row.is_coll) {
            if (r->row.size_bytes) /* a sweep (RDMA): one path per size */
                snprintf(path, sizeof path, "%s/%s/%llu", r->probe, r->row.metric,
                         (unsigned long long)r->row.size_bytes);
            else
                snprintf(path, sizeof path, "%s/%s", r->probe, r->row.metric);
            hist_metrics_add_spread(m, path, r->row.value, r->row.unit, NULL, &sp);
            continue;
        }
        const char *kind = r->row.buffers ? r->row.buffers : "unknown";
        if (hist_coll_path(path, sizeof path, r->probe, r->row.metric, r->row.op, kind, r->row.size_bytes,
                           r->row.in_place, "busbw_gbps") >= 0)
            hist_metrics_add_spread(m, path, r->row.impossible ? NAN : r->row.busbw_gbps, "GB/s", kind, &sp);
        if (hist_coll_path(path, sizeof path, r->probe, r->row.metric, r->row.op, kind, r->row.size_bytes,
                           r->row.in_place, "time_us") >= 0)
            hist_metrics_add_kind(m, path, r->row.time_us, "us", kind);
    }
}

static int list_probes(void)
{
    size_t n;
    const probe_def *t = probe_table(&n);
    for (size_t i = 0; i < n; i++)
        printf("%-10s %-8s %s\n", t[i].name, probe_layer_name(t[i].layer), t[i].summary);
    return CLI_EXIT_OK;
}

int cmd_probe(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done)
        return rc;
    if (cli_has(ctx, O_LIST))
        return list_probes();

    probe_opts po = { 0 };
    po.quick = ctx->args.n_pos == 0 ? !cli_has(ctx, O_FULL) : cli_has(ctx, O_QUICK);
    po.dir = cli_get(ctx, O_DIR);
    po.listen = cli_get(ctx, O_LISTEN);
    po.connect = cli_get(ctx, O_CONNECT);
    po.coll_backend = cli_get(ctx, O_BACKEND);
    if (po.coll_backend && strcmp(po.coll_backend, "auto") && strcmp(po.coll_backend, "mpi") &&
        strcmp(po.coll_backend, "nccl"))
        return cli_usage_error(ctx, "bad --backend '%s' (auto, mpi or nccl)", po.coll_backend);
    long streams, iters, warmup, rounds;
    if (size_opt(ctx, O_SIZE, &po.size_bytes) || size_opt(ctx, O_MIN_BYTES, &po.min_bytes) ||
        size_opt(ctx, O_MAX_BYTES, &po.max_bytes))
        return CLI_EXIT_USAGE;
    if (cli_get_double(ctx, O_SECONDS, 0, 0, 3600, &po.seconds) < 0 ||
        cli_get_double(ctx, O_TIMEOUT, 0, 0, 86400, &po.timeout_s) < 0 ||
        cli_get_double(ctx, O_FACTOR, 0, 0, 1024, &po.factor) < 0 ||
        cli_get_long(ctx, O_STREAMS, 0, 0, 1024, &streams) < 0 ||
        cli_get_long(ctx, O_ITERS, 0, 0, 1000000, &iters) < 0 ||
        cli_get_long(ctx, O_WARMUP, 0, 0, 1000000, &warmup) < 0 ||
        cli_get_long(ctx, O_ROUNDS, 0, 1, PROBE_MAX_ROUNDS, &rounds) < 0)
        return CLI_EXIT_USAGE;
    long ib_port, gid_index, qps;
    if (cli_get_long(ctx, O_IB_PORT, 0, 0, 255, &ib_port) < 0 ||
        cli_get_long(ctx, O_GID_INDEX, 0, 0, 255, &gid_index) < 0 || cli_get_long(ctx, O_QPS, 0, 0, 64, &qps) < 0)
        return CLI_EXIT_USAGE;
    if (cli_has(ctx, O_RDMA) && cli_has(ctx, O_NO_RDMA))
        return cli_usage_error(ctx, "--rdma and --no-rdma exclude each other");
    po.rdma = cli_has(ctx, O_RDMA) ? 1 : cli_has(ctx, O_NO_RDMA) ? -1 : 0;
    po.rdma_dev = cli_get(ctx, O_RDMA_DEV);
    po.ib_port = (int)ib_port;
    po.has_gid_index = cli_has(ctx, O_GID_INDEX);
    po.gid_index = (int)gid_index;
    po.qps = (int)qps;
    po.streams = (int)streams;
    po.iters = (int)iters;
    po.warmup = (int)warmup;
    po.rounds = (int)rounds;
    if (cli_has(ctx, CLI_O_THREADS)) {
        po.threads = cli_threads(ctx);
        if (po.threads < 0)
            return CLI_EXIT_USAGE;
    }
    if (po.min_bytes && po.max_bytes && po.min_bytes > po.max_bytes)
        return cli_usage_error(ctx, "--min-bytes is larger than --max-bytes");
    if (cli_has(ctx, O_FACTOR) && !(po.factor > 1))
        return cli_usage_error(ctx, "--factor must be larger than 1");

    size_t n_probes;
    probe_table(&n_probes);
    bool *sel = cp_xcalloc(n_probes, sizeof *sel);
    probe_outcome *out = cp_xcalloc(n_probes, sizeof *out);
    cp_error err;
    cp_error_clear(&err);
    if (probe_select((const char *const *)ctx->args.pos, ctx->args.n_pos, sel, &err) < 0) {
        rc = err.code == CP_ERR_USAGE ? cli_usage_error(ctx, "%s", err.msg) : cli_fail(&err);
        free(sel);
        free(out);
        return rc;
    }

    /* under mpirun every rank runs the probes; rank 0 alone reports */
    comm *cm = NULL;
    if (comm_open(&cm, false, po.timeout_s > 0 ? po.timeout_s : 30, &err) < 0) {
        free(sel);
        free(out);
        return cli_fail(&err);
    }
    po.comm = cm;
    rep_report *rep = rep_new("chainprof.probe/1", ctx->argc, ctx->argv);
    rep_str(rep, rep->root, "mode", "mode", po.quick ? "quick" : "full");
    probe_ctx pc;
    probe_ctx_init(&pc, &po, rep);
    size_t failed = probe_run_selected(&pc, sel, out);
    probe_report(&pc, out, n_probes);
    /* under mpirun only rank 0 reports and records the run */
    rc = comm_rank(cm) == 0 ? cli_emit(ctx, rep, NULL, 0) : 0;
    if (!rc && pc.n_results && comm_rank(cm) == 0) {
        hist_metrics hm = { 0 };
        history_metrics(&pc, &hm);
        char verdict[2048];
        bool quiet = probe_quiet_verdict(&pc.quiet, verdict, sizeof verdict);
        hist_run_info info = { pc.quiet.n ? quiet : -1, verdict };
        cli_history_record_info(ctx, rep, &hm, &info, cli_get(ctx, O_DB), cli_has(ctx, O_NO_HISTORY));
        hist_metrics_free(&hm);
    }

    /* a probe named explicitly that cannot run here is worth an exit code */
    for (size_t i = 0; i < n_probes; i++) {
        if (out[i].ran && out[i].status < 0)
            cp_error_set(&err, out[i].status, NULL, 0, 0, -1, "probe %s: %s", out[i].def->name, out[i].reason);
        if (!rc && ctx->args.n_pos && sel[i] && !out[i].ran)
            cp_error_set(&err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "probe %s skipped: %s", out[i].def->name,
                         out[i].reason);
    }
    if (!rc && failed) {
        rc = cli_fail(&err);
        /* a failed collective leaves peers waiting: end the whole job */
        if (comm_size(cm) > 1)
            comm_abort(cm, rc);
    } else if (!rc && err.code == CP_ERR_UNAVAILABLE) {
        bool any_ran = false;
        for (size_t i = 0; i < n_probes; i++)
            any_ran |= out[i].ran;
        if (!any_ran)
            rc = cli_fail(&err);
    }
    probe_ctx_free(&pc);
    comm_close(cm);
    rep_free(rep);
    free(sel);
    free(out);
    return rc;
}
