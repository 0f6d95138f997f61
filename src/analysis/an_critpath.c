/* an_critpath.c - the critical path of every profiler step, across ranks:
 * HTA's dependency graph per rank, joined through each collective's
 * matched kernels, walked back from the step's end.
 *
 * Design
 * - Nodes are instants: the start and the end of every event (node 2*ev and
 *   2*ev+1, so no node table), plus one "transfer start" node per collective
 *   kernel that an_collectives matched across ranks (2*n_events + k, k in its
 *   sorted member list). Edges run from a predecessor to a node and carry
 *   HTA's types (hta/analyzers/critical_path_analysis.py, CPEdgeType):
 *   operator (CPU nesting: the call stack walked depth first, HTA's
 *   "(A.b)->(B.b)->(B.e)->(C.b)->(C.e)->(A.e)"; a kernel's own span),
 *   dependency (consecutive top-level ops of a thread), kernel launch delay
 *   (runtime call start -> kernel start), kernel-kernel delay (previous
 *   kernel end -> kernel start on one stream) and sync dependency (GPU work
 *   end -> end of the blocking call that waited for it). As in HTA the
 *   autograd thread is merged into the forward thread when each is unique,
 *   so the path flows through the backward pass.
 * - Across ranks: a matched collective kernel of rank r is split at the
 *   instant its last member arrived (the transfer start, an_collectives'
 *   definition): wait edge (own start -> transfer start), peer edge (the
 *   instance's arrival node -> transfer start), transfer edge (transfer
 *   start -> own end); the arrival node (one per instance, kept by the
 *   last arriver's rank) has every member's kernel start before it, so a
 *   replay couples all members, and the path leaves a rank where it waited
 *   for a slower peer and continues on that peer.
 * - Point-to-point: an_collectives pairs the k-th send a->b of a group with
 *   the k-th recv on b from a; a pair is an instance of two members like a
 *   collective's, so the path crosses pipeline stages through it. A send
 *   that started after its launch and stream predecessor waited for the
 *   work that produced its buffer (the inferred stream wait, with no
 *   threshold); a kernel held past its launch and stream predecessor until
 *   a matched recv of its rank ended waited for that recv (p2p_recv_wait:
 *   PyTorch's work.wait() makes the current stream wait on the NCCL
 *   stream). A transfer's layer is its pair's scope (the two ranks' nodes,
 *   an_event_scope), not its whole group's.
 * - Every edge goes forward in time (an edge that would go back, from bad
 *   nesting or clock skew, is dropped and counted). HTA weights edges and
 *   takes networkx's longest path; here the path is the chain of binding
 *   constraints instead: from the step's end, repeatedly step to the
 *   predecessor that was satisfied last (the latest one; ties stay on the
 *   rank). Each hop covers [ts(pred), ts(node)] of real time, so the
 *   segments tile the path without gaps or overlap and its length is the
 *   wall time from where it starts to the step's end: the layer split, the
 *   per-rank shares and HTA's bound_by classes add up to length_ns exactly.
 *   Where HTA gives zero weight (dependency and sync edges) the time still
 *   passed; it is reported (idle, host) instead of dropped.
 * - The walk starts at the end of ProfilerStep#N on the rank where step N
 *   ends last, and stops when it reaches the start of step N on the rank it
 *   is on. Without profiler steps it walks the whole trace (HTA's default
 *   region) as one step with id -1: from the latest event end over ranks
 *   back to the first event of the rank it is on.
 * - Graph build is per rank in parallel (edges into a per-rank CSR by
 *   destination, counting sort, no per-node allocation); the walks are per
 *   step in parallel. Typed result in ctx->results[AN_critpath]
 *   (an_critpath.h) for the what-if analyses, with each step's segments
 *   (an_cp_path, capped per step) for the Perfetto overlay's track.
 */
#include "an_critpath.h"
#include "an_results.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const edge_names[AN_CE__COUNT] = {
    "critical_path_operator",     "critical_path_dependency",   "critical_path_kernel_launch_delay",
    "critical_path_kernel_kernel_delay", "critical_path_sync_dependency", "collective_wait",
    "collective_peer",            "collective_transfer",        "inferred_stream_wait",
    "collective_arrival",         "p2p_recv_wait",
};

const char *an_cp_edge_name(an_cp_edge e) { return e < AN_CE__COUNT ? edge_names[e] : "?"; }

/* HTA's BoundType of a path segment, plus "other" for the time HTA's
 * zero-weight edges leave out. */
enum { B_CPU, B_DATA, B_COMPUTE, B_COMM, B_KK, B_LAUNCH, B_OTHER, B__COUNT };
static const char *const bound_keys[B__COUNT] = {
    "cpu_bound_ns", "data_loading_ns", "gpu_compute_bound_ns", "gpu_communication_bound_ns",
    "gpu_kernel_kernel_overhead_ns", "gpu_kernel_launch_overhead_ns", "other_ns",
};

/* Per string id: what the graph build and the attribution ask of a name. */
enum { NF_SYNC_CALL = 1, NF_AUTOGRAD = 2, NF_FORWARD = 4, NF_STORAGE = 8, NF_DATALOADER = 16,
       NF_STREAM_WAIT = 32 };

/* The blocking runtime calls (HTA's BLOCKING_SYNC_CALLS without
 * cudaMemcpyAsync and cudaEventQuery, which do not always block, plus the
 * HIP names). Anything the trace flags synchronous counts too. */
static const char *const sync_calls[] = {
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
    "hipDeviceSynchronize",  "hipStreamSynchronize",  "hipEventSynchronize",  "hipMemcpy",
};

static uint8_t *name_flags(const tl_timeline *tl)
{
    size_t n = cp_intern_count(&tl->strings);
    uint8_t *f = cp_xcalloc(n ? n : 1, 1);
    for (size_t s = 0; s < n; s++) {
        const char *nm = tl_str(tl, (uint32_t)s);
        if (!nm)
            continue;
        for (size_t k = 0; k < CP_ARRAY_LEN(sync_calls); k++)
            if (strcmp(nm, sync_calls[k]) == 0)
                f[s] |= NF_SYNC_CALL;
        if (strstr(nm, "autograd"))
            f[s] |= NF_AUTOGRAD;
        if (strstr(nm, "forward"))
            f[s] |= NF_FORWARD;
        int hc = an_host_class_of(nm);
        if (hc == AN_HC_STORAGE || an_is_file_io_call(nm))
            f[s] |= NF_STORAGE;
        else if (hc == AN_HC_DATALOADER)
            f[s] |= NF_DATALOADER;
        if (strcmp(nm, "Stream Wait Event") == 0)
            f[s] |= NF_STREAM_WAIT;
    }
    return f;
}

/* ---- nodes ---- */

/* x: a transfer start or an arrival node (no event of its own) */
static inline bool is_x(const an_cp_graph *g, uint64_t node) { return node >= 2 * (uint64_t)g->n_ev; }
static inline bool is_a(const an_cp_graph *g, uint64_t node) { return node >= 2 * (uint64_t)g->n_ev + g->n_x; }
static inline const struct an_cp_inst *node_a(const an_cp_graph *g, uint64_t node)
{
    return &g->inst[node - 2 * (uint64_t)g->n_ev - g->n_x];
}
static inline size_t node_ev(const an_cp_graph *g, uint64_t node)
{
    if (is_a(g, node))
        return node_a(g, node)->last_ev;
    return is_x(g, node) ? g->x[node - 2 * (uint64_t)g->n_ev].ev : (size_t)(node >> 1);
}
static inline const an_coll_member *node_x(const an_cp_graph *g, uint64_t node)
{
    return &g->x[node - 2 * (uint64_t)g->n_ev];
}
static inline bool node_is_end(const an_cp_graph *g, uint64_t node) { return !is_x(g, node) && (node & 1); }

int64_t an_cp_node_ts(const an_cp_graph *g, uint64_t node)
{
    const tl_timeline *tl = g->tl;
    if (is_a(g, node))
        return tl->ts_ns[node_a(g, node)->last_ev];
    if (is_x(g, node)) {
        const an_coll_member *m = &g->x[node - 2 * (uint64_t)g->n_ev];
        return CP_MIN(tl->ts_ns[m->last_ev], tl_end_ns(tl, m->ev));
    }
    size_t ev = (size_t)(node >> 1);
    return (node & 1) ? tl_end_ns(tl, ev) : tl->ts_ns[ev];
}

static inline uint32_t node_rank(const an_cp_graph *g, uint64_t node)
{
    return g->tl->tracks[g->tl->track[node_ev(g, node)]].rank_index;
}

/* Local index of node inside its rank's CSR. */
static inline size_t node_local(const an_cp_graph *g, const an_cp_rank *gr, uint64_t node)
{
    if (is_a(g, node))
        return 2 * gr->n_ev + gr->n_x + (size_t)(node - 2 * (uint64_t)g->n_ev - g->n_x - gr->a0);
    if (is_x(g, node))
        return 2 * gr->n_ev + (size_t)(node - 2 * (uint64_t)g->n_ev - gr->x0);
    return (size_t)(node - 2 * (uint64_t)gr->ev0);
}

size_t an_cp_preds(const an_cp_graph *g, uint64_t node, const uint32_t **src, const uint8_t **type)
{
    const an_cp_rank *gr = &g->ranks[node_rank(g, node)];
    if (!gr->off) {
        *src = NULL;
        *type = NULL;
        return 0;
    }
    size_t l = node_local(g, gr, node);
    *src = gr->src + gr->off[l];
    *type = gr->type + gr->off[l];
    return (size_t)(gr->off[l + 1] - gr->off[l]);
}

uint32_t an_cp_node_rank(const an_cp_graph *g, uint64_t node) { return node_rank(g, node); }

size_t an_cp_binding(const an_cp_graph *g, uint64_t node, const uint32_t *src, size_t np)
{
    uint32_t rv = node_rank(g, node);
    size_t best = SIZE_MAX;
    int64_t best_ts = INT64_MIN;
    bool best_same = false;
    for (size_t k = 0; k < np; k++) {
        int64_t t = an_cp_node_ts(g, src[k]);
        bool same = node_rank(g, src[k]) == rv;
        if (t > best_ts || (t == best_ts && same && !best_same)) {
            best = k;
            best_ts = t;
            best_same = same;
        }
    }
    return best;
}

/* ---- build ---- */

typedef struct edge_rec {
    uint32_t dst_local, src; /* node ids < AN_CP_MAX_NODES (checked before the build) */
    uint8_t type;
} edge_rec;

typedef struct rank_build {
    const an_ctx *ctx;
    an_cp_graph *g;
    const uint8_t *nf;
    edge_rec *e;
    size_t n, cap;
    int64_t dropped, bad_nesting, inferred;
    bool merged_bwd;
} rank_build;

static void add_edge(rank_build *b, const an_cp_rank *gr, uint64_t dst, uint64_t src, an_cp_edge type)
{
    if (an_cp_node_ts(b->g, src) > an_cp_node_ts(b->g, dst)) {
        b->dropped++;
        return;
    }
    cp_xgrow((void **)&b->e, &b->cap, b->n + 1, sizeof *b->e);
    b->e[b->n++] = (edge_rec){ (uint32_t)node_local(b->g, gr, dst), (uint32_t)src, (uint8_t)type };
}

#define START(ev) ((uint64_t)(ev) * 2)
#define END(ev) ((uint64_t)(ev) * 2 + 1)

/* Depth-first walk of one CPU thread's call stack, events in (start,
 * longer first) order: HTA's _construct_graph_from_call_stack. An event
 * that ends after its parent is not a call-stack child (HTA's call stack
 * builder drops it; counted here): it hangs off the chain with its own
 * span and parents nothing. */
static void cpu_chain(rank_build *b, const an_cp_rank *gr, const size_t *evs, size_t n)
{
    const tl_timeline *tl = b->ctx->tl;
    size_t *stack = cp_xmalloc((n ? n : 1) * sizeof *stack), sp = 0;
    uint64_t prev = UINT64_MAX;
    for (size_t k = 0; k <= n; k++) {
        size_t e = k < n ? evs[k] : 0;
        while (sp && (k == n || tl_end_ns(tl, stack[sp - 1]) <= tl->ts_ns[e])) {
            size_t t = stack[--sp];
            add_edge(b, gr, END(t), prev, AN_CE_OP);
            prev = END(t);
        }
        if (k == n)
            break;
        if (sp && tl_end_ns(tl, e) > tl_end_ns(tl, stack[sp - 1])) {
            /* not a call-stack child: hung off the chain (after the
             * previous instant, its own span) but no parent of anything,
             * so what it launched still follows the thread */
            b->bad_nesting++;
            if (prev != UINT64_MAX)
                add_edge(b, gr, START(e), prev, AN_CE_DEP);
            add_edge(b, gr, END(e), START(e), AN_CE_OP);
            continue;
        }
        b->g->parent[e] = sp ? (int32_t)stack[sp - 1] : -1;
        if (prev != UINT64_MAX)
            add_edge(b, gr, START(e), prev, sp ? AN_CE_OP : AN_CE_DEP);
        prev = START(e);
        stack[sp++] = e;
    }
    free(stack);
}

/* The CPU threads of one rank: each alone, except HTA's merge of the
 * backward (autograd) thread into the forward thread when each is the only
 * thread with such ops. */
static void cpu_edges(rank_build *b, const an_cp_rank *gr, const tl_rank *rk)
{
    const tl_timeline *tl = b->ctx->tl;
    int64_t fwd = -1, bwd = -1;
    int n_fwd = 0, n_bwd = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        if (tr->key.kind != TL_TRACK_CPU)
            continue;
        unsigned seen = 0;
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++)
            if (tl->cat[i] == TL_CAT_CPU_OP || tl->cat[i] == TL_CAT_USER_ANNOTATION)
                seen |= b->nf[tl->name[i]] & (NF_AUTOGRAD | NF_FORWARD);
        if (seen & NF_FORWARD) {
            n_fwd++;
            fwd = t;
        }
        if (seen & NF_AUTOGRAD) {
            n_bwd++;
            bwd = t;
        }
    }
    bool merge = n_fwd == 1 && n_bwd == 1 && fwd != bwd;
    b->merged_bwd = merge;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        if (tr->key.kind != TL_TRACK_CPU || (merge && (int64_t)t == bwd))
            continue;
        const tl_track *o = merge && (int64_t)t == fwd ? &tl->tracks[bwd] : NULL;
        size_t na = tr->ev_end - tr->ev_begin, nb = o ? o->ev_end - o->ev_begin : 0;
        size_t *evs = cp_xmalloc((na + nb ? na + nb : 1) * sizeof *evs), n = 0;
        size_t i = tr->ev_begin, j = o ? o->ev_begin : 0;
        while (i < tr->ev_end || (o && j < o->ev_end)) {
            bool take_a = !o || j >= o->ev_end ||
                          (i < tr->ev_end && (tl->ts_ns[i] < tl->ts_ns[j] ||
                                              (tl->ts_ns[i] == tl->ts_ns[j] && tl->dur_ns[i] >= tl->dur_ns[j])));
            evs[n++] = take_a ? i++ : j++;
        }
        cpu_chain(b, gr, evs, n);
        free(evs);
    }
}

static bool gpu_work(const tl_timeline *tl, size_t i)
{
    uint8_t k = tl->kclass[i];
    return k == TL_K_COMPUTE || k == TL_K_COMM || k == TL_K_MEMCPY || k == TL_K_MEMSET;
}

static const an_coll_member *find_member(const an_cp_graph *g, const an_cp_rank *gr, size_t ev, size_t *xi)
{
    size_t lo = gr->x0, hi = gr->x0 + gr->n_x;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->x[mid].ev < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < gr->x0 + gr->n_x && g->x[lo].ev == ev) {
        *xi = lo;
        return &g->x[lo];
    }
    return NULL;
}

/* Entries of by_end (GPU work sorted by end) that end at or before t. */
static size_t last_end_before(const cp_kv *by_end, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp_key_to_i64(by_end[mid].key) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The GPU work on a stream other than track t that ended last at or
 * before ts (looking back past at most 64 entries of t's own stream). */
static size_t last_other_stream(const tl_timeline *tl, const cp_kv *by_end, size_t n, uint32_t t, int64_t ts)
{
    size_t at = last_end_before(by_end, n, ts);
    for (size_t k = 0; at > 0 && k < 64; k++, at--) {
        size_t e = (size_t)by_end[at - 1].val;
        if (tl->track[e] != t)
            return e;
    }
    return SIZE_MAX;
}

/* The rank's matched recvs as (end, event), sorted by end. */
static cp_kv *recv_ends(const tl_timeline *tl, const an_cp_graph *g, const an_cp_rank *gr, size_t *n)
{
    cp_kv *kv = cp_xmalloc((gr->n_x ? gr->n_x : 1) * sizeof *kv);
    size_t m = 0;
    for (size_t k = gr->x0; k < gr->x0 + gr->n_x; k++)
        if (g->x[k].p2p == AN_P2P_RECV)
            kv[m++] = (cp_kv){ cp_key_i64(tl_end_ns(tl, g->x[k].ev)), g->x[k].ev };
    cp_sort_kv(kv, m, NULL);
    *n = m;
    return kv;
}

/* What a kernel may have waited for on its rank: GPU work by end, matched recvs by end. */
typedef struct held_by {
    const cp_kv *by_end;
    size_t n_gpu;
    const cp_kv *recv_end;
    size_t n_recv;
} held_by;

/* The edges of a kernel i on track t that started after `ready` (its
 * launch and stream predecessor; INT64_MIN: neither): the inferred stream
 * wait (past AN_CP_IMPLICIT_WAIT_NS, or any delay for a send), and the
 * p2p_recv_wait from the latest matched recv on another stream that ended
 * in (ready, its start]. */
static void held_edges(rank_build *b, const an_cp_rank *gr, const held_by *h, uint32_t t, size_t i, int64_t ready,
                       bool send)
{
    const tl_timeline *tl = b->ctx->tl;
    int64_t ts = tl->ts_ns[i];
    if (ready == INT64_MIN || ts - ready > (send ? 0 : AN_CP_IMPLICIT_WAIT_NS)) {
        size_t o = last_other_stream(tl, h->by_end, h->n_gpu, t, ts);
        if (o != SIZE_MAX && tl_end_ns(tl, o) >= ready) {
            add_edge(b, gr, START(i), END(o), AN_CE_XSTREAM);
            b->inferred++;
        }
    }
    if (ready != INT64_MIN && ts <= ready)
        return;
    size_t at = last_end_before(h->recv_end, h->n_recv, ts);
    size_t rv = at ? (size_t)h->recv_end[at - 1].val : SIZE_MAX;
    if (rv != SIZE_MAX && tl->track[rv] != t && tl_end_ns(tl, rv) > ready)
        add_edge(b, gr, START(i), END(rv), AN_CE_P2P);
}

/* Kernels: span (or wait/peer/transfer for matched collectives), stream
 * order, launch, inferred stream waits; then the sync edges of the
 * blocking calls. */
static void gpu_edges(rank_build *b, const an_cp_rank *gr, const tl_rank *rk)
{
    const tl_timeline *tl = b->ctx->tl;
    an_cp_graph *g = b->g;
    cp_kv *by_end = NULL;
    size_t n_gpu = 0, cap_gpu = 0;
    size_t *calls = NULL, n_calls = 0, cap_calls = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
            size_t c = SIZE_MAX;
            if (tr->key.kind == TL_TRACK_CPU) {
                if ((b->nf[tl->name[i]] & NF_SYNC_CALL) || (tl->flags[i] & TL_F_SYNC_CALL))
                    c = i;
            } else if (tr->key.kind == TL_TRACK_GPU && tl->kclass[i] == TL_K_SYNC) {
                /* a cuda_sync event names the blocking call (its correlation
                 * partner); cudaStreamWaitEvent is GPU->GPU, left to the
                 * inferred stream wait */
                if (tl->link[i] >= 0 && !(b->nf[tl->name[i]] & NF_STREAM_WAIT))
                    c = (size_t)tl->link[i];
            } else if (tr->key.kind == TL_TRACK_GPU && gpu_work(tl, i)) {
                cp_xgrow((void **)&by_end, &cap_gpu, n_gpu + 1, sizeof *by_end);
                by_end[n_gpu++] = (cp_kv){ cp_key_i64(tl_end_ns(tl, i)), i };
            }
            if (c != SIZE_MAX) {
                cp_xgrow((void **)&calls, &cap_calls, n_calls + 1, sizeof *calls);
                calls[n_calls++] = c;
            }
        }
    }
    cp_sort_kv(by_end, n_gpu, NULL);
    size_t n_recv = 0;
    cp_kv *recv_end = recv_ends(b->ctx->tl, g, gr, &n_recv);
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        if (tr->key.kind != TL_TRACK_GPU)
            continue;
        size_t prev = SIZE_MAX;
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
            if (!gpu_work(tl, i))
                continue;
            int64_t ready = INT64_MIN; /* when its stream and its launch allowed it to start */
            if (prev != SIZE_MAX) {
                add_edge(b, gr, START(i), END(prev), AN_CE_KK);
                ready = tl_end_ns(tl, prev);
            }
            int32_t l = tl->link[i];
            if (l >= 0 && tl->tracks[tl->track[l]].key.kind == TL_TRACK_CPU) {
                add_edge(b, gr, START(i), START(l), AN_CE_LAUNCH);
                ready = CP_MAX(ready, tl_end_ns(tl, (size_t)l));
            }
            size_t xi;
            const an_coll_member *m = find_member(g, gr, i, &xi);
            const held_by hb = { by_end, n_gpu, recv_end, n_recv };
            held_edges(b, gr, &hb, t, i, ready, m && m->p2p == AN_P2P_SEND);
            if (m) {
                uint64_t x = 2 * (uint64_t)g->n_ev + xi;
                add_edge(b, gr, x, START(i), AN_CE_WAIT);
                add_edge(b, gr, x, 2 * (uint64_t)g->n_ev + g->n_x + g->x_inst[xi], AN_CE_PEER);
                add_edge(b, gr, END(i), x, AN_CE_XFER);
                (void)m;
            } else {
                add_edge(b, gr, END(i), START(i), AN_CE_OP);
            }
            prev = i;
        }
    }
    /* a blocking call returns when the GPU work it waited for ends: the
     * latest GPU work on the rank that ended inside the call */
    for (size_t k = 0; k < n_calls; k++) {
        size_t c = calls[k];
        size_t at = last_end_before(by_end, n_gpu, tl_end_ns(tl, c));
        if (at == 0)
            continue;
        size_t gev = (size_t)by_end[at - 1].val;
        if (tl_end_ns(tl, gev) > tl->ts_ns[c])
            add_edge(b, gr, END(c), END(gev), AN_CE_SYNC);
    }
    free(by_end);
    free(recv_end);
    free(calls);
}

typedef struct build_job {
    const an_ctx *ctx;
    an_cp_graph *g;
    const uint8_t *nf;
    int64_t *dropped, *bad_nesting;
    bool *merged;
} build_job;

static void build_rank(void *ctx, size_t r)
{
    build_job *j = ctx;
    an_cp_graph *g = j->g;
    an_cp_rank *gr = &g->ranks[r];
    const tl_rank *rk = &j->ctx->tl->ranks[r];
    rank_build b = { j->ctx, g, j->nf, NULL, 0, 0, 0, 0, 0, false };
    /* about one edge a node: reserved once instead of regrown */
    b.cap = 2 * gr->n_ev + 3 * gr->n_x + 16;
    b.e = cp_xmalloc(b.cap * sizeof *b.e);
    cpu_edges(&b, gr, rk);
    gpu_edges(&b, gr, rk);
    /* the arrivals of the instances this rank arrived last at: every
     * member's start */
    for (size_t k = gr->a0; k < gr->a0 + gr->n_a; k++) {
        const struct an_cp_inst *in = &g->inst[k];
        for (size_t q = in->m0; q < in->m0 + in->n_m; q++)
            add_edge(&b, gr, 2 * (uint64_t)g->n_ev + g->n_x + k, START(g->inst_mem[q]), AN_CE_ARRIVE);
    }
    size_t nl = 2 * gr->n_ev + gr->n_x + gr->n_a;
    j->dropped[r] = b.dropped;
    j->bad_nesting[r] = b.bad_nesting;
    j->merged[r] = b.merged_bwd;
    if (b.n >= UINT32_MAX) { /* offsets would not fit: the rank stays without edges */
        j->dropped[r] += (int64_t)b.n;
        free(b.e);
        return;
    }
    gr->off = cp_xcalloc(nl + 1, sizeof *gr->off);
    for (size_t k = 0; k < b.n; k++)
        gr->off[b.e[k].dst_local + 1]++;
    for (size_t l = 0; l < nl; l++)
        gr->off[l + 1] += gr->off[l];
    gr->src = cp_xmalloc((b.n ? b.n : 1) * sizeof *gr->src);
    gr->type = cp_xmalloc(b.n ? b.n : 1);
    uint32_t *fill = cp_xmalloc((nl ? nl : 1) * sizeof *fill);
    memcpy(fill, gr->off, nl * sizeof *fill);
    for (size_t k = 0; k < b.n; k++) {
        uint32_t at = fill[b.e[k].dst_local]++;
        gr->src[at] = b.e[k].src;
        gr->type[at] = b.e[k].type;
        g->by_type[r * AN_CE__COUNT + b.e[k].type]++;
    }
    gr->n_edges = b.n;
    free(fill);
    free(b.e);
}

void an_cp_graph_free(an_cp_graph *g)
{
    if (!g)
        return;
    for (size_t r = 0; r < g->n_ranks; r++) {
        free(g->ranks[r].off);
        free(g->ranks[r].src);
        free(g->ranks[r].type);
    }
    free(g->ranks);
    free(g->parent);
    free(g->by_type);
    free(g->name_flags);
    free(g->inst);
    free(g->inst_mem);
    free(g->x_inst);
    free(g);
}

/* Collective instances: the matched members grouped by their last
 * arriver (one per instance), sorted by it. */
static void instances(an_cp_graph *g)
{
    size_t n = g->n_x;
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ g->x[i].last_ev, i };
    cp_sort_kv(kv, n, NULL);
    g->inst = cp_xmalloc((n ? n : 1) * sizeof *g->inst);
    g->inst_mem = cp_xmalloc((n ? n : 1) * sizeof *g->inst_mem);
    g->x_inst = cp_xmalloc((n ? n : 1) * sizeof *g->x_inst);
    for (size_t i = 0; i < n; i++) {
        if (!i || kv[i].key != kv[i - 1].key)
            g->inst[g->n_inst++] = (struct an_cp_inst){ (size_t)kv[i].key, i, 0 };
        g->inst[g->n_inst - 1].n_m++;
        g->inst_mem[i] = g->x[kv[i].val].ev;
        g->x_inst[kv[i].val] = g->n_inst - 1;
    }
    free(kv);
}

an_cp_graph *an_cp_graph_build(const an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    const an_collectives_result *cr = ctx->results[AN_collectives];
    an_cp_graph *g = cp_xcalloc(1, sizeof *g);
    g->tl = tl;
    g->n_ev = tl->n_events;
    g->x = cr ? cr->members : NULL;
    g->n_x = cr ? cr->n_members : 0;
    g->n_ranks = tl->n_ranks;
    g->ranks = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *g->ranks);
    g->parent = cp_xmalloc((tl->n_events ? tl->n_events : 1) * sizeof *g->parent);
    for (size_t i = 0; i < tl->n_events; i++)
        g->parent[i] = -1;
    g->by_type = cp_xcalloc((tl->n_ranks ? tl->n_ranks : 1) * AN_CE__COUNT, sizeof *g->by_type);
    instances(g);
    if (2 * (uint64_t)g->n_ev + g->n_x + g->n_inst >= AN_CP_MAX_NODES) {
        an_cp_graph_free(g);
        return NULL;
    }
    size_t xk = 0, ak = 0;
    for (size_t r = 0; r < tl->n_ranks; r++) {
        const tl_rank *rk = &tl->ranks[r];
        an_cp_rank *gr = &g->ranks[r];
        gr->ev0 = rk->track_begin < rk->track_end ? tl->tracks[rk->track_begin].ev_begin : 0;
        size_t ev1 = rk->track_begin < rk->track_end ? tl->tracks[rk->track_end - 1].ev_end : gr->ev0;
        gr->n_ev = ev1 - gr->ev0;
        while (xk < g->n_x && g->x[xk].ev < gr->ev0)
            xk++;
        gr->x0 = xk;
        while (xk < g->n_x && g->x[xk].ev < ev1)
            xk++;
        gr->n_x = xk - gr->x0;
        while (ak < g->n_inst && g->inst[ak].last_ev < gr->ev0)
            ak++;
        gr->a0 = ak;
        while (ak < g->n_inst && g->inst[ak].last_ev < ev1)
            ak++;
        gr->n_a = ak - gr->a0;
    }
    uint8_t *nf = name_flags(tl);
    size_t nr = tl->n_ranks ? tl->n_ranks : 1;
    build_job j = { ctx, g, nf, cp_xcalloc(nr, sizeof(int64_t)), cp_xcalloc(nr, sizeof(int64_t)),
                    cp_xcalloc(nr, sizeof(bool)) };
    cp_par_for(tl->n_ranks, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, build_rank, &j);
    for (size_t r = 0; r < tl->n_ranks; r++) {
        g->dropped_edges += j.dropped[r];
        g->bad_nesting += j.bad_nesting[r];
        g->merged_bwd_ranks += j.merged[r];
        g->n_edges += g->ranks[r].n_edges;
        g->n_nodes += 2 * g->ranks[r].n_ev + g->ranks[r].n_x + g->ranks[r].n_a;
    }
    free(j.dropped);
    free(j.bad_nesting);
    free(j.merged);
    g->name_flags = nf;
    return g;
}

/* ---- the walk ---- */

typedef struct seg_attr {
    int64_t ev;       /* event the time belongs to, -1 none */
    cp_layer layer;
    int bound;
} seg_attr;

static cp_layer ev_layer(const an_ctx *ctx, const an_layers_result *lr, const uint8_t *nf, size_t ev)
{
    const tl_timeline *tl = ctx->tl;
    if (tl->tracks[tl->track[ev]].key.kind == TL_TRACK_CPU)
        return (nf[tl->name[ev]] & NF_STORAGE) ? CP_LAYER_STORAGE : CP_LAYER_HOST;
    switch (tl->kclass[ev]) {
    case TL_K_COMPUTE:
    case TL_K_MEMSET: return CP_LAYER_COMPUTE;
    case TL_K_MEMCPY: return tl->copy_dir[ev] == TL_COPY_D2D ? CP_LAYER_COMPUTE : CP_LAYER_INTRA;
    case TL_K_COMM: {
        int gs;
        bool inter = false;
        if (lr)
            an_event_scope(ctx, lr, ev, &gs, &inter);
        return inter ? CP_LAYER_INTER : CP_LAYER_INTRA;
    }
    default: return CP_LAYER_IDLE;
    }
}

static int ev_bound(const an_ctx *ctx, const uint8_t *nf, size_t ev)
{
    const tl_timeline *tl = ctx->tl;
    if (tl->tracks[tl->track[ev]].key.kind == TL_TRACK_CPU)
        return (nf[tl->name[ev]] & NF_DATALOADER) ? B_DATA : B_CPU;
    return tl->kclass[ev] == TL_K_COMM ? B_COMM : B_COMPUTE;
}

/* Who the time of hop u -> v belongs to (HTA's _attribute_edge for
 * operator edges: (start, start) -> src, (start, end) -> the event,
 * (end, end) -> dst, (end, start) -> the parent of dst). */
static seg_attr attribute(const an_ctx *ctx, const an_layers_result *lr, const an_cp_graph *g, uint64_t u,
                          uint64_t v, an_cp_edge type)
{
    const uint8_t *nf = g->name_flags;
    seg_attr a = { -1, CP_LAYER_IDLE, B_OTHER };
    int64_t ev = -1;
    switch (type) {
    case AN_CE_OP:
        if (node_is_end(g, v))
            ev = (int64_t)node_ev(g, v);
        else if (!node_is_end(g, u))
            ev = (int64_t)node_ev(g, u);
        else
            ev = g->parent[node_ev(g, v)];
        break;
    case AN_CE_DEP: return a; /* nothing ran on the thread between two top-level ops */
    case AN_CE_LAUNCH:
        a.ev = (int64_t)node_ev(g, u);
        a.layer = CP_LAYER_HOST;
        a.bound = B_LAUNCH;
        return a;
    case AN_CE_XSTREAM: /* the stream waited for another stream: idle */
    case AN_CE_P2P:     /* ... for a recv to deliver */
        a.ev = (int64_t)node_ev(g, v);
        return a;
    case AN_CE_KK:
        a.ev = (int64_t)node_ev(g, u);
        a.bound = B_KK;
        return a; /* the stream sat between two kernels: idle */
    case AN_CE_SYNC:
        a.ev = (int64_t)node_ev(g, v);
        a.layer = CP_LAYER_HOST;
        return a; /* the blocking call returning after the GPU finished */
    case AN_CE_WAIT:
    case AN_CE_PEER:
    case AN_CE_ARRIVE:
    case AN_CE_XFER:
        ev = (int64_t)node_ev(g, v);
        break;
    default: return a;
    }
    if (ev < 0)
        return a;
    a.ev = ev;
    a.layer = ev_layer(ctx, lr, nf, (size_t)ev);
    a.bound = ev_bound(ctx, nf, (size_t)ev);
    return a;
}

typedef struct step_path {
    int64_t id;
    int32_t sink_rank;
    int64_t step_ns;           /* the sink rank's ProfilerStep duration */
    int64_t start_ns, end_ns;  /* where the path starts and ends (timeline clock) */
    int64_t length_ns;
    int64_t layers[CP_LAYER__COUNT];
    int64_t bound[B__COUNT];
    int64_t *rank_ns;          /* per rank index */
    cp_kv *events;             /* (name << 32 | layer << 24 | rank index) -> ns, merged */
    int64_t *event_count;
    size_t n_events;
    int64_t n_segments;
    bool truncated;            /* stopped at the hop cap (a zero-length cycle) */
    bool no_path;              /* no event of the window has a predecessor: nothing to report */
    an_cp_path path;           /* the segments themselves, for the overlay */
    size_t cap_path;
} step_path;

typedef struct walk_job {
    const an_ctx *ctx;
    const an_layers_result *lr;
    const an_cp_graph *g;
    const an_steps_result *sr;
    int64_t *ids;              /* distinct step ids, ascending */
    step_path *out;
} walk_job;

static const an_step *rank_step(const an_steps_result *sr, size_t r, int64_t id)
{
    const an_rank_steps *rs = &sr->ranks[r];
    for (size_t i = 0; i < rs->n; i++)
        if (rs->steps[i].id == id)
            return &rs->steps[i];
    return NULL;
}

#define AN_CP_WHOLE_TRACE (-1)

/* Events that bound the whole-trace window: the work, not the profiler's
 * own records (trace spans, overhead, instants, GPU-side annotations). */
static bool on_path_window(const tl_timeline *tl, size_t i)
{
    uint8_t c = tl->cat[i];
    return c != TL_CAT_TRACE && c != TL_CAT_OVERHEAD && c != TL_CAT_CPU_INSTANT && c != TL_CAT_GPU_USER_ANNOTATION &&
           c != TL_CAT_OTHER;
}

/* Keep one walked segment, up to AN_CP_MAX_HOPS (the walk goes backward, so
 * the cap drops the path's earliest segments). */
static void keep_hop(step_path *p, const an_cp_hop *h)
{
    if (p->path.n_hops >= AN_CP_MAX_HOPS) {
        p->path.truncated++;
        return;
    }
    cp_xgrow((void **)&p->path.hops, &p->cap_path, p->path.n_hops + 1, sizeof *h);
    p->path.hops[p->path.n_hops++] = *h;
}

static void walk_step(void *ctx, size_t si)
{
    walk_job *j = ctx;
    const an_cp_graph *g = j->g;
    const tl_timeline *tl = j->ctx->tl;
    step_path *p = &j->out[si];
    int64_t id = j->ids[si];
    size_t nr = tl->n_ranks;
    p->id = id;
    p->path.id = id;
    p->rank_ns = cp_xcalloc(nr ? nr : 1, sizeof *p->rank_ns);
    int64_t *clip = cp_xmalloc((nr ? nr : 1) * sizeof *clip);
    size_t sink_r = SIZE_MAX, sink_ev = 0;
    int64_t sink_end = INT64_MIN;
    if (id == AN_CP_WHOLE_TRACE) {
        /* no profiler steps: one window per rank from its first event to
         * its last end (HTA's default region: the whole trace) */
        for (size_t r = 0; r < nr; r++) {
            const tl_rank *rk = &tl->ranks[r];
            clip[r] = INT64_MAX;
            for (uint32_t t = rk->track_begin; t < rk->track_end; t++)
                for (size_t i = tl->tracks[t].ev_begin; i < tl->tracks[t].ev_end; i++) {
                    const uint32_t *src;
                    const uint8_t *type;
                    if (!on_path_window(tl, i) || !an_cp_preds(g, END(i), &src, &type))
                        continue; /* profiler bookkeeping, or nothing leads to it */
                    clip[r] = CP_MIN(clip[r], tl->ts_ns[i]);
                    if (tl_end_ns(tl, i) > sink_end) {
                        sink_end = tl_end_ns(tl, i);
                        sink_r = r;
                        sink_ev = i;
                    }
                }
        }
        if (sink_r == SIZE_MAX) { /* only instants or bookkeeping: no path, not a path of length 0 at t = 0 */
            p->no_path = true;
            free(clip);
            return;
        }
        p->step_ns = sink_end - clip[sink_r];
    } else {
        for (size_t r = 0; r < nr; r++) {
            const an_step *s = rank_step(j->sr, r, id);
            clip[r] = s ? s->start_ns : INT64_MIN;
            if (s && s->start_ns + s->dur_ns > sink_end) {
                sink_end = s->start_ns + s->dur_ns;
                sink_r = r;
            }
        }
        const an_step *ss = rank_step(j->sr, sink_r, id);
        for (size_t r = 0; r < nr; r++)
            if (clip[r] == INT64_MIN)
                clip[r] = ss->start_ns; /* a rank without this step: the sink's start bounds it */
        p->step_ns = ss->dur_ns;
        sink_ev = ss->ev;
    }
    p->sink_rank = tl->ranks[sink_r].meta.rank;
    p->end_ns = sink_end;
    cp_kv *ev = NULL;
    int64_t *evc = NULL;
    size_t n_ev = 0, cap_ev = 0;
    uint64_t v = END(sink_ev);
    int64_t tv = an_cp_node_ts(g, v);
    size_t cap_hops = 4 * g->n_nodes + 16, hops = 0;
    for (;;) {
        uint32_t rv = node_rank(g, v);
        if (tv <= clip[rv])
            break;
        if (++hops > cap_hops) {
            p->truncated = true;
            break;
        }
        const uint32_t *src;
        const uint8_t *type;
        size_t np = an_cp_preds(g, v, &src, &type);
        size_t best = an_cp_binding(g, v, src, np);
        int64_t best_ts = best != SIZE_MAX ? an_cp_node_ts(g, src[best]) : INT64_MIN;
        seg_attr a = { -1, CP_LAYER_IDLE, B_OTHER };
        int64_t lo = clip[rv];
        if (best != SIZE_MAX) {
            a = attribute(j->ctx, j->lr, g, src[best], v, (an_cp_edge)type[best]);
            lo = CP_MAX(best_ts, clip[rv]);
        }
        int64_t d = tv - lo;
        /* a transfer is carried by the rank whose arrival started it */
        uint32_t rs = best != SIZE_MAX && type[best] == AN_CE_XFER ? node_rank(g, START(node_x(g, src[best])->last_ev))
                                                                     : rv;
        if (d > 0) {
            keep_hop(p, &(an_cp_hop){ best != SIZE_MAX ? src[best] : UINT64_MAX, v, lo, tv, a.ev, rs,
                                      (uint8_t)(best != SIZE_MAX ? type[best] : AN_CE__COUNT), (uint8_t)a.layer });
            p->layers[a.layer] += d;
            p->bound[a.bound] += d;
            p->rank_ns[rs] += d;
            p->n_segments++;
            if (a.ev >= 0) {
                cp_xgrow((void **)&ev, &cap_ev, n_ev + 1, sizeof *ev);
                ev[n_ev++] = (cp_kv){ (uint64_t)tl->name[a.ev] << 32 | (uint64_t)a.layer << 24 | (rs & 0xffffffu),
                                      (uint64_t)d };
            }
        }
        p->start_ns = lo;
        if (best == SIZE_MAX || best_ts <= clip[rv])
            break;
        v = src[best];
        tv = best_ts;
    }
    if (!p->n_segments)
        p->start_ns = p->end_ns;
    for (size_t i = 0, k = p->path.n_hops; i < k / 2; i++) { /* walked backward: forward in time */
        an_cp_hop t = p->path.hops[i];
        p->path.hops[i] = p->path.hops[k - 1 - i];
        p->path.hops[k - 1 - i] = t;
    }
    p->length_ns = p->end_ns - p->start_ns;
    /* merge the event time by (name, layer, rank) */
    cp_sort_kv(ev, n_ev, NULL);
    size_t m = 0;
    evc = cp_xmalloc((n_ev ? n_ev : 1) * sizeof *evc);
    for (size_t i = 0; i < n_ev; i++) {
        if (m && ev[m - 1].key == ev[i].key) {
            ev[m - 1].val += ev[i].val;
            evc[m - 1]++;
        } else {
            ev[m] = ev[i];
            evc[m++] = 1;
        }
    }
    p->events = ev;
    p->event_count = evc;
    p->n_events = m;
    free(clip);
}

/* ---- report ---- */

static void put_step(an_ctx *ctx, rep_node *arr, const step_path *p)
{
    rep_report *rp = ctx->rep;
    const tl_timeline *tl = ctx->tl;
    rep_node *o = rep_obj(rp, arr, NULL, NULL);
    rep_int(rp, o, "id", "step", p->id, NULL);
    rep_int(rp, o, "length_ns", "path length", p->length_ns, "ns");
    rep_int(rp, o, "step_ns", "step time (rank the path ends on)", p->step_ns, "ns");
    rep_int(rp, o, "end_rank", "rank the path ends on", p->sink_rank, NULL);
    rep_int(rp, o, "start_ns", "path start", p->start_ns - tl->t0_ns, "ns");
    rep_node *l = rep_obj(rp, o, "layers", "path by layer");
    for (int k = 0; k < CP_LAYER__COUNT; k++) {
        char key[32];
        snprintf(key, sizeof key, "%s_ns", cp_layer_key((cp_layer)k));
        rep_int(rp, l, key, cp_layer_key((cp_layer)k), p->layers[k], "ns");
    }
    rep_node *b = rep_obj(rp, o, "bound_by", "path by HTA's bound type");
    for (int k = 0; k < B__COUNT; k++)
        rep_int(rp, b, bound_keys[k], NULL, p->bound[k], "ns");
    /* ranks carrying the path, most first */
    size_t nr = tl->n_ranks;
    cp_kv *rk = cp_xmalloc((nr ? nr : 1) * sizeof *rk);
    size_t n = 0;
    for (size_t r = 0; r < nr; r++)
        if (p->rank_ns[r] > 0)
            rk[n++] = (cp_kv){ ~(uint64_t)p->rank_ns[r], r };
    cp_sort_kv(rk, n, NULL);
    rep_node *ra = rep_arr(rp, o, "ranks", "time on the path per rank");
    for (size_t i = 0; i < n; i++) {
        rep_node *x = rep_obj(rp, ra, NULL, NULL);
        rep_int(rp, x, "rank", NULL, tl->ranks[rk[i].val].meta.rank, NULL);
        rep_int(rp, x, "ns", NULL, p->rank_ns[rk[i].val], "ns");
    }
    free(rk);
    /* the events holding most of the path */
    cp_kv *top = cp_xmalloc((p->n_events ? p->n_events : 1) * sizeof *top);
    for (size_t i = 0; i < p->n_events; i++)
        top[i] = (cp_kv){ ~p->events[i].val, i };
    cp_sort_kv(top, p->n_events, NULL);
    rep_node *ea = rep_arr(rp, o, "events", "events holding most of the path");
    for (size_t i = 0; i < p->n_events && i < AN_CP_TOP_EVENTS; i++) {
        const cp_kv *e = &p->events[top[i].val];
        rep_node *x = rep_obj(rp, ea, NULL, NULL);
        rep_str(rp, x, "name", NULL, tl_str(tl, (uint32_t)(e->key >> 32)));
        rep_int(rp, x, "rank", NULL, tl->ranks[e->key & 0xffffffu].meta.rank, NULL);
        rep_str(rp, x, "layer", NULL, cp_layer_key((cp_layer)((e->key >> 24) & 0xff)));
        rep_int(rp, x, "ns", NULL, (int64_t)e->val, "ns");
        rep_int(rp, x, "segments", NULL, p->event_count[top[i].val], NULL);
    }
    free(top);
    rep_int(rp, o, "segments", "hops on the path", p->n_segments, NULL);
    if (p->truncated)
        rep_bool(rp, o, "truncated", "walk stopped at the hop cap", true);
}

static void free_result(void *self)
{
    an_critpath_result *r = self;
    an_cp_graph_free(r->graph);
    for (size_t i = 0; i < r->n_steps; i++)
        free(r->paths[i].hops);
    free(r->paths);
    free(r->rank_ns);
    free(r);
}

int an_critpath_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    rep_report *rp = ctx->rep;
    const an_steps_result *sr = ctx->results[AN_steps];
    const an_layers_result *lr = ctx->results[AN_layers];
    an_critpath_result *res = cp_xcalloc(1, sizeof *res);
    res->free = free_result;
    ctx->results[AN_critpath] = res;
    rep_node *top = rep_obj(rp, rp->root, "critical_path", "critical path across ranks");
    an_cp_graph *g = an_cp_graph_build(ctx);
    res->graph = g;
    if (!g) {
        rep_str(rp, top, "skipped", NULL, "more nodes than 32-bit node ids hold (AN_CP_MAX_NODES)");
        return 0;
    }

    rep_node *gn = rep_obj(rp, top, "graph", "dependency graph");
    rep_int(rp, gn, "nodes", NULL, (int64_t)g->n_nodes, NULL);
    rep_int(rp, gn, "edges", NULL, (int64_t)g->n_edges, NULL);
    rep_node *bt = rep_obj(rp, gn, "edges_by_type", NULL);
    for (int t = 0; t < AN_CE__COUNT; t++) {
        int64_t s = 0;
        for (size_t r = 0; r < g->n_ranks; r++)
            s += g->by_type[r * AN_CE__COUNT + t];
        rep_int(rp, bt, edge_names[t], NULL, s, NULL);
    }
    rep_int(rp, gn, "collective_members", "kernels joined across ranks", (int64_t)g->n_x, NULL);
    rep_int(rp, gn, "dropped_backward_edges", "edges that would go back in time", g->dropped_edges, NULL);
    rep_int(rp, gn, "skipped_bad_nesting", "CPU events ending after their parent", g->bad_nesting, NULL);
    rep_int(rp, gn, "ranks_backward_thread_merged", NULL, g->merged_bwd_ranks, NULL);

    /* distinct step ids over ranks */
    int64_t *ids = NULL;
    size_t n_ids = 0, cap_ids = 0;
    for (size_t r = 0; sr && r < sr->n_ranks; r++)
        for (size_t i = 0; i < sr->ranks[r].n; i++) {
            cp_xgrow((void **)&ids, &cap_ids, n_ids + 1, sizeof *ids);
            ids[n_ids++] = sr->ranks[r].steps[i].id;
        }
    for (size_t i = 1; i < n_ids; i++) /* insertion sort: few steps */
        for (size_t k = i; k > 0 && ids[k] < ids[k - 1]; k--) {
            int64_t t = ids[k];
            ids[k] = ids[k - 1];
            ids[k - 1] = t;
        }
    size_t m = 0;
    for (size_t i = 0; i < n_ids; i++)
        if (!m || ids[m - 1] != ids[i])
            ids[m++] = ids[i];
    n_ids = m;
    if (!n_ids && tl->n_ranks) { /* no profiler steps: the whole trace, id -1 */
        ids = cp_xmalloc(sizeof *ids);
        ids[n_ids++] = AN_CP_WHOLE_TRACE;
    }
    step_path *paths = cp_xcalloc(n_ids ? n_ids : 1, sizeof *paths);
    walk_job wj = { ctx, lr, g, sr, ids, paths };
    cp_par_for(n_ids, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, walk_step, &wj);

    res->n_ranks = tl->n_ranks;
    res->rank_ns = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *res->rank_ns);
    rep_node *arr = rep_arr(rp, top, "steps", "critical path per step");
    res->paths = cp_xcalloc(n_ids ? n_ids : 1, sizeof *res->paths);
    for (size_t i = 0; i < n_ids; i++) {
        res->paths[i] = paths[i].path; /* the result owns the hops now */
        if (!paths[i].no_path)
            put_step(ctx, arr, &paths[i]);
        res->length_ns += paths[i].length_ns;
        for (size_t r = 0; r < tl->n_ranks; r++)
            res->rank_ns[r] += paths[i].rank_ns[r];
        free(paths[i].rank_ns);
        free(paths[i].events);
        free(paths[i].event_count);
    }
    res->n_steps = n_ids;
    /* the rank carrying most of the path over all steps */
    res->carrier = -1;
    int64_t best = 0;
    for (size_t r = 0; r < tl->n_ranks; r++)
        if (res->rank_ns[r] > best) {
            best = res->rank_ns[r];
            res->carrier = (int32_t)r;
        }
    if (res->carrier >= 0) {
        rep_node *c = rep_obj(rp, top, "carrier", "rank carrying most of the path, all steps");
        rep_int(rp, c, "rank", NULL, tl->ranks[res->carrier].meta.rank, NULL);
        rep_int(rp, c, "ns", NULL, best, "ns");
        rep_num(rp, c, "share_pct", NULL, res->length_ns ? 100.0 * (double)best / (double)res->length_ns : 0, "%");
    } else {
        rep_null(rp, top, "carrier", "rank carrying most of the path, all steps", NULL);
    }
    free(paths);
    free(ids);
    return 0;
}
