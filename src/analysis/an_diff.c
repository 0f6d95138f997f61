/* an_diff.c - two analyzed trace sets compared (see an_diff.h).
 *
 * The operator diff replays HTA's TraceDiff (hta/trace_diff.py) on the HTA
 * view's rounded times, without its last-step drop (LabeledTrace parses the
 * traces without that filter):
 *  - iteration of an event (HTA add_iteration): a CPU event (stream -1, or
 *    a cpu_op on stream 0, Triton's) belongs to the profiler step whose
 *    [start, start + dur) holds its start (the last such step in event
 *    order); a GPU event on a stream > 0 to its launching call's step; a
 *    GPU event on stream 0 to none;
 *  - the rank's events of the chosen step(s), CPU (stream -1) and GPU
 *    (stream != -1) apart, grouped by name: count and total duration;
 *  - per name: added (absent in base), deleted (absent in test), increased
 *    / decreased / unchanged count, and the change in total time.
 * Step time, layers and findings come from the exact analyses: the
 * findings' measured step time (every step, mean over ranks), each layer's
 * exposed time per step over all ranks, and each finding code's estimated
 * gain on either side.
 */
#include "an_diff.h"
#include "an_results.h"
#include "an_verdict.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_sum {
    const char *name;        /* the timeline's string (both sides compare by text) */
    int64_t count, time_ns;
} op_sum;

typedef struct side {
    const an_ctx *ctx;
    size_t r;                /* rank index */
    int32_t rank;
    int64_t iter;            /* the step compared; INT64_MIN with all_iterations */
    op_sum *ops[2];          /* [0] CPU ops, [1] GPU kernels, sorted by name */
    size_t n_ops[2];
    int64_t *step_ids;       /* the rank's profiler step numbers, ascending, distinct */
    size_t n_steps;
} side;

typedef struct step_span {
    int64_t t0, t1, id;
} step_span;

static int64_t step_number(const char *name) { return strtoll(name + 13, NULL, 10); } /* "ProfilerStep#N" */

/* The rank's profiler steps in event order (HTA's profiler_steps frame). */
static size_t rank_steps(const an_ctx *ctx, const an_view *v, step_span **out)
{
    const tl_timeline *tl = ctx->tl;
    step_span *s = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t ev = v->base + i;
        if (an_hta_row(tl, ev) && an_name_is(ctx, tl->name[ev], AN_NAME_STEP)) {
            cp_xgrow((void **)&s, &cap, n + 1, sizeof *s);
            s[n++] = (step_span){ v->t0[i], v->t1[i], step_number(tl_str(tl, tl->name[ev])) };
        }
    }
    *out = s;
    return n;
}

static int64_t iteration_at(const step_span *s, size_t n, int64_t t)
{
    int64_t it = -1;
    for (size_t k = 0; k < n; k++)
        if (s[k].t0 <= t && t < s[k].t0 + (s[k].t1 - s[k].t0))
            it = s[k].id;
    return it;
}

static int cmp_op(const void *a, const void *b) { return strcmp(((const op_sum *)a)->name, ((const op_sum *)b)->name); }

/* Count and total rounded duration by name of the chosen step's events. */
static void side_ops(side *sd, const step_span *steps, size_t n_steps)
{
    const an_ctx *ctx = sd->ctx;
    const tl_timeline *tl = ctx->tl;
    const an_view *v = &an_views(ctx, sd->r)->hta;
    size_t m = v->n ? v->n : 1;
    int64_t *iter = cp_xmalloc(m * sizeof *iter), *stream = cp_xmalloc(m * sizeof *stream);
    uint32_t cpu_op = cp_intern_find(&tl->strings, "cpu_op", 6);
    for (size_t i = 0; i < v->n; i++) {
        size_t ev = v->base + i;
        stream[i] = an_hta_stream(tl, ev);
        bool host = stream[i] < 0 || (stream[i] == 0 && cpu_op != UINT32_MAX && tl_event_cat_name(tl, ev) == cpu_op);
        iter[i] = host && an_hta_row(tl, ev) ? iteration_at(steps, n_steps, v->t0[i]) : -1;
    }
    for (size_t i = 0; i < v->n; i++) /* GPU work: its launching call's step */
        if (stream[i] > 0)
            iter[i] = v->partner[i] >= 0 ? iter[v->partner[i]] : -1;
    /* group by name id, then merge ids of equal text (ids are unique per text) */
    for (int d = 0; d < 2; d++) {
        uint32_t *names = cp_xmalloc(m * sizeof *names);
        int64_t *durs = cp_xmalloc(m * sizeof *durs);
        size_t k = 0;
        for (size_t i = 0; i < v->n; i++) {
            if (!an_hta_row(tl, v->base + i) || (stream[i] < 0) != (d == 0))
                continue;
            if (sd->iter == INT64_MIN ? iter[i] < 0 : iter[i] != sd->iter)
                continue;
            names[k] = tl->name[v->base + i];
            durs[k++] = v->t1[i] - v->t0[i];
        }
        an_group *g;
        size_t ng = an_group_by_name(names, durs, k, &g);
        sd->ops[d] = cp_xmalloc((ng ? ng : 1) * sizeof *sd->ops[d]);
        for (size_t j = 0; j < ng; j++)
            sd->ops[d][j] = (op_sum){ tl_str(tl, g[j].name), g[j].count, (int64_t)g[j].sum_ns };
        sd->n_ops[d] = ng;
        qsort(sd->ops[d], ng, sizeof *sd->ops[d], cmp_op);
        free(g);
        free(names);
        free(durs);
    }
    free(iter);
    free(stream);
}

static int side_init(side *sd, const an_ctx *ctx, const an_diff_opts *o, const char *which, cp_error *err)
{
    memset(sd, 0, sizeof *sd);
    sd->ctx = ctx;
    const tl_timeline *tl = ctx->tl;
    if (!tl->n_ranks)
        return cp_error_set(err, CP_ERR_FORMAT, which, 0, 0, -1, "no rank in the %s trace set", which);
    int ri = o->has_rank ? tl_rank_index(tl, o->rank) : 0;
    if (ri < 0)
        return cp_error_set(err, CP_ERR_USAGE, which, 0, 0, -1, "rank %d is not in the %s trace set", (int)o->rank,
                            which);
    sd->r = (size_t)ri;
    sd->rank = tl->ranks[ri].meta.rank;
    step_span *steps;
    size_t ns = rank_steps(ctx, &an_views(ctx, sd->r)->hta, &steps);
    bool found = false;
    int64_t first = INT64_MAX;
    for (size_t k = 0; k < ns; k++) {
        first = CP_MIN(first, steps[k].id);
        found |= o->has_iteration && steps[k].id == o->iteration;
    }
    if (o->all_iterations)
        sd->iter = INT64_MIN;
    else if (o->has_iteration && !found) {
        free(steps);
        return cp_error_set(err, CP_ERR_USAGE, which, 0, 0, -1, "profiler step %lld is not in rank %d of the %s set",
                            (long long)o->iteration, (int)sd->rank, which);
    } else
        sd->iter = o->has_iteration ? o->iteration : ns ? first : -1;
    side_ops(sd, steps, ns);
    sd->step_ids = cp_xmalloc((ns ? ns : 1) * sizeof *sd->step_ids);
    for (size_t k = 0; k < ns; k++)
        sd->step_ids[k] = steps[k].id;
    cp_sort_u64((uint64_t *)sd->step_ids, ns, NULL); /* step numbers are >= 0 */
    for (size_t k = 0; k < ns; k++)
        if (!sd->n_steps || sd->step_ids[sd->n_steps - 1] != sd->step_ids[k])
            sd->step_ids[sd->n_steps++] = sd->step_ids[k];
    free(steps);
    return 0;
}

static void side_free(side *sd)
{
    free(sd->ops[0]);
    free(sd->ops[1]);
    free(sd->step_ids);
}

enum { CH_ADDED, CH_DELETED, CH_INCREASED, CH_DECREASED, CH_UNCHANGED, CH__COUNT };
static const char *const change_names[CH__COUNT] = { "added", "deleted", "increased", "decreased", "unchanged" };

/* One table of CPU ops or GPU kernels: the merge of both sides by name. */
static void emit_ops(rep_report *rep, rep_node *parent, const char *key, const char *title, const side *b,
                     const side *t, int d)
{
    static const rep_col cols[] = {
        { "name", "name", NULL, -1 },
        { "change", "change", NULL, -1 },
        { "base_count", "base count", NULL, -1 },
        { "test_count", "test count", NULL, -1 },
        { "diff_count", "count change", NULL, -1 },
        { "base_time_ns", "base total", "ns", -1 },
        { "test_time_ns", "test total", "ns", -1 },
        { "diff_time_ns", "total change", "ns", -1 },
    };
    rep_node *o = rep_obj(rep, parent, key, title);
    int64_t n_change[CH__COUNT] = { 0 };
    rep_node *t_rows = rep_table(rep, o, "rows", "by name (both sides merged)", cols, CP_ARRAY_LEN(cols));
    t_rows->flags |= REP_F_NO_TEXT;
    rep_node *lists = rep_obj(rep, o, "names", "names by change (HTA ops_diff)");
    rep_node *arr[CH__COUNT];
    for (int c = 0; c < CH__COUNT; c++)
        arr[c] = rep_arr(rep, lists, change_names[c], change_names[c]);
    arr[CH_UNCHANGED]->flags |= REP_F_NO_TEXT; /* the text lists what changed */
    size_t i = 0, j = 0;
    const op_sum *x = b->ops[d], *y = t->ops[d];
    while (i < b->n_ops[d] || j < t->n_ops[d]) {
        int c = i == b->n_ops[d] ? 1 : j == t->n_ops[d] ? -1 : strcmp(x[i].name, y[j].name);
        op_sum zero = { 0 };
        const op_sum *bs = c <= 0 ? &x[i++] : &zero, *ts = c >= 0 ? &y[j++] : &zero;
        const char *name = c <= 0 ? bs->name : ts->name;
        int ch = !bs->count ? CH_ADDED : !ts->count ? CH_DELETED : ts->count > bs->count ? CH_INCREASED
                 : ts->count < bs->count ? CH_DECREASED : CH_UNCHANGED;
        n_change[ch]++;
        rep_str(rep, arr[ch], NULL, NULL, name);
        rep_node *row = rep_row(rep, t_rows);
        rep_cell_str(rep, row, name);
        rep_cell_str(rep, row, ts->count > bs->count ? "+" : ts->count < bs->count ? "-" : "=");
        rep_cell_int(rep, row, bs->count);
        rep_cell_int(rep, row, ts->count);
        rep_cell_int(rep, row, ts->count - bs->count);
        rep_cell_int(rep, row, bs->time_ns);
        rep_cell_int(rep, row, ts->time_ns);
        rep_cell_int(rep, row, ts->time_ns - bs->time_ns);
    }
    for (int c = 0; c < CH__COUNT; c++) {
        char k[32];
        snprintf(k, sizeof k, "n_%s", change_names[c]);
        rep_int(rep, o, k, change_names[c], n_change[c], NULL);
    }
}

/* Exposed time per layer per step, all ranks. */
static void layer_per_step(const an_ctx *ctx, double *out)
{
    const an_layers_result *lr = ctx->results[AN_layers];
    size_t steps = 0;
    for (int l = 0; l < CP_LAYER__COUNT; l++)
        out[l] = NAN;
    if (!lr)
        return;
    double sum[CP_LAYER__COUNT] = { 0 };
    for (size_t r = 0; r < lr->n_ranks; r++) {
        steps += lr->ranks[r].n_steps;
        for (int l = 0; l < CP_LAYER__COUNT; l++)
            sum[l] += (double)lr->ranks[r].total.exposed_ns[l];
    }
    for (int l = 0; l < CP_LAYER__COUNT && steps; l++)
        out[l] = sum[l] / (double)steps;
}

static double step_time_ns(const an_ctx *ctx)
{
    const an_findings_result *fr = ctx->results[AN_findings];
    return fr && fr->job_ns > 0 ? fr->job_ns : NAN;
}

static void emit_side(rep_report *rep, const char *key, const side *s)
{
    rep_node *o = rep_obj(rep, rep->root, key, key);
    rep_int(rep, o, "ranks", "ranks in the set", (int64_t)s->ctx->tl->n_ranks, NULL);
    rep_int(rep, o, "rank", "rank compared op by op", s->rank, NULL);
    if (s->iter == INT64_MIN)
        rep_str(rep, o, "profiler_step", "profiler step compared", "all");
    else if (s->iter >= 0)
        rep_int(rep, o, "profiler_step", "profiler step compared", s->iter, NULL);
    else
        rep_null(rep, o, "profiler_step", "profiler step compared", NULL);
    rep_num(rep, o, "step_time_ns", "measured step time (mean over ranks)", step_time_ns(s->ctx), "ns");
    rep_node *ids = rep_arr(rep, o, "profiler_steps", "profiler steps of the rank");
    for (size_t k = 0; k < s->n_steps; k++)
        rep_int(rep, ids, NULL, NULL, s->step_ids[k], NULL);
}

static void emit_findings(rep_report *rep, const an_ctx *b, const an_ctx *t)
{
    static const rep_col cols[] = {
        { "code", "finding", NULL, -1 },
        { "status", "status", NULL, -1 },
        { "base_gain_pct", "base gain", "%", 1 },
        { "test_gain_pct", "test gain", "%", 1 },
    };
    rep_node *tab = rep_table(rep, rep->root, "findings", "findings of either set", cols, CP_ARRAY_LEN(cols));
    const an_findings_result *fb = b->results[AN_findings], *ft = t->results[AN_findings];
    for (int side_i = 0; side_i < 2; side_i++) {
        const an_findings_result *f = side_i ? ft : fb, *other = side_i ? fb : ft;
        for (size_t i = 0; f && i < f->n; i++) {
            const an_finding *x = &f->v[i], *y = NULL;
            for (size_t k = 0; other && k < other->n && !y; k++)
                if (!strcmp(other->v[k].code, x->code) && other->v[k].rank == x->rank)
                    y = &other->v[k];
            if (side_i && y)
                continue; /* listed from the base side */
            rep_node *row = rep_row(rep, tab);
            rep_cell_str(rep, row, x->code);
            rep_cell_str(rep, row, y ? "both" : side_i ? "new" : "gone");
            const an_finding *in_b = side_i ? y : x, *in_t = side_i ? x : y;
            rep_cell_num(rep, row, in_b ? in_b->gain_pct : NAN);
            rep_cell_num(rep, row, in_t ? in_t->gain_pct : NAN);
        }
    }
}

int an_diff(const an_ctx *base, const an_ctx *test, const an_diff_opts *o, rep_report *rep, bool *regressed,
            cp_error *err)
{
    *regressed = false;
    side b, t;
    if (side_init(&b, base, o, "base", err) < 0)
        return -1;
    if (side_init(&t, test, o, "test", err) < 0) {
        side_free(&b);
        return -1;
    }
    emit_side(rep, "base", &b);
    emit_side(rep, "test", &t);
    double sb = step_time_ns(base), st = step_time_ns(test);
    double change = sb > 0 && isfinite(st) ? 100.0 * (st - sb) / sb : NAN;
    rep_node *s = rep_obj(rep, rep->root, "step_time", "step time");
    rep_num(rep, s, "base_ns", "base", sb, "ns");
    rep_num(rep, s, "test_ns", "test", st, "ns");
    rep_num(rep, s, "change_pct", "change (test - base) / base", change, "%");
    if (o->fail_on_pct >= 0) {
        rep_num(rep, s, "fail_on_pct", "allowed regression", o->fail_on_pct, "%");
        *regressed = isfinite(change) && change > o->fail_on_pct;
        rep_bool(rep, s, "regressed", "regressed beyond the allowed change", *regressed);
    }
    static const rep_col lcols[] = {
        { "layer", "layer", NULL, -1 },
        { "base_ns", "base exposed per step", "ns", 0 },
        { "test_ns", "test exposed per step", "ns", 0 },
        { "diff_ns", "change", "ns", 0 },
    };
    rep_node *lt = rep_table(rep, rep->root, "layers", "exposed time per step by layer", lcols, CP_ARRAY_LEN(lcols));
    double lb[CP_LAYER__COUNT], ltest[CP_LAYER__COUNT];
    layer_per_step(base, lb);
    layer_per_step(test, ltest);
    for (int l = 0; l < CP_LAYER__COUNT; l++) {
        rep_node *row = rep_row(rep, lt);
        rep_cell_str(rep, row, cp_layer_key((cp_layer)l));
        rep_cell_num(rep, row, lb[l]);
        rep_cell_num(rep, row, ltest[l]);
        rep_cell_num(rep, row, ltest[l] - lb[l]);
    }
    emit_findings(rep, base, test);
    emit_ops(rep, rep->root, "cpu_ops", "CPU operators of the compared rank and step", &b, &t, 0);
    emit_ops(rep, rep->root, "gpu_kernels", "GPU kernels of the compared rank and step", &b, &t, 1);
    side_free(&b);
    side_free(&t);
    return 0;
}
