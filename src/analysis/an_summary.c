/* an_summary.c - one row per rank with the headline numbers.
 *
 * The per-rank objects hold every analysis in full; a job of 256 ranks
 * needs a view that fits on a screen. This table repeats, per rank, the
 * numbers users compare first (HTA's temporal breakdown and overlap, our
 * exact ones, and step time), so the text report can show it and leave the
 * per-rank detail to --detail, JSON and CSV. It computes nothing new: every
 * value is the same number the rank's own object carries.
 */
#include "an_results.h"
#include "../base/util.h"

#include <math.h>

int an_summary_run(an_ctx *ctx)
{
    static const rep_col cols[] = {
        { "rank", "rank", NULL, -1 },
        { "kernel_time_ns", "GPU span", "ns", -1 },
        { "idle_pct", "idle", "%", 2 },
        { "compute_pct", "compute", "%", 2 },
        { "noncompute_pct", "non-compute", "%", 2 },
        { "overlap_pct", "overlap", "%", 2 },
        { "exact_idle_pct", "idle (exact)", "%", 2 },
        { "exact_overlap_pct", "overlap (exact)", "%", 2 },
        { "steps", "steps", NULL, -1 },
        { "step_p50_ns", "step p50", "ns", -1 },
        { "step_max_ns", "step max", "ns", -1 },
    };
    rep_node *t = rep_table(ctx->rep, ctx->rep->root, "rank_summary",
                            "per-rank summary (HTA definitions; exact = every event, exact ns)", cols,
                            CP_ARRAY_LEN(cols));
    const an_steps_result *steps = ctx->results[AN_steps];
    for (size_t r = 0; r < ctx->tl->n_ranks; r++) {
        const an_temporal *h = an_dual_get(ctx, AN_temporal, r, false);
        const an_temporal *x = an_dual_get(ctx, AN_temporal, r, true);
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_int(ctx->rep, row, ctx->tl->ranks[r].meta.rank);
        if (h && h->has_gpu)
            rep_cell_int(ctx->rep, row, h->kernel_time_ns);
        else
            rep_cell_null(ctx->rep, row);
        rep_cell_num(ctx->rep, row, h ? h->idle_pct : NAN);
        rep_cell_num(ctx->rep, row, h ? h->compute_pct : NAN);
        rep_cell_num(ctx->rep, row, h ? h->noncompute_pct : NAN);
        rep_cell_num(ctx->rep, row, h ? h->overlap_pct : NAN);
        rep_cell_num(ctx->rep, row, x ? x->idle_pct : NAN);
        rep_cell_num(ctx->rep, row, x ? x->overlap_pct : NAN);
        const an_rank_steps *s = steps && r < steps->n_ranks ? &steps->ranks[r] : NULL;
        rep_cell_int(ctx->rep, row, s ? (int64_t)s->n : 0);
        if (s && s->n) {
            rep_cell_int(ctx->rep, row, (int64_t)llround(s->p50_ns));
            rep_cell_int(ctx->rep, row, (int64_t)llround(s->max_ns));
        } else {
            rep_cell_null(ctx->rep, row);
            rep_cell_null(ctx->rep, row);
        }
    }
    return 0;
}
