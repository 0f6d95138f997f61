/* col_io.c - the storage layer: libc file I/O calls, with bytes, durations
 * and paths, classified checkpoint / dataset / other.
 *
 * Only files opened through the interposed open/openat/creat/fopen calls
 * are followed (an fd table of CPT_IOC_* + 1 per descriptor, 0 = not
 * followed): reads and writes on sockets, pipes and terminals cost one
 * table load and are not recorded, so NCCL's or MPI's socket traffic never
 * counts as storage. Paths under /proc, /sys and /dev are not followed.
 *
 * Classification: a call inside a checkpoint or dataset/data-loader region
 * (the framework layer said so) takes that class; otherwise the file's
 * class from its path (col_class.c), decided at open.
 *
 * Not seen: memory-mapped file access (numpy.memmap, safetensors' mmap),
 * io_uring and POSIX AIO, stdio writes flushed inside libc (their time is
 * in the fwrite/fclose records), descriptors duplicated with dup/fcntl.
 */
#undef _FILE_OFFSET_BITS /* we define open and open64 separately */
#undef _FORTIFY_SOURCE   /* ... and the real read, not its inline checker */
#include "col.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define FD_MAX 65536
static struct {
    _Atomic uint32_t cls;  /* CPT_IOC_* + 1; 0 = not followed */
    _Atomic uint32_t path; /* str id (trace mode) */
} fds[FD_MAX];

static const uint8_t io_dir[CPT_IO__COUNT] = {
#define CPT_X(e, name, dir) dir,
    CPT_IO_CALLS(CPT_X)
#undef CPT_X
};

static bool followed_path(const char *p)
{
    return p && strncmp(p, "/proc/", 6) != 0 && strncmp(p, "/sys/", 5) != 0 && strncmp(p, "/dev/", 5) != 0;
}

/* The absolute form of a relative path (for the directory rules). */
static const char *absolute(const char *p, char *buf, size_t n)
{
    if (p[0] == '/' || !getcwd(buf, n))
        return p;
    size_t k = strlen(buf);
    snprintf(buf + k, n - k, "/%s", p);
    return buf;
}

/* ---- records ---- */

static int call_class(const col_thread *t, int fd, uint16_t *flags)
{
    if (t->io_class >= 0) {
        *flags |= CPT_IOF_BY_REGION;
        return t->io_class;
    }
    uint32_t c = fd >= 0 && fd < FD_MAX ? atomic_load_explicit(&fds[fd].cls, memory_order_relaxed) : 0;
    return c ? (int)c - 1 : CPT_IOC_OTHER;
}

static void io_record(col_thread *t, int op, int cls, uint16_t flags, int64_t t0, int fd, uint64_t b, uint32_t path)
{
    int64_t dur = col_now() - t0;
    if (atomic_load_explicit(&col_mode_now, memory_order_relaxed) == COL_SUMMARY) {
        col_acc(t, cls == CPT_IOC_CHECKPOINT ? COL_A_CKPT : cls == CPT_IOC_DATASET ? COL_A_DATA : COL_A_IO_OTHER, dur);
        col_acc(t, COL_A_N_IO, 1);
        if (!(flags & CPT_IOF_ERROR) && io_dir[op])
            col_acc(t, io_dir[op] == 1 ? COL_A_READ_BYTES : COL_A_WRITE_BYTES, (int64_t)b);
    } else if (col_tracing()) {
        cpt_rec r = { .kind = CPT_K_IO, .op = (uint8_t)op, .flags = flags, .u32 = (uint32_t)cls, .t_ns = t0,
                      .dur_ns = dur, .a = (uint64_t)(int64_t)fd, .b = b, .c = path };
        col_push(t, &r);
    }
    if (cls != CPT_IOC_OTHER) /* a process that only read its own code and config leaves no file */
        col_count(t, false);
}

/* After a successful open of path as fd: follow it. */
static uint32_t follow(col_thread *t, int fd, const char *path, int *cls)
{
    char buf[1024];
    const char *abs = absolute(path, buf, sizeof buf);
    *cls = col_io_class_of_path(abs);
    uint32_t id = col_trace_mode() ? col_str(t, abs, strlen(abs)) : 0;
    if (fd >= 0 && fd < FD_MAX) {
        atomic_store_explicit(&fds[fd].path, id, memory_order_relaxed);
        atomic_store_explicit(&fds[fd].cls, (uint32_t)*cls + 1, memory_order_relaxed);
    }
    return id;
}

static int opened(col_thread *t, int op, int64_t t0, const char *path, int flags, int fd)
{
    int err = errno;
    int cls = CPT_IOC_OTHER;
    uint32_t id = fd >= 0 ? follow(t, fd, path, &cls) : 0;
    uint16_t fl = 0;
    if (t->io_class >= 0) {
        cls = t->io_class;
        fl |= CPT_IOF_BY_REGION;
        if (fd >= 0 && fd < FD_MAX)
            atomic_store_explicit(&fds[fd].cls, (uint32_t)cls + 1, memory_order_relaxed);
    }
    if (fd < 0)
        fl |= CPT_IOF_ERROR;
    io_record(t, op, cls, fl, t0, fd, fd < 0 ? (uint64_t)err : (uint64_t)(unsigned)flags, id);
    col_leave(t);
    errno = err;
    return fd;
}

static inline bool followed(int fd)
{
    return fd >= 0 && fd < FD_MAX && atomic_load_explicit(&fds[fd].cls, memory_order_relaxed) != 0;
}

/* A data call on a followed fd: time it, record bytes or the error. */
#define DATA_CALL(OP, FD, CALL)                                                                       \
    do {                                                                                              \
        col_thread *t;                                                                                \
        if (!followed(FD) || !(t = col_enter()))                                                      \
            return CALL;                                                                              \
        int64_t t0 = col_now();                                                                       \
        ssize_t rc = CALL;                                                                            \
        int err = errno;                                                                              \
        uint16_t fl = rc < 0 ? CPT_IOF_ERROR : 0;                                                     \
        int cls = call_class(t, FD, &fl);                                                             \
        io_record(t, OP, cls, fl, t0, FD, rc < 0 ? (uint64_t)err : (uint64_t)rc,                      \
                  atomic_load_explicit(&fds[FD].path, memory_order_relaxed));                         \
        col_leave(t);                                                                                 \
        errno = err;                                                                                  \
        return rc;                                                                                    \
    } while (0)

#define REAL_OR(var, type, name, fail)                                                                \
    static type var;                                                                                  \
    COL_REAL(var, name, NULL);                                                                        \
    if (!var) {                                                                                       \
        errno = ENOSYS;                                                                               \
        return fail;                                                                                  \
    }

/* One data-call wrapper: RET NAME PARAMS forwarding ARGS to the real NAME
 * (of type TYPE) and recording it as OP. */
#define DATA_FN(RET, NAME, TYPE, OP, PARAMS, ARGS)                                                    \
    COL_EXPORT RET NAME PARAMS                                                                        \
    {                                                                                                 \
        REAL_OR(real, TYPE, #NAME, -1);                                                               \
        DATA_CALL(OP, fd, real ARGS);                                                                 \
    }

/* ---- opens ---- */

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);

static int mode_of(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

#define OPEN_BODY(OP, CALL)                                                                           \
    col_thread *t = followed_path(path) ? col_enter() : NULL;                                         \
    if (!t)                                                                                           \
        return CALL;                                                                                  \
    int64_t t0 = col_now();                                                                           \
    int fd = CALL;                                                                                    \
    return opened(t, OP, t0, path, flags, fd)

COL_EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_of(flags, ap);
    va_end(ap);
    REAL_OR(real, open_fn, "open", -1);
    OPEN_BODY(CPT_IO_OPEN, real(path, flags, mode));
}

COL_EXPORT int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_of(flags, ap);
    va_end(ap);
    REAL_OR(real, open_fn, "open64", -1);
    OPEN_BODY(CPT_IO_OPEN, real(path, flags, mode));
}

COL_EXPORT int openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_of(flags, ap);
    va_end(ap);
    REAL_OR(real, openat_fn, "openat", -1);
    OPEN_BODY(CPT_IO_OPENAT, real(dir, path, flags, mode));
}

COL_EXPORT int openat64(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_of(flags, ap);
    va_end(ap);
    REAL_OR(real, openat_fn, "openat64", -1);
    OPEN_BODY(CPT_IO_OPENAT, real(dir, path, flags, mode));
}

/* _FORTIFY_SOURCE's checked opens (no mode argument) */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dir, const char *path, int flags);
int __openat64_2(int dir, const char *path, int flags);

COL_EXPORT int __open_2(const char *path, int flags)
{
    REAL_OR(real, open2_fn, "__open_2", -1);
    OPEN_BODY(CPT_IO_OPEN, real(path, flags));
}

COL_EXPORT int __open64_2(const char *path, int flags)
{
    REAL_OR(real, open2_fn, "__open64_2", -1);
    OPEN_BODY(CPT_IO_OPEN, real(path, flags));
}

COL_EXPORT int __openat_2(int dir, const char *path, int flags)
{
    REAL_OR(real, openat2_fn, "__openat_2", -1);
    OPEN_BODY(CPT_IO_OPENAT, real(dir, path, flags));
}

COL_EXPORT int __openat64_2(int dir, const char *path, int flags)
{
    REAL_OR(real, openat2_fn, "__openat64_2", -1);
    OPEN_BODY(CPT_IO_OPENAT, real(dir, path, flags));
}

typedef int (*creat_fn)(const char *, mode_t);

COL_EXPORT int creat(const char *path, mode_t mode)
{
    int flags = O_CREAT | O_WRONLY | O_TRUNC;
    REAL_OR(real, creat_fn, "creat", -1);
    OPEN_BODY(CPT_IO_CREAT, real(path, mode));
}

COL_EXPORT int creat64(const char *path, mode_t mode)
{
    int flags = O_CREAT | O_WRONLY | O_TRUNC;
    REAL_OR(real, creat_fn, "creat64", -1);
    OPEN_BODY(CPT_IO_CREAT, real(path, mode));
}

typedef FILE *(*fopen_fn)(const char *, const char *);

static FILE *fopen_common(fopen_fn real, const char *path, const char *mode)
{
    col_thread *t = followed_path(path) ? col_enter() : NULL;
    if (!t)
        return real(path, mode);
    int64_t t0 = col_now();
    FILE *f = real(path, mode);
    opened(t, CPT_IO_FOPEN, t0, path, mode && strchr(mode, 'r') && !strchr(mode, '+') ? O_RDONLY : O_WRONLY,
           f ? fileno(f) : -1);
    return f;
}

COL_EXPORT FILE *fopen(const char *path, const char *mode)
{
    REAL_OR(real, fopen_fn, "fopen", NULL);
    return fopen_common(real, path, mode);
}

COL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    REAL_OR(real, fopen_fn, "fopen64", NULL);
    return fopen_common(real, path, mode);
}

/* ---- data ---- */

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef ssize_t (*wr_fn)(int, const void *, size_t);
typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pwr_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*prw64_fn)(int, void *, size_t, off64_t);
typedef ssize_t (*pwr64_fn)(int, const void *, size_t, off64_t);
typedef ssize_t (*rchk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*prchk_fn)(int, void *, size_t, off_t, size_t);
typedef ssize_t (*prchk64_fn)(int, void *, size_t, off64_t, size_t);
typedef ssize_t (*iov_fn)(int, const struct iovec *, int);
typedef ssize_t (*piov_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*piov64_fn)(int, const struct iovec *, int, off64_t);

DATA_FN(ssize_t, read, rw_fn, CPT_IO_READ, (int fd, void *b, size_t n), (fd, b, n))
ssize_t __read_chk(int fd, void *b, size_t n, size_t buflen);
DATA_FN(ssize_t, __read_chk, rchk_fn, CPT_IO_READ, (int fd, void *b, size_t n, size_t buflen), (fd, b, n, buflen))
DATA_FN(ssize_t, pread, prw_fn, CPT_IO_PREAD, (int fd, void *b, size_t n, off_t off), (fd, b, n, off))
DATA_FN(ssize_t, pread64, prw64_fn, CPT_IO_PREAD, (int fd, void *b, size_t n, off64_t off), (fd, b, n, off))
ssize_t __pread_chk(int fd, void *b, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *b, size_t n, off64_t off, size_t buflen);
DATA_FN(ssize_t, __pread_chk, prchk_fn, CPT_IO_PREAD, (int fd, void *b, size_t n, off_t off, size_t buflen),
        (fd, b, n, off, buflen))
DATA_FN(ssize_t, __pread64_chk, prchk64_fn, CPT_IO_PREAD, (int fd, void *b, size_t n, off64_t off, size_t buflen),
        (fd, b, n, off, buflen))
DATA_FN(ssize_t, readv, iov_fn, CPT_IO_READV, (int fd, const struct iovec *v, int n), (fd, v, n))
DATA_FN(ssize_t, preadv, piov_fn, CPT_IO_PREADV, (int fd, const struct iovec *v, int n, off_t off), (fd, v, n, off))
DATA_FN(ssize_t, preadv64, piov64_fn, CPT_IO_PREADV, (int fd, const struct iovec *v, int n, off64_t off), (fd, v, n, off))
DATA_FN(ssize_t, write, wr_fn, CPT_IO_WRITE, (int fd, const void *b, size_t n), (fd, b, n))
DATA_FN(ssize_t, pwrite, pwr_fn, CPT_IO_PWRITE, (int fd, const void *b, size_t n, off_t off), (fd, b, n, off))
DATA_FN(ssize_t, pwrite64, pwr64_fn, CPT_IO_PWRITE, (int fd, const void *b, size_t n, off64_t off), (fd, b, n, off))
DATA_FN(ssize_t, writev, iov_fn, CPT_IO_WRITEV, (int fd, const struct iovec *v, int n), (fd, v, n))
DATA_FN(ssize_t, pwritev, piov_fn, CPT_IO_PWRITEV, (int fd, const struct iovec *v, int n, off_t off), (fd, v, n, off))
DATA_FN(ssize_t, pwritev64, piov64_fn, CPT_IO_PWRITEV, (int fd, const struct iovec *v, int n, off64_t off), (fd, v, n, off))

typedef int (*sync_fn)(int);

DATA_FN(int, fsync, sync_fn, CPT_IO_FSYNC, (int fd), (fd))
DATA_FN(int, fdatasync, sync_fn, CPT_IO_FDATASYNC, (int fd), (fd))

typedef size_t (*fread_fn)(void *, size_t, size_t, FILE *);
typedef size_t (*fwrite_fn)(const void *, size_t, size_t, FILE *);

/* stdio: bytes are size x items done; a short count is not an error */
#define STDIO_CALL(OP, CALL)                                                                          \
    do {                                                                                              \
        int fd = fileno(f);                                                                           \
        col_thread *t;                                                                                \
        if (!followed(fd) || !(t = col_enter()))                                                      \
            return CALL;                                                                              \
        int64_t t0 = col_now();                                                                       \
        size_t rc = CALL;                                                                             \
        int err = errno;                                                                              \
        uint16_t fl = 0;                                                                              \
        int cls = call_class(t, fd, &fl);                                                             \
        io_record(t, OP, cls, fl, t0, fd, (uint64_t)(rc * size),                                      \
                  atomic_load_explicit(&fds[fd].path, memory_order_relaxed));                         \
        col_leave(t);                                                                                 \
        errno = err;                                                                                  \
        return rc;                                                                                    \
    } while (0)

COL_EXPORT size_t fread(void *p, size_t size, size_t n, FILE *f)
{
    REAL_OR(real, fread_fn, "fread", 0);
    STDIO_CALL(CPT_IO_FREAD, real(p, size, n, f));
}

COL_EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    REAL_OR(real, fwrite_fn, "fwrite", 0);
    STDIO_CALL(CPT_IO_FWRITE, real(p, size, n, f));
}

/* ---- closes and renames ---- */

static void unfollow(int fd)
{
    if (fd >= 0 && fd < FD_MAX) {
        atomic_store_explicit(&fds[fd].cls, 0, memory_order_relaxed);
        atomic_store_explicit(&fds[fd].path, 0, memory_order_relaxed);
    }
}

typedef int (*close_fn)(int);

COL_EXPORT int close(int fd)
{
    REAL_OR(real, close_fn, "close", -1);
    col_thread *t;
    if (!followed(fd))
        return real(fd);
    if (!col_is_owner()) /* a vfork child closing its copy: the parent's fd stays open */
        return real(fd);
    if (!(t = col_enter())) {
        unfollow(fd);
        return real(fd);
    }
    uint16_t fl = 0;
    int cls = call_class(t, fd, &fl);
    uint32_t path = atomic_load_explicit(&fds[fd].path, memory_order_relaxed);
    unfollow(fd);
    int64_t t0 = col_now();
    int rc = real(fd);
    int err = errno;
    io_record(t, CPT_IO_CLOSE, cls, (uint16_t)(fl | (rc < 0 ? CPT_IOF_ERROR : 0)), t0, fd,
              rc < 0 ? (uint64_t)err : 0, path);
    col_leave(t);
    errno = err;
    return rc;
}

typedef int (*fclose_fn)(FILE *);

COL_EXPORT int fclose(FILE *f)
{
    REAL_OR(real, fclose_fn, "fclose", EOF);
    int fd = f ? fileno(f) : -1;
    col_thread *t;
    if (!followed(fd) || !col_is_owner())
        return real(f);
    if (!(t = col_enter())) {
        unfollow(fd);
        return real(f);
    }
    uint16_t fl = 0;
    int cls = call_class(t, fd, &fl);
    uint32_t path = atomic_load_explicit(&fds[fd].path, memory_order_relaxed);
    unfollow(fd);
    int64_t t0 = col_now();
    int rc = real(f); /* flushes what stdio buffered: that write time is here */
    int err = errno;
    io_record(t, CPT_IO_FCLOSE, cls, (uint16_t)(fl | (rc ? CPT_IOF_ERROR : 0)), t0, fd, 0, path);
    col_leave(t);
    errno = err;
    return rc;
}

typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);

static int renamed(col_thread *t, int op, int64_t t0, const char *to, int rc)
{
    int err = errno;
    char buf[1024];
    const char *abs = absolute(to, buf, sizeof buf);
    uint16_t fl = rc < 0 ? CPT_IOF_ERROR : 0;
    int cls = t->io_class >= 0 ? (fl |= CPT_IOF_BY_REGION, t->io_class) : col_io_class_of_path(abs);
    uint32_t id = col_trace_mode() ? col_str(t, abs, strlen(abs)) : 0;
    io_record(t, op, cls, fl, t0, -1, rc < 0 ? (uint64_t)err : 0, id);
    col_leave(t);
    errno = err;
    return rc;
}

COL_EXPORT int rename(const char *from, const char *to)
{
    REAL_OR(real, rename_fn, "rename", -1);
    col_thread *t = followed_path(to) ? col_enter() : NULL;
    if (!t)
        return real(from, to);
    int64_t t0 = col_now();
    int rc = real(from, to);
    return renamed(t, CPT_IO_RENAME, t0, to, rc);
}

COL_EXPORT int renameat(int fd1, const char *from, int fd2, const char *to)
{
    REAL_OR(real, renameat_fn, "renameat", -1);
    col_thread *t = followed_path(to) ? col_enter() : NULL;
    if (!t)
        return real(fd1, from, fd2, to);
    int64_t t0 = col_now();
    int rc = real(fd1, from, fd2, to);
    return renamed(t, CPT_IO_RENAMEAT, t0, to, rc);
}
