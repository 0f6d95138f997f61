/* an_overlap.c - the `overlap` analyzer: how much communication is hidden
 * under computation, per rank, in both views.
 *
 * overlap_pct = |union(compute) ∩ union(comm)| / |union(comm)| * 100, as
 * HTA's CommunicationAnalysis.get_comm_comp_overlap defines it; null when
 * the rank has no communication kernels. The numbers are also stored in
 * the temporal results (comm_ns, comm_compute_overlap_ns, overlap_pct).
 */
#include "an_results.h"

#include <math.h>
#include <stdlib.h>

void an_overlap_compute(const an_view *v, an_temporal *t)
{
    int64_t *comp, *comm;
    size_t nc = an_union(v, AN_KT_COMPUTE, &comp), nm = an_union(v, AN_KT_COMM, &comm);
    t->comm_ns = an_union_len(comm, nm);
    t->comm_compute_overlap_ns = an_intersect_len(comp, nc, comm, nm);
    t->overlap_pct = t->comm_ns > 0 ? 100.0 * (double)t->comm_compute_overlap_ns / (double)t->comm_ns : NAN;
    free(comp);
    free(comm);
}

int an_overlap_run(an_ctx *ctx)
{
    for (size_t r = 0; r < ctx->tl->n_ranks; r++) {
        const an_rank_views *rv = an_views(ctx, r);
        for (int x = 0; x < 2; x++) {
            an_temporal *t = an_dual_get(ctx, AN_temporal, r, x);
            if (!t || !rv)
                return -1;
            an_overlap_compute(x ? &rv->exact : &rv->hta, t);
            rep_num(ctx->rep, an_view_node(ctx, r, x), "overlap_pct", "communication hidden under compute",
                    t->overlap_pct, "%");
        }
    }
    return 0;
}
