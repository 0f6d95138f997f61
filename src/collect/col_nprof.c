/* col_nprof.c - the communication layer: an NCCL profiler plugin.
 *
 * `chainprof run` sets NCCL_PROFILER_PLUGIN to this library's path; NCCL
 * dlopens it (the preloaded object itself), takes the newest ncclProfiler_vN
 * it supports (v6 ... v1, all exported here) and calls init per
 * communicator, then startEvent / recordEventState / stopEvent from the
 * threads that enqueue and progress operations, and finalize.
 *
 * Design
 * - Each version's entry points convert its descriptor into one normalised
 *   event and hand it to one recorder (np_start); ids, not memory, are the
 *   handles: handle = event id << 5 | type bit, so stop knows what stopped
 *   and nothing is allocated per event. Parent handles give parent ids; a
 *   proxy operation progressed for another process (PXN) has its parent in
 *   that process, which the descriptor's pid tells, and keeps no parent.
 * - Records (NEV, NEV2 continuation) go into the calling thread's ring;
 *   what they mean for the timeline (an operation's GPU-side window from
 *   kernel channels, else from its proxy operations, else its call; per
 *   peer bytes, time on the wire and time waiting for the peer from proxy
 *   steps) is the reader's work (src/readers/rd_cptrace.c).
 * - In summary mode only the operation and API events are enabled, and
 *   only to tell the NCCL call wrapper (col_nccl.c) which communicator the
 *   call used, hence intra or inter node.
 * - Profiler calls never fail NCCL: everything but init returns success.
 */
#include "col.h"
#include "col_nprof_abi.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NP_SUCCESS 0
#define NP_ERROR 3 /* ncclInternalError: init refuses, NCCL runs without the plugin */
#define MAX_COMMS 4096

typedef struct np_comm {
    uint32_t index;
    int version;
    uint64_t id;
    int n_ranks, rank, n_nodes;
    bool announced; /* its COMM record is written */
} np_comm;

static np_comm comms[MAX_COMMS];
static _Atomic uint32_t n_comms;

/* A normalised descriptor. */
typedef struct np_event {
    int tix;            /* bit position of the type */
    uint64_t parent;    /* parent id, 0 none */
    int rank;
    uint64_t seq;
    const char *func, *datatype, *algo, *proto, *name;
    uint64_t comm_hash;
    size_t count;
    int root, peer;
    unsigned n_channels, n_warps;
    void *stream;
    int group_depth;
    np_proxy_op op;
    int step;
    uint8_t channel;
    uint64_t ptimer;
} np_event;

static const char *const v1_funcs[] = NP_V1_FUNCS;
static const char *const v1_algos[] = NP_V1_ALGOS;
static const char *const v1_protos[] = NP_V1_PROTOS;
static const char *const datatypes[] = NP_DATATYPES;
#define PICK(tab, i) ((size_t)(i) < sizeof tab / sizeof *tab ? tab[i] : "unknown")

int col_nprof_comm_inter(uint32_t c)
{
    if (c >= atomic_load(&n_comms) || comms[c].n_nodes < 1)
        return -1;
    return comms[c].n_nodes > 1;
}

static uint64_t id_of(void *handle) { return (uint64_t)(uintptr_t)handle >> 5; }
static int tix_of(void *handle) { return (int)((uintptr_t)handle & 31); }

static int tix_of_type(uint64_t type)
{
    for (int i = 0; i < 16; i++)
        if (type == (uint64_t)1 << i)
            return i;
    return -1;
}

/* ---- init ---- */

static void announce(col_thread *t, np_comm *c, const char *name)
{
    if (c->announced || !col_trace_mode())
        return;
    c->announced = true;
    uint32_t sid = name && *name ? col_intern(name) : 0;
    cpt_rec r = { .kind = CPT_K_COMM, .flags = (uint16_t)c->version, .u32 = c->index, .t_ns = col_now(),
                  .dur_ns = sid, .a = c->id,
                  .b = (uint64_t)(uint32_t)c->n_ranks << 32 | (uint32_t)c->rank, .c = (uint64_t)(int64_t)c->n_nodes };
    col_push(t, &r);
}

static int mask_for(int version)
{
    if (atomic_load(&col_mode_now) == COL_SUMMARY)
        return NP_COLL | NP_P2P | (version >= 5 ? NP_COLL_API | NP_P2P_API : 0);
    int m = NP_GROUP | NP_COLL | NP_P2P | NP_PROXY_OP | NP_PROXY_STEP;
    if (version >= 3)
        m |= NP_KERNEL_CH;
    if (version >= 5)
        m |= NP_GROUP_API | NP_COLL_API | NP_P2P_API | NP_KERNEL_LAUNCH;
    return m;
}

static int np_init(int version, void **ctx, int *mask, uint64_t id, const char *name, int n_nodes, int n_ranks,
                   int rank)
{
    col_thread *t = col_self();
    if (!t || !ctx || !mask)
        return NP_ERROR;
    uint32_t i = atomic_fetch_add(&n_comms, 1);
    if (i >= MAX_COMMS)
        return NP_ERROR;
    np_comm *c = &comms[i];
    *c = (np_comm){ i, version, id, n_ranks, rank, n_nodes, false };
    *ctx = c;
    *mask = mask_for(version);
    if (version >= 4)
        announce(t, c, name); /* v1-v3: at the first operation, which names the comm */
    t->cur_comm = i;
    t->cur_inter = col_nprof_comm_inter(i);
    return NP_SUCCESS;
}

static int np_finalize(void *ctx)
{
    (void)ctx;
    return NP_SUCCESS;
}

/* ---- events ---- */

static uint32_t sid(const char *s) { return s ? col_intern_ptr(s) : 0; }

static void push_nev(col_thread *t, int op, uint32_t comm, uint64_t id, uint64_t parent, uint64_t c, uint16_t flags)
{
    cpt_rec r = { .kind = CPT_K_NEV, .op = (uint8_t)op, .flags = flags, .u32 = comm, .t_ns = col_now(), .a = id,
                  .b = parent, .c = c };
    col_push(t, &r);
}

static void push_nev2(col_thread *t, uint32_t u32, uint64_t a, uint64_t b, uint64_t c, int64_t tns, int64_t dur)
{
    cpt_rec r = { .kind = CPT_K_NEV2, .u32 = u32, .t_ns = tns, .dur_ns = dur, .a = a, .b = b, .c = c };
    col_push(t, &r);
}

/* The op and API events say which communicator the calling thread's NCCL
 * call is using. */
static void note_comm(col_thread *t, const np_comm *c)
{
    t->cur_comm = c->index;
    t->cur_inter = col_nprof_comm_inter(c->index);
}

static const uint8_t start_op[16] = {
    [0] = CPT_NEV_GROUP_START, [1] = CPT_NEV_COLL_START, [2] = CPT_NEV_P2P_START, [3] = CPT_NEV_PROXYOP_START,
    [4] = CPT_NEV_PROXYSTEP_START, [5] = CPT_NEV_PROXYCTRL_START, [6] = CPT_NEV_KCH_START,
    [8] = CPT_NEV_GROUPAPI_START, [9] = CPT_NEV_COLLAPI_START, [10] = CPT_NEV_P2PAPI_START,
    [11] = CPT_NEV_KLAUNCH_START,
};
static const uint8_t stop_op[16] = {
    [0] = CPT_NEV_GROUP_STOP, [1] = CPT_NEV_COLL_STOP, [2] = CPT_NEV_P2P_STOP, [3] = CPT_NEV_PROXYOP_STOP,
    [4] = CPT_NEV_PROXYSTEP_STOP, [5] = CPT_NEV_PROXYCTRL_STOP, [6] = CPT_NEV_KCH_STOP,
    [8] = CPT_NEV_GROUPAPI_STOP, [9] = CPT_NEV_COLLAPI_STOP, [10] = CPT_NEV_P2PAPI_STOP,
    [11] = CPT_NEV_KLAUNCH_STOP,
};

static int np_start(void *ctx, void **handle, const np_event *e)
{
    *handle = NULL;
    col_thread *t = col_self();
    np_comm *c = ctx;
    if (!t || !c || e->tix < 0 || e->tix >= 16 || !start_op[e->tix])
        return NP_SUCCESS;
    if (!c->announced && e->comm_hash) { /* v1-v3 */
        c->id = e->comm_hash;
        c->rank = e->rank;
        c->n_ranks = c->n_nodes = -1;
    }
    if (e->tix == 1 || e->tix == 2 || e->tix == 9 || e->tix == 10)
        note_comm(t, c);
    uint64_t id = col_new_id(t);
    *handle = (void *)(uintptr_t)(id << 5 | (uint64_t)e->tix);
    if (!col_tracing())
        return NP_SUCCESS;
    announce(t, c, e->name);
    int op = start_op[e->tix];
    uint16_t dev = (uint16_t)t->device; /* the GPU the calling thread uses */
    switch (e->tix) {
    case 1: /* coll */
        push_nev(t, op, c->index, id, e->parent, e->seq, dev);
        push_nev2(t, sid(e->func), e->count, (uint64_t)(int64_t)e->root,
                  sid(e->datatype) | (uint64_t)sid(e->algo) << 32, sid(e->proto), e->n_channels | e->n_warps << 8);
        break;
    case 2: /* p2p */
        push_nev(t, op, c->index, id, e->parent, (uint64_t)(int64_t)e->peer, dev);
        push_nev2(t, sid(e->func), e->count, e->n_channels, sid(e->datatype), 0, 0);
        break;
    case 3: { /* proxy op: the parent is ours only if the op was made in this process */
        bool remote = e->op.pid && e->op.pid != col_p.pid;
        push_nev(t, op, c->index, id, remote ? 0 : e->parent, (uint64_t)(int64_t)e->op.peer, dev);
        push_nev2(t, e->op.channel_id, (uint64_t)(int64_t)e->op.n_steps, (uint64_t)(int64_t)e->op.chunk_size,
                  (uint64_t)(e->op.is_send != 0) | (uint64_t)remote << 1, 0, 0);
        break;
    }
    case 4:
        push_nev(t, op, c->index, id, e->parent, (uint64_t)(int64_t)e->step, dev);
        break;
    case 6:
        push_nev(t, op, c->index, id, e->parent, e->ptimer, dev);
        push_nev2(t, e->channel, 0, 0, 0, 0, 0);
        break;
    case 8:
        push_nev(t, op, c->index, id, e->parent, (uint64_t)(int64_t)e->group_depth, dev);
        break;
    case 9:
    case 10:
        push_nev(t, op, c->index, id, e->parent, e->count, dev);
        push_nev2(t, sid(e->func), (uint64_t)(uintptr_t)e->stream, (uint64_t)(int64_t)e->root, sid(e->datatype), 0, 0);
        break;
    case 11:
        push_nev(t, op, c->index, id, e->parent, (uint64_t)(uintptr_t)e->stream, dev);
        break;
    default:
        push_nev(t, op, c->index, id, e->parent, 0, dev);
        break;
    }
    return NP_SUCCESS;
}

static int np_stop(void *handle)
{
    col_thread *t;
    if (!handle || !col_tracing() || !(t = col_self()))
        return NP_SUCCESS;
    int tix = tix_of(handle);
    if (tix < 16 && stop_op[tix])
        push_nev(t, stop_op[tix], CPT_NO_COMM, id_of(handle), 0, 0, 0);
    return NP_SUCCESS;
}

static int np_state(void *handle, int state, uint64_t value, uint64_t steps)
{
    col_thread *t;
    if (!handle || !col_tracing() || !(t = col_self()))
        return NP_SUCCESS;
    cpt_rec r = { .kind = CPT_K_NEV, .op = CPT_NEV_STATE, .flags = (uint16_t)state, .u32 = CPT_NO_COMM,
                  .t_ns = col_now(), .a = id_of(handle), .b = steps, .c = value };
    col_push(t, &r);
    return NP_SUCCESS;
}

static uint64_t parent_id(void *p) { return p ? id_of(p) : 0; }

/* ---- v1 ---- */

static int v1_init(void **ctx, int *mask) { return np_init(1, ctx, mask, 0, NULL, -1, -1, -1); }

static int v1_start(void *ctx, void **h, np_descr_v1 *d)
{
    np_event e = { .tix = tix_of_type(d->type), .parent = parent_id(d->parent), .rank = d->rank };
    if (d->type == NP_COLL) {
        e.name = d->coll.name, e.comm_hash = d->coll.comm_hash, e.seq = d->coll.seq;
        e.func = PICK(v1_funcs, d->coll.func), e.count = d->coll.count, e.root = d->coll.root;
        e.datatype = PICK(datatypes, d->coll.datatype), e.n_channels = d->coll.n_max_channels;
        e.n_warps = d->coll.n_warps, e.algo = PICK(v1_algos, d->coll.algo), e.proto = PICK(v1_protos, d->coll.proto);
    } else if (d->type == NP_P2P) {
        e.name = d->p2p.name, e.comm_hash = d->p2p.comm_hash, e.func = PICK(v1_funcs, d->p2p.func);
        e.count = d->p2p.count, e.datatype = PICK(datatypes, d->p2p.datatype), e.peer = d->p2p.peer;
    } else if (d->type == NP_PROXY_OP) {
        e.op = d->proxy_op;
    } else if (d->type == NP_PROXY_STEP) {
        e.step = d->proxy_step.step;
    }
    return np_start(ctx, h, &e);
}

static int v1_record(void *h, int state, np_state_args_v1 *a)
{
    /* only the proxy op states carry arguments in v1-v3 */
    bool op = state <= CPT_NS_PROXYOP_RECV_DONE;
    return np_state(h, state, a && op ? a->proxy_op.trans_size : 0, a && op ? (uint64_t)(int64_t)a->proxy_op.steps : 0);
}

/* ---- v2, v3 (string names; v3 adds kernel channels) ---- */

/* The fields v2 and v3 descriptors share, by name. */
#define FROM_V23(e, d)                                                                                \
    do {                                                                                              \
        if ((d)->type == NP_COLL) {                                                                   \
            (e).name = (d)->coll.name, (e).comm_hash = (d)->coll.comm_hash, (e).seq = (d)->coll.seq;  \
            (e).func = (d)->coll.func, (e).count = (d)->coll.count, (e).root = (d)->coll.root;        \
            (e).datatype = (d)->coll.datatype, (e).n_channels = (d)->coll.n_max_channels;             \
            (e).n_warps = (d)->coll.n_warps, (e).algo = (d)->coll.algo, (e).proto = (d)->coll.proto;  \
        } else if ((d)->type == NP_P2P) {                                                             \
            (e).name = (d)->p2p.name, (e).comm_hash = (d)->p2p.comm_hash, (e).func = (d)->p2p.func;   \
            (e).count = (d)->p2p.count, (e).datatype = (d)->p2p.datatype, (e).peer = (d)->p2p.peer;   \
        } else if ((d)->type == NP_PROXY_OP) {                                                        \
            (e).op = (d)->proxy_op;                                                                   \
        } else if ((d)->type == NP_PROXY_STEP) {                                                      \
            (e).step = (d)->proxy_step.step;                                                          \
        }                                                                                             \
    } while (0)

static int v2_start(void *ctx, void **h, np_descr_v2 *d)
{
    np_event e = { .tix = tix_of_type(d->type), .parent = parent_id(d->parent), .rank = d->rank };
    FROM_V23(e, d);
    return np_start(ctx, h, &e);
}

static int v2_init(void **ctx, int *mask) { return np_init(2, ctx, mask, 0, NULL, -1, -1, -1); }

static int v3_start(void *ctx, void **h, np_descr_v3 *d)
{
    np_event e = { .tix = tix_of_type(d->type), .parent = parent_id(d->parent), .rank = d->rank };
    FROM_V23(e, d);
    if (d->type == NP_KERNEL_CH)
        e.channel = d->kernel_ch.channel_id;
    return np_start(ctx, h, &e);
}

static int v3_init(void **ctx, int *mask) { return np_init(3, ctx, mask, 0, NULL, -1, -1, -1); }

/* ---- v4 ---- */

static int v4_init(void **ctx, int *mask, const char *name, uint64_t hash, int n_nodes, int n_ranks, int rank,
                   np_logger log)
{
    (void)log;
    return np_init(4, ctx, mask, hash, name, n_nodes, n_ranks, rank);
}

static int v4_start(void *ctx, void **h, np_descr_v4 *d)
{
    np_event e = { .tix = tix_of_type(d->type), .parent = parent_id(d->parent), .rank = d->rank };
    if (d->type == NP_COLL) {
        e.seq = d->coll.seq, e.func = d->coll.func, e.count = d->coll.count, e.root = d->coll.root;
        e.datatype = d->coll.datatype, e.n_channels = d->coll.n_channels, e.n_warps = d->coll.n_warps;
        e.algo = d->coll.algo, e.proto = d->coll.proto;
    } else if (d->type == NP_P2P) {
        e.func = d->p2p.func, e.count = d->p2p.count, e.datatype = d->p2p.datatype, e.peer = d->p2p.peer;
        e.n_channels = d->p2p.n_channels;
    } else if (d->type == NP_PROXY_OP) {
        e.op = d->proxy_op;
    } else if (d->type == NP_PROXY_STEP) {
        e.step = d->proxy_step.step;
    } else if (d->type == NP_KERNEL_CH) {
        e.channel = d->kernel_ch.channel_id, e.ptimer = d->kernel_ch.ptimer;
    }
    return np_start(ctx, h, &e);
}

static int v4_record(void *h, int state, np_state_args_v4 *a)
{
    uint64_t v = 0;
    if (a) {
        if (state == CPT_NS_KCH_STOP)
            v = a->kernel_ch.ptimer;
        else if (state >= CPT_NS_STEP_SEND_GPU_WAIT && state <= CPT_NS_STEP_RECV_GPU_WAIT)
            v = a->proxy_step.trans_size;
        else if (state == CPT_NS_STEP_SEND_PEER_WAIT)
            v = a->proxy_step.trans_size;
    }
    return np_state(h, state, v, 0);
}

/* ---- v5 / v6 ---- */

static int v5_init(void **ctx, uint64_t id, int *mask, const char *name, int n_nodes, int n_ranks, int rank,
                   np_logger log)
{
    (void)log;
    return np_init(5, ctx, mask, id, name, n_nodes, n_ranks, rank);
}

static int v6_init(void **ctx, uint64_t id, int *mask, const char *name, int n_nodes, int n_ranks, int rank,
                   np_logger log)
{
    (void)log;
    return np_init(6, ctx, mask, id, name, n_nodes, n_ranks, rank);
}

static int v5_start(void *ctx, void **h, np_descr_v5 *d)
{
    np_event e = { .tix = tix_of_type(d->type), .parent = parent_id(d->parent), .rank = d->rank };
    switch (d->type) {
    case NP_COLL:
        e.seq = d->coll.seq, e.func = d->coll.func, e.count = d->coll.count, e.root = d->coll.root;
        e.datatype = d->coll.datatype, e.n_channels = d->coll.n_channels, e.n_warps = d->coll.n_warps;
        e.algo = d->coll.algo, e.proto = d->coll.proto;
        break;
    case NP_P2P:
        e.func = d->p2p.func, e.count = d->p2p.count, e.datatype = d->p2p.datatype, e.peer = d->p2p.peer;
        e.n_channels = d->p2p.n_channels;
        break;
    case NP_PROXY_OP: e.op = d->proxy_op; break;
    case NP_PROXY_STEP: e.step = d->proxy_step.step; break;
    case NP_KERNEL_CH: e.channel = d->kernel_ch.channel_id, e.ptimer = d->kernel_ch.ptimer; break;
    case NP_GROUP_API: e.group_depth = d->group_api.group_depth; break;
    case NP_COLL_API:
        e.func = d->coll_api.func, e.count = d->coll_api.count, e.datatype = d->coll_api.datatype;
        e.root = d->coll_api.root, e.stream = d->coll_api.stream;
        break;
    case NP_P2P_API:
        e.func = d->p2p_api.func, e.count = d->p2p_api.count, e.datatype = d->p2p_api.datatype;
        e.stream = d->p2p_api.stream;
        break;
    case NP_KERNEL_LAUNCH: e.stream = d->kernel_launch.stream; break;
    default: break;
    }
    return np_start(ctx, h, &e);
}

/* ---- the tables NCCL looks up (newest first) ---- */

COL_EXPORT const np_v6 ncclProfiler_v6 = { "chainprof", v6_init, v5_start, np_stop, v4_record, np_finalize };
COL_EXPORT const np_v5 ncclProfiler_v5 = { "chainprof", v5_init, v5_start, np_stop, v4_record, np_finalize };
COL_EXPORT const np_v4 ncclProfiler_v4 = { "chainprof", v4_init, v4_start, np_stop, v4_record, np_finalize };
COL_EXPORT const np_v3 ncclProfiler_v3 = { "chainprof", v3_init, v3_start, np_stop, v1_record, np_finalize };
COL_EXPORT const np_v2 ncclProfiler_v2 = { "chainprof", v2_init, v2_start, np_stop, v1_record, np_finalize };
COL_EXPORT const np_v1 ncclProfiler_v1 = { "chainprof", v1_init, v1_start, np_stop, v1_record, np_finalize };
