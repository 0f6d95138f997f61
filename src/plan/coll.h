/* coll.h - the collective cost model: time and bus bandwidth of one NCCL
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
 * src/graph/tuning.cc of NVIDIA/nccl, transcribed as facts into coll.c) and
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
#ifndef CP_PLAN_COLL_H
#define CP_PLAN_COLL_H

#include <stdbool.h>

#include "model/catalog.h"
#include "model/vocab.h"

typedef enum plan_coll_algo {
    PLAN_ALGO_AUTO = -1,
    PLAN_ALGO_RING = 0,
    PLAN_ALGO_TREE,
    PLAN_ALGO_NVLS,
    PLAN_ALGO_NVLSTREE,
    PLAN_ALGO_COLLNET,
    PLAN_ALGO_P2P, /* all-to-all and send/recv: NCCL runs them as point-to-point */
    PLAN_ALGO_N
} plan_coll_algo;

typedef enum plan_coll_proto {
    PLAN_PROTO_AUTO = -1,
    PLAN_PROTO_LL = 0,
    PLAN_PROTO_LL128,
    PLAN_PROTO_SIMPLE,
    PLAN_PROTO_N
} plan_coll_proto;

/* Format a message into err (size errsz; both may be NULL/0) and return -1:
 * the plan layer's one way of failing. */
int plan_errf(char *err, int errsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "ring", "tree", "nvls", "nvlstree", "collnet", "p2p"; "auto" for -1. */
const char *plan_coll_algo_name(int algo);
/* Inverse (case-insensitive; "collnetchain"/"collnetdirect"/"sharp" are
 * collnet); -2 when unknown, PLAN_ALGO_AUTO for "auto" or "". */
int plan_coll_algo_parse(const char *s);
const char *plan_coll_proto_name(int proto);
int plan_coll_proto_parse(const char *s);

/* The topology one collective runs on, already reduced to what the model
 * needs (plan_coll_topo_for builds it from the catalog). */
typedef struct plan_coll_topo {
    int ranks;              /* n */
    int per_domain;         /* ranks in one scale-up (NVLink) domain, <= n */
    double intra_gbps;      /* scale-up line rate per GPU per direction (GB/s) */
    double net_gbps;        /* NIC line rate serving this group's ranks in one
                               domain, per direction (GB/s); 0 when n == per_domain */
    double nic_gbps;        /* line rate of the NIC(s) one rank drives alone
                               (all-to-all, send/recv across domains) */
    int arch;               /* PLAN_ARCH_* of the GPUs */
    bool nvswitch;          /* the domain is switched (all-to-all NVLink) */
    bool pcie;              /* no NVLink: GPU traffic crosses PCIe */
    bool sharp;             /* in-network reduction (CollNet/SHARP) is set up */
} plan_coll_topo;

enum { PLAN_ARCH_OTHER = 0, PLAN_ARCH_VOLTA, PLAN_ARCH_AMPERE, PLAN_ARCH_HOPPER, PLAN_ARCH_BLACKWELL };

/* Architecture class of a catalog row (Volta/Ampere/Hopper/Blackwell, or
 * OTHER for Ada, AMD, Intel, TPU). */
int plan_coll_arch(const hw_gpu *gpu);

/* What the user (or the step model) states; 0 / negative = catalog. */
typedef struct plan_coll_query {
    coll_op op;
    double bytes;           /* nccl-tests "size": the whole buffer */
    int nodes;              /* hosts */
    int gpus_per_node;      /* ranks per host */
    const hw_gpu *gpu;
    double nic_gbit_s;      /* per NIC line rate, Gbit/s */
    int nics_per_node;
    double nvlink_gbps;     /* scale-up per GPU per direction, GB/s */
    int algo;               /* plan_coll_algo, PLAN_ALGO_AUTO = NCCL's choice */
    int proto;              /* plan_coll_proto, PLAN_PROTO_AUTO = NCCL's choice */
    bool sharp;             /* CollNet/SHARP available to the tuner */
} plan_coll_query;

void plan_coll_query_init(plan_coll_query *q);

/* Build the topology of a query; returns 0 or -1 with a reason in err. */
int plan_coll_topo_for(const plan_coll_query *q, plan_coll_topo *t, char *err, int errsz);

typedef struct plan_coll_result {
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
} plan_coll_result;

/* The model's constants, sourced in coll.c; exposed so the calibration can
 * report them and tests can check a term at a time. */
typedef struct plan_coll_consts {
    double nvlink_eff;      /* ring busbw / NVLink line rate */
    double pcie_eff;        /* ring busbw / PCIe rate per direction */
    double net_eff;         /* ring busbw / NIC line rate */
    double nvls_eta_hopper; /* NVLS all-reduce algbw / line rate on Hopper */
    double ll128_eff, ll_eff, tree_eff;
    double half_bytes[PLAN_PROTO_N]; /* message size at which a protocol reaches half its bandwidth */
} plan_coll_consts;

const plan_coll_consts *plan_coll_consts_get(void);

/* NCCL's per-step latency of a ring (Simple protocol) over NVLink
 * (inter = false) or the network (true), microseconds. */
double plan_coll_ring_step_us(bool inter);

/* Model one collective on topology t with the algorithm/protocol asked
 * (PLAN_*_AUTO: the tuner's choice). Returns 0, or -1 with err filled when
 * the pair cannot run the op on t (e.g. NVLS on Ampere, CollNet without
 * SHARP, tree for all-gather). */
int plan_coll_model(coll_op op, double bytes, const plan_coll_topo *t, int algo, int proto,
                    plan_coll_result *r, char *err, int errsz);

/* plan_coll_topo_for + plan_coll_model. */
int plan_coll_estimate(const plan_coll_query *q, plan_coll_result *r, char *err, int errsz);

/* Seconds for op on t under the tuner's choice, 0 for n <= 1 or no bytes;
 * the step model's one entry point. */
double plan_coll_time_s(coll_op op, double bytes, const plan_coll_topo *t);

#endif
