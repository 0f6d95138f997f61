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
