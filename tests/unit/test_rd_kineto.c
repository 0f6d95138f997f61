/* test_rd_kineto.c - the Kineto reader: small fixtures written for each kind
 * of damage (tests/fixtures/kineto), and HTA's real traces read in place
 * (../shared/data/hta; those tests skip when the data is absent). */
#include "test_util.h"

#include "base/src.h"
#include "base/util.h"
#include "readers/log_prefix.h"
#include "readers/rd_kineto.h"

#include <dirent.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* ---- helpers ------------------------------------------------------------------ */

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)sz + 1);
    assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    buf[sz] = 0;
    *n = (size_t)sz;
    return buf;
}

static const char *fixture(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/kineto/%s", CP_FIXTURES, name);
    return buf;
}

/* Read n bytes of data (as file `name`) into a new builder. */
static int read_mem(const char *data, size_t n, const char *name, tl_builder **out, cp_error *err)
{
    tl_builder *b = tl_builder_new(name);
    cp_src *s = cp_src_open_mem(data, n, name);
    cp_error_clear(err);
    int rc = rd_kineto_read_src(s, name, b, err);
    cp_src_close(s);
    *out = b;
    return rc;
}

static tl_builder *read_fixture(const char *name, int expect_rc)
{
    char p[1024];
    tl_builder *b = tl_builder_new(fixture(name, p, sizeof p));
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_kineto_read(p, b, NULL, &err);
    if (rc != expect_rc)
        fail_msg("%s: rc %d (expected %d): %s", name, rc, expect_rc, err.msg);
    return b;
}

static tl_timeline *finish1(tl_builder *b)
{
    tl_timeline *tl = NULL;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    return tl;
}

static uint64_t dcount(const tl_builder *b, diag_code c)
{
    return tl_builder_diag((tl_builder *)b)->count[c];
}

/* Index of the first event named name (optionally with correlation corr). */
static long find_ev(const tl_timeline *tl, const char *name, int64_t corr)
{
    for (size_t i = 0; i < tl->n_events; i++)
        if (strcmp(tl_str(tl, tl->name[i]), name) == 0 && (corr < 0 || tl->corr[i] == corr))
            return (long)i;
    return -1;
}

static const tl_track *track_of(const tl_timeline *tl, size_t ev) { return &tl->tracks[tl->track[ev]]; }

/* ---- fixtures ----------------------------------------------------------------- */

static void test_good_trace(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("good.json", 0);
    assert_int_equal(tl_builder_count(b), 12);
    assert_int_equal(diag_total(tl_builder_diag(b)), 0);
    tl_rank_meta *m = tl_builder_meta(b);
    assert_int_equal(m->rank, 1); /* distributedInfo after traceEvents, spaced */
    assert_int_equal(m->rank_source, TL_RANK_FROM_TRACE);
    assert_int_equal(m->world_size, 2);
    assert_true(m->has_base_time);
    assert_true(m->base_time_ns == 1700000000000000000LL);
    assert_int_equal(m->n_devices, 2);
    assert_true(m->gpu_mem_bytes == 84974239744LL);
    assert_int_equal(m->vendor, TL_VENDOR_NVIDIA);
    assert_int_equal(m->n_pgs, 1);
    assert_int_equal(m->pgs[0].size, 2);
    assert_int_equal(m->pgs[0].ranks[1], 1);

    tl_timeline *tl = finish1(b);
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.gpu_name), "NVIDIA A100-SXM4-80GB");
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.hostname), "node-07");
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.backend), "nccl");
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.nccl_version), "2.18.3");
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.pgs[0].desc), "default_pg");
    const int64_t base = 1700000000000000000LL;

    long mm = find_ev(tl, "aten::mm", -1);
    assert_true(mm >= 0);
    assert_true(tl->ts_ns[mm] == base + 1010123); /* 1010.123456 us: sub-ns digits truncated */
    assert_true(tl->dur_ns[mm] == 20250);
    assert_true(tl_ext_id(tl, (size_t)mm) == 2);
    int64_t iv;
    assert_true(tl_arg_int(tl, (size_t)mm, "Sequence number", &iv) && iv == 7);
    assert_false(tl_arg_get(tl, (size_t)mm, "Input Dims", NULL)); /* arrays skipped */
    assert_false(tl_arg_get(tl, (size_t)mm, "External id", NULL)); /* kept apart (tl_ext_id) */
    tl_arg flag;
    assert_true(tl_arg_get(tl, (size_t)mm, "flag", &flag));
    assert_int_equal(flag.type, TL_ARG_BOOL);
    double dv;
    assert_true(tl_arg_num(tl, (size_t)mm, "ratio", &dv) && dv == 0.5);
    assert_string_equal(tl_str(tl, track_of(tl, (size_t)mm)->name), "main thread");

    long k = find_ev(tl, "volta_sgemm_128x64_nn", -1);
    assert_true(k >= 0);
    const tl_track *kt = track_of(tl, (size_t)k);
    assert_int_equal(kt->key.kind, TL_TRACK_GPU);
    assert_int_equal(kt->key.device, 1);
    assert_true(kt->key.stream == 13);
    assert_string_equal(tl_str(tl, kt->name), "stream 13");
    assert_true(tl->ts_ns[k] == base + 1020001 && tl->dur_ns[k] == 50999);
    assert_true(tl->corr[k] == 42);
    assert_int_equal(tl->kclass[k], TL_K_COMPUTE);
    long launch = tl->link[k];
    assert_true(launch >= 0);
    assert_string_equal(tl_str(tl, tl->name[launch]), "cudaLaunchKernel");
    assert_true(tl->corr[launch] == 42);
    assert_true(tl_arg_num(tl, (size_t)k, "blocks per SM", &dv) && dv == 0.740741);

    long nccl = find_ev(tl, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", -1);
    assert_true(nccl >= 0);
    assert_int_equal(tl->kclass[nccl], TL_K_COMM);
    assert_string_equal(tl_arg_str(tl, (size_t)nccl, "Process Group Ranks"), "[0, 1]");
    assert_true(tl_arg_int(tl, (size_t)nccl, "In msg nelems", &iv) && iv == 1024);

    long cp = find_ev(tl, "Memcpy HtoD (Pageable -> Device)", -1);
    assert_int_equal(tl->kclass[cp], TL_K_MEMCPY);
    assert_int_equal(tl->copy_dir[cp], TL_COPY_H2D);
    assert_true(tl->flags[cp] & TL_F_PAGEABLE);

    long ann = find_ev(tl, "DistributedDataParallel.forward", -1);
    assert_int_equal(track_of(tl, (size_t)ann)->key.kind, TL_TRACK_GPU);
    assert_true(track_of(tl, (size_t)ann)->key.stream == 13); /* from tid */
    assert_true(tl->flags[ann] & TL_F_NO_STREAM_ARG);

    long inst = find_ev(tl, "[memory]", -1);
    assert_true(tl->flags[inst] & TL_F_INSTANT);
    assert_true(tl->dur_ns[inst] == 0);
    long ctr = find_ev(tl, "gpu_util", -1);
    assert_int_equal(track_of(tl, (size_t)ctr)->key.kind, TL_TRACK_OTHER);
    assert_true(tl_arg_num(tl, (size_t)ctr, "util", &dv) && dv == 87.5);

    long span = find_ev(tl, "PyTorch Profiler (0)", -1);
    const tl_track *st = track_of(tl, (size_t)span);
    assert_int_equal(st->key.kind, TL_TRACK_CPU);
    assert_true(st->key.pid < 0); /* "Spans" -> a stable negative id */
    assert_string_equal(tl_str(tl, st->name), "PyTorch Profiler");
    tl_free(tl);
}

/* Every prefix of a good trace: no crash, events only grow, each kept event
 * is a complete one, truncation is counted, and not-yet-a-trace prefixes are
 * rejected rather than accepted empty. */
static void test_truncated_everywhere(void **state)
{
    (void)state;
    char p[1024];
    size_t n;
    char *data = slurp(fixture("good.json", p, sizeof p), &n);
    const char *events_end = strstr(data, "\n  ],\n  \"distributedInfo\"");
    assert_non_null(events_end);
    size_t all_events_at = (size_t)(events_end - data);
    const char *last_close = strrchr(data, '}');
    size_t prev = 0;
    for (size_t len = 0; len <= n; len++) {
        tl_builder *b;
        cp_error err;
        int rc = read_mem(data, len, "good.json", &b, &err);
        size_t cnt = tl_builder_count(b);
        if (rc < 0) {
            assert_int_equal(rc, CP_ERR_FORMAT);
            assert_true(len < 40); /* only before the first top-level key is read */
        } else {
            assert_true(cnt >= prev);
            if (len < (size_t)(last_close - data) + 1)
                assert_int_equal(dcount(b, DIAG_TRUNCATED_FILE), 1);
            else
                assert_int_equal(dcount(b, DIAG_TRUNCATED_FILE), 0);
            if (len >= all_events_at)
                assert_int_equal(cnt, 12);
            prev = cnt;
        }
        tl_timeline *tl = finish1(b); /* a partial builder must still freeze */
        tl_free(tl);
    }
    assert_int_equal(prev, 12);
    free(data);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* The same trace gzip- and zstd-compressed, whole and cut in half. */
static void test_compressed(void **state)
{
    (void)state;
    char p[1024];
    size_t n;
    char *data = slurp(fixture("good.json", p, sizeof p), &n);
    unsigned char *gz = malloc(n + 1024);
    z_stream zs = { 0 };
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (unsigned char *)data;
    zs.avail_in = (unsigned)n;
    zs.next_out = gz;
    zs.avail_out = (unsigned)(n + 1024);
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t gz_n = zs.total_out;
    deflateEnd(&zs);
    /* zstd decodes whole blocks only: flush every 256 bytes so that half of
     * the file still holds complete blocks, as a long trace would */
    size_t zcap = ZSTD_compressBound(n) + n;
    char *zst = malloc(zcap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_outBuffer zo = { zst, zcap, 0 };
    for (size_t at = 0; at < n; at += 256) {
        ZSTD_inBuffer zi = { data + at, CP_MIN((size_t)256, n - at), 0 };
        bool last = at + 256 >= n;
        size_t left;
        do {
            left = ZSTD_compressStream2(cc, &zo, &zi, last ? ZSTD_e_end : ZSTD_e_flush);
            assert_false(ZSTD_isError(left));
        } while (left != 0);
    }
    ZSTD_freeCCtx(cc);
    size_t zst_n = zo.pos;

    char tmpl[] = "/tmp/cp_kineto_XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char path[512];
    struct { const char *name; const void *d; size_t n; size_t want; bool trunc; } cases[] = {
        { "rank_1.json.gz", gz, gz_n, 12, false },
        { "rank_1.json.zst", zst, zst_n, 12, false },
        { "half.json.gz", gz, gz_n / 2, 0, true },
        { "half.json.zst", zst, zst_n / 2, 0, true },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(cases); i++) {
        snprintf(path, sizeof path, "%s/%s", tmpl, cases[i].name);
        write_file(path, cases[i].d, cases[i].n);
        tl_builder *b = tl_builder_new(path);
        cp_error err;
        cp_error_clear(&err);
        int rc = rd_kineto_read(path, b, NULL, &err);
        if (rc != 0)
            fail_msg("%s: rc %d: %s", cases[i].name, rc, err.msg);
        if (cases[i].trunc) {
            assert_int_equal(dcount(b, DIAG_TRUNCATED_FILE), 1);
            assert_true(tl_builder_count(b) < 12);
        } else {
            assert_int_equal(dcount(b, DIAG_TRUNCATED_FILE), 0);
            assert_int_equal(tl_builder_count(b), cases[i].want);
        }
        tl_builder_free(b);
        unlink(path);
    }
    rmdir(tmpl);
    free(gz);
    free(zst);
    free(data);
}

/* A plain file is parsed in place from a mapping whose pages behind the
 * parser are handed back as it goes (cp_fmap_drop, every 16 MiB): a trace
 * well past that, whole and cut inside an event, must give the same
 * timeline as the same bytes streamed through a byte source. */
static void test_mapped_equals_streamed(void **state)
{
    (void)state;
    size_t cap = (size_t)40 << 20, n = 0;
    char *data = malloc(cap);
    assert_non_null(data);
    n += (size_t)snprintf(data + n, cap - n, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
    for (long i = 0; n + 512 < cap - 64; i++)
        n += (size_t)snprintf(data + n, cap - n,
                              "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%ld\", \"pid\": 0, \"tid\": %ld, "
                              "\"ts\": %ld.%03ld, \"dur\": %ld, \"args\": {\"device\": 0, \"stream\": %ld, "
                              "\"correlation\": %ld, \"grid\": [%ld, 1, 1]}},\n",
                              i % 97, 7 + i % 3, 1000 + i * 3, i % 1000, 1 + i % 5, 7 + i % 3, i, i % 13);
    n += (size_t)snprintf(data + n, cap - n, "  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 0, \"tid\": 1, \"ts\": 1}\n]}\n");
    char tmpl[] = "/tmp/cp_kineto_map_XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char path[512];
    snprintf(path, sizeof path, "%s/rank_0.json", tmpl);
    size_t lens[] = { n, n - n / 3 }; /* whole; cut in the middle of an event */
    for (size_t c = 0; c < CP_ARRAY_LEN(lens); c++) {
        write_file(path, data, lens[c]);
        tl_builder *bm = tl_builder_new(path), *bs;
        cp_error err;
        cp_error_clear(&err);
        assert_int_equal(rd_kineto_read(path, bm, NULL, &err), 0);
        assert_int_equal(read_mem(data, lens[c], path, &bs, &err), 0);
        assert_true(tl_builder_count(bm) > 100000);
        assert_int_equal(tl_builder_count(bm), tl_builder_count(bs));
        assert_int_equal(dcount(bm, DIAG_TRUNCATED_FILE), c == 1);
        assert_int_equal(dcount(bs, DIAG_TRUNCATED_FILE), c == 1);
        tl_timeline *tm = finish1(bm), *ts = finish1(bs);
        assert_int_equal(tm->n_events, ts->n_events);
        assert_memory_equal(tm->ts_ns, ts->ts_ns, tm->n_events * sizeof *tm->ts_ns);
        assert_memory_equal(tm->dur_ns, ts->dur_ns, tm->n_events * sizeof *tm->dur_ns);
        assert_memory_equal(tm->corr, ts->corr, tm->n_events * sizeof *tm->corr);
        for (size_t i = 0; i < tm->n_events; i += 997)
            assert_string_equal(tl_str(tm, tm->name[i]), tl_str(ts, ts->name[i]));
        tl_free(tm);
        tl_free(ts);
        unlink(path);
    }
    rmdir(tmpl);
    free(data);
}

static void test_trailing_commas(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("trailing_commas.json", 0);
    assert_int_equal(tl_builder_count(b), 2);
    assert_int_equal(dcount(b, DIAG_TRAILING_COMMA), 4);
    assert_int_equal(tl_builder_meta(b)->rank, 0);
    tl_builder_free(b);
}

static void test_string_timestamps(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("string_ts.json", 0);
    assert_int_equal(dcount(b, DIAG_STRING_TIMESTAMP), 2);
    tl_timeline *tl = finish1(b);
    long a = find_ev(tl, "a", -1), c = find_ev(tl, "b", -1);
    assert_true(tl->ts_ns[a] == 1712195495505582988LL); /* beyond double precision */
    assert_true(tl->dur_ns[a] == 4928);
    assert_true(tl->ts_ns[c] == 1712195495505590000LL);
    assert_true(tl->dur_ns[c] == 1500); /* exponent form */
    tl_free(tl);
}

/* Decimal microseconds to exact ns over the fast path's edges. */
static void test_timestamps_exact(void **state)
{
    (void)state;
    static const struct { const char *ts; int64_t ns; } ok[] = {
        { "17", 17000 }, { "0.0005", 0 }, { "1.0009", 1000 }, { "1e3", 1000000 }, { "12.5e-1", 1250 },
        { "-5.25", -5250 }, { "1712195495505582.988", 1712195495505582988LL },
        { "2305843009213693.951", 2305843009213693951LL }, { "0.1", 100 }, { "3.", 0 },
    };
    char buf[4096];
    int len = snprintf(buf, sizeof buf, "{\"traceEvents\": [");
    for (size_t i = 0; i < CP_ARRAY_LEN(ok); i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len,
                        "{\"ph\": \"X\", \"name\": \"e%zu\", \"pid\": 1, \"tid\": 1, \"ts\": %s, \"dur\": 1},", i,
                        ok[i].ts);
    len += snprintf(buf + len, sizeof buf - (size_t)len,
                    "{\"ph\": \"X\", \"name\": \"big\", \"pid\": 1, \"tid\": 1, \"ts\": 9999999999999999, \"dur\": 1},"
                    "{\"ph\": \"X\", \"name\": \"huge\", \"pid\": 1, \"tid\": 1, \"ts\": 99999999999999999999, \"dur\": 1}]}");
    tl_builder *b;
    cp_error err;
    assert_int_equal(read_mem(buf, (size_t)len, "ts.json", &b, &err), 0);
    /* "3." is not JSON: the tokenizer rejects it; the reader skips that
     * event and reads on, so "big" and "huge" after it are read (and
     * rejected as beyond the cap) */
    assert_int_equal(dcount(b, DIAG_DAMAGED_JSON), 1);
    assert_int_equal(dcount(b, DIAG_BAD_EVENT), 2);
    tl_timeline *tl = finish1(b);
    for (size_t i = 0; i + 1 < CP_ARRAY_LEN(ok); i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "e%zu", i);
        long e = find_ev(tl, nm, -1);
        assert_true(e >= 0);
        if (tl->ts_ns[e] != ok[i].ns)
            fail_msg("ts %s -> %lld ns, expected %lld", ok[i].ts, (long long)tl->ts_ns[e], (long long)ok[i].ns);
    }
    tl_free(tl);
    /* beyond the 2^61 ns cap (and beyond int64): skipped as bad events */
    len = snprintf(buf, sizeof buf, "{\"traceEvents\": ["
                   "{\"ph\": \"X\", \"name\": \"big\", \"pid\": 1, \"tid\": 1, \"ts\": 9999999999999999, \"dur\": 1},"
                   "{\"ph\": \"X\", \"name\": \"huge\", \"pid\": 1, \"tid\": 1, \"ts\": 99999999999999999999, \"dur\": 1},"
                   "{\"ph\": \"X\", \"name\": \"long\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 3000000000000000}]}");
    assert_int_equal(read_mem(buf, (size_t)len, "ts.json", &b, &err), 0);
    assert_int_equal(dcount(b, DIAG_BAD_EVENT), 2);
    assert_int_equal(dcount(b, DIAG_CLAMPED_VALUE), 1);
    assert_int_equal(tl_builder_count(b), 1);
    tl_builder_free(b);
}

/* Names of every length up to 40 that differ in one byte only (first,
 * middle or last): the reader's string cache must never confuse them. */
static void test_similar_names(void **state)
{
    (void)state;
    static char buf[65536], names[123][48];
    size_t nn = 0;
    int len = snprintf(buf, sizeof buf, "{\"traceEvents\": [");
    for (int n = 1; n <= 41 && nn + 3 <= CP_ARRAY_LEN(names); n++)
        for (int v = 0; v < 3; v++) {
            char *nm = names[nn++];
            memset(nm, 'k', (size_t)n);
            nm[n] = 0;
            nm[v == 0 ? 0 : v == 1 ? n / 2 : n - 1] = (char)('A' + v);
        }
    for (int rep = 0; rep < 2; rep++) /* twice: the second pass hits the cache */
        for (size_t i = 0; i < nn; i++)
            len += snprintf(buf + len, sizeof buf - (size_t)len,
                            "{\"ph\": \"X\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": %zu, \"dur\": 1, "
                            "\"args\": {\"%s\": %zu}},", names[i], rep * nn + i, names[i], i);
    len += snprintf(buf + len, sizeof buf - (size_t)len, "{\"ph\": \"i\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": 999999}]}");
    tl_builder *b;
    cp_error err;
    assert_int_equal(read_mem(buf, (size_t)len, "names.json", &b, &err), 0);
    tl_timeline *tl = finish1(b);
    assert_int_equal(tl->n_events, 2 * nn + 1);
    for (size_t e = 0; e + 1 < tl->n_events; e++) { /* events are in ts order: index = ts */
        size_t i = (size_t)(tl->ts_ns[e] / 1000) % nn;
        assert_string_equal(tl_str(tl, tl->name[e]), names[i]);
        int64_t v;
        assert_true(tl_arg_int(tl, e, names[i], &v) && v == (int64_t)i);
    }
    tl_free(tl);
}

static void test_missing_and_negative_dur(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("missing_dur.json", 0);
    assert_int_equal(dcount(b, DIAG_MISSING_DUR), 1);
    assert_int_equal(dcount(b, DIAG_NEGATIVE_DUR), 1);
    tl_timeline *tl = finish1(b);
    long nd = find_ev(tl, "no dur", -1), neg = find_ev(tl, "negative", -1), ok = find_ev(tl, "fine", -1);
    assert_true(tl->dur_ns[nd] == 0 && (tl->flags[nd] & TL_F_NO_DUR));
    assert_true(tl->dur_ns[neg] == 0);
    assert_true(tl->dur_ns[ok] == 2000);
    tl_free(tl);
}

static void test_unmatched_flows(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("unmatched_flow.json", 0);
    /* lone ac2g start, lone fwdbwd end, lone fwdbwd start (string id); the
     * lone ac2g end is Kineto's own and not counted; the id-less flow is bad */
    assert_int_equal(dcount(b, DIAG_UNMATCHED_FLOW), 3);
    assert_int_equal(dcount(b, DIAG_BAD_EVENT), 1);
    assert_int_equal(tl_builder_count(b), 1);
    tl_builder_free(b);
}

static void test_unknown_phase(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("unknown_phase.json", 0);
    assert_int_equal(dcount(b, DIAG_UNKNOWN_PHASE), 2);
    assert_int_equal(tl_builder_count(b), 1);
    tl_builder_free(b);
}

static void test_bad_events(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("bad_events.json", 0);
    assert_int_equal(dcount(b, DIAG_BAD_EVENT), 5);
    assert_int_equal(tl_builder_count(b), 1);
    tl_builder_free(b);
}

static void test_huge_ints(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("huge_ints.json", 0);
    assert_int_equal(dcount(b, DIAG_INT_OVERFLOW_ARG), 2);
    tl_timeline *tl = finish1(b);
    assert_int_equal(tl->n_events, 1);
    assert_string_equal(tl_arg_str(tl, 0, "Comms Id"), "10159970886766084423");
    assert_string_equal(tl_arg_str(tl, 0, "neg"), "-9223372036854775809");
    int64_t v;
    assert_true(tl_arg_int(tl, 0, "max", &v) && v == INT64_MAX);
    assert_true(tl_arg_int(tl, 0, "min", &v) && v == INT64_MIN);
    assert_string_equal(tl_arg_str(tl, 0, "big float"), "1e400");
    assert_string_equal(tl_str(tl, track_of(tl, 0)->name), "18446744073709551615"); /* tid as text */
    tl_free(tl);
}

static void test_rank_from_filename(void **state)
{
    (void)state;
    static const struct { const char *path; int32_t rank; } cases[] = {
        { "rank-3.json", 3 },
        { "/x/y/rank_12.pt.trace.json.gz", 12 },
        { "Rank7.json", 7 },
        { "job.worker5.json.zst", 5 },
        { "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34 },
        { "trace.json", -1 },
        { "rank_not_found.json.gz", -1 },
        { "/data/rank-9/trace.json", -1 }, /* only the base name counts */
        { "rank-99999999999.json", -1 },   /* does not fit */
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(cases); i++)
        if (rd_rank_from_name(cases[i].path) != cases[i].rank)
            fail_msg("%s: rank %d, expected %d", cases[i].path, rd_rank_from_name(cases[i].path),
                     cases[i].rank);

    char p[1024];
    size_t n;
    char *data = slurp(fixture("no_rank.json", p, sizeof p), &n);
    tl_builder *b;
    cp_error err;
    assert_int_equal(read_mem(data, n, "/traces/worker_4.json", &b, &err), 0);
    assert_int_equal(tl_builder_meta(b)->rank, 4);
    assert_int_equal(tl_builder_meta(b)->rank_source, TL_RANK_FROM_FILENAME);
    assert_int_equal(dcount(b, DIAG_RANK_FROM_FILENAME), 1);
    tl_builder_free(b);
    /* no rank anywhere: -1 here, a distinct rank and a warning at finish */
    tl_builder *bs[2];
    assert_int_equal(read_mem(data, n, "a.json", &bs[0], &err), 0);
    assert_int_equal(read_mem(data, n, "b.json", &bs[1], &err), 0);
    assert_int_equal(tl_builder_meta(bs[0])->rank, -1);
    tl_timeline *tl;
    assert_int_equal(tl_finish(bs, 2, NULL, &tl, NULL), 0);
    assert_int_equal(tl->n_ranks, 2);
    assert_int_equal(tl->diag.count[DIAG_RANK_UNKNOWN], 2);
    assert_true(tl->ranks[0].meta.rank != tl->ranks[1].meta.rank);
    tl_free(tl);
    free(data);
}

static void test_duplicate_ranks(void **state)
{
    (void)state;
    tl_builder *bs[2] = { read_fixture("good.json", 0), read_fixture("good.json", 0) };
    tl_timeline *tl;
    assert_int_equal(tl_finish(bs, 2, NULL, &tl, NULL), 0);
    assert_int_equal(tl->n_ranks, 2);
    assert_int_equal(tl->diag.count[DIAG_DUPLICATE_RANK], 1);
    assert_int_equal(tl->ranks[0].meta.rank, 1);
    assert_int_equal(tl->ranks[1].meta.rank, 2);
    assert_int_equal(tl->ranks[1].meta.rank_source, TL_RANK_REASSIGNED);
    tl_free(tl);
}

static void test_not_a_trace(void **state)
{
    (void)state;
    char p[1024];
    static const char *const files[] = { "not_a_trace.json", "no_trace_events.json" };
    for (size_t i = 0; i < CP_ARRAY_LEN(files); i++) {
        tl_builder *b = tl_builder_new(fixture(files[i], p, sizeof p));
        cp_error err;
        cp_error_clear(&err);
        assert_int_equal(rd_kineto_read(p, b, NULL, &err), CP_ERR_FORMAT);
        assert_string_equal(err.file, p);
        assert_true(err.offset >= 0);
        assert_non_null(strstr(err.msg, "not a chrome trace"));
        tl_builder_free(b);
    }
    static const char *const texts[] = { "hello", "", "   ", "[1, 2, 3]", "[[-1, 1, 37888, 7]]", "42",
                                         "{\"traceEvents\": {}}", "{\"a\": tru", "{\"traceEvents\" [" };
    for (size_t i = 0; i < CP_ARRAY_LEN(texts); i++) {
        tl_builder *b;
        cp_error err;
        if (read_mem(texts[i], strlen(texts[i]), "x.json", &b, &err) != CP_ERR_FORMAT)
            fail_msg("'%s' was accepted as a trace", texts[i]);
        assert_string_equal(err.file, "x.json");
        char msg[1200];
        assert_non_null(strstr(cp_error_format(&err, msg, sizeof msg), "x.json:"));
        tl_builder_free(b);
    }
}

static void test_array_form(void **state)
{
    (void)state;
    tl_builder *b = read_fixture("array_form.json", 0);
    assert_int_equal(tl_builder_count(b), 2); /* Chrome allows the missing ']' */
    assert_int_equal(dcount(b, DIAG_TRUNCATED_FILE), 1);
    tl_builder_free(b);
}

/* Malformed JSON among the events (issue 21): the damaged event is skipped
 * to its end and every event after it is read, whatever the damage. */
static void test_resync(void **state)
{
    (void)state;
    static const char *const damage[] = {
        "{\"ph\": \"X\", \"name\": \"bad\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 12.0.0},",
        "{\"ph\": \"X\" \"name\": \"bad\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": 1},", /* missing ',' */
        "{\"ph\": \"X\", \"args\": {\"a\": [1, {\"b\": \"}]\"}, 2]}, \"ts\": 5, \"x\": ?},", /* brackets in strings */
        "{\"ph\": \"X\", \"args\": {\"a\": [1, {\"b\": \"}]\"}, 2}, \"ts\": 5, \"x\": ?},", /* and mismatched */
        "{\"ph\": \"X\", \"args\": {\"a\": [1, 2}, \"ts\": 5},",                /* mismatched bracket */
        "garbage, ",                                                               /* between events */
        "{\"ph\": \"X\", \"name\": \"bad\", \"ts\": 5, \"dur\": 1} {\"ph\": \"X\", \"name\": \"z\", \"ts\": 7, \"dur\": 1, \"pid\": 1, \"tid\": 1},", /* missing ',' between events */
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(damage); i++) {
        char buf[2048];
        int len = snprintf(buf, sizeof buf,
                           "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},"
                           "%s{\"ph\": \"X\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 9, \"dur\": 1}],"
                           " \"distributedInfo\": {\"rank\": 3}}",
                           damage[i]);
        tl_builder *b;
        cp_error err;
        assert_int_equal(read_mem(buf, (size_t)len, "resync.json", &b, &err), 0);
        if (dcount(b, DIAG_DAMAGED_JSON) < 1)
            fail_msg("damage %zu not counted", i);
        tl_timeline *tl = finish1(b);
        if (find_ev(tl, "a", -1) < 0 || find_ev(tl, "c", -1) < 0)
            fail_msg("damage %zu: an intact event was lost", i);
        /* the metadata after the events was read too */
        assert_int_equal(tl->ranks[0].meta.rank, 3);
        tl_free(tl);
    }
}

static void test_sniff(void **state)
{
    (void)state;
    static const struct { const char *head; bool yes; } cases[] = {
        { "{\n  \"schemaVersion\": 1, \"traceEvents\": [", true },
        { "\xef\xbb\xbf{\"traceEvents\": []}", true },
        { "{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": [", true },
        { "  {  \"schemaVersion\": 1, \"deviceProperties\": [", true },
        { "[{\"ph\": \"X\", \"ts\": 1}", true },
        { "{\"schema\": \"1.0.1\", \"nodes\": [", false },
        { "[[-1, 1, 37888, 7], [-1, 1, 512, 7]]", false },
        { "NCCL INFO Bootstrap", false },
        { "", false },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(cases); i++) {
        int s = rd_kineto_sniff("x", (const unsigned char *)cases[i].head, strlen(cases[i].head));
        if ((s >= 50) != cases[i].yes)
            fail_msg("sniff('%s') = %d", cases[i].head, s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_trace),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_compressed),
        cmocka_unit_test(test_mapped_equals_streamed),
        cmocka_unit_test(test_trailing_commas),
        cmocka_unit_test(test_string_timestamps),
        cmocka_unit_test(test_timestamps_exact),
        cmocka_unit_test(test_similar_names),
        cmocka_unit_test(test_missing_and_negative_dur),
        cmocka_unit_test(test_unmatched_flows),
        cmocka_unit_test(test_unknown_phase),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_huge_ints),
        cmocka_unit_test(test_rank_from_filename),
        cmocka_unit_test(test_duplicate_ranks),
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_array_form),
        cmocka_unit_test(test_resync),
        cmocka_unit_test(test_sniff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
