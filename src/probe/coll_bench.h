/* coll_bench.h - the measuring half of the coll probe, framework-free.
 *
 * coll_sweep runs every selected collective over a message-size sweep on a
 * comm (local or MPI) in the nccl-tests way: for each size, `warmup` untimed
 * calls, then `iters` timed calls between two barriers; the time per call is
 * averaged over the ranks (nccl-tests' default -a 1); then one more call on
 * freshly filled buffers is checked element by element and the mismatches
 * summed over the ranks (#wrong). Out-of-place and in-place runs are separate
 * rows. Bandwidths follow busbw.h.
 *
 * coll_p2p_matrix measures one-way bandwidth of every rank pair in turn
 * (while the others wait), so a slow link or host stands out; p2p_slow.h
 * decides which.
 *
 * Ownership: results are malloc'd arrays owned by the caller (free()).
 */
#ifndef CP_PROBE_COLL_BENCH_H
#define CP_PROBE_COLL_BENCH_H

#include "../comm/comm.h"
#include "busbw.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coll_cfg {
    size_t min_bytes, max_bytes; /* sweep bounds (per-op byte count, busbw.h) */
    double factor;               /* size multiplier, > 1 */
    int warmup, iters;
    unsigned ops_mask;           /* bit (1u << coll_op); 0 = every op */
    bool check;                  /* run the correctness check */
    size_t p2p_bytes;            /* point-to-point message size */
    int p2p_iters;
} coll_cfg;

typedef struct coll_result {
    coll_op op;
    size_t size_bytes, count;    /* count: float32 elements, nccl-tests "count" */
    bool in_place;
    double time_us, algbw_gbps, busbw_gbps;
    int64_t wrong;               /* -1: not checked */
} coll_result;

/* Fill defaults for zero fields (quick: a short sweep). */
void coll_cfg_defaults(coll_cfg *cfg, bool quick);

/* Runs on every rank (collective call). out and n_out get the rows (same on
 * every rank). Ops that cannot run on this rank count (send-recv alone) are
 * left out. */
int coll_sweep(comm *c, const coll_cfg *cfg, coll_result **out, size_t *n_out, cp_error *err);

/* bw_gbps[size*size] (caller-allocated) gets bw[i*n+j] = one-way GB/s from
 * rank i to rank j, NaN on the diagonal; same on every rank. */
int coll_p2p_matrix(comm *c, const coll_cfg *cfg, double *bw_gbps, cp_error *err);

/* Test vector value of rank r at element i (small integers: exact in float). */
float coll_value(int rank, size_t i);

#endif
