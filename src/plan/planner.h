/* planner.h - search parallel layouts with the performance model.
 *
 * plan_search() enumerates every valid layout of a model on a fixed number of
 * GPUs (TP within the scale-up domain and dividing the heads, PP dividing the
 * layers, CP dividing the sequence, EP dividing the experts and DP*CP, the
 * interleaving degree, micro-batch, recomputation and ZeRO-1 vs FSDP), runs
 * plan_model() on each, drops the ones that do not fit in HBM and keeps the K
 * fastest by tokens/s. Any layout field can be pinned by the caller (> 0 in
 * plan_space, or >= 0 for the enum-like fields), which is how the CLI's
 * explicit flags and the calibration's "stated by the paper" fields work.
 *
 * Ownership: plain structs; the caller provides the output array.
 */
#ifndef CP_PLAN_PLANNER_H
#define CP_PLAN_PLANNER_H

#include "plan/model.h"

typedef struct plan_space {
    int tp, pp, cp, ep, vpp, micro_batch; /* > 0 pinned, 0 searched */
    int etp;                              /* > 0 pinned; 0 = tp (Megatron-Core's default) */
    int zero;                             /* >= 0 pinned (base.fsdp kept), -1 searched over
                                             ZeRO-1 and FSDP2 */
    int recompute;                        /* >= 0 pinned (plan_recompute), -1 searched */
    int sp;                               /* >= 0 pinned, -1 = on whenever tp > 1 */
    int max_micro_batch;                  /* largest searched micro-batch (default 8) */
} plan_space;

typedef struct plan_candidate {
    plan_inputs in;
    plan_result res;
} plan_candidate;

typedef struct plan_search_stats {
    long evaluated;   /* layouts run through the model */
    long invalid;     /* rejected by plan_model (inconsistent) */
    long no_fit;      /* valid but over HBM */
    long kept;        /* fitting layouts */
    char first_invalid[160]; /* why the first rejected layout was rejected, "" if none */
} plan_search_stats;

/* Everything searched (all fields 0 / -1, max micro-batch 8). */
void plan_space_init(plan_space *sp);

/* Search; base carries shape, hardware, job, gpus and global batch (0 =
 * derived per layout as dp*micro_batch*max(1, 4*pp)). Writes up to k best
 * fitting candidates into top (sorted by tokens/s, best first) and returns
 * how many; 0 when nothing fits (then top[0] holds the layout that came
 * closest to fitting, if k > 0 and any layout was valid; check fits). */
int plan_search(const plan_inputs *base, const plan_space *sp, plan_candidate *top, int k,
                plan_search_stats *st);

#endif
