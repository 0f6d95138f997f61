/* rd_perftest.h - reader for perftest output (ib_write_bw, ib_read_bw,
 * ib_send_bw, ib_atomic_bw and their *_lat siblings).
 *
 * A file may hold several runs (a shell session pasted whole). Each run is a
 * banner ("RDMA_Write BW Test", "Send Latency Test"), a block of
 * "key : value" settings (two per line in most versions, tab or space
 * separated), the QP address lines, one results header and its rows.
 *
 * The results header drives the columns, so both families parse:
 *   - bandwidth: #bytes #iterations BW peak[U] BW average[U] MsgRate[Mpps]
 *     with U one of Gb/sec (--report_gbits, decimal gigabits), MB/sec (older
 *     perftest; MB there is 2^20 bytes) or MiB/sec (newer perftest, same unit);
 *   - latency: #bytes #iterations t_min t_max t_typical [t_avg t_stdev
 *     99% percentile 99.9% percentile], all [usec].
 * Bandwidths are kept as printed and converted to Gbit/s (1e9 bits/s, the
 * unit NIC line rates are quoted in) in the *_gbit_s fields. Lines that are
 * not rows (CPU frequency warnings, shell prompts) are skipped.
 *
 * Ownership: rd_perftest_parse's result owns its arrays; free with
 * rd_perftest_free.
 */
#ifndef CP_READERS_RD_PERFTEST_H
#define CP_READERS_RD_PERFTEST_H

#include <stddef.h>
#include <stdint.h>

#include "../model/report.h"
#include "rd_text.h"

#define RD_PT_MAX_RUNS 4096
#define RD_PT_MAX_ROWS 100000 /* per run */
#define RD_PT_MAX_SETTINGS 64 /* per run */

typedef struct rd_pt_setting {
    char key[40];   /* "Number of qps" */
    char value[48]; /* "4" */
    uint32_t line;
} rd_pt_setting;

/* One result row; NaN for columns the run did not print. */
typedef struct rd_pt_row {
    int64_t bytes;
    int64_t iterations;
    double bw_peak_gbit_s, bw_avg_gbit_s; /* converted to Gbit/s */
    double bw_peak_raw, bw_avg_raw;       /* as printed, in run->bw_unit */
    double msg_rate_mpps;
    double t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us;
    double t_p99_us, t_p999_us;
    uint32_t line;
} rd_pt_row;

typedef struct rd_pt_run {
    char tool[32];        /* "ib_write_bw"; from the command line or banner */
    char test[64];        /* banner as printed: "RDMA_Write BW Test" */
    char op[16];          /* "write", "read", "send", "atomic" */
    int is_latency;       /* 1 for *_lat */
    uint32_t test_line;

    /* Typed copies of the common settings (""/-1 when not printed). */
    char device[64];
    uint32_t device_line;
    int qps;
    uint32_t qps_line;
    char link_type[16];   /* "IB", "Ethernet" */
    uint32_t link_line;
    char transport[16];   /* "IB" */
    char connection[16];  /* "RC", "UD", ... */
    int mtu_bytes;
    uint32_t mtu_line;
    int tx_depth;
    int gid_index;
    int rdma_cm;          /* 1 ON, 0 OFF, -1 unknown */

    rd_pt_setting *settings; /* every "key : value" of the banner block */
    size_t n_settings, cap_settings;

    int n_local_qps;      /* "local address:" lines (one per QP) */

    char bw_unit[16];     /* "Gb/sec", "MB/sec", "MiB/sec"; "" for latency */
    char lat_unit[16];    /* "usec" (or "cycles": then t_* stay NaN) */
    uint32_t header_line;

    rd_pt_row *rows;
    size_t n_rows, cap_rows;
    uint32_t first_line, last_line;
} rd_pt_run;

typedef struct rd_perftest {
    char *name;
    rd_pt_run *runs;
    size_t n_runs, cap_runs;
    diag_set diag;   /* counted damage, "file:line" of the first of each code */
} rd_perftest;

int rd_perftest_sniff(const char *buf, size_t len);

/* Fails (CP_ERR_FORMAT) only when no banner or results header is found. */
int rd_perftest_parse(const char *data, size_t len, const char *name,
                      rd_perftest **out, cp_error *err);

void rd_perftest_free(rd_perftest *r);

/* The facts analyze reports for this file (evidence[] entry), each with its
 * line, added to obj (evidence_report.c). */
void rd_perftest_report(const rd_perftest *facts, rep_report *r, rep_node *obj);

/* Row with the largest average bandwidth in a bandwidth run (NULL if none). */
const rd_pt_row *rd_pt_best_bw(const rd_pt_run *run);

/* Value of a banner setting by key (exact, case-insensitive), or NULL. */
const rd_pt_setting *rd_pt_setting_get(const rd_pt_run *run, const char *key);

#endif
