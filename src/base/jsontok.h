/* jsontok.h - streaming pull tokenizer for large JSON documents (Kineto traces).
 *
 * Why a purpose-built tokenizer: PyTorch profiler traces are multi-GB JSON
 * documents that must be read at >= 400 MB/s per core with memory bounded by
 * what the timeline keeps, and real traces are damaged (truncated files,
 * trailing commas). A pull API lets the reader drive parsing with plain code
 * (no callbacks, no tree), skip what it does not need at memchr speed, and
 * parse timestamps from the raw number text exactly. docs/PERFORMANCE.md
 * ("JSON tokenizer") has the measurements against libyajl and jsmn.
 *
 * Model:
 *   - Input comes from a read callback (cp_jt_open; e.g. a wrapper around the
 *     plain/.gz/.zst byte source) into one buffer that is refilled in chunks,
 *     or from a caller-owned memory block (cp_jt_open_mem, zero copy).
 *   - cp_jt_next() returns one token at a time. A token never straddles a
 *     refill: an incomplete token is moved to the buffer front before more
 *     input is read, and the buffer grows only when one token is longer than
 *     it (up to max_token_bytes).
 *   - Strings and keys without escapes are returned as a span of the input
 *     buffer (no copy); with escapes they are decoded into a scratch buffer.
 *     Numbers are returned as their raw text (see cp_jt_parse_ns/_i64).
 *   - Token text is valid only until the next call on the same tokenizer.
 *
 * Tolerance (each case counted in cp_jt_stats so the reader can report it):
 *   - trailing commas before '}' or ']' are accepted;
 *   - input that ends inside a value is reported with cp_jt_truncated() true
 *     and the offset just past the last complete value, so a reader keeps
 *     every complete event; NUL bytes where a token should start (files
 *     zero-padded by a crash) are treated as the end of input;
 *   - unknown escapes decode to the escaped character, bad \u escapes, lone
 *     surrogates and \u0000 to U+FFFD;
 *   - NaN, Infinity and -Infinity are accepted as numbers (flag
 *     CP_JT_F_NONFINITE); the number parsers reject them.
 *   - strings are not checked for UTF-8 validity or raw control characters.
 *   Values skipped with cp_jt_skip()/cp_jt_skip_rest() are only checked for
 *   balanced brackets and terminated strings: that is what makes skipping fast.
 *
 * Errors: every failing call returns a negative cp_status (CP_ERR_FORMAT for
 * bad or truncated input, CP_ERR_NOMEM when a cap is exceeded, or what the
 * read callback returned) and fills the optional cp_error with the file name,
 * the byte offset of the problem in the (uncompressed) input and the reason.
 * Errors are sticky: later calls return the same status.
 *
 * Not thread-safe per tokenizer; independent tokenizers share nothing.
 *
 * Typical reader loop (error handling shortened):
 *
 *     cp_jt *jt = cp_jt_open_src(src, NULL);
 *     cp_jt_tok t;
 *     int r;
 *     while ((r = cp_jt_next(jt, &t, err)) > 0 && r != CP_JT_EOF) {
 *         if (r == CP_JT_KEY && t.depth == 3 && cp_jt_tok_eq(&t, "ts")) {
 *             r = cp_jt_next(jt, &t, err);   // NUMBER, or STRING for "ts": "1.5"
 *             cp_jt_parse_ns(t.s, t.n, &ts_ns);
 *         } else if (r == CP_JT_KEY && cp_jt_tok_eq(&t, "args")) {
 *             r = cp_jt_skip(jt, err);       // or walk it when args are needed
 *         }
 *         if (r < 0) break;
 *     }
 *     if (r < 0 && cp_jt_truncated(jt))       // keep events that ended at or
 *         ...                                 // before cp_jt_last_complete_end()
 *     cp_jt_close(jt);
 */
#ifndef CP_BASE_JSONTOK_H
#define CP_BASE_JSONTOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "src.h"

/* Token types; all > 0 so cp_jt_next() can return a type or a negative status. */
typedef enum cp_jt_type {
    CP_JT_OBJ_BEGIN = 1, /* '{' */
    CP_JT_OBJ_END,       /* '}' */
    CP_JT_ARR_BEGIN,     /* '[' */
    CP_JT_ARR_END,       /* ']' */
    CP_JT_KEY,           /* object member name (decoded text) */
    CP_JT_STRING,        /* string value (decoded text) */
    CP_JT_NUMBER,        /* number value (raw text, e.g. "-12.5e3") */
    CP_JT_TRUE,
    CP_JT_FALSE,
    CP_JT_NULL,
    CP_JT_EOF, /* the top-level value is complete and only whitespace followed */
} cp_jt_type;

/* Token flags. */
enum {
    CP_JT_F_ESCAPED = 1u << 0,   /* string/key had escapes; text is in scratch */
    CP_JT_F_INT = 1u << 1,       /* number has no fraction and no exponent */
    CP_JT_F_NEG = 1u << 2,       /* number starts with '-' */
    CP_JT_F_NONFINITE = 1u << 3, /* NaN, Infinity or -Infinity */
};

typedef struct cp_jt_tok {
    int type;         /* a cp_jt_type */
    unsigned flags;   /* CP_JT_F_* */
    const char *s;    /* KEY/STRING: text (not NUL-terminated); NUMBER: raw text;
                       * NULL for other types. Borrowed: valid until the next
                       * call on the tokenizer. */
    size_t n;         /* length of s in bytes */
    long long offset; /* byte offset of the token's first byte in the input */
    unsigned depth;   /* containers open around the token (0 = top level);
                       * a BEGIN and its END have the same depth */
} cp_jt_tok;

/* Read callback: copy up to cap bytes of input into buf. Return the number
 * of bytes copied (>= 1), 0 at the end of input, or a negative cp_status
 * after filling err. Short reads are fine. */
typedef long (*cp_jt_read_fn)(void *ctx, char *buf, size_t cap, cp_error *err);

typedef struct cp_jt_opts {
    const char *name;       /* input name for messages (copied); NULL: "<json>" */
    size_t buf_bytes;       /* initial buffer size; 0: 1 MiB */
    size_t max_token_bytes; /* longest accepted token; 0: 64 MiB */
    unsigned max_depth;     /* nesting cap; 0: 256; at most CP_JT_DEPTH_LIMIT */
    int simd;               /* CP_JT_SIMD_*: 0 the best this CPU has; a level forces at most
                             * that one (tests compare them; all give the same tokens) */
} cp_jt_opts;

/* Vector kernels of the long scans (the end of a long string, the blocks
 * of a skipped value), chosen when the tokenizer is opened. */
enum {
    CP_JT_SIMD_AUTO = 0,
    CP_JT_SIMD_SCALAR, /* the portable byte loops */
    CP_JT_SIMD_SSE2,   /* 16 bytes a step (the x86-64 baseline) */
    CP_JT_SIMD_AVX2,   /* 32 bytes a step, when __builtin_cpu_supports("avx2") */
};

#define CP_JT_DEPTH_LIMIT 1024u

/* Counters of tolerated damage and of work done. */
typedef struct cp_jt_stats {
    uint64_t trailing_commas; /* ',' directly before '}' or ']' */
    uint64_t bad_escapes;     /* unknown escapes, bad \u, lone surrogates */
    uint64_t refills;         /* read callback calls that returned data */
    uint64_t resyncs;         /* cp_jt_resync calls that found a way on */
    uint64_t resync_bytes;    /* input bytes they skipped */
} cp_jt_stats;

typedef struct cp_jt cp_jt;

/* Create a tokenizer reading through fn(ctx, ...). opts may be NULL. The
 * caller keeps ownership of ctx (it must outlive the tokenizer) and frees the
 * tokenizer with cp_jt_close(). Never fails (allocation is cp_xmalloc). */
cp_jt *cp_jt_open(cp_jt_read_fn fn, void *ctx, const cp_jt_opts *opts);

/* Tokenize a byte source (plain, .gz or .zst; see src.h). The source stays
 * owned by the caller and must outlive the tokenizer; the input name defaults
 * to the source's name. A compressed file cut short simply ends early, so it
 * is reported as truncated JSON (cp_src_truncated() says why). */
cp_jt *cp_jt_open_src(cp_src *src, const cp_jt_opts *opts);

/* Create a tokenizer over data[0..n) without copying; data must stay valid and
 * unchanged until cp_jt_close(). Token spans point into data; there is no
 * buffer, so max_token_bytes does not apply. */
cp_jt *cp_jt_open_mem(const char *data, size_t n, const cp_jt_opts *opts);

/* Free the tokenizer (NULL is fine). Does not touch ctx or data. */
void cp_jt_close(cp_jt *jt);

/* Read the next token into *tok. Returns its type (> 0) or a negative
 * cp_status (err filled). After the top-level value, returns CP_JT_EOF for
 * good; anything but whitespace after it is an error. */
int cp_jt_next(cp_jt *jt, cp_jt_tok *tok, cp_error *err);

/* Skip the next value (scalar or whole nested container) without producing
 * tokens. Call it where a value is expected (after a KEY, inside an array).
 * Returns the type of the first token of what was consumed: a BEGIN or scalar
 * type when a value was skipped, CP_JT_ARR_END/OBJ_END if the container closed
 * instead (then nothing was skipped), or a negative cp_status. */
int cp_jt_skip(cp_jt *jt, cp_error *err);

/* Skip the rest of the innermost open container, including its closing
 * bracket (e.g. after reading the members of an event that matter).
 * Returns the END type consumed, or a negative status; at depth 0 it is a
 * usage error (CP_ERR_USAGE). */
int cp_jt_skip_rest(cp_jt *jt, cp_error *err);

/* Resynchronise after malformed input (not truncation, not a cap) met
 * inside the array whose elements have tok.depth == target (Kineto's
 * traceEvents): from the error's offset, skip forward, tracking only strings
 * and brackets (a '}' or ']' closes the nearest open container of its kind
 * and what is open inside it), to the end of
 * the damaged element or the start of the next one at that depth, and clear
 * the sticky error. The next cp_jt_next returns the next element, or the
 * array's ']'. *skipped_bytes (may be NULL) gets the bytes passed over;
 * cp_jt_stats counts resyncs and bytes. Returns 0, or a negative status when
 * there is no way on (the input ends while skipping: truncated; the error was
 * not malformed input; target is not an open array). */
int cp_jt_resync(cp_jt *jt, unsigned target, long long *skipped_bytes, cp_error *err);

/* Number of containers currently open. */
unsigned cp_jt_depth(const cp_jt *jt);

/* Byte offset of the next unread input byte. */
long long cp_jt_offset(const cp_jt *jt);

/* Byte offset just past the last value (scalar or container) that was
 * completed, at any depth; -1 before the first one. After a truncation this
 * is where the intact prefix of the input ends. */
long long cp_jt_last_complete_end(const cp_jt *jt);

/* True when the last error was input ending inside a value (truncation),
 * as opposed to malformed input. */
bool cp_jt_truncated(const cp_jt *jt);

/* The damage counters so far. */
cp_jt_stats cp_jt_get_stats(const cp_jt *jt);

/* The CP_JT_SIMD_* level this tokenizer runs (never AUTO). */
int cp_jt_simd_level(const cp_jt *jt);

/* True when a KEY/STRING token's text equals the NUL-terminated lit. */
static inline bool cp_jt_tok_eq(const cp_jt_tok *tok, const char *lit)
{
    size_t n = strlen(lit);
    return tok->n == n && (n == 0 || memcmp(tok->s, lit, n) == 0);
}

/* ---- number text parsers (usable on any text, e.g. a STRING timestamp) ----
 * Accepted: optional surrounding double quotes (with optional spaces inside
 * them), then JSON number syntax. They return 0 on success, CP_JT_RANGE when
 * the value does not fit (the output is clamped to INT64_MIN/INT64_MAX), or
 * CP_ERR_FORMAT when the text is not a number (output untouched). */
#define CP_JT_RANGE 1

/* Parse a decimal number of microseconds (e.g. "4458676522690.655",
 * "1.5e3", "\"17\"") into exact integer nanoseconds without going through
 * double. Digits finer than 1 ns are truncated toward zero (1.0009 us ->
 * 1000 ns, -1.0009 us -> -1000 ns). */
int cp_jt_parse_ns(const char *s, size_t n, int64_t *out_ns);

/* Parse an integer (no fraction, no exponent) with overflow detection. */
int cp_jt_parse_i64(const char *s, size_t n, int64_t *out);

/* Parse any number (also with fraction/exponent) as a double via strtod;
 * CP_JT_RANGE when it overflows to +-inf. */
int cp_jt_parse_double(const char *s, size_t n, double *out);

#endif
