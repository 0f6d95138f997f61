/* rd_kineto.c - PyTorch profiler (Kineto) Chrome-trace JSON into a tl_builder.
 *
 * Design
 * - One pass over the bytes through the pull tokenizer (base/jsontok.h), in
 *   fixed memory: the file is never loaded; what grows is only what the
 *   builder keeps (events, kept args, interned strings) plus three small maps
 *   (flow ids, thread/process names, a track cache). Top-level keys are read
 *   wherever they are (baseTimeNanoseconds usually follows traceEvents), so
 *   nothing depends on key order.
 * - An event's members may come in any order and its args may hold huge
 *   arrays, so each event is parsed into a fixed-size pending record
 *   (`pend`) and handed to the builder only at its closing brace. That is
 *   also what makes truncation safe: an event cut by the end of the file is
 *   never half-added, and every complete event before it is kept.
 * - Names, categories, arg keys and string values are interned as they are
 *   read (token text dies at the next tokenizer call). Args that the
 *   timeline keeps elsewhere (correlation, External id, device, stream) go to
 *   their columns; bookkeeping args (Ev Idx, Record function id, ...) and all
 *   arrays/objects (Input Dims, grid, block) are skipped without being
 *   tokenized.
 * - Timestamps are parsed from the decimal text into int64 ns exactly
 *   (cp_jt_parse_ns), never through a double.
 * - Damage is counted in the builder's diag_set and never stops the read;
 *   only input that is not a Chrome trace at all returns CP_ERR_FORMAT with
 *   "file:offset: reason". See docs/FORMATS.md, "Kineto traces".
 * - No globals: every piece of state lives in the `kr` struct on the
 *   caller's stack, so files are read on parallel threads safely.
 */
#include "log_prefix.h"
#include "rd_kineto.h"
#include "../base/log.h"

#include "../base/jsontok.h"
#include "../base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KR_MAX_ARGS 64          /* args kept per event; more are counted as limit_reached */
#define KR_MAX_PGS 4096         /* process groups kept from distributedInfo */
#define KR_MAX_PG_RANKS 1048576 /* ranks kept per process group */
#define KR_TCACHE 256           /* direct-mapped track cache entries (power of two) */
#define KR_TIME_LIMIT_NS (INT64_C(1) << 61) /* |ts|, dur, clock base: 73 years, so sums never overflow */
#define KR_CATMEMO 1024         /* category memo entries, by string id */
#define KR_SCACHE_BITS 11
#define KR_SCACHE (1u << KR_SCACHE_BITS) /* direct-mapped string cache entries */

/* ---- a small open-addressing map: (int64, int64) -> uint32 ---------------- */

typedef struct kmap_ent {
    int64_t a, b;
    uint32_t v;
    uint32_t used;
} kmap_ent;

typedef struct kmap {
    kmap_ent *e;
    size_t cap, n;
} kmap;

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static size_t kmap_slot(const kmap *m, int64_t a, int64_t b)
{
    size_t i = (size_t)mix64((uint64_t)a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)b) & (m->cap - 1);
    while (m->e[i].used && (m->e[i].a != a || m->e[i].b != b))
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Returns the value slot for (a, b), inserting 0 when absent. */
static uint32_t *kmap_get(kmap *m, int64_t a, int64_t b)
{
    if (2 * (m->n + 1) > m->cap) {
        kmap old = *m;
        m->cap = old.cap ? old.cap * 2 : 64;
        m->e = cp_xcalloc(m->cap, sizeof *m->e);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.e[i].used) {
                size_t j = kmap_slot(m, old.e[i].a, old.e[i].b);
                m->e[j] = old.e[i];
                m->n++;
            }
        free(old.e);
    }
    size_t i = kmap_slot(m, a, b);
    if (!m->e[i].used) {
        m->e[i] = (kmap_ent){ a, b, 0, 1 };
        m->n++;
    }
    return &m->e[i].v;
}

static const uint32_t *kmap_find(const kmap *m, int64_t a, int64_t b)
{
    if (!m->cap)
        return NULL;
    size_t i = kmap_slot(m, a, b);
    return m->e[i].used ? &m->e[i].v : NULL;
}

/* ---- the open-flow set: 64-bit hashed (cat, id) keys -> state bits ------------- *
 * Real traces hold as many flows as events, and Kineto leaves many ends
 * unmatched, so the set is kept dense: 9 bytes an entry (a 64-bit hash as
 * the key, 0 = empty; a collision would need ~2^32 open flows). */

enum { FL_START = 1, FL_END = 2, FL_STEP = 4, FL_COUNT_LONE_END = 0x80 };

typedef struct fset {
    uint64_t *k;
    uint8_t *v;
    size_t cap, n;
} fset;

static size_t fset_slot(const fset *f, uint64_t key)
{
    size_t i = (size_t)key & (f->cap - 1);
    while (f->k[i] && f->k[i] != key)
        i = (i + 1) & (f->cap - 1);
    return i;
}

static uint8_t *fset_get(fset *f, uint64_t key)
{
    if (2 * (f->n + 1) > f->cap) {
        fset old = *f;
        f->cap = old.cap ? old.cap * 2 : 1024;
        f->k = cp_xcalloc(f->cap, sizeof *f->k);
        f->v = cp_xcalloc(f->cap, sizeof *f->v);
        for (size_t i = 0; i < old.cap; i++)
            if (old.k[i]) {
                size_t j = fset_slot(f, old.k[i]);
                f->k[j] = old.k[i];
                f->v[j] = old.v[i];
            }
        free(old.k);
        free(old.v);
    }
    size_t i = fset_slot(f, key);
    if (!f->k[i]) {
        f->k[i] = key;
        f->v[i] = 0;
        f->n++;
    }
    return &f->v[i];
}

/* Remove key (backward-shift deletion keeps every probe sequence intact). */
static void fset_del(fset *f, uint64_t key)
{
    size_t i = fset_slot(f, key);
    if (!f->k[i])
        return;
    f->k[i] = 0;
    f->n--;
    for (size_t j = (i + 1) & (f->cap - 1); f->k[j]; j = (j + 1) & (f->cap - 1)) {
        uint64_t k = f->k[j];
        uint8_t v = f->v[j];
        f->k[j] = 0;
        size_t h = fset_slot(f, k);
        f->k[h] = k;
        f->v[h] = v;
    }
}

/* ---- reader state ----------------------------------------------------------- */

/* One event while its members are read. */
typedef struct pend {
    char ph;
    bool has_ph, has_ts, has_dur, has_device, has_stream, has_id, bad;
    bool mtia_dev; /* category mtia_ccp_events: device-side MTIA activity */
    int64_t ts, dur, pid, tid, corr, ext, device, stream, id;
    uint32_t name, cat_name, tid_str;
    tl_cat cat;
    long long offset; /* where the event starts */
    uint32_t nargs;
    tl_arg args[KR_MAX_ARGS];
} pend;

typedef struct tcache_ent {
    tl_track_key key;
    uint32_t track;
    bool used;
} tcache_ent;

typedef struct sc_ent { /* string cache entry: length, three 8-byte samples, id + 1 (0 = empty) */
    uint64_t w[3];
    uint32_t n, id1;
} sc_ent;

typedef struct ktrack { /* per builder track: what naming needs */
    int64_t pid, tid;
    uint32_t tid_str;
} ktrack;

typedef struct kpg {
    uint32_t name, desc;
    int32_t size;
    int32_t *ranks;
    size_t n_ranks;
} kpg;

typedef struct kr {
    cp_jt *jt;
    cp_src *src;
    cp_fmap *map;         /* a plain file parsed in place, else NULL (read through src) */
    const char *name;
    tl_builder *b;
    cp_intern *str;
    diag_set *diag;
    tl_rank_meta *meta;
    cp_jt_tok tok;
    cp_error jerr;        /* the tokenizer's error, when it fails */
    bool src_failed;      /* the byte source reported an error */
    int src_status;
    bool seen_events;     /* entered a traceEvents array */
    /* resynchronisations after malformed JSON among the events */
    size_t n_resync;
    long long resync_bytes, first_resync_at, last_resync_at;
    size_t n_objects;     /* event objects met (complete or not) */
    bool seen_kineto_key; /* schemaVersion, deviceProperties, distributedInfo ... */
    bool v_mtia, v_hip, v_cuda;
    uint32_t dev_name;
    fset flows;  /* open flows: hash(cat id, flow id) -> FL_* */
    kmap names;  /* (pid, tid) -> thread name; (pid, INT64_MIN) -> process name */
    tcache_ent tcache[KR_TCACHE];
    sc_ent scache[KR_SCACHE];
    uint8_t catmemo[KR_CATMEMO]; /* string id -> (tl_cat + 1) | 0x80 for MTIA device work */
    ktrack *tracks;
    size_t n_tracks, cap_tracks;
    kpg *pgs;
    size_t n_pgs, cap_pgs;
    /* interned ids compared per event */
    uint32_t s_name, s_ac2g, s_async_gpu, s_async_c2g;
    pend ev;
} kr;

#define TOK_IS(t, lit) ((t)->n == sizeof(lit) - 1 && memcmp((t)->s, lit, sizeof(lit) - 1) == 0)

static long src_read_cb(void *ctx, char *buf, size_t cap, cp_error *err)
{
    kr *r = ctx;
    ssize_t n = cp_src_read(r->src, buf, cap, err);
    if (n < 0) {
        r->src_failed = true;
        r->src_status = (int)n;
        return (long)n;
    }
    return (long)n;
}

static inline int next(kr *r) { return cp_jt_next(r->jt, &r->tok, &r->jerr); }

/* The value whose first token t was just read: skip the rest of it when it
 * is a container. Returns 0 or a negative status. */
static int finish_value(kr *r, int t)
{
    if (t == CP_JT_OBJ_BEGIN || t == CP_JT_ARR_BEGIN) {
        int e = cp_jt_skip_rest(r->jt, &r->jerr);
        return e < 0 ? e : 0;
    }
    return t < 0 ? t : 0;
}

/* Interning hashes every byte serially (FNV), and a trace repeats the same
 * few thousand names (kernel names of hundreds of bytes) millions of times.
 * A direct-mapped cache keyed by the length and three 8-byte samples finds
 * the id with one memcmp; a miss or a collision falls back to the table. */
static uint32_t intern_span(kr *r, const char *s, size_t n)
{
    uint64_t w0 = 0, w1 = 0, w2 = 0;
    if (n >= 8) {
        memcpy(&w0, s, 8);
        memcpy(&w1, s + (n - 8) / 2, 8);
        memcpy(&w2, s + n - 8, 8);
    } else if (n >= 4) { /* two overlapping 4-byte loads cover it (n tells the overlap) */
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + n - 4, 4);
        w0 = lo | (uint64_t)hi << 32;
    } else if (n > 0) {
        w0 = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
             (uint64_t)(unsigned char)s[n - 1] << 16;
    }
    /* multiply-xorshift; the slot takes the product's top bits, which depend
     * on every input bit (low bits of a product see only low input bits) */
    uint64_t h = w0 * 0x9e3779b97f4a7c15ULL ^ (w1 + n) * 0xc2b2ae3d27d4eb4fULL ^ w2 * 0x165667b19e3779f9ULL;
    h = (h ^ (h >> 31)) * 0xff51afd7ed558ccdULL;
    sc_ent *c = &r->scache[h >> (64 - KR_SCACHE_BITS)];
    /* up to 24 bytes the three samples cover every byte: no table access */
    if (c->id1 && c->n == n && c->w[0] == w0 && c->w[1] == w1 && c->w[2] == w2 &&
        (n <= 24 || memcmp(cp_intern_str(r->str, c->id1 - 1), s, n) == 0))
        return c->id1 - 1;
    uint32_t id = cp_intern_n(r->str, s, n);
    *c = (sc_ent){ { w0, w1, w2 }, (uint32_t)CP_MIN(n, (size_t)UINT32_MAX), id + 1 };
    return id;
}

static inline uint32_t intern_tok(kr *r) { return intern_span(r, r->tok.s, r->tok.n); }

/* Exact integer of a NUMBER token the tokenizer flagged as an integer; the
 * common short case without the general parser's re-validation. */
static inline int tok_i64(const cp_jt_tok *t, int64_t *out)
{
    if ((t->flags & (CP_JT_F_INT | CP_JT_F_NEG)) == CP_JT_F_INT && t->n <= 18) {
        int64_t v = 0;
        for (size_t i = 0; i < t->n; i++)
            v = v * 10 + (t->s[i] - '0');
        *out = v;
        return 0;
    }
    return cp_jt_parse_i64(t->s, t->n, out);
}

/* A decimal NUMBER token as a double. With at most 15 significant digits
 * and a power of ten up to 22 both operands are exact doubles, so one
 * division is correctly rounded (the classic fast path); else strtod. */
static int tok_double(const cp_jt_tok *t, double *out)
{
    static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    const char *s = t->s;
    size_t n = t->n, i = 0, nd = 0, nfrac = 0;
    bool neg = n > 0 && s[0] == '-';
    i = neg;
    uint64_t m = 0;
    bool dot = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            if (nd || c != '0')
                nd++;
            m = m * 10 + (uint64_t)(c - '0');
            nfrac += dot;
            if (nd > 15)
                break;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    if (i == n && nfrac <= 22) {
        double d = (double)m / p10[nfrac];
        *out = neg ? -d : d;
        return 0;
    }
    return cp_jt_parse_double(s, n, out);
}

/* A stable integer for a pid/tid written as text ("Spans", "stream 7"):
 * negative, so it never collides with a real process or thread id. */
static int64_t id_from_text(const char *s, size_t n)
{
    return -(int64_t)(cp_hash64(s, n) >> 2) - 1;
}

/* Integer value of the current NUMBER or STRING token for an id-like field.
 * Text that is not an integer (or does not fit) maps to id_from_text and
 * *text receives its interned string. Returns false for other tokens. */
static bool tok_id(kr *r, int t, int64_t *out, uint32_t *text)
{
    if (text)
        *text = 0;
    if (t == CP_JT_NUMBER) {
        if (tok_i64(&r->tok, out) == 0)
            return true;
        double d;
        if (!(r->tok.flags & CP_JT_F_INT) && cp_jt_parse_double(r->tok.s, r->tok.n, &d) == 0 &&
            d > -9.2e18 && d < 9.2e18) {
            *out = (int64_t)d;
            return true;
        }
    } else if (t != CP_JT_STRING) {
        return false;
    } else if (r->tok.n > 0 && cp_jt_parse_i64(r->tok.s, r->tok.n, out) == 0) {
        return true;
    }
    *out = id_from_text(r->tok.s, r->tok.n);
    if (text)
        *text = intern_tok(r);
    return true;
}

/* ts/dur: a NUMBER or a numeric STRING of microseconds -> exact ns. */
static bool tok_time(kr *r, int t, int64_t *out_ns)
{
    if (t == CP_JT_NUMBER)
        return cp_jt_parse_ns(r->tok.s, r->tok.n, out_ns) == 0; /* has a fast path for "123.456" */
    if (t == CP_JT_STRING && cp_jt_parse_ns(r->tok.s, r->tok.n, out_ns) == 0) {
        diag_count(r->diag, DIAG_STRING_TIMESTAMP, r->name, r->tok.offset);
        return true;
    }
    return false;
}

/* ---- categories, tracks ------------------------------------------------------ */

/* Kineto category -> tl_cat. MTIA traces name their runtime and device
 * activity differently; they map onto the CUDA meanings so that launch
 * linking and kernel classification work the same for every vendor (the raw
 * name stays in cat_name). */
static tl_cat kineto_cat(const char *s, size_t n, bool *mtia_dev)
{
    *mtia_dev = false;
    if (n > 5 && memcmp(s, "mtia_", 5) == 0) {
        if (n == 15 && memcmp(s, "mtia_ccp_events", 15) == 0) {
            *mtia_dev = true;
            return TL_CAT_KERNEL;
        }
        if (n == 12 && memcmp(s, "mtia_runtime", 12) == 0)
            return TL_CAT_CUDA_RUNTIME;
    }
    return tl_cat_from_name(s, n);
}

/* kineto_cat of an interned category, memoised for the first string ids
 * (categories are few and interned early). */
static tl_cat cat_of(kr *r, uint32_t id, bool *mtia_dev)
{
    if (id < KR_CATMEMO && r->catmemo[id]) {
        *mtia_dev = r->catmemo[id] & 0x80;
        return (tl_cat)((r->catmemo[id] & 0x7f) - 1);
    }
    tl_cat c = kineto_cat(cp_intern_str(r->str, id), cp_intern_len(r->str, id), mtia_dev);
    if (id < KR_CATMEMO)
        r->catmemo[id] = (uint8_t)((c + 1) | (*mtia_dev ? 0x80 : 0));
    return c;
}

static bool is_gpu_cat(tl_cat c)
{
    return c == TL_CAT_KERNEL || c == TL_CAT_GPU_MEMCPY || c == TL_CAT_GPU_MEMSET ||
           c == TL_CAT_GPU_USER_ANNOTATION || c == TL_CAT_CUDA_SYNC;
}

static bool key_eq(const tl_track_key *a, const tl_track_key *b)
{
    return a->kind == b->kind && a->pid == b->pid && a->tid == b->tid && a->device == b->device &&
           a->stream == b->stream;
}

static uint32_t get_track(kr *r, const tl_track_key *k, uint32_t tid_str)
{
    uint64_t h = mix64((uint64_t)k->pid * 31 + (uint64_t)k->tid * 7 + (uint64_t)k->stream * 3 +
                       (uint64_t)k->device + (uint64_t)k->kind);
    tcache_ent *c = &r->tcache[h & (KR_TCACHE - 1)];
    if (c->used && key_eq(&c->key, k))
        return c->track;
    uint32_t t = tl_builder_track(r->b, k);
    if (t >= r->n_tracks) { /* a new track: remember what naming needs */
        cp_xgrow((void **)&r->tracks, &r->cap_tracks, (size_t)t + 1, sizeof *r->tracks);
        for (size_t i = r->n_tracks; i <= t; i++)
            r->tracks[i] = (ktrack){ k->pid, k->tid, 0 };
        r->tracks[t].tid_str = tid_str;
        r->n_tracks = (size_t)t + 1;
    }
    c->key = *k;
    c->track = t;
    c->used = true;
    return t;
}

/* ---- events ---------------------------------------------------------------- */

static const tl_arg *pend_arg(const pend *e, uint32_t key)
{
    for (uint32_t i = 0; i < e->nargs; i++)
        if (e->args[i].key == key)
            return &e->args[i];
    return NULL;
}

static void note_vendor(kr *r, const pend *e)
{
    if (e->mtia_dev || (e->cat_name && cp_intern_len(r->str, e->cat_name) > 5 &&
                        memcmp(cp_intern_str(r->str, e->cat_name), "mtia_", 5) == 0)) {
        r->v_mtia = true;
        return;
    }
    if (e->cat != TL_CAT_CUDA_RUNTIME && e->cat != TL_CAT_CUDA_DRIVER)
        return;
    const char *nm = cp_intern_str(r->str, e->name);
    if (nm[0] == 'h' && nm[1] == 'i' && nm[2] == 'p')
        r->v_hip = true;
    else if (nm[0] == 'c' && nm[1] == 'u')
        r->v_cuda = true;
}

static void add_event(kr *r, pend *e)
{
    if (!e->has_ts || e->ts > KR_TIME_LIMIT_NS || e->ts < -KR_TIME_LIMIT_NS) {
        diag_count(r->diag, DIAG_BAD_EVENT, r->name, e->offset);
        return;
    }
    tl_ev ev = { 0 };
    ev.ts_ns = e->ts;
    ev.name = e->name;
    ev.cat_name = e->cat_name;
    ev.cat = e->cat;
    ev.corr = e->corr;
    ev.ext_id = e->ext;
    if (e->ph == 'X') {
        if (!e->has_dur) {
            diag_count(r->diag, DIAG_MISSING_DUR, r->name, e->offset);
            ev.flags |= TL_F_NO_DUR;
        } else if (e->dur < 0) {
            diag_count(r->diag, DIAG_NEGATIVE_DUR, r->name, e->offset);
        } else if (e->dur > KR_TIME_LIMIT_NS) {
            diag_count(r->diag, DIAG_CLAMPED_VALUE, r->name, e->offset);
            ev.dur_ns = KR_TIME_LIMIT_NS;
        } else {
            ev.dur_ns = e->dur;
        }
    } else {
        ev.flags |= TL_F_INSTANT;
    }
    if (e->mtia_dev) { /* MTIA DMA requests are copies, the rest kernels */
        const char *nm = cp_intern_str(r->str, e->name);
        if (strncmp(nm, "dma", 3) == 0)
            ev.cat = TL_CAT_GPU_MEMCPY;
    }
    tl_track_key k = { TL_TRACK_CPU, e->pid, e->tid, -1, -1 };
    if (e->ph == 'C') {
        k.kind = TL_TRACK_OTHER;
    } else if (is_gpu_cat(e->cat) || (e->cat == TL_CAT_OTHER && e->has_device && e->has_stream)) {
        k.kind = TL_TRACK_GPU;
        k.device = (int32_t)(e->has_device ? e->device : e->pid);
        k.stream = e->has_stream ? e->stream : e->tid;
        if (!e->has_stream)
            ev.flags |= TL_F_NO_STREAM_ARG;
    }
    if (k.kind != TL_TRACK_GPU && e->has_stream && e->nargs < KR_MAX_ARGS) /* a CPU call's stream arg */
        e->args[e->nargs++] =
            (tl_arg){ .key = cp_intern_s(r->str, "stream"), .type = TL_ARG_INT, .v.i = e->stream };
    ev.track = get_track(r, &k, e->tid_str);
    note_vendor(r, e);
    tl_builder_add(r->b, &ev);
    tl_builder_args(r->b, e->args, e->nargs);
}

static void add_metadata(kr *r, const pend *e)
{
    const char *what = cp_intern_str(r->str, e->name);
    const tl_arg *a = pend_arg(e, r->s_name);
    if (!a) {
        a = pend_arg(e, cp_intern_s(r->str, "labels"));
        if (a && a->type == TL_ARG_STR && strncmp(what, "process_labels", 14) == 0 &&
            cp_str_istarts(cp_intern_str(r->str, a->v.s), "MTIA"))
            r->v_mtia = true;
        return;
    }
    if (a->type != TL_ARG_STR)
        return;
    if (strcmp(what, "thread_name") == 0)
        *kmap_get(&r->names, e->pid, e->tid) = a->v.s;
    else if (strcmp(what, "process_name") == 0)
        *kmap_get(&r->names, e->pid, INT64_MIN) = a->v.s;
}

static void add_flow(kr *r, const pend *e)
{
    if (!e->has_id) {
        diag_count(r->diag, DIAG_BAD_EVENT, r->name, e->offset);
        return;
    }
    /* A start and its end are forgotten once both were seen, so the set
     * holds only flows still open. Kineto writes a lone ac2g end on every
     * runtime call that launched nothing: those are not damage. */
    uint64_t key = mix64((uint64_t)e->cat_name * 0x9e3779b97f4a7c15ULL ^ mix64((uint64_t)e->id)) | 1u;
    uint8_t *st = fset_get(&r->flows, key);
    *st |= e->ph == 's' ? FL_START : e->ph == 'f' ? FL_END : FL_STEP;
    uint32_t c = e->cat_name;
    if (c != r->s_ac2g && c != r->s_async_gpu && c != r->s_async_c2g)
        *st |= FL_COUNT_LONE_END;
    if ((*st & FL_START) && (*st & FL_END))
        fset_del(&r->flows, key);
}

static void commit(kr *r)
{
    pend *e = &r->ev;
    if (e->bad || !e->has_ph) {
        diag_count(r->diag, DIAG_BAD_EVENT, r->name, e->offset);
        return;
    }
    /* the overlay's own tracks (render_perfetto.h: layers, stragglers,
     * findings) are not trace events: a re-read overlay is its trace */
    if (e->cat_name && cp_intern_len(r->str, e->cat_name) > 10 &&
        memcmp(cp_intern_str(r->str, e->cat_name), "chainprof.", 10) == 0)
        return;
    switch (e->ph) {
    case 'X': case 'i': case 'I': case 'C': add_event(r, e); break;
    case 'M': add_metadata(r, e); break;
    case 's': case 'f': case 't': add_flow(r, e); break;
    default: diag_count(r->diag, DIAG_UNKNOWN_PHASE, r->name, e->offset); break;
    }
}

static void push_arg(kr *r, tl_arg a)
{
    if (r->ev.nargs >= KR_MAX_ARGS) {
        diag_count(r->diag, DIAG_LIMIT_REACHED, r->name, r->tok.offset);
        return;
    }
    r->ev.args[r->ev.nargs++] = a;
}

/* Args the timeline keeps in columns or that nobody reads: skipped unparsed. */
static bool arg_dropped(const cp_jt_tok *k)
{
    switch (k->n) {
    case 6: return TOK_IS(k, "Ev Idx");
    case 10: return TOK_IS(k, "Trace name");
    case 15: return TOK_IS(k, "Trace iteration");
    case 18: return TOK_IS(k, "Record function id");
    case 20: return TOK_IS(k, "Profiler Event Index");
    default: return false;
    }
}

enum { A_PLAIN, A_EXT, A_CORR, A_DEVICE, A_STREAM };

static int arg_role(const cp_jt_tok *k)
{
    if (k->n == 6)
        return TOK_IS(k, "device") ? A_DEVICE : TOK_IS(k, "stream") ? A_STREAM : A_PLAIN;
    if (k->n == 11) {
        if (TOK_IS(k, "correlation"))
            return A_CORR;
        if (TOK_IS(k, "External id") || TOK_IS(k, "external id"))
            return A_EXT;
    }
    return A_PLAIN;
}

/* The args object of the current event; its '{' was read. */
static int read_args(kr *r)
{
    pend *e = &r->ev;
    for (;;) {
        int t = next(r);
        if (t < 0)
            return t;
        if (t == CP_JT_OBJ_END)
            return 0;
        if (arg_dropped(&r->tok)) {
            t = cp_jt_skip(r->jt, &r->jerr);
            if (t < 0)
                return t;
            continue;
        }
        int role = arg_role(&r->tok);
        uint32_t key = role == A_PLAIN ? intern_tok(r) : 0;
        t = next(r);
        if (t < 0)
            return t;
        int64_t v;
        if (role != A_PLAIN && t == CP_JT_NUMBER && tok_i64(&r->tok, &v) == 0) {
            switch (role) {
            case A_EXT: e->ext = v; break;
            case A_CORR: e->corr = v; break;
            case A_DEVICE: e->device = v; e->has_device = true; break;
            default: e->stream = v; e->has_stream = true; break;
            }
            continue;
        }
        if (role != A_PLAIN) /* not an integer: keep it as an ordinary arg */
            key = cp_intern_s(r->str, role == A_EXT ? "External id" : role == A_CORR ? "correlation"
                                                   : role == A_DEVICE ? "device" : "stream");
        tl_arg a = { .key = key };
        switch (t) {
        case CP_JT_NUMBER: {
            int pr = (r->tok.flags & CP_JT_F_INT) ? tok_i64(&r->tok, &v) : CP_ERR_FORMAT;
            if (pr == 0) {
                a.type = TL_ARG_INT;
                a.v.i = v;
            } else if (pr == CP_JT_RANGE) { /* beyond int64: keep the digits */
                diag_count(r->diag, DIAG_INT_OVERFLOW_ARG, r->name, r->tok.offset);
                a.type = TL_ARG_STR;
                a.v.s = intern_tok(r);
            } else if (tok_double(&r->tok, &a.v.d) == 0) {
                a.type = TL_ARG_NUM;
            } else {
                a.type = TL_ARG_STR; /* NaN, Infinity, or out of double range */
                a.v.s = intern_tok(r);
            }
            break;
        }
        case CP_JT_STRING: a.type = TL_ARG_STR; a.v.s = intern_tok(r); break;
        case CP_JT_TRUE: case CP_JT_FALSE: a.type = TL_ARG_BOOL; a.v.i = t == CP_JT_TRUE; break;
        case CP_JT_NULL: continue;
        default: {
            int s = finish_value(r, t);
            if (s < 0)
                return s;
            continue;
        }
        }
        push_arg(r, a);
    }
}

enum { F_OTHER, F_PH, F_NAME, F_CAT, F_PID, F_TID, F_TS, F_DUR, F_ARGS, F_ID }; /* event members */

/* One event object; its '{' was read. Returns 0 or a negative status. */
static int read_event(kr *r)
{
    pend *e = &r->ev;
    e->offset = r->tok.offset;
    e->ph = 0;
    e->has_ph = e->has_ts = e->has_dur = e->has_device = e->has_stream = e->has_id = e->bad = false;
    e->mtia_dev = false;
    e->ts = e->dur = e->pid = e->tid = e->device = e->stream = e->id = 0;
    e->corr = e->ext = -1;
    e->name = e->cat_name = e->tid_str = 0;
    e->cat = TL_CAT_OTHER;
    e->nargs = 0;
    for (;;) {
        int t = next(r);
        if (t < 0)
            return t;
        if (t == CP_JT_OBJ_END) {
            commit(r);
            /* what the event read is interned or copied: the mapped pages
             * well behind it are not looked at again */
            if (r->map)
                cp_fmap_drop(r->map, (size_t)CP_MAX(cp_jt_offset(r->jt) - (1 << 20), 0));
            return 0;
        }
        const cp_jt_tok *k = &r->tok;
        int field = F_OTHER;
        switch (k->n) {
        case 2: field = TOK_IS(k, "ph") ? F_PH : TOK_IS(k, "ts") ? F_TS : TOK_IS(k, "id") ? F_ID : F_OTHER; break;
        case 3:
            field = TOK_IS(k, "cat") ? F_CAT : TOK_IS(k, "pid") ? F_PID : TOK_IS(k, "tid") ? F_TID
                    : TOK_IS(k, "dur") ? F_DUR : F_OTHER;
            break;
        case 4: field = TOK_IS(k, "name") ? F_NAME : TOK_IS(k, "args") ? F_ARGS : F_OTHER; break;
        default: break;
        }
        if (field == F_OTHER) { /* "s", "bp", "tts", "id2"...: not needed */
            t = cp_jt_skip(r->jt, &r->jerr);
            if (t < 0)
                return t;
            continue;
        }
        t = next(r);
        if (t < 0)
            return t;
        switch (field) {
        case F_PH:
            if (t == CP_JT_STRING && r->tok.n >= 1) {
                e->ph = r->tok.s[0];
                e->has_ph = true;
            } else {
                e->bad = true;
            }
            break;
        case F_NAME:
            if (t == CP_JT_STRING || t == CP_JT_NUMBER)
                e->name = intern_tok(r);
            break;
        case F_CAT:
            if (t == CP_JT_STRING) {
                e->cat_name = intern_tok(r);
                e->cat = cat_of(r, e->cat_name, &e->mtia_dev);
            }
            break;
        case F_PID:
            if (!tok_id(r, t, &e->pid, NULL))
                e->bad = true;
            break;
        case F_TID:
            if (!tok_id(r, t, &e->tid, &e->tid_str))
                e->bad = true;
            break;
        case F_TS:
            if (tok_time(r, t, &e->ts))
                e->has_ts = true;
            else
                e->bad = true;
            break;
        case F_DUR:
            if (tok_time(r, t, &e->dur))
                e->has_dur = true;
            else if (t != CP_JT_NULL)
                e->bad = true;
            break;
        case F_ARGS:
            if (t == CP_JT_OBJ_BEGIN) {
                int s = read_args(r);
                if (s < 0)
                    return s;
                continue;
            }
            break;
        default: /* F_ID: flow id */
            if (tok_id(r, t, &e->id, NULL))
                e->has_id = true;
            break;
        }
        int s = finish_value(r, t);
        if (s < 0)
            return s;
    }
}

/* Malformed JSON inside the events array (elements at depth target): skip
 * to the next event and read on, counting what was lost, instead of
 * dropping the rest of the file. Not after a read error (a corrupt gzip
 * member: nothing after it can be decoded), a cap, or a truncation, and
 * never twice at one offset. Returns 0 to go on, else the status. */
static int resync(kr *r, unsigned target, int status)
{
    long long at = r->jerr.offset, skipped = 0;
    if (r->src_failed || at == r->last_resync_at)
        return status;
    int s = cp_jt_resync(r->jt, target, &skipped, &r->jerr);
    if (s < 0)
        return s;
    r->last_resync_at = at;
    if (r->n_resync++ == 0)
        r->first_resync_at = at;
    r->resync_bytes += skipped;
    diag_count(r->diag, DIAG_DAMAGED_JSON, r->name, at);
    return 0;
}

/* The traceEvents array (or a top-level array of events); '[' was read. */
static int read_events(kr *r)
{
    r->seen_events = true;
    unsigned target = cp_jt_depth(r->jt); /* the depth of its elements */
    for (;;) {
        int t = next(r);
        if (t == CP_JT_ARR_END)
            return 0;
        if (t == CP_JT_OBJ_BEGIN) {
            r->n_objects++;
            t = read_event(r);
        } else if (t >= 0) {
            diag_count(r->diag, DIAG_BAD_EVENT, r->name, r->tok.offset); /* not an object */
            t = finish_value(r, t);
        }
        if (t < 0 && (t = resync(r, target, t)) < 0)
            return t;
    }
}

/* ---- top-level metadata ------------------------------------------------------ */

/* deviceProperties: [{"id": 0, "name": "...", "totalGlobalMem": N, ...}, ...] */
static int read_devices(kr *r)
{
    for (;;) {
        int t = next(r);
        if (t < 0)
            return t;
        if (t == CP_JT_ARR_END)
            return 0;
        if (t != CP_JT_OBJ_BEGIN) {
            if ((t = finish_value(r, t)) < 0)
                return t;
            continue;
        }
        bool first = r->meta->n_devices == 0;
        r->meta->n_devices++;
        for (;;) {
            t = next(r);
            if (t < 0)
                return t;
            if (t == CP_JT_OBJ_END)
                break;
            int which = TOK_IS(&r->tok, "name") ? 1 : TOK_IS(&r->tok, "totalGlobalMem") ? 2
                        : TOK_IS(&r->tok, "warpSize") ? 3 : 0;
            t = next(r);
            if (t < 0)
                return t;
            if (first && which == 1 && t == CP_JT_STRING) {
                r->dev_name = intern_tok(r);
                r->meta->gpu_name = r->dev_name;
            } else if (first && which == 2 && t == CP_JT_NUMBER) {
                int64_t v;
                if (cp_jt_parse_i64(r->tok.s, r->tok.n, &v) == 0)
                    r->meta->gpu_mem_bytes = v;
            } else if (which == 3 && t == CP_JT_NUMBER) {
                int64_t v; /* AMD wavefronts are 64 wide, NVIDIA warps 32 */
                if (cp_jt_parse_i64(r->tok.s, r->tok.n, &v) == 0 && v == 64)
                    r->v_hip = true;
            }
            if ((t = finish_value(r, t)) < 0)
                return t;
        }
    }
}

/* One pg_config entry; '{' was read. */
static int read_pg(kr *r)
{
    if (r->n_pgs >= KR_MAX_PGS) {
        diag_count(r->diag, DIAG_LIMIT_REACHED, r->name, r->tok.offset);
        int e = cp_jt_skip_rest(r->jt, &r->jerr);
        return e < 0 ? e : 0;
    }
    cp_xgrow((void **)&r->pgs, &r->cap_pgs, r->n_pgs + 1, sizeof *r->pgs);
    kpg *pg = &r->pgs[r->n_pgs++];
    *pg = (kpg){ 0, 0, -1, NULL, 0 };
    size_t cap = 0;
    for (;;) {
        int t = next(r);
        if (t < 0)
            return t;
        if (t == CP_JT_OBJ_END)
            return 0;
        int which = TOK_IS(&r->tok, "pg_name") ? 1 : TOK_IS(&r->tok, "pg_desc") ? 2
                    : TOK_IS(&r->tok, "pg_size") ? 3 : TOK_IS(&r->tok, "ranks") ? 4 : 0;
        t = next(r);
        if (t < 0)
            return t;
        int64_t v;
        if ((which == 1 || which == 2) && (t == CP_JT_STRING || t == CP_JT_NUMBER)) {
            *(which == 1 ? &pg->name : &pg->desc) = intern_tok(r);
        } else if (which == 3 && t == CP_JT_NUMBER && cp_jt_parse_i64(r->tok.s, r->tok.n, &v) == 0) {
            pg->size = (int32_t)CP_MIN(CP_MAX(v, -1), INT32_MAX);
        } else if (which == 4 && t == CP_JT_ARR_BEGIN) {
            for (;;) {
                t = next(r);
                if (t < 0)
                    return t;
                if (t == CP_JT_ARR_END)
                    break;
                if (t == CP_JT_NUMBER && cp_jt_parse_i64(r->tok.s, r->tok.n, &v) == 0 && v >= 0 &&
                    v <= INT32_MAX) {
                    if (pg->n_ranks >= KR_MAX_PG_RANKS) {
                        diag_count(r->diag, DIAG_LIMIT_REACHED, r->name, r->tok.offset);
                        continue;
                    }
                    cp_xgrow((void **)&pg->ranks, &cap, pg->n_ranks + 1, sizeof *pg->ranks);
                    pg->ranks[pg->n_ranks++] = (int32_t)v;
                } else if ((t = finish_value(r, t)) < 0) {
                    return t;
                }
            }
            continue;
        }
        if ((t = finish_value(r, t)) < 0)
            return t;
    }
}

/* distributedInfo: {"backend": "nccl", "rank": 0, "world_size": 2,
 * "pg_config": [...], "nccl_version": "2.17.1"} */
static int read_dist(kr *r)
{
    for (;;) {
        int t = next(r);
        if (t < 0)
            return t;
        if (t == CP_JT_OBJ_END)
            return 0;
        int which = TOK_IS(&r->tok, "rank") ? 1 : TOK_IS(&r->tok, "world_size") ? 2
                    : TOK_IS(&r->tok, "backend") ? 3 : TOK_IS(&r->tok, "nccl_version") ? 4
                    : TOK_IS(&r->tok, "pg_config") ? 5 : 0;
        t = next(r);
        if (t < 0)
            return t;
        int64_t v;
        bool num = t == CP_JT_NUMBER && cp_jt_parse_i64(r->tok.s, r->tok.n, &v) == 0;
        if (which == 1 && num && v >= 0 && v <= INT32_MAX) {
            r->meta->rank = (int32_t)v;
            r->meta->rank_source = TL_RANK_FROM_TRACE;
        } else if (which == 2 && num && v > 0 && v <= INT32_MAX) {
            r->meta->world_size = (int32_t)v;
        } else if (which == 3 && t == CP_JT_STRING) {
            r->meta->backend = intern_tok(r);
            if (cp_str_icontains(cp_intern_str(r->str, r->meta->backend), "mtia"))
                r->v_mtia = true;
        } else if (which == 4 && (t == CP_JT_STRING || t == CP_JT_NUMBER)) {
            r->meta->nccl_version = intern_tok(r);
        } else if (which == 5 && t == CP_JT_ARR_BEGIN) {
            for (;;) {
                t = next(r);
                if (t < 0)
                    return t;
                if (t == CP_JT_ARR_END)
                    break;
                t = t == CP_JT_OBJ_BEGIN ? read_pg(r) : finish_value(r, t);
                if (t < 0)
                    return t;
            }
            continue;
        }
        if ((t = finish_value(r, t)) < 0)
            return t;
    }
}

/* The top-level object; '{' was read. */
static int read_top(kr *r)
{
    for (;;) {
        int t = next(r);
        if (t < 0)
            return t;
        if (t == CP_JT_OBJ_END)
            return 0;
        const cp_jt_tok *k = &r->tok;
        int which = TOK_IS(k, "traceEvents") ? 1 : TOK_IS(k, "deviceProperties") ? 2
                    : TOK_IS(k, "distributedInfo") ? 3 : TOK_IS(k, "baseTimeNanoseconds") ? 4
                    : (TOK_IS(k, "host_name") || TOK_IS(k, "hostname")) ? 5
                    : (TOK_IS(k, "schemaVersion") || TOK_IS(k, "traceName") ||
                       TOK_IS(k, "displayTimeUnit")) ? 6 : 0;
        /* the profiler's version metadata names the vendor's tracer:
         * roctracer/HIP on ROCm, CUPTI/CUDA on NVIDIA (kineto's
         * VersionLogger) */
        if (which == 0 && (TOK_IS(k, "roctracer_version") || TOK_IS(k, "hip_runtime_version") ||
                           TOK_IS(k, "hip_driver_version")))
            r->v_hip = true;
        else if (which == 0 && (TOK_IS(k, "cupti_version") || TOK_IS(k, "cuda_runtime_version") ||
                                TOK_IS(k, "cuda_driver_version")))
            r->v_cuda = true;
        if (which == 0 || which == 6) {
            r->seen_kineto_key |= which == 6;
            if ((t = cp_jt_skip(r->jt, &r->jerr)) < 0)
                return t;
            continue;
        }
        long long key_off = k->offset;
        t = next(r);
        if (t < 0)
            return t;
        r->seen_kineto_key = true;
        int64_t v;
        switch (which) {
        case 1:
            if (t != CP_JT_ARR_BEGIN)
                return cp_error_set(&r->jerr, CP_ERR_FORMAT, r->name, 0, 0, key_off,
                                    "not a chrome trace: traceEvents is not an array");
            t = read_events(r);
            break;
        case 2:
            t = t == CP_JT_ARR_BEGIN ? read_devices(r) : finish_value(r, t);
            break;
        case 3:
            t = t == CP_JT_OBJ_BEGIN ? read_dist(r) : finish_value(r, t);
            break;
        case 4:
            if (t == CP_JT_NUMBER && cp_jt_parse_i64(r->tok.s, r->tok.n, &v) == 0 && v >= 0 &&
                v <= KR_TIME_LIMIT_NS) {
                r->meta->has_base_time = true;
                r->meta->base_time_ns = v;
            } else {
                diag_count(r->diag, DIAG_CLAMPED_VALUE, r->name, r->tok.offset);
            }
            t = finish_value(r, t);
            break;
        default:
            if (t == CP_JT_STRING)
                r->meta->hostname = intern_tok(r);
            t = finish_value(r, t);
            break;
        }
        if (t < 0)
            return t;
    }
}

/* ---- finishing ---------------------------------------------------------------- */

static void finish_flows(kr *r)
{
    uint64_t unmatched = 0;
    for (size_t i = 0; i < r->flows.cap; i++) {
        uint8_t v = r->flows.v[i];
        if (!r->flows.k[i])
            continue;
        bool start = v & FL_START, end = v & (FL_END | FL_STEP);
        if (start ? !end : (end && (v & FL_COUNT_LONE_END)))
            unmatched++;
    }
    diag_count_n(r->diag, DIAG_UNMATCHED_FLOW, unmatched, r->name, -1);
}

static void finish_tracks(kr *r)
{
    for (size_t t = 0; t < r->n_tracks; t++) {
        const ktrack *k = &r->tracks[t];
        const uint32_t *nm = kmap_find(&r->names, k->pid, k->tid);
        uint32_t name = nm ? *nm : k->tid_str;
        if (!name && (nm = kmap_find(&r->names, k->pid, INT64_MIN)))
            name = *nm;
        if (name)
            tl_builder_track_name(r->b, (uint32_t)t, name);
    }
}

static void finish_meta(kr *r)
{
    tl_rank_meta *m = r->meta;
    m->format = cp_intern_s(r->str, "kineto");
    if (m->rank < 0) {
        int32_t fr = rd_rank_from_name(r->name);
        if (fr >= 0) {
            m->rank = fr;
            m->rank_source = TL_RANK_FROM_FILENAME;
            diag_count(r->diag, DIAG_RANK_FROM_FILENAME, r->name, -1);
        }
    }
    const char *dev = r->dev_name ? cp_intern_str(r->str, r->dev_name) : "";
    if (r->v_mtia || cp_str_icontains(dev, "mtia") || cp_str_icontains(dev, "artemis"))
        m->vendor = TL_VENDOR_MTIA;
    else if (cp_str_icontains(dev, "amd") || cp_str_icontains(dev, "radeon") ||
             cp_str_icontains(dev, "instinct") || r->v_hip)
        m->vendor = TL_VENDOR_AMD;
    else if (*dev || r->v_cuda)
        m->vendor = TL_VENDOR_NVIDIA;
    if (r->n_pgs) {
        cp_arena *ar = tl_builder_arena(r->b);
        m->n_pgs = (int32_t)r->n_pgs;
        m->pgs = CP_ANEWN(ar, tl_pg, r->n_pgs);
        for (size_t i = 0; i < r->n_pgs; i++) {
            const kpg *s = &r->pgs[i];
            tl_pg *d = &m->pgs[i];
            d->name = s->name;
            d->desc = s->desc;
            d->size = s->size >= 0 ? s->size : (int32_t)s->n_ranks;
            if (s->n_ranks && (size_t)d->size == s->n_ranks) {
                d->ranks = CP_ANEWN(ar, int32_t, s->n_ranks);
                memcpy(d->ranks, s->ranks, s->n_ranks * sizeof *s->ranks);
            }
        }
    }
    cp_jt_stats st = cp_jt_get_stats(r->jt);
    diag_count_n(r->diag, DIAG_TRAILING_COMMA, st.trailing_commas, r->name, -1);
    diag_count_n(r->diag, DIAG_BAD_ESCAPE, st.bad_escapes, r->name, -1);
}

/* Read a compressed source to its end, discarding the bytes, so its
 * trailer (CRC, checksum) is checked; a plain file has none to check. */
static void drain(cp_src *src)
{
    if (cp_src_get_kind(src) == CP_SRC_PLAIN || cp_src_get_kind(src) == CP_SRC_MEM)
        return;
    char sink[1 << 16];
    cp_error e;
    while (cp_src_read(src, sink, sizeof sink, &e) > 0)
        ;
}

/* Corrupt compressed data (not a cut): counted and named on stderr, once.
 * True when the source reported it. */
static bool note_corrupt(kr *r)
{
    const char *why = cp_src_damage(r->src);
    if (!why)
        return false;
    long long at = (long long)cp_src_offset(r->src);
    diag_count(r->diag, DIAG_CORRUPT_DATA, r->name, at);
    cp_log_warn("%s: %s; the %lld bytes decoded before it were read, nothing after it", r->name, why, at);
    return true;
}

/* A failed tokenizer call: damage inside a trace (counted, the read ends
 * with what was complete), or the verdict that this is no trace at all. */
static int on_error(kr *r, int rc, cp_error *err)
{
    if (r->src_failed && r->src_status == CP_ERR_IO) {
        if (err)
            *err = r->jerr;
        return CP_ERR_IO;
    }
    bool trunc = cp_jt_truncated(r->jt) || r->src_failed;
    /* Before traceEvents only a cut-off Kineto header still counts as a
     * (damaged) trace; malformed JSON there means it is not one. */
    if (!r->seen_events && !(trunc && r->seen_kineto_key)) {
        if (err)
            *err = r->jerr;
        if (err && !err->file[0])
            snprintf(err->file, sizeof err->file, "%s", r->name);
        return CP_ERR_FORMAT;
    }
    long long at = r->jerr.offset;
    if (trunc && note_corrupt(r))
        ; /* the input ended at the damage: named as what it is */
    else if (trunc)
        diag_count(r->diag, DIAG_TRUNCATED_FILE, r->name, cp_jt_last_complete_end(r->jt));
    else if (rc == CP_ERR_NOMEM)
        diag_count(r->diag, DIAG_LIMIT_REACHED, r->name, at);
    else { /* malformed JSON: nothing after it can be trusted */
        diag_count(r->diag, DIAG_BAD_EVENT, r->name, at);
        drain(r->src); /* a compressed file's damage further on is still named */
        note_corrupt(r);
    }
    return 0;
}

/* Read src, or map (the same plain file mapped) in place when not NULL. */
static int read_trace(cp_src *src, cp_fmap *map, const char *name, tl_builder *b, cp_error *err)
{
    kr *r = cp_xcalloc(1, sizeof *r);
    r->src = src;
    r->map = map;
    r->name = name ? name : cp_src_name(src);
    r->b = b;
    r->str = tl_builder_strings(b);
    r->diag = tl_builder_diag(b);
    r->meta = tl_builder_meta(b);
    cp_error_clear(&r->jerr);
    r->s_name = cp_intern_s(r->str, "name");
    r->s_ac2g = cp_intern_s(r->str, "ac2g");
    r->s_async_gpu = cp_intern_s(r->str, "async_gpu");
    r->s_async_c2g = cp_intern_s(r->str, "async_cpu_to_gpu");
    /* Size the builder from the file (Kineto spends ~250-450 bytes of JSON
     * per kept event, flows included; compressed input is >= ~12x smaller),
     * so the columns are not copied while they grow. A reservation that is
     * too large costs address space only: untouched pages are never mapped. */
    uint64_t raw = cp_src_raw_size(src);
    if (raw > (1u << 20) && cp_src_get_kind(src) != CP_SRC_MEM) {
        uint64_t plain = cp_src_get_kind(src) == CP_SRC_PLAIN ? raw : raw * 12;
        size_t ev = (size_t)CP_MIN(plain / 250, (uint64_t)1 << 30);
        tl_builder_reserve(b, ev, ev * 4);
    }
    r->last_resync_at = -1;
    cp_jt_opts jo = { .name = r->name, .buf_bytes = 1u << 20 };
    int rc = 0;
    r->jt = map ? cp_jt_open_mem(map->data, map->n, &jo) : cp_jt_open(src_read_cb, r, &jo);
    bool top_array = false;
    int t = next(r);
    if (t == CP_JT_OBJ_BEGIN) {
        t = read_top(r);
    } else if (t == CP_JT_ARR_BEGIN) {
        top_array = true;
        t = read_events(r);
    } else if (t >= 0) {
        t = cp_error_set(&r->jerr, CP_ERR_FORMAT, r->name, 0, 0, r->tok.offset,
                         "not a chrome trace: the top-level value is not an object or array");
    }
    if (t >= 0 && !r->seen_events) {
        rc = cp_error_set(err, CP_ERR_FORMAT, r->name, 0, 0, cp_jt_offset(r->jt),
                          "not a chrome trace: the top-level object has no traceEvents array");
        goto out;
    }
    if (top_array && r->n_objects == 0) {
        rc = cp_error_set(err, CP_ERR_FORMAT, r->name, 0, 0, 0,
                          "not a chrome trace: the top-level array holds no event objects");
        goto out;
    }
    if (t >= 0) { /* complete: anything after the top-level value is ignored, with a word */
        cp_jt_tok tail;
        cp_error terr;
        t = cp_jt_next(r->jt, &tail, &terr);
        if (t < 0 && !cp_jt_truncated(r->jt) && !r->src_failed) {
            diag_count(r->diag, DIAG_DAMAGED_JSON, r->name, terr.offset);
            cp_log_warn("%s: data after the end of the JSON document at offset %lld ignored", r->name, terr.offset);
            drain(src); /* so a compressed file's trailer (CRC, checksum) is still checked */
        }
        if (note_corrupt(r))
            ; /* damage after the last complete value */
        else if ((t < 0 && cp_jt_truncated(r->jt)) || cp_src_truncated(src))
            diag_count(r->diag, DIAG_TRUNCATED_FILE, r->name,
                       map ? (long long)map->n : (long long)cp_src_offset(src));
        t = 0;
    } else {
        rc = on_error(r, t, err);
        if (rc < 0)
            goto out;
    }
    if (r->n_resync)
        cp_log_warn("%s: malformed JSON at offset %lld: %zu damaged event%s skipped (%lld bytes); the rest of the "
                    "trace was read",
                    r->name, r->first_resync_at, r->n_resync, r->n_resync == 1 ? "" : "s", r->resync_bytes);
    finish_flows(r);
    finish_tracks(r);
    finish_meta(r);
out:
    cp_jt_close(r->jt);
    free(r->flows.k);
    free(r->flows.v);
    free(r->names.e);
    free(r->tracks);
    for (size_t i = 0; i < r->n_pgs; i++)
        free(r->pgs[i].ranks);
    free(r->pgs);
    free(r);
    return rc;
}

int rd_kineto_read_src(cp_src *src, const char *name, tl_builder *b, cp_error *err)
{
    return read_trace(src, NULL, name, b, err);
}

/* A plain file is parsed in place from a mapping (no read(2) copy of every
 * byte: 12-15 % less reader CPU in bench_jsontok's reader walk on the
 * current development VM); compressed files, and a plain one that cannot
 * be mapped, stream through the byte source. */
int rd_kineto_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    (void)o;
    cp_src *src;
    int rc = cp_src_open(&src, path, err);
    if (rc < 0)
        return rc;
    cp_fmap map;
    cp_error merr;
    if (cp_src_get_kind(src) == CP_SRC_PLAIN && cp_fmap_open(&map, path, &merr) == 0) {
        rc = read_trace(src, &map, path, b, err);
        cp_fmap_close(&map);
    } else {
        rc = read_trace(src, NULL, path, b, err);
    }
    cp_src_close(src);
    return rc;
}

/* ---- sniffing and file names ---------------------------------------------------- */

static bool head_has(const unsigned char *h, size_t n, const char *lit)
{
    return memmem(h, n, lit, strlen(lit)) != NULL;
}

int rd_kineto_sniff(const char *path, const unsigned char *head, size_t n)
{
    (void)path;
    size_t i = 0;
    if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf)
        i = 3; /* UTF-8 byte order mark */
    while (i < n && isspace(head[i]))
        i++;
    if (i >= n)
        return 0;
    if (head[i] == '{') {
        if (head_has(head, n, "\"traceEvents\""))
            return 95;
        if (head_has(head, n, "\"schemaVersion\"") || head_has(head, n, "\"deviceProperties\""))
            return 80;
        return 0;
    }
    if (head[i] == '[') {
        for (i++; i < n && isspace(head[i]); i++)
            ;
        if (i < n && head[i] == '{' && head_has(head, n, "\"ph\""))
            return 70;
    }
    return 0;
}
