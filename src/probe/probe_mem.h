/* probe_mem.h - pure parts of the memory probe, its working-set sweep and
 * the NUMA-aware thread team it runs on (unit-tested). */
#ifndef CP_PROBE_PROBE_MEM_H
#define CP_PROBE_PROBE_MEM_H

#include "../base/fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The four STREAM kernels, in STREAM's order. */
typedef enum probe_stream_kernel { PROBE_COPY, PROBE_SCALE, PROBE_ADD, PROBE_TRIAD, PROBE_N_KERNELS } probe_stream_kernel;

/* Bytes a kernel moves over n doubles, STREAM's convention: reads plus
 * writes, no write-allocate traffic (copy/scale 2 arrays, add/triad 3). */
uint64_t probe_stream_bytes(probe_stream_kernel k, uint64_t n);
const char *probe_stream_name(probe_stream_kernel k);

/* Per-array size for the STREAM kernels: an explicit size wins; else the
 * larger of 4 x cache_bytes (the largest cache found: the sweep's or the
 * OS's, STREAM's rule) and the floor (quick 64 MiB, full 256 MiB), at most
 * cap_bytes (what memory allows; 0 = no bound). *capped (may be NULL) is set
 * when the arrays are below 4 x cache_bytes (the bound or an explicit size
 * made them so: they may hold cache hits). Rounded down to a multiple of 64
 * bytes. */
uint64_t probe_stream_array_bytes(uint64_t explicit_bytes, uint64_t cache_bytes, int quick, uint64_t cap_bytes,
                                  bool *capped);

/* Contiguous chunk [*lo, *hi) of n items for worker `tid` of `nthreads`. */
void probe_chunk(uint64_t n, int tid, int nthreads, uint64_t *lo, uint64_t *hi);

/* A team of pinned threads running phases in lockstep. Thread i is bound
 * to the i-th core in hwloc's order, cores of one NUMA node after another
 * with threads spread round-robin over nodes, so memory first-touched by a
 * thread is local to it. fn runs on every thread for every phase; the
 * team's run() returns the wall seconds of the phase (barrier to barrier). */
typedef struct probe_team probe_team;
typedef void (*probe_team_fn)(void *arg, int tid, int nthreads, int phase);
probe_team *probe_team_new(int nthreads, probe_team_fn fn, void *arg);
double probe_team_run(probe_team *t, int phase);
int probe_team_size(const probe_team *t);
/* How threads were placed, e.g. "hwloc: 2 threads on 2 cores of 1 NUMA node". */
const char *probe_team_placement(const probe_team *t);
void probe_team_free(probe_team *t);

/* ---- the caches the OS reports (sysfs, through fs) ---- */

typedef struct probe_cache {
    int level;               /* 1, 2, 3, 4 */
    uint64_t instance_bytes; /* one instance */
    int instances;           /* distinct shared_cpu_list sets */
    uint64_t total_bytes;    /* all instances: what a sweep on every core can use */
} probe_cache;

/* Data and unified caches of /sys/devices/system/cpu/cpu* /cache/index*,
 * one entry per level (instruction caches left out), by level. Returns the
 * number of levels (0 when sysfs has none, as in some containers). */
size_t probe_caches(const cp_fsroot *fs, probe_cache *out, size_t max);
/* Total bytes of the highest level; 0 when unknown. */
uint64_t probe_llc_bytes(const cp_fsroot *fs);
/* "64K", "1024K", "32M" as sysfs writes cache sizes -> bytes; 0 when bad. */
uint64_t probe_parse_cache_size(const char *s);

/* The DRAM peak the DMI memory devices allow (type 17 under
 * /sys/firmware/dmi/entries, root only): the sum over populated devices of
 * configured MT/s (else rated) x data width / 8, in GB/s; an upper bound,
 * since devices sharing a channel do not add up. NaN when none is readable;
 * *dimms gets the devices counted. */
double probe_dmi_mem_peak_gbps(const cp_fsroot *fs, int *dimms);

/* ---- the working-set sweep ---- */

/* One working set: the three arrays of a triad together, ws_bytes in all. */
typedef struct probe_sweep_point {
    uint64_t ws_bytes;
    double gbps; /* median of the point's repetitions (STREAM triad bytes) */
    double cv;   /* their coefficient of variation */
} probe_sweep_point;

/* A run of consecutive points whose bandwidths stay within
 * PROBE_PLATEAU_TOL of the run's median: a cache level (or DRAM) as the
 * sweep saw it. */
typedef struct probe_sweep_run {
    size_t first, last; /* point indexes, inclusive */
    double gbps;        /* median of the run's points */
} probe_sweep_run;

#define PROBE_PLATEAU_TOL 0.15       /* a plateau's points within +-15 % of its level */
#define PROBE_PLATEAU_MIN_POINTS 3   /* at 2x steps: a 4x range of working sets */

typedef struct probe_plateau {
    bool found;          /* the last >= PROBE_PLATEAU_MIN_POINTS points form a plateau */
    size_t first;        /* its first point */
    double gbps;         /* its level: the median of its points */
    uint64_t start_bytes;
    /* the largest working set still faster than the plateau (the point
     * before it, when that one is faster): what the caches, seen or hidden,
     * hold; 0 when the sweep never left the plateau or rose into it */
    uint64_t cache_bytes;
} probe_plateau;

/* Where bandwidth stops falling: the level D is the median of the last
 * PROBE_PLATEAU_MIN_POINTS points, and the plateau goes back from the last
 * point while each point is within PROBE_PLATEAU_TOL of D, stepping over a
 * single point off the level when the one before it is on it again (noise:
 * a cache makes every smaller working set faster, not one in the middle).
 * gbps is the median of the points on the level. Not found when fewer
 * than the minimum qualify (still falling, or too few points). */
void probe_find_plateau(const probe_sweep_point *p, size_t n, probe_plateau *out);
/* Split the curve into runs (see probe_sweep_run), left to right: a point
 * starts a new run when it is outside PROBE_PLATEAU_TOL of the current
 * run's first point. Returns the number of runs (at most max). */
size_t probe_sweep_runs(const probe_sweep_point *p, size_t n, probe_sweep_run *runs, size_t max);
/* Whether a sweep can stop: a plateau is found and the last working set is
 * at least 4 x both the OS's last-level cache and the plateau's cache_bytes,
 * and at least min_ws_bytes, so the flat part is not a (hidden) cache level
 * of its own. */
bool probe_sweep_settled(const probe_sweep_point *p, size_t n, uint64_t os_llc_bytes, uint64_t min_ws_bytes);

#endif
