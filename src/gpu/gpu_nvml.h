/* gpu_nvml.h - NVML alone, for sampling: what `chainprof monitor` reads of
 * each GPU on every interval (the fields dcgm-exporter and `nvidia-smi
 * dmon` show), without the CUDA runtime (a monitor must not create a CUDA
 * context on the GPUs a job is using).
 *
 * Owned declarations as in gpu.h: the NVML structs reduced to the fields we
 * read, the enum values we pass as GPU_NV_* constants copied from nvml.h
 * (tests/vendor/check_decls.c compares them with the real header where the
 * build machine has one). Every query is optional: a driver or GPU that
 * lacks one (NOT_SUPPORTED, or an older library without the symbol) leaves
 * its bit out of gpu_nvml_dev.have, and the metric is then absent, never 0.
 *
 * Xid errors arrive as NVML events (nvmlEventTypeXidCriticalError) on one
 * event set; gpu_nvml_read drains it without waiting and counts them per
 * GPU, the way dcgm-exporter's DCGM_FI_DEV_XID_ERRORS reports the last one.
 *
 * Units: percent, MHz, bytes, watts (NVML's mW / 1000), degrees C, bytes/s
 * (NVML's PCIe KB/s x 1024), counters as NVML counts them.
 */
#ifndef CP_GPU_GPU_NVML_H
#define CP_GPU_GPU_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Owned copies of nvml.h values. */
enum {
    GPU_NV_CLOCK_SM = 1,                 /* nvmlClockType_t NVML_CLOCK_SM */
    GPU_NV_TEMPERATURE_GPU = 0,          /* nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU */
    GPU_NV_PCIE_UTIL_TX_BYTES = 0,       /* nvmlPcieUtilCounter_t */
    GPU_NV_PCIE_UTIL_RX_BYTES = 1,
    GPU_NV_MEMORY_ERROR_CORRECTED = 0,   /* nvmlMemoryErrorType_t */
    GPU_NV_MEMORY_ERROR_UNCORRECTED = 1,
    GPU_NV_VOLATILE_ECC = 0,             /* nvmlEccCounterType_t: since the last driver load */
    GPU_NV_ERROR_TIMEOUT = 10,           /* nvmlReturn_t NVML_ERROR_TIMEOUT (no event pending) */
    GPU_NV_FI_NVLINK_DATA_TX = 138,      /* NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (KiB, all links at scope 0) */
    GPU_NV_FI_NVLINK_DATA_RX = 139,      /* NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX */
};
#define GPU_NV_EVENT_XID 0x0000000000000008ULL /* nvmlEventTypeXidCriticalError */

/* nvmlClocksThrottleReasons (nvmlClocksEventReasons since R535): bit, key. */
#define GPU_NV_THROTTLE_REASONS(X) \
    X(0x1ULL, gpu_idle) X(0x2ULL, applications_clocks) X(0x4ULL, sw_power_cap) X(0x8ULL, hw_slowdown) \
    X(0x10ULL, sync_boost) X(0x20ULL, sw_thermal) X(0x40ULL, hw_thermal) X(0x80ULL, hw_power_brake) \
    X(0x100ULL, display_clocks)

typedef struct gpu_nv_utilization { unsigned gpu, memory; } gpu_nv_utilization;             /* nvmlUtilization_t */
typedef struct gpu_nv_memory { unsigned long long total, free, used; } gpu_nv_memory;        /* nvmlMemory_t */
typedef struct gpu_nv_field {                                                                /* nvmlFieldValue_t */
    unsigned field_id, scope_id;
    long long timestamp, latency_us;
    int value_type, nvml_return;
    union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; } value;
} gpu_nv_field;
typedef struct gpu_nv_event {                                                                /* nvmlEventData_t */
    void *device;
    unsigned long long event_type, event_data;
    unsigned gpu_instance_id, compute_instance_id;
} gpu_nv_event;

/* What one GPU said in one sample. */
enum {
    GPU_NVH_UTIL = 1u << 0, GPU_NVH_CLOCK = 1u << 1, GPU_NVH_THROTTLE = 1u << 2, GPU_NVH_MEMORY = 1u << 3,
    GPU_NVH_POWER = 1u << 4, GPU_NVH_TEMP = 1u << 5, GPU_NVH_PCIE = 1u << 6, GPU_NVH_REPLAY = 1u << 7,
    GPU_NVH_NVLINK = 1u << 8, GPU_NVH_ECC = 1u << 9, GPU_NVH_REMAP = 1u << 10, GPU_NVH_XID = 1u << 11,
};
typedef struct gpu_nvml_dev {
    unsigned index;
    char name[96], uuid[96];
    unsigned have;                        /* GPU_NVH_* */
    double util_pct, mem_util_pct;        /* kernel running / memory busy, % of the last sample period */
    double sm_clock_mhz;
    uint64_t throttle_reasons;            /* GPU_NV_THROTTLE_REASONS bits */
    uint64_t mem_used_bytes, mem_total_bytes;
    double power_w, temp_c;
    double pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;
    uint64_t pcie_replay_total;
    uint64_t nvlink_tx_bytes_total, nvlink_rx_bytes_total;
    uint64_t ecc_corrected_total, ecc_uncorrected_total;
    unsigned remap_correctable, remap_uncorrectable, remap_pending, remap_failure;
    uint64_t xid_total;                   /* Xid events seen since the monitor started */
    unsigned last_xid;                    /* 0 none */
} gpu_nvml_dev;

#define GPU_NVML_MAX_DEVICES 64

typedef struct gpu_nvml {
    void *lib;
    char path[512];
    unsigned n_devices;
    void *handles[GPU_NVML_MAX_DEVICES];
    void *events;                         /* nvmlEventSet_t, NULL when Xid events are unavailable */
    uint64_t xid_total[GPU_NVML_MAX_DEVICES];
    unsigned last_xid[GPU_NVML_MAX_DEVICES];
    int (*Init)(void);
    int (*Shutdown)(void);
    int (*GetCount)(unsigned *);
    int (*GetHandleByIndex)(unsigned, void **);
    /* optional */
    int (*GetName)(void *, char *, unsigned);
    int (*GetUUID)(void *, char *, unsigned);
    int (*GetUtilizationRates)(void *, gpu_nv_utilization *);
    int (*GetClockInfo)(void *, int, unsigned *);
    int (*GetCurrentClocksThrottleReasons)(void *, unsigned long long *);
    int (*GetMemoryInfo)(void *, gpu_nv_memory *);
    int (*GetPowerUsage)(void *, unsigned *);
    int (*GetTemperature)(void *, int, unsigned *);
    int (*GetPcieThroughput)(void *, int, unsigned *);
    int (*GetPcieReplayCounter)(void *, unsigned *);
    int (*GetFieldValues)(void *, int, gpu_nv_field *);
    int (*GetTotalEccErrors)(void *, int, int, unsigned long long *);
    int (*GetRemappedRows)(void *, unsigned *, unsigned *, unsigned *, unsigned *);
    int (*EventSetCreate)(void **);
    int (*RegisterEvents)(void *, unsigned long long, void *);
    int (*EventSetWait)(void *, gpu_nv_event *, unsigned);
    int (*EventSetFree)(void *);
} gpu_nvml;

/* Load and initialise NVML, count the GPUs, register for Xid events.
 * Returns 0, or -1 with why ("library not found: ...", "symbol missing:
 * ...", "nvmlInit failed: ...", "no device"). */
int gpu_nvml_open(gpu_nvml *n, char *why, size_t why_size);
void gpu_nvml_close(gpu_nvml *n);
/* One sample of GPU i (< n_devices); pending Xid events are counted first. */
void gpu_nvml_read(gpu_nvml *n, unsigned i, gpu_nvml_dev *out);

#endif
