/* an_findings.c - the verdict: rules over the measured breakdown that name
 * the problems holding the job back, each with its evidence, what to do and
 * what fixing it would gain.
 *
 * Design
 * - One static rule table (below): a row per rule with its code, layer and
 *   evaluator. Rules read the typed results of an_layers, an_collectives and
 *   an_stragglers, never the report, so a finding cannot disagree with the
 *   tables it cites.
 * - The gain of a finding is the step time saved if the problem were fixed,
 *   as a percentage of the measured step time (the mean over ranks of the
 *   sum of all profiler steps). Each rule states its assumption in
 *   `gain_assumption`; docs/METRICS.md lists them. Time a stall costs the
 *   whole job (one rank stalls, the others wait for it in the next
 *   collective) is taken per step as the maximum over ranks.
 * - Findings are sorted by gain (then by severity, then code) and the first
 *   one names the bottleneck layer. Severity follows the gain: >= 10 % high,
 *   >= 3 % medium, >= 0.5 % low, else info.
 * - Rules do not double count: the checkpoint straggler is the checkpoint
 *   finding, low overlap is only reported when the network itself is healthy.
 *
 * Checklist for a new rule: write `static void r_<name>(fctx *f)` that calls
 * add() when its condition holds (gain from the measured numbers, assumption
 * stated, evidence citing rank/step/event or file:line), add a row to
 * `rules[]`, document the code in docs/METRICS.md ("Findings"), and extend
 * tests/unit/test_an_findings.c with a job that triggers it and one that
 * does not.
 */
#include "an_results.h"
#include "an_verdict.h"
#include "../base/buf.h"
#include "../base/util.h"
#include "../model/catalog.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sev_names[AN_SEV__COUNT] = { "info", "low", "medium", "high", "critical" };

const char *an_severity_name(an_severity s) { return (unsigned)s < AN_SEV__COUNT ? sev_names[s] : NULL; }

int an_severity_parse(const char *s)
{
    for (int i = 0; i < AN_SEV__COUNT; i++)
        if (cp_str_ieq(s, sev_names[i]))
            return i;
    return -1;
}

/* Thresholds (documented in docs/METRICS.md, "Findings"). */
#define NET_SLOW_FRAC 0.6       /* inter busbw below this fraction of expected */
#define NET_TARGET_FRAC AN_NET_TARGET_FRAC
#define INTRA_SLOW_FRAC 0.3
#define INTRA_TARGET_FRAC AN_INTRA_TARGET_FRAC
#define MIN_EXPOSED_PCT 1.0     /* a layer must expose at least this much to matter */
#define LAUNCH_BOUND_PCT 2.0
#define HOST_WORK_CALL_NS 1e6   /* an op exposing >= 1 ms per call is host work, not launch overhead */
#define HOST_WORK_MAX_OPS 3
#define OVERLAP_LOW 0.3
#define OVERLAP_HIDEABLE 0.5
#define STALL_STEP_FRAC 0.01    /* a step's stall under 1 % of the step is no occurrence */
/* One checkpoint every 30 minutes when neither the trace (two or more
 * checkpoints) nor --ckpt-every says: torchtitan's default interval of 500
 * steps is 25-80 min at the 3-10 s steps of large-model training; the
 * finding states the cost per checkpoint too, so a user with another
 * interval can redo the sum. */
#define CKPT_DEFAULT_INTERVAL_S 1800.0

/* A periodic stall (a synchronous checkpoint): what it costs per
 * occurrence and how often it comes, so its gain is its amortised share. */
typedef struct periodic {
    int n_occ;                /* steps of rank 0 holding the stall */
    int64_t first_idx, last_idx; /* their positions in rank 0's steps */
    double full_ns;           /* mean per occurrence, per step the maximum over ranks: write + snapshot */
    double fix_ns;            /* ... of which the asynchronous fix hides (the storage time) */
    double stays_ns;          /* ... of which stays: the device-to-host snapshot (intra) */
    double step_ns;           /* a step without the stall, mean over ranks */
    double interval_steps;    /* steps from one occurrence to the next */
    double trace_interval_steps; /* from the trace (two or more occurrences), NaN otherwise */
    const char *source;       /* "trace", "--ckpt-every", "default" */
} periodic;

typedef struct fctx {
    an_ctx *ctx;
    const an_layers_result *lr;
    const an_collectives_result *cr;
    const an_stragglers_result *sr;
    const an_job_result *job;
    double job_ns;                        /* mean over ranks of total step time (measured) */
    double base_ns;                       /* the gain basis: job_ns with each periodic stall amortised */
    size_t n_steps;                       /* rank 0's steps */
    periodic ckpt;
    double mean_exposed[CP_LAYER__COUNT];
    double mean_wait_inter_ns, mean_wait_ns;
    const an_hostops_result *ho;
    double host_work_ns;                  /* mean over ranks, claimed by HOST_WORK_BOUND */
    an_findings_result *out;
} fctx;

typedef struct rule {
    const char *code;
    cp_layer layer;
    void (*eval)(fctx *f, const struct rule *self);
} rule;

static double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }
/* A gain: time saved over the window, as % of the amortised step time. */
static double gain_pct(const fctx *f, double ns) { return pct(ns, f->base_ns); }

static an_severity sev_for(double gain_pct)
{
    return gain_pct >= 10 ? AN_SEV_HIGH : gain_pct >= 3 ? AN_SEV_MEDIUM : gain_pct >= 0.5 ? AN_SEV_LOW : AN_SEV_INFO;
}

an_finding *an_finding_add(an_findings_result *o, const char *code, cp_layer layer, double gain_pct,
                           const char *title, const char *rec, const char *assumption)
{
    cp_xgrow((void **)&o->v, &o->cap, o->n + 1, sizeof *o->v);
    an_finding *x = &o->v[o->n++];
    memset(x, 0, sizeof *x);
    x->rank = -1;
    x->order = (uint32_t)(o->n - 1);
    x->code = code;
    x->layer = layer;
    x->removes = (unsigned)layer < CP_LAYER__COUNT ? 1u << layer : 0;
    x->gain_pct = gain_pct;
    x->severity = isfinite(gain_pct) ? sev_for(gain_pct) : AN_SEV_INFO;
    x->per_occurrence_ns = x->interval_steps = x->stays_ns = NAN;
    snprintf(x->title, sizeof x->title, "%s", title);
    x->recommendation = rec;
    snprintf(x->assumption, sizeof x->assumption, "%s", assumption ? assumption : "");
    return x;
}

static an_finding *add(fctx *f, const rule *r, double gain, const char *title, const char *rec,
                       const char *assumption)
{
    return an_finding_add(f->out, r->code, r->layer, gain, title, rec, assumption);
}

void an_finding_evidence(an_finding *x, const char *fmt, ...)
{
    if (x->n_evidence >= AN_FINDING_MAX_EVIDENCE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->evidence[x->n_evidence++], sizeof x->evidence[0], fmt, ap);
    va_end(ap);
}

/* ---- per step, across ranks ---- */

/* The step of rank rl with the id of rank 0's step s (position s first:
 * ranks usually hold the same steps). */
static const an_step_layers *step_of(const an_rank_layers *rl, const an_rank_layers *r0, size_t s)
{
    int64_t id = r0->steps[s].id;
    return s < rl->n_steps && rl->steps[s].id == id ? &rl->steps[s] : an_step_by_id(rl, id);
}

/* The maximum over ranks of get() in rank 0's step s: the time a stall on
 * any rank costs the job (the others wait for it in the next collective). */
static int64_t step_max(const fctx *f, size_t s, int64_t (*get)(const an_step_layers *))
{
    const an_rank_layers *r0 = &f->lr->ranks[0];
    int64_t mx = 0;
    for (size_t r = 0; r < f->lr->n_ranks; r++) {
        const an_step_layers *st = step_of(&f->lr->ranks[r], r0, s);
        if (st)
            mx = CP_MAX(mx, get(st));
    }
    return mx;
}

/* Mean over ranks of the duration of rank 0's step s. */
static double step_mean_dur(const fctx *f, size_t s)
{
    const an_rank_layers *r0 = &f->lr->ranks[0];
    double sum = 0;
    size_t n = 0;
    for (size_t r = 0; r < f->lr->n_ranks; r++) {
        const an_step_layers *st = step_of(&f->lr->ranks[r], r0, s);
        if (st) {
            sum += (double)st->dur_ns;
            n++;
        }
    }
    return n ? sum / (double)n : 0;
}

/* Sum over steps of step_max: the job's cost of a per-step stall. */
static double gated_ns(const fctx *f, int64_t (*get)(const an_step_layers *))
{
    double sum = 0;
    for (size_t s = 0; f->lr->n_ranks && s < f->lr->ranks[0].n_steps; s++)
        sum += (double)step_max(f, s, get);
    return sum;
}

static int64_t get_storage(const an_step_layers *s) { return s->exposed_ns[CP_LAYER_STORAGE]; }
static int64_t get_snapshot(const an_step_layers *s) { return s->copy_in_storage_ns; }
/* what a synchronous checkpoint blocks: the write and its snapshot copies */
static int64_t get_stall(const an_step_layers *s) { return s->exposed_ns[CP_LAYER_STORAGE] + s->copy_in_storage_ns; }
static int64_t get_dataloader(const an_step_layers *s) { return s->host_dataloader_ns; }
static int64_t get_pageable(const an_step_layers *s) { return s->copy_pageable_ns; }

/* The cap of a finding: per step the maximum over ranks of the exposed
 * time of the layers its fix removes, summed over steps (window ns). */
static double cap_ns(const fctx *f, uint32_t mask)
{
    double sum = 0;
    const an_rank_layers *r0 = f->lr->n_ranks ? &f->lr->ranks[0] : NULL;
    for (size_t s = 0; r0 && s < r0->n_steps; s++) {
        int64_t mx = 0;
        for (size_t r = 0; r < f->lr->n_ranks; r++) {
            const an_step_layers *st = step_of(&f->lr->ranks[r], r0, s);
            int64_t v = 0;
            for (int l = 0; st && l < CP_LAYER__COUNT; l++)
                if (mask & (1u << l))
                    v += st->exposed_ns[l];
            mx = CP_MAX(mx, v);
        }
        sum += (double)mx;
    }
    return sum;
}

static void fmt_ns(char *b, size_t n, double ns)
{
    if (ns >= 1e9)
        snprintf(b, n, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(b, n, "%.2f ms", ns / 1e6);
    else
        snprintf(b, n, "%.1f us", ns / 1e3);
}

/* ---- the periodic stall and the gain basis ---- */

/* True when rank 0's step s holds a storage stall (on any rank) of at
 * least STALL_STEP_FRAC of the step. */
static bool stall_step(const fctx *f, size_t s)
{
    int64_t stall = step_max(f, s, get_stall);
    return stall > 0 && (double)stall >= STALL_STEP_FRAC * step_mean_dur(f, s);
}

/* Occurrences of the storage stall in rank 0's steps and their mean cost. */
static void ckpt_occurrences(fctx *f)
{
    periodic *p = &f->ckpt;
    const an_rank_layers *r0 = &f->lr->ranks[0];
    double full = 0, fix = 0, stays = 0, normal = 0;
    size_t n_normal = 0;
    for (size_t s = 0; s < r0->n_steps; s++) {
        if (!stall_step(f, s)) {
            normal += step_mean_dur(f, s);
            n_normal++;
            continue;
        }
        if (p->n_occ++ == 0)
            p->first_idx = (int64_t)s;
        p->last_idx = (int64_t)s;
        full += (double)step_max(f, s, get_stall);
        fix += (double)step_max(f, s, get_storage);
        stays += (double)step_max(f, s, get_snapshot);
    }
    if (!p->n_occ)
        return;
    p->full_ns = full / p->n_occ;
    p->fix_ns = fix / p->n_occ;
    p->stays_ns = stays / p->n_occ;
    /* every step stalls: a normal step is the stalled one minus its stall */
    p->step_ns = n_normal ? normal / (double)n_normal : f->job_ns / (double)f->n_steps - p->full_ns;
    if (p->step_ns <= 0)
        p->step_ns = 1;
}

/* Steps between occurrences: the trace's when it shows two or more, else
 * --ckpt-every, else the default interval (and at least what the window
 * shows: one occurrence in W steps means the others are further off). */
static void ckpt_interval(fctx *f)
{
    periodic *p = &f->ckpt;
    const an_opts *o = f->ctx->opts;
    p->trace_interval_steps = NAN;
    if (p->n_occ >= 2) {
        p->trace_interval_steps = (double)(p->last_idx - p->first_idx) / (p->n_occ - 1);
        p->interval_steps = p->trace_interval_steps;
        p->source = "trace";
        return;
    }
    double seconds = CKPT_DEFAULT_INTERVAL_S;
    p->source = "default";
    if (o && o->ckpt_every_steps > 0) {
        p->interval_steps = o->ckpt_every_steps;
        p->source = "--ckpt-every";
        return;
    }
    if (o && o->ckpt_every_s > 0) {
        seconds = o->ckpt_every_s;
        p->source = "--ckpt-every";
    }
    p->interval_steps = CP_MAX(1.0, (seconds * 1e9 - p->full_ns) / p->step_ns);
    if (!strcmp(p->source, "default")) {
        double seen = (double)CP_MAX(p->first_idx + 1, (int64_t)f->n_steps - p->first_idx);
        p->interval_steps = CP_MAX(p->interval_steps, seen);
    }
}

/* base_ns: the window with each occurrence step replaced by a normal step,
 * plus the stall's amortised share of every step. */
static void gain_basis(fctx *f)
{
    f->base_ns = f->job_ns;
    if (!f->lr->n_ranks || f->job_ns <= 0)
        return;
    f->n_steps = f->lr->ranks[0].n_steps;
    if (!f->n_steps)
        return;
    ckpt_occurrences(f);
    periodic *p = &f->ckpt;
    if (!p->n_occ)
        return;
    ckpt_interval(f);
    const an_rank_layers *r0 = &f->lr->ranks[0];
    double base = f->job_ns;
    for (size_t s = 0; s < r0->n_steps; s++)
        if (stall_step(f, s))
            base -= step_mean_dur(f, s) - p->step_ns;
    base += (double)f->n_steps * p->full_ns / p->interval_steps;
    f->base_ns = base > 0 ? base : f->job_ns;
}

/* ---- rules on the traces ---- */

/* The collective group of a scope with the most time, for evidence. */
static const an_coll_group *top_group(const fctx *f, bool inter)
{
    const an_coll_group *best = NULL;
    for (size_t i = 0; i < f->cr->n_groups; i++) {
        const an_coll_group *g = &f->cr->groups[i];
        if (g->inter == inter && (!best || g->total_ns > best->total_ns))
            best = g;
    }
    return best;
}

/* The scope's busbw is below frac of the expected one. */
static bool scope_below(double busbw, double expected, double frac)
{
    return isfinite(busbw) && isfinite(expected) && expected > 0 && busbw < frac * expected;
}

/* A verdict on the network needs the transfer time: with ranks missing it
 * is only known as a lower bound (COLL_RANKS_MISSING says so instead). */
static bool net_slow(const fctx *f)
{
    const an_collectives_result *cr = f->cr;
    return !cr->inter_busbw_lower_bound && scope_below(cr->inter_busbw_gbps, cr->expected_inter_gbps, NET_SLOW_FRAC);
}

static void r_net_inter_slow(fctx *f, const rule *self)
{
    const an_collectives_result *cr = f->cr;
    double transfer = f->mean_exposed[CP_LAYER_INTER] - f->mean_wait_inter_ns;
    if (!net_slow(f) || pct(transfer, f->job_ns) < MIN_EXPOSED_PCT)
        return;
    double ratio = cr->inter_busbw_gbps / cr->expected_inter_gbps;
    char a[256], t[160];
    snprintf(a, sizeof a,
             "exposed inter-node transfer time (wait excluded) scaled from the measured busbw %.1f GB/s to %.0f %% of "
             "the expected %.1f GB/s",
             cr->inter_busbw_gbps, 100 * NET_TARGET_FRAC, cr->expected_inter_gbps);
    snprintf(t, sizeof t, "inter-node collectives reach %.0f %% of the link bandwidth", 100 * ratio);
    an_finding *x = add(f, self, gain_pct(f, transfer * (1 - ratio / NET_TARGET_FRAC)), t,
                        "suspect path imbalance (ECMP hash collisions on the spine uplinks), too few queue pairs "
                        "or no adaptive routing: spread flows (NCCL_IB_QPS_PER_CONNECTION=4, "
                        "NCCL_IB_SPLIT_DATA_ON_QPS=1), enable adaptive routing / check ECMP hashing on the "
                        "switches, and confirm with ib_write_bw between node pairs and all_reduce_perf across nodes",
                        a);
    an_finding_evidence(x, "inter-node busbw %.1f GB/s (time-weighted median over %" PRId64 " kernels) vs expected %.1f GB/s (%s)",
             cr->inter_busbw_gbps, cr->n_kernels - cr->n_without_args, cr->expected_inter_gbps,
             cr->expected_inter_source ? cr->expected_inter_source : "?");
    const an_coll_group *g = top_group(f, true);
    if (g)
        an_finding_evidence(x, "largest: %s of ~%" PRId64 " bytes, %" PRId64 " kernels, p50 busbw %.1f GB/s, p95 %.1f GB/s",
                 coll_op_name(g->op), g->median_bytes, g->count, g->p50_busbw_gbps, g->p95_busbw_gbps);
    an_finding_evidence(x, "exposed inter-node time %.1f %% of the measured step time (of which waiting for other "
                        "ranks %.1f %%), mean over %zu ranks",
             pct(f->mean_exposed[CP_LAYER_INTER], f->job_ns), pct(f->mean_wait_inter_ns, f->job_ns), f->lr->n_ranks);
    an_finding_evidence(x, "nodes: %d (%s)", f->lr->n_nodes, f->lr->node_source);
}

/* What to check when collectives inside a node are slow, by vendor. */
static const char *intra_advice(const fctx *f)
{
    if (!strcmp(an_job_scaleup(f->job), "PCIe"))
        return "check that the collective library uses peer-to-peer over PCIe (NCCL_DEBUG=INFO shows P2P, not SHM): "
               "ACS or the IOMMU on the PCIe switches can block peer-to-peer (check lspci -vvv ACSCtl, "
               "NCCL_P2P_LEVEL), GPUs on a path through the CPU (PHB/SYS in nvidia-smi topo -m) get no P2P, and "
               "in containers allow IPC (--ipc=host)";
    if (f->job && f->job->vendor == TL_VENDOR_AMD)
        return "check that RCCL uses P2P over xGMI inside the node (NCCL_DEBUG=INFO shows P2P transports, not SHM), "
               "that NCCL_P2P_DISABLE is unset, that rocm-smi --showtopo lists XGMI links between the GPUs, and in "
               "containers pass /dev/kfd and /dev/dri and allow IPC (--ipc=host)";
    if (f->job && f->job->vendor == TL_VENDOR_NVIDIA)
        return "check that NCCL uses P2P/NVLink inside the node (NCCL_DEBUG=INFO shows P2P/IPC or P2P/CUMEM, "
               "not SHM), that NCCL_P2P_DISABLE is unset and that nvidia-smi topo -m shows NV# links; "
               "in containers allow IPC (--ipc=host)";
    return "check that the collective library uses peer-to-peer transports over the scale-up links inside the node "
           "(its debug log names the transport), not shared memory through the host; in containers allow IPC "
           "(--ipc=host)";
}

static void r_net_intra_slow(fctx *f, const rule *self)
{
    const an_collectives_result *cr = f->cr;
    double transfer = f->mean_exposed[CP_LAYER_INTRA] - (f->mean_wait_ns - f->mean_wait_inter_ns);
    if (cr->intra_busbw_lower_bound || !scope_below(cr->intra_busbw_gbps, cr->expected_intra_gbps, INTRA_SLOW_FRAC) ||
        pct(transfer, f->job_ns) < MIN_EXPOSED_PCT)
        return;
    double ratio = cr->intra_busbw_gbps / cr->expected_intra_gbps;
    char a[256], t[160];
    snprintf(a, sizeof a, "exposed intra-node time scaled from %.1f GB/s to %.0f %% of the expected %.1f GB/s",
             cr->intra_busbw_gbps, 100 * INTRA_TARGET_FRAC, cr->expected_intra_gbps);
    snprintf(t, sizeof t, "intra-node collectives reach %.0f %% of %s bandwidth", 100 * ratio, an_job_scaleup(f->job));
    an_finding *x = add(f, self, gain_pct(f, transfer * (1 - ratio / INTRA_TARGET_FRAC)), t, intra_advice(f), a);
    an_finding_evidence(x, "intra-node busbw %.1f GB/s vs expected %.1f GB/s (%s%s%s)", cr->intra_busbw_gbps,
                        cr->expected_intra_gbps, cr->expected_intra_source ? cr->expected_intra_source : "?",
                        f->job && f->job->gpu ? ", " : "", f->job && f->job->gpu ? f->job->gpu->name : "");
}

/* One scope whose collectives could not be split into wait and transfer
 * because members of their groups are not traced, and whose busbw even
 * counting the wait is below the slow threshold: say what cannot be told. */
static void coll_ranks_missing(fctx *f, const rule *self, bool inter)
{
    const an_collectives_result *cr = f->cr;
    double bw = inter ? cr->inter_busbw_gbps : cr->intra_busbw_gbps;
    double exp = inter ? cr->expected_inter_gbps : cr->expected_intra_gbps;
    double frac = inter ? NET_SLOW_FRAC : INTRA_SLOW_FRAC;
    int64_t unsplit = inter ? cr->inter_unsplit_ns : cr->intra_unsplit_ns;
    const char *src = inter ? cr->expected_inter_source : cr->expected_intra_source;
    if (!(inter ? cr->inter_busbw_lower_bound : cr->intra_busbw_lower_bound) || !scope_below(bw, exp, frac) ||
        pct((double)unsplit / (double)CP_MAX(f->lr->n_ranks, 1), f->job_ns) < MIN_EXPOSED_PCT)
        return;
    const an_job_result *j = f->job;
    char t[160], ranks[64];
    if (j && j->world_size > 0)
        snprintf(ranks, sizeof ranks, "%d of %d ranks traced", j->ranks_traced, j->world_size);
    else
        snprintf(ranks, sizeof ranks, "ranks of the collectives' groups missing");
    snprintf(t, sizeof t, "%s: %s-node collectives cannot be split into waiting and transfer", ranks,
             inter ? "inter" : "intra");
    an_finding *x = add(f, self, NAN, t,
                        "give analyze the traces of every rank (or of every rank of one process group), captured in "
                        "the same steps (torch.profiler with the same schedule on all ranks): the cross-rank match "
                        "then tells waiting for late ranks from moving data, and judges the link",
                        "no gain is estimated: a kernel's time includes waiting for the untraced ranks, so the "
                        "busbw is only a lower bound");
    x->layer = inter ? CP_LAYER_INTER : CP_LAYER_INTRA;
    x->removes = 1u << x->layer;
    x->severity = AN_SEV_LOW;
    an_finding_evidence(x, "busbw counting the wait: at least %.1f GB/s, %.0f %% of the expected %.1f GB/s (%s%s%s)", bw,
                        100 * bw / exp, exp, src ? src : "?", inter ? "" : " over ", inter ? "" : an_job_scaleup(j));
    an_finding_evidence(x, "%.1f %% of the measured step time is in %s-node collectives whose group has untraced "
                        "members (mean over the %zu traced rank%s)",
                        pct((double)unsplit / (double)CP_MAX(f->lr->n_ranks, 1), f->job_ns), inter ? "inter" : "intra",
                        f->lr->n_ranks, f->lr->n_ranks == 1 ? "" : "s");
}

static void r_coll_ranks_missing(fctx *f, const rule *self)
{
    coll_ranks_missing(f, self, true);
    coll_ranks_missing(f, self, false);
}

/* Steps where a rank had exposed storage time, for evidence. */
static void storage_evidence(const fctx *f, an_finding *x)
{
    for (size_t r = 0; r < f->lr->n_ranks && x->n_evidence < AN_FINDING_MAX_EVIDENCE - 1; r++) {
        const an_rank_layers *rl = &f->lr->ranks[r];
        char steps[200] = "", longest[32];
        size_t n = 0, len = 0;
        int64_t mx = 0;
        for (size_t s = 0; s < rl->n_steps; s++) {
            int64_t v = get_stall(&rl->steps[s]);
            if ((double)v < STALL_STEP_FRAC * (double)rl->steps[s].dur_ns)
                continue;
            n++;
            mx = CP_MAX(mx, v);
            if (len + 24 < sizeof steps)
                len += (size_t)snprintf(steps + len, sizeof steps - len, "%s%" PRId64, n > 1 ? "," : "", rl->steps[s].id);
        }
        if (!n)
            continue;
        fmt_ns(longest, sizeof longest, (double)mx);
        an_finding_evidence(x, "rank %d: %zu stall%s in checkpoint/IO with the GPU idle, longest %s, steps %s", rl->rank,
                            n, n == 1 ? "" : "s", longest, steps);
    }
}

/* The interval in words: "one every 4 steps (40 s), as the trace shows". */
static void interval_words(const fctx *f, char *b, size_t n)
{
    const periodic *p = &f->ckpt;
    double secs = (p->interval_steps * p->step_ns + p->full_ns) / 1e9;
    char steps[32];
    snprintf(steps, sizeof steps, p->interval_steps >= 100 ? "%.0f" : "%.3g", p->interval_steps);
    if (!strcmp(p->source, "trace"))
        snprintf(b, n, "one every %s steps (%.0f s), as the trace shows", steps, secs);
    else if (!strcmp(p->source, "--ckpt-every"))
        snprintf(b, n, "one every %s steps (%.0f s), from --ckpt-every", steps, secs);
    else
        snprintf(b, n, "one every %.0f min = %s steps (assumed: the trace shows one; give --ckpt-every)",
                 CKPT_DEFAULT_INTERVAL_S / 60, steps);
}

static void r_ckpt_sync(fctx *f, const rule *self)
{
    const periodic *p = &f->ckpt;
    if (!p->n_occ)
        return;
    /* what an asynchronous checkpoint saves, amortised: the write, per
     * occurrence, over the steps between two */
    double gain = gain_pct(f, (double)f->n_steps * p->fix_ns / p->interval_steps);
    double per_occ_pct = pct(p->full_ns, p->step_ns * p->interval_steps + p->full_ns);
    if (per_occ_pct < 0.05 && gain < 0.05)
        return;
    bool inference = f->job && f->job->kind == AN_JOB_INFERENCE;
    char t[160], b[32], a[400], iv[120], st[32];
    fmt_ns(b, sizeof b, p->full_ns);
    fmt_ns(st, sizeof st, p->stays_ns);
    interval_words(f, iv, sizeof iv);
    if (inference)
        snprintf(t, sizeof t, "storage reads/writes stall the GPU (%s per occurrence)", b);
    else
        snprintf(t, sizeof t, "synchronous checkpoint stalls training %s per checkpoint", b);
    snprintf(a, sizeof a,
             "an asynchronous checkpoint hides the write; the device-to-host snapshot (%s per checkpoint, measured) "
             "stays; amortised over %s; per step the longest stall over ranks gates the job",
             st, iv);
    an_finding *x = add(f, self, gain, t,
                        inference ? "keep storage off the serving path: load weights once before serving (from "
                                    "node-local NVMe, memory-mapped safetensors), and move logging or result writes "
                                    "to a background thread"
                                  : "make checkpoints asynchronous (torch.distributed.checkpoint.async_save, or "
                                    "snapshot to pinned host memory and write in a background thread), write to "
                                    "node-local NVMe and upload in the background, and shard the save across ranks",
                        a);
    x->per_occurrence_ns = p->full_ns;
    x->stays_ns = p->stays_ns;
    x->interval_steps = p->interval_steps;
    x->interval_source = p->source;
    an_finding_evidence(x, "per checkpoint %s with the GPU idle: %.1f %% of the time between two at %s; the write "
                        "%.1f %% of it, the snapshot %.1f %%",
                        b, per_occ_pct, iv, pct(p->fix_ns, p->full_ns), pct(p->stays_ns, p->full_ns));
    if (isfinite(p->trace_interval_steps) && f->ctx->opts && (f->ctx->opts->ckpt_every_s > 0 || f->ctx->opts->ckpt_every_steps > 0))
        an_finding_evidence(x, "the trace shows %d checkpoints %.3g steps apart; --ckpt-every is not used", p->n_occ,
                            p->trace_interval_steps);
    storage_evidence(f, x);
}

static void r_dataloader(fctx *f, const rule *self)
{
    double lost = gated_ns(f, get_dataloader);
    if (pct(lost, f->job_ns) < MIN_EXPOSED_PCT)
        return;
    an_finding *x = add(f, self, gain_pct(f, lost), "the GPU waits for the data loader",
                        "raise DataLoader num_workers, set pin_memory=True, persistent_workers=True and a "
                        "prefetch_factor, move decoding/augmentation off the training process, check the dataset "
                        "storage read throughput",
                        "prefetching hides data loading completely; per step the longest wait over ranks gates "
                        "the job");
    an_finding_evidence(x, "exposed data-loader time %.1f %% of the measured step time (per step, maximum over %zu ranks)",
             pct(lost, f->job_ns), f->lr->n_ranks);
}

/* An op's exposed time as % of the measured step time, mean over ranks. */
static double op_pct(const fctx *f, const an_hostop *o)
{
    return pct((double)o->exposed_ns / (double)CP_MAX(f->lr->n_ranks, 1), f->job_ns);
}

/* "ops with the most exposed time: a 3.1 %, b 1.2 %, c 0.4 %" */
static void top_host_ops_evidence(fctx *f, an_finding *x)
{
    const an_hostops_result *ho = f->ho;
    if (!ho || !ho->n)
        return;
    char line[400];
    size_t len = (size_t)snprintf(line, sizeof line, "host ops with the most GPU-idle time:");
    for (size_t i = 0; i < ho->n && i < 3 && len < sizeof line; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s %.80s %.1f %%", i ? "," : "",
                                ho->v[i].label, op_pct(f, &ho->v[i]));
    an_finding_evidence(x, "%s", line);
}

/* The trace records CUDA graph capture (warm-up): host-side findings would
 * judge the capture, not the steady state. */
static bool graph_capture_trace(const fctx *f) { return f->job && f->job->graph_phase == AN_GRAPH_CAPTURE; }

/* Long host ops on the critical path: ops (outside data loading and
 * checkpointing, which have their own rules) that each expose >= 1 % of
 * step time at >= 1 ms per call. CUDA graphs cannot help these. */
static void r_host_work(fctx *f, const rule *self)
{
    const an_hostops_result *ho = f->ho;
    double nr = (double)CP_MAX(f->lr->n_ranks, 1), sum = 0;
    size_t pick[HOST_WORK_MAX_OPS], n = 0;
    if (graph_capture_trace(f))
        return;
    for (size_t i = 0; ho && i < ho->n && n < HOST_WORK_MAX_OPS; i++) {
        const an_hostop *o = &ho->v[i];
        if (op_pct(f, o) < MIN_EXPOSED_PCT)
            break; /* sorted: the rest expose less */
        if (o->calls <= 0 || (double)o->exposed_ns / (double)o->calls < HOST_WORK_CALL_NS ||
            an_host_class_of(o->label) != AN_HC_OTHER)
            continue;
        pick[n++] = i;
        sum += (double)o->exposed_ns / nr;
    }
    if (!n)
        return;
    f->host_work_ns = sum;
    char title[200];
    snprintf(title, sizeof title, "the GPU waits for host work in %.120s%s", ho->v[pick[0]].label,
             n > 1 ? " and other long host ops" : "");
    an_finding *x = add(f, self, gain_pct(f, sum), title,
                        "take this work off the step's critical path: move it into DataLoader workers "
                        "(num_workers > 0) or a background thread with prefetching, do it on the GPU, or overlap it "
                        "with the previous step's GPU work; CUDA graphs and fusion do not help (it is host "
                        "computation, not launch overhead)",
                        "moving or overlapping these ops removes their exposed time");
    for (size_t k = 0; k < n; k++) {
        const an_hostop *o = &ho->v[pick[k]];
        an_finding_evidence(x, "%.120s: the GPU idle %.1f %% of the measured step time while it ran (mean over ranks), "
                            "%lld exposed calls, %.1f ms each",
                            o->label, op_pct(f, o),
                            (long long)o->calls, (double)o->exposed_ns / (double)o->calls / 1e6);
    }
}

/* Launch-bound advice for the job the trace shows. */
static void launch_advice(const fctx *f, const char **title, const char **rec, const char **assumption)
{
    const an_job_result *j = f->job;
    if (j && j->graph_phase == AN_GRAPH_REPLAY) {
        *title = "the GPU waits for the host between CUDA graph replays";
        *rec = "the job already replays CUDA graphs, so the exposed host time is outside them: capture what still "
               "runs eagerly (graph breaks in torch.compile, the optimizer, vLLM/SGLang's eager fallbacks for batch "
               "sizes above the captured ones), remove host synchronisation (.item(), .cpu()) from the step, and "
               "prepare the next inputs while the current graph replays";
        *assumption = "capturing the eager parts and overlapping host preparation removes the exposed host time "
                      "outside data loading";
        return;
    }
    *title = "the GPU waits for the host (launch-bound phases)";
    *assumption = "CUDA graphs / fusion remove the exposed host time outside data loading";
    if (j && j->kind == AN_JOB_INFERENCE)
        *rec = "capture the forward (decode) step in CUDA graphs (torch.compile mode=\"reduce-overhead\"; in vLLM "
               "and SGLang leave CUDA graphs on: no --enforce-eager / --disable-cuda-graph), fuse small kernels, "
               "batch more requests per forward, and keep host synchronisation out of the loop";
    else
        *rec = "capture the step in CUDA graphs (torch.compile mode=\"reduce-overhead\"), fuse small kernels, raise "
               "the batch size per GPU, avoid host synchronisation (.item(), .cpu()) in the step";
}

static void r_launch_bound(fctx *f, const rule *self)
{
    if (graph_capture_trace(f))
        return;
    double host = 0, launch = 0;
    for (size_t r = 0; r < f->lr->n_ranks; r++) {
        const an_step_layers *t = &f->lr->ranks[r].total;
        host += (double)(t->exposed_ns[CP_LAYER_HOST] - t->host_dataloader_ns);
        launch += (double)t->host_launch_ns;
    }
    host /= (double)CP_MAX(f->lr->n_ranks, 1);
    launch /= (double)CP_MAX(f->lr->n_ranks, 1);
    host -= f->host_work_ns; /* HOST_WORK_BOUND's share is not launch overhead */
    if (pct(host, f->job_ns) < LAUNCH_BOUND_PCT)
        return;
    const char *title, *rec, *assumption;
    launch_advice(f, &title, &rec, &assumption);
    an_finding *x = add(f, self, gain_pct(f, host), title, rec, assumption);
    an_finding_evidence(x, "GPU idle while the host runs framework ops or launches: %.1f %% of the measured step time "
                        "(mean over ranks), %.1f %% inside runtime launch/sync calls",
             pct(host, f->job_ns), pct(launch, f->job_ns));
    if (f->job && f->job->graph_launches)
        an_finding_evidence(x, "%" PRId64 " CUDA/HIP graph launches in the trace", f->job->graph_launches);
    top_host_ops_evidence(f, x);
}

/* A trace of CUDA graph capture (vLLM's and SGLang's warm-up, torch.compile's
 * first steps): the host is busy capturing, which says nothing of the
 * steady state, so no host finding is made; this one says why. */
static void r_graph_capture(fctx *f, const rule *self)
{
    if (!graph_capture_trace(f))
        return;
    an_finding *x = add(f, self, NAN, "the trace records CUDA graph capture (warm-up), not the steady state",
                        "profile after warm-up, when the graphs replay (vLLM: after the 'Graph capturing finished' "
                        "log line; torch.compile: after the first iterations), and analyze that trace",
                        "no gain is estimated: host time while capturing is not host time of the running job");
    an_finding_evidence(x, "%" PRId64 " stream captures and %" PRId64 " graph instantiations, no graph launches",
                        f->job->graph_captures, f->job->graph_instantiations);
}

static void r_pageable_copy(fctx *f, const rule *self)
{
    double lost = gated_ns(f, get_pageable);
    if (pct(lost, f->job_ns) < 0.5)
        return;
    an_finding *x = add(f, self, gain_pct(f, lost), "pageable or synchronous host copies block the GPU",
                        "allocate host buffers pinned (pin_memory=True, torch.empty(..., pin_memory=True)) and copy "
                        "with non_blocking=True on a side stream so the copy overlaps compute",
                        "pinned asynchronous copies overlap with compute, removing their exposed time");
    an_finding_evidence(x, "exposed pageable/synchronous copy time %.1f %% of the measured step time (per step, maximum "
                        "over ranks)",
             pct(lost, f->job_ns));
}

static void r_straggler(fctx *f, const rule *self)
{
    for (size_t i = 0; i < f->sr->n; i++) {
        const an_straggler *s = &f->sr->v[i];
        if (s->layer == CP_LAYER_STORAGE) /* that is the checkpoint finding */
            continue;
        char t[160], steps[200] = "";
        size_t len = 0;
        for (size_t k = 0; k < s->n_steps && len + 24 < sizeof steps; k++)
            len += (size_t)snprintf(steps + len, sizeof steps - len, "%s%" PRId64, k ? "," : "", s->steps[k]);
        snprintf(t, sizeof t, "rank %d is a straggler: %.1f %% slower (%s)", s->rank, s->slowdown_pct,
                 cp_layer_key(s->layer));
        an_finding *x = add(f, self, gain_pct(f, (double)s->excess_ns), t,
                            "inspect that rank's host and GPU: thermal or power throttling (nvidia-smi -q -d "
                            "PERFORMANCE), a noisy neighbour process, a slower GPU or PCIe link, imbalanced work "
                            "(uneven sequence lengths or sharding)",
                            "the other ranks stop waiting for it: its excess own time over the median is saved in "
                            "every flagged step");
        x->layer = s->layer;
        /* fixed, it stops exposing its slow layer and the others stop
         * waiting in their collectives */
        x->removes = 1u << s->layer | 1u << CP_LAYER_INTER | 1u << CP_LAYER_INTRA;
        x->rank = s->rank;
        an_finding_evidence(x, "rank %d own time (step minus collective wait) exceeds the median by %.1f %% in %zu steps: %s",
                 s->rank, s->slowdown_pct, s->n_steps, steps);
        an_finding_evidence(x, "outlier rule: median + %.1f x 1.4826 x MAD of own time per step across ranks", f->sr->k);
    }
}

static void r_low_overlap(fctx *f, const rule *self)
{
    if (net_slow(f)) /* fix the network first; the overlap is judged after */
        return;
    double active = 0, overlap = 0;
    for (size_t r = 0; r < f->lr->n_ranks; r++) {
        active += (double)f->lr->ranks[r].total.comm_active_ns;
        overlap += (double)f->lr->ranks[r].total.comm_overlap_ns;
    }
    active /= (double)CP_MAX(f->lr->n_ranks, 1);
    overlap /= (double)CP_MAX(f->lr->n_ranks, 1);
    double exposed = f->mean_exposed[CP_LAYER_INTER] + f->mean_exposed[CP_LAYER_INTRA] - f->mean_wait_ns;
    if (active <= 0 || pct(active, f->job_ns) < 10 || overlap / active >= OVERLAP_LOW ||
        pct(exposed, f->job_ns) < 5)
        return;
    double hideable = CP_MIN(exposed, f->mean_exposed[CP_LAYER_COMPUTE]) * OVERLAP_HIDEABLE;
    char t[160];
    snprintf(t, sizeof t, "communication overlaps compute only %.0f %% of its time", 100 * overlap / active);
    bool inference = f->job && f->job->kind == AN_JOB_INFERENCE;
    /* with members of the groups untraced, the exposed communication may be
     * waiting for them, which no overlap hides: no gain then */
    double unsplit = (double)(f->cr->inter_unsplit_ns + f->cr->intra_unsplit_ns) / (double)CP_MAX(f->lr->n_ranks, 1);
    bool partial = unsplit > 0.5 * active;
    an_finding *x = add(f, self, partial ? NAN : gain_pct(f, hideable), t,
                        inference ? "overlap the tensor-parallel collectives with compute: fused or asynchronous "
                                    "all-reduce (the serving framework's custom all-reduce, async tensor parallel), "
                                    "or overlap micro-batches"
                                  : "overlap communication with compute: DDP gradient bucketing (bucket_cap_mb), FSDP "
                                    "forward/backward prefetch, issuing collectives on a side stream early, or "
                                    "tensor/sequence parallel overlap",
                        "half of the exposed communication (bounded by the compute time) can be hidden behind "
                        "compute");
    x->layer = f->mean_exposed[CP_LAYER_INTER] >= f->mean_exposed[CP_LAYER_INTRA] ? CP_LAYER_INTER : CP_LAYER_INTRA;
    x->removes = 1u << CP_LAYER_INTER | 1u << CP_LAYER_INTRA;
    if (partial) {
        x->severity = AN_SEV_LOW;
        snprintf(x->assumption, sizeof x->assumption,
                 "no gain is estimated: %.0f %% of the communication time is in collectives whose groups have "
                 "untraced ranks, so waiting for them cannot be told from transfer (trace every rank to judge it)",
                 pct(unsplit, active));
    }
    an_finding_evidence(x, "communication kernels active %.1f %% of the measured step time, %.1f %% of that under "
                        "compute (mean over ranks)",
             pct(active, f->job_ns), 100 * overlap / active);
}

/* The rule table: one row per rule. Evidence-file rules follow the trace
 * rules; order here does not matter for the output (sorted by gain). */
/* The allocator's peak near the device's memory (from the memory
 * analyzer's [memory] events): the job is one batch away from an OOM. No
 * time gain: the finding is a risk, its severity by how close it is. */
/* One rank's peak as the memory rule reads it (exchanged under mpirun). */
typedef struct mem_rank {
    int64_t rank, cap, has, device, reserved, allocated, top_bytes, top_len;
} mem_rank;

/* Every rank's peak in rank order: this timeline's, or under mpirun every
 * process's through an_job_gather (each record then its top op's name, NUL
 * included). *names holds the names (the caller frees it); top_len becomes
 * the name's offset in it, -1 none. NULL on a failed exchange. */
static mem_rank *job_mem_peaks(const an_ctx *ctx, size_t *n_out, char **names)
{
    const tl_timeline *tl = ctx->tl;
    cp_buf msg = CP_BUF_INIT;
    for (size_t r = 0; r < tl->n_ranks; r++) {
        an_memory_peak p = { 0 };
        mem_rank m = { tl->ranks[r].meta.rank, tl->ranks[r].meta.gpu_mem_bytes, an_memory_peak_of(ctx, r, &p), 0, 0, 0, 0, 0 };
        m.device = p.device, m.reserved = p.peak_reserved_bytes, m.allocated = p.peak_allocated_bytes;
        m.top_bytes = p.top_op_bytes, m.top_len = p.top_op ? (int64_t)strlen(p.top_op) + 1 : 0;
        cp_buf_append(&msg, &m, sizeof m);
        if (m.top_len)
            cp_buf_append(&msg, p.top_op, (size_t)m.top_len);
    }
    void *all = NULL;
    size_t bytes = 0, pos = 0, n = 0, cap = 0;
    int rc = an_job_gather(ctx, msg.data, msg.len, &all, &bytes);
    cp_buf_free(&msg);
    mem_rank *v = NULL;
    const char *p = all;
    while (rc == 0 && pos < bytes) {
        mem_rank m;
        if (bytes - pos < sizeof m || (memcpy(&m, p + pos, sizeof m), m.top_len < 0) ||
            (uint64_t)m.top_len > bytes - pos - sizeof m || (m.top_len && p[pos + sizeof m + (size_t)m.top_len - 1])) {
            rc = CP_ERR_FORMAT;
            break;
        }
        cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
        v[n] = m;
        v[n++].top_len = m.top_len ? (int64_t)(pos + sizeof m) : -1;
        pos += sizeof m + (size_t)m.top_len;
    }
    if (rc < 0) {
        free(all);
        free(v);
        return NULL;
    }
    for (size_t i = 1; i < n; i++) /* rank order, as one timeline has them */
        for (size_t j = i; j > 0 && v[j].rank < v[j - 1].rank; j--) {
            mem_rank t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *names = all;
    *n_out = n;
    return v ? v : cp_xcalloc(1, sizeof *v);
}

static void r_mem_capacity(fctx *f, const rule *self)
{
    double worst = 0;
    size_t n = 0;
    char *names = NULL;
    mem_rank *mr = job_mem_peaks(f->ctx, &n, &names), w = { 0 };
    for (size_t r = 0; mr && r < n; r++) {
        if (mr[r].cap <= 0 || !mr[r].has)
            continue;
        double frac = (double)mr[r].reserved / (double)mr[r].cap;
        if (frac > worst) {
            worst = frac;
            w = mr[r];
        }
    }
    free(mr);
    an_memory_peak wp = { (int32_t)w.device, w.reserved, w.allocated, w.top_len >= 0 && names ? names + w.top_len : NULL,
                          w.top_bytes };
    if (worst < AN_MEM_NEAR_FRAC) {
        free(names);
        return;
    }
    const double gib = 1024.0 * 1024 * 1024;
    char t[160];
    snprintf(t, sizeof t, "GPU memory is %.0f %% reserved at its peak (rank %d): close to out of memory", 100 * worst,
             (int)w.rank);
    an_finding *x = add(f, self, NAN, t,
                        "leave headroom before scaling the batch or sequence: activation checkpointing, a smaller "
                        "micro-batch with gradient accumulation, sharding optimizer state (ZeRO/FSDP); when reserved "
                        "far exceeds allocated, the caching allocator is fragmented: set "
                        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                        "no time gain is estimated: this is the risk of an out-of-memory failure");
    x->severity = worst >= AN_MEM_CRITICAL_FRAC ? AN_SEV_HIGH : AN_SEV_MEDIUM;
    x->rank = (int32_t)w.rank;
    an_finding_evidence(x, "rank %d cuda:%d: peak reserved %.2f GiB of %.2f GiB, peak allocated %.2f GiB ([memory] events)",
                        (int)w.rank, wp.device, (double)wp.peak_reserved_bytes / gib, (double)w.cap / gib,
                        (double)wp.peak_allocated_bytes / gib);
    if (wp.top_op)
        an_finding_evidence(x, "at the allocated peak %s held the most: %.2f GiB", wp.top_op,
                            (double)wp.top_op_bytes / gib);
    free(names);
}

static const rule rules[] = {
    { "NET_INTER_SLOW", CP_LAYER_INTER, r_net_inter_slow },
    { "NET_INTRA_SLOW", CP_LAYER_INTRA, r_net_intra_slow },
    { "COLL_RANKS_MISSING", CP_LAYER_INTER, r_coll_ranks_missing },
    { "CKPT_SYNC_STALL", CP_LAYER_STORAGE, r_ckpt_sync },
    { "DATALOADER_STALL", CP_LAYER_HOST, r_dataloader },
    { "HOST_WORK_BOUND", CP_LAYER_HOST, r_host_work }, /* before LAUNCH_BOUND: it claims its share */
    { "LAUNCH_BOUND", CP_LAYER_HOST, r_launch_bound },
    { "GRAPH_CAPTURE_TRACE", CP_LAYER_HOST, r_graph_capture },
    { "PAGEABLE_COPY", CP_LAYER_INTRA, r_pageable_copy },
    { "STRAGGLER_RANK", CP_LAYER_COMPUTE, r_straggler },
    { "LOW_OVERLAP", CP_LAYER_INTER, r_low_overlap },
    { "MEM_NEAR_CAPACITY", CP_LAYER_COMPUTE, r_mem_capacity },
};

/* The invariant: no trace finding claims more than the exposed time of the
 * layers its fix removes (as % of the same basis). Rules are written to
 * stay under it; this is the guard, and it says so when it bites. */
static void cap_gains(fctx *f, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        an_finding *x = &f->out->v[i];
        if (!isfinite(x->gain_pct) || !x->removes)
            continue;
        double cap = gain_pct(f, cap_ns(f, x->removes));
        x->cap_pct = cap;
        if (x->gain_pct <= cap)
            continue;
        size_t len = strlen(x->assumption);
        snprintf(x->assumption + len, sizeof x->assumption - len, "; capped at the exposed time of the layers the fix "
                 "removes (%.1f %%, the rule's figure was %.1f %%)", cap, x->gain_pct);
        x->gain_pct = cap;
        x->severity = sev_for(cap);
    }
}

static int finding_cmp(const void *a, const void *b)
{
    const an_finding *x = a, *y = b;
    bool cx = x->severity == AN_SEV_CRITICAL, cy = y->severity == AN_SEV_CRITICAL;
    if (cx != cy) /* a failure signature comes before any slowness */
        return cx ? -1 : 1;
    bool kx = isfinite(x->gain_pct), ky = isfinite(y->gain_pct);
    if (kx != ky) /* a measured gain before an unknown one */
        return kx ? -1 : 1;
    if (kx && x->gain_pct != y->gain_pct)
        return x->gain_pct > y->gain_pct ? -1 : 1;
    if (x->severity != y->severity)
        return x->severity > y->severity ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static void free_result(void *self)
{
    an_findings_result *o = self;
    free(o->v);
    free(o);
}

static void derive(fctx *f)
{
    const an_layers_result *lr = f->lr;
    size_t n = 0;
    for (size_t r = 0; r < lr->n_ranks; r++) {
        const an_step_layers *t = &lr->ranks[r].total;
        if (t->dur_ns <= 0)
            continue;
        n++;
        f->job_ns += (double)t->dur_ns;
        for (int k = 0; k < CP_LAYER__COUNT; k++)
            f->mean_exposed[k] += (double)t->exposed_ns[k];
        f->mean_wait_ns += (double)t->comm_wait_ns;
        f->mean_wait_inter_ns += (double)t->comm_wait_inter_ns;
    }
    if (!n)
        return;
    f->job_ns /= (double)n;
    for (int k = 0; k < CP_LAYER__COUNT; k++)
        f->mean_exposed[k] /= (double)n;
    f->mean_wait_ns /= (double)n;
    f->mean_wait_inter_ns /= (double)n;
}

/* Evidence findings join the list; with a trace their gains (shares of
 * their own benchmark's time) are kept in words only. */
static void merge_evidence(fctx *f)
{
    const an_evidence_result *ev = f->ctx->results[AN_evidence];
    for (size_t i = 0; ev && i < ev->n; i++) {
        an_finding *x = an_finding_add(f->out, ev->v[i].code, ev->v[i].layer, 0, "", NULL, NULL);
        uint32_t order = x->order;
        *x = ev->v[i];
        x->order = order;
        if (f->job_ns > 0 && isfinite(x->gain_pct)) {
            /* an evidence file's gain is a share of its own benchmark's time,
             * not of the traced step: next to trace findings it would rank
             * on a different scale, so it is kept in words only */
            snprintf(x->assumption, sizeof x->assumption, "%.1f %% of the benchmark's own time, not of the traced "
                     "step time (so not ranked with the trace findings): %.190s", x->gain_pct, ev->v[i].assumption);
            x->gain_pct = NAN;
        }
    }
}

/* Trace findings of earlier analyzers (an_links: wire bandwidth per rank
 * pair; an_roofline: kernels Nsight Compute profiled) join the rule findings
 * before the cap: same gain scale, same cap. Without a trace an_roofline's
 * gains are shares of the profiled kernels' own time and join uncapped. */
static void merge_trace_findings(fctx *f, an_id id)
{
    const an_findings_result *lk = f->ctx->results[id];
    for (size_t i = 0; lk && i < lk->n; i++) {
        an_finding *x = an_finding_add(f->out, lk->v[i].code, lk->v[i].layer, 0, "", NULL, NULL);
        uint32_t order = x->order;
        *x = lk->v[i];
        x->order = order;
    }
}

static void put_verdict(const fctx *f, rep_report *rp)
{
    const an_findings_result *out = f->out;
    rep_node *v = rep_obj(rp, rp->root, "verdict", "verdict");
    if (out->n) {
        rep_str(rp, v, "bottleneck_layer", "bottleneck layer", cp_layer_key(out->v[0].layer));
        rep_str(rp, v, "top_finding", "top finding", out->v[0].title);
    } else {
        rep_null(rp, v, "bottleneck_layer", "bottleneck layer", NULL);
        rep_str(rp, v, "top_finding", "top finding", "no problem found by the rules");
    }
    static const char *const t_step = "measured step time (all steps, mean over ranks)";
    static const char *const t_amort = "step time with periodic stalls amortised (the gains' basis)";
    if (f->job_ns > 0) {
        rep_int(rp, v, "step_time_ns", t_step, (int64_t)f->job_ns, "ns");
        rep_int(rp, v, "amortised_step_time_ns", t_amort, (int64_t)f->base_ns, "ns");
    } else {
        rep_null(rp, v, "step_time_ns", t_step, "ns");
        rep_null(rp, v, "amortised_step_time_ns", t_amort, "ns");
    }
}

static void put_periodic(rep_report *rp, rep_node *o, const an_finding *x)
{
    if (!isfinite(x->per_occurrence_ns)) {
        rep_null(rp, o, "periodic", "periodic stall", NULL)->flags |= REP_F_NO_TEXT;
        return;
    }
    rep_node *p = rep_obj(rp, o, "periodic", "periodic stall");
    rep_int(rp, p, "cost_per_occurrence_ns", "cost per occurrence", (int64_t)x->per_occurrence_ns, "ns");
    rep_int(rp, p, "stays_per_occurrence_ns", "of which the fix leaves", (int64_t)x->stays_ns, "ns");
    rep_num(rp, p, "interval_steps", "steps between occurrences", x->interval_steps, NULL);
    rep_str(rp, p, "interval_source", "interval from", x->interval_source);
}

static void put_findings(const fctx *f, rep_report *rp)
{
    rep_node *arr = rep_arr(rp, rp->root, "findings", "findings (by estimated gain)");
    for (size_t i = 0; i < f->out->n; i++) {
        const an_finding *x = &f->out->v[i];
        rep_node *o = rep_obj(rp, arr, NULL, NULL);
        rep_str(rp, o, "code", "code", x->code);
        rep_str(rp, o, "layer", "layer", cp_layer_key(x->layer));
        rep_str(rp, o, "severity", "severity", an_severity_name(x->severity));
        rep_str(rp, o, "title", "title", x->title);
        rep_num(rp, o, "estimated_gain_pct", "estimated gain", x->gain_pct, "%");
        rep_str(rp, o, "gain_assumption", "assuming", x->assumption);
        rep_node *rm = rep_arr(rp, o, "removes_layers", "the fix removes exposed time of");
        rm->flags |= REP_F_NO_TEXT;
        for (int l = 0; l < CP_LAYER__COUNT; l++)
            if (x->removes & (1u << l))
                rep_str(rp, rm, NULL, NULL, cp_layer_key((cp_layer)l));
        put_periodic(rp, o, x);
        rep_node *evn = rep_arr(rp, o, "evidence", "evidence");
        for (int k = 0; k < x->n_evidence; k++)
            rep_str(rp, evn, NULL, NULL, x->evidence[k]);
        rep_str(rp, o, "recommendation", "recommendation", x->recommendation);
    }
}

int an_findings_run(an_ctx *ctx)
{
    if (ctx->not_computed[AN_links] || ctx->not_computed[AN_roofline]) { /* theirs would be among ours */
        ctx->not_computed[AN_findings] = true;
        return 0;
    }
    int rc;
    const an_layers_result *own = ctx->results[AN_layers];
    an_layers_result *lr = an_layers_job(ctx, own, &rc); /* every rank's, under mpirun too */
    if (!lr)
        return rc;
    fctx f = { .ctx = ctx, .lr = lr, .cr = ctx->results[AN_collectives],
               .sr = ctx->results[AN_stragglers], .ho = ctx->results[AN_hostops], .job = ctx->results[AN_job] };
    an_findings_result *out = cp_xcalloc(1, sizeof *out);
    out->free = free_result;
    ctx->results[AN_findings] = out;
    f.out = out;
    derive(&f);
    gain_basis(&f);
    if (f.job_ns > 0) {
        for (size_t i = 0; i < CP_ARRAY_LEN(rules); i++)
            rules[i].eval(&f, &rules[i]);
        merge_trace_findings(&f, AN_links);
        merge_trace_findings(&f, AN_roofline);
        cap_gains(&f, 0, out->n);
    } else {
        merge_trace_findings(&f, AN_roofline);
    }
    merge_evidence(&f);
    out->job_ns = f.job_ns;
    out->base_ns = f.base_ns;
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, finding_cmp);
    put_verdict(&f, ctx->rep);
    put_findings(&f, ctx->rep);
    an_layers_job_free(own, lr);
    return 0;
}
