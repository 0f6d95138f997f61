/* an_annotations.c - the `annotations` analyzer: user annotation breakdown.
 *
 * CPU annotations (category user_annotation: record_function ranges,
 * ProfilerStep#N, "## forward ##"...) and GPU annotations
 * (gpu_user_annotation: the same ranges as the GPU executed them) are
 * grouped by name with count, total, mean, min, max and sample std of their
 * durations (HTA's get_gpu_user_annotation_breakdown with every name kept).
 * Every GPU event of the view is then attributed to the innermost GPU
 * annotation it overlaps (the shortest one; HTA's
 * get_gpu_kernels_with_user_annotations picks the leaf of the stack), and
 * the kernels per annotation are counted. A sweep over both start-sorted
 * lists keeps only the annotations open at the kernel's start, so the cost
 * is O(n log n) plus the nesting depth per kernel.
 *
 * Folding (HTA _aggr_gpu_kernel_time with num_kernels, duration_ratio 0.8
 * and allowlist_patterns): with more names than --annotation-top (HTA's
 * default 1000), a name past the top or whose cumulative total exceeds the
 * 0.8 quantile of the cumulative totals joins "others", unless it contains
 * one of the --annotation-keep strings (HTA escapes its patterns, so they
 * are substrings). HTA then recomputes every row from the per-name totals
 * (a kept row's mean, min and max are its total, "others" the spread of
 * totals): the HTA view reports that, the exact view true per-event
 * statistics with "others" pooling the folded events.
 */
#include "an_results.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_by_t0(const void *pa, const void *pb, void *ctx)
{
    const an_view *v = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (v->t0[a] != v->t0[b])
        return v->t0[a] < v->t0[b] ? -1 : 1;
    return (a > b) - (a < b);
}

static size_t groups_of(const an_ctx *ctx, const an_view *v, tl_cat cat, an_group **out, size_t **idx_out,
                        size_t *n_idx)
{
    const tl_timeline *tl = ctx->tl;
    size_t m = v->n ? v->n : 1, k = 0;
    uint32_t *names = cp_xmalloc(m * sizeof *names);
    int64_t *durs = cp_xmalloc(m * sizeof *durs);
    size_t *idx = cp_xmalloc(m * sizeof *idx);
    for (size_t i = 0; i < v->n; i++)
        if (v->mult[i] && tl->cat[v->base + i] == cat)
            for (uint32_t r = 0; r < v->mult[i]; r++) {
                names[k] = tl->name[v->base + i];
                durs[k] = v->t1[i] - v->t0[i];
                idx[k++] = i;
            }
    size_t ng = an_group_by_name(names, durs, k, out);
    free(names);
    free(durs);
    if (idx_out) {
        *idx_out = idx;
        *n_idx = k;
    } else {
        free(idx);
    }
    return ng;
}

static bool keep_name(const an_opts *o, const char *name)
{
    for (size_t k = 0; o && k < o->n_annot_keep; k++)
        if (o->annot_keep[k][0] && strstr(name, o->annot_keep[k]))
            return true;
    return false;
}

/* HTA's folding of groups sorted by descending total (see the top). */
static size_t fold(const an_ctx *ctx, an_group *g, size_t ng, bool *folded, an_group *sums)
{
    const an_opts *o = ctx->opts;
    size_t top = o && o->annot_top > 0 ? (size_t)o->annot_top : AN_ANNOT_TOP_DEFAULT;
    *folded = false;
    if (ng <= top)
        return ng;
    bool *keep = cp_xmalloc(ng * sizeof *keep), *other = cp_xmalloc(ng * sizeof *other);
    for (size_t k = 0; k < ng; k++)
        keep[k] = keep_name(o, tl_str(ctx->tl, g[k].name));
    size_t n_other = an_fold_others(g, ng, top, AN_TOP_RATIO, keep, other), w = 0;
    an_group others;
    an_fold_merge(g, ng, other, &others, sums);
    for (size_t k = 0; k < ng; k++)
        if (!other[k])
            g[w++] = g[k];
    if (n_other)
        g[w++] = others; /* last: the kept names stay in total order */
    free(keep);
    free(other);
    *folded = true;
    return w;
}

void an_annotations_compute(const an_ctx *ctx, const an_view *v, an_annot_rank *out)
{
    memset(out, 0, sizeof *out);
    out->exact = v->exact;
    out->n_cpu = groups_of(ctx, v, TL_CAT_USER_ANNOTATION, &out->cpu, NULL, NULL);
    out->n_cpu = fold(ctx, out->cpu, out->n_cpu, &out->cpu_folded, &out->cpu_others_sums);
    size_t *ann, na;
    out->n_gpu = groups_of(ctx, v, TL_CAT_GPU_USER_ANNOTATION, &out->gpu, &ann, &na);
    out->n_gpu = fold(ctx, out->gpu, out->n_gpu, &out->gpu_folded, &out->gpu_others_sums);
    if (na > 1)
        qsort_r(ann, na, sizeof *ann, cmp_by_t0, (void *)v);
    /* attribution sweep */
    size_t *active = cp_xmalloc((na ? na : 1) * sizeof *active), nact = 0, j = 0;
    uint32_t *names = cp_xmalloc((v->n_gpu ? v->n_gpu : 1) * sizeof *names);
    int64_t *ones = cp_xmalloc((v->n_gpu ? v->n_gpu : 1) * sizeof *ones); /* sum = count: sorts by count */
    size_t nk = 0, row_cap = 0;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t g = v->gpu[k];
        int64_t s = v->t0[g], e = CP_MAX(v->t1[g], s + 1);
        while (j < na && v->t0[ann[j]] <= s)
            active[nact++] = ann[j++];
        size_t w = 0; /* drop annotations that ended */
        for (size_t a = 0; a < nact; a++)
            if (v->t1[active[a]] > s)
                active[w++] = active[a];
        nact = w;
        size_t best = SIZE_MAX;
        int64_t best_len = INT64_MAX;
        for (size_t a = 0; a < nact; a++) {
            int64_t len = v->t1[active[a]] - v->t0[active[a]];
            if (len < best_len || (best != SIZE_MAX && len == best_len && v->t0[active[a]] >= v->t0[best])) {
                best = active[a];
                best_len = len;
            }
        }
        for (size_t f = j; f < na && v->t0[ann[f]] < e; f++) { /* starting inside the kernel */
            int64_t len = v->t1[ann[f]] - v->t0[ann[f]];
            if (v->t1[ann[f]] > s && len < best_len) {
                best = ann[f];
                best_len = len;
            }
        }
        out->gpu_kernels++;
        if (best == SIZE_MAX)
            out->unattributed++;
        else {
            ones[nk] = 1;
            names[nk++] = ctx->tl->name[v->base + best];
            if (ctx->opts && ctx->opts->launch_table) {
                cp_xgrow((void **)&out->rows, &row_cap, out->n_rows + 1, sizeof *out->rows);
                out->rows[out->n_rows++] = (struct an_annot_kernel){ v->base + v->gpu[k], ctx->tl->name[v->base + best] };
            }
        }
    }
    out->n_kernels_groups = an_group_by_name(names, ones, nk, &out->kernels);
    free(names);
    free(ones);
    free(active);
    free(ann);
}

/* folded: the HTA view of a folded table (rows from the per-name totals, sums
 * those of "others"); NULL otherwise. */
static void emit_groups(an_ctx *ctx, rep_node *parent, const char *key, const char *title, const an_group *g,
                        size_t n, const an_group *folded)
{
    static const rep_col cols[] = {
        { "name", "annotation", NULL, -1 }, { "count", "count", NULL, -1 },
        { "sum_ns", "total", "ns", -1 },    { "mean_ns", "mean", "ns", -1 },
        { "min_ns", "min", "ns", -1 },      { "max_ns", "max", "ns", -1 },
        { "std_ns", "std", "ns", -1 },
    };
    rep_node *t = rep_table(ctx->rep, parent, key, title, cols, CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < n; i++) {
        /* HTA's folded rows: a kept name is one total; "others" the spread of totals */
        const an_group *s = folded && g[i].name == UINT32_MAX ? folded : NULL;
        an_group one = { g[i].name, 1, g[i].sum_ns, g[i].sum_ns * g[i].sum_ns, (int64_t)g[i].sum_ns,
                         (int64_t)g[i].sum_ns };
        const an_group *st = folded ? (s ? s : &one) : &g[i];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, g[i].name == UINT32_MAX ? "others" : tl_str(ctx->tl, g[i].name));
        rep_cell_int(ctx->rep, row, g[i].count);
        rep_cell_int(ctx->rep, row, (int64_t)g[i].sum_ns);
        rep_cell_num(ctx->rep, row, st->sum_ns / (double)st->count);
        rep_cell_int(ctx->rep, row, st->min_ns);
        rep_cell_int(ctx->rep, row, st->max_ns);
        rep_cell_num(ctx->rep, row, an_group_std(st));
    }
}

static void emit(an_ctx *ctx, rep_node *parent, const void *out)
{
    const an_annot_rank *ar = out;
    rep_node *o = rep_obj(ctx->rep, parent, "annotations", "user annotations");
    emit_groups(ctx, o, "cpu", "CPU annotations", ar->cpu, ar->n_cpu,
                ar->cpu_folded && !ar->exact ? &ar->cpu_others_sums : NULL);
    emit_groups(ctx, o, "gpu", "GPU annotations", ar->gpu, ar->n_gpu,
                ar->gpu_folded && !ar->exact ? &ar->gpu_others_sums : NULL);
    rep_int(ctx->rep, o, "gpu_kernels", "GPU events", ar->gpu_kernels, NULL);
    rep_int(ctx->rep, o, "unattributed_kernels", "GPU events outside any GPU annotation", ar->unattributed, NULL);
    static const rep_col cols[] = {
        { "annotation", "innermost GPU annotation", NULL, -1 },
        { "kernels", "GPU events", NULL, -1 },
    };
    rep_node *t = rep_table(ctx->rep, o, "kernels_by_annotation", "GPU events by innermost annotation", cols,
                            CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < ar->n_kernels_groups; i++) {
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, tl_str(ctx->tl, ar->kernels[i].name));
        rep_cell_int(ctx->rep, row, ar->kernels[i].count);
    }
    if (!(ctx->opts && ctx->opts->launch_table))
        return;
    /* HTA get_gpu_kernels_with_user_annotations: one row per attributed GPU event */
    static const rep_col kcols[] = {
        { "correlation", "correlation", NULL, -1 },
        { "name", "GPU event", NULL, -1 },
        { "short_name", "short name (HTA shorten_name)", NULL, -1 },
        { "annotation", "innermost GPU annotation", NULL, -1 },
    };
    const tl_timeline *tl = ctx->tl;
    t = rep_table(ctx->rep, o, "kernels_with_annotation", "GPU events with their innermost annotation", kcols,
                  CP_ARRAY_LEN(kcols));
    t->flags |= REP_F_NO_TEXT;
    char shortn[512];
    for (size_t i = 0; i < ar->n_rows; i++) {
        size_t ev = ar->rows[i].i;
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_int(ctx->rep, row, tl->corr[ev]);
        rep_cell_str(ctx->rep, row, tl_str(tl, tl->name[ev]));
        rep_cell_str(ctx->rep, row, an_hta_short_name(tl_str(tl, tl->name[ev]), shortn, sizeof shortn));
        rep_cell_str(ctx->rep, row, tl_str(tl, ar->rows[i].annotation));
    }
}

static void compute(const an_ctx *ctx, const an_view *v, void *out)
{
    an_annotations_compute(ctx, v, out);
}

static void free_rank(void *out)
{
    an_annot_rank *a = out;
    free(a->cpu);
    free(a->gpu);
    free(a->kernels);
    free(a->rows);
}

int an_annotations_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(an_annot_rank), compute, emit, free_rank };
    return an_run_dual(ctx, AN_annotations, &ops);
}
