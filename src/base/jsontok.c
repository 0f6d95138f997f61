/* jsontok.c - streaming pull tokenizer for large JSON documents.
 *
 * Design (see jsontok.h for the contract):
 *   - One input buffer [base, end) with a read cursor p. When a token runs
 *     past `end`, refill() moves the bytes from the token start to the buffer
 *     front and reads more after them, so a token is always contiguous and
 *     can be returned without copying. The buffer doubles only when a single
 *     token fills it (capped by max_token_bytes); memory is therefore
 *     O(buffer + longest token), independent of the input size.
 *   - A small explicit state machine (what may come next) replaces recursion;
 *     the container stack is a byte array of the nesting cap.
 *   - The hot loops (end of a string, whitespace runs, skipping a value) look
 *     at 16 bytes at a time with SSE2, the x86-64 baseline; a portable byte
 *     loop covers other targets (and builds with -DCP_JT_NO_SIMD) and the
 *     tail of the buffer. No loop reads past `end`, so the zero-copy memory
 *     mode needs no padding. The two long scans (the end of a string longer
 *     than 16 bytes: kernel names run to hundreds; the blocks of a skipped
 *     value) also have an AVX2 kernel of 32 bytes a step, chosen per
 *     tokenizer at open time with __builtin_cpu_supports (as probe_compute
 *     picks its FMA kernels), so one x86-64 binary uses what the CPU has.
 *     Every level finds the same bytes (opts.simd forces one for the tests).
 *   - Per token, the common case is decided without a trip through the
 *     state machine: a string that ends within 16 bytes, the ':' after a key
 *     and the ',' after a value when they are already buffered.
 *   - Escaped strings are rare in traces: the scanner only notes that a
 *     backslash was seen and a second pass decodes into the scratch buffer.
 *   - Skipping a value does not tokenize it: it tracks only brackets and
 *     strings, which is what makes skipping unneeded args cheap.
 */
#include "jsontok.h"

#include "src.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__SSE2__) && !defined(CP_JT_NO_SIMD)
#define CP_JT_X86 1
#include <emmintrin.h>
#include <immintrin.h>
#else
#define CP_JT_X86 0
#endif

/* What the tokenizer expects next. */
enum {
    ST_TOP,       /* the top-level value */
    ST_VALUE,     /* a member value, after ':' */
    ST_ARR_FIRST, /* after '[': a value or ']' */
    ST_ARR_NEXT,  /* after ',' in an array: a value, or ']' (trailing comma) */
    ST_OBJ_FIRST, /* after '{': a key or '}' */
    ST_OBJ_NEXT,  /* after ',' in an object: a key, or '}' (trailing comma) */
    ST_COLON,     /* after a key */
    ST_AFTER,     /* after a value inside a container: ',' or the close */
    ST_DONE,      /* the top-level value is complete */
};

struct cp_jt {
    const char *p;       /* next unread byte */
    const char *end;     /* end of the bytes read so far */
    const char *base;    /* start of the buffered bytes (buf, or the mem block) */
    char *buf;           /* owned buffer; NULL in memory mode */
    size_t cap;          /* size of buf */
    long long base_off;  /* input offset of base[0] */
    cp_jt_read_fn fn;    /* NULL in memory mode */
    void *ctx;
    bool eof;            /* no more input will arrive */
    bool truncated;      /* last error was an end of input inside a value */
    int state;           /* ST_* */
    int simd;            /* CP_JT_SIMD_* of the long scans */
    int status;          /* sticky error status, 0 while fine */
    unsigned depth;
    unsigned max_depth;
    size_t max_token;
    long long last_end;  /* offset just past the last complete value */
    char *scratch;       /* decoded escaped strings */
    size_t scratch_cap;
    cp_jt_stats stats;
    cp_error saved;      /* the sticky error, replayed by later calls */
    char name[256];
    uint8_t stack[CP_JT_DEPTH_LIMIT]; /* 1 = object, 0 = array */
};

/* ---- small helpers ---------------------------------------------------- */

static inline long long off_of(const cp_jt *jt, const char *q)
{
    return jt->base_off + (long long)(q - jt->base);
}

static int replay(const cp_jt *jt, cp_error *err)
{
    if (err)
        *err = jt->saved;
    return jt->status;
}

/* Record a sticky error at input offset `off` and copy it to err. */
__attribute__((format(printf, 5, 6))) static int fail(cp_jt *jt, cp_error *err, int code,
                                                      long long off, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cp_error_set(&jt->saved, code, jt->name, 0, 0, off, "%s", msg);
    jt->status = code;
    return replay(jt, err);
}

static const char *container_name(const cp_jt *jt)
{
    if (jt->depth == 0)
        return "the top-level value";
    return jt->stack[jt->depth - 1] ? "an object" : "an array";
}

/* End of input inside a value: the one error a reader recovers from. */
static int fail_trunc(cp_jt *jt, cp_error *err, const char *what)
{
    jt->truncated = true;
    return fail(jt, err, CP_ERR_FORMAT, off_of(jt, jt->end),
                "truncated input: ends inside %s%s%s at depth %u; last complete value ends at "
                "offset %lld",
                what, *what ? " in " : "", container_name(jt), jt->depth, jt->last_end);
}

static int fail_byte(cp_jt *jt, cp_error *err, const char *q, const char *expected)
{
    unsigned char c = (unsigned char)*q;
    if (c >= 0x20 && c < 0x7f)
        return fail(jt, err, CP_ERR_FORMAT, off_of(jt, q), "invalid json: expected %s, found '%c'",
                    expected, c);
    return fail(jt, err, CP_ERR_FORMAT, off_of(jt, q), "invalid json: expected %s, found byte 0x%02x",
                expected, c);
}

/* Make more input available. The bytes from *keep to end survive (moved to
 * the buffer front) and *keep is updated to their new place; callers hold
 * other positions as distances from *keep. Returns 1 when bytes arrived, 0 at
 * the end of input, or a negative status. */
static int refill(cp_jt *jt, const char **keep, cp_error *err)
{
    if (jt->eof)
        return 0;
    if (!jt->fn) {
        jt->eof = true;
        return 0;
    }
    size_t keep_n = (size_t)(jt->end - *keep);
    size_t lead = (size_t)(*keep - jt->buf);
    if (lead > 0) {
        memmove(jt->buf, *keep, keep_n);
        jt->base_off += (long long)lead;
        *keep = jt->buf;
        jt->end = jt->buf + keep_n;
    }
    if (jt->cap - keep_n < jt->cap / 8) { /* one token fills the buffer: grow it */
        if (keep_n >= jt->max_token)
            return fail(jt, err, CP_ERR_NOMEM, jt->base_off,
                        "token too long: more than %zu bytes", jt->max_token);
        size_t ncap = jt->cap * 2;
        char *nb = cp_xrealloc(jt->buf, ncap);
        jt->buf = nb;
        jt->base = nb;
        jt->cap = ncap;
        *keep = nb;
        jt->end = nb + keep_n;
    }
    cp_error rerr;
    cp_error_clear(&rerr);
    long r = jt->fn(jt->ctx, jt->buf + keep_n, jt->cap - keep_n, &rerr);
    if (r < 0) {
        if (rerr.code == 0) /* a callback that did not say why */
            cp_error_set(&rerr, (int)r, jt->name, 0, 0, jt->base_off + (long long)keep_n,
                         "read failed");
        jt->saved = rerr;
        jt->status = (int)r;
        return replay(jt, err);
    }
    if (r == 0) {
        jt->eof = true;
        return 0;
    }
    jt->end += r;
    jt->stats.refills++;
    return 1;
}

/* First '"' or '\\' in [p, end), or end: SSE2, and the byte loop for the
 * tail (and for every byte at CP_JT_SIMD_SCALAR). */
static inline const char *find_quote_or_bs_sse2(const char *p, const char *end, bool vec)
{
#if CP_JT_X86
    const __m128i vq = _mm_set1_epi8('"'), vb = _mm_set1_epi8('\\');
    while (vec && end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, vq), _mm_cmpeq_epi8(v, vb)));
        if (m)
            return p + __builtin_ctz(m);
        p += 16;
    }
#else
    (void)vec;
#endif
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

#if CP_JT_X86
/* The same, 32 bytes a step. */
__attribute__((target("avx2"))) static const char *find_quote_or_bs_avx2(const char *p, const char *end)
{
    const __m256i vq = _mm256_set1_epi8('"'), vb = _mm256_set1_epi8('\\');
    while (end - p >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
        unsigned m = (unsigned)_mm256_movemask_epi8(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, vq), _mm256_cmpeq_epi8(v, vb)));
        if (m)
            return p + __builtin_ctz(m);
        p += 32;
    }
    return find_quote_or_bs_sse2(p, end, true);
}
#endif

static inline const char *find_quote_or_bs(const cp_jt *jt, const char *p, const char *end)
{
#if CP_JT_X86
    if (jt->simd == CP_JT_SIMD_AVX2)
        return find_quote_or_bs_avx2(p, end);
#endif
    return find_quote_or_bs_sse2(p, end, jt->simd != CP_JT_SIMD_SCALAR);
}

static inline bool is_ws(unsigned char c)
{
    const uint64_t ws = (1ull << ' ') | (1ull << '\n') | (1ull << '\r') | (1ull << '\t');
    return c <= ' ' && ((ws >> c) & 1);
}

/* First non-whitespace byte in [p, end), or end. Runs in traces are a
 * single space or a newline plus indentation: no run, one byte and short
 * runs are decided before the 16-byte loop. */
static inline __attribute__((always_inline)) const char *skip_ws(const char *p, const char *end)
{
    if (p == end || !is_ws((unsigned char)*p))
        return p;
    p++;
    if (p == end || !is_ws((unsigned char)*p))
        return p;
#if CP_JT_X86
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
        unsigned m = ~(unsigned)_mm_movemask_epi8(ws) & 0xFFFFu;
        if (m)
            return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    while (p < end && is_ws((unsigned char)*p))
        p++;
    return p;
}

static inline bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Longest prefix of [p, end) that follows the JSON number grammar
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? ; returns where it stops.
 * *ok is false when the text stopped inside a part that needs more digits
 * ("-", "1.", "1e+"); *flags gets CP_JT_F_INT/CP_JT_F_NEG. */
static inline __attribute__((always_inline)) const char *
number_prefix(const char *p, const char *end, unsigned *flags, bool *ok)
{
    unsigned f = CP_JT_F_INT;
    bool good = false;
    if (p < end && *p == '-') {
        p++;
        f |= CP_JT_F_NEG;
    }
    if (p < end && is_digit((unsigned char)*p)) {
        if (*p++ != '0') /* no leading zeros */
            while (p < end && is_digit((unsigned char)*p))
                p++;
        good = true;
        if (p < end && *p == '.') {
            f &= ~(unsigned)CP_JT_F_INT;
            p++;
            good = p < end && is_digit((unsigned char)*p);
            while (p < end && is_digit((unsigned char)*p))
                p++;
        }
        if (good && p < end && (*p == 'e' || *p == 'E')) {
            f &= ~(unsigned)CP_JT_F_INT;
            p++;
            if (p < end && (*p == '+' || *p == '-'))
                p++;
            good = p < end && is_digit((unsigned char)*p);
            while (p < end && is_digit((unsigned char)*p))
                p++;
        }
    }
    *flags = f;
    *ok = good;
    return p;
}

/* Whether [s, e) is exactly one JSON number; sets CP_JT_F_* flags. */
static bool number_syntax(const char *s, const char *e, unsigned *flags)
{
    bool ok;
    return number_prefix(s, e, flags, &ok) == e && ok;
}

/* ---- string decoding ---------------------------------------------------- */

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)s[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Decode the escapes of the string body s[0..n) into jt->scratch. Every
 * backslash in the body has its escaped byte inside the body (the scanner
 * skipped it), so s[i + 1] after a backslash is always valid. The output is
 * at most 3/2 of n (a bad "\u" of 2 bytes becomes 3-byte U+FFFD). */
static int decode_escapes(cp_jt *jt, const char *s, size_t n, size_t *out_n, cp_error *err)
{
    (void)err;
    size_t need = n + n / 2 + 4;
    if (need > jt->scratch_cap) {
        jt->scratch = cp_xrealloc(jt->scratch, need);
        jt->scratch_cap = need;
    }
    char *o = jt->scratch;
    size_t i = 0;
    while (i < n) {
        const char *b = memchr(s + i, '\\', n - i);
        size_t run = b ? (size_t)(b - (s + i)) : n - i;
        memcpy(o, s + i, run);
        o += run;
        if (!b)
            break;
        i = (size_t)(b - s) + 1; /* the escaped byte */
        char c = s[i++];
        switch (c) {
        case '"': case '\\': case '/': *o++ = c; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            int cp = i + 4 <= n ? hex4(s + i) : -1;
            if (cp < 0) {
                jt->stats.bad_escapes++;
                o = put_utf8(o, 0xFFFD);
                break; /* resume right after "\u" */
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                int lo = (i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') ? hex4(s + i + 2) : -1;
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    i += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    jt->stats.bad_escapes++;
                    cp = 0xFFFD;
                }
            } else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
                /* \u0000 too: a NUL inside a name would cut it wherever it
                 * is used as a C string */
                jt->stats.bad_escapes++;
                cp = 0xFFFD;
            }
            o = put_utf8(o, (unsigned)cp);
            break;
        }
        default:
            jt->stats.bad_escapes++;
            *o++ = c;
            break;
        }
    }
    *out_n = (size_t)(o - jt->scratch);
    return 0;
}

/* ---- token scanners ------------------------------------------------------ */

/* *pp points at an opening quote. Fill tok->s/n/flags with the string body
 * and move *pp past the closing quote. */
static int scan_string_slow(cp_jt *jt, const char **pp, cp_jt_tok *tok, cp_error *err)
{
    const char *start = *pp;
    size_t i = 1;
    bool esc = false;
    const char *close;
    for (;;) {
        const char *q = find_quote_or_bs(jt, start + i, jt->end);
        if (q < jt->end) {
            if (*q == '"') {
                close = q;
                break;
            }
            esc = true;
            if (q + 1 < jt->end) {
                i = (size_t)(q + 2 - start);
                continue;
            }
            i = (size_t)(q - start); /* look at the backslash again after the refill */
        } else {
            i = (size_t)(jt->end - start);
        }
        int r = refill(jt, &start, err);
        if (r < 0)
            return r;
        if (r == 0) {
            jt->p = start;
            return fail_trunc(jt, err, "a string");
        }
    }
    tok->offset = off_of(jt, start);
    *pp = close + 1;
    size_t n = (size_t)(close - start - 1);
    if (!esc) {
        tok->s = start + 1;
        tok->n = n;
        tok->flags = 0;
        return 0;
    }
    int r = decode_escapes(jt, start + 1, n, &tok->n, err);
    if (r < 0)
        return r;
    tok->s = jt->scratch;
    tok->flags = CP_JT_F_ESCAPED;
    return 0;
}

/* *pp points at the first byte of the literal word (true, false, null, NaN,
 * Infinity, or "-Infinity" when the number scanner found only '-'). */
static int scan_literal(cp_jt *jt, const char **pp, const char *word, size_t len, cp_error *err)
{
    const char *start = *pp;
    while ((size_t)(jt->end - start) < len) {
        int r = refill(jt, &start, err);
        if (r < 0)
            return r;
        if (r == 0)
            break;
    }
    size_t avail = (size_t)(jt->end - start);
    if (avail >= len && memcmp(start, word, len) == 0) {
        *pp = start + len;
        return 0;
    }
    if (avail < len && memcmp(start, word, avail) == 0) {
        jt->p = start;
        return fail_trunc(jt, err, "a literal");
    }
    *pp = start;
    return fail(jt, err, CP_ERR_FORMAT, off_of(jt, start), "invalid json: bad literal, expected '%s'",
                word);
}

/* scan_string_slow() with the common case inlined: the string ends within
 * the next 16 bytes and has no backslash before its closing quote. */
static inline int scan_string(cp_jt *jt, const char **pp, cp_jt_tok *tok, cp_error *err)
{
#if CP_JT_X86
    const char *s = *pp + 1;
    if (jt->end - s >= 16 && jt->simd != CP_JT_SIMD_SCALAR) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        unsigned mq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
        unsigned mb = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
        if (mq && (mb == 0 || (mq & -mq) < (mb & -mb))) {
            unsigned n = (unsigned)__builtin_ctz(mq);
            tok->offset = off_of(jt, *pp);
            tok->s = s;
            tok->n = n;
            tok->flags = 0;
            *pp = s + n + 1;
            return 0;
        }
    }
#endif
    return scan_string_slow(jt, pp, tok, err);
}

/* *pp points at '-' or a digit. One pass checks the JSON number grammar and
 * finds the end; it stops at the first byte the grammar does not allow (that
 * byte is then judged by the state machine: "1.5.3" fails at the second '.'). */
static int scan_number(cp_jt *jt, const char **pp, cp_jt_tok *tok, cp_error *err)
{
    const char *start = *pp, *q, *end;
    unsigned f;
    bool ok, final = false;
    for (;;) {
        end = jt->end;
        q = number_prefix(start, end, &f, &ok);
        if (q < end || final)
            break;
        /* The number may go on: refill (which may move it) and rescan. */
        int r = refill(jt, &start, err);
        if (r < 0)
            return r;
        if (r == 0) {
            /* A number cut by the end of input may be incomplete ("12" of
             * "123"); only a top-level number may end the input. */
            if (jt->depth > 0) {
                jt->p = start;
                return fail_trunc(jt, err, "a number");
            }
            final = true;
        }
    }
    if (!ok) {
        if (q == start + 1 && f == (CP_JT_F_INT | CP_JT_F_NEG) && q < end && *q == 'I') {
            q = start;
            int r = scan_literal(jt, &q, "-Infinity", 9, err);
            if (r < 0)
                return r;
            start = q - 9;
            f = CP_JT_F_NEG | CP_JT_F_NONFINITE;
        } else {
            size_t bad = (size_t)(q - start); /* up to the byte that broke the grammar */
            jt->p = start;
            return fail(jt, err, CP_ERR_FORMAT, off_of(jt, start), "invalid json: bad number '%.*s'",
                        (int)(bad > 40 ? 40 : bad), start);
        }
    }
    tok->type = CP_JT_NUMBER;
    tok->flags = f;
    tok->s = start;
    tok->n = (size_t)(q - start);
    tok->offset = off_of(jt, start);
    *pp = q;
    return 0;
}

/* ---- public API ------------------------------------------------------- */

/* The level asked for (AUTO: the best), capped at what this build and this
 * CPU have. */
static int simd_level(int want)
{
    int have = CP_JT_SIMD_SCALAR;
#if CP_JT_X86
    have = __builtin_cpu_supports("avx2") ? CP_JT_SIMD_AVX2 : CP_JT_SIMD_SSE2;
#endif
    return want == CP_JT_SIMD_AUTO || want > have ? have : want < CP_JT_SIMD_SCALAR ? CP_JT_SIMD_SCALAR : want;
}

static cp_jt *jt_new(const cp_jt_opts *opts)
{
    cp_jt *jt = cp_xcalloc(1, sizeof *jt);
    snprintf(jt->name, sizeof jt->name, "%s", opts && opts->name ? opts->name : "<json>");
    jt->max_depth = opts && opts->max_depth ? opts->max_depth : 256;
    if (jt->max_depth > CP_JT_DEPTH_LIMIT)
        jt->max_depth = CP_JT_DEPTH_LIMIT;
    jt->max_token = opts && opts->max_token_bytes ? opts->max_token_bytes : (size_t)64 << 20;
    jt->state = ST_TOP;
    jt->simd = simd_level(opts ? opts->simd : CP_JT_SIMD_AUTO);
    jt->last_end = -1;
    cp_error_clear(&jt->saved);
    return jt;
}

cp_jt *cp_jt_open(cp_jt_read_fn fn, void *ctx, const cp_jt_opts *opts)
{
    cp_jt *jt = jt_new(opts);
    size_t cap = opts && opts->buf_bytes ? opts->buf_bytes : (size_t)1 << 20;
    if (cap < 16)
        cap = 16;
    jt->buf = cp_xmalloc(cap);
    jt->cap = cap;
    jt->base = jt->p = jt->end = jt->buf;
    jt->fn = fn;
    jt->ctx = ctx;
    return jt;
}

static long src_read(void *ctx, char *buf, size_t cap, cp_error *err)
{
    return (long)cp_src_read(ctx, buf, cap, err);
}

cp_jt *cp_jt_open_src(cp_src *src, const cp_jt_opts *opts)
{
    cp_jt_opts o = opts ? *opts : (cp_jt_opts){0};
    if (!o.name)
        o.name = cp_src_name(src);
    return cp_jt_open(src_read, src, &o);
}

cp_jt *cp_jt_open_mem(const char *data, size_t n, const cp_jt_opts *opts)
{
    cp_jt *jt = jt_new(opts);
    jt->base = jt->p = data ? data : "";
    jt->end = jt->base + (data ? n : 0);
    jt->eof = true;
    return jt;
}

void cp_jt_close(cp_jt *jt)
{
    if (!jt)
        return;
    free(jt->buf);
    free(jt->scratch);
    free(jt);
}

unsigned cp_jt_depth(const cp_jt *jt) { return jt->depth; }
long long cp_jt_offset(const cp_jt *jt) { return off_of(jt, jt->p); }
long long cp_jt_last_complete_end(const cp_jt *jt) { return jt->last_end; }
bool cp_jt_truncated(const cp_jt *jt) { return jt->truncated; }
cp_jt_stats cp_jt_get_stats(const cp_jt *jt) { return jt->stats; }
int cp_jt_simd_level(const cp_jt *jt) { return jt->simd; }

/* After a complete value that ends just before q; returns the new read
 * position. The ',' that usually follows is consumed here when it is already
 * buffered, which saves a trip through the state machine per value. */
static inline __attribute__((always_inline)) const char *value_done(cp_jt *jt, const char *q)
{
    jt->last_end = off_of(jt, q);
    if (!jt->depth) {
        jt->state = ST_DONE;
        return q;
    }
    jt->state = ST_AFTER;
    q = skip_ws(q, jt->end);
    if (q < jt->end && *q == ',') {
        jt->state = jt->stack[jt->depth - 1] ? ST_OBJ_NEXT : ST_ARR_NEXT;
        q++;
    }
    return q;
}

/* End of input reached where a token should start. */
static int at_eof(cp_jt *jt, cp_jt_tok *tok, cp_error *err)
{
    if (jt->state == ST_DONE) {
        tok->type = CP_JT_EOF;
        tok->s = NULL;
        tok->n = 0;
        tok->flags = 0;
        tok->offset = off_of(jt, jt->p);
        tok->depth = 0;
        return CP_JT_EOF;
    }
    if (jt->state == ST_TOP)
        return fail(jt, err, CP_ERR_FORMAT, off_of(jt, jt->p), "invalid json: empty input");
    return fail_trunc(jt, err, "");
}

int cp_jt_next(cp_jt *jt, cp_jt_tok *tok, cp_error *err)
{
    if (jt->status)
        return replay(jt, err);
    const char *p = jt->p;
    int r;
    for (;;) {
        const char *end = jt->end;
        p = skip_ws(p, end);
        if (p == end) {
            r = refill(jt, &p, err);
            if (r > 0)
                continue;
            jt->p = p;
            if (r < 0)
                return r;
            return at_eof(jt, tok, err);
        }
        char c = *p;
        if (c == '\0' && jt->state != ST_TOP) {
            /* zero padding left by a crash: the input ends here */
            jt->end = p;
            jt->eof = true;
            continue;
        }
        switch (jt->state) {
        case ST_AFTER:
            if (c == ',') {
                p++;
                jt->state = jt->stack[jt->depth - 1] ? ST_OBJ_NEXT : ST_ARR_NEXT;
                continue;
            }
            if (c == '}' || c == ']')
                goto close;
            jt->p = p;
            return fail_byte(jt, err, p, jt->stack[jt->depth - 1] ? "',' or '}'" : "',' or ']'");
        case ST_COLON:
            if (c == ':') {
                p++;
                jt->state = ST_VALUE;
                continue;
            }
            jt->p = p;
            return fail_byte(jt, err, p, "':'");
        case ST_OBJ_FIRST:
        case ST_OBJ_NEXT:
            if (c == '"') {
                r = scan_string(jt, &p, tok, err);
                if (r < 0)
                    return r;
                jt->state = ST_COLON; /* the ':' is usually right there: take it */
                p = skip_ws(p, jt->end);
                if (p < jt->end && *p == ':') {
                    p++;
                    jt->state = ST_VALUE;
                }
                jt->p = p;
                tok->type = CP_JT_KEY;
                tok->depth = jt->depth;
                return CP_JT_KEY;
            }
            if (c == '}') {
                if (jt->state == ST_OBJ_NEXT)
                    jt->stats.trailing_commas++;
                goto close;
            }
            jt->p = p;
            return fail_byte(jt, err, p, "a string key or '}'");
        case ST_ARR_FIRST:
        case ST_ARR_NEXT:
            if (c == ']') {
                if (jt->state == ST_ARR_NEXT)
                    jt->stats.trailing_commas++;
                goto close;
            }
            goto value;
        case ST_TOP:
            if ((unsigned char)c == 0xEF && off_of(jt, p) == 0) { /* UTF-8 byte order mark? */
                while (jt->end - p < 3 && (r = refill(jt, &p, err)) > 0)
                    ;
                if (jt->status)
                    return jt->status;
                if (jt->end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
                    p += 3;
                    continue;
                }
            }
            goto value;
        case ST_VALUE:
            goto value;
        default: /* ST_DONE */
            jt->p = p;
            return fail_byte(jt, err, p, "the end of input after the top-level value");
        }

    value:
        tok->depth = jt->depth;
        switch (c) {
        case '{':
        case '[':
            if (jt->depth >= jt->max_depth) {
                jt->p = p;
                return fail(jt, err, CP_ERR_FORMAT, off_of(jt, p),
                            "invalid json: nesting deeper than %u", jt->max_depth);
            }
            jt->stack[jt->depth++] = c == '{';
            jt->state = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
            tok->type = c == '{' ? CP_JT_OBJ_BEGIN : CP_JT_ARR_BEGIN;
            tok->s = NULL;
            tok->n = 0;
            tok->flags = 0;
            tok->offset = off_of(jt, p);
            jt->p = p + 1;
            return tok->type;
        case '"':
            r = scan_string(jt, &p, tok, err);
            if (r < 0)
                return r;
            tok->type = CP_JT_STRING;
            break;
        case '-': case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9':
            r = scan_number(jt, &p, tok, err);
            if (r < 0)
                return r;
            break;
        case 't': case 'f': case 'n': case 'N': case 'I': {
            static const struct { const char *w; int type; unsigned flags; } lits[] = {
                {"true", CP_JT_TRUE, 0}, {"false", CP_JT_FALSE, 0}, {"null", CP_JT_NULL, 0},
                {"NaN", CP_JT_NUMBER, CP_JT_F_NONFINITE},
                {"Infinity", CP_JT_NUMBER, CP_JT_F_NONFINITE},
            };
            int k = c == 't' ? 0 : c == 'f' ? 1 : c == 'n' ? 2 : c == 'N' ? 3 : 4;
            size_t len = strlen(lits[k].w);
            r = scan_literal(jt, &p, lits[k].w, len, err);
            if (r < 0)
                return r;
            tok->type = lits[k].type;
            tok->flags = lits[k].flags;
            tok->s = lits[k].type == CP_JT_NUMBER ? p - len : NULL;
            tok->n = lits[k].type == CP_JT_NUMBER ? len : 0;
            tok->offset = off_of(jt, p - len);
            break;
        }
        default:
            jt->p = p;
            return fail_byte(jt, err, p, "a value");
        }
        jt->p = value_done(jt, p);
        return tok->type;

    close:
        if ((c == '}') != (jt->stack[jt->depth - 1] == 1)) {
            jt->p = p;
            return fail_byte(jt, err, p, jt->stack[jt->depth - 1] ? "'}'" : "']'");
        }
        jt->depth--;
        tok->type = c == '}' ? CP_JT_OBJ_END : CP_JT_ARR_END;
        tok->s = NULL;
        tok->n = 0;
        tok->flags = 0;
        tok->offset = off_of(jt, p);
        tok->depth = jt->depth;
        jt->p = value_done(jt, p + 1);
        return tok->type;
    }
}

/* The string state of a byte scan that looks only at strings and
 * brackets: true when c is inside a string or a quote (nothing more to do
 * with it), false when it is outside strings. */
static inline bool string_byte(char c, bool *in_str, bool *esc)
{
    if (*in_str) {
        if (*esc)
            *esc = false;
        else if (c == '\\')
            *esc = true;
        else if (c == '"')
            *in_str = false;
        return true;
    }
    if (c == '"') {
        *in_str = true;
        return true;
    }
    return false;
}

/* One bracket met while skipping (outside strings). Returns 1 when the
 * container open at depth target+1 just closed, 0 to go on, or an error. */
static inline int skip_bracket(cp_jt *jt, const char *q, unsigned target, cp_error *err)
{
    char c = *q;
    if (c == '{' || c == '[') {
        if (jt->depth >= jt->max_depth) {
            jt->p = q;
            return fail(jt, err, CP_ERR_FORMAT, off_of(jt, q), "invalid json: nesting deeper than %u",
                        jt->max_depth);
        }
        jt->stack[jt->depth++] = c == '{';
        return 0;
    }
    if ((c == '}') != (jt->stack[jt->depth - 1] == 1)) {
        jt->p = q;
        return fail_byte(jt, err, q, jt->stack[jt->depth - 1] ? "'}'" : "']'");
    }
    jt->depth--;
    return jt->depth == target;
}

#if CP_JT_X86
/* The brackets outside strings of the block at p (bit i: byte p[i]).
 * Returns 0 to go on, the END type when the container open at depth
 * target+1 closed (jt->p set past it), or a negative status. */
static inline int block_brackets(cp_jt *jt, const char *p, uint32_t outside, unsigned target, cp_error *err)
{
    while (outside) {
        const char *b = p + __builtin_ctz(outside);
        int r = skip_bracket(jt, b, target, err);
        if (r != 0) {
            if (r < 0)
                return r;
            jt->p = value_done(jt, b + 1);
            return *b == '}' ? CP_JT_OBJ_END : CP_JT_ARR_END;
        }
        outside &= outside - 1;
    }
    return 0;
}

/* Bit i of the result: byte i of a block of `bytes` (16 or 32) is inside a
 * string, from the block's quote mask q (a prefix XOR: an odd number of
 * quotes at positions <= i; an opening quote counts as inside) and whether
 * the block starts inside one. */
static inline uint32_t inside_strings(uint32_t q, bool in_str, unsigned bytes)
{
    uint32_t x = q;
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    if (bytes > 16)
        x ^= x << 16;
    if (in_str)
        x = ~x;
    return bytes > 16 ? x : x & 0xFFFFu;
}

/* skip_to_depth's blocks of 16 bytes from *pp while no block holds a
 * backslash; *pp and *in_str follow. Returns 0 when it stopped (a
 * backslash, or fewer than 16 bytes left) or what block_brackets returned. */
static inline int skip_blocks_sse2(cp_jt *jt, const char **pp, const char *end, unsigned target, bool *in_str,
                                   cp_error *err)
{
    const __m128i vq = _mm_set1_epi8('"'), vb = _mm_set1_epi8('\\');
    const __m128i v20 = _mm_set1_epi8(0x20), vo = _mm_set1_epi8('{'), vc = _mm_set1_epi8('}');
    const char *p = *pp;
    int r = 0;
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(v, vb)))
            break;
        uint32_t q = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, vq));
        __m128i l = _mm_or_si128(v, v20); /* '[' -> '{', ']' -> '}' */
        uint32_t br = (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(l, vo), _mm_cmpeq_epi8(l, vc)));
        uint32_t x = inside_strings(q, *in_str, 16);
        if ((r = block_brackets(jt, p, br & ~x, target, err)) != 0)
            break;
        *in_str = (x >> 15) & 1;
        p += 16;
    }
    *pp = p;
    return r;
}

/* The same with blocks of 32 bytes. */
__attribute__((target("avx2"))) static int skip_blocks_avx2(cp_jt *jt, const char **pp, const char *end,
                                                           unsigned target, bool *in_str, cp_error *err)
{
    const __m256i vq = _mm256_set1_epi8('"'), vb = _mm256_set1_epi8('\\');
    const __m256i v20 = _mm256_set1_epi8(0x20), vo = _mm256_set1_epi8('{'), vc = _mm256_set1_epi8('}');
    const char *p = *pp;
    int r = 0;
    while (end - p >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, vb)))
            break;
        uint32_t q = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, vq));
        __m256i l = _mm256_or_si256(v, v20);
        uint32_t br = (uint32_t)_mm256_movemask_epi8(
            _mm256_or_si256(_mm256_cmpeq_epi8(l, vo), _mm256_cmpeq_epi8(l, vc)));
        uint32_t x = inside_strings(q, *in_str, 32);
        if ((r = block_brackets(jt, p, br & ~x, target, err)) != 0)
            break;
        *in_str = x >> 31;
        p += 32;
    }
    *pp = p;
    return r;
}
#endif

/* Skip forward until the container open at depth target+1 closes. Only
 * brackets and strings are looked at. With SSE2 (AVX2), 16 (32) bytes are
 * classified at once: a prefix XOR of the quote mask marks the bytes inside
 * strings, so only brackets outside strings are visited one by one. Blocks
 * holding a backslash (rare in traces) go through the byte loop, which
 * tracks escapes. The string state lives in two flags, so nothing needs
 * keeping on refill. */
static int skip_to_depth(cp_jt *jt, unsigned target, cp_error *err)
{
    const char *p = jt->p;
    bool in_str = false, esc = false;
    int r;
    for (;;) {
        const char *end = jt->end;
#if CP_JT_X86
        if (!esc && jt->simd == CP_JT_SIMD_AVX2 && (r = skip_blocks_avx2(jt, &p, end, target, &in_str, err)) != 0)
            return r;
        if (!esc && jt->simd != CP_JT_SIMD_SCALAR &&
            (r = skip_blocks_sse2(jt, &p, end, target, &in_str, err)) != 0)
            return r;
#endif
        const char *stop = end - p > 16 ? p + 16 : end;
        for (; p < stop; p++) {
            char c = *p;
            if (string_byte(c, &in_str, &esc))
                continue;
            if ((c | 0x20) == '{' || (c | 0x20) == '}') {
                if ((r = skip_bracket(jt, p, target, err)) != 0) {
                    if (r < 0)
                        return r;
                    jt->p = value_done(jt, p + 1);
                    return c == '}' ? CP_JT_OBJ_END : CP_JT_ARR_END;
                }
            }
        }
        if (p == jt->end) {
            r = refill(jt, &p, err);
            if (r < 0)
                return r;
            if (r == 0) {
                jt->p = p;
                return fail_trunc(jt, err, in_str ? "a string in a skipped value" : "a skipped value");
            }
        }
    }
}

int cp_jt_skip_rest(cp_jt *jt, cp_error *err)
{
    if (jt->status)
        return replay(jt, err);
    if (jt->depth == 0)
        return cp_error_set(err, CP_ERR_USAGE, jt->name, 0, 0, off_of(jt, jt->p),
                            "json skip: no open container to skip");
    return skip_to_depth(jt, jt->depth - 1, err);
}

int cp_jt_skip(cp_jt *jt, cp_error *err)
{
    cp_jt_tok tok;
    int t = cp_jt_next(jt, &tok, err);
    if (t == CP_JT_OBJ_BEGIN || t == CP_JT_ARR_BEGIN) {
        int r = skip_to_depth(jt, jt->depth - 1, err);
        if (r < 0)
            return r;
    }
    return t;
}

/* ---- recovery ------------------------------------------------------------- */

/* One byte of damaged input outside strings (see cp_jt_resync). Returns 1
 * when the way on was found (jt->p and jt->state set), 0 to go on, or an
 * error. */
static int resync_byte(cp_jt *jt, const char *p, unsigned target, cp_error *err)
{
    char c = *p;
    if (c == '{' || c == '[') {
        if (jt->depth == target && c == '{') { /* the next element starts here */
            jt->p = p;
            jt->state = ST_ARR_NEXT;
            return 1;
        }
        if (jt->depth >= jt->max_depth) {
            jt->p = p;
            return fail(jt, err, CP_ERR_FORMAT, off_of(jt, p), "invalid json: nesting deeper than %u",
                        jt->max_depth);
        }
        jt->stack[jt->depth++] = c == '{';
        return 0;
    }
    if (c != '}' && c != ']')
        return 0;
    bool obj = c == '}';
    if (jt->depth == target) {
        /* a ']' that a ',' or '}' follows closes the array (the document
         * goes on after it); a stray '}' or any other ']' is damage */
        const char *q = skip_ws(p + 1, jt->end);
        if (obj || (q < jt->end && *q != ',' && *q != '}'))
            return 0;
        jt->p = p;
        jt->state = ST_AFTER;
        return 1;
    }
    /* a closer closes the nearest open container of its kind, and whatever
     * is open inside it ("[1, 2}" closes the array and its object) */
    unsigned d = jt->depth;
    while (d > target && (jt->stack[d - 1] == 1) != obj)
        d--;
    if (d == target) {
        if (!obj)
            return 0; /* no array open in the element: a stray ']' */
        d = jt->depth; /* no object either: close one level */
    }
    jt->depth = d - 1;
    if (jt->depth == target) {
        jt->p = value_done(jt, p + 1);
        return 1;
    }
    return 0;
}

int cp_jt_resync(cp_jt *jt, unsigned target, long long *skipped_bytes, cp_error *err)
{
    if (skipped_bytes)
        *skipped_bytes = 0;
    if (jt->status != CP_ERR_FORMAT || jt->truncated)
        return jt->status ? replay(jt, err) : 0;
    long long from = jt->saved.offset;
    if (target == 0 || target > jt->depth || jt->stack[target - 1] != 0 || from < jt->base_off ||
        from > off_of(jt, jt->end))
        return replay(jt, err);
    const char *p = jt->base + (from - jt->base_off);
    jt->status = 0;
    bool in_str = false, esc = false;
    for (;;) {
        if (p == jt->end) {
            int r = refill(jt, &p, err);
            if (r < 0)
                return r;
            if (r == 0) {
                jt->p = p;
                return fail_trunc(jt, err, "damaged input");
            }
            continue;
        }
        if (!string_byte(*p, &in_str, &esc)) {
            int r = resync_byte(jt, p, target, err);
            if (r < 0)
                return r;
            if (r > 0)
                break;
        }
        p++;
    }
    long long skipped = off_of(jt, jt->p) - from;
    jt->stats.resyncs++;
    jt->stats.resync_bytes += (uint64_t)(skipped > 0 ? skipped : 0);
    if (skipped_bytes)
        *skipped_bytes = skipped;
    return 0;
}

/* ---- number parsers ---------------------------------------------------- */

/* Drop surrounding quotes (and spaces inside them): "string timestamps". */
static void unquote(const char **s, size_t *n)
{
    if (*n >= 2 && (*s)[0] == '"' && (*s)[*n - 1] == '"') {
        const char *b = *s + 1, *e = *s + *n - 1;
        while (b < e && is_ws((unsigned char)*b))
            b++;
        while (e > b && is_ws((unsigned char)e[-1]))
            e--;
        *s = b;
        *n = (size_t)(e - b);
    }
}

/* Clamp helper: magnitude mag (may exceed 2^63) with sign -> int64. */
static int to_i64(uint64_t mag, bool neg, bool overflow, int64_t *out)
{
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (overflow || mag > lim) {
        *out = neg ? INT64_MIN : INT64_MAX;
        return CP_JT_RANGE;
    }
    *out = neg ? (mag == lim ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    return 0;
}

/* The common timestamp shape, "-?D{1,16}(.D+)?" without leading zeros (16
 * integer digits: microseconds since 1970 are 1.7e15): one pass; 16 + 3
 * digits fit in uint64, and values past INT64 take the general path. Returns
 * false when the text needs the general path. */
static bool parse_ns_fast(const char *s, size_t n, int64_t *out_ns)
{
    const char *p = s, *e = s + n;
    bool neg = p < e && *p == '-';
    p += neg;
    const char *ib = p;
    uint64_t v = 0;
    while (p < e && is_digit((unsigned char)*p))
        v = v * 10 + (uint64_t)(*p++ - '0');
    size_t nint = (size_t)(p - ib);
    if (nint == 0 || nint > 16 || (nint > 1 && *ib == '0'))
        return false;
    unsigned frac = 0;
    if (p < e && *p == '.') {
        p++;
        if (p == e)
            return false;
        for (; p < e && is_digit((unsigned char)*p); p++)
            if (frac < 3) {
                v = v * 10 + (uint64_t)(*p - '0');
                frac++;
            }
        if (p[-1] == '.')
            return false;
    }
    if (p != e)
        return false;
    for (; frac < 3; frac++)
        v *= 10;
    if (v > (uint64_t)INT64_MAX)
        return false;
    *out_ns = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

int cp_jt_parse_ns(const char *s, size_t n, int64_t *out_ns)
{
    unsigned flags;
    unquote(&s, &n);
    if (parse_ns_fast(s, n, out_ns))
        return 0;
    if (!number_syntax(s, s + n, &flags))
        return CP_ERR_FORMAT;
    const char *p = s, *e = s + n;
    bool neg = *p == '-';
    p += neg;
    const char *ib = p;
    while (p < e && is_digit((unsigned char)*p))
        p++;
    const char *ie = p, *fb = p, *fe = p;
    if (p < e && *p == '.') {
        fb = ++p;
        while (p < e && is_digit((unsigned char)*p))
            p++;
        fe = p;
    }
    long long ex = 0;
    if (p < e) { /* exponent; syntax already checked */
        p++;
        bool eneg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        for (; p < e; p++)
            if (ex < 1000000)
                ex = ex * 10 + (*p - '0');
        if (eneg)
            ex = -ex;
    }
    /* value_us = D * 10^(nint + ex) with D = 0.d1d2...; ns keeps the first
     * K = nint + ex + 3 digits and scales by 10^(K - ndigits) when K is larger. */
    long long nint = ie - ib, nfrac = fe - fb, nd = nint + nfrac;
    long long k = nint + ex + 3;
    uint64_t mag = 0;
    bool ovf = false;
    for (long long j = 0; j < nd && j < k; j++) {
        unsigned d = (unsigned)((j < nint ? ib[j] : fb[j - nint]) - '0');
        ovf |= __builtin_mul_overflow(mag, (uint64_t)10, &mag);
        ovf |= __builtin_add_overflow(mag, (uint64_t)d, &mag);
    }
    for (long long j = nd; j < k && mag != 0 && !ovf; j++)
        ovf |= __builtin_mul_overflow(mag, (uint64_t)10, &mag);
    return to_i64(mag, neg, ovf, out_ns);
}

int cp_jt_parse_i64(const char *s, size_t n, int64_t *out)
{
    unsigned flags;
    unquote(&s, &n);
    if (!number_syntax(s, s + n, &flags) || !(flags & CP_JT_F_INT))
        return CP_ERR_FORMAT;
    bool neg = *s == '-';
    uint64_t mag = 0;
    bool ovf = false;
    for (size_t i = neg; i < n; i++) {
        ovf |= __builtin_mul_overflow(mag, (uint64_t)10, &mag);
        ovf |= __builtin_add_overflow(mag, (uint64_t)(s[i] - '0'), &mag);
    }
    return to_i64(mag, neg, ovf, out);
}

int cp_jt_parse_double(const char *s, size_t n, double *out)
{
    unsigned flags;
    unquote(&s, &n);
    if (!number_syntax(s, s + n, &flags))
        return CP_ERR_FORMAT;
    char small[128];
    char *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        return CP_ERR_NOMEM;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    errno = 0;
    /* The C locale is assumed (chainprof never calls setlocale for numbers). */
    double v = strtod(tmp, NULL);
    int overflow = errno == ERANGE && (v > 1.0 || v < -1.0);
    if (tmp != small)
        free(tmp);
    *out = v;
    return overflow ? CP_JT_RANGE : 0;
}
