/* fake_cudart.c - a fake CUDA runtime for tests (never a real GPU).
 *
 * Built by tests/CMakeLists.txt as libcudart.so in three variants:
 *   one/      FAKE_GPUS devices (env, default 1); "device" memory is host
 *             memory, copies are memcpy, so bandwidths are real numbers;
 *   nodev/    built with -DFAKE_NO_DEVICE: cudaGetDeviceCount fails with
 *             cudaErrorNoDevice (100);
 *   missing/  built with -DFAKE_MISSING_SYMBOL: no cudaMemcpy.
 * chainprof finds it through CHAINPROF_GPU_LIB_DIR. Streams are dummies
 * (every call completes before it returns); the compute capability is
 * FAKE_CC (env, "major.minor", default 9.0), so fp8's sm_89 gate is testable;
 * FAKE_STREAM_HANG=1 makes streams never finish (timeout paths).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cur_dev;

int cudaGetDeviceCount(int *n)
{
#ifdef FAKE_NO_DEVICE
    *n = 0;
    return 100;
#else
    const char *e = getenv("FAKE_GPUS");
    *n = e ? atoi(e) : 1;
    return 0;
#endif
}
int cudaSetDevice(int d) { int n; cudaGetDeviceCount(&n); if (d < 0 || d >= n) return 101; cur_dev = d; return 0; }
int cudaMalloc(void **p, size_t n) { *p = malloc(n); return *p ? 0 : 2; }
int cudaFree(void *p) { free(p); return 0; }
int cudaMallocHost(void **p, size_t n) { *p = malloc(n); return *p ? 0 : 2; }
int cudaFreeHost(void *p) { free(p); return 0; }
#ifndef FAKE_MISSING_SYMBOL
int cudaMemcpy(void *d, const void *s, size_t n, int kind) { (void)kind; memcpy(d, s, n); return 0; }
#endif
int cudaDeviceSynchronize(void) { return 0; }
int cudaDeviceCanAccessPeer(int *can, int a, int b) { *can = a != b; return 0; }
int cudaDeviceEnablePeerAccess(int peer, unsigned flags) { (void)peer, (void)flags; return 0; }
int cudaMemcpyPeer(void *d, int dd, const void *s, int sd, size_t n) { (void)dd, (void)sd; memcpy(d, s, n); return 0; }
static int fake_stream;
int cudaStreamCreate(void **s) { *s = &fake_stream; return 0; }
int cudaStreamDestroy(void *s) { return s == &fake_stream ? 0 : 400; }
int cudaStreamSynchronize(void *s) { return s == &fake_stream ? 0 : 400; }
/* FAKE_STREAM_HANG=1: work never completes (cudaErrorNotReady), as on a
 * device whose NCCL peer died */
int cudaStreamQuery(void *s)
{
    if (s != &fake_stream)
        return 400;
    const char *h = getenv("FAKE_STREAM_HANG");
    return h && atoi(h) ? 600 : 0;
}
int cudaDeviceGetAttribute(int *v, int attr, int dev)
{
    int n, major = 9, minor = 0;
    cudaGetDeviceCount(&n);
    if (dev < 0 || dev >= n)
        return 101;
    const char *cc = getenv("FAKE_CC");
    if (cc && sscanf(cc, "%d.%d", &major, &minor) != 2)
        return 1;
    if (attr == 75) /* cudaDevAttrComputeCapabilityMajor */
        *v = major;
    else if (attr == 76) /* ...Minor */
        *v = minor;
    else
        return 1; /* cudaErrorInvalidValue */
    return 0;
}
const char *cudaGetErrorString(int e)
{
    return e == 100 ? "no CUDA-capable device is detected" : e == 2 ? "out of memory" : e == 400 ? "invalid resource handle" : e ? "fake error" : "no error";
}

/* ---- launches, asynchronous copies and sets, syncs, graphs, the driver ----
 * (what `chainprof run`'s interposer times; tests/collect drives them).
 * Work runs before the call returns, as everywhere in this fake: a kernel
 * spins FAKE_KERNEL_NS (env, default 0) nanoseconds, as device time the
 * host waits for. When the fake CUPTI (fake_cupti.c) is loaded, every
 * kernel, copy and set is reported to it as GPU activity of this call
 * (it registers its fake_cupti_note through fake_cudart_set_activity_hook),
 * named after the kernel's symbol (dladdr) or "fakeKernel". */
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

typedef struct fake_dim3 { unsigned x, y, z; } fake_dim3;
typedef void (*fake_note_fn)(int kind, int device, uint64_t stream, int64_t start_ns, int64_t end_ns, uint64_t bytes,
                             int copy_kind, const char *name);
enum { FAKE_ACT_KERNEL = 1, FAKE_ACT_MEMCPY = 2, FAKE_ACT_MEMSET = 3 };

static int64_t fake_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static fake_note_fn fake_note;

/* The fake CUPTI registers itself here when a client enables it (it is
 * loaded with RTLD_LOCAL, so this library could not look it up). */
void fake_cudart_set_activity_hook(fake_note_fn fn);
void fake_cudart_set_activity_hook(fake_note_fn fn) { fake_note = fn; }

static void fake_activity(int kind, const void *stream, int64_t t0, uint64_t bytes, int copy_kind, const void *fn)
{
    fake_note_fn note = fake_note;
    if (!note)
        return;
    const char *name = "fakeKernel";
    Dl_info di;
    if (kind == FAKE_ACT_KERNEL && fn && dladdr(fn, &di) && di.dli_sname)
        name = di.dli_sname;
    note(kind, cur_dev, (uint64_t)(uintptr_t)stream, t0, fake_now(), bytes, copy_kind, name);
}

static void fake_kernel_work(void)
{
    const char *e = getenv("FAKE_KERNEL_NS");
    long long ns = e ? atoll(e) : 0;
    if (ns <= 0)
        return;
    int64_t until = fake_now() + ns;
    while (fake_now() < until)
        ;
}

int cudaLaunchKernel(const void *f, fake_dim3 g, fake_dim3 b, void **args, size_t sh, void *s)
{
    (void)g, (void)b, (void)args, (void)sh;
    int64_t t0 = fake_now();
    fake_kernel_work();
    fake_activity(FAKE_ACT_KERNEL, s, t0, 0, 0, f);
    return 0;
}
typedef struct fake_launch_config { fake_dim3 g, b; size_t smem; void *stream; } fake_launch_config;
int cudaLaunchKernelExC(const fake_launch_config *c, const void *f, void **args)
{
    return cudaLaunchKernel(f, c->g, c->b, args, c->smem, c->stream);
}
#ifndef FAKE_MISSING_SYMBOL
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st)
{
    int64_t t0 = fake_now();
    memcpy(d, s, n);
    fake_activity(FAKE_ACT_MEMCPY, st, t0, n, kind, NULL);
    return 0;
}
#endif
int cudaMemset(void *p, int v, size_t n) { memset(p, v, n); return 0; }
int cudaMemsetAsync(void *p, int v, size_t n, void *st)
{
    int64_t t0 = fake_now();
    memset(p, v, n);
    fake_activity(FAKE_ACT_MEMSET, st, t0, n, 0, NULL);
    return 0;
}
static int fake_event;
int cudaEventCreate(void **e) { *e = &fake_event; return 0; }
int cudaEventRecord(void *e, void *s) { (void)s; return e == &fake_event ? 0 : 400; }
int cudaEventSynchronize(void *e) { return e == &fake_event ? 0 : 400; }
int cudaStreamWaitEvent(void *s, void *e, unsigned fl) { (void)s, (void)fl; return e == &fake_event ? 0 : 400; }
int cudaGraphLaunch(void *g, void *s) { (void)s; return g ? 0 : 1; }
/* the driver entry points the interposer knows (same fake device) */
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh,
                   void *s, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)params, (void)extra;
    int64_t t0 = fake_now();
    fake_kernel_work();
    fake_activity(FAKE_ACT_KERNEL, s, t0, 0, 0, f);
    return 0;
}
int cuCtxSynchronize(void) { return 0; }
int cuStreamSynchronize(void *s) { return cudaStreamSynchronize(s); }
