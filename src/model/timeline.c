/* timeline.c - builders, the finish step, and lookups. See timeline.h.
 *
 * Builders keep the fixed event columns the readers hand over (ts, dur,
 * corr, name, track, category, flags: 38 bytes an event) and write each
 * event's args, External id and raw category string, when it has any, as
 * one packed record in a byte stream (tl_extras.h), so reading a 1 GB trace
 * never holds 16-byte arg structs.
 *
 * The finish step in order:
 *  1. apply each input's clock base (baseTimeNanoseconds) to its timestamps;
 *  2. assign rank numbers: the trace's own, else the file name's, else a new
 *     distinct one; a rank claimed twice is moved to a new number and counted;
 *  3. re-intern every builder's strings into one table (remap arrays);
 *  4. order tracks by (rank, kind, device, stream, pid, tid);
 *  5. per builder (in parallel), order events by (track position, ts, longer
 *     first) with a counting pass over tracks and a sort only of the tracks
 *     that are not already in order; re-encode its extras records with the
 *     global string ids (the rank keeps that stream); renumber correlation
 *     ids that do not fit the 32-bit column;
 *  6. copy columns into the frozen arrays in global order, remapping ids;
 *  7. classify GPU events, then link launches and GPU work by correlation
 *     id within each rank (unmatched ones are counted, not errors).
 */
#include "timeline.h"
#include "tl_extras.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(2 * sizeof(int64_t) + 2 * sizeof(uint32_t) + 2 * sizeof(int32_t) + sizeof(uint32_t) +
                   4 * sizeof(uint8_t) == TL_EVENT_BYTES,
               "TL_EVENT_BYTES is the sum of the frozen columns (timeline.h, Event layout)");

struct tl_builder {
    char *source;
    cp_intern strings;
    cp_arena arena;
    tl_rank_meta meta;
    diag_set diag;
    tl_track_key *tkeys;
    uint32_t *tnames;
    size_t n_tracks, cap_tracks;
    size_t last_track;
    size_t n, cap;
    int64_t *ts, *dur, *corr;
    uint32_t *name, *track, *xoff; /* xoff: the event's record in xb (builder form) */
    uint8_t *cat, *flags;
    uint8_t *xb;                   /* extras records, builder form (tl_extras.h) */
    size_t xn, xcap;
    size_t n_args;
    uint32_t canon[TL_CAT__COUNT]; /* id of each category's canonical name, UINT32_MAX not interned */
    size_t canon_seen[TL_CAT__COUNT]; /* string count at the last lookup of canon */
    /* finish-time scratch */
    int32_t final_rank;
    bool renumbered;     /* correlation ids did not fit 32 bits */
    bool extras_full;    /* the frozen extras stream reached 4 GiB */
    uint32_t *remap;     /* local string id -> global */
    uint32_t *tpos;      /* local track -> global track index */
    size_t *order;       /* local event indices in global order */
};

tl_builder *tl_builder_new(const char *source_path)
{
    tl_builder *b = cp_xcalloc(1, sizeof *b);
    b->source = cp_xstrdup(source_path ? source_path : "");
    cp_intern_init(&b->strings);
    cp_arena_init(&b->arena);
    diag_init(&b->diag);
    b->meta.rank = -1;
    b->meta.world_size = -1;
    b->meta.gpu_mem_bytes = -1;
    b->last_track = SIZE_MAX;
    for (int c = 0; c < TL_CAT__COUNT; c++) {
        b->canon[c] = UINT32_MAX;
        b->canon_seen[c] = SIZE_MAX;
    }
    return b;
}

void tl_builder_free(tl_builder *b)
{
    if (!b)
        return;
    free(b->source);
    cp_intern_free(&b->strings);
    cp_arena_free(&b->arena);
    free(b->tkeys);
    free(b->tnames);
    free(b->ts);
    free(b->dur);
    free(b->corr);
    free(b->name);
    free(b->track);
    free(b->xoff);
    free(b->cat);
    free(b->flags);
    free(b->xb);
    free(b->remap);
    free(b->tpos);
    free(b->order);
    free(b);
}

cp_intern *tl_builder_strings(tl_builder *b) { return &b->strings; }
cp_arena *tl_builder_arena(tl_builder *b) { return &b->arena; }
tl_rank_meta *tl_builder_meta(tl_builder *b) { return &b->meta; }
diag_set *tl_builder_diag(tl_builder *b) { return &b->diag; }
const char *tl_builder_source(const tl_builder *b) { return b->source; }
size_t tl_builder_count(const tl_builder *b) { return b->n; }

static bool key_eq(const tl_track_key *a, const tl_track_key *b)
{
    return a->kind == b->kind && a->pid == b->pid && a->tid == b->tid && a->device == b->device &&
           a->stream == b->stream;
}

uint32_t tl_builder_track(tl_builder *b, const tl_track_key *key)
{
    if (b->last_track < b->n_tracks && key_eq(&b->tkeys[b->last_track], key))
        return (uint32_t)b->last_track;
    for (size_t i = 0; i < b->n_tracks; i++)
        if (key_eq(&b->tkeys[i], key)) {
            b->last_track = i;
            return (uint32_t)i;
        }
    size_t cap = b->cap_tracks;
    cp_xgrow((void **)&b->tkeys, &cap, b->n_tracks + 1, sizeof *b->tkeys);
    cap = b->cap_tracks;
    cp_xgrow((void **)&b->tnames, &cap, b->n_tracks + 1, sizeof *b->tnames);
    b->cap_tracks = cap;
    b->tkeys[b->n_tracks] = *key;
    b->tnames[b->n_tracks] = 0;
    b->last_track = b->n_tracks;
    return (uint32_t)b->n_tracks++;
}

void tl_builder_track_name(tl_builder *b, uint32_t track, uint32_t name)
{
    if (track < b->n_tracks)
        b->tnames[track] = name;
}

static void resize_events(tl_builder *b, size_t cap)
{
#define G(col) col = cp_xrealloc(col, cap * sizeof *col)
    G(b->ts); G(b->dur); G(b->corr); G(b->name); G(b->track); G(b->xoff); G(b->cat); G(b->flags);
#undef G
    b->cap = cap;
}

static void grow_events(tl_builder *b)
{
    size_t need = b->n + 1;
    if (need <= b->cap)
        return;
    /* small first: a builder per small file (10,000 ranks of one event) must
     * cost memory in proportion to its events; large inputs are sized up
     * front by tl_builder_reserve, the rest doubles */
    resize_events(b, b->cap ? b->cap * 2 : 64);
}

/* Room for `more` bytes of extras; false (and counted) past 4 GiB, the
 * reach of a 32-bit offset: then the record is dropped. */
static bool extras_room(tl_builder *b, size_t more)
{
    if (b->xn + more > UINT32_MAX) {
        diag_count(&b->diag, DIAG_LIMIT_REACHED, b->source, -1);
        return false;
    }
    if (b->xn + more > b->xcap)
        cp_xgrow((void **)&b->xb, &b->xcap, b->xn + more, 1);
    return true;
}

void tl_builder_reserve(tl_builder *b, size_t n_events, size_t n_args)
{
    if (n_events > b->cap)
        resize_events(b, n_events);
    /* a record is a header byte, often an External id, and ~4 bytes an arg */
    size_t bytes = n_events * 4 + n_args * 5;
    if (bytes > b->xcap) {
        b->xb = cp_xrealloc(b->xb, bytes);
        b->xcap = bytes;
    }
}

/* The canonical name's string id of category c in this builder, looked up
 * (never interned: an extra string would shift the ids) again only when
 * the table has grown since the last miss. */
static uint32_t canon_cat(tl_builder *b, tl_cat c)
{
    size_t n = cp_intern_count(&b->strings);
    if (b->canon[c] == UINT32_MAX && b->canon_seen[c] != n) {
        const char *s = tl_cat_name(c);
        b->canon[c] = cp_intern_find(&b->strings, s, strlen(s));
        b->canon_seen[c] = n;
    }
    return b->canon[c];
}

/* ts + dur must fit int64 for every later computation of an end
 * (tl_end_ns): a damaged start or duration is clamped and counted */
static void clamp_end(tl_builder *b, size_t i)
{
    int64_t end_ns;
    if (__builtin_add_overflow(b->ts[i], b->dur[i], &end_ns)) {
        b->dur[i] = b->dur[i] > 0 ? INT64_MAX - b->ts[i] : INT64_MIN - b->ts[i];
        diag_count(&b->diag, DIAG_CLAMPED_VALUE, b->source, -1);
    }
}

/* Move event i by the trace's base time, saturating (a base time and
 * offsets a damaged file makes too large). */
static void shift_event(tl_builder *b, size_t i, int64_t base_ns)
{
    int64_t ts;
    if (__builtin_add_overflow(b->ts[i], base_ns, &ts)) {
        ts = base_ns > 0 ? INT64_MAX : INT64_MIN;
        diag_count(&b->diag, DIAG_CLAMPED_VALUE, b->source, -1);
    }
    b->ts[i] = ts;
    clamp_end(b, i);
}

size_t tl_builder_add(tl_builder *b, const tl_ev *ev)
{
    grow_events(b);
    size_t i = b->n++;
    b->ts[i] = ev->ts_ns;
    b->dur[i] = ev->dur_ns;
    clamp_end(b, i);
    b->corr[i] = ev->corr;
    b->name[i] = ev->name;
    b->track[i] = ev->track;
    b->cat[i] = (uint8_t)ev->cat;
    b->flags[i] = (uint8_t)ev->flags;
    b->xoff[i] = (uint32_t)b->xn;
    unsigned h = 0;
    tl_cat c = ev->cat < TL_CAT__COUNT ? ev->cat : TL_CAT_OTHER;
    if (ev->cat_name != canon_cat(b, c))
        h |= ev->cat_name ? XH_CAT : XH_CAT_NONE;
    if (ev->ext_id != -1)
        h |= XH_EXT;
    if (!extras_room(b, TLX_HEAD_MAX))
        return i;
    uint8_t *o = b->xb + b->xn;
    *o++ = (uint8_t)h;
    if (h & XH_EXT)
        o = tlx_put_s(o, ev->ext_id);
    if (h & XH_CAT)
        o = tlx_put_u(o, ev->cat_name);
    b->xn = (size_t)(o - b->xb);
    return i;
}

void tl_builder_args(tl_builder *b, const tl_arg *args, size_t n)
{
    if (b->n == 0 || n == 0) /* args before any event: nowhere to attach */
        return;
    if (!extras_room(b, n * TLX_ARG_MAX))
        return;
    uint8_t *o = b->xb + b->xn;
    for (size_t k = 0; k < n; k++)
        o = tlx_put_arg(o, &args[k]);
    b->xn = (size_t)(o - b->xb);
    b->n_args += n;
}

void tl_builder_arg_int(tl_builder *b, uint32_t key, int64_t v)
{
    tl_arg a = { .key = key, .type = TL_ARG_INT, .v.i = v };
    tl_builder_args(b, &a, 1);
}

void tl_builder_arg_num(tl_builder *b, uint32_t key, double v)
{
    tl_arg a = { .key = key, .type = TL_ARG_NUM, .v.d = v };
    tl_builder_args(b, &a, 1);
}

void tl_builder_arg_str(tl_builder *b, uint32_t key, uint32_t str)
{
    tl_arg a = { .key = key, .type = TL_ARG_STR, .v.s = str };
    tl_builder_args(b, &a, 1);
}

void tl_builder_arg_bool(tl_builder *b, uint32_t key, bool v)
{
    tl_arg a = { .key = key, .type = TL_ARG_BOOL, .v.i = v };
    tl_builder_args(b, &a, 1);
}

/* End of event i's builder record. */
static size_t rec_end(const tl_builder *b, size_t i)
{
    return i + 1 < b->n ? b->xoff[i + 1] : b->xn;
}

void tl_builder_absorb(tl_builder *dst, tl_builder *src)
{
    size_t ns = cp_intern_count(&src->strings);
    uint32_t *smap = cp_xmalloc((ns ? ns : 1) * sizeof *smap);
    for (size_t i = 0; i < ns; i++)
        smap[i] = cp_intern_n(&dst->strings, cp_intern_str(&src->strings, (uint32_t)i),
                              cp_intern_len(&src->strings, (uint32_t)i));
    uint32_t *tmap = cp_xmalloc((src->n_tracks ? src->n_tracks : 1) * sizeof *tmap);
    for (size_t t = 0; t < src->n_tracks; t++) {
        tmap[t] = tl_builder_track(dst, &src->tkeys[t]);
        if (src->tnames[t] && !dst->tnames[tmap[t]])
            dst->tnames[tmap[t]] = smap[src->tnames[t]];
    }
    /* geometric growth: absorbing many parts must not copy quadratically */
    if (dst->n + src->n > dst->cap)
        resize_events(dst, CP_MAX(dst->n + src->n, 2 * dst->cap));
    size_t at = dst->n, n = src->n;
#define C(col) memcpy(dst->col + at, src->col, n * sizeof *src->col)
    C(ts); C(dur); C(corr); C(cat); C(flags);
#undef C
    for (size_t i = 0; i < n; i++) {
        dst->name[at + i] = smap[src->name[i]];
        dst->track[at + i] = tmap[src->track[i]];
        size_t b0 = src->xoff[i], b1 = rec_end(src, i), na = 0;
        dst->xoff[at + i] = (uint32_t)dst->xn;
        if (b1 > b0 && extras_room(dst, tlx_room(b1 - b0))) {
            uint8_t *o = tlx_reencode(src->xb + b0, src->xb + b1, smap, 0, dst->xb + dst->xn, &na);
            dst->xn = (size_t)(o - dst->xb);
        }
    }
    dst->n += n;
    dst->n_args += src->n_args;
    diag_merge(&dst->diag, &src->diag);
    free(smap);
    free(tmap);
    tl_builder_free(src);
}

size_t tl_builder_bytes(const tl_builder *b)
{
    return b->cap * (3 * 8 + 3 * 4 + 2) + b->xcap + b->strings.arena.total_bytes;
}

/* ---------------- finish ---------------- */

/* A new distinct rank for bs[upto]: one above the highest the traces claim,
 * or, when they claim INT32_MAX itself, the smallest number no trace claims
 * and no earlier builder got (a rare, slow path: never an overflow). */
static int32_t new_rank(tl_builder **bs, size_t n, size_t upto, int64_t *next)
{
    if (*next <= INT32_MAX)
        return (int32_t)(*next)++;
    for (int32_t k = 0;; k++) {
        bool used = false;
        for (size_t j = 0; j < n && !used; j++)
            used = bs[j]->meta.rank == k || (j < upto && bs[j]->final_rank == k);
        if (!used)
            return k;
    }
}

static void assign_ranks(tl_builder **bs, size_t n, diag_set *diag)
{
    int32_t max_rank = -1;
    for (size_t i = 0; i < n; i++)
        if (bs[i]->meta.rank > max_rank)
            max_rank = bs[i]->meta.rank;
    int64_t next = (int64_t)max_rank + 1;
    for (size_t i = 0; i < n; i++) {
        tl_builder *b = bs[i];
        if (b->meta.rank < 0) {
            b->final_rank = new_rank(bs, n, i, &next);
            b->meta.rank_source = TL_RANK_ASSIGNED;
            diag_count(diag, DIAG_RANK_UNKNOWN, b->source, -1);
            continue;
        }
        b->final_rank = b->meta.rank;
        for (size_t j = 0; j < i; j++)
            if (bs[j]->final_rank == b->final_rank) {
                b->final_rank = new_rank(bs, n, i, &next);
                b->meta.rank_source = TL_RANK_REASSIGNED;
                diag_count(diag, DIAG_DUPLICATE_RANK, b->source, -1);
                break;
            }
    }
}

typedef struct gtrack {
    int32_t rank;
    size_t builder;
    uint32_t local;
    tl_track_key key;
} gtrack;

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int cmp_gtrack(const void *pa, const void *pb)
{
    const gtrack *a = pa, *b = pb;
    int c;
    if ((c = cmp_i64(a->rank, b->rank)) || (c = cmp_i64(a->key.kind, b->key.kind)) ||
        (c = cmp_i64(a->key.device, b->key.device)) || (c = cmp_i64(a->key.stream, b->key.stream)) ||
        (c = cmp_i64(a->key.pid, b->key.pid)) || (c = cmp_i64(a->key.tid, b->key.tid)))
        return c;
    return cmp_i64((int64_t)a->builder, (int64_t)b->builder);
}

static int cmp_ev(const void *pa, const void *pb, void *ctx)
{
    const tl_builder *b = ctx;
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    if (b->ts[x] != b->ts[y])
        return b->ts[x] < b->ts[y] ? -1 : 1;
    if (b->dur[x] != b->dur[y])
        return b->dur[x] > b->dur[y] ? -1 : 1; /* parents before children */
    return x < y ? -1 : (x > y);
}


/* Order one builder's events by (global track position, ts, -dur). */
static void order_builder(tl_builder *b)
{
    if (b->meta.has_base_time)
        for (size_t i = 0; i < b->n; i++)
            shift_event(b, i, b->meta.base_time_ns);
    /* counting sort by track position (stable, keeps file order) */
    size_t nt = b->n_tracks;
    size_t *start = cp_xcalloc(nt + 1, sizeof *start);
    for (size_t i = 0; i < b->n; i++)
        start[b->track[i] + 1]++;
    /* tracks in global position order */
    uint32_t *by_pos = cp_xmalloc((nt ? nt : 1) * sizeof *by_pos);
    for (size_t t = 0; t < nt; t++)
        by_pos[t] = (uint32_t)t;
    for (size_t t = 1; t < nt; t++) { /* insertion sort: few tracks */
        uint32_t v = by_pos[t];
        size_t j = t;
        while (j > 0 && b->tpos[by_pos[j - 1]] > b->tpos[v]) {
            by_pos[j] = by_pos[j - 1];
            j--;
        }
        by_pos[j] = v;
    }
    size_t *off = cp_xcalloc(nt + 1, sizeof *off);
    size_t acc = 0;
    for (size_t k = 0; k < nt; k++) {
        off[by_pos[k]] = acc;
        acc += start[by_pos[k] + 1];
    }
    size_t *seg_begin = cp_xmalloc((nt + 1) * sizeof *seg_begin);
    for (size_t t = 0; t < nt; t++)
        seg_begin[t] = off[t];
    b->order = cp_xmalloc((b->n ? b->n : 1) * sizeof *b->order);
    for (size_t i = 0; i < b->n; i++)
        b->order[off[b->track[i]]++] = i;
    for (size_t t = 0; t < nt; t++) {
        size_t lo = seg_begin[t], hi = off[t];
        bool sorted = true;
        for (size_t i = lo + 1; i < hi && sorted; i++)
            sorted = cmp_ev(&b->order[i - 1], &b->order[i], b) <= 0;
        if (!sorted)
            cp_sort_idx2(b->order + lo, hi - lo, b->ts, b->dur, true); /* (ts, longer first, index) */
    }
    free(start);
    free(by_pos);
    free(off);
    free(seg_begin);
}

/* Re-encode the builder's extras records into the frozen form (counted,
 * global string ids) and point xoff at them. Records without content share
 * the two empty ones at offsets 0 and 1. The frozen stream replaces xb. */
static void freeze_extras(tl_builder *b)
{
    size_t cap = CP_MAX(b->xn + b->xn / 8, (size_t)64), n = 2;
    uint8_t *fx = cp_xmalloc(cap);
    fx[0] = 0;
    fx[1] = XH_CAT_NONE;
    size_t n_args = 0;
    for (size_t i = 0; i < b->n; i++) {
        size_t b0 = b->xoff[i], b1 = rec_end(b, i); /* xoff[i + 1] is still the builder's */
        if (b1 - b0 <= 1) {                        /* header alone: one of the shared records */
            b->xoff[i] = b1 > b0 && (b->xb[b0] & XH_CAT_NONE) ? 1 : 0;
            continue;
        }
        size_t room = tlx_room(b1 - b0);
        if (n + room > UINT32_MAX) {
            b->xoff[i] = 0;
            b->extras_full = true;
            continue;
        }
        if (n + room > cap)
            cp_xgrow((void **)&fx, &cap, n + room, 1);
        size_t na;
        b->xoff[i] = (uint32_t)n;
        n = (size_t)(tlx_reencode(b->xb + b0, b->xb + b1, b->remap, 1, fx + n, &na) - fx);
        n_args += na;
    }
    free(b->xb);
    b->xb = cp_xrealloc(fx, n);
    b->xn = b->xcap = n;
    b->n_args = n_args;
}

/* The frozen correlation column is 32 bits. Ids beyond that range (no
 * profiler writes them, but inputs are not trusted) are renumbered in
 * their order: the pairs that link launches to GPU work stay the same. */
static void fit_correlations(tl_builder *b)
{
    bool fits = true;
    for (size_t i = 0; i < b->n && fits; i++)
        fits = b->corr[i] >= INT32_MIN && b->corr[i] <= INT32_MAX;
    if (fits)
        return;
    uint64_t *v = cp_xmalloc((b->n ? b->n : 1) * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->corr[i] >= 0)
            v[m++] = (uint64_t)b->corr[i];
    cp_sort_u64(v, m, NULL);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    for (size_t i = 0; i < b->n; i++) {
        if (b->corr[i] < 0) {
            b->corr[i] = -1;
            continue;
        }
        size_t lo = 0, hi = u;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid] < (uint64_t)b->corr[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        b->corr[i] = (int64_t)CP_MIN(lo, (size_t)INT32_MAX);
    }
    free(v);
    b->renumbered = true;
}

/* Everything the finish step does to one builder alone (a job: builders
 * are independent, so they run in parallel). */
static void prepare_builder(void *ctx, size_t bi)
{
    tl_builder *b = ((tl_builder **)ctx)[bi];
    order_builder(b);
    freeze_extras(b);
    fit_correlations(b);
}


static void remap_meta(tl_builder *b, tl_rank_meta *m, cp_arena *arena)
{
    *m = b->meta;
    m->rank = b->final_rank;
    m->hostname = b->remap[m->hostname];
    m->gpu_name = b->remap[m->gpu_name];
    m->backend = b->remap[m->backend];
    m->nccl_version = b->remap[m->nccl_version];
    m->format = b->remap[m->format];
    if (m->n_pgs > 0) {
        m->pgs = CP_ANEWN(arena, tl_pg, (size_t)m->n_pgs);
        for (int32_t i = 0; i < m->n_pgs; i++) {
            const tl_pg *src = &b->meta.pgs[i];
            tl_pg *d = &m->pgs[i];
            d->name = b->remap[src->name];
            d->desc = b->remap[src->desc];
            d->size = src->size;
            if (src->ranks && src->size > 0) {
                d->ranks = CP_ANEWN(arena, int32_t, (size_t)src->size);
                memcpy(d->ranks, src->ranks, sizeof(int32_t) * (size_t)src->size);
            }
        }
    }
}

/* Move the builders' events into the frozen columns in global order, one
 * column at a time: allocate the timeline's column, gather it from every
 * builder (one job per builder: they write disjoint ranges, so they run in
 * parallel), free those builder columns. Each new column then reuses the
 * memory the previous builder column left, so finishing never holds the
 * builders and the timeline side by side and touches little fresh memory
 * (first touches of fresh pages were the largest single cost of analyze,
 * see docs/PERFORMANCE.md). The extras are not copied: each rank adopts
 * the stream its builder froze. */
enum { MV_TS, MV_DUR, MV_CORR, MV_NAME, MV_TRACK, MV_XOFF, MV_CAT, MV_FLAGS, MV__COUNT };

typedef struct move_job {
    tl_timeline *tl;
    tl_builder **bs;
    const size_t *rank_of, *ev_at; /* builder of the r-th rank; its first position */
    int column;                    /* MV_* */
} move_job;

#define MOVE_FREE(col, bcol, expr)                                      \
    do {                                                                \
        for (size_t k = 0, o = at; k < b->n; k++, o++) {                \
            size_t i = b->order[k];                                     \
            tl->col[o] = (expr);                                        \
        }                                                               \
        free(b->bcol);                                                  \
        b->bcol = NULL;                                                 \
    } while (0)

static void move_builder(void *ctx, size_t r)
{
    const move_job *j = ctx;
    tl_timeline *tl = j->tl;
    tl_builder *b = j->bs[j->rank_of[r]];
    size_t at = j->ev_at[r];
    switch (j->column) {
    case MV_TS: MOVE_FREE(ts_ns, ts, b->ts[i]); break;
    case MV_DUR: MOVE_FREE(dur_ns, dur, b->dur[i]); break;
    case MV_CORR: MOVE_FREE(corr, corr, (int32_t)b->corr[i]); break; /* fit_correlations made it fit */
    case MV_NAME: MOVE_FREE(name, name, b->remap[b->name[i]]); break;
    case MV_TRACK: MOVE_FREE(track, track, b->tpos[b->track[i]]); break;
    case MV_XOFF:
        MOVE_FREE(xoff, xoff, b->xoff[i]);
        tl->ranks[r].extra = b->xb;
        tl->ranks[r].extra_bytes = b->xn;
        tl->ranks[r].n_args = b->n_args;
        b->xb = NULL;
        break;
    case MV_CAT: MOVE_FREE(cat, cat, b->cat[i]); break;
    case MV_FLAGS: MOVE_FREE(flags, flags, b->flags[i]); break;
    }
}
#undef MOVE_FREE

static void move_events(tl_timeline *tl, tl_builder **bs, size_t n, const size_t *rank_of, const size_t *ev_at,
                        size_t total, int nthreads)
{
    size_t m = total ? total : 1;
    move_job job = { tl, bs, rank_of, ev_at, 0 };
    for (job.column = 0; job.column < MV__COUNT; job.column++) {
        switch (job.column) {
        case MV_TS: tl->ts_ns = cp_xmalloc(m * sizeof *tl->ts_ns); break;
        case MV_DUR: tl->dur_ns = cp_xmalloc(m * sizeof *tl->dur_ns); break;
        case MV_CORR: tl->corr = cp_xmalloc(m * sizeof *tl->corr); break;
        case MV_NAME: tl->name = cp_xmalloc(m * sizeof *tl->name); break;
        case MV_TRACK: tl->track = cp_xmalloc(m * sizeof *tl->track); break;
        case MV_XOFF: tl->xoff = cp_xmalloc(m * sizeof *tl->xoff); break;
        case MV_CAT: tl->cat = cp_xmalloc(m); break;
        case MV_FLAGS: tl->flags = cp_xmalloc(m); break;
        }
        cp_par_for(n, nthreads, move_builder, &job);
    }
    for (size_t r = 0; r < n; r++) { /* the move's scratch: link reuses its memory */
        free(bs[rank_of[r]]->order);
        bs[rank_of[r]]->order = NULL;
    }
    tl->link = cp_xmalloc(m * sizeof *tl->link);
    memset(tl->link, 0xff, m * sizeof *tl->link); /* -1: no partner */
    tl->kclass = cp_xmalloc(m);
    tl->copy_dir = cp_xmalloc(m);
    tl->n_args = 0;
    size_t extra = 0;
    for (size_t r = 0; r < n; r++) {
        tl->n_args += tl->ranks[r].n_args;
        extra += tl->ranks[r].extra_bytes;
    }
    tl->bytes = m * TL_EVENT_BYTES + extra;
}

/* open-addressing map corr -> event index, for one rank */
typedef struct corr_map {
    int64_t *keys;
    int64_t *vals;
    size_t cap;
} corr_map;

static void corr_put(corr_map *m, int64_t key, int64_t val)
{
    size_t i = (size_t)cp_hash64(&key, sizeof key) & (m->cap - 1);
    while (m->keys[i] != -1 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
}

static int64_t corr_get(const corr_map *m, int64_t key)
{
    size_t i = (size_t)cp_hash64(&key, sizeof key) & (m->cap - 1);
    while (m->keys[i] != -1) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

static void link_rank(tl_timeline *tl, tl_rank *r, diag_set *diag)
{
    size_t b0 = tl->tracks[r->track_begin].ev_begin;
    size_t b1 = r->track_end > r->track_begin ? tl->tracks[r->track_end - 1].ev_end : b0;
    size_t launches = 0;
    for (size_t i = b0; i < b1; i++)
        if (tl->tracks[tl->track[i]].key.kind == TL_TRACK_CPU && tl->corr[i] >= 0 &&
            (tl->cat[i] == TL_CAT_CUDA_RUNTIME || tl->cat[i] == TL_CAT_CUDA_DRIVER))
            launches++;
    if (!launches)
        return;
    corr_map m;
    m.cap = 16;
    while (m.cap < launches * 2)
        m.cap *= 2;
    m.keys = cp_xmalloc(m.cap * sizeof *m.keys);
    m.vals = cp_xmalloc(m.cap * sizeof *m.vals);
    memset(m.keys, 0xff, m.cap * sizeof *m.keys);
    for (size_t i = b0; i < b1; i++)
        if (tl->tracks[tl->track[i]].key.kind == TL_TRACK_CPU && tl->corr[i] >= 0 &&
            (tl->cat[i] == TL_CAT_CUDA_RUNTIME || tl->cat[i] == TL_CAT_CUDA_DRIVER))
            corr_put(&m, tl->corr[i], (int64_t)i);
    const char *src = tl_str(tl, r->source);
    for (size_t i = b0; i < b1; i++) {
        if (tl->tracks[tl->track[i]].key.kind != TL_TRACK_GPU || tl->corr[i] < 0)
            continue;
        int64_t c = corr_get(&m, tl->corr[i]);
        if (c < 0) {
            if (tl->kclass[i] != TL_K_NONE)
                diag_count(diag, DIAG_UNMATCHED_CORRELATION, src, -1);
            continue;
        }
        tl->link[i] = (int32_t)c;
        if (tl->link[c] < 0) /* first GPU activity of a launch */
            tl->link[c] = (int32_t)i;
        tl->flags[c] |= TL_F_LAUNCH;
    }
    free(m.keys);
    free(m.vals);
}

/* Classification depends only on (category, name): cache it per interned
 * name so a trace of millions of kernels classifies each distinct name once
 * (the name tests are substring searches). One cache per rank, so ranks
 * classify in parallel. */
static void classify_range(tl_timeline *tl, size_t b0, size_t b1)
{
    size_t n_names = cp_intern_count(&tl->strings);
    uint8_t *cache = cp_xcalloc(n_names ? n_names : 1, TL_CAT__COUNT); /* kclass + 1, 0 = not yet */
    for (size_t i = b0; i < b1; i++) {
        tl->kclass[i] = TL_K_NONE;
        tl->copy_dir[i] = TL_COPY_NONE;
        if (tl->tracks[tl->track[i]].key.kind != TL_TRACK_GPU)
            continue;
        uint8_t *slot = &cache[(size_t)tl->name[i] * TL_CAT__COUNT + tl->cat[i]];
        if (!*slot)
            *slot = (uint8_t)(tl_classify((tl_cat)tl->cat[i], tl_str(tl, tl->name[i])) + 1);
        tl->kclass[i] = (uint8_t)(*slot - 1);
        if (tl->kclass[i] == TL_K_MEMCPY) {
            bool pageable = false;
            tl->copy_dir[i] = (uint8_t)tl_copy_direction(tl_str(tl, tl->name[i]), &pageable);
            if (pageable)
                tl->flags[i] |= TL_F_PAGEABLE;
        }
    }
    free(cache);
}

/* Classify and link one rank (a job: ranks own disjoint event ranges; the
 * diagnostics go to a per-rank set, merged in rank order afterwards). */
typedef struct rank_job {
    tl_timeline *tl;
    diag_set *diag; /* per rank */
} rank_job;

static void finish_rank(void *ctx, size_t r)
{
    rank_job *j = ctx;
    tl_timeline *tl = j->tl;
    const tl_rank *rk = &tl->ranks[r];
    size_t b0 = 0, b1 = 0;
    if (rk->track_end > rk->track_begin) {
        b0 = tl->tracks[rk->track_begin].ev_begin;
        b1 = tl->tracks[rk->track_end - 1].ev_end;
    }
    classify_range(tl, b0, b1);
    link_rank(tl, &tl->ranks[r], &j->diag[r]);
}

int tl_finish(tl_builder **bs, size_t n, const tl_finish_opts *opts, tl_timeline **out,
              cp_error *err)
{
    *out = NULL;
    size_t all = 0;
    for (size_t i = 0; i < n; i++)
        all += bs[i]->n;
    if (all > INT32_MAX) { /* the 32-bit event indices of the layout */
        for (size_t i = 0; i < n; i++)
            tl_builder_free(bs[i]);
        return cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1,
                            "%zu events are more than one timeline holds (%d): share the files out over "
                            "processes (mpirun -np P chainprof analyze)", all, INT32_MAX);
    }
    tl_timeline *tl = cp_xcalloc(1, sizeof *tl);
    cp_intern_init(&tl->strings);
    cp_arena_init(&tl->arena);
    diag_init(&tl->diag);
    assign_ranks(bs, n, &tl->diag);

    size_t total_ev = 0, total_tracks = 0;
    for (size_t i = 0; i < n; i++) {
        tl_builder *b = bs[i];
        diag_merge(&tl->diag, &b->diag);
        size_t ns = cp_intern_count(&b->strings);
        b->remap = cp_xmalloc(ns * sizeof *b->remap);
        for (size_t s = 0; s < ns; s++)
            b->remap[s] = cp_intern_n(&tl->strings, cp_intern_str(&b->strings, (uint32_t)s),
                                      cp_intern_len(&b->strings, (uint32_t)s));
        total_ev += b->n;
        total_tracks += b->n_tracks;
    }

    /* ranks, sorted by number */
    tl->n_ranks = n;
    tl->ranks = CP_ANEWN(&tl->arena, tl_rank, n ? n : 1);
    size_t *rank_of = cp_xmalloc((n ? n : 1) * sizeof *rank_of);
    for (size_t i = 0; i < n; i++) {
        size_t j = i; /* insertion sort by final rank */
        while (j > 0 && bs[rank_of[j - 1]]->final_rank > bs[i]->final_rank) {
            rank_of[j] = rank_of[j - 1];
            j--;
        }
        rank_of[j] = i;
    }
    /* tracks */
    gtrack *gt = cp_xmalloc((total_tracks ? total_tracks : 1) * sizeof *gt);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t t = 0; t < bs[i]->n_tracks; t++)
            gt[k++] = (gtrack){ bs[i]->final_rank, i, t, bs[i]->tkeys[t] };
    qsort(gt, total_tracks, sizeof *gt, cmp_gtrack);
    for (size_t i = 0; i < n; i++)
        bs[i]->tpos = cp_xmalloc((bs[i]->n_tracks ? bs[i]->n_tracks : 1) * sizeof(uint32_t));
    tl->n_tracks = total_tracks;
    tl->tracks = CP_ANEWN(&tl->arena, tl_track, total_tracks ? total_tracks : 1);
    for (size_t t = 0; t < total_tracks; t++)
        bs[gt[t].builder]->tpos[gt[t].local] = (uint32_t)t;

    for (int c = 0; c < TL_CAT__COUNT; c++) {
        const char *cs = tl_cat_name((tl_cat)c);
        tl->cat_str[c] = cp_intern_find(&tl->strings, cs, strlen(cs));
    }
    int nthreads = opts && opts->nthreads > 0 ? opts->nthreads : 1;
    cp_par_for(n, nthreads, prepare_builder, bs);
    for (size_t i = 0; i < n; i++) {
        if (bs[i]->renumbered)
            diag_count(&tl->diag, DIAG_RENUMBERED_ID, bs[i]->source, -1);
        if (bs[i]->extras_full)
            diag_count(&tl->diag, DIAG_LIMIT_REACHED, bs[i]->source, -1);
    }

    tl->n_events = total_ev;
    size_t *ev_at = cp_xmalloc((n ? n : 1) * sizeof *ev_at);
    size_t at = 0;
    for (size_t r = 0; r < n; r++) {
        size_t bi = rank_of[r];
        tl_builder *b = bs[bi];
        tl_rank *rk = &tl->ranks[r];
        remap_meta(b, &rk->meta, &tl->arena);
        rk->source = cp_intern_s(&tl->strings, b->source);
        rk->n_events = b->n;
        /* this builder's tracks are contiguous in gt since rank is the first key */
        size_t t0 = b->n_tracks ? b->tpos[0] : 0;
        for (uint32_t t = 0; t < b->n_tracks; t++)
            if (b->tpos[t] < t0)
                t0 = b->tpos[t];
        rk->track_begin = (uint32_t)t0;
        rk->track_end = (uint32_t)(t0 + b->n_tracks);
        /* per-track ranges: the builder's events go out in track order, so
         * each track is one contiguous run; count, then accumulate */
        for (size_t t = t0; t < t0 + b->n_tracks; t++) {
            tl_track *tr = &tl->tracks[t];
            tr->key = gt[t].key;
            tr->rank_index = (uint32_t)r;
            tr->name = b->remap[b->tnames[gt[t].local]];
            tr->ev_begin = tr->ev_end = 0;
        }
        for (size_t e = 0; e < b->n; e++)
            tl->tracks[b->tpos[b->track[e]]].ev_end++;
        ev_at[r] = at;
        size_t acc = at;
        for (size_t t = t0; t < t0 + b->n_tracks; t++) {
            tl_track *tr = &tl->tracks[t];
            size_t cnt = tr->ev_end;
            tr->ev_begin = acc;
            tr->ev_end = acc + cnt;
            acc += cnt;
        }
        at += b->n;
    }
    move_events(tl, bs, n, rank_of, ev_at, total_ev, nthreads);
    cp_log_debug("timeline: %zu events, %zu args, %zu strings, %.1f MB of columns and extras", total_ev, tl->n_args,
                 cp_intern_count(&tl->strings), (double)tl->bytes / 1e6);
    free(ev_at);
    free(gt);
    free(rank_of);
    for (size_t i = 0; i < n; i++)
        tl_builder_free(bs[i]);

    rank_job rj = { tl, cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof(diag_set)) };
    cp_par_for(tl->n_ranks, nthreads, finish_rank, &rj);
    for (size_t r = 0; r < tl->n_ranks; r++)
        diag_merge(&tl->diag, &rj.diag[r]);
    free(rj.diag);
    tl->t0_ns = 0;
    bool any = false;
    for (size_t i = 0; i < tl->n_events; i++)
        if (!any || tl->ts_ns[i] < tl->t0_ns) {
            tl->t0_ns = tl->ts_ns[i];
            any = true;
        }
    tl->bytes += tl->strings.arena.total_bytes + tl->arena.total_bytes;
    *out = tl;
    return 0;
}

void tl_free(tl_timeline *tl)
{
    if (!tl)
        return;
    cp_intern_free(&tl->strings);
    for (size_t r = 0; r < tl->n_ranks; r++) /* before the arena that holds the ranks */
        free(tl->ranks[r].extra);
    cp_arena_free(&tl->arena);
    free(tl->ts_ns);
    free(tl->dur_ns);
    free(tl->name);
    free(tl->track);
    free(tl->corr);
    free(tl->link);
    free(tl->xoff);
    free(tl->cat);
    free(tl->kclass);
    free(tl->copy_dir);
    free(tl->flags);
    free(tl);
}

/* ---------------- extras records (tl_extras.h) ---------------- */

uint8_t *tlx_reencode(const uint8_t *p, const uint8_t *end, const uint32_t *smap, int counted, uint8_t *o,
                      size_t *n_args)
{
    size_t n = 0;
    if (p >= end) { /* a record dropped at the stream's limit: empty */
        *o++ = 0;
        *n_args = 0;
        return o;
    }
    unsigned h = *p++;
    int64_t ext = 0;
    uint64_t cat = 0;
    if (h & XH_EXT)
        p = tlx_get_s(p, &ext);
    if (h & XH_CAT)
        p = tlx_get_u(p, &cat);
    if (counted) { /* count the args first: the header leads */
        tl_arg a;
        for (const uint8_t *q = p; q < end; n++)
            q = tlx_get_arg(q, &a);
        o = tlx_put_u(o, (uint64_t)n << XH_SHIFT | (h & 7u));
    } else {
        *o++ = (uint8_t)h;
    }
    if (h & XH_EXT)
        o = tlx_put_s(o, ext);
    if (h & XH_CAT)
        o = tlx_put_u(o, smap[cat]);
    size_t k = 0;
    while (p < end) {
        tl_arg a;
        p = tlx_get_arg(p, &a);
        a.key = smap[a.key];
        if (a.type == TL_ARG_STR)
            a.v.s = smap[a.v.s];
        o = tlx_put_arg(o, &a);
        k++;
    }
    *n_args = k;
    return o;
}
