/* timeline.h - what happened: the shared model every reader fills and every
 * analyzer reads.
 *
 * Design
 * - Time is int64 nanoseconds. After tl_finish every timestamp of every rank
 *   is on one clock (the trace's own epoch plus baseTimeNanoseconds when the
 *   trace has it), so ranks can be compared instant by instant.
 * - Events are columnar (struct of arrays) and names are interned: 40 bytes
 *   an event plus its packed extras (see "Event layout" below). No
 *   allocation per event anywhere.
 * - Readers never see a tl_timeline. Each input file is read into its own
 *   tl_builder on its own thread (builders are independent, so no locks).
 *   tl_finish then merges the builders: re-interns strings, assigns ranks
 *   (warning on duplicates), sorts events by (track, start, longer first),
 *   links CPU launches to the GPU work they caused by correlation id within
 *   each rank, and freezes the result. After that the timeline is const and
 *   analyzers share it across threads without locks.
 * - Tracks are sorted by (rank, kind, device, stream/pid, tid), and each
 *   track's events are one contiguous, start-sorted range: per-stream and
 *   per-thread walks are linear scans.
 *
 * Ownership: a tl_builder is owned by its reader until passed to tl_finish,
 * which consumes (frees) every builder. A tl_timeline is owned by the caller
 * of tl_finish and freed with tl_free. Strings returned by tl_str live as
 * long as the timeline.
 *
 * How to feed it from a new reader: see the checklist in src/readers/reader.h.
 *
 * Event layout of the frozen timeline (40 bytes an event, then its extras):
 *   ts_ns, dur_ns     int64   8 + 8
 *   name, track       uint32  4 + 4   string id, global track index
 *   corr              int32   4       correlation id, -1 none (a rank whose ids
 *                                     do not fit 32 bits is renumbered: same pairs,
 *                                     other numbers, counted as renumbered_id)
 *   link              int32   4       partner event index, -1 none
 *   xoff              uint32  4       offset of the event's extras record in its
 *                                     rank's tl_rank.extra stream
 *   cat, kclass, copy_dir, flags  uint8  4
 * The extras record holds what few events have or what varies in size: the
 * args, the External id (tl_ext_id) and a raw category string other than
 * the category's canonical name (tl_event_cat_name). It is packed with
 * varints (src/model/tl_extras.h); events without extras share one record.
 * Read args only through tl_arg_by_id, tl_arg_get and tl_event_args. A
 * timeline holds at most INT32_MAX events (tl_finish refuses more: shard
 * the job over processes, `mpirun ... chainprof analyze`).
 */
#ifndef CP_MODEL_TIMELINE_H
#define CP_MODEL_TIMELINE_H

#include "../base/arena.h"
#include "../base/error.h"
#include "../base/intern.h"
#include "diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum tl_cat {
#define X(e, s) TL_CAT_##e,
#include "tl_cat.def"
#undef X
    TL_CAT__COUNT
} tl_cat;

/* What a GPU-side event is, for every analysis of time on the GPU. */
typedef enum tl_kclass {
    TL_K_NONE = 0, /* not GPU work (CPU ops, runtime calls, annotations) */
    TL_K_COMPUTE,  /* kernels that are neither communication nor sync */
    TL_K_COMM,     /* NCCL/RCCL collective and P2P kernels */
    TL_K_MEMCPY,   /* copies; direction in copy_dir */
    TL_K_MEMSET,
    TL_K_SYNC,     /* cuda_sync events on a stream (event/stream waits) */
} tl_kclass;

typedef enum tl_copy_dir {
    TL_COPY_NONE = 0, TL_COPY_H2D, TL_COPY_D2H, TL_COPY_D2D, TL_COPY_P2P, TL_COPY_H2H, TL_COPY_OTHER
} tl_copy_dir;

/* Event flags */
#define TL_F_PAGEABLE 0x01u  /* memcpy touching pageable host memory */
#define TL_F_SYNC_CALL 0x02u /* synchronous API (cudaMemcpy, cudaDeviceSynchronize...) */
#define TL_F_INSTANT 0x04u   /* instant event (dur 0 by nature) */
#define TL_F_NO_DUR 0x08u    /* complete event that came without dur */
#define TL_F_LAUNCH 0x10u    /* runtime/driver call that launches GPU work */
#define TL_F_NO_STREAM_ARG 0x20u /* GPU event without a stream arg: its stream is the trace's tid
                                  * (HTA puts such events on stream -1) */

typedef enum tl_track_kind { TL_TRACK_CPU = 0, TL_TRACK_GPU = 1, TL_TRACK_OTHER = 2 } tl_track_kind;

typedef enum tl_gpu_vendor { TL_VENDOR_UNKNOWN = 0, TL_VENDOR_NVIDIA, TL_VENDOR_AMD, TL_VENDOR_MTIA } tl_gpu_vendor;

typedef enum tl_rank_source {
    TL_RANK_FROM_TRACE = 0, /* distributedInfo or the format's own rank field */
    TL_RANK_FROM_FILENAME,
    TL_RANK_ASSIGNED,       /* unknown: a distinct rank was assigned */
    TL_RANK_REASSIGNED,     /* duplicate: moved to a distinct rank */
} tl_rank_source;

/* Identity of a track as a reader sees it. For GPU tracks device/stream are
 * set (pid/tid as the trace wrote them); for CPU tracks pid/tid. */
typedef struct tl_track_key {
    tl_track_kind kind;
    int64_t pid, tid;
    int32_t device; /* -1 for CPU */
    int64_t stream; /* -1 for CPU */
} tl_track_key;

typedef struct tl_track {
    tl_track_key key;
    uint32_t rank_index; /* index into tl_timeline.ranks */
    uint32_t name;       /* thread/stream name id, 0 if none */
    size_t ev_begin, ev_end; /* events [ev_begin, ev_end) belong to this track */
} tl_track;

typedef struct tl_pg {        /* a process group as distributedInfo/args describe it */
    uint32_t name, desc;      /* string ids */
    int32_t size;
    int32_t *ranks;           /* global ranks, size entries (NULL if unknown) */
} tl_pg;

/* Per-input metadata a reader fills (tl_builder_meta). */
typedef struct tl_rank_meta {
    int32_t rank;            /* -1 when unknown */
    tl_rank_source rank_source;
    int32_t world_size;      /* -1 when unknown */
    bool has_base_time;
    int64_t base_time_ns;    /* added to every ts at finish when has_base_time */
    uint32_t hostname;       /* string id, 0 if unknown */
    uint32_t gpu_name;       /* deviceProperties[0].name or similar */
    int32_t n_devices;       /* devices listed in the trace (0 if none) */
    int64_t gpu_mem_bytes;   /* of device 0, -1 unknown */
    tl_gpu_vendor vendor;
    uint32_t backend;        /* "nccl", "gloo", ... */
    uint32_t nccl_version;
    uint32_t format;         /* "kineto", "nsys", ... */
    int32_t n_pgs;
    tl_pg *pgs;              /* allocated in the builder's arena */
} tl_rank_meta;


typedef enum tl_arg_type { TL_ARG_INT = 0, TL_ARG_NUM, TL_ARG_STR, TL_ARG_BOOL } tl_arg_type;

typedef struct tl_arg {
    uint32_t key;   /* string id */
    uint8_t type;   /* tl_arg_type */
    union {
        int64_t i;
        double d;
        uint32_t s; /* string id */
    } v;
} tl_arg;

typedef struct tl_rank {
    tl_rank_meta meta;       /* string ids already remapped into the timeline */
    uint32_t source;         /* string id: the input file path */
    uint32_t track_begin, track_end; /* this rank's tracks */
    size_t n_events;
    uint8_t *extra;          /* the packed extras records of this rank's events (see "Event layout") */
    size_t extra_bytes;
    size_t n_args;
} tl_rank;

/* One event as a reader hands it to the builder. */
typedef struct tl_ev {
    int64_t ts_ns;
    int64_t dur_ns;
    uint32_t name;     /* string id in the builder's table */
    uint32_t cat_name; /* raw category string id (0 if none) */
    tl_cat cat;
    uint32_t track;    /* from tl_builder_track */
    int64_t corr;      /* correlation id, -1 none */
    int64_t ext_id;    /* External id (links ops to their launches), -1 none */
    uint32_t flags;    /* TL_F_* */
} tl_ev;

/* ---- builder (one per input file, one thread) ---- */

typedef struct tl_builder tl_builder;

tl_builder *tl_builder_new(const char *source_path);
void tl_builder_free(tl_builder *b);
cp_intern *tl_builder_strings(tl_builder *b);
cp_arena *tl_builder_arena(tl_builder *b);
tl_rank_meta *tl_builder_meta(tl_builder *b);
diag_set *tl_builder_diag(tl_builder *b);
const char *tl_builder_source(const tl_builder *b);
/* Returns the track id for key, creating it on first use. */
uint32_t tl_builder_track(tl_builder *b, const tl_track_key *key);
void tl_builder_track_name(tl_builder *b, uint32_t track, uint32_t name);
/* Append src's events (in src's order, after dst's), their args, src's
 * tracks, strings and diagnostics to dst, then free src (consumed). Strings
 * are interned into dst in src's id order and tracks looked up in src's
 * order, so absorbing the parts of one input read in parallel, in input
 * order, leaves dst exactly as one serial read would. src's meta is
 * ignored: parts carry rows, dst carries what the input says of itself.
 * A track name of src fills a track of dst that has none. */
void tl_builder_absorb(tl_builder *dst, tl_builder *src);
/* Room for n_events events and n_args args without regrowing: a hint from
 * the input size, so growing columns are never copied. Capacity never
 * shrinks; large blocks are mapped lazily, so reserving more than is used
 * costs address space, not memory. */
void tl_builder_reserve(tl_builder *b, size_t n_events, size_t n_args);
/* Appends an event; returns its builder-local index. */
size_t tl_builder_add(tl_builder *b, const tl_ev *ev);
size_t tl_builder_count(const tl_builder *b);
/* Attach an argument to the most recently added event. Args of one event
 * must be added before the next event is added. */
void tl_builder_arg_int(tl_builder *b, uint32_t key, int64_t v);
void tl_builder_arg_num(tl_builder *b, uint32_t key, double v);
void tl_builder_arg_str(tl_builder *b, uint32_t key, uint32_t str);
void tl_builder_arg_bool(tl_builder *b, uint32_t key, bool v);
/* The same for n args at once (copied; bools as TL_ARG_BOOL with v.i 0/1). */
void tl_builder_args(tl_builder *b, const tl_arg *args, size_t n);
/* Memory the builder holds (for bench reporting). */
size_t tl_builder_bytes(const tl_builder *b);

/* ---- the frozen timeline ---- */

typedef struct tl_timeline {
    cp_intern strings;
    cp_arena arena;
    size_t n_events;
    /* event columns, all n_events long, sorted by (track, ts, -dur); the
     * layout and its sizes are documented at the top of this file */
    int64_t *ts_ns;
    int64_t *dur_ns;
    uint32_t *name;
    uint32_t *track;
    int32_t *corr;
    int32_t *link;     /* launch <-> GPU work partner event index, -1 none */
    uint32_t *xoff;    /* the event's extras record in its rank's extra stream */
    uint8_t *cat;      /* tl_cat */
    uint8_t *kclass;   /* tl_kclass */
    uint8_t *copy_dir; /* tl_copy_dir */
    uint8_t *flags;
    size_t n_args;       /* over all ranks */
    uint32_t cat_str[TL_CAT__COUNT]; /* string id of each category's canonical name, UINT32_MAX absent */

    tl_track *tracks;
    size_t n_tracks;
    tl_rank *ranks; /* sorted by rank number */
    size_t n_ranks;
    int64_t t0_ns;  /* earliest event start over all ranks (display origin) */
    diag_set diag;
    size_t bytes;   /* memory retained, for reports */
} tl_timeline;

/* Bytes of columns an event takes in the frozen timeline (the layout above). */
#define TL_EVENT_BYTES 40

typedef struct tl_finish_opts {
    int nthreads;        /* for sorting per builder; <= 1 runs on the caller */
} tl_finish_opts;

/* Merge and freeze. Consumes every builder (freed, even on error). */
int tl_finish(tl_builder **builders, size_t n, const tl_finish_opts *opts, tl_timeline **out,
              cp_error *err);
void tl_free(tl_timeline *tl);

static inline const char *tl_str(const tl_timeline *tl, uint32_t id) { return cp_intern_str(&tl->strings, id); }
static inline int64_t tl_end_ns(const tl_timeline *tl, size_t i) { return tl->ts_ns[i] + tl->dur_ns[i]; }
/* The start of event ev's extras record (see "Event layout"). */
static inline const uint8_t *tl_event_extra(const tl_timeline *tl, size_t ev)
{
    return tl->ranks[tl->tracks[tl->track[ev]].rank_index].extra + tl->xoff[ev];
}

/* The args of event ev, decoded into out[0..max) in the order the reader
 * added them; returns how many the event has (which may exceed max). */
size_t tl_event_args(const tl_timeline *tl, size_t ev, tl_arg *out, size_t max);
/* Argument lookup by key string id (cp_intern_find once, then this per
 * event in hot loops): true and *out filled (out may be NULL) when event ev
 * has the arg; false when absent or key_id is UINT32_MAX. */
bool tl_arg_by_id(const tl_timeline *tl, size_t ev, uint32_t key_id, tl_arg *out);
/* The same by key string (one table lookup per call). */
bool tl_arg_get(const tl_timeline *tl, size_t ev, const char *key, tl_arg *out);
bool tl_arg_int(const tl_timeline *tl, size_t ev, const char *key, int64_t *out);
bool tl_arg_num(const tl_timeline *tl, size_t ev, const char *key, double *out); /* int or num */
const char *tl_arg_str(const tl_timeline *tl, size_t ev, const char *key); /* NULL if absent/not string */
/* The External id of event ev (links ops to the launches inside them), -1 none. */
int64_t tl_ext_id(const tl_timeline *tl, size_t ev);
/* String id of event ev's category as the input wrote it (e.g. "Kernel",
 * "mtia_runtime", "gpu_metrics"); 0 when the input gave none. */
uint32_t tl_event_cat_name(const tl_timeline *tl, size_t ev);

/* Rank index by rank number, or -1. */
int tl_rank_index(const tl_timeline *tl, int32_t rank);

/* Classification shared by all readers: the kernel class of a GPU event from
 * its category and name, and a memcpy's direction and pageable flag from
 * names such as "Memcpy HtoD (Pageable -> Device)". */
tl_kclass tl_classify(tl_cat cat, const char *name);
tl_copy_dir tl_copy_direction(const char *name, bool *pageable);
tl_cat tl_cat_from_name(const char *s, size_t n);
const char *tl_cat_name(tl_cat c);
const char *tl_kclass_name(tl_kclass k);
const char *tl_copy_dir_name(tl_copy_dir d);

/* Collect indices of the events of one rank that satisfy pred, merged across
 * the rank's tracks in start order. Caller frees *out. Returns count. */
typedef bool (*tl_pred)(const tl_timeline *tl, size_t ev, void *ctx);
size_t tl_rank_select(const tl_timeline *tl, size_t rank_index, tl_pred pred, void *ctx, size_t **out);
/* Common predicates */
bool tl_pred_gpu(const tl_timeline *tl, size_t ev, void *ctx);   /* any event on a GPU track */
bool tl_pred_kclass(const tl_timeline *tl, size_t ev, void *ctx); /* ctx: const tl_kclass* */

#endif
