/* rd_iperf.h - reader for iperf3 text output (client and server side).
 *
 * What is read: the interval rows "[  4]   0.00-1.00   sec  2.16 GBytes
 * 18.6 Gbits/sec    1    728 KBytes" (client rows with Retr and Cwnd, server
 * rows without; "[SUM]" rows of parallel streams), the final summary rows
 * ending in "sender" / "receiver", and the connection lines ("Connecting to
 * host H, port P", "[  4] local A port P connected to B port Q", "Accepted
 * connection from H, port P"). Both column headers parse (older iperf3 says
 * "Bandwidth", newer "Bitrate"); rows are recognised by shape, so an excerpt
 * that starts mid-run still reads. A new "Connecting"/"Accepted"/"Server
 * listening" line starts a new section (a pasted server log followed by the
 * client's).
 *
 * Units: transfer in bytes (iperf3's KBytes/MBytes/GBytes are 1024-based),
 * rates in bits/s (its Kbits/Mbits/Gbits are 1000-based), times in seconds.
 *
 * Ownership: rd_iperf_parse's result owns everything; free with
 * rd_iperf_free.
 */
#ifndef CP_READERS_RD_IPERF_H
#define CP_READERS_RD_IPERF_H

#include <stddef.h>
#include <stdint.h>

#include "../model/report.h"
#include "rd_text.h"

#define RD_IPERF_MAX_ROWS 1000000
#define RD_IPERF_MAX_SECTIONS 4096

typedef enum rd_iperf_role {
    RD_IPERF_INTERVAL = 0, /* a per-interval row */
    RD_IPERF_SENDER,       /* final summary, sender side */
    RD_IPERF_RECEIVER,     /* final summary, receiver side */
} rd_iperf_role;

typedef struct rd_iperf_row {
    uint32_t section;
    int stream;            /* the [ N] id; -1 for [SUM] */
    rd_iperf_role role;
    double start_s, end_s;
    double bytes;
    double bits_per_s;
    int64_t retr;          /* -1 when not printed */
    double cwnd_bytes;     /* NaN when not printed */
    uint32_t line;
} rd_iperf_row;

typedef struct rd_iperf_section {
    char remote[64];       /* host connected to / accepted from; "" unknown */
    int port;              /* -1 unknown */
    int is_server;         /* 1 accepted/listening, 0 connecting, -1 unknown */
    uint32_t line;         /* first line of the section */
} rd_iperf_section;

typedef struct rd_iperf {
    char *name;
    rd_iperf_section *sections;
    size_t n_sections, cap_sections;
    rd_iperf_row *rows;
    size_t n_rows, cap_rows;
    diag_set diag;
} rd_iperf;

int rd_iperf_sniff(const char *buf, size_t len);
/* Fails (CP_ERR_FORMAT) when no interval or summary row is found. */
int rd_iperf_parse(const char *data, size_t len, const char *name, rd_iperf **out, cp_error *err);
void rd_iperf_free(rd_iperf *r);

/* The facts analyze reports for this file (evidence[] entry), each with its
 * line, added to obj (evidence_report.c). */
void rd_iperf_report(const rd_iperf *facts, rep_report *r, rep_node *obj);

/* The receiver summary with the highest rate (the achieved throughput; a
 * server's zero "sender" line is not it), else the highest sender summary,
 * else NULL. */
const rd_iperf_row *rd_iperf_best(const rd_iperf *r);

#endif
