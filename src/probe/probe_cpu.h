/* probe_cpu.h - pure helpers of the compute probe (unit-tested). */
#ifndef CP_PROBE_PROBE_CPU_H
#define CP_PROBE_PROBE_CPU_H

#include "../base/fsroot.h"

/* Theoretical peak GFLOP/s = cores x GHz x fma_units x lanes x 2; NaN when
 * any input is unknown (<= 0 or NaN). */
double probe_cpu_peak_gflops(int cores, double ghz, int fma_units, int lanes);
/* The CPU clock in GHz (cpufreq max, else /proc/cpuinfo "cpu MHz", read
 * through fs); NaN if unknown. */
double probe_cpu_ghz(const cp_fsroot *fs);
/* The running clock measured with a chain of dependent additions (GHz). */
double probe_cpu_ghz_measured(void);

#endif
