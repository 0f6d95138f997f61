/* an_memtl.c - the `memtl` analyzer: memory per category over time from
 * PyTorch's raw memory timeline (rd_memtl.c's "[memory timeline]"
 * events), per rank; one view (the profiler's own numbers, nothing to
 * round or drop).
 *
 * HTA's definition (MemoryAnalysis._process_raw_events): the records are
 * summed per category (Parameter, Optimizer state, Input, Temporary,
 * Activation, Gradient, Autograd, Unknown) into samples, one per
 * timestamp, each holding every category's bytes after that timestamp's
 * records; the pre-existing records (action 1, time -1 in the file) make
 * the first sample, at the profile's first time. Samples are indexed as
 * HTA indexes them (sample k is HTA's sizes[k]) for a file in time order,
 * which PyTorch writes; records out of order are summed into their own
 * time's sample (HTA would start a new sample at every change of time).
 *
 * What the timeline adds to HTA's plot: the peak of the total (its time,
 * sample, every category's share, the category holding most), each
 * category's own peak and its final bytes. The raw file names no device
 * and no capacity, so it feeds no OOM finding (those read `memory[]` from
 * the trace's [memory] events, which have the device).
 */
#include "an_results.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

#define MT_CATS 8
#define MT_PREEXISTING 1 /* PyTorch's Action.PREEXISTING */
static const char *const cat_names[MT_CATS] = { "Parameter", "Optimizer state", "Input",    "Temporary",
                                                "Activation", "Gradient",       "Autograd", "Unknown" };
static const char *const cat_keys[MT_CATS] = { "parameter_bytes",  "optimizer_state_bytes", "input_bytes",
                                               "temporary_bytes",  "activation_bytes",      "gradient_bytes",
                                               "autograd_bytes",   "unknown_bytes" };

typedef struct mt_sample {
    int64_t t_ns;
    int64_t bytes[MT_CATS];
} mt_sample;

typedef struct mt_rank {
    mt_sample *s;
    size_t n;
    int64_t records;
    size_t peak;                 /* sample with the largest total */
    int64_t cat_peak[MT_CATS];
} mt_rank;

typedef struct mt_keys {
    uint32_t name, action, bytes, cat;
} mt_keys;

static int64_t total_of(const mt_sample *s)
{
    int64_t t = 0;
    for (int c = 0; c < MT_CATS; c++)
        t += s->bytes[c];
    return t;
}

static bool arg_int(const tl_timeline *tl, size_t e, uint32_t key, int64_t *v)
{
    tl_arg a;
    if (key == UINT32_MAX || !tl_arg_by_id(tl, e, key, &a) || a.type != TL_ARG_INT)
        return false;
    *v = a.v.i;
    return true;
}

/* Sample 0 from the pre-existing records (when any), then one sample per
 * time in order. */
static void build(const tl_timeline *tl, const tl_rank *rk, const mt_keys *k, mt_rank *out)
{
    int64_t pre[MT_CATS] = { 0 };
    bool any_pre = false, last_pre = false;
    size_t cap = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t t = rk->track_begin; t < rk->track_end; t++)
            for (size_t e = tl->tracks[t].ev_begin; e < tl->tracks[t].ev_end; e++) {
                int64_t action, bytes, cat;
                if (tl->name[e] != k->name || !arg_int(tl, e, k->action, &action) ||
                    !arg_int(tl, e, k->bytes, &bytes) || !arg_int(tl, e, k->cat, &cat) || cat < 0 || cat >= MT_CATS)
                    continue;
                if (pass == 0) { /* the pre-existing state first */
                    out->records++;
                    if (action == MT_PREEXISTING) {
                        pre[cat] += bytes;
                        any_pre = true;
                    }
                    continue;
                }
                if (action == MT_PREEXISTING)
                    continue;
                if (out->n == 0 && any_pre) { /* at the first time, where HTA puts it */
                    cp_xgrow((void **)&out->s, &cap, 1, sizeof *out->s);
                    out->s[0] = (mt_sample){ tl->ts_ns[e], { 0 } };
                    memcpy(out->s[0].bytes, pre, sizeof pre);
                    out->n = 1;
                    last_pre = true;
                }
                if (out->n == 0 || last_pre || tl->ts_ns[e] != out->s[out->n - 1].t_ns) {
                    cp_xgrow((void **)&out->s, &cap, out->n + 1, sizeof *out->s);
                    out->s[out->n] = out->n ? out->s[out->n - 1] : (mt_sample){ 0 };
                    out->s[out->n++].t_ns = tl->ts_ns[e];
                    last_pre = false;
                }
                out->s[out->n - 1].bytes[cat] += bytes;
            }
    if (out->n == 0 && any_pre) { /* only pre-existing memory */
        out->s = cp_xcalloc(1, sizeof *out->s);
        memcpy(out->s[0].bytes, pre, sizeof pre);
        out->n = 1;
    }
    for (size_t i = 0; i < out->n; i++) {
        if (total_of(&out->s[i]) > total_of(&out->s[out->peak]))
            out->peak = i;
        for (int c = 0; c < MT_CATS; c++)
            out->cat_peak[c] = i && out->cat_peak[c] >= out->s[i].bytes[c] ? out->cat_peak[c] : out->s[i].bytes[c];
    }
}

static void series_row(an_ctx *ctx, rep_node *t, const mt_rank *mr, size_t i)
{
    rep_node *row = rep_row(ctx->rep, t);
    rep_cell_int(ctx->rep, row, (int64_t)i);
    rep_cell_int(ctx->rep, row, mr->s[i].t_ns - ctx->tl->t0_ns);
    for (int c = 0; c < MT_CATS; c++)
        rep_cell_int(ctx->rep, row, mr->s[i].bytes[c]);
    rep_cell_int(ctx->rep, row, total_of(&mr->s[i]));
}

static void emit(an_ctx *ctx, rep_node *parent, const mt_rank *mr)
{
    rep_node *o = rep_obj(ctx->rep, parent, "memory_timeline", "memory per category over time (raw memory timeline)");
    rep_int(ctx->rep, o, "records", "records of the raw timeline", mr->records, NULL);
    rep_int(ctx->rep, o, "samples", "samples (one per timestamp; pre-existing memory first)", (int64_t)mr->n, NULL);
    const mt_sample *p = &mr->s[mr->peak];
    int top = 0;
    for (int c = 1; c < MT_CATS; c++)
        top = p->bytes[c] > p->bytes[top] ? c : top;
    rep_int(ctx->rep, o, "peak_total_bytes", "largest total over the samples", total_of(p), "bytes");
    rep_int(ctx->rep, o, "peak_ns", "time of the peak (from the earliest event of the inputs)", p->t_ns - ctx->tl->t0_ns,
            "ns");
    rep_int(ctx->rep, o, "peak_sample", "sample of the peak", (int64_t)mr->peak, NULL);
    rep_str(ctx->rep, o, "peak_category", "the category holding most at the peak", cat_names[top]);
    static const rep_col ccols[] = {
        { "category", "category", NULL, -1 },
        { "at_peak_bytes", "at the total's peak", "bytes", -1 },
        { "peak_bytes", "own peak", "bytes", -1 },
        { "final_bytes", "at the last sample", "bytes", -1 },
    };
    rep_node *t = rep_table(ctx->rep, o, "categories", "bytes per category", ccols, CP_ARRAY_LEN(ccols));
    for (int c = 0; c < MT_CATS; c++) {
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, cat_names[c]);
        rep_cell_int(ctx->rep, row, p->bytes[c]);
        rep_cell_int(ctx->rep, row, mr->cat_peak[c]);
        rep_cell_int(ctx->rep, row, mr->s[mr->n - 1].bytes[c]);
    }
    rep_col scols[3 + MT_CATS];
    scols[0] = (rep_col){ "sample", "sample (HTA's index)", NULL, -1 };
    scols[1] = (rep_col){ "t_ns", "time (from the earliest event of the inputs)", "ns", -1 };
    for (int c = 0; c < MT_CATS; c++)
        scols[2 + c] = (rep_col){ cat_keys[c], cat_names[c], "bytes", -1 };
    scols[2 + MT_CATS] = (rep_col){ "total_bytes", "total", "bytes", -1 };
    t = rep_table(ctx->rep, o, "series", "samples (every one with --launch-table, else at most ~1000 and the peak)",
                  scols, CP_ARRAY_LEN(scols));
    t->flags |= REP_F_NO_TEXT;
    size_t step = ctx->opts && ctx->opts->launch_table ? 1 : (mr->n + AN_LAUNCH_ROWS - 1) / AN_LAUNCH_ROWS;
    for (size_t i = 0; i < mr->n; i++)
        if (i % step == 0 || i == mr->peak)
            series_row(ctx, t, mr, i);
}

int an_memtl_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    const cp_intern *st = &tl->strings;
    mt_keys k = { cp_intern_find(st, "[memory timeline]", 17), cp_intern_find(st, "Action", 6),
                  cp_intern_find(st, "Bytes", 5), cp_intern_find(st, "Category", 8) };
    if (k.name == UINT32_MAX)
        return 0; /* no raw memory timeline among the inputs */
    for (size_t r = 0; r < tl->n_ranks; r++) {
        mt_rank mr = { 0 };
        build(tl, &tl->ranks[r], &k, &mr);
        if (mr.n)
            emit(ctx, ctx->rank_nodes[r], &mr);
        free(mr.s);
    }
    return 0;
}
