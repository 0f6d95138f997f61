/* an_roofline.c - the `roofline` analyzer: every kernel Nsight Compute
 * profiled (evidence kind `ncu`, src/model/ev_ncu.h), placed on its GPU's
 * roofline, classed, joined with the trace's kernels and weighed by their
 * time, with findings whose gains follow the rules of every finding.
 *
 * Per profiled launch (docs/METRICS.md, "Kernel roofline"):
 * - FLOPs by precision from ncu's counters: FP32/FP64/FP16 = 2 x FMA + ADD +
 *   MUL thread instructions (the sm__sass_thread_inst_executed_op_* counters;
 *   flop_count_* when only those are there), tensor = the tensor-path math
 *   ops (sm__ops_path_tensor_*); FLOP/s = FLOPs / duration;
 * - DRAM bytes (dram__bytes, else read + write, else the DRAM throughput x
 *   duration), L2 and L1 bytes (L1: l1tex__t_bytes, else global load and
 *   store sectors x 32 bytes); arithmetic intensity = FLOPs / DRAM bytes;
 * - ceilings: the compute peak of the precision that did most of the FLOPs
 *   and the DRAM bandwidth, from the hardware catalog when the GPU is known
 *   (ncu's device name, else the trace's), else from ncu's own numbers (SMs x
 *   CUDA-core lanes of the compute capability x 2 x the SM clock ncu ran at;
 *   DRAM: the measured DRAM throughput over its % of peak, else the device's
 *   memory clock x 2 x bus width); attainable = min(peak, AI x bandwidth),
 *   roofline_pct = FLOP/s / attainable;
 * - occupancy: achieved and theoretical, and the limiter (the block limit
 *   with the fewest blocks when the theoretical occupancy is below 100 %);
 * - the top warp-stall reason (most cycles per issued instruction, else
 *   most PC samples) when ncu's warp-state or source counters or its
 *   CPIStall rule give them;
 * - class, first that applies: compute_bound / memory_bound (the higher of
 *   ncu's SM and memory speed of light >= AN_ROOF_SOL_NEAR_PCT, ncu's own
 *   "latency issues" threshold), small_grid (less than one wave of blocks),
 *   tail_effect (a partial last wave idles >= AN_ROOF_TAIL_IDLE of the SM
 *   time, below AN_ROOF_TAIL_MAX_WAVES waves), occupancy_limited
 *   (theoretical occupancy < AN_ROOF_OCC_LOW_PCT), latency_bound; null when
 *   ncu gave no speed of light.
 *
 * Join: profiled launches are grouped by (name, grid, block); each compute
 * kernel of the trace goes to the group whose name matches it most exactly
 * (the same string; the same after dropping "void ", spaces and anonymous
 * namespaces; the same without the parameter list; the same base name) and,
 * when both know them, whose grid and block sizes are the same. The trace's
 * time of a group (mean over ranks) says how much of the step it holds.
 *
 * Findings, one per kernel at most, from its class (removing compute-layer
 * time, capped like every trace finding; kernels under 1 % of the basis
 * raise none): KERNEL_MEMORY_FUSION (memory-bound at DRAM peak with an
 * elementwise intensity: fusing removes its time, an upper bound),
 * KERNEL_SMALL_GRID (the idle SMs' share), KERNEL_BELOW_ROOFLINE (compute-,
 * latency- or tail-bound below AN_ROOF_TARGET_FRAC of its attainable FLOP/s:
 * the time to that target), KERNEL_OCCUPANCY_LIMITED (ncu's own estimated
 * speedup of its occupancy rule, else no gain). A memory-bound kernel held
 * by L1/L2 rather than DRAM raises none. With a trace a gain is a share of
 * the step; without one, of the profiled kernels' own time (said in the
 * assumption).
 */
#include "an_verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"
#include "../model/catalog.h"
#include "../model/evidence.h"

#define AN_ROOF_SOL_NEAR_PCT 60.0   /* ncu: "below 60.0% of peak typically indicate latency issues" */
#define AN_ROOF_TAIL_IDLE 0.25      /* idle share of SM time a partial last wave must cause */
#define AN_ROOF_TAIL_MAX_WAVES 4.0
#define AN_ROOF_OCC_LOW_PCT 50.0
#define AN_ROOF_TARGET_FRAC 0.8     /* what a tuned kernel reaches of its attainable FLOP/s */
#define AN_ROOF_FUSION_MAX_AI 1.0   /* FLOP per DRAM byte: elementwise work */
#define AN_ROOF_MIN_SHARE_PCT 1.0   /* a kernel below this share of the basis raises no finding */
#define L1_SECTOR_BYTES 32.0

enum { P_FP64, P_FP32, P_FP16, P_TENSOR, P__N };
static const char *const k_prec[P__N] = {"fp64", "fp32", "fp16", "tensor"};

typedef struct rk {
    const ev_file *file;
    const ev_ncu_launch *l;
    double flops_p[P__N], flops, flops_per_s;
    double dram_bytes, l2_bytes, l1_bytes, dram_bps, ai;
    int prec;                      /* the precision of most FLOPs, -1 none */
    const char *tensor_dtype;      /* "bf16", "tf32", "fp8", "fp64" or NULL */
    double peak_flops, peak_bw;    /* FLOP/s, bytes/s; NaN unknown */
    const char *peak_flops_src, *peak_bw_src;
    double attainable, roof_pct, bw_pct;
    const char *cls, *limiter;
    char why[200];
    const ev_ncu_stall *stall;     /* the top warp-stall reason, NULL none */
    double stall_pct;              /* its share of the cycles between issues (or of the samples) */
    size_t group;
} rk;

typedef struct rgroup {
    size_t first;                  /* launch index of its first launch */
    size_t n;
    double profiled_ns;            /* sum of the launches' durations */
    double roof_pct;               /* mean over launches that have it; NaN */
    int64_t trace_count;
    double trace_ns;               /* all ranks */
    int match_level;               /* best name match level, -1 none */
    char *nfull, *nsig, *nbase;    /* normalised names */
    int64_t grid, block;           /* totals, 0 unknown */
} rgroup;

typedef struct rstate {
    an_ctx *ctx;
    const hw_gpu *gpu;             /* from the trace (an_job), may be NULL */
    rk *k;
    size_t n;
    rgroup *g;
    size_t ng;
    double trace_compute_ns;       /* all compute kernels of the trace, all ranks */
    size_t ranks_with_kernels;
} rstate;

static const char *const k_level[] = {"base name", "name without parameters", "demangled name", "name"};

static double nz(double v) { return isnan(v) ? 0 : v; }

/* ---- per launch -------------------------------------------------------- */

static double fp_flops(const ev_ncu_launch *l, ev_ncu_metric fma, ev_ncu_metric add, ev_ncu_metric mul,
                       ev_ncu_metric flop_count)
{
    const double *v = l->v;
    if (!isnan(v[fma]) || !isnan(v[add]) || !isnan(v[mul]))
        return 2 * nz(v[fma]) + nz(v[add]) + nz(v[mul]);
    return v[flop_count]; /* nvprof's flop_count_* counts an FMA as 2 already */
}

static const char *tensor_dtype(const ev_ncu_launch *l)
{
    static const struct { ev_ncu_metric m; const char *d; } t[] = {
        {EV_NCU_TENSOR_FP16_OPS, "bf16"}, {EV_NCU_TENSOR_TF32_OPS, "tf32"},
        {EV_NCU_TENSOR_FP8_OPS, "fp8"},   {EV_NCU_TENSOR_FP64_OPS, "fp64"},
    };
    const char *best = NULL;
    double most = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (l->v[t[i].m] > most)
            most = l->v[t[i].m], best = t[i].d;
    return best;
}

static void work(rk *k)
{
    const ev_ncu_launch *l = k->l;
    const double *v = l->v;
    k->flops_p[P_FP32] = fp_flops(l, EV_NCU_FFMA, EV_NCU_FADD, EV_NCU_FMUL, EV_NCU_FLOP_SP);
    k->flops_p[P_FP64] = fp_flops(l, EV_NCU_DFMA, EV_NCU_DADD, EV_NCU_DMUL, EV_NCU_FLOP_DP);
    k->flops_p[P_FP16] = fp_flops(l, EV_NCU_HFMA, EV_NCU_HADD, EV_NCU_HMUL, EV_NCU_FLOP_HP);
    k->flops_p[P_TENSOR] = v[EV_NCU_TENSOR_OPS];
    k->flops = NAN;
    k->prec = -1;
    double most = -1;
    for (int p = 0; p < P__N; p++)
        if (!isnan(k->flops_p[p])) {
            k->flops = nz(k->flops) + k->flops_p[p];
            if (k->flops_p[p] > most)
                most = k->flops_p[p], k->prec = p;
        }
    k->tensor_dtype = tensor_dtype(l);
    double dur_s = v[EV_NCU_DURATION_NS] / 1e9;
    k->flops_per_s = dur_s > 0 ? k->flops / dur_s : NAN;
    k->dram_bytes = v[EV_NCU_DRAM_BYTES];
    if (isnan(k->dram_bytes) && dur_s > 0)
        k->dram_bytes = v[EV_NCU_DRAM_BPS] * dur_s;
    k->dram_bps = !isnan(v[EV_NCU_DRAM_BPS]) ? v[EV_NCU_DRAM_BPS] : (dur_s > 0 ? k->dram_bytes / dur_s : NAN);
    k->l2_bytes = v[EV_NCU_L2_BYTES];
    k->l1_bytes = v[EV_NCU_L1_BYTES];
    if (isnan(k->l1_bytes) && (!isnan(v[EV_NCU_L1_LD_SECTORS]) || !isnan(v[EV_NCU_L1_ST_SECTORS])))
        k->l1_bytes = (nz(v[EV_NCU_L1_LD_SECTORS]) + nz(v[EV_NCU_L1_ST_SECTORS])) * L1_SECTOR_BYTES;
    k->ai = k->dram_bytes > 0 ? k->flops / k->dram_bytes : NAN;
}

/* The catalog row of the launch's GPU: ncu's device name, else the trace's. */
static const hw_gpu *gpu_of(const rstate *s, const ev_ncu_launch *l)
{
    const hw_gpu *g = l->device_name[0] ? hw_gpu_find(l->device_name) : NULL;
    return g ? g : s->gpu;
}

static void ceilings(const rstate *s, rk *k)
{
    const ev_ncu_launch *l = k->l;
    const double *v = l->v;
    const hw_gpu *g = gpu_of(s, l);
    k->peak_flops = k->peak_bw = NAN;
    k->peak_flops_src = k->peak_bw_src = NULL;
    if (k->prec == P_TENSOR && g && k->tensor_dtype && strcmp(k->tensor_dtype, "fp64") != 0) {
        k->peak_flops = hw_gpu_peak_tflops(g, k->tensor_dtype) * 1e12;
        k->peak_flops_src = "catalog";
    } else if (k->prec == P_FP32 || k->prec == P_FP64) {
        int fp64 = 0, fp32 = hw_cc_lanes_per_sm(l->cc_major, l->cc_minor, &fp64);
        double sms = !isnan(v[EV_NCU_SM_COUNT]) ? v[EV_NCU_SM_COUNT] : v[EV_NCU_DEV_SM_COUNT];
        double hz = !isnan(v[EV_NCU_SM_FREQ_HZ]) ? v[EV_NCU_SM_FREQ_HZ] : v[EV_NCU_DEV_CLOCK_HZ];
        int lanes = k->prec == P_FP32 ? fp32 : fp64;
        if (lanes > 0 && sms > 0 && hz > 0) {
            k->peak_flops = sms * lanes * 2.0 * hz;
            k->peak_flops_src = "ncu device attributes";
        }
    }
    if (!(k->peak_flops > 0))
        k->peak_flops = NAN, k->peak_flops_src = NULL;
    if (g && g->hbm_gbps > 0) {
        k->peak_bw = g->hbm_gbps * 1e9;
        k->peak_bw_src = "catalog";
    } else if (v[EV_NCU_DRAM_BPS] > 0 && v[EV_NCU_DRAM_PCT] > 0) {
        k->peak_bw = v[EV_NCU_DRAM_BPS] / (v[EV_NCU_DRAM_PCT] / 100);
        k->peak_bw_src = "ncu (DRAM throughput / its % of peak)";
    } else if (v[EV_NCU_DEV_MEM_CLOCK_HZ] > 0 && v[EV_NCU_DEV_BUS_BITS] > 0) {
        k->peak_bw = v[EV_NCU_DEV_MEM_CLOCK_HZ] * 2 * v[EV_NCU_DEV_BUS_BITS] / 8;
        k->peak_bw_src = "ncu device attributes";
    }
    k->attainable = NAN;
    if (k->peak_flops > 0)
        k->attainable = k->ai > 0 && k->peak_bw > 0 ? fmin(k->peak_flops, k->ai * k->peak_bw) : k->peak_flops;
    k->roof_pct = k->attainable > 0 ? 100 * k->flops_per_s / k->attainable : NAN;
    k->bw_pct = k->peak_bw > 0 ? 100 * k->dram_bps / k->peak_bw : NAN;
}

/* The block limit with the fewest blocks, when it limits. */
static const char *limiter(const ev_ncu_launch *l)
{
    static const struct { ev_ncu_metric m; const char *name; } t[] = {
        {EV_NCU_LIMIT_REGISTERS, "registers"}, {EV_NCU_LIMIT_SHARED, "shared memory"},
        {EV_NCU_LIMIT_WARPS, "block size (warps)"}, {EV_NCU_LIMIT_BARRIERS, "barriers"},
        {EV_NCU_LIMIT_SM, "blocks per SM"},
    };
    if (!(l->v[EV_NCU_THEORETICAL_OCC_PCT] < 100))
        return NULL;
    const char *best = NULL;
    double fewest = INFINITY;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (l->v[t[i].m] < fewest)
            fewest = l->v[t[i].m], best = t[i].name;
    return best;
}

/* The top stall: most cycles per issued instruction (as a share of the
 * warp cycles per issued instruction), else most PC samples (as a share of
 * all samples). */
static void top_stall(rk *k)
{
    const ev_ncu_launch *l = k->l;
    double cyc_total = l->v[EV_NCU_WARP_CYCLES_PER_ISSUE], samples = 0;
    k->stall = NULL;
    k->stall_pct = NAN;
    for (int i = 0; i < l->n_stalls; i++)
        samples += nz(l->stalls[i].samples);
    for (int i = 0; i < l->n_stalls; i++) {
        const ev_ncu_stall *st = &l->stalls[i];
        bool by_cycles = !isnan(st->cycles);
        if (!k->stall || (by_cycles ? st->cycles > nz(k->stall->cycles) : isnan(k->stall->cycles) &&
                                                                         st->samples > nz(k->stall->samples)))
            k->stall = st;
    }
    if (!k->stall)
        return;
    if (!isnan(k->stall->cycles))
        k->stall_pct = cyc_total > 0 ? 100 * k->stall->cycles / cyc_total : NAN;
    else if (samples > 0)
        k->stall_pct = 100 * k->stall->samples / samples;
}

static void classify(rk *k)
{
    const double *v = k->l->v;
    double sm = v[EV_NCU_SOL_SM_PCT], mem = v[EV_NCU_SOL_MEMORY_PCT];
    if (isnan(sm)) /* the raw page without sm__throughput: its parts bound it from below */
        sm = fmax(nz(v[EV_NCU_SM_INST_PCT]), nz(v[EV_NCU_TENSOR_PIPE_PCT])) > 0
                 ? fmax(nz(v[EV_NCU_SM_INST_PCT]), nz(v[EV_NCU_TENSOR_PIPE_PCT])) : NAN;
    if (isnan(mem))
        mem = v[EV_NCU_DRAM_PCT];
    double waves = v[EV_NCU_WAVES_PER_SM], theo = v[EV_NCU_THEORETICAL_OCC_PCT];
    k->limiter = limiter(k->l);
    k->cls = NULL;
    if (isnan(sm) && isnan(mem)) {
        snprintf(k->why, sizeof k->why, "no speed-of-light metrics in the file");
        return;
    }
    double top = fmax(nz(sm), nz(mem));
    if (top >= AN_ROOF_SOL_NEAR_PCT) {
        bool compute = nz(sm) >= nz(mem);
        k->cls = compute ? "compute_bound" : "memory_bound";
        snprintf(k->why, sizeof k->why, "%s throughput %.1f %% of peak (>= %.0f %%)", compute ? "SM" : "memory", top,
                 AN_ROOF_SOL_NEAR_PCT);
        return;
    }
    if (waves > 0 && waves < 1) {
        k->cls = "small_grid";
        snprintf(k->why, sizeof k->why, "%.2f waves of blocks: %.0f %% of the SMs idle, throughput %.1f %% of peak",
                 waves, 100 * (1 - waves), top);
        return;
    }
    if (waves >= 1 && waves < AN_ROOF_TAIL_MAX_WAVES) {
        double idle = (ceil(waves) - waves) / ceil(waves);
        if (idle >= AN_ROOF_TAIL_IDLE) {
            k->cls = "tail_effect";
            snprintf(k->why, sizeof k->why, "%.2f waves: the partial last wave leaves %.0f %% of the SM time idle",
                     waves, 100 * idle);
            return;
        }
    }
    if (theo < AN_ROOF_OCC_LOW_PCT) {
        k->cls = "occupancy_limited";
        snprintf(k->why, sizeof k->why, "theoretical occupancy %.1f %% (limited by %s), throughput %.1f %% of peak",
                 theo, k->limiter ? k->limiter : "?", top);
        return;
    }
    k->cls = "latency_bound";
    snprintf(k->why, sizeof k->why, "throughput %.1f %% of peak with %s occupancy: stalls, not resources", top,
             isnan(theo) ? "unknown" : "enough");
}

/* ---- names and groups -------------------------------------------------- */

/* "void ns::(anonymous namespace)::k<int>(float *)" -> "ns::k<int>(float*)". */
static char *norm_full(const char *s)
{
    size_t n = strlen(s);
    char *o = cp_xmalloc(n + 1), *d = o;
    if (strncmp(s, "void ", 5) == 0)
        s += 5;
    static const char *const drop[] = {"(anonymous namespace)::", "<unnamed>::", "unnamed>::"};
    while (*s) {
        bool skipped = false;
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
            if (strncmp(s, drop[i], strlen(drop[i])) == 0) {
                s += strlen(drop[i]);
                skipped = true;
            }
        if (skipped)
            continue;
        if (*s != ' ')
            *d++ = *s;
        s++;
    }
    *d = '\0';
    return o;
}

/* The name up to its parameter list (the first '(' outside <...>). */
static char *norm_sig(const char *full)
{
    int depth = 0;
    size_t i = 0;
    for (; full[i]; i++) {
        if (full[i] == '<')
            depth++;
        else if (full[i] == '>' && depth > 0)
            depth--;
        else if (full[i] == '(' && depth == 0 && i > 0)
            break;
    }
    char *o = cp_xmalloc(i + 1);
    memcpy(o, full, i);
    o[i] = '\0';
    return o;
}

/* The identifier: before any template arguments, after the last "::". */
static char *norm_base(const char *sig)
{
    size_t n = strcspn(sig, "<");
    size_t start = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (sig[i] == ':' && sig[i + 1] == ':')
            start = i + 2;
    char *o = cp_xmalloc(n - start + 1);
    memcpy(o, sig + start, n - start);
    o[n - start] = '\0';
    return o;
}

/* Total blocks or threads per block: the launch line's dims, else Launch
 * Statistics' Grid Size / Block Size (the 2022 text layout has no dims). */
static int64_t dims_total(const int d[3], double stat)
{
    if (d[0])
        return (int64_t)d[0] * d[1] * d[2];
    return stat >= 1 && stat < 9e18 ? (int64_t)stat : 0;
}

static void group_launches(rstate *s)
{
    s->g = cp_xcalloc(s->n + 1, sizeof *s->g);
    for (size_t i = 0; i < s->n; i++) {
        const ev_ncu_launch *l = s->k[i].l;
        int64_t gr = dims_total(l->grid, l->v[EV_NCU_GRID_SIZE]), bl = dims_total(l->block, l->v[EV_NCU_BLOCK_SIZE]);
        size_t j = 0;
        for (; j < s->ng; j++) {
            const ev_ncu_launch *f = s->k[s->g[j].first].l;
            if (strcmp(f->name, l->name) == 0 && s->g[j].grid == gr && s->g[j].block == bl)
                break;
        }
        if (j == s->ng) {
            rgroup *g = &s->g[s->ng++];
            g->first = i;
            g->grid = gr;
            g->block = bl;
            g->match_level = -1;
            g->roof_pct = NAN;
            g->nfull = norm_full(l->name);
            g->nsig = norm_sig(g->nfull);
            g->nbase = norm_base(g->nsig);
        }
        rgroup *g = &s->g[j];
        s->k[i].group = j;
        g->n++;
        g->profiled_ns += nz(l->v[EV_NCU_DURATION_NS]);
        if (!isnan(s->k[i].roof_pct))
            g->roof_pct = isnan(g->roof_pct) ? s->k[i].roof_pct : g->roof_pct + s->k[i].roof_pct;
    }
    for (size_t j = 0; j < s->ng; j++) {
        size_t with = 0;
        for (size_t i = 0; i < s->n; i++)
            with += s->k[i].group == j && !isnan(s->k[i].roof_pct);
        if (with)
            s->g[j].roof_pct /= (double)with;
    }
}

/* Best match level of a trace name against group g: 3 the same string, 2
 * the same normalised name, 1 the same without parameters, 0 the same base
 * name; -1 none. */
static int match_level(const rgroup *g, const char *raw, const char *full, const char *sig, const char *base,
                       const char *gname)
{
    if (strcmp(raw, gname) == 0)
        return 3;
    if (strcmp(full, g->nfull) == 0)
        return 2;
    if (strcmp(sig, g->nsig) == 0)
        return 1;
    if (strlen(base) >= 3 && strcmp(base, g->nbase) == 0)
        return 0;
    return -1;
}

typedef struct name_hit {
    int level;          /* -2 not computed, -1 no match */
    uint32_t cand[8];   /* groups at that level */
    int n_cand;
} name_hit;

static void match_name(const rstate *s, const char *raw, name_hit *h)
{
    char *full = norm_full(raw), *sig = norm_sig(full), *base = norm_base(sig);
    h->level = -1;
    h->n_cand = 0;
    for (size_t j = 0; j < s->ng; j++) {
        int lv = match_level(&s->g[j], raw, full, sig, base, s->k[s->g[j].first].l->name);
        if (lv < 0 || lv < h->level)
            continue;
        if (lv > h->level)
            h->level = lv, h->n_cand = 0;
        if (h->n_cand < 8)
            h->cand[h->n_cand++] = (uint32_t)j;
    }
    free(full), free(sig), free(base);
}

static uint32_t key_of(const tl_timeline *tl, const char *k)
{
    uint32_t id = cp_intern_find(&tl->strings, k, strlen(k));
    return id;
}

/* Each compute kernel of the trace to a group: by name, then grid/block. */
static void join(rstate *s)
{
    const tl_timeline *tl = s->ctx->tl;
    if (!tl || !tl->n_events || !s->ng)
        return;
    size_t n_str = cp_intern_count(&tl->strings);
    name_hit *hits = cp_xcalloc(n_str + 1, sizeof *hits);
    for (size_t i = 0; i <= n_str; i++)
        hits[i].level = -2;
    uint32_t kgrid = key_of(tl, "grid"), kblock = key_of(tl, "block");
    bool *rank_seen = cp_xcalloc(tl->n_ranks + 1, sizeof *rank_seen);
    for (size_t e = 0; e < tl->n_events; e++) {
        if (tl->kclass[e] != TL_K_COMPUTE)
            continue;
        s->trace_compute_ns += (double)tl->dur_ns[e];
        uint32_t ri = tl->tracks[tl->track[e]].rank_index;
        if (!rank_seen[ri])
            rank_seen[ri] = true, s->ranks_with_kernels++;
        uint32_t nm = tl->name[e];
        if (nm > n_str)
            continue;
        name_hit *h = &hits[nm];
        if (h->level == -2)
            match_name(s, tl_str(tl, nm), h);
        if (h->level < 0)
            continue;
        uint32_t pick = h->cand[0];
        if (h->n_cand > 1) {
            tl_arg a;
            int64_t gr = tl_arg_by_id(tl, e, kgrid, &a) && a.type == TL_ARG_INT ? a.v.i : 0;
            int64_t bl = tl_arg_by_id(tl, e, kblock, &a) && a.type == TL_ARG_INT ? a.v.i : 0;
            for (int c = 0; c < h->n_cand; c++) {
                const rgroup *g = &s->g[h->cand[c]];
                if ((!gr || !g->grid || gr == g->grid) && (!bl || !g->block || bl == g->block)) {
                    pick = h->cand[c];
                    break;
                }
            }
        }
        rgroup *g = &s->g[pick];
        g->trace_count++;
        g->trace_ns += (double)tl->dur_ns[e];
        if (h->level > g->match_level)
            g->match_level = h->level;
    }
    free(hits);
    free(rank_seen);
}

/* ---- findings ---------------------------------------------------------- */

/* The time basis of the gains: with a trace the mean step time over ranks
 * and each group's trace time per rank; without one the profiled kernels'
 * total duration and each group's profiled time. */
typedef struct basis {
    bool trace;
    double base_ns;
} basis;

static basis basis_of(const rstate *s)
{
    basis b = {false, 0};
    const an_layers_result *lr = s->ctx->results[AN_layers];
    if (lr && lr->n_ranks) {
        double step = 0;
        for (size_t i = 0; i < lr->n_ranks; i++)
            step += (double)lr->ranks[i].total.dur_ns;
        step /= (double)lr->n_ranks;
        if (step > 0) {
            b.trace = true;
            b.base_ns = step;
            return b;
        }
    }
    for (size_t i = 0; i < s->n; i++)
        b.base_ns += nz(s->k[i].l->v[EV_NCU_DURATION_NS]);
    return b;
}

/* A group's time on the basis (ns); 0 when the trace has none of it. */
static double group_ns(const rstate *s, const basis *b, const rgroup *g)
{
    if (!b->trace)
        return g->profiled_ns;
    return s->ranks_with_kernels ? g->trace_ns / (double)s->ranks_with_kernels : 0;
}

/* ncu's own estimated speedup (%) of a rule whose name or text says `what`. */
static double ncu_speedup(const ev_ncu_launch *l, const char *what)
{
    double best = NAN;
    for (int i = 0; i < l->n_rules; i++) {
        const ev_ncu_rule *r = &l->rules[i];
        if ((strstr(r->name, what) || cp_str_icontains(r->text, what)) && r->speedup_pct > nz(best))
            best = r->speedup_pct;
    }
    return best;
}

static void cite(const rstate *s, an_finding *x, const rk *k, const rgroup *g, const basis *b)
{
    const ev_ncu_launch *l = k->l;
    long id = l->id >= 0 ? l->id : (long)(l - k->file->as.ncu->launches); /* text: the order in the file */
    an_finding_evidence(x, "%s:%u: ncu launch %ld %.120s (grid %lld, block %lld)", k->file->path, l->line, id,
                        l->name, (long long)g->grid, (long long)g->block);
    an_finding_evidence(x, "class %s: %s", k->cls ? k->cls : "unknown", k->why);
    if (!isnan(k->roof_pct))
        an_finding_evidence(x, "%.3g FLOP/s (%s) of %.3g attainable (peak %.3g FLOP/s from %s, AI %.3g FLOP/byte)",
                            k->flops_per_s, k->prec >= 0 ? k_prec[k->prec] : "?", k->attainable, k->peak_flops,
                            k->peak_flops_src ? k->peak_flops_src : "?", k->ai);
    if (!isnan(l->v[EV_NCU_ACHIEVED_OCC_PCT]) || !isnan(l->v[EV_NCU_THEORETICAL_OCC_PCT]))
        an_finding_evidence(x, "occupancy %.1f %% achieved of %.1f %% theoretical%s%s", l->v[EV_NCU_ACHIEVED_OCC_PCT],
                            l->v[EV_NCU_THEORETICAL_OCC_PCT], k->limiter ? ", limited by " : "",
                            k->limiter ? k->limiter : "");
    if (k->stall)
        an_finding_evidence(x, "top warp stall: %s (%.1f cycles per issued instruction, %.0f %%)", k->stall->reason,
                            k->stall->cycles, k->stall_pct);
    if (b->trace)
        an_finding_evidence(x, "in the trace: %lld launches, %.3f ms per rank (%s match)", (long long)g->trace_count,
                            group_ns(s, b, g) / 1e6, g->match_level >= 0 ? k_level[g->match_level] : "no");
}

static void assume(char *buf, size_t cap, const basis *b, double ns, const char *how)
{
    snprintf(buf, cap, "%s; the kernel takes %.3f ms of %s %.3f ms", how, ns / 1e6,
             b->trace ? "the traced steps' (mean over ranks)" : "the profiled kernels' (no trace given)",
             b->base_ns / 1e6);
}

/* One finding per group at most: the first rule that applies to its first
 * launch (its class decides). */
static void group_finding(const rstate *s, const basis *b, const rgroup *g, an_findings_result *out)
{
    const rk *k = &s->k[g->first];
    const ev_ncu_launch *l = k->l;
    double ns = group_ns(s, b, g);
    if (!(b->base_ns > 0) || 100 * ns / b->base_ns < AN_ROOF_MIN_SHARE_PCT || !k->cls)
        return;
    char title[240], as[400];
    double share = 100 * ns / b->base_ns, gain = NAN;
    const char *code = NULL, *rec = NULL;
    double roof = g->roof_pct / 100;
    double dram_pct = l->v[EV_NCU_DRAM_PCT];
    if (!strcmp(k->cls, "memory_bound") && dram_pct >= AN_ROOF_SOL_NEAR_PCT &&
        (k->ai < AN_ROOF_FUSION_MAX_AI || isnan(k->flops))) {
        code = "KERNEL_MEMORY_FUSION";
        gain = share;
        snprintf(title, sizeof title, "%.60s streams DRAM at %.0f %% of peak %s: fusing it removes its pass over "
                 "DRAM", l->name, dram_pct, isnan(k->ai) ? "(no FLOP counters)" : "doing elementwise work");
        assume(as, sizeof as, b, ns, "fused into the kernel that produces or consumes its data, its own read and write of "
               "DRAM go (upper bound: all of its time)");
        rec = "fuse it with its neighbour (torch.compile, a fused kernel or epilogue fusion in the GEMM); an "
              "elementwise kernel already at DRAM peak cannot be made faster on its own";
    } else if (!strcmp(k->cls, "small_grid")) {
        double waves = l->v[EV_NCU_WAVES_PER_SM];
        code = "KERNEL_SMALL_GRID";
        gain = share * (1 - waves);
        snprintf(title, sizeof title, "%.60s launches %.2f waves of blocks: %.0f %% of the SMs idle", l->name, waves,
                 100 * (1 - waves));
        assume(as, sizeof as, b, ns, "with enough blocks to fill every SM its work spreads over all of them");
        rec = "give the kernel more blocks: a larger batch per launch, split-K or stream-K for GEMMs, smaller tiles, "
              "or run independent kernels concurrently on streams";
    } else if ((!strcmp(k->cls, "compute_bound") || !strcmp(k->cls, "latency_bound") ||
                !strcmp(k->cls, "tail_effect")) && roof < AN_ROOF_TARGET_FRAC) {
        code = "KERNEL_BELOW_ROOFLINE";
        gain = share * (1 - roof / AN_ROOF_TARGET_FRAC);
        snprintf(title, sizeof title, "%.60s reaches %.0f %% of its roofline (%s)", l->name, 100 * roof,
                 k->prec >= 0 ? k_prec[k->prec] : "?");
        char how[200];
        snprintf(how, sizeof how, "a tuned kernel reaches %.0f %% of its attainable FLOP/s", 100 * AN_ROOF_TARGET_FRAC);
        assume(as, sizeof as, b, ns, how);
        rec = "use the library's tuned kernel for this shape and precision (cuBLASLt heuristics, CUTLASS profiler), "
              "tensor cores for the matmuls (bf16/fp16/tf32), shapes that are multiples of the tile sizes";
    } else if (!strcmp(k->cls, "occupancy_limited")) {
        double sp = ncu_speedup(l, "ccupancy");
        code = "KERNEL_OCCUPANCY_LIMITED";
        gain = isnan(sp) ? NAN : share * sp / 100;
        snprintf(title, sizeof title, "%.60s runs at %.0f %% theoretical occupancy, limited by %s", l->name,
                 l->v[EV_NCU_THEORETICAL_OCC_PCT], k->limiter ? k->limiter : "?");
        if (isnan(sp))
            snprintf(as, sizeof as, "no estimate: ncu gave no speedup for its occupancy rule");
        else {
            char how[200];
            snprintf(how, sizeof how, "ncu's own estimated speedup of its occupancy rule, %.1f %% of the kernel's time", sp);
            assume(as, sizeof as, b, ns, how);
        }
        rec = "raise occupancy: fewer registers per thread (__launch_bounds__, maxrregcount), less shared memory per "
              "block, or a block size that fits more blocks per SM";
    }
    if (!code)
        return;
    an_finding *x = an_finding_add(out, code, CP_LAYER_COMPUTE, gain, title, rec, as);
    cite(s, x, k, g, b);
}

/* ---- report ------------------------------------------------------------ */

static const rep_col k_cols[] = {
    {"id", "id", NULL, 0}, {"name", "kernel", NULL, -1}, {"file", "file", NULL, -1}, {"line", "line", NULL, 0},
    {"grid", "blocks", NULL, 0}, {"block", "threads/block", NULL, 0},
    {"duration_ns", "duration", "ns", 0}, {"flops", "FLOPs", "FLOP", -1},
    {"flops_precision", "mostly", NULL, -1}, {"flops_per_s", "achieved", "FLOP/s", -1},
    {"fp64_flops_per_s", "FP64", "FLOP/s", -1}, {"fp32_flops_per_s", "FP32", "FLOP/s", -1},
    {"fp16_flops_per_s", "FP16", "FLOP/s", -1}, {"tensor_flops_per_s", "tensor", "FLOP/s", -1},
    {"dram_bytes", "DRAM bytes", "bytes", 0}, {"l2_bytes", "L2 bytes", "bytes", 0},
    {"l1_bytes", "L1 bytes", "bytes", 0}, {"dram_bytes_per_s", "DRAM throughput", "bytes/s", -1},
    {"l2_bytes_per_s", "L2 throughput", "bytes/s", -1}, {"l1_bytes_per_s", "L1 throughput", "bytes/s", -1},
    {"l2_throughput_pct", "L2 of peak", "%", 1}, {"l1_throughput_pct", "L1 of peak", "%", 1},
    {"arithmetic_intensity", "FLOP/byte", NULL, 3}, {"peak_flops_per_s", "peak", "FLOP/s", -1},
    {"peak_flops_source", "peak from", NULL, -1}, {"peak_dram_bytes_per_s", "peak DRAM", "bytes/s", -1},
    {"peak_dram_source", "bandwidth from", NULL, -1}, {"attainable_flops_per_s", "attainable", "FLOP/s", -1},
    {"roofline_pct", "of roofline", "%", 1}, {"dram_peak_pct", "of DRAM peak", "%", 1},
    {"sol_sm_pct", "SM SOL", "%", 1}, {"sol_memory_pct", "memory SOL", "%", 1},
    {"achieved_occupancy_pct", "occupancy", "%", 1}, {"theoretical_occupancy_pct", "theoretical", "%", 1},
    {"occupancy_limiter", "limited by", NULL, -1}, {"waves_per_sm", "waves", NULL, 2},
    {"class", "class", NULL, -1}, {"class_reason", "why", NULL, -1},
    {"top_stall", "top warp stall", NULL, -1}, {"top_stall_cycles", "its cycles per issue", NULL, 1},
    {"top_stall_pct", "its share", "%", 1},
    {"ncu_top_rule", "ncu's top rule", NULL, -1}, {"ncu_top_rule_speedup_pct", "its estimated speedup", "%", 1},
    {"trace_launches", "trace launches", NULL, 0}, {"trace_time_ns", "trace time", "ns", 0},
    {"trace_compute_pct", "of trace compute", "%", 1}, {"matched_by", "matched by", NULL, -1},
};

/* ncu's own advice with the largest estimated speedup (rules without one
 * do not count). */
static const ev_ncu_rule *top_rule(const ev_ncu_launch *l)
{
    const ev_ncu_rule *best = NULL;
    for (int i = 0; i < l->n_rules; i++)
        if (l->rules[i].speedup_pct > 0 && (!best || l->rules[i].speedup_pct > best->speedup_pct))
            best = &l->rules[i];
    return best;
}

static void cell_num(rep_report *r, rep_node *row, double v)
{
    if (isnan(v))
        rep_cell_null(r, row);
    else
        rep_cell_num(r, row, v);
}

static void cell_str(rep_report *r, rep_node *row, const char *v)
{
    if (v)
        rep_cell_str(r, row, v);
    else
        rep_cell_null(r, row);
}

static void put_table(const rstate *s, rep_report *r)
{
    rep_node *t = rep_table(r, r->root, "kernels_roofline", "kernels on their roofline (Nsight Compute)", k_cols,
                            CP_ARRAY_LEN(k_cols));
    for (size_t i = 0; i < s->n; i++) {
        const rk *k = &s->k[i];
        const ev_ncu_launch *l = k->l;
        const rgroup *g = &s->g[k->group];
        rep_node *row = rep_row(r, t);
        rep_cell_int(r, row, l->id >= 0 ? l->id : (int64_t)(l - k->file->as.ncu->launches));
        rep_cell_str(r, row, l->name);
        rep_cell_str(r, row, k->file->path);
        rep_cell_int(r, row, l->line);
        if (g->grid) rep_cell_int(r, row, g->grid); else rep_cell_null(r, row);
        if (g->block) rep_cell_int(r, row, g->block); else rep_cell_null(r, row);
        cell_num(r, row, l->v[EV_NCU_DURATION_NS]);
        cell_num(r, row, k->flops);
        cell_str(r, row, k->prec >= 0 ? (k->prec == P_TENSOR && k->tensor_dtype ? k->tensor_dtype : k_prec[k->prec])
                                      : NULL);
        cell_num(r, row, k->flops_per_s);
        double dur_s = l->v[EV_NCU_DURATION_NS] / 1e9;
        for (int p = 0; p < P__N; p++)
            cell_num(r, row, dur_s > 0 ? k->flops_p[p] / dur_s : NAN);
        cell_num(r, row, k->dram_bytes);
        cell_num(r, row, k->l2_bytes);
        cell_num(r, row, k->l1_bytes);
        cell_num(r, row, k->dram_bps);
        cell_num(r, row, dur_s > 0 ? k->l2_bytes / dur_s : NAN);
        cell_num(r, row, dur_s > 0 ? k->l1_bytes / dur_s : NAN);
        cell_num(r, row, l->v[EV_NCU_L2_PCT]);
        cell_num(r, row, l->v[EV_NCU_L1_PCT]);
        cell_num(r, row, k->ai);
        cell_num(r, row, k->peak_flops);
        cell_str(r, row, k->peak_flops_src);
        cell_num(r, row, k->peak_bw);
        cell_str(r, row, k->peak_bw_src);
        cell_num(r, row, k->attainable);
        cell_num(r, row, k->roof_pct);
        cell_num(r, row, k->bw_pct);
        cell_num(r, row, l->v[EV_NCU_SOL_SM_PCT]);
        cell_num(r, row, l->v[EV_NCU_SOL_MEMORY_PCT]);
        cell_num(r, row, l->v[EV_NCU_ACHIEVED_OCC_PCT]);
        cell_num(r, row, l->v[EV_NCU_THEORETICAL_OCC_PCT]);
        cell_str(r, row, k->limiter);
        cell_num(r, row, l->v[EV_NCU_WAVES_PER_SM]);
        cell_str(r, row, k->cls);
        rep_cell_str(r, row, k->why);
        cell_str(r, row, k->stall ? k->stall->reason : NULL);
        cell_num(r, row, k->stall ? k->stall->cycles : NAN);
        cell_num(r, row, k->stall_pct);
        const ev_ncu_rule *tr = top_rule(l);
        cell_str(r, row, tr ? (tr->name[0] ? tr->name : tr->text) : NULL);
        cell_num(r, row, tr ? tr->speedup_pct : NAN);
        bool traced = s->ctx->tl && s->ctx->tl->n_events;
        if (traced) {
            rep_cell_int(r, row, g->trace_count);
            rep_cell_int(r, row, (int64_t)g->trace_ns);
            cell_num(r, row, s->trace_compute_ns > 0 ? 100 * g->trace_ns / s->trace_compute_ns : NAN);
            cell_str(r, row, g->match_level >= 0 ? k_level[g->match_level] : NULL);
        } else {
            for (int c = 0; c < 4; c++)
                rep_cell_null(r, row);
        }
    }
}

/* The trace's compute time the profiled kernels cover, and the GPU. */
static void put_summary(const rstate *s, rep_report *r)
{
    rep_node *o = rep_obj(r, r->root, "roofline", "kernel roofline (Nsight Compute joined with the trace)");
    rep_int(r, o, "profiled_launches", "profiled launches", (int64_t)s->n, NULL);
    rep_int(r, o, "profiled_kernels", "distinct kernels (name, grid, block)", (int64_t)s->ng, NULL);
    const hw_gpu *g = s->n ? gpu_of(s, s->k[0].l) : s->gpu;
    if (g)
        rep_str(r, o, "gpu", "GPU (catalog)", g->name);
    else
        rep_null(r, o, "gpu", "GPU (catalog)", NULL);
    double matched = 0;
    int64_t launches = 0;
    for (size_t j = 0; j < s->ng; j++)
        matched += s->g[j].trace_ns, launches += s->g[j].trace_count;
    if (s->trace_compute_ns > 0) {
        rep_int(r, o, "trace_kernels_matched", "trace kernel launches matched", launches, NULL);
        rep_num(r, o, "trace_compute_covered_pct", "trace compute time of the profiled kernels",
                100 * matched / s->trace_compute_ns, "%");
    } else {
        rep_null(r, o, "trace_kernels_matched", "trace kernel launches matched", NULL);
        rep_null(r, o, "trace_compute_covered_pct", "trace compute time of the profiled kernels", "%");
    }
}

static void free_result(void *self)
{
    an_findings_result *o = self;
    free(o->v);
    free(o);
}

int an_roofline_run(an_ctx *ctx)
{
    an_findings_result *out = cp_xcalloc(1, sizeof *out);
    out->free = free_result;
    ctx->results[AN_roofline] = out;
    const ev_set *set = ctx->opts ? ctx->opts->evidence : NULL;
    if (!set || !ev_count(set, EV_NCU))
        return 0;
    if (an_dist_give_up(ctx, AN_roofline)) /* the join needs every rank's kernels */
        return 0;
    rstate s = {.ctx = ctx};
    const an_job_result *job = ctx->results[AN_job];
    s.gpu = job ? job->gpu : NULL;
    for (const ev_file *f = ev_next(set, EV_NCU, NULL); f; f = ev_next(set, EV_NCU, f))
        s.n += f->as.ncu->n;
    s.k = cp_xcalloc(s.n + 1, sizeof *s.k);
    size_t i = 0;
    for (const ev_file *f = ev_next(set, EV_NCU, NULL); f; f = ev_next(set, EV_NCU, f))
        for (size_t j = 0; j < f->as.ncu->n; j++, i++) {
            s.k[i].file = f;
            s.k[i].l = &f->as.ncu->launches[j];
            work(&s.k[i]);
            ceilings(&s, &s.k[i]);
            classify(&s.k[i]);
            top_stall(&s.k[i]);
        }
    group_launches(&s);
    join(&s);
    put_summary(&s, ctx->rep);
    put_table(&s, ctx->rep);
    basis b = basis_of(&s);
    for (size_t j = 0; j < s.ng; j++)
        group_finding(&s, &b, &s.g[j], out);
    for (size_t j = 0; j < s.ng; j++)
        free(s.g[j].nfull), free(s.g[j].nsig), free(s.g[j].nbase);
    free(s.g);
    free(s.k);
    return 0;
}
