/* an_memory.c - the `memory` analyzer: the allocator's memory over time per
 * device, from the PyTorch profiler's `[memory]` instant events
 * (profile_memory=True), per rank.
 *
 * Each `[memory]` event is one allocation (Bytes > 0) or free (Bytes < 0)
 * at an address on a device (Device Type 1: CUDA, 0: CPU; Device Id), with
 * the caching allocator's totals after it (Total Allocated, Total
 * Reserved). Per device: the number of events, the peak allocated and
 * reserved bytes and when they occurred, the final values, a series of at
 * most AN_MEM_POINTS samples (the maximum in each time bucket, so no peak
 * is lost), and what held the peak: the allocations live at the peak
 * allocated instant, by the innermost CPU op that made them (on the same
 * thread), largest first. An allocation made before the trace began has no
 * event, so its free is ignored (counted as frees_unmatched) and the held
 * bytes can be less than the allocator's total (the rest: before_trace).
 */
#include "an_results.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

#define AN_MEM_POINTS 256
#define AN_MEM_HOLDERS 10

typedef struct mem_ev {
    size_t ev;               /* timeline event */
    uint32_t owner;          /* innermost CPU op on its thread (string id), 0 none */
    int32_t dev_type, dev_id;
    int64_t addr, bytes, alloc, reserved;
} mem_ev;

typedef struct holder {
    uint32_t name;
    int64_t bytes, count;
} holder;

typedef struct mem_dev {
    int32_t dev_type, dev_id;
    size_t first, n;         /* its events in the rank's mem_ev array (sorted by device, time) */
    int64_t peak_alloc, peak_alloc_ts, peak_reserved, peak_reserved_ts, last_alloc, last_reserved;
    int64_t frees_unmatched, held_bytes;
    holder *holders;
    size_t n_holders;
} mem_dev;

typedef struct mem_rank {
    mem_ev *ev;
    size_t n_ev;
    mem_dev *dev;
    size_t n_dev;
} mem_rank;

typedef struct mem_keys {
    uint32_t name, dtype, did, addr, bytes, alloc, reserved;
} mem_keys;

static bool arg_i64(const tl_timeline *tl, size_t ev, uint32_t key, int64_t *out)
{
    tl_arg a;
    if (key == UINT32_MAX || !tl_arg_by_id(tl, ev, key, &a))
        return false;
    if (a.type == TL_ARG_INT)
        *out = a.v.i;
    else if (a.type == TL_ARG_NUM)
        *out = (int64_t)a.v.d;
    else
        return false;
    return true;
}

/* The rank's [memory] events with the innermost CPU op around each (one
 * stack sweep per CPU track: events are in (ts, -dur) order). */
static void collect(const tl_timeline *tl, const tl_rank *rk, const mem_keys *k, mem_rank *out)
{
    size_t cap = 0, *stack = NULL, scap = 0;
    for (size_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        if (tr->key.kind != TL_TRACK_CPU)
            continue;
        size_t depth = 0;
        for (size_t e = tr->ev_begin; e < tr->ev_end; e++) {
            while (depth && tl_end_ns(tl, stack[depth - 1]) <= tl->ts_ns[e])
                depth--;
            if (tl->name[e] == k->name && (tl->flags[e] & TL_F_INSTANT)) {
                mem_ev m = { e, depth ? tl->name[stack[depth - 1]] : 0, -1, -1, 0, 0, -1, -1 };
                int64_t v;
                if (!arg_i64(tl, e, k->bytes, &m.bytes))
                    continue;
                m.dev_type = arg_i64(tl, e, k->dtype, &v) ? (int32_t)v : -1;
                m.dev_id = arg_i64(tl, e, k->did, &v) ? (int32_t)v : -1;
                arg_i64(tl, e, k->addr, &m.addr);
                arg_i64(tl, e, k->alloc, &m.alloc);
                arg_i64(tl, e, k->reserved, &m.reserved);
                cp_xgrow((void **)&out->ev, &cap, out->n_ev + 1, sizeof *out->ev);
                out->ev[out->n_ev++] = m;
                continue;
            }
            if ((tl->flags[e] & (TL_F_INSTANT | TL_F_NO_DUR)) || tl->dur_ns[e] <= 0)
                continue;
            cp_xgrow((void **)&stack, &scap, depth + 1, sizeof *stack);
            stack[depth++] = e;
        }
    }
    free(stack);
}

static uint64_t mem_key(const void *rec, int k, const void *ctx)
{
    const mem_ev *m = rec;
    const tl_timeline *tl = ctx;
    return k == 0 ? cp_key_i64(m->dev_type) : k == 1 ? cp_key_i64(m->dev_id) : k == 2 ? cp_key_i64(tl->ts_ns[m->ev])
                                                                                      : m->ev;
}

static int cmp_holder(const void *pa, const void *pb)
{
    const holder *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->name > b->name) - (a->name < b->name);
}

/* Live allocations at event `peak` (inclusive) of d, by owner. Addresses
 * are matched with a sorted copy (address, order): each free closes the
 * latest earlier allocation at its address. */
static void holders_at(const mem_ev *ev, mem_dev *d, size_t peak)
{
    size_t n = peak - d->first + 1;
    cp_kv *kv = cp_xmalloc(n * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ (uint64_t)ev[d->first + i].addr, i };
    cp_sort_kv(kv, n, NULL); /* by address, then order (stable) */
    bool *live = cp_xcalloc(n, sizeof *live);
    for (size_t a = 0, b; a < n; a = b) {
        size_t open = SIZE_MAX; /* the allocation at this address not yet freed */
        for (b = a; b < n && kv[b].key == kv[a].key; b++) {
            const mem_ev *m = &ev[d->first + kv[b].val];
            if (m->bytes > 0) {
                open = kv[b].val;
                live[open] = true;
            } else if (m->bytes < 0) {
                if (open == SIZE_MAX)
                    d->frees_unmatched++;
                else
                    live[open] = false;
                open = SIZE_MAX;
            }
        }
    }
    free(kv);
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (!live[i])
            continue;
        const mem_ev *m = &ev[d->first + i];
        d->held_bytes += m->bytes;
        size_t h = 0;
        while (h < d->n_holders && d->holders[h].name != m->owner)
            h++;
        if (h == d->n_holders) {
            cp_xgrow((void **)&d->holders, &cap, d->n_holders + 1, sizeof *d->holders);
            d->holders[d->n_holders++] = (holder){ m->owner, 0, 0 };
        }
        d->holders[h].bytes += m->bytes;
        d->holders[h].count++;
    }
    free(live);
    if (d->n_holders)
        qsort(d->holders, d->n_holders, sizeof *d->holders, cmp_holder);
}

typedef struct mem_job {
    const tl_timeline *tl;
    mem_keys keys;
    mem_rank *ranks;
} mem_job;

static void compute_rank(void *ctx, size_t r)
{
    const mem_job *j = ctx;
    const tl_timeline *tl = j->tl;
    mem_rank *out = &j->ranks[r];
    collect(tl, &tl->ranks[r], &j->keys, out);
    cp_sort_records(out->ev, out->n_ev, sizeof *out->ev, 4, mem_key, tl);
    size_t cap = 0;
    for (size_t a = 0, b; a < out->n_ev; a = b) {
        for (b = a; b < out->n_ev && out->ev[b].dev_type == out->ev[a].dev_type && out->ev[b].dev_id == out->ev[a].dev_id;)
            b++;
        cp_xgrow((void **)&out->dev, &cap, out->n_dev + 1, sizeof *out->dev);
        mem_dev *d = &out->dev[out->n_dev++];
        *d = (mem_dev){ out->ev[a].dev_type, out->ev[a].dev_id, a, b - a, -1, 0, -1, 0, -1, -1, 0, 0, NULL, 0 };
        size_t peak = a;
        for (size_t i = a; i < b; i++) {
            const mem_ev *m = &out->ev[i];
            int64_t ts = tl->ts_ns[m->ev];
            if (m->alloc > d->peak_alloc) {
                d->peak_alloc = m->alloc;
                d->peak_alloc_ts = ts;
                peak = i;
            }
            if (m->reserved > d->peak_reserved) {
                d->peak_reserved = m->reserved;
                d->peak_reserved_ts = ts;
            }
            d->last_alloc = m->alloc;
            d->last_reserved = m->reserved;
        }
        holders_at(out->ev, d, peak);
    }
}

static void mem_free(void *self)
{
    an_memory_result *res = self;
    mem_rank *ranks = res->ranks;
    for (size_t r = 0; r < res->n_ranks; r++) {
        for (size_t d = 0; d < ranks[r].n_dev; d++)
            free(ranks[r].dev[d].holders);
        free(ranks[r].dev);
        free(ranks[r].ev);
    }
    free(ranks);
    free(res);
}

static void nullable_int(an_ctx *ctx, rep_node *o, const char *key, const char *title, int64_t v, const char *unit)
{
    if (v >= 0)
        rep_int(ctx->rep, o, key, title, v, unit);
    else
        rep_null(ctx->rep, o, key, title, unit);
}

static void emit_device(an_ctx *ctx, rep_node *arr, const mem_ev *ev, const mem_dev *d)
{
    const tl_timeline *tl = ctx->tl;
    rep_node *o = rep_obj(ctx->rep, arr, NULL, "device");
    rep_str(ctx->rep, o, "device_type", "device type", d->dev_type == 1 ? "cuda" : d->dev_type == 0 ? "cpu" : "other");
    rep_int(ctx->rep, o, "device", "device id", d->dev_id, NULL);
    rep_int(ctx->rep, o, "events", "allocations and frees", (int64_t)d->n, NULL);
    nullable_int(ctx, o, "peak_allocated_bytes", "peak allocated", d->peak_alloc, "B");
    if (d->peak_alloc >= 0)
        rep_int(ctx->rep, o, "peak_allocated_ns", "when (from the trace start)", d->peak_alloc_ts - tl->t0_ns, "ns");
    nullable_int(ctx, o, "peak_reserved_bytes", "peak reserved", d->peak_reserved, "B");
    if (d->peak_reserved >= 0)
        rep_int(ctx->rep, o, "peak_reserved_ns", "when (from the trace start)", d->peak_reserved_ts - tl->t0_ns, "ns");
    nullable_int(ctx, o, "final_allocated_bytes", "allocated at the end", d->last_alloc, "B");
    nullable_int(ctx, o, "final_reserved_bytes", "reserved at the end", d->last_reserved, "B");
    rep_int(ctx->rep, o, "held_at_peak_bytes", "bytes of allocations traced live at the peak", d->held_bytes, "B");
    if (d->peak_alloc >= 0)
        rep_int(ctx->rep, o, "before_trace_bytes", "allocated before the trace began (at the peak)",
                CP_MAX(d->peak_alloc - d->held_bytes, (int64_t)0), "B");
    rep_int(ctx->rep, o, "frees_unmatched", "frees up to the peak of allocations made before the trace", d->frees_unmatched, NULL);
    static const rep_col hcols[] = {
        { "op", "allocating op", NULL, -1 },
        { "bytes", "live at the peak", "B", -1 },
        { "allocations", "allocations", NULL, -1 },
    };
    rep_node *t = rep_table(ctx->rep, o, "held_by", "what held the peak", hcols, CP_ARRAY_LEN(hcols));
    for (size_t h = 0; h < d->n_holders && h < AN_MEM_HOLDERS; h++) {
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, d->holders[h].name ? tl_str(tl, d->holders[h].name) : "(no op)");
        rep_cell_int(ctx->rep, row, d->holders[h].bytes);
        rep_cell_int(ctx->rep, row, d->holders[h].count);
    }
    /* the series: the maximum of each of AN_MEM_POINTS time buckets */
    static const rep_col scols[] = {
        { "t_ns", "time (from the trace start)", "ns", -1 },
        { "allocated_bytes", "allocated", "B", -1 },
        { "reserved_bytes", "reserved", "B", -1 },
    };
    rep_node *s = rep_table(ctx->rep, o, "series", "allocated and reserved over time", scols, CP_ARRAY_LEN(scols));
    s->flags |= REP_F_NO_TEXT;
    if (!d->n)
        return;
    int64_t t0 = tl->ts_ns[ev[d->first].ev], t1 = tl->ts_ns[ev[d->first + d->n - 1].ev];
    int64_t span = t1 - t0 + 1;
    for (size_t i = d->first, end = d->first + d->n; i < end;) {
        int64_t bucket = (tl->ts_ns[ev[i].ev] - t0) * AN_MEM_POINTS / span;
        const mem_ev *best = &ev[i];
        int64_t max_res = ev[i].reserved;
        for (; i < end && (tl->ts_ns[ev[i].ev] - t0) * AN_MEM_POINTS / span == bucket; i++) {
            if (ev[i].alloc > best->alloc)
                best = &ev[i];
            max_res = CP_MAX(max_res, ev[i].reserved);
        }
        rep_node *row = rep_row(ctx->rep, s);
        rep_cell_int(ctx->rep, row, tl->ts_ns[best->ev] - tl->t0_ns);
        rep_cell_int(ctx->rep, row, best->alloc);
        rep_cell_int(ctx->rep, row, max_res);
    }
}

bool an_memory_peak_of(const an_ctx *ctx, size_t r, an_memory_peak *out)
{
    const an_memory_result *res = ctx->results[AN_memory];
    if (!res || r >= res->n_ranks)
        return false;
    const mem_rank *mr = &((const mem_rank *)res->ranks)[r];
    const mem_dev *best = NULL;
    for (size_t d = 0; d < mr->n_dev; d++)
        if (mr->dev[d].dev_type == 1 && (!best || mr->dev[d].peak_reserved > best->peak_reserved))
            best = &mr->dev[d];
    if (!best)
        return false;
    *out = (an_memory_peak){ best->dev_id, best->peak_reserved, best->peak_alloc, NULL, 0 };
    if (best->n_holders && best->holders[0].name) {
        out->top_op = tl_str(ctx->tl, best->holders[0].name);
        out->top_op_bytes = best->holders[0].bytes;
    }
    return true;
}

int an_memory_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    const cp_intern *st = &tl->strings;
    mem_job job = { tl, { cp_intern_find(st, "[memory]", 8), cp_intern_find(st, "Device Type", 11),
                          cp_intern_find(st, "Device Id", 9), cp_intern_find(st, "Addr", 4),
                          cp_intern_find(st, "Bytes", 5), cp_intern_find(st, "Total Allocated", 15),
                          cp_intern_find(st, "Total Reserved", 14) }, NULL };
    an_memory_result *res = cp_xcalloc(1, sizeof *res);
    res->free = mem_free;
    res->n_ranks = tl->n_ranks;
    job.ranks = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *job.ranks);
    res->ranks = job.ranks;
    ctx->results[AN_memory] = res;
    if (job.keys.name != UINT32_MAX)
        cp_par_for(tl->n_ranks, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, compute_rank, &job);
    for (size_t r = 0; r < tl->n_ranks; r++) {
        const mem_rank *mr = &job.ranks[r];
        rep_node *arr = rep_arr(ctx->rep, ctx->rank_nodes[r], "memory", "allocator memory per device ([memory] events)");
        for (size_t d = 0; d < mr->n_dev; d++)
            emit_device(ctx, arr, mr->ev, &mr->dev[d]);
    }
    return 0;
}
