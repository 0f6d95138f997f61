/* gpu.c - dlopen back-end for the CUDA runtime and NVML (see gpu.h).
 *
 * Timing uses the host clock around synchronous cudaMemcpy calls followed
 * by cudaDeviceSynchronize: for transfers of tens of MiB the launch
 * overhead is far below 1 %, and it keeps the symbol table small (no
 * events or streams).
 */
#include "gpu.h"
#include "../base/util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sym {
    const char *name;
    size_t offset;
} sym;

#define S(field, name) { name, offsetof(gpu_rt, field) }
static const sym cudart_syms[] = {
    S(GetDeviceCount, "cudaGetDeviceCount"), S(SetDevice, "cudaSetDevice"), S(Malloc, "cudaMalloc"),
    S(Free, "cudaFree"), S(MallocHost, "cudaMallocHost"), S(FreeHost, "cudaFreeHost"), S(Memcpy, "cudaMemcpy"),
    S(DeviceSynchronize, "cudaDeviceSynchronize"), S(DeviceCanAccessPeer, "cudaDeviceCanAccessPeer"),
    S(DeviceEnablePeerAccess, "cudaDeviceEnablePeerAccess"), S(MemcpyPeer, "cudaMemcpyPeer"),
    S(GetErrorString, "cudaGetErrorString"),
};
static const sym nvml_syms[] = {
    S(nvmlInit, "nvmlInit_v2"), S(nvmlShutdown, "nvmlShutdown"),
    S(nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2"), S(nvmlDeviceGetName, "nvmlDeviceGetName"),
    S(nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo"),
    S(nvmlDeviceGetMemoryBusWidth, "nvmlDeviceGetMemoryBusWidth"),
    S(nvmlDeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration"),
    S(nvmlDeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth"),
};
#undef S

/* dlopen the first of names found (only in CHAINPROF_GPU_LIB_DIR when set). */
static void *open_lib(const char *const *names, size_t n, char *path, size_t path_size)
{
    const char *dir = getenv("CHAINPROF_GPU_LIB_DIR");
    for (size_t i = 0; i < n; i++) {
        if (dir && *dir)
            snprintf(path, path_size, "%s/%s", dir, names[i]);
        else
            snprintf(path, path_size, "%s", names[i]);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    snprintf(path, path_size, "%s%s%s", dir && *dir ? dir : "", dir && *dir ? "/" : "", names[0]);
    return NULL;
}

/* Resolve every symbol of tab; returns the first missing name or NULL. */
static const char *resolve(void *h, gpu_rt *rt, const sym *tab, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(h, tab[i].name);
        if (!p)
            return tab[i].name;
        /* POSIX guarantees object and function pointers convert through dlsym */
        memcpy((char *)rt + tab[i].offset, &p, sizeof p);
    }
    return NULL;
}

int gpu_open(gpu_rt *rt, char *why, size_t why_size)
{
    memset(rt, 0, sizeof *rt);
    static const char *const rt_names[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                            "libcudart.so.11.0" };
    rt->cudart = open_lib(rt_names, CP_ARRAY_LEN(rt_names), rt->cudart_path, sizeof rt->cudart_path);
    if (!rt->cudart) {
        snprintf(why, why_size, "library not found: %s (CUDA runtime not installed)", rt->cudart_path);
        return -1;
    }
    const char *missing = resolve(rt->cudart, rt, cudart_syms, CP_ARRAY_LEN(cudart_syms));
    if (missing) {
        snprintf(why, why_size, "symbol missing: %s in %s", missing, rt->cudart_path);
        gpu_close(rt);
        return -1;
    }
    int n = 0, e = rt->GetDeviceCount(&n);
    if (e != 0 || n <= 0) {
        snprintf(why, why_size, "no device: cudaGetDeviceCount %s", e ? rt->GetErrorString(e) : "found 0 devices");
        gpu_close(rt);
        return -1;
    }
    rt->n_devices = n;
    static const char *const nvml_names[] = { "libnvidia-ml.so", "libnvidia-ml.so.1" };
    char npath[512];
    rt->nvml = open_lib(nvml_names, CP_ARRAY_LEN(nvml_names), npath, sizeof npath);
    if (rt->nvml && !resolve(rt->nvml, rt, nvml_syms, CP_ARRAY_LEN(nvml_syms)) && rt->nvmlInit() == 0)
        rt->nvml_ok = true;
    return 0;
}

void gpu_close(gpu_rt *rt)
{
    if (rt->nvml_ok)
        rt->nvmlShutdown();
    if (rt->nvml)
        dlclose(rt->nvml);
    if (rt->cudart)
        dlclose(rt->cudart);
    memset(rt, 0, sizeof *rt);
}

static void *nvml_dev(gpu_rt *rt, int dev)
{
    void *h = NULL;
    if (!rt->nvml_ok || rt->nvmlDeviceGetHandleByIndex((unsigned)dev, &h) != 0)
        return NULL;
    return h;
}

void gpu_name(gpu_rt *rt, int dev, char *buf, size_t size)
{
    void *h = nvml_dev(rt, dev);
    buf[0] = 0;
    if (h && rt->nvmlDeviceGetName(h, buf, (unsigned)size) != 0)
        buf[0] = 0;
}

double gpu_hbm_peak_gbps(unsigned bus_width_bits, unsigned mem_clock_mhz)
{
    if (!bus_width_bits || !mem_clock_mhz)
        return NAN;
    return (double)bus_width_bits / 8.0 * (double)mem_clock_mhz * 1e6 * 2.0 / 1e9;
}

double gpu_pcie_gbps(unsigned generation, unsigned width)
{
    /* GT/s per lane and line encoding of each PCIe generation */
    static const double gts[] = { 0, 2.5, 5, 8, 16, 32, 64 };
    if (generation < 1 || generation >= CP_ARRAY_LEN(gts) || !width)
        return NAN;
    double enc = generation <= 2 ? 8.0 / 10.0 : generation <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
    return gts[generation] * enc * (double)width / 8.0;
}

double gpu_mem_peak_gbps(gpu_rt *rt, int dev)
{
    void *h = nvml_dev(rt, dev);
    unsigned width = 0, clock = 0;
    if (!h || rt->nvmlDeviceGetMemoryBusWidth(h, &width) != 0 ||
        rt->nvmlDeviceGetMaxClockInfo(h, 2 /* NVML_CLOCK_MEM */, &clock) != 0)
        return NAN;
    return gpu_hbm_peak_gbps(width, clock);
}

double gpu_pcie_peak_gbps(gpu_rt *rt, int dev)
{
    void *h = nvml_dev(rt, dev);
    unsigned gen = 0, width = 0;
    if (!h || rt->nvmlDeviceGetMaxPcieLinkGeneration(h, &gen) != 0 || rt->nvmlDeviceGetMaxPcieLinkWidth(h, &width) != 0)
        return NAN;
    return gpu_pcie_gbps(gen, width);
}

static double fail(gpu_rt *rt, int e, const char *what, char *why, size_t why_size)
{
    snprintf(why, why_size, "%s: %s", what, rt->GetErrorString(e));
    return NAN;
}

double gpu_copy_gbps(gpu_rt *rt, int dev, int kind, bool pinned, size_t bytes, int reps, char *why, size_t why_size)
{
    int e;
    if ((e = rt->SetDevice(dev)) != 0)
        return fail(rt, e, "cudaSetDevice", why, why_size);
    void *d = NULL, *d2 = NULL, *h = NULL;
    double best = NAN;
    if ((e = rt->Malloc(&d, bytes)) != 0)
        return fail(rt, e, "cudaMalloc", why, why_size);
    if (kind == GPU_D2D)
        e = rt->Malloc(&d2, bytes);
    else if (pinned)
        e = rt->MallocHost(&h, bytes);
    else
        h = (e = 0, malloc(bytes));
    if (e != 0 || (kind != GPU_D2D && !h)) {
        best = e ? fail(rt, e, "buffer allocation", why, why_size) : NAN;
        if (!e)
            snprintf(why, why_size, "host allocation of %zu bytes failed", bytes);
        goto out;
    }
    if (h)
        memset(h, 1, bytes); /* fault the pages in before timing */
    for (int r = 0; r <= reps; r++) {
        int64_t t0 = cp_now_ns();
        e = kind == GPU_D2D ? rt->Memcpy(d2, d, bytes, GPU_D2D)
            : kind == GPU_H2D ? rt->Memcpy(d, h, bytes, GPU_H2D)
                              : rt->Memcpy(h, d, bytes, GPU_D2H);
        if (e == 0)
            e = rt->DeviceSynchronize();
        if (e != 0) {
            best = fail(rt, e, "cudaMemcpy", why, why_size);
            goto out;
        }
        double s = (double)(cp_now_ns() - t0) / 1e9;
        double gbps = (double)bytes * (kind == GPU_D2D ? 2.0 : 1.0) / s / 1e9;
        if (r > 0 && (isnan(best) || gbps > best)) /* the first copy warms up */
            best = gbps;
    }
out:
    if (d)
        rt->Free(d);
    if (d2)
        rt->Free(d2);
    if (h) {
        if (pinned)
            rt->FreeHost(h);
        else
            free(h);
    }
    return best;
}

double gpu_p2p_gbps(gpu_rt *rt, int src, int dst, size_t bytes, int reps, char *why, size_t why_size)
{
    int e, can = 0;
    void *a = NULL, *b = NULL;
    double best = NAN;
    if ((e = rt->DeviceCanAccessPeer(&can, dst, src)) != 0)
        return fail(rt, e, "cudaDeviceCanAccessPeer", why, why_size);
    if (rt->SetDevice(src) != 0 || (e = rt->Malloc(&a, bytes)) != 0)
        return fail(rt, e, "cudaMalloc on the source", why, why_size);
    if (can)
        rt->DeviceEnablePeerAccess(dst, 0); /* already enabled is fine */
    if (rt->SetDevice(dst) != 0 || (e = rt->Malloc(&b, bytes)) != 0) {
        best = fail(rt, e, "cudaMalloc on the destination", why, why_size);
        goto out;
    }
    if (can)
        rt->DeviceEnablePeerAccess(src, 0);
    for (int r = 0; r <= reps; r++) {
        int64_t t0 = cp_now_ns();
        e = rt->MemcpyPeer(b, dst, a, src, bytes);
        if (e == 0)
            e = rt->DeviceSynchronize();
        if (e != 0) {
            best = fail(rt, e, "cudaMemcpyPeer", why, why_size);
            goto out;
        }
        double gbps = (double)bytes / ((double)(cp_now_ns() - t0) / 1e9) / 1e9;
        if (r > 0 && (isnan(best) || gbps > best))
            best = gbps;
    }
out:
    if (a) {
        rt->SetDevice(src);
        rt->Free(a);
    }
    if (b) {
        rt->SetDevice(dst);
        rt->Free(b);
    }
    return best;
}
