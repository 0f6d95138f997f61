/* busbw.h - collective bandwidth with exactly the nccl-tests conventions.
 *
 * Pure functions, no state: the coll probe and its unit tests share them, and
 * docs/METRICS.md ("Collective bandwidth") states the same formulas.
 *
 *   bytes     what nccl-tests prints as "size" for the op (see coll_bytes)
 *   algbw     bytes / time, in GB/s with GB = 1e9 bytes
 *   busbw     algbw * factor(op, n):
 *               all-reduce                             2(n-1)/n
 *               all-gather, reduce-scatter, all-to-all (n-1)/n
 *               broadcast, reduce, send-recv           1
 */
#ifndef CP_PROBE_BUSBW_H
#define CP_PROBE_BUSBW_H

#include <stddef.h>

typedef enum coll_op {
    COLL_ALL_REDUCE,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_ALL_TO_ALL,
    COLL_BROADCAST,
    COLL_REDUCE,
    COLL_SEND_RECV,
    COLL_N_OPS
} coll_op;

/* "all_reduce", "all_gather", ... (stable JSON names). */
const char *coll_op_name(coll_op op);
/* Parse a name as coll_op_name writes it (also accepts "allreduce" style
 * without the underscore); -1 when unknown. */
int coll_op_parse(const char *s);

/* busbw / algbw for op on n ranks (n >= 1; n == 1 gives 0 for the (n-1)
 * forms, as nccl-tests prints). */
double coll_busbw_factor(coll_op op, int n);

/* The byte count nccl-tests reports for op with `count` elements of
 * elem_size bytes in its "count" column: the whole buffer in every case
 * (all-gather: the gathered output; reduce-scatter: the full input; all-to-all:
 * one rank's whole send buffer). */
double coll_bytes(coll_op op, size_t count, size_t elem_size);

/* bytes / time_s / 1e9; NaN when time_s <= 0. */
double coll_algbw_gbps(double bytes, double time_s);
double coll_busbw_gbps(coll_op op, int n, double bytes, double time_s);

#endif
