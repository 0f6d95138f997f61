/* syn_out.h - the Kineto JSON writer of the synthesizer (internal).
 *
 * One syn_out per rank file: a 1 MiB text buffer flushed through an optional
 * gzip or zstd compressor into a temporary file beside the destination,
 * renamed over it only when syn_out_close commits. Formatting is done by
 * hand (integers, nanoseconds as microseconds with three decimals) because
 * the synthesizer writes gigabytes and printf would dominate. A write error
 * is sticky: later calls do nothing and syn_out_close reports it.
 *
 * Event helpers write the spaced layout PyTorch 2.x uses ("ph", "cat",
 * "name", "pid", "tid" on one line, "ts"/"dur" on the next, then "args").
 * Names are trusted constants without quotes or backslashes.
 */
#ifndef CP_SYNTH_SYN_OUT_H
#define CP_SYNTH_SYN_OUT_H

#include "synth.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct syn_out {
    char *path;        /* owned destination path */
    char *tmp;         /* owned temporary path, NULL once renamed */
    int fd;
    syn_compress comp;
    void *zs;          /* z_stream* or ZSTD_CCtx*, owned */
    char *buf;         /* owned text buffer */
    size_t len, cap;
    char *cbuf;        /* owned compressed staging buffer */
    size_t ccap;
    uint64_t json_bytes;
    uint64_t file_bytes;
    uint64_t events;
    int first_event;   /* no comma before the first traceEvents item */
    cp_error err;      /* sticky */
} syn_out;

int syn_out_open(syn_out *o, const char *path, syn_compress comp, bool force, cp_error *err);
/* Flush, finish the compressed stream, fsync and rename into place when
 * commit (else remove the temporary). Frees everything. */
int syn_out_close(syn_out *o, bool commit, cp_error *err);
void syn_out_flush(syn_out *o);

static inline void syn_put(syn_out *o, const char *s, size_t n)
{
    if (o->len + n > o->cap)
        syn_out_flush(o);
    if (n > o->cap) { /* never happens with our event sizes; keep it correct */
        while (n > 0) {
            size_t k = n < o->cap ? n : o->cap;
            syn_put(o, s, k);
            s += k;
            n -= k;
        }
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}
/* lit must be a string literal ("" lit "" makes anything else a compile error) */
#define SYN_LIT(o, lit) syn_put((o), "" lit "", sizeof(lit) - 1)
static inline void syn_puts(syn_out *o, const char *s) { syn_put(o, s, strlen(s)); }
void syn_put_i64(syn_out *o, int64_t v);
/* ns as microseconds with exactly three decimals ("12.345"). */
void syn_put_us(syn_out *o, int64_t ns);
/* A double with up to 6 decimals, trailing zeros trimmed (bandwidths). */
void syn_put_f(syn_out *o, double v);

/* Start a complete ("X") event: writes up to and including `"args": {` and
 * the first newline+indent; finish args with syn_ev_end. */
void syn_ev_x(syn_out *o, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t ts_ns,
              int64_t dur_ns);
/* Same with a name given as prefix + integer ("ProfilerStep#" 7). */
void syn_ev_x_num(syn_out *o, const char *cat, const char *prefix, int64_t num, int64_t pid, int64_t tid,
                  int64_t ts_ns, int64_t dur_ns);
void syn_ev_end(syn_out *o);
/* Flow events linking a launch to its GPU work (cat ac2g). */
void syn_ev_flow(syn_out *o, char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts_ns);
/* "key": int, written as `, "key": v` unless first. */
void syn_arg_i(syn_out *o, const char *key, int64_t v, int first);

#endif
