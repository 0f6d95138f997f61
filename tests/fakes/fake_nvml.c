/* fake_nvml.c - a fake NVML for tests: every device is an "H100 80GB HBM3
 * (fake)" with a 5120-bit bus at 2619 MHz and a PCIe gen5 x16 link, so the
 * peaks chainprof derives are known: 5120/8 x 2619e6 x 2 = 3352.32 GB/s and
 * 32 GT/s x 128/130 x 16 / 8 = 63.015 GB/s. */
#include <stdio.h>
#include <stdint.h>

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) { *h = (void *)(uintptr_t)(i + 1); return 0; }
int nvmlDeviceGetName(void *h, char *buf, unsigned n) { snprintf(buf, n, "H100 80GB HBM3 (fake %d)", (int)(uintptr_t)h - 1); return 0; }
int nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned *mhz) { (void)h; *mhz = type == 2 ? 2619 : 1980; return 0; }
int nvmlDeviceGetMemoryBusWidth(void *h, unsigned *w) { (void)h; *w = 5120; return 0; }
int nvmlDeviceGetMaxPcieLinkGeneration(void *h, unsigned *g) { (void)h; *g = 5; return 0; }
int nvmlDeviceGetMaxPcieLinkWidth(void *h, unsigned *w) { (void)h; *w = 16; return 0; }
