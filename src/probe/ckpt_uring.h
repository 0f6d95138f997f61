/* ckpt_uring.h - an asynchronous checkpoint writer driven by io_uring.
 *
 * The storage probe's checkpoint test needs a writer that does not block
 * the compute loop. A background pthread does that at the cost of a core;
 * io_uring does it with no thread of ours: the loop calls
 * ckpt_uring_progress() between two compute steps, which reaps finished
 * writes and queues new ones up to the queue depth (never waits), then a
 * final IORING_OP_FSYNC makes the checkpoint durable. The file is opened
 * with O_DIRECT when the filesystem allows it (tmpfs does not: buffered
 * then) and the source buffer is registered (write_fixed) when the kernel
 * and RLIMIT_MEMLOCK allow it; both facts land in the method string.
 *
 * liburing is optional at build time (CP_HAVE_LIBURING, set by CMake when
 * pkg-config finds liburing): without it, and when io_uring_queue_init
 * fails at run time (kernel too old, io_uring disabled by sysctl or a
 * seccomp filter), ckpt_uring_start returns CP_ERR_UNAVAILABLE with the
 * reason, and the caller falls back to its pthread writer. The environment
 * variable CHAINPROF_NO_IO_URING=1 forces that fallback (tests use it).
 *
 * Ownership: ckpt_uring_start allocates *out; ckpt_uring_free closes the
 * file and the ring and frees it. buf is borrowed and must stay valid and
 * unchanged until the writer is done (or freed).
 */
#ifndef CP_PROBE_CKPT_URING_H
#define CP_PROBE_CKPT_URING_H

#include "../base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ckpt_uring ckpt_uring;

typedef struct ckpt_uring_stats {
    uint64_t bytes_written;  /* sum of the completed writes' results */
    uint64_t file_bytes;     /* st_size after the fsync completed */
    double seconds;          /* first submission to fsync completion */
    unsigned queue_depth;
    bool direct;             /* O_DIRECT was used */
    bool registered;         /* the buffer was registered (write_fixed) */
    bool preallocated;       /* fallocate reserved the file's extent first */
    unsigned max_inflight;   /* most writes in flight at once */
    double call_s;           /* time spent inside ckpt_uring_progress (submit + reap) */
} ckpt_uring_stats;

/* Open path (created/truncated) and a ring of queue_depth entries; block
 * bytes per write from buf (block must be a multiple of 4096 and buf
 * 4096-aligned for O_DIRECT); bytes a multiple of block. Queues the first
 * writes. CP_ERR_UNAVAILABLE (err says why) when io_uring cannot be used. */
int ckpt_uring_start(ckpt_uring **out, const char *path, const void *buf, size_t block, uint64_t bytes,
                     unsigned queue_depth, cp_error *err);
/* Non-blocking: reap completions, queue more writes or the fsync. *done is
 * set once the fsync completed. A failed write (ENOSPC, EIO) is an error
 * naming the file and the offset. */
int ckpt_uring_progress(ckpt_uring *u, bool *done, cp_error *err);
void ckpt_uring_get_stats(const ckpt_uring *u, ckpt_uring_stats *st);
void ckpt_uring_free(ckpt_uring *u);

/* One line naming the io_uring set-up for a method string, e.g.
 * "io_uring (QD 8, O_DIRECT, registered buffer)". */
void ckpt_uring_describe(const ckpt_uring_stats *st, char *out, size_t size);

#endif
