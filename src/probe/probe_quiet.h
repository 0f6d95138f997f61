/* probe_quiet.h - was the machine quiet while the probes measured it?
 *
 * A figure measured while neighbours steal the CPUs, another job streams
 * to the disk or the kernel reclaims memory says more about them than about
 * the machine. So the probe run samples the kernel's counters
 * (base/sysstat) in windows: `before` (a short idle wait before the first
 * probe, when nothing of ours runs) and one window per probe from its start
 * to its end. Each window is judged against limits, and every limit crossed
 * becomes a reason with its number:
 *   others_cpu_pct     user-mode CPU time of other processes (user + nice
 *                      of all CPUs minus this process's own user time, its
 *                      threads and reaped children), % of all CPUs' time.
 *                      Kernel threads are left out: our own writeback and
 *                      packet processing run there.
 *   steal_pct          time the hypervisor gave the vCPUs to someone else
 *   iowait_pct         idle time with I/O outstanding (not judged during
 *                      the storage probe: that I/O is its own)
 *   psi_*_pct          share of the window with a task stalled on CPU,
 *                      memory or I/O (PSI "some"); memory always, cpu and io
 *                      only where our own threads cannot cause them (cpu in
 *                      `before`, io outside the storage probe)
 *   others_disk_bytes_per_s  disk traffic of whole non-virtual disks minus
 *                      what this process caused (/proc/self/io)
 *   net_bytes_per_s    traffic of non-virtual interfaces (not judged during
 *                      net and coll, which make their own)
 *   freq_change_pct    (max - min) / max of the CPU clocks seen over the
 *                      whole run (cpufreq; cpuinfo "cpu MHz" in a VM)
 * The run is quiet when every window is. Everything is also in the JSON
 * (`quiet`), so a reader can apply other limits.
 */
#ifndef CP_PROBE_PROBE_QUIET_H
#define CP_PROBE_PROBE_QUIET_H

#include "../base/sysstat.h"
#include "../model/report.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct probe_quiet_limits {
    double others_cpu_pct, steal_pct, iowait_pct;
    double psi_cpu_pct, psi_memory_pct, psi_io_pct;
    double others_disk_bytes_per_s, net_bytes_per_s;
    double freq_change_pct;
} probe_quiet_limits;

/* The defaults (documented in docs/METRICS.md, "Quietness"). */
void probe_quiet_default_limits(probe_quiet_limits *l);

/* What a window may not judge because the probe in it makes that traffic. */
enum { PROBE_OWN_DISK = 1u << 0, PROBE_OWN_NET = 1u << 1, PROBE_OWN_CPU_PSI = 1u << 2 };

typedef struct probe_quiet_window {
    char what[32]; /* "before" or the probe's name */
    unsigned own;  /* PROBE_OWN_* */
    double seconds;
    int n_cpus;
    double others_cpu_pct, steal_pct, iowait_pct;
    double psi_cpu_pct, psi_memory_pct, psi_io_pct;
    double disk_bytes_per_s, others_disk_bytes_per_s, disk_queue_avg, net_bytes_per_s;
    double freq_min_mhz, freq_max_mhz;
    double load1; /* at the window's end */
    bool quiet;
    char reasons[768]; /* "; "-separated, "" when quiet */
} probe_quiet_window;

/* Judge one window from the delta of its two samples (end: the later one,
 * for the load average). Pure: the unit tests feed fixture samples. */
void probe_quiet_assess(const char *what, unsigned own, const cp_ss_delta *d, const cp_ss_sample *end,
                        const probe_quiet_limits *lim, probe_quiet_window *w);

typedef struct probe_quiet {
    probe_quiet_limits limits;
    const cp_fsroot *fs;
    cp_ss_sample mark;   /* the last sample taken (a window's start) */
    bool have_mark;
    probe_quiet_window *w;
    size_t n, cap;
    double freq_min_mhz, freq_max_mhz; /* over every sample */
    int freq_source;
} probe_quiet;

void probe_quiet_init(probe_quiet *q, const cp_fsroot *fs);
void probe_quiet_free(probe_quiet *q);
/* Start a window now (sample). */
void probe_quiet_start(probe_quiet *q);
/* End the window started last (sample) and judge it. */
void probe_quiet_end(probe_quiet *q, const char *what, unsigned own);
/* The `before` window: sample, wait `seconds`, sample. */
void probe_quiet_baseline(probe_quiet *q, double seconds);
/* Whether every window was quiet and the clocks held; the reasons of the
 * first windows that were not, with their numbers, into buf. */
bool probe_quiet_verdict(const probe_quiet *q, char *buf, size_t size);
/* The `quiet` object of the report. */
void probe_quiet_report(const probe_quiet *q, rep_report *r, rep_node *parent);

#endif
