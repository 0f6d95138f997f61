/* sysstat.h - samplers of the kernel's machine-wide counters.
 *
 * One sample reads, through a cp_fsroot (base/fsroot.h), the counters a
 * performance tool needs to say whether a machine is quiet and where its
 * time goes:
 *   CP_SS_STAT      /proc/stat: per-CPU and total user, nice, system, idle,
 *                   iowait, irq, softirq, steal ticks (USER_HZ); context
 *                   switches; running and blocked tasks
 *   CP_SS_LOADAVG   /proc/loadavg: 1/5/15-minute load, runnable/total tasks
 *   CP_SS_PSI       /proc/pressure/{cpu,memory,io}: some/full averages and
 *                   total stall microseconds (absent before Linux 4.20 or
 *                   with psi=0: `have` says so)
 *   CP_SS_CPUFREQ   current clock per CPU: cpufreq's scaling_cur_freq, else
 *                   /proc/cpuinfo "cpu MHz" (what a VM without cpufreq
 *                   shows), with the source named
 *   CP_SS_MEMINFO   /proc/meminfo in bytes (-1 for fields the kernel lacks)
 *   CP_SS_DISKSTATS /proc/diskstats per device, each marked whole (listed in
 *                   /sys/block) and virtual (/sys/block/NAME links into
 *                   /devices/virtual: loop, zram, dm, md, whose traffic also
 *                   shows on a real disk)
 *   CP_SS_NETDEV    /proc/net/dev per interface, marked virtual the same way
 *                   through /sys/class/net (lo, veth, bridges, ifb)
 *   CP_SS_SELF      /proc/self/stat CPU ticks (threads and reaped children)
 *                   and /proc/self/io bytes: what the sampling process itself
 *                   did, so its own load can be told from everyone else's
 * A source that cannot be read is left out of `have`; only a file that is
 * present and malformed is an error (the sample keeps what parsed).
 *
 * Built for reuse: the probes' quietness check takes a sample before and
 * after each probe; `chainprof monitor` samples on a period and turns the
 * counters into rates (cp_ss_delta) or Prometheus counters (the raw
 * fields). A sample owns growable arrays and the text buffer its files are
 * read into, all reused by the next cp_ss_take on the same struct, so
 * periodic sampling allocates nothing once they are sized (and no file is
 * cut short: /proc/stat of a thousand CPUs is 100 KB). The cp_ss_parse_* functions take a
 * file's text and are what the unit tests check against captured trees
 * (tests/fixtures/fsroot).
 *
 * Units: ticks are USER_HZ (CP_SS_USER_HZ, 100 on every Linux ABI), sectors
 * 512 bytes whatever the device's block size, times in ms as the kernel
 * counts them, bytes as bytes, clocks in MHz.
 */
#ifndef CP_BASE_SYSSTAT_H
#define CP_BASE_SYSSTAT_H

#include "error.h"
#include "fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_SS_USER_HZ 100 /* /proc/stat and /proc/self/stat tick rate (fixed by the kernel ABI) */
#define CP_SS_SECTOR_BYTES 512

enum {
    CP_SS_STAT = 1u << 0,
    CP_SS_LOADAVG = 1u << 1,
    CP_SS_PSI = 1u << 2,
    CP_SS_CPUFREQ = 1u << 3,
    CP_SS_MEMINFO = 1u << 4,
    CP_SS_DISKSTATS = 1u << 5,
    CP_SS_NETDEV = 1u << 6,
    CP_SS_SELF = 1u << 7,
    CP_SS_ALL = 0xffu,
};

typedef struct cp_ss_cpu {
    int cpu; /* -1: the "cpu" line (all CPUs summed) */
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
} cp_ss_cpu;

/* Ticks the CPU(s) spent: user + nice + system + idle + iowait + irq +
 * softirq + steal (guest time is already inside user and nice). */
uint64_t cp_ss_cpu_ticks(const cp_ss_cpu *c);
/* Ticks doing work: user + nice + system + irq + softirq. */
uint64_t cp_ss_cpu_busy_ticks(const cp_ss_cpu *c);

typedef struct cp_ss_loadavg {
    double avg1, avg5, avg15;
    int runnable, tasks; /* "5/118": runnable now (the reader included), all tasks */
} cp_ss_loadavg;

enum { CP_SS_PSI_CPU, CP_SS_PSI_MEMORY, CP_SS_PSI_IO, CP_SS_PSI_N };
typedef struct cp_ss_psi_line {
    bool valid;
    double avg10, avg60, avg300; /* percent of wall time with a task stalled */
    uint64_t total_us;           /* cumulative stall time */
} cp_ss_psi_line;
typedef struct cp_ss_psi {
    cp_ss_psi_line some, full; /* cpu's "full" is all zeros before Linux 5.13 */
} cp_ss_psi;
const char *cp_ss_psi_name(int resource); /* "cpu", "memory", "io" */

typedef struct cp_ss_meminfo {
    int64_t total_bytes, free_bytes, available_bytes, buffers_bytes, cached_bytes, dirty_bytes, writeback_bytes,
        shmem_bytes, swap_total_bytes, swap_free_bytes, anon_huge_bytes;
} cp_ss_meminfo;

typedef struct cp_ss_disk {
    char name[40];
    unsigned major, minor;
    uint64_t reads, reads_merged, read_sectors, read_ms;
    uint64_t writes, writes_merged, write_sectors, write_ms;
    uint64_t in_flight, io_ms, weighted_ms; /* queue: requests now, ms busy, ms x requests */
    uint64_t discards, discards_merged, discard_sectors, discard_ms; /* 0 before Linux 4.18 */
    uint64_t flushes, flush_ms;                                      /* 0 before Linux 5.5 */
    bool whole; /* a disk, not a partition (listed in /sys/block) */
    bool virt;  /* a virtual block device (loop, zram, dm, md) */
} cp_ss_disk;

typedef struct cp_ss_net {
    char name[40];
    uint64_t rx_bytes, rx_packets, rx_errs, rx_drop, tx_bytes, tx_packets, tx_errs, tx_drop;
    bool virt; /* lo, veth, bridge, tun, ifb: not a NIC */
} cp_ss_net;

typedef struct cp_ss_freq {
    int cpu;
    double cur_mhz;
} cp_ss_freq;

enum { CP_SS_FREQ_NONE, CP_SS_FREQ_CPUFREQ, CP_SS_FREQ_CPUINFO };

typedef struct cp_ss_self {
    uint64_t utime, stime, cutime, cstime; /* ticks: this process's threads, its reaped children */
    int64_t read_bytes, write_bytes;       /* storage I/O it caused (/proc/self/io); -1 unknown */
} cp_ss_self;

typedef struct cp_ss_sample {
    int64_t mono_ns; /* CLOCK_MONOTONIC when taken */
    unsigned have;   /* CP_SS_* sources read */
    cp_ss_cpu total;
    cp_ss_cpu *cpus;
    size_t n_cpus, cap_cpus;
    uint64_t ctxt, procs_running, procs_blocked;
    cp_ss_loadavg load;
    cp_ss_psi psi[CP_SS_PSI_N];
    cp_ss_meminfo mem;
    cp_ss_disk *disks;
    size_t n_disks, cap_disks;
    cp_ss_net *nets;
    size_t n_nets, cap_nets;
    cp_ss_freq *freqs;
    size_t n_freqs, cap_freqs;
    int freq_source; /* CP_SS_FREQ_* */
    cp_ss_self self;
    char *text;      /* the file being parsed (reused, grown as files need) */
    size_t cap_text;
} cp_ss_sample;

/* Read the sources in `what` into s (its arrays are reused). Returns 0, or
 * CP_ERR_FORMAT with err naming the file when one is malformed; sources that
 * are absent are only missing from s->have. */
int cp_ss_take(const cp_fsroot *fs, unsigned what, cp_ss_sample *s, cp_error *err);
void cp_ss_sample_free(cp_ss_sample *s);
/* Copy a sample (arrays duplicated into dst, which must be freed). */
void cp_ss_sample_copy(cp_ss_sample *dst, const cp_ss_sample *src);

/* Parsers of one file's text; 0 or CP_ERR_FORMAT. The marks (whole, virt)
 * of disks and interfaces come from sysfs in cp_ss_take, not from these. */
int cp_ss_parse_stat(const char *text, cp_ss_sample *s);
int cp_ss_parse_loadavg(const char *text, cp_ss_loadavg *out);
int cp_ss_parse_psi(const char *text, cp_ss_psi *out);
int cp_ss_parse_meminfo(const char *text, cp_ss_meminfo *out);
int cp_ss_parse_diskstats(const char *text, cp_ss_sample *s);
int cp_ss_parse_netdev(const char *text, cp_ss_sample *s);
/* "cpu MHz" lines of /proc/cpuinfo in processor order into s->freqs. */
int cp_ss_parse_cpuinfo_mhz(const char *text, cp_ss_sample *s);
/* /proc/self/stat (fields 14-17) and /proc/self/io into out. */
int cp_ss_parse_self_stat(const char *text, cp_ss_self *out);
int cp_ss_parse_self_io(const char *text, cp_ss_self *out);

const cp_ss_disk *cp_ss_disk_find(const cp_ss_sample *s, const char *name);
const cp_ss_net *cp_ss_net_find(const cp_ss_sample *s, const char *name);

/* What happened between two samples a (earlier) and b. Counters that went
 * backwards (a device removed and re-added) count as 0. Fields whose source
 * either sample lacks are NaN. */
typedef struct cp_ss_delta {
    double seconds;
    int n_cpus;
    /* percent of all CPUs' time (ticks of the "cpu" line) */
    double user_pct, system_pct, iowait_pct, steal_pct, idle_pct, busy_pct;
    double cpu_s;      /* CPU-seconds that passed on all CPUs (the "cpu" line's ticks) */
    double busy_cpu_s; /* of which work (user, nice, system, irq, softirq) */
    double self_cpu_s; /* this process's (threads + reaped children), user + system */
    double self_user_cpu_s; /* of which user */
    /* whole, non-virtual disks and non-virtual interfaces, summed */
    double disk_read_bytes, disk_write_bytes, disk_queue_avg; /* queue: mean requests in flight */
    double self_read_bytes, self_write_bytes;
    double net_rx_bytes, net_tx_bytes;
    double psi_some_pct[CP_SS_PSI_N]; /* share of the interval with a task stalled on it */
    double psi_full_pct[CP_SS_PSI_N];
    double freq_min_mhz, freq_max_mhz; /* over both samples and all CPUs */
} cp_ss_delta;
void cp_ss_delta_of(const cp_ss_sample *a, const cp_ss_sample *b, cp_ss_delta *out);

#endif
