/* an_counters.c - the `counters` analyzer: the counter tracks HTA adds to a
 * trace (TraceAnalysis.generate_trace_with_counters, QUEUE_LENGTH |
 * MEMCPY_BANDWIDTH), per rank, in both views.
 *
 * The tracks are the launch queue length per stream (an_queue_series) and
 * the memory bandwidth per copy kind (an_membw_series): the same series
 * whose statistics `queue_length[]` and `memory_bw[]` report, so the
 * counters in a trace and the numbers in the report cannot disagree. The
 * report gets each track's size and range (`counter_tracks`); the points
 * themselves go only into the Perfetto overlay (`analyze -o
 * FILE.perfetto.json`, exact view), as Chrome counter events ("ph":"C"),
 * which the cli asks for through an_counter_tracks when it writes one.
 * Series are computed again there rather than kept: a trace of millions of
 * kernels would hold two points each, in two views, for every run. The
 * report's queue rows take their sizes and ranges from the queue analyzer's
 * statistics of the same series when it ran (queue_result), so `analyze`
 * builds and sorts the queue changes once a view, not twice.
 *
 * HTA differences: HTA writes a memory kind's copies without a bandwidth
 * argument as NaN points; they add nothing here (as in `memory_bw[]`).
 */
#include "an_results.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct ctr_track {
    const char *name;
    int64_t stream;
    int32_t device;
    size_t events;
    double min, max;
} ctr_track;

typedef struct ctr_rank {
    ctr_track *tracks;
    size_t n;
    size_t events;
} ctr_rank;

size_t an_counter_tracks_of(const an_ctx *ctx, const an_view *v, an_counter_track **out)
{
    an_counter_track *q, *m;
    size_t nq = an_queue_series(ctx, v, &q), nm = an_membw_series(ctx, v, &m);
    an_counter_track *all = cp_xmalloc((nq + nm ? nq + nm : 1) * sizeof *all);
    if (nq)
        memcpy(all, q, nq * sizeof *all);
    if (nm)
        memcpy(all + nq, m, nm * sizeof *all);
    free(q); /* the structs moved; their points stay with the copies */
    free(m);
    *out = all;
    return nq + nm;
}

/* The queue analyzer's result for view v when it ran (NULL otherwise): its
 * per-stream statistics are of the very series an_queue_series builds (one
 * sample a point, in the same stream order), so their count, min and max
 * are the queue tracks' sizes and ranges without building the series again
 * (a sort of two changes a GPU event, per view). */
static const an_queue_rank *queue_result(const an_ctx *ctx, const an_view *v)
{
    if (!v->n)
        return NULL;
    size_t r = ctx->tl->tracks[ctx->tl->track[v->base]].rank_index;
    const an_rank_views *rv = an_views(ctx, r);
    if (!rv || (&rv->hta != v && &rv->exact != v))
        return NULL;
    return an_dual_get(ctx, AN_queue, r, v->exact);
}

static void add_tracks(ctr_rank *out, const an_counter_track *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ctr_track *c = &out->tracks[out->n++];
        *c = (ctr_track){ t[i].name, t[i].stream, t[i].device, t[i].n, 0, 0 };
        for (size_t k = 0; k < t[i].n; k++) {
            double x = t[i].pts[k].value;
            c->min = k && c->min <= x ? c->min : x;
            c->max = k && c->max >= x ? c->max : x;
        }
        out->events += t[i].n;
    }
}

static void compute(const an_ctx *ctx, const an_view *v, void *outp)
{
    ctr_rank *out = outp;
    memset(out, 0, sizeof *out);
    const an_queue_rank *qr = queue_result(ctx, v);
    an_counter_track *t;
    if (!qr) {
        size_t n = an_counter_tracks_of(ctx, v, &t);
        out->tracks = cp_xcalloc(n ? n : 1, sizeof *out->tracks);
        add_tracks(out, t, n);
        an_counter_tracks_free(t, n);
        return;
    }
    size_t nm = an_membw_series(ctx, v, &t);
    out->tracks = cp_xcalloc(qr->n + nm ? qr->n + nm : 1, sizeof *out->tracks);
    for (size_t i = 0; i < qr->n; i++) {
        const an_queue_stream *s = &qr->streams[i];
        out->tracks[out->n++] = (ctr_track){ "Queue Length", s->stream, s->device, s->len.count, s->len.min, s->len.max };
        out->events += s->len.count;
    }
    add_tracks(out, t, nm);
    an_counter_tracks_free(t, nm);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *outp)
{
    const ctr_rank *cr = outp;
    rep_node *o = rep_obj(ctx->rep, parent, "counter_tracks", "counter tracks of the Perfetto overlay (HTA's trace with counters)");
    rep_int(ctx->rep, o, "events", "counter events (points) over all tracks", (int64_t)cr->events, NULL);
    static const rep_col cols[] = {
        { "name", "counter", NULL, -1 },  { "stream", "stream (queue length)", NULL, -1 },
        { "device", "GPU", NULL, -1 },    { "events", "points", NULL, -1 },
        { "min", "lowest value", NULL, 2 }, { "max", "highest value", NULL, 2 },
    };
    rep_node *t = rep_table(ctx->rep, o, "tracks", "one per stream (Queue Length) and memory kind (GB/s)", cols,
                            CP_ARRAY_LEN(cols));
    t->flags |= REP_F_NO_TEXT;
    for (size_t i = 0; i < cr->n; i++) {
        const ctr_track *c = &cr->tracks[i];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, c->name);
        if (c->stream >= 0)
            rep_cell_int(ctx->rep, row, c->stream);
        else
            rep_cell_null(ctx->rep, row);
        rep_cell_int(ctx->rep, row, c->device);
        rep_cell_int(ctx->rep, row, (int64_t)c->events);
        rep_cell_num(ctx->rep, row, c->min);
        rep_cell_num(ctx->rep, row, c->max);
    }
}

static void free_rank(void *outp) { free(((ctr_rank *)outp)->tracks); }

int an_counters_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(ctr_rank), compute, emit, free_rank };
    return an_run_dual(ctx, AN_counters, &ops);
}
