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
 * RDMA: libibverbs.so.1 is opened with dlopen and its device list read
 * through three owned declarations (no verbs header needed at build time);
 * RDMA is then reported as unavailable with the reason (library missing, no
 * device, or devices present but no RC measurement in this build yet),
 * never silently absent.
 */
#include "probe.h"

#include "../base/log.h"
#include "../base/util.h"
#include "net_tcp.h"

#include <dirent.h>
#include <dlfcn.h>
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

static bool read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

/* NIC rows; returns the line rate in GB/s when exactly one NIC has one. */
static double line_rates(probe_ctx *ctx)
{
    int known = 0;
    double only = NAN;
    DIR *d = opendir("/sys/class/net");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
            continue;
        char path[600], buf[64];
        snprintf(path, sizeof path, "/sys/class/net/%s/speed", e->d_name);
        long mbps = read_line(path, buf, sizeof buf) ? strtol(buf, NULL, 10) : -1;
        if (mbps <= 0)
            continue; /* down, virtual (veth, bridge) or unknown */
        char metric[128];
        snprintf(metric, sizeof metric, "nic_line_rate %.64s", e->d_name);
        double gbps = (double)mbps * 1e6 / 8 / 1e9;
        probe_emit_value(ctx, metric, gbps, "GB/s", NAN, "/sys/class/net/IF/speed (Mb/s) / 8");
        known++;
        only = gbps;
    }
    if (d)
        closedir(d);
    d = opendir("/sys/class/infiniband");
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        for (int port = 1; port <= 8; port++) {
            char path[600], buf[64];
            snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/rate", e->d_name, port);
            if (!read_line(path, buf, sizeof buf))
                continue;
            double gbit = strtod(buf, NULL);
            if (!(gbit > 0))
                continue;
            char metric[128];
            snprintf(metric, sizeof metric, "rdma_line_rate %.64s/%d", e->d_name, port);
            probe_emit_value(ctx, metric, gbit / 8, "GB/s", NAN,
                             "/sys/class/infiniband/DEV/ports/N/rate (Gb/s) / 8");
        }
    }
    if (d)
        closedir(d);
    return known == 1 ? only : NAN;
}

/* Owned declarations of the three libibverbs calls used (stable since
 * IBVERBS_1.1): the device is opaque to us. */
struct ibv_device;
typedef struct ibv_device **(*ibv_get_device_list_fn)(int *num_devices);
typedef void (*ibv_free_device_list_fn)(struct ibv_device **list);
typedef const char *(*ibv_get_device_name_fn)(struct ibv_device *device);

/* The rdma status line: why RDMA was not measured. */
static void rdma_status(char *out, size_t size)
{
    void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(out, size, "unavailable: libibverbs.so.1 cannot be loaded (%s)", e ? e : "not found");
        return;
    }
    ibv_get_device_list_fn get = (ibv_get_device_list_fn)dlsym(h, "ibv_get_device_list");
    ibv_free_device_list_fn put = (ibv_free_device_list_fn)dlsym(h, "ibv_free_device_list");
    ibv_get_device_name_fn name = (ibv_get_device_name_fn)dlsym(h, "ibv_get_device_name");
    if (!get || !put || !name) {
        snprintf(out, size, "unavailable: libibverbs.so.1 lacks ibv_get_device_list/ibv_get_device_name");
        dlclose(h);
        return;
    }
    int n = 0;
    struct ibv_device **list = get(&n);
    if (!list || n <= 0) {
        snprintf(out, size, "unavailable: no RDMA device (libibverbs lists none)");
    } else {
        size_t off = (size_t)snprintf(out, size, "unavailable: RDMA device(s)");
        for (int i = 0; i < n && off < size; i++)
            off += (size_t)snprintf(out + off, size - off, " %s", name(list[i]));
        if (off < size)
            snprintf(out + off, size - off, " found, but this build has no RC write/read/send measurement yet");
    }
    if (list)
        put(list);
    /* h stays open on purpose: libibverbs keeps its device cache in globals,
     * and unloading it would turn that cache into reported leaks */
}

static void emit_session(probe_ctx *ctx, const net_result *r, bool server, const char *how, double peak)
{
    char m[256];
    snprintf(m, sizeof m, "%s, %d stream(s), receiver-side bytes / time from first stream to last EOF", how,
             r->streams);
    probe_emit_value(ctx, "tcp_bandwidth_oneway", r->oneway_gbps, "GB/s", peak, m);
    if (server)
        return; /* the client holds the latency and bidirectional figures */
    snprintf(m, sizeof m, "%s, %d stream(s), both directions at once, bytes both ways / longer window", how,
             r->streams);
    probe_emit_value(ctx, "tcp_bandwidth_bidir", r->bidir_gbps, "GB/s", isnan(peak) ? NAN : 2 * peak, m);
    snprintf(m, sizeof m, "%s, 8-byte ping-pong on the control connection (TCP_NODELAY), RTT / 2", how);
    probe_emit_value(ctx, "tcp_latency_p50", r->rtt_p50_us / 2, "us", NAN, m);
    probe_emit_value(ctx, "tcp_latency_p99", r->rtt_p99_us / 2, "us", NAN, m);
    probe_emit_value(ctx, "tcp_rtt_min", r->rtt_min_us, "us", NAN, m);
}

int probe_net_run(probe_ctx *ctx, cp_error *err)
{
    const probe_opts *o = &ctx->opts;
    double peak = line_rates(ctx);
    net_cfg cfg = {.streams = o->streams, .seconds = o->seconds, .timeout_s = o->timeout_s,
                   .ping_count = o->quick ? 200 : 1000};
    if (o->quick && !(cfg.seconds > 0))
        cfg.seconds = 0.5;
    net_result r;
    char buf[300], how[400];
    int rc;
    if (ctx->rep) {
        rep_node *n = rep_obj(ctx->rep, ctx->rep->root, "net", "network");
        char why[512];
        rdma_status(why, sizeof why);
        rep_str(ctx->rep, n, "rdma", "RDMA", why);
    }
    if (o->listen) {
        if ((rc = net_split_hostport(o->listen, true, buf, sizeof buf, &cfg.host, &cfg.port, err)) < 0)
            return rc;
        int lfd, port;
        if ((rc = net_listen(&cfg, &lfd, &port, err)) < 0)
            return rc;
        cp_log_info("net: listening on %s:%d (one session, %.0f s timeout)", *cfg.host ? cfg.host : "*", port,
                    cfg.timeout_s > 0 ? cfg.timeout_s : 10);
        rc = net_serve(lfd, &cfg, &r, err);
        close(lfd);
        snprintf(how, sizeof how, "served %s", r.peer);
        if (rc == 0)
            emit_session(ctx, &r, true, how, peak);
        return rc;
    }
    if (o->connect) {
        if ((rc = net_split_hostport(o->connect, false, buf, sizeof buf, &cfg.host, &cfg.port, err)) < 0)
            return rc;
        rc = net_client(&cfg, &r, err);
        snprintf(how, sizeof how, "to %s", o->connect);
    } else {
        rc = net_loopback(&cfg, &r, err);
        snprintf(how, sizeof how, "loopback 127.0.0.1 (both ends in this process)");
        peak = NAN; /* loopback is not bounded by a NIC */
    }
    if (rc == 0)
        emit_session(ctx, &r, false, how, peak);
    return rc;
}
