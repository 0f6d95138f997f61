/* probe_coll.c - the `coll` probe: collectives and rank-pair bandwidth.
 *
 * Runs under mpirun (one rank per process, comm = MPI) or alone (comm =
 * local; busbw is then 0 by the nccl-tests definition, and send-recv and the
 * pair matrix need two ranks). The measuring lives in coll_bench.c and the
 * slow host/link decision in p2p_slow.c; this file maps options, emits the
 * rows (rank 0 only: the other ranks measure but do not report) and adds
 * two report sections: `p2p` (the pair matrix as links and hosts) and the
 * verdict naming the slow host and link, which is also emitted as rows
 * (metric slow_host / slow_link, value = its bandwidth, peak = the
 * reference, so efficiency is the fraction of the median it reached).
 *
 * Buffers: host buffers through the comm (MPI, or a copy alone), or GPU
 * buffers through NCCL (coll_nccl.h). --backend nccl insists, mpi refuses,
 * auto (the default) takes NCCL when every rank has libnccl and a GPU; the
 * ranks decide together, since one rank on NCCL and another on MPI would
 * wait for each other forever. coll.buffers and coll.nccl say what was used
 * and why NCCL was not. The pair matrix always runs on the comm (it is the
 * host network's view).
 */
#include "probe.h"

#include "../base/util.h"
#include "../comm/comm.h"
#include "../gpu/gpu.h"
#include "coll_bench.h"
#include "coll_nccl.h"
#include "../model/p2p_slow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool probe_coll_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return true; /* one process alone is a valid (degenerate) run */
}

static const char *mpi_call(coll_op op)
{
    switch (op) {
    case COLL_ALL_REDUCE: return "MPI_Iallreduce sum";
    case COLL_ALL_GATHER: return "MPI_Iallgather";
    case COLL_REDUCE_SCATTER: return "MPI_Ireduce_scatter_block sum";
    case COLL_ALL_TO_ALL: return "MPI_Ialltoall";
    case COLL_BROADCAST: return "MPI_Ibcast root 0";
    case COLL_SEND_RECV: return "MPI_Isend/Irecv ring";
    default: return "?";
    }
}

/* nx: the NCCL engine when the rows came from GPU buffers, else NULL. */
static void emit_sweep(probe_ctx *ctx, comm *c, const coll_nccl *nx, const coll_cfg *cfg, const coll_result *res,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char method[384];
        if (nx)
            snprintf(method, sizeof method,
                     "%s float32 on %d rank(s) (NCCL %s, GPU buffers, rank 0 on GPU %d), mean of %d iterations "
                     "after %d warm-up until the stream drained, time averaged over ranks; busbw as nccl-tests",
                     coll_nccl_call(nx, res[i].op), comm_size(c), nx->version, nx->dev, cfg->iters, cfg->warmup);
        else
            snprintf(method, sizeof method,
                     "%s float32 on %d rank(s) (%s comm, host buffers), mean of %d iterations after %d warm-up, "
                     "time averaged over ranks; busbw as nccl-tests",
                     strcmp(comm_backend(c), "mpi") ? "one-rank copy" : mpi_call(res[i].op), comm_size(c),
                     comm_backend(c), cfg->iters, cfg->warmup);
        probe_row r = {
            .metric = "busbw", .value = res[i].busbw_gbps, .unit = "GB/s", .peak = NAN, .method = method,
            .is_coll = true, .op = coll_op_name(res[i].op), .size_bytes = res[i].size_bytes,
            .time_us = res[i].time_us, .algbw_gbps = res[i].algbw_gbps, .busbw_gbps = res[i].busbw_gbps,
            .in_place = res[i].in_place, .wrong = res[i].wrong, .buffers = nx ? "device" : "host",
        };
        probe_emit(ctx, &r);
    }
}

/* The pair matrix and its verdict: rows plus the `p2p` report section. */
static void emit_p2p(probe_ctx *ctx, int n, char (*hosts)[COMM_HOST_MAX], const double *bw,
                     const coll_cfg *cfg)
{
    const char **hp = cp_xcalloc((size_t)n, sizeof *hp);
    for (int i = 0; i < n; i++)
        hp[i] = hosts[i];
    p2p_slow_result v;
    p2p_slow_analyze(n, hp, bw, P2P_SLOW_MARGIN, &v);
    char method[256];
    snprintf(method, sizeof method,
             "each ordered rank pair in turn, %zu-byte messages x %d (2 untimed first), one-way, others idle",
             cfg->p2p_bytes, cfg->p2p_iters);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            char metric[160];
            snprintf(metric, sizeof metric, "p2p_bandwidth rank %d (%s) -> rank %d (%s)", i, hosts[i], j,
                     hosts[j]);
            probe_emit_value(ctx, metric, bw[(size_t)i * (size_t)n + (size_t)j], "GB/s", NAN, method);
        }
    const char *what = v.by_host ? "host" : "rank";
    for (size_t e = 0; e < v.n_ents; e++) {
        if (!v.ents[e].slow)
            continue;
        char metric[160];
        snprintf(metric, sizeof metric, "slow_%s %s", what, v.ents[e].label);
        snprintf(method, sizeof method,
                 "median of its %s-pair bandwidths below %.0f%% of the median %s (%.3f GB/s)", what,
                 100 * (1 - v.margin), what, v.reference_gbps);
        probe_emit_value(ctx, metric, v.ents[e].score_gbps, "GB/s", v.reference_gbps, method);
    }
    for (size_t l = 0; l < v.n_links; l++) {
        if (!v.links[l].slow)
            continue;
        char metric[200];
        snprintf(metric, sizeof metric, "slow_link %s <-> %s", v.ents[v.links[l].a].label,
                 v.ents[v.links[l].b].label);
        snprintf(method, sizeof method, "median pair bandwidth below %.0f%% of the median %s (%.3f GB/s)",
                 100 * (1 - v.margin), what, v.reference_gbps);
        probe_emit_value(ctx, metric, v.links[l].bw_gbps, "GB/s", v.reference_gbps, method);
    }
    if (ctx->rep)
        p2p_slow_report(ctx->rep, ctx->rep->root, "p2p", "rank-pair bandwidth", &v);
    p2p_slow_free(&v);
    free(hp);
}

/* NCCL or not: the same answer on every rank (collective). why says why
 * not; an explicit --backend nccl that cannot be met is CP_ERR_UNAVAILABLE. */
static int pick_nccl(probe_ctx *ctx, comm *c, bool *use, char *why, size_t why_size, cp_error *err)
{
    const char *want = ctx->opts.coll_backend ? ctx->opts.coll_backend : "auto";
    *use = false;
    why[0] = 0;
    if (strcmp(want, "mpi") == 0) {
        snprintf(why, why_size, "not requested (--backend mpi)");
        return 0;
    }
    gpu_rt *g = probe_gpu(ctx);
    bool ok = g && gpu_nccl_available(g);
    if (!g)
        snprintf(why, why_size, "no GPU: %s", ctx->gpu_why);
    else if (!ok)
        snprintf(why, why_size, "%s", g->nccl_why);
    int64_t lacking[1] = { !ok };
    int rc = comm_allreduce_i64(c, lacking, 1, COMM_SUM, err);
    if (rc < 0)
        return rc;
    if (ok && lacking[0])
        snprintf(why, why_size, "%lld of %d ranks lack libnccl or a GPU", (long long)lacking[0], comm_size(c));
    *use = lacking[0] == 0;
    if (!*use && strcmp(want, "nccl") == 0)
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "--backend nccl: %s", why);
    return 0;
}

int probe_coll_run(probe_ctx *ctx, cp_error *err)
{
    comm *c = ctx->opts.comm, *own = NULL;
    int rc;
    if (!c) {
        if ((rc = comm_open(&own, true, ctx->opts.timeout_s, err)) < 0)
            return rc;
        c = own;
    }
    if (ctx->opts.timeout_s > 0)
        comm_set_timeout_s(c, ctx->opts.timeout_s);
    coll_cfg cfg = {.min_bytes = ctx->opts.min_bytes, .max_bytes = ctx->opts.max_bytes,
                    .factor = ctx->opts.factor, .warmup = ctx->opts.warmup, .iters = ctx->opts.iters,
                    .check = true};
    coll_cfg_defaults(&cfg, ctx->opts.quick);
    int n = comm_size(c), me = comm_rank(c);
    bool use_nccl = false;
    char why[700];
    coll_nccl nx;
    memset(&nx, 0, sizeof nx);
    rc = pick_nccl(ctx, c, &use_nccl, why, sizeof why, err);
    if (rc == 0 && use_nccl && (rc = coll_nccl_open(&nx, ctx->gpu, c, err)) < 0)
        snprintf(why, sizeof why, "set-up failed: %s", err ? err->msg : "?");
    if (ctx->rep && me == 0) {
        rep_node *o = rep_obj(ctx->rep, ctx->rep->root, "coll", "collectives");
        rep_str(ctx->rep, o, "backend", "comm back-end", comm_backend(c));
        rep_int(ctx->rep, o, "ranks", "ranks", n, NULL);
        if (n == 1) /* nccl-tests prints the same numbers for one GPU; say what they are */
            rep_str(ctx->rep, o, "note", "note",
                    "one rank: no byte crosses a link; busbw is 0 where the bus factor has (n-1)/n (all-reduce, "
                    "all-gather, reduce-scatter, all-to-all) and equals algbw for broadcast, a local copy or "
                    "nothing in place: these rows measure no link");
        bool used = use_nccl && rc == 0;
        rep_str(ctx->rep, o, "buffers", "buffers", used ? "device" : "host");
        if (used) {
            char line[700];
            snprintf(line, sizeof line, "used: NCCL %s (%s), rank 0 on GPU %d", nx.version, ctx->gpu->nccl_path,
                     nx.dev);
            rep_str(ctx->rep, o, "nccl", "NCCL (GPU buffers)", line);
            rep_str(ctx->rep, o, "nccl_version", "NCCL version", nx.version);
        } else {
            char line[720];
            snprintf(line, sizeof line, "%s%s", strncmp(why, "not requested", 13) ? "unavailable: " : "", why);
            rep_str(ctx->rep, o, "nccl", "NCCL (GPU buffers)", line);
            rep_null(ctx->rep, o, "nccl_version", "NCCL version", NULL);
        }
    }
    if (rc < 0) {
        comm_close(own);
        return rc;
    }
    coll_result *res = NULL;
    size_t nres = 0;
    coll_engine eng;
    if (use_nccl)
        coll_nccl_engine(&nx, &eng);
    rc = coll_sweep_engine(c, use_nccl ? &eng : NULL, &cfg, &res, &nres, err);
    if (me == 0)
        emit_sweep(ctx, c, use_nccl ? &nx : NULL, &cfg, res, nres);
    free(res);
    if (use_nccl)
        coll_nccl_close(&nx);
    if (rc == 0 && n >= 2) {
        char (*hosts)[COMM_HOST_MAX] = cp_xcalloc((size_t)n, sizeof *hosts);
        double *bw = cp_xcalloc((size_t)n * (size_t)n, sizeof *bw);
        rc = comm_hostnames(c, hosts, err);
        if (rc == 0)
            rc = coll_p2p_matrix(c, &cfg, bw, err);
        if (rc == 0 && me == 0)
            emit_p2p(ctx, n, hosts, bw, &cfg);
        free(bw);
        free(hosts);
    }
    comm_close(own);
    return rc;
}
