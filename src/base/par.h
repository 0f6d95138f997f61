/* par.h - run independent jobs on up to N threads.
 *
 * The one concurrency primitive of the tool: readers parse one input file
 * per job, analyzers one rank per job. Jobs are handed out in index order by
 * an atomic counter, so large and small files mix well. With nthreads <= 1
 * everything runs on the calling thread (deterministic, easy to debug).
 */
#ifndef CP_BASE_PAR_H
#define CP_BASE_PAR_H

#include <stddef.h>

typedef void (*cp_par_fn)(void *ctx, size_t index);

/* Calls fn(ctx, i) for every i in [0, n). Returns when all are done. */
void cp_par_for(size_t n, int nthreads, cp_par_fn fn, void *ctx);

#endif
