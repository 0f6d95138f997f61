/* col_cuda.c - the driver layer: CUDA runtime and driver entry points that
 * launch, copy, set, synchronise and launch graphs, timed on the calling
 * thread. Declarations: col_cuda_abi.h.
 *
 * Each wrapper resolves the real function once (col_real), forwards at
 * once when the collector is off or the call is nested inside another
 * recorded call, and otherwise records one CUDA record (trace) or adds its
 * time to the thread's launch or GPU-wait class (summary). With CUPTI on,
 * the record's id is pushed as CUPTI's external correlation around the
 * call, so the GPU work it caused links back to it.
 *
 * Not seen: calls the runtime makes to the driver internally (it reaches
 * the driver through cuGetProcAddress, not the dynamic linker), the
 * per-thread-default-stream variants (*_ptsz, *_ptds), and programs that
 * call CUDA through their own dlopen handle.
 */
#include "col.h"
#include "col_cuda_abi.h"

#include <stdint.h>

static const uint8_t api_class[CPT_CUDA__COUNT] = {
#define CPT_X(e, name, cls) cls,
    CPT_CUDA_APIS(CPT_X)
#undef CPT_X
};
static const char *const api_name[CPT_CUDA__COUNT] = {
#define CPT_X(e, name, cls) name,
    CPT_CUDA_APIS(CPT_X)
#undef CPT_X
};

static uint64_t cuda_pre(col_thread *t)
{
    uint64_t id = col_new_id(t);
    col_cupti_push(id);
    return id;
}

static void cuda_post(col_thread *t, int api, int64_t t0, const void *stream, uint64_t b, int kind, uint64_t id)
{
    int64_t dur = col_now() - t0;
    col_cupti_pop();
    int cls = api_class[api];
    col_count(t, true);
    if (atomic_load_explicit(&col_mode_now, memory_order_relaxed) == COL_SUMMARY) {
        col_acc(t, cls == CPT_CC_SYNC || cls == CPT_CC_COPY_SYNC ? COL_A_GPU_WAIT : COL_A_LAUNCH, dur);
        col_acc(t, COL_A_N_CUDA, 1);
    } else if (col_tracing()) {
        cpt_rec r = { .kind = CPT_K_CUDA, .op = (uint8_t)api, .flags = (uint16_t)kind, .u32 = (uint32_t)t->device,
                      .t_ns = t0, .dur_ns = dur, .a = (uint64_t)(uintptr_t)stream, .b = b, .c = id };
        col_push(t, &r);
    }
    col_leave(t);
}

/* The body of every wrapper: ARGS is the call's argument list. */
#define WRAP(API, TYPE, HINT, STREAM, B, KIND, ARGS)                                                  \
    static col_##TYPE##_fn real;                                                                      \
    COL_REAL(real, api_name[CPT_CUDA_##API], HINT);                                                                     \
    if (!real)                                                                                        \
        return COL_CUDA_ERR_INIT;                                                                     \
    col_thread *t = col_enter();                                                                      \
    if (!t)                                                                                           \
        return real ARGS;                                                                             \
    int64_t t0 = col_now();                                                                           \
    uint64_t id = cuda_pre(t);                                                                        \
    int rc = real ARGS;                                                                               \
    cuda_post(t, CPT_CUDA_##API, t0, STREAM, (uint64_t)(B), KIND, id);                                \
    return rc

#define RT "libcudart"
#define DRV "libcuda."

/* ---- runtime ---- */

COL_EXPORT int cudaLaunchKernel(const void *f, col_dim3 g, col_dim3 b, void **args, size_t sh, void *s)
{
    WRAP(LAUNCH_KERNEL, cudaLaunchKernel, RT, s, (uintptr_t)f, 0, (f, g, b, args, sh, s));
}

COL_EXPORT int cudaLaunchKernelExC(const col_cuda_launch_config *c, const void *f, void **args)
{
    WRAP(LAUNCH_KERNEL_EXC, cudaLaunchKernelExC, RT, c ? c->stream : NULL, (uintptr_t)f, 0, (c, f, args));
}

COL_EXPORT int cudaLaunchCooperativeKernel(const void *f, col_dim3 g, col_dim3 b, void **args, size_t sh, void *s)
{
    WRAP(LAUNCH_COOP, cudaLaunchCooperativeKernel, RT, s, (uintptr_t)f, 0, (f, g, b, args, sh, s));
}

COL_EXPORT int cudaMemcpy(void *d, const void *s, size_t n, int kind)
{
    WRAP(MEMCPY, cudaMemcpy, RT, NULL, n, kind, (d, s, n, kind));
}

COL_EXPORT int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st)
{
    WRAP(MEMCPY_ASYNC, cudaMemcpyAsync, RT, st, n, kind, (d, s, n, kind, st));
}

COL_EXPORT int cudaMemcpyPeer(void *d, int dd, const void *s, int sd, size_t n)
{
    WRAP(MEMCPY_PEER, cudaMemcpyPeer, RT, NULL, n, CPT_MK_P2P, (d, dd, s, sd, n));
}

COL_EXPORT int cudaMemcpyPeerAsync(void *d, int dd, const void *s, int sd, size_t n, void *st)
{
    WRAP(MEMCPY_PEER_ASYNC, cudaMemcpyPeerAsync, RT, st, n, CPT_MK_P2P, (d, dd, s, sd, n, st));
}

COL_EXPORT int cudaMemset(void *p, int v, size_t n) { WRAP(MEMSET, cudaMemset, RT, NULL, n, 0, (p, v, n)); }

COL_EXPORT int cudaMemsetAsync(void *p, int v, size_t n, void *st)
{
    WRAP(MEMSET_ASYNC, cudaMemsetAsync, RT, st, n, 0, (p, v, n, st));
}

COL_EXPORT int cudaDeviceSynchronize(void) { WRAP(DEVICE_SYNC, cudaDeviceSynchronize, RT, NULL, 0, 0, ()); }

COL_EXPORT int cudaStreamSynchronize(void *s) { WRAP(STREAM_SYNC, cudaStreamSynchronize, RT, s, 0, 0, (s)); }

COL_EXPORT int cudaEventSynchronize(void *e) { WRAP(EVENT_SYNC, cudaEventSynchronize, RT, NULL, 0, 0, (e)); }

COL_EXPORT int cudaStreamWaitEvent(void *s, void *e, unsigned fl)
{
    WRAP(STREAM_WAIT_EVENT, cudaStreamWaitEvent, RT, s, 0, 0, (s, e, fl));
}

COL_EXPORT int cudaGraphLaunch(void *g, void *s) { WRAP(GRAPH_LAUNCH, cudaGraphLaunch, RT, s, 0, 0, (g, s)); }

/* The current device, kept per thread so GPU records from the NCCL plugin
 * land on the device the calling thread uses. */
COL_EXPORT int cudaSetDevice(int dev)
{
    static col_cudaSetDevice_fn real;
    COL_REAL(real, "cudaSetDevice", RT);
    if (!real)
        return COL_CUDA_ERR_INIT;
    int rc = real(dev);
    col_thread *t = atomic_load_explicit(&col_mode_now, memory_order_relaxed) != COL_OFF ? col_self() : NULL;
    if (t && rc == 0)
        t->device = dev;
    return rc;
}

/* ---- driver ---- */

COL_EXPORT int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                              unsigned sh, void *s, void **params, void **extra)
{
    WRAP(CU_LAUNCH_KERNEL, cuLaunchKernel, DRV, s, (uintptr_t)f, 0, (f, gx, gy, gz, bx, by, bz, sh, s, params, extra));
}

COL_EXPORT int cuLaunchKernelEx(const col_cu_launch_config *c, void *f, void **params, void **extra)
{
    WRAP(CU_LAUNCH_KERNEL_EX, cuLaunchKernelEx, DRV, c ? c->stream : NULL, (uintptr_t)f, 0, (c, f, params, extra));
}

COL_EXPORT int cuMemcpyHtoD_v2(col_cu_devptr d, const void *s, size_t n)
{
    WRAP(CU_MEMCPY_HTOD, cuMemcpyHtoD, DRV, NULL, n, CPT_MK_H2D, (d, s, n));
}

COL_EXPORT int cuMemcpyDtoH_v2(void *d, col_cu_devptr s, size_t n)
{
    WRAP(CU_MEMCPY_DTOH, cuMemcpyDtoH, DRV, NULL, n, CPT_MK_D2H, (d, s, n));
}

COL_EXPORT int cuMemcpyAsync(col_cu_devptr d, col_cu_devptr s, size_t n, void *st)
{
    WRAP(CU_MEMCPY_ASYNC, cuMemcpyAsync, DRV, st, n, CPT_MK_DEFAULT, (d, s, n, st));
}

COL_EXPORT int cuMemcpyHtoDAsync_v2(col_cu_devptr d, const void *s, size_t n, void *st)
{
    WRAP(CU_MEMCPY_HTOD_ASYNC, cuMemcpyHtoDAsync, DRV, st, n, CPT_MK_H2D, (d, s, n, st));
}

COL_EXPORT int cuMemcpyDtoHAsync_v2(void *d, col_cu_devptr s, size_t n, void *st)
{
    WRAP(CU_MEMCPY_DTOH_ASYNC, cuMemcpyDtoHAsync, DRV, st, n, CPT_MK_D2H, (d, s, n, st));
}

COL_EXPORT int cuMemsetD8Async(col_cu_devptr d, unsigned char v, size_t n, void *st)
{
    WRAP(CU_MEMSET_D8_ASYNC, cuMemsetD8Async, DRV, st, n, 0, (d, v, n, st));
}

COL_EXPORT int cuCtxSynchronize(void) { WRAP(CU_CTX_SYNC, cuCtxSynchronize, DRV, NULL, 0, 0, ()); }

COL_EXPORT int cuStreamSynchronize(void *s) { WRAP(CU_STREAM_SYNC, cuStreamSynchronize, DRV, s, 0, 0, (s)); }

COL_EXPORT int cuEventSynchronize(void *e) { WRAP(CU_EVENT_SYNC, cuEventSynchronize, DRV, NULL, 0, 0, (e)); }

COL_EXPORT int cuGraphLaunch(void *g, void *s) { WRAP(CU_GRAPH_LAUNCH, cuGraphLaunch, DRV, s, 0, 0, (g, s)); }
