/* cmd_synth.c - `chainprof synth`: write a realistic multi-rank Kineto trace
 * set of a simulated data-parallel job, with problems injected on request.
 * Option handling only; the model and writer live in src/synth. */
#include "cli.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../synth/synth.h"
#include "../synth/syn_pp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_OUT = 100, O_RANKS, O_GPN, O_TP, O_STEPS, O_SEED, O_INJECT, O_GZIP, O_ZSTD, O_FORCE, O_LAYERS, O_HIDDEN, O_SEQ,
    O_MB, O_BUCKET, O_NIC, O_NVLINK, O_EFF, O_PP, O_DP, O_MBS, O_CHUNKS, O_BATCHED_P2P,
};

static const cli_opt opts[] = {
    { "out", 0, "DIR", O_OUT, 0, "output directory (created; must be empty unless --force)" },
    { "ranks", 0, "N", O_RANKS, 0, "number of ranks, one trace file each (default 2)" },
    { "gpus-per-node", 0, "G", O_GPN, 0, "GPUs per node; more ranks than G means inter-node all-reduce (default 8)" },
    { "tp", 0, "N", O_TP, 0, "tensor-parallel size: groups of N consecutive ranks in a node (default 1)" },
    { "steps", 0, "S", O_STEPS, 0, "profiler steps per rank (default 4)" },
    { "seed", 0, "N", O_SEED, 0, "random seed; same arguments and seed give the same bytes (default 1)" },
    { "inject", 0, "KIND[=V],...", O_INJECT, CLI_OPT_REPEAT,
      "problems: slow-network=F, sync-checkpoint=S[@N], straggler=R[:F], dataloader-stall=MS[@N], "
      "launch-bound[=N], pageable-h2d[=MB], host-work=MS[@N]" },
    { "gzip", 0, NULL, O_GZIP, 0, "write rank-N.json.gz" },
    { "zstd", 0, NULL, O_ZSTD, 0, "write rank-N.json.zst" },
    { "force", 0, NULL, O_FORCE, 0, "write into a non-empty directory, replacing files" },
    { "layers", 0, "N", O_LAYERS, 0, "transformer layers (default 8)" },
    { "hidden", 0, "N", O_HIDDEN, 0, "hidden size, a multiple of 128 (default 4096)" },
    { "seq-len", 0, "N", O_SEQ, 0, "sequence length (default 2048)" },
    { "micro-batch", 0, "N", O_MB, 0, "micro-batch size per rank (default 4)" },
    { "bucket-mb", 0, "N", O_BUCKET, 0, "DDP gradient bucket size in MiB (default 25)" },
    { "nic-gbps", 0, "GB/S", O_NIC, 0, "inter-node all-reduce busbw at full link rate (default 23)" },
    { "nvlink-gbps", 0, "GB/S", O_NVLINK, 0, "intra-node all-reduce busbw (default 230)" },
    { "gemm-eff", 0, "F", O_EFF, 0, "GEMM efficiency, fraction of 312 TFLOP/s (default 0.62)" },
    { "pp", 0, "P", O_PP, 0, "pipeline job with P stages: writes optrace.json (the OSDI'25 artifact's op timelines) and "
      "rank-N.json Kineto traces (rank = stage x D + DP rank); "
      "--inject stage-imbalance=STAGE[:F], seqlen-imbalance=A, straggler=DP.PP[:F]" },
    { "dp", 0, "D", O_DP, 0, "pipeline job: data-parallel ranks (default 2)" },
    { "microbatches", 0, "M", O_MBS, 0, "pipeline job: microbatches per step (default 8)" },
    { "chunks", 0, "V", O_CHUNKS, 0, "pipeline job: model chunks per stage, > 1 = interleaved schedule (default 1)" },
    { "batched-p2p", 0, NULL, O_BATCHED_P2P, 0,
      "pipeline job: each transfer as batch_isend_irecv writes it (a coalesced SendRecv kernel naming no peer)" },
};

/* `synth --pp`: the pipeline-parallel job (src/synth/syn_pp.c). */
static int synth_pp(cli_ctx *ctx, const char *dir)
{
    syn_pp_config c;
    syn_pp_default(&c);
    long v;
    const struct { int id; int *field; long max; } ints[] = {
        { O_PP, &c.pp, SYN_PP_MAX_WORKERS }, { O_DP, &c.dp, SYN_PP_MAX_WORKERS }, { O_MBS, &c.microbatches, 4096 },
        { O_CHUNKS, &c.chunks, 64 }, { O_STEPS, &c.steps, 1000 }, { O_GPN, &c.gpus_per_node, 64 },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(ints); i++) {
        if (cli_get_long(ctx, ints[i].id, *ints[i].field, 1, ints[i].max, &v) < 0)
            return CLI_EXIT_USAGE;
        *ints[i].field = (int)v;
    }
    if (cli_has(ctx, O_SEED))
        c.seed = strtoull(cli_get(ctx, O_SEED), NULL, 0);
    c.force = cli_has(ctx, O_FORCE);
    c.batched_p2p = cli_has(ctx, O_BATCHED_P2P);
    if (cli_has(ctx, O_GZIP) && cli_has(ctx, O_ZSTD))
        return cli_usage_error(ctx, "--gzip and --zstd are exclusive");
    c.compress = cli_has(ctx, O_GZIP) ? SYN_GZIP : cli_has(ctx, O_ZSTD) ? SYN_ZSTD : SYN_PLAIN;
    const char *inj[64];
    size_t n_inj = cli_get_all(ctx, O_INJECT, inj, CP_ARRAY_LEN(inj));
    cp_error err;
    cp_error_clear(&err);
    for (size_t i = 0; i < n_inj && i < CP_ARRAY_LEN(inj); i++)
        if (syn_pp_parse_inject(&c, inj[i], &err) < 0)
            return cli_usage_error(ctx, "%s", err.msg);
    if (syn_pp_check(&c, &err) < 0)
        return cli_usage_error(ctx, "%s", err.msg);
    uint64_t n_ops;
    double t_ns;
    if (syn_pp_write(&c, dir, &n_ops, &t_ns, &err) < 0)
        return cli_fail(&err);
    printf("wrote a %d-stage x %d-rank pipeline job (%s) to %s/optrace.json: %llu ops, mean step %.3f ms; "
           "Kineto traces rank-0..%d.json; what-if truth in %s/synth.json\n",
           c.pp, c.dp, c.chunks > 1 ? "interleaved" : "1F1B", dir, (unsigned long long)n_ops, t_ns / 1e6,
           c.pp * c.dp - 1, dir);
    return CLI_EXIT_OK;
}

int cmd_synth(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), false, &done);
    if (rc || done)
        goto out;
    if (ctx->args.n_pos) {
        rc = cli_usage_error(ctx, "unexpected argument '%s'", ctx->args.pos[0]);
        goto out;
    }
    const char *dir = cli_get(ctx, O_OUT);
    if (!dir || !*dir) {
        rc = cli_usage_error(ctx, "--out DIR is required");
        goto out;
    }
    if (cli_has(ctx, O_PP)) {
        rc = synth_pp(ctx, dir);
        goto out;
    }
    syn_config c;
    syn_config_default(&c);
    long v;
#define GET_L(id, field, min, max)                                                                               \
    do {                                                                                                         \
        if (cli_get_long(ctx, id, c.field, min, max, &v) < 0) {                                                  \
            rc = CLI_EXIT_USAGE;                                                                                 \
            goto out;                                                                                            \
        }                                                                                                        \
        c.field = (int)v;                                                                                        \
    } while (0)
#define GET_D(id, field, min, max)                                                                               \
    do {                                                                                                         \
        if (cli_get_double(ctx, id, c.field, min, max, &c.field) < 0) {                                          \
            rc = CLI_EXIT_USAGE;                                                                                 \
            goto out;                                                                                            \
        }                                                                                                        \
    } while (0)
    GET_L(O_RANKS, ranks, 1, SYN_MAX_RANKS);
    GET_L(O_GPN, gpus_per_node, 1, 64);
    GET_L(O_TP, tp, 1, 64);
    GET_L(O_STEPS, steps, 1, SYN_MAX_STEPS);
    GET_L(O_LAYERS, layers, 1, SYN_MAX_LAYERS);
    GET_L(O_HIDDEN, hidden, 128, 65536);
    GET_L(O_SEQ, seq_len, 128, 1048576);
    GET_L(O_MB, micro_batch, 1, 1024);
    GET_L(O_BUCKET, bucket_mb, 1, 4096);
    GET_D(O_NIC, nic_busbw_gbps, 0.01, 10000);
    GET_D(O_NVLINK, nvlink_busbw_gbps, 0.01, 10000);
    GET_D(O_EFF, gemm_eff, 0.01, 1);
#undef GET_L
#undef GET_D
    if (cli_has(ctx, O_SEED)) {
        const char *s = cli_get(ctx, O_SEED);
        char *end;
        unsigned long long seed = strtoull(s, &end, 0);
        if (!*s || *end || *s == '-') {
            rc = cli_usage_error(ctx, "--seed: '%s' is not a non-negative whole number", s);
            goto out;
        }
        c.seed = seed;
    }
    if (cli_has(ctx, O_GZIP) && cli_has(ctx, O_ZSTD)) {
        rc = cli_usage_error(ctx, "--gzip and --zstd exclude each other");
        goto out;
    }
    c.compress = cli_has(ctx, O_GZIP) ? SYN_GZIP : cli_has(ctx, O_ZSTD) ? SYN_ZSTD : SYN_PLAIN;
    c.force = cli_has(ctx, O_FORCE);
    const char *inj[64];
    size_t n_inj = cli_get_all(ctx, O_INJECT, inj, CP_ARRAY_LEN(inj));
    if (n_inj > CP_ARRAY_LEN(inj)) {
        rc = cli_usage_error(ctx, "--inject given more than %zu times", CP_ARRAY_LEN(inj));
        goto out;
    }
    cp_error err;
    cp_error_clear(&err);
    for (size_t i = 0; i < n_inj; i++)
        if (syn_parse_inject(&c, inj[i], &err) < 0) {
            rc = cli_usage_error(ctx, "%s", err.msg);
            goto out;
        }
    if (syn_config_check(&c, &err) < 0) {
        rc = cli_usage_error(ctx, "%s", err.msg);
        goto out;
    }
    if (c.ckpt_s > 0 && c.ckpt_every > c.steps)
        cp_log_warn("synth: --inject sync-checkpoint every %d steps, but the job has %d: no checkpoint is written",
                    c.ckpt_every, c.steps);
    syn_result res;
    if (syn_write_job(&c, dir, &res, &err) < 0) {
        rc = cli_fail(&err);
        goto out;
    }
    printf("wrote %d rank traces to %s: %llu events, %.1f MB of JSON (%.1f MB on disk), "
           "simulated step %.3f ms; ground truth in %s/synth.json\n",
           c.ranks, dir, (unsigned long long)res.events, (double)res.json_bytes / 1e6, (double)res.file_bytes / 1e6,
           (double)res.mean_step_ns / 1e6, dir);
    rc = CLI_EXIT_OK;
out:
    return rc; /* main frees ctx->args */
}
