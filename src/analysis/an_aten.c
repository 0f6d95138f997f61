/* an_aten.c - the `aten` analyzer: which kernels each ATen op launches and
 * how long the launches take to get going, per rank, in both views.
 *
 * HTA's definition (CudaKernelAnalysis.get_aten_op_kernels_and_delay): for
 * every kernel launch call, the "deepest" ATen op (name aten::*) that wraps
 * the call (op start <= call start, op end >= call end) is the one with the
 * latest start; the call's first GPU event is its kernel. Per op instance:
 * the kernel names in launch order form its kernel sequence, and its first
 * launch gives the ATen op launch delay (call start - op start) and the
 * runtime delay (kernel start - call start). Rows: (op name, kernel
 * sequence) with the instance count and the mean of both delays, sorted by
 * count then mean op delay, both descending.
 *
 * HTA view: launch calls as HTA's kernel launch pattern ((cuda*LaunchKernel,
 * cuLaunchKernel*, runFunction*), no memcpy/memset); the wrapping op is
 * looked for on every thread of the rank (HTA does not match threads), and
 * among ops starting at the same time the longest wins (HTA takes the first
 * in its frame, the parent); a call without a GPU event is skipped (HTA
 * fails on it). Exact view: every launch call (AN_NAME_LAUNCH, copies and
 * memsets included), the wrapping op on the call's own thread, the
 * innermost one at equal starts, exact ns.
 *
 * The wrapping op is found with a max-segment tree over the ops' ends in
 * (thread, start) order: the rightmost op starting at or before the call
 * whose end reaches the call's end, O(log n) a call whatever the nesting.
 */
#include "an_results.h"
#include "../base/buf.h"
#include "../base/intern.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct aten_row {
    uint32_t op;             /* op name (timeline string id) */
    const char *op_name;     /* its string: ties are ordered by it, not by the id, which differs
                              * between one timeline and the shards of one (mpirun) */
    uint32_t seq;            /* kernel sequence (id in the rank's own table) */
    int64_t count;           /* op instances */
    double sum_op_delay_ns, sum_rt_delay_ns;
} aten_row;

typedef struct aten_rank {
    aten_row *rows;
    size_t n;
    cp_intern seqs;          /* kernel sequences "k1 -> k2 -> ..." */
    int64_t launches;        /* launch calls inside an ATen op, joined to GPU work */
    int64_t ops;             /* ATen op instances that launched something */
} aten_rank;

/* ops as an_ev_rec, group = 0 in the HTA view, the track in the exact view */

/* Max-segment tree over ends: leaves at [size, 2 size). */
typedef struct seg_tree {
    int64_t *v;
    size_t size;
} seg_tree;

static void seg_build(seg_tree *s, const an_ev_rec *ops, const int64_t *t1, size_t n)
{
    s->size = 1;
    while (s->size < n)
        s->size *= 2;
    s->v = cp_xmalloc(2 * s->size * sizeof *s->v);
    for (size_t k = 0; k < s->size; k++)
        s->v[s->size + k] = k < n ? t1[ops[k].i] : INT64_MIN;
    for (size_t k = s->size - 1; k >= 1; k--)
        s->v[k] = CP_MAX(s->v[2 * k], s->v[2 * k + 1]);
}

/* Rightmost leaf in [lo, hi] with value >= x, or SIZE_MAX. */
static size_t seg_rightmost(const seg_tree *s, size_t node, size_t nlo, size_t nhi, size_t lo, size_t hi,
                            int64_t x)
{
    if (nhi < lo || nlo > hi || s->v[node] < x)
        return SIZE_MAX;
    if (nlo == nhi)
        return nlo;
    size_t mid = (nlo + nhi) / 2;
    size_t r = seg_rightmost(s, 2 * node + 1, mid + 1, nhi, lo, hi, x);
    return r != SIZE_MAX ? r : seg_rightmost(s, 2 * node, nlo, mid, lo, hi, x);
}

/* First op position with (grp, t0) >= (g, t). */
static size_t op_lower(const an_ev_rec *ops, size_t n, int64_t g, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ops[mid].grp < g || (ops[mid].grp == g && ops[mid].t0 < t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One launch inside an op: sorted by (op position, call start, call). */
typedef struct hit {
    size_t op;               /* position in ops[] */
    int64_t call_t0;
    size_t call;
    uint32_t kernel;         /* kernel name id */
    int64_t op_delay_ns, rt_delay_ns;
} hit;

static uint64_t hit_key(const void *rec, int k, const void *ctx)
{
    (void)ctx;
    const hit *h = rec;
    return k == 0 ? h->op : k == 1 ? cp_key_i64(h->call_t0) : h->call;
}

typedef struct inst {
    uint32_t op, seq;
    int64_t op_delay_ns, rt_delay_ns;
} inst;

static uint64_t inst_key(const void *rec, int k, const void *ctx)
{
    (void)ctx;
    const inst *x = rec;
    return k == 0 ? x->op : x->seq;
}

static int cmp_row(const void *pa, const void *pb)
{
    const aten_row *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    double da = a->sum_op_delay_ns / (double)a->count, db = b->sum_op_delay_ns / (double)b->count;
    if (da != db)
        return da > db ? -1 : 1;
    if (a->op != b->op)
        return strcmp(a->op_name, b->op_name);
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Kernel sequences seen so far, by their kernel name ids: a sequence's
 * text ("k1 -> k2 -> ...", kernel names of hundreds of bytes) is built and
 * interned only the first time its ids occur, not once per op instance.
 * The same ids always give the same text, so the ids handed out are what
 * interning every instance's text would give. Open addressing; slots hold
 * an entry index + 1. */
typedef struct seq_ent {
    uint64_t hash;
    uint32_t off, n;         /* ids[off .. off + n) */
    uint32_t seq;            /* its id in aten_rank.seqs */
} seq_ent;

typedef struct seq_map {
    uint32_t *slot, *ids;
    seq_ent *e;
    size_t cap, n, n_ids, cap_ids, cap_e;
} seq_map;

static uint32_t seq_id(seq_map *m, cp_intern *seqs, const tl_timeline *tl, const uint32_t *k, size_t nk, cp_buf *txt)
{
    uint64_t h = cp_hash64(k, nk * sizeof *k);
    if (2 * (m->n + 1) > m->cap) { /* grow and rehash */
        size_t cap = m->cap ? 2 * m->cap : 1024;
        free(m->slot);
        m->slot = cp_xcalloc(cap, sizeof *m->slot);
        m->cap = cap;
        for (size_t i = 0; i < m->n; i++) {
            size_t j = (size_t)m->e[i].hash & (cap - 1);
            while (m->slot[j])
                j = (j + 1) & (cap - 1);
            m->slot[j] = (uint32_t)i + 1;
        }
    }
    size_t j = (size_t)h & (m->cap - 1);
    for (; m->slot[j]; j = (j + 1) & (m->cap - 1)) {
        const seq_ent *x = &m->e[m->slot[j] - 1];
        if (x->hash == h && x->n == nk && memcmp(m->ids + x->off, k, nk * sizeof *k) == 0)
            return x->seq;
    }
    cp_buf_reset(txt);
    for (size_t i = 0; i < nk; i++) {
        if (i)
            cp_buf_puts(txt, " -> ");
        cp_buf_puts(txt, tl_str(tl, k[i]));
    }
    uint32_t id = cp_intern_s(seqs, cp_buf_str(txt));
    cp_xgrow((void **)&m->ids, &m->cap_ids, m->n_ids + nk, sizeof *m->ids);
    memcpy(m->ids + m->n_ids, k, nk * sizeof *k);
    cp_xgrow((void **)&m->e, &m->cap_e, m->n + 1, sizeof *m->e);
    m->e[m->n] = (seq_ent){ h, (uint32_t)m->n_ids, (uint32_t)nk, id };
    m->slot[j] = (uint32_t)++m->n;
    m->n_ids += nk;
    return id;
}

static size_t collect_ops(const an_ctx *ctx, const an_view *v, an_ev_rec **out)
{
    const tl_timeline *tl = ctx->tl;
    an_ev_rec *ops = cp_xmalloc((v->n ? v->n : 1) * sizeof *ops);
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->mult[i] && v->stream[i] < 0 && an_name_is(ctx, tl->name[v->base + i], AN_NAME_ATEN))
            ops[n++] = (an_ev_rec){ v->exact ? (int64_t)tl->track[v->base + i] : 0, v->t0[i], v->t0[i] - v->t1[i], i };
    if (!v->exact) /* the exact view's events are already in (track, start, longest first) order */
        an_ev_rec_sort(ops, n);
    *out = ops;
    return n;
}

/* The launches inside ops, each with its first GPU event. */
static size_t collect_hits(const an_ctx *ctx, const an_view *v, const an_ev_rec *ops, size_t nops, hit **out)
{
    const tl_timeline *tl = ctx->tl;
    size_t m = v->n ? v->n : 1;
    int64_t *first_gpu = cp_xmalloc(m * sizeof *first_gpu);
    for (size_t i = 0; i < v->n; i++)
        first_gpu[i] = -1;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t g = v->gpu[k];
        if (v->partner[g] >= 0 && first_gpu[v->partner[g]] < 0)
            first_gpu[v->partner[g]] = (int64_t)g;
    }
    seg_tree st;
    seg_build(&st, ops, v->t1, nops);
    unsigned flag = v->exact ? AN_NAME_LAUNCH : AN_NAME_HTA_KLAUNCH;
    hit *h = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < v->n && nops; i++) {
        if (!v->mult[i] || v->stream[i] >= 0 || first_gpu[i] < 0 || !an_name_is(ctx, tl->name[v->base + i], flag))
            continue;
        int64_t g = v->exact ? (int64_t)tl->track[v->base + i] : 0;
        size_t glo = op_lower(ops, nops, g, INT64_MIN), past = op_lower(ops, nops, g, v->t0[i] + 1);
        if (past == glo)
            continue; /* no op of the group starts at or before the call */
        size_t k = seg_rightmost(&st, 1, 0, st.size - 1, glo, past - 1, v->t1[i]);
        if (k == SIZE_MAX)
            continue;
        if (!v->exact) /* HTA: the first (longest) op of the latest start */
            k = op_lower(ops, nops, g, ops[k].t0);
        size_t kg = (size_t)first_gpu[i];
        cp_xgrow((void **)&h, &cap, n + 1, sizeof *h);
        h[n++] = (hit){ k, v->t0[i], i, tl->name[v->base + kg], v->t0[i] - ops[k].t0, v->t0[kg] - v->t0[i] };
    }
    free(st.v);
    free(first_gpu);
    cp_sort_records(h, n, sizeof *h, 3, hit_key, NULL);
    *out = h;
    return n;
}

static void aten_compute(const an_ctx *ctx, const an_view *v, void *outp)
{
    aten_rank *out = outp;
    const tl_timeline *tl = ctx->tl;
    memset(out, 0, sizeof *out);
    cp_intern_init(&out->seqs);
    an_ev_rec *ops;
    size_t nops = collect_ops(ctx, v, &ops);
    hit *h;
    size_t nh = collect_hits(ctx, v, ops, nops, &h);
    out->launches = (int64_t)nh;
    /* op instances: the kernel sequence and the first launch's delays */
    inst *ins = cp_xmalloc((nh ? nh : 1) * sizeof *ins);
    size_t ni = 0;
    cp_buf txt = CP_BUF_INIT;
    seq_map sm = { 0 };
    uint32_t *k = NULL;
    size_t cap_k = 0;
    for (size_t a = 0, b; a < nh; a = b) {
        for (b = a; b < nh && h[b].op == h[a].op; b++) {
            cp_xgrow((void **)&k, &cap_k, b - a + 1, sizeof *k);
            k[b - a] = h[b].kernel;
        }
        ins[ni++] = (inst){ tl->name[v->base + ops[h[a].op].i], seq_id(&sm, &out->seqs, tl, k, b - a, &txt),
                            h[a].op_delay_ns, h[a].rt_delay_ns };
    }
    cp_buf_free(&txt);
    free(k);
    free(sm.slot);
    free(sm.ids);
    free(sm.e);
    free(h);
    free(ops);
    out->ops = (int64_t)ni;
    cp_sort_records(ins, ni, sizeof *ins, 2, inst_key, NULL);
    size_t cap = 0;
    for (size_t a = 0, b; a < ni; a = b) {
        aten_row r = { ins[a].op, tl_str(tl, ins[a].op), ins[a].seq, 0, 0, 0 };
        for (b = a; b < ni && ins[b].op == ins[a].op && ins[b].seq == ins[a].seq; b++) {
            r.count++;
            r.sum_op_delay_ns += (double)ins[b].op_delay_ns;
            r.sum_rt_delay_ns += (double)ins[b].rt_delay_ns;
        }
        cp_xgrow((void **)&out->rows, &cap, out->n + 1, sizeof *out->rows);
        out->rows[out->n++] = r;
    }
    free(ins);
    if (out->n)
        qsort(out->rows, out->n, sizeof *out->rows, cmp_row);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *outp)
{
    const aten_rank *ar = outp;
    bool all = ctx->opts && ctx->opts->launch_table;
    rep_node *o = rep_obj(ctx->rep, parent, "aten_launch", "kernels launched by ATen ops and their launch delays");
    rep_int(ctx->rep, o, "launches", "launch calls inside an ATen op, joined to GPU work", ar->launches, NULL);
    rep_int(ctx->rep, o, "op_instances", "ATen op instances that launched GPU work", ar->ops, NULL);
    rep_int(ctx->rep, o, "sequences", "distinct (op, kernel sequence) rows", (int64_t)ar->n, NULL);
    static const rep_col cols[] = {
        { "aten_op", "ATen op", NULL, -1 },
        { "kernel_sequence", "kernel sequence", NULL, -1 },
        { "count", "occurrences", NULL, -1 },
        { "aten_op_launch_delay_mean_ns", "mean op start to first launch", "ns", 0 },
        { "runtime_delay_mean_ns", "mean first launch to kernel start", "ns", 0 },
    };
    rep_node *t = rep_table(ctx->rep, o, "rows", "by op and kernel sequence", cols, CP_ARRAY_LEN(cols));
    t->flags |= REP_F_NO_TEXT;
    size_t n = all ? ar->n : CP_MIN(ar->n, (size_t)AN_LAUNCH_ROWS);
    for (size_t k = 0; k < n; k++) {
        const aten_row *r = &ar->rows[k];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, tl_str(ctx->tl, r->op));
        rep_cell_str(ctx->rep, row, cp_intern_str(&ar->seqs, r->seq));
        rep_cell_int(ctx->rep, row, r->count);
        rep_cell_num(ctx->rep, row, r->sum_op_delay_ns / (double)r->count);
        rep_cell_num(ctx->rep, row, r->sum_rt_delay_ns / (double)r->count);
    }
}

static void free_rank(void *outp)
{
    aten_rank *ar = outp;
    free(ar->rows);
    cp_intern_free(&ar->seqs);
}

int an_aten_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(aten_rank), aten_compute, emit, free_rank };
    return an_run_dual(ctx, AN_aten, &ops);
}
