/* probe_storage.h - the parts of the storage probe that are unit-tested. */
#ifndef CP_PROBE_PROBE_STORAGE_H
#define CP_PROBE_PROBE_STORAGE_H

#include "../base/error.h"
#include "../base/fsroot.h"
#include "../base/sysstat.h"

#include <stdbool.h>
#include <stddef.h>

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

/* The block device a filesystem sits on (probe_blockdev.c): the disk (a
 * partition's parent), its bus as the sysfs path names it, and its queue
 * limits (-1 / "" when sysfs lacks one). */
typedef struct probe_blockdev {
    bool found;
    char name[40];    /* the disk, e.g. "vda", "nvme0n1" */
    char part[40];    /* the partition the filesystem is on, "" for the whole disk */
    char bus[16];     /* "virtio", "nvme", "scsi", ... or "" */
    bool virt;        /* dm, md, loop: limits of a stacked device */
    int64_t nr_requests, max_sectors_kb, max_hw_sectors_kb, max_segments, max_segment_size, rotational,
        logical_block_size, physical_block_size, read_ahead_kb;
    char write_cache[24]; /* "write back" or "write through" */
    char scheduler[32];   /* the one in use */
} probe_blockdev;

/* Fill out for device MAJOR:MINOR through fs; CP_ERR_UNAVAILABLE when it has
 * no block device (tmpfs, overlay, NFS). */
int probe_blockdev_of(const cp_fsroot *fs, unsigned major, unsigned minor, probe_blockdev *out);
/* Requests one block of block_bytes in pages of page_bytes becomes on d at
 * most (when no two pages are physically adjacent, each is a segment of its
 * own), and the largest request's bytes; -1 when the limits are unknown. */
int probe_block_requests(const probe_blockdev *d, uint64_t block_bytes, size_t page_bytes, uint64_t *req_bytes);
/* One line for the method text: the device, its queue, and how a block splits. */
void probe_blockdev_describe(const probe_blockdev *d, uint64_t block_bytes, size_t page_bytes, char *buf, size_t size);

/* What one disk did between two diskstats samples. */
typedef struct probe_disk_io {
    bool valid;
    uint64_t reads, writes, bytes;
    double avg_request_bytes; /* bytes / (reads + writes) */
    double queue_avg;         /* mean requests in flight (weighted ms / ms) */
} probe_disk_io;
void probe_disk_io_of(const cp_ss_sample *a, const cp_ss_sample *b, const char *disk, probe_disk_io *out);

#endif
