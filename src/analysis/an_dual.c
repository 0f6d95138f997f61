/* an_dual.c - the driver every two-view analyzer shares.
 *
 * Most trace analyzers compute one per-rank result from the HTA-compatible
 * view and one from the exact view, in parallel over ranks, then write the
 * HTA result under the rank's report object and the exact one under its
 * "exact" object (on the calling thread: the report is not thread-safe).
 * an_run_dual does that from a small table of operations, and owns the
 * result arrays (an_dual_result, released through ops->free_rank).
 */
#include "an_results.h"
#include "../base/par.h"
#include "../base/util.h"

#include <stdlib.h>

static void dual_free(void *self)
{
    an_dual_result *d = self;
    for (size_t r = 0; r < d->n_ranks && d->ops->free_rank; r++) {
        d->ops->free_rank((char *)d->hta + r * d->ops->elem);
        d->ops->free_rank((char *)d->exact + r * d->ops->elem);
    }
    free(d->hta);
    free(d->exact);
    free(d);
}

typedef struct dual_job {
    an_ctx *ctx;
    an_dual_result *d;
} dual_job;

static void compute_rank(void *job, size_t r)
{
    const dual_job *j = job;
    const an_rank_views *rv = an_views(j->ctx, r);
    const an_dual_ops *ops = j->d->ops;
    ops->compute(j->ctx, &rv->hta, (char *)j->d->hta + r * ops->elem);
    ops->compute(j->ctx, &rv->exact, (char *)j->d->exact + r * ops->elem);
}

int an_run_dual(an_ctx *ctx, an_id id, const an_dual_ops *ops)
{
    size_t n = ctx->tl->n_ranks;
    if (n && !an_views(ctx, 0))
        return -1;
    an_dual_result *d = cp_xcalloc(1, sizeof *d);
    d->free = dual_free;
    d->n_ranks = n;
    d->ops = ops;
    d->hta = cp_xcalloc(n ? n : 1, ops->elem);
    d->exact = cp_xcalloc(n ? n : 1, ops->elem);
    ctx->results[id] = d;
    dual_job job = { ctx, d };
    cp_par_for(n, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, compute_rank, &job);
    for (size_t r = 0; r < n; r++) {
        ops->emit(ctx, an_view_node(ctx, r, false), (char *)d->hta + r * ops->elem);
        ops->emit(ctx, an_view_node(ctx, r, true), (char *)d->exact + r * ops->elem);
    }
    return 0;
}

void *an_dual_get(const an_ctx *ctx, an_id id, size_t r, bool exact)
{
    const an_dual_result *d = ctx->results[id];
    if (!d || r >= d->n_ranks)
        return NULL;
    return (char *)(exact ? d->exact : d->hta) + r * d->ops->elem;
}
