/* net_rdma.c - RDMA RC bandwidth and latency (session protocol in net_rdma.h).
 *
 * Each side owns one buffer per QP of 2 x max message bytes: the first
 * half is the source of what it sends or writes (tx), the second the
 * target of what the peer writes or sends (rx); a READ reads the peer's tx
 * half into the local rx half. All QPs share one send CQ and one receive
 * CQ.
 *
 * Selective signaling, as perftest's ib_*_bw (its cq_mod, default 100,
 * which perftest clamps to the send-queue depth): a bandwidth test signals
 * only every sig-th work request of a QP and the QP's last one, with
 * sig = min(100, depth / 2): at most half the depth, so when the signaled
 * request completes the other half is still in flight and the queue never
 * drains while the next batch is posted (with sig = depth, the default
 * depth of 64 would idle the link once per 64 messages). A work request's
 * send-queue slot is free again only once a completion at or after it has
 * been polled, so a completion retires every request of its QP up to it:
 * wr_id carries the request's sequence number on its QP (wr_id = seq << 8
 * | qp). At most depth requests are outstanding per QP, so at most
 * depth / sig + 1 of them are signaled: the send CQ has
 * qps x (depth / sig + 1) entries, the receive CQ (every receive
 * completes) qps x depth. After an error a real QP flushes every
 * outstanding request into the CQ; that may overrun it, but the first
 * error has been seen by then and ends the test. Latency tests have one
 * request in flight and signal it.
 *
 * Payload check: after every bandwidth test the side that received the
 * data compares it with a pattern both sides compute from (test, size,
 * QP): for WRITE and SEND the client sends the pattern and the server
 * checks its rx half (for WRITE once the client says it is done: the
 * server's CPU sees nothing else of the transfer); for READ the server
 * holds the pattern in its tx half and the client checks what it read.
 * The receiving half is first filled with the pattern's complement, so a
 * message that never landed cannot pass. A mismatch fails the test with
 * the QP, the first differing byte and the count of differing bytes.
 *
 * Latency, as ib_write_lat: the client writes `size` bytes whose last byte
 * carries an iteration marker into the server's rx half; the server spins
 * on that byte, then writes the same back; the client spins on its own rx
 * half. One-way latency = round trip / 2. SEND latency does the same with
 * a posted receive and a receive completion instead of the spin. Spins and
 * completion polls read the clock every 1024 rounds and give up at the
 * deadline with the operation, the size and how far it got.
 */
#include "net_rdma.h"

#include "../base/util.h"
#include "net_tcp.h"
#include "probe.h"
#include "verbs_abi.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RDMA_MAGIC "CPRDMA2" /* 2: the payload check (the write check needs the order below) */
#define RDMA_SIGNAL_EVERY 100   /* perftest's default cq_mod */
#define RDMA_MAX_QPS 64
#define RDMA_MSG 256            /* status message bytes on the wire */
#define EP_BYTES (2 + 4 + 4 + 16 + 8 + 4)

enum { T_END = 0, T_BW_WRITE = 1, T_BW_READ, T_BW_SEND, T_LAT_WRITE, T_LAT_SEND };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int rdma_signal_interval(int depth)
{
    int half = depth / 2;
    return half < 1 ? 1 : half < RDMA_SIGNAL_EVERY ? half : RDMA_SIGNAL_EVERY;
}

int rdma_send_cq_entries(int qps, int depth)
{
    return qps * (depth / rdma_signal_interval(depth) + 1);
}

double rdma_port_rate_gbit_s(int width, int speed)
{
    int lanes;
    switch (width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return NAN;
    }
    double lane;
    switch (speed) {
    case 1: lane = 2.5; break;
    case 2: lane = 5; break;
    case 4: case 8: lane = 10; break;
    case 16: lane = 14; break;
    case 32: lane = 25; break;
    case 64: lane = 50; break;
    case 128: lane = 100; break;
    case 256: lane = 200; break;
    default: return NAN;
    }
    return lanes * lane;
}

/* ---- the library ---- */

typedef struct vlib {
    void *h;
    cpv_get_device_list_fn get_device_list;
    cpv_free_device_list_fn free_device_list;
    cpv_get_device_name_fn get_device_name;
    cpv_open_device_fn open_device;
    cpv_close_device_fn close_device;
    cpv_query_device_fn query_device;
    cpv_query_port_fn query_port;
    cpv_query_gid_fn query_gid;
    cpv_alloc_pd_fn alloc_pd;
    cpv_dealloc_pd_fn dealloc_pd;
    cpv_reg_mr_fn reg_mr;
    cpv_dereg_mr_fn dereg_mr;
    cpv_create_cq_fn create_cq;
    cpv_destroy_cq_fn destroy_cq;
    cpv_create_qp_fn create_qp;
    cpv_destroy_qp_fn destroy_qp;
    cpv_modify_qp_fn modify_qp;
} vlib;

/* Open libibverbs (or CHAINPROF_IBVERBS_LIB) and resolve every symbol.
 * The handle is never closed: libibverbs keeps its device cache and
 * provider plugins in globals that unloading would turn into leaks. */
static int vlib_open(vlib *L, cp_error *err)
{
    memset(L, 0, sizeof *L);
    const char *path = getenv("CHAINPROF_IBVERBS_LIB");
    if (!path || !*path)
        path = "libibverbs.so.1";
    L->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!L->h) {
        const char *e = dlerror();
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "%s cannot be loaded (%s)", path,
                            e ? e : "not found");
    }
    static const struct { const char *name; size_t off; } syms[] = {
#define S(f) { "ibv_" #f, offsetof(vlib, f) }
        S(get_device_list), S(free_device_list), S(get_device_name), S(open_device), S(close_device),
        S(query_device), S(query_port), S(query_gid), S(alloc_pd), S(dealloc_pd), S(reg_mr), S(dereg_mr),
        S(create_cq), S(destroy_cq), S(create_qp), S(destroy_qp), S(modify_qp),
#undef S
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(syms); i++) {
        void *p = dlsym(L->h, syms[i].name);
        if (!p)
            return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "%s lacks %s", path, syms[i].name);
        memcpy((char *)L + syms[i].off, &p, sizeof p); /* POSIX: dlsym pointers convert */
    }
    return 0;
}

void rdma_probe_devices(char *out, size_t size, bool *available)
{
    vlib L;
    cp_error e;
    cp_error_clear(&e);
    *available = false;
    if (vlib_open(&L, &e) < 0) {
        snprintf(out, size, "unavailable: %s", e.msg);
        return;
    }
    int n = 0;
    struct cpv_device **list = L.get_device_list(&n);
    if (!list || n <= 0) {
        snprintf(out, size, "unavailable: no RDMA device (libibverbs lists none)");
    } else {
        *available = true;
        size_t off = (size_t)snprintf(out, size, "device(s)");
        for (int i = 0; i < n && off < size; i++)
            off += (size_t)snprintf(out + off, size - off, " %s", L.get_device_name(list[i]));
    }
    if (list)
        L.free_device_list(list);
}

/* ---- one side: device, QPs, buffers ---- */

typedef struct ep {
    uint16_t lid;
    uint32_t qpn, psn;
    uint8_t gid[16];
    uint64_t addr;
    uint32_t rkey;
} ep;

typedef struct side {
    vlib L;
    const rdma_cfg *cfg;
    struct cpv_context *ctx;
    struct cpv_pd *pd;
    struct cpv_cq *scq, *rcq;
    struct cpv_qp *qp[RDMA_MAX_QPS];
    struct cpv_mr *mr[RDMA_MAX_QPS];
    char *buf[RDMA_MAX_QPS];
    int qps, depth;
    int sig;                  /* bandwidth tests signal every sig-th request of a QP */
    size_t half;              /* max message bytes: tx at 0, rx at half */
    struct cpv_port_attr pa;
    int max_rd_atomic;
    uint32_t max_inline;
    int gid_index;
    ep local[RDMA_MAX_QPS], remote[RDMA_MAX_QPS];
    rdma_info *info;
} side;

static const char *port_state_name(int s)
{
    static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };
    return s >= 0 && s <= 5 ? names[s] : "?";
}

static const char *wc_status_str(int s)
{
    static const char *const names[] = {
        "success", "local length error", "local QP operation error", "local EE context operation error",
        "local protection error", "work request flushed", "memory window bind error", "bad response",
        "local access error", "remote invalid request", "remote access error", "remote operation error",
        "transport retry counter exceeded", "RNR retry counter exceeded", "local RDD violation",
        "remote invalid RD request", "remote aborted", "invalid EE context number", "invalid EE context state",
        "fatal error", "response timeout", "general error",
    };
    return s >= 0 && (size_t)s < CP_ARRAY_LEN(names) ? names[s] : "unknown status";
}

static void side_close(side *S)
{
    for (int i = 0; i < RDMA_MAX_QPS; i++) {
        if (S->qp[i])
            S->L.destroy_qp(S->qp[i]);
        if (S->mr[i])
            S->L.dereg_mr(S->mr[i]);
        free(S->buf[i]);
    }
    if (S->scq)
        S->L.destroy_cq(S->scq);
    if (S->rcq)
        S->L.destroy_cq(S->rcq);
    if (S->pd)
        S->L.dealloc_pd(S->pd);
    if (S->ctx)
        S->L.close_device(S->ctx);
    memset(S->qp, 0, sizeof S->qp);
    memset(S->mr, 0, sizeof S->mr);
    memset(S->buf, 0, sizeof S->buf);
    S->scq = S->rcq = NULL;
    S->pd = NULL;
    S->ctx = NULL;
}

/* Open the device and create everything up to QPs in INIT. */
static int side_open(side *S, const rdma_cfg *cfg, int qps, int depth, size_t half, rdma_info *info,
                     cp_error *err)
{
    memset(S, 0, sizeof *S);
    S->cfg = cfg;
    S->qps = qps;
    S->depth = depth;
    S->half = half;
    S->info = info;
    int rc = vlib_open(&S->L, err);
    if (rc < 0)
        return rc;
    int n = 0;
    struct cpv_device **list = S->L.get_device_list(&n);
    if (!list || n <= 0) {
        if (list)
            S->L.free_device_list(list);
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "no RDMA device (libibverbs lists none)");
    }
    struct cpv_device *dev = NULL;
    for (int i = 0; i < n && !dev; i++)
        if (!cfg->dev || !strcmp(cfg->dev, S->L.get_device_name(list[i])))
            dev = list[i];
    if (!dev) {
        char have[256];
        size_t off = 0;
        have[0] = '\0';
        for (int i = 0; i < n && off < sizeof have; i++)
            off += (size_t)snprintf(have + off, sizeof have - off, "%s%s", i ? " " : "",
                                    S->L.get_device_name(list[i]));
        S->L.free_device_list(list);
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "RDMA device '%s' not found (have: %s)",
                            cfg->dev, have);
    }
    snprintf(info->dev, sizeof info->dev, "%s", S->L.get_device_name(dev));
    S->ctx = S->L.open_device(dev);
    S->L.free_device_list(list);
    if (!S->ctx)
        return cp_error_sys(err, CP_ERR_IO, NULL, "cannot open RDMA device %s", info->dev);
    int port = cfg->port > 0 ? cfg->port : 1;
    info->port = port;
    struct cpv_device_attr da;
    memset(&da, 0, sizeof da);
    if ((rc = S->L.query_device(S->ctx, &da)) != 0) {
        errno = rc;
        return cp_error_sys(err, CP_ERR_IO, NULL, "query_device on %s", info->dev);
    }
    S->max_rd_atomic = da.max_qp_rd_atom > 16 ? 16 : da.max_qp_rd_atom < 1 ? 1 : da.max_qp_rd_atom;
    memset(&S->pa, 0, sizeof S->pa);
    if ((rc = S->L.query_port(S->ctx, (uint8_t)port, &S->pa)) != 0) {
        errno = rc;
        return cp_error_sys(err, CP_ERR_IO, NULL, "query_port %d on %s", port, info->dev);
    }
    if (S->pa.state != CPV_PORT_ACTIVE)
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1,
                            "port %d of %s is not active (state %s): link down or no subnet manager", port,
                            info->dev, port_state_name(S->pa.state));
    info->link_layer = S->pa.link_layer;
    info->active_width = S->pa.active_width;
    info->active_speed = S->pa.active_speed;
    info->line_rate_gbit_s = rdma_port_rate_gbit_s(S->pa.active_width, S->pa.active_speed);
    info->mtu_bytes = cpv_mtu_bytes(S->pa.active_mtu);
    info->qps = qps;
    bool roce = S->pa.link_layer == CPV_LINK_LAYER_ETHERNET;
    S->gid_index = cfg->gid_index >= 0 ? cfg->gid_index : roce ? 0 : -1;
    info->gid_index = S->gid_index;
    union cpv_gid gid;
    memset(&gid, 0, sizeof gid);
    if (S->gid_index >= 0 && (rc = S->L.query_gid(S->ctx, (uint8_t)port, S->gid_index, &gid)) != 0) {
        errno = rc;
        return cp_error_sys(err, CP_ERR_UNAVAILABLE, NULL, "GID index %d of %s port %d", S->gid_index,
                            info->dev, port);
    }
    if (!(S->pd = S->L.alloc_pd(S->ctx)))
        return cp_error_sys(err, CP_ERR_IO, NULL, "alloc_pd on %s", info->dev);
    S->sig = rdma_signal_interval(depth);
    int scqe = rdma_send_cq_entries(qps, depth), rcqe = qps * depth;
    if (!(S->scq = S->L.create_cq(S->ctx, scqe, NULL, NULL, 0)) ||
        !(S->rcq = S->L.create_cq(S->ctx, rcqe, NULL, NULL, 0)))
        return cp_error_sys(err, CP_ERR_IO, NULL, "create_cq (%d and %d entries) on %s", scqe, rcqe, info->dev);
    for (int q = 0; q < qps; q++) {
        if (posix_memalign((void **)&S->buf[q], 4096, 2 * half) != 0)
            return cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1, "out of memory for RDMA buffers");
        memset(S->buf[q], 0, 2 * half);
        S->mr[q] = S->L.reg_mr(S->pd, S->buf[q], 2 * half,
                               CPV_ACCESS_LOCAL_WRITE | CPV_ACCESS_REMOTE_WRITE | CPV_ACCESS_REMOTE_READ);
        if (!S->mr[q])
            return cp_error_sys(err, CP_ERR_IO, NULL, "reg_mr of %zu bytes on %s (locked-memory limit?)",
                                2 * half, info->dev);
        struct cpv_qp_init_attr ia;
        memset(&ia, 0, sizeof ia);
        ia.send_cq = S->scq;
        ia.recv_cq = S->rcq;
        ia.qp_type = CPV_QPT_RC;
        ia.cap.max_send_wr = (uint32_t)depth;
        ia.cap.max_recv_wr = (uint32_t)depth;
        ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
        ia.cap.max_inline_data = 64;
        if (!(S->qp[q] = S->L.create_qp(S->pd, &ia)))
            return cp_error_sys(err, CP_ERR_IO, NULL, "create_qp (RC, depth %d) on %s", depth, info->dev);
        S->max_inline = ia.cap.max_inline_data;
        struct cpv_qp_attr a;
        memset(&a, 0, sizeof a);
        a.qp_state = CPV_QPS_INIT;
        a.pkey_index = 0;
        a.port_num = (uint8_t)port;
        a.qp_access_flags = CPV_ACCESS_LOCAL_WRITE | CPV_ACCESS_REMOTE_WRITE | CPV_ACCESS_REMOTE_READ;
        if ((rc = S->L.modify_qp(S->qp[q], &a,
                                 CPV_QP_STATE | CPV_QP_PKEY_INDEX | CPV_QP_PORT | CPV_QP_ACCESS_FLAGS)) != 0) {
            errno = rc;
            return cp_error_sys(err, CP_ERR_IO, NULL, "modify_qp to INIT on %s", info->dev);
        }
        ep *e = &S->local[q];
        e->lid = S->pa.lid;
        e->qpn = S->qp[q]->qp_num;
        e->psn = (uint32_t)(((unsigned)getpid() * 2654435761u + (unsigned)q * 40503u) & 0xffffff);
        memcpy(e->gid, gid.raw, 16);
        e->addr = (uint64_t)(uintptr_t)S->buf[q];
        e->rkey = S->mr[q]->rkey;
    }
    return 0;
}

/* INIT -> RTR -> RTS against the remote endpoints. */
static int side_connect(side *S, cp_error *err)
{
    const rdma_info *info = S->info;
    int mtu = S->pa.active_mtu >= 1 && S->pa.active_mtu <= 5 ? S->pa.active_mtu : 3;
    for (int q = 0; q < S->qps; q++) {
        struct cpv_qp_attr a;
        memset(&a, 0, sizeof a);
        a.qp_state = CPV_QPS_RTR;
        a.path_mtu = mtu;
        a.dest_qp_num = S->remote[q].qpn;
        a.rq_psn = S->remote[q].psn;
        a.max_dest_rd_atomic = (uint8_t)S->max_rd_atomic;
        a.min_rnr_timer = 12;
        a.ah_attr.dlid = S->remote[q].lid;
        a.ah_attr.port_num = (uint8_t)info->port;
        if (S->gid_index >= 0) {
            a.ah_attr.is_global = 1;
            memcpy(a.ah_attr.grh.dgid.raw, S->remote[q].gid, 16);
            a.ah_attr.grh.sgid_index = (uint8_t)S->gid_index;
            a.ah_attr.grh.hop_limit = 64;
        }
        int rc = S->L.modify_qp(S->qp[q], &a,
                                CPV_QP_STATE | CPV_QP_AV | CPV_QP_PATH_MTU | CPV_QP_DEST_QPN | CPV_QP_RQ_PSN |
                                    CPV_QP_MAX_DEST_RD_ATOMIC | CPV_QP_MIN_RNR_TIMER);
        if (rc != 0) {
            errno = rc;
            return cp_error_sys(err, CP_ERR_IO, NULL, "modify_qp to RTR on %s (QP %u -> remote QP %u, lid %u%s)",
                                info->dev, S->local[q].qpn, S->remote[q].qpn, S->remote[q].lid,
                                S->gid_index >= 0 ? ", GID" : "");
        }
        memset(&a, 0, sizeof a);
        a.qp_state = CPV_QPS_RTS;
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = S->local[q].psn;
        a.max_rd_atomic = (uint8_t)S->max_rd_atomic;
        rc = S->L.modify_qp(S->qp[q], &a,
                            CPV_QP_STATE | CPV_QP_TIMEOUT | CPV_QP_RETRY_CNT | CPV_QP_RNR_RETRY | CPV_QP_SQ_PSN |
                                CPV_QP_MAX_QP_RD_ATOMIC);
        if (rc != 0) {
            errno = rc;
            return cp_error_sys(err, CP_ERR_IO, NULL, "modify_qp to RTS on %s (QP %u)", info->dev,
                                S->local[q].qpn);
        }
    }
    S->info->mtu_bytes = cpv_mtu_bytes(mtu);
    return 0;
}

/* ---- work requests and completions ---- */

static int post_send(side *S, int q, int op, size_t size, bool inl, bool signaled, uint64_t wr_id, cp_error *err)
{
    struct cpv_sge sge = { (uint64_t)(uintptr_t)S->buf[q] + (op == CPV_WR_RDMA_READ ? S->half : 0),
                           (uint32_t)size, S->mr[q]->lkey };
    struct cpv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = (signaled ? CPV_SEND_SIGNALED : 0) | (inl ? CPV_SEND_INLINE : 0);
    if (op != CPV_WR_SEND) {
        /* WRITE lands in the peer's rx half; READ fetches the peer's tx half */
        wr.wr.rdma.remote_addr = S->remote[q].addr + (op == CPV_WR_RDMA_WRITE ? S->half : 0);
        wr.wr.rdma.rkey = S->remote[q].rkey;
    }
    int rc = S->ctx->ops.post_send(S->qp[q], &wr, &bad);
    if (rc != 0) {
        errno = rc;
        return cp_error_sys(err, CP_ERR_IO, NULL, "post_send on %s QP %u", S->info->dev, S->local[q].qpn);
    }
    return 0;
}

static int post_recv(side *S, int q, size_t size, cp_error *err)
{
    struct cpv_sge sge = { (uint64_t)(uintptr_t)S->buf[q] + S->half, (uint32_t)size, S->mr[q]->lkey };
    struct cpv_recv_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)q;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    int rc = S->ctx->ops.post_recv(S->qp[q], &wr, &bad);
    if (rc != 0) {
        errno = rc;
        return cp_error_sys(err, CP_ERR_IO, NULL, "post_recv on %s QP %u", S->info->dev, S->local[q].qpn);
    }
    return 0;
}

/* Poll up to max completions; waits (spinning) until at least one arrives
 * or the deadline passes. what/done/total name the failure. */
static int poll_some(side *S, struct cpv_cq *cq, struct cpv_wc *wc, int max, double deadline, const char *what,
                     uint64_t done, uint64_t total, cp_error *err)
{
    for (unsigned spin = 0;; spin++) {
        int n = S->ctx->ops.poll_cq(cq, max, wc);
        if (n < 0)
            return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "%s: poll_cq failed on %s", what, S->info->dev);
        for (int i = 0; i < n; i++)
            if (wc[i].status != CPV_WC_SUCCESS)
                return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1,
                                    "%s: completion error on %s QP %u: %s (status %d, vendor error 0x%x) after "
                                    "%llu of %llu",
                                    what, S->info->dev, wc[i].qp_num, wc_status_str(wc[i].status), wc[i].status,
                                    wc[i].vendor_err, (unsigned long long)done, (unsigned long long)total);
        if (n > 0)
            return n;
        if ((spin & 1023) == 1023 && now_s() > deadline)
            return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1,
                                "%s: no completion within %.0f s on %s (%llu of %llu done; peer gone or path "
                                "broken)",
                                what, S->cfg->timeout_s, S->info->dev, (unsigned long long)done,
                                (unsigned long long)total);
    }
}

/* Spin until the last byte of the rx half of QP 0 (size bytes) is marker. */
static int wait_marker(side *S, size_t size, uint8_t marker, double deadline, const char *what, int iter,
                       cp_error *err)
{
    volatile uint8_t *p = (volatile uint8_t *)(S->buf[0] + S->half + size - 1);
    for (unsigned spin = 0; *p != marker; spin++) {
        if ((spin & 1023) != 1023)
            continue;
        /* every ~1024 rounds: give a core to whoever delivers (an
         * oversubscribed host, a software provider), check the deadline */
        sched_yield();
        if (now_s() > deadline)
            return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1,
                                "%s: the peer's write %d did not arrive within %.0f s on %s", what, iter,
                                S->cfg->timeout_s, S->info->dev);
    }
    atomic_thread_fence(memory_order_acquire);
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- payload pattern ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u; /* splitmix64 finaliser */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

static uint64_t pattern_seed(int kind, uint64_t size, int q)
{
    return mix64(((uint64_t)kind << 56) ^ ((uint64_t)q << 48) ^ size);
}

/* Byte i of the pattern of (kind, size, QP q): byte i % 8 of mix(seed + i / 8). */
static uint8_t pattern_byte(uint64_t seed, size_t i)
{
    return (uint8_t)(mix64(seed + i / 8) >> (8 * (i % 8)));
}

/* Fill p[0, n) with the pattern, or with its complement (what no message
 * of the pattern can leave behind). */
static void pattern_fill(char *p, size_t n, uint64_t seed, bool complement)
{
    uint8_t x = complement ? 0xff : 0;
    for (size_t w = 0; w * 8 < n; w++) {
        uint64_t v = mix64(seed + w);
        for (size_t b = 0; b < 8 && w * 8 + b < n; b++)
            p[w * 8 + b] = (char)((uint8_t)(v >> (8 * b)) ^ x);
    }
}

static const char *const bw_names[] = { "", "RDMA WRITE bandwidth", "RDMA READ bandwidth", "SEND bandwidth" };

/* Check the rx half of every QP against the pattern of (kind, size). */
static int pattern_check(side *S, int kind, size_t size, cp_error *err)
{
    for (int q = 0; q < S->qps; q++) {
        uint64_t seed = pattern_seed(kind, size, q);
        const uint8_t *p = (const uint8_t *)S->buf[q] + S->half;
        size_t first = SIZE_MAX, bad = 0;
        for (size_t i = 0; i < size; i++)
            if (p[i] != pattern_byte(seed, i)) {
                if (first == SIZE_MAX)
                    first = i;
                bad++;
            }
        if (bad)
            return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1,
                                "%s: payload check failed on %s QP %u: %zu of %zu bytes differ from what was "
                                "sent, the first at offset %zu (0x%02x, expected 0x%02x): data corrupted in "
                                "transit",
                                bw_names[kind], S->info->dev, S->local[q].qpn, bad, size, first, p[first],
                                pattern_byte(seed, first));
    }
    return 0;
}

/* Before a bandwidth test: the source of the data gets the pattern, the
 * target its complement. sender: this side holds what is moved (the client
 * for WRITE and SEND, the server for READ). */
static void pattern_prepare(side *S, int kind, size_t size, bool sender)
{
    for (int q = 0; q < S->qps; q++)
        pattern_fill(S->buf[q] + (sender ? 0 : S->half), size, pattern_seed(kind, size, q), !sender);
}

/* Post on QP q until depth requests are outstanding or all n_it are
 * posted; request seq (1-based) is signaled when seq % sig == 0 or it is
 * the last. */
static int bw_fill(side *S, int q, int op, size_t size, uint64_t n_it, uint64_t *posted, uint64_t retired,
                   cp_error *err)
{
    uint64_t sig = (uint64_t)S->sig;
    for (; *posted - retired < (uint64_t)S->depth && *posted < n_it; ++*posted) {
        uint64_t seq = *posted + 1;
        int rc = post_send(S, q, op, size, false, seq % sig == 0 || seq == n_it, seq << 8 | (uint64_t)q, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Client side of a bandwidth test: iters messages on every QP, at most
 * depth outstanding per QP, every sig-th one (and the last) signaled. A
 * completion of sequence number seq on QP q retires q's requests up to
 * seq; the time of each completion and the messages retired by then feed
 * the average and the best window. */
static int bw_client(side *S, int kind, size_t size, int iters, rdma_meas *m, cp_error *err)
{
    int op = kind == T_BW_WRITE ? CPV_WR_RDMA_WRITE : kind == T_BW_READ ? CPV_WR_RDMA_READ : CPV_WR_SEND;
    uint64_t total = (uint64_t)iters * (uint64_t)S->qps, done = 0;
    uint64_t posted[RDMA_MAX_QPS] = { 0 }, retired[RDMA_MAX_QPS] = { 0 };
    uint64_t sig = (uint64_t)S->sig, depth = (uint64_t)S->depth, n_it = (uint64_t)iters;
    /* one event per signaled completion: at most iters / sig + 1 per QP */
    size_t cap_ev = (size_t)S->qps * (size_t)(n_it / sig + 1), n_ev = 0;
    double *ev_t = cp_xcalloc(cap_ev, sizeof *ev_t);
    uint64_t *ev_done = cp_xcalloc(cap_ev, sizeof *ev_done);
    double deadline = now_s() + S->cfg->timeout_s;
    double t0 = now_s();
    int rc = 0;
    for (int q = 0; q < S->qps && rc == 0; q++)
        rc = bw_fill(S, q, op, size, n_it, &posted[q], retired[q], err);
    struct cpv_wc wc[32];
    while (rc == 0 && done < total) {
        int n = poll_some(S, S->scq, wc, 32, deadline, bw_names[kind], done, total, err);
        if (n < 0) {
            rc = n;
            break;
        }
        double t = now_s();
        for (int i = 0; i < n && rc == 0; i++) {
            int q = (int)(wc[i].wr_id & 0xff);
            uint64_t seq = wc[i].wr_id >> 8;
            if (q >= S->qps || seq <= retired[q] || seq > posted[q]) {
                rc = cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1,
                                  "%s: unexpected completion on %s (QP %d, request %llu; %llu posted, %llu "
                                  "retired)",
                                  bw_names[kind], S->info->dev, q, (unsigned long long)seq,
                                  q < S->qps ? (unsigned long long)posted[q] : 0ull,
                                  q < S->qps ? (unsigned long long)retired[q] : 0ull);
                break;
            }
            done += seq - retired[q];
            retired[q] = seq;
            if (n_ev < cap_ev) {
                ev_t[n_ev] = t;
                ev_done[n_ev++] = done;
            }
            rc = bw_fill(S, q, op, size, n_it, &posted[q], retired[q], err);
        }
    }
    double t1 = now_s();
    if (rc == 0) {
        m->msgs = total;
        m->seconds = t1 - t0;
        m->bw_gbps = (double)size * (double)total / m->seconds / 1e9;
        m->msg_rate_mpps = (double)total / m->seconds / 1e6;
        /* best window of at least one pipeline's worth (depth x qps) of
         * messages between two completions (or the start) */
        uint64_t w = depth * (uint64_t)S->qps;
        if (w > total)
            w = total;
        double best = 0;
        size_t i = 0; /* the window starts after event i - 1 (i = 0: at t0) */
        for (size_t j = 0; j < n_ev; j++) {
            while (i < j && ev_done[j] - ev_done[i] >= w)
                i++;
            double start_t = i == 0 ? t0 : ev_t[i - 1];
            uint64_t start_done = i == 0 ? 0 : ev_done[i - 1];
            double dt = ev_t[j] - start_t;
            if (ev_done[j] - start_done >= w && dt > 0) {
                double r = (double)size * (double)(ev_done[j] - start_done) / dt / 1e9;
                if (r > best)
                    best = r;
            }
        }
        m->bw_peak_gbps = best > 0 ? best : m->bw_gbps;
    }
    free(ev_t);
    free(ev_done);
    return rc;
}

/* Server side of a SEND bandwidth test: keep depth receives posted per QP
 * until iters arrived on each. Receives are posted before 'r' is sent. */
static int bw_send_server_prepost(side *S, size_t size, int iters, int *posted, cp_error *err)
{
    for (int q = 0; q < S->qps; q++)
        for (posted[q] = 0; posted[q] < S->depth && posted[q] < iters; posted[q]++) {
            int rc = post_recv(S, q, size, err);
            if (rc < 0)
                return rc;
        }
    return 0;
}

static int bw_send_server(side *S, size_t size, int iters, int *posted, cp_error *err)
{
    uint64_t total = (uint64_t)iters * (uint64_t)S->qps, done = 0;
    double deadline = now_s() + S->cfg->timeout_s;
    struct cpv_wc wc[32];
    while (done < total) {
        int n = poll_some(S, S->rcq, wc, 32, deadline, "SEND bandwidth (receiver)", done, total, err);
        if (n < 0)
            return n;
        for (int i = 0; i < n; i++) {
            done++;
            int q = (int)wc[i].wr_id;
            if (q >= 0 && q < S->qps && posted[q] < iters) {
                int rc = post_recv(S, q, size, err);
                if (rc < 0)
                    return rc;
                posted[q]++;
            }
        }
    }
    return 0;
}

/* Ping-pong on QP 0. Client: rtt[] gets each round trip in seconds. */
static int lat_run(side *S, bool client, int kind, size_t size, int iters, double *rtt, cp_error *err)
{
    const char *what = kind == T_LAT_WRITE ? "RDMA WRITE latency" : "SEND latency";
    int op = kind == T_LAT_WRITE ? CPV_WR_RDMA_WRITE : CPV_WR_SEND;
    bool inl = size <= S->max_inline;
    double deadline = now_s() + S->cfg->timeout_s;
    struct cpv_wc wc[1];
    int rc = 0;
    for (int i = 0; i < iters && rc == 0; i++) {
        uint8_t marker = (uint8_t)(i % 255 + 1);
        double t0 = now_s();
        if (client) {
            S->buf[0][size - 1] = (char)marker;
            if ((rc = post_send(S, 0, op, size, inl, true, 0, err)) < 0)
                break;
        }
        /* wait for the peer's message */
        if (kind == T_LAT_WRITE) {
            rc = wait_marker(S, size, marker, deadline, what, i, err);
        } else {
            rc = poll_some(S, S->rcq, wc, 1, deadline, what, (uint64_t)i, (uint64_t)iters, err);
            if (rc >= 0 && i + 1 < iters) /* the receive for the next round */
                rc = post_recv(S, 0, size, err);
        }
        if (rc < 0)
            break;
        if (!client) {
            S->buf[0][size - 1] = (char)marker;
            if ((rc = post_send(S, 0, op, size, inl, true, 0, err)) < 0)
                break;
        }
        rc = poll_some(S, S->scq, wc, 1, deadline, what, (uint64_t)i, (uint64_t)iters, err);
        if (rc < 0)
            break;
        rc = 0;
        if (client)
            rtt[i] = now_s() - t0;
    }
    return rc;
}

static void lat_stats(double *rtt, int n, rdma_meas *m)
{
    double *us = cp_xcalloc((size_t)n, sizeof *us);
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; i++) {
        us[i] = rtt[i] / 2 * 1e6;
        sum += us[i];
    }
    qsort(us, (size_t)n, sizeof *us, cmp_dbl);
    double avg = sum / n;
    for (int i = 0; i < n; i++)
        sum2 += (us[i] - avg) * (us[i] - avg);
    m->msgs = (uint64_t)n;
    m->lat_min_us = us[0];
    m->lat_max_us = us[n - 1];
    m->lat_avg_us = avg;
    m->lat_stdev_us = n > 1 ? sqrt(sum2 / (n - 1)) : 0;
    m->lat_typical_us = probe_percentile(us, (size_t)n, 50);
    m->lat_p99_us = probe_percentile(us, (size_t)n, 99);
    m->lat_p999_us = probe_percentile(us, (size_t)n, 99.9);
    free(us);
}

/* ---- control channel ---- */

static void put_u16(uint8_t *p, uint16_t v) { v = htons(v); memcpy(p, &v, 2); }
static void put_u32(uint8_t *p, uint32_t v) { v = htonl(v); memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { put_u32(p, (uint32_t)(v >> 32)); put_u32(p + 4, (uint32_t)v); }
static uint16_t get_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return ntohs(v); }
static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return ntohl(v); }
static uint64_t get_u64(const uint8_t *p) { return ((uint64_t)get_u32(p) << 32) | get_u32(p + 4); }

typedef struct ctl {
    int fd;
    const char *peer;
    double timeout_s;
} ctl;

static int ctl_io(ctl *c, void *buf, size_t n, bool out, const char *what, cp_error *err)
{
    return net_io_full(c->fd, buf, n, out, c->timeout_s, what, c->peer, err);
}

/* Status exchange: send ours (0 or an error text), receive theirs. The
 * halves are separate so a side can read the peer's status first (the
 * WRITE payload check). Returns the control error, or 0; *peer_failed and
 * err describe a peer failure. */
static int ctl_send_status(ctl *c, int my_rc, const cp_error *mine, cp_error *err)
{
    uint8_t out[4 + RDMA_MSG];
    memset(out, 0, sizeof out);
    put_u32(out, my_rc < 0 ? (uint32_t)-my_rc : 0);
    if (my_rc < 0)
        snprintf((char *)out + 4, RDMA_MSG, "%.250s", mine->msg);
    return ctl_io(c, out, sizeof out, true, "rdma status", err);
}

static int ctl_recv_status(ctl *c, int my_rc, bool *peer_failed, cp_error *err)
{
    uint8_t in[4 + RDMA_MSG];
    cp_error tmp;
    cp_error_clear(&tmp);
    int rc = ctl_io(c, in, sizeof in, false, "rdma status", &tmp);
    if (rc < 0) {
        if (err)
            *err = tmp;
        return rc;
    }
    *peer_failed = get_u32(in) != 0;
    if (*peer_failed && my_rc == 0) {
        in[sizeof in - 1] = '\0';
        uint32_t code = get_u32(in);
        cp_error_set(err, code < 10 ? -(int)code : CP_ERR_IO, NULL, 0, 0, -1, "peer %s: %s", c->peer,
                     (char *)in + 4);
    }
    return 0;
}

static int ctl_status(ctl *c, int my_rc, const cp_error *mine, bool *peer_failed, cp_error *err)
{
    cp_error tmp;
    cp_error_clear(&tmp);
    int rc = ctl_send_status(c, my_rc, mine, &tmp);
    if (rc < 0) {
        if (err)
            *err = tmp;
        return rc;
    }
    return ctl_recv_status(c, my_rc, peer_failed, err);
}

static void pack_eps(const side *S, uint8_t *p)
{
    for (int q = 0; q < S->qps; q++, p += EP_BYTES) {
        const ep *e = &S->local[q];
        put_u16(p, e->lid);
        put_u32(p + 2, e->qpn);
        put_u32(p + 6, e->psn);
        memcpy(p + 10, e->gid, 16);
        put_u64(p + 26, e->addr);
        put_u32(p + 34, e->rkey);
    }
}

static void unpack_eps(side *S, const uint8_t *p)
{
    for (int q = 0; q < S->qps; q++, p += EP_BYTES) {
        ep *e = &S->remote[q];
        e->lid = get_u16(p);
        e->qpn = get_u32(p + 2);
        e->psn = get_u32(p + 6);
        memcpy(e->gid, p + 10, 16);
        e->addr = get_u64(p + 26);
        e->rkey = get_u32(p + 34);
    }
}

/* ---- the plan (client) ---- */

static void cfg_defaults(rdma_cfg *c)
{
    if (c->qps <= 0)
        c->qps = 1;
    if (c->qps > RDMA_MAX_QPS)
        c->qps = RDMA_MAX_QPS;
    if (c->depth <= 0)
        c->depth = 64;
    if (c->depth > 1024)
        c->depth = 1024;
    if (!c->min_bytes)
        c->min_bytes = c->quick ? 4096 : 2;
    if (!c->max_bytes)
        c->max_bytes = c->quick ? (1u << 20) : (8u << 20);
    if (c->max_bytes > (64u << 20))
        c->max_bytes = 64u << 20;
    if (c->min_bytes > c->max_bytes)
        c->min_bytes = c->max_bytes;
    if (c->min_bytes < 1)
        c->min_bytes = 1;
    if (!(c->factor > 1))
        c->factor = c->quick ? 4 : 2;
    if (c->iters <= 0)
        c->iters = c->quick ? 200 : 1000;
    if (c->lat_iters <= 0)
        c->lat_iters = c->quick ? 200 : 1000;
    if (!c->lat_max_bytes)
        c->lat_max_bytes = 64u << 10;
    if (!(c->timeout_s > 0))
        c->timeout_s = 10;
}

/* Messages per QP for one size: iters, fewer for big messages so one test
 * moves at most ~1 GiB (quick: 64 MiB) in all, never fewer than 2 x depth. */
static int bw_iters(const rdma_cfg *c, uint64_t size)
{
    double budget = c->quick ? 64.0 * (1 << 20) : 1024.0 * (1 << 20);
    double n = budget / (double)size / c->qps;
    int it = n < c->iters ? (int)n : c->iters;
    int floor_it = 2 * c->depth;
    return it < floor_it ? (floor_it < c->iters ? floor_it : c->iters) : it;
}

static rdma_meas *add_meas(rdma_session *s)
{
    cp_xgrow((void **)&s->meas, &s->cap_meas, s->n_meas + 1, sizeof *s->meas);
    rdma_meas *m = &s->meas[s->n_meas++];
    memset(m, 0, sizeof *m);
    return m;
}

void rdma_session_free(rdma_session *s)
{
    free(s->meas);
    s->meas = NULL;
    s->n_meas = s->cap_meas = 0;
}

/* Run one test on the client; the server follows through ctl. */
static int client_test(ctl *c, side *S, rdma_session *s, int kind, uint64_t size, int iters, cp_error *err)
{
    uint8_t hdr[13];
    hdr[0] = (uint8_t)kind;
    put_u64(hdr + 1, size);
    put_u32(hdr + 9, (uint32_t)iters);
    if (kind == T_LAT_WRITE || kind == T_LAT_SEND) {
        S->buf[0][S->half + size - 1] = 0;
        S->buf[0][size - 1] = 0;
    } else {
        pattern_prepare(S, kind, (size_t)size, kind != T_BW_READ);
    }
    cp_error mine;
    cp_error_clear(&mine);
    int my = 0;
    if (kind == T_LAT_SEND)
        my = post_recv(S, 0, size, &mine);
    int rc = ctl_io(c, hdr, sizeof hdr, true, "rdma test", err);
    uint8_t ready = 0;
    if (rc == 0)
        rc = ctl_io(c, &ready, 1, false, "rdma test ready", err);
    if (rc < 0)
        return rc;
    if (ready != 'r' && my == 0)
        my = cp_error_set(&mine, CP_ERR_IO, NULL, 0, 0, -1, "peer %s could not prepare the test", c->peer);
    rdma_meas m;
    memset(&m, 0, sizeof m);
    if (my == 0 && ready == 'r') {
        if (kind <= T_BW_SEND) {
            my = bw_client(S, kind, (size_t)size, iters, &m, &mine);
            if (my == 0 && kind == T_BW_READ) /* what was read must be what the server holds */
                my = pattern_check(S, kind, (size_t)size, &mine);
        } else {
            double *rtt = cp_xcalloc((size_t)iters, sizeof *rtt);
            my = lat_run(S, true, kind, (size_t)size, iters, rtt, &mine);
            if (my == 0)
                lat_stats(rtt, iters, &m);
            free(rtt);
        }
    }
    bool peer_failed = false;
    cp_error theirs;
    cp_error_clear(&theirs);
    if ((rc = ctl_status(c, my, &mine, &peer_failed, &theirs)) < 0) {
        *err = theirs;
        return rc;
    }
    if (my < 0) {
        s->rc = my;
        s->err = mine;
        return 0;
    }
    if (peer_failed) {
        s->rc = theirs.code;
        s->err = theirs;
        return 0;
    }
    static const char *const ops[] = { "", "write", "read", "send", "write", "send" };
    m.op = ops[kind];
    m.lat = kind >= T_LAT_WRITE;
    m.size_bytes = size;
    m.qps = m.lat ? 1 : S->qps;
    *add_meas(s) = m;
    return 0;
}

static int client_tests(ctl *c, side *S, rdma_session *s, cp_error *err)
{
    const rdma_cfg *cfg = &s->cfg;
    int rc = 0;
    for (int kind = T_BW_WRITE; kind <= T_LAT_SEND && rc == 0 && s->rc == 0; kind++) {
        uint64_t last = 0;
        for (double sz = (double)cfg->min_bytes; rc == 0 && s->rc == 0; sz *= cfg->factor) {
            uint64_t size = (uint64_t)sz;
            if (size > cfg->max_bytes)
                size = cfg->max_bytes;
            if (size == last)
                break;
            last = size;
            bool lat = kind >= T_LAT_WRITE;
            if (lat && size > cfg->lat_max_bytes)
                break;
            rc = client_test(c, S, s, kind, size, lat ? cfg->lat_iters : bw_iters(cfg, size), err);
        }
    }
    uint8_t end[13] = { T_END };
    if (rc == 0)
        rc = ctl_io(c, end, sizeof end, true, "rdma end", err);
    return rc;
}

static int server_tests(ctl *c, side *S, rdma_session *s, cp_error *err)
{
    for (;;) {
        uint8_t hdr[13];
        int rc = ctl_io(c, hdr, sizeof hdr, false, "rdma test", err);
        if (rc < 0)
            return rc;
        int kind = hdr[0];
        if (kind == T_END)
            return 0;
        uint64_t size = get_u64(hdr + 1);
        int iters = (int)get_u32(hdr + 9);
        if (kind > T_LAT_SEND || size < 1 || size > S->half || iters < 1 || iters > 100000000)
            return cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "rdma test from %s: bad parameters", c->peer);
        cp_error mine;
        cp_error_clear(&mine);
        int my = 0;
        int posted[RDMA_MAX_QPS];
        if (kind == T_BW_SEND)
            my = bw_send_server_prepost(S, (size_t)size, iters, posted, &mine);
        if (kind == T_LAT_WRITE || kind == T_LAT_SEND) {
            S->buf[0][S->half + size - 1] = 0;
            S->buf[0][size - 1] = 0;
        } else {
            pattern_prepare(S, kind, (size_t)size, kind == T_BW_READ);
        }
        if (kind == T_LAT_SEND && my == 0)
            my = post_recv(S, 0, (size_t)size, &mine);
        uint8_t ready = my == 0 ? 'r' : 'x';
        if ((rc = ctl_io(c, &ready, 1, true, "rdma test ready", err)) < 0)
            return rc;
        if (my == 0) {
            if (kind == T_BW_SEND) {
                my = bw_send_server(S, (size_t)size, iters, posted, &mine);
                if (my == 0) /* every receive completed: the data is in place */
                    my = pattern_check(S, kind, (size_t)size, &mine);
            } else if (kind >= T_LAT_WRITE) {
                my = lat_run(S, false, kind, (size_t)size, iters, NULL, &mine);
            }
            /* WRITE and READ bandwidth: the server's CPU takes no part */
        }
        bool peer_failed = false;
        cp_error theirs;
        cp_error_clear(&theirs);
        if (kind == T_BW_WRITE) {
            /* the writes are complete once the client says so: its status
             * first, then the check, then ours */
            if ((rc = ctl_recv_status(c, my, &peer_failed, &theirs)) < 0) {
                *err = theirs;
                return rc;
            }
            if (my == 0 && !peer_failed)
                my = pattern_check(S, kind, (size_t)size, &mine);
            if ((rc = ctl_send_status(c, my, &mine, err)) < 0)
                return rc;
        } else if ((rc = ctl_status(c, my, &mine, &peer_failed, &theirs)) < 0) {
            *err = theirs;
            return rc;
        }
        if (my < 0 && s->rc == 0) {
            s->rc = my;
            s->err = mine;
        } else if (peer_failed && s->rc == 0) {
            s->rc = theirs.code;
            s->err = theirs;
        }
    }
}

/* ---- the session ---- */

static size_t buffer_half(const rdma_cfg *c)
{
    return (size_t)(c->max_bytes < 4096 ? 4096 : c->max_bytes);
}

int rdma_phase(int fd, bool server, const char *peer, double timeout_s, void *arg, cp_error *err)
{
    rdma_session *s = arg;
    ctl c = { fd, peer, timeout_s };
    side S;
    memset(&S, 0, sizeof S);
    s->ran = true;
    int rc;
    if (!server) {
        cfg_defaults(&s->cfg);
        /* our side first: when it fails the peer is never bothered */
        if ((rc = side_open(&S, &s->cfg, s->cfg.qps, s->cfg.depth, buffer_half(&s->cfg), &s->info, &s->err)) < 0) {
            s->rc = rc;
            side_close(&S);
            return 0;
        }
        uint8_t hello[8 + 4 + 4 + 8];
        memcpy(hello, RDMA_MAGIC, 8);
        put_u32(hello + 8, (uint32_t)s->cfg.qps);
        put_u32(hello + 12, (uint32_t)s->cfg.depth);
        put_u64(hello + 16, s->cfg.max_bytes);
        char r = 'R';
        rc = ctl_io(&c, &r, 1, true, "phase", err);
        if (rc == 0)
            rc = ctl_io(&c, hello, sizeof hello, true, "rdma hello", err);
        uint8_t st[4 + RDMA_MSG + 64];
        if (rc == 0)
            rc = ctl_io(&c, st, sizeof st, false, "rdma hello reply", err);
        if (rc < 0)
            goto out;
        if (get_u32(st) != 0) {
            st[4 + RDMA_MSG - 1] = '\0';
            s->rc = cp_error_set(&s->err, -(int)get_u32(st), NULL, 0, 0, -1, "peer %s: %s", peer, (char *)st + 4);
            goto out;
        }
        memcpy(s->info.peer_dev, st + 4 + RDMA_MSG, 63);
        s->info.peer_dev[63] = '\0';
        uint8_t *eps = cp_xcalloc((size_t)s->cfg.qps, EP_BYTES);
        rc = ctl_io(&c, eps, (size_t)s->cfg.qps * EP_BYTES, false, "rdma endpoints", err);
        if (rc == 0) {
            unpack_eps(&S, eps);
            pack_eps(&S, eps);
            rc = ctl_io(&c, eps, (size_t)s->cfg.qps * EP_BYTES, true, "rdma endpoints", err);
        }
        free(eps);
        if (rc < 0)
            goto out;
        cp_error mine;
        cp_error_clear(&mine);
        int my = side_connect(&S, &mine);
        bool peer_failed = false;
        if ((rc = ctl_status(&c, my, &mine, &peer_failed, &s->err)) < 0) {
            *err = s->err;
            cp_error_clear(&s->err);
            goto out;
        }
        if (my < 0) {
            s->rc = my;
            s->err = mine;
        } else if (peer_failed) {
            s->rc = s->err.code;
        }
        if (s->rc == 0)
            rc = client_tests(&c, &S, s, err);
        else {
            uint8_t end[13] = { T_END };
            rc = ctl_io(&c, end, sizeof end, true, "rdma end", err);
        }
    } else {
        uint8_t hello[8 + 4 + 4 + 8];
        if ((rc = ctl_io(&c, hello, sizeof hello, false, "rdma hello", err)) < 0)
            goto out;
        if (memcmp(hello, RDMA_MAGIC, 8) != 0) {
            rc = memcmp(hello, RDMA_MAGIC, 6) == 0
                     ? cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1,
                                    "rdma hello from %s: protocol %.7s, this side speaks %s (run the same chainprof "
                                    "version on both ends)",
                                    peer, (const char *)hello, RDMA_MAGIC)
                     : cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "rdma hello from %s: not a chainprof peer",
                                    peer);
            goto out;
        }
        s->cfg.qps = (int)get_u32(hello + 8);
        s->cfg.depth = (int)get_u32(hello + 12);
        s->cfg.max_bytes = get_u64(hello + 16);
        if (s->cfg.qps < 1 || s->cfg.qps > RDMA_MAX_QPS || s->cfg.depth < 1 || s->cfg.depth > 1024 ||
            s->cfg.max_bytes < 1 || s->cfg.max_bytes > (64u << 20)) {
            rc = cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, -1, "rdma hello from %s: parameters out of range",
                              peer);
            goto out;
        }
        s->cfg.timeout_s = timeout_s;
        int my = s->disabled ? cp_error_set(&s->err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1,
                                            "RDMA disabled on this side (--no-rdma)")
                             : side_open(&S, &s->cfg, s->cfg.qps, s->cfg.depth, buffer_half(&s->cfg), &s->info,
                                         &s->err);
        uint8_t st[4 + RDMA_MSG + 64];
        memset(st, 0, sizeof st);
        if (my < 0) {
            put_u32(st, (uint32_t)-my);
            snprintf((char *)st + 4, RDMA_MSG, "%.250s", s->err.msg);
            s->rc = my;
        }
        snprintf((char *)st + 4 + RDMA_MSG, 64, "%s", s->info.dev);
        if ((rc = ctl_io(&c, st, sizeof st, true, "rdma hello reply", err)) < 0 || my < 0)
            goto out;
        uint8_t *eps = cp_xcalloc((size_t)s->cfg.qps, EP_BYTES);
        pack_eps(&S, eps);
        rc = ctl_io(&c, eps, (size_t)s->cfg.qps * EP_BYTES, true, "rdma endpoints", err);
        if (rc == 0)
            rc = ctl_io(&c, eps, (size_t)s->cfg.qps * EP_BYTES, false, "rdma endpoints", err);
        if (rc == 0)
            unpack_eps(&S, eps);
        free(eps);
        if (rc < 0)
            goto out;
        cp_error mine;
        cp_error_clear(&mine);
        my = side_connect(&S, &mine);
        bool peer_failed = false;
        cp_error theirs;
        cp_error_clear(&theirs);
        if ((rc = ctl_status(&c, my, &mine, &peer_failed, &theirs)) < 0) {
            *err = theirs;
            goto out;
        }
        if (my < 0) {
            s->rc = my;
            s->err = mine;
        } else if (peer_failed) {
            s->rc = theirs.code;
            s->err = theirs;
        }
        rc = server_tests(&c, &S, s, err);
    }
out:
    side_close(&S);
    if (rc < 0 && !server) {
        /* the client keeps the TCP figures: a broken RDMA session is an
         * RDMA failure (the first one seen wins), not a lost TCP session */
        if (s->rc == 0) {
            s->rc = rc;
            s->err = *err;
        }
        cp_error_clear(err);
        rc = 0;
    }
    return rc;
}

/* ---- loopback: both ends in this process ---- */

typedef struct lb_job {
    int fd;
    rdma_session srv;
    cp_error err;
    int rc;
} lb_job;

static void *lb_server(void *arg)
{
    lb_job *j = arg;
    char r = 0;
    j->rc = net_io_full(j->fd, &r, 1, false, j->srv.cfg.timeout_s, "phase", "loopback client", &j->err);
    if (j->rc == 0)
        j->rc = rdma_phase(j->fd, true, "loopback client", j->srv.cfg.timeout_s, &j->srv, &j->err);
    return NULL;
}

int rdma_loopback(rdma_session *s, cp_error *err)
{
    cfg_defaults(&s->cfg);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return cp_error_sys(err, CP_ERR_IO, NULL, "rdma loopback: socketpair");
    struct timeval tv = { (time_t)s->cfg.timeout_s, 0 };
    for (int i = 0; i < 2; i++) {
        setsockopt(sv[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(sv[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    lb_job *j = cp_xcalloc(1, sizeof *j);
    j->fd = sv[1];
    j->srv.cfg = s->cfg;
    pthread_t th;
    if (pthread_create(&th, NULL, lb_server, j) != 0) {
        close(sv[0]);
        close(sv[1]);
        free(j);
        return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "rdma loopback: cannot start the server thread");
    }
    int rc = rdma_phase(sv[0], false, "loopback server", s->cfg.timeout_s, s, err);
    if (rc < 0 || s->rc < 0)
        shutdown(sv[0], SHUT_RDWR); /* the server thread stops waiting */
    pthread_join(th, NULL);
    close(sv[0]);
    close(sv[1]);
    if (rc == 0 && s->rc == 0 && j->rc < 0) {
        s->rc = j->rc;
        s->err = j->err;
    }
    rdma_session_free(&j->srv);
    free(j);
    return rc;
}
