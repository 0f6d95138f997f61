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
 *
 * Time blocked on a full queue (HTA get_time_spent_blocked_on_full_queue):
 * per stream, the time from each sample at or above the full length
 * (an_opts.queue_max_length, default CUDA's 1024 launches a stream) to the
 * stream's next sample, and its share of the rank's trace duration (last
 * event start - first). HTA keys its result by rank, so it keeps only the
 * last such stream of a rank; we list every stream (the HTA value is the
 * row of the highest stream).
 */
#include "an_results.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The queue changes of one view as (key, val) pairs sorted by (stream,
 * time, enqueue before dequeue) with two stable radix passes: first by
 * key = (time - t_min) << 1 | dequeue, then by stream slot (streams are
 * few; slots are numbered in stream order). Sorted: key = slot, val =
 * (time - t_min) << 1 | dequeue.
 * 32 bytes a change with the sort's scratch, where (stream, time, delta)
 * records and their sorted copy cost 80. */
typedef struct qchanges {
    cp_kv *kv;
    size_t n, cap;
    int64_t *streams; /* slot -> stream, ascending */
    int32_t *devices; /* slot -> the stream's GPU device */
    size_t n_streams;
} qchanges;

static size_t stream_slot(const qchanges *q, int64_t stream)
{
    size_t lo = 0, hi = q->n_streams;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (q->streams[mid] < stream)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void qchange_add(qchanges *q, int64_t t, int64_t t_min, size_t slot, bool dequeue)
{
    cp_xgrow((void **)&q->kv, &q->cap, q->n + 1, sizeof *q->kv);
    q->kv[q->n++] = (cp_kv){ ((uint64_t)(t - t_min) << 1) | dequeue, ((uint64_t)slot << 1) | dequeue };
}

static void qchanges_sort(qchanges *q)
{
    cp_kv *tmp = cp_xmalloc((q->n ? q->n : 1) * sizeof *tmp);
    cp_sort_kv(q->kv, q->n, tmp);
    for (size_t i = 0; i < q->n; i++) /* then by slot; val keeps the time and the dequeue bit */
        q->kv[i] = (cp_kv){ q->kv[i].val >> 1, q->kv[i].key };
    cp_sort_kv(q->kv, q->n, tmp);
    free(tmp);
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


/* The view's queue changes, sorted (see qchanges), and the time they count from. */
static void queue_changes(const an_ctx *ctx, const an_view *v, qchanges *q_out, int64_t *t_min_out)
{
    const tl_timeline *tl = ctx->tl;
    size_t m = v->n ? v->n : 1;
    an_corr_idx *calls = cp_xmalloc(m * sizeof *calls);
    size_t nc = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->mult[i] && v->stream[i] < 0 && tl->corr[v->base + i] >= 0 &&
            an_name_is(ctx, tl->name[v->base + i], AN_NAME_LAUNCH))
            calls[nc++] = (an_corr_idx){ tl->corr[v->base + i], i };
    an_corr_sort(calls, nc);
    /* the streams, in order, and the earliest time (keys are times after it) */
    qchanges q = { 0 };
    int64_t t_min = INT64_MAX;
    size_t scap = 0;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t g = v->gpu[k];
        if (!q.n_streams || q.streams[q.n_streams - 1] != v->stream[g]) {
            size_t at = stream_slot(&q, v->stream[g]);
            if (at == q.n_streams || q.streams[at] != v->stream[g]) {
                size_t c0 = scap;
                cp_xgrow((void **)&q.streams, &scap, q.n_streams + 1, sizeof *q.streams);
                if (scap != c0)
                    q.devices = cp_xrealloc(q.devices, scap * sizeof *q.devices);
                memmove(q.streams + at + 1, q.streams + at, (q.n_streams - at) * sizeof *q.streams);
                memmove(q.devices + at + 1, q.devices + at, (q.n_streams - at) * sizeof *q.devices);
                q.streams[at] = v->stream[g];
                q.devices[at] = tl->tracks[tl->track[v->base + g]].key.device;
                q.n_streams++;
            }
        }
        t_min = CP_MIN(t_min, v->t0[g]);
    }
    for (size_t p = 0; p < nc; p++)
        t_min = CP_MIN(t_min, v->t0[calls[p].idx]);
    q.cap = 2 * v->n_gpu; /* an enqueue and a dequeue a GPU event, the common case */
    q.kv = cp_xmalloc((q.cap ? q.cap : 1) * sizeof *q.kv);
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t g = v->gpu[k];
        int64_t c = tl->corr[v->base + g];
        size_t slot = stream_slot(&q, v->stream[g]);
        bool any = false;
        for (size_t p = an_corr_lower(calls, nc, c); p < nc && calls[p].corr == c; p++) {
            qchange_add(&q, v->t0[calls[p].idx], t_min, slot, false);
            any = true;
        }
        if (any)
            qchange_add(&q, v->t0[g], t_min, slot, true);
    }
    free(calls);
    qchanges_sort(&q);
    *q_out = q;
    *t_min_out = t_min;
}

void an_queue_compute(const an_ctx *ctx, const an_view *v, an_queue_rank *out)
{
    memset(out, 0, sizeof *out);
    qchanges q;
    int64_t t_min;
    queue_changes(ctx, v, &q, &t_min);
    double *vals = cp_xmalloc((q.n ? q.n : 1) * sizeof *vals);
    size_t ocap = 0;
    int64_t full_len = ctx->opts && ctx->opts->queue_max_length > 0 ? ctx->opts->queue_max_length
                                                                      : AN_QUEUE_MAX_DEFAULT;
    out->max_length = full_len;
    for (size_t a = 0; a < q.n;) {
        size_t b = a;
        int64_t len = 0, full_ns = 0;
        bool full = false;
        while (b < q.n && q.kv[b].key == q.kv[a].key) {
            len += q.kv[b].val & 1 ? -1 : 1;
            vals[b - a] = (double)len;
            /* the time at this length lasts until the stream's next change
             * (HTA: ts.shift(-1) - ts over the stream's samples) */
            if (len >= full_len) {
                full = true;
                if (b + 1 < q.n && q.kv[b + 1].key == q.kv[a].key)
                    full_ns += (int64_t)((q.kv[b + 1].val >> 1) - (q.kv[b].val >> 1));
            }
            b++;
        }
        cp_xgrow((void **)&out->streams, &ocap, out->n + 1, sizeof *out->streams);
        an_queue_stream *s = &out->streams[out->n++];
        s->stream = q.streams[q.kv[a].key];
        s->device = q.devices[q.kv[a].key];
        s->full = full;
        s->full_ns = full_ns;
        sort_lengths(vals, b - a);
        an_describe_sorted(vals, b - a, &s->len);
        a = b;
    }
    /* HTA's trace duration: last start - first start of the rank's events */
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < v->n; i++)
        if (v->mult[i]) {
            lo = CP_MIN(lo, v->t0[i]);
            hi = CP_MAX(hi, v->t0[i]);
        }
    out->span_ns = hi > lo ? hi - lo : 0;
    free(vals);
    free(q.kv);
    free(q.streams);
    free(q.devices);
}

size_t an_queue_series(const an_ctx *ctx, const an_view *v, an_counter_track **out)
{
    qchanges q;
    int64_t t_min;
    queue_changes(ctx, v, &q, &t_min);
    an_counter_track *tr = cp_xcalloc(q.n_streams ? q.n_streams : 1, sizeof *tr);
    an_counter_pt *pts = cp_xmalloc((q.n ? q.n : 1) * sizeof *pts); /* one block, split by stream */
    size_t nt = 0;
    for (size_t a = 0, b; a < q.n; a = b) {
        int64_t len = 0;
        an_counter_track *t = &tr[nt++];
        *t = (an_counter_track){ "Queue Length", "Queue Length", q.streams[q.kv[a].key], q.devices[q.kv[a].key],
                                 pts + a, 0, nt == 1 };
        for (b = a; b < q.n && q.kv[b].key == q.kv[a].key; b++) {
            len += q.kv[b].val & 1 ? -1 : 1;
            pts[b] = (an_counter_pt){ t_min + (int64_t)(q.kv[b].val >> 1), (double)len };
        }
        t->n = b - a;
    }
    if (!nt)
        free(pts);
    free(q.kv);
    free(q.streams);
    free(q.devices);
    *out = tr;
    return nt;
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
        an_stats_cells(ctx, row, &s->len);
    }
    static const rep_col fcols[] = {
        { "stream", "stream", NULL, -1 },
        { "time_at_max_ns", "time at max queue length", "ns", -1 },
        { "ratio", "share of the trace duration", NULL, 6 },
    };
    rep_node *o = rep_obj(ctx->rep, parent, "queue_full", "time blocked on a full launch queue");
    rep_int(ctx->rep, o, "max_queue_length", "queue length counted as full", qr->max_length, NULL);
    rep_int(ctx->rep, o, "trace_duration_ns", "last event start - first event start", qr->span_ns, "ns");
    t = rep_table(ctx->rep, o, "streams", "streams that reached the full length", fcols, CP_ARRAY_LEN(fcols));
    for (size_t i = 0; i < qr->n; i++) {
        const an_queue_stream *s = &qr->streams[i];
        if (!s->full)
            continue;
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_int(ctx->rep, row, s->stream);
        rep_cell_int(ctx->rep, row, s->full_ns);
        if (qr->span_ns > 0)
            rep_cell_num(ctx->rep, row, (double)s->full_ns / (double)qr->span_ns);
        else
            rep_cell_null(ctx->rep, row);
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
