/* run_clock.h - clock alignment for `chainprof run` across processes and
 * hosts (used by cmd_run.c).
 *
 * The `chainprof run` of rank 0 is the reference: it serves its
 * CLOCK_REALTIME over TCP while the job runs and publishes where
 * (DIR/.chainprof-clock-<job>: one "ADDRESS PORT" line per address of the
 * host, written atomically) in the output directory, which the ranks share
 * (a cluster file system; the network-namespace test hosts share it too).
 * Every other rank's `chainprof run` reads that file, exchanges 16 round
 * trips and keeps the one with the shortest round trip: offset = reference
 * time - (send + receive) / 2, uncertain by at most half that round trip
 * (NTP's method on one link). The offset goes to the job's collector
 * (CHAINPROF_CLOCK), which writes it into each trace header; the reader
 * adds it, so every rank's events are on rank 0's clock.
 *
 * Processes on one host share CLOCK_MONOTONIC and CLOCK_REALTIME: their
 * offsets come out near zero (within the round trip). Without rank
 * variables, or when the reference does not answer within the timeout,
 * the host's own realtime clock is used (NTP/PTP-disciplined) and the
 * header says so.
 */
#ifndef CP_CLI_RUN_CLOCK_H
#define CP_CLI_RUN_CLOCK_H

#include <stdint.h>

typedef struct run_clock {
    int sync;          /* CPT_SYNC_* */
    int64_t offset_ns; /* add to this host's realtime */
    int64_t rtt_ns;    /* -1 unknown */
    /* the reference's server (leader only) */
    int listen_fd;
    char path[1200];
    void *thread;
} run_clock;

/* Rank 0: start serving and publish the address file. 0, or -1 with a
 * warning logged (the job runs without a reference then). */
int run_clock_lead(run_clock *c, const char *dir, const char *job);
/* Other ranks: measure the offset against the reference; waits at most
 * timeout_s for the file and the exchange. 0, or -1 (sync NONE, warned). */
int run_clock_follow(run_clock *c, const char *dir, const char *job, double timeout_s);
/* Leader: stop serving and remove the address file. */
void run_clock_end(run_clock *c);

#endif
