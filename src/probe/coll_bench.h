/* coll_bench.h - the measuring half of the coll probe, framework-free.
 *
 * coll_sweep runs every selected collective over a message-size sweep on a
 * comm (local or MPI) in the nccl-tests way: for each size, `warmup` untimed
 * calls, then `iters` timed calls between two barriers; the time per call is
 * averaged over the ranks (nccl-tests' default -a 1). That batch is one
 * round; `rounds` of them give the row its median and spread. Then one more call on
 * freshly filled buffers is checked element by element and the mismatches
 * summed over the ranks (#wrong). Out-of-place and in-place runs are separate
 * rows. Bandwidths follow the nccl-tests conventions of model/vocab.h.
 *
 * Where the buffers live is a coll_engine: NULL means host buffers and the
 * comm's collectives (MPI or local); coll_nccl.h provides device buffers and
 * NCCL. The sweep fills and checks host copies either way: an engine uploads
 * them before the calls and downloads the result for the check, and `wait`
 * ends the timed span (device work is asynchronous).
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
#include "../model/vocab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct coll_cfg {
    size_t min_bytes, max_bytes; /* sweep bounds (per-op byte count, coll_bytes) */
    double factor;               /* size multiplier, > 1 */
    int warmup, iters;
    int rounds;                  /* timed batches of `iters` per row; the row is their median (0 = 1) */
    unsigned ops_mask;           /* bit (1u << coll_op); 0 = every op */
    bool check;                  /* run the correctness check */
    size_t p2p_bytes;            /* point-to-point message size */
    int p2p_iters;
} coll_cfg;

#define COLL_MAX_ROUNDS 100

typedef struct coll_result {
    coll_op op;
    size_t size_bytes, count;    /* count: float32 elements, nccl-tests "count" */
    bool in_place;
    double time_us, algbw_gbps, busbw_gbps; /* of the median batch */
    double round_busbw_gbps[COLL_MAX_ROUNDS]; /* each batch's busbw (its mean time, as nccl-tests) */
    int n_rounds;
    int64_t wrong;               /* -1: not checked */
} coll_result;

/* A buffer back-end (see top). Every callback returns 0 or a negative
 * cp_status. The sweep calls setup once, then per row upload / run... /
 * wait / download, and teardown once (also after a failure). */
typedef struct coll_engine {
    void *self;
    int (*setup)(void *self, size_t max_count, cp_error *err); /* float32 elements per buffer */
    int (*upload)(void *self, const float *send, const float *recv, size_t count, cp_error *err);
    int (*run)(void *self, coll_op op, bool in_place, size_t count, cp_error *err);
    int (*wait)(void *self, cp_error *err);
    int (*download)(void *self, float *recv, size_t count, cp_error *err);
    void (*teardown)(void *self);
    /* in-place reduce-scatter leaves rank r's block at recv + r*block (NCCL)
     * instead of at the start (MPI_IN_PLACE) */
    bool rs_in_place_at_block;
    bool no_in_place_all_to_all; /* no in-place all-to-all rows */
} coll_engine;

/* Fill defaults for zero fields (quick: a short sweep). */
void coll_cfg_defaults(coll_cfg *cfg, bool quick);

/* Runs on every rank (collective call). out and n_out get the rows (same on
 * every rank). Ops that cannot run on this rank count (send-recv alone) are
 * left out. */
int coll_sweep(comm *c, const coll_cfg *cfg, coll_result **out, size_t *n_out, cp_error *err);
/* The same with the buffers of eng (NULL: as coll_sweep). Rows measured
 * before a failure are returned too. */
int coll_sweep_engine(comm *c, const coll_engine *eng, const coll_cfg *cfg, coll_result **out, size_t *n_out,
                      cp_error *err);

/* bw_gbps[size*size] (caller-allocated) gets bw[i*n+j] = one-way GB/s from
 * rank i to rank j, NaN on the diagonal; same on every rank. */
int coll_p2p_matrix(comm *c, const coll_cfg *cfg, double *bw_gbps, cp_error *err);

/* Test vector value of rank r at element i (small integers: exact in float). */
float coll_value(int rank, size_t i);

#endif
