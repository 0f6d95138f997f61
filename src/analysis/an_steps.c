/* an_steps.c - the `steps` analyzer: profiler steps per rank.
 *
 * A step is a CPU-side "ProfilerStep#N" annotation (the PyTorch profiler
 * writes one per iteration). Per rank: the steps with id, start and
 * duration in exact ns, which of them HTA drops (the last one when the
 * trace set has two or more step names; see an_view.c), and mean / p50 /
 * p95 / max step time over every step (none dropped). The step boundaries
 * are left in ctx->results[AN_steps] for the findings engine.
 */
#include "an_results.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void steps_free(void *self)
{
    an_steps_result *r = self;
    for (size_t i = 0; i < r->n_ranks; i++)
        free(r->ranks[i].steps);
    free(r->ranks);
    free(r);
}

static int cmp_step(const void *pa, const void *pb)
{
    const an_step *a = pa, *b = pb;
    if (a->start_ns != b->start_ns)
        return a->start_ns < b->start_ns ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static void collect(const an_ctx *ctx, size_t r, an_rank_steps *out)
{
    const tl_timeline *tl = ctx->tl;
    const tl_rank *rk = &tl->ranks[r];
    const an_rank_views *rv = an_views(ctx, r);
    size_t cap = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        if (tl->tracks[t].key.kind != TL_TRACK_CPU)
            continue;
        for (size_t e = tl->tracks[t].ev_begin; e < tl->tracks[t].ev_end; e++) {
            const char *nm = tl_str(tl, tl->name[e]);
            if (strncmp(nm, "ProfilerStep#", 13) != 0 || nm[13] < '0' || nm[13] > '9')
                continue;
            cp_xgrow((void **)&out->steps, &cap, out->n + 1, sizeof *out->steps);
            an_step *s = &out->steps[out->n++];
            s->id = strtoll(nm + 13, NULL, 10);
            s->start_ns = tl->ts_ns[e];
            s->dur_ns = tl->dur_ns[e];
            s->ev = e;
            s->hta_dropped = false;
            if (rv && rv->hta.dropped_last_step)
                s->hta_dropped = rv->hta.t0[e - rv->hta.base] >= rv->hta.last_step_start_ns;
        }
    }
    if (out->n > 1)
        qsort(out->steps, out->n, sizeof *out->steps, cmp_step);
    out->mean_ns = out->p50_ns = out->p95_ns = out->max_ns = NAN;
    if (!out->n)
        return;
    double *d = cp_xmalloc(out->n * sizeof *d), sum = 0;
    for (size_t i = 0; i < out->n; i++) {
        d[i] = (double)out->steps[i].dur_ns;
        sum += d[i];
    }
    qsort(d, out->n, sizeof *d, an_cmp_double);
    out->mean_ns = sum / (double)out->n;
    out->p50_ns = an_quantile_sorted(d, out->n, 0.5);
    out->p95_ns = an_quantile_sorted(d, out->n, 0.95);
    out->max_ns = d[out->n - 1];
    free(d);
}

int an_steps_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    an_steps_result *res = cp_xcalloc(1, sizeof *res);
    res->free = steps_free;
    res->n_ranks = tl->n_ranks;
    res->ranks = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *res->ranks);
    ctx->results[AN_steps] = res;
    static const rep_col cols[] = {
        { "id", "step", NULL, -1 },
        { "start_ns", "start", "ns", -1 },
        { "dur_ns", "duration", "ns", -1 },
        { "hta_dropped", "dropped by HTA", NULL, -1 },
    };
    for (size_t r = 0; r < tl->n_ranks; r++) {
        an_rank_steps *rs = &res->ranks[r];
        collect(ctx, r, rs);
        rep_node *t = rep_table(ctx->rep, ctx->rank_nodes[r], "steps", "profiler steps", cols, CP_ARRAY_LEN(cols));
        for (size_t i = 0; i < rs->n; i++) {
            rep_node *row = rep_row(ctx->rep, t);
            rep_cell_int(ctx->rep, row, rs->steps[i].id);
            rep_cell_int(ctx->rep, row, rs->steps[i].start_ns - tl->t0_ns);
            rep_cell_int(ctx->rep, row, rs->steps[i].dur_ns);
            rep_cell_bool(ctx->rep, row, rs->steps[i].hta_dropped);
        }
        rep_node *o = rep_obj(ctx->rep, ctx->rank_nodes[r], "step_time", "step time (every step)");
        rep_int(ctx->rep, o, "count", "steps", (int64_t)rs->n, NULL);
        rep_num(ctx->rep, o, "mean_ns", "mean", rs->mean_ns, "ns");
        rep_num(ctx->rep, o, "p50_ns", "p50", rs->p50_ns, "ns");
        rep_num(ctx->rep, o, "p95_ns", "p95", rs->p95_ns, "ns");
        rep_num(ctx->rep, o, "max_ns", "max", rs->max_ns, "ns");
    }
    return 0;
}
