/* rd_cptrace_nccl.c - the NCCL profiler plugin's events of a .cptrace file
 * assembled into operations and proxy operations (see rd_cptrace.h).
 *
 * Events arrive as start / state / stop records from the threads NCCL runs
 * them on (the caller for operations, the proxy thread for proxy ops and
 * steps, kernel channels) and name their parent by id. After the whole file:
 *   proxy step -> its proxy op: bytes (transSize), time on the wire (send:
 *                 from SendWait to the step's end; receive: from RecvWait to
 *                 RecvFlushWait), time waiting for the peer (send: from
 *                 SendPeerWait to SendWait), time waiting for the GPU;
 *                 interface v1-v3 ops without steps use their own states
 *                 (RemFifoWait / Transmitted / Done, Posted / Received);
 *   proxy op   -> an "ncclProxyOp Send|Recv" event on its thread with those
 *                 figures and the peer, and the window of its operation;
 *   kernel ch. -> the operation's GPU window, GPU timer (ptimer) mapped to
 *                 the host clock by the smallest host-minus-ptimer offset
 *                 seen (the host notices a start only after it happened);
 *   operation  -> its args on the NCCL kernel CUPTI recorded for the call
 *                 (through the call's external correlation), else one
 *                 collective event of its own on (device, stream), timed by
 *                 kernel channels, else proxy ops, else the NCCL call that
 *                 ran it (synchronous backends), else its enqueue; arg
 *                 "timing" says which. Args follow PyTorch's names
 *                 (Collective name, In/Out msg nelems, dtype, Group size,
 *                 Process Group Name = "nccl:<comm id>") plus nNodes, so
 *                 the collectives and layers analyses read them unchanged.
 */
#include "rd_cptrace.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TIX_GROUP = 0, TIX_COLL = 1, TIX_P2P = 2, TIX_PROXY_OP = 3, TIX_PROXY_STEP = 4, TIX_PROXY_CTRL = 5,
       TIX_KCH = 6, TIX_GROUP_API = 8, TIX_COLL_API = 9, TIX_P2P_API = 10, TIX_KLAUNCH = 11 };

static int tix_of_start(int op)
{
    switch (op) {
    case CPT_NEV_GROUP_START: return TIX_GROUP;
    case CPT_NEV_COLL_START: return TIX_COLL;
    case CPT_NEV_P2P_START: return TIX_P2P;
    case CPT_NEV_PROXYOP_START: return TIX_PROXY_OP;
    case CPT_NEV_PROXYSTEP_START: return TIX_PROXY_STEP;
    case CPT_NEV_PROXYCTRL_START: return TIX_PROXY_CTRL;
    case CPT_NEV_KCH_START: return TIX_KCH;
    case CPT_NEV_GROUPAPI_START: return TIX_GROUP_API;
    case CPT_NEV_COLLAPI_START: return TIX_COLL_API;
    case CPT_NEV_P2PAPI_START: return TIX_P2P_API;
    case CPT_NEV_KLAUNCH_START: return TIX_KLAUNCH;
    default: return -1;
    }
}

static bool is_stop(int op)
{
    switch (op) {
    case CPT_NEV_GROUP_STOP: case CPT_NEV_COLL_STOP: case CPT_NEV_P2P_STOP: case CPT_NEV_PROXYOP_STOP:
    case CPT_NEV_PROXYSTEP_STOP: case CPT_NEV_PROXYCTRL_STOP: case CPT_NEV_KCH_STOP: case CPT_NEV_GROUPAPI_STOP:
    case CPT_NEV_COLLAPI_STOP: case CPT_NEV_P2PAPI_STOP: case CPT_NEV_KLAUNCH_STOP: return true;
    default: return false;
    }
}

/* ---- the id index ---- */

static void index_put(cpr *r, uint64_t id, uint32_t v) { cpr_map_put(&r->nev_by_id, id, v); }

static cpr_nev *find(const cpr *r, uint64_t id)
{
    uint64_t i;
    return id && cpr_map_get(&r->nev_by_id, id, &i) ? &r->nev[i] : NULL;
}

/* ---- records ---- */

static void first(int64_t *slot, int64_t t)
{
    if (*slot < 0)
        *slot = t;
}

static void state(cpr *r, const cpt_rec *x)
{
    cpr_nev *e = find(r, x->a);
    if (!e) {
        diag_count(r->dg, DIAG_UNMATCHED_FLOW, r->path, -1);
        return;
    }
    int64_t t = x->t_ns;
    switch (x->flags) {
    case CPT_NS_STEP_SEND_GPU_WAIT: first(&e->st_gpu_wait, t); break;
    case CPT_NS_STEP_SEND_PEER_WAIT: first(&e->st_peer_wait, t); break;
    case CPT_NS_STEP_SEND_WAIT: first(&e->st_send_wait, t); break;
    case CPT_NS_STEP_RECV_WAIT: first(&e->st_recv_wait, t); break;
    case CPT_NS_STEP_RECV_FLUSH_WAIT: first(&e->st_flush_wait, t); break;
    case CPT_NS_STEP_RECV_GPU_WAIT: first(&e->st_recv_gpu_wait, t); break;
    case CPT_NS_KCH_STOP:
        e->ptimer1 = x->c;
        e->kch_stop_host = t;
        return;
    /* interface v1-v3: states of the proxy op itself */
    case CPT_NS_PROXYOP_SEND_REM_FIFO_WAIT: first(&e->st_peer_wait, t); break;
    case CPT_NS_PROXYOP_SEND_TRANSMITTED: first(&e->st_send_wait, t); break;
    case CPT_NS_PROXYOP_RECV_POSTED: first(&e->st_recv_wait, t); break;
    case CPT_NS_PROXYOP_RECV_RECEIVED: e->st_flush_wait = t; break; /* the last one */
    default: return;
    }
    if (x->c > e->trans && x->c < ((uint64_t)1 << 48))
        e->trans = x->c;
}

void cpr_nev_record(cpr *r, uint32_t tid, const cpt_rec *x)
{
    /* host times are CLOCK_MONOTONIC, never negative: a negative one is a
     * damaged record, and keeping it would overflow the differences below
     * (fuzz_cptrace: t0 - ptimer0 in kernel_channels) */
    if (x->t_ns < 0) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    if (x->op == CPT_NEV_STATE) {
        state(r, x);
        return;
    }
    if (is_stop(x->op)) {
        cpr_nev *e = find(r, x->a);
        if (!e) {
            diag_count(r->dg, DIAG_UNMATCHED_FLOW, r->path, -1);
            return;
        }
        e->t1 = x->t_ns;
        e->stopped = true;
        return;
    }
    int tix = tix_of_start(x->op);
    if (tix < 0 || !x->a || find(r, x->a)) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    cp_xgrow((void **)&r->nev, &r->cap_nev, r->n_nev + 1, sizeof *r->nev);
    cpr_nev *e = &r->nev[r->n_nev];
    memset(e, 0, sizeof *e);
    e->id = x->a, e->parent = x->b, e->tix = (uint8_t)tix, e->comm = x->u32, e->tid = tid;
    e->device = x->flags, e->t0 = x->t_ns, e->t1 = -1;
    e->st_gpu_wait = e->st_peer_wait = e->st_send_wait = e->st_recv_wait = e->st_flush_wait = -1;
    e->st_recv_gpu_wait = e->kch_stop_host = e->w0 = e->w1 = e->k0 = e->k1 = -1;
    switch (tix) {
    case TIX_COLL: e->seq = x->c; break;
    case TIX_P2P: case TIX_PROXY_OP: e->root_peer = (int64_t)x->c; break;
    case TIX_PROXY_STEP: case TIX_GROUP_API: e->seq = x->c; break;
    case TIX_KCH: e->ptimer0 = x->c; break;
    case TIX_COLL_API: case TIX_P2P_API: e->count = x->c; break;
    case TIX_KLAUNCH: e->stream = x->c; break;
    default: break;
    }
    index_put(r, e->id, (uint32_t)r->n_nev);
    cpr_thread(r, tid)->last_nev = (int64_t)r->n_nev;
    r->n_nev++;
}

void cpr_nev2_record(cpr *r, uint32_t tid, const cpt_rec *x)
{
    cpr_thr *t = cpr_thread(r, tid);
    if (t->last_nev < 0) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    cpr_nev *e = &r->nev[t->last_nev];
    t->last_nev = -1;
    switch (e->tix) {
    case TIX_COLL:
        e->func = x->u32, e->count = x->a, e->root_peer = (int64_t)x->b;
        e->dtype = (uint32_t)x->c, e->algo = (uint32_t)(x->c >> 32), e->proto = (uint32_t)x->t_ns;
        e->n_channels = (uint32_t)(x->dur_ns & 0xff), e->n_warps = (uint32_t)((x->dur_ns >> 8) & 0xff);
        break;
    case TIX_P2P: e->func = x->u32, e->count = x->a, e->n_channels = (uint32_t)x->b, e->dtype = (uint32_t)x->c; break;
    case TIX_PROXY_OP:
        e->channel = x->u32, e->n_steps = (int64_t)x->a, e->chunk = (int64_t)x->b;
        e->is_send = x->c & 1, e->remote = (x->c >> 1) & 1;
        break;
    case TIX_KCH: e->channel = x->u32; break;
    case TIX_COLL_API:
    case TIX_P2P_API: e->func = x->u32, e->stream = x->a, e->root_peer = (int64_t)x->b, e->dtype = (uint32_t)x->c; break;
    default: diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1); break;
    }
}

/* ---- assembly ---- */

static void widen(int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
    if (a < 0 || b < a)
        return;
    if (*lo < 0 || a < *lo)
        *lo = a;
    if (*hi < 0 || b > *hi)
        *hi = b;
}

static void steps_into_ops(cpr *r)
{
    for (size_t i = 0; i < r->n_nev; i++) {
        cpr_nev *s = &r->nev[i];
        if (s->tix != TIX_PROXY_STEP || !s->stopped)
            continue;
        cpr_nev *op = find(r, s->parent);
        if (!op || op->tix != TIX_PROXY_OP)
            continue;
        op->bytes += s->trans;
        op->n_children++;
        if (op->is_send) {
            int64_t on = s->st_send_wait >= 0 ? s->st_send_wait : s->t0;
            op->wire_ns = cp_sat_add_i64(op->wire_ns, s->t1 - on); /* sums of damaged steps saturate */
            if (s->st_peer_wait >= 0 && s->st_send_wait >= s->st_peer_wait)
                op->peer_wait_ns = cp_sat_add_i64(op->peer_wait_ns, s->st_send_wait - s->st_peer_wait);
            int64_t after_gpu = s->st_peer_wait >= 0 ? s->st_peer_wait : s->st_send_wait;
            if (s->st_gpu_wait >= 0 && after_gpu >= s->st_gpu_wait)
                op->gpu_wait_ns = cp_sat_add_i64(op->gpu_wait_ns, after_gpu - s->st_gpu_wait);
        } else {
            int64_t from = s->st_recv_wait >= 0 ? s->st_recv_wait : s->t0;
            int64_t to = s->st_flush_wait >= 0 ? s->st_flush_wait : s->t1;
            if (to >= from)
                op->wire_ns = cp_sat_add_i64(op->wire_ns, to - from);
            if (s->st_recv_gpu_wait >= 0 && s->t1 >= s->st_recv_gpu_wait)
                op->gpu_wait_ns = cp_sat_add_i64(op->gpu_wait_ns, s->t1 - s->st_recv_gpu_wait);
        }
    }
}

static const cpr_comm *comm_of(const cpr *r, uint32_t c) { return c < r->n_comms && r->comms[c].known ? &r->comms[c] : NULL; }

static void pg_args(cpr *r, const cpr_comm *c)
{
    if (!c)
        return;
    char pg[40];
    snprintf(pg, sizeof pg, "nccl:%016llx", (unsigned long long)c->id);
    tl_builder_arg_str(r->b, r->k.pg_name, cp_intern_s(r->st, pg));
    if (c->rank >= 0)
        tl_builder_arg_int(r->b, r->k.comm_rank, c->rank);
}

static void proxy_ops(cpr *r)
{
    uint32_t send = cp_intern_s(r->st, "ncclProxyOp Send"), recv = cp_intern_s(r->st, "ncclProxyOp Recv");
    for (size_t i = 0; i < r->n_nev; i++) {
        cpr_nev *op = &r->nev[i];
        if (op->tix != TIX_PROXY_OP || !op->stopped)
            continue;
        if (!op->n_children) { /* v1-v3: the op's own states */
            op->bytes = op->trans;
            if (op->is_send) {
                int64_t on = op->st_send_wait >= 0 ? op->st_send_wait : op->t0;
                op->wire_ns = op->t1 - on;
                if (op->st_peer_wait >= 0 && op->st_send_wait >= op->st_peer_wait)
                    op->peer_wait_ns = op->st_send_wait - op->st_peer_wait;
            } else {
                int64_t from = op->st_recv_wait >= 0 ? op->st_recv_wait : op->t0;
                int64_t to = op->st_flush_wait >= 0 ? op->st_flush_wait : op->t1;
                op->wire_ns = to >= from ? to - from : 0;
            }
        }
        int64_t moved;
        if (!op->bytes && op->n_steps > 0 && op->chunk > 0) { /* a product past int64 is damage (fuzz_cptrace) */
            if (__builtin_mul_overflow(op->n_steps, op->chunk, &moved))
                diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
            else
                op->bytes = (uint64_t)moved;
        }
        cpr_event(r, cpr_cpu_track(r, op->tid), op->t0, op->t1 - op->t0, op->is_send ? send : recv, TL_CAT_OTHER, -1, 0);
        tl_builder_arg_int(r->b, r->k.peer, op->root_peer);
        pg_args(r, comm_of(r, op->comm));
        tl_builder_arg_int(r->b, r->k.bytes, (int64_t)op->bytes);
        tl_builder_arg_int(r->b, r->k.wire_ns, op->wire_ns);
        if (op->is_send)
            tl_builder_arg_int(r->b, r->k.peer_wait_ns, op->peer_wait_ns);
        tl_builder_arg_int(r->b, r->k.gpu_wait_ns, op->gpu_wait_ns);
        tl_builder_arg_int(r->b, r->k.steps, op->n_steps);
        tl_builder_arg_int(r->b, r->k.channel, op->channel);
        cpr_nev *parent = find(r, op->parent);
        if (parent && (parent->tix == TIX_COLL || parent->tix == TIX_P2P))
            widen(&parent->w0, &parent->w1, op->t0, op->t1);
    }
}

static void kernel_channels(cpr *r)
{
    int64_t off = INT64_MAX;
    for (size_t i = 0; i < r->n_nev; i++) {
        const cpr_nev *k = &r->nev[i];
        if (k->tix != TIX_KCH)
            continue;
        if (k->ptimer0 && k->ptimer0 < ((uint64_t)1 << 62))
            off = CP_MIN(off, k->t0 - (int64_t)k->ptimer0);
        if (k->ptimer1 && k->kch_stop_host >= 0 && k->ptimer1 < ((uint64_t)1 << 62))
            off = CP_MIN(off, k->kch_stop_host - (int64_t)k->ptimer1);
    }
    for (size_t i = 0; i < r->n_nev; i++) {
        const cpr_nev *k = &r->nev[i];
        if (k->tix != TIX_KCH)
            continue;
        cpr_nev *op = find(r, k->parent);
        if (!op || (op->tix != TIX_COLL && op->tix != TIX_P2P))
            continue;
        if (off != INT64_MAX && k->ptimer0 && k->ptimer1 >= k->ptimer0) {
            int64_t a, b; /* damaged GPU timers can put the channel past int64: counted, not widened */
            if (k->ptimer1 >= ((uint64_t)1 << 62) || __builtin_add_overflow((int64_t)k->ptimer0, off, &a) ||
                __builtin_add_overflow((int64_t)k->ptimer1, off, &b))
                diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
            else
                widen(&op->k0, &op->k1, a, b);
        } else if (!k->ptimer0) /* v3: no GPU timer; the proxy thread's view */
            widen(&op->k0, &op->k1, k->t0, k->kch_stop_host >= 0 ? k->kch_stop_host : k->t1);
    }
}

/* PyTorch's dtype spellings for NCCL's names (what the collectives
 * analysis sizes elements by). */
static const char *torch_dtype(const char *nccl)
{
    static const struct { const char *nccl, *torch; } map[] = {
        { "ncclInt8", "Char" },       { "ncclUint8", "Byte" },        { "ncclInt32", "Int" },
        { "ncclUint32", "UInt32" },   { "ncclInt64", "Long" },        { "ncclUint64", "UInt64" },
        { "ncclFloat16", "Half" },    { "ncclFloat32", "Float" },     { "ncclFloat64", "Double" },
        { "ncclBfloat16", "BFloat16" }, { "ncclFloat8e4m3", "Float8_e4m3fn" }, { "ncclFloat8e5m2", "Float8_e5m2" },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(map); i++)
        if (!strcmp(nccl, map[i].nccl))
            return map[i].torch;
    return nccl;
}

/* count x ranks, the element count a rank's buffer holds; a damaged count
 * whose product does not fit int64 is counted and kept as it is (fuzz_cptrace) */
static int64_t times_ranks(cpr *r, int64_t count, int64_t ranks)
{
    int64_t v;
    if (!__builtin_mul_overflow(count, ranks, &v))
        return v;
    diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
    return count;
}

/* The collective args of an operation on the last added event. */
static void op_args(cpr *r, const cpr_nev *op, const char *timing)
{
    const cpr_comm *c = comm_of(r, op->comm);
    size_t n;
    const char *func = cpr_str(r, op->func, &n);
    int64_t ranks = c && c->n_ranks > 0 ? c->n_ranks : 1, in = (int64_t)op->count, out = in;
    if (!strcmp(func, "AllGather"))
        out = times_ranks(r, in, ranks);
    else if (!strcmp(func, "ReduceScatter"))
        in = times_ranks(r, out, ranks);
    else if (!strcmp(func, "AllToAll") || !strcmp(func, "AlltoAll"))
        in = out = times_ranks(r, in, ranks);
    tl_builder_arg_str(r->b, r->k.coll_name, cpr_intern(r, op->func));
    tl_builder_arg_int(r->b, r->k.in_n, in);
    tl_builder_arg_int(r->b, r->k.out_n, out);
    const char *dt = cpr_str(r, op->dtype, &n);
    if (n) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)n, dt);
        tl_builder_arg_str(r->b, r->k.dtype, cp_intern_s(r->st, torch_dtype(buf)));
    }
    if (c && c->n_ranks > 0)
        tl_builder_arg_int(r->b, r->k.group_size, c->n_ranks);
    if (c && c->n_nodes > 0)
        tl_builder_arg_int(r->b, r->k.n_nodes, c->n_nodes);
    pg_args(r, c);
    if (op->tix == TIX_COLL) {
        tl_builder_arg_int(r->b, r->k.seq, (int64_t)op->seq);
        if (op->algo)
            tl_builder_arg_str(r->b, r->k.algo, cpr_intern(r, op->algo));
        if (op->proto)
            tl_builder_arg_str(r->b, r->k.proto, cpr_intern(r, op->proto));
    } else {
        tl_builder_arg_int(r->b, r->k.peer, op->root_peer);
    }
    tl_builder_arg_int(r->b, r->k.n_channels, op->n_channels);
    tl_builder_arg_str(r->b, r->k.timing, cp_intern_s(r->st, timing));
    tl_builder_arg_str(r->b, r->k.source, cp_intern_s(r->st, "nccl_profiler"));
}

static const cpr_call *call_of_xid(const cpr *r, uint64_t xid)
{
    uint64_t i;
    return cpr_map_get(&r->call_by_xid, xid, &i) ? &r->calls[i] : NULL;
}

static int call_cmp(const void *a, const void *b)
{
    const cpr_call *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* The NCCL call on thread tid that was running at t (calls of one thread
 * never overlap: only the outermost is recorded). */
static const cpr_call *call_at(const cpr *r, uint32_t tid, int64_t t)
{
    size_t lo = 0, hi = r->n_calls; /* first call after (tid, t) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cpr_call *c = &r->calls[mid];
        if (c->tid < tid || (c->tid == tid && c->t0 <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return NULL;
    const cpr_call *c = &r->calls[lo - 1];
    return c->tid == tid && c->t0 <= t && t <= c->t1 ? c : NULL;
}

static int64_t xid_of_corr(const cpr *r, uint64_t corr)
{
    uint64_t x;
    return cpr_map_get(&r->xid_by_corr, corr, &x) ? (int64_t)x : -1;
}

/* Operations (coll, p2p) by (tid, start): the ones a call made. */
static int op_cmp(const void *a, const void *b, void *ctx)
{
    const cpr *r = ctx;
    const cpr_nev *x = &r->nev[*(const size_t *)a], *y = &r->nev[*(const size_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static void index_calls_and_ops(cpr *r)
{
    if (r->n_calls > 1)
        qsort(r->calls, r->n_calls, sizeof *r->calls, call_cmp);
    for (size_t i = 0; i < r->n_calls; i++)
        cpr_map_put(&r->call_by_xid, r->calls[i].xid, i);
    r->ops_sorted = cp_xmalloc((r->n_nev ? r->n_nev : 1) * sizeof *r->ops_sorted);
    r->n_ops_sorted = 0;
    for (size_t i = 0; i < r->n_nev; i++)
        if (r->nev[i].tix == TIX_COLL || r->nev[i].tix == TIX_P2P)
            r->ops_sorted[r->n_ops_sorted++] = i;
    if (r->n_ops_sorted > 1)
        qsort_r(r->ops_sorted, r->n_ops_sorted, sizeof *r->ops_sorted, op_cmp, r);
}

/* The first sorted operation of tid starting at or after t. */
static size_t ops_from(const cpr *r, uint32_t tid, int64_t t)
{
    size_t lo = 0, hi = r->n_ops_sorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cpr_nev *e = &r->nev[r->ops_sorted[mid]];
        if (e->tid < tid || (e->tid == tid && e->t0 < t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void gpu_name(char *buf, size_t n, const cpt_rec *x)
{
    static const char *const dir[] = { "HtoH", "HtoD", "DtoH", "DtoD", "Default", "PtoP" };
    int k = x->flags & 0xff;
    bool pageable = x->flags & 0x100;
    if (x->op == CPT_GPU_MEMCPY)
        snprintf(buf, n, "Memcpy %s (%s)", k < 6 ? dir[k] : "Default", pageable ? "Pageable" : "Pinned");
    else
        snprintf(buf, n, "Memset (Device)");
}

/* CUPTI records; an NCCL kernel takes the args of the operation its call ran. */
static void gpu_records(cpr *r)
{
    for (size_t i = 0; i < r->n_gpu; i++) {
        const cpt_rec *x = &r->gpu[i].r;
        uint32_t tr = cpr_gpu_track(r, (int32_t)x->u32, x->a, true);
        if (x->op == CPT_GPU_KERNEL) {
            cpr_event(r, tr, x->t_ns, x->dur_ns, cpr_intern(r, (uint32_t)x->c), TL_CAT_KERNEL, (int64_t)x->b, 0);
            tl_builder_arg_int(r->b, r->k.correlation, (int64_t)x->b);
            int64_t xid = xid_of_corr(r, x->b);
            const cpr_call *call = xid >= 0 ? call_of_xid(r, (uint64_t)xid) : NULL;
            if (!call)
                continue;
            size_t ops = 0;
            cpr_nev *lead = NULL;
            for (size_t j = ops_from(r, call->tid, call->t0); j < r->n_ops_sorted; j++) {
                cpr_nev *op = &r->nev[r->ops_sorted[j]];
                if (op->tid != call->tid || op->t0 > call->t1)
                    break;
                if (op->linked)
                    continue;
                op->linked = true;
                if (!lead)
                    lead = op;
                ops++;
            }
            if (lead) {
                op_args(r, lead, "cupti");
                tl_builder_arg_int(r->b, r->k.ops, (int64_t)ops);
            }
        } else if (x->op == CPT_GPU_MEMCPY || x->op == CPT_GPU_MEMSET) {
            char name[64];
            gpu_name(name, sizeof name, x);
            cpr_event(r, tr, x->t_ns, x->dur_ns, cp_intern_s(r->st, name),
                      x->op == CPT_GPU_MEMCPY ? TL_CAT_GPU_MEMCPY : TL_CAT_GPU_MEMSET, (int64_t)x->b,
                      x->flags & 0x100 ? TL_F_PAGEABLE : 0);
            tl_builder_arg_int(r->b, r->k.bytes, (int64_t)x->c);
        } else {
            diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        }
    }
}

static void operations(cpr *r)
{
    for (size_t i = 0; i < r->n_nev; i++) {
        cpr_nev *op = &r->nev[i];
        if ((op->tix != TIX_COLL && op->tix != TIX_P2P) || op->linked)
            continue;
        const cpr_call *call = call_at(r, op->tid, op->t0);
        int64_t t0, t1;
        const char *timing;
        if (op->k0 >= 0)
            t0 = op->k0, t1 = op->k1, timing = "kernel_channels";
        else if (op->w0 >= 0)
            t0 = op->w0, t1 = op->w1, timing = "proxy";
        else if (call)
            t0 = call->t0, t1 = call->t1, timing = "call";
        else
            t0 = op->t0, t1 = op->stopped ? op->t1 : op->t0, timing = "enqueue";
        const cpr_nev *api = find(r, op->parent);
        uint64_t stream = api && (api->tix == TIX_COLL_API || api->tix == TIX_P2P_API) ? api->stream
                          : call                                                      ? call->stream
                                                                                      : 0;
        size_t n;
        const char *func = cpr_str(r, op->func, &n);
        char name[96];
        snprintf(name, sizeof name, "ncclKernel_%.*s", (int)(n ? n : 7), n ? func : "unknown");
        cpr_event(r, cpr_gpu_track(r, op->device, stream, false), t0, t1 - t0, cp_intern_s(r->st, name),
                  TL_CAT_KERNEL, -1, 0);
        op_args(r, op, timing);
    }
}

void cpr_nccl_finish(cpr *r)
{
    index_calls_and_ops(r);
    steps_into_ops(r);
    proxy_ops(r);
    kernel_channels(r);
    gpu_records(r);
    operations(r);
}
