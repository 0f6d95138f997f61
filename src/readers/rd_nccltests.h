/* rd_nccltests.h - reader for nccl-tests output (all_reduce_perf & co.).
 *
 * One file may hold several runs (a script that runs every *_perf binary in
 * turn, or a job log with one run per size sweep); each run is a header block
 * ("# nThread ..." parameters, "# Using devices" with one line per rank), a
 * column header, rows, and the "# Avg bus bandwidth" summary.
 *
 * The table is read against its own column header, not fixed positions, so
 * every column set seen in the wild parses:
 *   - old (nccl-tests <= 2.10): "error" columns with a max-error value, no
 *     "root" column for all_reduce/reduce_scatter/all_gather;
 *   - new: "#wrong" columns with a count of wrong elements, "redop" and "root"
 *     on every collective (all_gather prints "none"/-1);
 *   - per-op variations: all_gather without redop, broadcast with only root.
 * The first time/algbw/busbw/(error|#wrong) group is out-of-place, the second
 * is in-place. "N/A" cells are unknown, not errors.
 *
 * Units follow nccl-tests: time in microseconds, algbw and busbw in GB/s with
 * GB = 1e9 bytes (so `busbw_gbps` here means gigaBYTES per second).
 *
 * Every fact carries the 1-based line it was read from. Ownership: the result
 * of rd_nccltests_parse owns all its arrays; free it with rd_nccltests_free.
 */
#ifndef CP_READERS_RD_NCCLTESTS_H
#define CP_READERS_RD_NCCLTESTS_H

#include <stddef.h>
#include <stdint.h>

#include "../model/report.h"
#include "../model/topo.h"
#include "rd_text.h"

#define RD_NT_MAX_RUNS 4096
#define RD_NT_MAX_ROWS 100000   /* per run */
#define RD_NT_MAX_DEVICES 65536 /* per run */

typedef enum rd_nt_colset {
    RD_NT_COLS_UNKNOWN = 0,
    RD_NT_COLS_OLD_ERROR, /* "error" columns (max error value) */
    RD_NT_COLS_NEW_WRONG, /* "#wrong" columns (count of wrong elements) */
} rd_nt_colset;

/* One "#  Rank N [Group G] Pid P on HOST device D [BUS] NAME" line. */
typedef struct rd_nt_device {
    int rank;
    int group;   /* -1 when the version does not print it */
    int64_t pid;
    int device;  /* CUDA device index on its host */
    char host[96];
    char bus[32];   /* "0x27" or "0000:04:00", without brackets */
    char name[96];  /* GPU name, e.g. "NVIDIA A100-SXM4-40GB" */
    uint32_t line;
} rd_nt_device;

/* One half (out-of-place or in-place) of a row. NaN / -1 when not printed. */
typedef struct rd_nt_result {
    double time_us;
    double algbw_gbps;  /* GB/s, 1e9 bytes */
    double busbw_gbps;  /* GB/s, 1e9 bytes */
    int64_t wrong;      /* #wrong count; -1 when absent or "N/A" */
    double max_error;   /* old "error" column; NaN when absent */
} rd_nt_result;

typedef struct rd_nt_row {
    int64_t size_bytes;
    int64_t count;      /* elements */
    char type[16];      /* "float", "half", ... */
    char redop[16];     /* "sum", "none", "" when no redop column */
    int64_t root;       /* -1 when "-1" or no root column */
    rd_nt_result oop;   /* out-of-place */
    rd_nt_result inp;   /* in-place */
    uint32_t line;
} rd_nt_row;

typedef struct rd_nt_run {
    char op[32];        /* "all_reduce" from all_reduce_perf; "" when unknown */
    uint32_t op_line;

    /* "# nThread 1 nGpus 1 minBytes 8 maxBytes ... iters: 20 ..." (-1 unknown) */
    int nthread, ngpus;
    int64_t min_bytes, max_bytes;
    int warmup_iters, iters, agg_iters, validation, graph;
    uint32_t params_line;

    rd_nt_colset colset;
    int has_redop, has_root;
    uint32_t header_line;

    rd_nt_device *devices;
    size_t n_devices, cap_devices;
    int n_hosts;        /* distinct host names among devices */

    rd_nt_row *rows;
    size_t n_rows, cap_rows;

    double avg_busbw_gbps; /* "# Avg bus bandwidth : X"; NaN when absent */
    uint32_t avg_line;
    int64_t oob_values;    /* "# Out of bounds values : N OK"; -1 when absent */
    int oob_ok;            /* 1 "OK", 0 "FAILED", -1 absent */
    uint32_t oob_line;

    uint32_t first_line, last_line;
} rd_nt_run;

typedef struct rd_nccltests {
    char *name;          /* file name facts refer to */
    /* "# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903"
     * (newer nccl-tests only): "" / -1 when absent. */
    char tests_version[24];
    int nccl_library;    /* NCCL_VERSION_CODE of the library run, 21903 = 2.19.3 */
    uint32_t version_line;
    rd_nt_run *runs;
    size_t n_runs, cap_runs;
    /* First "NCCL failure"/"CUDA failure"/"Test failure" line, if any. */
    uint32_t n_failures;
    uint32_t failure_line;
    char failure[256];
    diag_set diag;   /* counted damage, "file:line" of the first of each code */
} rd_nccltests;

/* Confidence 0..100 that buf (the first bytes of a file) is nccl-tests output. */
int rd_nccltests_sniff(const char *buf, size_t len);

/* Parse data[0..len). name is copied and used in messages and provenance.
 * Fails (CP_ERR_FORMAT, with the place) only when no run with a table is found;
 * bad rows are counted in diag. On success *out is owned by the caller. */
int rd_nccltests_parse(const char *data, size_t len, const char *name,
                       rd_nccltests **out, cp_error *err);

void rd_nccltests_free(rd_nccltests *r);

/* The facts analyze reports for this file (evidence[] entry), each with its
 * line, added to obj (evidence_report.c). */
void rd_nccltests_report(const rd_nccltests *facts, rep_report *r, rep_node *obj);

/* Row with the highest busbw (either placement) in a run, or NULL when the run
 * has no row with a busbw. *busbw_gbps gets that value. */
const rd_nt_row *rd_nt_max_busbw(const rd_nt_run *run, double *busbw_gbps);

/* Add the hosts and GPUs of every run's device list ("on HOST device D
 * [BUS] NAME") to the topology model, with their lines as provenance. GPUs
 * already there (same host and index) get the name and bus filled when they
 * had none. Returns 0, or CP_ERR_NOMEM when a model cap is reached. */
int rd_nt_fill_topo(const rd_nccltests *r, topo *t, cp_error *err);

/* Best busbw of a row: max of out-of-place and in-place (NaN when neither). */
double rd_nt_row_busbw(const rd_nt_row *row);

#endif
