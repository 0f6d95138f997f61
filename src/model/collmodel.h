/* collmodel.h - the collective cost model: time and bus bandwidth of one NCCL
 * collective for a message size, a topology and an algorithm/protocol.
 *
 * One module answers "how long should this collective take here?" for
 * `chainprof model --collective`, for every communication term of the
 * training-step model (plan_model: TP, CP, EP, DP/ZeRO, PP traffic) and for
 * `analyze`, which compares each measured collective with what this model
 * expects for its size and scope.
 *
 * The model (docs/METRICS.md "Collective cost model"):
 *   time = latency(algo, proto) + bytes / algbw(algo, proto)
 * with NCCL's own latency constants (base + per-step hardware latency,
 * src/graph/tuning.cc of NVIDIA/nccl, transcribed as facts into collmodel.c) and
 * a bandwidth per algorithm that is the bottleneck of the scale-up link
 * (NVLink per direction x NCCL's achieved fraction, or PCIe) and of the
 * NICs that serve the group's ranks in one scale-up domain:
 *   ring      busbw = min(intra, net)               AR, AG, RS, broadcast
 *   tree      busbw = min(intra, net x k(nodes))    AR; k = 2 on <= 2 nodes
 *   nvls      AR inside one NVSwitch domain (Hopper+): algbw = eta x line
 *   nvlstree  NVLS inside, tree across domains (AR)
 *   collnet   SHARP: intra-domain reduce, one network pass (AR)
 *   p2p       all-to-all and send/recv: each rank's own NIC off-domain
 * Protocols scale the bandwidth (LL 1/2 with NCCL's LL cap, LL128 0.92) and
 * pick the latency row. With no algorithm given the model returns what
 * NCCL's tuner would pick: the fastest enabled (algorithm, protocol) pair.
 *
 * A "domain" is what NCCL calls a node: the GPUs that share one NVLink
 * fabric (an 8-GPU HGX board, or a whole GB200/GB300 NVL72 rack through
 * MNNVL). Hosts of an NVL72 rack are trays of four GPUs; --nodes counts
 * hosts and the model folds them into NVLink domains.
 *
 * Units in names: _bytes, _s / _us, _gbps = GB/s (1e9 bytes/s, nccl-tests
 * convention), nic_gbit_s = Gbit/s line rate.
 *
 * Ownership: plain values; the result's strings are static.
 */
#ifndef CP_MODEL_COLLMODEL_H
#define CP_MODEL_COLLMODEL_H

#include <stdbool.h>

#include "model/catalog.h"
#include "model/vocab.h"

typedef enum collm_algo {
    COLLM_ALGO_AUTO = -1,
    COLLM_ALGO_RING = 0,
    COLLM_ALGO_TREE,
    COLLM_ALGO_NVLS,
    COLLM_ALGO_NVLSTREE,
    COLLM_ALGO_COLLNET,
    COLLM_ALGO_P2P, /* all-to-all and send/recv: NCCL runs them as point-to-point */
    COLLM_ALGO_N
} collm_algo;

typedef enum collm_proto {
    COLLM_PROTO_AUTO = -1,
    COLLM_PROTO_LL = 0,
    COLLM_PROTO_LL128,
    COLLM_PROTO_SIMPLE,
    COLLM_PROTO_N
} collm_proto;

/* "ring", "tree", "nvls", "nvlstree", "collnet", "p2p"; "auto" for -1. */
const char *collm_algo_name(int algo);
/* Inverse (case-insensitive; "collnetchain"/"collnetdirect"/"sharp" are
 * collnet); -2 when unknown, COLLM_ALGO_AUTO for "auto" or "". */
int collm_algo_parse(const char *s);
const char *collm_proto_name(int proto);
int collm_proto_parse(const char *s);

/* The topology one collective runs on, already reduced to what the model
 * needs (collm_topo_for builds it from the catalog). */
typedef struct collm_topo {
    int ranks;              /* n */
    int per_domain;         /* ranks in one scale-up (NVLink) domain, <= n */
    double intra_gbps;      /* scale-up line rate per GPU per direction (GB/s) */
    double net_gbps;        /* NIC line rate serving this group's ranks in one
                               domain, per direction (GB/s); 0 when n == per_domain */
    double nic_gbps;        /* line rate of the NIC(s) one rank drives alone
                               (all-to-all, send/recv across domains) */
    int arch;               /* COLLM_ARCH_* of the GPUs */
    bool nvswitch;          /* the domain is switched (all-to-all NVLink) */
    bool pcie;              /* no NVLink: GPU traffic crosses PCIe */
    bool sharp;             /* in-network reduction (CollNet/SHARP) is set up */
    double gpus_per_nic;    /* ranks sharing one NIC (<= 1: a NIC each; 0: unknown) */
} collm_topo;

enum { COLLM_ARCH_OTHER = 0, COLLM_ARCH_VOLTA, COLLM_ARCH_AMPERE, COLLM_ARCH_HOPPER, COLLM_ARCH_BLACKWELL };

/* Architecture class of a catalog row (Volta/Ampere/Hopper/Blackwell, or
 * OTHER for Ada, AMD, Intel, TPU). */
int collm_arch(const hw_gpu *gpu);

/* What the user (or the step model) states; 0 / negative = catalog. */
typedef struct collm_query {
    coll_op op;
    double bytes;           /* nccl-tests "size": the whole buffer */
    int nodes;              /* hosts */
    int gpus_per_node;      /* ranks per host */
    const hw_gpu *gpu;
    double nic_gbit_s;      /* per NIC line rate, Gbit/s */
    int nics_per_node;
    double nvlink_gbps;     /* scale-up per GPU per direction, GB/s */
    int algo;               /* collm_algo, COLLM_ALGO_AUTO = NCCL's choice */
    int proto;              /* collm_proto, COLLM_PROTO_AUTO = NCCL's choice */
    bool sharp;             /* CollNet/SHARP available to the tuner */
} collm_query;

void collm_query_init(collm_query *q);

/* Build the topology of a query; returns 0 or -1 with a reason in err. */
int collm_topo_for(const collm_query *q, collm_topo *t, char *err, int errsz);

typedef struct collm_result {
    int algo, proto;        /* what was modelled (the tuner's pick under AUTO) */
    double time_s;
    double latency_s;       /* the latency term */
    double bandwidth_s;     /* bytes / algbw: the bandwidth term */
    double algbw_gbps;      /* bytes / time */
    double busbw_gbps;      /* algbw x nccl-tests factor */
    double peak_busbw_gbps; /* the algorithm's large-message busbw (no latency) */
    double intra_busbw_gbps;/* the scale-up bound on busbw */
    double net_busbw_gbps;  /* the network bound on busbw (NaN inside one domain) */
    const char *bound;      /* "nvlink", "pcie", "network", "latency" */
    int domains;            /* scale-up domains spanned */
} collm_result;

/* The model's constants, sourced in collmodel.c; exposed so the calibration can
 * report them and tests can check a term at a time. */
typedef struct collm_consts {
    double nvlink_eff;      /* ring busbw / NVLink line rate */
    double pcie_eff;        /* ring busbw / PCIe rate per direction */
    double net_eff;         /* ring busbw / NIC line rate */
    double nvls_eta_hopper; /* NVLS all-reduce algbw / line rate on Hopper */
    double ll128_eff, ll_eff, tree_eff;
    double half_bytes[COLLM_PROTO_N]; /* message size at which a protocol reaches half its bandwidth */
} collm_consts;

const collm_consts *collm_consts_get(void);

/* NCCL's per-step latency of a ring (Simple protocol) over NVLink
 * (inter = false) or the network (true), microseconds. */
double collm_ring_step_us(bool inter);

/* Model one collective on topology t with the algorithm/protocol asked
 * (PLAN_*_AUTO: the tuner's choice). Returns 0, or -1 with err filled when
 * the pair cannot run the op on t (e.g. NVLS on Ampere, CollNet without
 * SHARP, tree for all-gather). */
int collm_model(coll_op op, double bytes, const collm_topo *t, int algo, int proto,
                    collm_result *r, char *err, int errsz);

/* collm_topo_for + collm_model. */
int collm_estimate(const collm_query *q, collm_result *r, char *err, int errsz);

/* Seconds for op on t under the tuner's choice, 0 for n <= 1 or no bytes;
 * the step model's one entry point. */
double collm_time_s(coll_op op, double bytes, const collm_topo *t);

#endif
