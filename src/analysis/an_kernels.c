/* an_kernels.c - the `kernels` analyzer: GPU kernel breakdown per rank.
 *
 * Two tables per view:
 * - kernel_types: time during which exactly a given set of kernel types
 *   runs ("COMPUTATION", "COMMUNICATION overlapping MEMORY", ...), from a
 *   sweep over the per-type unions (HTA's _get_gpu_kernel_type_time, memory
 *   kernels included), sorted by time;
 * - kernels: per type, the kernels by total time. With more than 10
 *   distinct names, those past the 10th or whose cumulative time exceeds
 *   the 0.8 quantile of the cumulative sums (pandas linear quantile) are
 *   folded into "others". HTA then recomputes every row's statistics from
 *   the per-kernel sums (so a kept kernel's mean, min and max all equal its
 *   sum and "others" reports the spread of sums): the HTA view reproduces
 *   that, the exact view reports true per-event statistics.
 * Rows are ordered by (type name, kernel name), as HTA sorts them.
 */
#include "an_results.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = { "COMPUTATION", "COMMUNICATION", "MEMORY" };
static const int type_bits[] = { AN_KT_COMPUTE, AN_KT_COMM, AN_KT_MEMORY };

const char *an_ktype_label(unsigned mask, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int t = 0; t < 3; t++)
        if (mask & (unsigned)type_bits[t])
            len += (size_t)snprintf(buf + CP_MIN(len, size - 1), size - CP_MIN(len, size - 1), "%s%s",
                                    len ? " overlapping " : "", type_names[t]);
    return buf;
}

static const char *type_name(int ktype)
{
    for (int t = 0; t < 3; t++)
        if (type_bits[t] == ktype)
            return type_names[t];
    return "?";
}

/* Time per combination of kernel types running: the union of each type's
 * intervals (sorted, disjoint), merged in one pass over the three lists;
 * between two consecutive boundaries the set of running types is constant.
 * (A merge instead of sorting every boundary: no memory beyond the unions.) */
static void type_times(const an_view *v, int64_t *mask_ns)
{
    int64_t *iv[3];
    size_t end[3], at[3] = { 0, 0, 0 }; /* boundaries 2n; even index: a start */
    for (int t = 0; t < 3; t++)
        end[t] = 2 * an_union(v, (unsigned)type_bits[t], &iv[t]);
    int running = 0;
    int64_t prev = 0;
    bool started = false;
    for (;;) {
        int64_t next = INT64_MAX;
        for (int t = 0; t < 3; t++)
            if (at[t] < end[t])
                next = CP_MIN(next, iv[t][at[t]]);
        if (next == INT64_MAX)
            break;
        if (started && running > 0 && running <= AN_KT_ALL)
            mask_ns[running] += next - prev;
        for (int t = 0; t < 3; t++)
            for (; at[t] < end[t] && iv[t][at[t]] == next; at[t]++)
                running += at[t] % 2 ? -type_bits[t] : type_bits[t];
        prev = next;
        started = true;
    }
    for (int t = 0; t < 3; t++)
        free(iv[t]);
}

static void fill_row(an_kernel_row *r, int ktype, uint32_t name, int64_t count, double sum, double mean,
                     double min, double max, double std)
{
    *r = (an_kernel_row){ ktype, name, count, sum, mean, min, max, std };
}

static void add_type(const an_ctx *ctx, const an_view *v, int ktype, an_kernel_row **rows, size_t *n,
                     size_t *cap)
{
    uint32_t *names = cp_xmalloc((v->n_gpu ? v->n_gpu : 1) * sizeof *names);
    int64_t *durs = cp_xmalloc((v->n_gpu ? v->n_gpu : 1) * sizeof *durs);
    size_t m = 0;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t i = v->gpu[k];
        if (v->ktype[i] != ktype)
            continue;
        names[m] = ctx->tl->name[v->base + i];
        durs[m++] = v->t1[i] - v->t0[i];
    }
    an_group *g;
    size_t ng = an_group_by_name(names, durs, m, &g);
    free(names);
    free(durs);
    /* other[k]: folded into "others" (past the top N, or cumulative time
     * above the quantile; a per-kernel test, as HTA applies it) */
    bool *other = cp_xcalloc(ng ? ng : 1, sizeof *other);
    size_t n_other = an_fold_others(g, ng, AN_TOP_KERNELS, AN_TOP_RATIO, NULL, other);
    cp_xgrow((void **)rows, cap, *n + ng + 1, sizeof **rows);
    for (size_t k = 0; k < ng; k++) {
        const an_group *x = &g[k];
        if (other[k])
            continue;
        if (!v->exact && ng > AN_TOP_KERNELS)
            fill_row(&(*rows)[(*n)++], ktype, x->name, x->count, x->sum_ns, x->sum_ns, x->sum_ns, x->sum_ns, 0);
        else
            fill_row(&(*rows)[(*n)++], ktype, x->name, x->count, x->sum_ns, x->sum_ns / (double)x->count,
                     (double)x->min_ns, (double)x->max_ns, an_group_std(x));
    }
    if (n_other) {
        /* others: HTA aggregates the per-kernel sums; exact pools events */
        an_group o, sums;
        an_fold_merge(g, ng, other, &o, &sums);
        if (v->exact) {
            fill_row(&(*rows)[(*n)++], ktype, UINT32_MAX, o.count, o.sum_ns, o.sum_ns / (double)o.count,
                     (double)o.min_ns, (double)o.max_ns, an_group_std(&o));
        } else {
            fill_row(&(*rows)[(*n)++], ktype, UINT32_MAX, o.count, o.sum_ns, o.sum_ns / (double)n_other,
                     (double)sums.min_ns, (double)sums.max_ns, an_group_std(&sums));
        }
    }
    free(other);
    free(g);
}


static int cmp_row(const void *pa, const void *pb, void *ctx)
{
    const tl_timeline *tl = ctx;
    const an_kernel_row *a = pa, *b = pb;
    int c = strcmp(type_name(a->ktype), type_name(b->ktype));
    if (c)
        return c;
    const char *na = a->name == UINT32_MAX ? "others" : tl_str(tl, a->name);
    const char *nb = b->name == UINT32_MAX ? "others" : tl_str(tl, b->name);
    return strcmp(na, nb);
}

void an_kernels_compute(const an_ctx *ctx, const an_view *v, an_kernels_rank *out)
{
    memset(out, 0, sizeof *out);
    type_times(v, out->mask_ns);
    size_t cap = 0;
    for (int t = 0; t < 3; t++)
        add_type(ctx, v, type_bits[t], &out->rows, &out->n_rows, &cap);
    if (out->n_rows > 1)
        qsort_r(out->rows, out->n_rows, sizeof *out->rows, cmp_row, (void *)ctx->tl);
}

typedef struct mask_row {
    unsigned mask;
    int64_t ns;
} mask_row;

static int cmp_mask_row(const void *pa, const void *pb)
{
    const mask_row *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return (a->mask > b->mask) - (a->mask < b->mask);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *out)
{
    const an_kernels_rank *kr = out;
    static const rep_col tcols[] = {
        { "kernel_type", "kernel type", NULL, -1 },
        { "time_ns", "time", "ns", -1 },
        { "pct", "share", "%", 1 },
    };
    mask_row mr[AN_KT_ALL + 1];
    size_t nm = 0;
    int64_t total = 0;
    for (unsigned m = 1; m <= AN_KT_ALL; m++)
        if (kr->mask_ns[m] > 0) {
            mr[nm++] = (mask_row){ m, kr->mask_ns[m] };
            total += kr->mask_ns[m];
        }
    qsort(mr, nm, sizeof *mr, cmp_mask_row);
    rep_node *t = rep_table(ctx->rep, parent, "kernel_types", "GPU time by kernel type", tcols, CP_ARRAY_LEN(tcols));
    char buf[96];
    for (size_t k = 0; k < nm; k++) {
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, an_ktype_label(mr[k].mask, buf, sizeof buf));
        rep_cell_int(ctx->rep, row, mr[k].ns);
        rep_cell_num(ctx->rep, row, 100.0 * (double)mr[k].ns / (double)total);
    }
    static const rep_col cols[] = {
        { "kernel_type", "type", NULL, -1 }, { "name", "kernel", NULL, -1 },
        { "count", "count", NULL, -1 },      { "sum_ns", "total", "ns", -1 },
        { "mean_ns", "mean", "ns", -1 },     { "min_ns", "min", "ns", -1 },
        { "max_ns", "max", "ns", -1 },       { "std_ns", "std", "ns", -1 },
    };
    t = rep_table(ctx->rep, parent, "kernels", "top kernels per type", cols, CP_ARRAY_LEN(cols));
    for (size_t k = 0; k < kr->n_rows; k++) {
        const an_kernel_row *x = &kr->rows[k];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, type_name(x->ktype));
        rep_cell_str(ctx->rep, row, x->name == UINT32_MAX ? "others" : tl_str(ctx->tl, x->name));
        rep_cell_int(ctx->rep, row, x->count);
        rep_cell_num(ctx->rep, row, x->sum_ns);
        rep_cell_num(ctx->rep, row, x->mean_ns);
        rep_cell_num(ctx->rep, row, x->min_ns);
        rep_cell_num(ctx->rep, row, x->max_ns);
        rep_cell_num(ctx->rep, row, x->std_ns);
    }
}

static void compute(const an_ctx *ctx, const an_view *v, void *out)
{
    an_kernels_compute(ctx, v, out);
}

static void free_rank(void *out) { free(((an_kernels_rank *)out)->rows); }

int an_kernels_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(an_kernels_rank), compute, emit, free_rank };
    return an_run_dual(ctx, AN_kernels, &ops);
}
