/* syn_pp_int.h - what the pipeline job's schedule model (syn_pp.c) and its
 * Kineto writer (syn_ppk.c) share: the ops of every worker in execution
 * order, with the cross-stage dependency of each. Internal to src/synth.
 *
 * Ownership: a pp_job owns its ops and orders; it borrows the config.
 */
#ifndef CP_SYNTH_SYN_PP_INT_H
#define CP_SYNTH_SYN_PP_INT_H

#include "syn_pp.h"
#include "synth.h"

#include <stddef.h>
#include <stdint.h>

enum { PK_F, PK_B, PK_RS, PK_OPT };
/* op types of the truth; the p2p edges are types of their own */
enum { PT_F, PT_B, PT_OPT, PT_RS, PT_FP2P, PT_BP2P, PT_N };

typedef struct pop {
    uint8_t kind;
    int16_t chunk;
    int32_t mb, step;
    uint32_t w;            /* d * P + p */
    int32_t dep;           /* op this one waits for across stages, -1 */
    int64_t dur_ns;        /* traced: compute duration or transfer */
} pop;

typedef struct pp_job {
    const syn_pp_config *c;
    int P, D, M, V, S;
    size_t n_w;
    pop *ops;
    size_t n_ops;
    uint32_t *order;       /* per worker its ops in execution order: ord_start[w] .. ord_start[w+1] */
    size_t *ord_start;
    int64_t ideal[PT_N];
} pp_job;

/* The Kineto traces shift step s by (s + 1) x this on top of
 * SYN_ORIGIN_NS: the host's turnaround between steps (syn_ppk.c). */
#define SYN_PPK_STEP_GAP_NS 100000

/* ".gz", ".zst" or "" for the rank files */
static inline const char *syn_pp_ext(const syn_pp_config *c)
{
    return c->compress == SYN_GZIP ? ".gz" : c->compress == SYN_ZSTD ? ".zst" : "";
}

/* Write DIR/rank-<r>.json[.gz|.zst], one Kineto trace per global rank r = stage * dp
 * + dp rank (Megatron's order with TP 1: the DP groups are consecutive
 * ranks), from the schedule replayed into st/en (ns per op). */
int syn_ppk_write(const pp_job *j, const int64_t *st, const int64_t *en, const char *dir, cp_error *err);

#endif
