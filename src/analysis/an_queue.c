/* an_queue.c - the `queue` analyzer: launch queue length per stream.
 *
 * HTA's definition (TraceCounters.get_queue_length_time_series): the queue
 * length of a stream goes up by one when a runtime call launches work on
 * it (at the call's start) and down by one when that work starts on the
 * GPU. Only launches joined to GPU work by correlation id count. The
 * statistics are over the samples (one per change: count, mean, sample std,
 * min, quartiles by linear interpolation, max), not time-weighted, exactly
 * as HTA's describe() reports them. At equal timestamps an enqueue is
 * ordered before a dequeue.
 */
#include "an_results.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct qev {
    int64_t stream, t;
    int delta;
} qev;

/* Sort q by (stream, t, +1 before -1): a stable radix sort by time, then a
 * stable counting pass by stream (streams are few); inside a run of equal
 * (stream, t) the enqueues are then moved first. */
static void sort_qev(qev *q, size_t n)
{
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ cp_key_i64(q[i].t), i };
    cp_sort_kv(kv, n, NULL);
    for (size_t i = 0; i < n; i++)
        kv[i].key = cp_key_i64(q[kv[i].val].stream);
    cp_sort_kv(kv, n, NULL);
    qev *out = cp_xmalloc((n ? n : 1) * sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = q[kv[i].val];
    for (size_t a = 0, b; a < n; a = b) {
        size_t plus = 0;
        for (b = a; b < n && out[b].stream == out[a].stream && out[b].t == out[a].t; b++)
            plus += out[b].delta > 0;
        for (size_t k = a; k < b; k++)
            out[k].delta = k - a < plus ? 1 : -1;
    }
    memcpy(q, out, n * sizeof *q);
    free(out);
    free(kv);
}

/* Queue lengths are small integers: sort them by counting when the range is
 * small, else by comparison. */
static void sort_lengths(double *v, size_t n)
{
    double lo = v[0], hi = v[0];
    for (size_t i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    if (hi - lo > 1e6) {
        qsort(v, n, sizeof *v, an_cmp_double);
        return;
    }
    size_t range = (size_t)(hi - lo) + 1;
    size_t *count = cp_xcalloc(range, sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[(size_t)(v[i] - lo)]++;
    size_t k = 0;
    for (size_t r = 0; r < range; r++)
        for (size_t c = 0; c < count[r]; c++)
            v[k++] = lo + (double)r;
    free(count);
}

static void stats(const double *vals, size_t n, an_queue_stream *s)
{
    double *v = cp_xmalloc((n ? n : 1) * sizeof *v), sum = 0;
    memcpy(v, vals, n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s->count = n;
    s->mean = sum / (double)n;
    s->std = n > 1 ? an_std(v, n, s->mean) : NAN;
    sort_lengths(v, n);
    s->min = v[0];
    s->max = v[n - 1];
    s->p25 = an_quantile_sorted(v, n, 0.25);
    s->p50 = an_quantile_sorted(v, n, 0.5);
    s->p75 = an_quantile_sorted(v, n, 0.75);
    free(v);
}

void an_queue_compute(const an_ctx *ctx, const an_view *v, an_queue_rank *out)
{
    const tl_timeline *tl = ctx->tl;
    memset(out, 0, sizeof *out);
    size_t m = v->n ? v->n : 1;
    an_corr_idx *calls = cp_xmalloc(m * sizeof *calls);
    size_t nc = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->mult[i] && v->stream[i] < 0 && tl->corr[v->base + i] >= 0 &&
            an_name_is(ctx, tl->name[v->base + i], AN_NAME_LAUNCH))
            calls[nc++] = (an_corr_idx){ tl->corr[v->base + i], i };
    an_corr_sort(calls, nc);
    size_t nq = 0, cap = 2 * v->n_gpu; /* an enqueue and a dequeue a GPU event, the common case */
    qev *q = cp_xmalloc((cap ? cap : 1) * sizeof *q);
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t g = v->gpu[k];
        int64_t c = tl->corr[v->base + g];
        bool any = false;
        for (size_t p = an_corr_lower(calls, nc, c); p < nc && calls[p].corr == c; p++) {
            cp_xgrow((void **)&q, &cap, nq + 1, sizeof *q);
            q[nq++] = (qev){ v->stream[g], v->t0[calls[p].idx], +1 };
            any = true;
        }
        if (any) {
            cp_xgrow((void **)&q, &cap, nq + 1, sizeof *q);
            q[nq++] = (qev){ v->stream[g], v->t0[g], -1 };
        }
    }
    sort_qev(q, nq);
    double *vals = cp_xmalloc((nq ? nq : 1) * sizeof *vals);
    size_t scap = 0;
    for (size_t a = 0; a < nq;) {
        size_t b = a;
        int64_t len = 0;
        while (b < nq && q[b].stream == q[a].stream) {
            len += q[b].delta;
            vals[b - a] = (double)len;
            b++;
        }
        cp_xgrow((void **)&out->streams, &scap, out->n + 1, sizeof *out->streams);
        an_queue_stream *s = &out->streams[out->n++];
        s->stream = q[a].stream;
        stats(vals, b - a, s);
        a = b;
    }
    free(vals);
    free(q);
    free(calls);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *out)
{
    const an_queue_rank *qr = out;
    static const rep_col cols[] = {
        { "stream", "stream", NULL, -1 }, { "count", "samples", NULL, -1 },
        { "mean", "mean", NULL, 2 },      { "std", "std", NULL, 2 },
        { "min", "min", NULL, 0 },        { "p25", "p25", NULL, 1 },
        { "p50", "p50", NULL, 1 },        { "p75", "p75", NULL, 1 },
        { "max", "max", NULL, 0 },
    };
    rep_node *t = rep_table(ctx->rep, parent, "queue_length", "launch queue length per stream", cols,
                            CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < qr->n; i++) {
        const an_queue_stream *s = &qr->streams[i];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_int(ctx->rep, row, s->stream);
        rep_cell_int(ctx->rep, row, (int64_t)s->count);
        double v[] = { s->mean, s->std, s->min, s->p25, s->p50, s->p75, s->max };
        for (size_t k = 0; k < CP_ARRAY_LEN(v); k++)
            rep_cell_num(ctx->rep, row, v[k]);
    }
}

static void compute(const an_ctx *ctx, const an_view *v, void *out)
{
    an_queue_compute(ctx, v, out);
}

static void free_rank(void *out) { free(((an_queue_rank *)out)->streams); }

int an_queue_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(an_queue_rank), compute, emit, free_rank };
    return an_run_dual(ctx, AN_queue, &ops);
}
