/* an_whatif.c - what-if straggler analysis (Lin et al., "Understanding
 * Stragglers in Large Model Training Using What-if Analysis", OSDI'25) on
 * the critical path's dependency graph.
 *
 * Design
 * - Two graph builders share the replay, the scenarios and the report
 *   (an_whatif.h): this file's, on an_critpath's graph of Kineto / nsys
 *   traces, and an_whatif_pp.c's, on the pipeline model of an op timeline
 *   (the OSDI'25 artifact's format; a job with one is analysed on it).
 *   What follows describes the Kineto builder; the scenarios are common.
 * - The job is replayed on the dependency graph an_critpath built: nodes in
 *   topological order (a depth-first post-order over the predecessor
 *   lists), each node at the latest of its predecessors' replayed instants
 *   plus a lag. The lag of an op's span (a GPU kernel's
 *   duration, a matched collective's transfer) is the op's duration in the
 *   scenario; the lag of the node's binding predecessor (the one satisfied
 *   last in the trace, as the critical path picks it) is the gap the trace
 *   shows; every other predecessor's lag is 0 (it had slack). Replaying
 *   with the traced durations gives the traced instants back exactly, so a
 *   scenario's step times differ from the trace's only through the
 *   durations it changes, propagated along the dependencies (a collective
 *   starts its transfer when its last member arrives, a blocked host
 *   resumes when its GPU work ends, ...).
 * - Most nodes (CPU instants, sources) have one predecessor whose lag no
 *   scenario changes: they are folded onto an earlier kept node plus a
 *   constant offset (an_whatif.h, wi_model), so a replay visits only the
 *   kept nodes (5.19 M -> 1.43 M on the PERFORMANCE.md bench set); integer
 *   offsets add up exactly, the instants are the same bit for bit.
 * - Ops are the GPU work inside profiler steps: kernels, copies, memsets
 *   (duration) and collectives (transfer time, an_collectives' split). An
 *   op's identity across workers and steps is (name, k): the k-th op of that
 *   name in its step on its rank, the step being the one its launch falls
 *   in; this is the paper's (op type, seq_id) at the granularity a Kineto
 *   trace has. The ideal duration of an identity is the mean over every
 *   worker and step for computation and the median for communication, as
 *   the artifact's reduce-over-(dp_rank, stage, step) does.
 * - Step time of a replay (the artifact's get_step_time): per profiler step
 *   that every rank has, the latest op end minus the earliest op start over
 *   ranks; T is its mean over steps.
 *   S = T_original / T_ideal. S_t: the ideal with the ops of type t put
 *   back to their traced durations, T(t) / T_ideal (the artifact's
 *   decompose_by_opgroup; op type = kernel name, or the collective for
 *   communication, the AN_WI_TYPES types with most excess over ideal). S_w
 *   the same per worker (rank) and per pipeline stage. M_W (Eq. 5) =
 *   (T_original - T_rem) / (T_original - T_ideal), T_rem = the trace with
 *   the top 3 % of workers (at least one, by min(S_w, S_stage)) set to
 *   ideal; M_S the same with the last stage set to ideal. Kineto traces do
 *   not name a rank's pipeline stage: pp_stages takes it from the send/recv
 *   kernels' process groups (position in the group = stage, the group = the
 *   DP rank) when that is consistent; otherwise every rank is its own DP
 *   rank in stage 0 and M_S is null (one stage cannot be cut badly).
 * - The replays are independent: they run in parallel, one array of
 *   instants per worker thread. Their count is 2 + types + DP ranks
 *   (+ stages + 1 with more than one stage) + 1, bounded
 *   by AN_WI_MAX_VISITS node visits in all: a larger job reports
 *   `skipped` with the reason instead of taking minutes.
 */
#include "an_whatif.h"
#include "an_critpath.h"
#include "an_results.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AN_WI_TYPES 8                      /* op types given their own S_t (the paper's jobs have about 11) */
#define AN_WI_WORKER_PCT 3                 /* M_W fixes the top 3 % of workers (the artifact's RATIO) */

/* The Kineto builder's state around the shared model. */
typedef struct wi_kmodel {
    wi_model m;
    const an_ctx *ctx;
    const an_cp_graph *g;
    size_t n;              /* nodes */
    /* profiler step ids every rank has, ascending */
    int64_t *step_id;
    size_t n_ranks;
    uint32_t tkeys[AN_WI_TYPES + WI_PT__COUNT];
    const char *tnames[AN_WI_TYPES + WI_PT__COUNT];
    int64_t *rank_label;   /* workers_fixed: each rank's number, when stages split the DP ranks */
} wi_kmodel;

/* ---- the shared model (an_whatif.h) ---- */

/* Identities and their ideal durations: one sort of packed identity keys,
 * then each identity's durations sorted on their own, so the mean adds
 * them in ascending order and the median reads them directly (the same
 * sums as one sort of (identity, duration) records, at a third of its
 * memory). An identity is communication when its shortest op (first in
 * index order) is. */
void wi_ideals(wi_model *m, uint64_t (*key)(const wi_op *o))
{
    size_t n = m->n_ops;
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t k = 0; k < n; k++)
        kv[k] = (cp_kv){ key(&m->ops[k]), k };
    cp_sort_kv(kv, n, NULL);
    m->ideal = cp_xmalloc((n ? n : 1) * sizeof *m->ideal);
    m->n_groups = 0;
    uint64_t *d = NULL;
    size_t d_cap = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1, first = kv[a].val;
        while (b < n && kv[b].key == kv[a].key)
            b++;
        cp_xgrow((void **)&d, &d_cap, b - a, sizeof *d);
        for (size_t k = a; k < b; k++) {
            const wi_op *o = &m->ops[kv[k].val];
            d[k - a] = cp_key_i64(o->dur_ns);
            if (o->dur_ns < m->ops[first].dur_ns)
                first = kv[k].val;
        }
        size_t nd = b - a;
        cp_sort_u64(d, nd, NULL);
        uint32_t gid = (uint32_t)m->n_groups++;
        int64_t ideal;
        if (m->ops[first].comm) { /* median */
            ideal = nd % 2 ? cp_key_to_i64(d[nd / 2]) : (cp_key_to_i64(d[nd / 2 - 1]) + cp_key_to_i64(d[nd / 2])) / 2;
        } else {
            double s = 0;
            for (size_t k = 0; k < nd; k++)
                s += (double)cp_key_to_i64(d[k]);
            ideal = (int64_t)llround(s / (double)nd);
        }
        m->ideal[gid] = ideal;
        for (size_t k = a; k < b; k++)
            m->ops[kv[k].val].group = gid;
        a = b;
    }
    m->ideal = cp_xrealloc(m->ideal, (m->n_groups ? m->n_groups : 1) * sizeof *m->ideal);
    free(d);
    free(kv);
}

/* Node -> anchor slot while compacting. Until a node is done its anchor is
 * one of the A_ marks (A_OPEND: not entered yet, an op's end node). */
enum { A_UNSEEN = UINT32_MAX, A_OPEN = UINT32_MAX - 1, A_CYCLE = UINT32_MAX - 2, A_OPEND = UINT32_MAX - 3 };
_Static_assert(WI_MAX_NODES <= A_OPEND, "node ids and slots stay below the marks");

/* A done node's offset from its anchor: with gs->ts it is not stored, the
 * lags folded into it being the trace's gaps, which add up to ts(node) -
 * ts(anchor) exactly (slot 0 stands at 0); else off[] holds it. */
typedef struct fold_map {
    const wi_graph_src *gs;
    uint32_t *anc;         /* per node */
    int64_t *slot_ts;      /* with gs->ts: per kept slot, its instant */
    int64_t *off;          /* without: per node, its offset */
    const cp_kv *op_idx;   /* (end node, op) when m->ops are not in end order, else NULL */
    /* out_of_range's terms over the replayed nodes: the largest source
     * instant and the sum of every other node's lag (an op's: the larger of
     * traced and ideal), all in absolute value */
    double bound, lags;
} fold_map;

static inline bool unseen(uint32_t a) { return a == A_UNSEEN || a == A_OPEND; }

static inline int64_t fold_off(const fold_map *f, uint64_t v)
{
    return f->off ? f->off[v] : f->gs->ts(f->gs->ctx, v) - f->slot_ts[f->anc[v]];
}

/* Node v, whose np predecessors src[] are all done: fold it onto its
 * predecessor's anchor, or give it slot *nk and append its predecessors to
 * pa/po (sized for every edge). Integer offsets add up exactly, so a
 * folded replay gives the same instants bit for bit. */
static void fold_node(wi_model *m, fold_map *f, uint64_t v, const uint32_t *src, size_t np, int32_t op, size_t *nk,
                      size_t *ne)
{
    const wi_graph_src *gs = f->gs;
    m->n_sources += np == 0;
    if (np == 0) { /* a source: replayed at its instant, slot 0 + its lag0 */
        int64_t t0 = gs->lag0(gs->ctx, v, src, SIZE_MAX);
        f->bound = CP_MAX(f->bound, fabs((double)t0));
        if (op < 0) {
            f->anc[v] = 0;
            if (f->off)
                f->off[v] = t0;
            return;
        }
        /* an op's end without a predecessor (no builder makes one): a slot at its instant */
        size_t q = (*nk)++;
        m->pstart[q] = (uint32_t)*ne;
        m->opq[q] = -1;
        m->pa[*ne] = 0;
        m->po[(*ne)++] = t0;
        f->anc[v] = (uint32_t)q;
        if (f->off)
            f->off[v] = 0;
        else
            f->slot_ts[q] = gs->ts(gs->ctx, v);
        return;
    }
    size_t b = gs->binding(gs->ctx, v, src, np);
    int64_t lag = gs->lag0(gs->ctx, v, src, b);
    f->lags += op >= 0 ? CP_MAX(fabs((double)lag), fabs((double)m->ideal[m->ops[op].group])) : fabs((double)lag);
    if (np == 1 && op < 0) {
        f->anc[v] = f->anc[src[0]];
        if (f->off)
            f->off[v] = f->off[src[0]] + lag;
        return;
    }
    size_t q = (*nk)++;
    m->pstart[q] = (uint32_t)*ne;
    m->opq[q] = op;
    if (op >= 0)
        m->op_trace[op] = lag;
    m->pa[*ne] = f->anc[src[b]];
    m->po[(*ne)++] = fold_off(f, src[b]) + (op >= 0 ? 0 : lag);
    for (size_t k = 0; k < np; k++)
        if (k != b) {
            m->pa[*ne] = f->anc[src[k]];
            m->po[(*ne)++] = fold_off(f, src[k]);
        }
    f->anc[v] = (uint32_t)q;
    if (f->off)
        f->off[v] = 0;
    else
        f->slot_ts[q] = gs->ts(gs->ctx, v);
}

/* The op whose span ends at node v (marked A_OPEND): by binary search
 * over the ops (in end order) or over f->op_idx. */
static int32_t op_at(const wi_model *m, const fold_map *f, uint64_t v)
{
    size_t lo = 0, hi = m->n_ops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((f->op_idx ? f->op_idx[mid].key : m->ops[mid].end) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int32_t)(f->op_idx ? f->op_idx[lo].val : lo);
}

typedef struct dfs_frame {
    const uint32_t *src;
    uint32_t v, k, np;
    int32_t op;
    bool cycle;
} dfs_frame;

/* Fold every node, predecessors first: a depth-first walk over the
 * predecessor lists (post-order is a topological order, and it needs no
 * successor lists). A node on a cycle, or after one, is never replayed
 * (none when every edge goes forward): the nodes Kahn's order leaves out. */
static void fold_all(wi_model *m, fold_map *f, size_t *nk, size_t *ne)
{
    const wi_graph_src *gs = f->gs;
    dfs_frame *st = NULL;
    size_t sp = 0, st_cap = 0;
    for (uint64_t v0 = 0; v0 < gs->n; v0++) {
        if (!unseen(f->anc[v0]))
            continue;
        for (uint64_t push = v0; push != UINT64_MAX;) {
            if (push != UINT64_MAX - 1) { /* enter a node */
                cp_xgrow((void **)&st, &st_cap, sp + 1, sizeof *st);
                dfs_frame *fr = &st[sp++];
                fr->np = (uint32_t)gs->preds(gs->ctx, push, &fr->src);
                fr->v = (uint32_t)push;
                fr->k = 0;
                fr->op = f->anc[push] == A_OPEND ? op_at(m, f, push) : -1;
                fr->cycle = false;
                f->anc[push] = A_OPEN;
            }
            dfs_frame *fr = &st[sp - 1];
            push = UINT64_MAX - 1;
            for (; fr->k < fr->np; fr->k++) {
                uint32_t a = f->anc[fr->src[fr->k]];
                if (unseen(a)) {
                    push = fr->src[fr->k];
                    break;
                }
                fr->cycle |= a == A_OPEN || a == A_CYCLE;
            }
            if (push != UINT64_MAX - 1)
                continue;
            if (fr->cycle) {
                f->anc[fr->v] = A_CYCLE;
                m->n_cycle++;
            } else {
                fold_node(m, f, fr->v, fr->src, fr->np, fr->op, nk, ne);
            }
            if (--sp == 0)
                push = UINT64_MAX; /* this tree is done */
        }
    }
    cp_log_debug("whatif: depth-first walk %zu frames deep at most", st_cap);
    free(st);
}

/* (end node, op) sorted, for ops not in end order; NULL when they are. */
static cp_kv *op_index(const wi_model *m)
{
    size_t k = 1;
    while (k < m->n_ops && m->ops[k - 1].end < m->ops[k].end)
        k++;
    if (k >= m->n_ops)
        return NULL;
    cp_kv *idx = cp_xmalloc(m->n_ops * sizeof *idx);
    for (k = 0; k < m->n_ops; k++)
        idx[k] = (cp_kv){ m->ops[k].end, k };
    cp_sort_kv(idx, m->n_ops, NULL);
    return idx;
}

/* The replay's arrays (see wi_model): one linear pass a replay over the
 * kept nodes instead of pointer chasing through the builder's graph. */
void wi_compact(wi_model *m, const wi_graph_src *gs)
{
    size_t n = gs->n, ne_max = gs->n_edges + m->n_ops; /* + an op end without a predecessor's own */
    /* sized for the worst case (pages never touched cost nothing), shrunk
     * once the counts are known */
    fold_map f = { gs, cp_xmalloc((n ? n : 1) * sizeof *f.anc), NULL, NULL, op_index(m), 0, 0 };
    if (gs->ts)
        f.slot_ts = cp_xmalloc((n + 1) * sizeof *f.slot_ts);
    else
        f.off = cp_xmalloc((n ? n : 1) * sizeof *f.off);
    memset(f.anc, 0xff, n * sizeof *f.anc);
    for (size_t k = 0; k < m->n_ops; k++)
        f.anc[m->ops[k].end] = A_OPEND;
    m->pstart = cp_xmalloc((n + 2) * sizeof *m->pstart);
    m->opq = cp_xmalloc((n + 1) * sizeof *m->opq);
    m->pa = cp_xmalloc((ne_max ? ne_max : 1) * sizeof *m->pa);
    m->po = cp_xmalloc((ne_max ? ne_max : 1) * sizeof *m->po);
    m->op_trace = cp_xcalloc(m->n_ops ? m->n_ops : 1, sizeof *m->op_trace);
    size_t nk = 1, ne = 0;
    m->pstart[0] = 0;
    m->opq[0] = -1;
    if (f.slot_ts)
        f.slot_ts[0] = 0;
    fold_all(m, &f, &nk, &ne);
    /* a replayed instant is at most the latest source plus every lag: past
     * this the int64 instants could overflow (only a damaged input) */
    m->out_of_range = f.bound + f.lags > 4e18;
    m->n_keep = nk;
    m->pstart[nk] = (uint32_t)ne;
    m->pstart = cp_xrealloc(m->pstart, (nk + 1) * sizeof *m->pstart);
    m->opq = cp_xrealloc(m->opq, nk * sizeof *m->opq);
    m->pa = cp_xrealloc(m->pa, (ne ? ne : 1) * sizeof *m->pa);
    m->po = cp_xrealloc(m->po, (ne ? ne : 1) * sizeof *m->po);
    size_t no = m->n_ops ? m->n_ops : 1;
    m->op_start_a = cp_xmalloc(no * sizeof *m->op_start_a);
    m->op_start_o = cp_xmalloc(no * sizeof *m->op_start_o);
    m->op_end_q = cp_xmalloc(no * sizeof *m->op_end_q);
    m->op_ideal = cp_xmalloc(no * sizeof *m->op_ideal);
    for (size_t k = 0; k < m->n_ops; k++) {
        uint64_t s = m->ops[k].start;
        m->op_start_a[k] = f.anc[s];
        m->op_start_o[k] = f.anc[s] < A_OPEND ? fold_off(&f, s) : 0;
        m->op_end_q[k] = f.anc[m->ops[k].end];
        m->op_ideal[k] = m->ideal[m->ops[k].group];
        if (m->op_start_a[k] >= A_OPEND || m->op_end_q[k] >= A_OPEND)
            m->ops[k].step = -1; /* on a cycle: not replayed, not timed */
    }
    cp_log_debug("whatif: %zu of %zu nodes kept for the replays, %zu predecessors", nk - 1, n, ne);
    free((void *)f.op_idx);
    free(f.anc);
    free(f.slot_ts);
    free(f.off);
}

void wi_model_free(wi_model *m)
{
    free(m->pstart);
    free(m->pa);
    free(m->po);
    free(m->opq);
    free(m->op_start_a);
    free(m->op_start_o);
    free(m->op_end_q);
    free(m->op_trace);
    free(m->op_ideal);
    free(m->ops);
    free(m->ideal);
}

/* ---- replays ---- */

typedef enum { SEL_NONE, SEL_TYPE, SEL_DP, SEL_STAGE, SEL_WORKERS } sel_kind;

typedef struct scenario {
    bool base_ideal;       /* ops start ideal (else traced) */
    sel_kind sel;          /* ops selected flip to the other value */
    uint32_t arg;
    const uint8_t *workers; /* SEL_WORKERS: per worker index */
    double t_ns;           /* result: mean step time */
} scenario;

typedef struct sim_job {
    const wi_model *m;
    scenario *sc;
    size_t n_sc, n_workers;
} sim_job;

static bool selected(const scenario *s, const wi_op *o)
{
    switch (s->sel) {
    case SEL_NONE: return false;
    case SEL_TYPE: return o->type == s->arg;
    case SEL_DP: return o->dp == s->arg;
    case SEL_STAGE: return o->stage == s->arg;
    case SEL_WORKERS: return s->workers[o->rank] != 0;
    }
    return false;
}

/* One replay into t (n_keep instants) and ideal (n_ops flags), the
 * caller's buffers. */
static void simulate(const wi_model *m, scenario *s, int64_t *t, uint8_t *ideal)
{
    for (size_t k = 0; k < m->n_ops; k++)
        ideal[k] = (uint8_t)(s->base_ideal != selected(s, &m->ops[k]));
    size_t nq = m->n_keep;
    const uint32_t *ps = m->pstart, *pa = m->pa;
    const int64_t *po = m->po;
    t[0] = 0;
    for (size_t q = 1; q < nq; q++) {
        uint32_t b = ps[q], e = ps[q + 1];
        int32_t o = m->opq[q];
        int64_t best = t[pa[b]] + po[b];
        if (o >= 0)
            best += ideal[o] ? m->op_ideal[o] : m->op_trace[o];
        for (uint32_t k = b + 1; k < e; k++)
            best = CP_MAX(best, t[pa[k]] + po[k]);
        t[q] = best;
    }
    /* the paper's step time: earliest op start to latest op end of the step */
    int64_t *lo = cp_xmalloc((m->n_steps ? m->n_steps : 1) * sizeof *lo);
    int64_t *hi = cp_xmalloc((m->n_steps ? m->n_steps : 1) * sizeof *hi);
    for (size_t i = 0; i < m->n_steps; i++) {
        lo[i] = INT64_MAX;
        hi[i] = INT64_MIN;
    }
    for (size_t k = 0; k < m->n_ops; k++) {
        const wi_op *o = &m->ops[k];
        if (o->step < 0)
            continue;
        lo[o->step] = CP_MIN(lo[o->step], t[m->op_start_a[k]] + m->op_start_o[k]);
        hi[o->step] = CP_MAX(hi[o->step], t[m->op_end_q[k]]);
    }
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < m->n_steps; i++)
        if (hi[i] >= lo[i]) {
            sum += (double)(hi[i] - lo[i]);
            n++;
        }
    s->t_ns = n ? sum / (double)n : NAN;
    free(lo);
    free(hi);
}

/* Worker w replays scenarios w, w + workers, ...: one buffer each, so the
 * instants' pages are touched once per worker, not once per replay. */
static void sim_worker(void *ctx, size_t w)
{
    sim_job *j = ctx;
    const wi_model *m = j->m;
    int64_t *t = cp_xmalloc((m->n_keep ? m->n_keep : 1) * sizeof *t);
    uint8_t *ideal = cp_xmalloc(m->n_ops ? m->n_ops : 1);
    for (size_t si = w; si < j->n_sc; si += j->n_workers)
        simulate(m, &j->sc[si], t, ideal);
    free(t);
    free(ideal);
}

static void run_all(const wi_model *m, scenario *sc, size_t n)
{
    size_t nth = m->nthreads > 0 ? (size_t)m->nthreads : 1;
    sim_job j = { m, sc, n, CP_MIN(nth, n ? n : 1) };
    cp_par_for(j.n_workers, (int)j.n_workers, sim_worker, &j);
}

static double ratio(double a, double b) { return b > 0 && isfinite(a) ? a / b : NAN; }

static void put_num(rep_report *rp, rep_node *o, const char *key, const char *title, double v)
{
    if (isfinite(v))
        rep_num(rp, o, key, title, v, NULL);
    else
        rep_null(rp, o, key, title, NULL);
}

/* The slowdown rows: {id_key: label[i], "slowdown": s[i]}. */
static void put_rows(rep_report *rp, rep_node *top, const char *key, const char *title, const char *id_key,
                     const int64_t *label, const double *s, size_t n)
{
    rep_node *arr = rep_arr(rp, top, key, title);
    for (size_t i = 0; i < n; i++) {
        rep_node *o = rep_obj(rp, arr, NULL, NULL);
        rep_int(rp, o, id_key, NULL, label[i], NULL);
        put_num(rp, o, "slowdown", NULL, s[i]);
    }
}

static void put_types(rep_report *rp, rep_node *top, const wi_model *m, const double *s)
{
    size_t nt = m->n_types;
    rep_node *bt = rep_arr(rp, top, "by_op_type", "S_t: the ideal with only this op type as traced");
    cp_kv *ord = cp_xmalloc((nt ? nt : 1) * sizeof *ord);
    for (size_t i = 0; i < nt; i++)
        ord[i] = (cp_kv){ ~cp_key_f64(s[i] > 0 ? s[i] : 0), i };
    cp_sort_kv(ord, nt, NULL);
    for (size_t i = 0; i < nt; i++) {
        size_t k = ord[i].val;
        rep_node *o = rep_obj(rp, bt, NULL, NULL);
        rep_str(rp, o, "op", NULL, m->type_name[k]);
        put_num(rp, o, "slowdown", NULL, s[k]);
    }
    free(ord);
}

/* M_W's workers: the top AN_WI_WORKER_PCT % (at least one) by
 * min(S_dp, S_stage), ties to the lower worker index; into order[]. */
static size_t fixed_workers(const wi_model *m, const double *s_dp, const double *s_stage, uint32_t *order)
{
    size_t nw = m->n_workers;
    cp_kv *score = cp_xmalloc((nw ? nw : 1) * sizeof *score);
    for (size_t w = 0; w < nw; w++) {
        double sw = s_dp[m->w_dp[w]], sst = s_stage[m->w_stage[w]];
        double s = isfinite(sw) ? CP_MIN(sw, isfinite(sst) ? sst : sw) : 0;
        score[w] = (cp_kv){ ~cp_key_f64(s), w }; /* highest first, then lower index */
    }
    cp_sort_kv(score, nw, NULL);
    size_t n_fix = (nw * AN_WI_WORKER_PCT + 99) / 100;
    for (size_t i = 0; i < n_fix; i++)
        order[i] = (uint32_t)score[i].val;
    free(score);
    return n_fix;
}

double wi_report(rep_report *rp, rep_node *top, wi_model *m)
{
    size_t nt = m->n_types, nd = m->n_dp, ns = m->n_stages;
    bool stages = ns > 1; /* one stage: its replay is the trace's, and it cannot be cut badly */
    /* scenarios: original, ideal, per type, per DP rank, per stage */
    size_t n_sc = 2 + nt + nd + (stages ? ns : 0);
    scenario *sc = cp_xcalloc(n_sc, sizeof *sc);
    sc[0] = (scenario){ false, SEL_NONE, 0, NULL, 0 };
    sc[1] = (scenario){ true, SEL_NONE, 0, NULL, 0 };
    for (size_t i = 0; i < nt; i++)
        sc[2 + i] = (scenario){ true, SEL_TYPE, (uint32_t)i, NULL, 0 };
    for (size_t d = 0; d < nd; d++)
        sc[2 + nt + d] = (scenario){ true, SEL_DP, (uint32_t)d, NULL, 0 };
    for (size_t p = 0; stages && p < ns; p++)
        sc[2 + nt + nd + p] = (scenario){ true, SEL_STAGE, (uint32_t)p, NULL, 0 };
    run_all(m, sc, n_sc);
    double t_orig = sc[0].t_ns, t_ideal = sc[1].t_ns, gap = t_orig - t_ideal;
    double *s_t = cp_xmalloc((nt + nd + ns + 1) * sizeof *s_t), *s_dp = s_t + nt, *s_st = s_dp + nd;
    for (size_t i = 0; i < nt + nd; i++)
        s_t[i] = ratio(sc[2 + i].t_ns, t_ideal);
    for (size_t p = 0; p < ns; p++)
        s_st[p] = stages ? ratio(sc[2 + nt + nd + p].t_ns, t_ideal) : ratio(t_orig, t_ideal);

    /* M_W: the fixed workers at ideal in the trace; M_S: the last stage */
    uint32_t *fix = cp_xmalloc((m->n_workers ? m->n_workers : 1) * sizeof *fix);
    size_t n_fix = fixed_workers(m, s_dp, s_st, fix);
    uint8_t *fixed = cp_xcalloc(m->n_workers ? m->n_workers : 1, 1);
    for (size_t i = 0; i < n_fix; i++)
        fixed[fix[i]] = 1;
    scenario rem[2] = { { false, SEL_WORKERS, 0, fixed, 0 }, { false, SEL_STAGE, (uint32_t)(ns ? ns - 1 : 0), NULL, 0 } };
    run_all(m, rem, stages ? 2 : 1);

    rep_num(rp, top, "t_original_ns", "mean step time, replayed trace", t_orig, "ns");
    rep_num(rp, top, "t_ideal_ns", "mean step time, ideal", t_ideal, "ns");
    put_num(rp, top, "slowdown", "S = T_original / T_ideal", ratio(t_orig, t_ideal));
    put_num(rp, top, "worker_metric", "M_W: share of the slowdown removed by fixing the slowest workers",
            gap > 0 ? (t_orig - rem[0].t_ns) / gap : NAN);
    if (stages)
        put_num(rp, top, "stage_metric", "M_S: share of the slowdown removed by fixing the last stage",
                gap > 0 ? (t_orig - rem[1].t_ns) / gap : NAN);
    else
        rep_null(rp, top, "stage_metric", "M_S: stage partitioning imbalance (one stage: none)", NULL);
    rep_node *wf = rep_arr(rp, top, "workers_fixed", "workers M_W fixes");
    for (size_t i = 0; i < n_fix; i++) {
        uint32_t w = fix[i];
        if (m->worker_label) {
            rep_int(rp, wf, NULL, NULL, m->worker_label[w], NULL);
            continue;
        }
        rep_node *o = rep_obj(rp, wf, NULL, NULL);
        rep_int(rp, o, "dp", NULL, m->dp_label[m->w_dp[w]], NULL);
        rep_int(rp, o, "pp", NULL, m->stage_label[m->w_stage[w]], NULL);
        rep_int(rp, o, "tp", NULL, m->w_tp[w], NULL);
    }
    put_types(rp, top, m, s_t);
    put_rows(rp, top, "by_dp_rank", "S_w: the ideal with only this worker as traced", "rank", m->dp_label, s_dp, nd);
    put_rows(rp, top, "by_stage", "S_stage: the ideal with only this stage as traced", "stage", m->stage_label, s_st,
             ns);
    free(s_t);
    free(fix);
    free(fixed);
    free(sc);
    return t_orig;
}

/* ---- the Kineto builder: an_critpath's graph ---- */

static size_t cp_preds(const void *ctx, uint64_t v, const uint32_t **src)
{
    const uint8_t *type;
    return an_cp_preds(ctx, v, src, &type);
}

static size_t cp_binding(const void *ctx, uint64_t v, const uint32_t *src, size_t np)
{
    return an_cp_binding(ctx, v, src, np);
}

/* the gap the trace shows behind the binding predecessor; a source at its instant */
static int64_t cp_lag0(const void *ctx, uint64_t v, const uint32_t *src, size_t b)
{
    return b == SIZE_MAX ? an_cp_node_ts(ctx, v) : an_cp_node_ts(ctx, v) - an_cp_node_ts(ctx, src[b]);
}

/* replaying the traced durations gives the trace's instants back */
static int64_t cp_ts(const void *ctx, uint64_t v) { return an_cp_node_ts(ctx, v); }

uint64_t wi_rec3_key(const void *p, int k, const void *ctx)
{
    (void)ctx;
    const wi_rec3 *r = p;
    return k == 0 ? r->k0 : k == 1 ? r->k1 : r->k2;
}

static bool gpu_op(const tl_timeline *tl, size_t i)
{
    uint8_t k = tl->kclass[i];
    return tl->tracks[tl->track[i]].key.kind == TL_TRACK_GPU &&
           (k == TL_K_COMPUTE || k == TL_K_COMM || k == TL_K_MEMCPY || k == TL_K_MEMSET);
}

/* Step index (in rs, sorted by start) of the step an op's launch falls in, -1 before the first. */
static int64_t step_of(const an_rank_steps *rs, int64_t t)
{
    size_t lo = 0, hi = rs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->steps[mid].start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int64_t)lo - 1;
}

/* An op's type as a key: the paper's type (an_whatif_types.c) when it has
 * one, else the collective for communication, else the kernel name. */
#define TK_COLL_MAX 64 /* collective keys: UINT32_MAX - coll_op */
#define TK_PT(t) (UINT32_MAX - TK_COLL_MAX - (uint32_t)(t))
static uint32_t type_key(const tl_timeline *tl, const wi_op *o)
{
    if (o->type != WI_PT_NONE)
        return TK_PT(o->type);
    return o->comm ? UINT32_MAX - (uint32_t)coll_op_classify(tl_str(tl, o->name)) : o->name;
}

static const char *type_key_name(const tl_timeline *tl, uint32_t key)
{
    if (key > UINT32_MAX - TK_COLL_MAX)
        return coll_op_name((coll_op)(UINT32_MAX - key));
    if (key >= TK_PT(WI_PT__COUNT - 1))
        return wi_ptype_name(UINT32_MAX - TK_COLL_MAX - key);
    return tl_str(tl, key);
}

/* Profiler step ids every rank has. */
static void common_steps(wi_kmodel *km, const an_steps_result *sr)
{
    size_t nr = km->n_ranks;
    if (!nr || !sr->ranks[0].n)
        return;
    km->step_id = cp_xmalloc(sr->ranks[0].n * sizeof *km->step_id);
    size_t ns = 0;
    for (size_t i = 0; i < sr->ranks[0].n; i++) {
        int64_t id = sr->ranks[0].steps[i].id;
        bool all = true;
        for (size_t r = 1; r < nr && all; r++) {
            const an_rank_steps *rs = &sr->ranks[r];
            size_t k = 0;
            while (k < rs->n && rs->steps[k].id != id)
                k++;
            all = k < rs->n;
        }
        if (all)
            km->step_id[ns++] = id;
    }
    for (size_t i = 1; i < ns; i++) /* few steps */
        for (size_t k = i; k > 0 && km->step_id[k] < km->step_id[k - 1]; k--) {
            int64_t t = km->step_id[k];
            km->step_id[k] = km->step_id[k - 1];
            km->step_id[k - 1] = t;
        }
    km->m.n_steps = ns;
}

static int32_t common_index(const wi_kmodel *km, int64_t id)
{
    size_t lo = 0, hi = km->m.n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (km->step_id[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < km->m.n_steps && km->step_id[lo] == id ? (int32_t)lo : -1;
}

/* One rank's ops (GPU work inside its steps) and their seq: the k-th op of
 * its name in its step, in start order. */
static void rank_ops(wi_kmodel *km, const an_rank_steps *rs, size_t r)
{
    wi_model *m = &km->m;
    const an_cp_graph *g = km->g;
    const tl_timeline *tl = g->tl;
    size_t first = m->n_ops;
    const tl_rank *rk = &tl->ranks[r];
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++)
        for (size_t i = tl->tracks[t].ev_begin; i < tl->tracks[t].ev_end; i++) {
            if (!gpu_op(tl, i))
                continue;
            int32_t l = tl->link[i];
            int64_t s = step_of(rs, l >= 0 ? tl->ts_ns[l] : tl->ts_ns[i]);
            if (s < 0)
                continue;
            /* the span's end node and the node it runs from */
            uint64_t end = 2 * (uint64_t)i + 1;
            const uint32_t *src;
            const uint8_t *type;
            if (an_cp_preds(g, end, &src, &type) != 1)
                continue;
            wi_op *o = &m->ops[m->n_ops++];
            *o = (wi_op){ .ev = i, .start = 2 * (uint64_t)i, .end = end };
            o->dur_ns = tl_end_ns(tl, i) - an_cp_node_ts(g, src[0]);
            o->name = tl->name[i];
            o->seq = (uint32_t)s; /* step index for now */
            o->rank = o->dp = (uint32_t)r;
            o->step = common_index(km, rs->steps[s].id);
            o->comm = tl->kclass[i] == TL_K_COMM;
        }
    size_t n = m->n_ops - first;
    wi_rec3 *v = cp_xmalloc((n ? n : 1) * sizeof *v);
    for (size_t k = 0; k < n; k++) {
        const wi_op *o = &m->ops[first + k];
        v[k] = (wi_rec3){ o->seq, o->name, cp_key_i64(tl->ts_ns[o->ev]), first + k };
    }
    cp_sort_records(v, n, sizeof *v, 3, wi_rec3_key, NULL);
    for (size_t k = 0, c = 0; k < n; k++) {
        c = k && v[k].k0 == v[k - 1].k0 && v[k].k1 == v[k - 1].k1 ? c + 1 : 0;
        m->ops[v[k].i].seq = (uint32_t)c;
    }
    free(v);
}

/* an op's identity across ranks and steps: (name, seq), or for a typed
 * op (type, name, place in its annotation / p2p direction) */
static uint64_t identity(const wi_op *o)
{
    if (o->type == WI_PT_NONE)
        return (uint64_t)o->name << 32 | o->seq;
    return 1ull << 63 | (uint64_t)o->type << 58 | (uint64_t)o->name << 26 | o->seq;
}

/* The ops, their identities (name, seq) across ranks and steps, and the
 * identities' ideal durations. */
static void collect_ops(wi_kmodel *km, const an_steps_result *sr)
{
    wi_model *m = &km->m;
    const tl_timeline *tl = km->g->tl;
    /* at most one op a GPU work event: reserved once, shrunk below,
     * instead of regrown and copied */
    size_t n_gpu = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        n_gpu += gpu_op(tl, i);
    m->ops = cp_xmalloc((n_gpu ? n_gpu : 1) * sizeof *m->ops);
    for (size_t r = 0; r < tl->n_ranks; r++)
        rank_ops(km, &sr->ranks[r], r);
    m->ops = cp_xrealloc(m->ops, (m->n_ops ? m->n_ops : 1) * sizeof *m->ops);
    wi_kineto_ptypes(km->ctx, m);
    wi_ideals(m, identity);
}

/* Op types: the paper's (annotations, p2p direction), else kernel name for
 * computation, the collective for communication; every paper type and the
 * AN_WI_TYPES others with most excess over ideal keep their own index, the
 * rest share the last (not reported). */
static void op_types(wi_kmodel *km)
{
    wi_model *m = &km->m;
    const tl_timeline *tl = km->g->tl;
    cp_kv *kv = cp_xmalloc((m->n_ops ? m->n_ops : 1) * sizeof *kv);
    for (size_t k = 0; k < m->n_ops; k++)
        kv[k] = (cp_kv){ type_key(tl, &m->ops[k]), k };
    cp_sort_kv(kv, m->n_ops, NULL);
    cp_kv *ex = cp_xmalloc((m->n_ops ? m->n_ops : 1) * sizeof *ex);
    size_t nt = 0, n_paper = 0;
    for (size_t a = 0; a < m->n_ops;) {
        size_t b = a;
        int64_t excess = 0;
        while (b < m->n_ops && kv[b].key == kv[a].key) {
            const wi_op *o = &m->ops[kv[b].val];
            excess += CP_MAX(o->dur_ns - m->ideal[o->group], 0);
            b++;
        }
        bool paper = kv[a].key >= TK_PT(WI_PT__COUNT - 1) && kv[a].key <= TK_PT(0);
        /* the paper's types first, then most excess (63 bits: never negative) */
        ex[nt++] = (cp_kv){ (paper ? 0 : 1ull << 63) | (~(uint64_t)excess >> 1), kv[a].key };
        n_paper += paper;
        a = b;
    }
    cp_sort_kv(ex, nt, NULL);
    size_t keep = CP_MIN(nt, n_paper + (size_t)AN_WI_TYPES);
    for (size_t i = 0; i < keep; i++) {
        uint32_t key = km->tkeys[i] = (uint32_t)ex[i].val;
        km->tnames[i] = type_key_name(tl, key);
    }
    for (size_t k = 0; k < m->n_ops; k++) {
        uint32_t tk = type_key(tl, &m->ops[k]);
        size_t i = 0;
        while (i < keep && km->tkeys[i] != tk)
            i++;
        m->ops[k].type = (uint32_t)i; /* keep = the folded rest */
    }
    free(kv);
    free(ex);
    m->n_types = keep;
    m->type_name = km->tnames;
}

/* A point-to-point kernel of a batch: NCCL's SendRecv kernel without a
 * single direction (a collective-named kernel record with p2p 0). */
static bool batched_p2p(const tl_timeline *tl, size_t ev) { return strstr(tl_str(tl, tl->name[ev]), "SendRecv") != NULL; }

/* Pipeline stages from the point-to-point kernels: a rank's stage is its
 * position in the process group of its sends and receives (Megatron and
 * torch build a pipeline group in stage order), its pipeline (its DP rank)
 * the group itself. Taken only when it is consistent: every rank has such
 * a kernel, the groups partition the ranks into groups of one size, and a
 * kernel's peer is a neighbour in the group's order (next, previous, or
 * last to first for interleaved chunks); a job whose p2p runs over the
 * whole world group with DP > 1 fails the neighbour test and keeps one
 * stage. Returns the stage count (1: none found), stage[r] and pipe[r]. */
static size_t pp_stages(const an_ctx *ctx, uint32_t *stage, uint32_t *pipe, size_t *n_pipes)
{
    const tl_timeline *tl = ctx->tl;
    const an_collectives_result *cr = ctx->results[AN_collectives];
    size_t nr = tl->n_ranks, P = 0, placed = 0;
    int32_t *first = cp_xmalloc((nr ? nr : 1) * sizeof *first);
    uint8_t *seen = cp_xcalloc(nr ? nr : 1, 1);
    /* each rank's first send/recv with a known peer (an_collectives found
     * the peers; its records are in rank order); a rank with none, its
     * first batched p2p kernel (a SendRecv kernel of a coalesced group,
     * naming no peer: Megatron's batch_isend_irecv) by its place in the
     * group alone */
    size_t nk = cr ? cr->n_kernel_recs : 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < nk; k++) {
            const an_coll_kernel *ck = &cr->kernels[k];
            size_t r = tl->tracks[tl->track[ck->ev]].rank_index;
            if (seen[r] || (pass == 0 ? !ck->p2p || ck->peer < 0 : ck->p2p || !batched_p2p(tl, ck->ev)))
                continue;
            seen[r] = 1;
            placed++;
            int n, self, q;
            if (!wi_p2p_positions(ctx, ck->ev, pass ? -1 : ck->peer, &self, &q, &n, &first[r]) ||
                (P && (size_t)n != P))
                goto none;
            P = (size_t)n;
            stage[r] = (uint32_t)self;
        }
    if (placed != nr)
        goto none;
    if (P < 2 || nr % P)
        goto none;
    /* pipelines by their first member (a rank number, >= 0), each holding
     * every stage exactly once: sorted by (first member, stage) */
    cp_kv *kv = cp_xmalloc(nr * sizeof *kv);
    for (size_t r = 0; r < nr; r++)
        kv[r] = (cp_kv){ (uint64_t)(uint32_t)first[r] << 32 | stage[r], r };
    cp_sort_kv(kv, nr, NULL);
    size_t d = 0;
    bool ok = true;
    for (size_t a = 0, b; a < nr && ok; a = b, d++) {
        for (b = a; b < nr && kv[b].key >> 32 == kv[a].key >> 32; b++) {
            pipe[kv[b].val] = (uint32_t)d;
            ok = ok && (kv[b].key & 0xffffffffu) == b - a; /* stages 0 .. P-1, once each */
        }
        ok = ok && b - a == P;
    }
    free(kv);
    if (!ok)
        goto none;
    free(first);
    free(seen);
    *n_pipes = d;
    return P;
none:
    free(first);
    free(seen);
    return 1;
}

/* Workers are ranks. Without pipeline stages each rank is its own DP
 * rank, all in stage 0; with them (pp_stages), DP rank = the rank's
 * pipeline, stage = its place in it. */
static void rank_workers(wi_kmodel *km, const tl_timeline *tl)
{
    wi_model *m = &km->m;
    size_t nr = tl->n_ranks, n_pipes = nr;
    uint32_t *stage = cp_xcalloc(nr ? nr : 1, sizeof *stage), *pipe = cp_xmalloc((nr ? nr : 1) * sizeof *pipe);
    size_t ns = pp_stages(km->ctx, stage, pipe, &n_pipes);
    if (ns < 2) {
        memset(stage, 0, (nr ? nr : 1) * sizeof *stage);
        for (size_t r = 0; r < nr; r++)
            pipe[r] = (uint32_t)r;
        n_pipes = nr;
    }
    m->n_workers = nr;
    m->n_dp = n_pipes;
    m->n_stages = ns;
    m->w_dp = pipe;
    m->w_stage = stage;
    m->dp_label = cp_xmalloc((n_pipes ? n_pipes : 1) * sizeof *m->dp_label);
    m->stage_label = cp_xmalloc(ns * sizeof *m->stage_label);
    km->rank_label = cp_xmalloc((nr ? nr : 1) * sizeof *km->rank_label);
    for (size_t r = 0; r < nr; r++)
        km->rank_label[r] = tl->ranks[r].meta.rank;
    for (size_t d = 0; d < n_pipes; d++)
        m->dp_label[d] = ns < 2 ? tl->ranks[d].meta.rank : (int64_t)d;
    for (size_t p = 0; p < ns; p++)
        m->stage_label[p] = (int64_t)p;
    for (size_t k = 0; k < m->n_ops; k++) {
        m->ops[k].dp = pipe[m->ops[k].rank];
        m->ops[k].stage = stage[m->ops[k].rank];
    }
    m->worker_label = km->rank_label;
}

static void kmodel_free(wi_kmodel *km)
{
    wi_model_free(&km->m);
    free(km->m.w_dp);
    free(km->m.w_stage);
    free(km->m.dp_label);
    free(km->m.stage_label);
    free(km->rank_label);
    free(km->step_id);
}

int an_whatif_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    rep_report *rp = ctx->rep;
    rep_node *top = rep_obj(rp, rp->root, "whatif", "what-if: the job without its stragglers (OSDI'25)");
    int pp = an_whatif_pp_rank(tl);
    if (pp >= 0)
        return an_whatif_pp_run(ctx, top, (size_t)pp);
    if (pp == -2) {
        rep_str(rp, top, "skipped", NULL, "several op timelines: each is a job of its own, analyse them one at a time");
        return 0;
    }
    const an_critpath_result *cr = ctx->results[AN_critpath];
    const an_steps_result *sr = ctx->results[AN_steps];
    if (!cr || !cr->graph || !sr || !tl->n_ranks) {
        rep_str(rp, top, "skipped", NULL, "no dependency graph");
        return 0;
    }
    wi_kmodel km = { .ctx = ctx, .g = cr->graph, .n = cr->graph->n_nodes, .n_ranks = tl->n_ranks };
    km.m.nthreads = ctx->opts ? ctx->opts->nthreads : 1;
    common_steps(&km, sr);
    if (!km.m.n_steps) {
        rep_str(rp, top, "skipped", NULL, "no profiler step that every rank has");
        kmodel_free(&km);
        return 0;
    }
    uint64_t n_sims = 2 + AN_WI_TYPES + WI_PT__COUNT + tl->n_ranks + 1;
    if ((uint64_t)km.n * n_sims > AN_WI_MAX_VISITS || km.n >= WI_MAX_NODES || cr->graph->n_edges >= UINT32_MAX) {
        rep_str(rp, top, "skipped", NULL, "the job is too large for the replays (AN_WI_MAX_VISITS)");
        kmodel_free(&km);
        return 0;
    }
    wi_graph_src gs = { km.n, cr->graph->n_edges, cr->graph, cp_preds, cp_binding, cp_lag0, cp_ts };
    collect_ops(&km, sr);
    wi_compact(&km.m, &gs);
    if (km.m.out_of_range) {
        rep_str(rp, top, "skipped", NULL, "instants and durations too large for the replays (damaged input)");
        kmodel_free(&km);
        return 0;
    }
    op_types(&km);
    rank_workers(&km, tl);

    rep_str(rp, top, "method", NULL,
            "replay of the critical path's dependency graph; ideal = mean (computation) or median "
            "(communication) duration of each op identity (name, k-th in step) over ranks and steps");
    rep_int(rp, top, "ops", "ops replayed", (int64_t)km.m.n_ops, NULL);
    rep_int(rp, top, "op_identities", NULL, (int64_t)km.m.n_groups, NULL);
    rep_int(rp, top, "anchored_nodes", "nodes without a predecessor (kept at their traced instant)",
            (int64_t)km.m.n_sources, NULL);
    rep_int(rp, top, "steps", "steps every rank has", (int64_t)km.m.n_steps, NULL);
    rep_int(rp, top, "stages", "pipeline stages (from the point-to-point groups; 1: none)", (int64_t)km.m.n_stages,
            NULL);
    wi_report(rp, top, &km.m);
    kmodel_free(&km);
    return 0;
}
