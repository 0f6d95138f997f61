/* probe_memory.c - host memory bandwidth: a working-set sweep, then STREAM.
 *
 * Kernels run on a team of pinned threads (probe_team.c), each thread
 * owning one contiguous chunk of every array that it also initialised, so
 * with first-touch placement every chunk lives on its thread's NUMA node.
 *
 * 1. Sweep (probe_memsweep.c): the triad a = b + s*c over working sets from
 *    64 KiB (three arrays together) upwards in 2x steps, each point the
 *    median of its repetitions (5 quick, 7 full; 2 fewer from 256 MiB on,
 *    where one lasts long enough to be steady; a repetition runs the kernel enough times to
 *    last a few ms, so small sets are not timed by the barrier), until the
 *    large end is flat (probe_sweep_settled) or the memory bound is reached
 *    (half of MemAvailable, at most 4 GiB quick / 16 GiB full, or 3 x
 *    --size). The flat end is DRAM (`dram_plateau_bandwidth`), the last
 *    faster working set the largest cache found, whatever the OS says.
 * 2. STREAM: copy c=a, scale b=s*c, add c=a+b, triad a=b+s*c over three
 *    arrays each at least 4 x the largest cache found (the sweep's or the
 *    OS's, STREAM's own rule), for --rounds rounds after one discarded.
 *    Bandwidth follows STREAM exactly: bytes = (arrays read + arrays
 *    written) x n x 8, no write-allocate traffic, GB/s = 1e9 B/s, and the
 *    figure is the best round as STREAM reports it, with the median and the
 *    spread of the rounds beside it (probe_stats.h).
 *
 * Peak: the theoretical DRAM bandwidth is CHAINPROF_MEM_PEAK_GBPS when set,
 * else the DMI memory devices' upper bound (sum over DIMMs of configured
 * MT/s x data width; root only, and a VM's DMI is whatever the hypervisor
 * wrote), else null. A figure above it is impossible (probe_emit), which is
 * what STREAM arrays that fit a hidden cache produce.
 *
 * GPU device-memory copy bandwidth comes from src/gpu when present, with
 * buffers at least 4 x the device's L2 (cudaDevAttrL2CacheSize) and a sweep
 * of copy sizes below that, so the same plateau rule applies.
 */
#include "probe.h"
#include "probe_mem.h"
#include "../base/sysstat.h"
#include "../base/util.h"
#include "../gpu/gpu.h"
#include "../model/catalog.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const kernel_names[PROBE_N_KERNELS] = { "copy", "scale", "add", "triad" };

const char *probe_stream_name(probe_stream_kernel k)
{
    return (unsigned)k < PROBE_N_KERNELS ? kernel_names[k] : "?";
}

uint64_t probe_stream_bytes(probe_stream_kernel k, uint64_t n)
{
    return (k == PROBE_ADD || k == PROBE_TRIAD ? 3u : 2u) * n * sizeof(double);
}

void probe_chunk(uint64_t n, int tid, int nthreads, uint64_t *lo, uint64_t *hi)
{
    uint64_t per = n / (uint64_t)nthreads, rem = n % (uint64_t)nthreads, t = (uint64_t)tid;
    *lo = t * per + (t < rem ? t : rem);
    *hi = *lo + per + (t < rem ? 1 : 0);
}

typedef struct stream_arrays {
    double *a, *b, *c;
    uint64_t cap; /* doubles allocated per array */
    uint64_t n;   /* doubles in use (a prefix) */
    uint64_t inner; /* PHASE_SWEEP: triad repetitions per phase */
} stream_arrays;

enum { PHASE_INIT = PROBE_N_KERNELS, PHASE_SWEEP };
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
    case PHASE_SWEEP: /* the triad, repeated: a depends on b and c only, so values stay put */
        for (uint64_t r = 0; r < s->inner; r++) {
            for (uint64_t i = lo; i < hi; i++)
                a[i] = b[i] + scalar * c[i];
            /* each pass must happen: without this the compiler may keep one of identical passes */
            __asm__ volatile("" ::: "memory");
        }
        break;
    default:
        break;
    }
}

/* STREAM's own check: replay the kernels on scalars and compare. Returns
 * the worst relative error of a over a sample of elements. */
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

static void arrays_free(stream_arrays *s)
{
    free(s->a), free(s->b), free(s->c);
    s->a = s->b = s->c = NULL;
    s->cap = 0;
}

/* Three arrays of `doubles` each, untouched (pages come on first use). */
static int arrays_alloc(stream_arrays *s, uint64_t doubles, cp_error *err)
{
    double **arr[] = { &s->a, &s->b, &s->c };
    for (size_t i = 0; i < 3; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 2u << 20, doubles * sizeof(double)) != 0) { /* 2 MiB: lets THP back the arrays */
            arrays_free(s);
            return cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1,
                                "cannot allocate 3 arrays of %llu MiB: try a smaller --size",
                                (unsigned long long)(doubles * sizeof(double) >> 20));
        }
        *arr[i] = p;
    }
    s->cap = doubles;
    return 0;
}

bool probe_memory_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return true;
}

/* ---- the peak ---- */

/* The theoretical DRAM bandwidth and where it came from. */
static double mem_peak_gbps(const probe_ctx *ctx, char *src, size_t size)
{
    const char *env = getenv("CHAINPROF_MEM_PEAK_GBPS");
    double peak = env ? strtod(env, NULL) : NAN;
    if (peak > 0) {
        snprintf(src, size, "CHAINPROF_MEM_PEAK_GBPS");
        return peak;
    }
    int dimms;
    peak = probe_dmi_mem_peak_gbps(&ctx->fs, &dimms);
    if (peak > 0) {
        snprintf(src, size, "DMI: %d memory device%s, configured MT/s x width summed (an upper bound)", dimms,
                 dimms == 1 ? "" : "s");
        return peak;
    }
    snprintf(src, size, "unknown (DMI unreadable or absent; set CHAINPROF_MEM_PEAK_GBPS)");
    return NAN;
}

/* ---- the sweep ---- */

#define SWEEP_MIN_WS (64ull << 10)
#define SWEEP_PHASE_S 0.004 /* a repetition lasts at least this, barrier cost amortised */
#define MAX_SWEEP 40

/* One working set of n doubles per array: median of `reps` repetitions. */
static probe_sweep_point sweep_point(probe_team *t, stream_arrays *s, uint64_t n, int reps)
{
    s->n = n;
    probe_team_run(t, PHASE_INIT); /* first touch of the new part, same values everywhere */
    s->inner = 1;
    double t1 = probe_team_run(t, PHASE_SWEEP); /* warms the caches, calibrates */
    if (t1 < SWEEP_PHASE_S)
        s->inner = (uint64_t)(SWEEP_PHASE_S / (t1 > 1e-7 ? t1 : 1e-7)) + 1;
    double bw[16];
    int k = reps < 16 ? reps : 16;
    for (int r = 0; r < k; r++) {
        double sec = probe_team_run(t, PHASE_SWEEP);
        bw[r] = (double)probe_stream_bytes(PROBE_TRIAD, n) * (double)s->inner / sec / 1e9;
    }
    probe_stats st;
    probe_stats_of(bw, (size_t)k, &st);
    return (probe_sweep_point){ probe_stream_bytes(PROBE_TRIAD, n), st.median, st.cv };
}

typedef struct sweep_result {
    probe_sweep_point pts[MAX_SWEEP];
    size_t n;
    bool settled;
    probe_plateau plateau;
} sweep_result;

/* The sweep goes on at least this far before a flat end counts: the
 * largest last-level caches shipping hold 1.1 GiB per socket (3D V-cache
 * EPYC), and a VM does not say which host it runs on. Bounded by memory. */
#define SWEEP_SETTLE_QUICK_WS (2ull << 30)
#define SWEEP_SETTLE_FULL_WS (4ull << 30)

static void run_sweep(probe_team *t, stream_arrays *s, uint64_t max_ws, uint64_t min_settle, uint64_t os_llc, int reps,
                      sweep_result *sw)
{
    memset(sw, 0, sizeof *sw);
    for (uint64_t ws = SWEEP_MIN_WS; ws <= max_ws && sw->n < MAX_SWEEP; ws *= 2) {
        uint64_t n = ws / probe_stream_bytes(PROBE_TRIAD, 1);
        if (n > s->cap)
            break;
        /* past 256 MiB a repetition is long enough to be steady: fewer of them */
        sw->pts[sw->n++] = sweep_point(t, s, n, ws >= (256ull << 20) && reps > 3 ? reps - 2 : reps);
        if (probe_sweep_settled(sw->pts, sw->n, os_llc, min_settle)) {
            sw->settled = true;
            break;
        }
    }
    probe_find_plateau(sw->pts, sw->n, &sw->plateau);
}

/* The smallest OS cache level a working set fits in, for the sweep table. */
static const char *fits_in(uint64_t ws, const probe_cache *c, size_t n, char *buf, size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (ws <= c[i].total_bytes) {
            snprintf(buf, size, "L%d", c[i].level);
            return buf;
        }
    snprintf(buf, size, n ? "beyond L%d" : "unknown", n ? c[n - 1].level : 0);
    return buf;
}

static void sweep_report(probe_ctx *ctx, const sweep_result *sw, const probe_cache *c, size_t nc, uint64_t cache_found,
                         uint64_t array_bytes, bool capped)
{
    if (!ctx->rep)
        return;
    rep_report *r = ctx->rep;
    rep_node *m = rep_obj(r, r->root, "memory", "memory sweep");
    uint64_t os_llc = nc ? c[nc - 1].total_bytes : 0;
    rep_int(r, m, "os_llc_bytes", "last-level cache the OS reports (all instances)", (int64_t)os_llc, "bytes");
    rep_int(r, m, "largest_cache_found_bytes", "largest cache found (sweep or OS)", (int64_t)cache_found, "bytes");
    rep_bool(r, m, "hidden_cache", "a cache larger than the OS reports", cache_found > 2 * os_llc && os_llc);
    rep_bool(r, m, "plateau_found", "DRAM plateau found", sw->plateau.found);
    rep_num(r, m, "plateau_gbps", "DRAM plateau", sw->plateau.gbps, "GB/s");
    if (sw->plateau.found)
        rep_int(r, m, "plateau_start_bytes", "plateau from", (int64_t)sw->plateau.start_bytes, "bytes");
    else
        rep_null(r, m, "plateau_start_bytes", "plateau from", "bytes");
    rep_int(r, m, "stream_array_bytes", "STREAM array size", (int64_t)array_bytes, "bytes");
    rep_bool(r, m, "stream_arrays_below_4x_cache", "STREAM arrays below 4 x the cache found", capped);
    static const rep_col ccols[] = { { "level", "level", NULL, -1 }, { "instance_bytes", "size", "bytes", -1 },
                                     { "instances", "instances", NULL, -1 }, { "total_bytes", "total", "bytes", -1 } };
    rep_node *ct = rep_table(r, m, "os_caches", "caches the OS reports", ccols, CP_ARRAY_LEN(ccols));
    for (size_t i = 0; i < nc; i++) {
        rep_node *row = rep_row(r, ct);
        rep_cell_int(r, row, c[i].level);
        rep_cell_int(r, row, (int64_t)c[i].instance_bytes);
        rep_cell_int(r, row, c[i].instances);
        rep_cell_int(r, row, (int64_t)c[i].total_bytes);
    }
    static const rep_col pcols[] = { { "ws_bytes", "working set", "bytes", -1 },
                                     { "bandwidth_gbps", "triad", "GB/s", 2 },
                                     { "cv_pct", "cv", "%", 1 },
                                     { "fits", "fits the OS's", NULL, -1 },
                                     { "plateau", "plateau", NULL, -1 } };
    rep_node *pt = rep_table(r, m, "sweep", "working-set sweep (triad, all threads)", pcols, CP_ARRAY_LEN(pcols));
    for (size_t i = 0; i < sw->n; i++) {
        char fit[32];
        rep_node *row = rep_row(r, pt);
        rep_cell_int(r, row, (int64_t)sw->pts[i].ws_bytes);
        rep_cell_num(r, row, sw->pts[i].gbps);
        rep_cell_num(r, row, sw->pts[i].cv * 100);
        rep_cell_str(r, row, fits_in(sw->pts[i].ws_bytes, c, nc, fit, sizeof fit));
        rep_cell_bool(r, row, sw->plateau.found && i >= sw->plateau.first);
    }
    probe_sweep_run runs[MAX_SWEEP];
    size_t nr = probe_sweep_runs(sw->pts, sw->n, runs, MAX_SWEEP);
    static const rep_col lcols[] = { { "from_bytes", "from", "bytes", -1 }, { "to_bytes", "to", "bytes", -1 },
                                     { "bandwidth_gbps", "triad", "GB/s", 2 }, { "points", "points", NULL, -1 },
                                     { "what", "what", NULL, -1 } };
    rep_node *lt = rep_table(r, m, "levels", "levels the sweep passed", lcols, CP_ARRAY_LEN(lcols));
    for (size_t i = 0; i < nr; i++) {
        char fit[32];
        rep_node *row = rep_row(r, lt);
        uint64_t to = sw->pts[runs[i].last].ws_bytes;
        rep_cell_int(r, row, (int64_t)sw->pts[runs[i].first].ws_bytes);
        rep_cell_int(r, row, (int64_t)to);
        rep_cell_num(r, row, runs[i].gbps);
        rep_cell_int(r, row, (int64_t)(runs[i].last - runs[i].first + 1));
        bool dram = sw->plateau.found && runs[i].last == sw->n - 1;
        rep_cell_str(r, row, dram ? "DRAM" : runs[i].first == runs[i].last ? "transition" : fits_in(to, c, nc, fit, sizeof fit));
    }
}

/* ---- the probe ---- */

/* How much the three arrays together may take: half of what the kernel
 * says is available (sysconf's free pages when /proc/meminfo is absent),
 * at most 4 GiB quick / 16 GiB full. */
static uint64_t memory_budget(const probe_ctx *ctx)
{
    cp_ss_sample s = { 0 };
    int64_t avail = -1;
    if (cp_ss_take(&ctx->fs, CP_SS_MEMINFO, &s, NULL) == 0 && (s.have & CP_SS_MEMINFO))
        avail = s.mem.available_bytes >= 0 ? s.mem.available_bytes : s.mem.free_bytes;
    cp_ss_sample_free(&s);
    if (avail < 0)
        avail = (int64_t)sysconf(_SC_AVPHYS_PAGES) * (int64_t)sysconf(_SC_PAGESIZE);
    uint64_t cap = (ctx->opts.quick ? 4ull : 16ull) << 30;
    uint64_t half = avail > 0 ? (uint64_t)avail / 2 : 1ull << 30;
    return half < cap ? half : cap;
}

static void emit_stream(probe_ctx *ctx, double sec[][PROBE_MAX_ROUNDS + 1], int rounds, uint64_t n,
                        uint64_t array_bytes, uint64_t cache_found, const char *cache_src, bool capped, double peak,
                        const char *peak_src, const probe_team *team)
{
    for (int k = 0; k < PROBE_N_KERNELS; k++) {
        double bw[PROBE_MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) /* round 0 (the first repetition) is STREAM's discarded one */
            bw[r] = (double)probe_stream_bytes((probe_stream_kernel)k, n) / sec[k][r + 1] / 1e9;
        char metric[64], method[640];
        snprintf(metric, sizeof metric, "%s_bandwidth", kernel_names[k]);
        snprintf(method, sizeof method,
                 "STREAM-style %s, 3 arrays x %llu MiB (the largest cache found: %llu MiB, %s)%s, best of %d rounds "
                 "after the first (STREAM's convention; median and spread beside it), %s; peak: %s",
                 kernel_names[k], (unsigned long long)(array_bytes >> 20), (unsigned long long)(cache_found >> 20),
                 cache_src, capped ? ", arrays below 4 x that (free memory or --size): may include cache hits" : "",
                 rounds, probe_team_placement(team), peak_src);
        probe_emit_rounds(ctx, metric, bw, (size_t)rounds, PROBE_STAT_BEST_MAX, "GB/s", peak, method);
    }
}

static void emit_plateau(probe_ctx *ctx, const sweep_result *sw, int nthreads, uint64_t os_llc, double peak,
                         const char *peak_src)
{
    char method[640];
    uint64_t last = sw->n ? sw->pts[sw->n - 1].ws_bytes : 0;
    double v[MAX_SWEEP];
    size_t k = 0;
    if (sw->plateau.found)
        for (size_t i = sw->plateau.first; i < sw->n; i++)
            v[k++] = sw->pts[i].gbps;
    if (sw->plateau.found)
        snprintf(method, sizeof method,
                 "working-set sweep of the triad on %d threads, 64 KiB to %llu MiB in 2x steps, each point the "
                 "median of its repetitions; the flat end (%zu points within %.0f %% of their median) from %llu MiB; "
                 "the largest working set still faster: %llu MiB (the OS reports %llu MiB of last-level cache); "
                 "statistics over the plateau's points; peak: %s",
                 nthreads, (unsigned long long)(last >> 20), k, PROBE_PLATEAU_TOL * 100,
                 (unsigned long long)(sw->plateau.start_bytes >> 20), (unsigned long long)(sw->plateau.cache_bytes >> 20),
                 (unsigned long long)(os_llc >> 20), peak_src);
    else
        snprintf(method, sizeof method,
                 "no plateau: the triad's bandwidth was still changing at the largest working set the memory "
                 "bound allowed (%llu MiB, %zu points), so no DRAM figure can be given; peak: %s",
                 (unsigned long long)(last >> 20), sw->n, peak_src);
    probe_emit_rounds(ctx, "dram_plateau_bandwidth", v, k, PROBE_STAT_MEDIAN, "GB/s", peak, method);
}

static int host_memory(probe_ctx *ctx, cp_error *err)
{
    probe_cache caches[8];
    size_t nc = probe_caches(&ctx->fs, caches, 8);
    uint64_t os_llc = nc ? caches[nc - 1].total_bytes : 0;
    uint64_t budget = memory_budget(ctx), explicit_bytes = ctx->opts.size_bytes;
    if (explicit_bytes && explicit_bytes < 4096)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--size %llu is too small",
                            (unsigned long long)explicit_bytes);
    uint64_t max_ws = explicit_bytes ? 3 * explicit_bytes : budget;
    stream_arrays s = { 0 };
    int rc = arrays_alloc(&s, max_ws / 3 / sizeof(double), err);
    if (rc < 0)
        return rc;
    int nthreads = ctx->opts.threads > 0 ? ctx->opts.threads : cp_cpu_count();
    probe_team *team = probe_team_new(nthreads, stream_phase, &s);
    sweep_result *sw = cp_xcalloc(1, sizeof *sw);
    run_sweep(team, &s, max_ws, ctx->opts.quick ? SWEEP_SETTLE_QUICK_WS : SWEEP_SETTLE_FULL_WS, os_llc,
              ctx->opts.quick ? 5 : 7, sw);

    /* STREAM, with arrays 4 x the largest cache found */
    uint64_t cache_found = sw->plateau.cache_bytes > os_llc ? sw->plateau.cache_bytes : os_llc;
    const char *cache_src = sw->plateau.cache_bytes > os_llc ? "by the sweep" : "as the OS reports";
    bool capped;
    uint64_t array_bytes = probe_stream_array_bytes(explicit_bytes, cache_found, ctx->opts.quick, budget / 3, &capped);
    uint64_t n = array_bytes / sizeof(double);
    if (n > s.cap) { /* larger than the sweep went: new arrays */
        probe_team_free(team);
        arrays_free(&s);
        if ((rc = arrays_alloc(&s, n, err)) < 0) {
            free(sw);
            return rc;
        }
        team = probe_team_new(nthreads, stream_phase, &s);
    }
    s.n = n;
    probe_team_run(team, PHASE_INIT);
    int rounds = probe_rounds(ctx, 5, 10);
    double(*sec)[PROBE_MAX_ROUNDS + 1] = cp_xcalloc(PROBE_N_KERNELS, sizeof *sec);
    for (int r = 0; r <= rounds; r++)
        for (int k = 0; k < PROBE_N_KERNELS; k++)
            sec[k][r] = probe_team_run(team, k);
    double rel_err = check_values(&s, rounds + 1);
    char peak_src[160];
    double peak = mem_peak_gbps(ctx, peak_src, sizeof peak_src);
    emit_stream(ctx, sec, rounds, n, array_bytes, cache_found, cache_src, capped, peak, peak_src, team);
    emit_plateau(ctx, sw, nthreads, os_llc, peak, peak_src);
    probe_emit_value(ctx, "largest_cache_found", (double)cache_found, "bytes", NAN,
                     sw->plateau.cache_bytes > os_llc
                         ? "the largest working set the sweep found faster than DRAM: a cache the OS does not report"
                         : "the OS's last-level cache (sysfs, all instances); the sweep found nothing larger");
    sweep_report(ctx, sw, caches, nc, cache_found, array_bytes, capped);
    free(sec);
    free(sw);
    probe_team_free(team);
    arrays_free(&s);
    if (rel_err > 1e-9)
        return cp_error_set(err, CP_ERR_INTERNAL, NULL, 0, 0, -1,
                            "results failed validation (relative error %.3g): memory or kernel fault", rel_err);
    return 0;
}

/* ---- GPU device memory ---- */

/* The device's memory peak: NVML's bus width and clock, else the catalog
 * row its name resolves to; the source into src. */
static double gpu_hbm_peak(gpu_rt *g, int d, char *src, size_t size)
{
    double peak = gpu_mem_peak_gbps(g, d);
    if (peak > 0) {
        snprintf(src, size, "bus width/8 x max memory clock x 2 (NVML)");
        return peak;
    }
    char name[128];
    gpu_name(g, d, name, sizeof name);
    const hw_gpu *spec = hw_gpu_find(name);
    if (spec && spec->hbm_gbps > 0) {
        snprintf(src, size, "the catalog's %s (%s)", spec->name, spec->source);
        return spec->hbm_gbps;
    }
    snprintf(src, size, "unknown (no NVML, and the device name is not in the catalog)");
    return NAN;
}

static int gpu_memory(probe_ctx *ctx, gpu_rt *g, int d, cp_error *err)
{
    char metric[64], method[640], why[256];
    int l2 = 0;
    if (!g->DeviceGetAttribute || g->DeviceGetAttribute(&l2, GPU_ATTR_L2_CACHE_SIZE, d) != 0 || l2 < 0)
        l2 = 0;
    size_t floor = ctx->opts.quick ? (256u << 20) : (1u << 30);
    size_t bytes = 4 * (size_t)l2 > floor ? 4 * (size_t)l2 : floor;
    /* the copy-size sweep: where the copy rate stops changing */
    probe_sweep_point pts[MAX_SWEEP];
    size_t np = 0;
    for (size_t b = 1u << 20; b <= bytes && np < MAX_SWEEP; b *= 2) {
        double bw = gpu_copy_gbps(g, d, GPU_D2D, false, b, 3, why, sizeof why);
        if (isnan(bw))
            return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "gpu %d device copy of %zu bytes: %s", d, b, why);
        pts[np++] = (probe_sweep_point){ 2 * (uint64_t)b, bw, NAN }; /* source + destination */
    }
    probe_plateau pl;
    probe_find_plateau(pts, np, &pl);
    char peak_src[300];
    double peak = gpu_hbm_peak(g, d, peak_src, sizeof peak_src);
    int rounds = probe_rounds(ctx, 3, 10);
    double v[PROBE_MAX_ROUNDS];
    if (isnan(gpu_copy_gbps_rounds(g, d, GPU_D2D, false, bytes, rounds, v, why, sizeof why)))
        return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "gpu %d device copy: %s", d, why);
    snprintf(metric, sizeof metric, "gpu%d_device_copy_bandwidth", d);
    /* the sweep's verdict with its numbers */
    if (pl.found)
        snprintf(method, sizeof method,
                 "cudaMemcpy device to device of %zu MiB (at least 4 x the %d MiB L2), read + write counted, median "
                 "of %d rounds after a warm-up copy; copy sizes 1 MiB to %zu MiB flat from %llu MiB at "
                 "%.0f GB/s%s; peak: %s",
                 bytes >> 20, l2 >> 20, rounds, bytes >> 20, (unsigned long long)(pl.start_bytes / 2 >> 20), pl.gbps,
                 pl.cache_bytes ? " (faster below: the L2)" : "", peak_src);
    else
        snprintf(method, sizeof method,
                 "cudaMemcpy device to device of %zu MiB (at least 4 x the %d MiB L2), read + write counted, median "
                 "of %d rounds after a warm-up copy; the copy rate was still changing at %zu MiB (no "
                 "plateau); peak: %s",
                 bytes >> 20, l2 >> 20, rounds, bytes >> 20, peak_src);
    probe_emit_rounds(ctx, metric, v, (size_t)rounds, PROBE_STAT_MEDIAN, "GB/s", peak, method);
    if (ctx->rep) {
        rep_node *gm = rep_child(ctx->rep->root, "gpu_memory");
        if (!gm)
            gm = rep_arr(ctx->rep, ctx->rep->root, "gpu_memory", "GPU memory copy sweep");
        rep_node *o = rep_obj(ctx->rep, gm, NULL, NULL);
        rep_int(ctx->rep, o, "device", "device", d, NULL);
        rep_int(ctx->rep, o, "l2_bytes", "L2", l2, "bytes");
        rep_int(ctx->rep, o, "copy_bytes", "copy size", (int64_t)bytes, "bytes");
        rep_bool(ctx->rep, o, "plateau_found", "plateau found", pl.found);
        rep_num(ctx->rep, o, "plateau_gbps", "plateau", pl.gbps, "GB/s");
        static const rep_col cols[] = { { "copy_bytes", "copy", "bytes", -1 }, { "bandwidth_gbps", "bandwidth", "GB/s", 1 },
                                        { "plateau", "plateau", NULL, -1 } };
        rep_node *t = rep_table(ctx->rep, o, "sweep", "copy-size sweep (best of 3)", cols, CP_ARRAY_LEN(cols));
        for (size_t i = 0; i < np; i++) {
            rep_node *row = rep_row(ctx->rep, t);
            rep_cell_int(ctx->rep, row, (int64_t)(pts[i].ws_bytes / 2));
            rep_cell_num(ctx->rep, row, pts[i].gbps);
            rep_cell_bool(ctx->rep, row, pl.found && i >= pl.first);
        }
    }
    return 0;
}

int probe_memory_run(probe_ctx *ctx, cp_error *err)
{
    int rc = host_memory(ctx, err);
    if (rc < 0)
        return rc;
    gpu_rt *g = probe_gpu(ctx);
    for (int d = 0; g && d < g->n_devices && rc == 0; d++)
        rc = gpu_memory(ctx, g, d, err);
    return rc;
}
