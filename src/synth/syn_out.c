/* syn_out.c - see syn_out.h. */
#include "syn_out.h"
#include "../base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define SYN_BUF_BYTES (256u << 10) /* x2 when compressing, per rank: 512 ranks stay under 256 MiB */

static void write_all(syn_out *o, const char *p, size_t n)
{
    while (n > 0 && !o->err.code) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            cp_error_sys(&o->err, CP_ERR_IO, o->path, "cannot write trace");
            return;
        }
        p += w;
        n -= (size_t)w;
        o->file_bytes += (uint64_t)w;
    }
}

/* Push n bytes of text (or the end of stream when finish) through the
 * compressor into the file. */
static void compress_out(syn_out *o, const char *p, size_t n, int finish)
{
    if (o->comp == SYN_GZIP) {
        z_stream *z = o->zs;
        z->next_in = (Bytef *)(uintptr_t)p;
        z->avail_in = (uInt)n;
        int zr;
        do {
            z->next_out = (Bytef *)o->cbuf;
            z->avail_out = (uInt)o->ccap;
            zr = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
            if (zr == Z_STREAM_ERROR) {
                cp_error_set(&o->err, CP_ERR_INTERNAL, o->path, 0, 0, -1, "gzip compression failed");
                return;
            }
            write_all(o, o->cbuf, o->ccap - z->avail_out);
        } while (!o->err.code && (z->avail_out == 0 || (finish && zr != Z_STREAM_END)));
        return;
    }
    ZSTD_inBuffer in = { p, n, 0 };
    for (;;) {
        ZSTD_outBuffer out = { o->cbuf, o->ccap, 0 };
        size_t left = ZSTD_compressStream2(o->zs, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left)) {
            cp_error_set(&o->err, CP_ERR_INTERNAL, o->path, 0, 0, -1, "zstd compression failed: %s",
                         ZSTD_getErrorName(left));
            return;
        }
        write_all(o, o->cbuf, out.pos);
        if (o->err.code || (finish ? left == 0 : in.pos == in.size))
            return;
    }
}

void syn_out_flush(syn_out *o)
{
    if (o->len == 0)
        return;
    o->json_bytes += o->len;
    if (!o->err.code) {
        if (o->comp == SYN_PLAIN)
            write_all(o, o->buf, o->len);
        else
            compress_out(o, o->buf, o->len, 0);
    }
    o->len = 0;
}

int syn_out_open(syn_out *o, const char *path, syn_compress comp, bool force, cp_error *err)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    struct stat st;
    if (!force && lstat(path, &st) == 0)
        return cp_error_set(err, CP_ERR_USAGE, path, 0, 0, -1,
                            "cannot write trace: file exists (use --force to replace it)");
    o->path = cp_xstrdup(path);
    size_t tl = strlen(path) + 16;
    o->tmp = cp_xmalloc(tl);
    snprintf(o->tmp, tl, "%s.tmp.XXXXXX", path);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int rc = cp_error_sys(err, CP_ERR_IO, path, "cannot create trace file");
        free(o->tmp);
        free(o->path);
        o->tmp = o->path = NULL;
        return rc;
    }
    mode_t um = umask(0);
    umask(um);
    fchmod(o->fd, 0666 & ~um);
    o->comp = comp;
    o->cap = SYN_BUF_BYTES;
    o->buf = cp_xmalloc(o->cap);
    o->first_event = 1;
    if (comp == SYN_GZIP) {
        z_stream *z = cp_xcalloc(1, sizeof *z);
        /* level 1: the synthesizer writes GBs; 15+16 = gzip wrapper */
        if (deflateInit2(z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            cp_xmalloc((size_t)-1); /* only fails on memory exhaustion */
        o->zs = z;
    } else if (comp == SYN_ZSTD) {
        ZSTD_CCtx *c = ZSTD_createCCtx();
        if (!c)
            cp_xmalloc((size_t)-1);
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
        o->zs = c;
    }
    if (comp != SYN_PLAIN) {
        o->ccap = SYN_BUF_BYTES;
        o->cbuf = cp_xmalloc(o->ccap);
    }
    return 0;
}

int syn_out_close(syn_out *o, bool commit, cp_error *err)
{
    int rc = 0;
    if (o->fd >= 0) {
        syn_out_flush(o);
        if (o->comp != SYN_PLAIN && !o->err.code && commit)
            compress_out(o, "", 0, 1);
        if (commit && !o->err.code && fsync(o->fd) != 0 && errno != EINVAL)
            cp_error_sys(&o->err, CP_ERR_IO, o->path, "cannot flush trace");
        if (close(o->fd) != 0 && !o->err.code)
            cp_error_sys(&o->err, CP_ERR_IO, o->path, "cannot close trace");
        o->fd = -1;
        if (commit && !o->err.code && rename(o->tmp, o->path) != 0)
            cp_error_sys(&o->err, CP_ERR_IO, o->path, "cannot move trace into place");
        if (!commit || o->err.code)
            unlink(o->tmp);
    }
    if (o->err.code) {
        if (err)
            *err = o->err;
        rc = o->err.code;
    }
    if (o->comp == SYN_GZIP && o->zs) {
        deflateEnd(o->zs);
        free(o->zs);
    } else if (o->comp == SYN_ZSTD && o->zs) {
        ZSTD_freeCCtx(o->zs);
    }
    free(o->buf);
    free(o->cbuf);
    free(o->tmp);
    free(o->path);
    o->zs = o->buf = o->cbuf = o->tmp = o->path = NULL;
    return rc;
}

void syn_put_i64(syn_out *o, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[sizeof tmp - 1 - n++] = '-';
    syn_put(o, tmp + sizeof tmp - n, (size_t)n);
}

void syn_put_us(syn_out *o, int64_t ns)
{
    if (ns < 0) {
        SYN_LIT(o, "-");
        ns = -ns;
    }
    syn_put_i64(o, ns / 1000);
    char frac[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10) };
    syn_put(o, frac, 4);
}

void syn_put_f(syn_out *o, double v)
{
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.6f", v);
    while (n > 1 && tmp[n - 1] == '0')
        n--;
    if (n > 1 && tmp[n - 1] == '.')
        n--;
    syn_put(o, tmp, (size_t)n);
}

static void ev_head(syn_out *o, const char *cat)
{
    if (o->first_event)
        SYN_LIT(o, "\n  {\n    \"ph\": \"X\", \"cat\": \"");
    else
        SYN_LIT(o, ",\n  {\n    \"ph\": \"X\", \"cat\": \"");
    o->first_event = 0;
    o->events++;
    syn_puts(o, cat);
    SYN_LIT(o, "\", \"name\": \"");
}

static void ev_tail(syn_out *o, int64_t pid, int64_t tid, int64_t ts_ns, int64_t dur_ns)
{
    SYN_LIT(o, "\", \"pid\": ");
    syn_put_i64(o, pid);
    SYN_LIT(o, ", \"tid\": ");
    syn_put_i64(o, tid);
    SYN_LIT(o, ",\n    \"ts\": ");
    syn_put_us(o, ts_ns);
    SYN_LIT(o, ", \"dur\": ");
    syn_put_us(o, dur_ns);
    SYN_LIT(o, ",\n    \"args\": {\n      ");
}

void syn_ev_x(syn_out *o, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t ts_ns,
              int64_t dur_ns)
{
    ev_head(o, cat);
    syn_puts(o, name);
    ev_tail(o, pid, tid, ts_ns, dur_ns);
}

void syn_ev_x_num(syn_out *o, const char *cat, const char *prefix, int64_t num, int64_t pid, int64_t tid,
                  int64_t ts_ns, int64_t dur_ns)
{
    ev_head(o, cat);
    syn_puts(o, prefix);
    syn_put_i64(o, num);
    ev_tail(o, pid, tid, ts_ns, dur_ns);
}

void syn_ev_end(syn_out *o)
{
    SYN_LIT(o, "\n    }\n  }");
}

void syn_ev_flow(syn_out *o, char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts_ns)
{
    if (!o->first_event)
        SYN_LIT(o, ",");
    o->first_event = 0;
    o->events++;
    SYN_LIT(o, "\n  {\n    \"ph\": \"");
    syn_put(o, &ph, 1);
    SYN_LIT(o, "\", \"id\": ");
    syn_put_i64(o, id);
    SYN_LIT(o, ", \"pid\": ");
    syn_put_i64(o, pid);
    SYN_LIT(o, ", \"tid\": ");
    syn_put_i64(o, tid);
    SYN_LIT(o, ", \"ts\": ");
    syn_put_us(o, ts_ns);
    if (ph == 'f')
        SYN_LIT(o, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }");
    else
        SYN_LIT(o, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }");
}

void syn_arg_i(syn_out *o, const char *key, int64_t v, int first)
{
    if (!first)
        SYN_LIT(o, ", ");
    SYN_LIT(o, "\"");
    syn_puts(o, key);
    SYN_LIT(o, "\": ");
    syn_put_i64(o, v);
}
