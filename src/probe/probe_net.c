/* probe_net.c - the `net` probe: TCP between two hosts, NIC line rates.
 *
 * Modes: `--listen [ADDR:]PORT` serves one session and reports what it
 * received; `--connect HOST:PORT` drives a session against such a server
 * (one-way and bidirectional bandwidth over --streams connections, ping-pong
 * latency percentiles); neither: both ends in this process over loopback
 * (the quick pass, and the iperf3 comparison in bench/bench_net.sh). The
 * session protocol and its timeouts are in net_tcp.h.
 *
 * Line rates come from sysfs: /sys/class/net/IF/speed (Mb/s, -1 when the
 * link is down or virtual) and /sys/class/infiniband/DEV/ports/N/rate
 * ("100 Gb/sec (4X EDR)"). They become `nic_line_rate` rows and the peak of
 * the bandwidth rows when exactly one physical NIC has a known speed (with
 * several we cannot tell which one TCP used, so peak stays null).
 *
 * RDMA (net_rdma.c): when libibverbs lists a device (or with --rdma), the
 * same session adds RC WRITE/READ/SEND bandwidth over --qps QPs and
 * WRITE/SEND latency, on the control connection after the TCP phases (or
 * both ends in this process without a peer). `net.rdma` in the report says
 * what happened: "measured ...", "unavailable: why" or "off". A missing
 * device or a port that is down on either side is "unavailable" (an error
 * only with --rdma); any other RDMA failure (modify_qp, a completion error,
 * a timeout) fails the probe with its reason, after the TCP rows.
 */
#include "probe.h"

#include "../base/log.h"
#include "../base/util.h"
#include "net_rdma.h"
#include "net_tcp.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool probe_net_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return true; /* without a peer it measures loopback and reads sysfs */
}

/* NIC rows; returns the line rate in GB/s when exactly one NIC has one. */
static double line_rates(probe_ctx *ctx)
{
    int known = 0;
    double only = NAN;
    DIR *d = cp_fsroot_opendir(&ctx->fs, "/sys/class/net");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
            continue;
        char path[600], buf[64];
        snprintf(path, sizeof path, "/sys/class/net/%s/speed", e->d_name);
        long mbps = cp_fsroot_read_line(&ctx->fs, path, buf, sizeof buf) ? strtol(buf, NULL, 10) : -1;
        if (mbps <= 0)
            continue; /* down, virtual (veth, bridge) or unknown */
        char metric[128];
        snprintf(metric, sizeof metric, "nic_line_rate %.64s", e->d_name);
        double gbps = cp_gbit_s_to_gbps((double)mbps / 1e3);
        probe_emit_value(ctx, metric, gbps, "GB/s", NAN, "/sys/class/net/IF/speed (Mb/s) / 8");
        known++;
        only = gbps;
    }
    if (d)
        closedir(d);
    d = cp_fsroot_opendir(&ctx->fs, "/sys/class/infiniband");
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        for (int port = 1; port <= 8; port++) {
            char path[600], buf[64];
            snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/rate", e->d_name, port);
            if (!cp_fsroot_read_line(&ctx->fs, path, buf, sizeof buf))
                continue;
            double gbit_s = strtod(buf, NULL);
            if (!(gbit_s > 0))
                continue;
            char metric[128];
            snprintf(metric, sizeof metric, "rdma_line_rate %.64s/%d", e->d_name, port);
            probe_emit_value(ctx, metric, cp_gbit_s_to_gbps(gbit_s), "GB/s", NAN,
                             "/sys/class/infiniband/DEV/ports/N/rate (Gb/s) / 8");
        }
    }
    if (d)
        closedir(d);
    return known == 1 ? only : NAN;
}

/* A latency row: a statistic of the round trips halved, the spread beside it. */
static void emit_latency(probe_ctx *ctx, const char *metric, const probe_stats *rtt, double k, probe_stat stat,
                         const char *method)
{
    probe_row row = { .metric = metric, .unit = "us", .peak = NAN, .method = method, .wrong = -1, .stat = stat };
    row.stats = *rtt;
    probe_stats_scale(&row.stats, k);
    row.value = probe_stats_pick(&row.stats, stat);
    probe_emit(ctx, &row);
}

static void emit_session(probe_ctx *ctx, const net_result *r, bool server, const char *how, double peak)
{
    char m[320];
    snprintf(m, sizeof m, "%s, %d stream(s), receiver-side bytes / time from first stream to last EOF, median of %d "
             "rounds", how, r->streams, r->n_oneway);
    probe_emit_rounds(ctx, "tcp_bandwidth_oneway", r->oneway_round_gbps, (size_t)r->n_oneway, PROBE_STAT_MEDIAN,
                      "GB/s", peak, m);
    if (server)
        return; /* the client holds the latency and bidirectional figures */
    snprintf(m, sizeof m, "%s, %d stream(s), both directions at once, bytes both ways / longer window, median of %d "
             "rounds", how, r->streams, r->n_bidir);
    probe_emit_rounds(ctx, "tcp_bandwidth_bidir", r->bidir_round_gbps, (size_t)r->n_bidir, PROBE_STAT_MEDIAN, "GB/s",
                      isnan(peak) ? NAN : 2 * peak, m);
    snprintf(m, sizeof m, "%s, %zu 8-byte ping-pongs on the control connection (TCP_NODELAY), RTT / 2; statistics "
             "over the round trips", how, r->rtt_stats.n);
    emit_latency(ctx, "tcp_latency_p50", &r->rtt_stats, 0.5, PROBE_STAT_P50, m);
    emit_latency(ctx, "tcp_latency_p99", &r->rtt_stats, 0.5, PROBE_STAT_P99, m);
    snprintf(m, sizeof m, "%s, %zu 8-byte ping-pongs on the control connection (TCP_NODELAY), the shortest round "
             "trip", how, r->rtt_stats.n);
    emit_latency(ctx, "tcp_rtt_min", &r->rtt_stats, 1.0, PROBE_STAT_BEST_MIN, m);
}

static void rdma_cfg_from(const probe_opts *o, rdma_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->dev = o->rdma_dev;
    c->port = o->ib_port;
    c->gid_index = o->has_gid_index ? o->gid_index : -1;
    c->qps = o->qps;
    c->min_bytes = o->min_bytes;
    c->max_bytes = o->max_bytes;
    c->factor = o->factor;
    c->iters = o->iters;
    c->lat_iters = o->iters;
    c->timeout_s = o->timeout_s;
    c->quick = o->quick;
}

static void emit_rdma(probe_ctx *ctx, const rdma_session *s, const char *how)
{
    const rdma_info *in = &s->info;
    double peak = isfinite(in->line_rate_gbit_s) ? cp_gbit_s_to_gbps(in->line_rate_gbit_s) : NAN;
    char link[256];
    snprintf(link, sizeof link, "%s port %d (%s, %g Gb/s, MTU %d)%s%s", in->dev, in->port,
             in->link_layer == 2 ? "RoCE" : "InfiniBand", in->line_rate_gbit_s, in->mtu_bytes,
             in->peer_dev[0] ? " <-> " : "", in->peer_dev);
    for (size_t i = 0; i < s->n_meas; i++) {
        const rdma_meas *m = &s->meas[i];
        char metric[64], op[32], method[1024];
        snprintf(op, sizeof op, "rdma_%s", m->op);
        probe_row r = { .unit = "GB/s", .op = op, .size_bytes = m->size_bytes, .wrong = -1, .method = method };
        if (!m->lat) {
            snprintf(method, sizeof method,
                     "%s, RC %s, %d QP(s), %llu messages of %llu B, %s; BW average = size x messages / time",
                     how, m->op, m->qps, (unsigned long long)m->msgs, (unsigned long long)m->size_bytes, link);
            r.metric = metric;
            r.peak = peak;
            r.time_us = m->seconds / (double)m->msgs * 1e6; /* per message, as the rate's inverse */
            snprintf(metric, sizeof metric, "rdma_%s_bw", m->op);
            r.value = m->bw_gbps;
            probe_emit(ctx, &r);
            snprintf(metric, sizeof metric, "rdma_%s_bw_peak", m->op);
            r.value = m->bw_peak_gbps;
            probe_emit(ctx, &r);
            snprintf(metric, sizeof metric, "rdma_%s_msg_rate", m->op);
            r.value = m->msg_rate_mpps;
            r.unit = "Mmsg/s";
            r.peak = NAN;
            probe_emit(ctx, &r);
            continue;
        }
        snprintf(method, sizeof method,
                 "%s, RC %s ping-pong on 1 QP, %llu round trips of %llu B, %s; one-way = round trip / 2", how,
                 m->op, (unsigned long long)m->msgs, (unsigned long long)m->size_bytes, link);
        static const char *const stat[] = { "typical", "min", "avg", "p99", "p999", "max", "stdev" };
        const double v[] = { m->lat_typical_us, m->lat_min_us, m->lat_avg_us, m->lat_p99_us,
                             m->lat_p999_us, m->lat_max_us, m->lat_stdev_us };
        r.unit = "us";
        r.peak = NAN;
        r.time_us = 0;
        r.metric = metric;
        for (size_t k = 0; k < CP_ARRAY_LEN(stat); k++) {
            snprintf(metric, sizeof metric, "rdma_%s_lat_%s", m->op, stat[k]);
            r.value = v[k];
            probe_emit(ctx, &r);
        }
    }
}

/* After the session: rows, the status line, and whether it is an error. */
static int rdma_finish(probe_ctx *ctx, rdma_session *s, const char *how, char *status, size_t size, cp_error *err)
{
    emit_rdma(ctx, s, how);
    if (s->rc == 0) {
        if (s->n_meas)
            snprintf(status, size, "measured: %s port %d, %d QP(s), %zu tests", s->info.dev, s->info.port,
                     s->info.qps, s->n_meas);
        else /* the server: the client holds the figures */
            snprintf(status, size, "served: %s port %d, %d QP(s) for the peer's tests", s->info.dev,
                     s->info.port, s->info.qps);
        return 0;
    }
    snprintf(status, size, "%s: %s", s->rc == CP_ERR_UNAVAILABLE ? "unavailable" : "failed", s->err.msg);
    if (s->rc == CP_ERR_UNAVAILABLE && ctx->opts.rdma <= 0)
        return 0; /* auto mode: a missing device or a down port is a fact, not an error */
    if (err) {
        *err = s->err;
        snprintf(err->msg, sizeof err->msg, "rdma: %.*s", (int)sizeof err->msg - 8, s->err.msg);
    }
    return s->rc;
}

int probe_net_run(probe_ctx *ctx, cp_error *err)
{
    const probe_opts *o = &ctx->opts;
    double peak = line_rates(ctx);
    net_cfg cfg = {.streams = o->streams, .seconds = o->seconds, .timeout_s = o->timeout_s,
                   .ping_count = o->quick ? 200 : 1000, .rounds = probe_rounds(ctx, 3, 3)};
    if (o->quick && !(cfg.seconds > 0))
        cfg.seconds = 0.25;
    net_result r;
    char buf[300], how[400], status[640];
    int rc;
    /* RDMA: decided before the session so a client knows whether to ask */
    rdma_session rs;
    memset(&rs, 0, sizeof rs);
    rdma_cfg_from(o, &rs.cfg);
    bool avail = false;
    rdma_probe_devices(status, sizeof status, &avail);
    bool want = o->rdma > 0 || (o->rdma == 0 && avail);
    if (o->rdma < 0)
        snprintf(status, sizeof status, "off (--no-rdma)");
    else if (!avail && o->rdma > 0)
        rs.rc = cp_error_set(&rs.err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "%s", status + (strncmp(status, "unavailable: ", 13) ? 0 : 13));
    if (o->listen) {
        if ((rc = net_split_hostport(o->listen, true, buf, sizeof buf, &cfg.host, &cfg.port, err)) < 0)
            goto out;
        int lfd, port;
        if ((rc = net_listen(&cfg, &lfd, &port, err)) < 0)
            goto out;
        /* the server always answers an RDMA request, if only with why not */
        rs.disabled = o->rdma < 0;
        cfg.extra = rdma_phase;
        cfg.extra_arg = &rs;
        cp_log_info("net: listening on %s:%d (one session, %.0f s timeout)", *cfg.host ? cfg.host : "*", port,
                    cfg.timeout_s > 0 ? cfg.timeout_s : 10);
        rc = net_serve(lfd, &cfg, &r, err);
        close(lfd);
        snprintf(how, sizeof how, "served %s", r.peer);
        if (rc == 0)
            emit_session(ctx, &r, true, how, peak);
    } else if (o->connect) {
        if ((rc = net_split_hostport(o->connect, false, buf, sizeof buf, &cfg.host, &cfg.port, err)) < 0)
            goto out;
        if (want && rs.rc == 0) {
            cfg.extra = rdma_phase;
            cfg.extra_arg = &rs;
        }
        rc = net_client(&cfg, &r, err);
        snprintf(how, sizeof how, "to %s", o->connect);
        if (rc == 0)
            emit_session(ctx, &r, false, how, peak);
    } else {
        rc = net_loopback(&cfg, &r, err);
        snprintf(how, sizeof how, "loopback 127.0.0.1 (both ends in this process)");
        if (rc == 0)
            emit_session(ctx, &r, false, how, NAN); /* loopback is not bounded by a NIC */
        if (rc == 0 && want && rs.rc == 0) {
            snprintf(how, sizeof how, "loopback (both ends in this process, one device)");
            rc = rdma_loopback(&rs, err);
        }
    }
    if (rc == 0 && (rs.ran || rs.rc < 0))
        rc = rdma_finish(ctx, &rs, how, status, sizeof status, err);
    else if (rc == 0 && o->listen && o->rdma >= 0 && avail) {
        char devs[sizeof status];
        snprintf(devs, sizeof devs, "%s", status);
        snprintf(status, sizeof status, "not run: the peer did not ask for RDMA (%.500s here)", devs);
    }
out:
    if (ctx->rep) {
        rep_node *n = rep_obj(ctx->rep, ctx->rep->root, "net", "network");
        rep_str(ctx->rep, n, "rdma", "RDMA", status);
    }
    rdma_session_free(&rs);
    return rc;
}
