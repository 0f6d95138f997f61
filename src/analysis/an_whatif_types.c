/* an_whatif_types.c - the paper's op types for the Kineto what-if
 * (an_whatif.c): which of forward-compute, backward-compute,
 * forward-send/recv, ... a GPU op of a PyTorch profiler trace is.
 *
 * Design
 * - The OSDI'25 artifact's ops are Megatron's timed regions; in a Kineto
 *   trace the same regions are user annotations (record_function, NVTX
 *   ranges: Megatron's "forward-compute", "## forward ##", torch's
 *   "Optimizer.step#AdamW.step", ...). A kernel's type is that of the
 *   innermost mapped annotation open at its launch on its rank, preferring
 *   one on the launching thread (the autograd engine launches backward
 *   kernels from its own thread, under the main thread's "## backward ##").
 *   The name table (ann_map) is the one definition; docs/METRICS.md
 *   ("What-if", op types) lists it.
 * - A point-to-point kernel whose peer is known (an_collectives) is typed by
 *   its direction instead: a send to the next stage or a recv from the
 *   previous one (positions in the pipeline group, last -> first for
 *   interleaved chunks) is forward-send/recv, the other way
 *   backward-send/recv. A batched p2p kernel (one SendRecv kernel for
 *   several sends / recvs of a ncclGroupStart/End, "Collective name"
 *   naming no single direction) takes its annotation's type, as Megatron's
 *   "forward-send-backward-recv" region is typed by its first direction.
 * - A collective kernel takes its annotation's type only when that type is
 *   communication (a TP all-reduce inside forward-compute stays the
 *   all_reduce it is, as the artifact keeps tp-comm apart).
 * - A typed op's identity (whose typical duration is its ideal) is its
 *   type, kernel name and k-th place among that name's kernels in its
 *   annotation range (one annotation: one microbatch's op); a p2p op's is
 *   its type, name and direction. Ideal over every rank, step and
 *   microbatch, as the artifact's reduce over (dp_rank, stage, step) per op
 *   type; untyped ops keep (name, k-th in step).
 */
#include "an_whatif.h"
#include "an_critpath.h"
#include "an_results.h"
#include "an_verdict.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const pt_name[WI_PT__COUNT] = {
    [WI_PT_FWD] = "forward-compute",   [WI_PT_BWD] = "backward-compute",
    [WI_PT_FSR] = "forward-send/recv", [WI_PT_BSR] = "backward-send/recv",
    [WI_PT_RS] = "grads-reduce-scatter", [WI_PT_AG] = "params-all-gather",
    [WI_PT_EMB] = "embedding-grads-all-reduce", [WI_PT_LN] = "layernorm-grads-all-reduce",
    [WI_PT_OPT] = "optimizer",          [WI_PT_CLIP] = "optimizer-clip-main-grad",
    [WI_PT_GC] = "gc",
};

/* Annotation names (exact, or a prefix when `prefix`) and their type. */
static const struct {
    const char *name;
    uint8_t type;
    bool prefix;
} ann_map[] = {
    { "forward-compute", WI_PT_FWD, false },     { "## forward ##", WI_PT_FWD, false },
    { "forward", WI_PT_FWD, false },             { "forward_step", WI_PT_FWD, false },
    { "backward-compute", WI_PT_BWD, false },    { "## backward ##", WI_PT_BWD, false },
    { "backward", WI_PT_BWD, false },            { "backward_step", WI_PT_BWD, false },
    { "forward-send", WI_PT_FSR, true },         { "forward-recv", WI_PT_FSR, true },
    { "send_forward", WI_PT_FSR, true },         { "recv_forward", WI_PT_FSR, true },
    { "backward-send", WI_PT_BSR, true },        { "backward-recv", WI_PT_BSR, true },
    { "send_backward", WI_PT_BSR, true },        { "recv_backward", WI_PT_BSR, true },
    { "grads-reduce-scatter", WI_PT_RS, false }, { "all-grads-sync", WI_PT_RS, false },
    { "params-all-gather", WI_PT_AG, false },    { "embedding-grads-all-reduce", WI_PT_EMB, false },
    { "layernorm-grads-all-reduce", WI_PT_LN, false },
    { "optimizer-clip-main-grad", WI_PT_CLIP, false },
    { "optimizer", WI_PT_OPT, false },           { "## optimizer ##", WI_PT_OPT, false },
    { "optimizer-inner-step", WI_PT_OPT, false }, { "Optimizer.step#", WI_PT_OPT, true },
    { "gc", WI_PT_GC, false },
};

const char *wi_ptype_name(uint32_t t) { return t < WI_PT__COUNT ? pt_name[t] : NULL; }

static bool pt_comm(uint32_t t)
{
    return t == WI_PT_FSR || t == WI_PT_BSR || t == WI_PT_RS || t == WI_PT_AG || t == WI_PT_EMB || t == WI_PT_LN ||
           t == WI_PT_CLIP;
}

/* The type an annotation name stands for, WI_PT_NONE none. */
static uint32_t ann_type(const char *s)
{
    for (size_t k = 0; k < sizeof ann_map / sizeof *ann_map; k++)
        if (ann_map[k].prefix ? !strncmp(s, ann_map[k].name, strlen(ann_map[k].name)) : !strcmp(s, ann_map[k].name))
            return ann_map[k].type;
    return WI_PT_NONE;
}

bool wi_p2p_positions(const an_ctx *ctx, size_t ev, int32_t peer, int *self, int *q, int *n, int32_t *first)
{
    const tl_timeline *tl = ctx->tl;
    int32_t mem[AN_P2P_MAX_GROUP];
    int32_t me = tl->ranks[tl->tracks[tl->track[ev]].rank_index].meta.rank;
    *n = an_event_group(ctx, ev, mem, AN_P2P_MAX_GROUP);
    *self = *q = -1;
    if (*n < 2 || *n > AN_P2P_MAX_GROUP)
        return false;
    *first = mem[0];
    for (int m = 0; m < *n; m++) {
        *self = mem[m] == me ? m : *self;
        *q = mem[m] == peer ? m : *q;
    }
    if (peer < 0) /* a batched SendRecv: its place in the group only */
        return *self >= 0;
    return *self >= 0 && *q >= 0 &&
           (abs(*self - *q) == 1 || (*self + *q == *n - 1 && abs(*self - *q) == *n - 1));
}

/* forward-send/recv or backward-send/recv from a p2p kernel's peer, NONE
 * when the peer is no neighbour. The next stage is +1 (or last -> first). */
static uint32_t p2p_type(const an_ctx *ctx, const an_coll_kernel *ck)
{
    int self, q, n;
    int32_t first;
    if (ck->peer < 0 || !ck->p2p || !wi_p2p_positions(ctx, ck->ev, ck->peer, &self, &q, &n, &first))
        return WI_PT_NONE;
    bool next = abs(self - q) == 1 ? q == self + 1 : q == 0; /* the peer is the next stage */
    return (ck->p2p == AN_P2P_SEND) == next ? WI_PT_FSR : WI_PT_BSR;
}

/* sweep records: an annotation's start (kind 0) or an op's launch (kind 1) */
typedef struct ann_rec {
    uint64_t k0, k1;
    size_t i;              /* annotation event, or op index */
} ann_rec;

static uint64_t ann_key(const void *p, int k, const void *ctx)
{
    (void)ctx;
    const ann_rec *r = p;
    return k ? r->k1 : r->k0;
}

/* The innermost open annotation at a launch on track t: the latest start,
 * one on t first; SIZE_MAX none. Drops the ones that ended. */
static size_t innermost(const tl_timeline *tl, size_t *open, size_t *n_open, uint32_t t, int64_t ts)
{
    size_t best = SIZE_MAX, n = 0;
    bool best_same = false;
    for (size_t k = 0; k < *n_open; k++) {
        size_t a = open[k];
        if (tl_end_ns(tl, a) <= ts)
            continue;
        open[n++] = a;
        bool same = tl->track[a] == t;
        if (best == SIZE_MAX || (same && !best_same) || (same == best_same && tl->ts_ns[a] >= tl->ts_ns[best])) {
            best = a;
            best_same = same;
        }
    }
    *n_open = n;
    return best;
}

/* One rank's ops [o0, o1): each gets the type of its innermost mapped
 * annotation (o->type) and that annotation in ann[k]. */
static void rank_annotations(const an_ctx *ctx, wi_model *m, size_t r, size_t o0, size_t o1, const uint8_t *map,
                             size_t *ann)
{
    const tl_timeline *tl = ctx->tl;
    const tl_rank *rk = &tl->ranks[r];
    ann_rec *v = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        if (tl->tracks[t].key.kind != TL_TRACK_CPU)
            continue;
        for (size_t i = tl->tracks[t].ev_begin; i < tl->tracks[t].ev_end; i++)
            if ((tl->cat[i] == TL_CAT_USER_ANNOTATION || tl->cat[i] == TL_CAT_NVTX) && map[tl->name[i]] != WI_PT__COUNT) {
                cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
                /* outer (later end) first at one start, launches after */
                v[n++] = (ann_rec){ cp_key_i64(tl->ts_ns[i]), (UINT64_MAX - cp_key_i64(tl_end_ns(tl, i))) >> 1, i };
            }
    }
    if (!n) {
        free(v);
        return;
    }
    for (size_t k = o0; k < o1; k++) {
        int32_t l = tl->link[m->ops[k].ev];
        if (l < 0)
            continue;
        cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
        v[n++] = (ann_rec){ cp_key_i64(tl->ts_ns[l]), UINT64_MAX, k };
    }
    cp_sort_records(v, n, sizeof *v, 2, ann_key, NULL);
    size_t *open = cp_xmalloc(n * sizeof *open), n_open = 0;
    for (size_t k = 0; k < n; k++) {
        if (v[k].k1 != UINT64_MAX) {
            open[n_open++] = v[k].i;
            continue;
        }
        wi_op *o = &m->ops[v[k].i];
        int32_t l = tl->link[o->ev];
        size_t a = innermost(tl, open, &n_open, tl->track[l], tl->ts_ns[l]);
        if (a == SIZE_MAX)
            continue;
        uint32_t t = map[tl->name[a]];
        if (o->comm && !pt_comm(t))
            continue; /* a collective inside a compute region keeps its collective */
        o->type = t;
        ann[v[k].i] = a;
    }
    free(open);
    free(v);
}

static void number_in_annotation(wi_model *m, const tl_timeline *tl, const size_t *ann)
{
    wi_rec3 *v = cp_xmalloc((m->n_ops ? m->n_ops : 1) * sizeof *v);
    size_t n = 0;
    for (size_t k = 0; k < m->n_ops; k++)
        if (ann[k] != SIZE_MAX)
            v[n++] = (wi_rec3){ ann[k], m->ops[k].name, cp_key_i64(tl->ts_ns[m->ops[k].ev]), k };
    cp_sort_records(v, n, sizeof *v, 3, wi_rec3_key, NULL);
    for (size_t k = 0, c = 0; k < n; k++) {
        c = k && v[k].k0 == v[k - 1].k0 && v[k].k1 == v[k - 1].k1 ? c + 1 : 0;
        m->ops[v[k].i].seq = (uint32_t)CP_MIN(c, (size_t)WI_SUB_MAX);
    }
    free(v);
}

void wi_kineto_ptypes(const an_ctx *ctx, wi_model *m)
{
    const tl_timeline *tl = ctx->tl;
    size_t ns = tl->strings.n;
    uint8_t *map = cp_xmalloc(ns ? ns : 1); /* string id -> type, WI_PT__COUNT: none */
    for (size_t s = 0; s < ns; s++) {
        uint32_t t = ann_type(tl_str(tl, (uint32_t)s));
        map[s] = (uint8_t)(t == WI_PT_NONE ? WI_PT__COUNT : t);
    }
    size_t *ann = cp_xmalloc((m->n_ops ? m->n_ops : 1) * sizeof *ann);
    for (size_t k = 0; k < m->n_ops; k++) {
        m->ops[k].type = WI_PT_NONE;
        ann[k] = SIZE_MAX;
    }
    for (size_t o0 = 0, o1; o0 < m->n_ops; o0 = o1) { /* the ops are in rank order */
        for (o1 = o0; o1 < m->n_ops && m->ops[o1].rank == m->ops[o0].rank; o1++)
            ;
        rank_annotations(ctx, m, m->ops[o0].rank, o0, o1, map, ann);
    }
    number_in_annotation(m, tl, ann);
    /* p2p kernels with a known peer: their direction (a merge of the
     * kernel records and the ops, both by event) */
    const an_collectives_result *cr = ctx->results[AN_collectives];
    const an_critpath_result *cpr = ctx->results[AN_critpath];
    size_t nk = 0, no = m->n_ops;
    cp_kv *by_ev = cp_xmalloc((cr && cr->n_kernel_recs ? cr->n_kernel_recs : 1) * sizeof *by_ev);
    cp_kv *op_ev = cp_xmalloc((no ? no : 1) * sizeof *op_ev);
    for (size_t k = 0; cr && k < cr->n_kernel_recs; k++)
        if (cr->kernels[k].p2p)
            by_ev[nk++] = (cp_kv){ cr->kernels[k].ev, k };
    for (size_t k = 0; k < no; k++)
        op_ev[k] = (cp_kv){ m->ops[k].ev, k };
    cp_sort_kv(by_ev, nk, NULL);
    cp_sort_kv(op_ev, no, NULL);
    for (size_t a = 0, b = 0; a < no && b < nk;) {
        if (op_ev[a].key < by_ev[b].key) {
            a++;
            continue;
        }
        if (op_ev[a].key > by_ev[b].key) {
            b++;
            continue;
        }
        const an_coll_kernel *ck = &cr->kernels[by_ev[b++].val];
        wi_op *o = &m->ops[op_ev[a++].val];
        /* a p2p op starts, for the step's span, with its transfer (its end's
         * one predecessor): a recv posted ahead waits for its data, which is
         * the previous op's time, not its own */
        const uint32_t *src;
        const uint8_t *et;
        if (cpr && an_cp_preds(cpr->graph, o->end, &src, &et) == 1)
            o->start = src[0];
        uint32_t t = p2p_type(ctx, ck);
        if (t != WI_PT_NONE) {
            o->type = t;
            o->seq = ck->p2p; /* sends and recvs apart */
        }
    }
    free(op_ev);
    free(by_ev);
    free(ann);
    free(map);
}
