/* probe_storage.h - the parts of the storage probe that are unit-tested. */
#ifndef CP_PROBE_PROBE_STORAGE_H
#define CP_PROBE_PROBE_STORAGE_H

#include "../base/error.h"

#include <stdint.h>

/* Stall a compute loop saw: its wall time minus `steps` undisturbed steps
 * of step_s each, never negative. */
double probe_ckpt_stall_s(double loop_s, int steps, double step_s);

/* Pages of the open regular file fd (its first size bytes) resident in the
 * page cache, counted with mmap + mincore (the mapping faults nothing in).
 * Fills *resident and *total (pages); returns 0, or a negative cp_status
 * with err set (path only names the file in the message). */
int probe_file_cached_pages(int fd, const char *path, uint64_t size, uint64_t *resident, uint64_t *total,
                            cp_error *err);

/* Evicts the file from the page cache so that the next read is served by
 * the device: fsync first (dirty or under-writeback pages survive
 * POSIX_FADV_DONTNEED), then posix_fadvise(DONTNEED), checked with
 * mincore and repeated (up to 3 times) while pages remain. *resident gets
 * the pages still cached afterwards (0 on a filesystem that honours the
 * advice; tmpfs cannot drop its pages), *total the file's pages. Returns 0
 * or a negative cp_status with err set. */
int probe_drop_file_cache(int fd, const char *path, uint64_t size, uint64_t *resident, uint64_t *total,
                          cp_error *err);

#endif
