/* history.h - every probe and analyze run kept in an embedded SQLite database.
 *
 * One row per run (host, time, command, version, argv) and one row per
 * metric (a path such as "memory/triad_bandwidth" or
 * "ranks.0.temporal.idle_pct", its value and unit). The path is the
 * metric's identity, the key compare pairs two runs on: a collective
 * metric's path holds the buffer kind ("host" for MPI on host memory,
 * "device" for NCCL on GPU memory; see hist_coll_path), so an MPI
 * all-reduce is never compared with an NCCL one; the kind is also kept in
 * its own column for queries. A run is written in one
 * IMMEDIATE transaction, so a process killed mid-write leaves either the
 * whole run or nothing; the database is in WAL mode with a busy timeout so
 * two runs finishing at once both land (the second waits, it does not fail).
 *
 * Default location: $CHAINPROF_HISTORY_DB, else $XDG_DATA_HOME/chainprof/
 * history.db, else ~/.local/share/chainprof/history.db (the directory is
 * created).
 *
 * Ownership: hist_db is opaque, closed with hist_close. Lists returned by
 * hist_list/hist_metrics are owned by the caller and freed with the matching
 * *_free function.
 */
#ifndef CP_HISTORY_HISTORY_H
#define CP_HISTORY_HISTORY_H

#include "../base/error.h"
#include "../model/report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hist_db hist_db;

/* The spread of the rounds behind a probe figure (schema 3): rounds 0
 * means none (a single figure, an analyze number, or a run recorded before
 * schema 3) and the numbers are then NaN. */
typedef struct hist_spread {
    char stat[16];   /* which statistic `value` is: "median", "best", "p99", ... ("" unknown) */
    int64_t rounds;
    double median, p10, p90, min, max, cv;
} hist_spread;

typedef struct hist_metric {
    char *path;  /* owned in lists; borrowed when passed to hist_record */
    double value;
    char *unit;  /* may be NULL */
    char *buffers; /* collective metrics: "host", "device", or "unknown" (recorded
                      before schema 2 without --backend); NULL for the others */
    hist_spread spread;
} hist_metric;

typedef struct hist_metrics {
    hist_metric *v;
    size_t n, cap;
} hist_metrics;

typedef struct hist_run {
    int64_t id;
    int64_t time_ns;   /* wall clock, ns since the Unix epoch */
    char *host, *command, *version, *argv;
    int64_t n_metrics;
    char *buffers;     /* buffer kinds of its collective metrics, sorted, comma-separated; "" = none */
    int quiet;         /* 1 quiet, 0 not, -1 not checked (analyze, or before schema 3) */
    char *quiet_verdict; /* the probe's words, with its numbers; "" when not checked */
} hist_run;

/* What a run says about itself besides its metrics (NULL: nothing). */
typedef struct hist_run_info {
    int quiet;                 /* as hist_run.quiet */
    const char *quiet_verdict;
} hist_run_info;

typedef struct hist_runs {
    hist_run *v;
    size_t n;
} hist_runs;

/* The default path (see above) into buf; returns buf or NULL (no HOME). */
const char *hist_default_path(char *buf, size_t size);

/* Open for recording runs: an existing chainprof history (PRAGMA
 * application_id HIST_APPLICATION_ID, or an older one without the id whose
 * only tables are runs and metrics), or a new file (created with its
 * directories and schema). Anything else (another application's SQLite file, a schema newer
 * than HIST_SCHEMA_VERSION, not SQLite) is refused with CP_ERR_FORMAT before
 * anything is written to it, its journal mode included. path NULL = default. */
int hist_open(const char *path, hist_db **out, cp_error *err);
/* The same for reading (history, compare): never creates the file. */
int hist_open_existing(const char *path, hist_db **out, cp_error *err);
void hist_close(hist_db *db);

/* Record one run with its metrics in one transaction; *run_id set on success.
 * argv is joined with spaces; info may be NULL. */
int hist_record(hist_db *db, const char *command, int argc, char **argv, const hist_metrics *m,
                const hist_run_info *info, int64_t *run_id, cp_error *err);

/* Runs, newest first; limit 0 = all; command NULL = any. */
int hist_list(hist_db *db, const char *command, size_t limit, hist_runs *out, cp_error *err);
void hist_runs_free(hist_runs *r);

/* Resolve "42", "last" (newest run) or "prev" (the one before it). */
int hist_resolve(hist_db *db, const char *spec, int64_t *run_id, cp_error *err);
int hist_get_run(hist_db *db, int64_t run_id, hist_run *out, cp_error *err);
void hist_run_free(hist_run *r);
/* Metrics of a run, sorted by path. */
int hist_metrics_of(hist_db *db, int64_t run_id, hist_metrics *out, cp_error *err);

/* Metric lists. _kind also sets the buffer kind (NULL = none); _spread
 * also the spread (NULL = none). */
void hist_metrics_add(hist_metrics *m, const char *path, double value, const char *unit);
void hist_metrics_add_kind(hist_metrics *m, const char *path, double value, const char *unit, const char *buffers);
void hist_metrics_add_spread(hist_metrics *m, const char *path, double value, const char *unit, const char *buffers,
                             const hist_spread *spread);
/* A spread with no rounds (every number NaN). */
void hist_spread_none(hist_spread *s);

/* The schema version hist_open leaves in PRAGMA user_version. */
#define HIST_SCHEMA_VERSION 3
/* PRAGMA application_id of a chainprof history ("CPHS"): how a file is
 * known to be ours before anything is written to it. */
#define HIST_APPLICATION_ID 1129334867 /* 0x43504853 */

/* The path (identity) of a collective metric:
 * PROBE/METRIC/OP/BUFFERS/SIZE/in_place|out_of_place/STAT, e.g.
 * "coll/busbw/all_reduce/device/1048576/out_of_place/busbw_gbps". Returns
 * the length, or -1 when it does not fit in size. */
int hist_coll_path(char *buf, size_t size, const char *probe, const char *metric, const char *op,
                   const char *buffers, uint64_t size_bytes, bool in_place, const char *stat);
void hist_metrics_free(hist_metrics *m);
/* Every finite number of a report as a metric: dotted key path from the
 * root (array elements by index), skipping the envelope (tool, command).
 * Capped at `cap` metrics. */
void hist_flatten_report(const rep_report *r, hist_metrics *m, size_t cap);

/* ---- compare ---- */
typedef enum hist_dir { HIST_DIR_UNKNOWN, HIST_DIR_HIGHER_BETTER, HIST_DIR_LOWER_BETTER } hist_dir;
/* Which way is better, from the unit: throughputs (".../s", "GB/s",
 * "GFLOP/s", "files/s") higher, durations ("ns", "us", "ms", "s") lower. */
hist_dir hist_unit_direction(const char *unit);
/* Change in percent from a to b ((b - a) / |a| x 100); NaN when a is 0. */
double hist_change_pct(double a, double b);
/* Whether the change from a to b is a regression beyond threshold_pct. */
int hist_is_regression(double a, double b, const char *unit, double threshold_pct);

/* The noise band of a recorded figure: [p10, p90] of its rounds, or the
 * value alone when it has no spread. false when there is neither. */
bool hist_noise_band(const hist_metric *m, double *lo, double *hi);
/* Whether two bands overlap (a difference inside the noise of both). */
bool hist_bands_overlap(double lo_a, double hi_a, double lo_b, double hi_b);

/* What compare concludes about one metric in two runs:
 *   NO_CHANGE    the bands overlap: inside the noise of both runs (needs a
 *                spread on at least one side), never a regression
 *   REGRESSION   beyond the threshold in the bad direction, bands apart
 *   IMPROVEMENT  beyond the threshold in the good direction, bands apart
 *   WITHIN       a change, but within the threshold (or of a unit with no
 *                better direction)
 *   UNKNOWN      a value missing on either side */
typedef enum hist_verdict {
    HIST_V_UNKNOWN, HIST_V_NO_CHANGE, HIST_V_WITHIN, HIST_V_REGRESSION, HIST_V_IMPROVEMENT
} hist_verdict;
const char *hist_verdict_name(hist_verdict v); /* "no change", "within threshold", "regression", ... */
/* The verdict, and in why the numbers it rests on ("inside the noise of
 * both runs: A 38.2-45.1, B 36.0-44.9 GB/s (p10-p90)"). */
hist_verdict hist_judge(const hist_metric *a, const hist_metric *b, double threshold_pct, char *why, size_t size);

#endif
