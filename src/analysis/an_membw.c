/* an_membw.c - the `membw` analyzer: memory copy and memset bandwidth over
 * time per kind, per rank, in both views.
 *
 * HTA's definition (TraceCounters.get_memory_bw_time_series / _summary):
 * memory events (kernel type MEMORY) are grouped by kind: "Memset" for
 * names starting with Memset, the first 11 characters ("Memcpy DtoH",
 * "Memcpy HtoD", "Memcpy DtoD", ...) for names starting with Memcpy, else
 * "Memcpy Unknown". Each event adds its bandwidth to its kind's series at
 * its start and takes it off at its end (a zero-length event lasts 1 us);
 * the series is sampled at every change, and the summary is pandas'
 * describe() of the positive samples (GB/s).
 *
 * HTA view: the bandwidth is the trace's `memory bandwidth (GB/s)` argument
 * (computed by the profiler from bytes and a whole-us duration), events
 * without it add nothing. Exact view: bytes / exact duration (bytes per ns
 * is GB/s), events without bytes or with no duration add nothing. In both,
 * at equal times an end is applied before a start (HTA's unstable sort
 * leaves that order open), and a kind's series is exactly 0 when no copy
 * of it is running (HTA's floating cumulative sum leaves residues there).
 */
#include "an_results.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_KINDS 6
static const char *const kind_names[N_KINDS] = { "Memcpy DtoH", "Memcpy HtoD", "Memcpy DtoD",
                                                 "Memcpy PtoP", "Memset", "Memcpy Unknown" };

typedef struct membw_kind {
    int64_t copies;          /* events with a bandwidth */
    an_stats bw;             /* of the positive samples, GB/s; count 0: none */
} membw_kind;

typedef struct membw_rank {
    membw_kind kinds[N_KINDS];
} membw_rank;

/* HTA get_memory_kernel_type, mapped onto the table (an 11-character
 * prefix not in it counts as Unknown). */
static int kind_of(const char *name)
{
    if (strncmp(name, "Memset", 6) == 0)
        return 4;
    if (strncmp(name, "Memcpy", 6) != 0)
        return 5;
    for (int k = 0; k < 4; k++)
        if (strncmp(name, kind_names[k], 11) == 0)
            return k;
    return 5;
}

typedef struct change {
    int64_t t;
    int end;                 /* 0: end (applied first at equal t), 1: start */
    double bw_gbps;
} change;

static uint64_t change_key(const void *rec, int k, const void *ctx)
{
    (void)ctx;
    const change *c = rec;
    return k == 0 ? cp_key_i64(c->t) : (uint64_t)c->end;
}

static int cmp_double(const void *a, const void *b) { return an_cmp_double(a, b); }

/* Each kind's changes (start +bw, end -bw), sorted; copies counted in out,
 * the device of each kind's first copy in dev. */
static void membw_changes(const an_ctx *ctx, const an_view *v, change *ch[N_KINDS], size_t n[N_KINDS],
                          membw_rank *out, int32_t dev[N_KINDS])
{
    const tl_timeline *tl = ctx->tl;
    size_t cap[N_KINDS] = { 0 };
    uint32_t k_bw = cp_intern_find(&tl->strings, "memory bandwidth (GB/s)", 23);
    uint32_t k_bytes = cp_intern_find(&tl->strings, "bytes", 5);
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t i = v->gpu[k], ev = v->base + i;
        if (v->ktype[i] != AN_KT_MEMORY)
            continue;
        tl_arg a;
        double bw;
        int64_t t0 = v->t0[i], t1 = v->t1[i];
        if (!v->exact) {
            if (k_bw == UINT32_MAX || !tl_arg_by_id(tl, ev, k_bw, &a) || (a.type != TL_ARG_NUM && a.type != TL_ARG_INT))
                continue;
            bw = a.type == TL_ARG_NUM ? a.v.d : (double)a.v.i;
            if (t1 == t0)
                t1 = t0 + 1000; /* HTA: a 0 us copy lasts 1 us */
        } else {
            if (k_bytes == UINT32_MAX || t1 <= t0 || !tl_arg_by_id(tl, ev, k_bytes, &a) || a.type != TL_ARG_INT ||
                a.v.i < 0)
                continue;
            bw = (double)a.v.i / (double)(t1 - t0);
        }
        if (!isfinite(bw))
            continue;
        int kd = kind_of(tl_str(tl, tl->name[ev]));
        if (!out->kinds[kd].copies++)
            dev[kd] = tl->tracks[tl->track[ev]].key.device;
        cp_xgrow((void **)&ch[kd], &cap[kd], n[kd] + 2, sizeof *ch[kd]);
        ch[kd][n[kd]++] = (change){ t0, 1, bw };
        ch[kd][n[kd]++] = (change){ t1, 0, -bw };
    }
    for (int kd = 0; kd < N_KINDS; kd++)
        if (n[kd])
            cp_sort_records(ch[kd], n[kd], sizeof *ch[kd], 2, change_key, NULL);
}

/* The kind's level after change j: exactly 0 when no copy runs. */
static double next_level(double level, int64_t *running, const change *c)
{
    *running += c->end ? 1 : -1;
    return *running ? level + c->bw_gbps : 0;
}

static void membw_compute(const an_ctx *ctx, const an_view *v, void *outp)
{
    membw_rank *out = outp;
    memset(out, 0, sizeof *out);
    change *ch[N_KINDS] = { 0 };
    size_t n[N_KINDS] = { 0 };
    int32_t dev[N_KINDS];
    membw_changes(ctx, v, ch, n, out, dev);
    for (int kd = 0; kd < N_KINDS; kd++) {
        if (!n[kd])
            continue;
        double *pos = cp_xmalloc(n[kd] * sizeof *pos), level = 0;
        size_t np = 0;
        int64_t running = 0;
        for (size_t j = 0; j < n[kd]; j++) {
            level = next_level(level, &running, &ch[kd][j]);
            if (level > 0)
                pos[np++] = level;
        }
        if (np) {
            double *sorted = cp_xmalloc(np * sizeof *sorted);
            memcpy(sorted, pos, np * sizeof *sorted);
            qsort(sorted, np, sizeof *sorted, cmp_double);
            an_describe_sorted(sorted, np, &out->kinds[kd].bw);
            /* the mean and std in sample order, as pandas sums them */
            double sum = 0;
            for (size_t j = 0; j < np; j++)
                sum += pos[j];
            out->kinds[kd].bw.mean = sum / (double)np;
            out->kinds[kd].bw.std = np > 1 ? an_std(pos, np, out->kinds[kd].bw.mean) : NAN;
            free(sorted);
        }
        free(pos);
        free(ch[kd]);
    }
}

static void emit(an_ctx *ctx, rep_node *parent, const void *outp)
{
    const membw_rank *mr = outp;
    static const rep_col cols[] = {
        { "kind", "kind", NULL, -1 },         { "copies", "events", NULL, -1 },
        { "count", "samples", NULL, -1 },     { "mean_gbps", "mean", "GB/s", 2 },
        { "std_gbps", "std", "GB/s", 2 },     { "min_gbps", "min", "GB/s", 2 },
        { "p25_gbps", "p25", "GB/s", 2 },     { "p50_gbps", "p50", "GB/s", 2 },
        { "p75_gbps", "p75", "GB/s", 2 },     { "max_gbps", "max", "GB/s", 2 },
    };
    rep_node *t = rep_table(ctx->rep, parent, "memory_bw", "memory copy/set bandwidth over time, by kind", cols,
                            CP_ARRAY_LEN(cols));
    for (int kd = 0; kd < N_KINDS; kd++) {
        const membw_kind *k = &mr->kinds[kd];
        if (!k->bw.count)
            continue;
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, kind_names[kd]);
        rep_cell_int(ctx->rep, row, k->copies);
        an_stats_cells(ctx, row, &k->bw);
    }
}

size_t an_membw_series(const an_ctx *ctx, const an_view *v, an_counter_track **out)
{
    membw_rank counts;
    memset(&counts, 0, sizeof counts);
    change *ch[N_KINDS] = { 0 };
    size_t n[N_KINDS] = { 0 }, nt = 0;
    int32_t dev[N_KINDS];
    membw_changes(ctx, v, ch, n, &counts, dev);
    an_counter_track *tr = cp_xcalloc(N_KINDS, sizeof *tr);
    for (int kd = 0; kd < N_KINDS; kd++) {
        if (!n[kd])
            continue;
        an_counter_track *t = &tr[nt++];
        *t = (an_counter_track){ kind_names[kd], "Memcpy BW", -1, dev[kd], cp_xmalloc(n[kd] * sizeof *t->pts), n[kd],
                                 true };
        double level = 0;
        int64_t running = 0;
        for (size_t j = 0; j < n[kd]; j++) {
            level = next_level(level, &running, &ch[kd][j]);
            t->pts[j] = (an_counter_pt){ ch[kd][j].t, level };
        }
        free(ch[kd]);
    }
    *out = tr;
    return nt;
}

void an_counter_tracks_free(an_counter_track *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].owns_pts)
            free(t[i].pts);
    free(t);
}

int an_membw_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(membw_rank), membw_compute, emit, NULL };
    return an_run_dual(ctx, AN_membw, &ops);
}
