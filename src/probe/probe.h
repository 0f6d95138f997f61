/* probe.h - measure this machine layer by layer against its theoretical peak.
 *
 * A probe is one module src/probe/probe_<name>.c that measures one part of
 * the chain (compute, memory, intra-node, network, collectives, storage) and
 * appends result rows through probe_emit(). The registry (probes.def, an
 * X-macro table; no constructor-based registration) lists them in run order.
 * The CLI selects probes by name or by layer, asks each one whether it
 * applies to this machine (applies() says why not, and the reason lands in
 * `skipped[]`), runs it and renders the collected rows as `results[]` of the
 * `chainprof.probe/1` report.
 *
 * Two modes: quick (`chainprof probe` alone: every probe that applies, a few
 * seconds each, so the whole pass stays well under a minute) and full
 * (`chainprof probe LAYER|PROBE...`: the chosen probes with their full sizes
 * and durations, still bounded by --seconds where a probe honours it).
 *
 * How to add a probe:
 *   1. src/probe/probe_<name>.c defining
 *        bool probe_<name>_applies(probe_ctx *ctx, char *why, size_t why_size);
 *        int  probe_<name>_run(probe_ctx *ctx, cp_error *err);
 *      (run returns 0 or a negative cp_status; rows already emitted are kept
 *      even when it fails);
 *   2. one X(name, layer, "summary") row in probes.def;
 *   3. its metrics in docs/METRICS.md (formula, unit, how peak is derived);
 *   4. a unit test of its pure parts and a row check in tests/cli/probe.sh.
 *
 * Ownership: probe_ctx owns the rows (strings copied into its arena) and the
 * report it renders into; probes borrow ctx and never free anything of it.
 */
#ifndef CP_PROBE_PROBE_H
#define CP_PROBE_PROBE_H

#include "../base/arena.h"
#include "../base/error.h"
#include "../base/fsroot.h"
#include "../model/report.h"
#include "probe_quiet.h"
#include "probe_stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/vocab.h"

struct comm; /* src/comm/comm.h: local (one process) or MPI; NULL = local only */

/* The layer a probe row belongs to (the `layer` key): a layer of the chain
 * (model/vocab.h, same key), or memory, which the probe measures apart (CPU
 * DRAM and GPU HBM bandwidth feed the compute layer but are not one). */
typedef enum probe_layer {
    PROBE_L_COMPUTE = CP_LAYER_COMPUTE,
    PROBE_L_INTRA = CP_LAYER_INTRA,
    PROBE_L_INTER = CP_LAYER_INTER,
    PROBE_L_STORAGE = CP_LAYER_STORAGE,
    PROBE_L_MEMORY = CP_LAYER__COUNT,
    PROBE_L_COUNT
} probe_layer;
const char *probe_layer_name(probe_layer l);
/* Layer by its name; -1 if none. */
int probe_layer_find(const char *name);

/* Options of a run. Plain fields: the CLI fills them, probes read them.
 * Zero means "the probe's default" for every numeric field. */
#define PROBE_MAX_ROUNDS 100

typedef struct probe_opts {
    bool quick;              /* quick pass: a few seconds per probe */
    const char *dir;         /* storage: directory to test (default: the current directory) */
    uint64_t size_bytes;     /* memory/storage working size; 0 = probe default */
    double seconds;          /* time budget per measurement; 0 = probe default */
    int threads;             /* worker threads; 0 = all online CPUs */
    int rounds;              /* rounds of every measurement (probe_stats.h); 0 = the probe's default */
    /* net / coll (filled and used by the net and coll probes) */
    const char *listen;      /* net: [ADDR:]PORT to accept on; NULL = not a server */
    const char *connect;     /* net: HOST:PORT to connect to; NULL = not a client */
    int streams;             /* net: parallel TCP streams / RDMA QPs */
    uint64_t min_bytes;      /* coll: message-size sweep bounds */
    uint64_t max_bytes;
    int iters;               /* coll: timed iterations per size */
    int warmup;              /* coll: untimed iterations per size */
    double timeout_s;        /* every network wait; 0 = probe default */
    struct comm *comm;       /* coll: the process group; NULL = one process */
    double factor;           /* coll: message-size multiplier of the sweep; 0 = default */
    const char *coll_backend; /* coll: "auto" (NULL), "mpi" (host buffers) or "nccl" (GPU buffers) */
    /* net: RDMA (net_rdma.h); min_bytes/max_bytes/factor/iters also shape its sweep */
    int rdma;                /* 0 auto (when a device is listed), 1 required (--rdma), -1 off (--no-rdma) */
    const char *rdma_dev;    /* device name; NULL = the first */
    int ib_port;             /* 0 = port 1 */
    bool has_gid_index;      /* --gid-index given */
    int gid_index;
    int qps;                 /* RC QPs per side; 0 = 1 */
} probe_opts;

/* One result row. Strings are borrowed for the call only (probe_emit copies).
 * NaN in peak means unknown (rendered null; efficiency is then null too).
 * Collective rows set is_coll and the collective fields; on other rows those
 * render as null. */
typedef struct probe_row {
    const char *metric;      /* snake_case with the quantity, e.g. "triad_bandwidth" */
    double value;
    const char *unit;        /* "GB/s" (1e9 B/s), "GFLOP/s", "us", "ops/s", ... */
    double peak;             /* theoretical peak in `unit`; NaN = unknown */
    const char *method;      /* how it was measured, one line */
    /* collective rows; op and size_bytes also on sized non-collective rows
     * (RDMA: op "rdma_write", size the message) and rendered there when set */
    bool is_coll;
    const char *op;          /* all_reduce, all_gather, ... */
    uint64_t size_bytes;
    double time_us;
    double algbw_gbps;
    double busbw_gbps;
    bool in_place;
    int64_t wrong;           /* elements that failed the correctness check; <0 = not checked */
    const char *buffers;     /* collective rows: "host" (MPI / a copy) or "device" (GPU buffers, NCCL);
                                part of the row's identity in history and compare */
    /* statistics (probe_stats.h): set by probe_emit_samples; a row emitted
     * with probe_emit alone is one figure (stat SINGLE, stats.n 0) */
    probe_stat stat;         /* which statistic `value` is */
    probe_stats stats;
    /* set by probe_emit: the figure (or every round) was above `peak`, so
     * `value` is NaN and the figure itself is kept here, never as a
     * measurement */
    bool impossible;
    double impossible_value;
} probe_row;

typedef struct probe_ctx probe_ctx;

typedef struct probe_def {
    const char *name;
    probe_layer layer;
    const char *summary;
    /* Whether it can run here; when not, writes the reason into why. */
    bool (*applies)(probe_ctx *ctx, char *why, size_t why_size);
    int (*run)(probe_ctx *ctx, cp_error *err);
} probe_def;

/* A stored row (what probe_emit keeps; strings live in the ctx arena). */
typedef struct probe_result {
    const char *probe;
    probe_layer layer;
    probe_row row;
} probe_result;

struct probe_ctx {
    probe_opts opts;
    const probe_def *current; /* the probe running now (set by probe_run_selected) */
    rep_report *rep;          /* report being built (owned by the caller) */
    rep_node *topology;       /* the report's `topology` object, filled by probes */
    cp_arena arena;
    probe_result *results;
    size_t n_results, cap_results;
    cp_fsroot fs;             /* where /proc and /sys are read (CHAINPROF_FSROOT) */
    probe_quiet quiet;        /* quietness windows: before the probes and one per probe */
    /* GPU runtime, opened once on first use by probe_gpu() */
    struct gpu_rt *gpu;
    int gpu_state;            /* 0 not tried, 1 available, -1 unavailable */
    char gpu_why[256];
};

/* The probe table (probes.def order). */
const probe_def *probe_table(size_t *n);
const probe_def *probe_find(const char *name);

/* Init/free a context; rep is borrowed (may be NULL in unit tests: rows
 * are still collected). */
void probe_ctx_init(probe_ctx *ctx, const probe_opts *opts, rep_report *rep);
void probe_ctx_free(probe_ctx *ctx);

/* Append a row for ctx->current. Copies the strings. A value above the
 * row's peak (probe_above_peak) is not a measurement: the row is kept
 * with value NaN, impossible set and the figure in impossible_value, and
 * its method says so. */
void probe_emit(probe_ctx *ctx, const probe_row *row);
/* The same for a figure measured in rounds: v[n] are the rounds (or the
 * samples of a distribution); rounds above the peak are left out and
 * counted (stats.rejected), the rest give row.stats and `value` is their
 * statistic `stat` (row->value is ignored). With every round above the
 * peak the row is impossible, as above. n may be 0 (value NaN). */
void probe_emit_samples(probe_ctx *ctx, const probe_row *row, const double *v, size_t n, probe_stat stat);
/* Shorthand for a non-collective row measured in rounds. */
void probe_emit_rounds(probe_ctx *ctx, const char *metric, const double *v, size_t n, probe_stat stat,
                       const char *unit, double peak, const char *method);
/* Rounds of a measurement: --rounds, else the probe's default for the
 * mode (def_quick, def_full), at most PROBE_MAX_ROUNDS. */
int probe_rounds(const probe_ctx *ctx, int def_quick, int def_full);
/* Shorthand for the common non-collective row. */
void probe_emit_value(probe_ctx *ctx, const char *metric, double value, const char *unit, double peak,
                      const char *method);

/* Selection: names[] are probe names or layer names; none = every probe.
 * Marks sel[i] for probe_table()[i]. Returns 0, or CP_ERR_USAGE naming the
 * unknown word in err. */
int probe_select(const char *const *names, size_t n_names, bool *sel, cp_error *err);

/* Outcome of one probe for the report. */
typedef struct probe_outcome {
    const probe_def *def;
    bool ran;
    char reason[256];   /* why it was skipped or why it failed */
    int status;         /* 0, or the probe's negative cp_status */
    double seconds;     /* wall time it took */
} probe_outcome;

/* Run the selected probes in table order; out[] has one entry per table row.
 * Before the first one the machine is watched idle for a moment (the
 * `before` window of probe_quiet.h), and each probe is a window of its own.
 * Returns the number of probes that failed. */
size_t probe_run_selected(probe_ctx *ctx, const bool *sel, probe_outcome *out);

/* Render results[] (table), skipped[], errors[] and quiet{} into ctx->rep. */
void probe_report(probe_ctx *ctx, const probe_outcome *out, size_t n_out);

/* The GPU runtime (src/gpu), or NULL when unavailable; the first call opens
 * it and records {available, reason, library, devices} under
 * topology.gpu_runtime, so a run without a GPU says why. */
struct gpu_rt *probe_gpu(probe_ctx *ctx);

/* Shared helpers for probes. */
double probe_efficiency(double value, double peak); /* value/peak or NaN */

#define X(name, layer, summary)                                                  \
    bool probe_##name##_applies(probe_ctx *ctx, char *why, size_t why_size);     \
    int probe_##name##_run(probe_ctx *ctx, cp_error *err);
#include "probes.def"
#undef X

#endif
