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
 *   Later analyzers only read them. Two-view analyzers (temporal, overlap
 *   into temporal's results, idle, kernels, launch, queue, annotations) run
 *   through one driver, an_run_dual, and leave an an_dual_result; read one
 *   rank's typed result with an_dual_get(ctx, AN_<name>, rank, exact).
 *   Steps leave an_steps_result. The findings engine reuses all of these
 *   (step boundaries, breakdowns) instead of recomputing them.
 * - The last analyzer, `exact`, appends every rank's "exact" report object
 *   (built detached) so the corrected numbers follow the HTA-compatible
 *   ones; keep it the last row of analyzers.def.
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
enum { AN_KT_NONE = 0, AN_KT_COMPUTE = 1, AN_KT_COMM = 2, AN_KT_MEMORY = 4, AN_KT_OTHER = 8 };
#define AN_KT_ALL (AN_KT_COMPUTE | AN_KT_COMM | AN_KT_MEMORY) /* the types the kernel breakdown reports */
/* Every GPU event of a view: OTHER (HTA since 2025: sync events, Stream
 * Wait Event, MTIA pe_exe, ...) is busy time for the temporal breakdown but
 * in no type of the kernel breakdown. Only the HTA view has OTHER events. */
#define AN_KT_ANY (AN_KT_ALL | AN_KT_OTHER)

/* One rank seen one way. Arrays are indexed by the rank-local event index
 * i = event - base. */
typedef struct an_view {
    bool exact;            /* false: HTA-compatible; true: corrected */
    size_t base, n;        /* events [base, base + n) of the timeline */
    int64_t *t0, *t1;      /* start/end in ns (HTA: rounded to whole us when the file is fractional);
                            * read-only: t0 may be the timeline's own ts_ns (t0_borrowed) */
    bool t0_borrowed;
    bool t1_borrowed;      /* the exact view shares the HTA view's t1 when HTA did not round */
    int64_t *stream;       /* >= 0: GPU work on that stream in this view; -1 otherwise */
    uint32_t *mult;        /* times the event appears in the view (0: filtered out; HTA may duplicate) */
    uint8_t *ktype;        /* AN_KT_* of GPU work, AN_KT_NONE otherwise */
    int32_t *partner;      /* rank-local index of the CPU call that launched this GPU work, -1 none
                            * (32 bits: a timeline holds at most INT32_MAX events) */
    uint8_t *kernel_cat;   /* HTA view only (NULL in the exact view): 1 when the event's category is
                            * one of HTA's kernel categories (kernel, gpu_memcpy, gpu_memset, MTIA
                            * mtia_ccp_events), the events its idle breakdown looks at (no cuda_sync) */
    uint32_t *gpu;         /* GPU work (local indices, repeated per mult) sorted by (t0, t1, index) */
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
    rep_node **exact_nodes;/* per rank "exact" objects, detached until the `exact` analyzer appends them */
    uint8_t *name_flags;   /* AN_NAME_* by string id, so per-event name tests are one load */
    size_t n_names;
} an_views_result;

/* AN_NAME_LAUNCH: runtime calls that enqueue GPU work (HTA's runtime launch
 * events: CUDA, cuLaunchKernel*, HIP, MTIA); AN_NAME_HTA_LAUNCH_STATS: the
 * subset HTA's launch statistics join (cudaLaunchKernel, cudaLaunchKernelExC,
 * cudaMemcpyAsync, cudaMemsetAsync, MTIA runFunction: no HIP, no driver API). */
enum { AN_NAME_LAUNCH = 1, AN_NAME_SYNC = 2, AN_NAME_STEP = 4, AN_NAME_HTA_LAUNCH_STATS = 8,
       AN_NAME_HTA_KCAT = 16 /* a category name an_hta_kernel_cat accepts */,
       AN_NAME_HTA_KLAUNCH = 32 /* HTA's kernel launch pattern: cuda*LaunchKernel*, cuLaunchKernel*, runFunction* */,
       AN_NAME_ATEN = 64 /* aten::* */ };
/* Whether string id `name` has flag AN_NAME_* (false before the view analyzer ran). */
bool an_name_is(const an_ctx *ctx, uint32_t name, unsigned flag);

/* Per-name aggregation (kernels, annotations). */
typedef struct an_group {
    uint32_t name;          /* string id */
    int64_t count;
    double sum_ns, sumsq;   /* of durations */
    int64_t min_ns, max_ns;
} an_group;

/* ---- two-view analyzers (an_dual.c) ----
 * temporal (an_temporal), idle (an_idle_rank), kernels (an_kernels_rank),
 * launch (an_launch_rank), queue (an_queue_rank), annotations
 * (an_annot_rank) leave an an_dual_result: one per-rank result per view. */
typedef struct an_dual_ops {
    size_t elem;            /* bytes of one per-rank result */
    void (*compute)(const an_ctx *ctx, const an_view *v, void *out);  /* any thread */
    void (*emit)(an_ctx *ctx, rep_node *parent, const void *out);     /* calling thread */
    void (*free_rank)(void *out);                                     /* NULL: nothing owned */
} an_dual_ops;

typedef struct an_dual_result {
    void (*free)(void *self);
    size_t n_ranks;
    void *hta, *exact;      /* n_ranks results each */
    const an_dual_ops *ops;
} an_dual_result;

/* Compute both views of every rank (in parallel), emit them, and store the
 * an_dual_result in ctx->results[id]. */
int an_run_dual(an_ctx *ctx, an_id id, const an_dual_ops *ops);
/* Rank r's result of analyzer id in one view (NULL if absent); cast it to
 * the analyzer's per-rank type. */
void *an_dual_get(const an_ctx *ctx, an_id id, size_t r, bool exact);

/* ---- profiler steps ---- */
typedef struct an_step {
    int64_t id;            /* N of ProfilerStep#N */
    int64_t start_ns, dur_ns;
    size_t ev;             /* the ProfilerStep#N event (the critical path's sink) */
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
    an_launch *rows;        /* the rows the report lists, by correlation id: every launch with
                             * an_opts.launch_table, else the first AN_LAUNCH_ROWS outliers (a
                             * 1 GB trace joins millions of launches; keeping them all cost
                             * 32 bytes each per view for nothing) */
    size_t n_rows;
    size_t n;               /* launches joined to GPU work */
    double sum_cpu_ns, sum_gpu_ns, sum_delay_ns; /* integer sums, exact below 2^53 in any order */
    int64_t short_kernels;  /* gpu < cpu <= 50 us */
    int64_t runtime_outliers;   /* cpu > 50 us */
    int64_t delay_outliers;     /* delay > 100 us */
} an_launch_rank;

#define AN_RUNTIME_CUTOFF_NS 50000
#define AN_DELAY_CUTOFF_NS 100000

/* Names of the runtime/driver calls that launch GPU work (HTA's list). */
bool an_is_launch_name(const char *name);
bool an_is_hta_launch_stats_name(const char *name);

/* ---- queue length ---- */
/* pandas describe() of samples: count, mean, sample std (NaN below 2),
 * min, quartiles by linear interpolation, max. */
typedef struct an_stats {
    size_t count;
    double mean, std, min, p25, p50, p75, max;
} an_stats;
/* Fill s from n > 0 samples already sorted ascending. */
void an_describe_sorted(const double *sorted, size_t n, an_stats *s);
/* Append the cells count, mean, std, min, p25, p50, p75, max to a row. */
void an_stats_cells(an_ctx *ctx, rep_node *row, const an_stats *s);

typedef struct an_queue_stream {
    int64_t stream;
    int32_t device;         /* the stream's GPU device */
    an_stats len;           /* samples: one per enqueue and per dequeue */
    bool full;              /* some sample reached the full length */
    int64_t full_ns;        /* time from samples at the full length to the next sample */
} an_queue_stream;

typedef struct an_queue_rank {
    an_queue_stream *streams;
    size_t n;
    int64_t max_length;     /* the length counted as full */
    int64_t span_ns;        /* last event start - first event start (HTA's trace duration) */
} an_queue_rank;

#define AN_QUEUE_MAX_DEFAULT 1024 /* CUDA's launch queue per stream (HTA CUDA_MAX_LAUNCH_QUEUE_PER_STREAM) */

/* ---- counter tracks (HTA generate_trace_with_counters) ----
 * A step function per track: each point's value holds until the track's
 * next point. an_queue_series: "Queue Length" per stream, a point per
 * enqueue and per dequeue (an_queue.c's definition); an_membw_series: per
 * memory kind ("Memcpy DtoH", ..., "Memset"), a point per copy start and
 * end with the kind's summed bandwidth in GB/s (an_membw.c's). Both return
 * the number of tracks; free with an_counter_tracks_free. */
typedef struct an_counter_pt {
    int64_t t_ns;
    double value;
} an_counter_pt;

typedef struct an_counter_track {
    const char *name;       /* static: the counter's name (HTA's) */
    const char *arg;        /* static: the args key HTA writes the value under */
    int64_t stream;         /* queue length: the stream; -1 for memory kinds */
    int32_t device;         /* the GPU device of the track's events */
    an_counter_pt *pts;
    size_t n;
    bool owns_pts;          /* tracks of one call may share one block: the first owns it */
} an_counter_track;

size_t an_queue_series(const an_ctx *ctx, const an_view *v, an_counter_track **out);
size_t an_membw_series(const an_ctx *ctx, const an_view *v, an_counter_track **out);
void an_counter_tracks_free(an_counter_track *t, size_t n);
/* Both, queue tracks first (an_counters.c): what the Perfetto overlay writes. */
size_t an_counter_tracks_of(const an_ctx *ctx, const an_view *v, an_counter_track **out);

/* ---- frequent kernel sequences (an_kseq.c): the overlay's marks ----
 * The exact view's top_k patterns of a rank (--kernel-seq-top) and, per
 * event of the rank, the pattern whose root's subtree holds it: the Perfetto
 * overlay writes them as args "Patterns" {pattern: count} (HTA's overlaid
 * trace). */
typedef struct an_kseq_mark_set {
    size_t base, n_ev;          /* the rank's events [base, base + n_ev) of the timeline */
    const int32_t *ev_row;      /* per event: its pattern (< n_rows), -1 none */
    size_t n_rows;
    const char **pattern;       /* n_rows each (allocated: an_kseq_marks_free) */
    int64_t *count;
} an_kseq_mark_set;
/* False when --kernel-seq was not given or rank r has no pattern. */
bool an_kseq_marks(const an_ctx *ctx, size_t r, an_kseq_mark_set *out);
void an_kseq_marks_free(an_kseq_mark_set *m);

/* ---- allocator memory (an_memory.c) ---- */
typedef struct an_memory_result {
    void (*free)(void *self);
    size_t n_ranks;
    void *ranks;            /* per rank: devices with peaks, holders and series (private to an_memory.c) */
} an_memory_result;

typedef struct an_memory_peak {
    int32_t device;
    int64_t peak_reserved_bytes, peak_allocated_bytes;
    const char *top_op;         /* the op holding the most at the allocated peak; NULL none */
    int64_t top_op_bytes;
} an_memory_peak;
/* Rank r's CUDA device with the largest peak reserved memory (the OOM
 * findings read it); false when the rank has no CUDA [memory] events. */
bool an_memory_peak_of(const an_ctx *ctx, size_t r, an_memory_peak *out);
#define AN_MEM_NEAR_FRAC 0.90     /* MEM_NEAR_CAPACITY: peak reserved / device memory, medium */
#define AN_MEM_CRITICAL_FRAC 0.97 /* ... high */

/* ---- user annotations ---- */
typedef struct an_annot_rank {
    an_group *cpu, *gpu;    /* by name, sorted by descending total */
    size_t n_cpu, n_gpu;
    an_group *kernels;      /* GPU kernels attributed to their innermost GPU annotation (count only) */
    size_t n_kernels_groups;
    int64_t gpu_kernels, unattributed;
    struct an_annot_kernel { size_t i; uint32_t annotation; } *rows; /* with an_opts.launch_table: every
                            * attributed GPU event (timeline index) and its innermost annotation */
    size_t n_rows;
    /* HTA's folding of cpu[] / gpu[] (an_opts.annot_top, annot_keep): folded
     * names become one last group named UINT32_MAX ("others"); its_sums
     * describes the folded names' totals (count = names), which the HTA view
     * reports as HTA recomputes them */
    bool cpu_folded, gpu_folded;
    an_group cpu_others_sums, gpu_others_sums;
    bool exact;             /* computed on the exact view */
} an_annot_rank;

#define AN_ANNOT_TOP_DEFAULT 1000 /* HTA get_gpu_user_annotation_breakdown num_kernels */

/* Kernel wait threshold: HTA's consecutive_kernel_delay default (30 us). */
#define AN_KERNEL_WAIT_NS 30000

/* (correlation id, rank-local index) pairs: sort, then find the run of an id. */
typedef struct an_corr_idx {
    int64_t corr;
    size_t idx;
} an_corr_idx;
void an_corr_sort(an_corr_idx *v, size_t n);
/* First position with corr >= key in a sorted array. */
size_t an_corr_lower(const an_corr_idx *v, size_t n, int64_t key);

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
/* The HTA kernel type of a GPU event name, at HTA's current rules
 * (hta/common/types.py grouping patterns): COMMUNICATION (nccl*, hip*,
 * hccl*, *ncclKernel*), MEMORY (Memcpy*, Memset*, hipMemcpy*, hipMemset*,
 * dma*), COMPUTATION unless the name is a sync, wait, launch or device
 * bookkeeping event (*Sync*, Stream Wait Event, pe_exe*, ...), else OTHER. */
int an_hta_ktype(const char *name);
/* The nearest double to ns / 1000 (ties to even): HTA's float64 reading of
 * a decimal microsecond value that is exactly `ns` nanoseconds. */
double an_hta_us_double(int64_t ns);
/* Whether HTA's dataframe has event ev (a duration, not the Trace span),
 * and its stream column (-1: a CPU event), before any step filter. */
bool an_hta_row(const tl_timeline *tl, size_t ev);
int64_t an_hta_stream(const tl_timeline *tl, size_t ev);
/* HTA's shorten_name: a kernel or op name without its template and call
 * arguments and return type ("void at::native::(anon)::k<T>(args)" ->
 * "at::native::::k"); memory events and names without '<' or '(' as they
 * are. Writes into buf (truncated to size) and returns it. */
const char *an_hta_short_name(const char *name, char *buf, size_t size);
/* Whether an event's raw category is one HTA's idle breakdown counts. */
bool an_hta_kernel_cat(const char *cat);
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
/* qsort comparator of doubles, ascending. */
int an_cmp_double(const void *pa, const void *pb);
/* Group n (name, duration) pairs by name; returns the number of groups,
 * sorted by descending sum then name id. Caller frees *out. */
size_t an_group_by_name(const uint32_t *names, const int64_t *durs, size_t n, an_group **out);
double an_group_std(const an_group *g);
/* HTA's "others" folding (_aggr_gpu_kernel_time) of ng groups sorted by
 * descending sum: with more than top groups, group k is folded when its
 * cumulative sum exceeds the ratio quantile of the cumulative sums (pandas
 * linear quantile) or k >= top, unless keep[k] (keep may be NULL: HTA's
 * allowlist). Writes other[0..ng) and returns how many are folded. */
size_t an_fold_others(const an_group *g, size_t ng, size_t top, double ratio, const bool *keep, bool *other);
/* The folded groups (other[k]) as one: pooled, their events together (name
 * UINT32_MAX); totals, their per-name totals as the samples HTA recomputes
 * "others" from (count = names). */
void an_fold_merge(const an_group *g, size_t ng, const bool *other, an_group *pooled, an_group *totals);

/* An event of a view as a record sorted by (grp, start, longest first,
 * index): what an_aten's wrapping-op search and an_kseq's call nesting walk
 * (grp: a track, or 0 for all). ndur = t0 - t1. */
typedef struct an_ev_rec {
    int64_t grp, t0, ndur;
    size_t i;
} an_ev_rec;
void an_ev_rec_sort(an_ev_rec *v, size_t n);

/* Views of rank r (NULL if the view analyzer did not run). */
const an_rank_views *an_views(const an_ctx *ctx, size_t r);
/* The per-rank report object of a view: rank_nodes[r] itself for HTA; for
 * the exact view an "exact" object that the last analyzer (`exact`) appends
 * to the rank, so that the corrected numbers follow the HTA-compatible ones. */
rep_node *an_view_node(an_ctx *ctx, size_t r, bool exact);
/* An event's name. */
static inline const char *an_name(const an_ctx *ctx, const an_view *v, size_t i)
{
    return tl_str(ctx->tl, ctx->tl->name[v->base + i]);
}

#endif
