/* ckpt_uring.c - io_uring checkpoint writer (see ckpt_uring.h).
 *
 * Writes are IORING_OP_WRITE (or WRITE_FIXED with the registered buffer)
 * at increasing offsets, up to queue_depth in flight; every call of
 * ckpt_uring_progress() submits what it queued with io_uring_submit(),
 * which does not wait for completions, and reaps with io_uring_peek_cqe,
 * which never blocks. A short write (possible for buffered files near a
 * quota) is resubmitted for its remainder, so bytes_written always counts
 * bytes the kernel accepted. After the last write completes, one
 * IORING_OP_FSYNC: the writer is done when that completes, and the file's
 * size is taken then so the caller can check it against what was written.
 */
#include "ckpt_uring.h"

#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ckpt_uring_describe(const ckpt_uring_stats *st, char *out, size_t size)
{
    snprintf(out, size, "io_uring (QD %u, %s, %s%s)", st->queue_depth, st->direct ? "O_DIRECT" : "buffered",
             st->registered ? "registered buffer" : "unregistered buffer", st->preallocated ? ", fallocate" : "");
}

#ifndef CP_HAVE_LIBURING

int ckpt_uring_start(ckpt_uring **out, const char *path, const void *buf, size_t block, uint64_t bytes,
                     unsigned queue_depth, cp_error *err)
{
    (void)path, (void)buf, (void)block, (void)bytes, (void)queue_depth;
    *out = NULL;
    return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1,
                        "this build has no io_uring (liburing-dev was not found at build time)");
}
int ckpt_uring_progress(ckpt_uring *u, bool *done, cp_error *err)
{
    (void)u;
    *done = true;
    return cp_error_set(err, CP_ERR_INTERNAL, NULL, 0, 0, -1, "io_uring writer used in a build without it");
}
void ckpt_uring_get_stats(const ckpt_uring *u, ckpt_uring_stats *st)
{
    (void)u;
    memset(st, 0, sizeof *st);
}
void ckpt_uring_free(ckpt_uring *u)
{
    (void)u;
}

#else

#include <liburing.h>

/* user_data of the fsync; writes carry their offset + 1 (never 0) */
#define FSYNC_TAG UINT64_MAX

struct ckpt_uring {
    struct io_uring ring;
    int fd;
    const char *path;
    const void *buf;
    size_t block;
    uint64_t bytes;
    uint64_t next_off;      /* next offset not yet queued */
    unsigned inflight;
    bool fsync_queued, done;
    int64_t t0_ns, t1_ns;
    ckpt_uring_stats st;
};

static int queue_write(ckpt_uring *u, uint64_t off, size_t len, size_t buf_off)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe)
        return -1; /* ring full: retried on the next call */
    const char *src = (const char *)u->buf + buf_off;
    if (u->st.registered)
        io_uring_prep_write_fixed(sqe, u->fd, src, (unsigned)len, (off_t)off, 0);
    else
        io_uring_prep_write(sqe, u->fd, src, (unsigned)len, (off_t)off);
    io_uring_sqe_set_data64(sqe, off + 1);
    u->inflight++;
    if (u->inflight > u->st.max_inflight)
        u->st.max_inflight = u->inflight;
    return 0;
}

/* Queue new writes up to the depth, or the fsync when all are written. */
static void fill(ckpt_uring *u)
{
    while (u->inflight < u->st.queue_depth && u->next_off < u->bytes) {
        size_t len = u->bytes - u->next_off < u->block ? (size_t)(u->bytes - u->next_off) : u->block;
        if (queue_write(u, u->next_off, len, 0) < 0)
            return;
        u->next_off += len;
    }
    if (u->next_off >= u->bytes && u->inflight == 0 && !u->fsync_queued) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
        if (!sqe)
            return;
        io_uring_prep_fsync(sqe, u->fd, 0);
        io_uring_sqe_set_data64(sqe, FSYNC_TAG);
        u->fsync_queued = true;
    }
}

int ckpt_uring_start(ckpt_uring **out, const char *path, const void *buf, size_t block, uint64_t bytes,
                     unsigned queue_depth, cp_error *err)
{
    *out = NULL;
    const char *off = getenv("CHAINPROF_NO_IO_URING"); /* exercises the fallback in tests */
    if (off && *off && strcmp(off, "0") != 0)
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "disabled by CHAINPROF_NO_IO_URING");
    if (queue_depth < 1)
        queue_depth = 8;
    ckpt_uring *u = cp_xcalloc(1, sizeof *u);
    u->t0_ns = cp_now_ns();
    int r = io_uring_queue_init(queue_depth + 1, &u->ring, 0);
    if (r < 0) {
        free(u);
        errno = -r;
        return cp_error_sys(err, CP_ERR_UNAVAILABLE, NULL, "io_uring_queue_init (kernel without io_uring, or "
                                                           "disabled by kernel.io_uring_disabled or seccomp)");
    }
    u->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600);
    u->st.direct = u->fd >= 0;
    if (u->fd < 0 && errno == EINVAL) /* tmpfs and others: no O_DIRECT */
        u->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (u->fd < 0) {
        int e = errno;
        io_uring_queue_exit(&u->ring);
        free(u);
        errno = e;
        return cp_error_sys(err, CP_ERR_IO, path, "cannot create the checkpoint file");
    }
    /* allocate the extent first: a direct write that extends the file is
     * punted to an io-wq kernel thread (ext4, xfs), one within the size is
     * issued without blocking. Not every filesystem can: then it extends. */
    u->st.preallocated = fallocate(u->fd, 0, 0, (off_t)bytes) == 0;
    /* registering pins the pages; RLIMIT_MEMLOCK may forbid it: then plain writes */
    struct iovec iov = { (void *)buf, block };
    u->st.registered = io_uring_register_buffers(&u->ring, &iov, 1) == 0;
    u->path = path;
    u->buf = buf;
    u->block = block;
    u->bytes = bytes;
    u->st.queue_depth = queue_depth;
    fill(u);
    r = io_uring_submit(&u->ring);
    if (r < 0) {
        ckpt_uring_free(u);
        errno = -r;
        return cp_error_sys(err, CP_ERR_UNAVAILABLE, path, "io_uring_submit");
    }
    u->st.call_s = (double)(cp_now_ns() - u->t0_ns) / 1e9; /* open, fallocate, first submit: the loop waits */
    *out = u;
    return 0;
}

static int progress(ckpt_uring *u, cp_error *err);

int ckpt_uring_progress(ckpt_uring *u, bool *done, cp_error *err)
{
    int64_t t0 = cp_now_ns();
    int rc = progress(u, err);
    u->st.call_s += (double)(cp_now_ns() - t0) / 1e9;
    *done = u->done;
    return rc;
}

static int progress(ckpt_uring *u, cp_error *err)
{
    struct io_uring_cqe *cqe;
    while (!u->done && io_uring_peek_cqe(&u->ring, &cqe) == 0) {
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
        if (tag == FSYNC_TAG) {
            if (res < 0) {
                errno = -res;
                return cp_error_sys(err, CP_ERR_IO, u->path, "fsync (io_uring) failed");
            }
            u->t1_ns = cp_now_ns();
            struct stat sb;
            u->st.file_bytes = fstat(u->fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
            u->done = true;
            break;
        }
        u->inflight--;
        uint64_t off = tag - 1;
        if (res <= 0) {
            errno = res < 0 ? -res : ENOSPC;
            return cp_error_sys(err, CP_ERR_IO, u->path, "write (io_uring) at offset %llu failed",
                                (unsigned long long)off);
        }
        u->st.bytes_written += (uint64_t)res;
        size_t len = u->bytes - off < u->block ? (size_t)(u->bytes - off) : u->block;
        if ((size_t)res < len && queue_write(u, off + (uint64_t)res, len - (size_t)res, (size_t)res) < 0) {
            /* no free entry for the remainder: cannot happen (one was just reaped) */
            return cp_error_set(err, CP_ERR_INTERNAL, u->path, 0, 0, (long)off, "io_uring ring full");
        }
    }
    if (!u->done) {
        fill(u);
        int r = io_uring_submit(&u->ring);
        if (r < 0) {
            errno = -r;
            return cp_error_sys(err, CP_ERR_IO, u->path, "io_uring_submit");
        }
    }
    return 0;
}

void ckpt_uring_get_stats(const ckpt_uring *u, ckpt_uring_stats *st)
{
    *st = u->st;
    st->seconds = u->done ? (double)(u->t1_ns - u->t0_ns) / 1e9 : 0;
}

void ckpt_uring_free(ckpt_uring *u)
{
    if (!u)
        return;
    /* writes still in flight reference buf: wait for them before the ring goes */
    while (u->inflight > 0 || (u->fsync_queued && !u->done)) {
        struct io_uring_cqe *cqe;
        if (io_uring_wait_cqe(&u->ring, &cqe) < 0)
            break;
        if (io_uring_cqe_get_data64(cqe) == FSYNC_TAG)
            u->done = true;
        else
            u->inflight--;
        io_uring_cqe_seen(&u->ring, cqe);
    }
    io_uring_queue_exit(&u->ring);
    close(u->fd);
    free(u);
}

#endif
