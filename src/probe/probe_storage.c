/* probe_storage.c - the storage layer as a training job sees it.
 *
 * Measures on --dir (default "."), each in a private temporary directory
 * that is removed afterwards:
 *   - sequential write and read, buffered and O_DIRECT, 1 MiB blocks,
 *     --rounds times (the median is the figure, the spread is in `method`)
 *     (docs/METRICS.md defines them; bench/bench_probe.sh runs fio with the
 *     same definition). Each write creates a new file (the previous one is
 *     unlinked, nothing is preallocated) after syncfs(), so writeback,
 *     journal commits and discards left by an earlier phase are not billed
 *     to it, and is timed through the final fsync for both modes: a
 *     checkpoint is not saved until it is durable, and an O_DIRECT write
 *     only bypasses the guest's cache, not a device's volatile write cache
 *     (a virtio disk in write-back mode), which fsync flushes. The buffered
 *     read first evicts the file (fsync, posix_fadvise(DONTNEED)) and
 *     counts with mincore() the pages still cached; the method reports
 *     that count, so a read served by the page cache shows as such.
 *   - fsync latency: 4 KiB write + fsync, repeated; p50 and p99.
 *   - small files: create+write+close of 4 KiB files, then open+read+close,
 *     in files per second.
 *   - checkpoint: a compute loop of fixed-size steps runs while a
 *     checkpoint of --size bytes is written (a) synchronously by the loop
 *     itself between two steps and (b) asynchronously: with io_uring driven
 *     by the loop between its steps (ckpt_uring.c; O_DIRECT where the
 *     filesystem allows it, no writer thread), or, when io_uring is not
 *     available (build without liburing, kernel or seccomp refusing it), by
 *     a background pthread; the method says which and why. The stall is the
 *     extra wall time the loop needed compared
 *     with the same steps without I/O; the effective bandwidth is bytes over
 *     the writer's time including fsync.
 * Peaks are null: a device's rated bandwidth is not discoverable through
 * the filesystem. Errors (unwritable directory, full disk) stop the probe
 * with the path and the system's reason; a filesystem without O_DIRECT
 * (tmpfs) only loses the direct rows, with a warning.
 */
#include "probe.h"
#include "probe_storage.h"
#include "ckpt_uring.h"
#include "../base/log.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define BLOCK_BYTES (1u << 20)

typedef struct st_ctx {
    char dir[4096];      /* private temporary directory */
    char file[4200];     /* the big test file */
    void *buf;           /* BLOCK_BYTES, 4 KiB aligned (O_DIRECT) */
    cp_error *err;
    const cp_fsroot *fs;
    probe_blockdev dev;  /* the disk under dir (dev.found false: none) */
    cp_ss_sample io0;    /* the disk's counters at a timed phase's start */
} st_ctx;

static double now_s(void)
{
    return (double)cp_now_ns() / 1e9;
}

/* Write `bytes` to a new file at path (an old one is unlinked first) in
 * BLOCK_BYTES blocks; fsync at the end. Returns the seconds from the first
 * write to the end of the fsync, or a negative value with err set;
 * *fsync_s (when not NULL) gets the fsync's share. direct: O_DIRECT, and
 * EINVAL on open is reported as CP_ERR_UNAVAILABLE. */
static double write_file(st_ctx *st, const char *path, uint64_t bytes, bool direct, double *fsync_s)
{
    unlink(path); /* a new file, as a checkpoint is: blocks are allocated as it grows */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | (direct ? O_DIRECT : 0), 0600);
    if (fd < 0) {
        if (direct && errno == EINVAL)
            return cp_error_set(st->err, CP_ERR_UNAVAILABLE, path, 0, 0, -1,
                                "O_DIRECT is not supported on this filesystem");
        return cp_error_sys(st->err, CP_ERR_IO, path, "cannot create the test file");
    }
    double t0 = now_s();
    for (uint64_t done = 0; done < bytes;) {
        size_t n = bytes - done < BLOCK_BYTES ? (size_t)(bytes - done) : BLOCK_BYTES;
        ssize_t w = write(fd, st->buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            close(fd);
            unlink(path);
            errno = e;
            return cp_error_sys(st->err, CP_ERR_IO, path, "write failed after %llu bytes",
                                (unsigned long long)done);
        }
        done += (uint64_t)w;
    }
    double t1 = now_s();
    if (fsync(fd) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return cp_error_sys(st->err, CP_ERR_IO, path, "fsync failed");
    }
    double t2 = now_s();
    close(fd);
    if (fsync_s)
        *fsync_s = t2 - t1;
    return t2 - t0;
}

int probe_file_cached_pages(int fd, const char *path, uint64_t size, uint64_t *resident, uint64_t *total,
                            cp_error *err)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *resident = 0;
    *total = (size + page - 1) / page;
    if (size == 0)
        return 0;
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot map the test file to count its cached pages");
    /* one status byte per page, asked for in windows so a large file needs no large vector */
    enum { WINDOW_PAGES = 1 << 18 };
    size_t vec_len = *total < WINDOW_PAGES ? (size_t)*total : WINDOW_PAGES;
    unsigned char *vec = cp_xmalloc(vec_len);
    int rc = 0;
    for (uint64_t first = 0; first < *total && !rc; first += vec_len) {
        uint64_t n = *total - first < vec_len ? *total - first : vec_len;
        uint64_t len = first + n == *total ? size - first * page : n * page;
        if (mincore((char *)map + first * page, (size_t)len, vec) < 0)
            rc = cp_error_sys(err, CP_ERR_IO, path, "mincore failed");
        for (uint64_t i = 0; i < n && !rc; i++)
            *resident += vec[i] & 1;
    }
    free(vec);
    munmap(map, (size_t)size);
    return rc;
}

int probe_drop_file_cache(int fd, const char *path, uint64_t size, uint64_t *resident, uint64_t *total,
                          cp_error *err)
{
    if (fsync(fd) < 0) /* works on a read-only descriptor too */
        return cp_error_sys(err, CP_ERR_IO, path, "fsync before dropping the page cache failed");
    int rc = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* returns the error, no errno */
        if (e) {
            errno = e;
            return cp_error_sys(err, CP_ERR_IO, path, "posix_fadvise(DONTNEED) failed");
        }
        rc = probe_file_cached_pages(fd, path, size, resident, total, err);
        if (rc < 0 || *resident == 0)
            break;
    }
    return rc;
}

/* Flush the whole filesystem of the test directory, so that a timed phase
 * does not pay for the writeback, journal commit or discard of what an
 * earlier phase left (the unlinked file of the previous write). */
static int fs_quiesce(st_ctx *st)
{
    int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cp_error_sys(st->err, CP_ERR_IO, st->dir, "cannot open the test directory");
    int rc = syncfs(fd) < 0 ? cp_error_sys(st->err, CP_ERR_IO, st->dir, "syncfs failed") : 0;
    close(fd);
    return rc;
}

/* What a read found before its timer started. */
typedef struct read_state {
    uint64_t cached_pages; /* buffered: pages still cached after the eviction */
    uint64_t file_pages;
} read_state;

static double read_file(st_ctx *st, const char *path, bool direct, uint64_t *bytes, read_state *rs)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
    if (fd < 0)
        return cp_error_sys(st->err, CP_ERR_IO, path, "cannot open the test file");
    memset(rs, 0, sizeof *rs);
    struct stat sb;
    int rc = fstat(fd, &sb) < 0 ? cp_error_sys(st->err, CP_ERR_IO, path, "fstat failed") : 0;
    if (!rc && !direct) /* read the device, not the page cache */
        rc = probe_drop_file_cache(fd, path, (uint64_t)sb.st_size, &rs->cached_pages, &rs->file_pages, st->err);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    double t0 = now_s();
    *bytes = 0;
    for (;;) {
        ssize_t r = read(fd, st->buf, BLOCK_BYTES);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return cp_error_sys(st->err, CP_ERR_IO, path, "read failed");
        }
        if (r == 0)
            break;
        *bytes += (uint64_t)r;
    }
    double t = now_s() - t0;
    close(fd);
    return t;
}

/* The disk's counters around a timed phase, so the method can say how the
 * blocks went down (requests, their size, the queue). */
static void io_mark(st_ctx *st)
{
    if (st->dev.found)
        cp_ss_take(st->fs, CP_SS_DISKSTATS, &st->io0, NULL);
}

static void io_note(st_ctx *st, char *buf, size_t size)
{
    buf[0] = 0;
    if (!st->dev.found || !(st->io0.have & CP_SS_DISKSTATS))
        return;
    cp_ss_sample now = { 0 };
    cp_ss_take(st->fs, CP_SS_DISKSTATS, &now, NULL);
    probe_disk_io io;
    probe_disk_io_of(&st->io0, &now, st->dev.name, &io);
    cp_ss_sample_free(&now);
    if (io.valid && io.reads + io.writes)
        snprintf(buf, size, "; %s counted %llu requests of %.0f KiB on average, %.2f in flight",
                 st->dev.name, (unsigned long long)(io.reads + io.writes), io.avg_request_bytes / 1024, io.queue_avg);
}

/* One sequential figure over the rounds: each round's value, and the method
 * text of the last round (the same in every round but for its counts). */
typedef struct seq_fig {
    const char *metric;
    double v[PROBE_MAX_ROUNDS];
    char method[900];
} seq_fig;

/* The median of the rounds, their spread beside it (probe_stats.h): on a
 * shared or virtual disk one run can be off by 2x, and the median of
 * several says what the disk usually does. */
static void emit_seq(probe_ctx *ctx, seq_fig *f, int rounds)
{
    size_t n = strlen(f->method);
    snprintf(f->method + n, sizeof f->method - n, "; median of %d rounds", rounds);
    probe_emit_rounds(ctx, f->metric, f->v, (size_t)rounds, PROBE_STAT_MEDIAN, "GB/s", NAN, f->method);
}

/* Round r of one mode: write a new file, then read it, into fw/fr. Returns
 * 0, CP_ERR_UNAVAILABLE (with st->err cleared) when the filesystem refuses
 * O_DIRECT, or a negative error. */
static int seq_round(st_ctx *st, uint64_t bytes, bool direct, int r, int rounds, seq_fig *fw, seq_fig *fr)
{
    const char *how = direct ? "O_DIRECT" : "buffered";
    int rc = fs_quiesce(st);
    if (rc < 0)
        return rc;
    double fsync_s = 0;
    char note[200];
    io_mark(st);
    double tw = write_file(st, st->file, bytes, direct, &fsync_s);
    io_note(st, note, sizeof note);
    if (tw < 0 && direct && st->err->code == CP_ERR_UNAVAILABLE) {
        cp_error_clear(st->err);
        return CP_ERR_UNAVAILABLE;
    }
    if (tw < 0)
        return (int)tw;
    fw->v[r] = (double)bytes / tw / 1e9;
    snprintf(fw->method, sizeof fw->method,
             "%s sequential write of %llu MiB in 1 MiB blocks to a new file (no preallocation) after syncfs, "
             "timed through fsync (fsync %.3f s of %.3f s%s)%s",
             how, (unsigned long long)(bytes >> 20), fsync_s, tw, rounds > 1 ? " in the last round" : "", note);
    if ((rc = fs_quiesce(st)) < 0)
        return rc;
    uint64_t got = 0;
    read_state rs;
    io_mark(st); /* read_file evicts first: a buffered read's fsync adds nothing to read */
    double tr = read_file(st, st->file, direct, &got, &rs);
    if (tr < 0)
        return (int)tr;
    io_note(st, note, sizeof note);
    fr->v[r] = (double)got / tr / 1e9;
    int n = snprintf(fr->method, sizeof fr->method, "%s sequential read of %llu MiB in 1 MiB blocks", how,
                     (unsigned long long)(got >> 20));
    if (!direct)
        snprintf(fr->method + n, sizeof fr->method - (size_t)n,
                 ", after fsync + posix_fadvise(DONTNEED); mincore: %llu of %llu pages cached at start%s",
                 (unsigned long long)rs.cached_pages, (unsigned long long)rs.file_pages,
                 rs.cached_pages ? " (read from the page cache for those: this filesystem does not drop them)" : "");
    n = (int)strlen(fr->method);
    snprintf(fr->method + n, sizeof fr->method - (size_t)n, "%s", note);
    return 0;
}

static int seq_tests(probe_ctx *ctx, st_ctx *st, uint64_t bytes)
{
    int rounds = probe_rounds(ctx, 3, 5);
    seq_fig figs[4] = { { .metric = "seq_write_buffered_bandwidth" }, { .metric = "seq_read_buffered_bandwidth" },
                        { .metric = "seq_write_direct_bandwidth" }, { .metric = "seq_read_direct_bandwidth" } };
    int n_modes = 2;
    for (int r = 0; r < rounds; r++)
        for (int direct = 0; direct < n_modes; direct++) {
            int rc = seq_round(st, bytes, direct, r, rounds, &figs[2 * direct], &figs[2 * direct + 1]);
            if (rc == CP_ERR_UNAVAILABLE && direct) { /* only O_DIRECT can be refused */
                cp_log_warn("%s: O_DIRECT not supported here (tmpfs?): direct-I/O rows left out",
                            ctx->opts.dir ? ctx->opts.dir : ".");
                n_modes = 1;
            } else if (rc < 0) {
                return rc;
            }
        }
    for (int k = 0; k < 2 * n_modes; k++)
        emit_seq(ctx, &figs[k], rounds);
    unlink(st->file);
    return 0;
}

static int fsync_test(probe_ctx *ctx, st_ctx *st, int n)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/fsync", st->dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return cp_error_sys(st->err, CP_ERR_IO, path, "cannot create the fsync test file");
    double *lat = cp_xcalloc((size_t)n, sizeof *lat);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        double t0 = now_s();
        if (pwrite(fd, st->buf, 4096, (off_t)i * 4096) != 4096 || fsync(fd) < 0) {
            rc = cp_error_sys(st->err, CP_ERR_IO, path, "write+fsync failed");
            break;
        }
        lat[i] = (now_s() - t0) * 1e6;
    }
    close(fd);
    unlink(path);
    if (!rc) {
        char method[160];
        snprintf(method, sizeof method,
                 "4 KiB pwrite + fsync, %d times, percentile by linear interpolation; statistics over the %d calls", n,
                 n);
        probe_emit_rounds(ctx, "fsync_latency_p50", lat, (size_t)n, PROBE_STAT_P50, "us", NAN, method);
        probe_emit_rounds(ctx, "fsync_latency_p99", lat, (size_t)n, PROBE_STAT_P99, "us", NAN, method);
    }
    free(lat);
    return rc;
}

static int small_files(probe_ctx *ctx, st_ctx *st, int n)
{
    char path[4300];
    int rc = 0, made = 0;
    double t0 = now_s();
    for (; made < n; made++) {
        snprintf(path, sizeof path, "%s/f%06d", st->dir, made);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, st->buf, 4096) != 4096) {
            rc = cp_error_sys(st->err, CP_ERR_IO, path, "small-file create failed");
            if (fd >= 0)
                close(fd);
            break;
        }
        close(fd);
    }
    double tc = now_s() - t0;
    if (!rc) {
        t0 = now_s();
        for (int i = 0; i < n && !rc; i++) {
            snprintf(path, sizeof path, "%s/f%06d", st->dir, i);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0 || read(fd, st->buf, 4096) != 4096)
                rc = cp_error_sys(st->err, CP_ERR_IO, path, "small-file read failed");
            if (fd >= 0)
                close(fd);
        }
        double tr = now_s() - t0;
        if (!rc) {
            char method[160];
            snprintf(method, sizeof method, "%d files of 4 KiB: open(O_CREAT)+write+close, no fsync", n);
            probe_emit_value(ctx, "small_file_create_rate", n / tc, "files/s", NAN, method);
            snprintf(method, sizeof method, "%d files of 4 KiB: open+read+close (page cache warm)", n);
            probe_emit_value(ctx, "small_file_read_rate", n / tr, "files/s", NAN, method);
        }
    }
    for (int i = 0; i < made; i++) {
        snprintf(path, sizeof path, "%s/f%06d", st->dir, i);
        unlink(path);
    }
    return rc;
}

/* ---- checkpoint: compute loop vs writer ---- */

/* One compute step: a fixed amount of dependent floating-point work. It
 * starts from the previous result (read through a volatile), so the
 * compiler cannot hoist the loop-invariant call out of the step loop. */
static double compute_step(uint64_t work, double x)
{
    for (uint64_t i = 0; i < work; i++)
        x = x * 0.9999999 + 1e-7;
    return x;
}

typedef struct ckpt_writer {
    st_ctx *st;
    const char *path;
    uint64_t bytes;
    double seconds; /* <0 on failure */
    atomic_int done;
} ckpt_writer;

static void *writer_main(void *p)
{
    ckpt_writer *w = p;
    w->seconds = write_file(w->st, w->path, w->bytes, false, NULL);
    atomic_store(&w->done, 1);
    return NULL;
}

double probe_ckpt_stall_s(double loop_s, int steps, double step_s)
{
    double s = loop_s - steps * step_s;
    return s > 0 ? s : 0;
}

/* What the asynchronous variant measured. */
typedef struct async_result {
    double loop_s;       /* loop wall time until the writer was done */
    int steps;
    uint64_t bytes;      /* bytes the writer wrote (checked against the file size) */
    double writer_s;     /* writer time including fsync */
    char how[400];       /* "io_uring (QD 8, O_DIRECT, ...)" or "a background pthread (...)" */
    double call_s;       /* io_uring: time the loop spent in submit/reap calls; NaN for the pthread */
} async_result;

static int async_pthread(st_ctx *st, const char *path, uint64_t bytes, uint64_t work, volatile double *sink,
                         async_result *a)
{
    ckpt_writer w = { .st = st, .path = path, .bytes = bytes };
    pthread_t th;
    memset(a, 0, sizeof *a);
    a->call_s = NAN;
    double t0 = now_s();
    if (pthread_create(&th, NULL, writer_main, &w) != 0)
        return cp_error_set(st->err, CP_ERR_INTERNAL, NULL, 0, 0, -1, "cannot start the writer thread");
    while (!atomic_load(&w.done)) {
        *sink = compute_step(work, *sink);
        a->steps++;
    }
    pthread_join(th, NULL);
    a->loop_s = now_s() - t0;
    if (w.seconds < 0)
        return (int)w.seconds;
    a->bytes = bytes;
    a->writer_s = w.seconds;
    return 0;
}

/* The loop drives io_uring between its steps: no writer thread at all. */
static int async_uring(st_ctx *st, const char *path, uint64_t bytes, uint64_t work, volatile double *sink,
                       async_result *a)
{
    memset(a, 0, sizeof *a);
    ckpt_uring *u;
    double t0 = now_s();
    int rc = ckpt_uring_start(&u, path, st->buf, BLOCK_BYTES, bytes, 8, st->err);
    if (rc < 0)
        return rc;
    bool done = false;
    while (!done && rc == 0) {
        *sink = compute_step(work, *sink);
        a->steps++;
        rc = ckpt_uring_progress(u, &done, st->err);
    }
    a->loop_s = now_s() - t0;
    ckpt_uring_stats us;
    ckpt_uring_get_stats(u, &us);
    ckpt_uring_free(u);
    if (rc < 0)
        return rc;
    if (us.bytes_written != bytes || us.file_bytes != bytes)
        return cp_error_set(st->err, CP_ERR_IO, path, 0, 0, -1,
                            "io_uring writer: %llu bytes written, file holds %llu, expected %llu",
                            (unsigned long long)us.bytes_written, (unsigned long long)us.file_bytes,
                            (unsigned long long)bytes);
    a->bytes = us.bytes_written;
    a->writer_s = us.seconds;
    ckpt_uring_describe(&us, a->how, sizeof a->how);
    a->call_s = us.call_s;
    return 0;
}

static int checkpoint_test(probe_ctx *ctx, st_ctx *st, uint64_t bytes)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/checkpoint", st->dir);
    /* calibrate a ~10 ms step, then the baseline without I/O */
    uint64_t work = 100000;
    volatile double sink = 1.0;
    for (;;) {
        double t0 = now_s();
        sink = compute_step(work, sink);
        double t = now_s() - t0;
        if (t > 0.002 || work > (1ull << 34)) {
            work = (uint64_t)((double)work * 0.01 / (t > 0 ? t : 1e-3)) + 1;
            break;
        }
        work *= 4;
    }
    enum { BASE_STEPS = 20 };
    double base[BASE_STEPS];
    for (int i = 0; i < BASE_STEPS; i++) {
        double t0 = now_s();
        sink = compute_step(work, sink);
        base[i] = now_s() - t0;
    }
    double step_s = probe_median(base, BASE_STEPS);

    /* (a) synchronous: the loop stops for the write */
    double t0 = now_s();
    double tw = write_file(st, path, bytes, false, NULL);
    if (tw < 0)
        return (int)tw;
    sink = compute_step(work, sink);
    double sync_loop = now_s() - t0;
    unlink(path);
    double sync_stall = probe_ckpt_stall_s(sync_loop, 1, step_s);

    /* (b) asynchronous: the loop keeps stepping until the writer is done;
     * io_uring driven from the loop itself when available, else a pthread */
    async_result a;
    int rc = async_uring(st, path, bytes, work, &sink, &a);
    if (rc == CP_ERR_UNAVAILABLE) {
        char why[256];
        cp_error_format(st->err, why, sizeof why);
        cp_error_clear(st->err);
        rc = async_pthread(st, path, bytes, work, &sink, &a);
        snprintf(a.how, sizeof a.how, "a background pthread (io_uring unavailable: %.180s)", why);
    }
    unlink(path);
    (void)sink;
    if (rc < 0)
        return rc;
    double async_stall = probe_ckpt_stall_s(a.loop_s, a.steps, step_s);

    char method[512];
    snprintf(method, sizeof method,
             "%llu MiB written by the compute loop itself; stall = loop time - 1 step of %.1f ms",
             (unsigned long long)(bytes >> 20), step_s * 1e3);
    probe_emit_value(ctx, "checkpoint_sync_stall", sync_stall * 1e3, "ms", NAN, method);
    probe_emit_value(ctx, "checkpoint_sync_write_bandwidth", (double)bytes / tw / 1e9, "GB/s", NAN, method);
    snprintf(method, sizeof method,
             "%llu MiB written by %s while %d steps ran; stall = loop time - steps x %.1f ms",
             (unsigned long long)(bytes >> 20), a.how, a.steps, step_s * 1e3);
    probe_emit_value(ctx, "checkpoint_async_stall", async_stall * 1e3, "ms", NAN, method);
    probe_emit_value(ctx, "checkpoint_async_write_bandwidth", (double)a.bytes / a.writer_s / 1e9, "GB/s", NAN,
                     method);
    snprintf(method, sizeof method, "bytes the asynchronous writer's completed writes reported; %s", a.how);
    probe_emit_value(ctx, "checkpoint_async_bytes", (double)a.bytes, "bytes", NAN, method);
    if (!isnan(a.call_s)) {
        /* the stall io_uring itself causes, apart from CPU contention with
         * kernel workers that the loop-time stall also includes */
        snprintf(method, sizeof method, "time the compute loop spent inside io_uring submit/reap calls; %s", a.how);
        probe_emit_value(ctx, "checkpoint_async_io_call_time", a.call_s * 1e3, "ms", NAN, method);
    }
    return 0;
}

bool probe_storage_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    const char *dir = ctx->opts.dir ? ctx->opts.dir : ".";
    struct stat sb;
    if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
        /* named explicitly: run and fail with the reason; in the quick pass: skip */
        if (ctx->opts.dir)
            return true;
        snprintf(why, why_size, "%s is not a directory", dir);
        return false;
    }
    return true;
}

/* The `storage` report object: the device and its queue, how a block
 * splits, and the page cache as the probe found it. */
static void storage_report(probe_ctx *ctx, const st_ctx *st, const char *dir)
{
    char line[700];
    probe_blockdev_describe(&st->dev, BLOCK_BYTES, (size_t)sysconf(_SC_PAGESIZE), line, sizeof line);
    cp_log_info("storage: %s: %s", dir, line);
    if (!ctx->rep)
        return;
    rep_report *r = ctx->rep;
    rep_node *o = rep_obj(r, r->root, "storage", "storage");
    rep_str(r, o, "dir", "directory", dir);
    rep_str(r, o, "device_note", "device", line);
    const probe_blockdev *d = &st->dev;
    if (d->found) {
        rep_str(r, o, "device", "disk", d->name);
        rep_str(r, o, "partition", "partition", d->part);
        rep_str(r, o, "bus", "bus", d->bus);
        rep_bool(r, o, "virtual", "stacked (dm, md, loop)", d->virt);
        const struct { const char *key; int64_t v; } q[] = {
            { "nr_requests", d->nr_requests }, { "max_sectors_kb", d->max_sectors_kb },
            { "max_hw_sectors_kb", d->max_hw_sectors_kb }, { "max_segments", d->max_segments },
            { "max_segment_size", d->max_segment_size }, { "rotational", d->rotational },
            { "logical_block_size", d->logical_block_size }, { "physical_block_size", d->physical_block_size },
            { "read_ahead_kb", d->read_ahead_kb },
        };
        for (size_t i = 0; i < CP_ARRAY_LEN(q); i++)
            if (q[i].v >= 0)
                rep_int(r, o, q[i].key, q[i].key, q[i].v, NULL);
            else
                rep_null(r, o, q[i].key, q[i].key, NULL);
        rep_str(r, o, "write_cache", "write cache", d->write_cache);
        rep_str(r, o, "scheduler", "scheduler", d->scheduler);
        uint64_t req;
        int n = probe_block_requests(d, BLOCK_BYTES, (size_t)sysconf(_SC_PAGESIZE), &req);
        if (n > 0)
            rep_int(r, o, "max_requests_per_block", "requests per 1 MiB block at most", n, NULL);
        else
            rep_null(r, o, "max_requests_per_block", "requests per 1 MiB block at most", NULL);
    }
    cp_ss_sample m = { 0 };
    if (cp_ss_take(st->fs, CP_SS_MEMINFO, &m, NULL) == 0 && (m.have & CP_SS_MEMINFO)) {
        rep_int(r, o, "page_cache_bytes", "page cache at the start", m.mem.cached_bytes, "bytes");
        rep_int(r, o, "dirty_bytes", "dirty at the start", m.mem.dirty_bytes, "bytes");
        rep_int(r, o, "writeback_bytes", "under writeback at the start", m.mem.writeback_bytes, "bytes");
    }
    cp_ss_sample_free(&m);
}

int probe_storage_run(probe_ctx *ctx, cp_error *err)
{
    const char *dir = ctx->opts.dir ? ctx->opts.dir : ".";
    st_ctx st = { .err = err, .fs = &ctx->fs };
    struct stat sb;
    if (stat(dir, &sb) == 0)
        probe_blockdev_of(&ctx->fs, major(sb.st_dev), minor(sb.st_dev), &st.dev);
    snprintf(st.dir, sizeof st.dir, "%s/.chainprof-probe-XXXXXX", dir);
    if (!mkdtemp(st.dir))
        return cp_error_sys(err, CP_ERR_IO, dir, "cannot create a test directory");
    snprintf(st.file, sizeof st.file, "%s/seq", st.dir);
    if (posix_memalign(&st.buf, 4096, BLOCK_BYTES) != 0) {
        rmdir(st.dir);
        return cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1, "out of memory");
    }
    for (size_t i = 0; i < BLOCK_BYTES; i++) /* not zeros: no filesystem shortcut for zero pages */
        ((unsigned char *)st.buf)[i] = (unsigned char)(i * 2654435761u >> 13);
    bool quick = ctx->opts.quick;
    uint64_t bytes = ctx->opts.size_bytes ? ctx->opts.size_bytes : quick ? (128ull << 20) : (1ull << 30);
    bytes = (bytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
    storage_report(ctx, &st, dir);
    int rc = seq_tests(ctx, &st, bytes);
    if (!rc)
        rc = fsync_test(ctx, &st, quick ? 50 : 500);
    if (!rc)
        rc = small_files(ctx, &st, quick ? 500 : 5000);
    if (!rc)
        rc = checkpoint_test(ctx, &st, quick ? bytes / 2 : bytes);
    unlink(st.file);
    rmdir(st.dir);
    free(st.buf);
    cp_ss_sample_free(&st.io0);
    return rc;
}
