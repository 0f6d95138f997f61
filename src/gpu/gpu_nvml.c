/* gpu_nvml.c - NVML alone for the monitor's samples (see gpu_nvml.h).
 *
 * Required symbols are the four without which there is no device to ask;
 * everything else is resolved one by one and asked only when present, so
 * a driver from before row remapping (R460) or field values still gives
 * the rest. A query that returns an error leaves its bit out of `have`.
 */
#include "gpu_nvml.h"
#include "gpu_dl.h"
#include "../base/util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define S(field, name) { name, offsetof(gpu_nvml, field) }
static const gpu_sym required[] = {
    S(Init, "nvmlInit_v2"), S(Shutdown, "nvmlShutdown"), S(GetCount, "nvmlDeviceGetCount_v2"),
    S(GetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2"),
};
static const gpu_sym optional[] = {
    S(GetName, "nvmlDeviceGetName"), S(GetUUID, "nvmlDeviceGetUUID"),
    S(GetUtilizationRates, "nvmlDeviceGetUtilizationRates"), S(GetClockInfo, "nvmlDeviceGetClockInfo"),
    S(GetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons"),
    S(GetMemoryInfo, "nvmlDeviceGetMemoryInfo"), S(GetPowerUsage, "nvmlDeviceGetPowerUsage"),
    S(GetTemperature, "nvmlDeviceGetTemperature"), S(GetPcieThroughput, "nvmlDeviceGetPcieThroughput"),
    S(GetPcieReplayCounter, "nvmlDeviceGetPcieReplayCounter"), S(GetFieldValues, "nvmlDeviceGetFieldValues"),
    S(GetTotalEccErrors, "nvmlDeviceGetTotalEccErrors"), S(GetRemappedRows, "nvmlDeviceGetRemappedRows"),
    S(EventSetCreate, "nvmlEventSetCreate"), S(RegisterEvents, "nvmlDeviceRegisterEvents"),
    S(EventSetWait, "nvmlEventSetWait_v2"), S(EventSetFree, "nvmlEventSetFree"),
};
#undef S

/* Xid events on one set for every GPU that supports them (the others are
 * simply not registered: NVML refuses them on some consumer boards). */
static void xid_open(gpu_nvml *n)
{
    if (!n->EventSetCreate || !n->RegisterEvents || !n->EventSetWait || n->EventSetCreate(&n->events) != 0) {
        n->events = NULL;
        return;
    }
    unsigned registered = 0;
    for (unsigned i = 0; i < n->n_devices; i++)
        registered += n->RegisterEvents(n->handles[i], GPU_NV_EVENT_XID, n->events) == 0;
    if (!registered) {
        if (n->EventSetFree)
            n->EventSetFree(n->events);
        n->events = NULL;
    }
}

int gpu_nvml_open(gpu_nvml *n, char *why, size_t why_size)
{
    memset(n, 0, sizeof *n);
    static const char *const names[] = { "libnvidia-ml.so.1", "libnvidia-ml.so" };
    n->lib = gpu_dl_open(names, CP_ARRAY_LEN(names), n->path, sizeof n->path);
    if (!n->lib) {
        snprintf(why, why_size, "library not found: %s (NVIDIA driver not installed)", n->path);
        return -1;
    }
    const char *missing = gpu_dl_resolve(n->lib, n, required, CP_ARRAY_LEN(required));
    if (missing) {
        snprintf(why, why_size, "symbol missing: %s in %s", missing, n->path);
        memset(n, 0, sizeof *n);
        return -1;
    }
    gpu_dl_resolve_optional(n->lib, n, optional, CP_ARRAY_LEN(optional));
    int e = n->Init();
    if (e != 0) {
        snprintf(why, why_size, "nvmlInit failed: NVML error %d", e);
        memset(n, 0, sizeof *n);
        return -1;
    }
    unsigned count = 0;
    if (n->GetCount(&count) != 0 || count == 0) {
        snprintf(why, why_size, "no device: nvmlDeviceGetCount found none");
        n->Shutdown();
        memset(n, 0, sizeof *n);
        return -1;
    }
    if (count > GPU_NVML_MAX_DEVICES)
        count = GPU_NVML_MAX_DEVICES;
    for (unsigned i = 0; i < count; i++)
        if (n->GetHandleByIndex(i, &n->handles[i]) != 0)
            n->handles[i] = NULL;
    n->n_devices = count;
    xid_open(n);
    return 0;
}

void gpu_nvml_close(gpu_nvml *n)
{
    if (n->lib) {
        if (n->events && n->EventSetFree)
            n->EventSetFree(n->events);
        n->Shutdown();
    }
    /* the library stays loaded, as in gpu_close: its threads may outlive Shutdown */
    memset(n, 0, sizeof *n);
}

/* Count the Xid events that are pending (never waits). */
static void xid_drain(gpu_nvml *n)
{
    if (!n->events)
        return;
    for (int guard = 0; guard < 4096; guard++) {
        gpu_nv_event ev;
        memset(&ev, 0, sizeof ev);
        if (n->EventSetWait(n->events, &ev, 0) != 0)
            return; /* GPU_NV_ERROR_TIMEOUT: nothing pending */
        if (!(ev.event_type & GPU_NV_EVENT_XID))
            continue;
        for (unsigned i = 0; i < n->n_devices; i++)
            if (n->handles[i] == ev.device) {
                n->xid_total[i]++;
                n->last_xid[i] = (unsigned)ev.event_data;
            }
    }
}

static void read_nvlink(gpu_nvml *n, void *h, gpu_nvml_dev *o)
{
    if (!n->GetFieldValues)
        return;
    gpu_nv_field f[2];
    memset(f, 0, sizeof f);
    f[0].field_id = GPU_NV_FI_NVLINK_DATA_TX;
    f[1].field_id = GPU_NV_FI_NVLINK_DATA_RX;
    if (n->GetFieldValues(h, 2, f) != 0 || f[0].nvml_return != 0 || f[1].nvml_return != 0)
        return;
    o->nvlink_tx_bytes_total = f[0].value.ull * 1024;
    o->nvlink_rx_bytes_total = f[1].value.ull * 1024;
    o->have |= GPU_NVH_NVLINK;
}

static void read_health(gpu_nvml *n, void *h, gpu_nvml_dev *o)
{
    unsigned v;
    if (n->GetPcieReplayCounter && n->GetPcieReplayCounter(h, &v) == 0) {
        o->pcie_replay_total = v;
        o->have |= GPU_NVH_REPLAY;
    }
    unsigned long long c, u;
    if (n->GetTotalEccErrors && n->GetTotalEccErrors(h, GPU_NV_MEMORY_ERROR_CORRECTED, GPU_NV_VOLATILE_ECC, &c) == 0 &&
        n->GetTotalEccErrors(h, GPU_NV_MEMORY_ERROR_UNCORRECTED, GPU_NV_VOLATILE_ECC, &u) == 0) {
        o->ecc_corrected_total = c;
        o->ecc_uncorrected_total = u;
        o->have |= GPU_NVH_ECC;
    }
    if (n->GetRemappedRows &&
        n->GetRemappedRows(h, &o->remap_correctable, &o->remap_uncorrectable, &o->remap_pending, &o->remap_failure) == 0)
        o->have |= GPU_NVH_REMAP;
    else
        o->remap_correctable = o->remap_uncorrectable = o->remap_pending = o->remap_failure = 0;
}

void gpu_nvml_read(gpu_nvml *n, unsigned i, gpu_nvml_dev *o)
{
    memset(o, 0, sizeof *o);
    o->index = i;
    if (i >= n->n_devices || !n->handles[i])
        return;
    void *h = n->handles[i];
    xid_drain(n);
    if (n->events) {
        o->xid_total = n->xid_total[i];
        o->last_xid = n->last_xid[i];
        o->have |= GPU_NVH_XID;
    }
    if (n->GetName && n->GetName(h, o->name, sizeof o->name) != 0)
        o->name[0] = 0;
    if (n->GetUUID && n->GetUUID(h, o->uuid, sizeof o->uuid) != 0)
        o->uuid[0] = 0;
    gpu_nv_utilization ut;
    if (n->GetUtilizationRates && n->GetUtilizationRates(h, &ut) == 0) {
        o->util_pct = ut.gpu;
        o->mem_util_pct = ut.memory;
        o->have |= GPU_NVH_UTIL;
    }
    unsigned v, w;
    if (n->GetClockInfo && n->GetClockInfo(h, GPU_NV_CLOCK_SM, &v) == 0) {
        o->sm_clock_mhz = v;
        o->have |= GPU_NVH_CLOCK;
    }
    unsigned long long reasons;
    if (n->GetCurrentClocksThrottleReasons && n->GetCurrentClocksThrottleReasons(h, &reasons) == 0) {
        o->throttle_reasons = reasons;
        o->have |= GPU_NVH_THROTTLE;
    }
    gpu_nv_memory m;
    if (n->GetMemoryInfo && n->GetMemoryInfo(h, &m) == 0) {
        o->mem_used_bytes = m.used;
        o->mem_total_bytes = m.total;
        o->have |= GPU_NVH_MEMORY;
    }
    if (n->GetPowerUsage && n->GetPowerUsage(h, &v) == 0) {
        o->power_w = v / 1000.0;
        o->have |= GPU_NVH_POWER;
    }
    if (n->GetTemperature && n->GetTemperature(h, GPU_NV_TEMPERATURE_GPU, &v) == 0) {
        o->temp_c = v;
        o->have |= GPU_NVH_TEMP;
    }
    if (n->GetPcieThroughput && n->GetPcieThroughput(h, GPU_NV_PCIE_UTIL_TX_BYTES, &v) == 0 &&
        n->GetPcieThroughput(h, GPU_NV_PCIE_UTIL_RX_BYTES, &w) == 0) {
        o->pcie_tx_bytes_per_s = v * 1024.0;
        o->pcie_rx_bytes_per_s = w * 1024.0;
        o->have |= GPU_NVH_PCIE;
    }
    read_nvlink(n, h, o);
    read_health(n, h, o);
}
