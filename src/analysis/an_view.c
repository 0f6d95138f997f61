/* an_view.c - the `view` analyzer: HTA-compatible and exact per-rank views
 * of the timeline (see an_results.h), plus the interval and statistics
 * helpers the other trace analyzers share.
 *
 * HTA's preprocessing, replayed (HolisticTraceAnalysis, trace parser and
 * Trace._filter_irrelevant_gpu_kernels):
 *  1. events without a duration (instants) and the "Trace" span are dropped;
 *  2. when the file has a fractional timestamp, every event is rounded to
 *     whole microseconds as HTA's float64 arithmetic does it: ts and dur
 *     read as the nearest doubles of their decimal microseconds, end = ts +
 *     dur rounded to a double, then start rounded up and end down (so a
 *     sub-us event gets a negative duration; and at epoch magnitudes, where
 *     a double holds a microsecond time only to 1/4 us, a start of .047 us
 *     past a whole us is read as .0 and stays there);
 *  3. "stream" is the event's stream argument (-1 without one); a "GPU
 *     kernel" is an event with stream >= 0 and a correlation id, or an
 *     "Event Sync"/"Context Sync"; everything else is a "CPU" event;
 *  4. when the trace set has two or more distinct ProfilerStep#N names, CPU
 *     events starting at or after the start of the rank's last ProfilerStep
 *     are dropped, and a GPU kernel is kept once per kept CPU event that
 *     shares its correlation id (an inner join: usually once, sometimes
 *     zero or several times).
 * The exact view keeps every event with its exact nanoseconds and counts as
 * GPU work only kernels, copies and memsets (no sync events, no
 * annotations), classified by the timeline (or, for device types the
 * timeline does not classify, by HTA's name rules).
 */
#include "an_results.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sync_names[] = { "Event Sync", "Context Sync" };

static bool prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool prefix_any(const char *s, const char *const *ps, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (prefix(s, ps[k]))
            return true;
    return false;
}

/* HTA's patterns are Python re.match (anchored at the start): "^x" and "x"
 * are prefixes, ".*x" is a substring. */
int an_hta_ktype(const char *name)
{
    static const char *const comm[] = { "nccl", "hip", "hccl" };
    static const char *const mem[] = { "Memcpy", "hipMemcpy", "Memset", "hipMemset", "dma" };
    static const char *const not_compute[] = { "nccl", "Stream Wait Event", "runFunction", "hip", "job_exe",
                                               "packet", "pe_exe", "cpum_exe_subgraph", "hccl",
                                               "collective_subgraph_execution" };
    if (prefix_any(name, comm, CP_ARRAY_LEN(comm)) || strstr(name, "ncclKernel"))
        return AN_KT_COMM;
    if (prefix_any(name, mem, CP_ARRAY_LEN(mem)))
        return AN_KT_MEMORY;
    if (prefix_any(name, not_compute, CP_ARRAY_LEN(not_compute)) || strstr(name, "Memcpy") ||
        strstr(name, "Memset") || strstr(name, "dma") || strstr(name, "Sync") ||
        (prefix(name, "cuda") && strstr(name + 4, "LaunchKernel")))
        return AN_KT_OTHER;
    return AN_KT_COMPUTE;
}

const char *an_hta_short_name(const char *name, char *buf, size_t size)
{
    static const char *const mem[] = { "Memcpy", "hipMemcpy", "Memset", "hipMemset", "dma" };
    if (size == 0)
        return buf;
    if (prefix_any(name, mem, CP_ARRAY_LEN(mem)) || (!strchr(name, '<') && !strchr(name, '('))) {
        snprintf(buf, size, "%s", name);
        return buf;
    }
    /* a stack of characters: '>' pops back to its '<', ')' back to its '(' ("->" removed first) */
    size_t n = 0;
    for (const char *c = name; *c; c++) {
        if (c[0] == '-' && c[1] == '>') {
            c++;
            continue;
        }
        char open = *c == '>' ? '<' : *c == ')' ? '(' : 0;
        if (open) {
            while (n && buf[n - 1] != open)
                n--;
            if (n)
                n--;
        } else if (n + 1 < size) {
            buf[n++] = *c;
        }
    }
    buf[n] = 0;
    char *last = strrchr(buf, ' '); /* .split(" ")[-1] */
    if (last)
        memmove(buf, last + 1, strlen(last + 1) + 1);
    return buf;
}

bool an_hta_kernel_cat(const char *cat)
{
    static const char *const cats[] = { "kernel", "Kernel", "gpu_memset", "Memset",
                                        "gpu_memcpy", "Memcpy", "mtia_ccp_events" };
    for (size_t k = 0; k < CP_ARRAY_LEN(cats); k++)
        if (strcmp(cat, cats[k]) == 0)
            return true;
    return false;
}

/* The exact view's type by name, for device events the timeline does not
 * classify (MTIA): communication by name, memory copies and DMA, else
 * compute (device work, whatever its bookkeeping name). */
static int exact_name_ktype(const char *name)
{
    if (strncmp(name, "nccl", 4) == 0 || strstr(name, "gloo:"))
        return AN_KT_COMM;
    if (strstr(name, "Memcpy") || strstr(name, "Memset") || strncmp(name, "dma", 3) == 0)
        return AN_KT_MEMORY;
    return AN_KT_COMPUTE;
}

/* ---- interval and statistics helpers ---- */

size_t an_union(const an_view *v, unsigned mask, int64_t **out)
{
    int64_t *iv = cp_xmalloc((2 * v->n_gpu + 2) * sizeof *iv);
    size_t n = 0;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t i = v->gpu[k];
        if (!(v->ktype[i] & mask))
            continue;
        int64_t a = v->t0[i], b = v->t1[i];
        if (n && a <= iv[2 * n - 1]) { /* gpu[] is sorted by start */
            if (b > iv[2 * n - 1])
                iv[2 * n - 1] = b;
        } else {
            iv[2 * n] = a;
            iv[2 * n + 1] = b;
            n++;
        }
    }
    *out = iv;
    return n;
}

int64_t an_union_len(const int64_t *iv, size_t n)
{
    int64_t s = 0;
    for (size_t k = 0; k < n; k++)
        s += iv[2 * k + 1] - iv[2 * k];
    return s;
}

int64_t an_intersect_len(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    int64_t s = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t lo = CP_MAX(a[2 * i], b[2 * j]), hi = CP_MIN(a[2 * i + 1], b[2 * j + 1]);
        if (hi > lo)
            s += hi - lo;
        if (a[2 * i + 1] < b[2 * j + 1])
            i++;
        else
            j++;
    }
    return s;
}

double an_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double pos = (double)(n - 1) * q;
    size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
    return s[lo] + (s[hi] - s[lo]) * (pos - (double)lo);
}

int an_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

double an_std(const double *v, size_t n, double mean)
{
    if (n < 2)
        return 0;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    return sqrt(ss / (double)(n - 1));
}

void an_describe_sorted(const double *v, size_t n, an_stats *s)
{
    double sum = 0; /* in sorted order: exact for integer samples; callers with fractional samples
                     * that must match pandas to the last bit recompute the mean in sample order */
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s->count = n;
    s->mean = sum / (double)n;
    s->std = n > 1 ? an_std(v, n, s->mean) : NAN;
    s->min = v[0];
    s->max = v[n - 1];
    s->p25 = an_quantile_sorted(v, n, 0.25);
    s->p50 = an_quantile_sorted(v, n, 0.5);
    s->p75 = an_quantile_sorted(v, n, 0.75);
}

void an_stats_cells(an_ctx *ctx, rep_node *row, const an_stats *s)
{
    rep_cell_int(ctx->rep, row, (int64_t)s->count);
    double v[] = { s->mean, s->std, s->min, s->p25, s->p50, s->p75, s->max };
    for (size_t k = 0; k < CP_ARRAY_LEN(v); k++)
        rep_cell_num(ctx->rep, row, v[k]);
}

bool an_name_is(const an_ctx *ctx, uint32_t name, unsigned flag)
{
    const an_views_result *vr = ctx->results[AN_view];
    return vr && name < vr->n_names && (vr->name_flags[name] & flag);
}

const an_rank_views *an_views(const an_ctx *ctx, size_t r)
{
    const an_views_result *vr = ctx->results[AN_view];
    return vr && r < vr->n_ranks ? &vr->ranks[r] : NULL;
}

rep_node *an_view_node(an_ctx *ctx, size_t r, bool exact)
{
    if (!exact)
        return ctx->rank_nodes[r];
    an_views_result *vr = ctx->results[AN_view];
    if (!vr->exact_nodes[r]) /* detached: parent NULL */
        vr->exact_nodes[r] = rep_obj(ctx->rep, NULL, "exact", "exact (every event, exact ns, real GPU work only)");
    return vr->exact_nodes[r];
}

/* ---- building the views ---- */

typedef struct build_ctx {
    const tl_timeline *tl;
    const uint8_t *name_flags;   /* AN_NAME_* by string id */
    int n_step_names;
    uint32_t key_stream;         /* string id of "stream" (UINT32_MAX if absent) */
    an_views_result *res;
} build_ctx;

static bool arg_int_id(const tl_timeline *tl, size_t ev, uint32_t key, int64_t *out)
{
    if (key == UINT32_MAX)
        return false;
    tl_arg a;
    if (!tl_arg_by_id(tl, ev, key, &a) || (a.type != TL_ARG_INT && a.type != TL_ARG_BOOL))
        return false;
    *out = a.v.i;
    return true;
}

/* HTA's "stream" column: the event's stream argument, -1 without one.
 * Readers move a GPU event's stream argument into its track key and flag
 * the GPU events that had none (TL_F_NO_STREAM_ARG). */
static int64_t hta_stream(const build_ctx *b, size_t ev)
{
    const tl_timeline *tl = b->tl;
    int64_t s;
    if (arg_int_id(tl, ev, b->key_stream, &s))
        return s;
    const tl_track *tr = &tl->tracks[tl->track[ev]];
    if (tr->key.kind == TL_TRACK_GPU && !(tl->flags[ev] & TL_F_NO_STREAM_ARG))
        return tr->key.stream;
    return -1;
}

/* In HTA's dataframe at all (has a duration, not the Trace span). */
static bool hta_row(const tl_timeline *tl, size_t ev)
{
    return !(tl->flags[ev] & (TL_F_INSTANT | TL_F_NO_DUR)) && tl->cat[ev] != TL_CAT_TRACE;
}

bool an_hta_row(const tl_timeline *tl, size_t ev) { return hta_row(tl, ev); }

int64_t an_hta_stream(const tl_timeline *tl, size_t ev)
{
    build_ctx b = { .tl = tl, .key_stream = cp_intern_find(&tl->strings, "stream", 6) };
    return hta_row(tl, ev) ? hta_stream(&b, ev) : -1;
}

/* The double nearest to ns / 1000 (ties to even): what Python's float()
 * makes of the decimal microseconds "U.NNN" HTA's JSON parser reads. Below
 * 2^53 both operands of the division are exact, so IEEE division rounds it
 * correctly; above (absolute ns since the epoch), the division's result and
 * its two neighbours are compared exactly in 128-bit integers. */
double an_hta_us_double(int64_t ns)
{
    if (ns > -((int64_t)1 << 53) && ns < ((int64_t)1 << 53))
        return (double)ns / 1000.0;
    bool neg = ns < 0;
    unsigned __int128 want = (unsigned __int128)(neg ? -(uint64_t)ns : (uint64_t)ns) << 16; /* ns * 2^16 */
    double d = (double)(neg ? -(uint64_t)ns : (uint64_t)ns) / 1000.0, best = d;
    unsigned __int128 best_err = ~(unsigned __int128)0;
    double cand[3] = { nextafter(d, 0), d, nextafter(d, INFINITY) };
    for (int k = 0; k < 3; k++) {
        int e;
        double f = frexp(cand[k], &e); /* cand = f * 2^e, f in [0.5, 1) */
        uint64_t m = (uint64_t)ldexp(f, 53);
        int sh = e - 53 + 16; /* cand * 1000 * 2^16 = 1000 * m * 2^sh; sh >= 0 here (cand >= 2^43) */
        unsigned __int128 got = ((unsigned __int128)m * 1000u) << sh;
        unsigned __int128 err = got > want ? got - want : want - got;
        if (err < best_err || (err == best_err && (m & 1) == 0)) {
            best_err = err;
            best = cand[k];
        }
    }
    return neg ? -best : best;
}

/* The exact view's notion of GPU work. */
static int exact_ktype(const build_ctx *b, size_t ev)
{
    const tl_timeline *tl = b->tl;
    tl_cat cat = (tl_cat)tl->cat[ev];
    if (cat == TL_CAT_GPU_USER_ANNOTATION || cat == TL_CAT_CUDA_SYNC)
        return AN_KT_NONE;
    switch ((tl_kclass)tl->kclass[ev]) {
    case TL_K_COMPUTE: return AN_KT_COMPUTE;
    case TL_K_COMM: return AN_KT_COMM;
    case TL_K_MEMCPY:
    case TL_K_MEMSET: return AN_KT_MEMORY;
    case TL_K_SYNC: return AN_KT_NONE;
    case TL_K_NONE: break;
    }
    /* device types the timeline does not classify (MTIA "mtia_ccp_events") */
    const char *cn = tl_str(tl, tl_event_cat_name(tl, ev));
    bool kernel_cat = strncmp(cn, "kernel", 6) == 0 || strncmp(cn, "gpu_mem", 7) == 0 ||
                      strncmp(cn, "mtia_ccp_events", 15) == 0;
    if (!kernel_cat || tl->tracks[tl->track[ev]].key.kind != TL_TRACK_GPU)
        return AN_KT_NONE;
    const char *nm = tl_str(tl, tl->name[ev]);
    if (cp_str_icontains(nm, "nccl") || cp_str_icontains(nm, "rccl"))
        return AN_KT_COMM;
    return exact_name_ktype(nm);
}

static void view_alloc(an_view *v, size_t base, size_t n, bool exact)
{
    size_t m = n ? n : 1;
    v->exact = exact;
    v->base = base;
    v->n = n;
    v->t0 = v->t1 = NULL; /* the builders set them: their own arrays or borrowed ones */
    v->stream = cp_xmalloc(m * sizeof *v->stream);
    v->mult = cp_xcalloc(m, sizeof *v->mult);
    v->ktype = cp_xcalloc(m, sizeof *v->ktype);
    v->partner = cp_xmalloc(m * sizeof *v->partner);
    for (size_t i = 0; i < n; i++)
        v->partner[i] = -1;
}

static void view_free(an_view *v)
{
    if (!v->t0_borrowed)
        free(v->t0);
    if (!v->t1_borrowed)
        free(v->t1);
    free(v->stream);
    free(v->mult);
    free(v->ktype);
    free(v->partner);
    free(v->kernel_cat);
    free(v->gpu);
}


/* Fill v->gpu from stream/mult and sort it. */
static void view_index_gpu(an_view *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->stream[i] >= 0)
            n += v->mult[i];
    /* (t0, t1, index): two stable radix passes, t1 first, over the events
     * in index order (cp_sort_idx2's method, on 32-bit indices) */
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv), *tmp = cp_xmalloc((n ? n : 1) * sizeof *tmp);
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->stream[i] >= 0)
            for (uint32_t k = 0; k < v->mult[i]; k++)
                kv[m++] = (cp_kv){ cp_key_i64(v->t1[i]), i };
    cp_sort_kv(kv, m, tmp);
    for (size_t k = 0; k < m; k++)
        kv[k].key = cp_key_i64(v->t0[kv[k].val]);
    cp_sort_kv(kv, m, tmp);
    free(tmp);
    v->gpu = cp_xmalloc((n ? n : 1) * sizeof *v->gpu);
    for (size_t k = 0; k < m; k++)
        v->gpu[k] = (uint32_t)kv[k].val;
    v->n_gpu = m;
    free(kv);
}

void an_corr_sort(an_corr_idx *v, size_t n)
{
    /* one stable radix sort by corr after one by idx: (corr, idx) order
     * whatever order the caller built v in */
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv), *tmp = cp_xmalloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ (uint64_t)v[i].idx, (uint64_t)i };
    cp_sort_kv(kv, n, tmp); /* free when already in idx order, the common case */
    for (size_t i = 0; i < n; i++)
        kv[i].key = cp_key_i64(v[kv[i].val].corr);
    cp_sort_kv(kv, n, tmp);
    for (size_t i = 0; i < n; i++)
        tmp[i] = (cp_kv){ (uint64_t)v[kv[i].val].corr, (uint64_t)v[kv[i].val].idx };
    for (size_t i = 0; i < n; i++)
        v[i] = (an_corr_idx){ (int64_t)tmp[i].key, (size_t)tmp[i].val };
    free(kv);
    free(tmp);
}

size_t an_corr_lower(const an_corr_idx *ci, size_t n, int64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ci[mid].corr < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void build_hta(const build_ctx *b, const tl_rank *rk, an_view *v)
{
    const tl_timeline *tl = b->tl;
    size_t n = v->n, base = v->base;
    int64_t clock = rk->meta.has_base_time ? rk->meta.base_time_ns : 0;
    bool *gk = cp_xcalloc(n ? n : 1, sizeof *gk);
    bool *row = cp_xcalloc(n ? n : 1, sizeof *row);
    v->t1 = cp_xmalloc((n ? n : 1) * sizeof *v->t1);
    v->kernel_cat = cp_xcalloc(n ? n : 1, sizeof *v->kernel_cat);
    for (size_t i = 0; i < n; i++) {
        size_t ev = base + i;
        row[i] = hta_row(tl, ev);
        if (row[i] && (tl->ts_ns[ev] - clock) % 1000 != 0)
            v->rounded = true;
    }
    if (v->rounded) {
        v->t0 = cp_xmalloc((n ? n : 1) * sizeof *v->t0);
    } else {
        v->t0 = tl->ts_ns + base;
        v->t0_borrowed = true;
    }
    for (size_t i = 0; i < n; i++) {
        size_t ev = base + i;
        int64_t raw = tl->ts_ns[ev] - clock;
        if (v->rounded) { /* HTA: end = ts + dur in float64, then ceil(ts), floor(end) */
            double ts_us = an_hta_us_double(raw), end_us = ts_us + an_hta_us_double(tl->dur_ns[ev]);
            v->t0[i] = (int64_t)ceil(ts_us) * 1000 + clock;
            v->t1[i] = (int64_t)floor(end_us) * 1000 + clock;
        } else {
            v->t1[i] = tl->ts_ns[ev] + tl->dur_ns[ev];
        }
        v->stream[i] = row[i] ? hta_stream(b, ev) : -1;
        gk[i] = row[i] &&
                ((v->stream[i] >= 0 && tl->corr[ev] >= 0) || (b->name_flags[tl->name[ev]] & AN_NAME_SYNC));
        v->mult[i] = row[i] ? 1 : 0;
    }
    /* index_correlation: a GPU kernel's partner is the CPU row with its
     * correlation id (computed before the step filter, as HTA does) */
    size_t ncpu = 0;
    an_corr_idx *ci = cp_xmalloc((n ? n : 1) * sizeof *ci);
    for (size_t i = 0; i < n; i++)
        if (row[i] && !gk[i] && tl->corr[base + i] != -1)
            ci[ncpu++] = (an_corr_idx){ tl->corr[base + i], i };
    an_corr_sort(ci, ncpu);
    for (size_t i = 0; i < n; i++) {
        if (!gk[i] || tl->corr[base + i] == -1)
            continue;
        int64_t c = tl->corr[base + i];
        size_t p = an_corr_lower(ci, ncpu, c);
        size_t last = SIZE_MAX;
        for (; p < ncpu && ci[p].corr == c; p++)
            last = ci[p].idx;
        if (last != SIZE_MAX)
            v->partner[i] = (int32_t)last;
    }
    /* the last-step drop */
    if (b->n_step_names >= 2) {
        bool any_cpu = false, any_step = false;
        int64_t last = INT64_MAX, min_cpu = INT64_MAX;
        for (size_t i = 0; i < n; i++) {
            if (!row[i] || gk[i])
                continue;
            any_cpu = true;
            min_cpu = CP_MIN(min_cpu, v->t0[i]);
            if (b->name_flags[tl->name[base + i]] & AN_NAME_STEP) {
                last = any_step ? CP_MAX(last, v->t0[i]) : v->t0[i];
                any_step = true;
            }
        }
        if (!any_step)
            last = min_cpu;
        if (any_cpu) {
            v->dropped_last_step = true;
            v->last_step_start_ns = last;
            size_t nk = 0;
            int64_t neg = 0; /* kept CPU rows with correlation -1 */
            for (size_t i = 0; i < n; i++) {
                if (!row[i] || gk[i])
                    continue;
                if (v->t0[i] >= last) {
                    v->mult[i] = 0;
                    continue;
                }
                if (tl->corr[base + i] == -1)
                    neg++;
                else
                    ci[nk++] = (an_corr_idx){ tl->corr[base + i], i };
            }
            an_corr_sort(ci, nk);
            for (size_t i = 0; i < n; i++) {
                if (!gk[i])
                    continue;
                int64_t c = tl->corr[base + i];
                if (c == -1) {
                    v->mult[i] = (uint32_t)CP_MIN(neg, (int64_t)UINT32_MAX);
                    continue;
                }
                size_t p = an_corr_lower(ci, nk, c), q = p;
                while (q < nk && ci[q].corr == c)
                    q++;
                v->mult[i] = (uint32_t)(q - p);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!v->mult[i])
            v->stream[i] = -1;
        if (v->stream[i] >= 0) {
            v->ktype[i] = (uint8_t)an_hta_ktype(tl_str(tl, tl->name[base + i]));
            v->kernel_cat[i] = (b->name_flags[tl_event_cat_name(tl, base + i)] & AN_NAME_HTA_KCAT) != 0;
        }
    }
    free(ci);
    free(gk);
    free(row);
    view_index_gpu(v);
}

/* hta: the rank's HTA view, built first; its ends are the exact ends
 * unless it rounded them, and are then shared (8 bytes an event). */
static void build_exact(const build_ctx *b, const an_view *hta, an_view *v)
{
    const tl_timeline *tl = b->tl;
    v->t0 = tl->ts_ns + v->base; /* exact starts are the timeline's */
    v->t0_borrowed = true;
    v->t1_borrowed = !hta->rounded;
    v->t1 = v->t1_borrowed ? hta->t1 : cp_xmalloc((v->n ? v->n : 1) * sizeof *v->t1);
    for (size_t i = 0; i < v->n; i++) {
        size_t ev = v->base + i;
        if (!v->t1_borrowed)
            v->t1[i] = tl->ts_ns[ev] + tl->dur_ns[ev];
        v->mult[i] = tl->cat[ev] == TL_CAT_TRACE ? 0 : 1;
        v->ktype[i] = (uint8_t)(v->mult[i] ? exact_ktype(b, ev) : AN_KT_NONE);
        v->stream[i] = -1;
        if (v->ktype[i] != AN_KT_NONE) {
            const tl_track *tr = &tl->tracks[tl->track[ev]];
            int64_t s = tr->key.stream;
            if (s < 0 && !arg_int_id(tl, ev, b->key_stream, &s))
                s = 0;
            v->stream[i] = s < 0 ? 0 : s;
            int64_t l = tl->link[ev];
            if (l >= (int64_t)v->base && l < (int64_t)(v->base + v->n) &&
                tl->tracks[tl->track[l]].key.kind == TL_TRACK_CPU)
                v->partner[i] = (int32_t)(l - (int64_t)v->base);
        }
    }
    view_index_gpu(v);
}

static void build_rank(void *ctx, size_t r)
{
    const build_ctx *b = ctx;
    const tl_timeline *tl = b->tl;
    const tl_rank *rk = &tl->ranks[r];
    size_t b0 = 0, b1 = 0;
    if (rk->track_end > rk->track_begin) {
        b0 = tl->tracks[rk->track_begin].ev_begin;
        b1 = tl->tracks[rk->track_end - 1].ev_end;
    }
    an_rank_views *rv = &b->res->ranks[r];
    view_alloc(&rv->hta, b0, b1 - b0, false);
    view_alloc(&rv->exact, b0, b1 - b0, true);
    build_hta(b, rk, &rv->hta);
    build_exact(b, &rv->hta, &rv->exact);
}

static void views_free(void *self)
{
    an_views_result *r = self;
    for (size_t i = 0; i < r->n_ranks; i++) {
        view_free(&r->ranks[i].hta);
        view_free(&r->ranks[i].exact);
    }
    free(r->ranks);
    free(r->exact_nodes);
    free(r->name_flags);
    free(r);
}

/* HTA's KERNEL_LAUNCH_CATEGORY_PATTERN, re.match: (cuda.*LaunchKernel)|(cuLaunchKernel)|(^runFunction) */
static bool hta_kernel_launch(const char *s)
{
    return (prefix(s, "cuda") && strstr(s + 4, "LaunchKernel")) || prefix(s, "cuLaunchKernel") ||
           prefix(s, "runFunction");
}

static bool step_name(const char *s)
{
    return strncmp(s, "ProfilerStep#", 13) == 0 && s[13] >= '0' && s[13] <= '9';
}

int an_view_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    size_t ns = cp_intern_count(&tl->strings);
    uint8_t *flags = cp_xcalloc(ns ? ns : 1, 1), *used = cp_xcalloc(ns ? ns : 1, 1);
    for (size_t s = 0; s < ns; s++) {
        const char *nm = cp_intern_str(&tl->strings, (uint32_t)s);
        flags[s] = (uint8_t)((step_name(nm) ? AN_NAME_STEP : 0) | (an_is_launch_name(nm) ? AN_NAME_LAUNCH : 0) |
                             (an_is_hta_launch_stats_name(nm) ? AN_NAME_HTA_LAUNCH_STATS : 0) |
                             (an_hta_kernel_cat(nm) ? AN_NAME_HTA_KCAT : 0) |
                             (hta_kernel_launch(nm) ? AN_NAME_HTA_KLAUNCH : 0) |
                             (strncmp(nm, "aten::", 6) == 0 ? AN_NAME_ATEN : 0));
        for (size_t k = 0; k < CP_ARRAY_LEN(sync_names); k++)
            if (strcmp(nm, sync_names[k]) == 0)
                flags[s] |= AN_NAME_SYNC;
    }
    for (size_t e = 0; e < tl->n_events; e++)
        if (hta_row(tl, e))
            used[tl->name[e]] = 1;
    build_ctx b = { .tl = tl, .name_flags = flags };
    for (size_t s = 0; s < ns; s++)
        b.n_step_names += (flags[s] & AN_NAME_STEP) && used[s];
    b.key_stream = cp_intern_find(&tl->strings, "stream", 6);
    an_views_result *res = cp_xcalloc(1, sizeof *res);
    res->free = views_free;
    res->n_ranks = tl->n_ranks;
    res->ranks = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *res->ranks);
    res->n_step_names = b.n_step_names;
    res->name_flags = flags;
    res->n_names = ns;
    res->exact_nodes = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *res->exact_nodes);
    b.res = res;
    cp_par_for(tl->n_ranks, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, build_rank, &b);
    ctx->results[AN_view] = res;
    free(used);

    for (size_t r = 0; r < tl->n_ranks; r++) {
        const an_rank_views *rv = &res->ranks[r];
        rep_node *o = rep_obj(ctx->rep, ctx->rank_nodes[r], "hta_preprocessing", "HTA-compatible preprocessing");
        rep_bool(ctx->rep, o, "rounded_to_us", "timestamps rounded to whole us", rv->hta.rounded);
        rep_bool(ctx->rep, o, "last_step_dropped", "last profiler step dropped", rv->hta.dropped_last_step);
        rep_int(ctx->rep, o, "gpu_events", "GPU events (HTA view)", (int64_t)rv->hta.n_gpu, NULL);
        rep_int(ctx->rep, o, "exact_gpu_events", "GPU work events (exact view)", (int64_t)rv->exact.n_gpu, NULL);
    }
    return 0;
}

/* ---- grouping by name ---- */

static int cmp_group(const void *pa, const void *pb)
{
    const an_group *a = pa, *b = pb;
    if (a->sum_ns != b->sum_ns)
        return a->sum_ns > b->sum_ns ? -1 : 1;
    return (a->name > b->name) - (a->name < b->name);
}

static void group_add(an_group *x, int64_t dur)
{
    x->count++;
    x->sum_ns += (double)dur;
    x->sumsq += (double)dur * (double)dur;
    x->min_ns = CP_MIN(x->min_ns, dur);
    x->max_ns = CP_MAX(x->max_ns, dur);
}

/* Names are interned ids, so the groups are a table indexed by id, filled in
 * input order (each group sums its durations in the order a stable sort by
 * name would give: the same doubles); only when the ids are sparse (more
 * than 4 a pair) are the pairs sorted by name instead. */
size_t an_group_by_name(const uint32_t *names, const int64_t *durs, size_t n, an_group **out)
{
    uint32_t max_name = 0;
    for (size_t i = 0; i < n; i++)
        max_name = CP_MAX(max_name, names[i]);
    an_group *g;
    size_t ng = 0;
    if ((size_t)max_name < 4 * n + 1024) {
        an_group *by_id = cp_xcalloc((size_t)max_name + 1, sizeof *by_id);
        for (size_t i = 0; i < n; i++) {
            an_group *x = &by_id[names[i]];
            if (!x->count)
                *x = (an_group){ names[i], 0, 0, 0, durs[i], durs[i] };
            group_add(x, durs[i]);
        }
        for (size_t id = 0; id <= max_name; id++)
            if (by_id[id].count)
                by_id[ng++] = by_id[id];
        g = by_id;
    } else {
        cp_kv *v = cp_xmalloc((n ? n : 1) * sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = (cp_kv){ names[i], (uint64_t)durs[i] };
        cp_sort_kv(v, n, NULL);
        g = cp_xmalloc((n ? n : 1) * sizeof *g);
        for (size_t i = 0; i < n; i++) {
            uint32_t name = (uint32_t)v[i].key;
            int64_t dur = (int64_t)v[i].val;
            if (!ng || g[ng - 1].name != name)
                g[ng++] = (an_group){ name, 0, 0, 0, dur, dur };
            group_add(&g[ng - 1], dur);
        }
        free(v);
    }
    qsort(g, ng, sizeof *g, cmp_group);
    *out = g;
    return ng;
}

size_t an_fold_others(const an_group *g, size_t ng, size_t top, double ratio, const bool *keep, bool *other)
{
    memset(other, 0, ng * sizeof *other);
    if (ng <= top)
        return 0;
    double *cs = cp_xmalloc(ng * sizeof *cs), *sorted = cp_xmalloc(ng * sizeof *sorted), acc = 0;
    for (size_t k = 0; k < ng; k++)
        sorted[k] = cs[k] = acc += g[k].sum_ns;
    qsort(sorted, ng, sizeof *sorted, an_cmp_double);
    double q = an_quantile_sorted(sorted, ng, ratio);
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        n += other[k] = !(keep && keep[k]) && (cs[k] > q || k >= top);
    free(cs);
    free(sorted);
    return n;
}

void an_fold_merge(const an_group *g, size_t ng, const bool *other, an_group *pooled, an_group *totals)
{
    *pooled = (an_group){ UINT32_MAX, 0, 0, 0, INT64_MAX, INT64_MIN };
    *totals = *pooled;
    for (size_t k = 0; k < ng; k++) {
        if (!other[k])
            continue;
        pooled->count += g[k].count;
        pooled->sum_ns += g[k].sum_ns;
        pooled->sumsq += g[k].sumsq;
        pooled->min_ns = CP_MIN(pooled->min_ns, g[k].min_ns);
        pooled->max_ns = CP_MAX(pooled->max_ns, g[k].max_ns);
        totals->count++;
        totals->sum_ns += g[k].sum_ns;
        totals->sumsq += g[k].sum_ns * g[k].sum_ns;
        totals->min_ns = CP_MIN(totals->min_ns, (int64_t)g[k].sum_ns);
        totals->max_ns = CP_MAX(totals->max_ns, (int64_t)g[k].sum_ns);
    }
}

double an_group_std(const an_group *g)
{
    if (g->count < 2)
        return 0;
    double mean = g->sum_ns / (double)g->count;
    double var = (g->sumsq - (double)g->count * mean * mean) / (double)(g->count - 1);
    return var > 0 ? sqrt(var) : 0;
}
