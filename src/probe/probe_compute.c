/* probe_compute.c - CPU peak FLOP/s with FMA microkernels, one core and all.
 *
 * The kernel keeps CP_FMA_CHAINS independent accumulator registers, each
 * updated acc = acc * a + b with a fused multiply-add, so the loop is bound
 * by FMA throughput, not latency (12 chains cover a 4-cycle latency on two
 * FMA ports with room to spare) and touches no memory. The ISA is picked at
 * run time: AVX-512F, else AVX2+FMA (x86-64, through target attributes and
 * __builtin_cpu_supports so the binary runs on any x86-64), NEON on arm64,
 * else a scalar fma() loop. FP64 and FP32 are measured.
 *
 * Theoretical peak = cores x GHz x FLOP/cycle/core, where FLOP/cycle/core =
 * FMA units x lanes x 2 (an FMA is two FLOPs). The clock is the larger of
 * the nominal one (cpufreq maximum, else /proc/cpuinfo "cpu MHz", which a VM
 * reports without turbo) and the one measured with dependent additions
 * (probe_cpu_ghz_measured); FMA units per core are assumed 2 for
 * AVX-512/AVX2/NEON (true of current server cores; a 1-unit part shows up
 * as ~50 % efficiency, which is the honest reading).
 *
 * The GPU GEMM rows (bf16, fp16, tf32, fp8 per device) come from src/gpu
 * (cuBLASLt through dlopen) when a GPU is present; a precision the device
 * cannot run (fp8 before sm_89) or that fails keeps its row with a null value
 * and the reason in `method`, so the JSON says why rather than omitting it.
 * Their peak is the dense tensor rate of the hardware catalog row (src/plan)
 * that the device name resolves to, named in `method`; null when the name
 * resolves to no row (cuBLASLt does not say what the silicon could do).
 */
#include "probe.h"
#include "probe_cpu.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../gpu/gpu.h"
#include "../model/catalog.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#define CP_FMA_CHAINS 12

/* Each kernel returns a value derived from every accumulator so the
 * compiler cannot drop the loop; it runs `iters` iterations. */
typedef double (*fma_kernel)(uint64_t iters);

#define SCALAR_KERNEL(name, T, FMA)                                   \
    static double name(uint64_t iters)                                \
    {                                                                 \
        T acc[CP_FMA_CHAINS];                                         \
        for (int k = 0; k < CP_FMA_CHAINS; k++)                       \
            acc[k] = (T)(1.0 + k * 1e-3);                             \
        const T a = (T)0.999999, b = (T)1e-6;                         \
        for (uint64_t i = 0; i < iters; i++)                          \
            for (int k = 0; k < CP_FMA_CHAINS; k++)                   \
                acc[k] = FMA(acc[k], a, b);                           \
        double s = 0;                                                 \
        for (int k = 0; k < CP_FMA_CHAINS; k++)                       \
            s += (double)acc[k];                                      \
        return s;                                                     \
    }
SCALAR_KERNEL(k_scalar_f64, double, fma)
SCALAR_KERNEL(k_scalar_f32, float, fmaf)

#if defined(__x86_64__)
/* VT vector type, SET1/FMA/ST intrinsics, L lanes, T element */
#define X86_KERNEL(name, TGT, VT, T, L, SET1, FMA, ST)                                \
    __attribute__((target(TGT))) static double name(uint64_t iters)                   \
    {                                                                                     \
        VT acc[CP_FMA_CHAINS];                                                            \
        for (int k = 0; k < CP_FMA_CHAINS; k++)                                           \
            acc[k] = SET1((T)(1.0 + k * 1e-3));                                           \
        const VT a = SET1((T)0.999999), b = SET1((T)1e-6);                                \
        for (uint64_t i = 0; i < iters; i++) {                                            \
            acc[0] = FMA(acc[0], a, b); acc[1] = FMA(acc[1], a, b);                       \
            acc[2] = FMA(acc[2], a, b); acc[3] = FMA(acc[3], a, b);                       \
            acc[4] = FMA(acc[4], a, b); acc[5] = FMA(acc[5], a, b);                       \
            acc[6] = FMA(acc[6], a, b); acc[7] = FMA(acc[7], a, b);                       \
            acc[8] = FMA(acc[8], a, b); acc[9] = FMA(acc[9], a, b);                       \
            acc[10] = FMA(acc[10], a, b); acc[11] = FMA(acc[11], a, b);                   \
        }                                                                                 \
        T out[L];                                                                         \
        double s = 0;                                                                     \
        for (int k = 0; k < CP_FMA_CHAINS; k++) {                                         \
            ST(out, acc[k]);                                                              \
            for (int j = 0; j < L; j++)                                                   \
                s += (double)out[j];                                                      \
        }                                                                                 \
        return s;                                                                         \
    }
X86_KERNEL(k_avx512_f64, "avx512f", __m512d, double, 8, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_storeu_pd)
X86_KERNEL(k_avx512_f32, "avx512f", __m512, float, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps)
X86_KERNEL(k_avx2_f64, "avx2,fma", __m256d, double, 4, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_storeu_pd)
X86_KERNEL(k_avx2_f32, "avx2,fma", __m256, float, 8, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps)
#elif defined(__aarch64__)
#define NEON_KERNEL(name, VT, T, L, DUP, FMA, ST)                                         \
    static double name(uint64_t iters)                                                    \
    {                                                                                     \
        VT acc[CP_FMA_CHAINS];                                                            \
        for (int k = 0; k < CP_FMA_CHAINS; k++)                                           \
            acc[k] = DUP((T)(1.0 + k * 1e-3));                                            \
        const VT a = DUP((T)0.999999), b = DUP((T)1e-6);                                  \
        for (uint64_t i = 0; i < iters; i++)                                              \
            for (int k = 0; k < CP_FMA_CHAINS; k++)                                       \
                acc[k] = FMA(b, acc[k], a);                                               \
        T out[L];                                                                         \
        double s = 0;                                                                     \
        for (int k = 0; k < CP_FMA_CHAINS; k++) {                                         \
            ST(out, acc[k]);                                                              \
            for (int j = 0; j < L; j++)                                                   \
                s += (double)out[j];                                                      \
        }                                                                                 \
        return s;                                                                         \
    }
NEON_KERNEL(k_neon_f64, float64x2_t, double, 2, vdupq_n_f64, vfmaq_f64, vst1q_f64)
NEON_KERNEL(k_neon_f32, float32x4_t, float, 4, vdupq_n_f32, vfmaq_f32, vst1q_f32)
#endif

typedef struct isa_kernels {
    const char *isa;
    int lanes_f64;          /* FP64 lanes per vector */
    int fma_units;          /* assumed FMA pipes per core (see the file comment) */
    fma_kernel f64, f32;
} isa_kernels;

static isa_kernels pick_isa(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return (isa_kernels){ "avx512", 8, 2, k_avx512_f64, k_avx512_f32 };
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return (isa_kernels){ "avx2", 4, 2, k_avx2_f64, k_avx2_f32 };
#elif defined(__aarch64__)
    return (isa_kernels){ "neon", 2, 2, k_neon_f64, k_neon_f32 };
#endif
    return (isa_kernels){ "scalar", 1, 2, k_scalar_f64, k_scalar_f32 };
}

double probe_cpu_peak_gflops(int cores, double ghz, int fma_units, int lanes)
{
    if (cores <= 0 || !(ghz > 0) || fma_units <= 0 || lanes <= 0)
        return NAN;
    return (double)cores * ghz * (double)fma_units * (double)lanes * 2.0;
}

double probe_cpu_ghz(const cp_fsroot *fs)
{
    /* cpufreq's maximum first (kHz), then the nominal clock in cpuinfo */
    int64_t khz;
    if (cp_fsroot_read_i64(fs, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", &khz) && khz > 0)
        return (double)khz / 1e6;
    FILE *f = cp_fsroot_fopen(fs, "/proc/cpuinfo");
    if (!f)
        return NAN;
    char line[512];
    double mhz = NAN;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "cpu MHz", 7)) {
            const char *c = strchr(line, ':');
            if (c)
                mhz = strtod(c + 1, NULL);
            break;
        }
    fclose(f);
    return mhz > 0 ? mhz / 1e3 : NAN;
}

/* The clock the core really runs at, from a chain of dependent integer
 * additions: each add waits one cycle for the previous one on every x86-64
 * and arm64 core we know, so adds per second is the clock. cpufreq and
 * cpuinfo give the nominal clock, which turbo exceeds (and virtual machines
 * often report only the nominal one), so a peak from them alone can sit
 * below what the FMA kernel measures. */
double probe_cpu_ghz_measured(void)
{
    /* many short repetitions, the best kept: on a shared machine a long one
     * is preempted (it read 0.58 GHz on a loaded 2.6 GHz VM, and a peak from
     * it made real FMA rounds look impossible); 10 ms slices mostly are not */
    const uint64_t iters = 8u * 1000 * 1000; /* 4 dependent adds each: ~0.01 s at 3 GHz */
    double best = NAN;
    for (int rep = 0; rep < 15; rep++) {
        uint64_t x = 0;
        int64_t t0 = cp_now_ns();
        for (uint64_t i = 0; i < iters; i++) {
            x += 1;
            __asm__ volatile("" : "+r"(x));
            x += 1;
            __asm__ volatile("" : "+r"(x));
            x += 1;
            __asm__ volatile("" : "+r"(x));
            x += 1;
            __asm__ volatile("" : "+r"(x));
        }
        int64_t dt = cp_now_ns() - t0;
        double ghz = dt > 0 ? (double)(4 * iters) / (double)dt : NAN;
        if (isnan(best) || ghz > best)
            best = ghz;
    }
    return best;
}

typedef struct fma_job {
    fma_kernel fn;
    uint64_t iters;
    double sink;
    atomic_int *go;
} fma_job;

static void *fma_thread(void *p)
{
    fma_job *j = p;
    while (!atomic_load_explicit(j->go, memory_order_acquire))
        ; /* spin: every thread starts within a few ns of the others */
    j->sink = j->fn(j->iters);
    return NULL;
}

/* Run fn on nthreads threads with `iters` each; returns wall seconds, or
 * NaN when not every thread could be started (the figure would be wrong). */
static double run_threads(fma_kernel fn, uint64_t iters, int nthreads)
{
    pthread_t *t = cp_xcalloc((size_t)nthreads, sizeof *t);
    fma_job *jobs = cp_xcalloc((size_t)nthreads, sizeof *jobs);
    atomic_int go = 0;
    int started = 0;
    for (int i = 0; i < nthreads; i++) {
        jobs[i] = (fma_job){ fn, iters, 0, &go };
        if (pthread_create(&t[i], NULL, fma_thread, &jobs[i]) != 0)
            break;
        started++;
    }
    int64_t t0 = cp_now_ns();
    atomic_store_explicit(&go, 1, memory_order_release);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    double s = (double)(cp_now_ns() - t0) / 1e9;
    free(t);
    free(jobs);
    return started == nthreads ? s : NAN;
}

/* Calibrate iterations so one run lasts about `target_s`, then time
 * `rounds` runs into gflops[] (GFLOP/s each). Returns 0, or -1 when a run
 * could not start every thread. */
static int measure(fma_kernel fn, int lanes, int nthreads, double target_s, int rounds, double *gflops)
{
    uint64_t iters = 1u << 16;
    double s;
    for (;;) {
        s = run_threads(fn, iters, 1);
        if (!(s < 0.02) || iters > (1ull << 40))
            break;
        iters *= 4;
    }
    if (!(s > 0))
        return -1;
    iters = (uint64_t)((double)iters * target_s / s) + 1;
    for (int r = 0; r < rounds; r++) {
        s = run_threads(fn, iters, nthreads);
        double flops = (double)iters * CP_FMA_CHAINS * lanes * 2.0 * nthreads;
        if (!(s > 0))
            return -1;
        gflops[r] = flops / s / 1e9;
    }
    return 0;
}

bool probe_compute_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return true; /* every machine has a CPU */
}

/* One GPU GEMM row: measured TFLOP/s, the catalog's dense peak for the
 * device's name and precision (NAN when unknown), and how it was measured. */
static void emit_gpu_gemm(probe_ctx *ctx, gpu_rt *g, int d, gpu_gemm_prec p)
{
    char metric[64], method[640], why[256], dev_name[128], peak_src[192] = "";
    uint64_t n = ctx->opts.quick ? 4096 : 8192;
    int greps = probe_rounds(ctx, 3, 5);
    double v[PROBE_MAX_ROUNDS];
    double tf = gpu_gemm_tflops_rounds(g, d, p, n, greps, v, why, sizeof why);
    snprintf(metric, sizeof metric, "gpu%d_gemm_%s_tflops", d, gpu_gemm_prec_name(p));
    gpu_name(g, d, dev_name, sizeof dev_name);
    const hw_gpu *spec = hw_gpu_find(dev_name);
    double peak = spec ? hw_gpu_peak_tflops(spec, gpu_gemm_prec_name(p)) : 0;
    if (peak > 0)
        snprintf(peak_src, sizeof peak_src, "; peak = dense %s of catalog row %s", gpu_gemm_prec_name(p), spec->name);
    else
        peak = NAN;
    /* a precision that cannot run still gets its row (value null) saying why */
    if (isnan(tf))
        snprintf(method, sizeof method, "not measured: %s", why);
    else if (p == GPU_GEMM_FP8)
        snprintf(method, sizeof method,
                 "cublasLtMatmul %llu^3, fp8 e4m3 inputs (TN, unit scales), bf16 output, fp32 accumulate, "
                 "median of %d batches of 10, 2 n^3 FLOPs per GEMM%s",
                 (unsigned long long)n, greps, peak_src);
    else
        snprintf(method, sizeof method,
                 "cublasLtMatmul %llu^3, fp32 accumulate, median of %d batches of 10, 2 n^3 FLOPs per GEMM%s",
                 (unsigned long long)n, greps, peak_src);
    if (isnan(tf) && strncmp(why, "needs ", 6) != 0)
        cp_log_warn("gpu %d %s GEMM not measured: %s", d, gpu_gemm_prec_name(p), why);
    probe_emit_rounds(ctx, metric, v, isnan(tf) ? 0 : (size_t)greps, PROBE_STAT_MEDIAN, "TFLOP/s", peak, method);
}

int probe_compute_run(probe_ctx *ctx, cp_error *err)
{
    (void)err;
    isa_kernels k = pick_isa();
    int cores = ctx->opts.threads > 0 ? ctx->opts.threads : cp_cpu_count();
    double nominal_ghz = probe_cpu_ghz(&ctx->fs), measured_ghz = probe_cpu_ghz_measured();
    double target = ctx->opts.seconds > 0 ? ctx->opts.seconds / 4 : ctx->opts.quick ? 0.1 : 0.5;
    int rounds = probe_rounds(ctx, 3, 5);
    struct {
        const char *prec;
        fma_kernel fn;
        int lanes;
        int n1, nall; /* rounds measured (0: a thread failed to start) */
        double one[PROBE_MAX_ROUNDS], all[PROBE_MAX_ROUNDS];
    } precs[] = { { "fp64", k.f64, k.lanes_f64, 0, 0, { 0 }, { 0 } },
                  { "fp32", k.f32, k.lanes_f64 * 2, 0, 0, { 0 }, { 0 } } };
    for (size_t p = 0; p < CP_ARRAY_LEN(precs); p++) {
        precs[p].n1 = measure(precs[p].fn, precs[p].lanes, 1, target, rounds, precs[p].one) == 0 ? rounds : 0;
        precs[p].nall = measure(precs[p].fn, precs[p].lanes, cores, target, rounds, precs[p].all) == 0 ? rounds : 0;
    }
    /* the clock again after the kernels (turbo may have settled, a neighbour
     * may have left); the peak uses the fastest of the three readings: a peak
     * below the measured rate would report efficiencies above 100 % and
     * reject real rounds as impossible */
    double after_ghz = probe_cpu_ghz_measured();
    if (!(measured_ghz >= after_ghz))
        measured_ghz = after_ghz;
    double ghz = !(nominal_ghz >= measured_ghz) ? measured_ghz : nominal_ghz;
    for (size_t p = 0; p < CP_ARRAY_LEN(precs); p++) {
        char metric[64], method[256];
        snprintf(metric, sizeof metric, "cpu_%s_gflops_1core", precs[p].prec);
        snprintf(method, sizeof method,
                 "%s FMA kernel, %d independent chains, 1 thread, median of %d rounds; peak = 1 core x %.2f GHz x %d "
                 "FMA x %d lanes x 2",
                 k.isa, CP_FMA_CHAINS, rounds, ghz, k.fma_units, precs[p].lanes);
        probe_emit_rounds(ctx, metric, precs[p].one, (size_t)precs[p].n1, PROBE_STAT_MEDIAN, "GFLOP/s",
                          probe_cpu_peak_gflops(1, ghz, k.fma_units, precs[p].lanes), method);
        snprintf(metric, sizeof metric, "cpu_%s_gflops_all", precs[p].prec);
        snprintf(method, sizeof method,
                 "%s FMA kernel, %d threads, median of %d rounds; peak = %d cores x %.2f GHz x %d FMA x %d lanes x 2",
                 k.isa, cores, rounds, cores, ghz, k.fma_units, precs[p].lanes);
        probe_emit_rounds(ctx, metric, precs[p].all, (size_t)precs[p].nall, PROBE_STAT_MEDIAN, "GFLOP/s",
                          probe_cpu_peak_gflops(cores, ghz, k.fma_units, precs[p].lanes), method);
    }
    gpu_rt *g = probe_gpu(ctx);
    if (g && !gpu_gemm_available(g))
        cp_log_warn("GPU GEMM not measured: cuBLASLt %s", g->cublaslt_why);
    for (int d = 0; g && gpu_gemm_available(g) && d < g->n_devices; d++)
        for (int p = 0; p < GPU_GEMM_N; p++)
            emit_gpu_gemm(ctx, g, d, (gpu_gemm_prec)p);
    if (ctx->topology) {
        rep_node *cpu = rep_obj(ctx->rep, ctx->topology, "cpu_isa", NULL);
        rep_str(ctx->rep, cpu, "isa", "vector ISA", k.isa);
        rep_num(ctx->rep, cpu, "clock_ghz", "clock used for the peak", ghz, "GHz");
        rep_num(ctx->rep, cpu, "clock_nominal_ghz", "nominal clock (cpufreq/cpuinfo)", nominal_ghz, "GHz");
        rep_num(ctx->rep, cpu, "clock_measured_ghz", "measured clock (dependent adds)", measured_ghz, "GHz");
        rep_int(ctx->rep, cpu, "fma_units_assumed", "FMA units per core (assumed)", k.fma_units, NULL);
    }
    return 0;
}
