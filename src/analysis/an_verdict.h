/* an_verdict.h - typed results of the verdict analyzers (layers,
 * collectives, stragglers, findings), shared through an_ctx.results.
 *
 * The five-layer attribution (an_layers) is the measured breakdown every
 * later verdict analyzer reads: collectives add the wait/transfer split of
 * communication time, stragglers compare ranks step by step, and the
 * findings rules turn all of it into ranked problems with gains. Keeping the
 * numbers typed here (instead of re-reading report nodes) means a rule can
 * never disagree with the table it cites.
 *
 * Ownership: each result struct is allocated by its analyzer, stored in
 * ctx->results[AN_<name>] and freed by an_ctx_free through its first member.
 */
#ifndef CP_ANALYSIS_AN_VERDICT_H
#define CP_ANALYSIS_AN_VERDICT_H

#include "analysis.h"
#include "../model/vocab.h"

#include <stdbool.h>
#include <stdint.h>

/* The five layers of the chain plus idle (cp_layer) and the collective
 * operations (coll_op) are the model's vocabulary (model/vocab.h). */

/* One step (or the whole trace when it has no profiler steps) of one rank. */
typedef struct an_step_layers {
    int64_t id;                       /* ProfilerStep#N -> N; -1 implicit window */
    int64_t ts_ns, dur_ns;
    int64_t exposed_ns[CP_LAYER__COUNT];  /* sums to dur_ns exactly */
    int64_t hidden_ns[CP_LAYER__COUNT];   /* active but attributed to a higher layer */
    /* detail used by the findings rules (all exposed, i.e. GPU idle or the
     * copy being the only GPU activity) */
    int64_t host_dataloader_ns;       /* exposed host inside data-loader regions */
    int64_t host_launch_ns;           /* exposed host inside runtime launch/sync calls */
    int64_t copy_intra_ns;            /* exposed intra from memcpys (not collectives) */
    int64_t copy_pageable_ns;         /* ... pageable or synchronous ones outside storage regions */
    int64_t copy_in_storage_ns;       /* ... copies while the host is in a checkpoint/IO region */
    int64_t comm_active_ns;           /* union of communication kernels */
    int64_t comm_overlap_ns;          /* communication while a compute kernel runs */
    int64_t comm_wait_ns;             /* wait inside collectives (set by an_collectives) */
    int64_t comm_wait_inter_ns;       /* ... of inter-node collectives */
} an_step_layers;

typedef struct an_rank_layers {
    int32_t rank;
    int32_t node;                     /* node index from the node map */
    bool implicit_step;               /* no ProfilerStep: one window over the rank */
    size_t n_steps;
    an_step_layers *steps;
    an_step_layers total;             /* sums over steps (id = -1) */
    /* the instants whose layer is host (GPU idle, host busy), inside steps:
     * [start, end) ns pairs in time order, adjacent ones merged; for an_hostops */
    int64_t *host_segs;
    size_t n_host_segs;
} an_rank_layers;

typedef struct an_layers_result {
    void (*free)(void *self);
    int gpus_per_node;                /* effective value used for node membership */
    const char *node_source;          /* "hostname", "--gpus-per-node", "device count", "single node" */
    int32_t n_nodes;                  /* distinct nodes among the traced ranks */
    size_t n_ranks;
    an_rank_layers *ranks;            /* in tl->ranks order */
    /* node of every traced rank (hostnames when known), looked up by its
     * global rank number, so a process group's ranks map to nodes without
     * the trace of each member: rank_nums ascending, node_of_rank[i] the
     * node of rank_nums[i]. Sized by the ranks traced, never by the
     * largest rank number (a damaged 2147483647 costs nothing) */
    int32_t *rank_nums, *node_of_rank;
    size_t n_rank_nums;
    /* group size and scope of collectives by their "Process Group Ranks"
     * string id, filled on first use (every kernel of a group shares it) */
    uint32_t pgr_key;                 /* string id of "Process Group Ranks", UINT32_MAX if absent */
    struct an_pgr_info { int32_t size; uint8_t known, inter; } *pgr_info;
    /* string ids of the point-to-point peer args (an_event_p2p_peer),
     * UINT32_MAX if absent */
    uint32_t dst_rank_key, src_rank_key, rank_key, coll_name_key;
    uint8_t *p2p_class;               /* per string id, as a "Collective name": AN_P2P_SEND / _RECV, 3 neither */
} an_layers_result;

/* The host ops the GPU waited for (an_hostops): per op name, the op's self
 * time during exposed-host instants, summed over ranks. */
#define AN_HOSTOPS_ROWS 20            /* rows in the report's host_ops table */
typedef struct an_hostop {
    uint32_t name;                    /* string id in the timeline; UINT32_MAX under mpirun */
    const char *label;                /* the op's name (the timeline's string, or the result's copy) */
    int64_t exposed_ns;               /* GPU idle while this op was innermost, all ranks */
    int64_t calls;                    /* calls that had some of it */
} an_hostop;

typedef struct an_hostops_result {
    void (*free)(void *self);
    size_t n, cap;
    an_hostop *v;                     /* every op with exposed time, most first (ties by name) */
    int64_t step_ns;                  /* step time, all ranks */
    cp_intern names;                  /* under mpirun: the labels of every process's ops */
} an_hostops_result;

/* Host region class of an event name, by the same patterns the sweep uses:
 * AN_HC_STORAGE (checkpoint save/load, known I/O APIs; activation
 * checkpointing is not storage), AN_HC_DATALOADER, else AN_HC_OTHER. */
enum { AN_HC_OTHER = 1, AN_HC_STORAGE, AN_HC_DATALOADER };
int an_host_class_of(const char *name);
/* True for an OS runtime call that does file I/O (open, read, pwrite64,
 * fsync, ...: the names nsys traces); such calls are storage time. */
bool an_is_file_io_call(const char *name);

/* The step of rl with ProfilerStep id `id`, NULL when it has none. */
const an_step_layers *an_step_by_id(const an_rank_layers *rl, int64_t id);

/* The layers of every rank of the job: lr itself in one process; under
 * mpirun a copy with every process's ranks (steps and totals, in rank
 * order, no host segments) exchanged through an_job_gather, NULL on a
 * failed exchange (*rc set). Release with an_layers_job_free. */
an_layers_result *an_layers_job(const an_ctx *ctx, const an_layers_result *lr, int *rc);
void an_layers_job_free(const an_layers_result *lr, an_layers_result *job);

/* Node index of a global rank under the result's node map. */
int32_t an_node_of(const an_layers_result *lr, int32_t rank);

/* The layer of every in-step instant of each rank over the whole trace, as
 * segments (absolute ns, consecutive equal layers merged, no folding: a
 * layer's segments add up to its exposed_ns exactly), for the Perfetto
 * overlay. After an_run_all; out[i] is timeline rank i; free each out[i].v
 * and out. */
typedef struct an_layer_seg {
    int64_t ts_ns, dur_ns;
    cp_layer layer;
} an_layer_seg;
typedef struct an_layer_track {
    an_layer_seg *v;
    size_t n, cap;
} an_layer_track;
an_layer_track *an_layers_timeline(an_ctx *ctx);

/* Ranks of the process group of communication event ev (from its "Process
 * Group Ranks" arg, the rank's distributedInfo groups by "Process Group
 * Name", else the traced world). Fills up to max ranks into out and returns
 * the group size (which may exceed max), 0 when unknown. */
int an_event_group(const an_ctx *ctx, size_t ev, int32_t *out, int max);

/* Point-to-point direction of a kernel (an_collectives pairs the k-th send
 * a->b of a group with the k-th recv on b from a). */
enum { AN_P2P_SEND = 1, AN_P2P_RECV = 2 };
#define AN_P2P_MAX_GROUP 4096

/* The peer of point-to-point event ev: "Dst Rank" (send) / "Src Rank"
 * (recv), the peer's global rank as PyTorch 2.5+ writes it; else, on a
 * send or recv ("Collective name"), "Rank", the peer's rank in the group
 * (what record_param_comms gets for send/recv), through the group's ranks.
 * Returns the peer's global rank, -1 when unknown or not point-to-point;
 * *dir gets AN_P2P_SEND / AN_P2P_RECV, 0 when unknown. */
int32_t an_event_p2p_peer(const an_ctx *ctx, const an_layers_result *lr, size_t ev, int *dir);

/* True when the group of ev spans more than one node. */
bool an_event_inter(const an_ctx *ctx, const an_layers_result *lr, size_t ev);

/* an_event_group's size and an_event_inter together, cached in lr by the
 * event's "Process Group Ranks" string (the hot path of the sweeps). A
 * point-to-point event with a known peer spans its two ranks' nodes only. */
void an_event_scope(const an_ctx *ctx, const an_layers_result *lr, size_t ev, int *group_size, bool *inter);

/* ---- job: what the traces show the job is (an_job.c) ---- */

typedef enum an_job_kind { AN_JOB_UNKNOWN = 0, AN_JOB_TRAINING, AN_JOB_INFERENCE } an_job_kind;
/* CUDA/HIP graphs in the trace: none, only captured (warm-up), replayed */
typedef enum an_graph_phase { AN_GRAPH_NONE = 0, AN_GRAPH_CAPTURE, AN_GRAPH_REPLAY } an_graph_phase;

struct hw_gpu;
struct hw_vendor;

typedef struct an_job_result {
    void (*free)(void *self);
    an_job_kind kind;
    const char *kind_why;             /* static: what decided the kind */
    tl_gpu_vendor vendor;             /* agreed over ranks; UNKNOWN when none or mixed */
    const struct hw_vendor *hw;       /* collective library and fabric name; NULL unknown */
    const struct hw_gpu *gpu;         /* catalog row of the traced GPU, only when its vendor is the trace's */
    const char *gpu_name;             /* as the trace names it; NULL none */
    bool gpu_vendor_mismatch;         /* the name matched a row of another vendor (not used) */
    int32_t world_size;               /* from the traces, -1 unknown */
    int32_t ranks_traced;
    int64_t backward_ops, optimizer_ops, training_markers, dataloader_regions, serving_markers;
    int64_t graph_launches, graph_captures, graph_instantiations;
    an_graph_phase graph_phase;
} an_job_result;

const char *an_job_kind_name(an_job_kind k);
/* The scale-up fabric's name ("NVLink", "xGMI") and the collective
 * library's ("NCCL", "RCCL") for titles and advice; generic words when the
 * vendor is unknown (j may be NULL). */
const char *an_job_scaleup(const an_job_result *j);
const char *an_job_ccl(const an_job_result *j);

/* ---- collectives ---- */

/* busbw / algbw of a traced collective over n ranks: the nccl-tests factor
 * (coll_busbw_factor) when the group is known to have n > 1 ranks; 1 when
 * its size is unknown (n <= 1), so busbw then reads as algbw. */
double an_busbw_factor(coll_op op, int n);

typedef struct an_coll_group {        /* one row of the op x size bucket x scope table */
    coll_op op;
    bool inter;
    int bucket_log2;                  /* bytes in [2^b, 2^(b+1)) */
    int64_t count;
    int64_t median_bytes;
    int64_t total_ns, wait_ns;
    double p50_busbw_gbps, p95_busbw_gbps, p50_algbw_gbps;
    double expected_busbw_gbps;       /* NaN unknown */
} an_coll_group;

/* A collective kernel matched across ranks (an_collectives' (group, k)
 * match): its event and the event of the instance's last-arriving rank,
 * whose start is when the transfer began. */
typedef struct an_coll_member {
    size_t ev, last_ev;
    int32_t peer;                     /* point-to-point: the peer's global rank; -1 a collective */
    uint8_t p2p;                      /* AN_P2P_SEND / AN_P2P_RECV, 0 a collective */
} an_coll_member;


/* One traced collective kernel with its args (an_collectives' record):
 * what the communication matrix spreads over the group's links. */
typedef struct an_coll_kernel {
    size_t ev;
    size_t pos;                       /* its place among the job's records (match order): under
                                       * mpirun each process keeps its own, pos orders them all */
    coll_op op;
    int32_t n;                        /* group size, 1 unknown */
    int64_t bytes;                    /* nccl-tests' size convention */
    int64_t transfer_ns;              /* wait excluded when matched */
    int32_t peer;                     /* point-to-point: the peer's global rank, -1 unknown / a collective */
    uint8_t p2p;                      /* AN_P2P_SEND / AN_P2P_RECV, 0 a collective or unknown direction */
    bool matched;                     /* matched across ranks (a p2p kernel: paired with its peer's) */
} an_coll_kernel;

typedef struct an_collectives_result {
    void (*free)(void *self);
    an_coll_member *members;          /* every matched kernel, sorted by ev */
    size_t n_members;
    an_coll_kernel *kernels;          /* every kernel with args, in (rank, track, time) order */
    size_t n_kernel_recs;
    size_t n_groups;
    an_coll_group *groups;
    double expected_inter_gbps, expected_intra_gbps; /* NaN unknown */
    const char *expected_inter_source, *expected_intra_source;
    int64_t n_kernels, n_matched, n_without_args;
    int64_t n_p2p_matched;            /* send/recv kernels paired (counted in n_matched too) */
    /* time-weighted p50 busbw per scope over all ops (NaN when none), from
     * the kernels whose transfer time is known; a lower bound when the
     * scope has only kernels whose wait could not be split off (members of
     * their group untraced: *_unsplit_ns of kernel time) */
    double inter_busbw_gbps, intra_busbw_gbps;
    bool inter_busbw_lower_bound, intra_busbw_lower_bound;
    int64_t inter_unsplit_ns, intra_unsplit_ns;
    int64_t inter_bytes_total;
} an_collectives_result;

/* Expected busbw (GB/s) of a scope for a catalog GPU (NULL unknown):
 * inter from --nic-gbps (Gbit/s) or the catalog's NIC share per GPU, intra
 * from --nvlink-gbps or the catalog's scale-up (else PCIe) rate. NaN when
 * unknown; *source names where it came from (NULL when unknown). */
struct hw_gpu;
double an_expected_busbw_gbps(const an_ctx *ctx, const struct hw_gpu *gpu, bool inter, const char **source);

/* ---- stragglers ---- */

typedef struct an_straggler {
    int32_t rank;
    size_t n_steps;
    int64_t *steps;                   /* step ids where it was an outlier */
    cp_layer layer;                   /* the layer that makes it slow */
    double slowdown_pct;              /* mean own-time excess over the median, flagged steps */
    int64_t excess_ns;                /* sum over flagged steps of (own - median own) */
} an_straggler;

typedef struct an_stragglers_result {
    void (*free)(void *self);
    double k;                         /* outlier threshold in scaled MADs */
    size_t n;
    an_straggler *v;
} an_stragglers_result;

/* ---- findings ---- */

typedef enum an_severity { AN_SEV_INFO = 0, AN_SEV_LOW, AN_SEV_MEDIUM, AN_SEV_HIGH, AN_SEV_CRITICAL, AN_SEV__COUNT } an_severity;

const char *an_severity_name(an_severity s);
/* Severity by name (case-insensitive), -1 when unknown. */
int an_severity_parse(const char *s);

#define AN_FINDING_MAX_EVIDENCE 8

typedef struct an_finding {
    const char *code;                 /* static rule code, e.g. "NET_INTER_SLOW" */
    cp_layer layer;
    an_severity severity;
    double gain_pct;                  /* step time saved if fixed, % of the amortised step time */
    uint32_t removes;                 /* bit (1u << cp_layer) per layer whose exposed time the fix removes;
                                       * the gain never exceeds that time (set to 1u << layer by
                                       * an_finding_add) */
    double cap_pct;                   /* that time, % (0 when not computed) */
    /* a periodic stall (CKPT_SYNC_STALL): NaN otherwise */
    double per_occurrence_ns;         /* what one occurrence costs now */
    double stays_ns;                  /* ... of which the fix leaves (the checkpoint's snapshot) */
    double interval_steps;            /* steps between occurrences */
    const char *interval_source;      /* "trace", "--ckpt-every", "default" */
    int32_t rank;                     /* the rank concerned, -1 all/none */
    uint32_t order;                   /* insertion order: the last sort key (rule table order) */
    char title[240];
    char assumption[400];
    const char *recommendation;       /* static text */
    int n_evidence;
    char evidence[AN_FINDING_MAX_EVIDENCE][240];
} an_finding;

typedef struct an_findings_result {
    void (*free)(void *self);
    double job_ns;                    /* measured step time (all steps, mean over ranks) */
    double base_ns;                   /* the gains' basis: job_ns with periodic stalls amortised */
    size_t n, cap;
    an_finding *v;                    /* sorted: critical first, then by gain */
} an_findings_result;

/* Append a finding (severity from the gain; NaN gain = unknown, severity
 * info until the caller sets it). Texts are copied or static. */
an_finding *an_finding_add(an_findings_result *out, const char *code, cp_layer layer, double gain_pct,
                           const char *title, const char *recommendation, const char *assumption);
/* Append one evidence line (printf-like) to x; silently capped. */
void an_finding_evidence(an_finding *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a healthy path reaches, as a fraction of the expected busbw: the
 * target the gains of slow-collective findings scale to (trace rules in
 * an_findings.c, nccl-tests in an_rules_bench.c; docs/METRICS.md). */
#define AN_NET_TARGET_FRAC 0.8   /* NCCL over IB/RoCE */
#define AN_INTRA_TARGET_FRAC 0.7 /* NCCL over NVLink/PCIe inside a node */

/* ---- evidence files ---- */

/* an_evidence: the rule book's findings over the evidence files
 * (rulebook.h), merged into the ranked list by an_findings. */
typedef an_findings_result an_evidence_result;

#endif
