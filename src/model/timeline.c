/* timeline.c - builders, the finish step, and lookups. See timeline.h.
 *
 * The finish step in order:
 *  1. apply each input's clock base (baseTimeNanoseconds) to its timestamps;
 *  2. assign rank numbers: the trace's own, else the file name's, else a new
 *     distinct one; a rank claimed twice is moved to a new number and counted;
 *  3. re-intern every builder's strings into one table (remap arrays);
 *  4. order tracks by (rank, kind, device, stream, pid, tid);
 *  5. per builder (in parallel), order events by (track position, ts, longer
 *     first) with a counting pass over tracks and a sort only of the tracks
 *     that are not already in order;
 *  6. copy columns into the frozen arrays in global order, remapping ids;
 *  7. classify GPU events, then link launches and GPU work by correlation
 *     id within each rank (unmatched ones are counted, not errors).
 */
#include "timeline.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

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
    int64_t *ts, *dur, *corr, *ext;
    uint32_t *name, *cat_name, *track, *arg_begin;
    uint8_t *cat, *flags;
    tl_arg *args;
    size_t n_args, cap_args;
    /* finish-time scratch */
    int32_t final_rank;
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
    free(b->ext);
    free(b->name);
    free(b->cat_name);
    free(b->track);
    free(b->arg_begin);
    free(b->cat);
    free(b->flags);
    free(b->args);
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
    G(b->ts); G(b->dur); G(b->corr); G(b->ext); G(b->name); G(b->cat_name);
    G(b->track); G(b->arg_begin); G(b->cat); G(b->flags);
#undef G
    b->cap = cap;
}

static void grow_events(tl_builder *b)
{
    size_t need = b->n + 1;
    if (need <= b->cap)
        return;
    resize_events(b, b->cap ? b->cap * 2 : 4096);
}

void tl_builder_reserve(tl_builder *b, size_t n_events, size_t n_args)
{
    if (n_events > b->cap)
        resize_events(b, n_events);
    if (n_args > b->cap_args) {
        b->args = cp_xrealloc(b->args, n_args * sizeof *b->args);
        b->cap_args = n_args;
    }
}

size_t tl_builder_add(tl_builder *b, const tl_ev *ev)
{
    grow_events(b);
    size_t i = b->n++;
    b->ts[i] = ev->ts_ns;
    b->dur[i] = ev->dur_ns;
    b->corr[i] = ev->corr;
    b->ext[i] = ev->ext_id;
    b->name[i] = ev->name;
    b->cat_name[i] = ev->cat_name;
    b->track[i] = ev->track;
    b->cat[i] = (uint8_t)ev->cat;
    b->flags[i] = (uint8_t)ev->flags;
    b->arg_begin[i] = (uint32_t)b->n_args;
    return i;
}

static tl_arg *push_arg(tl_builder *b, uint32_t key, uint8_t type)
{
    if (b->n == 0)
        return NULL; /* args before any event: nowhere to attach */
    cp_xgrow((void **)&b->args, &b->cap_args, b->n_args + 1, sizeof *b->args);
    tl_arg *a = &b->args[b->n_args++];
    a->key = key;
    a->type = type;
    return a;
}

void tl_builder_args(tl_builder *b, const tl_arg *args, size_t n)
{
    if (b->n == 0 || n == 0)
        return;
    cp_xgrow((void **)&b->args, &b->cap_args, b->n_args + n, sizeof *b->args);
    memcpy(b->args + b->n_args, args, n * sizeof *args);
    b->n_args += n;
}

void tl_builder_arg_int(tl_builder *b, uint32_t key, int64_t v)
{
    tl_arg *a = push_arg(b, key, TL_ARG_INT);
    if (a)
        a->v.i = v;
}

void tl_builder_arg_num(tl_builder *b, uint32_t key, double v)
{
    tl_arg *a = push_arg(b, key, TL_ARG_NUM);
    if (a)
        a->v.d = v;
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
    if (dst->n_args + src->n_args > dst->cap_args)
        tl_builder_reserve(dst, 0, CP_MAX(dst->n_args + src->n_args, 2 * dst->cap_args));
    size_t at = dst->n, n = src->n;
#define C(col) memcpy(dst->col + at, src->col, n * sizeof *src->col)
    C(ts); C(dur); C(corr); C(ext); C(cat); C(flags);
#undef C
    for (size_t i = 0; i < n; i++) {
        dst->name[at + i] = smap[src->name[i]];
        dst->cat_name[at + i] = smap[src->cat_name[i]];
        dst->track[at + i] = tmap[src->track[i]];
        dst->arg_begin[at + i] = src->arg_begin[i] + (uint32_t)dst->n_args;
    }
    for (size_t i = 0; i < src->n_args; i++) {
        tl_arg a = src->args[i];
        a.key = smap[a.key];
        if (a.type == TL_ARG_STR)
            a.v.s = smap[a.v.s];
        dst->args[dst->n_args + i] = a;
    }
    dst->n += n;
    dst->n_args += src->n_args;
    diag_merge(&dst->diag, &src->diag);
    free(smap);
    free(tmap);
    tl_builder_free(src);
}

void tl_builder_arg_str(tl_builder *b, uint32_t key, uint32_t str)
{
    tl_arg *a = push_arg(b, key, TL_ARG_STR);
    if (a)
        a->v.s = str;
}

void tl_builder_arg_bool(tl_builder *b, uint32_t key, bool v)
{
    tl_arg *a = push_arg(b, key, TL_ARG_BOOL);
    if (a)
        a->v.i = v;
}

size_t tl_builder_bytes(const tl_builder *b)
{
    return b->cap * (4 * 8 + 4 * 4 + 2) + b->cap_args * sizeof(tl_arg) + b->strings.arena.total_bytes;
}

/* ---------------- finish ---------------- */

static void assign_ranks(tl_builder **bs, size_t n, diag_set *diag)
{
    int32_t max_rank = -1;
    for (size_t i = 0; i < n; i++)
        if (bs[i]->meta.rank > max_rank)
            max_rank = bs[i]->meta.rank;
    int32_t next = max_rank + 1;
    for (size_t i = 0; i < n; i++) {
        tl_builder *b = bs[i];
        if (b->meta.rank < 0) {
            b->final_rank = next++;
            b->meta.rank_source = TL_RANK_ASSIGNED;
            diag_count(diag, DIAG_RANK_UNKNOWN, b->source, -1);
            continue;
        }
        b->final_rank = b->meta.rank;
        for (size_t j = 0; j < i; j++)
            if (bs[j]->final_rank == b->final_rank) {
                b->final_rank = next++;
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
static void order_builder(void *ctx, size_t bi)
{
    tl_builder *b = ((tl_builder **)ctx)[bi];
    if (b->meta.has_base_time)
        for (size_t i = 0; i < b->n; i++)
            b->ts[i] += b->meta.base_time_ns;
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
 * memory the previous builder column left (same size), so finishing never
 * holds the builders and the timeline side by side and touches little
 * fresh memory (first touches of fresh pages were the largest single cost
 * of analyze, see docs/PERFORMANCE.md). The args are not copied at all:
 * each rank keeps the array its reader filled, remapped in place (10 M
 * args on a 1 GB trace). */
enum { MV_TS, MV_DUR, MV_CORR, MV_EXT, MV_NAME, MV_CAT_NAME, MV_TRACK, MV_CAT, MV_FLAGS, MV_ARGS, MV__COUNT };

typedef struct move_job {
    tl_timeline *tl;
    tl_builder **bs;
    const size_t *rank_of, *ev_at; /* builder of the r-th rank; its first position */
    int column;                    /* MV_* */
} move_job;

#define MOVE_COLUMN(col, expr)                                          \
    do {                                                                \
        for (size_t k = 0, o = at; k < b->n; k++, o++) {                \
            size_t i = b->order[k];                                     \
            tl->col[o] = (expr);                                        \
        }                                                               \
    } while (0)
#define MOVE_FREE(col, bcol, expr)                                      \
    do {                                                                \
        MOVE_COLUMN(col, expr);                                         \
        free(b->bcol);                                                  \
        b->bcol = NULL;                                                 \
    } while (0)

/* The args of rank r: remapped into the timeline's strings, kept in place. */
static void move_args(tl_timeline *tl, tl_builder *b, size_t r)
{
    for (size_t a = 0; a < b->n_args; a++) {
        tl_arg *x = &b->args[a];
        x->key = b->remap[x->key];
        if (x->type == TL_ARG_STR)
            x->v.s = b->remap[x->v.s];
    }
    if (b->cap_args > b->n_args && b->n_args) /* the reader reserved from the file size */
        b->args = cp_xrealloc(b->args, b->n_args * sizeof *b->args);
    tl->ranks[r].args = b->args;
    tl->ranks[r].n_args = b->n_args;
    b->args = NULL;
}

static void move_builder(void *ctx, size_t r)
{
    const move_job *j = ctx;
    tl_timeline *tl = j->tl;
    tl_builder *b = j->bs[j->rank_of[r]];
    size_t at = j->ev_at[r];
    switch (j->column) {
    case MV_TS: MOVE_FREE(ts_ns, ts, b->ts[i]); break;
    case MV_DUR: MOVE_FREE(dur_ns, dur, b->dur[i]); break;
    case MV_CORR: MOVE_FREE(corr, corr, b->corr[i]); break;
    case MV_EXT: MOVE_FREE(ext_id, ext, b->ext[i]); break;
    case MV_NAME: MOVE_FREE(name, name, b->remap[b->name[i]]); break;
    case MV_CAT_NAME: MOVE_FREE(cat_name, cat_name, b->remap[b->cat_name[i]]); break;
    case MV_TRACK: MOVE_FREE(track, track, b->tpos[b->track[i]]); break;
    case MV_CAT: MOVE_FREE(cat, cat, b->cat[i]); break;
    case MV_FLAGS: MOVE_FREE(flags, flags, b->flags[i]); break;
    case MV_ARGS:
        MOVE_COLUMN(arg_count, (uint32_t)(((i + 1 < b->n) ? b->arg_begin[i + 1] : b->n_args) - b->arg_begin[i]));
        MOVE_FREE(arg_begin, arg_begin, b->arg_begin[i]);
        move_args(tl, b, r);
        break;
    }
}
#undef MOVE_FREE
#undef MOVE_COLUMN

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
        case MV_EXT: tl->ext_id = cp_xmalloc(m * sizeof *tl->ext_id); break;
        case MV_NAME: tl->name = cp_xmalloc(m * sizeof *tl->name); break;
        case MV_CAT_NAME: tl->cat_name = cp_xmalloc(m * sizeof *tl->cat_name); break;
        case MV_TRACK: tl->track = cp_xmalloc(m * sizeof *tl->track); break;
        case MV_CAT: tl->cat = cp_xmalloc(m); break;
        case MV_FLAGS: tl->flags = cp_xmalloc(m); break;
        case MV_ARGS:
            tl->arg_begin = cp_xmalloc(m * sizeof *tl->arg_begin);
            tl->arg_count = cp_xmalloc(m * sizeof *tl->arg_count);
            break;
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
    for (size_t r = 0; r < n; r++)
        tl->n_args += tl->ranks[r].n_args;
    tl->bytes = m * (8 * 5 + 4 * 5 + 4);
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
        tl->link[i] = c;
        if (tl->link[c] < 0) /* first GPU activity of a launch */
            tl->link[c] = (int64_t)i;
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
    (void)err;
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

    int nthreads = opts && opts->nthreads > 0 ? opts->nthreads : 1;
    cp_par_for(n, nthreads, order_builder, bs);

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
    cp_log_debug("timeline: %zu events, %zu args, %zu strings", total_ev, tl->n_args, cp_intern_count(&tl->strings));
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
    tl->bytes += tl->n_args * sizeof(tl_arg) + tl->strings.arena.total_bytes + tl->arena.total_bytes;
    *out = tl;
    return 0;
}

void tl_free(tl_timeline *tl)
{
    if (!tl)
        return;
    cp_intern_free(&tl->strings);
    for (size_t r = 0; r < tl->n_ranks; r++) /* before the arena that holds the ranks */
        free(tl->ranks[r].args);
    cp_arena_free(&tl->arena);
    free(tl->ts_ns);
    free(tl->dur_ns);
    free(tl->name);
    free(tl->cat_name);
    free(tl->cat);
    free(tl->kclass);
    free(tl->copy_dir);
    free(tl->flags);
    free(tl->track);
    free(tl->corr);
    free(tl->ext_id);
    free(tl->link);
    free(tl->arg_begin);
    free(tl->arg_count);
    free(tl);
}
