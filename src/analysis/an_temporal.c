/* an_temporal.c - the `temporal` analyzer: idle / compute / non-compute
 * time per rank, in both views.
 *
 * HTA's definitions (BreakdownAnalysis.get_temporal_breakdown), applied to
 * a view's GPU events: kernel_time = end of the last minus start of the
 * first; idle = kernel_time - |union of all GPU events|; compute = |union of
 * compute kernels|; non-compute = kernel_time - compute - idle (communication
 * and memory time not hidden under compute; since 2025 HTA types sync,
 * wait and device bookkeeping events OTHER: busy, but not compute). The HTA
 * view counts whatever
 * HTA counts as a kernel (sync events with a stream, rounded times, last
 * step dropped); the exact view counts real GPU work in exact ns.
 */
#include "an_results.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>

void an_temporal_compute(const an_view *v, an_temporal *t)
{
    int64_t *all, *comp;
    size_t na = an_union(v, AN_KT_ANY, &all), nc = an_union(v, AN_KT_COMPUTE, &comp);
    t->has_gpu = na > 0;
    t->kernel_time_ns = na ? all[2 * na - 1] - all[0] : 0;
    t->idle_ns = t->kernel_time_ns - an_union_len(all, na);
    t->compute_ns = an_union_len(comp, nc);
    t->noncompute_ns = t->kernel_time_ns - t->compute_ns - t->idle_ns;
    double kt = (double)t->kernel_time_ns;
    t->idle_pct = kt > 0 ? 100.0 * (double)t->idle_ns / kt : NAN;
    t->compute_pct = kt > 0 ? 100.0 * (double)t->compute_ns / kt : NAN;
    t->noncompute_pct = kt > 0 ? 100.0 * (double)t->noncompute_ns / kt : NAN;
    t->overlap_pct = NAN;
    free(all);
    free(comp);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *out)
{
    const an_temporal *t = out;
    rep_node *o = rep_obj(ctx->rep, parent, "temporal", "temporal breakdown");
    if (!t->has_gpu) {
        static const char *const keys[] = { "kernel_time_ns", "idle_ns", "compute_ns", "noncompute_ns" };
        for (size_t k = 0; k < CP_ARRAY_LEN(keys); k++)
            rep_null(ctx->rep, o, keys[k], NULL, "ns");
        rep_null(ctx->rep, o, "idle_pct", "idle", "%");
        rep_null(ctx->rep, o, "compute_pct", "compute", "%");
        rep_null(ctx->rep, o, "noncompute_pct", "non-compute", "%");
        return;
    }
    rep_int(ctx->rep, o, "kernel_time_ns", "GPU span", t->kernel_time_ns, "ns");
    rep_int(ctx->rep, o, "idle_ns", "idle", t->idle_ns, "ns");
    rep_int(ctx->rep, o, "compute_ns", "compute", t->compute_ns, "ns");
    rep_int(ctx->rep, o, "noncompute_ns", "non-compute", t->noncompute_ns, "ns");
    rep_num(ctx->rep, o, "idle_pct", "idle", t->idle_pct, "%");
    rep_num(ctx->rep, o, "compute_pct", "compute", t->compute_pct, "%");
    rep_num(ctx->rep, o, "noncompute_pct", "non-compute", t->noncompute_pct, "%");
}

static void compute(const an_ctx *ctx, const an_view *v, void *out)
{
    (void)ctx;
    an_temporal_compute(v, out);
}

int an_temporal_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(an_temporal), compute, emit, NULL };
    return an_run_dual(ctx, AN_temporal, &ops);
}
