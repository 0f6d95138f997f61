/* net_tcp.c - TCP bandwidth/latency sessions (protocol in net_tcp.h).
 *
 * One thread per direction per stream: a sender writes msg_bytes chunks until
 * its deadline then half-closes (shutdown SHUT_WR), a receiver reads until EOF.
 * Half-close is what ends a phase, so neither side needs the other's clock.
 * Sockets carry SO_RCVTIMEO/SO_SNDTIMEO = timeout_s, so a stalled peer turns
 * into EAGAIN -> CP_ERR_TIMEOUT; a killed peer into EOF or ECONNRESET ->
 * CP_ERR_IO "peer closed the connection". send() uses MSG_NOSIGNAL: a dead
 * peer must not kill us with SIGPIPE.
 */
#include "net_tcp.h"

#include "../base/util.h"
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NET_MAGIC "CPNET1"
#define NET_MAX_STREAMS 256
#define NET_MAX_BUFFER_BYTES ((uint64_t)1 << 30) /* all streams' buffers, either side */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void net_cfg_defaults(net_cfg *cfg)
{
    if (cfg->streams <= 0)
        cfg->streams = 1;
    if (cfg->streams > NET_MAX_STREAMS)
        cfg->streams = NET_MAX_STREAMS;
    if (!(cfg->seconds > 0))
        cfg->seconds = 2;
    if (!cfg->msg_bytes)
        cfg->msg_bytes = 128u << 10;
    if (cfg->ping_count <= 0)
        cfg->ping_count = 1000;
    if (!(cfg->timeout_s > 0))
        cfg->timeout_s = 10;
}

int net_split_hostport(const char *s, bool listen, char *buf, size_t size, const char **host,
                       const char **port, cp_error *err)
{
    snprintf(buf, size, "%s", s);
    char *colon = strrchr(buf, ':');
    if (buf[0] == '[') { /* [v6]:port */
        char *close = strchr(buf, ']');
        if (!close || close[1] != ':')
            return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "'%s': expected [ADDR]:PORT", s);
        *close = '\0';
        *host = buf + 1;
        *port = close + 2;
    } else if (colon) {
        *colon = '\0';
        *host = buf;
        *port = colon + 1;
    } else {
        if (!listen)
            return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "'%s': expected HOST:PORT", s);
        *host = "";
        *port = buf;
    }
    char *end;
    long p = strtol(*port, &end, 10);
    if (!**port || *end || p < 0 || p > 65535 || (!listen && p == 0))
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "'%s': bad port '%s'", s, *port);
    if (!listen && !**host)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "'%s': missing host", s);
    return 0;
}

static void set_timeouts(int fd, double t)
{
    struct timeval tv = {(time_t)t, (suseconds_t)((t - (double)(time_t)t) * 1e6)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Move exactly n bytes; what/peer name the failure. */
int net_io_full(int fd, void *buf, size_t n, bool out, double timeout_s, const char *what, const char *peer,
                   cp_error *err)
{
    char *p = buf;
    /* the socket's timeout bounds each call ("no progress"); this bounds the
     * whole transfer, so a peer dripping a byte every few seconds cannot hold
     * the probe past its --timeout (issue 21: 45 s and more past 5): the
     * timeout plus what the bytes take at 1 MiB/s, far below any real link */
    double deadline = now_s() + timeout_s + (double)n / (1 << 20);
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            if (n && now_s() > deadline)
                return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1, "%s with %s: too slow, %zu bytes still "
                                    "missing after %.0f s", what, peer, n, timeout_s);
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1, "%s with %s: no progress for %.0f s", what,
                                peer, timeout_s);
        if (k == 0 || errno == ECONNRESET || errno == EPIPE)
            return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "%s with %s: peer closed the connection mid-test",
                                what, peer);
        return cp_error_sys(err, CP_ERR_IO, NULL, "%s with %s", what, peer);
    }
    return 0;
}

static void addr_str(const struct sockaddr *sa, char *out, size_t size)
{
    char h[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, h, sizeof h);
        port = ntohs(a->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof h);
        port = ntohs(a->sin6_port);
    }
    snprintf(out, size, "%s:%d", h, port);
}

static int tcp_connect(const char *host, const char *port, double timeout_s, int *out, cp_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g)
        return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "connect to %s:%s: cannot resolve: %s", host, port,
                            gai_strerror(g));
    int rc = cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "connect to %s:%s: no address", host, port);
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        fcntl(fd, F_SETFL, O_NONBLOCK);
        int r = connect(fd, a->ai_addr, a->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int pr;
            do
                pr = poll(&pfd, 1, (int)(timeout_s * 1000));
            while (pr < 0 && errno == EINTR);
            if (pr == 0) {
                close(fd);
                rc = cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1,
                                  "connect to %s:%s: no answer within %.0f s (peer unreachable)", host, port,
                                  timeout_s);
                continue;
            }
            int e = 0;
            socklen_t el = sizeof e;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
            r = e ? -1 : 0;
            errno = e;
        }
        if (r < 0) {
            int e = errno;
            close(fd);
            errno = e;
            rc = e == ECONNREFUSED ? cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1,
                                                  "connect to %s:%s: connection refused (nothing listens there)",
                                                  host, port)
                                   : cp_error_sys(err, CP_ERR_IO, NULL, "connect to %s:%s", host, port);
            continue;
        }
        fcntl(fd, F_SETFL, 0);
        set_timeouts(fd, timeout_s);
        *out = fd;
        rc = 0;
        break;
    }
    freeaddrinfo(ai);
    return rc;
}

static int tcp_accept(int lfd, double timeout_s, int *out, char *peer, size_t peer_size, cp_error *err)
{
    struct pollfd pfd = {lfd, POLLIN, 0};
    int pr;
    do
        pr = poll(&pfd, 1, (int)(timeout_s * 1000));
    while (pr < 0 && errno == EINTR);
    if (pr == 0)
        return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1, "accept: no peer connected within %.0f s",
                            timeout_s);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (fd < 0)
        return cp_error_sys(err, CP_ERR_IO, NULL, "accept");
    if (peer)
        addr_str((struct sockaddr *)&ss, peer, peer_size);
    set_timeouts(fd, timeout_s);
    *out = fd;
    return 0;
}

int net_listen(const net_cfg *cfg, int *fd_out, int *port_out, cp_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    const char *h = cfg->host && *cfg->host ? cfg->host : NULL;
    int g = getaddrinfo(h, cfg->port, &hints, &ai);
    if (g)
        return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "listen on %s:%s: %s", h ? h : "*", cfg->port,
                            gai_strerror(g));
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol), one = 1;
    if (fd < 0) {
        freeaddrinfo(ai);
        return cp_error_sys(err, CP_ERR_IO, NULL, "listen: socket");
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, NET_MAX_STREAMS) < 0) {
        int e = errno;
        close(fd);
        freeaddrinfo(ai);
        errno = e;
        return cp_error_sys(err, CP_ERR_IO, NULL, "listen on %s:%s", h ? h : "*", cfg->port);
    }
    freeaddrinfo(ai);
    if (port_out) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        getsockname(fd, (struct sockaddr *)&ss, &sl);
        *port_out = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    *fd_out = fd;
    return 0;
}

/* ---- data streams ---- */

typedef struct stream_job {
    int fd;
    bool sending;
    double seconds, timeout_s;
    size_t msg_bytes;
    const char *peer;
    uint64_t bytes;
    double t_end;
    int rc;
    cp_error err;
    pthread_t th;
} stream_job;

static void *stream_main(void *arg)
{
    stream_job *j = arg;
    char *buf = cp_xcalloc(1, j->msg_bytes);
    if (j->sending) {
        double deadline = now_s() + j->seconds;
        while (j->rc == 0 && now_s() < deadline) {
            j->rc = net_io_full(j->fd, buf, j->msg_bytes, true, j->timeout_s, "data send", j->peer, &j->err);
            if (j->rc == 0)
                j->bytes += j->msg_bytes;
        }
        shutdown(j->fd, SHUT_WR);
    } else {
        for (;;) {
            ssize_t k = recv(j->fd, buf, j->msg_bytes, 0);
            if (k > 0) {
                j->bytes += (uint64_t)k;
                continue;
            }
            if (k == 0)
                break;
            if (errno == EINTR)
                continue;
            j->rc = errno == EAGAIN || errno == EWOULDBLOCK
                        ? cp_error_set(&j->err, CP_ERR_TIMEOUT, NULL, 0, 0, -1,
                                       "data receive from %s: no progress for %.0f s", j->peer, j->timeout_s)
                        : cp_error_set(&j->err, CP_ERR_IO, NULL, 0, 0, -1,
                                       "data receive from %s: peer closed the connection mid-test", j->peer);
            break;
        }
    }
    j->t_end = now_s();
    free(buf);
    return NULL;
}

/* Start one (U) or two (B: send + receive) jobs per fd; join; sum. */
static int run_streams(int *fds, int n, bool send_side, bool both, const net_cfg *cfg, const char *peer,
                       uint64_t *rx_bytes, double *t_end, cp_error *err)
{
    int per = both ? 2 : 1;
    stream_job *jobs = cp_xcalloc((size_t)(n * per), sizeof *jobs);
    for (int i = 0; i < n * per; i++) {
        stream_job *j = &jobs[i];
        j->fd = fds[i / per];
        j->sending = both ? (i % 2 == 0) : send_side;
        j->seconds = cfg->seconds;
        j->timeout_s = cfg->timeout_s;
        j->msg_bytes = cfg->msg_bytes;
        j->peer = peer;
        if (pthread_create(&j->th, NULL, stream_main, j) != 0) {
            j->rc = cp_error_set(&j->err, CP_ERR_IO, NULL, 0, 0, -1, "cannot start a stream thread");
            j->th = 0;
        }
    }
    int rc = 0;
    *rx_bytes = 0;
    *t_end = 0;
    for (int i = 0; i < n * per; i++) {
        if (jobs[i].th)
            pthread_join(jobs[i].th, NULL);
        if (jobs[i].rc < 0 && rc == 0) {
            rc = jobs[i].rc;
            if (err)
                *err = jobs[i].err;
        }
        if (!jobs[i].sending)
            *rx_bytes += jobs[i].bytes;
        if (jobs[i].t_end > *t_end)
            *t_end = jobs[i].t_end;
    }
    free(jobs);
    return rc;
}

static void put_u32(unsigned char *p, uint32_t v) { uint32_t b = htonl(v); memcpy(p, &b, 4); }
static uint32_t get_u32(const unsigned char *p) { uint32_t b; memcpy(&b, p, 4); return ntohl(b); }
static void put_u64(unsigned char *p, uint64_t v) { put_u32(p, (uint32_t)(v >> 32)); put_u32(p + 4, (uint32_t)v); }
static uint64_t get_u64(const unsigned char *p) { return ((uint64_t)get_u32(p) << 32) | get_u32(p + 4); }

static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The median of the rounds so far (v is not reordered). */
static double round_median(const double *v, int n)
{
    probe_stats st;
    probe_stats_of(v, (size_t)n, &st);
    return st.median;
}

int net_serve(int lfd, const net_cfg *cfg_in, net_result *res, cp_error *err)
{
    net_cfg cfg = *cfg_in;
    net_cfg_defaults(&cfg);
    memset(res, 0, sizeof *res);
    int cfd = -1, rc;
    if ((rc = tcp_accept(lfd, cfg.timeout_s, &cfd, res->peer, sizeof res->peer, err)) < 0)
        return rc;
    unsigned char hello[6 + 16];
    if ((rc = net_io_full(cfd, hello, sizeof hello, false, cfg.timeout_s, "hello", res->peer, err)) < 0)
        goto out;
    if (memcmp(hello, NET_MAGIC, 6) != 0) {
        rc = cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "hello from %s: not a chainprof net peer", res->peer);
        goto out;
    }
    cfg.streams = (int)get_u32(hello + 6);
    cfg.msg_bytes = get_u32(hello + 10);
    cfg.ping_count = (int)get_u32(hello + 14);
    cfg.seconds = get_u32(hello + 18) / 1000.0;
    /* buffers are streams x msg_bytes: a hello must not make the server
     * reserve what the machine does not have (256 x 64 MiB was 19.9 GB) */
    if (cfg.streams < 1 || cfg.streams > NET_MAX_STREAMS || cfg.msg_bytes < 1 || cfg.msg_bytes > (64u << 20) ||
        (uint64_t)cfg.streams * cfg.msg_bytes > NET_MAX_BUFFER_BYTES || cfg.ping_count > 10000000 ||
        cfg.seconds > 3600) {
        rc = cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "hello from %s: parameters out of range", res->peer);
        goto out;
    }
    res->streams = cfg.streams;
    if ((rc = net_io_full(cfd, "OK", 2, true, cfg.timeout_s, "hello reply", res->peer, err)) < 0)
        goto out;
    for (int i = 0; i < cfg.ping_count && rc == 0; i++) {
        unsigned char p[8];
        rc = net_io_full(cfd, p, 8, false, cfg.timeout_s, "ping", res->peer, err);
        if (rc == 0)
            rc = net_io_full(cfd, p, 8, true, cfg.timeout_s, "pong", res->peer, err);
    }
    while (rc == 0) {
        char phase;
        if ((rc = net_io_full(cfd, &phase, 1, false, cfg.timeout_s, "phase", res->peer, err)) < 0)
            break;
        if (phase == 'Q')
            break;
        if (phase == 'R' && cfg.extra) {
            rc = cfg.extra(cfd, true, res->peer, cfg.timeout_s, cfg.extra_arg, err);
            continue;
        }
        if (phase != 'U' && phase != 'B') {
            rc = cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "phase from %s: unknown code", res->peer);
            break;
        }
        int fds[NET_MAX_STREAMS];
        int got = 0;
        double t0 = 0;
        for (; got < cfg.streams && rc == 0; got++) {
            rc = tcp_accept(lfd, cfg.timeout_s, &fds[got], NULL, 0, err);
            if (rc == 0 && got == 0)
                t0 = now_s();
        }
        if (rc < 0) {
            close_all(fds, got - 1);
            break;
        }
        uint64_t rx;
        double t_end;
        rc = run_streams(fds, cfg.streams, false, phase == 'B', &cfg, res->peer, &rx, &t_end, err);
        close_all(fds, cfg.streams);
        if (rc < 0)
            break;
        unsigned char rep[16];
        put_u64(rep, rx);
        put_u64(rep + 8, (uint64_t)((t_end - t0) * 1e9));
        rc = net_io_full(cfd, rep, 16, true, cfg.timeout_s, "phase report", res->peer, err);
        if (phase == 'U') {
            res->oneway_bytes = rx;
            if (res->n_oneway < NET_MAX_ROUNDS)
                res->oneway_round_gbps[res->n_oneway++] = (double)rx / (t_end - t0) / 1e9;
            res->oneway_gbps = round_median(res->oneway_round_gbps, res->n_oneway);
        }
    }
out:
    close(cfd);
    return rc;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int client_phase(int cfd, char phase, const net_cfg *cfg, const char *peer, net_result *res, cp_error *err)
{
    int rc = net_io_full(cfd, &phase, 1, true, cfg->timeout_s, "phase", peer, err);
    int fds[NET_MAX_STREAMS];
    int n = 0;
    double t0 = now_s();
    for (; n < cfg->streams && rc == 0; n++)
        rc = tcp_connect(cfg->host, cfg->port, cfg->timeout_s, &fds[n], err);
    if (rc < 0) {
        close_all(fds, n - 1);
        return rc;
    }
    uint64_t rx;
    double t_end;
    rc = run_streams(fds, n, true, phase == 'B', cfg, peer, &rx, &t_end, err);
    close_all(fds, n);
    unsigned char rep[16];
    if (rc == 0)
        rc = net_io_full(cfd, rep, 16, false, cfg->timeout_s, "phase report", peer, err);
    if (rc < 0)
        return rc;
    uint64_t srv_bytes = get_u64(rep);
    double srv_s = (double)get_u64(rep + 8) * 1e-9, cli_s = t_end - t0;
    if (phase == 'U') {
        res->oneway_bytes = srv_bytes;
        if (res->n_oneway < NET_MAX_ROUNDS)
            res->oneway_round_gbps[res->n_oneway++] = srv_s > 0 ? (double)srv_bytes / srv_s / 1e9 : NAN;
        res->oneway_gbps = round_median(res->oneway_round_gbps, res->n_oneway);
    } else {
        res->bidir_bytes = srv_bytes + rx;
        double s = srv_s > cli_s ? srv_s : cli_s;
        if (res->n_bidir < NET_MAX_ROUNDS)
            res->bidir_round_gbps[res->n_bidir++] = s > 0 ? (double)res->bidir_bytes / s / 1e9 : NAN;
        res->bidir_gbps = round_median(res->bidir_round_gbps, res->n_bidir);
    }
    return 0;
}

int net_client(const net_cfg *cfg_in, net_result *res, cp_error *err)
{
    net_cfg cfg = *cfg_in;
    net_cfg_defaults(&cfg);
    memset(res, 0, sizeof *res);
    res->streams = cfg.streams;
    snprintf(res->peer, sizeof res->peer, "%s:%s", cfg.host, cfg.port);
    int cfd, rc = tcp_connect(cfg.host, cfg.port, cfg.timeout_s, &cfd, err);
    if (rc < 0)
        return rc;
    unsigned char hello[6 + 16];
    memcpy(hello, NET_MAGIC, 6);
    put_u32(hello + 6, (uint32_t)cfg.streams);
    put_u32(hello + 10, (uint32_t)cfg.msg_bytes);
    put_u32(hello + 14, (uint32_t)cfg.ping_count);
    put_u32(hello + 18, (uint32_t)(cfg.seconds * 1000));
    char ok[2];
    rc = net_io_full(cfd, hello, sizeof hello, true, cfg.timeout_s, "hello", res->peer, err);
    if (rc == 0)
        rc = net_io_full(cfd, ok, 2, false, cfg.timeout_s, "hello reply", res->peer, err);
    if (rc == 0 && memcmp(ok, "OK", 2) != 0)
        rc = cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "hello reply from %s: not a chainprof net peer",
                          res->peer);
    double *rtt = cp_xcalloc((size_t)cfg.ping_count, sizeof *rtt);
    for (int i = 0; i < cfg.ping_count && rc == 0; i++) {
        unsigned char p[8] = {0};
        double t = now_s();
        rc = net_io_full(cfd, p, 8, true, cfg.timeout_s, "ping", res->peer, err);
        if (rc == 0)
            rc = net_io_full(cfd, p, 8, false, cfg.timeout_s, "pong", res->peer, err);
        rtt[i] = (now_s() - t) * 1e6;
    }
    if (rc == 0) {
        probe_stats_of(rtt, (size_t)cfg.ping_count, &res->rtt_stats);
        qsort(rtt, (size_t)cfg.ping_count, sizeof *rtt, cmp_dbl);
        res->rtt_min_us = rtt[0];
        res->rtt_max_us = rtt[cfg.ping_count - 1];
        res->rtt_p50_us = probe_percentile(rtt, (size_t)cfg.ping_count, 50);
        res->rtt_p99_us = probe_percentile(rtt, (size_t)cfg.ping_count, 99);
    }
    free(rtt);
    int rounds = cfg.rounds > 0 ? (cfg.rounds < NET_MAX_ROUNDS ? cfg.rounds : NET_MAX_ROUNDS) : 1;
    for (int r = 0; r < rounds && rc == 0; r++) {
        rc = client_phase(cfd, 'U', &cfg, res->peer, res, err);
        if (rc == 0)
            rc = client_phase(cfd, 'B', &cfg, res->peer, res, err);
    }
    if (rc == 0 && cfg.extra) /* sends its own phase code ('R') when it has something to run */
        rc = cfg.extra(cfd, false, res->peer, cfg.timeout_s, cfg.extra_arg, err);
    if (rc == 0 && net_io_full(cfd, "Q", 1, true, cfg.timeout_s, "quit", res->peer, NULL) < 0 && !cfg.extra)
        rc = cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "quit with %s: peer closed the connection", res->peer);
    /* with an extra phase its failure is already recorded there: the
     * figures measured before it stand */
    close(cfd);
    return rc;
}

typedef struct serve_job {
    int lfd;
    net_cfg cfg;
    net_result res;
    cp_error err;
    int rc;
} serve_job;

static void *serve_main(void *arg)
{
    serve_job *s = arg;
    s->rc = net_serve(s->lfd, &s->cfg, &s->res, &s->err);
    return NULL;
}

int net_loopback(const net_cfg *cfg_in, net_result *res, cp_error *err)
{
    net_cfg cfg = *cfg_in;
    net_cfg_defaults(&cfg);
    cfg.host = "127.0.0.1";
    cfg.port = "0";
    serve_job s = {.cfg = cfg};
    int port, rc = net_listen(&cfg, &s.lfd, &port, err);
    if (rc < 0)
        return rc;
    char pbuf[16];
    snprintf(pbuf, sizeof pbuf, "%d", port);
    cfg.port = pbuf;
    pthread_t th;
    if (pthread_create(&th, NULL, serve_main, &s) != 0) {
        close(s.lfd);
        return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "loopback: cannot start the server thread");
    }
    rc = net_client(&cfg, res, err);
    pthread_join(th, NULL);
    close(s.lfd);
    if (rc == 0 && s.rc < 0) {
        rc = s.rc;
        if (err)
            *err = s.err;
    }
    return rc;
}
