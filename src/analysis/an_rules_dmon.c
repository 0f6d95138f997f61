/* an_rules_dmon.c - the rule family over `nvidia-smi dmon` and `dcgmi
 * dmon` samples (model/ev_dmon.h): how busy the GPUs were and what held
 * them back, per GPU (entity), from the per-entity column statistics and the
 * samples themselves. Thresholds and codes in docs/METRICS.md ("Findings
 * from evidence files", dmon).
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
 * - One finding per rule, naming the worst entity and counting the others,
 *   so a 64-GPU dmon does not print 64 copies.
 * - MIG: dcgmi lists GPU instances ("GPU-I n") and compute instances
 *   ("GPU-CI n") as entities of their own; with MIG on, the parent GPU's
 *   whole-device utilisation is not judged (its instances are, each as the
 *   GPU its user sees).
 */
#include "rulebook.h"
#include "../base/util.h"

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
    const ev_dmon *d;
    const ev_file *f;
    rb_ctx *c;
    bool mig;     /* the file has MIG entities (GPU-I, GPU-CI) */
} dmon_ctx;

/* First of the names that is a column of the file, or -1. */
static int col_any(const ev_dmon *d, const char *const *names)
{
    for (; *names; names++) {
        int c = ev_dmon_col_find(d, *names);
        if (c >= 0)
            return c;
    }
    return -1;
}

static double emean(const ev_dmon *d, size_t e, int c)
{
    const ev_dmon_stat *s = c >= 0 ? ev_dmon_stat_of(d, e, (size_t)c) : NULL;
    return s && s->n ? s->mean : NAN;
}

static double emax(const ev_dmon *d, size_t e, int c)
{
    const ev_dmon_stat *s = c >= 0 ? ev_dmon_stat_of(d, e, (size_t)c) : NULL;
    return s && s->n ? s->max : NAN;
}

/* First sample line of entity e (for citing a per-GPU mean). */
static uint32_t first_line(const ev_dmon *d, size_t e)
{
    for (size_t s = 0; s < d->n_samples; s++)
        if (d->samples[s].entity == e)
            return d->samples[s].line;
    return d->first_header_line;
}

/* The entity that minimises (sign -1) or maximises (sign +1) metric(e),
 * with how many entities meet the rule's condition. */
typedef double (*dm_metric)(const ev_dmon *d, size_t e, const int *cols);
typedef bool (*dm_cond)(double v);

static int pick(const dmon_ctx *k, dm_metric m, const int *cols, dm_cond cond, int sign, double *best, int *hits)
{
    const ev_dmon *d = k->d;
    int at = -1;
    *hits = 0;
    *best = NAN;
    for (size_t e = 0; e < d->n_entities; e++) {
        if (k->mig && d->entities[e].mig == EV_DMON_GPU)
            continue; /* with MIG on, the instances are judged, not their parent */
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
    char s[112]; /* entity names are at most 31 bytes */
} dm_label;

static dm_label ent(const ev_dmon *d, size_t e)
{
    dm_label l;
    const char *n = d->entities[e].name;
    int mig = d->entities[e].mig;
    if (mig == EV_DMON_GPU_I || mig == EV_DMON_GPU_CI) /* "GPU-I 1" -> "MIG GPU instance 1 (GPU-I 1)" */
        snprintf(l.s, sizeof l.s, "MIG %s instance %s (%s)", mig == EV_DMON_GPU_I ? "GPU" : "compute",
                 strchr(n, ' ') ? strchr(n, ' ') + 1 : n, n);
    else
        snprintf(l.s, sizeof l.s, "%s%s", n[0] >= '0' && n[0] <= '9' ? "GPU " : "", n);
    return l;
}

static const char *util_name(const ev_dmon *d, int c) { return c >= 0 ? d->cols[c].name : "?"; }

static void also(rb_finding *x, const dmon_ctx *k, int hits, const char *what)
{
    if (hits > 1)
        rb_cite_line(x, k->f, 0, "%d of %zu entities %s", hits, k->d->n_entities, what);
}

static rb_finding *dm_add(const dmon_ctx *k, const rb_rule *r, an_severity sev, const char *title)
{
    rb_finding *x = rb_raise(k->c, r);
    rb_severity(x, sev);
    rb_title(x, "%s", title);
    rb_gain(x, NAN, "%s", NO_GAIN);
    return x;
}

/* ---- low utilisation: the GPU runs no kernel most of the time ---- */

/* cols[1]: 1 for a percent column (sm, GPUTL), 100 for a fraction (GRACT) */
static double m_util(const ev_dmon *d, size_t e, const int *cols) { return cols[1] * emean(d, e, cols[0]); }
static bool is_low_util(double v) { return v < DM_LOW_UTIL_PCT; }

static void r_low_util(const dmon_ctx *k, const rb_rule *r, int c_util, int scale)
{
    const ev_dmon *d = k->d;
    int cols[] = { c_util, scale }, hits;
    double v;
    int e = pick(k, m_util, cols, is_low_util, -1, &v, &hits);
    if (e < 0)
        return;
    char t[240];
    snprintf(t, sizeof t, "%s %s only %.0f %% of the time (%s, mean of %u sample%s)", ent(d, (size_t)e).s,
             scale == 1 ? "runs kernels" : "has its compute engine active", v, util_name(d, c_util), ev_dmon_stat_of(d, (size_t)e, (size_t)c_util)->n,
             ev_dmon_stat_of(d, (size_t)e, (size_t)c_util)->n == 1 ? "" : "s");
    an_severity sev = v < DM_VERY_LOW_UTIL_PCT ? AN_SEV_MEDIUM : AN_SEV_LOW;
    rb_finding *x = dm_add(k, r, sev, t);
    rb_cite_line(x, k->f, first_line(d, (size_t)e), "%s: %s between %.0f and %.0f %%",
                        ent(d, (size_t)e).s, util_name(d, c_util), scale * ev_dmon_stat_of(d, (size_t)e, (size_t)c_util)->min,
                        scale * emax(d, (size_t)e, c_util));
    also(x, k, hits, "run kernels less than half of the time");
    rb_step(x, "profile a few steps (torch.profiler or nsys profile) and run chainprof analyze on the traces: it names the layer the GPU waits for");
    if (d->entities[e].mig != EV_DMON_GPU)
        rb_step(x, "nvidia-smi mig -lgi; nvidia-smi mig -lci   # which job runs on this instance, and whether the instance is sized for it");
}

/* ---- busy GPU, idle SMs (dcgmi GPUTL vs SMACT) ---- */

static double m_sm_gap(const ev_dmon *d, size_t e, const int *cols)
{
    double util = emean(d, e, cols[0]), smact = emean(d, e, cols[1]);
    return util >= DM_BUSY_UTIL_PCT ? util - 100 * smact : NAN;
}
static bool is_sm_gap(double v) { return v >= DM_SM_GAP_PTS; }

static void r_sm_gap(const dmon_ctx *k, const rb_rule *r, int c_util, int c_smact)
{
    const ev_dmon *d = k->d;
    int cols[] = { c_util, c_smact }, hits;
    double gap;
    int e = pick(k, m_sm_gap, cols, is_sm_gap, +1, &gap, &hits);
    if (e < 0)
        return;
    double util = emean(d, (size_t)e, c_util), smact = 100 * emean(d, (size_t)e, c_smact);
    char t[240];
    snprintf(t, sizeof t, "%s is busy %.0f %% of the time (%s) but its SMs are active only %.0f %% (SMACT)",
             ent(d, (size_t)e).s, util, util_name(d, c_util), smact);
    an_severity sev = gap >= DM_SM_GAP_BIG_PTS ? AN_SEV_MEDIUM : AN_SEV_LOW;
    rb_finding *x = dm_add(k, r, sev, t);
    /* the sample with the widest gap */
    size_t worst = 0;
    double wg = -INFINITY;
    for (size_t s = 0; s < d->n_samples; s++) {
        double g = ev_dmon_value(d, s, (size_t)c_util) - 100 * ev_dmon_value(d, s, (size_t)c_smact);
        if (d->samples[s].entity == (uint32_t)e && isfinite(g) && g > wg) {
            wg = g;
            worst = s;
        }
    }
    rb_cite_line(x, k->f, first_line(d, (size_t)e), "%s: mean %s %.1f %%, mean SMACT %.3f: %.0f points apart",
                        ent(d, (size_t)e).s, util_name(d, c_util), util, smact / 100, gap);
    if (isfinite(wg))
        rb_cite_line(x, k->f, d->samples[worst].line, "widest sample: %s %.0f %%, SMACT %.3f",
                            util_name(d, c_util), ev_dmon_value(d, worst, (size_t)c_util),
                            ev_dmon_value(d, worst, (size_t)c_smact));
    also(x, k, hits, "show the gap");
}

/* ---- power / thermal capping ---- */

static void r_throttle(const dmon_ctx *k, const rb_rule *r, int c_pviol, int c_tviol)
{
    const ev_dmon *d = k->d;
    size_t n = 0, first = 0;
    for (size_t s = 0; s < d->n_samples; s++) {
        double p = c_pviol >= 0 ? ev_dmon_value(d, s, (size_t)c_pviol) : NAN;
        double th = c_tviol >= 0 ? ev_dmon_value(d, s, (size_t)c_tviol) : NAN;
        if (!((isfinite(p) && p > 0) || (isfinite(th) && th > 0)))
            continue;
        if (!n++)
            first = s;
    }
    if (!n)
        return;
    const ev_dmon_sample *f = &d->samples[first];
    char t[240];
    snprintf(t, sizeof t, "GPU clocks are capped by power or temperature in %zu of %zu samples", n, d->n_samples);
    rb_finding *x = dm_add(k, r, AN_SEV_MEDIUM, t);
    rb_cite_line(x, k->f, f->line, "%s: pviol %g %%, tviol %g", ent(d, f->entity).s,
                        c_pviol >= 0 ? ev_dmon_value(d, first, (size_t)c_pviol) : NAN,
                        c_tviol >= 0 ? ev_dmon_value(d, first, (size_t)c_tviol) : NAN);
}

/* ---- hot GPU ---- */

static double m_temp(const ev_dmon *d, size_t e, const int *cols) { return emax(d, e, cols[0]); }
static bool is_hot(double v) { return v >= DM_HOT_C; }

static void r_hot(const dmon_ctx *k, const rb_rule *r, int c_temp)
{
    const ev_dmon *d = k->d;
    int cols[] = { c_temp }, hits;
    double v;
    int e = pick(k, m_temp, cols, is_hot, +1, &v, &hits);
    if (e < 0)
        return;
    char t[240];
    snprintf(t, sizeof t, "%s reaches %.0f C", ent(d, (size_t)e).s, v);
    rb_finding *x = dm_add(k, r, AN_SEV_LOW, t);
    for (size_t s = 0; s < d->n_samples; s++)
        if (d->samples[s].entity == (uint32_t)e && ev_dmon_value(d, s, (size_t)c_temp) == v) {
            rb_cite_line(x, k->f, d->samples[s].line, "%s: %s %.0f C", ent(d, (size_t)e).s,
                                d->cols[c_temp].name, v);
            break;
        }
    also(x, k, hits, "reach 83 C or more");
}

/* ---- memory-bound kernels ---- */

static double m_mean(const ev_dmon *d, size_t e, const int *cols) { return emean(d, e, cols[0]); }
static bool is_dram(double v) { return v >= DM_DRAM_BUSY; }
static bool is_memctl(double v) { return v >= DM_MEMCTL_BUSY_PCT; }

static void r_mem_bound(const dmon_ctx *k, const rb_rule *r, int c_drama, int c_memctl)
{
    const ev_dmon *d = k->d;
    int cols[] = { c_drama >= 0 ? c_drama : c_memctl }, hits;
    if (cols[0] < 0)
        return;
    double v;
    dm_cond cond = c_drama >= 0 ? is_dram : is_memctl;
    int e = pick(k, m_mean, cols, cond, +1, &v, &hits);
    if (e < 0)
        return;
    char t[240];
    if (c_drama >= 0)
        snprintf(t, sizeof t, "%s: DRAM interface active %.0f %% of cycles (DRAMA): memory-bandwidth-bound",
                 ent(d, (size_t)e).s, 100 * v);
    else
        snprintf(t, sizeof t, "%s: memory busy %.0f %% of the time (mem): memory-bandwidth-bound",
                 ent(d, (size_t)e).s, v);
    rb_finding *x = dm_add(k, r, AN_SEV_LOW, t);
    rb_cite_line(x, k->f, first_line(d, (size_t)e), "%s: mean %s %.3g over %u samples",
                        ent(d, (size_t)e).s, d->cols[cols[0]].name, v,
                        ev_dmon_stat_of(d, (size_t)e, (size_t)cols[0])->n);
    also(x, k, hits, "are above the threshold");
}

/* ---- PCIe near saturation ---- */

static double m_pcie(const ev_dmon *d, size_t e, const int *cols)
{
    /* cols: rx, tx, and 1 when the unit is MB/s (nvidia-smi) else B/s */
    double scale = cols[2] ? 1e6 : 1;
    double rx = emean(d, e, cols[0]) * scale, tx = emean(d, e, cols[1]) * scale;
    if (!isfinite(rx))
        return tx;
    return isfinite(tx) && tx > rx ? tx : rx;
}
static bool is_pcie(double v) { return v >= DM_PCIE_BUSY_BPS; }

static void r_pcie(const dmon_ctx *k, const rb_rule *r, int c_rx, int c_tx, bool mbps)
{
    const ev_dmon *d = k->d;
    int cols[] = { c_rx, c_tx, mbps ? 1 : 0 }, hits;
    double v;
    int e = pick(k, m_pcie, cols, is_pcie, +1, &v, &hits);
    if (e < 0)
        return;
    char t[240];
    snprintf(t, sizeof t, "%s moves %.1f GB/s over PCIe on average (near a gen3 x16 link's 15.75 GB/s)",
             ent(d, (size_t)e).s, v / 1e9);
    rb_finding *x = dm_add(k, r, AN_SEV_LOW, t);
    rb_cite_line(x, k->f, first_line(d, (size_t)e), "%s: mean PCIe %s %.2f GB/s",
                        ent(d, (size_t)e).s, mbps ? "rx/tx (MB/s columns)" : "rx/tx (B/s columns)", v / 1e9);
    also(x, k, hits, "are above 12 GB/s");
}


static dmon_ctx ctx_of(rb_ctx *c, const ev_file *f)
{
    dmon_ctx k = {f->as.dmon, f, c, false};
    for (size_t e = 0; e < k.d->n_entities; e++)
        k.mig |= k.d->entities[e].mig != EV_DMON_GPU;
    return k;
}

static const char *const k_util[] = {"GPUTL", "sm", NULL}, *const k_smact[] = {"SMACT", NULL}, *const k_gract[] = {"GRACT", NULL};
static const char *const k_temp[] = {"gtemp", "temp", "TMPTR", NULL}, *const k_drama[] = {"DRAMA", NULL};
static const char *const k_memctl[] = {"mem", "MCUTL", NULL}, *const k_pviol[] = {"pviol", NULL}, *const k_tviol[] = {"tviol", NULL};
static const char *const k_smi_rx[] = {"rxpci", NULL}, *const k_smi_tx[] = {"txpci", NULL};
static const char *const k_dc_rx[] = {"PCIRX", NULL}, *const k_dc_tx[] = {"PCITX", NULL};

static void e_low_util(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_DMON, f) {
        dmon_ctx k = ctx_of(c, f);
        int cu = col_any(k.d, k_util), cg = col_any(k.d, k_gract);
        /* GPUTL is not reported per MIG instance; GRACT (a fraction) is */
        if (cu >= 0)
            r_low_util(&k, self, cu, 1);
        else if (cg >= 0)
            r_low_util(&k, self, cg, 100);
    }
}

static void e_sm_gap(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_DMON, f) {
        dmon_ctx k = ctx_of(c, f);
        int cu = col_any(k.d, k_util), cs = col_any(k.d, k_smact);
        if (cu >= 0 && cs >= 0)
            r_sm_gap(&k, self, cu, cs);
    }
}

static void e_throttle(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_DMON, f) {
        dmon_ctx k = ctx_of(c, f);
        int pv = col_any(k.d, k_pviol), tv = col_any(k.d, k_tviol);
        if (pv >= 0 || tv >= 0)
            r_throttle(&k, self, pv, tv);
    }
}

static void e_hot(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_DMON, f) {
        dmon_ctx k = ctx_of(c, f);
        int ct = col_any(k.d, k_temp);
        if (ct >= 0)
            r_hot(&k, self, ct);
    }
}

static void e_mem_bound(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_DMON, f) {
        dmon_ctx k = ctx_of(c, f);
        r_mem_bound(&k, self, col_any(k.d, k_drama), col_any(k.d, k_memctl));
    }
}

static void e_pcie(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_DMON, f) {
        dmon_ctx k = ctx_of(c, f);
        /* nvidia-smi prints PCIe MB/s, dcgmi bytes per second */
        int rx = col_any(k.d, k_smi_rx), tx = col_any(k.d, k_smi_tx);
        if (rx >= 0 || tx >= 0)
            r_pcie(&k, self, rx, tx, true);
        else if (col_any(k.d, k_dc_rx) >= 0 || col_any(k.d, k_dc_tx) >= 0)
            r_pcie(&k, self, col_any(k.d, k_dc_rx), col_any(k.d, k_dc_tx), false);
    }
}

static const char *const DCGM = "https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html#profiling-metrics";

static const rb_rule k_rules[] = {
    {"DMON_LOW_UTIL", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.45,
     "a GPU's (or MIG instance's) mean kernel-running utilisation (nvidia-smi sm, dcgmi GPUTL; without them 100 x dcgmi GRACT) below 50 %",
     "nvidia-smi dmon(1); DCGM fields DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE (per MIG instance: NVIDIA/dcgm-exporter#50)",
     "the GPU waits for something else most of the time: profile a few steps and analyze the traces to see which layer - data loading, host launches, communication, checkpoints - leaves it idle",
     e_low_util},
    {"DMON_SM_IDLE_WHILE_BUSY", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.45,
     "dcgmi: mean GPUTL >= 50 % and mean GPUTL - 100 x mean SMACT >= 15 points", DCGM,
     "kernels run but leave SMs idle (small kernels or batches, launch gaps): give each kernel more work - larger batches, more concurrent requests or model instances, CUDA graphs, fused kernels",
     e_sm_gap},
    {"DMON_THROTTLED", CP_LAYER_COMPUTE, AN_SEV_MEDIUM, 0.5, "nvidia-smi dmon pviol (power-capped %) or tviol above 0", "nvidia-smi dmon(1) -s p / -s v",
     "check cooling, airflow, the power limit (nvidia-smi -q -d POWER,PERFORMANCE shows the clock event reasons) and the node's power budget; a capped GPU becomes the straggler every collective waits for",
     e_throttle},
    {"DMON_HOT", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.35, "a GPU's maximum gtemp/temp (dcgmi TMPTR) at or above 83 C", "nvidia-smi -q (maximum operating temperature)",
     "at the maximum operating temperature of many data-centre GPUs the clocks drop: check fans, airflow and inlet temperature", e_hot},
    {"DMON_MEMORY_BOUND", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.35, "mean dcgmi DRAMA >= 0.6, or without it mean nvidia-smi mem (dcgmi MCUTL) >= 80 %", DCGM,
     "the kernels wait on memory bandwidth, not on the SMs: fuse element-wise ops (torch.compile), lower-precision tensors, FlashAttention, larger batches for reuse",
     e_mem_bound},
    {"DMON_PCIE_BUSY", CP_LAYER_INTRA, AN_SEV_LOW, 0.35, "mean PCIe rx or tx (nvidia-smi rxpci/txpci MB/s, dcgmi PCIRX/PCITX B/s) >= 12e9 B/s", DCGM,
     "host-device traffic is near what a PCIe 3.0 x16 link carries: check the link generation and width, pin host memory, keep data on the GPU across steps",
     e_pcie},
};

const rb_family rb_family_dmon = {.name = "dmon",
                                  .summary = "nvidia-smi dmon / dcgmi dmon: utilisation, SM activity, throttling, temperature, memory and PCIe load",
                                  .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
