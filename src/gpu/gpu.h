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
 * How to add a symbol: declare its type below with the CUDA signature
 * reduced to plain C types, add a field to gpu_rt or gpu_nvml and a row to
 * the table in gpu.c. Only symbols of the stable runtime/NVML ABI are used.
 *
 * Ownership: gpu_rt owns the library handle; gpu_close releases it.
 */
#ifndef CP_GPU_GPU_H
#define CP_GPU_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* cudaMemcpyKind */
enum { GPU_H2H = 0, GPU_H2D = 1, GPU_D2H = 2, GPU_D2D = 3 };

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
/* Peer copy src -> dst, GB/s; NaN with why on failure. */
double gpu_p2p_gbps(gpu_rt *rt, int src, int dst, size_t bytes, int reps, char *why, size_t why_size);

#endif
