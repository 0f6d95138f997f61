/* fuzz_jsontok.c - libFuzzer target for the streaming JSON tokenizer.
 *
 * Besides "no crash, no sanitizer report", the target checks two properties
 * differentially:
 *   - the input read from memory in one piece and the same input streamed
 *     through a tiny growing buffer in odd-sized reads give the same tokens,
 *     the same skips, the same end (EOF or error with the same offset,
 *     message, truncation flag, last complete value and counters);
 *   - on a valid document, cp_jt_skip/cp_jt_skip_rest (which only track
 *     brackets and strings, 16 bytes at a time) land exactly where skipping
 *     by tokenizing lands.
 * Number tokens and strings also go through the number parsers.
 *
 * The first input byte picks options: bit 0 skips the value of every key
 * starting with 'a', bit 1 skips the rest of the object at keys starting with
 * 'r', bits 2-4 the read size (1..8) and bits 5-7 the depth cap (4..32).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontok.h"

typedef struct fz_src {
    const uint8_t *data;
    size_t n, pos, chunk;
} fz_src;

static long fz_read(void *ctx, char *buf, size_t cap, cp_error *err)
{
    (void)err;
    fz_src *s = ctx;
    size_t k = s->n - s->pos;
    if (k > s->chunk)
        k = s->chunk;
    if (k > cap)
        k = cap;
    memcpy(buf, s->data + s->pos, k);
    s->pos += k;
    return (long)k;
}

/* FNV-1a over everything observable. */
static void mix(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ull;
    }
}

/* Skip by tokenizing: what cp_jt_skip (rest = false) or cp_jt_skip_rest
 * (rest = true) must be equivalent to on valid input. */
static int emulate_skip(cp_jt *jt, bool rest, cp_error *err)
{
    cp_jt_tok t;
    unsigned d = cp_jt_depth(jt);
    int first = 0, r;
    if (!rest) {
        first = r = cp_jt_next(jt, &t, err);
        if (r != CP_JT_OBJ_BEGIN && r != CP_JT_ARR_BEGIN)
            return r;
    }
    while ((r = cp_jt_next(jt, &t, err)) > 0 && cp_jt_depth(jt) > (rest ? d - 1 : d))
        ;
    if (r < 0 || r == CP_JT_EOF)
        return r < 0 ? r : CP_ERR_FORMAT;
    return rest ? r : first;
}

static uint64_t walk(cp_jt *jt, unsigned opt, bool emulate, bool with_stats)
{
    uint64_t h = 0xcbf29ce484222325ull;
    cp_jt_tok t;
    cp_error err;
    int r;
    memset(&err, 0, sizeof err);
    for (int guard = 0; guard < 1000000; guard++) {
        r = cp_jt_next(jt, &t, &err);
        mix(&h, &r, sizeof r);
        if (r < 0 || r == CP_JT_EOF)
            break;
        mix(&h, &t.flags, sizeof t.flags);
        mix(&h, &t.offset, sizeof t.offset);
        mix(&h, &t.depth, sizeof t.depth);
        mix(&h, &t.n, sizeof t.n);
        if (t.s)
            mix(&h, t.s, t.n);
        if (r == CP_JT_NUMBER || r == CP_JT_STRING) {
            int64_t v;
            double d;
            int a = cp_jt_parse_ns(t.s, t.n, &v);
            int b = cp_jt_parse_i64(t.s, t.n, &v);
            int c = cp_jt_parse_double(t.s, t.n, &d);
            if (r == CP_JT_NUMBER && !(t.flags & CP_JT_F_NONFINITE) && (a < 0 || c < 0))
                abort(); /* a NUMBER token always parses */
            if (r == CP_JT_NUMBER && (t.flags & CP_JT_F_INT) && !(t.flags & CP_JT_F_NONFINITE) &&
                b < 0)
                abort();
            /* "e0" appended forces the general ns path: same value */
            if (r == CP_JT_NUMBER && !(t.flags & CP_JT_F_NONFINITE) && t.n < 200 &&
                !memchr(t.s, 'e', t.n) && !memchr(t.s, 'E', t.n)) {
                char ebuf[208];
                int64_t v1 = 0, v2 = 0;
                memcpy(ebuf, t.s, t.n);
                memcpy(ebuf + t.n, "e0", 2);
                int a1 = cp_jt_parse_ns(t.s, t.n, &v1), a2 = cp_jt_parse_ns(ebuf, t.n + 2, &v2);
                if (a1 != a2 || v1 != v2)
                    abort();
            }
        }
        if (r == CP_JT_KEY && t.n > 0) {
            int s = 0;
            if ((opt & 1) && t.s[0] == 'a')
                s = emulate ? emulate_skip(jt, false, &err) : cp_jt_skip(jt, &err);
            else if ((opt & 2) && t.s[0] == 'r')
                s = emulate ? emulate_skip(jt, true, &err) : cp_jt_skip_rest(jt, &err);
            mix(&h, &s, sizeof s);
            if (s < 0) {
                r = s;
                break;
            }
        }
    }
    if (r < 0) {
        mix(&h, &err.offset, sizeof err.offset);
        mix(&h, err.msg, strlen(err.msg));
    }
    bool tr = cp_jt_truncated(jt);
    long long le = cp_jt_last_complete_end(jt);
    mix(&h, &tr, sizeof tr);
    mix(&h, &le, sizeof le);
    if (with_stats) { /* skipped values are not counted */
        cp_jt_stats st = cp_jt_get_stats(jt);
        mix(&h, &st.trailing_commas, sizeof st.trailing_commas);
        mix(&h, &st.bad_escapes, sizeof st.bad_escapes);
    }
    return (h & ~(uint64_t)1) | (r == CP_JT_EOF ? 0 : 1); /* low bit: 0 = valid document */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned opt = data[0];
    data++;
    size--;
    cp_jt_opts o = {.name = "fuzz", .max_depth = 4 + ((opt >> 5) & 7) * 4};
    cp_jt *a = cp_jt_open_mem((const char *)data, size, &o);
    uint64_t ha = walk(a, opt, false, true);
    cp_jt_close(a);

    fz_src src = {.data = data, .n = size, .chunk = 1 + ((opt >> 2) & 7)};
    o.buf_bytes = 16;
    cp_jt *b = cp_jt_open(fz_read, &src, &o);
    uint64_t hb = walk(b, opt, false, true);
    cp_jt_close(b);
    if (ha != hb)
        abort(); /* memory and streamed reads disagree */

    if (opt & 3) {
        cp_jt *e = cp_jt_open_mem((const char *)data, size, &o);
        uint64_t he = walk(e, opt, true, false);
        cp_jt_close(e);
        cp_jt *f = cp_jt_open_mem((const char *)data, size, &o);
        uint64_t hf = walk(f, opt, false, false);
        cp_jt_close(f);
        if ((he & 1) == 0 && he != hf)
            abort(); /* fast skipping disagrees with tokenizing on a valid document */
    }
    return 0;
}
