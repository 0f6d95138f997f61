/* an_exact.c - the `exact` analyzer, last in the table: appends each
 * rank's "exact" report object (built detached by an_view_node while the
 * other analyzers ran) to the rank, so that in every output the corrected
 * numbers follow all the HTA-compatible ones instead of interleaving. */
#include "an_results.h"

int an_exact_run(an_ctx *ctx)
{
    an_views_result *vr = ctx->results[AN_view];
    if (!vr)
        return -1;
    for (size_t r = 0; r < vr->n_ranks; r++) {
        rep_node *e = vr->exact_nodes[r], *o = ctx->rank_nodes[r];
        if (!e)
            continue;
        e->parent = o;
        if (o->last)
            o->last->next = e;
        else
            o->first = e;
        o->last = e;
        o->n_children++;
    }
    return 0;
}

