/* gpu.h - NVIDIA libraries through dlopen, with declarations we own.
 *
 * One binary runs with and without NVIDIA drivers: nothing here links
 * against CUDA. gpu_open() dlopens the CUDA runtime (libcudart) and, when
 * present, NVML (libnvidia-ml), resolves the few symbols chainprof uses
 * from a table, and says why when it cannot: "library not found",
 * "symbol missing", "no device". CHAINPROF_GPU_LIB_DIR, when set, is the
 * only directory searched (tests point it at fake libraries built from
 * tests/fakes, so the no-GPU, missing-symbol and one-GPU paths all run in CI).
 *
 * cuBLASLt (GEMM) and NCCL (collectives on device buffers) are loaded on
 * first use, each with its own "why unavailable" text, so a machine with a
 * GPU but no NCCL still measures everything else.
 *
 * How to add a symbol: declare its type below with the CUDA signature
 * reduced to plain C types, add a field to gpu_rt and a row to the table in
 * gpu.c. Only symbols of the stable runtime/NVML/cuBLASLt/NCCL ABI are used.
 * Every enum value we pass is one of the GPU_* constants below, copied from
 * the public headers; tests/vendor/check_decls.c asserts each one (and the
 * arity and argument types of every NCCL declaration) against the real
 * headers when the build machine has them.
 *
 * Ownership: gpu_rt owns the library handles; gpu_close releases it.
 */
#ifndef CP_GPU_GPU_H
#define CP_GPU_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cudaMemcpyKind */
enum { GPU_H2H = 0, GPU_H2D = 1, GPU_D2H = 2, GPU_D2D = 3 };

/* Owned copies of vendor enum values (library_types.h, cublas_api.h,
 * cublasLt.h, driver_types.h, nccl.h); asserted by tests/vendor/check_decls.c. */
enum {
    GPU_R_32F = 0,                        /* cudaDataType CUDA_R_32F */
    GPU_R_16F = 2,                        /* CUDA_R_16F */
    GPU_R_16BF = 14,                      /* CUDA_R_16BF */
    GPU_R_8F_E4M3 = 28,                   /* CUDA_R_8F_E4M3 */
    GPU_COMPUTE_32F = 68,                 /* cublasComputeType_t CUBLAS_COMPUTE_32F */
    GPU_COMPUTE_32F_FAST_TF32 = 77,       /* CUBLAS_COMPUTE_32F_FAST_TF32 */
    GPU_OP_N = 0, GPU_OP_T = 1,           /* cublasOperation_t */
    GPU_LT_DESC_TRANSA = 3,               /* cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSA */
    GPU_LT_DESC_TRANSB = 4,               /* CUBLASLT_MATMUL_DESC_TRANSB */
    GPU_LT_DESC_A_SCALE_POINTER = 17,     /* CUBLASLT_MATMUL_DESC_A_SCALE_POINTER */
    GPU_LT_DESC_B_SCALE_POINTER = 18,     /* CUBLASLT_MATMUL_DESC_B_SCALE_POINTER */
    GPU_LT_PREF_MAX_WORKSPACE_BYTES = 1,  /* CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES */
    GPU_ATTR_CC_MAJOR = 75,               /* cudaDevAttrComputeCapabilityMajor */
    GPU_ATTR_CC_MINOR = 76,               /* cudaDevAttrComputeCapabilityMinor */
    GPU_ATTR_L2_CACHE_SIZE = 38,          /* cudaDevAttrL2CacheSize (bytes) */
    GPU_ERR_NOT_READY = 600,              /* cudaErrorNotReady */
    GPU_NCCL_FLOAT32 = 7,                 /* ncclDataType_t ncclFloat32 */
    GPU_NCCL_SUM = 0,                     /* ncclRedOp_t ncclSum */
    GPU_NCCL_UNIQUE_ID_BYTES = 128,       /* NCCL_UNIQUE_ID_BYTES */
    GPU_NCCL_IN_PROGRESS = 7,             /* ncclResult_t ncclInProgress (non-blocking comms: not an error) */
};

/* ncclUniqueId: passed by value to ncclCommInitRank. */
typedef struct gpu_nccl_id {
    char internal[GPU_NCCL_UNIQUE_ID_BYTES];
} gpu_nccl_id;

typedef struct gpu_rt {
    void *cudart, *nvml;
    char cudart_path[512];
    int n_devices;
    /* CUDA runtime (return cudaError_t as int; 0 = success) */
    int (*GetDeviceCount)(int *);
    int (*SetDevice)(int);
    int (*Malloc)(void **, size_t);
    int (*Free)(void *);
    int (*MallocHost)(void **, size_t);
    int (*FreeHost)(void *);
    int (*Memcpy)(void *, const void *, size_t, int);
    int (*DeviceSynchronize)(void);
    int (*DeviceCanAccessPeer)(int *, int, int);
    int (*DeviceEnablePeerAccess)(int, unsigned);
    int (*MemcpyPeer)(void *, int, const void *, int, size_t);
    const char *(*GetErrorString)(int);
    int (*StreamCreate)(void **);
    int (*StreamDestroy)(void *);
    int (*StreamQuery)(void *); /* 0 done, GPU_ERR_NOT_READY still running */
    int (*DeviceGetAttribute)(int *, int, int);
    /* NVML (optional: names and peaks; return nvmlReturn_t, 0 = success) */
    int (*nvmlInit)(void);
    int (*nvmlShutdown)(void);
    int (*nvmlDeviceGetHandleByIndex)(unsigned, void **);
    int (*nvmlDeviceGetName)(void *, char *, unsigned);
    int (*nvmlDeviceGetMaxClockInfo)(void *, int, unsigned *);
    int (*nvmlDeviceGetMemoryBusWidth)(void *, unsigned *);
    int (*nvmlDeviceGetMaxPcieLinkGeneration)(void *, unsigned *);
    int (*nvmlDeviceGetMaxPcieLinkWidth)(void *, unsigned *);
    bool nvml_ok;
    /* cuBLASLt (optional: GEMM; return cublasStatus_t, 0 = success) */
    void *cublaslt;
    char cublaslt_why[640]; /* why GEMM is unavailable, "" when it is */
    int (*ltCreate)(void **);
    int (*ltDestroy)(void *);
    int (*ltMatmulDescCreate)(void **, int, int);
    int (*ltMatmulDescDestroy)(void *);
    int (*ltMatmulDescSetAttribute)(void *, int, const void *, size_t);
    int (*ltMatrixLayoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
    int (*ltMatrixLayoutDestroy)(void *);
    int (*ltMatmulPreferenceCreate)(void **);
    int (*ltMatmulPreferenceSetAttribute)(void *, int, const void *, size_t);
    int (*ltMatmulPreferenceDestroy)(void *);
    int (*ltMatmulAlgoGetHeuristic)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *);
    int (*ltMatmul)(void *, void *, const void *, const void *, void *, const void *, void *, const void *,
                    const void *, void *, void *, void *, const void *, void *, size_t, void *);
    /* NCCL (optional: collectives on device buffers; return ncclResult_t,
     * 0 = success; comm and stream are opaque pointers) */
    void *nccl;
    char nccl_why[640];  /* why NCCL is unavailable, "" when it is */
    char nccl_path[512];
    int nccl_version;    /* ncclGetVersion code, e.g. 22809 */
    int (*ncclGetVersion)(int *);
    int (*ncclGetUniqueId)(gpu_nccl_id *);
    int (*ncclCommInitRank)(void **, int, gpu_nccl_id, int);
    int (*ncclCommDestroy)(void *);
    int (*ncclCommAbort)(void *);
    const char *(*ncclGetErrorString)(int);
    int (*ncclAllReduce)(const void *, void *, size_t, int, int, void *, void *);
    int (*ncclAllGather)(const void *, void *, size_t, int, void *, void *);
    int (*ncclReduceScatter)(const void *, void *, size_t, int, int, void *, void *);
    int (*ncclBroadcast)(const void *, void *, size_t, int, int, void *, void *);
    int (*ncclSend)(const void *, size_t, int, int, void *, void *);
    int (*ncclRecv)(void *, size_t, int, int, void *, void *);
    int (*ncclGroupStart)(void);
    int (*ncclGroupEnd)(void);
    /* optional within NCCL: NULL in releases without it (grouped send/recv instead) */
    int (*ncclAlltoAll)(const void *, void *, size_t, int, void *, void *);
    /* optional (NCCL >= 2.4): a communicator's asynchronous error (a peer or
     * the network failed under a collective); NULL = only the timeout sees it */
    int (*ncclCommGetAsyncError)(void *, int *);
} gpu_rt;

/* Load the runtime and count devices. Returns 0, or -1 with the reason in
 * why ("library not found: ...", "symbol missing: ...", "no device: ..."). */
int gpu_open(gpu_rt *rt, char *why, size_t why_size);
void gpu_close(gpu_rt *rt);

/* Device facts from NVML; NaN / "" when unknown. */
void gpu_name(gpu_rt *rt, int dev, char *buf, size_t size);
/* Peak memory bandwidth: bus width/8 x max memory clock x 2 (double data rate), GB/s. */
double gpu_mem_peak_gbps(gpu_rt *rt, int dev);
/* Peak PCIe bandwidth per direction from the max link generation and width, GB/s. */
double gpu_pcie_peak_gbps(gpu_rt *rt, int dev);
/* Pure formulas (unit-tested). */
double gpu_hbm_peak_gbps(unsigned bus_width_bits, unsigned mem_clock_mhz);
double gpu_pcie_gbps(unsigned generation, unsigned width);

/* Bandwidth of a copy, GB/s = bytes moved per direction / time; NaN with
 * why on failure. kind is GPU_H2D, GPU_D2H or GPU_D2D; pinned picks
 * cudaMallocHost host memory. D2D counts read + write (2 x bytes). */
double gpu_copy_gbps(gpu_rt *rt, int dev, int kind, bool pinned, size_t bytes, int reps, char *why, size_t why_size);
/* The same, with each timed copy's GB/s in out[reps] (the first, warm-up
 * copy is not one of them); returns the best. */
double gpu_copy_gbps_rounds(gpu_rt *rt, int dev, int kind, bool pinned, size_t bytes, int reps, double *out, char *why,
                            size_t why_size);
/* Peer copy src -> dst, GB/s; NaN with why on failure. */
double gpu_p2p_gbps(gpu_rt *rt, int src, int dst, size_t bytes, int reps, char *why, size_t why_size);
double gpu_p2p_gbps_rounds(gpu_rt *rt, int src, int dst, size_t bytes, int reps, double *out, char *why,
                           size_t why_size);

/* Compute capability of dev as major*10 + minor (90 for sm_90); -1 when
 * the runtime cannot say. */
int gpu_compute_capability(gpu_rt *rt, int dev);

/* GEMM precisions measured through cuBLASLt. fp8 is E4M3 inputs with a
 * bf16 output, fp32 scale/accumulate and unit scale factors, in the TN layout
 * cuBLASLt requires for fp8; it needs compute capability 8.9 or newer. */
typedef enum gpu_gemm_prec { GPU_GEMM_BF16, GPU_GEMM_FP16, GPU_GEMM_TF32, GPU_GEMM_FP8, GPU_GEMM_N } gpu_gemm_prec;
/* Lowest compute capability (major*10+minor) a precision needs; 0 = any. */
int gpu_gemm_min_cc(gpu_gemm_prec p);
const char *gpu_gemm_prec_name(gpu_gemm_prec p);
/* Load cuBLASLt on first use; false with rt->cublaslt_why when unavailable. */
bool gpu_gemm_available(gpu_rt *rt);
/* TFLOP/s of D = A x B (n x n x n, column-major, 2 n^3 FLOPs per GEMM) on
 * device dev, best of reps timed batches of `batch` GEMMs; NaN with why
 * (for a precision the device cannot run, why starts with "needs"). */
double gpu_gemm_tflops(gpu_rt *rt, int dev, gpu_gemm_prec p, uint64_t n, int reps, char *why, size_t why_size);
/* The same, with each timed batch's TFLOP/s in out[reps]; returns the best. */
double gpu_gemm_tflops_rounds(gpu_rt *rt, int dev, gpu_gemm_prec p, uint64_t n, int reps, double *out, char *why,
                              size_t why_size);

/* ---- NCCL ----
 * Load libnccl on first use (needs gpu_open first); false with
 * rt->nccl_why ("library not found: ...", "symbol missing: ..."). */
bool gpu_nccl_available(gpu_rt *rt);
/* "2.28.9" from an ncclGetVersion code: major*10000+minor*100+patch since
 * 2.9, major*1000+minor*100+patch before. */
void gpu_nccl_version_str(int code, char *buf, size_t size);

#endif
