/* col_cuda_abi.h - the collector's own declarations of the CUDA runtime and
 * driver entry points it interposes (no CUDA header at build time).
 *
 * Handles are void * (cudaStream_t, CUstream, CUfunction, ...), error codes
 * int, device pointers unsigned long long (CUdeviceptr on 64-bit hosts).
 * tests/vendor/check_collect_decls.c compiles a wrapper of each type
 * against the real headers, and checks the launch-config layouts, when the
 * build machine has them.
 */
#ifndef CP_COLLECT_COL_CUDA_ABI_H
#define CP_COLLECT_COL_CUDA_ABI_H

#include <stddef.h>

typedef struct col_dim3 {
    unsigned x, y, z;
} col_dim3;

/* cudaLaunchConfig_t: only the fields up to the stream are read. */
typedef struct col_cuda_launch_config {
    col_dim3 grid, block;
    size_t dynamic_smem_bytes;
    void *stream;
} col_cuda_launch_config;

/* CUlaunchConfig: likewise. */
typedef struct col_cu_launch_config {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem_bytes;
    void *stream;
} col_cu_launch_config;

typedef unsigned long long col_cu_devptr;

/* runtime */
typedef int (*col_cudaLaunchKernel_fn)(const void *, col_dim3, col_dim3, void **, size_t, void *);
typedef int (*col_cudaLaunchKernelExC_fn)(const col_cuda_launch_config *, const void *, void **);
typedef int (*col_cudaLaunchCooperativeKernel_fn)(const void *, col_dim3, col_dim3, void **, size_t, void *);
typedef int (*col_cudaMemcpy_fn)(void *, const void *, size_t, int);
typedef int (*col_cudaMemcpyAsync_fn)(void *, const void *, size_t, int, void *);
typedef int (*col_cudaMemcpyPeer_fn)(void *, int, const void *, int, size_t);
typedef int (*col_cudaMemcpyPeerAsync_fn)(void *, int, const void *, int, size_t, void *);
typedef int (*col_cudaMemset_fn)(void *, int, size_t);
typedef int (*col_cudaMemsetAsync_fn)(void *, int, size_t, void *);
typedef int (*col_cudaDeviceSynchronize_fn)(void);
typedef int (*col_cudaStreamSynchronize_fn)(void *);
typedef int (*col_cudaEventSynchronize_fn)(void *);
typedef int (*col_cudaStreamWaitEvent_fn)(void *, void *, unsigned);
typedef int (*col_cudaGraphLaunch_fn)(void *, void *);
typedef int (*col_cudaSetDevice_fn)(int);
/* driver */
typedef int (*col_cuLaunchKernel_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     void *, void **, void **);
typedef int (*col_cuLaunchKernelEx_fn)(const col_cu_launch_config *, void *, void **, void **);
typedef int (*col_cuMemcpyHtoD_fn)(col_cu_devptr, const void *, size_t);
typedef int (*col_cuMemcpyDtoH_fn)(void *, col_cu_devptr, size_t);
typedef int (*col_cuMemcpyAsync_fn)(col_cu_devptr, col_cu_devptr, size_t, void *);
typedef int (*col_cuMemcpyHtoDAsync_fn)(col_cu_devptr, const void *, size_t, void *);
typedef int (*col_cuMemcpyDtoHAsync_fn)(void *, col_cu_devptr, size_t, void *);
typedef int (*col_cuMemsetD8Async_fn)(col_cu_devptr, unsigned char, size_t, void *);
typedef int (*col_cuCtxSynchronize_fn)(void);
typedef int (*col_cuStreamSynchronize_fn)(void *);
typedef int (*col_cuEventSynchronize_fn)(void *);
typedef int (*col_cuGraphLaunch_fn)(void *, void *);

/* What a wrapper returns when the real library cannot be found (both
 * cudaErrorInitializationError and CUDA_ERROR_NOT_INITIALIZED are 3). */
#define COL_CUDA_ERR_INIT 3

#endif
