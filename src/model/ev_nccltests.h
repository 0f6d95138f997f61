/* ev_nccltests.h - facts of nccl-tests and rccl-tests output (all_reduce_perf
 * & co.): runs with their device list, table rows (either column set:
 * old "error" or new "#wrong"), the "# Out of bounds values" and "# Avg bus
 * bandwidth" summaries, and failure lines. Filled by
 * src/readers/rd_nccltests.c (format notes there and in docs/FORMATS.md).
 *
 * Units follow nccl-tests: time in microseconds, algbw and busbw in GB/s
 * with GB = 1e9 bytes (so `busbw_gbps` means gigaBYTES per second). Every
 * fact carries the 1-based line it was read from. The struct owns its
 * arrays: free with ev_nccltests_free.
 */
#ifndef CP_MODEL_EV_NCCLTESTS_H
#define CP_MODEL_EV_NCCLTESTS_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_NT_MAX_RUNS 4096
#define EV_NT_MAX_ROWS 100000   /* per run */
#define EV_NT_MAX_DEVICES 65536 /* per run */

typedef enum ev_nt_colset {
    EV_NT_COLS_UNKNOWN = 0,
    EV_NT_COLS_OLD_ERROR, /* "error" columns (max error value) */
    EV_NT_COLS_NEW_WRONG, /* "#wrong" columns (count of wrong elements) */
} ev_nt_colset;

/* One "#  Rank N [Group G] Pid P on HOST device D [BUS] NAME" line. */
typedef struct ev_nt_device {
    int rank;
    int group;   /* -1 when the version does not print it */
    int64_t pid;
    int device;  /* CUDA device index on its host */
    char host[96];
    char bus[32];   /* "0x27" or "0000:04:00", without brackets */
    char name[96];  /* GPU name, e.g. "NVIDIA A100-SXM4-40GB" */
    uint32_t line;
} ev_nt_device;

/* One half (out-of-place or in-place) of a row. NaN / -1 when not printed. */
typedef struct ev_nt_result {
    double time_us;
    double algbw_gbps;  /* GB/s, 1e9 bytes */
    double busbw_gbps;  /* GB/s, 1e9 bytes */
    int64_t wrong;      /* #wrong count; -1 when absent or "N/A" */
    double max_error;   /* old "error" column; NaN when absent */
} ev_nt_result;

typedef struct ev_nt_row {
    int64_t size_bytes;
    int64_t count;      /* elements */
    char type[16];      /* "float", "half", ... */
    char redop[16];     /* "sum", "none", "" when no redop column */
    int64_t root;       /* -1 when "-1" or no root column */
    ev_nt_result oop;   /* out-of-place */
    ev_nt_result inp;   /* in-place */
    uint32_t line;
} ev_nt_row;

typedef struct ev_nt_run {
    char op[32];        /* "all_reduce" from all_reduce_perf; "" when unknown */
    uint32_t op_line;

    /* "# nThread 1 nGpus 1 minBytes 8 maxBytes ... iters: 20 ..." (-1 unknown) */
    int nthread, ngpus;
    int64_t min_bytes, max_bytes;
    int warmup_iters, iters, agg_iters, validation, graph;
    uint32_t params_line;

    ev_nt_colset colset;
    int has_redop, has_root;
    uint32_t header_line;

    ev_nt_device *devices;
    size_t n_devices, cap_devices;
    int n_hosts;        /* distinct host names among devices */

    ev_nt_row *rows;
    size_t n_rows, cap_rows;

    double avg_busbw_gbps; /* "# Avg bus bandwidth : X"; NaN when absent */
    uint32_t avg_line;
    int64_t oob_values;    /* "# Out of bounds values : N OK"; -1 when absent */
    int oob_ok;            /* 1 "OK", 0 "FAILED", -1 absent */
    uint32_t oob_line;
    /* data errors: rows whose #wrong count is above 0 (or whose old "error"
     * value carries nccl-tests' "*" mark of an error above the threshold) */
    int64_t wrong_rows;
    uint32_t wrong_line;   /* the first such row */
    /* rows whose size is below the row before (another process's sweep
     * interleaved: nccl-tests started once per process without MPI) */
    int size_restarts;
    uint32_t restart_line;
    int avg_lines;         /* "# Avg bus bandwidth" lines (1 per run normally) */

    uint32_t first_line, last_line;
} ev_nt_run;

typedef struct ev_nccltests {
    /* "# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903"
     * (newer nccl-tests only): "" / -1 when absent. */
    char tests_version[24];
    int nccl_library;    /* NCCL_VERSION_CODE of the library run, 21903 = 2.19.3 */
    uint32_t version_line;
    int rccl;            /* rccl-tests ("rccl-tests: Version ..."), ROCm */
    uint32_t rccl_line;
    ev_nt_run *runs;
    size_t n_runs, cap_runs;
    /* First "NCCL failure"/"CUDA failure"/"Test failure" line, if any. */
    uint32_t n_failures;
    uint32_t failure_line;
    char failure[256];
} ev_nccltests;

/* Row with the highest busbw (either placement) in a run, or NULL when the run
 * has no row with a busbw. *busbw_gbps gets that value. */
const ev_nt_row *ev_nt_max_busbw(const ev_nt_run *run, double *busbw_gbps);
/* Best busbw of a row: max of out-of-place and in-place (NaN when neither). */
double ev_nt_row_busbw(const ev_nt_row *row);

void ev_nccltests_free(ev_nccltests *r);
void ev_nccltests_report(const ev_nccltests *r, rep_report *rp, rep_node *obj);

#endif
