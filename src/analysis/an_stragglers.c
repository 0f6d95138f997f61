/* an_stragglers.c - which rank holds the others back, in which steps, and
 * through which layer.
 *
 * Design
 * - In a synchronous job every rank's step lasts as long as the slowest
 *   rank's, so step time does not single out the culprit: the others absorb
 *   its lateness as wait inside the next collective. What differs is a
 *   rank's own time, step duration minus its wait in collectives (from
 *   an_collectives' cross-rank match). A straggler has the largest own time.
 * - Per step (matched by ProfilerStep id across ranks), own times are
 *   compared with a robust outlier rule: own > median + k * 1.4826 * MAD
 *   with k = 3.5 (Iglewicz and Hoaglin's modified z-score threshold; 1.4826
 *   makes the MAD a consistent estimator of the standard deviation for
 *   normal data), and own > median * (1 + 5 %) so that ranks that agree to
 *   the nanosecond (MAD = 0) are not flagged for noise. At least 3 ranks are
 *   needed for a median to mean anything.
 * - The layer that makes a flagged rank slow is the one (among compute,
 *   host, storage, intra, idle -- communication excluded since it is where
 *   the others wait) whose exposed time exceeds the per-step median of that
 *   layer by the most, summed over the flagged steps.
 */
#include "an_verdict.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRAGGLER_K 3.5
#define MAD_SCALE 1.4826
#define MIN_REL_EXCESS 0.05

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Median of n values (copied, sorted); as double so even counts average. */
static double median_i64(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, i64_cmp);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static const cp_layer blame_layers[] = { CP_LAYER_COMPUTE, CP_LAYER_HOST, CP_LAYER_STORAGE, CP_LAYER_INTRA, CP_LAYER_IDLE };

typedef struct acc {
    size_t n_steps, cap;
    int64_t *steps;
    double pct_sum;
    int64_t excess_ns;
    int64_t layer_excess[CP_LAYER__COUNT];
} acc;

static void free_result(void *self)
{
    an_stragglers_result *sr = self;
    for (size_t i = 0; i < sr->n; i++)
        free(sr->v[i].steps);
    free(sr->v);
    free(sr);
}

int an_stragglers_run(an_ctx *ctx)
{
    rep_report *rp = ctx->rep;
    const an_layers_result *lr = ctx->results[AN_layers];
    an_stragglers_result *sr = cp_xcalloc(1, sizeof *sr);
    sr->free = free_result;
    sr->k = STRAGGLER_K;
    ctx->results[AN_stragglers] = sr;
    int rc;
    an_layers_result *job = an_layers_job(ctx, lr, &rc); /* every rank's, under mpirun too */
    if (!job)
        return rc;
    size_t nr = job->n_ranks;
    const an_rank_layers *ranks = job->ranks;
    acc *a = cp_xcalloc(nr ? nr : 1, sizeof *a);

    /* step ids: the union over ranks, sorted */
    int64_t *ids = NULL;
    size_t nid = 0, capid = 0;
    for (size_t r = 0; r < nr; r++)
        for (size_t s = 0; s < ranks[r].n_steps; s++) {
            cp_xgrow((void **)&ids, &capid, nid + 1, sizeof *ids);
            ids[nid++] = ranks[r].steps[s].id;
        }
    if (nid)
        qsort(ids, nid, sizeof *ids, i64_cmp);
    int64_t *own = cp_xcalloc(nr ? nr : 1, sizeof *own), *tmp = cp_xcalloc(nr ? nr : 1, sizeof *tmp);
    const an_step_layers **st = cp_xcalloc(nr ? nr : 1, sizeof *st);
    size_t steps_compared = 0;
    for (size_t i = 0; i < nid; i++) {
        if (i && ids[i] == ids[i - 1])
            continue;
        size_t m = 0;
        for (size_t r = 0; r < nr; r++) {
            st[r] = an_step_by_id(&ranks[r], ids[i]);
            if (st[r]) {
                own[r] = st[r]->dur_ns - st[r]->comm_wait_ns;
                tmp[m++] = own[r];
            }
        }
        if (m < 3)
            continue;
        steps_compared++;
        double med = median_i64(tmp, m);
        for (size_t r = 0, k = 0; r < nr; r++)
            if (st[r])
                tmp[k++] = (int64_t)fabs((double)own[r] - med);
        double mad = median_i64(tmp, m);
        double thr = CP_MAX(med + STRAGGLER_K * MAD_SCALE * mad, med * (1 + MIN_REL_EXCESS));
        for (size_t r = 0; r < nr; r++) {
            if (!st[r] || (double)own[r] <= thr)
                continue;
            acc *x = &a[r];
            cp_xgrow((void **)&x->steps, &x->cap, x->n_steps + 1, sizeof *x->steps);
            x->steps[x->n_steps++] = ids[i];
            x->pct_sum += med > 0 ? 100.0 * ((double)own[r] - med) / med : 0;
            x->excess_ns += (int64_t)((double)own[r] - med);
            for (size_t b = 0; b < CP_ARRAY_LEN(blame_layers); b++) {
                cp_layer l = blame_layers[b];
                size_t k = 0;
                for (size_t q = 0; q < nr; q++)
                    if (st[q])
                        tmp[k++] = st[q]->exposed_ns[l];
                x->layer_excess[l] += st[r]->exposed_ns[l] - (int64_t)median_i64(tmp, k);
            }
        }
    }
    free(own);
    free(tmp);
    free(st);
    free(ids);

    static const rep_col cols[] = {
        { "rank", "rank", NULL, -1 },           { "layer", "layer", NULL, -1 },
        { "slowdown_pct", "slower by", "%", 1 }, { "n_steps", "steps flagged", NULL, -1 },
        { "of_steps", "of", NULL, -1 },         { "excess_ns", "time lost", "ns", -1 },
        { "steps", "steps", NULL, -1 },
    };
    rep_node *tab = rep_table(rp, rp->root, "stragglers", "straggler ranks (median + 3.5 MAD)", cols,
                              CP_ARRAY_LEN(cols));
    for (size_t r = 0; r < nr; r++) {
        acc *x = &a[r];
        if (!x->n_steps) {
            free(x->steps);
            continue;
        }
        cp_layer best = CP_LAYER_COMPUTE;
        for (size_t b = 0; b < CP_ARRAY_LEN(blame_layers); b++)
            if (x->layer_excess[blame_layers[b]] > x->layer_excess[best])
                best = blame_layers[b];
        sr->v = cp_xrealloc(sr->v, (sr->n + 1) * sizeof *sr->v);
        an_straggler *s = &sr->v[sr->n++];
        s->rank = ranks[r].rank;
        s->n_steps = x->n_steps;
        s->steps = x->steps;
        s->layer = best;
        s->slowdown_pct = x->pct_sum / (double)x->n_steps;
        s->excess_ns = x->excess_ns;
    }
    free(a);
    an_layers_job_free(lr, job);
    /* most time lost first */
    for (size_t i = 1; i < sr->n; i++)
        for (size_t j = i; j > 0 && sr->v[j].excess_ns > sr->v[j - 1].excess_ns; j--) {
            an_straggler t = sr->v[j];
            sr->v[j] = sr->v[j - 1];
            sr->v[j - 1] = t;
        }
    for (size_t i = 0; i < sr->n; i++) {
        const an_straggler *s = &sr->v[i];
        rep_node *row = rep_row(rp, tab);
        rep_cell_int(rp, row, s->rank);
        rep_cell_str(rp, row, cp_layer_key(s->layer));
        rep_cell_num(rp, row, s->slowdown_pct);
        rep_cell_int(rp, row, (int64_t)s->n_steps);
        rep_cell_int(rp, row, (int64_t)steps_compared);
        rep_cell_int(rp, row, s->excess_ns);
        rep_node *arr = rep_arr(rp, row, "steps", "steps");
        for (size_t k = 0; k < s->n_steps; k++)
            rep_int(rp, arr, NULL, NULL, s->steps[k], NULL);
    }
    return 0;
}
