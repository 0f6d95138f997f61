/* ev_perftest.h - facts of perftest output (ib_write_bw, ib_read_bw,
 * ib_send_bw, ib_atomic_bw and their *_lat siblings): runs with their banner,
 * settings and result rows. Filled by src/readers/rd_perftest.c.
 *
 * Bandwidths are kept as printed and converted to Gbit/s (1e9 bits/s, the
 * unit NIC line rates are quoted in) in the *_gbit_s fields. The struct owns
 * its arrays: free with ev_perftest_free.
 */
#ifndef CP_MODEL_EV_PERFTEST_H
#define CP_MODEL_EV_PERFTEST_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_PT_MAX_RUNS 4096
#define EV_PT_MAX_ROWS 100000 /* per run */
#define EV_PT_MAX_SETTINGS 64 /* per run */

typedef struct ev_pt_setting {
    char key[40];   /* "Number of qps" */
    char value[48]; /* "4" */
    uint32_t line;
} ev_pt_setting;

/* One result row; NaN for columns the run did not print. */
typedef struct ev_pt_row {
    int64_t bytes;
    int64_t iterations;
    double bw_peak_gbit_s, bw_avg_gbit_s; /* converted to Gbit/s */
    double bw_peak_raw, bw_avg_raw;       /* as printed, in run->bw_unit */
    double msg_rate_mpps;
    double t_min_us, t_max_us, t_typical_us, t_avg_us, t_stdev_us;
    double t_p99_us, t_p999_us;
    uint32_t line;
} ev_pt_row;

typedef struct ev_pt_run {
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

    ev_pt_setting *settings; /* every "key : value" of the banner block */
    size_t n_settings, cap_settings;

    int n_local_qps;      /* "local address:" lines (one per QP) */

    char bw_unit[16];     /* "Gb/sec", "MB/sec", "MiB/sec"; "" for latency */
    char lat_unit[16];    /* "usec" (or "cycles": then t_* stay NaN) */
    uint32_t header_line;

    ev_pt_row *rows;
    size_t n_rows, cap_rows;
    uint32_t first_line, last_line;
} ev_pt_run;

/* A perftest failure line (perftest_communication.c, perftest_resources.c):
 * the test never measured. */
typedef enum ev_pt_fail {
    EV_PT_FAIL_NONE = 0,
    EV_PT_FAIL_CONNECT,    /* "Couldn't connect to <host>:<port>", "Unable to open file descriptor for socket connection" */
    EV_PT_FAIL_QP,         /* "Failed to modify QP <n> to RTR|RTS" (address, GID, MTU of the path) */
    EV_PT_FAIL_COMPLETION, /* "Failed status <n>: wr_id ... syndrom 0x.." / "Completion with error" */
    EV_PT_FAIL_DEVICE,     /* "Couldn't get device info", "No IB devices found", "IB device <d> not found" */
    EV_PT_FAIL_OTHER,      /* "Failed to exchange data between server and clients", ... */
} ev_pt_fail;

typedef struct ev_perftest {
    ev_pt_run *runs;
    size_t n_runs, cap_runs;
    int n_failures;
    int fail_kind;          /* ev_pt_fail of the first failure */
    long fail_status;       /* "Failed status N" (an ibv_wc_status); -1 */
    char failure[160];      /* the first failure line */
    uint32_t failure_line;
} ev_perftest;

/* Row with the largest average bandwidth in a bandwidth run (NULL if none). */
const ev_pt_row *ev_pt_best_bw(const ev_pt_run *run);
/* Value of a banner setting by key (exact, case-insensitive), or NULL. */
const ev_pt_setting *ev_pt_setting_get(const ev_pt_run *run, const char *key);

void ev_perftest_free(ev_perftest *r);
void ev_perftest_report(const ev_perftest *r, rep_report *rp, rep_node *obj);

#endif
