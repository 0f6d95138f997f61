/* fake_nvml.c - a fake NVML for tests: every device is an "H100 80GB HBM3
 * (fake)" with a 5120-bit bus at 2619 MHz and a PCIe gen5 x16 link, so the
 * peaks chainprof derives are known: 5120/8 x 2619e6 x 2 = 3352.32 GB/s and
 * 32 GT/s x 128/130 x 16 / 8 = 63.015 GB/s.
 *
 * The monitor's samples (src/gpu/gpu_nvml.c): FAKE_NVML_GPUS devices
 * (default 2). GPU 0 is healthy: 75 % busy, 40 % memory busy, 1755 MHz, no
 * throttling, 30 GiB of 80 GiB used, 412.5 W, 61 C, PCIe 1000/2000 KB/s
 * tx/rx, NVLink 4096/8192 KiB, no errors. GPU 1 is in trouble: 96 % busy,
 * 1410 MHz, throttled by SW power cap and HW slowdown (0x4 | 0x8), 700 W,
 * 87 C, its PCIe replay counter rising by 3 on every read, 2 corrected ECC
 * errors, 1 correctable remapped row, and one Xid 79 event pending at start.
 * (The fake's counters are process globals: it is a test library.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dev_of(void *h) { return (int)(uintptr_t)h - 1; }

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n)
{
    const char *e = getenv("FAKE_NVML_GPUS");
    *n = e ? (unsigned)atoi(e) : 2;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) { *h = (void *)(uintptr_t)(i + 1); return 0; }
int nvmlDeviceGetName(void *h, char *buf, unsigned n) { snprintf(buf, n, "H100 80GB HBM3 (fake %d)", dev_of(h)); return 0; }
int nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned *mhz) { (void)h; *mhz = type == 2 ? 2619 : 1980; return 0; }
int nvmlDeviceGetMemoryBusWidth(void *h, unsigned *w) { (void)h; *w = 5120; return 0; }
int nvmlDeviceGetMaxPcieLinkGeneration(void *h, unsigned *g) { (void)h; *g = 5; return 0; }
int nvmlDeviceGetMaxPcieLinkWidth(void *h, unsigned *w) { (void)h; *w = 16; return 0; }

int nvmlDeviceGetUUID(void *h, char *buf, unsigned n)
{
    snprintf(buf, n, "GPU-fa4e0000-0000-0000-0000-00000000000%d", dev_of(h));
    return 0;
}
typedef struct { unsigned gpu, memory; } util_t;
int nvmlDeviceGetUtilizationRates(void *h, util_t *u)
{
    u->gpu = dev_of(h) == 1 ? 96 : 75;
    u->memory = dev_of(h) == 1 ? 55 : 40;
    return 0;
}
int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz)
{
    if (type != 1)
        return 3; /* NVML_ERROR_NOT_SUPPORTED: only the SM clock is faked */
    *mhz = dev_of(h) == 1 ? 1410 : 1755;
    return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *r)
{
    *r = dev_of(h) == 1 ? 0x4 | 0x8 : 0;
    return 0;
}
typedef struct { unsigned long long total, free, used; } mem_t;
int nvmlDeviceGetMemoryInfo(void *h, mem_t *m)
{
    m->total = 80ULL << 30;
    m->used = (dev_of(h) == 1 ? 70ULL : 30ULL) << 30;
    m->free = m->total - m->used;
    return 0;
}
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) { *mw = dev_of(h) == 1 ? 700000 : 412500; return 0; }
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *c)
{
    (void)sensor;
    *c = dev_of(h) == 1 ? 87 : 61;
    return 0;
}
int nvmlDeviceGetPcieThroughput(void *h, int counter, unsigned *kbs)
{
    (void)h;
    *kbs = counter == 0 ? 1000 : 2000;
    return 0;
}
static unsigned replay_reads[64];
int nvmlDeviceGetPcieReplayCounter(void *h, unsigned *v)
{
    int d = dev_of(h);
    *v = d == 1 && d < 64 ? 3 * ++replay_reads[d] : 0;
    return 0;
}
typedef struct {
    unsigned field_id, scope_id;
    long long timestamp, latency_us;
    int value_type, nvml_return;
    union { double d; unsigned long long ull; } value;
} field_t;
int nvmlDeviceGetFieldValues(void *h, int n, field_t *f)
{
    for (int i = 0; i < n; i++) {
        f[i].value_type = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
        f[i].nvml_return = 0;
        if (f[i].field_id == 138)
            f[i].value.ull = 4096ULL * (unsigned)(dev_of(h) + 1);
        else if (f[i].field_id == 139)
            f[i].value.ull = 8192ULL * (unsigned)(dev_of(h) + 1);
        else
            f[i].nvml_return = 3;
    }
    return 0;
}
int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter, unsigned long long *v)
{
    (void)counter;
    *v = dev_of(h) == 1 && type == 0 ? 2 : 0;
    return 0;
}
int nvmlDeviceGetRemappedRows(void *h, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure)
{
    *corr = dev_of(h) == 1 ? 1 : 0;
    *unc = *pending = *failure = 0;
    return 0;
}
typedef struct {
    void *device;
    unsigned long long event_type, event_data;
    unsigned gpu_instance_id, compute_instance_id;
} event_t;
static int xid_pending = 1;
int nvmlEventSetCreate(void **set) { *set = (void *)(uintptr_t)0x5e7; return 0; }
int nvmlDeviceRegisterEvents(void *h, unsigned long long types, void *set) { (void)h; (void)types; (void)set; return 0; }
int nvmlEventSetWait_v2(void *set, event_t *ev, unsigned timeout_ms)
{
    (void)set;
    (void)timeout_ms;
    unsigned n = 0;
    nvmlDeviceGetCount_v2(&n);
    if (!xid_pending || n < 2)
        return 10; /* NVML_ERROR_TIMEOUT */
    xid_pending = 0;
    memset(ev, 0, sizeof *ev);
    ev->device = (void *)(uintptr_t)2; /* GPU 1 */
    ev->event_type = 0x8;
    ev->event_data = 79;
    return 0;
}
int nvmlEventSetFree(void *set) { (void)set; return 0; }
