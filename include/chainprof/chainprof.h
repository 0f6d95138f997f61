/* chainprof.h - chainprof's public C API: the collector that `chainprof run`
 * injects into a job, and the annotations a program (or the `chainprof`
 * Python package, through ctypes) gives it.
 *
 * The collector is libchainprof_collect.so. `chainprof run` preloads it into
 * every process of the job (LD_PRELOAD) and configures it through the
 * environment (CHAINPROF_OUT and friends, see docs/man/chainprof-run.txt).
 * Outside `chainprof run` every function here is a cheap no-op, so a program
 * may keep its annotations in production.
 *
 * Steps and regions are per process; a step may begin on one thread and end
 * on another, regions nest per thread (at most CHAINPROF_MAX_DEPTH deep,
 * deeper ones are counted and ignored). Names are interned once with
 * chainprof_name and passed by id afterwards, so a region costs two
 * timestamped records and no string work.
 *
 * Thread safety: every function may be called from any thread at any time,
 * including before `main` and after `exit` has begun (they then do nothing).
 */
#ifndef CHAINPROF_CHAINPROF_H
#define CHAINPROF_CHAINPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's meaning changes; new functions do not bump it. */
#define CHAINPROF_API_VERSION 1
#define CHAINPROF_MAX_DEPTH 32

/* What a region is, for the storage layer: file I/O inside a checkpoint
 * region is checkpoint I/O, inside a dataset or data-loader region dataset
 * I/O, whatever directory the file is in. */
typedef enum chainprof_region_kind {
    CHAINPROF_REGION_GENERIC = 0,
    CHAINPROF_REGION_CHECKPOINT = 1, /* torch.save, torch.distributed.checkpoint, ... */
    CHAINPROF_REGION_DATASET = 2,    /* reading samples */
    CHAINPROF_REGION_DATALOADER = 3, /* the training loop waiting for the next batch */
} chainprof_region_kind;

int chainprof_api_version(void);
/* 1 when this process records (under `chainprof run`), else 0. */
int chainprof_active(void);
/* One line saying what the collector does in this process ("trace to
 * DIR/FILE", "summary to ...", "inactive: CHAINPROF_OUT is not set"). */
const char *chainprof_status(void);

/* The id of a name (interned once per process; 0 when inactive or out of
 * room, which the other functions accept and record as "?"). */
uint32_t chainprof_name(const char *name);

/* Steps. chainprof_step_begin(-1) numbers the step itself (one more than
 * the last). Beginning a step while one is open ends the open one first. */
void chainprof_step_begin(int64_t step);
void chainprof_step_end(void);
/* End the open step (if any) and begin the next: one call per iteration. */
void chainprof_step_mark(void);

/* Regions on the calling thread. */
void chainprof_region_begin(uint32_t name_id, int kind);
void chainprof_region_end(void);

/* Write what has been recorded so far (the collector also does this on
 * its own every few tens of milliseconds and at exit). */
void chainprof_flush(void);

#ifdef __cplusplus
}
#endif

#endif
