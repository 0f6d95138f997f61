/* ev_iperf.h - facts of iperf3 text output (client and server side): the
 * interval rows, [SUM] rows of parallel streams, sender/receiver summaries
 * and the connection sections. Filled by src/readers/rd_iperf.c.
 *
 * Units: transfer in bytes, rates in bits/s, times in seconds. The struct
 * owns its arrays: ev_iperf_free.
 */
#ifndef CP_MODEL_EV_IPERF_H
#define CP_MODEL_EV_IPERF_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_IPERF_MAX_ROWS 1000000
#define EV_IPERF_MAX_SECTIONS 4096

typedef enum ev_iperf_role {
    EV_IPERF_INTERVAL = 0, /* a per-interval row */
    EV_IPERF_SENDER,       /* final summary, sender side */
    EV_IPERF_RECEIVER,     /* final summary, receiver side */
} ev_iperf_role;

typedef struct ev_iperf_row {
    uint32_t section;
    int stream;            /* the [ N] id; -1 for [SUM] */
    ev_iperf_role role;
    double start_s, end_s;
    double bytes;
    double bits_per_s;
    int64_t retr;          /* -1 when not printed */
    double cwnd_bytes;     /* NaN when not printed */
    uint32_t line;
} ev_iperf_row;

typedef struct ev_iperf_section {
    char remote[64];       /* host connected to / accepted from; "" unknown */
    int port;              /* -1 unknown */
    int is_server;         /* 1 accepted/listening, 0 connecting, -1 unknown */
    uint32_t line;         /* first line of the section */
} ev_iperf_section;

typedef struct ev_iperf {
    ev_iperf_section *sections;
    size_t n_sections, cap_sections;
    ev_iperf_row *rows;
    size_t n_rows, cap_rows;
    int n_errors;          /* "iperf3: error - ..." lines */
    char error[160];       /* the first one, after "error - " */
    uint32_t error_line;
} ev_iperf;

/* The receiver summary with the highest rate (the achieved throughput; a
 * server's zero "sender" line is not it), else the highest sender summary,
 * else NULL. */
const ev_iperf_row *ev_iperf_best(const ev_iperf *r);

void ev_iperf_free(ev_iperf *r);
void ev_iperf_report(const ev_iperf *r, rep_report *rp, rep_node *obj);

#endif
