/* test_jsontok.c - unit tests of the streaming JSON tokenizer (src/base/jsontok.c).
 *
 * Most tests render the token stream as a compact text ("dump") so that
 * whole documents can be compared at once: the same document must give the
 * same dump whether it is read from memory, in one read, split at every byte
 * position, or one byte per read into a tiny buffer that has to grow.
 */
#include "test_util.h"

#include <unistd.h>
#include <zlib.h>

#include "base/jsontok.h"
#include "base/paths.h"
#include "base/src.h"
#include "base/util.h"

/* ---- helpers ------------------------------------------------------------ */

/* Read callback over a memory block: the first read returns at most `first`
 * bytes, later reads at most `chunk` bytes (0 = as much as fits). */
typedef struct split_src {
    const char *data;
    size_t n, pos, first, chunk;
    int reads;
    int fail_at; /* read number that fails with CP_ERR_IO, 0 = never */
} split_src;

static long split_read(void *ctx, char *buf, size_t cap, cp_error *err)
{
    split_src *s = ctx;
    s->reads++;
    if (s->fail_at && s->reads == s->fail_at)
        return cp_error_set(err, CP_ERR_IO, "mock", 0, 0, (long long)s->pos, "read failed: mock");
    size_t left = s->n - s->pos;
    size_t lim = s->reads == 1 ? s->first : s->chunk;
    if (lim && left > lim)
        left = lim;
    if (left > cap)
        left = cap;
    memcpy(buf, s->data + s->pos, left);
    s->pos += left;
    return (long)left;
}

typedef struct dump {
    char text[65536];
    size_t len;
    int status;          /* final status: CP_JT_EOF or negative */
    bool truncated;
    long long last_end;
    long long err_offset;
    char msg[512];
    cp_jt_stats stats;
} dump;

static void dprintf_(dump *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dprintf_(dump *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(d->text + d->len, sizeof d->text - d->len, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < sizeof d->text - d->len);
    d->len += (size_t)k;
}

static void dump_text(dump *d, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '|')
            dprintf_(d, "%c", c);
        else
            dprintf_(d, "\\%02x", c);
    }
}

/* Tokenize everything; keys named "args" have their value skipped and keys
 * named "rest" make the tokenizer skip the rest of their object, so the
 * skip paths are covered by every comparison too. */
static void run_dump(cp_jt *jt, dump *d)
{
    cp_jt_tok tok;
    cp_error err;
    memset(d, 0, sizeof *d);
    for (;;) {
        int t = cp_jt_next(jt, &tok, &err);
        if (t < 0) {
            d->status = t;
            d->err_offset = err.offset;
            snprintf(d->msg, sizeof d->msg, "%s", err.msg);
            break;
        }
        switch (t) {
        case CP_JT_OBJ_BEGIN: dprintf_(d, "{"); break;
        case CP_JT_OBJ_END: dprintf_(d, "}"); break;
        case CP_JT_ARR_BEGIN: dprintf_(d, "["); break;
        case CP_JT_ARR_END: dprintf_(d, "]"); break;
        case CP_JT_TRUE: dprintf_(d, "T"); break;
        case CP_JT_FALSE: dprintf_(d, "F"); break;
        case CP_JT_NULL: dprintf_(d, "Z"); break;
        case CP_JT_EOF: dprintf_(d, "$"); break;
        case CP_JT_KEY:
        case CP_JT_STRING:
        case CP_JT_NUMBER:
            dprintf_(d, "%c%s<", t == CP_JT_KEY ? 'k' : t == CP_JT_STRING ? 's' : 'n',
                     tok.flags & CP_JT_F_ESCAPED ? "e" : "");
            dump_text(d, tok.s, tok.n);
            dprintf_(d, ">");
            break;
        default: fail_msg("bad token type %d", t);
        }
        dprintf_(d, "@%lld:%u|", tok.offset, tok.depth);
        if (t == CP_JT_EOF) {
            d->status = t;
            break;
        }
        if (t == CP_JT_KEY && cp_jt_tok_eq(&tok, "args")) {
            int r = cp_jt_skip(jt, &err);
            if (r < 0) {
                d->status = r;
                d->err_offset = err.offset;
                snprintf(d->msg, sizeof d->msg, "%s", err.msg);
                break;
            }
            dprintf_(d, "skip%d|", r);
        } else if (t == CP_JT_KEY && cp_jt_tok_eq(&tok, "rest")) {
            int r = cp_jt_skip_rest(jt, &err);
            if (r < 0) {
                d->status = r;
                d->err_offset = err.offset;
                snprintf(d->msg, sizeof d->msg, "%s", err.msg);
                break;
            }
            dprintf_(d, "rest%d|", r);
        }
    }
    d->truncated = cp_jt_truncated(jt);
    d->last_end = cp_jt_last_complete_end(jt);
    d->stats = cp_jt_get_stats(jt);
    cp_jt_close(jt);
}

static void dump_mem(const char *s, size_t n, const cp_jt_opts *o, dump *d)
{
    cp_jt *jt = cp_jt_open_mem(s, n, o);
    assert_non_null(jt);
    run_dump(jt, d);
}

static void dump_split(const char *s, size_t n, size_t first, size_t chunk, size_t buf_bytes,
                       dump *d)
{
    split_src src = {.data = s, .n = n, .first = first, .chunk = chunk};
    cp_jt_opts o = {.name = "t.json", .buf_bytes = buf_bytes};
    cp_jt *jt = cp_jt_open(split_read, &src, &o);
    assert_non_null(jt);
    run_dump(jt, d);
}

static void assert_same(const dump *a, const dump *b)
{
    assert_string_equal(a->text, b->text);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->truncated, b->truncated);
    assert_int_equal(a->last_end, b->last_end);
    assert_int_equal(a->stats.trailing_commas, b->stats.trailing_commas);
    assert_int_equal(a->stats.bad_escapes, b->stats.bad_escapes);
    if (a->status < 0) {
        assert_int_equal(a->err_offset, b->err_offset);
        assert_string_equal(a->msg, b->msg);
    }
}

static void expect_dump(const char *json, const char *want)
{
    dump d;
    dump_mem(json, strlen(json), NULL, &d);
    assert_string_equal(d.text, want);
}

/* A small Kineto-like document that exercises every token type, escapes,
 * long strings, skipping and a trailing comma. */
static const char kineto_doc[] =
    "\xEF\xBB\xBF{\n"
    "  \"schemaVersion\": 1,\n"
    "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8},\n"
    "  \"traceEvents\": [\n"
    "  {\n"
    "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, "
    "unsigned long, ncclWork*)\", \"pid\": 0, \"tid\": 7,\n"
    "    \"ts\": 4458676522690.655, \"dur\": 12.5,\n"
    "    \"args\": {\"External id\": 2049, \"grid\": [1, 1, 1], \"s\": \"q\\\"}]\\\\\", \"x\": {\"y\": [[]]},\n"
    "      \"label\": \"brackets ] and } and [ { inside a string longer than 16 bytes\",\n"
    "      \"deep\": [{\"y\": \"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\"}, [[[[{}]]]], \"\\\\\"], \"z\": 1}\n"
    "  },\n"
    "  {\n"
    "    \"ph\": \"i\", \"name\": \"caf\\u00e9 \\ud83d\\ude00 \\n\\t\", \"big\": 18446744073709551616, "
    "\"f\": -1.5e-3, \"ok\": true, \"no\": false, \"nil\": null, \"n\": NaN, \"inf\": -Infinity,\n"
    "    \"rest\": {\"deep\": [1, \"]\"]}, \"more\": \"}\", \"z\": [{}]\n"
    "  },\n"
    "  ]\n"
    "}\n";

/* ---- tests ------------------------------------------------------------------ */

static void test_token_types(void **state)
{
    (void)state;
    const char *j = "{\"a\": [1, -2.5e3, true, false, null, \"x\"], \"b\": {}, \"c\": []}";
    cp_jt *jt = cp_jt_open_mem(j, strlen(j), NULL);
    assert_non_null(jt);
    cp_jt_tok t;
    static const int want[] = {CP_JT_OBJ_BEGIN, CP_JT_KEY,   CP_JT_ARR_BEGIN, CP_JT_NUMBER,
                               CP_JT_NUMBER,    CP_JT_TRUE,  CP_JT_FALSE,     CP_JT_NULL,
                               CP_JT_STRING,    CP_JT_ARR_END, CP_JT_KEY,     CP_JT_OBJ_BEGIN,
                               CP_JT_OBJ_END,   CP_JT_KEY,   CP_JT_ARR_BEGIN, CP_JT_ARR_END,
                               CP_JT_OBJ_END,   CP_JT_EOF,   CP_JT_EOF};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int r = cp_jt_next(jt, &t, NULL);
        assert_int_equal(r, want[i]);
        assert_int_equal(t.type, want[i]);
        if (i == 3) { /* 1 */
            assert_int_equal(t.n, 1);
            assert_int_equal(t.offset, 7);
            assert_int_equal(t.depth, 2);
            assert_int_equal(t.flags, CP_JT_F_INT);
        }
        if (i == 4) { /* -2.5e3 */
            assert_int_equal(t.n, 6);
            assert_memory_equal(t.s, "-2.5e3", 6);
            assert_int_equal(t.flags, CP_JT_F_NEG);
        }
        if (i == 8) { /* "x" points into the input, no copy */
            assert_ptr_equal(t.s, j + 38);
            assert_int_equal(t.n, 1);
            assert_int_equal(t.offset, 37);
        }
        if (i == 16) {
            assert_int_equal(t.depth, 0);
            assert_int_equal(cp_jt_last_complete_end(jt), (long long)strlen(j));
        }
    }
    assert_int_equal(cp_jt_depth(jt), 0);
    assert_int_equal(cp_jt_offset(jt), (long long)strlen(j));
    cp_jt_close(jt);

    expect_dump("  42 ", "n<42>@2:0|$@5:0|");
    expect_dump("\"s\"", "s<s>@0:0|$@3:0|");
    expect_dump("true", "T@0:0|$@4:0|");
    expect_dump("[NaN,Infinity,-Infinity,-0,0.5E+2]",
                "[@0:0|n<NaN>@1:1|n<Infinity>@5:1|n<-Infinity>@14:1|n<-0>@24:1|n<0.5E+2>@27:1|]@33:0|"
                "$@34:0|");
    expect_dump("[[[]],{}]", "[@0:0|[@1:1|[@2:2|]@3:2|]@4:1|{@6:1|}@7:1|]@8:0|$@9:0|");
}

static void test_escapes(void **state)
{
    (void)state;
    expect_dump("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"]",
                "[@0:0|se<a\"b\\5cc/d\\08\\0c\\0a\\0d\\09>@1:1|]@23:0|$@24:0|");
    /* \u escapes: 1-, 2-, 3-byte UTF-8, a surrogate pair (4 bytes); \u0000
     * is U+FFFD (a NUL would cut a name used as a C string), counted */
    expect_dump("\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\\u0000\"",
                "se<A\\c3\\a9\\e2\\82\\ac\\f0\\9f\\98\\80\\ef\\bf\\bd>@0:0|$@38:0|");
    /* lone high, lone low, bad hex, unknown escape: U+FFFD / the byte itself */
    dump d;
    const char *bad = "[\"\\ud800x\", \"\\udc00\", \"\\u12G4\", \"\\q\", \"\\ud800\\u0041\"]";
    dump_mem(bad, strlen(bad), NULL, &d);
    assert_string_equal(d.text, "[@0:0|se<\\ef\\bf\\bdx>@1:1|se<\\ef\\bf\\bd>@12:1|"
                                "se<\\ef\\bf\\bd12G4>@22:1|se<q>@32:1|se<\\ef\\bf\\bdA>@38:1|"
                                "]@52:0|$@53:0|");
    assert_int_equal(d.stats.bad_escapes, 5);
    /* keys are decoded the same way */
    expect_dump("{\"a\\u0062\": 1}", "{@0:0|ke<ab>@1:1|n<1>@12:1|}@13:0|$@14:0|");
    /* an escaped string's text is the scratch copy, not the input */
    const char *j = "\"x\\ny\"";
    cp_jt *jt = cp_jt_open_mem(j, strlen(j), NULL);
    cp_jt_tok t;
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_STRING);
    assert_true(t.s < j || t.s >= j + strlen(j));
    assert_memory_equal(t.s, "x\ny", 3);
    cp_jt_close(jt);
}

static void test_parse_ns(void **state)
{
    (void)state;
    static const struct { const char *s; int rc; int64_t ns; } cases[] = {
        {"4458676522690.655", 0, 4458676522690655LL},
        {"1712195495519689.047", 0, 1712195495519689047LL},
        {"\"1712195495519689.047\"", 0, 1712195495519689047LL},
        {"\" 17 \"", 0, 17000},
        {"1.5e3", 0, 1500000},
        {"15E-1", 0, 1500},
        {"1e-3", 0, 1},
        {"1.0009", 0, 1000},
        {"-1.0009", 0, -1000},
        {"0.0005", 0, 0},
        {"-0", 0, 0},
        {"0e999999999", 0, 0},
        {"12345678901234567890e-10", 0, 1234567890123LL},
        {"0.000000000000000000000000000001e30", 0, 1000},
        {"9223372036854775.807", 0, INT64_MAX},
        {"-9223372036854775.808", 0, INT64_MIN},
        {"9223372036854775.808", CP_JT_RANGE, INT64_MAX},
        {"-9223372036854775.809", CP_JT_RANGE, INT64_MIN},
        {"123456789012345678", CP_JT_RANGE, INT64_MAX},
        {"1e400", CP_JT_RANGE, INT64_MAX},
        {"", CP_ERR_FORMAT, 7},
        {"abc", CP_ERR_FORMAT, 7},
        {"1.", CP_ERR_FORMAT, 7},
        {".5", CP_ERR_FORMAT, 7},
        {"01", CP_ERR_FORMAT, 7},
        {"--1", CP_ERR_FORMAT, 7},
        {"1e", CP_ERR_FORMAT, 7},
        {"NaN", CP_ERR_FORMAT, 7},
        {" 1", CP_ERR_FORMAT, 7},
        {"\"", CP_ERR_FORMAT, 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 7;
        int rc = cp_jt_parse_ns(cases[i].s, strlen(cases[i].s), &v);
        if (rc != cases[i].rc || v != cases[i].ns)
            fail_msg("parse_ns(%s) = %d, %lld; want %d, %lld", cases[i].s, rc, (long long)v,
                     cases[i].rc, (long long)cases[i].ns);
    }
    /* the short-form fast path agrees with the general path ("e0" forces it) */
    uint64_t seed = 12345;
    for (int i = 0; i < 20000; i++) {
        char a[64], b[70];
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned nint = 1 + (unsigned)(seed >> 59) % 20, nfrac = (unsigned)(seed >> 33) % 7;
        int k = (seed >> 20) & 1 ? snprintf(a, sizeof a, "-") : 0;
        for (unsigned d = 0; d < nint + nfrac; d++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            if (d == nint)
                a[k++] = '.';
            a[k++] = (char)('0' + (d == 0 && nint > 1 ? 1 + (seed >> 61) : (seed >> 59) % 10));
        }
        a[k] = '\0';
        snprintf(b, sizeof b, "%se0", a);
        int64_t v1 = 1, v2 = 2;
        int r1 = cp_jt_parse_ns(a, (size_t)k, &v1), r2 = cp_jt_parse_ns(b, strlen(b), &v2);
        if (r1 != r2 || v1 != v2)
            fail_msg("parse_ns(%s) = %d %lld but parse_ns(%s) = %d %lld", a, r1, (long long)v1, b, r2,
                     (long long)v2);
    }
    /* the length is honoured: no read past n */
    int64_t v;
    assert_int_equal(cp_jt_parse_ns("12.5xyz", 4, &v), 0);
    assert_int_equal(v, 12500);
}

static void test_parse_int_double(void **state)
{
    (void)state;
    static const struct { const char *s; int rc; int64_t v; } cases[] = {
        {"0", 0, 0},
        {"-17", 0, -17},
        {"\"42\"", 0, 42},
        {"9223372036854775807", 0, INT64_MAX},
        {"-9223372036854775808", 0, INT64_MIN},
        {"9223372036854775808", CP_JT_RANGE, INT64_MAX},
        {"-9223372036854775809", CP_JT_RANGE, INT64_MIN},
        {"18446744073709551616", CP_JT_RANGE, INT64_MAX},
        {"99999999999999999999999999999", CP_JT_RANGE, INT64_MAX},
        {"1.0", CP_ERR_FORMAT, 5},
        {"1e3", CP_ERR_FORMAT, 5},
        {"x", CP_ERR_FORMAT, 5},
        {"-", CP_ERR_FORMAT, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 5;
        int rc = cp_jt_parse_i64(cases[i].s, strlen(cases[i].s), &v);
        if (rc != cases[i].rc || v != cases[i].v)
            fail_msg("parse_i64(%s) = %d, %lld", cases[i].s, rc, (long long)v);
    }
    double d = 0;
    assert_int_equal(cp_jt_parse_double("1.5", 3, &d), 0);
    assert_true(d == 1.5);
    assert_int_equal(cp_jt_parse_double("-2.5e-3", 7, &d), 0);
    assert_true(d == -2.5e-3);
    assert_int_equal(cp_jt_parse_double("1e999", 5, &d), CP_JT_RANGE);
    assert_int_equal(cp_jt_parse_double("1e-999", 6, &d), 0);
    assert_int_equal(cp_jt_parse_double("Infinity", 8, &d), CP_ERR_FORMAT);
    char longnum[320];
    memset(longnum, '1', sizeof longnum);
    assert_int_equal(cp_jt_parse_double(longnum, sizeof longnum, &d), CP_JT_RANGE);
    assert_int_equal(cp_jt_parse_double(longnum, 200, &d), 0);
    assert_true(d > 1.1e199 && d < 1.2e199);
}

static void test_trailing_commas(void **state)
{
    (void)state;
    dump d;
    const char *j = "{\"a\": [1, 2, ], \"b\": {\"c\": 1,},}";
    dump_mem(j, strlen(j), NULL, &d);
    assert_int_equal(d.status, CP_JT_EOF);
    assert_int_equal(d.stats.trailing_commas, 3);
    assert_string_equal(d.text, "{@0:0|k<a>@1:1|[@6:1|n<1>@7:2|n<2>@10:2|]@13:1|k<b>@16:1|{@21:1|"
                                "k<c>@22:2|n<1>@27:2|}@29:1|}@31:0|$@32:0|");
    /* a comma alone is still an error */
    static const char *bad[] = {"[,]", "{,}", "[1,,]", "{\"a\":1,,}", "[1 2]", "{\"a\" 1}"};
    static const long long at[] = {1, 1, 3, 7, 3, 5};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dump_mem(bad[i], strlen(bad[i]), NULL, &d);
        assert_int_equal(d.status, CP_ERR_FORMAT);
        assert_false(d.truncated);
        assert_int_equal(d.err_offset, at[i]);
    }
}

static void test_errors(void **state)
{
    (void)state;
    dump d;
    static const struct { const char *j; long long off; const char *msg; } cases[] = {
        {"", 0, "invalid json: empty input"},
        {"  \n ", 4, "invalid json: empty input"},
        {"PK\003\004", 0, "invalid json: expected a value, found 'P'"},
        {"[1}", 2, "invalid json: expected ']', found '}'"},
        {"{\"a\":1]", 6, "invalid json: expected '}', found ']'"},
        {"{} x", 3, "invalid json: expected the end of input after the top-level value, found 'x'"},
        {"[tru]", 1, "invalid json: bad literal, expected 'true'"},
        {"[1.]", 1, "invalid json: bad number '1.'"},
        {"[-]", 1, "invalid json: bad number '-'"},
        {"[-Inf]", 1, "invalid json: bad literal, expected '-Infinity'"},
        {"{1:2}", 1, "invalid json: expected a string key or '}', found '1'"},
        {"[\001]", 1, "invalid json: expected a value, found byte 0x01"},
        {"\xEF\xBB", 0, "invalid json: expected a value, found byte 0xef"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dump_mem(cases[i].j, strlen(cases[i].j), NULL, &d);
        assert_int_equal(d.status, CP_ERR_FORMAT);
        assert_false(d.truncated);
        assert_int_equal(d.err_offset, cases[i].off);
        assert_string_equal(d.msg, cases[i].msg);
    }
    /* errors are sticky and carry the input name */
    cp_jt_opts o = {.name = "rank0.json"};
    cp_jt *jt = cp_jt_open_mem("[1 2]", 5, &o);
    cp_jt_tok t;
    cp_error err;
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_ARR_BEGIN);
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_NUMBER);
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_ERR_FORMAT);
    memset(&err, 0, sizeof err);
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_ERR_FORMAT);
    assert_int_equal(cp_jt_skip(jt, &err), CP_ERR_FORMAT);
    assert_string_equal(err.file, "rank0.json");
    assert_int_equal(err.offset, 3);
    char buf[600];
    assert_string_equal(cp_error_format(&err, buf, sizeof buf),
                        "rank0.json:3: invalid json: expected ',' or ']', found '2'");
    cp_jt_close(jt);
    /* skip_rest at depth 0 is a usage error */
    jt = cp_jt_open_mem("1", 1, NULL);
    assert_int_equal(cp_jt_skip_rest(jt, &err), CP_ERR_USAGE);
    cp_jt_close(jt);
}

static void test_read_error_and_token_cap(void **state)
{
    (void)state;
    /* the read callback's error comes through unchanged */
    const char *j = "[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", 1]";
    split_src src = {.data = j, .n = strlen(j), .first = 4, .chunk = 4, .fail_at = 3};
    cp_jt *jt = cp_jt_open(split_read, &src, NULL);
    cp_jt_tok t;
    cp_error err;
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_JT_ARR_BEGIN);
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_ERR_IO);
    assert_string_equal(err.msg, "read failed: mock");
    assert_false(cp_jt_truncated(jt));
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_ERR_IO);
    cp_jt_close(jt);
    /* a token longer than max_token_bytes is refused, shorter ones grow the buffer */
    char big[300];
    big[0] = '"';
    memset(big + 1, 'b', sizeof big - 2);
    big[sizeof big - 1] = '"';
    split_src s2 = {.data = big, .n = sizeof big, .chunk = 7};
    cp_jt_opts o = {.buf_bytes = 16, .max_token_bytes = 100};
    jt = cp_jt_open(split_read, &s2, &o);
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_ERR_NOMEM);
    assert_non_null(strstr(err.msg, "token too long"));
    cp_jt_close(jt);
    split_src s3 = {.data = big, .n = sizeof big, .chunk = 7};
    o.max_token_bytes = 1000;
    jt = cp_jt_open(split_read, &s3, &o);
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_JT_STRING);
    assert_int_equal(t.n, sizeof big - 2);
    assert_int_equal(cp_jt_next(jt, &t, &err), CP_JT_EOF);
    cp_jt_close(jt);
}

static void test_depth_cap(void **state)
{
    (void)state;
    cp_jt_opts o = {.max_depth = 4};
    dump d;
    dump_mem("[[[[1]]]]", 9, &o, &d);
    assert_int_equal(d.status, CP_JT_EOF);
    dump_mem("[[[{\"a\":[1]}]]]", 15, &o, &d);
    assert_int_equal(d.status, CP_ERR_FORMAT);
    assert_int_equal(d.err_offset, 8);
    assert_string_equal(d.msg, "invalid json: nesting deeper than 4");
    /* skipping enforces the cap too */
    const char *j = "{\"args\": [[[[[]]]]]}";
    dump_mem(j, strlen(j), &o, &d);
    assert_int_equal(d.status, CP_ERR_FORMAT);
    assert_int_equal(d.err_offset, 12);
    /* the default cap is 256 and the hard limit CP_JT_DEPTH_LIMIT */
    char deep[2 * 1100];
    memset(deep, '[', 1100);
    memset(deep + 1100, ']', 1100);
    dump_mem(deep, 514, NULL, &d);
    assert_int_equal(d.err_offset, 256);
    o.max_depth = 100000;
    dump_mem(deep, sizeof deep, &o, &d);
    assert_int_equal(d.err_offset, CP_JT_DEPTH_LIMIT);
}

static void test_skip(void **state)
{
    (void)state;
    const char *j = "{\"args\": {\"a\": [1, \"]}\\\"\", {}], \"b\": \"\\\\\"}, \"k\": 2, "
                    "\"e\": {\"rest\": 1, \"x\": [\"}\"]}, \"args\": 5, \"n\": [\"args\"]}";
    expect_dump(j, "{@0:0|k<args>@1:1|skip1|k<k>@44:1|n<2>@49:1|k<e>@52:1|{@57:1|k<rest>@58:2|"
                   "rest2|k<args>@82:1|skip7|k<n>@93:1|[@98:1|s<args>@99:2|]@105:1|}@106:0|"
                   "$@107:0|");
    /* skip where the container closes instead returns the END */
    cp_jt *jt = cp_jt_open_mem("[1]", 3, NULL);
    cp_jt_tok t;
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_ARR_BEGIN);
    assert_int_equal(cp_jt_skip(jt, NULL), CP_JT_NUMBER);
    assert_int_equal(cp_jt_skip(jt, NULL), CP_JT_ARR_END);
    assert_int_equal(cp_jt_last_complete_end(jt), 3);
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_EOF);
    cp_jt_close(jt);
    /* skip_rest right after BEGIN, and a mismatched bracket inside a skip */
    jt = cp_jt_open_mem("[{\"a\":[}]", 9, NULL);
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_ARR_BEGIN);
    assert_int_equal(cp_jt_next(jt, &t, NULL), CP_JT_OBJ_BEGIN);
    cp_error err;
    assert_int_equal(cp_jt_skip_rest(jt, &err), CP_ERR_FORMAT);
    assert_int_equal(err.offset, 7);
    cp_jt_close(jt);
}

/* The same document read from memory, split at every position, and one byte
 * per read into a 16-byte buffer must tokenize identically. */
static void test_refill_every_split(void **state)
{
    (void)state;
    const char *docs[] = {kineto_doc, "[\"\\\\\",\"a\\\"\", 12345678901234567890, -Infinity, true]",
                          "  \"top\"  ", "-12.5e-7", "   42", "\n-Infinity ", "  true"};
    for (size_t k = 0; k < sizeof docs / sizeof docs[0]; k++) {
        const char *j = docs[k];
        size_t n = strlen(j);
        dump ref, d;
        dump_mem(j, n, NULL, &ref);
        assert_int_equal(ref.status, CP_JT_EOF);
        for (size_t split = 0; split <= n; split++) {
            dump_split(j, n, split ? split : 1, 0, 0, &d);
            assert_same(&ref, &d);
            dump_split(j, n, split ? split : 1, 3, 16, &d);
            assert_same(&ref, &d);
        }
        dump_split(j, n, 1, 1, 16, &d);
        assert_same(&ref, &d);
    }
    /* the Kineto document: skipped values, counters and the BOM */
    dump ref;
    dump_mem(kineto_doc, strlen(kineto_doc), NULL, &ref);
    assert_int_equal(ref.stats.trailing_commas, 1);
    assert_non_null(strstr(ref.text, "k<args>@"));
    assert_non_null(strstr(ref.text, "n<4458676522690.655>"));
    assert_non_null(strstr(ref.text, "se<caf\\c3\\a9 \\f0\\9f\\98\\80 \\0a\\09>"));
    assert_non_null(strstr(ref.text, "rest2|]"));
    assert_non_null(strstr(ref.text, "n<18446744073709551616>"));
}

/* Offsets of the ends of complete values in the prefix [0, len): what a
 * truncated read must report as its last complete value. */
static long long expected_last_end(const char *j, size_t len)
{
    cp_jt *jt = cp_jt_open_mem(j, strlen(j), NULL);
    cp_jt_tok t;
    long long best = -1;
    int r;
    while ((r = cp_jt_next(jt, &t, NULL)) > 0 && r != CP_JT_EOF) {
        long long e;
        if (r == CP_JT_KEY || r == CP_JT_OBJ_BEGIN || r == CP_JT_ARR_BEGIN)
            continue;
        e = cp_jt_last_complete_end(jt);
        /* a number that reaches the cut may continue after it */
        bool ok = r == CP_JT_NUMBER ? e < (long long)len : e <= (long long)len;
        if (ok && e > best)
            best = e;
    }
    cp_jt_close(jt);
    return best;
}

static void test_truncation_every_byte(void **state)
{
    (void)state;
    /* no "args"/"rest" keys: every value is tokenized */
    const char *j = "{\"traceEvents\": [\n"
                    "  {\"ph\": \"X\", \"name\": \"a\\\"b\", \"ts\": 12.5, \"ok\": true, \"n\": null},\n"
                    "  {\"ph\": \"X\", \"v\": [1, -2e3, false], \"s\": \"\\u00e9\"}\n"
                    "]}  ";
    size_t n = strlen(j);
    for (size_t len = 0; len <= n; len++) {
        dump m, s;
        dump_mem(j, len, NULL, &m);
        dump_split(j, len, len / 2 + 1, 5, 16, &s);
        assert_same(&m, &s);
        size_t last_nonws = n;
        while (last_nonws > 0 && (j[last_nonws - 1] == ' '))
            last_nonws--;
        if (len >= last_nonws) {
            assert_int_equal(m.status, CP_JT_EOF);
            continue;
        }
        assert_int_equal(m.status, CP_ERR_FORMAT);
        if (len == 0) {
            assert_false(m.truncated);
            continue;
        }
        assert_true(m.truncated);
        assert_int_equal(m.err_offset, (long long)len);
        assert_non_null(strstr(m.msg, "truncated input: ends inside"));
        assert_int_equal(m.last_end, expected_last_end(j, len));
    }
    /* zero padding after the last complete event reads as a truncation */
    const char z[] = "[{\"a\":1},{\"b\"\0\0\0\0";
    dump d;
    dump_mem(z, sizeof z - 1, NULL, &d);
    assert_true(d.truncated);
    assert_int_equal(d.last_end, 8);
    assert_int_equal(d.err_offset, 13);
    /* ... and after a complete document as the end of input */
    const char z2[] = "{\"a\":[]}\n\0\0";
    dump_mem(z2, sizeof z2 - 1, NULL, &d);
    assert_int_equal(d.status, CP_JT_EOF);
    /* truncation inside a skipped value */
    const char *sk = "[{\"args\": {\"a\": [1, 2";
    dump_mem(sk, strlen(sk), NULL, &d);
    assert_true(d.truncated);
    assert_int_equal(d.last_end, -1);
    assert_non_null(strstr(d.msg, "skipped value"));
}

/* Through the byte source: a gzip file, then the same file cut in half
 * (the decompressor delivers the prefix, the tokenizer reports truncation). */
static void test_gzip_source(void **state)
{
    (void)state;
    char path[] = "/tmp/cp_test_jsontok_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    /* big enough that the compressed stream spans several reads */
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    gzputs(gz, "{\"traceEvents\": [\n");
    for (int i = 0; i < 20000; i++)
        gzprintf(gz, "%s{\"ph\": \"X\", \"ts\": %d.%03d, \"args\": {\"i\": [%d]}}\n", i ? "," : "",
                 i, i % 1000, i);
    gzputs(gz, "]}\n");
    assert_int_equal(gzclose(gz), Z_OK);

    cp_src *src = NULL;
    cp_error err;
    assert_int_equal(cp_src_open(&src, path, &err), 0);
    cp_jt *jt = cp_jt_open_src(src, NULL);
    cp_jt_tok t;
    int r, events = 0;
    int64_t last_ts = 0;
    while ((r = cp_jt_next(jt, &t, &err)) > 0 && r != CP_JT_EOF) {
        if (r == CP_JT_OBJ_END && t.depth == 2)
            events++;
        if (r == CP_JT_KEY && cp_jt_tok_eq(&t, "ts")) {
            assert_int_equal(cp_jt_next(jt, &t, &err), CP_JT_NUMBER);
            assert_int_equal(cp_jt_parse_ns(t.s, t.n, &last_ts), 0);
        }
    }
    assert_int_equal(r, CP_JT_EOF);
    assert_int_equal(events, 20000);
    assert_int_equal(last_ts, 19999LL * 1000 + 999); /* "19999.999" us */
    cp_jt_close(jt);
    cp_src_close(src);

    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
    assert_int_equal(cp_src_open(&src, path, &err), 0);
    jt = cp_jt_open_src(src, NULL);
    events = 0;
    while ((r = cp_jt_next(jt, &t, &err)) > 0 && r != CP_JT_EOF)
        if (r == CP_JT_OBJ_END && t.depth == 2)
            events++;
    assert_int_equal(r, CP_ERR_FORMAT);
    assert_true(cp_jt_truncated(jt));
    assert_true(cp_src_truncated(src));
    assert_true(events > 1000 && events < 20000);
    assert_string_equal(err.file, path); /* the name comes from the source */
    assert_true(cp_jt_last_complete_end(jt) < err.offset);
    cp_jt_close(jt);
    cp_src_close(src);
    unlink(path);
}

static bool keep_json(const char *path, void *ctx)
{
    (void)ctx;
    return cp_str_ends(path, ".json") || cp_str_ends(path, ".json.gz");
}

/* Every real PyTorch trace we hold tokenizes to the end, streamed through
 * its byte source, with args skipped as the reader will. */
/* Every SIMD level of the long scans (byte loop, SSE2, AVX2 where the CPU
 * has it) gives the same tokens, skips, errors and truncation points: quotes,
 * backslashes and brackets put at every offset of a 16- and 32-byte block,
 * inside long strings and inside skipped values, and every prefix of some. */
static void build_block_doc(char *out, size_t cap, int pad)
{
    char x[80], q[80];
    memset(x, 'x', (size_t)pad);
    x[pad] = '\0';
    memset(q, ']', (size_t)pad);
    q[pad] = '\0';
    int n = snprintf(out, cap,
                     "[{\"args\": {\"a\": \"%s\\\"}]{[\", \"b\": [\"%s}\", {\"c\": \"%s\\\\\"}, [[]]], "
                     "\"d\": \"%s[{\"},\n  \"name\": \"%s\\\"z 0123456789abcdef0123456789abcdef0123456789\", "
                     "\"n2\": \"%s0123456789abcdef0123456789abcdef\", "
                     "\"rest\": {\"x\": \"%s}]\", \"y\": [1, 2, {\"z\": \"\\\"\"}], \"w\": \"%s\\\\\"}, "
                     "\"k\": 1}, {\"args\": [\"%s\", \"\\\\%s\"]}]",
                     x, q, x, q, x, x, q, x, x, q);
    assert_true(n > 0 && (size_t)n < cap);
}

static void test_simd_levels(void **state)
{
    (void)state;
    static dump a, b;
    char doc[2048];
    const int levels[] = {CP_JT_SIMD_SSE2, CP_JT_SIMD_AVX2};
    cp_jt *probe = cp_jt_open_mem("1", 1, &(cp_jt_opts){.simd = CP_JT_SIMD_SCALAR});
    assert_int_equal(cp_jt_simd_level(probe), CP_JT_SIMD_SCALAR);
    cp_jt_close(probe);
    for (int pad = 0; pad <= 70; pad++) {
        build_block_doc(doc, sizeof doc, pad);
        size_t n = strlen(doc);
        dump_mem(doc, n, &(cp_jt_opts){.simd = CP_JT_SIMD_SCALAR}, &a);
        assert_int_equal(a.status, CP_JT_EOF);
        for (size_t l = 0; l < CP_ARRAY_LEN(levels); l++) {
            dump_mem(doc, n, &(cp_jt_opts){.simd = levels[l]}, &b);
            assert_same(&a, &b);
        }
        if (pad % 17)
            continue;
        for (size_t cut = 0; cut < n; cut++) { /* truncated: same error, same last complete value */
            dump_mem(doc, cut, &(cp_jt_opts){.simd = CP_JT_SIMD_SCALAR}, &a);
            for (size_t l = 0; l < CP_ARRAY_LEN(levels); l++) {
                dump_mem(doc, cut, &(cp_jt_opts){.simd = levels[l]}, &b);
                assert_same(&a, &b);
            }
        }
    }
    dump_mem(kineto_doc, strlen(kineto_doc), &(cp_jt_opts){.simd = CP_JT_SIMD_SCALAR}, &a);
    dump_mem(kineto_doc, strlen(kineto_doc), NULL, &b);
    assert_same(&a, &b);
}

static void test_real_traces(void **state)
{
    (void)state;
    char dir[1024];
    if (!cp_test_data("hta", dir, sizeof dir))
        skip();
    cp_paths paths = {0};
    cp_error err;
    assert_int_equal(cp_paths_add(&paths, dir, keep_json, NULL, &err), 0);
    cp_paths_sort_unique(&paths);
    assert_true(paths.n >= 10);
    for (size_t i = 0; i < paths.n; i++) {
        cp_src *src = NULL;
        assert_int_equal(cp_src_open(&src, paths.v[i], &err), 0);
        cp_jt *jt = cp_jt_open_src(src, NULL);
        cp_jt_tok t;
        int r;
        uint64_t tokens = 0;
        while ((r = cp_jt_next(jt, &t, &err)) > 0 && r != CP_JT_EOF) {
            tokens++;
            if (r == CP_JT_KEY && cp_jt_tok_eq(&t, "args") && (tokens & 1))
                r = cp_jt_skip(jt, &err);
            if (r == CP_JT_NUMBER && t.depth == 2) {
                int64_t v;
                assert_true(cp_jt_parse_ns(t.s, t.n, &v) >= 0);
            }
            if (r < 0)
                break;
        }
        if (r != CP_JT_EOF)
            fail_msg("%s:%lld: %s", err.file, err.offset, err.msg);
        assert_true(tokens > 10);
        cp_jt_close(jt);
        cp_src_close(src);
    }
    cp_paths_free(&paths);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_types),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_parse_ns),
        cmocka_unit_test(test_parse_int_double),
        cmocka_unit_test(test_trailing_commas),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_read_error_and_token_cap),
        cmocka_unit_test(test_depth_cap),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_refill_every_split),
        cmocka_unit_test(test_truncation_every_byte),
        cmocka_unit_test(test_gzip_source),
        cmocka_unit_test(test_simd_levels),
        cmocka_unit_test(test_real_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
