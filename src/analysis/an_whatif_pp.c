/* an_whatif_pp.c - the what-if on op timelines (the OSDI'25 artifact's
 * format, read by rd_optrace into one timeline rank, model/optrace.h): a
 * pipeline-parallel (1F1B or interleaved) plus data-parallel job's own
 * dependency model, replayed by an_whatif.c's shared code.
 *
 * Design
 * - Workers are (DP rank d, stage p, TP rank t). A worker's ops (every
 *   thread but pp-comm) run in their traced start order: each starts when
 *   the one before it ends. Launch delays (a gap the model does not
 *   explain) are dropped, as the artifact's "no delay" baseline drops them:
 *   T_original is the replay of the traced durations without gaps, and the
 *   ops without a predecessor (the job's first) start at the trace's
 *   first instant.
 * - Pipeline edges: the forward of microbatch mb on virtual stage v =
 *   model_chunk * P + p (P stages) > 0 also waits for the forward of mb on
 *   v - 1 (same DP and TP rank, same step) plus the activation transfer; a
 *   backward on v < V*P - 1 for the backward on v + 1 plus the gradient
 *   transfer. The transfer is an op of its own (type forward-send/recv or
 *   backward-send/recv) owned by the receiving worker: its traced value is
 *   the matching recv's (same step, mb_id, model_chunk, direction, on the
 *   receiver) end minus the later of its start and the producer's end. A
 *   consumer without a recv gets the wait its own thread does not explain
 *   (counted in p2p_without_recv).
 * - Collectives: ops on dp-comm threads synchronise the DP group (same
 *   stage and TP rank), ops on tp-comm threads the TP group (same DP rank
 *   and stage); members match by (step, name, k-th such op of the worker in
 *   the step). The transfer starts when the last member arrives; a
 *   member's traced transfer is its end minus that arrival (the artifact's
 *   transfer_duration), its span runs from its own arrival.
 * - Ideal: per op type (the op's name; the two transfer types) the mean
 *   duration for computation (compute and misc threads) and the median for
 *   communication, over every worker, step and microbatch (the artifact's
 *   reduce over dp_rank, stage and step). Steps are the args' `step`; T is
 *   the mean over steps of the latest op end minus the earliest op start.
 *   Sends carry no information the recv lacks and are not replayed.
 */
#include "an_whatif.h"
#include "../base/sort.h"
#include "../base/util.h"
#include "../model/optrace.h"

#include <stdlib.h>
#include <string.h>

typedef struct pev {
    size_t ev;
    uint32_t w;            /* worker index */
    uint8_t kind;          /* optrace_kind */
    int8_t dir;            /* compute: 0 forward, 1 backward, -1 other; recv: the same */
    int32_t step;          /* index among the steps */
    int32_t mb, chunk;     /* -1 absent */
} pev;

typedef struct rec3 {
    uint64_t k[3];
    size_t i;
} rec3;

static uint64_t rec_key(const void *p, int k, const void *ctx)
{
    (void)ctx;
    return ((const rec3 *)p)->k[k];
}

static int rec_cmp(const rec3 *a, const uint64_t *k)
{
    for (int j = 0; j < 3; j++)
        if (a->k[j] != k[j])
            return a->k[j] < k[j] ? -1 : 1;
    return 0;
}

/* Index in v (sorted) of the record with key k, SIZE_MAX none. */
static size_t rec_find(const rec3 *v, size_t n, const uint64_t *k)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rec_cmp(&v[mid], k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && !rec_cmp(&v[lo], k) ? v[lo].i : SIZE_MAX;
}

typedef struct pp_job {
    const tl_timeline *tl;
    wi_model m;
    pev *ops;              /* main ops, by (worker, start) */
    size_t n_main;
    pev *recv;
    size_t n_recv;
    size_t P, V;           /* stages, model chunks */
    /* graph: 2 nodes per main op, 2 per transfer, 1 per collective group */
    size_t n_p2p, n_coll, n_nodes;
    struct p2p { size_t prod, cons; int64_t ns; } *p2p; /* per transfer: producer and consumer main op */
    uint32_t *coll_of;     /* per main op: its group, UINT32_MAX none */
    int64_t *coll_start;   /* per group: the last member's arrival */
    size_t no_recv;
    uint64_t *pstart;
    uint32_t *pred;        /* node ids < WI_MAX_NODES (checked before the replays) */
    int64_t *lag;          /* per node: the lag from its first predecessor */
    int64_t anchor;
    uint32_t *names;       /* distinct op names, sorted */
    size_t n_names;
    const char **tnames;
} pp_job;

int an_whatif_pp_rank(const tl_timeline *tl)
{
    int found = -1;
    for (size_t r = 0; r < tl->n_ranks; r++) {
        uint32_t f = tl->ranks[r].meta.format;
        if (f && !strcmp(tl_str(tl, f), OPTRACE_FORMAT)) {
            if (found >= 0)
                return -1; /* several op timelines: not one job */
            found = (int)r;
        }
    }
    return found;
}

static int32_t arg_i32(const tl_timeline *tl, size_t ev, uint32_t key)
{
    tl_arg a;
    return tl_arg_by_id(tl, ev, key, &a) && a.type == TL_ARG_INT ? (int32_t)a.v.i : -1;
}

static uint64_t worker_key(const tl_track *t)
{
    int64_t tid = t->key.tid;
    return (uint64_t)t->key.pid << 40 | (uint64_t)optrace_tid_pp(tid) << 20 | (uint64_t)optrace_tid_tp(tid);
}

static size_t find_u64(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sorted distinct values of v (in place); returns their count. */
static size_t uniq(uint64_t *v, size_t n)
{
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ v[i], i };
    cp_sort_kv(kv, n, NULL);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || kv[i].key != v[k - 1])
            v[k++] = kv[i].key;
    free(kv);
    return k;
}

/* Workers, DP ranks and stages of the rank's tracks; returns the workers'
 * keys (worker_key order), which the caller frees. */
static uint64_t *workers(pp_job *j, const tl_rank *rk)
{
    const tl_timeline *tl = j->tl;
    wi_model *m = &j->m;
    size_t nt = rk->track_end - rk->track_begin;
    uint64_t *wk = cp_xmalloc((nt ? nt : 1) * sizeof *wk), *dk = cp_xmalloc((nt ? nt : 1) * sizeof *dk),
             *sk = cp_xmalloc((nt ? nt : 1) * sizeof *sk);
    for (size_t i = 0; i < nt; i++) {
        const tl_track *t = &tl->tracks[rk->track_begin + i];
        wk[i] = worker_key(t);
        dk[i] = (uint64_t)t->key.pid;
        sk[i] = (uint64_t)optrace_tid_pp(t->key.tid);
    }
    m->n_workers = uniq(wk, nt);
    m->n_dp = uniq(dk, nt);
    m->n_stages = j->P = uniq(sk, nt);
    m->w_dp = cp_xmalloc((m->n_workers ? m->n_workers : 1) * sizeof *m->w_dp);
    m->w_stage = cp_xmalloc((m->n_workers ? m->n_workers : 1) * sizeof *m->w_stage);
    m->w_tp = cp_xmalloc((m->n_workers ? m->n_workers : 1) * sizeof *m->w_tp);
    for (size_t w = 0; w < m->n_workers; w++) {
        m->w_dp[w] = (uint32_t)find_u64(dk, m->n_dp, wk[w] >> 40);
        m->w_stage[w] = (uint32_t)find_u64(sk, m->n_stages, (wk[w] >> 20) & 0xfffff);
        m->w_tp[w] = (uint32_t)(wk[w] & 0xfffff);
    }
    m->dp_label = cp_xmalloc((m->n_dp ? m->n_dp : 1) * sizeof *m->dp_label);
    m->stage_label = cp_xmalloc((m->n_stages ? m->n_stages : 1) * sizeof *m->stage_label);
    for (size_t i = 0; i < m->n_dp; i++)
        m->dp_label[i] = (int64_t)dk[i];
    for (size_t i = 0; i < m->n_stages; i++)
        m->stage_label[i] = (int64_t)sk[i];
    free(dk);
    free(sk);
    return wk;
}

/* The rank's ops (main and recv) with their worker, step and args. */
static void collect(pp_job *j, const tl_rank *rk, const uint64_t *wk)
{
    const tl_timeline *tl = j->tl;
    uint32_t k_step = cp_intern_find(&tl->strings, "step", 4), k_mb = cp_intern_find(&tl->strings, "mb_id", 5),
             k_ch = cp_intern_find(&tl->strings, "model_chunk", 11);
    size_t cap = 0, rcap = 0, ne = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++)
        ne += tl->tracks[t].ev_end - tl->tracks[t].ev_begin;
    uint64_t *steps = cp_xmalloc((ne ? ne : 1) * sizeof *steps);
    uint64_t *names = cp_xmalloc((ne ? ne : 1) * sizeof *names);
    size_t n_steps = 0, n_names = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        uint32_t w = (uint32_t)find_u64(wk, j->m.n_workers, worker_key(tr));
        int kind = optrace_tid_kind(tr->key.tid);
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
            const char *nm = tl_str(tl, tl->name[i]);
            bool recv = kind == OPT_PP_COMM;
            int8_t dir = (int8_t)(!strcmp(nm, recv ? "forward-recv" : "forward-compute")    ? 0
                                  : !strcmp(nm, recv ? "backward-recv" : "backward-compute") ? 1
                                                                                             : -1);
            if (recv && dir < 0)
                continue; /* sends: the recv has what the model needs */
            int32_t s = arg_i32(tl, i, k_step);
            pev e = { i, w, (uint8_t)kind, dir, s < 0 ? 0 : s, arg_i32(tl, i, k_mb), arg_i32(tl, i, k_ch) };
            steps[n_steps++] = (uint64_t)e.step;
            if (recv) {
                cp_xgrow((void **)&j->recv, &rcap, j->n_recv + 1, sizeof *j->recv);
                j->recv[j->n_recv++] = e;
                continue;
            }
            names[n_names++] = tl->name[i];
            cp_xgrow((void **)&j->ops, &cap, j->n_main + 1, sizeof *j->ops);
            j->ops[j->n_main++] = e;
            j->V = CP_MAX(j->V, (size_t)(e.chunk < 0 ? 0 : e.chunk) + 1);
        }
    }
    n_steps = uniq(steps, n_steps);
    for (size_t i = 0; i < j->n_main; i++)
        j->ops[i].step = (int32_t)find_u64(steps, n_steps, (uint64_t)j->ops[i].step);
    for (size_t i = 0; i < j->n_recv; i++)
        j->recv[i].step = (int32_t)find_u64(steps, n_steps, (uint64_t)j->recv[i].step);
    j->m.n_steps = n_steps;
    j->n_names = uniq(names, n_names);
    j->names = cp_xmalloc((j->n_names ? j->n_names : 1) * sizeof *j->names);
    for (size_t i = 0; i < j->n_names; i++)
        j->names[i] = (uint32_t)names[i];
    free(names);
    free(steps);
    /* main ops by (worker, start, end) */
    rec3 *v = cp_xmalloc((j->n_main ? j->n_main : 1) * sizeof *v);
    for (size_t i = 0; i < j->n_main; i++)
        v[i] = (rec3){ { j->ops[i].w, cp_key_i64(tl->ts_ns[j->ops[i].ev]), cp_key_i64(tl_end_ns(tl, j->ops[i].ev)) }, i };
    cp_sort_records(v, j->n_main, sizeof *v, 3, rec_key, NULL);
    pev *sorted = cp_xmalloc((j->n_main ? j->n_main : 1) * sizeof *sorted);
    for (size_t i = 0; i < j->n_main; i++)
        sorted[i] = j->ops[v[i].i];
    free(j->ops);
    j->ops = sorted;
    free(v);
}

/* Virtual stage of a compute op. */
static uint64_t vstage(const pp_job *j, const pev *e)
{
    return (uint64_t)(e->chunk < 0 ? 0 : e->chunk) * j->P + j->m.w_stage[e->w];
}

/* The pipeline edges: producer, consumer and traced transfer of each. */
static void p2p_edges(pp_job *j)
{
    const tl_timeline *tl = j->tl;
    const wi_model *m = &j->m;
    size_t n = j->n_main;
    rec3 *cv = cp_xmalloc((n ? n : 1) * sizeof *cv), *rv = cp_xmalloc((j->n_recv ? j->n_recv : 1) * sizeof *rv);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const pev *e = &j->ops[i];
        if (e->dir >= 0 && e->mb >= 0)
            cv[nc++] = (rec3){ { (uint64_t)e->step << 1 | (uint64_t)e->dir,
                                 (uint64_t)m->w_dp[e->w] << 40 | (uint64_t)m->w_tp[e->w] << 20 | vstage(j, e),
                                 (uint64_t)e->mb }, i };
    }
    for (size_t i = 0; i < j->n_recv; i++) {
        const pev *e = &j->recv[i];
        rv[i] = (rec3){ { (uint64_t)e->step << 1 | (uint64_t)e->dir, e->w, (uint64_t)(uint32_t)e->mb << 32 | (uint32_t)e->chunk }, i };
    }
    cp_sort_records(cv, nc, sizeof *cv, 3, rec_key, NULL);
    cp_sort_records(rv, j->n_recv, sizeof *rv, 3, rec_key, NULL);
    size_t cap = 0, last_v = j->P * j->V - 1;
    for (size_t c = 0; c < nc; c++) {
        const pev *e = &j->ops[cv[c].i];
        uint64_t v = vstage(j, e);
        if ((e->dir == 0 && v == 0) || (e->dir == 1 && v == last_v))
            continue;
        uint64_t k[3] = { cv[c].k[0], (cv[c].k[1] & ~(uint64_t)0xfffff) | (e->dir == 0 ? v - 1 : v + 1), cv[c].k[2] };
        size_t prod = rec_find(cv, nc, k);
        if (prod == SIZE_MAX)
            continue; /* the producer is not in the trace: nothing to wait for */
        int64_t pend = tl_end_ns(tl, j->ops[prod].ev), cts = tl->ts_ns[e->ev];
        uint64_t rk[3] = { cv[c].k[0], e->w, (uint64_t)(uint32_t)e->mb << 32 | (uint32_t)e->chunk };
        size_t r = rec_find(rv, j->n_recv, rk);
        int64_t x;
        if (r != SIZE_MAX) {
            size_t rev = j->recv[r].ev;
            x = tl_end_ns(tl, rev) - CP_MAX(tl->ts_ns[rev], pend);
        } else {
            size_t i = cv[c].i; /* the wait its own thread does not explain */
            bool after_prev = i > 0 && j->ops[i - 1].w == e->w;
            int64_t prev_end = after_prev ? tl_end_ns(tl, j->ops[i - 1].ev) : INT64_MIN;
            x = cts > prev_end ? cts - pend : 0;
            j->no_recv++;
        }
        cp_xgrow((void **)&j->p2p, &cap, j->n_p2p + 1, sizeof *j->p2p);
        j->p2p[j->n_p2p++] = (struct p2p){ prod, cv[c].i, CP_MAX(x, 0) };
    }
    free(cv);
    free(rv);
}

/* Collective groups: members by (step, name, group key, k-th such op of
 * the worker in the step); the last member's arrival per group. */
static void collectives(pp_job *j)
{
    const tl_timeline *tl = j->tl;
    const wi_model *m = &j->m;
    size_t n = j->n_main;
    j->coll_of = cp_xmalloc((n ? n : 1) * sizeof *j->coll_of);
    rec3 *v = cp_xmalloc((n ? n : 1) * sizeof *v);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        j->coll_of[i] = UINT32_MAX;
        const pev *e = &j->ops[i];
        if (e->kind == OPT_DP_COMM || e->kind == OPT_TP_COMM)
            v[nc++] = (rec3){ { e->w, (uint64_t)e->step << 32 | tl->name[e->ev], cp_key_i64(tl->ts_ns[e->ev]) }, i };
    }
    cp_sort_records(v, nc, sizeof *v, 3, rec_key, NULL);
    for (size_t c = 0, k = 0; c < nc; c++) { /* k: the occurrence; then the group key */
        k = c && v[c].k[0] == v[c - 1].k[0] && v[c].k[1] == v[c - 1].k[1] ? k + 1 : 0;
        const pev *e = &j->ops[v[c].i];
        uint64_t peer = e->kind == OPT_DP_COMM ? m->w_tp[e->w] : m->w_dp[e->w]; /* what the group shares */
        v[c].k[0] = (uint64_t)e->kind << 60 | (uint64_t)m->w_stage[e->w] << 32 | peer;
        v[c].k[2] = k;
    }
    cp_sort_records(v, nc, sizeof *v, 3, rec_key, NULL);
    size_t cap = 0;
    for (size_t c = 0; c < nc; c++) {
        if (!c || rec_cmp(&v[c], v[c - 1].k)) {
            cp_xgrow((void **)&j->coll_start, &cap, j->n_coll + 1, sizeof *j->coll_start);
            j->coll_start[j->n_coll++] = INT64_MIN;
        }
        size_t g = j->n_coll - 1;
        j->coll_of[v[c].i] = (uint32_t)g;
        j->coll_start[g] = CP_MAX(j->coll_start[g], tl->ts_ns[j->ops[v[c].i].ev]);
    }
    free(v);
}

/* ---- the graph: node ids ---- */

static uint64_t n_start(size_t i) { return 2 * (uint64_t)i; }
static uint64_t n_end(size_t i) { return 2 * (uint64_t)i + 1; }
static uint64_t n_p2p(const pp_job *j, size_t e) { return 2 * (uint64_t)(j->n_main + e); }
static uint64_t n_join(const pp_job *j, size_t g) { return 2 * (uint64_t)(j->n_main + j->n_p2p) + g; }

typedef struct edge {
    uint64_t dst, src;
} edge;

static uint64_t edge_key(const void *p, int k, const void *ctx)
{
    (void)k;
    (void)ctx;
    return ((const edge *)p)->dst;
}

/* The CSR of predecessors and each node's lag (see the header). */
static void graph(pp_job *j)
{
    const tl_timeline *tl = j->tl;
    size_t n = j->n_main;
    j->n_nodes = 2 * (n + j->n_p2p) + j->n_coll;
    j->lag = cp_xcalloc(j->n_nodes ? j->n_nodes : 1, sizeof *j->lag);
    size_t ne = 0, cap = 0;
    edge *ed = NULL;
#define EDGE(d, s)                                                     \
    do {                                                               \
        cp_xgrow((void **)&ed, &cap, ne + 1, sizeof *ed);              \
        ed[ne++] = (edge){ (d), (s) };                                 \
    } while (0)
    j->anchor = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t ev = j->ops[i].ev;
        j->anchor = CP_MIN(j->anchor, tl->ts_ns[ev]);
        if (i && j->ops[i - 1].w == j->ops[i].w)
            EDGE(n_start(i), n_end(i - 1));
        uint32_t g = j->coll_of[i];
        if (g == UINT32_MAX) {
            EDGE(n_end(i), n_start(i));
            j->lag[n_end(i)] = tl->dur_ns[ev];
        } else {
            EDGE(n_join(j, g), n_start(i));
            EDGE(n_end(i), n_join(j, g));
            j->lag[n_end(i)] = CP_MAX(tl_end_ns(tl, ev) - j->coll_start[g], 0);
        }
    }
    for (size_t e = 0; e < j->n_p2p; e++) {
        EDGE(n_p2p(j, e), n_end(j->p2p[e].prod));
        EDGE(n_p2p(j, e) + 1, n_p2p(j, e));
        EDGE(n_start(j->p2p[e].cons), n_p2p(j, e) + 1);
        j->lag[n_p2p(j, e) + 1] = j->p2p[e].ns;
    }
#undef EDGE
    /* by destination, the binding (first added: the op's own span) first */
    cp_sort_records(ed, ne, sizeof *ed, 1, edge_key, NULL);
    j->pstart = cp_xcalloc(j->n_nodes + 1, sizeof *j->pstart);
    j->pred = cp_xmalloc((ne ? ne : 1) * sizeof *j->pred);
    for (size_t k = 0; k < ne; k++) {
        j->pstart[ed[k].dst + 1]++;
        j->pred[k] = (uint32_t)ed[k].src; /* n_nodes < WI_MAX_NODES: checked by the caller */
    }
    for (size_t v = 0; v < j->n_nodes; v++)
        j->pstart[v + 1] += j->pstart[v];
    free(ed);
}

static size_t g_preds(const void *ctx, uint64_t v, const uint32_t **src)
{
    const pp_job *j = ctx;
    *src = j->pred + j->pstart[v];
    return (size_t)(j->pstart[v + 1] - j->pstart[v]);
}

static size_t g_binding(const void *ctx, uint64_t v, const uint32_t *src, size_t np)
{
    (void)ctx;
    (void)v;
    (void)src;
    return np ? 0 : SIZE_MAX;
}

/* no launch delays: a node's lag is an op's duration or 0; sources at the trace's start */
static int64_t g_lag0(const void *ctx, uint64_t v, const uint32_t *src, size_t b)
{
    (void)src;
    const pp_job *j = ctx;
    return b == SIZE_MAX ? j->anchor : j->lag[v];
}

/* ---- ops and types for the replay ---- */

static const char *const p2p_type[2] = { "forward-send/recv", "backward-send/recv" };

static void replay_ops(pp_job *j)
{
    const tl_timeline *tl = j->tl;
    wi_model *m = &j->m;
    size_t n = j->n_main;
    bool dir_used[2] = { false, false };
    for (size_t e = 0; e < j->n_p2p; e++)
        dir_used[j->ops[j->p2p[e].cons].dir] = true;
    uint32_t t_dir[2];
    size_t nt = j->n_names;
    j->tnames = cp_xmalloc((nt + 2) * sizeof *j->tnames);
    for (size_t i = 0; i < nt; i++)
        j->tnames[i] = tl_str(tl, j->names[i]);
    for (int d = 0; d < 2; d++)
        if (dir_used[d]) {
            t_dir[d] = (uint32_t)nt;
            j->tnames[nt++] = p2p_type[d];
        }
    bool *comm = cp_xcalloc(nt, sizeof *comm);
    m->n_ops = n + j->n_p2p;
    m->ops = cp_xcalloc(m->n_ops ? m->n_ops : 1, sizeof *m->ops);
    for (size_t i = 0; i < n; i++) {
        const pev *e = &j->ops[i];
        uint32_t ty = 0;
        while (j->names[ty] != tl->name[e->ev]) /* present: the names come from these ops */
            ty++;
        comm[ty] |= e->kind == OPT_DP_COMM || e->kind == OPT_TP_COMM || e->kind == OPT_PP_COMM;
        m->ops[i] = (wi_op){ .ev = e->ev, .start = n_start(i), .end = n_end(i), .dur_ns = j->lag[n_end(i)],
                             .name = tl->name[e->ev], .group = ty, .type = ty, .rank = e->w, .dp = m->w_dp[e->w],
                             .stage = m->w_stage[e->w], .step = e->step };
    }
    for (size_t e = 0; e < j->n_p2p; e++) {
        const pev *c = &j->ops[j->p2p[e].cons];
        uint32_t ty = t_dir[c->dir];
        comm[ty] = true;
        m->ops[n + e] = (wi_op){ .ev = c->ev, .start = n_p2p(j, e), .end = n_p2p(j, e) + 1, .dur_ns = j->p2p[e].ns,
                                 .group = ty, .type = ty, .rank = c->w, .dp = m->w_dp[c->w],
                                 .stage = m->w_stage[c->w], .step = -1 /* not an op of the step's span */ };
    }
    for (size_t k = 0; k < m->n_ops; k++)
        m->ops[k].comm = comm[m->ops[k].type];
    free(comm);
    m->n_types = nt;
    m->type_name = j->tnames;
}

/* an op's identity: its type (the ideal is per op type) */
static uint64_t op_type(const wi_op *o) { return o->type; }

static void job_free(pp_job *j)
{
    wi_model_free(&j->m);
    free(j->m.w_dp);
    free(j->m.w_stage);
    free(j->m.w_tp);
    free(j->m.dp_label);
    free(j->m.stage_label);
    free(j->ops);
    free(j->recv);
    free(j->p2p);
    free(j->coll_of);
    free(j->coll_start);
    free(j->pstart);
    free(j->pred);
    free(j->lag);
    free(j->names);
    free(j->tnames);
}

int an_whatif_pp_run(an_ctx *ctx, rep_node *top, size_t rank_index)
{
    rep_report *rp = ctx->rep;
    const tl_timeline *tl = ctx->tl;
    const tl_rank *rk = &tl->ranks[rank_index];
    pp_job j = { .tl = tl };
    j.m.nthreads = ctx->opts ? ctx->opts->nthreads : 1;
    uint64_t *wk = workers(&j, rk);
    collect(&j, rk, wk);
    free(wk);
    p2p_edges(&j);
    collectives(&j);
    graph(&j);
    uint64_t n_sims = 4 + j.n_names + 2 + j.m.n_dp + j.m.n_stages;
    if (!j.n_main || !j.m.n_steps) {
        rep_str(rp, top, "skipped", NULL, "no op in the op timeline");
    } else if ((uint64_t)j.n_nodes * n_sims > AN_WI_MAX_VISITS || j.n_nodes >= WI_MAX_NODES) {
        rep_str(rp, top, "skipped", NULL, "the job is too large for the replays (AN_WI_MAX_VISITS)");
    } else {
        replay_ops(&j);
        /* no node instants to derive offsets from (the replay drops the trace's gaps): ts NULL */
        wi_graph_src gs = { j.n_nodes, j.pstart[j.n_nodes], &j, g_preds, g_binding, g_lag0, NULL };
        wi_ideals(&j.m, op_type);
        wi_compact(&j.m, &gs);
        size_t on_cycle = j.m.n_cycle;
        rep_str(rp, top, "method", NULL,
                "op timeline (OSDI'25 artifact format): replay of the pipeline's dependency model without launch "
                "delays; ideal = mean (computation) or median (communication) duration of each op type over "
                "workers, steps and microbatches");
        rep_int(rp, top, "ops", "ops replayed", (int64_t)j.n_main, NULL);
        rep_int(rp, top, "p2p_edges", "pipeline transfers between stages", (int64_t)j.n_p2p, NULL);
        rep_int(rp, top, "p2p_without_recv", "transfers without a matching recv op", (int64_t)j.no_recv, NULL);
        rep_int(rp, top, "collective_groups", "DP and TP collectives, one per group", (int64_t)j.n_coll, NULL);
        rep_int(rp, top, "cycle_nodes", "nodes on a dependency cycle (not replayed)", (int64_t)on_cycle, NULL);
        rep_int(rp, top, "workers", "workers (DP rank, stage, TP rank)", (int64_t)j.m.n_workers, NULL);
        rep_int(rp, top, "steps", "steps", (int64_t)j.m.n_steps, NULL);
        rep_int(rp, top, "stages", "pipeline stages", (int64_t)j.m.n_stages, NULL);
        rep_int(rp, top, "model_chunks", "model chunks per stage (interleaved schedule when > 1)", (int64_t)j.V, NULL);
        wi_report(rp, top, &j.m);
    }
    job_free(&j);
    return 0;
}
