/* probe_memory.c - host memory bandwidth, STREAM-style.
 *
 * Four kernels over three arrays of doubles (copy c=a, scale b=s*c,
 * add c=a+b, triad a=b+s*c), run on a team of pinned threads (probe_team.c),
 * each thread owning one contiguous chunk that it also initialised, so with
 * first-touch placement every chunk lives on its thread's NUMA node. Each
 * array is at least 4 x the last-level cache (all instances summed), so the
 * figure is DRAM bandwidth, not cache. Bandwidth follows STREAM exactly:
 * bytes = (arrays read + arrays written) x n x 8, no write-allocate traffic,
 * best (minimum-time) repetition after the first, in GB/s = 1e9 B/s.
 *
 * Peak: the theoretical DRAM bandwidth (channels x MT/s x 8 B) is not
 * visible to an unprivileged process (DMI needs root and lies in VMs), so
 * peak is null unless CHAINPROF_MEM_PEAK_GBPS gives it; the efficiency then
 * follows. GPU device-memory copy bandwidth comes from src/gpu when present.
 */
#include "probe.h"
#include "probe_mem.h"
#include "../base/util.h"
#include "../gpu/gpu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernel_names[PROBE_N_KERNELS] = { "copy", "scale", "add", "triad" };

const char *probe_stream_name(probe_stream_kernel k)
{
    return (unsigned)k < PROBE_N_KERNELS ? kernel_names[k] : "?";
}

uint64_t probe_stream_bytes(probe_stream_kernel k, uint64_t n)
{
    return (k == PROBE_ADD || k == PROBE_TRIAD ? 3u : 2u) * n * sizeof(double);
}

uint64_t probe_stream_array_bytes(uint64_t explicit_bytes, uint64_t llc_bytes, int quick)
{
    uint64_t b = explicit_bytes;
    if (!b) {
        uint64_t floor = (quick ? 64ull : 256ull) << 20, cap = (quick ? 128ull : 1024ull) << 20;
        b = 4 * llc_bytes > floor ? 4 * llc_bytes : floor;
        if (b > cap) /* VMs report absurd L3 sizes; past 1 GiB the figure no longer moves */
            b = cap;
    }
    return b / 64 * 64;
}

void probe_chunk(uint64_t n, int tid, int nthreads, uint64_t *lo, uint64_t *hi)
{
    uint64_t per = n / (uint64_t)nthreads, rem = n % (uint64_t)nthreads, t = (uint64_t)tid;
    *lo = t * per + (t < rem ? t : rem);
    *hi = *lo + per + (t < rem ? 1 : 0);
}

typedef struct stream_arrays {
    double *a, *b, *c;
    uint64_t n;
} stream_arrays;

enum { PHASE_INIT = PROBE_N_KERNELS };
static const double scalar = 3.0;

static void stream_phase(void *arg, int tid, int nthreads, int phase)
{
    stream_arrays *s = arg;
    uint64_t lo, hi;
    probe_chunk(s->n, tid, nthreads, &lo, &hi);
    double *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
    switch (phase) {
    case PHASE_INIT: /* first touch by the owning thread places the pages */
        for (uint64_t i = lo; i < hi; i++) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.0;
        }
        break;
    case PROBE_COPY:
        for (uint64_t i = lo; i < hi; i++)
            c[i] = a[i];
        break;
    case PROBE_SCALE:
        for (uint64_t i = lo; i < hi; i++)
            b[i] = scalar * c[i];
        break;
    case PROBE_ADD:
        for (uint64_t i = lo; i < hi; i++)
            c[i] = a[i] + b[i];
        break;
    case PROBE_TRIAD:
        for (uint64_t i = lo; i < hi; i++)
            a[i] = b[i] + scalar * c[i];
        break;
    default:
        break;
    }
}

/* STREAM's own check: replay the kernels on scalars and compare one element.
 * Returns the relative error of a. */
static double check_values(const stream_arrays *s, int reps)
{
    double a = 1.0, b = 2.0, c = 0.0;
    for (int r = 0; r < reps; r++) {
        c = a;
        b = scalar * c;
        c = a + b;
        a = b + scalar * c;
    }
    double worst = 0;
    for (uint64_t i = 0; i < s->n; i += s->n / 17 + 1) {
        double e = fabs(s->a[i] - a) / a;
        if (e > worst)
            worst = e;
    }
    return worst;
}

bool probe_memory_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return true;
}

int probe_memory_run(probe_ctx *ctx, cp_error *err)
{
    uint64_t llc = probe_llc_bytes();
    uint64_t bytes = probe_stream_array_bytes(ctx->opts.size_bytes, llc, ctx->opts.quick);
    if (bytes < 4096)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--size %llu is too small",
                            (unsigned long long)bytes);
    stream_arrays s = { .n = bytes / sizeof(double) };
    double **arr[] = { &s.a, &s.b, &s.c };
    for (size_t i = 0; i < 3; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 2u << 20, bytes) != 0) { /* 2 MiB: lets THP back the arrays */
            free(s.a), free(s.b), free(s.c);
            return cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1,
                                "cannot allocate 3 arrays of %llu MiB: try a smaller --size",
                                (unsigned long long)(bytes >> 20));
        }
        *arr[i] = p;
    }
    int nthreads = ctx->opts.threads > 0 ? ctx->opts.threads : cp_cpu_count();
    probe_team *team = probe_team_new(nthreads, stream_phase, &s);
    probe_team_run(team, PHASE_INIT);
    int reps = ctx->opts.quick ? 4 : 10;
    double best[PROBE_N_KERNELS];
    for (int k = 0; k < PROBE_N_KERNELS; k++)
        best[k] = INFINITY;
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < PROBE_N_KERNELS; k++) {
            double t = probe_team_run(team, k);
            if (r > 0 && t < best[k]) /* STREAM skips the first repetition */
                best[k] = t;
        }
    double rel_err = check_values(&s, reps);
    const char *env = getenv("CHAINPROF_MEM_PEAK_GBPS");
    double peak = env ? strtod(env, NULL) : NAN;
    if (!(peak > 0))
        peak = NAN;
    for (int k = 0; k < PROBE_N_KERNELS; k++) {
        char metric[64], method[320];
        snprintf(metric, sizeof metric, "%s_bandwidth", kernel_names[k]);
        snprintf(method, sizeof method,
                 "STREAM-style %s, 3 arrays x %llu MiB (LLC %llu MiB%s), best of %d after the first, %s",
                 kernel_names[k], (unsigned long long)(bytes >> 20), (unsigned long long)(llc >> 20),
                 bytes < 4 * llc ? ", arrays capped below 4 x LLC: may include cache hits" : "", reps - 1,
                 probe_team_placement(team));
        probe_emit_value(ctx, metric, (double)probe_stream_bytes((probe_stream_kernel)k, s.n) / best[k] / 1e9,
                         "GB/s", peak, method);
    }
    probe_team_free(team);
    free(s.a), free(s.b), free(s.c);
    gpu_rt *g = probe_gpu(ctx);
    for (int d = 0; g && d < g->n_devices; d++) {
        char metric[64], method[256], why[256];
        size_t gbytes = ctx->opts.quick ? (256u << 20) : (1u << 30);
        double bw = gpu_copy_gbps(g, d, GPU_D2D, false, gbytes, ctx->opts.quick ? 3 : 10, why, sizeof why);
        if (isnan(bw)) {
            return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "gpu %d device copy: %s", d, why);
        }
        snprintf(metric, sizeof metric, "gpu%d_device_copy_bandwidth", d);
        snprintf(method, sizeof method,
                 "cudaMemcpy device to device of %zu MiB, read + write counted, best of %d; peak = bus width/8 x "
                 "max memory clock x 2 (NVML)",
                 gbytes >> 20, ctx->opts.quick ? 3 : 10);
        probe_emit_value(ctx, metric, bw, "GB/s", gpu_mem_peak_gbps(g, d), method);
    }
    if (rel_err > 1e-9)
        return cp_error_set(err, CP_ERR_INTERNAL, NULL, 0, 0, -1,
                            "results failed validation (relative error %.3g): memory or kernel fault",
                            rel_err);
    return 0;
}
