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
#include "an_verdict.h"
#include "../base/util.h"

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

typedef struct fctx {
    an_ctx *ctx;
    const an_layers_result *lr;
    const an_collectives_result *cr;
    const an_stragglers_result *sr;
    double job_ns;                        /* mean over ranks of total step time */
    double mean_exposed[AN_L__COUNT];
    double mean_wait_inter_ns, mean_wait_ns;
    const an_hostops_result *ho;
    double host_work_ns;                  /* mean over ranks, claimed by HOST_WORK_BOUND */
    an_findings_result *out;
} fctx;

typedef struct rule {
    const char *code;
    an_layer layer;
    void (*eval)(fctx *f, const struct rule *self);
} rule;

static double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

static an_severity sev_for(double gain_pct)
{
    return gain_pct >= 10 ? AN_SEV_HIGH : gain_pct >= 3 ? AN_SEV_MEDIUM : gain_pct >= 0.5 ? AN_SEV_LOW : AN_SEV_INFO;
}

an_finding *an_finding_add(an_findings_result *o, const char *code, an_layer layer, double gain_pct,
                           const char *title, const char *rec, const char *assumption)
{
    cp_xgrow((void **)&o->v, &o->cap, o->n + 1, sizeof *o->v);
    an_finding *x = &o->v[o->n++];
    memset(x, 0, sizeof *x);
    x->rank = -1;
    x->order = (uint32_t)(o->n - 1);
    x->code = code;
    x->layer = layer;
    x->gain_pct = gain_pct;
    x->severity = isfinite(gain_pct) ? sev_for(gain_pct) : AN_SEV_INFO;
    snprintf(x->title, sizeof x->title, "%s", title);
    x->recommendation = rec;
    snprintf(x->assumption, sizeof x->assumption, "%s", assumption ? assumption : "");
    return x;
}

static an_finding *add(fctx *f, const rule *r, double gain_pct, const char *title, const char *rec,
                       const char *assumption)
{
    return an_finding_add(f->out, r->code, r->layer, gain_pct, title, rec, assumption);
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


/* Per step, the maximum over ranks of a per-step quantity, summed over
 * steps matched by id: the time a stall on any rank costs the job. */
static double gated_ns(const fctx *f, int64_t (*get)(const an_step_layers *))
{
    const an_layers_result *lr = f->lr;
    double sum = 0;
    if (lr->n_ranks == 0)
        return 0;
    /* rank 0's steps drive the ids; others are looked up by position and
     * id (steps are sorted by time and ids increase with time) */
    const an_rank_layers *r0 = &lr->ranks[0];
    for (size_t s = 0; s < r0->n_steps; s++) {
        int64_t id = r0->steps[s].id, mx = get(&r0->steps[s]);
        for (size_t r = 1; r < lr->n_ranks; r++) {
            const an_rank_layers *rl = &lr->ranks[r];
            for (size_t k = 0; k < rl->n_steps; k++)
                if (rl->steps[k].id == id) {
                    mx = CP_MAX(mx, get(&rl->steps[k]));
                    break;
                }
        }
        sum += (double)mx;
    }
    return sum;
}

/* a checkpoint costs its exposed storage time plus the copies it makes
 * while the GPU does nothing else */
static int64_t get_storage(const an_step_layers *s) { return s->exposed_ns[AN_L_STORAGE] + s->copy_in_storage_ns; }
static int64_t get_dataloader(const an_step_layers *s) { return s->host_dataloader_ns; }
static int64_t get_pageable(const an_step_layers *s) { return s->copy_pageable_ns; }

static void fmt_ns(char *b, size_t n, double ns)
{
    if (ns >= 1e9)
        snprintf(b, n, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(b, n, "%.2f ms", ns / 1e6);
    else
        snprintf(b, n, "%.1f us", ns / 1e3);
}

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

static bool net_slow(const fctx *f)
{
    const an_collectives_result *cr = f->cr;
    return isfinite(cr->inter_busbw_gbps) && isfinite(cr->expected_inter_gbps) && cr->expected_inter_gbps > 0 &&
           cr->inter_busbw_gbps < NET_SLOW_FRAC * cr->expected_inter_gbps;
}

/* ---- rules on the traces ---- */

static void r_net_inter_slow(fctx *f, const rule *self)
{
    const an_collectives_result *cr = f->cr;
    double transfer = f->mean_exposed[AN_L_INTER] - f->mean_wait_inter_ns;
    if (!net_slow(f) || pct(transfer, f->job_ns) < MIN_EXPOSED_PCT)
        return;
    double ratio = cr->inter_busbw_gbps / cr->expected_inter_gbps;
    double gain = pct(transfer * (1 - ratio / NET_TARGET_FRAC), f->job_ns);
    char a[256], t[160];
    snprintf(a, sizeof a,
             "exposed inter-node transfer time (wait excluded) scaled from the measured busbw %.1f GB/s to %.0f %% of "
             "the expected %.1f GB/s",
             cr->inter_busbw_gbps, 100 * NET_TARGET_FRAC, cr->expected_inter_gbps);
    snprintf(t, sizeof t, "inter-node collectives reach %.0f %% of the link bandwidth", 100 * ratio);
    an_finding *x = add(f, self, gain, t,
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
                 an_coll_op_key(g->op), g->median_bytes, g->count, g->p50_busbw_gbps, g->p95_busbw_gbps);
    an_finding_evidence(x, "exposed inter-node time %.1f %% of step time (of which waiting for other ranks %.1f %%), mean over "
                "%zu ranks",
             pct(f->mean_exposed[AN_L_INTER], f->job_ns), pct(f->mean_wait_inter_ns, f->job_ns), f->lr->n_ranks);
    an_finding_evidence(x, "nodes: %d (%s)", f->lr->n_nodes, f->lr->node_source);
}

static void r_net_intra_slow(fctx *f, const rule *self)
{
    const an_collectives_result *cr = f->cr;
    double transfer = f->mean_exposed[AN_L_INTRA] - (f->mean_wait_ns - f->mean_wait_inter_ns);
    if (!isfinite(cr->intra_busbw_gbps) || !isfinite(cr->expected_intra_gbps) || cr->expected_intra_gbps <= 0 ||
        cr->intra_busbw_gbps >= INTRA_SLOW_FRAC * cr->expected_intra_gbps || pct(transfer, f->job_ns) < MIN_EXPOSED_PCT)
        return;
    double ratio = cr->intra_busbw_gbps / cr->expected_intra_gbps;
    char a[256], t[160];
    snprintf(a, sizeof a, "exposed intra-node time scaled from %.1f GB/s to %.0f %% of the expected %.1f GB/s",
             cr->intra_busbw_gbps, 100 * INTRA_TARGET_FRAC, cr->expected_intra_gbps);
    snprintf(t, sizeof t, "intra-node collectives reach %.0f %% of NVLink bandwidth", 100 * ratio);
    an_finding *x = add(f, self, pct(transfer * (1 - ratio / INTRA_TARGET_FRAC), f->job_ns), t,
                        "check that NCCL uses P2P/NVLink inside the node (NCCL_DEBUG=INFO shows P2P/IPC or P2P/CUMEM, "
                        "not SHM), that NCCL_P2P_DISABLE is unset and that nvidia-smi topo -m shows NV# links; "
                        "in containers allow IPC (--ipc=host)",
                        a);
    an_finding_evidence(x, "intra-node busbw %.1f GB/s vs expected %.1f GB/s (%s)", cr->intra_busbw_gbps, cr->expected_intra_gbps,
             cr->expected_intra_source ? cr->expected_intra_source : "?");
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
            int64_t v = get_storage(&rl->steps[s]);
            if (v * 100 < rl->steps[s].dur_ns) /* under 1 % of the step: not a stall */
                continue;
            n++;
            mx = CP_MAX(mx, v);
            if (len + 24 < sizeof steps)
                len += (size_t)snprintf(steps + len, sizeof steps - len, "%s%" PRId64, n > 1 ? "," : "", rl->steps[s].id);
        }
        if (!n)
            continue;
        fmt_ns(longest, sizeof longest, (double)mx);
        an_finding_evidence(x, "rank %d: %zu stall%s in checkpoint/IO regions with the GPU idle, longest %s, steps %s", rl->rank, n,
                 n == 1 ? "" : "s", longest, steps);
    }
}

static void r_ckpt_sync(fctx *f, const rule *self)
{
    double lost = gated_ns(f, get_storage);
    if (pct(lost, f->job_ns) < 0.5)
        return;
    char t[160], b[32];
    fmt_ns(b, sizeof b, lost);
    snprintf(t, sizeof t, "synchronous checkpoint/IO stalls training (%s in total)", b);
    an_finding *x = add(f, self, pct(lost, f->job_ns), t,
                        "make checkpoints asynchronous (torch.distributed.checkpoint.async_save, or snapshot to "
                        "pinned host memory and write in a background thread), write to node-local NVMe and upload "
                        "in the background, and shard the save across ranks",
                        "an asynchronous checkpoint hides the write entirely; the device-to-host snapshot is "
                        "assumed negligible; per step the longest stall over ranks gates the job");
    storage_evidence(f, x);
}

static void r_dataloader(fctx *f, const rule *self)
{
    double lost = gated_ns(f, get_dataloader);
    if (pct(lost, f->job_ns) < MIN_EXPOSED_PCT)
        return;
    an_finding *x = add(f, self, pct(lost, f->job_ns), "the GPU waits for the data loader",
                        "raise DataLoader num_workers, set pin_memory=True, persistent_workers=True and a "
                        "prefetch_factor, move decoding/augmentation off the training process, check the dataset "
                        "storage read throughput",
                        "prefetching hides data loading completely; per step the longest wait over ranks gates "
                        "the job");
    an_finding_evidence(x, "exposed data-loader time %.1f %% of step time (per step, maximum over %zu ranks)",
             pct(lost, f->job_ns), f->lr->n_ranks);
}

/* An op's exposed time as % of step time, mean over ranks. */
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
                                tl_str(f->ctx->tl, ho->v[i].name), op_pct(f, &ho->v[i]));
    an_finding_evidence(x, "%s", line);
}

/* Long host ops on the critical path: ops (outside data loading and
 * checkpointing, which have their own rules) that each expose >= 1 % of
 * step time at >= 1 ms per call. CUDA graphs cannot help these. */
static void r_host_work(fctx *f, const rule *self)
{
    const an_hostops_result *ho = f->ho;
    double nr = (double)CP_MAX(f->lr->n_ranks, 1), sum = 0;
    size_t pick[HOST_WORK_MAX_OPS], n = 0;
    for (size_t i = 0; ho && i < ho->n && n < HOST_WORK_MAX_OPS; i++) {
        const an_hostop *o = &ho->v[i];
        if (op_pct(f, o) < MIN_EXPOSED_PCT)
            break; /* sorted: the rest expose less */
        if (o->calls <= 0 || (double)o->exposed_ns / (double)o->calls < HOST_WORK_CALL_NS ||
            an_host_class_of(tl_str(f->ctx->tl, o->name)) != AN_HC_OTHER)
            continue;
        pick[n++] = i;
        sum += (double)o->exposed_ns / nr;
    }
    if (!n)
        return;
    f->host_work_ns = sum;
    char title[200];
    snprintf(title, sizeof title, "the GPU waits for host work in %.120s%s", tl_str(f->ctx->tl, ho->v[pick[0]].name),
             n > 1 ? " and other long host ops" : "");
    an_finding *x = add(f, self, pct(sum, f->job_ns), title,
                        "take this work off the step's critical path: move it into DataLoader workers "
                        "(num_workers > 0) or a background thread with prefetching, do it on the GPU, or overlap it "
                        "with the previous step's GPU work; CUDA graphs and fusion do not help (it is host "
                        "computation, not launch overhead)",
                        "moving or overlapping these ops removes their exposed time");
    for (size_t k = 0; k < n; k++) {
        const an_hostop *o = &ho->v[pick[k]];
        an_finding_evidence(x, "%.120s: the GPU idle %.1f %% of step time while it ran (mean over ranks), %lld "
                            "exposed calls, %.1f ms each",
                            tl_str(f->ctx->tl, o->name), op_pct(f, o),
                            (long long)o->calls, (double)o->exposed_ns / (double)o->calls / 1e6);
    }
}

static void r_launch_bound(fctx *f, const rule *self)
{
    double host = 0, launch = 0;
    for (size_t r = 0; r < f->lr->n_ranks; r++) {
        const an_step_layers *t = &f->lr->ranks[r].total;
        host += (double)(t->exposed_ns[AN_L_HOST] - t->host_dataloader_ns);
        launch += (double)t->host_launch_ns;
    }
    host /= (double)CP_MAX(f->lr->n_ranks, 1);
    launch /= (double)CP_MAX(f->lr->n_ranks, 1);
    host -= f->host_work_ns; /* HOST_WORK_BOUND's share is not launch overhead */
    if (pct(host, f->job_ns) < LAUNCH_BOUND_PCT)
        return;
    an_finding *x = add(f, self, pct(host, f->job_ns), "the GPU waits for the host (launch-bound phases)",
                        "capture the step in CUDA graphs (torch.compile mode=\"reduce-overhead\"), fuse small "
                        "kernels, raise the batch size per GPU, avoid host synchronisation (.item(), .cpu()) in "
                        "the step",
                        "CUDA graphs / fusion remove the exposed host time outside data loading");
    an_finding_evidence(x, "GPU idle while the host runs framework ops or launches: %.1f %% of step time (mean over ranks), %.1f "
                "%% inside runtime launch/sync calls",
             pct(host, f->job_ns), pct(launch, f->job_ns));
    top_host_ops_evidence(f, x);
}

static void r_pageable_copy(fctx *f, const rule *self)
{
    double lost = gated_ns(f, get_pageable);
    if (pct(lost, f->job_ns) < 0.5)
        return;
    an_finding *x = add(f, self, pct(lost, f->job_ns), "pageable or synchronous host copies block the GPU",
                        "allocate host buffers pinned (pin_memory=True, torch.empty(..., pin_memory=True)) and copy "
                        "with non_blocking=True on a side stream so the copy overlaps compute",
                        "pinned asynchronous copies overlap with compute, removing their exposed time");
    an_finding_evidence(x, "exposed pageable/synchronous copy time %.1f %% of step time (per step, maximum over ranks)",
             pct(lost, f->job_ns));
}

static void r_straggler(fctx *f, const rule *self)
{
    for (size_t i = 0; i < f->sr->n; i++) {
        const an_straggler *s = &f->sr->v[i];
        if (s->layer == AN_L_STORAGE) /* that is the checkpoint finding */
            continue;
        char t[160], steps[200] = "";
        size_t len = 0;
        for (size_t k = 0; k < s->n_steps && len + 24 < sizeof steps; k++)
            len += (size_t)snprintf(steps + len, sizeof steps - len, "%s%" PRId64, k ? "," : "", s->steps[k]);
        snprintf(t, sizeof t, "rank %d is a straggler: %.1f %% slower (%s)", s->rank, s->slowdown_pct,
                 an_layer_key(s->layer));
        an_finding *x = add(f, self, pct((double)s->excess_ns, f->job_ns), t,
                            "inspect that rank's host and GPU: thermal or power throttling (nvidia-smi -q -d "
                            "PERFORMANCE), a noisy neighbour process, a slower GPU or PCIe link, imbalanced work "
                            "(uneven sequence lengths or sharding)",
                            "the other ranks stop waiting for it: its excess own time over the median is saved in "
                            "every flagged step");
        x->layer = s->layer;
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
    double exposed = f->mean_exposed[AN_L_INTER] + f->mean_exposed[AN_L_INTRA] - f->mean_wait_ns;
    if (active <= 0 || pct(active, f->job_ns) < 10 || overlap / active >= OVERLAP_LOW ||
        pct(exposed, f->job_ns) < 5)
        return;
    double hideable = CP_MIN(exposed, f->mean_exposed[AN_L_COMPUTE]) * OVERLAP_HIDEABLE;
    char t[160];
    snprintf(t, sizeof t, "communication overlaps compute only %.0f %% of its time", 100 * overlap / active);
    an_finding *x = add(f, self, pct(hideable, f->job_ns), t,
                        "overlap communication with compute: DDP gradient bucketing (bucket_cap_mb), FSDP "
                        "forward/backward prefetch, issuing collectives on a side stream early, or tensor/sequence "
                        "parallel overlap",
                        "half of the exposed communication (bounded by the compute time) can be hidden behind "
                        "compute");
    x->layer = f->mean_exposed[AN_L_INTER] >= f->mean_exposed[AN_L_INTRA] ? AN_L_INTER : AN_L_INTRA;
    an_finding_evidence(x, "communication kernels active %.1f %% of step time, %.1f %% of that under compute (mean over ranks)",
             pct(active, f->job_ns), 100 * overlap / active);
}

/* The rule table: one row per rule. Evidence-file rules follow the trace
 * rules; order here does not matter for the output (sorted by gain). */
static const rule rules[] = {
    { "NET_INTER_SLOW", AN_L_INTER, r_net_inter_slow },
    { "NET_INTRA_SLOW", AN_L_INTRA, r_net_intra_slow },
    { "CKPT_SYNC_STALL", AN_L_STORAGE, r_ckpt_sync },
    { "DATALOADER_STALL", AN_L_HOST, r_dataloader },
    { "HOST_WORK_BOUND", AN_L_HOST, r_host_work }, /* before LAUNCH_BOUND: it claims its share */
    { "LAUNCH_BOUND", AN_L_HOST, r_launch_bound },
    { "PAGEABLE_COPY", AN_L_INTRA, r_pageable_copy },
    { "STRAGGLER_RANK", AN_L_COMPUTE, r_straggler },
    { "LOW_OVERLAP", AN_L_INTER, r_low_overlap },
};

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
        for (int k = 0; k < AN_L__COUNT; k++)
            f->mean_exposed[k] += (double)t->exposed_ns[k];
        f->mean_wait_ns += (double)t->comm_wait_ns;
        f->mean_wait_inter_ns += (double)t->comm_wait_inter_ns;
    }
    if (!n)
        return;
    f->job_ns /= (double)n;
    for (int k = 0; k < AN_L__COUNT; k++)
        f->mean_exposed[k] /= (double)n;
    f->mean_wait_ns /= (double)n;
    f->mean_wait_inter_ns /= (double)n;
}

int an_findings_run(an_ctx *ctx)
{
    rep_report *rp = ctx->rep;
    fctx f = { .ctx = ctx, .lr = ctx->results[AN_layers], .cr = ctx->results[AN_collectives],
               .sr = ctx->results[AN_stragglers], .ho = ctx->results[AN_hostops] };
    an_findings_result *out = cp_xcalloc(1, sizeof *out);
    out->free = free_result;
    ctx->results[AN_findings] = out;
    f.out = out;
    derive(&f);
    if (f.job_ns > 0)
        for (size_t i = 0; i < CP_ARRAY_LEN(rules); i++)
            rules[i].eval(&f, &rules[i]);
    const an_evidence_result *ev = ctx->results[AN_evidence];
    for (size_t i = 0; ev && i < ev->n; i++) {
        an_finding *x = an_finding_add(out, ev->v[i].code, ev->v[i].layer, 0, "", NULL, NULL);
        uint32_t order = x->order;
        *x = ev->v[i];
        x->order = order;
        if (f.job_ns > 0 && isfinite(x->gain_pct)) {
            /* an evidence file's gain is a share of its own benchmark's time,
             * not of the traced step: next to trace findings it would rank
             * on a different scale, so it is kept in words only */
            snprintf(x->assumption, sizeof x->assumption, "%.1f %% of the benchmark's own time, not of the traced "
                     "step time (so not ranked with the trace findings): %.190s", x->gain_pct, ev->v[i].assumption);
            x->gain_pct = NAN;
        }
    }
    /* trace findings of later analyzers (an_links): gains on the same scale */
    const an_findings_result *lk = ctx->results[AN_links];
    for (size_t i = 0; lk && i < lk->n; i++) {
        an_finding *x = an_finding_add(out, lk->v[i].code, lk->v[i].layer, 0, "", NULL, NULL);
        uint32_t order = x->order;
        *x = lk->v[i];
        x->order = order;
    }
    out->job_ns = f.job_ns;
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, finding_cmp);

    rep_node *v = rep_obj(rp, rp->root, "verdict", "verdict");
    if (out->n) {
        rep_str(rp, v, "bottleneck_layer", "bottleneck layer", an_layer_key(out->v[0].layer));
        rep_str(rp, v, "top_finding", "top finding", out->v[0].title);
    } else {
        rep_null(rp, v, "bottleneck_layer", "bottleneck layer", NULL);
        rep_str(rp, v, "top_finding", "top finding", "no problem found by the rules");
    }
    if (f.job_ns > 0)
        rep_int(rp, v, "step_time_ns", "measured step time (all steps, mean over ranks)", (int64_t)f.job_ns, "ns");
    else
        rep_null(rp, v, "step_time_ns", "measured step time (all steps, mean over ranks)", "ns");
    rep_node *arr = rep_arr(rp, rp->root, "findings", "findings (by estimated gain)");
    for (size_t i = 0; i < out->n; i++) {
        const an_finding *x = &out->v[i];
        rep_node *o = rep_obj(rp, arr, NULL, NULL);
        rep_str(rp, o, "code", "code", x->code);
        rep_str(rp, o, "layer", "layer", an_layer_key(x->layer));
        rep_str(rp, o, "severity", "severity", an_severity_name(x->severity));
        rep_str(rp, o, "title", "title", x->title);
        rep_num(rp, o, "estimated_gain_pct", "estimated gain", x->gain_pct, "%");
        rep_str(rp, o, "gain_assumption", "assuming", x->assumption);
        rep_node *evn = rep_arr(rp, o, "evidence", "evidence");
        for (int k = 0; k < x->n_evidence; k++)
            rep_str(rp, evn, NULL, NULL, x->evidence[k]);
        rep_str(rp, o, "recommendation", "recommendation", x->recommendation);
    }
    return 0;
}
