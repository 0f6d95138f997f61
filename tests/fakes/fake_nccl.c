/* fake_nccl.c - a fake NCCL for tests, over host memory and shared files.
 *
 * "Device" buffers of the fake cudart are host memory, so the collectives
 * here are plain loops. Ranks in separate processes (mpirun -np N) meet in a
 * file that ncclGetUniqueId names inside the unique id: every rank maps it
 * (MAP_SHARED), so the ranks share one segment holding a barrier and one
 * data slot per rank. Each call runs to completion before it returns (the
 * stream argument is ignored, as the fake cudart's streams are dummies):
 *   collective: copy my input into my slot; barrier; compute my output
 *               from every slot; barrier (slots free again).
 *   group:      ncclSend/ncclRecv between ncclGroupStart/End are queued; at
 *               ncclGroupEnd each rank packs its sends into its slot and
 *               publishes (offset, bytes) per peer; barrier; each receive
 *               copies from its peer's slot; barrier. One send per peer per
 *               group, and every rank must end its group at the same time
 *               (true of ring and all-to-all patterns).
 * Only float32 (ncclFloat32 = 7) and ncclSum (0) are implemented.
 *
 * Knobs (env): FAKE_NCCL_SLOT_BYTES (largest message per rank, default
 * 64 MiB; the file is sparse), FAKE_NCCL_DIR (where the segment lives,
 * default /dev/shm or /tmp), FAKE_NCCL_CORRUPT=1 (all-reduce results are off
 * by one in element 0, so a correctness check must see it).
 * Failure injection: FAKE_NCCL_FAIL=async makes the FAKE_NCCL_FAIL_AT-th
 * collective call of the process (default 1; a group counts once) return
 * at once without doing its work, as if a peer died under it: the
 * communicator then reports ncclRemoteError through ncclCommGetAsyncError
 * and the stream never drains (this fake sets the fake cudart's
 * FAKE_STREAM_HANG). FAKE_NCCL_FAIL=hang does the same without the error.
 * FAKE_NCCL_ABORT_LOG=FILE appends "abort rank R" for every ncclCommAbort.
 * Build variants: -DFAKE_MISSING_SYMBOL drops ncclCommInitRank,
 * -DFAKE_NO_ALLTOALL drops ncclAlltoAll and reports version 2.18.5.
 *
 * Profiler plugin (for `chainprof run`): as NCCL does, the first
 * communicator loads NCCL_PROFILER_PLUGIN (a path, or NAME for
 * libnccl-profiler-NAME.so; unset: libnccl-profiler.so; "none": no plugin),
 * takes the newest ncclProfiler_vN it exports (N from
 * FAKE_NCCL_PROFILER_MAX, default 6, down to 1), calls init per
 * communicator and drives startEvent / recordEventState / stopEvent in
 * NCCL's order: group API, collective / point-to-point API, group,
 * operation, kernel launch, operation stop (enqueued), kernel channel
 * (ptimer = CLOCK_MONOTONIC + 0.5 s, the fake "GPU timer"), proxy
 * operations and steps with their states, then the stops; finalize at
 * destroy. Descriptors are laid out per version (src/collect/col_nprof_abi.h,
 * which tests/vendor checks against NCCL's headers).
 *
 * FAKE_NCCL_NET=tcp moves the data over TCP instead of the shared file:
 * every rank listens on its host's first non-loopback IPv4 address (the
 * address and port go into the shared file), and every ordered pair of
 * ranks gets one connection for the data the first sends the second. A
 * transfer is cut in steps of FAKE_NCCL_CHUNK bytes (default 65536): the
 * receiver grants a step (clear to send), the sender sends it, the receiver
 * acknowledges it, which gives proxy steps the states NCCL's network proxy
 * reports (waiting for the peer, on the wire, received). Communicators
 * count as spanning as many nodes as distinct addresses. Every
 * collective is every rank sending its part to every peer at once, one
 * thread per peer and direction; network namespaces with a throttled link
 * then show the slow link in the per-peer proxy figures.
 */
#include "collect/col_nprof_abi.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OK = 0, SYSTEM_ERROR = 2, INTERNAL_ERROR = 3, INVALID_ARGUMENT = 4, INVALID_USAGE = 5, REMOTE_ERROR = 6 };
enum { MAX_RANKS = 64, MAX_GROUP = 2 * MAX_RANKS, F32 = 7, SUM = 0 };

typedef struct { char internal[128]; } fake_id;

typedef struct msg { uint64_t off, bytes; } msg;
typedef struct shared_hdr {
    atomic_int joined, count, sense;
    msg table[MAX_RANKS][MAX_RANKS]; /* table[src][dst]: src's send to dst in src's slot */
    uint32_t tcp_ip[MAX_RANKS];      /* FAKE_NCCL_NET=tcp: each rank's address (network order) */
    uint16_t tcp_port[MAX_RANKS];
} shared_hdr;

typedef struct fake_comm {
    shared_hdr *h;
    char *data;
    size_t slot, map_bytes;
    int n, rank, sense;
    int async_err; /* what ncclCommGetAsyncError reports */
    /* profiler plugin */
    void *pctx;
    int pmask;
    uint64_t hash;
    int n_nodes;
    uint64_t seq[8];
    /* FAKE_NCCL_NET=tcp */
    int tcp;
    int *send_fd, *recv_fd; /* per peer: the connection I send on / receive on */
} fake_comm;

typedef struct p2p { int send; void *buf; size_t count; int peer; fake_comm *c; void *api; } p2p;
static p2p group_ops[MAX_GROUP];

/* ---- the profiler plugin, driven as NCCL drives it ---- */

static struct {
    pthread_once_t once;
    int version; /* 0: none */
    const void *table;
} prof = { PTHREAD_ONCE_INIT, 0, NULL };

static void prof_load(void)
{
    const char *name = getenv("NCCL_PROFILER_PLUGIN");
    if (name && !strcasecmp(name, "none"))
        return;
    void *h = dlopen(name && *name ? name : "libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
    size_t n = name ? strlen(name) : 0;
    if (!h && n && !strchr(name, '/') && (strncmp(name, "lib", 3) || n < 3 || strcmp(name + n - 3, ".so"))) {
        char lib[512];
        snprintf(lib, sizeof lib, "libnccl-profiler-%s.so", name);
        h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h)
        return;
    const char *mx = getenv("FAKE_NCCL_PROFILER_MAX");
    int max = mx && *mx ? atoi(mx) : 6;
    for (int v = max > 6 ? 6 : max; v >= 1; v--) { /* newest first, as NCCL looks them up */
        char sym[32];
        snprintf(sym, sizeof sym, "ncclProfiler_v%d", v);
        const void *t = dlsym(h, sym);
        if (t) {
            prof.version = v;
            prof.table = t;
            return;
        }
    }
}

__attribute__((unused)) static uint64_t hash_id(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void prof_logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

__attribute__((unused)) static void prof_init(fake_comm *c)
{
    pthread_once(&prof.once, prof_load);
    c->pctx = NULL;
    c->pmask = 0;
    if (!prof.version)
        return;
    int rc = 1, mask = 0;
    void *ctx = NULL;
    char name[32];
    snprintf(name, sizeof name, "fake-%d", c->n);
    switch (prof.version) {
    case 1: rc = ((const np_v1 *)prof.table)->init(&ctx, &mask); break;
    case 2: rc = ((const np_v2 *)prof.table)->init(&ctx, &mask); break;
    case 3: rc = ((const np_v3 *)prof.table)->init(&ctx, &mask); break;
    case 4:
        rc = ((const np_v4 *)prof.table)->init(&ctx, &mask, name, c->hash, c->n_nodes, c->n, c->rank, prof_logger);
        break;
    default:
        rc = ((const np_v5 *)prof.table)->init(&ctx, c->hash, &mask, name, c->n_nodes, c->n, c->rank, prof_logger);
        break;
    }
    if (rc == 0) { /* a failing init disables the plugin for this communicator */
        c->pctx = ctx;
        c->pmask = mask;
    }
}

static void prof_finalize(fake_comm *c)
{
    if (c->pctx)
        ((const np_v1 *)prof.table)->finalize(c->pctx); /* finalize sits at one offset in every version */
    c->pctx = NULL;
}

/* An event as NCCL knows it, before it is laid out for the plugin's version. */
typedef struct pev {
    uint64_t type;
    void *parent, *group;
    int rank;
    const char *func, *dtype;
    size_t count;
    int root_peer;
    uint64_t seq;
    void *stream;
    int depth;
    np_proxy_op op;
    int step;
    uint64_t ptimer;
} pev;

static const char *const v1_funcs[] = NP_V1_FUNCS;
static const char *const dtypes[] = NP_DATATYPES;

static uint8_t index_of(const char *const *tab, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tab[i], s))
            return (uint8_t)i;
    return 0;
}
#define IDX(tab, s) index_of(tab, sizeof tab / sizeof *tab, s)

static void *prof_start(fake_comm *c, const pev *e)
{
    if (!c->pctx || !(c->pmask & (int)e->type))
        return NULL;
    void *h = NULL;
    char name[32];
    snprintf(name, sizeof name, "fake-%d", c->n);
    switch (prof.version) {
    case 1: {
        np_descr_v1 d;
        memset(&d, 0, sizeof d);
        d.type = (uint8_t)e->type, d.parent = e->group, d.rank = c->rank;
        if (e->type == NP_COLL) {
            d.coll.name = name, d.coll.comm_hash = c->hash, d.coll.seq = e->seq, d.coll.func = IDX(v1_funcs, e->func);
            d.coll.count = e->count, d.coll.root = e->root_peer, d.coll.datatype = IDX(dtypes, e->dtype);
            d.coll.n_max_channels = 1, d.coll.n_warps = 8, d.coll.algo = 1 /* RING */, d.coll.proto = 2 /* SIMPLE */;
        } else if (e->type == NP_P2P) {
            d.p2p.name = name, d.p2p.comm_hash = c->hash, d.p2p.func = IDX(v1_funcs, e->func);
            d.p2p.count = e->count, d.p2p.datatype = IDX(dtypes, e->dtype), d.p2p.peer = e->root_peer;
        } else if (e->type == NP_PROXY_OP) {
            d.parent = e->parent, d.proxy_op = e->op;
        } else if (e->type == NP_PROXY_STEP) {
            d.parent = e->parent, d.proxy_step.step = e->step;
        }
        ((const np_v1 *)prof.table)->start_event(c->pctx, &h, &d);
        break;
    }
    case 2:
    case 3: {
        np_descr_v3 d3;
        np_descr_v2 d2;
        memset(&d3, 0, sizeof d3);
        memset(&d2, 0, sizeof d2);
        d2.type = d3.type = (uint8_t)e->type, d2.parent = d3.parent = e->group, d2.rank = d3.rank = c->rank;
        if (e->type == NP_COLL) {
            d2.coll.name = d3.coll.name = name, d2.coll.comm_hash = d3.coll.comm_hash = c->hash;
            d2.coll.seq = d3.coll.seq = e->seq, d2.coll.func = d3.coll.func = e->func;
            d2.coll.count = d3.coll.count = e->count, d2.coll.root = d3.coll.root = e->root_peer;
            d2.coll.datatype = d3.coll.datatype = e->dtype, d2.coll.n_max_channels = d3.coll.n_max_channels = 1;
            d2.coll.n_warps = d3.coll.n_warps = 8, d2.coll.algo = d3.coll.algo = "RING";
            d2.coll.proto = d3.coll.proto = "SIMPLE";
        } else if (e->type == NP_P2P) {
            d2.p2p.name = d3.p2p.name = name, d2.p2p.comm_hash = d3.p2p.comm_hash = c->hash;
            d2.p2p.func = d3.p2p.func = e->func, d2.p2p.count = d3.p2p.count = e->count;
            d2.p2p.datatype = d3.p2p.datatype = e->dtype, d2.p2p.peer = d3.p2p.peer = e->root_peer;
        } else if (e->type == NP_PROXY_OP) {
            d2.parent = d3.parent = e->parent, d2.proxy_op = d3.proxy_op = e->op;
        } else if (e->type == NP_PROXY_STEP) {
            d2.parent = d3.parent = e->parent, d2.proxy_step.step = d3.proxy_step.step = e->step;
        } else if (e->type == NP_KERNEL_CH) {
            d3.parent = e->parent, d3.kernel_ch.channel_id = 0;
        }
        if (prof.version == 2)
            ((const np_v2 *)prof.table)->start_event(c->pctx, &h, &d2);
        else
            ((const np_v3 *)prof.table)->start_event(c->pctx, &h, &d3);
        break;
    }
    case 4: {
        np_descr_v4 d;
        memset(&d, 0, sizeof d);
        d.type = (uint8_t)e->type, d.parent = e->group, d.rank = c->rank;
        if (e->type == NP_COLL) {
            d.coll.seq = e->seq, d.coll.func = e->func, d.coll.count = e->count, d.coll.root = e->root_peer;
            d.coll.datatype = e->dtype, d.coll.n_channels = 1, d.coll.n_warps = 8, d.coll.algo = "RING";
            d.coll.proto = "SIMPLE";
        } else if (e->type == NP_P2P) {
            d.p2p.func = e->func, d.p2p.count = e->count, d.p2p.datatype = e->dtype, d.p2p.peer = e->root_peer;
            d.p2p.n_channels = 1;
        } else if (e->type == NP_PROXY_OP) {
            d.parent = e->parent, d.proxy_op = e->op;
        } else if (e->type == NP_PROXY_STEP) {
            d.parent = e->parent, d.proxy_step.step = e->step;
        } else if (e->type == NP_KERNEL_CH) {
            d.parent = e->parent, d.kernel_ch.channel_id = 0, d.kernel_ch.ptimer = e->ptimer;
        }
        ((const np_v4 *)prof.table)->start_event(c->pctx, &h, &d);
        break;
    }
    default: { /* v5 and v6: API events parent the operations */
        np_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = e->type, d.parent = e->parent, d.rank = c->rank;
        switch (e->type) {
        case NP_GROUP_API: d.group_api.group_depth = e->depth; break;
        case NP_COLL_API:
            d.coll_api.func = e->func, d.coll_api.count = e->count, d.coll_api.datatype = e->dtype;
            d.coll_api.root = e->root_peer, d.coll_api.stream = e->stream;
            break;
        case NP_P2P_API:
            d.p2p_api.func = e->func, d.p2p_api.count = e->count, d.p2p_api.datatype = e->dtype;
            d.p2p_api.stream = e->stream;
            break;
        case NP_KERNEL_LAUNCH: d.kernel_launch.stream = e->stream; break;
        case NP_COLL:
            d.coll.seq = e->seq, d.coll.func = e->func, d.coll.count = e->count, d.coll.root = e->root_peer;
            d.coll.datatype = e->dtype, d.coll.n_channels = 1, d.coll.n_warps = 8, d.coll.algo = "RING";
            d.coll.proto = "SIMPLE", d.coll.parent_group = e->group;
            break;
        case NP_P2P:
            d.p2p.func = e->func, d.p2p.count = e->count, d.p2p.datatype = e->dtype, d.p2p.peer = e->root_peer;
            d.p2p.n_channels = 1, d.p2p.parent_group = e->group;
            break;
        case NP_PROXY_OP: d.proxy_op = e->op; break;
        case NP_PROXY_STEP: d.proxy_step.step = e->step; break;
        case NP_KERNEL_CH: d.kernel_ch.channel_id = 0, d.kernel_ch.ptimer = e->ptimer; break;
        default: break;
        }
        ((const np_v5 *)prof.table)->start_event(c->pctx, &h, &d);
        break;
    }
    }
    return h;
}

static void prof_stop(fake_comm *c, void *h)
{
    if (c->pctx && h)
        ((const np_v1 *)prof.table)->stop_event(h); /* stopEvent sits at one offset in every version */
}

/* state with its argument (trans size, ptimer), in the version's layout */
static void prof_state(fake_comm *c, void *h, int state, uint64_t value)
{
    if (!c->pctx || !h)
        return;
    if (prof.version <= 3) {
        np_state_args_v1 a;
        memset(&a, 0, sizeof a);
        if (state <= 7) { /* proxy op states carry the size; step states nothing (as NCCL) */
            a.proxy_op.trans_size = value;
            a.proxy_op.steps = 1;
        }
        ((const np_v1 *)prof.table)->record_event_state(h, state, &a);
    } else {
        np_state_args_v4 a;
        memset(&a, 0, sizeof a);
        if (state == 22 /* KernelChStop */)
            a.kernel_ch.ptimer = value;
        else
            a.proxy_step.trans_size = value;
        ((const np_v4 *)prof.table)->record_event_state(h, state, &a);
    }
}

static uint64_t fake_ptimer(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 500000000u;
}

/* One API call's events, NCCL's order (see the top). */
typedef struct pcall {
    fake_comm *c;
    void *group_api, *api, *group, *op, *kch;
    bool own_group; /* the call made its own (implicit) group */
} pcall;

static int group_depth, group_n;
static void *user_group_api; /* the GroupApi event of the user's ncclGroupStart */

static void pcall_api(pcall *p, fake_comm *c, bool coll, const char *func, size_t count, int dt, int root, void *stream)
{
    memset(p, 0, sizeof *p);
    p->c = c;
    if (!c || !c->pctx)
        return;
    if (group_depth == 0) { /* NCCL wraps a lone call in a group of its own */
        pev g = { .type = NP_GROUP_API, .depth = 1 };
        p->group_api = prof_start(c, &g);
        p->own_group = true;
    } else { /* the user's group: its API event starts with its first call */
        if (!user_group_api) {
            pev g = { .type = NP_GROUP_API, .depth = group_depth };
            user_group_api = prof_start(c, &g);
        }
        p->group_api = user_group_api;
    }
    pev a = { .type = coll ? NP_COLL_API : NP_P2P_API, .parent = p->group_api, .func = func, .count = count,
              .dtype = dt >= 0 && dt < (int)(sizeof dtypes / sizeof *dtypes) ? dtypes[dt] : "ncclFloat32",
              .root_peer = root, .stream = stream };
    p->api = prof_start(c, &a);
    prof_stop(c, p->api); /* the API event ends when the call has enqueued */
}

/* The launch of one collective (or of a group's first point-to-point op). */
static void pcall_launch(pcall *p, bool coll, const char *func, size_t count, int dt, int root_peer, void *stream,
                         bool kch)
{
    fake_comm *c = p->c;
    if (!c || !c->pctx)
        return;
    if (!p->group) {
        pev g = { .type = NP_GROUP };
        p->group = prof_start(c, &g);
    }
    int fidx = IDX(v1_funcs, func);
    pev o = { .type = coll ? NP_COLL : NP_P2P, .parent = p->api, .group = p->group, .func = func, .count = count,
              .dtype = dt >= 0 && dt < (int)(sizeof dtypes / sizeof *dtypes) ? dtypes[dt] : "ncclFloat32",
              .root_peer = root_peer, .seq = coll ? c->seq[fidx & 7]++ : 0, .stream = stream };
    p->op = prof_start(c, &o);
    pev k = { .type = NP_KERNEL_LAUNCH, .parent = p->group_api, .stream = stream };
    void *kl = prof_start(c, &k);
    prof_stop(c, kl);
    prof_stop(c, p->op); /* stopEvent of an operation: it has been enqueued */
    if (kch) {
        pev ch = { .type = NP_KERNEL_CH, .parent = p->op, .ptimer = fake_ptimer() };
        p->kch = prof_start(c, &ch);
    }
}

static void pcall_end(pcall *p)
{
    fake_comm *c = p->c;
    if (!c || !c->pctx)
        return;
    if (p->kch) {
        prof_state(c, p->kch, 22 /* KernelChStop */, fake_ptimer());
        prof_stop(c, p->kch);
    }
    prof_stop(c, p->group);
    if (p->own_group)
        prof_stop(c, p->group_api);
}

/* ---- FAKE_NCCL_NET=tcp ---- */

enum { MSG_CTS = 1, MSG_DATA = 2, MSG_ACK = 3 };
typedef struct wire_msg { uint32_t type, step, len, pad; } wire_msg;

__attribute__((unused)) static int want_tcp(void)
{
    const char *e = getenv("FAKE_NCCL_NET");
    return e && !strcmp(e, "tcp");
}

static size_t chunk_bytes(void)
{
    const char *e = getenv("FAKE_NCCL_CHUNK");
    long long v = e ? atoll(e) : 0;
    return v > 0 ? (size_t)v : 65536;
}

static int full_io(int fd, void *buf, size_t n, int wr)
{
    char *p = buf;
    while (n) {
        ssize_t k = wr ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static uint32_t my_address(void)
{
    struct ifaddrs *ifs, *i;
    uint32_t ip = htonl(INADDR_LOOPBACK);
    if (getifaddrs(&ifs) != 0)
        return ip;
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
            uint32_t a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
            if ((ntohl(a) >> 24) != 127) {
                ip = a;
                break;
            }
        }
    freeifaddrs(ifs);
    return ip;
}

/* Publish my listener, then connect to every peer (my send connections)
 * and accept every peer (my receive connections, named by a hello). */
__attribute__((unused)) static int tcp_listen(fake_comm *c, int *lfd)
{
    *lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t al = sizeof a;
    if (*lfd < 0 || bind(*lfd, (struct sockaddr *)&a, sizeof a) || listen(*lfd, MAX_RANKS) ||
        getsockname(*lfd, (struct sockaddr *)&a, &al))
        return SYSTEM_ERROR;
    c->h->tcp_ip[c->rank] = my_address();
    c->h->tcp_port[c->rank] = a.sin_port;
    return OK;
}

__attribute__((unused)) static int tcp_connect_all(fake_comm *c, int lfd)
{
    c->send_fd = calloc((size_t)c->n, sizeof(int));
    c->recv_fd = calloc((size_t)c->n, sizeof(int));
    if (!c->send_fd || !c->recv_fd)
        return SYSTEM_ERROR;
    for (int p = 0; p < c->n; p++)
        c->send_fd[p] = c->recv_fd[p] = -1;
    int one = 1;
    for (int p = 0; p < c->n; p++) {
        if (p == c->rank)
            continue;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = c->h->tcp_ip[p], .sin_port = c->h->tcp_port[p] };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int32_t me = c->rank;
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) || full_io(fd, &me, sizeof me, 1))
            return SYSTEM_ERROR;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->send_fd[p] = fd;
    }
    for (int k = 0; k < c->n - 1; k++) {
        int fd = accept(lfd, NULL, NULL);
        int32_t who;
        if (fd < 0 || full_io(fd, &who, sizeof who, 0) || who < 0 || who >= c->n)
            return SYSTEM_ERROR;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->recv_fd[who] = fd;
    }
    uint32_t first = c->h->tcp_ip[0];
    c->n_nodes = 1;
    for (int p = 0; p < c->n; p++) { /* distinct addresses = nodes */
        bool seen = false;
        for (int q = 0; q < p; q++)
            seen |= c->h->tcp_ip[q] == c->h->tcp_ip[p];
        if (!seen && c->h->tcp_ip[p] != first)
            c->n_nodes++;
    }
    return OK;
}

/* One direction to one peer, in steps, with the proxy events. */
typedef struct xfer {
    fake_comm *c;
    void *parent; /* the operation */
    int peer, send;
    char *buf;
    size_t bytes;
    int rc;
} xfer;

static void *xfer_main(void *arg)
{
    xfer *x = arg;
    fake_comm *c = x->c;
    size_t chunk = chunk_bytes(), steps = (x->bytes + chunk - 1) / chunk;
    int fd = x->send ? c->send_fd[x->peer] : c->recv_fd[x->peer];
    pev o = { .type = NP_PROXY_OP, .parent = x->parent,
              .op = { getpid(), 0, x->peer, (int)steps, (int)chunk, x->send } };
    void *op = prof_start(c, &o);
    bool v4 = prof.version >= 4;
    if (!v4)
        prof_state(c, op, x->send ? 0 /* SendPosted */ : 4 /* RecvPosted */, 0);
    x->rc = OK;
    for (size_t k = 0; k < steps && x->rc == OK; k++) {
        size_t off = k * chunk, len = x->bytes - off < chunk ? x->bytes - off : chunk;
        pev s = { .type = NP_PROXY_STEP, .parent = op, .step = (int)k };
        void *st = prof_start(c, &s);
        wire_msg m = { 0 };
        if (x->send) {
            prof_state(c, st, 8 /* SendGPUWait */, len);
            if (v4)
                prof_state(c, st, 20 /* SendPeerWait_v4 */, len);
            else
                prof_state(c, op, 1 /* SendRemFifoWait */, len);
            if (full_io(fd, &m, sizeof m, 0) || m.type != MSG_CTS || m.step != k) {
                x->rc = SYSTEM_ERROR;
                break;
            }
            prof_state(c, st, 9 /* SendWait */, len);
            if (!v4)
                prof_state(c, op, 2 /* SendTransmitted */, off + len);
            wire_msg d = { MSG_DATA, (uint32_t)k, (uint32_t)len, 0 };
            if (full_io(fd, &d, sizeof d, 1) || full_io(fd, x->buf + off, len, 1) || full_io(fd, &m, sizeof m, 0) ||
                m.type != MSG_ACK || m.step != k)
                x->rc = SYSTEM_ERROR;
        } else {
            wire_msg cts = { MSG_CTS, (uint32_t)k, 0, 0 };
            if (full_io(fd, &cts, sizeof cts, 1)) {
                x->rc = SYSTEM_ERROR;
                break;
            }
            prof_state(c, st, 10 /* RecvWait */, len);
            if (full_io(fd, &m, sizeof m, 0) || m.type != MSG_DATA || m.step != k || m.len != len ||
                full_io(fd, x->buf + off, len, 0)) {
                x->rc = SYSTEM_ERROR;
                break;
            }
            prof_state(c, st, 11 /* RecvFlushWait */, len);
            if (!v4)
                prof_state(c, op, 5 /* RecvReceived */, off + len);
            prof_state(c, st, 12 /* RecvGPUWait */, len);
            wire_msg ack = { MSG_ACK, (uint32_t)k, 0, 0 };
            if (full_io(fd, &ack, sizeof ack, 1))
                x->rc = SYSTEM_ERROR;
        }
        prof_stop(c, st);
    }
    if (!v4)
        prof_state(c, op, x->send ? 3 /* SendDone */ : 7 /* RecvDone */, x->bytes);
    prof_stop(c, op);
    return NULL;
}

/* Move sends[p] to peer p and recvs[p] from peer p, all at once. */
static int tcp_exchange(fake_comm *c, void *parent, char **sends, const size_t *send_n, char **recvs,
                        const size_t *recv_n)
{
    xfer x[2 * MAX_RANKS];
    pthread_t t[2 * MAX_RANKS];
    int n = 0, rc = OK;
    for (int p = 0; p < c->n; p++) {
        if (p == c->rank)
            continue;
        if (sends[p] && send_n[p])
            x[n++] = (xfer){ c, parent, p, 1, sends[p], send_n[p], OK };
        if (recvs[p] && recv_n[p])
            x[n++] = (xfer){ c, parent, p, 0, recvs[p], recv_n[p], OK };
    }
    int started = 0;
    for (; started < n; started++)
        if (pthread_create(&t[started], NULL, xfer_main, &x[started]) != 0) {
            rc = SYSTEM_ERROR;
            break;
        }
    for (int i = 0; i < started; i++) {
        pthread_join(t[i], NULL);
        if (x[i].rc)
            rc = x[i].rc;
    }
    return rc;
}

int ncclGetVersion(int *v)
{
#ifdef FAKE_NO_ALLTOALL
    *v = 21805;
#else
    *v = 22809;
#endif
    return OK;
}

const char *ncclGetErrorString(int e)
{
    switch (e) {
    case OK: return "no error";
    case SYSTEM_ERROR: return "unhandled system error (fake)";
    case INVALID_ARGUMENT: return "invalid argument (fake)";
    case INVALID_USAGE: return "invalid usage (fake)";
    case REMOTE_ERROR: return "remote process exited or there was a network error (fake)";
    default: return "internal error (fake)";
    }
}

static const char *seg_dir(void)
{
    const char *d = getenv("FAKE_NCCL_DIR");
    if (d && *d)
        return d;
    struct stat st;
    return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
}

int ncclGetUniqueId(fake_id *id)
{
    static int counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "%s/fake_nccl.%d.%d.%ld", seg_dir(), (int)getpid(), counter++,
             (long)ts.tv_nsec);
    return OK;
}

/* Sense-reversing barrier over the shared header; gives up after 60 s so a
 * dead peer fails the call instead of hanging the test. */
static int barrier(fake_comm *c)
{
    c->sense = !c->sense;
    if (atomic_fetch_add(&c->h->count, 1) == c->n - 1) {
        atomic_store(&c->h->count, 0);
        atomic_store(&c->h->sense, c->sense);
        return OK;
    }
    struct timespec t0, now, nap = { 0, 20000 };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned spin = 0; atomic_load(&c->h->sense) != c->sense; spin++) {
        if (spin < 64) {
            sched_yield();
            continue;
        }
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60)
            return SYSTEM_ERROR;
    }
    return OK;
}

#ifndef FAKE_MISSING_SYMBOL
static size_t slot_bytes(void)
{
    const char *s = getenv("FAKE_NCCL_SLOT_BYTES");
    long long v = s ? atoll(s) : 0;
    return v > 0 ? (size_t)v : (size_t)64 << 20;
}

int ncclCommInitRank(fake_comm **out, int n, fake_id id, int rank)
{
    if (n < 1 || n > MAX_RANKS || rank < 0 || rank >= n || strncmp(id.internal, "/", 1) != 0)
        return INVALID_ARGUMENT;
    fake_comm *c = calloc(1, sizeof *c);
    if (!c)
        return SYSTEM_ERROR;
    c->n = n, c->rank = rank, c->slot = slot_bytes();
    size_t hdr = (sizeof(shared_hdr) + 4095) & ~(size_t)4095;
    c->map_bytes = hdr + c->slot * (size_t)n;
    int fd = open(id.internal, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_bytes) != 0) {
        if (fd >= 0)
            close(fd);
        free(c);
        return SYSTEM_ERROR;
    }
    void *m = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        free(c);
        return SYSTEM_ERROR;
    }
    c->h = m;
    c->data = (char *)m + hdr;
    c->hash = hash_id(id.internal); /* the same on every rank, as NCCL's commHash */
    c->n_nodes = 1;
    c->tcp = want_tcp();
    int lfd = -1;
    if (c->tcp && tcp_listen(c, &lfd) != OK) {
        if (lfd >= 0)
            close(lfd);
        munmap(m, c->map_bytes);
        free(c);
        return SYSTEM_ERROR;
    }
    /* wait until every rank has mapped the file (and published its
     * address), then it can go */
    atomic_fetch_add(&c->h->joined, 1);
    struct timespec nap = { 0, 100000 };
    for (int i = 0; atomic_load(&c->h->joined) < n; i++) {
        if (i > 600000) { /* 60 s */
            if (lfd >= 0)
                close(lfd);
            munmap(m, c->map_bytes);
            free(c);
            return SYSTEM_ERROR;
        }
        nanosleep(&nap, NULL);
    }
    int rc = barrier(c);
    if (rc == OK && c->tcp)
        rc = tcp_connect_all(c, lfd);
    if (lfd >= 0)
        close(lfd);
    if (rank == 0)
        unlink(id.internal);
    if (rc == OK)
        prof_init(c);
    *out = c;
    return rc;
}
#endif

static void comm_free(fake_comm *c)
{
    prof_finalize(c);
    for (int p = 0; c->tcp && p < c->n; p++) {
        if (c->send_fd && c->send_fd[p] >= 0)
            close(c->send_fd[p]);
        if (c->recv_fd && c->recv_fd[p] >= 0)
            close(c->recv_fd[p]);
    }
    free(c->send_fd);
    free(c->recv_fd);
    munmap(c->h, c->map_bytes);
    free(c);
}

int ncclCommDestroy(fake_comm *c)
{
    if (!c)
        return INVALID_ARGUMENT;
    int rc = barrier(c);
    comm_free(c);
    return rc;
}

int ncclCommAbort(fake_comm *c)
{
    const char *log = getenv("FAKE_NCCL_ABORT_LOG");
    FILE *f = c && log && *log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "abort rank %d\n", c->rank);
        fclose(f);
    }
    if (c)
        comm_free(c);
    return OK;
}

int ncclCommGetAsyncError(fake_comm *c, int *err)
{
    if (!c || !err)
        return INVALID_ARGUMENT;
    *err = c->async_err;
    return OK;
}

/* Whether this collective call is the one FAKE_NCCL_FAIL picks; if so it
 * leaves the work undone and the stream stuck (see the top). */
static int injected(fake_comm *c)
{
    static int calls;
    const char *mode = getenv("FAKE_NCCL_FAIL");
    if (!mode || !*mode)
        return 0;
    const char *at = getenv("FAKE_NCCL_FAIL_AT");
    if (++calls != (at && *at ? atoi(at) : 1))
        return 0;
    if (!strcmp(mode, "async"))
        c->async_err = REMOTE_ERROR;
    setenv("FAKE_STREAM_HANG", "1", 1);
    return 1;
}

static float *slot_of(fake_comm *c, int r) { return (float *)(void *)(c->data + (size_t)r * c->slot); }

/* Copy in bytes of mine into my slot and wait for everyone. */
static int post(fake_comm *c, const void *in, size_t bytes)
{
    if (bytes > c->slot)
        return INVALID_ARGUMENT;
    if (bytes)
        memmove(slot_of(c, c->rank), in, bytes);
    return barrier(c);
}

static int reduce_from(fake_comm *c, float *out, size_t count, size_t first)
{
    for (size_t i = 0; i < count; i++) {
        float s = 0;
        for (int r = 0; r < c->n; r++)
            s += slot_of(c, r)[first + i];
        out[i] = s;
    }
    return OK;
}

static int shm_allreduce(fake_comm *c, const void *s, void *r, size_t count)
{
    int rc = post(c, s, count * 4);
    if (rc)
        return rc;
    reduce_from(c, r, count, 0);
    if (count && getenv("FAKE_NCCL_CORRUPT") && atoi(getenv("FAKE_NCCL_CORRUPT")))
        ((float *)r)[0] += 1;
    return barrier(c);
}

/* TCP: every peer's whole buffer comes to me; the sum is computed here. */
static int tcp_allreduce(fake_comm *c, void *op, const void *s, void *r, size_t count)
{
    size_t bytes = count * 4;
    float *mine = malloc(bytes ? bytes : 1), *tmp = malloc((bytes ? bytes : 1) * (size_t)c->n);
    char *sends[MAX_RANKS], *recvs[MAX_RANKS];
    size_t sn[MAX_RANKS], rn[MAX_RANKS];
    if (!mine || !tmp) {
        free(mine), free(tmp);
        return SYSTEM_ERROR;
    }
    memcpy(mine, s, bytes);
    for (int p = 0; p < c->n; p++)
        sends[p] = (char *)mine, sn[p] = bytes, recvs[p] = (char *)(tmp + (size_t)p * count), rn[p] = bytes;
    int rc = tcp_exchange(c, op, sends, sn, recvs, rn);
    for (size_t i = 0; i < count && rc == OK; i++) {
        float v = mine[i];
        for (int p = 0; p < c->n; p++)
            if (p != c->rank)
                v += tmp[(size_t)p * count + i];
        ((float *)r)[i] = v;
    }
    free(mine), free(tmp);
    return rc;
}

int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op, fake_comm *c, void *stream)
{
    if (dt != F32 || op != SUM || !c)
        return INVALID_ARGUMENT;
    pcall p;
    pcall_api(&p, c, true, "AllReduce", count, dt, 0, stream);
    pcall_launch(&p, true, "AllReduce", count, dt, 0, stream, true);
    int rc = injected(c) ? OK : c->tcp ? tcp_allreduce(c, p.op, s, r, count) : shm_allreduce(c, s, r, count);
    pcall_end(&p);
    return rc;
}

static int shm_reduce_scatter(fake_comm *c, const void *s, void *r, size_t recvcount)
{
    int rc = post(c, s, recvcount * 4 * (size_t)c->n);
    if (rc)
        return rc;
    reduce_from(c, r, recvcount, (size_t)c->rank * recvcount);
    return barrier(c);
}

static int tcp_reduce_scatter(fake_comm *c, void *op, const void *s, void *r, size_t rc_n)
{
    size_t bytes = rc_n * 4;
    float *tmp = malloc((bytes ? bytes : 1) * (size_t)c->n);
    char *sends[MAX_RANKS], *recvs[MAX_RANKS];
    size_t sn[MAX_RANKS], rn[MAX_RANKS];
    if (!tmp)
        return SYSTEM_ERROR;
    for (int p = 0; p < c->n; p++) {
        sends[p] = (char *)s + (size_t)p * bytes, sn[p] = bytes;
        recvs[p] = (char *)(tmp + (size_t)p * rc_n), rn[p] = bytes;
    }
    int rc = tcp_exchange(c, op, sends, sn, recvs, rn);
    const float *in = (const float *)s + (size_t)c->rank * rc_n;
    for (size_t i = 0; i < rc_n && rc == OK; i++) {
        float v = in[i];
        for (int p = 0; p < c->n; p++)
            if (p != c->rank)
                v += tmp[(size_t)p * rc_n + i];
        ((float *)r)[i] = v;
    }
    free(tmp);
    return rc;
}

int ncclReduceScatter(const void *s, void *r, size_t recvcount, int dt, int op, fake_comm *c, void *stream)
{
    if (dt != F32 || op != SUM || !c)
        return INVALID_ARGUMENT;
    pcall p;
    pcall_api(&p, c, true, "ReduceScatter", recvcount, dt, 0, stream);
    pcall_launch(&p, true, "ReduceScatter", recvcount, dt, 0, stream, true);
    int rc = injected(c) ? OK
             : c->tcp    ? tcp_reduce_scatter(c, p.op, s, r, recvcount)
                         : shm_reduce_scatter(c, s, r, recvcount);
    pcall_end(&p);
    return rc;
}

static int shm_allgather(fake_comm *c, const void *s, void *r, size_t sendcount)
{
    int rc = post(c, s, sendcount * 4);
    if (rc)
        return rc;
    for (int k = 0; k < c->n; k++)
        memmove((float *)r + (size_t)k * sendcount, slot_of(c, k), sendcount * 4);
    return barrier(c);
}

static int tcp_allgather(fake_comm *c, void *op, const void *s, void *r, size_t count)
{
    size_t bytes = count * 4;
    char *mine = malloc(bytes ? bytes : 1), *sends[MAX_RANKS], *recvs[MAX_RANKS];
    size_t sn[MAX_RANKS], rn[MAX_RANKS];
    if (!mine)
        return SYSTEM_ERROR;
    memcpy(mine, s, bytes);
    for (int p = 0; p < c->n; p++)
        sends[p] = mine, sn[p] = bytes, recvs[p] = (char *)r + (size_t)p * bytes, rn[p] = bytes;
    int rc = tcp_exchange(c, op, sends, sn, recvs, rn);
    memcpy((char *)r + (size_t)c->rank * bytes, mine, bytes);
    free(mine);
    return rc;
}

int ncclAllGather(const void *s, void *r, size_t sendcount, int dt, fake_comm *c, void *stream)
{
    if (dt != F32 || !c)
        return INVALID_ARGUMENT;
    pcall p;
    pcall_api(&p, c, true, "AllGather", sendcount, dt, 0, stream);
    pcall_launch(&p, true, "AllGather", sendcount, dt, 0, stream, true);
    int rc = injected(c) ? OK : c->tcp ? tcp_allgather(c, p.op, s, r, sendcount) : shm_allgather(c, s, r, sendcount);
    pcall_end(&p);
    return rc;
}

static int shm_broadcast(fake_comm *c, const void *s, void *r, size_t count, int root)
{
    int rc = post(c, s, c->rank == root ? count * 4 : 0);
    if (rc)
        return rc;
    memmove(r, slot_of(c, root), count * 4);
    return barrier(c);
}

static int tcp_broadcast(fake_comm *c, void *op, const void *s, void *r, size_t count, int root)
{
    size_t bytes = count * 4;
    char *sends[MAX_RANKS] = { 0 }, *recvs[MAX_RANKS] = { 0 };
    size_t sn[MAX_RANKS] = { 0 }, rn[MAX_RANKS] = { 0 };
    for (int p = 0; p < c->n; p++)
        if (c->rank == root)
            sends[p] = (char *)s, sn[p] = bytes;
    if (c->rank != root)
        recvs[root] = r, rn[root] = bytes;
    int rc = tcp_exchange(c, op, sends, sn, recvs, rn);
    if (c->rank == root)
        memmove(r, s, bytes);
    return rc;
}

int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, fake_comm *c, void *stream)
{
    if (dt != F32 || !c || root < 0 || root >= c->n)
        return INVALID_ARGUMENT;
    pcall p;
    pcall_api(&p, c, true, "Broadcast", count, dt, root, stream);
    pcall_launch(&p, true, "Broadcast", count, dt, root, stream, true);
    int rc = injected(c) ? OK
             : c->tcp    ? tcp_broadcast(c, p.op, s, r, count, root)
                         : shm_broadcast(c, s, r, count, root);
    pcall_end(&p);
    return rc;
}

#ifndef FAKE_NO_ALLTOALL
static int shm_alltoall(fake_comm *c, const void *s, void *r, size_t count)
{
    int rc = post(c, s, count * 4 * (size_t)c->n);
    if (rc)
        return rc;
    for (int k = 0; k < c->n; k++)
        memmove((float *)r + (size_t)k * count, slot_of(c, k) + (size_t)c->rank * count, count * 4);
    return barrier(c);
}

static int tcp_alltoall(fake_comm *c, void *op, const void *s, void *r, size_t count)
{
    size_t bytes = count * 4;
    char *sends[MAX_RANKS], *recvs[MAX_RANKS];
    size_t sn[MAX_RANKS], rn[MAX_RANKS];
    for (int p = 0; p < c->n; p++) {
        sends[p] = (char *)s + (size_t)p * bytes, sn[p] = bytes;
        recvs[p] = (char *)r + (size_t)p * bytes, rn[p] = bytes;
    }
    int rc = tcp_exchange(c, op, sends, sn, recvs, rn);
    memmove((char *)r + (size_t)c->rank * bytes, (const char *)s + (size_t)c->rank * bytes, bytes);
    return rc;
}

int ncclAlltoAll(const void *s, void *r, size_t count, int dt, fake_comm *c, void *stream)
{
    if (dt != F32 || !c)
        return INVALID_ARGUMENT;
    pcall p;
    pcall_api(&p, c, true, "AllToAll", count, dt, 0, stream);
    pcall_launch(&p, true, "AllToAll", count, dt, 0, stream, true);
    int rc = injected(c) ? OK : c->tcp ? tcp_alltoall(c, p.op, s, r, count) : shm_alltoall(c, s, r, count);
    pcall_end(&p);
    return rc;
}
#endif

int ncclGroupStart(void)
{
    group_depth++;
    return OK;
}

static int shm_group(fake_comm *c, int n)
{
    uint64_t off = 0;
    memset(c->h->table[c->rank], 0, sizeof c->h->table[c->rank]);
    for (int i = 0; i < n; i++) {
        p2p *o = &group_ops[i];
        if (!o->send)
            continue;
        size_t bytes = o->count * 4;
        if (off + bytes > c->slot || c->h->table[c->rank][o->peer].bytes)
            return INVALID_ARGUMENT; /* too big, or a second send to one peer */
        memcpy(c->data + (size_t)c->rank * c->slot + off, o->buf, bytes);
        c->h->table[c->rank][o->peer] = (msg){ off, bytes ? bytes : 1 }; /* nonzero: "posted" */
        off += bytes;
    }
    int rc = barrier(c);
    for (int i = 0; i < n && !rc; i++) {
        p2p *o = &group_ops[i];
        if (o->send)
            continue;
        msg m = c->h->table[o->peer][c->rank];
        size_t bytes = o->count * 4;
        if (!m.bytes || (bytes && m.bytes != bytes))
            rc = INVALID_USAGE; /* no matching send of that size */
        else if (bytes)
            memcpy(o->buf, c->data + (size_t)o->peer * c->slot + m.off, bytes);
    }
    int rc2 = barrier(c);
    return rc ? rc : rc2;
}

static int tcp_group(fake_comm *c, int n, void *const *ops)
{
    char *sends[MAX_RANKS] = { 0 }, *recvs[MAX_RANKS] = { 0 };
    size_t sn[MAX_RANKS] = { 0 }, rn[MAX_RANKS] = { 0 };
    void *parent = n ? ops[0] : NULL;
    for (int i = 0; i < n; i++) {
        p2p *o = &group_ops[i];
        if ((o->send ? sends : recvs)[o->peer])
            return INVALID_ARGUMENT; /* one send and one receive per peer per group, as the shared-file path */
        (o->send ? sends : recvs)[o->peer] = o->buf;
        (o->send ? sn : rn)[o->peer] = o->count * 4;
    }
    return tcp_exchange(c, parent, sends, sn, recvs, rn);
}

/* Run the queued point-to-point operations (all on one comm), with their
 * events: group, one P2P event per operation, kernel launch, kernel channel. */
static int run_group(pcall *p)
{
    int n = group_n;
    group_n = 0;
    if (!n)
        return OK;
    fake_comm *c = group_ops[0].c;
    for (int i = 0; i < n; i++)
        if (group_ops[i].c != c)
            return INVALID_USAGE;
    void *ops[MAX_GROUP] = { 0 };
    p->c = c;
    for (int i = 0; i < n; i++) {
        p2p *o = &group_ops[i];
        p->api = o->api;
        /* one kernel runs the group: its channel event belongs to the first op */
        pcall_launch(p, false, o->send ? "Send" : "Recv", o->count, F32, o->peer, NULL, i == 0);
        ops[i] = p->op;
    }
    int rc = injected(c) ? OK : c->tcp ? tcp_group(c, n, ops) : shm_group(c, n);
    pcall_end(p);
    return rc;
}

int ncclGroupEnd(void)
{
    if (group_depth <= 0)
        return INVALID_USAGE;
    if (--group_depth)
        return OK;
    pcall p;
    memset(&p, 0, sizeof p);
    p.group_api = user_group_api;
    int rc = run_group(&p);
    if (user_group_api && p.c)
        prof_stop(p.c, user_group_api);
    user_group_api = NULL;
    return rc;
}

static int queue(int send, void *buf, size_t count, int dt, int peer, fake_comm *c, void *stream)
{
    if (dt != F32 || !c || peer < 0 || peer >= c->n || group_n >= MAX_GROUP)
        return INVALID_ARGUMENT;
    pcall p;
    pcall_api(&p, c, false, send ? "Send" : "Recv", count, dt, peer, stream);
    group_ops[group_n++] = (p2p){ send, buf, count, peer, c, p.api };
    if (group_depth)
        return OK;
    int rc = run_group(&p); /* not in a group: NCCL runs it as a group of one */
    return rc;
}

int ncclSend(const void *s, size_t count, int dt, int peer, fake_comm *c, void *stream)
{
    return queue(1, (void *)(uintptr_t)s, count, dt, peer, c, stream);
}

int ncclRecv(void *r, size_t count, int dt, int peer, fake_comm *c, void *stream)
{
    return queue(0, r, count, dt, peer, c, stream);
}
