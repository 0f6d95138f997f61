/* syn_pp.h - `chainprof synth --pp`: a pipeline-parallel (1F1B or
 * interleaved) plus data-parallel job, written as the op timelines of the
 * OSDI'25 straggler study's open artifact (one Chrome-trace JSON array),
 * with the what-if's exact truth in synth.json.
 *
 * The job is simulated on the dependency model that defines the schedule
 * (syn_pp.c's header); the truth (S, S_t, S_w per DP rank and per stage,
 * M_W, M_S) comes from replaying that same model with durations replaced,
 * never from the analyzer's code.
 *
 * Ownership: syn_pp_config is plain caller-owned data.
 */
#ifndef CP_SYNTH_SYN_PP_H
#define CP_SYNTH_SYN_PP_H

#include "../base/error.h"

#include <stdbool.h>
#include <stdint.h>

#define SYN_PP_MAX_WORKERS 1024

typedef struct syn_pp_config {
    int pp, dp;             /* pipeline stages, data-parallel ranks */
    int microbatches;       /* per step and DP rank */
    int chunks;             /* model chunks per stage: 1 = 1F1B, > 1 = interleaved */
    int steps;
    uint64_t seed;
    int64_t fwd_ns;         /* forward of one microbatch on one chunk of a balanced stage; backward is 2x */
    int64_t p2p_ns;         /* activation / gradient transfer between neighbouring stages */
    int64_t dp_ns;          /* grads-reduce-scatter transfer */
    int64_t opt_ns;         /* optimizer step */
    int64_t ln_ns, emb_ns;  /* layernorm-grads all-reduce, embedding-grads all-reduce (first and last stage) */
    int64_t clip_ns;        /* optimizer-clip-main-grad: the gradient norm's all-reduce over the job */
    /* the Kineto traces (syn_ppk.c) */
    int gpus_per_node;
    int64_t p2p_bytes;      /* one activation / gradient message (bf16) */
    int64_t dp_bytes;       /* grads-reduce-scatter input per rank (bf16) */
    int compress;           /* syn_compress of the rank files (synth.h) */
    bool batched_p2p;       /* each transfer as Megatron's batch_isend_irecv writes it: a coalesced
                             * SendRecv kernel naming no peer */
    /* injections (0 = none) */
    int imb_stage;          /* stage-imbalance: this stage's compute x imb_factor */
    double imb_factor;
    double seq_spread;      /* seqlen-imbalance: per (step, dp rank, microbatch) compute x U[1-a, 1+a] */
    int slow_dp, slow_pp;   /* straggler: worker (dp, pp) compute x slow_factor */
    double slow_factor;
    bool force;
} syn_pp_config;

void syn_pp_default(syn_pp_config *c);

/* --inject for pipeline jobs: stage-imbalance=STAGE[:F], seqlen-imbalance=A,
 * straggler=DP.PP[:F]. Returns 0 or CP_ERR_USAGE naming the bad item. */
int syn_pp_parse_inject(syn_pp_config *c, const char *spec, cp_error *err);
int syn_pp_check(const syn_pp_config *c, cp_error *err);

/* Write DIR/optrace.json (the artifact's format), DIR/synth.json (truth)
 * and DIR/rank-<r>.json, the same schedule as one Kineto trace per rank.
 * *n_ops gets the ops written, *t_ns the mean step time. */
int syn_pp_write(const syn_pp_config *c, const char *dir, uint64_t *n_ops, double *t_ns, cp_error *err);

#endif
