/* an_evidence_dmon.c - the evidence rules over `nvidia-smi dmon` and
 * `dcgmi dmon` samples (rd_dmon.h): how busy the GPUs were and what held
 * them back, per GPU (entity), from the per-entity column statistics and the
 * samples themselves. Part of the evidence analyzer (an_evidence.c, which
 * calls an_ev_dmon per file); thresholds and codes in docs/METRICS.md
 * ("Findings from evidence files", dmon).
 *
 * Design
 * - Columns are looked up by the names the tools print (nvidia-smi: sm,
 *   mem, temp/gtemp, pviol, tviol, rxpci/txpci in MB/s; dcgmi: GPUTL,
 *   SMACT, DRAMA, TMPTR, PCITX/PCIRX in B/s). A rule whose columns are
 *   absent is silent: an older driver or another field list is no finding.
 * - "Kernel running" utilisation (nvidia-smi `sm`, dcgmi GPUTL) counts the
 *   time any kernel runs, however few SMs it fills; dcgmi SMACT is the
 *   fraction of SMs with work. A gap between the two (busy GPU, idle SMs)
 *   is its own finding: small kernels, small batches, launch gaps.
 * - Samples say how busy a GPU was, not how long a step took: the gain is
 *   null, and gain_assumption says why.
 * - One finding per rule per file, naming the worst GPU and counting the
 *   others, so a 64-GPU dmon does not print 64 copies.
 */
#include "an_verdict.h"
#include "../base/util.h"
#include "../readers/rd_dmon.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Thresholds (docs/METRICS.md). */
#define DM_LOW_UTIL_PCT 50.0      /* mean kernel-running utilisation below: low */
#define DM_VERY_LOW_UTIL_PCT 30.0 /* ... below: medium */
#define DM_BUSY_UTIL_PCT 50.0     /* SM-gap rule: the GPU counts as busy at or above */
#define DM_SM_GAP_PTS 15.0        /* mean utilisation minus mean SMACT (points): low */
#define DM_SM_GAP_BIG_PTS 30.0    /* ... medium */
#define DM_HOT_C 83.0             /* max temperature at or above: low */
#define DM_DRAM_BUSY 0.6          /* mean DRAMA at or above (fraction of cycles) */
#define DM_MEMCTL_BUSY_PCT 80.0   /* mean nvidia-smi `mem` at or above */
#define DM_PCIE_BUSY_BPS 12e9     /* mean PCIe rx or tx at or above (B/s): 76 % of gen3 x16 */

static const char *const NO_GAIN =
    "not measurable from dmon samples alone: they say how busy the GPU was, not how long the job's steps took "
    "(analyze its traces)";

typedef struct dmon_ctx {
    const rd_dmon *d;
    const char *path;
    an_evidence_result *out;
} dmon_ctx;

/* First of the names that is a column of the file, or -1. */
static int col_any(const rd_dmon *d, const char *const *names)
{
    for (; *names; names++) {
        int c = rd_dmon_col_find(d, *names);
        if (c >= 0)
            return c;
    }
    return -1;
}

static double emean(const rd_dmon *d, size_t e, int c)
{
    const rd_dmon_stat *s = c >= 0 ? rd_dmon_stat_of(d, e, (size_t)c) : NULL;
    return s && s->n ? s->mean : NAN;
}

static double emax(const rd_dmon *d, size_t e, int c)
{
    const rd_dmon_stat *s = c >= 0 ? rd_dmon_stat_of(d, e, (size_t)c) : NULL;
    return s && s->n ? s->max : NAN;
}

/* First sample line of entity e (for citing a per-GPU mean). */
static uint32_t first_line(const rd_dmon *d, size_t e)
{
    for (size_t s = 0; s < d->n_samples; s++)
        if (d->samples[s].entity == e)
            return d->samples[s].line;
    return d->first_header_line;
}

/* The entity that minimises (sign -1) or maximises (sign +1) metric(e),
 * with how many entities meet the rule's condition. */
typedef double (*dm_metric)(const rd_dmon *d, size_t e, const int *cols);
typedef bool (*dm_cond)(double v);

static int pick(const rd_dmon *d, dm_metric m, const int *cols, dm_cond cond, int sign, double *best, int *hits)
{
    int at = -1;
    *hits = 0;
    *best = NAN;
    for (size_t e = 0; e < d->n_entities; e++) {
        double v = m(d, e, cols);
        if (!isfinite(v) || !cond(v))
            continue;
        (*hits)++;
        if (at < 0 || sign * v > sign * *best) {
            at = (int)e;
            *best = v;
        }
    }
    return at;
}

/* "GPU 2" for both flavours (nvidia-smi prints the index, dcgmi "GPU 2"). */
typedef struct dm_label {
    char s[48];
} dm_label;

static dm_label ent(const rd_dmon *d, size_t e)
{
    dm_label l;
    const char *n = d->entities[e].name;
    snprintf(l.s, sizeof l.s, "%s%s", n[0] >= '0' && n[0] <= '9' ? "GPU " : "", n);
    return l;
}

static const char *util_name(const rd_dmon *d, int c) { return c >= 0 ? d->cols[c].name : "?"; }

static void also(an_finding *x, const dmon_ctx *k, int hits, const char *what)
{
    if (hits > 1)
        an_finding_evidence(x, "%s: %d of %zu GPUs %s", k->path, hits, k->d->n_entities, what);
}

static an_finding *dm_add(const dmon_ctx *k, const char *code, cp_layer layer, an_severity sev, const char *title,
                          const char *rec)
{
    an_finding *x = an_finding_add(k->out, code, layer, NAN, title, rec, NO_GAIN);
    x->severity = sev;
    return x;
}

/* ---- low utilisation: the GPU runs no kernel most of the time ---- */

static double m_util(const rd_dmon *d, size_t e, const int *cols) { return emean(d, e, cols[0]); }
static bool is_low_util(double v) { return v < DM_LOW_UTIL_PCT; }

static void r_low_util(const dmon_ctx *k, int c_util)
{
    const rd_dmon *d = k->d;
    int cols[] = { c_util }, hits;
    double v;
    int e = pick(d, m_util, cols, is_low_util, -1, &v, &hits);
    if (e < 0)
        return;
    char t[160];
    snprintf(t, sizeof t, "%s runs kernels only %.0f %% of the time (%s, mean of %u sample%s)",
             ent(d, (size_t)e).s, v, util_name(d, c_util), rd_dmon_stat_of(d, (size_t)e, (size_t)c_util)->n,
             rd_dmon_stat_of(d, (size_t)e, (size_t)c_util)->n == 1 ? "" : "s");
    an_severity sev = v < DM_VERY_LOW_UTIL_PCT ? AN_SEV_MEDIUM : AN_SEV_LOW;
    an_finding *x = dm_add(k, "DMON_LOW_UTIL", CP_LAYER_COMPUTE, sev, t,
                      "the GPU waits for something else most of the time: profile a few steps "
                      "(PyTorch profiler, nsys) and analyze the traces to see which layer - data "
                      "loading, host launches, communication, checkpoints - leaves it idle");
    an_finding_evidence(x, "%s:%u: %s: %s between %.0f and %.0f %%", k->path, first_line(d, (size_t)e),
                        ent(d, (size_t)e).s, util_name(d, c_util), rd_dmon_stat_of(d, (size_t)e, (size_t)c_util)->min,
                        emax(d, (size_t)e, c_util));
    also(x, k, hits, "run kernels less than half of the time");
}

/* ---- busy GPU, idle SMs (dcgmi GPUTL vs SMACT) ---- */

static double m_sm_gap(const rd_dmon *d, size_t e, const int *cols)
{
    double util = emean(d, e, cols[0]), smact = emean(d, e, cols[1]);
    return util >= DM_BUSY_UTIL_PCT ? util - 100 * smact : NAN;
}
static bool is_sm_gap(double v) { return v >= DM_SM_GAP_PTS; }

static void r_sm_gap(const dmon_ctx *k, int c_util, int c_smact)
{
    const rd_dmon *d = k->d;
    int cols[] = { c_util, c_smact }, hits;
    double gap;
    int e = pick(d, m_sm_gap, cols, is_sm_gap, +1, &gap, &hits);
    if (e < 0)
        return;
    double util = emean(d, (size_t)e, c_util), smact = 100 * emean(d, (size_t)e, c_smact);
    char t[160];
    snprintf(t, sizeof t, "%s is busy %.0f %% of the time (%s) but its SMs are active only %.0f %% (SMACT)",
             ent(d, (size_t)e).s, util, util_name(d, c_util), smact);
    an_severity sev = gap >= DM_SM_GAP_BIG_PTS ? AN_SEV_MEDIUM : AN_SEV_LOW;
    an_finding *x = dm_add(k, "DMON_SM_IDLE_WHILE_BUSY", CP_LAYER_COMPUTE, sev, t,
                      "kernels run but leave SMs idle (small kernels or batches, launch gaps between "
                      "short kernels): give each kernel more work - larger batches, more concurrent "
                      "requests or model instances, CUDA graphs, fused kernels; GPU utilisation alone "
                      "overstates how busy the SMs are");
    /* the sample with the widest gap */
    size_t worst = 0;
    double wg = -INFINITY;
    for (size_t s = 0; s < d->n_samples; s++) {
        double g = rd_dmon_value(d, s, (size_t)c_util) - 100 * rd_dmon_value(d, s, (size_t)c_smact);
        if (d->samples[s].entity == (uint32_t)e && isfinite(g) && g > wg) {
            wg = g;
            worst = s;
        }
    }
    an_finding_evidence(x, "%s:%u: %s: mean %s %.1f %%, mean SMACT %.3f: %.0f points apart", k->path,
                        first_line(d, (size_t)e), ent(d, (size_t)e).s, util_name(d, c_util), util, smact / 100, gap);
    if (isfinite(wg))
        an_finding_evidence(x, "%s:%u: widest sample: %s %.0f %%, SMACT %.3f", k->path, d->samples[worst].line,
                            util_name(d, c_util), rd_dmon_value(d, worst, (size_t)c_util),
                            rd_dmon_value(d, worst, (size_t)c_smact));
    also(x, k, hits, "show the gap");
}

/* ---- power / thermal capping ---- */

static void r_throttle(const dmon_ctx *k, int c_pviol, int c_tviol)
{
    const rd_dmon *d = k->d;
    size_t n = 0, first = 0;
    for (size_t s = 0; s < d->n_samples; s++) {
        double p = c_pviol >= 0 ? rd_dmon_value(d, s, (size_t)c_pviol) : NAN;
        double th = c_tviol >= 0 ? rd_dmon_value(d, s, (size_t)c_tviol) : NAN;
        if (!((isfinite(p) && p > 0) || (isfinite(th) && th > 0)))
            continue;
        if (!n++)
            first = s;
    }
    if (!n)
        return;
    const rd_dmon_sample *f = &d->samples[first];
    char t[160];
    snprintf(t, sizeof t, "GPU clocks are capped by power or temperature in %zu of %zu samples", n, d->n_samples);
    an_finding *x = dm_add(k, "DMON_THROTTLED", CP_LAYER_COMPUTE, AN_SEV_MEDIUM, t,
                      "check cooling and airflow, the power limit (nvidia-smi -q -d POWER,PERFORMANCE "
                      "shows the clock event reasons) and the node's power budget; a capped GPU "
                      "becomes the straggler every collective waits for");
    an_finding_evidence(x, "%s:%u: %s: pviol %g %%, tviol %g", k->path, f->line, ent(d, f->entity).s,
                        c_pviol >= 0 ? rd_dmon_value(d, first, (size_t)c_pviol) : NAN,
                        c_tviol >= 0 ? rd_dmon_value(d, first, (size_t)c_tviol) : NAN);
}

/* ---- hot GPU ---- */

static double m_temp(const rd_dmon *d, size_t e, const int *cols) { return emax(d, e, cols[0]); }
static bool is_hot(double v) { return v >= DM_HOT_C; }

static void r_hot(const dmon_ctx *k, int c_temp)
{
    const rd_dmon *d = k->d;
    int cols[] = { c_temp }, hits;
    double v;
    int e = pick(d, m_temp, cols, is_hot, +1, &v, &hits);
    if (e < 0)
        return;
    char t[160];
    snprintf(t, sizeof t, "%s reaches %.0f C", ent(d, (size_t)e).s, v);
    an_finding *x = dm_add(k, "DMON_HOT", CP_LAYER_COMPUTE, AN_SEV_LOW, t,
                      "at the maximum operating temperature of many data-centre GPUs the clocks "
                      "drop: check fans, airflow and inlet temperature, and watch pviol/tviol or the "
                      "clock event reasons (nvidia-smi -q -d PERFORMANCE)");
    for (size_t s = 0; s < d->n_samples; s++)
        if (d->samples[s].entity == (uint32_t)e && rd_dmon_value(d, s, (size_t)c_temp) == v) {
            an_finding_evidence(x, "%s:%u: %s: %s %.0f C", k->path, d->samples[s].line, ent(d, (size_t)e).s,
                                d->cols[c_temp].name, v);
            break;
        }
    also(x, k, hits, "reach 83 C or more");
}

/* ---- memory-bound kernels ---- */

static double m_mean(const rd_dmon *d, size_t e, const int *cols) { return emean(d, e, cols[0]); }
static bool is_dram(double v) { return v >= DM_DRAM_BUSY; }
static bool is_memctl(double v) { return v >= DM_MEMCTL_BUSY_PCT; }

static void r_mem_bound(const dmon_ctx *k, int c_drama, int c_memctl)
{
    const rd_dmon *d = k->d;
    int cols[] = { c_drama >= 0 ? c_drama : c_memctl }, hits;
    if (cols[0] < 0)
        return;
    double v;
    dm_cond cond = c_drama >= 0 ? is_dram : is_memctl;
    int e = pick(d, m_mean, cols, cond, +1, &v, &hits);
    if (e < 0)
        return;
    char t[160];
    if (c_drama >= 0)
        snprintf(t, sizeof t, "%s: DRAM interface active %.0f %% of cycles (DRAMA): memory-bandwidth-bound",
                 ent(d, (size_t)e).s, 100 * v);
    else
        snprintf(t, sizeof t, "%s: memory busy %.0f %% of the time (mem): memory-bandwidth-bound",
                 ent(d, (size_t)e).s, v);
    an_finding *x = dm_add(k, "DMON_MEMORY_BOUND", CP_LAYER_COMPUTE, AN_SEV_LOW, t,
                      "the kernels wait on HBM/GDDR bandwidth, not on the SMs: fuse element-wise "
                      "ops (torch.compile), use lower-precision activations/weights, FlashAttention, "
                      "larger batches for better reuse");
    an_finding_evidence(x, "%s:%u: %s: mean %s %.3g over %u samples", k->path, first_line(d, (size_t)e),
                        ent(d, (size_t)e).s, d->cols[cols[0]].name, v,
                        rd_dmon_stat_of(d, (size_t)e, (size_t)cols[0])->n);
    also(x, k, hits, "are above the threshold");
}

/* ---- PCIe near saturation ---- */

static double m_pcie(const rd_dmon *d, size_t e, const int *cols)
{
    /* cols: rx, tx, and 1 when the unit is MB/s (nvidia-smi) else B/s */
    double scale = cols[2] ? 1e6 : 1;
    double rx = emean(d, e, cols[0]) * scale, tx = emean(d, e, cols[1]) * scale;
    if (!isfinite(rx))
        return tx;
    return isfinite(tx) && tx > rx ? tx : rx;
}
static bool is_pcie(double v) { return v >= DM_PCIE_BUSY_BPS; }

static void r_pcie(const dmon_ctx *k, int c_rx, int c_tx, bool mbps)
{
    const rd_dmon *d = k->d;
    int cols[] = { c_rx, c_tx, mbps ? 1 : 0 }, hits;
    double v;
    int e = pick(d, m_pcie, cols, is_pcie, +1, &v, &hits);
    if (e < 0)
        return;
    char t[160];
    snprintf(t, sizeof t, "%s moves %.1f GB/s over PCIe on average (near a gen3 x16 link's 15.75 GB/s)",
             ent(d, (size_t)e).s, v / 1e9);
    an_finding *x = dm_add(k, "DMON_PCIE_BUSY", CP_LAYER_INTRA, AN_SEV_LOW, t,
                      "host-device traffic is near what a PCIe 3.0 x16 link carries: check the link "
                      "(nvidia-smi -q: PCIe generation and width), pin host memory, keep data on the "
                      "GPU across steps, and on gen4/gen5 links this rate has headroom");
    an_finding_evidence(x, "%s:%u: %s: mean PCIe %s %.2f GB/s", k->path, first_line(d, (size_t)e),
                        ent(d, (size_t)e).s, mbps ? "rx/tx (MB/s columns)" : "rx/tx (B/s columns)", v / 1e9);
    also(x, k, hits, "are above 12 GB/s");
}

void an_ev_dmon(an_ctx *ctx, an_evidence_result *out, const char *path, const void *facts, rep_node *e)
{
    const rd_dmon *d = facts;
    dmon_ctx k = { .d = d, .path = path, .out = out };
    static const char *const util_names[] = { "GPUTL", "sm", NULL };
    static const char *const smact_names[] = { "SMACT", NULL };
    static const char *const temp_names[] = { "gtemp", "temp", "TMPTR", NULL };
    static const char *const drama_names[] = { "DRAMA", NULL };
    static const char *const memctl_names[] = { "mem", "MCUTL", NULL };
    int c_util = col_any(d, util_names), c_smact = col_any(d, smact_names);
    rep_report *rp = ctx->rep;
    rep_int(rp, e, "entities", "entities (GPUs, MIG instances)", (int64_t)d->n_entities, NULL);
    rep_int(rp, e, "samples", "samples", (int64_t)d->n_samples, NULL);
    if (c_util >= 0) {
        r_low_util(&k, c_util);
        if (c_smact >= 0)
            r_sm_gap(&k, c_util, c_smact);
    }
    static const char *const pviol[] = { "pviol", NULL }, *const tviol[] = { "tviol", NULL };
    int c_pv = col_any(d, pviol), c_tv = col_any(d, tviol);
    if (c_pv >= 0 || c_tv >= 0)
        r_throttle(&k, c_pv, c_tv);
    int c_temp = col_any(d, temp_names);
    if (c_temp >= 0)
        r_hot(&k, c_temp);
    r_mem_bound(&k, col_any(d, drama_names), col_any(d, memctl_names));
    /* nvidia-smi prints PCIe MB/s, dcgmi bytes per second */
    static const char *const smi_rx[] = { "rxpci", NULL }, *const smi_tx[] = { "txpci", NULL };
    static const char *const dc_rx[] = { "PCIRX", NULL }, *const dc_tx[] = { "PCITX", NULL };
    int rx = col_any(d, smi_rx), tx = col_any(d, smi_tx);
    if (rx >= 0 || tx >= 0)
        r_pcie(&k, rx, tx, true);
    else if (col_any(d, dc_rx) >= 0 || col_any(d, dc_tx) >= 0)
        r_pcie(&k, col_any(d, dc_rx), col_any(d, dc_tx), false);
}
