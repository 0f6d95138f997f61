/* gpu.c - dlopen back-end for the CUDA runtime and NVML (see gpu.h).
 *
 * Timing uses the host clock around synchronous cudaMemcpy calls followed
 * by cudaDeviceSynchronize: for transfers of tens of MiB the launch
 * overhead is far below 1 %, and it keeps the symbol table small (no
 * events or streams).
 */
#include "gpu.h"
#include "gpu_dl.h"
#include "../base/util.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef gpu_sym sym;

#define S(field, name) { name, offsetof(gpu_rt, field) }
static const sym cudart_syms[] = {
    S(GetDeviceCount, "cudaGetDeviceCount"), S(SetDevice, "cudaSetDevice"), S(Malloc, "cudaMalloc"),
    S(Free, "cudaFree"), S(MallocHost, "cudaMallocHost"), S(FreeHost, "cudaFreeHost"), S(Memcpy, "cudaMemcpy"),
    S(DeviceSynchronize, "cudaDeviceSynchronize"), S(DeviceCanAccessPeer, "cudaDeviceCanAccessPeer"),
    S(DeviceEnablePeerAccess, "cudaDeviceEnablePeerAccess"), S(MemcpyPeer, "cudaMemcpyPeer"),
    S(GetErrorString, "cudaGetErrorString"), S(StreamCreate, "cudaStreamCreate"),
    S(StreamDestroy, "cudaStreamDestroy"),
    S(StreamQuery, "cudaStreamQuery"), S(DeviceGetAttribute, "cudaDeviceGetAttribute"),
};
static const sym nvml_syms[] = {
    S(nvmlInit, "nvmlInit_v2"), S(nvmlShutdown, "nvmlShutdown"),
    S(nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2"), S(nvmlDeviceGetName, "nvmlDeviceGetName"),
    S(nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo"),
    S(nvmlDeviceGetMemoryBusWidth, "nvmlDeviceGetMemoryBusWidth"),
    S(nvmlDeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration"),
    S(nvmlDeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth"),
};
static const sym lt_syms[] = {
    S(ltCreate, "cublasLtCreate"), S(ltDestroy, "cublasLtDestroy"),
    S(ltMatmulDescCreate, "cublasLtMatmulDescCreate"), S(ltMatmulDescDestroy, "cublasLtMatmulDescDestroy"),
    S(ltMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute"),
    S(ltMatrixLayoutCreate, "cublasLtMatrixLayoutCreate"), S(ltMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy"),
    S(ltMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate"),
    S(ltMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute"),
    S(ltMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy"),
    S(ltMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic"), S(ltMatmul, "cublasLtMatmul"),
};
static const sym nccl_syms[] = {
    S(ncclGetVersion, "ncclGetVersion"), S(ncclGetUniqueId, "ncclGetUniqueId"),
    S(ncclCommInitRank, "ncclCommInitRank"), S(ncclCommDestroy, "ncclCommDestroy"),
    S(ncclCommAbort, "ncclCommAbort"), S(ncclGetErrorString, "ncclGetErrorString"),
    S(ncclAllReduce, "ncclAllReduce"), S(ncclAllGather, "ncclAllGather"),
    S(ncclReduceScatter, "ncclReduceScatter"), S(ncclBroadcast, "ncclBroadcast"), S(ncclSend, "ncclSend"),
    S(ncclRecv, "ncclRecv"), S(ncclGroupStart, "ncclGroupStart"), S(ncclGroupEnd, "ncclGroupEnd"),
};
#undef S

/* dlopen the first of names found (only in CHAINPROF_GPU_LIB_DIR when set). */
void *gpu_dl_open(const char *const *names, size_t n, char *path, size_t path_size)
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
const char *gpu_dl_resolve(void *h, void *obj, const gpu_sym *tab, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(h, tab[i].name);
        if (!p)
            return tab[i].name;
        /* POSIX guarantees object and function pointers convert through dlsym */
        memcpy((char *)obj + tab[i].offset, &p, sizeof p);
    }
    return NULL;
}

/* Resolve what of tab the library has; the others stay NULL. */
size_t gpu_dl_resolve_optional(void *h, void *obj, const gpu_sym *tab, size_t n)
{
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(h, tab[i].name);
        if (p) {
            memcpy((char *)obj + tab[i].offset, &p, sizeof p);
            found++;
        }
    }
    return found;
}

int gpu_open(gpu_rt *rt, char *why, size_t why_size)
{
    memset(rt, 0, sizeof *rt);
    static const char *const rt_names[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                            "libcudart.so.11.0" };
    rt->cudart = gpu_dl_open(rt_names, CP_ARRAY_LEN(rt_names), rt->cudart_path, sizeof rt->cudart_path);
    if (!rt->cudart) {
        snprintf(why, why_size, "library not found: %s (CUDA runtime not installed)", rt->cudart_path);
        return -1;
    }
    const char *missing = gpu_dl_resolve(rt->cudart, rt, cudart_syms, CP_ARRAY_LEN(cudart_syms));
    if (missing) {
        snprintf(why, why_size, "symbol missing: %s in %s", missing, rt->cudart_path);
        dlclose(rt->cudart); /* nothing of it ran yet: safe to unload */
        rt->cudart = NULL;
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
    rt->nvml = gpu_dl_open(nvml_names, CP_ARRAY_LEN(nvml_names), npath, sizeof npath);
    if (rt->nvml && !gpu_dl_resolve(rt->nvml, rt, nvml_syms, CP_ARRAY_LEN(nvml_syms)) && rt->nvmlInit() == 0)
        rt->nvml_ok = true;
    return 0;
}

/* The vendor libraries stay loaded once opened: the CUDA runtime registers
 * exit handlers and keeps internal state that unloading would strand (and
 * LeakSanitizer then reports their allocations from an unknown module). */
void gpu_close(gpu_rt *rt)
{
    if (rt->nvml_ok)
        rt->nvmlShutdown();
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
    return gpu_copy_gbps_rounds(rt, dev, kind, pinned, bytes, reps, NULL, why, why_size);
}

double gpu_copy_gbps_rounds(gpu_rt *rt, int dev, int kind, bool pinned, size_t bytes, int reps, double *out, char *why,
                            size_t why_size)
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
        if (r > 0 && out)
            out[r - 1] = gbps;
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
    return gpu_p2p_gbps_rounds(rt, src, dst, bytes, reps, NULL, why, why_size);
}

double gpu_p2p_gbps_rounds(gpu_rt *rt, int src, int dst, size_t bytes, int reps, double *out, char *why,
                           size_t why_size)
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
        if (r > 0 && out)
            out[r - 1] = gbps;
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

/* ---- GEMM through cuBLASLt ----
 * The enum values are the GPU_* constants of gpu.h. fp8 follows the rules
 * cuBLASLt documents for E4M3 inputs: A transposed and B not ("TN"), fp32
 * compute and scale type, and per-tensor scale factors given as device
 * pointers (1.0 here: the inputs are zeros, only the speed matters). */

/* cublasLtMatmulHeuristicResult_t: algo (8 x uint64), workspaceSize, state,
 * wavesCount, 4 reserved ints */
typedef struct lt_heuristic {
    uint64_t algo[8];
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
} lt_heuristic;

const char *gpu_gemm_prec_name(gpu_gemm_prec p)
{
    static const char *const names[GPU_GEMM_N] = { "bf16", "fp16", "tf32", "fp8" };
    return (unsigned)p < GPU_GEMM_N ? names[p] : "?";
}

int gpu_gemm_min_cc(gpu_gemm_prec p)
{
    /* bf16/tf32 tensor cores arrived with sm_80, but cuBLASLt runs them
     * (slowly) on older parts too; fp8 has no fallback before sm_89 (Ada) */
    return p == GPU_GEMM_FP8 ? 89 : 0;
}

int gpu_compute_capability(gpu_rt *rt, int dev)
{
    int major = 0, minor = 0;
    if (rt->DeviceGetAttribute(&major, GPU_ATTR_CC_MAJOR, dev) != 0 ||
        rt->DeviceGetAttribute(&minor, GPU_ATTR_CC_MINOR, dev) != 0 || major <= 0 || minor < 0 || minor > 9)
        return -1;
    return major * 10 + minor;
}

bool gpu_gemm_available(gpu_rt *rt)
{
    if (rt->cublaslt)
        return true;
    if (rt->cublaslt_why[0])
        return false;
    static const char *const names[] = { "libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12",
                                         "libcublasLt.so.11" };
    char path[512];
    void *h = gpu_dl_open(names, CP_ARRAY_LEN(names), path, sizeof path);
    if (!h) {
        snprintf(rt->cublaslt_why, sizeof rt->cublaslt_why, "library not found: %s", path);
        return false;
    }
    const char *missing = gpu_dl_resolve(h, rt, lt_syms, CP_ARRAY_LEN(lt_syms));
    if (missing) {
        snprintf(rt->cublaslt_why, sizeof rt->cublaslt_why, "symbol missing: %s in %s", missing, path);
        dlclose(h);
        return false;
    }
    rt->cublaslt = h;
    return true;
}

/* Random GEMM operands: a tensor core's power, and so its clock, depend on
 * the bits it multiplies, and on zeros an H200 ran 13 % faster than on
 * these (bf16 8192^3: 892 against 790 TFLOP/s), so a peak measured on zeros
 * (what cudaMalloc hands out) overstates what a model's GEMMs get. Each
 * value is +-(1 + random mantissa) x 2^-k, k uniform in 0..5: random signs,
 * mantissas and exponents, all normal numbers in every one of the four
 * types (fp8 E4M3's smallest normal is 2^-6), so no zeros, NaN or Inf.
 * xorshift64 with a fixed seed: the same operands on every run. */
static void fill_random_operand(void *host, size_t n_elem, gpu_gemm_prec p)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n_elem; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t sign = (uint32_t)(x >> 63), exp = 127 - (uint32_t)(x >> 32 & 0xffff) % 6,
                 mant = (uint32_t)x & 0x7fffff;
        uint32_t f = sign << 31 | exp << 23 | mant;
        switch (p) {
        case GPU_GEMM_TF32:
            memcpy((char *)host + 4 * i, &f, 4);
            break;
        case GPU_GEMM_BF16:
            ((uint16_t *)host)[i] = (uint16_t)(f >> 16);
            break;
        case GPU_GEMM_FP16: /* binary16: bias 15, 10 mantissa bits */
            ((uint16_t *)host)[i] = (uint16_t)(sign << 15 | (exp - 127 + 15) << 10 | mant >> 13);
            break;
        case GPU_GEMM_FP8: /* E4M3: bias 7, 3 mantissa bits */
            ((uint8_t *)host)[i] = (uint8_t)(sign << 7 | (exp - 127 + 7) << 3 | mant >> 20);
            break;
        default:
            break;
        }
    }
}

double gpu_gemm_tflops(gpu_rt *rt, int dev, gpu_gemm_prec p, uint64_t n, int reps, char *why, size_t why_size)
{
    return gpu_gemm_tflops_rounds(rt, dev, p, n, reps, NULL, why, why_size);
}

double gpu_gemm_tflops_rounds(gpu_rt *rt, int dev, gpu_gemm_prec p, uint64_t n, int reps, double *out, char *why,
                              size_t why_size)
{
    if (!gpu_gemm_available(rt)) {
        snprintf(why, why_size, "%s", rt->cublaslt_why);
        return NAN;
    }
    int need = gpu_gemm_min_cc(p), cc = need ? gpu_compute_capability(rt, dev) : 0;
    if (cc < need) {
        if (cc < 0)
            snprintf(why, why_size, "needs compute capability %d.%d or newer; GPU %d does not report its own", need / 10,
                     need % 10, dev);
        else
            snprintf(why, why_size, "needs compute capability %d.%d or newer; GPU %d is %d.%d", need / 10, need % 10,
                     dev, cc / 10, cc % 10);
        return NAN;
    }
    bool fp8 = p == GPU_GEMM_FP8;
    int ab_type = p == GPU_GEMM_BF16 ? GPU_R_16BF : p == GPU_GEMM_FP16 ? GPU_R_16F : fp8 ? GPU_R_8F_E4M3 : GPU_R_32F;
    int c_type = fp8 ? GPU_R_16BF : ab_type;
    int compute = p == GPU_GEMM_TF32 ? GPU_COMPUTE_32F_FAST_TF32 : GPU_COMPUTE_32F;
    size_t ab_elem = p == GPU_GEMM_TF32 ? 4 : fp8 ? 1 : 2, c_elem = p == GPU_GEMM_TF32 ? 4 : 2;
    size_t ab_bytes = (size_t)(n * n) * ab_elem, c_bytes = (size_t)(n * n) * c_elem, ws_bytes = 32u << 20;
    void *lt = NULL, *desc = NULL, *la = NULL, *lb = NULL, *lc = NULL, *pref = NULL;
    void *a = NULL, *b = NULL, *c = NULL, *ws = NULL, *scale = NULL;
    double best = NAN;
    int e;
    if ((e = rt->SetDevice(dev)) != 0)
        return fail(rt, e, "cudaSetDevice", why, why_size);
    if (rt->Malloc(&a, ab_bytes) || rt->Malloc(&b, ab_bytes) || rt->Malloc(&c, c_bytes) ||
        rt->Malloc(&ws, ws_bytes)) {
        snprintf(why, why_size, "cudaMalloc of A, B (%zu MiB each), C (%zu MiB) and workspace failed", ab_bytes >> 20,
                 c_bytes >> 20);
        goto out;
    }
    if (fp8) { /* unit scale factors for A and B, in device memory as cuBLASLt requires; B's 256 bytes
                * after A's so each keeps cudaMalloc's alignment */
        float ones[65] = { 1.0f };
        ones[64] = 1.0f;
        if (rt->Malloc(&scale, sizeof ones) || rt->Memcpy(scale, ones, sizeof ones, GPU_H2D)) {
            snprintf(why, why_size, "cudaMalloc/cudaMemcpy of the fp8 scale factors failed");
            goto out;
        }
    }
    { /* the same random operand in A and B (see fill_random_operand) */
        void *host = malloc(ab_bytes);
        if (!host) {
            snprintf(why, why_size, "cannot allocate %zu MiB of host memory for the operands", ab_bytes >> 20);
            goto out;
        }
        fill_random_operand(host, (size_t)(n * n), p);
        e = rt->Memcpy(a, host, ab_bytes, GPU_H2D);
        if (!e)
            e = rt->Memcpy(b, host, ab_bytes, GPU_H2D);
        free(host);
        if (e) {
            fail(rt, e, "cudaMemcpy of the GEMM operands", why, why_size);
            goto out;
        }
    }
    if (rt->ltCreate(&lt) || rt->ltMatmulDescCreate(&desc, compute, GPU_R_32F) ||
        rt->ltMatrixLayoutCreate(&la, ab_type, n, n, (int64_t)n) ||
        rt->ltMatrixLayoutCreate(&lb, ab_type, n, n, (int64_t)n) ||
        rt->ltMatrixLayoutCreate(&lc, c_type, n, n, (int64_t)n) || rt->ltMatmulPreferenceCreate(&pref) ||
        rt->ltMatmulPreferenceSetAttribute(pref, GPU_LT_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes)) {
        snprintf(why, why_size, "cuBLASLt setup failed for %s", gpu_gemm_prec_name(p));
        goto out;
    }
    if (fp8) {
        const int32_t trans_a = GPU_OP_T, trans_b = GPU_OP_N;
        const void *sa = scale, *sb = (const char *)scale + 64 * sizeof(float);
        if (rt->ltMatmulDescSetAttribute(desc, GPU_LT_DESC_TRANSA, &trans_a, sizeof trans_a) ||
            rt->ltMatmulDescSetAttribute(desc, GPU_LT_DESC_TRANSB, &trans_b, sizeof trans_b) ||
            rt->ltMatmulDescSetAttribute(desc, GPU_LT_DESC_A_SCALE_POINTER, &sa, sizeof sa) ||
            rt->ltMatmulDescSetAttribute(desc, GPU_LT_DESC_B_SCALE_POINTER, &sb, sizeof sb)) {
            snprintf(why, why_size, "cuBLASLt rejected the fp8 layout or scale attributes");
            goto out;
        }
    }
    lt_heuristic heur;
    int found = 0;
    memset(&heur, 0, sizeof heur);
    if (rt->ltMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heur, &found) || found < 1) {
        snprintf(why, why_size, "cuBLASLt has no algorithm for %s GEMM on this device", gpu_gemm_prec_name(p));
        goto out;
    }
    const float alpha = 1.0f, beta = 0.0f;
    int batch = 10;
    for (int r = 0; r <= reps; r++) {
        int64_t t0 = cp_now_ns();
        for (int i = 0; i < batch; i++)
            if ((e = rt->ltMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, heur.algo, ws, ws_bytes,
                                  NULL)) != 0) {
                snprintf(why, why_size, "cublasLtMatmul failed with status %d", e);
                best = NAN;
                goto out;
            }
        if ((e = rt->DeviceSynchronize()) != 0) {
            best = fail(rt, e, "GEMM", why, why_size);
            goto out;
        }
        double s = (double)(cp_now_ns() - t0) / 1e9;
        double tflops = 2.0 * (double)n * (double)n * (double)n * batch / s / 1e12;
        if (r > 0 && out)
            out[r - 1] = tflops;
        if (r > 0 && (isnan(best) || tflops > best))
            best = tflops;
    }
out:
    if (pref)
        rt->ltMatmulPreferenceDestroy(pref);
    if (lc)
        rt->ltMatrixLayoutDestroy(lc);
    if (lb)
        rt->ltMatrixLayoutDestroy(lb);
    if (la)
        rt->ltMatrixLayoutDestroy(la);
    if (desc)
        rt->ltMatmulDescDestroy(desc);
    if (lt)
        rt->ltDestroy(lt);
    void *bufs[] = { a, b, c, ws, scale };
    for (size_t i = 0; i < CP_ARRAY_LEN(bufs); i++)
        if (bufs[i])
            rt->Free(bufs[i]);
    return best;
}

/* ---- NCCL ---- */

void gpu_nccl_version_str(int code, char *buf, size_t size)
{
    if (code <= 0) {
        snprintf(buf, size, "unknown");
        return;
    }
    /* NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z from 2.9 on, X*1000+Y*100+Z before */
    int major = code >= 10000 ? code / 10000 : code / 1000;
    int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
    snprintf(buf, size, "%d.%d.%d", major, minor, code % 100);
}

bool gpu_nccl_available(gpu_rt *rt)
{
    if (rt->nccl)
        return true;
    if (rt->nccl_why[0])
        return false;
    static const char *const names[] = { "libnccl.so", "libnccl.so.2" };
    void *h = gpu_dl_open(names, CP_ARRAY_LEN(names), rt->nccl_path, sizeof rt->nccl_path);
    if (!h) {
        snprintf(rt->nccl_why, sizeof rt->nccl_why, "library not found: %s", rt->nccl_path);
        return false;
    }
    const char *missing = gpu_dl_resolve(h, rt, nccl_syms, CP_ARRAY_LEN(nccl_syms));
    if (missing) {
        snprintf(rt->nccl_why, sizeof rt->nccl_why, "symbol missing: %s in %s", missing, rt->nccl_path);
        dlclose(h);
        return false;
    }
    /* all-to-all as one call only in recent releases; optional */
    void *a2a = dlsym(h, "ncclAlltoAll");
    memcpy(&rt->ncclAlltoAll, &a2a, sizeof a2a);
    void *ae = dlsym(h, "ncclCommGetAsyncError");
    memcpy(&rt->ncclCommGetAsyncError, &ae, sizeof ae);
    int e = rt->ncclGetVersion(&rt->nccl_version);
    if (e != 0) {
        snprintf(rt->nccl_why, sizeof rt->nccl_why, "ncclGetVersion failed: %s", rt->ncclGetErrorString(e));
        return false; /* the library stays loaded, as the others (see gpu_close) */
    }
    rt->nccl = h;
    return true;
}
