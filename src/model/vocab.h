/* vocab.h - the vocabulary every module must agree on, defined once:
 * the layer keys of the chain, the collective operations with nccl-tests'
 * bus bandwidth factors, and the bandwidth units (the hardware catalog is
 * its own file, catalog.h).
 *
 * Why one place: the analyzer, the probe, the planner, the renderers and
 * synth all print layer keys and collective names into JSON that users
 * join on, and the analyzer and the probe both compute busbw; two copies
 * of a factor or a key drift apart silently.
 *
 * Units (docs/METRICS.md): in code and JSON, `_gbps` is GB/s (1e9 bytes/s,
 * the nccl-tests habit) and `_gbit_s` is Gbit/s (1e9 bits/s, NIC line
 * rates, perftest). Cross between them only with the two helpers below.
 * Command-line options keep their documented names (`--nic-gbps` takes
 * Gbit/s, as its help says).
 *
 * How to add a layer or a collective: one row in layers.def or
 * collectives.def (each says what else to touch).
 */
#ifndef CP_MODEL_VOCAB_H
#define CP_MODEL_VOCAB_H

#include <stddef.h>

/* ---- layers ---- */

typedef enum cp_layer {
#define X(e, key, title) CP_LAYER_##e,
#include "layers.def"
#undef X
    CP_LAYER__COUNT
} cp_layer;

/* "host", "compute", ...; NULL out of range. */
const char *cp_layer_key(cp_layer l);
/* "framework / host", ...; NULL out of range. */
const char *cp_layer_title(cp_layer l);
/* Layer by key (exact), -1 when unknown. */
int cp_layer_parse(const char *key);

/* ---- collectives ---- */

typedef enum coll_op {
#define X(e, name, factor) COLL_##e,
#include "collectives.def"
#undef X
    COLL_N_OPS,              /* the named operations: loops run to here */
    COLL_OTHER = COLL_N_OPS  /* a communication kernel of no named op ("other", factor 1) */
} coll_op;

/* "all_reduce", "all_gather", ..., "other" for COLL_OTHER; "unknown" out of
 * range. */
const char *coll_op_name(coll_op op);
/* An op by its name, ignoring case and '_', '-', ' ' ("allreduce",
 * "All-Reduce", "sendrecv" as nccl-tests spells its binary); -1 unknown. */
int coll_op_parse(const char *s);
/* The op a free-form collective name stands for: PyTorch's "Collective
 * name" ("_allgather_base", "reduce_scatter_tensor_coalesced",
 * "all_to_allv", "send"), NCCL kernel names
 * ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"); COLL_OTHER when none. */
coll_op coll_op_classify(const char *s);

/* busbw / algbw for op on n ranks (collectives.def; n == 1 gives 0 for the
 * ring forms, as nccl-tests prints; COLL_OTHER 1; NaN for n < 1). */
double coll_busbw_factor(coll_op op, int n);
/* The byte count nccl-tests reports for op with `count` elements of
 * elem_size bytes in its "size" column: the whole buffer in every case
 * (all-gather: the gathered output; reduce-scatter: the full input;
 * all-to-all: one rank's whole send buffer). */
double coll_bytes(coll_op op, size_t count, size_t elem_size);
/* algbw = bytes / time_s / 1e9 (GB/s); NaN when time_s <= 0. */
double coll_algbw_gbps(double bytes, double time_s);
/* busbw = algbw x coll_busbw_factor(op, n), GB/s. */
double coll_busbw_gbps(coll_op op, int n, double bytes, double time_s);

/* ---- bandwidth units ---- */

/* Gbit/s (line rates) -> GB/s (what busbw is compared with), and back. */
static inline double cp_gbit_s_to_gbps(double gbit_s) { return gbit_s / 8.0; }
static inline double cp_gbps_to_gbit_s(double gbps) { return gbps * 8.0; }

#endif
