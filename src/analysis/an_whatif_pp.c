/* an_whatif_pp.c - the what-if on op timelines (the OSDI'25 artifact's
 * format, read by rd_optrace into one timeline rank, model/optrace.h): a
 * pipeline-parallel (1F1B or interleaved) plus data-parallel job's own
 * dependency model, replayed by an_whatif.c's shared code.
 *
 * Design (docs/METRICS.md "Pipeline what-if on op timelines")
 * - Workers are (DP rank d, stage p, TP rank t). Within a step a worker's
 *   ops (every thread but pp-comm) run in their traced start order, each
 *   after the one before it ends. Steps are replayed independently, as the
 *   artifact does: a step's first op on a worker, with nothing else to wait
 *   for, starts at the step's traced start. Launch delays (gaps the model
 *   does not explain) are dropped, as in the artifact's "no delay"
 *   baseline: T_original is the replay of the traced durations.
 * - Pipeline edges: the forward of microbatch mb on virtual stage v =
 *   model_chunk * P + p > 0 (P stages) waits for the activation transfer
 *   from mb's forward on v - 1 (same DP and TP rank, same step), a backward
 *   on v < V*P - 1 for the gradient transfer from v + 1. The transfer is an
 *   op of its own (type forward-send/recv or backward-send/recv) owned by
 *   the receiving worker; it starts when the producer ends (the recv is
 *   posted ahead: the artifact's recv also waits for the previous compute
 *   of its own type, which the schedule already orders before it, so the
 *   two differ by at most one transfer). Its traced value is the matching
 *   recv's end minus the later of its start and the producer's end; recvs match by (step, mb_id, model_chunk) when they
 *   have them (synth), else by order within the worker's step (the
 *   artifact's traces write -1 there), as the artifact pairs them.
 * - Collectives (the artifact's comm groups): optimizer-clip-main-grad
 *   synchronises the whole job, embedding-grads-all-reduce the first and
 *   last stage of a DP rank, other dp-comm ops the DP group (same stage and
 *   TP rank), tp-comm ops the TP group; layernorm-grads-all-reduce is not
 *   synchronised. Members match by (step, name, k-th such op of the worker
 *   in the step). The transfer starts when the last member arrives; a
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

#include <math.h>
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
    int64_t *step_start;   /* per step: its first op's traced start */
    double t_trace_ns;     /* the trace's mean step time */
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
                return -2; /* several op timelines: not one job */
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
            if (recv) {
                cp_xgrow((void **)&j->recv, &rcap, j->n_recv + 1, sizeof *j->recv);
                j->recv[j->n_recv++] = e;
                continue;
            }
            steps[n_steps++] = (uint64_t)e.step; /* steps are those with an op */
            names[n_names++] = tl->name[i];
            cp_xgrow((void **)&j->ops, &cap, j->n_main + 1, sizeof *j->ops);
            j->ops[j->n_main++] = e;
            j->V = CP_MAX(j->V, (size_t)(e.chunk < 0 ? 0 : e.chunk) + 1);
        }
    }
    n_steps = uniq(steps, n_steps);
    for (size_t i = 0; i < j->n_main; i++)
        j->ops[i].step = (int32_t)find_u64(steps, n_steps, (uint64_t)j->ops[i].step);
    size_t kept = 0; /* a recv in a step without ops feeds nothing */
    for (size_t i = 0; i < j->n_recv; i++) {
        size_t k = find_u64(steps, n_steps, (uint64_t)j->recv[i].step);
        if (k < n_steps && steps[k] == (uint64_t)j->recv[i].step) {
            j->recv[kept] = j->recv[i];
            j->recv[kept++].step = (int32_t)k;
        }
    }
    j->n_recv = kept;
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

/* Each compute's producer (the same microbatch on the neighbouring virtual
 * stage), SIZE_MAX none; into prod[]. */
static void producers(pp_job *j, size_t *prod)
{
    const wi_model *m = &j->m;
    size_t n = j->n_main, nc = 0, last_v = j->P * j->V - 1;
    rec3 *cv = cp_xmalloc((n ? n : 1) * sizeof *cv);
    for (size_t i = 0; i < n; i++) {
        const pev *e = &j->ops[i];
        prod[i] = SIZE_MAX;
        if (e->dir >= 0 && e->mb >= 0)
            cv[nc++] = (rec3){ { (uint64_t)e->step << 1 | (uint64_t)e->dir,
                                 (uint64_t)m->w_dp[e->w] << 40 | (uint64_t)m->w_tp[e->w] << 20 | vstage(j, e),
                                 (uint64_t)e->mb }, i };
    }
    cp_sort_records(cv, nc, sizeof *cv, 3, rec_key, NULL);
    for (size_t c = 0; c < nc; c++) {
        const pev *e = &j->ops[cv[c].i];
        uint64_t v = vstage(j, e);
        if ((e->dir == 0 && v == 0) || (e->dir == 1 && v == last_v))
            continue;
        uint64_t k[3] = { cv[c].k[0], (cv[c].k[1] & ~(uint64_t)0xfffff) | (e->dir == 0 ? v - 1 : v + 1), cv[c].k[2] };
        prod[cv[c].i] = rec_find(cv, nc, k); /* none: not in the trace, nothing to wait for */
    }
    free(cv);
}

/* (worker, step and direction, start) of recv r or compute i. */
static rec3 order_rec(const pp_job *j, const pev *e, size_t i)
{
    return (rec3){ { e->w, (uint64_t)e->step << 1 | (uint64_t)e->dir, cp_key_i64(j->tl->ts_ns[e->ev]) }, i };
}

/* Pair one (worker, step, direction)'s recvs rv[0..nr) with its computes
 * cv[0..nc) in order: recvs that start after the last compute are the
 * artifact's no-ops; all computes when the counts agree, else those with
 * a producer, else both aligned on the last. */
static void pair_group(const pp_job *j, const rec3 *rv, size_t nr, const rec3 *cv, size_t nc, const size_t *prod,
                       size_t *recv_of)
{
    int64_t last = j->tl->ts_ns[j->ops[cv[nc - 1].i].ev];
    while (nr && j->tl->ts_ns[j->recv[rv[nr - 1].i].ev] > last)
        nr--;
    size_t n_cons = 0;
    for (size_t k = 0; k < nc; k++)
        n_cons += prod[cv[k].i] != SIZE_MAX;
    if (nr == n_cons && nr != nc) {
        for (size_t k = 0, r = 0; k < nc; k++)
            if (prod[cv[k].i] != SIZE_MAX)
                recv_of[cv[k].i] = rv[r++].i;
        return;
    }
    for (size_t k = 0; k < CP_MIN(nr, nc); k++)
        recv_of[cv[nc - 1 - k].i] = rv[nr - 1 - k].i;
}

/* The recv that fed each compute (recv_of[], SIZE_MAX none): by (step,
 * mb_id, model_chunk) when every recv has them (synth), else by order
 * within the worker's step (the artifact writes -1 for both). */
static void match_recvs(pp_job *j, const size_t *prod, size_t *recv_of)
{
    size_t n = j->n_main, nr = j->n_recv;
    bool by_args = true;
    for (size_t r = 0; r < nr && by_args; r++)
        by_args = j->recv[r].mb >= 0 && j->recv[r].chunk >= 0;
    rec3 *rv = cp_xmalloc((nr ? nr : 1) * sizeof *rv), *cv = cp_xmalloc((n ? n : 1) * sizeof *cv);
    size_t nc = 0;
    for (size_t r = 0; r < nr; r++) {
        const pev *e = &j->recv[r];
        rv[r] = by_args ? (rec3){ { (uint64_t)e->step << 1 | (uint64_t)e->dir, e->w,
                                    (uint64_t)(uint32_t)e->mb << 32 | (uint32_t)e->chunk }, r }
                        : order_rec(j, e, r);
    }
    for (size_t i = 0; i < n; i++) {
        recv_of[i] = SIZE_MAX;
        if (j->ops[i].dir >= 0)
            cv[nc++] = order_rec(j, &j->ops[i], i);
    }
    cp_sort_records(rv, nr, sizeof *rv, 3, rec_key, NULL);
    if (by_args) {
        for (size_t i = 0; i < n; i++) {
            const pev *e = &j->ops[i];
            uint64_t k[3] = { (uint64_t)e->step << 1 | (uint64_t)e->dir, e->w,
                              (uint64_t)(uint32_t)e->mb << 32 | (uint32_t)e->chunk };
            if (e->dir >= 0 && prod[i] != SIZE_MAX)
                recv_of[i] = rec_find(rv, nr, k);
        }
    } else {
        cp_sort_records(cv, nc, sizeof *cv, 3, rec_key, NULL);
        for (size_t a = 0, c = 0; a < nr;) { /* both sorted by (worker, step and direction, start) */
            size_t b = a;
            while (b < nr && rv[b].k[0] == rv[a].k[0] && rv[b].k[1] == rv[a].k[1])
                b++;
            while (c < nc && (cv[c].k[0] < rv[a].k[0] || (cv[c].k[0] == rv[a].k[0] && cv[c].k[1] < rv[a].k[1])))
                c++;
            size_t d = c;
            while (d < nc && cv[d].k[0] == rv[a].k[0] && cv[d].k[1] == rv[a].k[1])
                d++;
            if (d > c)
                pair_group(j, rv + a, b - a, cv + c, d - c, prod, recv_of);
            a = b;
        }
    }
    free(rv);
    free(cv);
}

/* The pipeline edges: producer, consumer and the traced transfer (without a
 * recv: the wait the model does not otherwise explain, after the producer
 * and the consumer's previous compute of the step). */
static void p2p_edges(pp_job *j)
{
    const tl_timeline *tl = j->tl;
    size_t n = j->n_main;
    size_t *prod = cp_xmalloc((n ? n : 1) * sizeof *prod), *recv_of = cp_xmalloc((n ? n : 1) * sizeof *recv_of);
    producers(j, prod);
    match_recvs(j, prod, recv_of);
    size_t cap = 0, prevc = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        const pev *e = &j->ops[i];
        if (i && (j->ops[i - 1].w != e->w || j->ops[i - 1].step != e->step))
            prevc = SIZE_MAX;
        if (e->dir < 0)
            continue;
        if (prod[i] != SIZE_MAX) {
            int64_t ready = tl_end_ns(tl, j->ops[prod[i]].ev), x;
            if (prevc != SIZE_MAX)
                ready = CP_MAX(ready, tl_end_ns(tl, j->ops[prevc].ev));
            if (recv_of[i] != SIZE_MAX) {
                size_t rev = j->recv[recv_of[i]].ev;
                x = tl_end_ns(tl, rev) - CP_MAX(tl->ts_ns[rev], tl_end_ns(tl, j->ops[prod[i]].ev));
            } else { /* the wait the model does not otherwise explain */
                x = tl->ts_ns[e->ev] - ready;
                j->no_recv++;
            }
            cp_xgrow((void **)&j->p2p, &cap, j->n_p2p + 1, sizeof *j->p2p);
            j->p2p[j->n_p2p++] = (struct p2p){ prod[i], i, CP_MAX(x, 0) };
        }
        prevc = i;
    }
    free(prod);
    free(recv_of);
}

/* What a collective's members share (the artifact's comm groups): the
 * whole job for optimizer-clip-main-grad (the gradient norm), the first and
 * last stage of a DP rank for embedding-grads-all-reduce, the DP group (same
 * stage) for other dp-comm ops, the TP group for tp-comm ops; UINT64_MAX:
 * not synchronised (layernorm-grads-all-reduce, as in the artifact). */
static uint64_t group_key(const pp_job *j, const pev *e)
{
    const wi_model *m = &j->m;
    const char *nm = tl_str(j->tl, j->tl->name[e->ev]);
    uint64_t tp = m->w_tp[e->w], d = m->w_dp[e->w], p = m->w_stage[e->w];
    if (!strcmp(nm, "layernorm-grads-all-reduce"))
        return UINT64_MAX;
    if (!strcmp(nm, "optimizer-clip-main-grad"))
        return (uint64_t)1 << 60 | tp;
    if (!strcmp(nm, "embedding-grads-all-reduce"))
        return (uint64_t)2 << 60 | d << 32 | tp;
    return e->kind == OPT_DP_COMM ? (uint64_t)3 << 60 | p << 32 | tp : (uint64_t)4 << 60 | p << 32 | d;
}

/* Collective groups: members by (step, name, group key, k-th such op of
 * the worker in the step); the last member's arrival per group. */
static void collectives(pp_job *j)
{
    const tl_timeline *tl = j->tl;
    size_t n = j->n_main;
    j->coll_of = cp_xmalloc((n ? n : 1) * sizeof *j->coll_of);
    rec3 *v = cp_xmalloc((n ? n : 1) * sizeof *v);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        j->coll_of[i] = UINT32_MAX;
        const pev *e = &j->ops[i];
        if ((e->kind == OPT_DP_COMM || e->kind == OPT_TP_COMM) && group_key(j, e) != UINT64_MAX)
            v[nc++] = (rec3){ { e->w, (uint64_t)e->step << 32 | tl->name[e->ev], cp_key_i64(tl->ts_ns[e->ev]) }, i };
    }
    cp_sort_records(v, nc, sizeof *v, 3, rec_key, NULL);
    for (size_t c = 0, k = 0; c < nc; c++) { /* k: the occurrence; then the group key */
        k = c && v[c].k[0] == v[c - 1].k[0] && v[c].k[1] == v[c - 1].k[1] ? k + 1 : 0;
        v[c].k[0] = group_key(j, &j->ops[v[c].i]);
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
    j->step_start = cp_xmalloc((j->m.n_steps ? j->m.n_steps : 1) * sizeof *j->step_start);
    for (size_t s = 0; s < j->m.n_steps; s++)
        j->step_start[s] = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t ev = j->ops[i].ev;
        int32_t s = j->ops[i].step;
        j->step_start[s] = CP_MIN(j->step_start[s], tl->ts_ns[ev]);
        if (i && j->ops[i - 1].w == j->ops[i].w && j->ops[i - 1].step == s)
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

/* no launch delays: a node's lag is an op's duration or 0; a source (a
 * step's first op on a worker, nothing to wait for) at its step's start */
static int64_t g_lag0(const void *ctx, uint64_t v, const uint32_t *src, size_t b)
{
    (void)src;
    const pp_job *j = ctx;
    if (b != SIZE_MAX)
        return j->lag[v];
    return v < 2 * (uint64_t)j->n_main ? j->step_start[j->ops[v / 2].step] : 0; /* only main ops' starts can be sources */
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
    free(j->step_start);
    free(j->names);
    free(j->tnames);
}

/* The trace's own mean step time (latest op end - earliest op start per
 * step) and the launch delays' share: T_trace / T_original, where
 * T_original is the replay without them (the artifact's launch_slowdown). */
static void trace_time(rep_report *rp, rep_node *top, pp_job *j)
{
    const tl_timeline *tl = j->tl;
    size_t ns = j->m.n_steps;
    int64_t *hi = cp_xmalloc((ns ? ns : 1) * sizeof *hi);
    for (size_t s = 0; s < ns; s++)
        hi[s] = INT64_MIN;
    for (size_t i = 0; i < j->n_main; i++)
        hi[j->ops[i].step] = CP_MAX(hi[j->ops[i].step], tl_end_ns(tl, j->ops[i].ev));
    double sum = 0;
    for (size_t s = 0; s < ns; s++)
        sum += (double)(hi[s] - j->step_start[s]);
    free(hi);
    double t = ns ? sum / (double)ns : 0;
    rep_num(rp, top, "t_trace_ns", "mean step time as traced (launch delays included)", t, "ns");
    j->t_trace_ns = t;
}

/* The replay model from the graph, then every scenario under top. */
static void replay_report(rep_report *rp, rep_node *top, pp_job *j)
{
    replay_ops(j);
    /* no node instants to derive offsets from (the replay drops the trace's gaps): ts NULL */
    wi_graph_src gs = { j->n_nodes, j->pstart[j->n_nodes], j, g_preds, g_binding, g_lag0, NULL };
    wi_ideals(&j->m, op_type);
    wi_compact(&j->m, &gs);
    size_t on_cycle = j->m.n_cycle;
    if (j->m.out_of_range) {
        rep_str(rp, top, "skipped", NULL, "instants and durations too large for the replays (damaged input)");
        return;
    }
    rep_str(rp, top, "method", NULL,
            "op timeline (OSDI'25 artifact format): replay of the pipeline's dependency model without launch "
            "delays; ideal = mean (computation) or median (communication) duration of each op type over "
            "workers, steps and microbatches");
    rep_int(rp, top, "ops", "ops replayed", (int64_t)j->n_main, NULL);
    rep_int(rp, top, "p2p_edges", "pipeline transfers between stages", (int64_t)j->n_p2p, NULL);
    rep_int(rp, top, "p2p_without_recv", "transfers without a matching recv op", (int64_t)j->no_recv, NULL);
    rep_int(rp, top, "collective_groups", "DP and TP collectives, one per group", (int64_t)j->n_coll, NULL);
    rep_int(rp, top, "cycle_nodes", "nodes on a dependency cycle (not replayed)", (int64_t)on_cycle, NULL);
    rep_int(rp, top, "workers", "workers (DP rank, stage, TP rank)", (int64_t)j->m.n_workers, NULL);
    rep_int(rp, top, "steps", "steps", (int64_t)j->m.n_steps, NULL);
    rep_int(rp, top, "stages", "pipeline stages", (int64_t)j->m.n_stages, NULL);
    rep_int(rp, top, "model_chunks", "model chunks per stage (interleaved schedule when > 1)", (int64_t)j->V, NULL);
    trace_time(rp, top, j);
    double t_orig = wi_report(rp, top, &j->m);
    const char *title = "T_trace / T_original: what the launch delays cost";
    if (t_orig > 0 && isfinite(t_orig))
        rep_num(rp, top, "launch_slowdown", title, j->t_trace_ns / t_orig, NULL);
    else
        rep_null(rp, top, "launch_slowdown", title, NULL);
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
    if (!j.n_main || !j.m.n_steps)
        rep_str(rp, top, "skipped", NULL, "no op in the op timeline");
    else if ((uint64_t)j.n_nodes * n_sims > AN_WI_MAX_VISITS || j.n_nodes >= WI_MAX_NODES)
        rep_str(rp, top, "skipped", NULL, "the job is too large for the replays (AN_WI_MAX_VISITS)");
    else
        replay_report(rp, top, &j);
    job_free(&j);
    return 0;
}
