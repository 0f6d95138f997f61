/* src.c - see src.h. gzip goes through ISA-L's inflate when the build has
 * it (about 3x zlib's speed on traces, so .gz input costs little more than
 * plain JSON), else zlib; both read concatenated members and report a
 * member cut short as truncation. */
#include "src.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#ifdef CP_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define RAW_CHUNK (1u << 20)

struct cp_src {
    cp_src_kind kind;
    int fd;
    char *name;
    uint64_t offset, raw_offset, raw_size;
    bool eof_raw, truncated, done;
    /* corrupt compressed data (a CRC or checksum mismatch, bad deflate
     * blocks): what, and where; the bytes decoded before it were delivered */
    char damage[200];
    /* compressed input window */
    unsigned char *raw;
    size_t raw_len, raw_pos;
    /* memory source */
    const unsigned char *mem;
    size_t mem_len;
    z_stream z;
#ifdef CP_HAVE_ISAL
    struct inflate_state *isal; /* ~70 KiB of decoder state: on the heap */
#endif
    ZSTD_DCtx *zd;
    bool z_end; /* the current gzip member or zstd frame ended */
};

const char *cp_src_kind_name(cp_src_kind k)
{
    switch (k) {
    case CP_SRC_GZIP: return "gzip";
    case CP_SRC_ZSTD: return "zstd";
    case CP_SRC_MEM: return "memory";
    default: return "plain";
    }
}

static ssize_t read_fd(cp_src *s, void *buf, size_t n, cp_error *err)
{
    for (;;) {
        ssize_t r = read(s->fd, buf, n);
        if (r >= 0) {
            s->raw_offset += (uint64_t)r;
            return r;
        }
        if (errno != EINTR)
            return cp_error_sys(err, CP_ERR_IO, s->name, "read failed");
    }
}

/* Make sure the raw window has unread bytes; returns false at raw EOF. */
static int fill_raw(cp_src *s, cp_error *err)
{
    if (s->raw_pos < s->raw_len)
        return 1;
    if (s->eof_raw)
        return 0;
    ssize_t r = read_fd(s, s->raw, RAW_CHUNK, err);
    if (r < 0)
        return (int)r;
    s->raw_len = (size_t)r;
    s->raw_pos = 0;
    if (r == 0)
        s->eof_raw = true;
    return r > 0;
}

int cp_src_open(cp_src **out, const char *path, cp_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return cp_error_set(err, CP_ERR_IO, path, 0, 0, -1, "cannot read: is a directory");
    }
    cp_src *s = cp_xcalloc(1, sizeof *s);
    s->fd = fd;
    s->name = cp_xstrdup(path);
    s->raw_size = (uint64_t)st.st_size;
    s->raw = cp_xmalloc(RAW_CHUNK);
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    int rc = fill_raw(s, err);
    if (rc < 0) {
        cp_src_close(s);
        return rc;
    }
    const unsigned char *m = s->raw;
    if (s->raw_len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
        s->kind = CP_SRC_GZIP;
#ifdef CP_HAVE_ISAL
        s->isal = cp_xmalloc(sizeof *s->isal);
        isal_inflate_init(s->isal);
        s->isal->crc_flag = ISAL_GZIP;
#else
        if (inflateInit2(&s->z, 15 + 32) != Z_OK) {
            cp_src_close(s);
            return cp_error_set(err, CP_ERR_NOMEM, path, 0, 0, -1, "cannot start gzip decoder");
        }
#endif
    } else if (s->raw_len >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) {
        s->kind = CP_SRC_ZSTD;
        s->zd = ZSTD_createDCtx();
        if (!s->zd) {
            cp_src_close(s);
            return cp_error_set(err, CP_ERR_NOMEM, path, 0, 0, -1, "cannot start zstd decoder");
        }
    } else {
        s->kind = CP_SRC_PLAIN;
    }
    *out = s;
    return 0;
}

cp_src *cp_src_open_mem(const void *data, size_t n, const char *name)
{
    cp_src *s = cp_xcalloc(1, sizeof *s);
    s->kind = CP_SRC_MEM;
    s->fd = -1;
    s->mem = data;
    s->mem_len = n;
    s->raw_size = n;
    s->name = cp_xstrdup(name ? name : "<memory>");
    return s;
}

/* The compressed stream is damaged (not cut short): say what it is, once,
 * with the compressed offset; reading stops there. Returns the message. */
__attribute__((format(printf, 2, 3))) static const char *set_damage(cp_src *s, const char *fmt, ...)
{
    char what[120];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(s->damage, sizeof s->damage, "%s at compressed offset %llu", what,
             (unsigned long long)(s->raw_offset - (s->raw_len - s->raw_pos)));
    s->done = true;
    return s->damage;
}

#ifndef CP_HAVE_ISAL
/* zlib's messages for the gzip trailer checks, named as gzip names them */
static const char *zlib_damage(const z_stream *z)
{
    if (z->msg && !strcmp(z->msg, "incorrect data check"))
        return "gzip CRC-32 mismatch";
    if (z->msg && !strcmp(z->msg, "incorrect length check"))
        return "gzip ISIZE (length) mismatch";
    return NULL;
}

static ssize_t read_gzip(cp_src *s, void *buf, size_t n, cp_error *err)
{
    s->z.next_out = buf;
    s->z.avail_out = (uInt)CP_MIN(n, (size_t)1 << 30);
    while (s->z.avail_out > 0) {
        int rc = fill_raw(s, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            /* raw EOF: fine only at a member boundary */
            if (!s->z_end)
                s->truncated = true;
            s->done = true;
            break;
        }
        if (s->z_end) {
            /* another gzip member follows (concatenated .gz) */
            inflateReset(&s->z);
            s->z_end = false;
        }
        s->z.next_in = s->raw + s->raw_pos;
        s->z.avail_in = (uInt)(s->raw_len - s->raw_pos);
        int zr = inflate(&s->z, Z_NO_FLUSH);
        s->raw_pos = s->raw_len - s->z.avail_in;
        if (zr == Z_STREAM_END) {
            s->z_end = true;
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            const char *named = zlib_damage(&s->z);
            const char *m = named ? set_damage(s, "%s", named)
                                  : set_damage(s, "corrupt deflate data (%s)", s->z.msg ? s->z.msg : "inflate failed");
            if (n - s->z.avail_out)
                break; /* the bytes decoded before it first; the end comes next */
            return cp_error_set(err, CP_ERR_FORMAT, s->name, 0, 0, (long long)s->offset, "%s", m);
        }
    }
    return (ssize_t)(n - s->z.avail_out);
}
#endif

#ifdef CP_HAVE_ISAL
static ssize_t read_gzip_isal(cp_src *s, void *buf, size_t n, cp_error *err)
{
    struct inflate_state *st = s->isal;
    st->next_out = buf;
    st->avail_out = (uint32_t)CP_MIN(n, (size_t)1 << 30);
    uint32_t want = st->avail_out;
    while (st->avail_out > 0) {
        int rc = fill_raw(s, err);
        if (rc < 0)
            return rc;
        if (s->z_end) {
            if (rc == 0) { /* raw EOF at a member boundary: the clean end */
                s->done = true;
                break;
            }
            isal_inflate_reset(st); /* another gzip member follows (concatenated .gz) */
            st->crc_flag = ISAL_GZIP;
            s->z_end = false;
        }
        st->next_in = rc ? s->raw + s->raw_pos : NULL;
        st->avail_in = rc ? (uint32_t)(s->raw_len - s->raw_pos) : 0;
        uint32_t out_before = st->avail_out;
        int zr = isal_inflate(st);
        if (rc)
            s->raw_pos = s->raw_len - st->avail_in;
        if (zr < 0 || zr == ISAL_NEED_DICT) {
            const char *m = zr == ISAL_INCORRECT_CHECKSUM ? set_damage(s, "gzip CRC-32 or ISIZE mismatch")
                            : zr == ISAL_INVALID_WRAPPER  ? set_damage(s, "corrupt gzip header or trailer")
                                                          : set_damage(s, "corrupt deflate data (isa-l error %d)", zr);
            if (want - st->avail_out)
                break; /* the bytes decoded before it first; the end comes next */
            return cp_error_set(err, CP_ERR_FORMAT, s->name, 0, 0, (long long)s->offset, "%s", m);
        }
        if (st->block_state == ISAL_BLOCK_FINISH)
            s->z_end = true;
        else if (rc == 0 && st->avail_out == out_before) { /* input over, member not finished */
            s->truncated = true;
            s->done = true;
            break;
        }
    }
    return (ssize_t)(want - st->avail_out);
}
#endif

static ssize_t read_zstd(cp_src *s, void *buf, size_t n, cp_error *err)
{
    ZSTD_outBuffer ob = { buf, n, 0 };
    while (ob.pos < ob.size) {
        int rc = fill_raw(s, err);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            /* flush what the decoder still holds */
            ZSTD_inBuffer ib = { NULL, 0, 0 };
            size_t before = ob.pos;
            size_t r = ZSTD_decompressStream(s->zd, &ob, &ib);
            if (ob.pos > before && !ZSTD_isError(r)) {
                s->z_end = (r == 0);
                continue;
            }
            /* a clean end is the end of a frame (z_end), not a hint for more */
            if (ZSTD_isError(r) || !s->z_end)
                s->truncated = true;
            s->done = true;
            break;
        }
        ZSTD_inBuffer ib = { s->raw + s->raw_pos, s->raw_len - s->raw_pos, 0 };
        /* small output windows: into a large buffer zstd decodes blocks in
         * place and, on an error (a checksum mismatch is found at the end of
         * the frame), reports none of what it decoded in that call; 4 KiB
         * windows lose at most 4 KiB before the damage and cost no
         * measurable time (125 MB of trace: 0.08 s with 4 KiB or 128 KiB) */
        ZSTD_outBuffer win = { (char *)buf + ob.pos, CP_MIN(ob.size - ob.pos, (size_t)4096), 0 };
        size_t r = ZSTD_decompressStream(s->zd, &win, &ib);
        ob.pos += win.pos;
        s->raw_pos += ib.pos;
        if (ZSTD_isError(r)) {
            const char *m = ZSTD_getErrorCode(r) == ZSTD_error_checksum_wrong
                                ? set_damage(s, "zstd checksum mismatch")
                                : set_damage(s, "corrupt zstd data (%s)", ZSTD_getErrorName(r));
            if (ob.pos)
                break; /* the bytes decoded before it first; the end comes next */
            return cp_error_set(err, CP_ERR_FORMAT, s->name, 0, 0, (long long)s->offset, "%s", m);
        }
        s->z_end = (r == 0);
    }
    return (ssize_t)ob.pos;
}

ssize_t cp_src_read(cp_src *s, void *buf, size_t n, cp_error *err)
{
    ssize_t r = 0;
    if (s->done || n == 0)
        return 0;
    switch (s->kind) {
    case CP_SRC_MEM:
        r = (ssize_t)CP_MIN(n, s->mem_len - (size_t)s->offset);
        memcpy(buf, s->mem + s->offset, (size_t)r);
        break;
    case CP_SRC_PLAIN:
        if (s->raw_pos < s->raw_len) {
            r = (ssize_t)CP_MIN(n, s->raw_len - s->raw_pos);
            memcpy(buf, s->raw + s->raw_pos, (size_t)r);
            s->raw_pos += (size_t)r;
        } else {
            r = read_fd(s, buf, n, err);
        }
        break;
#ifdef CP_HAVE_ISAL
    case CP_SRC_GZIP: r = read_gzip_isal(s, buf, n, err); break;
#else
    case CP_SRC_GZIP: r = read_gzip(s, buf, n, err); break;
#endif
    case CP_SRC_ZSTD: r = read_zstd(s, buf, n, err); break;
    }
    if (r > 0)
        s->offset += (uint64_t)r;
    return r;
}

bool cp_src_truncated(const cp_src *s) { return s->truncated; }
const char *cp_src_damage(const cp_src *s) { return s->damage[0] ? s->damage : NULL; }
uint64_t cp_src_offset(const cp_src *s) { return s->offset; }
uint64_t cp_src_raw_offset(const cp_src *s) { return s->kind == CP_SRC_MEM ? s->offset : s->raw_offset; }
uint64_t cp_src_raw_size(const cp_src *s) { return s->raw_size; }
cp_src_kind cp_src_get_kind(const cp_src *s) { return s->kind; }
const char *cp_src_name(const cp_src *s) { return s->name; }

void cp_src_close(cp_src *s)
{
    if (!s)
        return;
#ifdef CP_HAVE_ISAL
    free(s->isal);
#else
    if (s->kind == CP_SRC_GZIP)
        inflateEnd(&s->z);
#endif
    if (s->zd)
        ZSTD_freeDCtx(s->zd);
    if (s->fd >= 0)
        close(s->fd);
    free(s->raw);
    free(s->name);
    free(s);
}

int cp_src_spool(const char *path, char *out_path, size_t size, uint64_t max_bytes, int *fd_out, cp_error *err)
{
    *fd_out = -1;
    struct stat st;
    if (stat(path, &st) != 0)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot open");
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return 0;
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
        return cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1, "a device, not a file: nothing to read");
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot open");
    int mfd = memfd_create("chainprof-input", MFD_CLOEXEC);
    if (mfd < 0) {
        close(in);
        return cp_error_sys(err, CP_ERR_IO, path, "cannot hold the pipe's data in memory");
    }
    char *buf = cp_xmalloc(RAW_CHUNK);
    uint64_t total = 0;
    int rc = 1;
    for (;;) {
        ssize_t r = read(in, buf, RAW_CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = cp_error_sys(err, CP_ERR_IO, path, "read failed");
            break;
        }
        if (r == 0)
            break;
        if ((total += (uint64_t)r) > max_bytes) {
            rc = cp_error_set(err, CP_ERR_NOMEM, path, 0, 0, (long long)total, "more than %llu bytes through a pipe",
                              (unsigned long long)max_bytes);
            break;
        }
        for (ssize_t w = 0; w < r;) {
            ssize_t k = write(mfd, buf + w, (size_t)(r - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                rc = cp_error_sys(err, CP_ERR_IO, path, "cannot hold the pipe's data in memory");
                break;
            }
            w += k;
        }
        if (rc < 0)
            break;
    }
    free(buf);
    close(in);
    if (rc < 0) {
        close(mfd);
        return rc;
    }
    snprintf(out_path, size, "/proc/self/fd/%d", mfd);
    *fd_out = mfd;
    return 1;
}

ssize_t cp_src_peek(const char *path, void *buf, size_t n, cp_error *err)
{
    cp_src *s;
    int rc = cp_src_open(&s, path, err);
    if (rc < 0)
        return rc;
    size_t got = 0;
    while (got < n) {
        ssize_t r = cp_src_read(s, (char *)buf + got, n - got, err);
        if (r < 0) {
            if (got)
                break;
            cp_src_close(s);
            return r;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    cp_src_close(s);
    return (ssize_t)got;
}

int cp_src_read_all(const char *path, cp_buf *out, size_t max_bytes, cp_error *err)
{
    cp_src *s;
    int rc = cp_src_open(&s, path, err);
    if (rc < 0)
        return rc;
    for (;;) {
        cp_buf_reserve(out, 1 << 16);
        ssize_t r = cp_src_read(s, out->data + out->len, out->cap - out->len - 1, err);
        if (r < 0) {
            cp_src_close(s);
            return (int)r;
        }
        if (r == 0)
            break;
        out->len += (size_t)r;
        out->data[out->len] = 0;
        if (out->len > max_bytes) {
            cp_src_close(s);
            return cp_error_set(err, CP_ERR_NOMEM, path, 0, 0, -1,
                                "file larger than the %zu-byte limit for this kind of input", max_bytes);
        }
    }
    cp_src_close(s);
    return 0;
}

/* ---- mapped plain files ---- */

int cp_fmap_open(cp_fmap *m, const char *path, cp_error *err)
{
    memset(m, 0, sizeof *m);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return cp_error_set(err, CP_ERR_IO, path, 0, 0, -1, "cannot map: not a regular non-empty file");
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file */
    if (p == MAP_FAILED) {
        errno = e;
        return cp_error_sys(err, CP_ERR_IO, path, "cannot map");
    }
    /* read ahead of the parser; pages behind it go back through cp_fmap_drop */
    madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
    m->data = p;
    m->n = (size_t)st.st_size;
    return 0;
}

void cp_fmap_drop(cp_fmap *m, size_t before)
{
    if (!m->data || before < m->dropped + CP_FMAP_STEP)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t upto = CP_MIN(before, m->n) / page * page;
    if (upto > m->dropped) {
        /* a private read-only file mapping: the pages stay in the page
         * cache, only this process's references to them go */
        madvise((char *)m->data + m->dropped, upto - m->dropped, MADV_DONTNEED);
        m->dropped = upto;
    }
}

void cp_fmap_close(cp_fmap *m)
{
    if (m->data)
        munmap((void *)m->data, m->n);
    memset(m, 0, sizeof *m);
}
