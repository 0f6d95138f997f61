/* an_cupti.c - the `cupti` analyzer: CUPTI profiler counters per kernel
 * with the PyTorch ops that launched it, per rank.
 *
 * With the profiler's CUPTI range mode (experimental_config with
 * profiler_metrics), each kernel becomes a `cuda_profiler_range` event
 * whose args are the counters. As HTA's
 * CuptiCounterAnalysis.get_counter_data_with_operators: the ranges in time
 * order are paired one to one with the `cudaLaunchKernel*` runtime calls
 * in time order (range mode serialises kernels; when the counts differ no
 * row is given and `matched` is false); a launch's op stack is the cpu_op
 * events around it on its thread, outermost first: top_level_op and
 * bottom_level_op. Columns: the kernel, its stack, one column per counter
 * (the union over the rank's ranges, by name; null where absent) and
 * flops = the SASS floating-point instruction counters weighted as HTA's
 * CUDA_SASS_INSTRUCTION_COUNTER_FLOPS (fma 2, others 1; null without any).
 */
#include "an_results.h"
#include "../base/buf.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COUNTERS 64

static uint64_t ts_key(const void *rec, int k, const void *ctx)
{
    const tl_timeline *tl = ctx;
    size_t ev = *(const size_t *)rec;
    return k == 0 ? cp_key_i64(tl->ts_ns[ev]) : ev;
}

/* HTA's flops weight of a counter name, 0 when it is none of them. */
static int flops_weight(const char *name)
{
    static const char *const ops[] = { "ffma", "fmul", "fadd", "hfma", "hmul", "hadd", "dfma", "dmul", "dadd" };
    const char *pre = "smsp__sass_thread_inst_executed_op_", *post = "_pred_on.sum";
    size_t lp = strlen(pre);
    if (strncmp(name, pre, lp) != 0)
        return 0;
    for (size_t k = 0; k < CP_ARRAY_LEN(ops); k++)
        if (!strncmp(name + lp, ops[k], 4) && !strcmp(name + lp + 4, post))
            return strstr(ops[k], "fma") ? 2 : 1;
    return 0;
}

typedef struct rank_scan {
    size_t *ranges, n_ranges;
    size_t *launches, n_launches;
    int64_t *top, *bottom;   /* per launch: outermost / innermost cpu_op event, -1 none */
    cp_buf *stack;           /* per launch: "op > op > op" */
} rank_scan;

static void scan_rank(const tl_timeline *tl, const tl_rank *rk, uint32_t cat_range, uint32_t cat_rt, uint32_t cat_op,
                      rank_scan *s)
{
    size_t cap_r = 0, cap_l = 0, *open = NULL, depth_cap = 0;
    for (size_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        size_t depth = 0;
        for (size_t e = tr->ev_begin; e < tr->ev_end; e++) {
            if (tl->flags[e] & (TL_F_INSTANT | TL_F_NO_DUR))
                continue;
            while (depth && tl_end_ns(tl, open[depth - 1]) <= tl->ts_ns[e])
                depth--;
            uint32_t cat = tl_event_cat_name(tl, e);
            if (cat == cat_range) {
                cp_xgrow((void **)&s->ranges, &cap_r, s->n_ranges + 1, sizeof *s->ranges);
                s->ranges[s->n_ranges++] = e;
            } else if (cat == cat_rt && !strncmp(tl_str(tl, tl->name[e]), "cudaLaunchKernel", 16)) {
                size_t n = s->n_launches;
                cp_xgrow((void **)&s->launches, &cap_l, n + 1, sizeof *s->launches);
                s->top = cp_xrealloc(s->top, cap_l * sizeof *s->top);
                s->bottom = cp_xrealloc(s->bottom, cap_l * sizeof *s->bottom);
                s->stack = cp_xrealloc(s->stack, cap_l * sizeof *s->stack);
                s->launches[n] = e;
                s->top[n] = s->bottom[n] = -1;
                s->stack[n] = (cp_buf)CP_BUF_INIT;
                for (size_t d = 0; d < depth; d++) {
                    if (tl_event_cat_name(tl, open[d]) != cat_op)
                        continue;
                    if (s->top[n] < 0)
                        s->top[n] = (int64_t)open[d];
                    else
                        cp_buf_puts(&s->stack[n], " > ");
                    s->bottom[n] = (int64_t)open[d];
                    cp_buf_puts(&s->stack[n], tl_str(tl, tl->name[open[d]]));
                }
                s->n_launches++;
            }
            cp_xgrow((void **)&open, &depth_cap, depth + 1, sizeof *open);
            open[depth++] = e;
        }
    }
    free(open);
}

static void emit_rank(an_ctx *ctx, size_t r, rank_scan *s)
{
    const tl_timeline *tl = ctx->tl;
    bool matched = s->n_ranges == s->n_launches;
    rep_node *o = rep_obj(ctx->rep, ctx->rank_nodes[r], "cupti_counters", "CUPTI profiler counters per kernel");
    rep_int(ctx->rep, o, "ranges", "cuda_profiler_range events", (int64_t)s->n_ranges, NULL);
    rep_int(ctx->rep, o, "launches", "cudaLaunchKernel calls", (int64_t)s->n_launches, NULL);
    rep_bool(ctx->rep, o, "matched", "ranges and launches pair one to one", matched);
    /* counter columns: the union of the ranges' arg keys, by name */
    uint32_t keys[MAX_COUNTERS];
    size_t nk = 0;
    bool any_flops = false;
    for (size_t i = 0; i < s->n_ranges; i++) {
        tl_arg a[MAX_COUNTERS];
        size_t na = CP_MIN(tl_event_args(tl, s->ranges[i], a, MAX_COUNTERS), (size_t)MAX_COUNTERS);
        for (size_t k = 0; k < na; k++) {
            if (a[k].type != TL_ARG_INT && a[k].type != TL_ARG_NUM)
                continue;
            size_t j = 0;
            while (j < nk && keys[j] != a[k].key)
                j++;
            if (j == nk && nk < MAX_COUNTERS) {
                keys[nk++] = a[k].key;
                any_flops |= flops_weight(tl_str(tl, a[k].key)) > 0;
            }
        }
    }
    for (size_t i = 1; i < nk; i++) /* by name: few counters */
        for (size_t j = i; j > 0 && strcmp(tl_str(tl, keys[j - 1]), tl_str(tl, keys[j])) > 0; j--) {
            uint32_t x = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = x;
        }
    rep_col *cols = cp_xcalloc(7 + nk, sizeof *cols);
    static const rep_col fixed[] = {
        { "name", "kernel", NULL, -1 },          { "cat", "category", NULL, -1 },
        { "ts_ns", "start (from the trace start)", "ns", -1 },
        { "dur_ns", "duration", "ns", -1 },      { "top_level_op", "outermost op", NULL, -1 },
        { "bottom_level_op", "innermost op", NULL, -1 }, { "op_stack", "op stack", NULL, -1 },
    };
    memcpy(cols, fixed, sizeof fixed);
    for (size_t k = 0; k < nk; k++)
        cols[7 + k] = (rep_col){ tl_str(tl, keys[k]), tl_str(tl, keys[k]), NULL, -1 };
    size_t ncols = 7 + nk;
    rep_col flops_col = { "flops", "floating-point operations (SASS counters)", NULL, -1 };
    if (any_flops) {
        cols = cp_xrealloc(cols, (ncols + 1) * sizeof *cols);
        cols[ncols++] = flops_col;
    }
    rep_node *t = rep_table(ctx->rep, o, "kernels", "kernels in time order with their counters", cols, ncols);
    t->flags |= REP_F_NO_TEXT;
    free(cols);
    if (!matched)
        return;
    size_t *li = cp_xmalloc((s->n_launches ? s->n_launches : 1) * sizeof *li);
    for (size_t i = 0; i < s->n_launches; i++)
        li[i] = i;
    size_t *lev = cp_xmalloc((s->n_launches ? s->n_launches : 1) * sizeof *lev);
    memcpy(lev, s->launches, s->n_launches * sizeof *lev);
    /* sort launch positions by their event's start */
    cp_kv *kv = cp_xmalloc((s->n_launches ? s->n_launches : 1) * sizeof *kv);
    for (size_t i = 0; i < s->n_launches; i++)
        kv[i] = (cp_kv){ cp_key_i64(tl->ts_ns[lev[i]]), i };
    cp_sort_kv(kv, s->n_launches, NULL);
    for (size_t i = 0; i < s->n_launches; i++)
        li[i] = (size_t)kv[i].val;
    free(kv);
    free(lev);
    cp_sort_records(s->ranges, s->n_ranges, sizeof *s->ranges, 2, ts_key, tl);
    for (size_t i = 0; i < s->n_ranges; i++) {
        size_t ev = s->ranges[i], l = li[i];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, tl_str(tl, tl->name[ev]));
        rep_cell_str(ctx->rep, row, tl_str(tl, tl_event_cat_name(tl, ev)));
        rep_cell_int(ctx->rep, row, tl->ts_ns[ev] - tl->t0_ns);
        rep_cell_int(ctx->rep, row, tl->dur_ns[ev]);
        rep_cell_str(ctx->rep, row, s->top[l] >= 0 ? tl_str(tl, tl->name[s->top[l]]) : "");
        rep_cell_str(ctx->rep, row, s->bottom[l] >= 0 ? tl_str(tl, tl->name[s->bottom[l]]) : "");
        rep_cell_str(ctx->rep, row, s->stack[l].len ? cp_buf_str(&s->stack[l]) : "");
        double flops = 0;
        for (size_t k = 0; k < nk; k++) {
            tl_arg a;
            if (!tl_arg_by_id(tl, ev, keys[k], &a) || (a.type != TL_ARG_INT && a.type != TL_ARG_NUM)) {
                rep_cell_null(ctx->rep, row);
                continue;
            }
            double v = a.type == TL_ARG_INT ? (double)a.v.i : a.v.d;
            flops += flops_weight(tl_str(tl, keys[k])) * v;
            if (a.type == TL_ARG_INT)
                rep_cell_int(ctx->rep, row, a.v.i);
            else
                rep_cell_num(ctx->rep, row, a.v.d);
        }
        if (any_flops)
            rep_cell_num(ctx->rep, row, flops);
    }
    free(li);
}

int an_cupti_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    uint32_t cat_range = cp_intern_find(&tl->strings, "cuda_profiler_range", 19);
    if (cat_range == UINT32_MAX)
        return 0; /* no range-mode trace: nothing to report (as HTA's empty list) */
    uint32_t cat_rt = cp_intern_find(&tl->strings, "cuda_runtime", 12);
    uint32_t cat_op = cp_intern_find(&tl->strings, "cpu_op", 6);
    for (size_t r = 0; r < tl->n_ranks; r++) {
        rank_scan s = { 0 };
        scan_rank(tl, &tl->ranks[r], cat_range, cat_rt, cat_op, &s);
        emit_rank(ctx, r, &s);
        for (size_t i = 0; i < s.n_launches; i++)
            cp_buf_free(&s.stack[i]);
        free(s.stack);
        free(s.top);
        free(s.bottom);
        free(s.launches);
        free(s.ranges);
    }
    return 0;
}
