/* test_rd_cptrace.c - the `chainprof run` trace reader on files built here
 * record by record: what each record kind becomes, CUPTI correlation, an
 * NCCL operation timed by kernel channels (GPU timer mapped to the host's),
 * continuation records across chunk boundaries, and every kind of damage
 * (not the format, truncated chunks, no END, unknown kinds, dropped
 * records, dangling string ids). */
#include "test_util.h"

#include "base/util.h"
#include "model/timeline.h"
#include "readers/rd_cptrace.h"

#include <string.h>

typedef struct img {
    unsigned char *p;
    size_t n, cap;
    size_t chunk_at; /* offset of the open chunk's header, 0 none */
} img;

static void put(img *m, const void *d, size_t n)
{
    cp_xgrow((void **)&m->p, &m->cap, m->n + n, 1);
    memcpy(m->p + m->n, d, n);
    m->n += n;
}

static img start(int rank, const char *host)
{
    img m = { 0 };
    cpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CPT_MAGIC, 8);
    h.version = CPT_VERSION, h.header_bytes = sizeof h, h.rec_bytes = sizeof(cpt_rec);
    h.rank = rank, h.world_size = 2, h.local_rank = rank, h.pid = 100 + rank, h.ppid = 1;
    h.mono0_ns = 1000000000, h.real0_ns = 1700000000000000000LL, h.clock_offset_ns = 5000, h.clock_rtt_ns = 100;
    h.step_first = h.step_last = -1;
    snprintf(h.host, sizeof h.host, "%s", host);
    put(&m, &h, sizeof h);
    return m;
}

static void chunk(img *m, uint32_t tid)
{
    cpt_chunk c = { CPT_CHUNK_MAGIC, tid, 0, 0 };
    m->chunk_at = m->n;
    put(m, &c, sizeof c);
}

static void rec(img *m, cpt_rec r)
{
    put(m, &r, sizeof r);
    ((cpt_chunk *)(void *)(m->p + m->chunk_at))->n_recs++;
}

static void str(img *m, uint32_t id, const char *s)
{
    size_t n = strlen(s), slots = (n + 47) / 48;
    rec(m, (cpt_rec){ .kind = CPT_K_STR, .u32 = id, .a = n });
    unsigned char buf[48 * 8] = { 0 };
    memcpy(buf, s, n);
    for (size_t k = 0; k < slots; k++) {
        cpt_rec r;
        memcpy(&r, buf + 48 * k, 48);
        rec(m, r);
    }
}

static void end(img *m) { rec(m, (cpt_rec){ .kind = CPT_K_END, .t_ns = 9000000000 }); }

static tl_timeline *read_img(const img *m, int expect)
{
    tl_builder *b = tl_builder_new("mem.cptrace");
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_cptrace_read_mem(m->p, m->n, "mem.cptrace", b, &err);
    if (rc != expect)
        fail_msg("rc %d, expected %d: %s", rc, expect, err.msg);
    if (rc < 0) {
        tl_builder_free(b);
        return NULL;
    }
    tl_timeline *tl = NULL;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    return tl;
}

static size_t find(const tl_timeline *tl, const char *name)
{
    for (size_t i = 0; i < tl->n_events; i++)
        if (!strcmp(tl_str(tl, tl->name[i]), name))
            return i;
    fail_msg("no event %s", name);
    return 0;
}

static size_t count(const tl_timeline *tl, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        n += !strcmp(tl_str(tl, tl->name[i]), name);
    return n;
}

static uint64_t diag_of(const tl_timeline *tl, diag_code c) { return tl->diag.count[c]; }

static void test_sniff_and_format(void **state)
{
    (void)state;
    img m = start(0, "h0");
    assert_int_equal(rd_cptrace_sniff("x", m.p, 8), 100);
    assert_int_equal(rd_cptrace_sniff("x", (const unsigned char *)"{\"trace", 7), 0);
    m.p[0] = 'X';
    read_img(&m, CP_ERR_FORMAT);
    m.p[0] = 'C';
    ((cpt_header *)(void *)m.p)->version = 99;
    read_img(&m, CP_ERR_FORMAT);
    ((cpt_header *)(void *)m.p)->version = CPT_VERSION;
    ((cpt_header *)(void *)m.p)->rec_bytes = 40;
    read_img(&m, CP_ERR_FORMAT);
    ((cpt_header *)(void *)m.p)->rec_bytes = 48;
    read_img(&(img){ m.p, 100, 0, 0 }, CP_ERR_FORMAT); /* shorter than a header */
    free(m.p);
}

static void test_records(void **state)
{
    (void)state;
    img m = start(1, "hostA");
    chunk(&m, 11);
    str(&m, 1, "main");
    rec(&m, (cpt_rec){ .kind = CPT_K_THREAD, .u32 = 1, .a = 11 });
    str(&m, 2, "/data/shard.bin");
    rec(&m, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 11, .t_ns = 2000000000, .dur_ns = 10000000, .a = 3 });
    rec(&m, (cpt_rec){ .kind = CPT_K_CPU, .t_ns = 2000000000, .a = 11, .b = 500 });
    rec(&m, (cpt_rec){ .kind = CPT_K_CPU, .t_ns = 2010000000, .a = 11, .b = 4500 });
    rec(&m, (cpt_rec){ .kind = CPT_K_IO, .op = CPT_IO_PREAD, .u32 = CPT_IOC_DATASET, .t_ns = 2001000000,
                       .dur_ns = 1000000, .a = 5, .b = 65536, .c = 2 });
    rec(&m, (cpt_rec){ .kind = CPT_K_CUDA, .op = CPT_CUDA_LAUNCH_KERNEL, .t_ns = 2003000000, .dur_ns = 5000,
                       .a = 0x99, .c = 77 });
    rec(&m, (cpt_rec){ .kind = CPT_K_CUDA, .op = CPT_CUDA_MEMCPY_ASYNC, .flags = CPT_MK_H2D, .t_ns = 2003500000,
                       .dur_ns = 4000, .a = 0x99, .b = 1 << 20, .c = 78 });
    rec(&m, (cpt_rec){ .kind = CPT_K_CUDA, .op = CPT_CUDA_STREAM_SYNC, .t_ns = 2004000000, .dur_ns = 3000000 });
    chunk(&m, 12); /* a CUPTI thread: its kernel name is defined in a later chunk of another thread */
    rec(&m, (cpt_rec){ .kind = CPT_K_CORR, .a = 77, .b = 4242 });
    rec(&m, (cpt_rec){ .kind = CPT_K_CORR, .a = 78, .b = 4243 });
    rec(&m, (cpt_rec){ .kind = CPT_K_GPU, .op = CPT_GPU_KERNEL, .u32 = 0, .t_ns = 2004000000, .dur_ns = 2500000,
                       .a = 7, .b = 4242, .c = 3 });
    rec(&m, (cpt_rec){ .kind = CPT_K_GPU, .op = CPT_GPU_MEMCPY, .flags = CPT_MK_H2D | 0x100, .t_ns = 2007000000,
                       .dur_ns = 100000, .a = 7, .b = 4243, .c = 1 << 20 });
    chunk(&m, 11);
    str(&m, 3, "gemm_kernel");
    end(&m);
    tl_timeline *tl = read_img(&m, 0);
    assert_int_equal(diag_total(&tl->diag), 0);
    assert_int_equal(tl->ranks[0].meta.rank, 1);
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.hostname), "hostA");
    assert_int_equal(tl->ranks[0].meta.base_time_ns, 1700000000000000000LL - 1000000000 + 5000);
    size_t st = find(tl, "ProfilerStep#3");
    int64_t cpu;
    assert_true(tl_arg_int(tl, st, "cpu_ns", &cpu));
    assert_int_equal(cpu, 4000);
    size_t host = find(tl, "step thread: framework code");
    assert_int_equal(tl->cat[host], TL_CAT_CPU_OP);
    assert_int_equal(tl->dur_ns[host], tl->dur_ns[st]);
    size_t io = find(tl, "pread");
    assert_int_equal(tl->cat[io], TL_CAT_OSRT);
    assert_string_equal(tl_arg_str(tl, io, "class"), "dataset");
    assert_string_equal(tl_arg_str(tl, io, "path"), "/data/shard.bin");
    int64_t bytes;
    assert_true(tl_arg_int(tl, io, "bytes", &bytes));
    assert_int_equal(bytes, 65536);
    size_t launch = find(tl, "cudaLaunchKernel"), k = find(tl, "gemm_kernel");
    assert_int_equal(tl->kclass[k], TL_K_COMPUTE);
    assert_int_equal(tl->tracks[tl->track[k]].key.kind, TL_TRACK_GPU);
    assert_int_equal(tl->corr[launch], 4242);
    assert_int_equal((int64_t)tl->link[launch], (int64_t)k);
    assert_true(tl->flags[find(tl, "cudaStreamSynchronize")] & TL_F_SYNC_CALL);
    size_t cp = find(tl, "Memcpy HtoD (Pageable)");
    assert_int_equal(tl->kclass[cp], TL_K_MEMCPY);
    assert_int_equal(tl->copy_dir[cp], TL_COPY_H2D);
    assert_true(tl->flags[cp] & TL_F_PAGEABLE);
    assert_string_equal(tl_str(tl, tl->tracks[tl->track[st]].name), "main");
    tl_free(tl);
    free(m.p);
}

/* An all-reduce whose kernel channel ran [3.0, 3.5] ms on the GPU timer,
 * which the host saw 10 us late: the operation's window is the GPU's, on
 * the host clock. Its NEV2 continuation comes in the next chunk. */
static void test_kernel_channels(void **state)
{
    (void)state;
    img m = start(0, "h0");
    const int64_t t0 = 3000000000, ptimer_off = 700000000; /* GPU timer = host - 0.7 s */
    chunk(&m, 21);
    str(&m, 1, "AllReduce");
    str(&m, 2, "ncclBfloat16");
    rec(&m, (cpt_rec){ .kind = CPT_K_COMM, .flags = 4, .u32 = 0, .t_ns = t0 - 1000, .a = 0x1234,
                       .b = (uint64_t)2 << 32 | 0, .c = 1 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NCALL, .op = CPT_NCCL_ALL_REDUCE, .u32 = 0, .t_ns = t0, .dur_ns = 1000000,
                       .a = 0x55, .b = 4096, .c = 9 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_COLL_START, .u32 = 0, .t_ns = t0 + 100, .a = 10, .c = 7 });
    chunk(&m, 21);
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV2, .u32 = 1, .t_ns = 0, .dur_ns = 1, .a = 4096, .b = 0, .c = 2 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_COLL_STOP, .t_ns = t0 + 200, .a = 10 });
    chunk(&m, 22); /* the proxy thread */
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_KCH_START, .u32 = 0, .t_ns = t0 + 10000, .a = 11, .b = 10,
                       .c = (uint64_t)(t0 - ptimer_off) });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV2, .u32 = 0 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_STATE, .flags = CPT_NS_KCH_STOP, .t_ns = t0 + 510000,
                       .a = 11, .c = (uint64_t)(t0 + 500000 - ptimer_off) });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_KCH_STOP, .t_ns = t0 + 510000, .a = 11 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_STATE, .flags = 9, .t_ns = t0, .a = 999 }); /* unknown id */
    end(&m);
    tl_timeline *tl = read_img(&m, 0);
    size_t op = find(tl, "ncclKernel_AllReduce");
    assert_string_equal(tl_arg_str(tl, op, "timing"), "kernel_channels");
    assert_string_equal(tl_arg_str(tl, op, "dtype"), "BFloat16");
    assert_int_equal(tl->ts_ns[op] - (int64_t)tl->ranks[0].meta.base_time_ns, t0 + 10000);
    assert_int_equal(tl->dur_ns[op], 500000);
    int64_t n, seq;
    assert_true(tl_arg_int(tl, op, "nNodes", &n) && n == 1);
    assert_true(tl_arg_int(tl, op, "Seq", &seq) && seq == 7);
    assert_int_equal(tl->kclass[op], TL_K_COMM);
    assert_int_equal(tl->tracks[tl->track[op]].key.kind, TL_TRACK_GPU);
    assert_int_equal(count(tl, "ncclAllReduce"), 1);
    assert_int_equal(diag_of(tl, DIAG_UNMATCHED_FLOW), 1);
    tl_free(tl);
    free(m.p);
}

static void test_damage(void **state)
{
    (void)state;
    img m = start(0, "h0");
    chunk(&m, 1);
    rec(&m, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 1, .t_ns = 2000000000, .dur_ns = 1000, .a = 0 });
    rec(&m, (cpt_rec){ .kind = 200 });                                        /* unknown kind */
    rec(&m, (cpt_rec){ .kind = CPT_K_IO, .op = 250, .u32 = 0 });              /* unknown call */
    rec(&m, (cpt_rec){ .kind = CPT_K_IO, .op = CPT_IO_READ, .u32 = 7 });      /* unknown class */
    rec(&m, (cpt_rec){ .kind = CPT_K_REGION, .u32 = 99, .t_ns = 2000000100, .dur_ns = 10 }); /* no such string */
    rec(&m, (cpt_rec){ .kind = CPT_K_DROP, .a = 5, .b = 1 });
    rec(&m, (cpt_rec){ .kind = CPT_K_STR, .u32 = 3, .a = 1000 });             /* a string longer than its chunk */
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV2 });                                 /* a continuation of nothing */
    size_t whole = m.n;
    chunk(&m, 1);
    rec(&m, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 1, .t_ns = 3000000000, .dur_ns = 1000, .a = 1 });
    /* cut the second chunk in the middle of its record: no END either */
    img cut = { m.p, whole + sizeof(cpt_chunk) + 20, 0, 0 };
    tl_timeline *tl = read_img(&cut, 0);
    assert_int_equal(count(tl, "ProfilerStep#0"), 1);
    assert_int_equal(count(tl, "ProfilerStep#1"), 0);
    assert_int_equal(count(tl, "?"), 1); /* the region of a dangling name */
    assert_int_equal(diag_of(tl, DIAG_BAD_EVENT), 5);
    assert_int_equal(diag_of(tl, DIAG_RECORDS_DROPPED), 5);
    assert_int_equal(diag_of(tl, DIAG_TRUNCATED_FILE), 1);
    tl_free(tl);
    /* the whole second chunk but still no END */
    tl = read_img(&m, 0);
    assert_int_equal(count(tl, "ProfilerStep#1"), 1);
    assert_int_equal(diag_of(tl, DIAG_TRUNCATED_FILE), 1);
    tl_free(tl);
    /* a chunk header that is not one: everything before it is kept */
    img bad = start(0, "h0");
    chunk(&bad, 1);
    rec(&bad, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 1, .t_ns = 2000000000, .dur_ns = 1000, .a = 4 });
    chunk(&bad, 1);
    ((cpt_chunk *)(void *)(bad.p + bad.chunk_at))->magic = 0xdeadbeef;
    rec(&bad, (cpt_rec){ .kind = CPT_K_END });
    tl = read_img(&bad, 0);
    assert_int_equal(count(tl, "ProfilerStep#4"), 1);
    assert_int_equal(diag_of(tl, DIAG_TRUNCATED_FILE), 1);
    tl_free(tl);
    free(bad.p);
    free(m.p);
}

/* Spans whose end does not fit int64 or that end before they start are
 * counted as damaged and dropped (fuzz_cptrace: signed overflow of
 * t_ns + dur_ns in the NCCL call's end); the good records around them stay. */
static void test_span_overflow(void **state)
{
    (void)state;
    img m = start(0, "h0");
    chunk(&m, 1);
    rec(&m, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 1, .t_ns = 2000000000, .dur_ns = 1000, .a = 0 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NCALL, .op = CPT_NCCL_ALL_REDUCE, .u32 = CPT_NO_COMM,
                       .t_ns = INT64_MAX - 10, .dur_ns = 1000 });
    rec(&m, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 1, .t_ns = INT64_MAX - 5, .dur_ns = 6, .a = 1 });
    rec(&m, (cpt_rec){ .kind = CPT_K_IO, .op = CPT_IO_READ, .t_ns = 2000000100, .dur_ns = -5, .a = 3, .b = 1 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NCALL, .op = CPT_NCCL_ALL_REDUCE, .u32 = CPT_NO_COMM,
                       .t_ns = 2000000200, .dur_ns = 300 });
    end(&m);
    tl_timeline *tl = read_img(&m, 0);
    assert_int_equal(count(tl, "ProfilerStep#0"), 1);
    assert_int_equal(count(tl, "ProfilerStep#1"), 0);
    assert_int_equal(count(tl, "ncclAllReduce"), 1);
    assert_int_equal(count(tl, "read"), 0);
    assert_int_equal(diag_of(tl, DIAG_BAD_EVENT), 3);
    tl_free(tl);
    free(m.p);
}

/* A step's process CPU time sums the threads' CPU deltas: damaged CPU times
 * whose sum does not fit int64 drop that arg (counted), a negative CPU time is
 * a damaged record (fuzz_cptrace: signed overflow in emit_steps); so is a
 * negative plugin event time. */
static void test_cpu_overflow(void **state)
{
    (void)state;
    img m = start(0, "h0");
    chunk(&m, 1);
    const int64_t t0 = 2000000000, t1 = 2010000000, big = INT64_MAX / 2 + 10;
    rec(&m, (cpt_rec){ .kind = CPT_K_STEP, .u32 = 1, .t_ns = t0, .dur_ns = t1 - t0, .a = 0 });
    for (uint64_t tid = 1; tid <= 2; tid++) {
        rec(&m, (cpt_rec){ .kind = CPT_K_CPU, .t_ns = t0, .a = tid, .b = 0 });
        rec(&m, (cpt_rec){ .kind = CPT_K_CPU, .t_ns = t1, .a = tid, .b = (uint64_t)big });
    }
    rec(&m, (cpt_rec){ .kind = CPT_K_CPU, .t_ns = t1, .a = 3, .b = (uint64_t)-5 });
    end(&m);
    tl_timeline *tl = read_img(&m, 0);
    size_t st = find(tl, "ProfilerStep#0");
    int64_t v;
    assert_true(tl_arg_int(tl, st, "cpu_ns", &v) && v == big); /* the step thread's own delta fits */
    assert_false(tl_arg_int(tl, st, "process_cpu_ns", &v));
    assert_int_equal(diag_of(tl, DIAG_BAD_EVENT), 2);
    tl_free(tl);
    free(m.p);
    /* a plugin event at a negative host time is damaged (its differences to
     * the GPU timer overflowed, fuzz_cptrace): counted, its stop unmatched */
    m = start(0, "h0");
    chunk(&m, 21);
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_COLL_START, .u32 = 0, .t_ns = INT64_MIN + 9, .a = 10, .c = 7 });
    rec(&m, (cpt_rec){ .kind = CPT_K_NEV, .op = CPT_NEV_COLL_STOP, .t_ns = t0, .a = 10 });
    end(&m);
    tl = read_img(&m, 0);
    assert_int_equal(diag_of(tl, DIAG_BAD_EVENT), 1);
    assert_int_equal(diag_of(tl, DIAG_UNMATCHED_FLOW), 1);
    tl_free(tl);
    free(m.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sniff_and_format),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_kernel_channels),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_span_overflow),
        cmocka_unit_test(test_cpu_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
