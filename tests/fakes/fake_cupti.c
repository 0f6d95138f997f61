/* fake_cupti.c - a fake CUPTI activity API for the `chainprof run` tests
 * (built as libcupti.so; the collector is pointed at it with
 * CHAINPROF_CUPTI=<path>).
 *
 * The fake cudart reports each kernel, copy and set it "runs" through
 * fake_cupti_note (registered with it when the client registers its buffer
 * callbacks); this library turns that into activity records laid out
 * as CUPTI 12.x lays them out (CUpti_ActivityKernel9, CUpti_ActivityMemcpy5,
 * CUpti_ActivityMemset4, CUpti_ActivityExternalCorrelation: the field
 * offsets below are from cupti_activity.h, written out here independently
 * of the collector's own declarations), numbers correlation ids, and emits
 * an external-correlation record for the innermost id the calling thread
 * pushed, as CUPTI does. Records go into buffers the client's request
 * callback hands out and come back through its completion callback when a
 * buffer is full or on cuptiActivityFlushAll. Timestamps are CLOCK_MONOTONIC
 * plus FAKE_CUPTI_OFFSET_NS (env, default 1e9), so the client's clock
 * mapping is exercised. Only the kinds the collector enables are kept.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*req_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*done_fn)(void *context, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid_size);

enum { K_MEMCPY = 1, K_MEMSET = 2, K_CONC_KERNEL = 10, K_EXT_CORR = 39, EXT_CUSTOM0 = 3 };
enum { OK = 0, ERR_INVALID_PARAM = 1, ERR_QUEUE_EMPTY = 22, ERR_MAX_LIMIT = 12 };
enum { ACT_KERNEL = 1, ACT_MEMCPY = 2, ACT_MEMSET = 3 };

/* record sizes (sizeof the 12.x structs, 8-byte aligned) and field offsets */
#define KERNEL_BYTES 208
#define MEMCPY_BYTES 88
#define MEMSET_BYTES 88
#define EXTCORR_BYTES 24

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static req_fn on_request;
static done_fn on_done;
static int enabled[64];
static uint8_t *buf;
static size_t buf_size, buf_used;
static uint32_t next_corr;
static __thread uint64_t ext_stack[16];
static __thread int ext_depth;

static int64_t offset_ns(void)
{
    const char *e = getenv("FAKE_CUPTI_OFFSET_NS");
    return e ? atoll(e) : 1000000000LL;
}

static uint64_t now_ts(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + offset_ns());
}

int cuptiGetTimestamp(uint64_t *ts)
{
    if (!ts)
        return ERR_INVALID_PARAM;
    *ts = now_ts();
    return OK;
}

void fake_cupti_note(int kind, int device, uint64_t stream, int64_t start_ns, int64_t end_ns, uint64_t bytes,
                     int copy_kind, const char *name);
typedef void (*note_fn)(int, int, uint64_t, int64_t, int64_t, uint64_t, int, const char *);

int cuptiActivityRegisterCallbacks(req_fn rq, done_fn dn)
{
    if (!rq || !dn)
        return ERR_INVALID_PARAM;
    on_request = rq, on_done = dn;
    /* tell the fake cudart (loaded globally) where to report its work */
    void (*set)(note_fn) = NULL;
    *(void **)&set = dlsym(RTLD_DEFAULT, "fake_cudart_set_activity_hook");
    if (set)
        set(fake_cupti_note);
    return OK;
}

int cuptiActivityEnable(int kind)
{
    if (kind < 0 || kind >= 64)
        return ERR_INVALID_PARAM;
    enabled[kind] = 1;
    return OK;
}

int cuptiActivityDisable(int kind)
{
    if (kind < 0 || kind >= 64)
        return ERR_INVALID_PARAM;
    enabled[kind] = 0;
    return OK;
}

static void complete_locked(void)
{
    if (buf && on_done)
        on_done(NULL, 0, buf, buf_size, buf_used);
    buf = NULL;
    buf_size = buf_used = 0;
}

int cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&mu);
    complete_locked();
    pthread_mutex_unlock(&mu);
    return OK;
}

/* Room for n bytes, completing the buffer and requesting another as CUPTI
 * does; NULL when the client gave no buffer (the record is dropped). */
static uint8_t *room(size_t n)
{
    if (buf && buf_used + n > buf_size)
        complete_locked();
    if (!buf && on_request) {
        size_t max = 0;
        on_request(&buf, &buf_size, &max);
        buf_used = 0;
    }
    if (!buf || buf_used + n > buf_size)
        return NULL;
    uint8_t *p = buf + buf_used;
    memset(p, 0, n);
    buf_used += n;
    return p;
}

#define PUT(p, off, type, v) do { type v_ = (type)(v); memcpy((p) + (off), &v_, sizeof v_); } while (0)

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **record)
{
    if (!buffer || !record)
        return ERR_INVALID_PARAM;
    uint8_t *p = *record ? (uint8_t *)*record : buffer;
    if (*record) { /* step over the current record by its kind's size */
        uint32_t k;
        memcpy(&k, p, 4);
        p += k == K_CONC_KERNEL ? KERNEL_BYTES : k == K_MEMCPY ? MEMCPY_BYTES : k == K_MEMSET ? MEMSET_BYTES : EXTCORR_BYTES;
    }
    if ((size_t)(p - buffer) >= valid) {
        *record = NULL;
        return ERR_MAX_LIMIT;
    }
    *record = p;
    return OK;
}

int cuptiActivityPushExternalCorrelationId(int kind, uint64_t id)
{
    if (kind != EXT_CUSTOM0 || ext_depth >= 16)
        return ERR_INVALID_PARAM;
    ext_stack[ext_depth++] = id;
    return OK;
}

int cuptiActivityPopExternalCorrelationId(int kind, uint64_t *last)
{
    if (kind != EXT_CUSTOM0 || ext_depth <= 0)
        return ERR_QUEUE_EMPTY;
    uint64_t id = ext_stack[--ext_depth];
    if (last)
        *last = id;
    return OK;
}

int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx, (void)stream;
    if (dropped)
        *dropped = 0;
    return OK;
}

/* Called by the fake cudart for each piece of work it ran. */
void fake_cupti_note(int kind, int device, uint64_t stream, int64_t start_ns, int64_t end_ns, uint64_t bytes,
                     int copy_kind, const char *name)
{
    int64_t off = offset_ns();
    uint64_t s = (uint64_t)(start_ns + off), e = (uint64_t)(end_ns + off);
    uint32_t sid = (uint32_t)(stream ? (stream & 0xffff) + 7 : 7); /* CUPTI numbers streams itself */
    pthread_mutex_lock(&mu);
    uint32_t corr = ++next_corr;
    if (ext_depth && enabled[K_EXT_CORR]) {
        uint8_t *p = room(EXTCORR_BYTES);
        if (p) {
            PUT(p, 0, uint32_t, K_EXT_CORR);
            PUT(p, 4, uint32_t, EXT_CUSTOM0);
            PUT(p, 8, uint64_t, ext_stack[ext_depth - 1]);
            PUT(p, 16, uint32_t, corr);
        }
    }
    uint8_t *p;
    if (kind == ACT_KERNEL && enabled[K_CONC_KERNEL] && (p = room(KERNEL_BYTES))) {
        PUT(p, 0, uint32_t, K_CONC_KERNEL);
        PUT(p, 16, uint64_t, s);       /* start */
        PUT(p, 24, uint64_t, e);       /* end */
        PUT(p, 32, uint64_t, e);       /* completed */
        PUT(p, 40, uint32_t, device);  /* deviceId */
        PUT(p, 44, uint32_t, 1);       /* contextId */
        PUT(p, 48, uint32_t, sid);     /* streamId */
        PUT(p, 52, int32_t, 1);        /* gridX */
        PUT(p, 92, uint32_t, corr);    /* correlationId */
        PUT(p, 104, const char *, name); /* name (static for the client's lifetime) */
    } else if (kind == ACT_MEMCPY && enabled[K_MEMCPY] && (p = room(MEMCPY_BYTES))) {
        PUT(p, 0, uint32_t, K_MEMCPY);
        PUT(p, 4, uint8_t, copy_kind == 1 ? 1 : copy_kind == 2 ? 2 : copy_kind == 3 ? 8 : copy_kind == 0 ? 9 : 0);
        PUT(p, 5, uint8_t, 2);         /* srcKind: pinned */
        PUT(p, 6, uint8_t, 3);         /* dstKind: device */
        PUT(p, 8, uint64_t, bytes);
        PUT(p, 16, uint64_t, s);
        PUT(p, 24, uint64_t, e);
        PUT(p, 32, uint32_t, device);
        PUT(p, 36, uint32_t, 1);
        PUT(p, 40, uint32_t, sid);
        PUT(p, 44, uint32_t, corr);
    } else if (kind == ACT_MEMSET && enabled[K_MEMSET] && (p = room(MEMSET_BYTES))) {
        PUT(p, 0, uint32_t, K_MEMSET);
        PUT(p, 8, uint64_t, bytes);
        PUT(p, 16, uint64_t, s);
        PUT(p, 24, uint64_t, e);
        PUT(p, 32, uint32_t, device);
        PUT(p, 36, uint32_t, 1);
        PUT(p, 40, uint32_t, sid);
        PUT(p, 44, uint32_t, corr);
    }
    pthread_mutex_unlock(&mu);
}
