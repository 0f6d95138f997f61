/* fake_ibverbs.c - a fake libibverbs for the tests: one device, "fakeib0",
 * whose RC QPs really move bytes between two processes (or two threads).
 *
 * chainprof finds it through CHAINPROF_IBVERBS_LIB. It implements the
 * exported calls the probe resolves and fills context->ops with poll_cq,
 * post_send and post_recv, built against the project's own declarations
 * (src/probe/verbs_abi.h), which test_verbs_abi checks against the real
 * header.
 *
 * Emulation: every QP listens on an abstract Unix socket named after its
 * QP number; moving to RTS connects to the remote QP's socket. post_send
 * is synchronous: it ships a request (WRITE: header + data, READ: header,
 * SEND: header + data) and waits for the answer of the remote QP's service
 * thread, which checks the rkey and range against its memory regions and
 * copies into (or out of) the registered memory, or for SEND waits for a
 * posted receive and completes it on the receive CQ. The answer's status
 * becomes the sender's completion; a peer that went away becomes a
 * "transport retry counter exceeded" completion, as on a real RC QP.
 *
 * Queues are held to what a real RC QP allows, so a probe that relies on
 * more fails here too: only signaled work requests (and failed ones)
 * produce a completion; a send-queue slot is freed only when a completion
 * of that QP at or after the request is polled, and posting beyond
 * max_send_wr (max_recv_wr for receives) outstanding fails with ENOMEM, as
 * mlx5 does; a CQ that would hold more than its cqe entries overruns: the
 * entry is lost and, once the queued ones are polled, poll_cq fails.
 *
 * Modes (FAKE_IBV_MODE): "nodev" lists no device; "portdown" reports port
 * 1 DOWN; "modifyfail" makes modify_qp to RTR fail with ENETUNREACH.
 * FAKE_IBV_CORRUPT=write,read,send (any of them) flips one byte in the
 * middle of every transfer of those operations after it landed (a link
 * that corrupts data without the transport noticing).
 * FAKE_IBV_STATS=FILE appends, when a device is closed, one line
 * "posted P signaled G polled C max_outstanding O" over the process's send
 * work requests, so a test can see selective signaling at work.
 * FAKE_IBV_WIDTH / FAKE_IBV_SPEED set active_width / active_speed (default
 * 2 / 32 = 4X EDR, 100 Gb/s); FAKE_IBV_LINK=eth reports RoCE (then the
 * address vector must carry a GRH, as on real RoCE).
 */
#include "probe/verbs_abi.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_MR 256
#define WC_FATAL_RETRY 12 /* IBV_WC_RETRY_EXC_ERR */
#define WC_REM_ACCESS 10
#define WC_LOC_LEN 1
#define WC_FLUSH 5

struct cpv_device {
    char name[16];
};

static struct cpv_device the_dev = { "fakeib0" };
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cpv_mr *g_mrs[MAX_MR];
static uint32_t g_next_key = 0x1000, g_next_qp = 1;

static const char *mode(void)
{
    const char *m = getenv("FAKE_IBV_MODE");
    return m ? m : "";
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

struct cpv_device **ibv_get_device_list(int *num)
{
    struct cpv_device **l = calloc(2, sizeof *l);
    if (!strcmp(mode(), "nodev")) {
        *num = 0;
        return l;
    }
    l[0] = &the_dev;
    *num = 1;
    return l;
}

void ibv_free_device_list(struct cpv_device **l) { free(l); }
const char *ibv_get_device_name(struct cpv_device *d) { return d->name; }

/* ---- completion queues ---- */

/* A completion and, for the send queue, the request sequence number on
 * its QP it retires up to (qp NULL for receive completions). */
struct fqp;
typedef struct fcqe {
    struct cpv_wc wc;
    struct fqp *qp;
    uint64_t seq;
} fcqe;

typedef struct fcq {
    struct cpv_cq base;
    pthread_mutex_t mu;
    fcqe *ring;
    int cap, head, count;
    bool overrun;
} fcq;

static struct {
    pthread_mutex_t mu;
    unsigned long long posted, signaled, polled, max_outstanding;
} g_stats = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0 };

static void cq_push(struct cpv_cq *c, const struct cpv_wc *wc, struct fqp *qp, uint64_t seq)
{
    fcq *q = (fcq *)c;
    pthread_mutex_lock(&q->mu);
    if (q->count < q->cap) {
        q->ring[(q->head + q->count) % q->cap] = (fcqe){ *wc, qp, seq };
        q->count++;
    } else if (!q->overrun) {
        q->overrun = true; /* as hardware: the entry is lost, the CQ is in error */
        fprintf(stderr, "fake ibverbs: CQ overrun (%d entries)\n", q->cap);
    }
    pthread_mutex_unlock(&q->mu);
}

static void sq_retire(struct fqp *qp, uint64_t seq);

static int fake_poll_cq(struct cpv_cq *c, int n, struct cpv_wc *wc)
{
    fcq *q = (fcq *)c;
    fcqe got[64];
    if (n > 64)
        n = 64;
    pthread_mutex_lock(&q->mu);
    int k = 0;
    for (; k < n && q->count > 0; k++) {
        got[k] = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
    }
    bool failed = k == 0 && q->overrun;
    pthread_mutex_unlock(&q->mu);
    if (failed)
        return -1;
    for (int i = 0; i < k; i++) {
        wc[i] = got[i].wc;
        if (got[i].qp)
            sq_retire(got[i].qp, got[i].seq);
    }
    if (k == 0)
        sched_yield(); /* the service threads need the core more than a poller */
    return k;
}

/* ---- QPs ---- */

typedef struct rwr {
    uint64_t wr_id, addr;
    uint32_t len;
} rwr;

typedef struct fqp {
    struct cpv_qp base;
    int lfd, out_fd, in_fd;
    pthread_t th;
    bool th_started;
    volatile int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rwr rq[1024];
    int rq_head, rq_count;
    uint32_t max_send_wr, max_recv_wr;
    uint64_t sq_posted, sq_retired; /* under mu */
    uint32_t dest_qpn;
    int link_layer;
} fqp;

typedef struct req {
    uint8_t op; /* 'W' write, 'R' read, 'S' send */
    uint8_t pad[3];
    uint32_t rkey, len;
    uint32_t pad2;
    uint64_t raddr;
} req;

static int io_all(int fd, void *buf, size_t n, bool out)
{
    char *p = buf;
    while (n) {
        ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void sock_name(uint32_t qpn, struct sockaddr_un *a, socklen_t *len)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "chainprof-fakeibv-%u", qpn);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static struct cpv_mr *find_mr(uint32_t rkey, uint64_t addr, uint32_t len)
{
    struct cpv_mr *hit = NULL;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_MR; i++) {
        struct cpv_mr *m = g_mrs[i];
        if (m && m->rkey == rkey && addr >= (uint64_t)(uintptr_t)m->addr &&
            addr + len <= (uint64_t)(uintptr_t)m->addr + m->length)
            hit = m;
    }
    pthread_mutex_unlock(&g_lock);
    return hit;
}

/* Drain n bytes nobody may keep (a refused request). */
static int drain(int fd, uint32_t n)
{
    char tmp[4096];
    while (n) {
        uint32_t k = n < sizeof tmp ? n : (uint32_t)sizeof tmp;
        if (io_all(fd, tmp, k, false) < 0)
            return -1;
        n -= k;
    }
    return 0;
}

static bool corrupt(const char *op)
{
    const char *c = getenv("FAKE_IBV_CORRUPT");
    return c && strstr(c, op);
}

static void flip(void *p, uint32_t len)
{
    if (len)
        ((volatile uint8_t *)p)[len / 2] ^= 0xa5;
}

static void sq_retire(fqp *q, uint64_t seq)
{
    pthread_mutex_lock(&q->mu);
    if (seq > q->sq_retired)
        q->sq_retired = seq;
    pthread_mutex_unlock(&q->mu);
    pthread_mutex_lock(&g_stats.mu);
    g_stats.polled++;
    pthread_mutex_unlock(&g_stats.mu);
}

/* The remote side of every request to this QP. */
static void *service(void *arg)
{
    fqp *q = arg;
    while (!q->stop) {
        struct pollfd p = { q->lfd, POLLIN, 0 };
        if (poll(&p, 1, 50) > 0) {
            q->in_fd = accept(q->lfd, NULL, NULL);
            break;
        }
    }
    while (!q->stop && q->in_fd >= 0) {
        struct pollfd p = { q->in_fd, POLLIN, 0 };
        if (poll(&p, 1, 50) <= 0)
            continue;
        req r;
        if (io_all(q->in_fd, &r, sizeof r, false) < 0)
            break;
        uint8_t status = 0;
        if (r.op == 'W' || r.op == 'R') {
            struct cpv_mr *m = find_mr(r.rkey, r.raddr, r.len);
            if (!m)
                status = WC_REM_ACCESS;
            if (r.op == 'W' && (m ? io_all(q->in_fd, (void *)(uintptr_t)r.raddr, r.len, false) : drain(q->in_fd, r.len)) < 0)
                break;
            if (r.op == 'W' && m && corrupt("write"))
                flip((void *)(uintptr_t)r.raddr, r.len);
            if (io_all(q->in_fd, &status, 1, true) < 0)
                break;
            if (r.op == 'R' && m && io_all(q->in_fd, (void *)(uintptr_t)r.raddr, r.len, true) < 0)
                break;
        } else {
            /* SEND: wait for a posted receive (RNR retry forever, as rnr_retry 7) */
            pthread_mutex_lock(&q->mu);
            while (q->rq_count == 0 && !q->stop)
                pthread_cond_wait(&q->cv, &q->mu);
            rwr w = q->rq[q->rq_head];
            if (!q->stop) {
                q->rq_head = (q->rq_head + 1) % 1024;
                q->rq_count--;
            }
            pthread_mutex_unlock(&q->mu);
            if (q->stop)
                break;
            struct cpv_wc wc;
            memset(&wc, 0, sizeof wc);
            wc.wr_id = w.wr_id;
            wc.opcode = CPV_WC_RECV;
            wc.qp_num = q->base.qp_num;
            wc.byte_len = r.len;
            if (r.len > w.len) {
                status = WC_LOC_LEN;
                wc.status = WC_LOC_LEN;
                if (drain(q->in_fd, r.len) < 0)
                    break;
            } else if (io_all(q->in_fd, (void *)(uintptr_t)w.addr, r.len, false) < 0) {
                break;
            } else if (corrupt("send")) {
                flip((void *)(uintptr_t)w.addr, r.len);
            }
            cq_push(q->base.recv_cq, &wc, NULL, 0);
            if (io_all(q->in_fd, &status, 1, true) < 0)
                break;
        }
    }
    return NULL;
}

static int fake_post_send(struct cpv_qp *qp, struct cpv_send_wr *wr, struct cpv_send_wr **bad)
{
    fqp *q = (fqp *)qp;
    for (; wr; wr = wr->next) {
        /* a send-queue slot: free only once a completion at or after it was polled */
        pthread_mutex_lock(&q->mu);
        uint64_t outstanding = q->sq_posted - q->sq_retired;
        bool full = outstanding >= q->max_send_wr;
        uint64_t seq = full ? 0 : ++q->sq_posted;
        pthread_mutex_unlock(&q->mu);
        if (full) {
            fprintf(stderr, "fake ibverbs: post_send on QP %u with %llu of %u requests outstanding\n", qp->qp_num,
                    (unsigned long long)outstanding, q->max_send_wr);
            *bad = wr;
            return ENOMEM;
        }
        bool signaled = (wr->send_flags & CPV_SEND_SIGNALED) != 0;
        pthread_mutex_lock(&g_stats.mu);
        g_stats.posted++;
        g_stats.signaled += signaled;
        if (outstanding + 1 > g_stats.max_outstanding)
            g_stats.max_outstanding = outstanding + 1;
        pthread_mutex_unlock(&g_stats.mu);
        if (qp->state == CPV_QPS_ERR) { /* as hardware does: accepted, then flushed */
            struct cpv_wc wc;
            memset(&wc, 0, sizeof wc);
            wc.wr_id = wr->wr_id;
            wc.status = WC_FLUSH;
            wc.qp_num = qp->qp_num;
            cq_push(qp->send_cq, &wc, q, seq);
            continue;
        }
        if (qp->state != CPV_QPS_RTS || q->out_fd < 0 || wr->num_sge != 1) {
            pthread_mutex_lock(&q->mu);
            q->sq_posted--;
            pthread_mutex_unlock(&q->mu);
            *bad = wr;
            return EINVAL;
        }
        req r;
        memset(&r, 0, sizeof r);
        r.op = wr->opcode == CPV_WR_RDMA_WRITE ? 'W' : wr->opcode == CPV_WR_RDMA_READ ? 'R' : 'S';
        r.len = wr->sg_list[0].length;
        r.rkey = wr->wr.rdma.rkey;
        r.raddr = wr->wr.rdma.remote_addr;
        void *local = (void *)(uintptr_t)wr->sg_list[0].addr;
        uint8_t status = 0;
        bool ok = io_all(q->out_fd, &r, sizeof r, true) == 0 && (r.op == 'R' || io_all(q->out_fd, local, r.len, true) == 0) &&
                  io_all(q->out_fd, &status, 1, false) == 0 &&
                  (r.op != 'R' || status != 0 || io_all(q->out_fd, local, r.len, false) == 0);
        if (ok && r.op == 'R' && status == 0 && corrupt("read"))
            flip(local, r.len);
        struct cpv_wc wc;
        memset(&wc, 0, sizeof wc);
        wc.wr_id = wr->wr_id;
        wc.status = ok ? status : WC_FATAL_RETRY;
        wc.opcode = r.op == 'W' ? CPV_WC_RDMA_WRITE : r.op == 'R' ? CPV_WC_RDMA_READ : CPV_WC_SEND;
        wc.qp_num = qp->qp_num;
        wc.byte_len = r.len;
        if (!ok) {
            qp->state = CPV_QPS_ERR;
            close(q->out_fd);
            q->out_fd = -1;
        }
        if (signaled || wc.status) /* an unsignaled request completes silently */
            cq_push(qp->send_cq, &wc, q, seq);
    }
    return 0;
}

static int fake_post_recv(struct cpv_qp *qp, struct cpv_recv_wr *wr, struct cpv_recv_wr **bad)
{
    fqp *q = (fqp *)qp;
    pthread_mutex_lock(&q->mu);
    for (; wr; wr = wr->next) {
        if (q->rq_count >= (int)q->max_recv_wr || wr->num_sge != 1) {
            *bad = wr;
            pthread_mutex_unlock(&q->mu);
            return ENOMEM;
        }
        q->rq[(q->rq_head + q->rq_count) % 1024] = (rwr){ wr->wr_id, wr->sg_list[0].addr, wr->sg_list[0].length };
        q->rq_count++;
    }
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

/* ---- device, port, memory ---- */

struct cpv_context *ibv_open_device(struct cpv_device *d)
{
    struct cpv_context *c = calloc(1, sizeof *c);
    c->device = d;
    c->ops.poll_cq = fake_poll_cq;
    c->ops.post_send = fake_post_send;
    c->ops.post_recv = fake_post_recv;
    return c;
}

int ibv_close_device(struct cpv_context *c)
{
    const char *path = getenv("FAKE_IBV_STATS");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (f) {
        pthread_mutex_lock(&g_stats.mu);
        fprintf(f, "posted %llu signaled %llu polled %llu max_outstanding %llu\n", g_stats.posted,
                g_stats.signaled, g_stats.polled, g_stats.max_outstanding);
        pthread_mutex_unlock(&g_stats.mu);
        fclose(f);
    }
    free(c);
    return 0;
}

int ibv_query_device(struct cpv_context *c, struct cpv_device_attr *a)
{
    (void)c;
    memset(a, 0, sizeof *a);
    snprintf(a->fw_ver, sizeof a->fw_ver, "fake 1.0");
    a->max_qp = 1024;
    a->max_qp_wr = 4096;
    a->max_qp_rd_atom = 16;
    a->phys_port_cnt = 1;
    return 0;
}

int ibv_query_port(struct cpv_context *c, uint8_t port, struct cpv_port_attr *a)
{
    (void)c;
    if (port != 1)
        return EINVAL;
    /* the legacy call fills up to `flags`, like the real IBVERBS_1.1 symbol */
    memset(a, 0, offsetof(struct cpv_port_attr, port_cap_flags2));
    a->state = !strcmp(mode(), "portdown") ? CPV_PORT_DOWN : CPV_PORT_ACTIVE;
    a->max_mtu = a->active_mtu = 5;
    a->gid_tbl_len = 4;
    a->lid = (uint16_t)(getpid() & 0x7fff) | 1;
    a->active_width = (uint8_t)env_int("FAKE_IBV_WIDTH", 2);
    a->active_speed = (uint8_t)env_int("FAKE_IBV_SPEED", 32);
    a->link_layer = getenv("FAKE_IBV_LINK") && !strcmp(getenv("FAKE_IBV_LINK"), "eth") ? CPV_LINK_LAYER_ETHERNET
                                                                                      : CPV_LINK_LAYER_INFINIBAND;
    a->phys_state = 5;
    return 0;
}

int ibv_query_gid(struct cpv_context *c, uint8_t port, int index, union cpv_gid *gid)
{
    (void)c;
    if (port != 1 || index < 0 || index >= 4)
        return EINVAL;
    memset(gid, 0, sizeof *gid);
    gid->raw[0] = 0xfe;
    gid->raw[1] = 0x80;
    gid->raw[15] = (uint8_t)index;
    gid->raw[14] = (uint8_t)getpid();
    return 0;
}

struct cpv_pd *ibv_alloc_pd(struct cpv_context *c)
{
    struct cpv_pd *pd = calloc(1, sizeof *pd);
    pd->context = c;
    return pd;
}

int ibv_dealloc_pd(struct cpv_pd *pd)
{
    free(pd);
    return 0;
}

struct cpv_mr *ibv_reg_mr(struct cpv_pd *pd, void *addr, size_t len, int access)
{
    (void)access;
    struct cpv_mr *m = calloc(1, sizeof *m);
    m->context = pd->context;
    m->pd = pd;
    m->addr = addr;
    m->length = len;
    pthread_mutex_lock(&g_lock);
    m->lkey = m->rkey = g_next_key++;
    int i = 0;
    while (i < MAX_MR && g_mrs[i])
        i++;
    if (i < MAX_MR)
        g_mrs[i] = m;
    pthread_mutex_unlock(&g_lock);
    if (i == MAX_MR) {
        free(m);
        errno = ENOMEM;
        return NULL;
    }
    return m;
}

int ibv_dereg_mr(struct cpv_mr *m)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_MR; i++)
        if (g_mrs[i] == m)
            g_mrs[i] = NULL;
    pthread_mutex_unlock(&g_lock);
    free(m);
    return 0;
}

struct cpv_cq *ibv_create_cq(struct cpv_context *c, int cqe, void *cq_context, void *channel, int vec)
{
    (void)channel, (void)vec;
    fcq *q = calloc(1, sizeof *q);
    q->base.context = c;
    q->base.cq_context = cq_context;
    q->base.cqe = cqe;
    if (cqe < 1 || cqe > 65536) {
        free(q);
        errno = EINVAL;
        return NULL;
    }
    q->cap = cqe;
    q->ring = calloc((size_t)cqe, sizeof *q->ring);
    pthread_mutex_init(&q->mu, NULL);
    return &q->base;
}

int ibv_destroy_cq(struct cpv_cq *c)
{
    fcq *q = (fcq *)c;
    pthread_mutex_destroy(&q->mu);
    free(q->ring);
    free(q);
    return 0;
}

struct cpv_qp *ibv_create_qp(struct cpv_pd *pd, struct cpv_qp_init_attr *ia)
{
    if (ia->qp_type != CPV_QPT_RC || !ia->send_cq || !ia->recv_cq) {
        errno = EINVAL;
        return NULL;
    }
    if (ia->cap.max_send_wr < 1 || ia->cap.max_send_wr > 4096 || ia->cap.max_recv_wr > 1024) {
        errno = EINVAL; /* beyond max_qp_wr (and the fake's receive ring) */
        return NULL;
    }
    fqp *q = calloc(1, sizeof *q);
    q->max_send_wr = ia->cap.max_send_wr;
    q->max_recv_wr = ia->cap.max_recv_wr;
    q->base.context = pd->context;
    q->base.pd = pd;
    q->base.send_cq = ia->send_cq;
    q->base.recv_cq = ia->recv_cq;
    q->base.qp_type = CPV_QPT_RC;
    q->base.state = CPV_QPS_RESET;
    pthread_mutex_lock(&g_lock);
    q->base.qp_num = ((uint32_t)(getpid() & 0xffff) << 8 | (g_next_qp++ & 0xff)) & 0xffffff;
    pthread_mutex_unlock(&g_lock);
    q->out_fd = q->in_fd = -1;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    ia->cap.max_inline_data = 64;
    struct sockaddr_un a;
    socklen_t al;
    sock_name(q->base.qp_num, &a, &al);
    q->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (q->lfd < 0 || bind(q->lfd, (struct sockaddr *)&a, al) < 0 || listen(q->lfd, 1) < 0) {
        int e = errno;
        if (q->lfd >= 0)
            close(q->lfd);
        free(q);
        errno = e;
        return NULL;
    }
    q->th_started = pthread_create(&q->th, NULL, service, q) == 0;
    return &q->base;
}

int ibv_destroy_qp(struct cpv_qp *qp)
{
    fqp *q = (fqp *)qp;
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (q->in_fd >= 0)
        shutdown(q->in_fd, SHUT_RDWR);
    if (q->th_started)
        pthread_join(q->th, NULL);
    if (q->in_fd >= 0)
        close(q->in_fd);
    if (q->out_fd >= 0)
        close(q->out_fd);
    close(q->lfd);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
    return 0;
}

int ibv_modify_qp(struct cpv_qp *qp, struct cpv_qp_attr *a, int mask)
{
    fqp *q = (fqp *)qp;
    if (!(mask & CPV_QP_STATE))
        return EINVAL;
    struct cpv_port_attr pa;
    ibv_query_port(qp->context, 1, &pa);
    switch (a->qp_state) {
    case CPV_QPS_INIT:
        if (qp->state != CPV_QPS_RESET || !(mask & CPV_QP_PORT) || a->port_num != 1)
            return EINVAL;
        break;
    case CPV_QPS_RTR:
        if (qp->state != CPV_QPS_INIT || !(mask & CPV_QP_DEST_QPN) || !(mask & CPV_QP_AV))
            return EINVAL;
        if (!strcmp(mode(), "modifyfail"))
            return ENETUNREACH;
        if (pa.link_layer == CPV_LINK_LAYER_ETHERNET && !a->ah_attr.is_global)
            return EINVAL; /* RoCE needs a GRH */
        q->dest_qpn = a->dest_qp_num;
        break;
    case CPV_QPS_RTS: {
        if (qp->state != CPV_QPS_RTR)
            return EINVAL;
        struct sockaddr_un sa;
        socklen_t al;
        sock_name(q->dest_qpn, &sa, &al);
        q->out_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (q->out_fd < 0 || connect(q->out_fd, (struct sockaddr *)&sa, al) < 0) {
            if (q->out_fd >= 0)
                close(q->out_fd);
            q->out_fd = -1;
            return EHOSTUNREACH; /* no such remote QP */
        }
        break;
    }
    default:
        return EINVAL;
    }
    qp->state = a->qp_state;
    return 0;
}
