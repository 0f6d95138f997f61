/* probe.c - the probe registry, selection, running and the results report.
 *
 * Rows are collected in the context (not written straight into the report)
 * so the CLI can also hand them to the history database and so a probe that
 * fails halfway still contributes what it measured. The report is built once
 * at the end: results[] as a table, skipped[] with the reason each probe did
 * not run, errors[] for probes that started and failed.
 */
#include "probe.h"
#include "../base/util.h"
#include "../gpu/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The layers probes belong to, in listing order. */
static const probe_layer k_layers[] = { PROBE_L_COMPUTE, PROBE_L_MEMORY, PROBE_L_INTRA, PROBE_L_INTER, PROBE_L_STORAGE };

const char *probe_layer_name(probe_layer l)
{
    if (l == PROBE_L_MEMORY)
        return "memory";
    const char *k = l == PROBE_L_COMPUTE || l == PROBE_L_INTRA || l == PROBE_L_INTER || l == PROBE_L_STORAGE
                        ? cp_layer_key((cp_layer)l)
                        : NULL;
    return k ? k : "?";
}

int probe_layer_find(const char *name)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(k_layers); i++)
        if (!strcmp(name, probe_layer_name(k_layers[i])))
            return (int)k_layers[i];
    return -1;
}

static const probe_def probes[] = {
#define X(name, layer, summary) { #name, layer, summary, probe_##name##_applies, probe_##name##_run },
#include "probes.def"
#undef X
};

const probe_def *probe_table(size_t *n)
{
    *n = CP_ARRAY_LEN(probes);
    return probes;
}

const probe_def *probe_find(const char *name)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(probes); i++)
        if (!strcmp(probes[i].name, name))
            return &probes[i];
    return NULL;
}

void probe_ctx_init(probe_ctx *ctx, const probe_opts *opts, rep_report *rep)
{
    memset(ctx, 0, sizeof *ctx);
    if (opts)
        ctx->opts = *opts;
    ctx->rep = rep;
    cp_fsroot_init(&ctx->fs, NULL);
    probe_quiet_init(&ctx->quiet, &ctx->fs);
    cp_arena_init(&ctx->arena);
    if (rep)
        ctx->topology = rep_obj(rep, rep->root, "topology", "topology");
}

void probe_ctx_free(probe_ctx *ctx)
{
    if (ctx->gpu) {
        gpu_close(ctx->gpu);
        free(ctx->gpu);
    }
    cp_arena_free(&ctx->arena);
    probe_quiet_free(&ctx->quiet);
    free(ctx->results);
    memset(ctx, 0, sizeof *ctx);
}

static const char *dup_or_null(probe_ctx *ctx, const char *s)
{
    return s ? cp_arena_strdup(&ctx->arena, s) : NULL;
}

/* The method with what the statistics found appended: rounds left out
 * above the peak, or the figure's impossibility. */
static const char *method_with_notes(probe_ctx *ctx, const probe_row *r)
{
    if (!r->impossible && !r->stats.rejected)
        return dup_or_null(ctx, r->method);
    char buf[1400];
    int n = snprintf(buf, sizeof buf, "%s", r->method ? r->method : "");
    if (n < 0 || (size_t)n >= sizeof buf)
        n = (int)strlen(buf);
    if (r->impossible && isfinite(r->peak))
        snprintf(buf + n, sizeof buf - (size_t)n,
                 "; IMPOSSIBLE: %.4g %s is above the peak %.4g %s, so it is not a measurement (a cache, "
                 "clock or timer effect); value left null",
                 r->impossible_value, r->unit ? r->unit : "", r->peak, r->unit ? r->unit : "");
    else if (r->impossible)
        snprintf(buf + n, sizeof buf - (size_t)n, "; value left null (the figure is in impossible_value)");
    else
        snprintf(buf + n, sizeof buf - (size_t)n, "; %zu of %zu rounds above the peak %.4g %s left out",
                 r->stats.rejected, r->stats.rejected + r->stats.n, r->peak, r->unit ? r->unit : "");
    return cp_arena_strdup(&ctx->arena, buf);
}

void probe_emit(probe_ctx *ctx, const probe_row *row)
{
    cp_xgrow((void **)&ctx->results, &ctx->cap_results, ctx->n_results + 1, sizeof *ctx->results);
    probe_result *r = &ctx->results[ctx->n_results++];
    r->probe = ctx->current ? ctx->current->name : "?";
    r->layer = ctx->current ? ctx->current->layer : PROBE_L_COMPUTE;
    r->row = *row;
    if (!row->impossible && probe_above_peak(row->value, row->peak)) {
        r->row.impossible = true;
        r->row.impossible_value = row->value;
    }
    if (r->row.impossible) { /* nothing of it is shown as a measurement, its spread neither */
        r->row.value = NAN;
        size_t rejected = r->row.stats.rejected;
        probe_stats_of(NULL, 0, &r->row.stats);
        r->row.stats.rejected = rejected;
    } else {
        r->row.impossible_value = NAN;
    }
    r->row.metric = dup_or_null(ctx, row->metric);
    r->row.unit = dup_or_null(ctx, row->unit);
    r->row.method = method_with_notes(ctx, &r->row);
    r->row.op = dup_or_null(ctx, row->op);
    r->row.buffers = dup_or_null(ctx, row->buffers);
}

void probe_emit_samples(probe_ctx *ctx, const probe_row *row, const double *v, size_t n, probe_stat stat)
{
    probe_row r = *row;
    double *kept = cp_xmalloc((n ? n : 1) * sizeof *kept);
    size_t k = probe_drop_impossible(v, n, row->peak, kept);
    r.stat = stat;
    if (k == 0 && n > 0) { /* every round above the peak: what they gave, marked */
        probe_stats all;
        probe_stats_of(v, n, &all);
        r.impossible = true;
        r.impossible_value = probe_stats_pick(&all, stat);
    }
    probe_stats_of(kept, k, &r.stats);
    r.stats.rejected = n - k;
    r.value = probe_stats_pick(&r.stats, stat);
    free(kept);
    probe_emit(ctx, &r);
}

void probe_emit_rounds(probe_ctx *ctx, const char *metric, const double *v, size_t n, probe_stat stat,
                       const char *unit, double peak, const char *method)
{
    probe_row r = { .metric = metric, .unit = unit, .peak = peak, .method = method, .wrong = -1 };
    probe_emit_samples(ctx, &r, v, n, stat);
}

void probe_emit_value(probe_ctx *ctx, const char *metric, double value, const char *unit, double peak,
                      const char *method)
{
    probe_row r = { .metric = metric, .value = value, .unit = unit, .peak = peak, .method = method, .wrong = -1 };
    probe_emit(ctx, &r);
}

int probe_rounds(const probe_ctx *ctx, int def_quick, int def_full)
{
    int n = ctx->opts.rounds > 0 ? ctx->opts.rounds : ctx->opts.quick ? def_quick : def_full;
    return n < 1 ? 1 : n > PROBE_MAX_ROUNDS ? PROBE_MAX_ROUNDS : n;
}

int probe_select(const char *const *names, size_t n_names, bool *sel, cp_error *err)
{
    size_t n = CP_ARRAY_LEN(probes);
    for (size_t i = 0; i < n; i++)
        sel[i] = n_names == 0;
    for (size_t k = 0; k < n_names; k++) {
        int layer = probe_layer_find(names[k]);
        bool hit = false;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(probes[i].name, names[k]) || (int)probes[i].layer == layer) {
                sel[i] = true;
                hit = true;
            }
        if (!hit) {
            /* a layer with no probe in this build is not a typo: say so */
            if (layer >= 0)
                return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1,
                                    "layer '%s': no probe for it in this build", names[k]);
            return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                                "unknown probe or layer '%s' (chainprof probe --list names them)", names[k]);
        }
    }
    return 0;
}

/* What a probe's own work shows in the counters (not judged in its window):
 * storage its disk traffic, the network layer its packets; CPU pressure is
 * ours in every window. */
static unsigned own_traffic(const probe_def *p)
{
    return PROBE_OWN_CPU_PSI | (p->layer == PROBE_L_STORAGE ? PROBE_OWN_DISK : 0) |
           (p->layer == PROBE_L_INTER ? PROBE_OWN_NET : 0);
}

/* The idle wait before the first probe: long enough for 100 Hz ticks on
 * every CPU to say something, short enough for the quick pass. */
#define QUIET_BASELINE_QUICK_S 0.5
#define QUIET_BASELINE_FULL_S 1.0

size_t probe_run_selected(probe_ctx *ctx, const bool *sel, probe_outcome *out)
{
    size_t failed = 0;
    bool watched = false;
    for (size_t i = 0; i < CP_ARRAY_LEN(probes); i++) {
        probe_outcome *o = &out[i];
        memset(o, 0, sizeof *o);
        o->def = &probes[i];
        if (!sel[i])
            continue;
        if (!probes[i].applies(ctx, o->reason, sizeof o->reason)) {
            if (!o->reason[0])
                strcpy(o->reason, "does not apply to this machine");
            continue;
        }
        if (!watched) {
            probe_quiet_baseline(&ctx->quiet, ctx->opts.quick ? QUIET_BASELINE_QUICK_S : QUIET_BASELINE_FULL_S);
            watched = true;
        }
        ctx->current = &probes[i];
        cp_error err;
        cp_error_clear(&err);
        probe_quiet_start(&ctx->quiet);
        int64_t t0 = cp_now_ns();
        o->ran = true;
        o->status = probes[i].run(ctx, &err);
        o->seconds = (double)(cp_now_ns() - t0) / 1e9;
        probe_quiet_end(&ctx->quiet, probes[i].name, own_traffic(&probes[i]));
        ctx->current = NULL;
        if (o->status < 0) {
            cp_error_format(&err, o->reason, sizeof o->reason);
            failed++;
        }
    }
    return failed;
}

gpu_rt *probe_gpu(probe_ctx *ctx)
{
    if (ctx->gpu_state == 0) {
        gpu_rt *rt = cp_xcalloc(1, sizeof *rt);
        if (gpu_open(rt, ctx->gpu_why, sizeof ctx->gpu_why) == 0) {
            ctx->gpu = rt;
            ctx->gpu_state = 1;
        } else {
            free(rt);
            ctx->gpu_state = -1;
        }
        if (ctx->topology) {
            rep_node *g = rep_obj(ctx->rep, ctx->topology, "gpu_runtime", "GPU runtime");
            rep_bool(ctx->rep, g, "available", "available", ctx->gpu_state > 0);
            if (ctx->gpu_state > 0) {
                rep_null(ctx->rep, g, "reason", "reason", NULL);
                rep_str(ctx->rep, g, "library", "library", ctx->gpu->cudart_path);
                rep_int(ctx->rep, g, "devices", "devices", ctx->gpu->n_devices, NULL);
                rep_bool(ctx->rep, g, "nvml", "NVML", ctx->gpu->nvml_ok);
            } else {
                rep_str(ctx->rep, g, "reason", "reason", ctx->gpu_why);
            }
        }
    }
    return ctx->gpu;
}

double probe_efficiency(double value, double peak)
{
    if (!isfinite(value) || !isfinite(peak) || peak <= 0)
        return NAN;
    return value / peak;
}

/* stat .. impossible_value of one results[] row. */
static void stats_cells(rep_report *r, rep_node *row, const probe_row *w)
{
    rep_cell_str(r, row, probe_stat_name(w->stat));
    const probe_stats *st = &w->stats;
    if (st->n == 0) {
        rep_cell_null(r, row); /* rounds */
        for (int k = 0; k < 6; k++)
            rep_cell_null(r, row);
    } else {
        rep_cell_int(r, row, (int64_t)st->n);
        rep_cell_num(r, row, st->median);
        rep_cell_num(r, row, st->min);
        rep_cell_num(r, row, st->max);
        rep_cell_num(r, row, st->p10);
        rep_cell_num(r, row, st->p90);
        rep_cell_num(r, row, st->cv * 100);
    }
    rep_cell_int(r, row, (int64_t)st->rejected);
    rep_cell_bool(r, row, w->impossible);
    rep_cell_num(r, row, w->impossible ? w->impossible_value : NAN);
}

void probe_report(probe_ctx *ctx, const probe_outcome *out, size_t n_out)
{
    rep_report *r = ctx->rep;
    static const rep_col cols[] = {
        { "probe", "probe", NULL, -1 },       { "layer", "layer", NULL, -1 },
        { "metric", "metric", NULL, -1 },     { "value", "value", NULL, 3 },
        { "unit", "unit", NULL, -1 },         { "peak", "peak", NULL, 3 },
        { "efficiency", "eff", NULL, 3 },     { "method", "method", NULL, -1 },
        { "op", "op", NULL, -1 },             { "size_bytes", "size", "bytes", -1 },
        { "time_us", "time", "us", 2 },       { "algbw_gbps", "algbw", "GB/s", 2 },
        { "busbw_gbps", "busbw", "GB/s", 2 }, { "in_place", "in place", NULL, -1 },
        { "wrong", "wrong", NULL, -1 },       { "buffers", "buffers", NULL, -1 },
        /* the statistics of the rounds (probe_stats.h), in the row's unit */
        { "stat", "stat", NULL, -1 },         { "rounds", "rounds", NULL, -1 },
        { "median", "median", NULL, 3 },      { "min", "min", NULL, 3 },
        { "max", "max", NULL, 3 },            { "p10", "p10", NULL, 3 },
        { "p90", "p90", NULL, 3 },            { "cv_pct", "cv", "%", 1 },
        { "rounds_rejected", "rejected", NULL, -1 },
        { "impossible", "impossible", NULL, -1 }, { "impossible_value", "impossible value", NULL, 3 },
    };
    rep_node *t = rep_table(r, r->root, "results", "results", cols, CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < ctx->n_results; i++) {
        const probe_result *pr = &ctx->results[i];
        const probe_row *w = &pr->row;
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, pr->probe);
        rep_cell_str(r, row, probe_layer_name(pr->layer));
        rep_cell_str(r, row, w->metric);
        rep_cell_num(r, row, w->value);
        rep_cell_str(r, row, w->unit);
        rep_cell_num(r, row, w->peak);
        rep_cell_num(r, row, probe_efficiency(w->value, w->peak));
        rep_cell_str(r, row, w->method);
        if (w->is_coll) {
            rep_cell_str(r, row, w->op);
            rep_cell_int(r, row, (int64_t)w->size_bytes);
            rep_cell_num(r, row, w->time_us);
            rep_cell_num(r, row, w->algbw_gbps);
            rep_cell_num(r, row, w->busbw_gbps);
            rep_cell_bool(r, row, w->in_place);
            if (w->wrong >= 0)
                rep_cell_int(r, row, w->wrong);
            else
                rep_cell_null(r, row);
            if (w->buffers)
                rep_cell_str(r, row, w->buffers);
            else
                rep_cell_null(r, row);
        } else {
            if (w->op)
                rep_cell_str(r, row, w->op);
            else
                rep_cell_null(r, row);
            if (w->size_bytes)
                rep_cell_int(r, row, (int64_t)w->size_bytes);
            else
                rep_cell_null(r, row);
            if (w->time_us > 0)
                rep_cell_num(r, row, w->time_us);
            else
                rep_cell_null(r, row);
            for (int k = 0; k < 5; k++)
                rep_cell_null(r, row);
        }
        stats_cells(r, row, w);
    }
    static const rep_col skip_cols[] = { { "probe", "probe", NULL, -1 }, { "reason", "reason", NULL, -1 } };
    rep_node *sk = rep_table(r, r->root, "skipped", "skipped", skip_cols, 2);
    rep_node *er = rep_table(r, r->root, "errors", "errors", skip_cols, 2);
    static const rep_col ran_cols[] = { { "probe", "probe", NULL, -1 }, { "layer", "layer", NULL, -1 },
                                        { "seconds", "seconds", "s", 2 } };
    rep_node *ran = rep_table(r, r->root, "probes", "probes run", ran_cols, 3);
    for (size_t i = 0; i < n_out; i++) {
        const probe_outcome *o = &out[i];
        if (!o->def)
            continue;
        if (o->ran) {
            rep_node *row = rep_row(r, ran);
            rep_cell_str(r, row, o->def->name);
            rep_cell_str(r, row, probe_layer_name(o->def->layer));
            rep_cell_num(r, row, o->seconds);
        }
        if (o->reason[0]) {
            rep_node *row = rep_row(r, o->ran ? er : sk);
            rep_cell_str(r, row, o->def->name);
            rep_cell_str(r, row, o->reason);
        }
    }
    /* the verdict early in the text: a reader meets it before the figures */
    probe_quiet_report(&ctx->quiet, r, r->root);
    if (!rep_move_after(r->root, "quiet", "mode"))
        rep_move_after(r->root, "quiet", NULL);
}
