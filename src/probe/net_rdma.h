/* net_rdma.h - RDMA RC bandwidth and latency between two chainprof processes.
 *
 * What ib_write_bw / ib_read_bw / ib_send_bw and ib_write_lat / ib_send_lat
 * (perftest) measure, in one session over the `probe net` control
 * connection: --qps reliable-connected QPs per side, a message-size sweep,
 * RDMA WRITE, RDMA READ and SEND/RECV bandwidth (average, best window,
 * message rate), then WRITE and SEND ping-pong latency on QP 0.
 *
 * libibverbs is opened with dlopen through the declarations in verbs_abi.h
 * (CHAINPROF_IBVERBS_LIB names another library: the tests' fake), so the
 * build never needs an RDMA stack and a machine without one says why.
 *
 * Session (after the TCP phases, on the control connection; the client
 * drives, the server follows; integers big-endian):
 *   client sets up its side first (device, port, PD, CQs, QPs, MRs); when
 *   that fails it reports locally and never sends 'R'.
 *   'R' hello   "CPRDMA2\0", qps, depth, max message bytes
 *   server      status + message (256 bytes) + device name + its endpoints
 *   client      its endpoints; both move their QPs INIT -> RTR -> RTS
 *               and exchange a status + message again (a modify_qp failure
 *               on either side ends both with that side's reason)
 *   tests       per test: kind, size, iterations; the server prepares
 *               (posts receives, fills the pattern or its complement),
 *               answers 'r', plays its part, then both exchange a status
 *               + message (after a WRITE bandwidth test the server reads
 *               the client's first, checks the payload, then answers);
 *               kind 0 ends the session. A bandwidth test whose payload
 *               arrived wrong fails with a "payload check failed" status.
 * Endpoint = {lid, qpn, psn, gid[16], buffer address, rkey} per QP.
 * Every wait is bounded by timeout_s: completion polling checks a deadline,
 * control reads use SO_RCVTIMEO.
 */
#ifndef CP_PROBE_NET_RDMA_H
#define CP_PROBE_NET_RDMA_H

#include "../base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rdma_cfg {
    const char *dev;        /* device name; NULL = the first listed */
    int port;               /* port number (default 1) */
    int gid_index;          /* GID index for RoCE / global routing; -1 = none on IB, 0 on RoCE */
    int qps;                /* QPs per side (default 1, at most 64) */
    int depth;              /* outstanding work requests per QP (default 64) */
    uint64_t min_bytes, max_bytes; /* bandwidth sweep (default 4 KiB .. 1 MiB quick, 2 B .. 8 MiB full) */
    double factor;          /* size multiplier between steps (default 4 quick, 2 full) */
    int iters;              /* bandwidth messages per QP per size (default 1000; quick 200) */
    int lat_iters;          /* latency round trips per size (default 1000; quick 200) */
    uint64_t lat_max_bytes; /* latency sizes: the sweep's sizes up to this (default 64 KiB) */
    double timeout_s;       /* every wait (default 10) */
    bool quick;
} rdma_cfg;

/* One measured row: a bandwidth test (lat false) or a latency test. */
typedef struct rdma_meas {
    const char *op;         /* "write", "read", "send" (static strings) */
    bool lat;
    uint64_t size_bytes;
    int qps;
    uint64_t msgs;          /* messages completed (bandwidth) or round trips (latency) */
    double seconds;         /* first post to last completion (bandwidth) */
    double bw_gbps;         /* BW average = size x msgs / seconds / 1e9 */
    double bw_peak_gbps;    /* best rate over a window of >= depth x qps messages between completions */
    double msg_rate_mpps;   /* msgs / seconds / 1e6 */
    double lat_min_us, lat_typical_us, lat_avg_us, lat_p99_us, lat_p999_us, lat_max_us, lat_stdev_us;
} rdma_meas;

typedef struct rdma_info {
    char dev[64], peer_dev[64];
    int port;
    int link_layer;         /* 1 InfiniBand, 2 Ethernet (RoCE) */
    int mtu_bytes;          /* the path MTU used */
    int active_width, active_speed;
    double line_rate_gbit_s;  /* Gb/s from active_width x active_speed; NaN when unknown */
    int gid_index;          /* used; -1 = no GRH */
    int qps;
} rdma_info;

/* Everything one side of a session produced. Owned by the caller; free with
 * rdma_session_free. */
typedef struct rdma_session {
    rdma_cfg cfg;
    bool disabled;          /* server: refuse with "disabled" (--no-rdma) */
    bool ran;               /* a session was attempted */
    rdma_info info;
    rdma_meas *meas;
    size_t n_meas, cap_meas;
    int rc;                 /* 0, or the failure (in err) */
    cp_error err;
} rdma_session;

void rdma_session_free(rdma_session *s);

/* The net_tcp extra-phase hook: arg is an rdma_session. It returns < 0
 * only when the control connection broke; an RDMA failure lands in
 * s->rc / s->err and the session ends cleanly for both sides. */
int rdma_phase(int fd, bool server, const char *peer, double timeout_s, void *arg, cp_error *err);

/* Both ends in this process (a thread and a socketpair control channel),
 * over the same device: the quick pass and `probe net` without a peer. */
int rdma_loopback(rdma_session *s, cp_error *err);

/* Why RDMA cannot run here, or "" when a device is listed (out gets the
 * device names then, with available = true). */
void rdma_probe_devices(char *out, size_t size, bool *available);

/* Selective signaling (net_rdma.c): a bandwidth test signals every
 * rdma_signal_interval(depth)-th work request of a QP and its last one
 * (perftest's cq_mod 100, here at most half the depth so the queue never
 * drains while waiting for a completion); the send CQ of qps QPs holds
 * rdma_send_cq_entries(qps, depth) = qps x (depth / interval + 1), the most
 * signaled requests that can be outstanding. */
int rdma_signal_interval(int depth);
int rdma_send_cq_entries(int qps, int depth);

/* Port rate in Gb/s as the kernel's sysfs `rate` file shows it, from
 * ibv_port_attr active_width (1,2,4,8,16 = 1X,4X,8X,12X,2X) and
 * active_speed (1 SDR 2.5, 2 DDR 5, 4 QDR 10, 8 FDR10 10, 16 FDR 14,
 * 32 EDR 25, 64 HDR 50, 128 NDR 100, 256 XDR 200 Gb/s per lane); NaN when
 * either code is unknown. */
double rdma_port_rate_gbit_s(int active_width, int active_speed);

#endif
