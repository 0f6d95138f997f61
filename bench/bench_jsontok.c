/* bench_jsontok.c - throughput of the JSON tokenizer on a Kineto-like trace,
 * against libyajl and jsmn when they are installed (HAVE_YAJL / HAVE_JSMN).
 *
 *   bench_jsontok gen PATH MB     write a generated Kineto-like trace of ~MB MB
 *   bench_jsontok run PATH [REPS [ONLY]]  time every parser (or those whose
 *                                 name contains ONLY): best of REPS, 1 core
 *
 * Built and driven by bench/bench_jsontok.sh. Results are recorded in
 * docs/PERFORMANCE.md ("JSON tokenizer"). The generated file imitates what
 * PyTorch 2.x writes (layout, key order, spacing, event mix of a training
 * step: cpu ops, runtime launches, kernels with their args, flow events,
 * memcpys), so the numbers transfer to real traces.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/jsontok.h"

#ifdef HAVE_YAJL
#include <yajl/yajl_parse.h>
#endif
#ifdef HAVE_JSMN
#define JSMN_STATIC
#define JSMN_PARENT_LINKS /* without it jsmn is quadratic on a long array of objects */
#include <jsmn.h>
#endif

#define READ_CHUNK ((size_t)1 << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* the machine is shared: CPU time, not wall */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- generator ------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const char *const cpu_ops[] = {
    "aten::linear", "aten::matmul", "aten::addmm", "aten::empty", "aten::add_", "aten::mul",
    "aten::layer_norm", "aten::native_layer_norm", "aten::gelu", "aten::softmax", "aten::copy_",
    "aten::to", "aten::_to_copy", "aten::view", "aten::transpose",
    "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0",
    "aten::scaled_dot_product_attention", "Optimizer.step#AdamW.step", "record_param_comms",
};
static const char *const kernels[] = {
    "ampere_sgemm_128x64_tn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, "
    "float const*, float const*, float const*, float*, float*, float*)",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, "
    "Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, true, false, false, true, true, "
    "false>(Flash_fwd_params)",
};

static int gen(const char *path, double mb)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_jsontok: %s: cannot create: %s\n", path, strerror(errno));
        return 1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (int d = 0; d < 8; d++)
        fprintf(f,
                "    {\n      \"id\": %d, \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": "
                "85049802752,\n      \"computeMajor\": 8, \"computeMinor\": 0,\n      \"numSms\": 108\n"
                "    }%s\n",
                d, d < 7 ? "," : "");
    fprintf(f, "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 8},\n"
               "  \"traceEvents\": [\n");
    uint64_t target = (uint64_t)(mb * 1e6);
    uint64_t ts_ns = 1712195495505582988ull, ext = 1, corr = 100000;
    long long written = 0;
    int first = 1;
    while ((uint64_t)written < target) {
        unsigned kind = (unsigned)(rnd() % 100);
        int n = 0;
        const char *sep = first ? "" : ",\n";
        first = 0;
        uint64_t dur_ns = 1000 + rnd() % 90000;
        ts_ns += 500 + rnd() % 5000;
        if (kind < 35) { /* cpu op */
            const char *name = cpu_ops[rnd() % (sizeof cpu_ops / sizeof cpu_ops[0])];
            n = fprintf(f,
                        "%s  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1102, "
                        "\"tid\": 1262,\n    \"ts\": %" PRIu64 ".%03u, \"dur\": %" PRIu64 ".%03u,\n"
                        "    \"args\": {\n      \"External id\": %" PRIu64
                        ",\"Sequence number\": %u, \"Fwd thread id\": 1, \"Record function id\": 0, "
                        "\"Input Dims\": [[32, 1024, 4096], [4096, 4096], []], \"Input type\": "
                        "[\"c10::Half\", \"c10::Half\", \"\"], \"Ev Idx\": %" PRIu64 "\n    }\n  }",
                        sep, name, ts_ns / 1000, (unsigned)(ts_ns % 1000), dur_ns / 1000,
                        (unsigned)(dur_ns % 1000), ext, (unsigned)(rnd() % 20000), ext);
            ext++;
        } else if (kind < 60) { /* runtime launch + flow start */
            corr++;
            n = fprintf(f,
                        "%s  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                        "\"pid\": 1102, \"tid\": 1262,\n    \"ts\": %" PRIu64 ".%03u, \"dur\": %" PRIu64
                        ".%03u,\n    \"args\": {\n      \"External id\": %" PRIu64
                        ",      \"cbid\": 211, \"correlation\": %" PRIu64 "\n    }\n  },\n"
                        "  {\n    \"ph\": \"s\", \"id\": %" PRIu64 ", \"pid\": 1102, \"tid\": 1262, \"ts\": "
                        "%" PRIu64 ".%03u,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }",
                        sep, ts_ns / 1000, (unsigned)(ts_ns % 1000), dur_ns / 1000 / 10,
                        (unsigned)(dur_ns % 1000), ext, corr, corr, ts_ns / 1000,
                        (unsigned)(ts_ns % 1000));
        } else if (kind < 92) { /* kernel + flow end */
            const char *name = kernels[rnd() % (sizeof kernels / sizeof kernels[0])];
            n = fprintf(f,
                        "%s  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, "
                        "\"tid\": 7,\n    \"ts\": %" PRIu64 ".%03u, \"dur\": %" PRIu64 ".%03u,\n"
                        "    \"args\": {\n      \"External id\": %" PRIu64
                        ",      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": 7, "
                        "\"correlation\": %" PRIu64 ",      \"registers per thread\": %u,      "
                        "\"shared memory\": 0,      \"blocks per SM\": 5.300000,      \"warps per SM\": "
                        "21.200001,      \"grid\": [4, 106, 1],      \"block\": [128, 1, 1],      "
                        "\"est. achieved occupancy %%\": 33\n    }\n  },\n"
                        "  {\n    \"ph\": \"f\", \"id\": %" PRIu64 ", \"pid\": 0, \"tid\": 7, \"ts\": %" PRIu64
                        ".%03u,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
                        sep, name, ts_ns / 1000, (unsigned)(ts_ns % 1000), dur_ns / 1000,
                        (unsigned)(dur_ns % 1000), ext, corr, (unsigned)(16 + rnd() % 200), corr,
                        ts_ns / 1000, (unsigned)(ts_ns % 1000));
        } else { /* memcpy with an escaped name now and then */
            n = fprintf(f,
                        "%s  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD "
                        "(Pageable -> Device)%s\", \"pid\": 0, \"tid\": 7,\n    \"ts\": %" PRIu64
                        ".%03u, \"dur\": %" PRIu64 ".%03u,\n    \"args\": {\n      \"External id\": %" PRIu64
                        ",      \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": %" PRIu64
                        ",      \"bytes\": %u, \"memory bandwidth (GB/s)\": 11.42\n    }\n  }",
                        sep, kind == 99 ? " \\\"copy\\\"\\t\\u00e9" : "", ts_ns / 1000,
                        (unsigned)(ts_ns % 1000), dur_ns / 1000, (unsigned)(dur_ns % 1000), ext, corr,
                        (unsigned)(rnd() % 100000000));
        }
        if (n < 0)
            break;
        written += n;
    }
    fprintf(f, "\n  ],\n  \"traceName\": \"%s\"\n}\n", path);
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_jsontok: %s: write failed: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* ---- parsers under test ------------------------------------------------------ */

typedef struct work {
    uint64_t tokens;
    uint64_t bytes; /* sum of string/number lengths: keeps the work observable */
    int64_t ts_sum;
} work;

typedef struct fd_src {
    int fd;
} fd_src;

static long fd_read(void *ctx, char *buf, size_t cap, cp_error *err)
{
    fd_src *s = ctx;
    for (;;) {
        ssize_t r = read(s->fd, buf, cap);
        if (r >= 0)
            return (long)r;
        if (errno != EINTR)
            return cp_error_sys(err, CP_ERR_IO, NULL, "read failed");
    }
}

static int jt_all(cp_jt *jt, work *w)
{
    cp_jt_tok t;
    cp_error err;
    int r;
    while ((r = cp_jt_next(jt, &t, &err)) > 0 && r != CP_JT_EOF) {
        w->tokens++;
        w->bytes += t.n;
    }
    if (r < 0)
        fprintf(stderr, "bench_jsontok: %s:%lld: %s\n", err.file, err.offset, err.msg);
    cp_jt_close(jt);
    return r < 0 ? -1 : 0;
}

/* What the Kineto reader does: walk the events, parse ts/dur exactly, keep
 * the name, skip args and every other unneeded value. */
static int jt_reader(cp_jt *jt, work *w)
{
    cp_jt_tok t;
    cp_error err;
    int r = cp_jt_next(jt, &t, &err);
    while (r > 0 && r != CP_JT_EOF) {
        if (r == CP_JT_KEY && t.depth == 1 && cp_jt_tok_eq(&t, "traceEvents")) {
            r = cp_jt_next(jt, &t, &err); /* [ */
            while ((r = cp_jt_next(jt, &t, &err)) == CP_JT_OBJ_BEGIN) {
                w->tokens++;
                while ((r = cp_jt_next(jt, &t, &err)) == CP_JT_KEY) {
                    if (cp_jt_tok_eq(&t, "ts") || cp_jt_tok_eq(&t, "dur")) {
                        int64_t ns;
                        if ((r = cp_jt_next(jt, &t, &err)) < 0)
                            break;
                        if (cp_jt_parse_ns(t.s, t.n, &ns) == 0)
                            w->ts_sum += ns;
                    } else if (cp_jt_tok_eq(&t, "name") || cp_jt_tok_eq(&t, "cat") ||
                               cp_jt_tok_eq(&t, "ph")) {
                        if ((r = cp_jt_next(jt, &t, &err)) < 0)
                            break;
                        w->bytes += t.n;
                    } else if ((r = cp_jt_skip(jt, &err)) < 0) {
                        break;
                    }
                }
                if (r != CP_JT_OBJ_END)
                    break;
            }
            if (r < 0)
                break;
        }
        r = cp_jt_next(jt, &t, &err);
    }
    if (r < 0)
        fprintf(stderr, "bench_jsontok: %s:%lld: %s\n", err.file, err.offset, err.msg);
    cp_jt_close(jt);
    return r < 0 ? -1 : 0;
}

#ifdef HAVE_YAJL
static int y_null(void *c) { ((work *)c)->tokens++; return 1; }
static int y_bool(void *c, int b) { ((work *)c)->tokens += 1 + (b & 0); return 1; }
static int y_num(void *c, const char *s, size_t n) { work *w = c; w->tokens++; w->bytes += n + (s[0] & 0); return 1; }
static int y_str(void *c, const unsigned char *s, size_t n) { work *w = c; w->tokens++; w->bytes += n + (s[0] & 0); return 1; }
static int y_mark(void *c) { ((work *)c)->tokens++; return 1; }
static const yajl_callbacks ycb = {y_null, y_bool, NULL, NULL, y_num, y_str,
                                   y_mark, y_str, y_mark, y_mark, y_mark};

static int yajl_run(int fd, work *w, int validate_utf8)
{
    yajl_handle h = yajl_alloc(&ycb, NULL, w);
    if (!validate_utf8)
        yajl_config(h, yajl_dont_validate_strings, 1);
    unsigned char *buf = malloc(READ_CHUNK);
    ssize_t r;
    yajl_status st = yajl_status_ok;
    while (st == yajl_status_ok && (r = read(fd, buf, READ_CHUNK)) > 0)
        st = yajl_parse(h, buf, (size_t)r);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    if (st != yajl_status_ok) {
        unsigned char *e = yajl_get_error(h, 0, NULL, 0);
        fprintf(stderr, "bench_jsontok: yajl: %s\n", (char *)e);
        yajl_free_error(h, e);
    }
    free(buf);
    yajl_free(h);
    return st == yajl_status_ok ? 0 : -1;
}
#endif

static char *slurp(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return NULL;
    char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    *n = got;
    return b;
}

typedef enum { P_JT_MEM, P_JT_FD, P_JT_READER, P_JT_MMAP, P_YAJL, P_YAJL_UTF8, P_JSMN, P_COUNT } parser;
static const char *const pname[] = {
    "chainprof cp_jt, all tokens, in memory",
    "chainprof cp_jt, all tokens, streamed read(2)",
    "chainprof cp_jt, reader walk (ts/dur exact, skip args)",
    "chainprof cp_jt, reader walk, mmap + zero copy",
    "libyajl 2.1, all tokens, streamed, no utf-8 check",
    "libyajl 2.1, all tokens, streamed, utf-8 check",
    "jsmn 1.1 (parent links), all tokens, in memory, token array",
};

static int run_one(parser p, const char *path, const char *mem, size_t n, work *w)
{
    memset(w, 0, sizeof *w);
    cp_jt_opts o = {.name = path};
    int fd = -1, rc = -1;
    if (p == P_JT_FD || p == P_JT_READER || p == P_JT_MMAP || p == P_YAJL || p == P_YAJL_UTF8) {
        fd = open(path, O_RDONLY);
        if (fd < 0)
            return -1;
    }
    fd_src src = {fd};
    switch (p) {
    case P_JT_MEM: rc = jt_all(cp_jt_open_mem(mem, n, &o), w); break;
    case P_JT_FD: rc = jt_all(cp_jt_open(fd_read, &src, &o), w); break;
    case P_JT_READER: rc = jt_reader(cp_jt_open(fd_read, &src, &o), w); break;
    case P_JT_MMAP: {
        void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED)
            break;
        madvise(m, n, MADV_SEQUENTIAL);
        rc = jt_reader(cp_jt_open_mem(m, n, &o), w);
        munmap(m, n);
        break;
    }
#ifdef HAVE_YAJL
    case P_YAJL: rc = yajl_run(fd, w, 0); break;
    case P_YAJL_UTF8: rc = yajl_run(fd, w, 1); break;
#endif
#ifdef HAVE_JSMN
    case P_JSMN: {
        /* jsmn needs the whole document and a token array sized beforehand;
         * counting and allocating (and faulting in) the array happen once,
         * untimed: jsmn's best case. */
        static int cnt = -1;
        static jsmntok_t *toks;
        jsmn_parser jp;
        if (cnt < 0) {
            jsmn_init(&jp);
            cnt = jsmn_parse(&jp, mem, n, NULL, 0);
            if (cnt < 0)
                break;
            toks = calloc((size_t)cnt, sizeof *toks);
            return toks ? 1 : -1; /* untimed: the caller runs it again */
        }
        jsmn_init(&jp);
        int got = jsmn_parse(&jp, mem, n, toks, (unsigned)cnt);
        if (got > 0) {
            for (int i = 0; i < got; i++)
                w->bytes += (uint64_t)(toks[i].end - toks[i].start);
            w->tokens = (uint64_t)got;
            rc = 0;
        }
        break;
    }
#endif
    default: break;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

static int run(const char *path, int reps, const char *only)
{
    size_t n = 0;
    char *mem = slurp(path, &n);
    if (!mem) {
        fprintf(stderr, "bench_jsontok: %s: cannot read\n", path);
        return 1;
    }
    printf("input: %s, %.1f MB\n", path, (double)n / 1e6);
    printf("%-58s %10s %12s\n", "parser", "MB/s", "tokens");
    for (int p = 0; p < P_COUNT; p++) {
        if (only && !strstr(pname[p], only))
            continue;
#ifndef HAVE_YAJL
        if (p == P_YAJL || p == P_YAJL_UTF8) {
            printf("%-58s %10s %12s\n", pname[p], "skipped", "(no libyajl-dev)");
            continue;
        }
#endif
#ifndef HAVE_JSMN
        if (p == P_JSMN) {
            printf("%-58s %10s %12s\n", pname[p], "skipped", "(no libjsmn-dev)");
            continue;
        }
#endif
        double best = 1e30;
        work w;
        if (p == P_JSMN && run_one((parser)p, path, mem, n, &w) < 0) /* untimed count */
            best = -1;
        for (int r = 0; r < reps && best > 0; r++) {
            double t0 = now_s();
            if (run_one((parser)p, path, mem, n, &w) != 0) {
                best = -1;
                break;
            }
            double dt = now_s() - t0;
            if (dt < best)
                best = dt;
        }
        if (best < 0)
            printf("%-58s %10s\n", pname[p], "failed");
        else
            printf("%-58s %10.0f %12" PRIu64 "\n", pname[p], (double)n / 1e6 / best, w.tokens);
        fflush(stdout);
    }
    free(mem);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], atof(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "run") == 0)
        return run(argv[2], argc >= 4 ? atoi(argv[3]) : 3, argc >= 5 ? argv[4] : NULL);
    fprintf(stderr, "usage: bench_jsontok gen PATH MB | run PATH [REPS [ONLY]]\n");
    return 2;
}
