/* probe_mem.h - pure parts of the memory probe and the NUMA-aware thread
 * team it runs on (unit-tested). */
#ifndef CP_PROBE_PROBE_MEM_H
#define CP_PROBE_PROBE_MEM_H

#include <stddef.h>
#include <stdint.h>

/* The four STREAM kernels, in STREAM's order. */
typedef enum probe_stream_kernel { PROBE_COPY, PROBE_SCALE, PROBE_ADD, PROBE_TRIAD, PROBE_N_KERNELS } probe_stream_kernel;

/* Bytes a kernel moves over n doubles, STREAM's convention: reads plus
 * writes, no write-allocate traffic (copy/scale 2 arrays, add/triad 3). */
uint64_t probe_stream_bytes(probe_stream_kernel k, uint64_t n);
const char *probe_stream_name(probe_stream_kernel k);

/* Per-array size for a memory run: an explicit size wins; else the larger
 * of 4 x the last-level cache and the floor (quick 64 MiB, full 256 MiB), so
 * the arrays never fit in cache, capped at 128 MiB (quick) / 1 GiB (full) so a
 * run stays short. Rounded down to a multiple of 64 bytes. */
uint64_t probe_stream_array_bytes(uint64_t explicit_bytes, uint64_t llc_bytes, int quick);

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

/* Last-level cache size in bytes (hwloc, else sysfs); 0 when unknown. */
uint64_t probe_llc_bytes(void);

#endif
