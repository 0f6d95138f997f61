/* an_expert.c - Nsight Systems' expert rules, on any timeline.
 *
 * Users of nsys know its rules (`nsys analyze`): GPU gaps, GPU time
 * utilization, synchronous memcpy/memset, async memcpy from pageable memory,
 * synchronization APIs. We apply the same rules with the same default
 * thresholds to every rank, whatever format the trace came in, so an nsys
 * user finds the familiar checks in our report and a PyTorch profiler user
 * gets them too.
 *
 * - gpu_gaps: per rank and device, gaps of at least 500 ms between the union
 *   of all GPU operations (kernels, copies, memsets) on that device.
 * - gpu_time_util: per rank and device, the span from the first to the last
 *   GPU operation is cut into 30 equal chunks; chunks whose busy time (union
 *   of GPU operations) is under 50 % are flagged.
 * - cuda_memcpy_sync / cuda_memset_sync: copies and memsets launched by a
 *   synchronous API (cudaMemcpy, cudaMemset, cuMemcpyHtoD, ...): the host
 *   thread blocks until the GPU finishes.
 * - cuda_memcpy_async: asynchronous copies that touch pageable host memory,
 *   which the driver turns into synchronous staged copies.
 * - cuda_api_sync: device/stream/event/context synchronize calls.
 */
#include "analysis.h"
#include "an_expert.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const rule_keys[] = { "gpu_gaps", "gpu_time_util", "cuda_memcpy_sync", "cuda_memset_sync",
                                         "cuda_memcpy_async", "cuda_api_sync" };
static const char *const rule_titles[] = {
    "GPU idle gaps of 500 ms or more",
    "time chunks with GPU utilization under 50 %",
    "synchronous memcpy (host blocks until the copy ends)",
    "synchronous memset",
    "async memcpy from pageable host memory (runs synchronously)",
    "device/stream/event synchronize calls",
};
static const char *const rule_advice[] = {
    "look at what the host does in the gap (data loading, checkpoint, host sync) and overlap it with GPU work",
    "find the host-side work in the low chunks; batch small kernels, use CUDA graphs, prefetch data",
    "use cudaMemcpyAsync on a non-default stream with pinned host memory",
    "use cudaMemsetAsync on a stream",
    "pin the host buffer (cudaHostAlloc, DataLoader pin_memory=True)",
    "remove unneeded synchronizations (.item(), .cpu(), torch.cuda.synchronize) from the step",
};

const char *an_expert_rule_key(an_expert_rule r) { return r < AN_EXPERT__COUNT ? rule_keys[r] : "?"; }

static void expert_free(void *self)
{
    an_expert_results *r = self;
    free(r->hits);
    free(r);
}

static bool is_gpu_op(const tl_timeline *tl, size_t ev, void *ctx)
{
    (void)ctx;
    tl_kclass k = (tl_kclass)tl->kclass[ev];
    return k == TL_K_COMPUTE || k == TL_K_COMM || k == TL_K_MEMCPY || k == TL_K_MEMSET;
}

static bool is_sync_api(const char *n)
{
    static const char *const names[] = { "cudaDeviceSynchronize", "cudaStreamSynchronize",
                                         "cudaEventSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
                                         "cuEventSynchronize", "hipDeviceSynchronize", "hipStreamSynchronize" };
    for (size_t i = 0; i < CP_ARRAY_LEN(names); i++)
        if (!strcmp(n, names[i]))
            return true;
    return false;
}

/* A launching call is synchronous when its name is a blocking copy/memset
 * API: no "Async" in it (cudaMemcpy, cudaMemcpy2D, cuMemcpyHtoD...). */
static bool launch_is_sync(const tl_timeline *tl, size_t gpu_ev)
{
    int64_t l = tl->link[gpu_ev];
    if (l < 0)
        return false;
    const char *n = tl_str(tl, tl->name[l]);
    return (strstr(n, "emcpy") || strstr(n, "emset")) && !strstr(n, "Async");
}

typedef struct span {
    int64_t b, e;
} span;

/* Sort spans by start (radix: the spans of a device run to millions). */
static void sort_spans(span *s, size_t n)
{
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ cp_key_i64(s[i].b), (uint64_t)s[i].e };
    cp_sort_kv(kv, n, NULL);
    for (size_t i = 0; i < n; i++)
        s[i] = (span){ cp_key_to_i64(kv[i].key), (int64_t)kv[i].val };
    free(kv);
}

/* Busy time of sorted spans s[0..n) clipped to [lo, hi). */
static int64_t busy_in(const span *s, size_t n, int64_t lo, int64_t hi)
{
    int64_t busy = 0, cur_b = 0, cur_e = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        int64_t b = CP_MAX(s[i].b, lo), e = CP_MIN(s[i].e, hi);
        if (e <= b)
            continue;
        if (b > cur_e) {
            if (cur_e > cur_b)
                busy += cur_e - cur_b;
            cur_b = b;
            cur_e = e;
        } else if (e > cur_e) {
            cur_e = e;
        }
    }
    if (cur_e > cur_b)
        busy += cur_e - cur_b;
    return busy;
}

/* span_ns * c / AN_EXPERT_UTIL_CHUNKS without the product overflowing
 * (a span near INT64_MAX from a damaged duration) */
static int64_t chunk_at(int64_t span_ns, int c)
{
    return span_ns / AN_EXPERT_UTIL_CHUNKS * c + span_ns % AN_EXPERT_UTIL_CHUNKS * c / AN_EXPERT_UTIL_CHUNKS;
}

typedef struct rank_out {
    rep_report *rep;
    rep_node *gaps, *chunks;
    an_expert_hits *hits;
    int32_t rank;
} rank_out;

static void device_rules(const tl_timeline *tl, span *s, size_t n, int32_t device, rank_out *o)
{
    if (n == 0)
        return;
    sort_spans(s, n);
    int64_t end = s[0].e;
    for (size_t i = 1; i < n; i++) {
        if (s[i].b - end >= AN_EXPERT_GAP_MIN_NS) {
            an_expert_hits *h = &o->hits[AN_EXPERT_GPU_GAPS];
            h->count++;
            h->total_ns += s[i].b - end;
            rep_node *row = rep_row(o->rep, o->gaps);
            rep_cell_int(o->rep, row, o->rank);
            rep_cell_int(o->rep, row, device);
            rep_cell_int(o->rep, row, end - tl->t0_ns);
            rep_cell_int(o->rep, row, s[i].b - end);
        }
        end = CP_MAX(end, s[i].e);
    }
    int64_t lo = s[0].b, span_ns;
    if (__builtin_sub_overflow(end, lo, &span_ns) || span_ns <= 0)
        return; /* a span no trace can have (damaged times) */
    /* consecutive flagged chunks are reported as one low-utilization window */
    int64_t win_b = 0, win_e = 0, win_busy = 0;
    int win_chunks = 0;
    for (int c = 0; c <= AN_EXPERT_UTIL_CHUNKS; c++) {
        int64_t cb = 0, ce = 0, busy = 0;
        bool low = false;
        if (c < AN_EXPERT_UTIL_CHUNKS) {
            cb = lo + chunk_at(span_ns, c);
            ce = lo + chunk_at(span_ns, c + 1);
            if (ce > cb) {
                busy = busy_in(s, n, cb, ce);
                low = 100.0 * (double)busy / (double)(ce - cb) < AN_EXPERT_UTIL_THRESHOLD_PCT;
            }
        }
        if (low) {
            an_expert_hits *h = &o->hits[AN_EXPERT_GPU_TIME_UTIL];
            h->count++;
            h->total_ns += (ce - cb) - busy;
            if (!win_chunks)
                win_b = cb;
            win_e = ce;
            win_busy += busy;
            win_chunks++;
            continue;
        }
        if (!win_chunks)
            continue;
        rep_node *row = rep_row(o->rep, o->chunks);
        rep_cell_int(o->rep, row, o->rank);
        rep_cell_int(o->rep, row, device);
        rep_cell_int(o->rep, row, win_b - tl->t0_ns);
        rep_cell_int(o->rep, row, win_e - win_b);
        rep_cell_int(o->rep, row, win_chunks);
        rep_cell_num(o->rep, row, 100.0 * (double)win_busy / (double)(win_e - win_b));
        win_chunks = 0;
        win_busy = 0;
    }
}

static void rank_rules(const tl_timeline *tl, size_t ri, rank_out *o)
{
    size_t *ev;
    size_t n = tl_rank_select(tl, ri, is_gpu_op, NULL, &ev);
    span *s = cp_xmalloc((n ? n : 1) * sizeof *s);
    /* devices: group GPU ops by device, one pass per device present */
    int32_t done_dev[64];
    size_t n_done = 0;
    for (size_t k = 0; k < n; k++) {
        int32_t dev = tl->tracks[tl->track[ev[k]]].key.device;
        bool seen = false;
        for (size_t d = 0; d < n_done; d++)
            seen |= done_dev[d] == dev;
        if (seen || n_done == CP_ARRAY_LEN(done_dev))
            continue;
        done_dev[n_done++] = dev;
        size_t m = 0;
        for (size_t j = k; j < n; j++)
            if (tl->tracks[tl->track[ev[j]]].key.device == dev)
                s[m++] = (span){ tl->ts_ns[ev[j]], tl_end_ns(tl, ev[j]) };
        device_rules(tl, s, m, dev, o);
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = ev[k];
        if (tl->kclass[i] != TL_K_MEMCPY && tl->kclass[i] != TL_K_MEMSET)
            continue;
        bool sync = launch_is_sync(tl, i);
        an_expert_hits *h = NULL;
        if (tl->kclass[i] == TL_K_MEMCPY && sync)
            h = &o->hits[AN_EXPERT_MEMCPY_SYNC];
        else if (tl->kclass[i] == TL_K_MEMSET && sync)
            h = &o->hits[AN_EXPERT_MEMSET_SYNC];
        else if (tl->kclass[i] == TL_K_MEMCPY && (tl->flags[i] & TL_F_PAGEABLE))
            h = &o->hits[AN_EXPERT_MEMCPY_PAGEABLE];
        if (h) {
            h->count++;
            h->total_ns += tl->dur_ns[i];
        }
    }
    free(ev);
    free(s);
    const tl_rank *r = &tl->ranks[ri];
    for (uint32_t t = r->track_begin; t < r->track_end; t++) {
        if (tl->tracks[t].key.kind != TL_TRACK_CPU)
            continue;
        for (size_t i = tl->tracks[t].ev_begin; i < tl->tracks[t].ev_end; i++)
            if ((tl->cat[i] == TL_CAT_CUDA_RUNTIME || tl->cat[i] == TL_CAT_CUDA_DRIVER) &&
                is_sync_api(tl_str(tl, tl->name[i]))) {
                o->hits[AN_EXPERT_API_SYNC].count++;
                o->hits[AN_EXPERT_API_SYNC].total_ns += tl->dur_ns[i];
            }
    }
}

/* Every rank's hits in rank order with *rank_of[] their numbers: this
 * timeline's own, or under mpirun every process's through an_job_gather
 * ({rank, hits[AN_EXPERT__COUNT]} per rank; each part sorted, merged by
 * rank). NULL on a damaged exchange. */
static an_expert_hits *job_hits(const an_ctx *ctx, const an_expert_results *res, size_t *nr, int32_t **rank_of)
{
    const tl_timeline *tl = ctx->tl;
    typedef struct { int64_t rank; an_expert_hits h[AN_EXPERT__COUNT]; } wire;
    *rank_of = cp_xcalloc(tl->n_ranks + 1, sizeof **rank_of);
    for (size_t i = 0; i < tl->n_ranks; i++)
        (*rank_of)[i] = tl->ranks[i].meta.rank;
    if (!ctx->opts || !ctx->opts->job_gather)
        return res->hits;
    wire *mine = cp_xcalloc(tl->n_ranks + 1, sizeof *mine);
    for (size_t i = 0; i < tl->n_ranks; i++) {
        mine[i].rank = tl->ranks[i].meta.rank;
        memcpy(mine[i].h, &res->hits[i * AN_EXPERT__COUNT], sizeof mine[i].h);
    }
    void *all = NULL;
    size_t bytes = 0;
    int rc = an_job_gather(ctx, mine, tl->n_ranks * sizeof *mine, &all, &bytes);
    free(mine);
    free(*rank_of);
    *rank_of = NULL;
    if (rc < 0 || bytes % sizeof(wire)) {
        free(all);
        return NULL;
    }
    wire *w = all;
    size_t n = bytes / sizeof *w;
    for (size_t i = 1; i < n; i++) /* by rank */
        for (size_t j = i; j > 0 && w[j].rank < w[j - 1].rank; j--) {
            wire t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    an_expert_hits *hits = cp_xcalloc(n * AN_EXPERT__COUNT + 1, sizeof *hits);
    *rank_of = cp_xcalloc(n + 1, sizeof **rank_of);
    for (size_t i = 0; i < n; i++) {
        (*rank_of)[i] = (int32_t)w[i].rank;
        memcpy(&hits[i * AN_EXPERT__COUNT], w[i].h, sizeof w[i].h);
    }
    free(all);
    *nr = n;
    return hits;
}

int an_expert_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    rep_report *rep = ctx->rep;
    an_expert_results *res = cp_xcalloc(1, sizeof *res);
    res->free = expert_free;
    res->n_ranks = tl->n_ranks;
    res->hits = cp_xcalloc(tl->n_ranks * AN_EXPERT__COUNT + 1, sizeof *res->hits);
    ctx->results[AN_expert] = res;

    rep_node *top = rep_obj(rep, rep->root, "expert", "expert rules (Nsight Systems' rules and thresholds)");
    static const rep_col rule_cols[] = {
        { "rule", "rule", NULL, -1 },           { "ranks", "ranks", NULL, -1 },
        { "count", "count", NULL, -1 },         { "total_ns", "time, all ranks", "ns", -1 },
        { "worst_rank", "worst rank", NULL, -1 }, { "worst_ns", "its time", "ns", -1 },
        { "title", "what", NULL, -1 },          { "advice", "advice", NULL, -1 },
    };
    rep_node *rules = rep_table(rep, top, "rules", "rules that fired", rule_cols, CP_ARRAY_LEN(rule_cols));
    static const rep_col by_rank_cols[] = { { "rule", "rule", NULL, -1 }, { "rank", "rank", NULL, -1 },
                                            { "count", "count", NULL, -1 }, { "total_ns", "time", "ns", -1 } };
    rep_node *by_rank = rep_table(rep, top, "by_rank", "rules per rank", by_rank_cols, CP_ARRAY_LEN(by_rank_cols));
    static const rep_col gap_cols[] = { { "rank", "rank", NULL, -1 }, { "device", "device", NULL, -1 },
                                        { "start_ns", "starts at", "ns", -1 }, { "dur_ns", "gap", "ns", -1 } };
    rep_node *gaps = rep_table(rep, top, "gpu_gaps", "GPU gaps >= 500 ms", gap_cols, CP_ARRAY_LEN(gap_cols));
    static const rep_col chunk_cols[] = { { "rank", "rank", NULL, -1 }, { "device", "device", NULL, -1 },
                                          { "start_ns", "starts at", "ns", -1 }, { "dur_ns", "lasts", "ns", -1 },
                                          { "chunks", "chunks", NULL, -1 }, { "util_pct", "GPU busy", "%", 1 } };
    rep_node *chunks = rep_table(rep, top, "low_util_windows",
                                 "windows of consecutive chunks under 50 % GPU utilization", chunk_cols,
                                 CP_ARRAY_LEN(chunk_cols));
    /* per-rank detail is for JSON and CSV; text shows the summary over ranks */
    by_rank->flags |= REP_F_NO_TEXT;
    gaps->flags |= REP_F_NO_TEXT;
    chunks->flags |= REP_F_NO_TEXT;
    for (size_t ri = 0; ri < tl->n_ranks; ri++) {
        rank_out o = { rep, gaps, chunks, &res->hits[ri * AN_EXPERT__COUNT], tl->ranks[ri].meta.rank };
        rank_rules(tl, ri, &o);
        for (int k = 0; k < AN_EXPERT__COUNT; k++) {
            if (!o.hits[k].count)
                continue;
            rep_node *row = rep_row(rep, by_rank);
            rep_cell_str(rep, row, rule_keys[k]);
            rep_cell_int(rep, row, o.rank);
            rep_cell_int(rep, row, (int64_t)o.hits[k].count);
            rep_cell_int(rep, row, o.hits[k].total_ns);
        }
    }
    size_t nr = tl->n_ranks;
    int32_t *rank_of = NULL;
    an_expert_hits *hits = job_hits(ctx, res, &nr, &rank_of);
    if (!hits)
        return CP_ERR_FORMAT;
    for (int k = 0; k < AN_EXPERT__COUNT && an_job_writer(ctx); k++) {
        int64_t ranks = 0, count = 0, total = 0, worst = -1;
        size_t worst_ri = 0;
        for (size_t ri = 0; ri < nr; ri++) {
            const an_expert_hits *h = &hits[ri * AN_EXPERT__COUNT + k];
            if (!h->count)
                continue;
            ranks++;
            count += (int64_t)h->count;
            total += h->total_ns;
            if (h->total_ns > worst) {
                worst = h->total_ns;
                worst_ri = ri;
            }
        }
        if (!ranks)
            continue;
        rep_node *row = rep_row(rep, rules);
        rep_cell_str(rep, row, rule_keys[k]);
        rep_cell_int(rep, row, ranks);
        rep_cell_int(rep, row, count);
        rep_cell_int(rep, row, total);
        rep_cell_int(rep, row, rank_of[worst_ri]);
        rep_cell_int(rep, row, worst);
        rep_cell_str(rep, row, rule_titles[k]);
        rep_cell_str(rep, row, rule_advice[k]);
    }
    free(rank_of);
    if (hits != res->hits)
        free(hits);
    return 0;
}
