/* col.h - the collector injected by `chainprof run` (libchainprof_collect.so):
 * the recorder every interposer, the NCCL profiler plugin, CUPTI and the
 * public chainprof_* API write into.
 *
 * Design
 * - One shared object, preloaded into every process of the job. It is also
 *   the NCCL profiler plugin (NCCL_PROFILER_PLUGIN names the same file, so
 *   NCCL's dlopen returns the already loaded object and the plugin shares
 *   the recorder) and the library the Python package loads with ctypes.
 * - Self-contained: it links only libc, libdl and libpthread and uses none
 *   of the project's other libraries (they abort on allocation failure and
 *   write stderr; an injected library may do neither). Its own I/O goes
 *   through raw system calls, so the I/O interposer never sees it.
 * - Recording is per thread and lock-free: each thread owns a ring of
 *   fixed-size cpt_rec records (include/chainprof/cptrace.h) that only it
 *   writes; one background thread drains every ring into the trace file
 *   every few tens of milliseconds (sooner when a ring is half full). A full
 *   ring drops the record and counts it, so memory stays bounded (threads x
 *   ring size) whatever the job does.
 * - Only the outermost interposed call of a thread is recorded (a CUDA call
 *   made inside an NCCL call belongs to the NCCL call), which also keeps the
 *   summary accounting free of double counting.
 * - Summary mode keeps no records: each thread adds the time of its calls
 *   to per-class counters (single writer, read by the step code with relaxed
 *   atomics) and every step end writes one line of layer totals.
 *
 * Configuration comes from the environment `chainprof run` sets (names in
 * COL_ENV_*); without CHAINPROF_OUT the collector is inactive and every
 * interposer only forwards the call.
 */
#ifndef CP_COLLECT_COL_H
#define CP_COLLECT_COL_H

#include "chainprof/chainprof.h"
#include "chainprof/cptrace.h"
#include "col_env.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef enum col_mode { COL_OFF = 0, COL_TRACE = 1, COL_SUMMARY = 2 } col_mode;

/* Summary accounting classes: where a thread's time in interposed calls
 * goes (docs/METRICS.md, "chainprof run summary"). */
enum {
    COL_A_CKPT,      /* file I/O classified checkpoint */
    COL_A_DATA,      /* ... dataset */
    COL_A_IO_OTHER,  /* ... other files */
    COL_A_INTRA,     /* NCCL calls on a communicator inside one node */
    COL_A_INTER,     /* ... spanning nodes */
    COL_A_COMM,      /* ... of unknown scope (no profiler event named the communicator) */
    COL_A_GPU_WAIT,  /* CUDA calls that block until GPU work is done */
    COL_A_LAUNCH,    /* CUDA calls that enqueue work (host time) */
    COL_A_LOADER,    /* wall time in data-loader regions */
    COL_A_N_CUDA, COL_A_N_NCCL, COL_A_N_IO, COL_A_READ_BYTES, COL_A_WRITE_BYTES,
    COL_A__COUNT
};

enum { COL_TS_FREE = 0, COL_TS_CLAIMING, COL_TS_ALIVE, COL_TS_DEAD };
/* Per-thread counts of what it recorded (see col_count). */
enum { COL_C_WORTHY, COL_C_GPU, COL_C__COUNT };

typedef struct col_thread {
    /* ring: head written by the owner, tail by the drainer */
    _Atomic uint64_t head;
    _Atomic uint64_t tail;
    cpt_rec *ring;
    uint64_t mask;          /* capacity - 1 (records) */
    _Atomic uint64_t dropped, dropped_str; /* cumulative, owner-written */
    uint64_t dropped_seen;  /* drainer's copy */
    uint32_t tid;
    uint32_t index;         /* registry order: high bits of event ids */
    uint64_t next_id;
    _Atomic int state;      /* COL_TS_* */
    int depth;              /* interposer nesting */
    int internal;           /* the collector's own thread */
    uint32_t cur_comm;      /* set by the NCCL plugin during a call (CPT_NO_COMM none) */
    int cur_inter;          /* that communicator spans nodes: 1, inside one: 0, unknown: -1 */
    int32_t device;         /* cudaSetDevice of this thread */
    /* regions */
    int region_depth, region_over;
    int64_t region_t0[CHAINPROF_MAX_DEPTH];
    uint32_t region_name[CHAINPROF_MAX_DEPTH];
    uint8_t region_kind[CHAINPROF_MAX_DEPTH];
    int io_class;           /* class from the innermost checkpoint/dataset region, -1 none */
    int loader_depth;
    /* summary: cumulative, owner-written; snapshot at the open step's begin */
    _Atomic int64_t acc[COL_A__COUNT];
    int64_t acc_step0[COL_A__COUNT];
    int64_t cpu_step0_ns;
    _Atomic uint64_t counts[COL_C__COUNT]; /* owner-written: see col_count */
    struct col_thread *next; /* registry (push-only list) */
    size_t map_bytes;
} col_thread;

/* ---- recorder (col_rec.c) ---- */
extern _Atomic int col_mode_now;    /* col_mode */
extern _Atomic int col_recording;   /* trace records are kept (--steps window) */
/* What this process recorded, for the keep-or-discard decision at exit and
 * the END record: records worth a file (data moved, GPU or NCCL calls,
 * steps, regions), steps, GPU calls (CUDA and NCCL). */
extern _Atomic uint64_t col_n_steps;

static inline int64_t col_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
/* The calling thread's state, created on first use; NULL when inactive,
 * out of memory, or the thread is exiting. */
extern __thread col_thread *col_tls_self __attribute__((tls_model("initial-exec")));
#define COL_SELF_GONE ((col_thread *)(uintptr_t)1)
col_thread *col_self_slow(void);
static inline col_thread *col_self(void)
{
    col_thread *t = col_tls_self;
    if (__builtin_expect(t != NULL && t != COL_SELF_GONE, 1))
        return t;
    return col_self_slow();
}
/* For an interposer: the thread when this call is to be recorded (the
 * collector is on and this is the outermost interposed call), else NULL.
 * Pair every non-NULL return with col_leave. */
static inline col_thread *col_enter(void)
{
    if (__builtin_expect(atomic_load_explicit(&col_mode_now, memory_order_relaxed) == COL_OFF, 1))
        return NULL;
    col_thread *t = col_self();
    if (!t || t->depth || t->internal)
        return NULL;
    t->depth = 1;
    return t;
}
static inline void col_leave(col_thread *t) { t->depth = 0; }
static inline bool col_tracing(void)
{
    return atomic_load_explicit(&col_mode_now, memory_order_relaxed) == COL_TRACE &&
           atomic_load_explicit(&col_recording, memory_order_relaxed);
}
static inline bool col_trace_mode(void)
{
    return atomic_load_explicit(&col_mode_now, memory_order_relaxed) == COL_TRACE;
}
/* Append one record (trace mode, recording on); false when the ring is full. */
bool col_push(col_thread *t, const cpt_rec *r);
/* Append a string record; returns its id, 0 on failure. Written even while
 * --steps keeps other records off (later records may name it). */
uint32_t col_str(col_thread *t, const char *s, size_t n);
/* Interned ids: by content (chainprof_name) and by address (NCCL's static
 * strings). 0 on failure. */
uint32_t col_intern(const char *s);
uint32_t col_intern_ptr(const char *s);
uint64_t col_new_id(col_thread *t);
/* Add to a summary class (owner thread only). */
static inline void col_acc(col_thread *t, int k, int64_t v)
{
    atomic_store_explicit(&t->acc[k], atomic_load_explicit(&t->acc[k], memory_order_relaxed) + v,
                          memory_order_relaxed);
}
/* Count a record worth keeping a file for (gpu: a CUDA or NCCL call). */
static inline void col_count(col_thread *t, bool gpu)
{
    atomic_store_explicit(&t->counts[COL_C_WORTHY],
                          atomic_load_explicit(&t->counts[COL_C_WORTHY], memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (gpu)
        atomic_store_explicit(&t->counts[COL_C_GPU],
                              atomic_load_explicit(&t->counts[COL_C_GPU], memory_order_relaxed) + 1,
                              memory_order_relaxed);
}
/* Registry walk for the step code: first thread (follow ->next). */
col_thread *col_threads(void);
/* Wake the drainer now; write everything out (blocking). */
void col_kick(void);
void col_flush_now(void);
/* Read the configuration and start recording (the library's constructor
 * does; tests call it after setting the environment). 0, or -1 when
 * inactive (no CHAINPROF_OUT, no output file). */
int col_start(void);
/* Flush and close (at exit, _exit, or from a test); idempotent. */
void col_shutdown(void);
const char *col_status_line(void);
/* The mode CHAINPROF_MODE asked for (col_mode_now turns COL_OFF at exit). */
int col_configured_mode(void);
/* False in a vfork child, which shares this memory (col_exit.c). */
bool col_is_owner(void);
/* Raw system-call I/O for the collector's own files. */
int col_sys_open(const char *path, int flags, int mode);
long col_sys_write(int fd, const void *p, size_t n);
int col_sys_close(int fd);

/* Symbols the collector exports (it is built with hidden visibility). */
#define COL_EXPORT __attribute__((visibility("default")))

/* A CLOCK_MONOTONIC time on the job's common clock (ns since the epoch). */
int64_t col_job_ns(int64_t mono_ns);

/* Process facts, filled at init. */
typedef struct col_proc {
    int32_t rank, world_size, local_rank, rank_source;
    int32_t pid;
    char host[CPT_HOST_BYTES];
    char out_dir[512];
    int summary_stderr;
    int64_t step_first, step_last;
    char ckpt_dirs[1024], data_dirs[1024];
} col_proc;
extern col_proc col_p;

/* ---- steps, regions, summary (col_step.c) ---- */
void col_step_begin(int64_t id);
void col_step_end(void);
void col_region_begin(uint32_t name, int kind);
void col_region_end(void);
/* At shutdown: end the open region stack of no one; close summary file. */
void col_step_shutdown(void);
/* Summary file: opened at init in summary mode. */
int col_step_init(void);
/* CPU time of a thread by kernel tid (ns), -1 when gone. */
int64_t col_thread_cpu_ns(uint32_t tid);

/* ---- I/O (col_io.c) ---- */
/* The class of a path by the configured and built-in directory rules. */
int col_io_class_of_path(const char *path);

/* ---- NCCL profiler plugin (col_nprof.c) ---- */
/* Whether a communicator (comm index) spans nodes: 1/0, -1 unknown. */
int col_nprof_comm_inter(uint32_t comm);

/* ---- CUPTI (col_cupti.c) ---- */
/* Push/pop an external correlation id around a recorded CUDA call (no-ops
 * without CUPTI). */
void col_cupti_push(uint64_t id);
void col_cupti_pop(void);
void col_cupti_flush(void);
bool col_cupti_enabled(void);

/* ---- real functions (col_real.c) ---- */
/* The next definition of `name` after this library (RTLD_NEXT), else the
 * one in an already loaded library whose file name starts with `lib_hint`
 * (libraries loaded with RTLD_LOCAL are not searched by RTLD_NEXT). */
void *col_real(const char *name, const char *lib_hint);
#define COL_REAL(var, name, hint)                                                                        \
    do {                                                                                                 \
        if (__builtin_expect(!(var), 0))                                                                 \
            *(void **)&(var) = col_real(name, hint);                                                     \
    } while (0)

#endif
