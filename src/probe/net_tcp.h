/* net_tcp.h - TCP bandwidth and latency between two chainprof processes.
 *
 * One side serves (`--listen [ADDR:]PORT`, one session, then returns), the
 * other connects (`--connect HOST:PORT`) and drives the session over a
 * control connection:
 *   hello   client: "CPNET1", streams, message bytes, ping count, duration ms
 *           (u32 big-endian each); server: "OK"
 *   ping    ping_count round trips of 8 bytes on the control connection
 *           (TCP_NODELAY) -> round-trip percentiles; latency = RTT / 2
 *   'U'     one-way: the client opens `streams` data connections and sends
 *           for the duration, then half-closes; the server counts bytes from
 *           the first accepted stream to the last EOF and reports (u64 bytes,
 *           u64 ns) -> bandwidth = bytes / time as the receiver saw it
 *   'B'     bidirectional: the same with both ends sending on every stream;
 *           bandwidth = bytes both ways / the longer of the two windows
 *   'R'     an extra phase run by cfg->extra (the RDMA session, net_rdma.h):
 *           the client's hook sends 'R' itself when it has something to
 *           run; the server calls its hook on 'R'
 *   'Q'     done
 * A client measuring rounds sends 'U' and 'B' that many times; a server of
 * any version answers each, so rounds need no change of the protocol.
 * Every wait is bounded by timeout_s: connect and accept poll with it, reads
 * and writes use SO_RCVTIMEO/SO_SNDTIMEO. A refused port, an unreachable
 * peer and a peer killed mid-test each give a cp_error naming the peer and
 * the phase (CP_ERR_IO or CP_ERR_TIMEOUT), never a hang.
 *
 * net_loopback runs both ends in one process (server thread on 127.0.0.1 and
 * an ephemeral port): the quick pass and the loopback benchmark use it.
 */
#ifndef CP_PROBE_NET_TCP_H
#define CP_PROBE_NET_TCP_H

#include "../base/error.h"
#include "probe_stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net_cfg {
    const char *host;   /* connect: peer; listen: bind address (NULL/"" = any) */
    const char *port;
    int streams;        /* parallel data connections (default 1) */
    double seconds;     /* per bandwidth phase (default 2) */
    size_t msg_bytes;   /* write size (default 128 KiB) */
    int ping_count;     /* latency round trips (default 1000) */
    int rounds;         /* client: 'U' then 'B' this many times (default 1); a server serves what it is sent */
    double timeout_s;   /* every wait (default 10) */
    /* Extra phase on the control connection after the TCP phases (NULL =
     * none). Returns < 0 only when the control connection broke; its own
     * failures stay in arg. */
    int (*extra)(int fd, bool server, const char *peer, double timeout_s, void *arg, cp_error *err);
    void *extra_arg;
} net_cfg;

#define NET_MAX_ROUNDS 100

typedef struct net_result {
    double oneway_gbps, bidir_gbps;   /* GB/s, 1e9 B/s: the median of the rounds */
    uint64_t oneway_bytes, bidir_bytes; /* of the last round */
    double oneway_round_gbps[NET_MAX_ROUNDS], bidir_round_gbps[NET_MAX_ROUNDS];
    int n_oneway, n_bidir;             /* rounds measured (a server sees only one-way ones) */
    double rtt_p50_us, rtt_p99_us, rtt_min_us, rtt_max_us;
    probe_stats rtt_stats;             /* of every round trip (us) */
    int streams;
    char peer[128];                    /* "addr:port" of the other end */
} net_result;

void net_cfg_defaults(net_cfg *cfg);

/* "[ADDR:]PORT" (listen) or "HOST:PORT" (connect, HOST required); IPv6
 * literals in brackets. host/port point into buf. */
int net_split_hostport(const char *s, bool listen, char *buf, size_t size, const char **host,
                       const char **port, cp_error *err);

/* Bind and listen; *fd is the listening socket, *port_out (optional) its port. */
int net_listen(const net_cfg *cfg, int *fd, int *port_out, cp_error *err);
/* Serve one session on a listening socket (closed by the caller). */
int net_serve(int lfd, const net_cfg *cfg, net_result *res, cp_error *err);
/* Run a session against a server. */
int net_client(const net_cfg *cfg, net_result *res, cp_error *err);
/* Move exactly n bytes on a connected socket (its SO_RCVTIMEO/SO_SNDTIMEO
 * bound each wait); what/peer name the failure: CP_ERR_TIMEOUT when the
 * peer made no progress, CP_ERR_IO when it closed the connection. */
int net_io_full(int fd, void *buf, size_t n, bool out, double timeout_s, const char *what, const char *peer,
                cp_error *err);

/* Both ends in one process on loopback. */
int net_loopback(const net_cfg *cfg, net_result *res, cp_error *err);

#endif
