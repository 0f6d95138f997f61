/* an_results.h - typed results the trace analyzers leave in ctx->results,
 * and the per-rank "views" every one of them reads.
 *
 * Design
 * - Users compare our numbers with Meta's Holistic Trace Analysis (HTA), so
 *   every analysis is computed twice from the same code: once on the
 *   HTA-compatible view (HTA's preprocessing replayed: events rounded to
 *   whole microseconds when the file has fractional timestamps, the last
 *   profiler step dropped when there are two or more, "GPU kernel" meaning
 *   any event with a stream argument) and once on the exact view (exact
 *   nanoseconds, every event, only real GPU work: no sync events, no
 *   annotations). A view is a set of per-event columns over one rank's
 *   contiguous event range, so an analyzer is written once against an_view
 *   and a few flags (an_view.exact) select the corrected definitions.
 * - The `view` analyzer (first row of analyzers.def) builds both views for
 *   every rank, in parallel over ranks, and owns them (an_views_result).
 *   Later analyzers only read them; their own typed results follow below so
 *   that the findings engine can reuse step boundaries and breakdowns.
 * - Every results struct starts with `void (*free)(void *)` (see analysis.h).
 *
 * Ownership: everything hangs off ctx->results and is released by
 * an_ctx_free through the structs' free functions.
 */
#ifndef CP_ANALYSIS_AN_RESULTS_H
#define CP_ANALYSIS_AN_RESULTS_H

#include "analysis.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kernel types, as bits so that overlap combinations are masks. The order
 * is HTA's (COMPUTATION, COMMUNICATION, MEMORY): labels of combinations
 * list types in this order ("COMPUTATION overlapping MEMORY"). */
enum { AN_KT_NONE = 0, AN_KT_COMPUTE = 1, AN_KT_COMM = 2, AN_KT_MEMORY = 4 };
#define AN_KT_ALL (AN_KT_COMPUTE | AN_KT_COMM | AN_KT_MEMORY)

/* One rank seen one way. Arrays are indexed by the rank-local event index
 * i = event - base. */
typedef struct an_view {
    bool exact;            /* false: HTA-compatible; true: corrected */
    size_t base, n;        /* events [base, base + n) of the timeline */
    int64_t *t0, *t1;      /* start/end in ns (HTA: rounded to whole us when the file is fractional) */
    int64_t *stream;       /* >= 0: GPU work on that stream in this view; -1 otherwise */
    uint32_t *mult;        /* times the event appears in the view (0: filtered out; HTA may duplicate) */
    uint8_t *ktype;        /* AN_KT_* of GPU work, AN_KT_NONE otherwise */
    int64_t *partner;      /* rank-local index of the CPU call that launched this GPU work, -1 none */
    size_t *gpu;           /* GPU work (local indices, repeated per mult) sorted by (t0, t1, index) */
    size_t n_gpu;
    /* preprocessing facts (HTA view), reported so users see why numbers differ */
    bool rounded;          /* timestamps were rounded to whole us (start up, end down) */
    bool dropped_last_step;/* events at or after the last ProfilerStep start were dropped */
    int64_t last_step_start_ns;
} an_view;

typedef struct an_rank_views {
    an_view hta, exact;
} an_rank_views;

typedef struct an_views_result {
    void (*free)(void *self);
    size_t n_ranks;
    an_rank_views *ranks;
    int n_step_names;      /* distinct ProfilerStep#N names over all ranks (HTA's test for the drop) */
} an_views_result;

/* Per-name aggregation (kernels, annotations). */
typedef struct an_group {
    uint32_t name;          /* string id */
    int64_t count;
    double sum_ns, sumsq;   /* of durations */
    int64_t min_ns, max_ns;
} an_group;

/* ---- profiler steps ---- */
typedef struct an_step {
    int64_t id;            /* N of ProfilerStep#N */
    int64_t start_ns, dur_ns;
    bool hta_dropped;      /* HTA excludes this step (the last one, when there are >= 2) */
} an_step;

typedef struct an_rank_steps {
    an_step *steps;        /* sorted by start */
    size_t n;
    double mean_ns, p50_ns, p95_ns, max_ns; /* NaN when no steps */
} an_rank_steps;

typedef struct an_steps_result {
    void (*free)(void *self);
    size_t n_ranks;
    an_rank_steps *ranks;
} an_steps_result;

/* ---- temporal breakdown and overlap ---- */
typedef struct an_temporal {
    int64_t kernel_time_ns, idle_ns, compute_ns, noncompute_ns;
    double idle_pct, compute_pct, noncompute_pct; /* NaN when no GPU work */
    int64_t comm_ns, comm_compute_overlap_ns;
    double overlap_pct;    /* NaN when the rank has no communication */
    bool has_gpu;
} an_temporal;

typedef struct an_temporal_result {
    void (*free)(void *self);
    size_t n_ranks;
    an_temporal *hta, *exact;
} an_temporal_result;

/* ---- idle time breakdown ---- */
enum { AN_IDLE_HOST = 0, AN_IDLE_KERNEL = 1, AN_IDLE_OTHER = 2, AN_IDLE__COUNT };
typedef struct an_idle_stream {
    int64_t stream;
    int64_t idle_ns[AN_IDLE__COUNT];
    int64_t total_ns;
} an_idle_stream;

typedef struct an_idle_rank {
    an_idle_stream *streams;
    size_t n;
} an_idle_rank;

typedef struct an_idle_result {
    void (*free)(void *self);
    size_t n_ranks;
    an_idle_rank *hta, *exact;
} an_idle_result;

/* ---- GPU kernel breakdown ---- */
typedef struct an_kernel_row {
    int ktype;              /* AN_KT_COMPUTE / COMM / MEMORY */
    uint32_t name;          /* string id; UINT32_MAX for "others" */
    int64_t count;
    double sum_ns, mean_ns, min_ns, max_ns, std_ns;
} an_kernel_row;

typedef struct an_kernels_rank {
    int64_t mask_ns[AN_KT_ALL + 1]; /* time with exactly this set of types running */
    an_kernel_row *rows;    /* sorted by (type name, kernel name) as HTA sorts */
    size_t n_rows;
} an_kernels_rank;

typedef struct an_kernels_result {
    void (*free)(void *self);
    size_t n_ranks;
    an_kernels_rank *hta, *exact;
} an_kernels_result;

/* Top kernels kept per type; the rest become "others" (HTA's num_kernels
 * and duration_ratio defaults). */
#define AN_TOP_KERNELS 10
#define AN_TOP_RATIO 0.8

/* ---- launch statistics ---- */
typedef struct an_launch {
    int64_t corr;
    int64_t cpu_ns, gpu_ns, delay_ns; /* call duration, GPU duration, GPU start - call end */
} an_launch;

typedef struct an_launch_rank {
    an_launch *rows;        /* by correlation id */
    size_t n;
    int64_t short_kernels;  /* gpu < cpu <= 50 us */
    int64_t runtime_outliers;   /* cpu > 50 us */
    int64_t delay_outliers;     /* delay > 100 us */
} an_launch_rank;

typedef struct an_launch_result {
    void (*free)(void *self);
    size_t n_ranks;
    an_launch_rank *hta, *exact;
} an_launch_result;

#define AN_RUNTIME_CUTOFF_NS 50000
#define AN_DELAY_CUTOFF_NS 100000

/* Names of the runtime/driver calls that launch GPU work (HTA's list). */
bool an_is_launch_name(const char *name);

/* ---- queue length ---- */
typedef struct an_queue_stream {
    int64_t stream;
    size_t count;           /* samples: one per enqueue and per dequeue */
    double mean, std, min, p25, p50, p75, max;
} an_queue_stream;

typedef struct an_queue_rank {
    an_queue_stream *streams;
    size_t n;
} an_queue_rank;

/* ---- user annotations ---- */
typedef struct an_annot_rank {
    an_group *cpu, *gpu;    /* by name, sorted by descending total */
    size_t n_cpu, n_gpu;
    an_group *kernels;      /* GPU kernels attributed to their innermost GPU annotation (count only) */
    size_t n_kernels_groups;
    int64_t gpu_kernels, unattributed;
} an_annot_rank;

/* Kernel wait threshold: HTA's consecutive_kernel_delay default (30 us). */
#define AN_KERNEL_WAIT_NS 30000

/* Per-view computations (exposed for unit tests). */
void an_temporal_compute(const an_view *v, an_temporal *t);
void an_overlap_compute(const an_view *v, an_temporal *t);
void an_idle_compute(const an_view *v, an_idle_rank *out);
void an_kernels_compute(const an_ctx *ctx, const an_view *v, an_kernels_rank *out);
void an_launch_compute(const an_ctx *ctx, const an_view *v, an_launch_rank *out);
void an_queue_compute(const an_ctx *ctx, const an_view *v, an_queue_rank *out);
void an_annotations_compute(const an_ctx *ctx, const an_view *v, an_annot_rank *out);
const char *an_ktype_label(unsigned mask, char *buf, size_t size);

/* ---- shared helpers (an_view.c) ---- */
/* The HTA kernel type of a GPU event name: communication (nccl*, gloo:),
 * memory (Memcpy, Memset, MTIA dma*), else computation. */
int an_hta_ktype(const char *name);
/* Union of the intervals of the view's GPU work whose type is in mask:
 * writes merged [lo, hi) pairs (caller frees *out) and returns their count. */
size_t an_union(const an_view *v, unsigned mask, int64_t **out);
int64_t an_union_len(const int64_t *iv, size_t n);
/* Length of the intersection of two merged interval lists. */
int64_t an_intersect_len(const int64_t *a, size_t na, const int64_t *b, size_t nb);
/* pandas-compatible statistics of n values: sample std (0 when n < 2),
 * quantile by linear interpolation of the sorted values (q in 0..1). */
double an_quantile_sorted(const double *sorted, size_t n, double q);
double an_std(const double *v, size_t n, double mean);
/* Group n (name, duration) pairs by name; returns the number of groups,
 * sorted by descending sum then name id. Caller frees *out. */
size_t an_group_by_name(const uint32_t *names, const int64_t *durs, size_t n, an_group **out);
double an_group_std(const an_group *g);

/* Views of rank r (NULL if the view analyzer did not run). */
const an_rank_views *an_views(const an_ctx *ctx, size_t r);
/* The per-rank report object of a view: rank_nodes[r] itself for HTA, its
 * "exact" child (created on first use) for the exact view. */
rep_node *an_view_node(an_ctx *ctx, size_t r, bool exact);
/* An event's name. */
static inline const char *an_name(const an_ctx *ctx, const an_view *v, size_t i)
{
    return tl_str(ctx->tl, ctx->tl->name[v->base + i]);
}

#endif
