/* col_cupti.c - GPU-side start and end of kernels, copies and sets through
 * CUPTI's activity API, loaded with dlopen (declarations: col_cupti_abi.h).
 *
 * Enabled in trace mode at the first recorded CUDA call of a process (so
 * processes that never touch CUDA never load CUPTI): the library named by
 * CHAINPROF_CUPTI, else libcupti.so from the loader path, CUDA_HOME or
 * /usr/local/cuda; CHAINPROF_CUPTI=0 keeps it off. Activity buffers (4 MiB,
 * at most 16 in flight: the memory bound; CUPTI counts what it then drops)
 * are converted to GPU records in the thread CUPTI completes them on, with
 * CUPTI's clock mapped to CLOCK_MONOTONIC by an offset taken at enable.
 * Every recorded CUDA and NCCL call pushes its record id as CUPTI's
 * external correlation, so the reader links GPU work to the call that
 * caused it (CORR records).
 */
#include "col.h"
#include "col_cupti_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_BYTES (4u << 20)
#define MAX_BUFS 16

static struct {
    pthread_once_t once;
    _Atomic int on;
    void *lib;
    cu_register_callbacks_fn reg;
    cu_enable_fn enable;
    cu_flush_all_fn flush;
    cu_next_record_fn next;
    cu_push_ext_fn push;
    cu_pop_ext_fn pop;
    cu_timestamp_fn ts;
    cu_dropped_fn dropped;
    int64_t offset; /* CLOCK_MONOTONIC - CUPTI timestamp */
    _Atomic int bufs;
    _Atomic int64_t last_flush;
} cu = { .once = PTHREAD_ONCE_INIT };

bool col_cupti_enabled(void) { return atomic_load_explicit(&cu.on, memory_order_relaxed) != 0; }

static void *open_cupti(void)
{
    const char *env = getenv(COL_ENV_CUPTI);
    if (env && !strcmp(env, "0"))
        return NULL;
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    static const char *const names[] = { "libcupti.so", "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    const char *homes[] = { getenv("CUDA_HOME"), "/usr/local/cuda" };
    for (size_t i = 0; i < 2; i++) {
        if (!homes[i] || !*homes[i])
            continue;
        char p[600];
        snprintf(p, sizeof p, "%s/extras/CUPTI/lib64/libcupti.so", homes[i]);
        void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

static void buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (atomic_fetch_add(&cu.bufs, 1) >= MAX_BUFS) {
        atomic_fetch_sub(&cu.bufs, 1);
        return; /* CUPTI drops and counts: the memory bound holds */
    }
    void *p = NULL;
    if (posix_memalign(&p, 8, BUF_BYTES) != 0) {
        atomic_fetch_sub(&cu.bufs, 1);
        return;
    }
    *buffer = p;
    *size = BUF_BYTES;
}

static uint16_t copy_kind(const cu_memcpy *m)
{
    int k = m->copy_kind == CU_MK_HTOD   ? CPT_MK_H2D
            : m->copy_kind == CU_MK_DTOH ? CPT_MK_D2H
            : m->copy_kind == CU_MK_DTOD ? CPT_MK_D2D
            : m->copy_kind == CU_MK_HTOH ? CPT_MK_H2H
            : m->copy_kind == CU_MK_PTOP ? CPT_MK_P2P
                                         : CPT_MK_DEFAULT;
    bool pageable = m->src_kind == CU_MEM_PAGEABLE || m->dst_kind == CU_MEM_PAGEABLE;
    return (uint16_t)(k | (pageable ? 0x100 : 0));
}

static void convert(col_thread *t, const void *rec)
{
    uint32_t kind = *(const uint32_t *)rec;
    cpt_rec r = { .kind = CPT_K_GPU };
    if (kind == CU_ACT_KERNEL || kind == CU_ACT_CONCURRENT_KERNEL) {
        const cu_kernel *k = rec;
        r.op = CPT_GPU_KERNEL, r.u32 = k->device_id, r.t_ns = (int64_t)k->start + cu.offset;
        r.dur_ns = (int64_t)(k->end - k->start), r.a = k->stream_id, r.b = k->correlation_id;
        r.c = col_intern_ptr(k->name);
    } else if (kind == CU_ACT_MEMCPY) {
        const cu_memcpy *m = rec;
        r.op = CPT_GPU_MEMCPY, r.u32 = m->device_id, r.t_ns = (int64_t)m->start + cu.offset;
        r.dur_ns = (int64_t)(m->end - m->start), r.a = m->stream_id, r.b = m->correlation_id, r.c = m->bytes;
        r.flags = copy_kind(m);
    } else if (kind == CU_ACT_MEMSET) {
        const cu_memset *m = rec;
        r.op = CPT_GPU_MEMSET, r.u32 = m->device_id, r.t_ns = (int64_t)m->start + cu.offset;
        r.dur_ns = (int64_t)(m->end - m->start), r.a = m->stream_id, r.b = m->correlation_id, r.c = m->bytes;
    } else if (kind == CU_ACT_EXTERNAL_CORRELATION) {
        const cu_ext_corr *x = rec;
        if (x->external_kind != CU_EXT_CUSTOM0)
            return;
        r.kind = CPT_K_CORR, r.a = x->external_id, r.b = x->correlation_id;
    } else {
        return;
    }
    col_push(t, &r);
}

static void buffer_complete(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    col_thread *t = col_self();
    if (t && col_configured_mode() == COL_TRACE) {
        void *rec = NULL;
        while (cu.next(buffer, valid, &rec) == 0 && rec)
            convert(t, rec);
        size_t lost = 0;
        if (cu.dropped && cu.dropped(ctx, stream, &lost) == 0 && lost) {
            cpt_rec d = { .kind = CPT_K_DROP, .t_ns = col_now(), .a = lost };
            col_push(t, &d);
        }
    }
    free(buffer);
    atomic_fetch_sub(&cu.bufs, 1);
}

#define SYM(field, name)                                                                              \
    do {                                                                                              \
        *(void **)&cu.field = dlsym(cu.lib, name);                                                    \
        if (!cu.field)                                                                                \
            return;                                                                                   \
    } while (0)

static void enable_once(void)
{
    if (!col_trace_mode() || !(cu.lib = open_cupti()))
        return;
    SYM(reg, "cuptiActivityRegisterCallbacks");
    SYM(enable, "cuptiActivityEnable");
    SYM(flush, "cuptiActivityFlushAll");
    SYM(next, "cuptiActivityGetNextRecord");
    SYM(push, "cuptiActivityPushExternalCorrelationId");
    SYM(pop, "cuptiActivityPopExternalCorrelationId");
    SYM(ts, "cuptiGetTimestamp");
    *(void **)&cu.dropped = dlsym(cu.lib, "cuptiActivityGetNumDroppedRecords");
    if (cu.reg(buffer_request, buffer_complete) != 0)
        return;
    static const int kinds[] = { CU_ACT_CONCURRENT_KERNEL, CU_ACT_MEMCPY, CU_ACT_MEMSET, CU_ACT_EXTERNAL_CORRELATION };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (cu.enable(kinds[i]) != 0)
            return;
    uint64_t c0 = 0;
    int64_t m0 = col_now();
    cu.ts(&c0);
    int64_t m1 = col_now();
    cu.offset = (m0 + (m1 - m0) / 2) - (int64_t)c0;
    atomic_store(&cu.on, 1);
}

static void ensure(void)
{
    if (__builtin_expect(!atomic_load_explicit(&cu.on, memory_order_relaxed), 0))
        pthread_once(&cu.once, enable_once);
}

void col_cupti_push(uint64_t id)
{
    if (!col_trace_mode())
        return;
    ensure();
    if (col_cupti_enabled())
        cu.push(CU_EXT_CUSTOM0, id);
}

void col_cupti_pop(void)
{
    if (col_cupti_enabled()) {
        uint64_t last;
        cu.pop(CU_EXT_CUSTOM0, &last);
    }
}

/* From the drainer (at most every 200 ms: a flush walks every buffer) and
 * at exit. */
void col_cupti_flush(void)
{
    if (!col_cupti_enabled())
        return;
    int64_t now = col_now(), last = atomic_load(&cu.last_flush);
    bool closing = atomic_load(&col_mode_now) == COL_OFF;
    if (!closing && now - last < 200000000)
        return;
    atomic_store(&cu.last_flush, now);
    cu.flush(closing ? CU_FLUSH_FORCED : 0);
}
