/* diag_rules.c - the diagnose rule table: reader facts -> verdicts.
 *
 * Each rule looks at the facts of every input (c->inputs[i].nccl / .torch /
 * .dmesg / .smiq) and, when its signature is present, raises a verdict with
 * a confidence, the evidence lines and concrete next steps. Verdicts are
 * keyed by code, so two rules that reach the same conclusion (Xid 48 in dmesg
 * and uncorrectable ECC counts in nvidia-smi -q) add to one verdict.
 *
 * Confidence scale (documented in docs/FORMATS.md, "diagnose"):
 *   0.85-0.95  a specific error signature that names the cause (IB completion
 *              error 12, Xid 79, a desync report, an OOM with its numbers)
 *   0.6-0.8    a signature with a usual but not certain cause (same-SeqNum
 *              timeout on every rank, an NVLS setup failure)
 *   0.3-0.55   a configuration state worth fixing that may not be the failure
 *              (socket fallback, GDR off, NVLS unavailable)
 * The engine adds FIRST_FAILURE_BONUS to the verdict holding the earliest
 * non-symptom error across ranks.
 *
 * How to add a rule (checklist):
 *  1. If the signature is a new kind of line, teach the reader in src/readers
 *     (fact + line number), with a unit test on a fixture line.
 *  2. Write `static void rule_x(dg_ctx *c, const dg_rule *r)`: find the facts,
 *     dg_verdict_get(c, code, layer), dg_verdict_raise(v, confidence) on the
 *     scale above, set v->title, dg_verdict_evidence() for each line that
 *     shows it, dg_verdict_step() with commands a user can paste.
 *  3. Add one row to dg_rules[] below (name = default code, layer, summary).
 *  4. Document the code in docs/FORMATS.md (diagnose verdict codes) and add a
 *     test in tests/unit/test_diagnose.c whose top verdict is the new code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "../base/paths.h"
#include "../base/util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* "12.34 GiB" / "4.62 MiB"; "?" when unknown */
static const char *fmt_bytes(double b, char *buf, size_t size)
{
    if (b < 0) snprintf(buf, size, "?");
    else if (b >= GIB) snprintf(buf, size, "%.2f GiB", b / GIB);
    else snprintf(buf, size, "%.2f MiB", b / (1024.0 * 1024.0));
    return buf;
}

static void ev_nccl(dg_verdict *v, int i, const rd_nccl_at *at) { dg_verdict_evidence(v, i, at->line, at->text); }
static void ev_torch(dg_verdict *v, int i, const rd_torch_at *at) { dg_verdict_evidence(v, i, at->line, at->text); }

/* ---- CUDA OOM ----------------------------------------------------------- */

static void rule_oom(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    const rd_torch_oom *first = NULL;
    int first_in = -1, n = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_torch_facts *t = c->inputs[i].torch;
        for (int k = 0; k < t->n_ooms; k++) {
            n++;
            if (!first || rd_time_cmp(t->ooms[k].at.ts, first->at.ts) == -1) {
                first = &t->ooms[k];
                first_in = i;
            }
        }
    }
    if (!first) return;
    const rd_torch_oom *o = first;
    /* Fragmentation: the cache already holds a meaningful share of the GPU
     * (>= 5 %) unused, at least the request (or >= 10 % of the GPU and half
     * the request), yet no block fits. A few hundred MiB cached on a full GPU
     * is not the problem: the GPU is full (oversized). */
    bool known = o->requested_bytes > 0 && o->reserved_unalloc_bytes >= 0;
    double unalloc = o->reserved_unalloc_bytes, total = o->total_bytes;
    bool frag = known && (total <= 0 || unalloc >= 0.05 * total) &&
                (unalloc >= o->requested_bytes || (total > 0 && unalloc >= 0.1 * total && unalloc >= 0.5 * o->requested_bytes));
    dg_verdict *v = dg_verdict_get(c, frag ? "oom_fragmentation" : known ? "oom_oversized" : "cuda_oom", "compute");
    if (!v) return;
    dg_verdict_raise(v, known ? 0.9 : 0.75);
    v->rank = o->at.rank;
    char req[32], fre[32], tot[32], alloc[32], ru[32], where[64] = "";
    if (o->at.rank >= 0) snprintf(where, sizeof where, " on rank %d", o->at.rank);
    dg_verdict_title(v, "CUDA out of memory%s (GPU %d, %s phase): tried to allocate %s with %s free of %s; %s allocated by PyTorch, %s reserved but unallocated%s",
             where, o->gpu, rd_torch_phase_name(o->phase), fmt_bytes(o->requested_bytes, req, sizeof req),
             fmt_bytes(o->free_bytes, fre, sizeof fre), fmt_bytes(o->total_bytes, tot, sizeof tot),
             fmt_bytes(o->allocated_bytes, alloc, sizeof alloc),
             fmt_bytes(o->reserved_unalloc_bytes, ru, sizeof ru),
             frag ? " - fragmentation" : known ? " - the allocation does not fit" : "");
    ev_torch(v, first_in, &o->at);
    if (o->frame[0]) dg_verdict_step(v, "the failing allocation is at %s", o->frame);
    if (n > 1) dg_verdict_step(v, "%d out-of-memory errors in the inputs; the earliest is shown", n);
    if (frag) {
        dg_verdict_step(v, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
        dg_verdict_step(v, "or limit block splitting: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512");
        dg_verdict_step(v, "record a memory snapshot: torch.cuda.memory._record_memory_history(); torch.cuda.memory._dump_snapshot('oom.pickle')");
    } else {
        dg_verdict_step(v, "reduce the micro-batch size or sequence length");
        if (o->phase == RD_TORCH_PHASE_BACKWARD || o->phase == RD_TORCH_PHASE_FORWARD)
            dg_verdict_step(v, "enable activation checkpointing (torch.utils.checkpoint) for the %s activations", rd_torch_phase_name(o->phase));
        if (o->phase == RD_TORCH_PHASE_OPTIMIZER)
            dg_verdict_step(v, "shard optimizer state (ZeRO-1/2, FSDP) or use a lower-precision optimizer state");
        dg_verdict_step(v, "split the model further: more tensor/pipeline parallelism or FSDP/ZeRO-3");
        dg_verdict_step(v, "python -c 'import torch; print(torch.cuda.memory_summary())' at the failing step to see the largest users");
    }
}

/* ---- NCCL watchdog ------------------------------------------------------ */

typedef struct wd_ref {
    const rd_torch_watchdog *w;
    int input;
} wd_ref;

static void watchdog_verdicts(dg_ctx *c, const wd_ref *refs, int n, const rd_torch_desync *desync,
                              const rd_torch_facts *desync_t, int desync_in);

static void rule_watchdog(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    int n = 0, desync_in = -1;
    const rd_torch_desync *desync = NULL;
    const rd_torch_facts *desync_t = NULL;
    for (int i = 0; i < c->n_inputs; i++) n += c->inputs[i].torch->n_timeouts;
    wd_ref *refs = cp_xmalloc((size_t)(n ? n : 1) * sizeof *refs);
    n = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_torch_facts *t = c->inputs[i].torch;
        for (int k = 0; k < t->n_timeouts; k++) refs[n++] = (wd_ref){&t->timeouts[k], i};
        if (t->n_desyncs && !desync) {
            desync = &t->desyncs[0];
            desync_t = t;
            desync_in = i;
        }
    }
    if (n || desync) watchdog_verdicts(c, refs, n, desync, desync_t, desync_in);
    free(refs);
}

/* Every watchdog timeout of every input (refs), in input order. */
static void watchdog_verdicts(dg_ctx *c, const wd_ref *refs, int n, const rd_torch_desync *desync,
                              const rd_torch_facts *desync_t, int desync_in)
{

    /* 1. an explicit desync report names the lagging rank */
    if (desync) {
        dg_verdict *v = dg_verdict_get(c, "nccl_desync", "host");
        if (v) {
            dg_verdict_raise(v, 0.9);
            v->rank = desync->lag_rank;
            dg_verdict_title(v, "collective desynchronization: rank %d finished collective #%ld but never joined #%ld%s%s - an application bug, not a network fault",
                     desync->lag_rank, desync->finished_seq, desync->missing_seq,
                     desync_t->desync_op[0] ? "; the others wait in " : "", desync_t->desync_op);
            ev_torch(v, desync_in, &desync->at);
            if (desync_t->desync_timeout_at.line) ev_torch(v, desync_in, &desync_t->desync_timeout_at);
            if (n) ev_torch(v, refs[0].input, &refs[0].w->at);
            dg_verdict_step(v, "find the code path where rank %d skips collective #%ld (a rank-dependent if, an early exit, uneven data)", desync->lag_rank, desync->missing_seq);
            dg_verdict_step(v, "TORCH_NCCL_DESYNC_DEBUG=1 TORCH_DISTRIBUTED_DEBUG=DETAIL to print the mismatch on every rank");
            dg_verdict_step(v, "TORCH_FR_BUFFER_SIZE=2000 then python -m torch.distributed.flight_recorder.fr_trace <dump dir> to compare the ranks' last collectives");
        }
    }
    if (!n) return;

    /* 2. different SeqNum or OpType across ranks -> desync */
    const rd_torch_watchdog *a = refs[0].w, *b = NULL;
    int b_in = -1;
    for (int k = 1; k < n && !b; k++) {
        const rd_torch_watchdog *w = refs[k].w;
        if (w->at.rank == a->at.rank && w->at.rank >= 0) continue;
        if (w->seq != a->seq || strcmp(w->op, a->op) != 0) {
            b = w;
            b_in = refs[k].input;
        }
    }
    if (b) {
        dg_verdict *v = dg_verdict_get(c, "nccl_desync", "host");
        if (v) {
            dg_verdict_raise(v, 0.8);
            if (!v->title[0])
                dg_verdict_title(v, "collective desynchronization: rank %d timed out in %s SeqNum=%ld while rank %d timed out in %s SeqNum=%ld - the ranks issue different collectives",
                         a->at.rank, a->op, a->seq, b->at.rank, b->op, b->seq);
            ev_torch(v, refs[0].input, &a->at);
            ev_torch(v, b_in, &b->at);
            dg_verdict_step(v, "compare the collective call order per rank: TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_NCCL_DESYNC_DEBUG=1");
            dg_verdict_step(v, "TORCH_FR_BUFFER_SIZE=2000 then python -m torch.distributed.flight_recorder.fr_trace <dump dir>");
        }
    }

    /* 3. "ran for" far beyond the timeout: the process itself was stalled */
    for (int k = 0; k < n; k++) {
        const rd_torch_watchdog *w = refs[k].w;
        if (w->timeout_ms > 0 && w->ran_for_ms > 2 * w->timeout_ms) {
            dg_verdict *v = dg_verdict_get(c, "process_stalled", "host");
            if (!v) break;
            dg_verdict_raise(v, 0.7);
            if (!v->title[0]) {
                v->rank = w->at.rank;
                dg_verdict_title(v, "the process was stalled, not the collective: %s SeqNum=%ld ran for %ld ms against a %ld ms timeout (%.1fx) on rank %d",
                         w->op, w->seq, w->ran_for_ms, w->timeout_ms, (double)w->ran_for_ms / (double)w->timeout_ms, w->at.rank);
            }
            ev_torch(v, refs[k].input, &w->at);
            dg_verdict_step(v, "py-spy dump --pid <pid> on the stalled rank (host stack: GIL, data loader, checkpoint I/O)");
            dg_verdict_step(v, "check the host: vmstat 1, dmesg -T | tail (swap, OOM killer, hung tasks), cgroup CPU throttling");
        }
    }
    if (b || desync) return;
    int stalled = 0;
    for (int k = 0; k < n; k++)
        if (refs[k].w->timeout_ms > 0 && refs[k].w->ran_for_ms > 2 * refs[k].w->timeout_ms) stalled++;
    if (stalled == n) return; /* every timeout is explained by a stalled process */

    /* 4. every rank stuck on the same collective: a peer or the network stalled */
    dg_verdict *v = dg_verdict_get(c, "nccl_timeout_stall", "inter");
    if (!v) return;
    int ranks_seen = 0, max_rank = -1;
    bool seen[1024] = {false};
    for (int k = 0; k < n; k++) {
        int rk = refs[k].w->at.rank;
        if (rk >= 0 && rk < 1024 && !seen[rk]) {
            seen[rk] = true;
            ranks_seen++;
        }
        if (rk > max_rank) max_rank = rk;
        if (v->n_evidence < 4) ev_torch(v, refs[k].input, &refs[k].w->at);
    }
    long min_done = -1, max_done = -1;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_torch_facts *t = c->inputs[i].torch;
        for (int k = 0; k < t->n_progress; k++) {
            long d = t->progress[k].last_completed;
            if (d >= 0 && (min_done < 0 || d < min_done)) min_done = d;
            if (d > max_done) max_done = d;
            int rk = t->progress[k].at.rank;
            if (rk >= 0 && rk < 1024 && !seen[rk]) {
                seen[rk] = true;
                ranks_seen++;
            }
            if (rk > max_rank) max_rank = rk;
            if (v->n_evidence < 6) ev_torch(v, i, &t->progress[k].at);
        }
        if (c->inputs[i].nccl->nranks - 1 > max_rank) max_rank = c->inputs[i].nccl->nranks - 1;
    }
    dg_verdict_raise(v, ranks_seen >= 2 ? 0.6 : 0.5);
    char missing[96] = "";
    size_t off = 0;
    int n_missing = 0;
    for (int rk = 0; rk <= max_rank && rk < 1024; rk++) {
        if (seen[rk]) continue;
        if (n_missing++ < 8 && off < sizeof missing - 8)
            off += (size_t)snprintf(missing + off, sizeof missing - off, "%s%d", off ? "," : "", rk);
    }
    dg_verdict_title(v, "NCCL watchdog timeout: %d rank(s) stuck in %s SeqNum=%ld (NumelIn=%ld, timeout %ld ms) - a peer rank or the network stalled%s%s%s",
             ranks_seen ? ranks_seen : 1, a->op, a->seq, a->numel_in, a->timeout_ms,
             n_missing ? "; no timeout line from rank(s) " : "", missing,
             n_missing ? " - look at their logs first" : "");
    /* name the rank that failed before the collective timed out, if any */
    if (c->first_failure >= 0 && strcmp(c->events[c->first_failure].kind, "watchdog_timeout") != 0) {
        const dg_event *ff = &c->events[c->first_failure];
        char ts[48];
        rd_time_format(ff->ts, ts, sizeof ts);
        dg_verdict_step(v, "rank %d%s%s failed first (%s%s%s, %s:%ld): start there", ff->rank, ff->host[0] ? " on " : "",
                        ff->host, ff->kind, ts[0] ? " at " : "", ts, cp_path_base(c->inputs[ff->input].path), ff->line);
    }
    if (min_done >= 0 && min_done != max_done)
        dg_verdict_step(v, "last completed work differs across ranks (%ld vs %ld): the rank with %ld is behind", min_done, max_done, min_done);
    dg_verdict_step(v, "look for the first error on any rank before the timeout (NCCL WARN, Xid, OOM, a killed process) - this timeout is a symptom");
    dg_verdict_step(v, "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_BUFFER_SIZE=2000");
    dg_verdict_step(v, "py-spy dump --pid <pid> on every rank to see who is not inside the collective");
    dg_verdict_step(v, "test the fabric between the nodes: ib_write_bw -d <hca> <peer> and all_reduce_perf -b 8 -e 1G -f 2 -g 1 across the nodes");
}

/* ---- NCCL errors -------------------------------------------------------- */

typedef struct issue_ref {
    const rd_nccl_issue *is;
    int input;
} issue_ref;

/* first issue (in time when known) of `kind` matching pred */
static issue_ref find_issue(const dg_ctx *c, int kind, bool (*pred)(const rd_nccl_issue *), int *count)
{
    issue_ref best = {NULL, -1};
    *count = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_nccl_facts *f = c->inputs[i].nccl;
        for (int k = 0; k < f->n_issues; k++) {
            const rd_nccl_issue *is = &f->issues[k];
            if (is->kind != kind || (pred && !pred(is))) continue;
            (*count)++;
            if (!best.is || rd_time_cmp(is->ts, best.is->ts) == -1) best = (issue_ref){is, i};
        }
    }
    return best;
}

static void add_issue_evidence(dg_ctx *c, dg_verdict *v, int kind, bool (*pred)(const rd_nccl_issue *))
{
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_nccl_facts *f = c->inputs[i].nccl;
        for (int k = 0; k < f->n_issues; k++)
            if (f->issues[k].kind == kind && (!pred || pred(&f->issues[k]))) ev_nccl(v, i, &f->issues[k].at);
    }
}

/* the "unhandled system error" / "NCCL error" lines of PyTorch, as context */
static void add_torch_nccl_errors(dg_ctx *c, dg_verdict *v)
{
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_torch_facts *t = c->inputs[i].torch;
        for (int k = 0; k < t->n_nccl_errors; k++) ev_torch(v, i, &t->nccl_errors[k].at);
    }
}

static const char *issue_where(const rd_nccl_issue *is, char *buf, size_t size)
{
    if (is->host[0] && is->rank >= 0) snprintf(buf, size, " on host %s (rank %d)", is->host, is->rank);
    else if (is->host[0]) snprintf(buf, size, " on host %s", is->host);
    else if (is->rank >= 0) snprintf(buf, size, " on rank %d", is->rank);
    else buf[0] = '\0';
    return buf;
}

static void rule_connect(dg_ctx *c, const dg_rule *r)
{
    int cnt;
    issue_ref ir = find_issue(c, RD_NCCL_ISSUE_CONNECT, NULL, &cnt);
    if (!ir.is) return;
    dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
    if (!v) return;
    dg_verdict_raise(v, 0.85);
    v->rank = ir.is->rank;
    char where[96], addr[64];
    const char *lt = strchr(ir.is->detail, '<');
    const char *colon = strstr(ir.is->detail, ": ");
    snprintf(addr, sizeof addr, "%.*s", (int)(lt ? lt - ir.is->detail : colon ? colon - ir.is->detail : (long)strlen(ir.is->detail)), ir.is->detail);
    issue_where(ir.is, where, sizeof where);
    dg_verdict_title(v, "NCCL could not connect to %s (%d failed connect(s)%s%s) - that node's network or NCCL process is down; the \"unhandled system error\" is the consequence",
             ir.is->detail, cnt, where[0] ? ", seen" : "", where);
    add_issue_evidence(c, v, RD_NCCL_ISSUE_CONNECT, NULL);
    add_torch_nccl_errors(c, v);
    dg_verdict_step(v, "nslookup %s   # name the node behind the address", addr);
    dg_verdict_step(v, "ping -c 3 %s && ip route get %s", addr, addr);
    dg_verdict_step(v, "exclude the node and rerun (SLURM: sbatch --exclude=<node>); report it to the cluster admins");
    dg_verdict_step(v, "check NCCL_SOCKET_IFNAME picks the same network on every node; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET");
}

static bool is_err12(const rd_nccl_issue *is) { return is->code == 12; }
static bool is_err4(const rd_nccl_issue *is) { return is->code == 4; }
static bool is_other_completion(const rd_nccl_issue *is) { return is->code != 12 && is->code != 4; }

static bool any_gdr_on(const dg_ctx *c)
{
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i].nccl->gdr == RD_NCCL_GDR_ON) return true;
    return false;
}

static const rd_nccl_facts *facts_with_gid(const dg_ctx *c, int *input)
{
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i].nccl->gid_index >= 0) {
            *input = i;
            return c->inputs[i].nccl;
        }
    return NULL;
}

static const char *first_hca(const dg_ctx *c)
{
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i].nccl->n_devs) return c->inputs[i].nccl->devs[0].name;
    return "<hca>";
}

static void rule_ib_completion(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    int cnt;
    char where[96];
    issue_ref ir = find_issue(c, RD_NCCL_ISSUE_IB_COMPLETION, is_err12, &cnt);
    if (ir.is) {
        dg_verdict *v = dg_verdict_get(c, "ib_retry_exceeded", "inter");
        if (v) {
            dg_verdict_raise(v, 0.85);
            v->rank = ir.is->rank;
            int gi = -1;
            const rd_nccl_facts *gf = facts_with_gid(c, &gi);
            char gid[48] = "GID index not shown in the log";
            if (gf) snprintf(gid, sizeof gid, "GID index %d", gf->gid_index);
            dg_verdict_title(v, "IB/RoCE transport retry counter exceeded (completion error 12, vendor err %ld)%s: the NICs cannot reach each other over RDMA (%s)",
                     ir.is->vendor_err, issue_where(ir.is, where, sizeof where), gid);
            add_issue_evidence(c, v, RD_NCCL_ISSUE_IB_COMPLETION, is_err12);
            if (gf) ev_nccl(v, gi, &gf->gid_at);
            dg_verdict_step(v, "show_gids   # pick the RoCEv2 GID with an IPv4 address, then NCCL_IB_GID_INDEX=<index> (often 3)");
            dg_verdict_step(v, "ib_write_bw -d %s -x <gid index> on one node, ib_write_bw -d %s -x <gid index> <peer ip> on the other", first_hca(c), first_hca(c));
            dg_verdict_step(v, "check both NICs are in the same subnet/VLAN and the switches route RoCE (PFC/ECN, traffic class: NCCL_IB_TC)");
            dg_verdict_step(v, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the GID and device each rank uses");
        }
    }
    ir = find_issue(c, RD_NCCL_ISSUE_IB_COMPLETION, is_err4, &cnt);
    if (ir.is) {
        dg_verdict *v = dg_verdict_get(c, "ib_gdr_pcie_acs", "inter");
        if (v) {
            bool gdr = any_gdr_on(c);
            dg_verdict_raise(v, gdr ? 0.9 : 0.85);
            v->rank = ir.is->rank;
            dg_verdict_title(v, "IB local protection error (completion error 4, vendor err %ld)%s with GPU Direct RDMA: PCIe ACS on the switches between GPU and NIC breaks peer-to-peer DMA%s",
                     ir.is->vendor_err, issue_where(ir.is, where, sizeof where),
                     gdr ? "" : " (GDR use is implied by this signature)");
            add_issue_evidence(c, v, RD_NCCL_ISSUE_IB_COMPLETION, is_err4);
            for (int i = 0; i < c->n_inputs; i++)
                if (c->inputs[i].nccl->gdr == RD_NCCL_GDR_ON) ev_nccl(v, i, &c->inputs[i].nccl->gdr_at);
            dg_verdict_step(v, "sudo lspci -vvv | grep ACSCtl   # 'SrcValid+' on a PCIe switch port means ACS is on");
            dg_verdict_step(v, "disable ACS in the BIOS or with setpci on the switch ports (see the NCCL troubleshooting guide, PCI ACS)");
            dg_verdict_step(v, "confirm: rerun with NCCL_NET_GDR_LEVEL=LOC (no GDR); if it passes, ACS/IOMMU is the cause");
            dg_verdict_step(v, "cat /proc/cmdline   # IOMMU should be off or passthrough (iommu=pt) for GDR");
        }
    }
    ir = find_issue(c, RD_NCCL_ISSUE_IB_COMPLETION, is_other_completion, &cnt);
    if (ir.is) {
        dg_verdict *v = dg_verdict_get(c, "ib_completion_error", "inter");
        if (v) {
            dg_verdict_raise(v, 0.7);
            dg_verdict_title(v, "IB completion error %ld (vendor err %ld)%s",
                     ir.is->code, ir.is->vendor_err, issue_where(ir.is, where, sizeof where));
            add_issue_evidence(c, v, RD_NCCL_ISSUE_IB_COMPLETION, is_other_completion);
            dg_verdict_step(v, "ibv_devinfo -v and ibstat on both nodes; check port state and errors: perfquery -x");
            dg_verdict_step(v, "ib_write_bw between the two nodes to reproduce outside NCCL");
        }
    }
}

static bool is_unreachable(const rd_nccl_issue *is)
{
    return is->code == 101 || strstr(is->detail, "unreachable") != NULL;
}
static bool is_other_ibv(const rd_nccl_issue *is) { return !is_unreachable(is); }

static void rule_ibv(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    int cnt;
    char where[96];
    issue_ref ir = find_issue(c, RD_NCCL_ISSUE_IBV_CALL, is_unreachable, &cnt);
    if (ir.is) {
        dg_verdict *v = dg_verdict_get(c, "roce_network_unreachable", "inter");
        if (v) {
            dg_verdict_raise(v, 0.85);
            dg_verdict_title(v, "RoCE connection setup failed (%s)%s: the GID NCCL uses has no route to the peer - wrong GID index or RoCE interface/subnet",
                     ir.is->detail, issue_where(ir.is, where, sizeof where));
            add_issue_evidence(c, v, RD_NCCL_ISSUE_IBV_CALL, is_unreachable);
            int gi;
            const rd_nccl_facts *gf = facts_with_gid(c, &gi);
            if (gf) ev_nccl(v, gi, &gf->gid_at);
            dg_verdict_step(v, "show_gids   # the GID index must be a RoCEv2 GID whose IP is on the peer's subnet; set NCCL_IB_GID_INDEX");
            dg_verdict_step(v, "ip -br addr; ip route   # on the RoCE netdev of %s, on both nodes", first_hca(c));
            dg_verdict_step(v, "ib_write_bw -d %s -x <gid index> <peer ip>   # reproduce outside NCCL", first_hca(c));
        }
    }
    ir = find_issue(c, RD_NCCL_ISSUE_IBV_CALL, is_other_ibv, &cnt);
    if (ir.is) {
        dg_verdict *v = dg_verdict_get(c, "ibv_call_failed", "inter");
        if (v) {
            dg_verdict_raise(v, 0.7);
            dg_verdict_title(v, "IB verbs call failed (%s)%s", ir.is->detail,
                     issue_where(ir.is, where, sizeof where));
            add_issue_evidence(c, v, RD_NCCL_ISSUE_IBV_CALL, is_other_ibv);
            dg_verdict_step(v, "ibv_devinfo; rdma link show   # device and port state on both nodes");
            dg_verdict_step(v, "NCCL_IB_HCA=<working devices> to exclude a bad port; ib_write_bw to test it");
        }
    }
}

static void rule_shm(dg_ctx *c, const dg_rule *r)
{
    int cnt;
    issue_ref ir = find_issue(c, RD_NCCL_ISSUE_SHM, NULL, &cnt);
    int sig_in = -1;
    const rd_torch_error *sig = NULL;
    for (int i = 0; i < c->n_inputs && !sig; i++)
        for (int k = 0; k < c->inputs[i].torch->n_signals && !sig; k++)
            if (c->inputs[i].torch->signals[k].signo == 7) { /* SIGBUS */
                sig = &c->inputs[i].torch->signals[k];
                sig_in = i;
            }
    if (!ir.is && !sig) return;
    bool nccl_ctx = ir.is != NULL;
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i].nccl->nccl_lines) nccl_ctx = true;
    dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
    if (!v) return;
    dg_verdict_raise(v, ir.is && sig ? 0.85 : ir.is ? 0.8 : nccl_ctx ? 0.7 : 0.5);
    dg_verdict_title(v, "%s: shared memory (/dev/shm) is too small for NCCL's SHM transport - typical in containers (Docker's default is 64 MB)",
             sig && !ir.is ? "SIGBUS (bus error)" : "NCCL could not create its shared-memory segment");
    if (ir.is) add_issue_evidence(c, v, RD_NCCL_ISSUE_SHM, NULL);
    if (sig) ev_torch(v, sig_in, &sig->at);
    dg_verdict_step(v, "df -h /dev/shm   # inside the container");
    dg_verdict_step(v, "docker run --shm-size=16g ... (or --ipc=host); Kubernetes: mount an emptyDir with medium: Memory at /dev/shm");
    dg_verdict_step(v, "workaround: NCCL_SHM_DISABLE=1 (slower intra-node path)");
}

static void rule_nvls(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    int cnt;
    issue_ref ir = find_issue(c, RD_NCCL_ISSUE_NVLS, NULL, &cnt);
    if (ir.is) {
        dg_verdict *v = dg_verdict_get(c, "nvls_setup_failed", "intra");
        if (v) {
            char where[96];
            dg_verdict_raise(v, 0.75);
            dg_verdict_title(v, "NVLS (NVLink SHARP) setup failed%s", issue_where(ir.is, where, sizeof where));
            add_issue_evidence(c, v, RD_NCCL_ISSUE_NVLS, NULL);
            dg_verdict_step(v, "workaround: NCCL_NVLS_ENABLE=0");
            dg_verdict_step(v, "systemctl status nvidia-fabricmanager   # must run, same version as the driver");
            dg_verdict_step(v, "nvidia-smi -q | grep -i -A3 fabric   # fabric state should be Completed/Success");
        }
    }
    /* NVLS not in use on a Hopper/Blackwell node with several GPUs */
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_nccl_facts *f = c->inputs[i].nccl;
        bool hopper = false;
        for (int g = 0; g < f->n_gpus; g++) hopper |= rd_nccl_gpu_has_nvls(f->gpus[g]);
        int local = 0;
        for (int h = 0; h < f->n_hosts; h++)
            if (f->host_ranks[h] > local) local = f->host_ranks[h];
        bool said = f->nvls_available == 0;
        bool zero = f->nvls_channels == 0 && hopper && local > 1;
        if (!said && !zero) continue;
        dg_verdict *v = dg_verdict_get(c, "nvls_unavailable", "intra");
        if (!v) return;
        dg_verdict_raise(v, said ? 0.5 : 0.45);
        dg_verdict_title(v, "NVLS (NVLink SHARP) not used%s%s: %s",
                 f->n_gpus ? " on " : "", f->n_gpus ? f->gpus[0] : "",
                 said ? "the driver reports no multicast support" : "0 nvls channels on a node with several NVLS-capable GPUs");
        if (f->nvls_at.line) ev_nccl(v, i, &f->nvls_at);
        if (f->channels_at.line) ev_nccl(v, i, &f->channels_at);
        dg_verdict_step(v, "systemctl status nvidia-fabricmanager; nvidia-smi -q | grep -i -A3 fabric");
        dg_verdict_step(v, "NVLS needs CUDA >= 12.1 with a driver exposing multicast, NVSwitch (NVLink4+) and, in containers, access to the fabric (IMEX/--ipc=host)");
        dg_verdict_step(v, "check with nvidia-smi topo -m that all GPUs see each other through NVSwitch (NV18)");
    }
}

static void rule_nccl_errors(dg_ctx *c, const dg_rule *r)
{
    /* a bare NCCL error from PyTorch, when nothing more specific explains it */
    int i_err = -1;
    const rd_torch_error *e = NULL;
    for (int i = 0; i < c->n_inputs && !e; i++)
        if (c->inputs[i].torch->n_nccl_errors) {
            e = &c->inputs[i].torch->nccl_errors[0];
            i_err = i;
        }
    if (!e) return;
    for (int k = 0; k < c->n_verdicts; k++) /* a specific NCCL cause already explains it */
        if (c->verdicts[k].confidence >= 0.7 && strcmp(c->verdicts[k].layer, "compute") != 0) return;
    dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
    if (!v) return;
    dg_verdict_raise(v, 0.5);
    dg_verdict_title(v, "NCCL reported \"%s\" without saying why in these logs", e->what);
    add_torch_nccl_errors(c, v);
    (void)i_err;
    dg_verdict_step(v, "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and collect every rank's log: the WARN line before the error names the cause");
    dg_verdict_step(v, "NCCL_DEBUG_FILE=/tmp/nccl.%%h.%%p to keep one file per process");
}

/* ---- configuration states: socket fallback, GDR off --------------------- */

static void rule_socket_fallback(dg_ctx *c, const dg_rule *r)
{
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_nccl_facts *f = c->inputs[i].nccl;
        if (f->net != RD_NCCL_NET_SOCKET || f->n_hosts == 1) continue;
        const char *ib_disable = rd_nccl_env(f, "NCCL_IB_DISABLE");
        if (ib_disable && strcmp(ib_disable, "1") == 0) continue; /* sockets on purpose */
        bool intended = f->ib_none_at.line || f->plugin_fail_at.line || f->net_plugin[0];
        dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
        if (!v) return;
        dg_verdict_raise(v, intended ? 0.7 : f->n_hosts >= 2 ? 0.55 : 0.45);
        dg_verdict_title(v, "NCCL fell back to TCP sockets between nodes (NET/Socket)%s%s: inter-node bandwidth is a fraction of RDMA",
                 f->ib_none_at.line ? "; no IB/RoCE device found" : "",
                 f->plugin_fail_at.line ? "; the network plugin gave up" : "");
        if (f->plugin_fail_at.line) ev_nccl(v, i, &f->plugin_fail_at);
        if (f->ib_none_at.line) ev_nccl(v, i, &f->ib_none_at);
        if (f->socket_using_at.line) ev_nccl(v, i, &f->socket_using_at);
        if (f->network_at.line) ev_nccl(v, i, &f->network_at);
        if (f->transport_at[RD_NCCL_TR_NET_SOCKET].line) ev_nccl(v, i, &f->transport_at[RD_NCCL_TR_NET_SOCKET]);
        dg_verdict_step(v, "ibv_devinfo   # are RDMA devices visible (inside the container too: --device=/dev/infiniband)?");
        if (f->plugin_fail_at.line && rd_memmem(f->plugin_fail_at.text, strlen(f->plugin_fail_at.text), "OFI"))
            dg_verdict_step(v, "AWS: fi_info -p efa; use an EFA-enabled instance/interface and the aws-ofi-nccl plugin");
        dg_verdict_step(v, "lsmod | grep -e mlx5_ib -e ib_uverbs -e efa   # RDMA kernel modules loaded?");
        dg_verdict_step(v, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET; set NCCL_IB_HCA to the devices to use");
    }
}

static bool any_err4(const dg_ctx *c)
{
    int cnt;
    return find_issue(c, RD_NCCL_ISSUE_IB_COMPLETION, is_err4, &cnt).is != NULL;
}

static void rule_gdr(dg_ctx *c, const dg_rule *r)
{
    if (any_err4(c)) return; /* that signature implies GDR in use; ACS rule explains it */
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_nccl_facts *f = c->inputs[i].nccl;
        if (f->net != RD_NCCL_NET_IB || f->gdr == RD_NCCL_GDR_ON || f->n_hosts < 2) continue;
        long plain = f->transports[RD_NCCL_TR_NET_IB];
        double conf = f->gdr == RD_NCCL_GDR_OFF ? 0.55 : plain ? 0.5 : 0.35;
        dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
        if (!v) return;
        dg_verdict_raise(v, conf);
        if (f->gdr == RD_NCCL_GDR_OFF)
            dg_verdict_title(v, "GPU Direct RDMA disabled (%s): inter-node traffic is staged through host memory", f->gdr_reason);
        else
            dg_verdict_title(v, "GPU Direct RDMA not in use across %d nodes over IB: %s",
                     f->n_hosts, plain ? "channels use NET/IB without /GDRDMA" : "no GDR line or NET/IB/GDRDMA channel in the log");
        if (f->gdr_at.line) ev_nccl(v, i, &f->gdr_at);
        if (f->ib_using_at.line) ev_nccl(v, i, &f->ib_using_at);
        if (plain) ev_nccl(v, i, &f->transport_at[RD_NCCL_TR_NET_IB]);
        dg_verdict_step(v, "lsmod | grep -e nvidia_peermem -e nv_peer_mem   # load it: sudo modprobe nvidia_peermem");
        dg_verdict_step(v, "nvidia-smi topo -m   # GPU-NIC distance: GDR is used up to NCCL_NET_GDR_LEVEL (default PHB/PXB)");
        dg_verdict_step(v, "NCCL_NET_GDR_LEVEL=SYS to force it, then compare all_reduce_perf busbw");
        dg_verdict_step(v, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and look for 'via NET/IB/<n>/GDRDMA'");
    }
}

/* ---- GPU and host faults ------------------------------------------------- */

static const char *bucket_layer(const char *bucket)
{
    return strcmp(bucket, "gpu_nvlink") == 0 ? "intra" : "compute";
}

static void rule_xid(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    static const rd_xid_info fallen = {79, NULL, "gpu_fell_off_bus", "hardware", NULL, 0.9};
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_dmesg_facts *d = c->inputs[i].dmesg;
        for (int k = 0; k < d->n_xids; k++) {
            const rd_dmesg_xid *x = &d->xids[k];
            const rd_xid_info *xi = rd_xid_lookup(x->code);
            const char *bucket = xi ? xi->bucket : "gpu_xid";
            dg_verdict *v = dg_verdict_get(c, bucket, bucket_layer(bucket));
            if (!v) return;
            double w = xi ? xi->weight : 0.5;
            if (w > v->confidence) {
                dg_verdict_raise(v, w);
                dg_verdict_title(v, "Xid %d on GPU %s%s%s: %s", x->code,
                         x->pci[0] ? x->pci : "?", x->at.host[0] ? " of host " : "", x->at.host,
                         xi ? xi->meaning : "not in chainprof's Xid table; see NVIDIA's Xid catalog");
            }
            dg_verdict_evidence(v, i, x->at.line, x->at.text);
            if (xi) dg_verdict_step(v, "Xid %d (%s cause): %s", x->code, xi->cause, xi->action);
            dg_verdict_step(v, "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT   # on that node");
            dg_verdict_step(v, "dcgmi diag -r 3   # after draining the node");
        }
        for (int k = 0; k < d->n_bus; k++) {
            dg_verdict *v = dg_verdict_get(c, fallen.bucket, "compute");
            if (!v) return;
            if (fallen.weight > v->confidence) {
                dg_verdict_raise(v, fallen.weight);
                dg_verdict_title(v, "GPU %s has fallen off the bus (no Xid line, same meaning as Xid 79): the GPU is unreachable over PCIe",
                         d->bus[k].pci[0] ? d->bus[k].pci : "?");
            }
            dg_verdict_evidence(v, i, d->bus[k].at.line, d->bus[k].at.text);
            dg_verdict_step(v, "drain the node; check power, thermals and the PCIe link: lspci -vvv -s %s | grep -e LnkSta -e ACS", d->bus[k].pci[0] ? d->bus[k].pci : "<bdf>");
            dg_verdict_step(v, "cold reboot (power cycle); RMA the GPU if it falls off again");
            dg_verdict_step(v, "dmesg -T | grep -i -e xid -e aer   # earlier PCIe errors point at the slot or riser");
        }
    }
}

static void rule_aer(dg_ctx *c, const dg_rule *r)
{
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_dmesg_facts *d = c->inputs[i].dmesg;
        if (!d->n_aer) continue;
        long fatal = d->aer_total[RD_AER_FATAL], nonfatal = d->aer_total[RD_AER_NONFATAL];
        long corr = d->aer_total[RD_AER_CORRECTED];
        dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
        if (!v) return;
        dg_verdict_raise(v, fatal ? 0.75 : nonfatal ? 0.65 : corr >= 100 ? 0.4 : 0.3);
        const rd_dmesg_aer *a = &d->aer[0];
        for (int k = 0; k < d->n_aer; k++)
            if (d->aer[k].severity > a->severity) a = &d->aer[k];
        dg_verdict_title(v, "PCIe AER errors: %ld fatal, %ld non-fatal, %ld corrected (worst on %s%s%s)", fatal,
                 nonfatal, corr, a->device[0] ? a->device : "?", a->type[0] ? ", " : "", a->type);
        for (int k = 0; k < d->n_aer && v->n_evidence < 4; k++)
            if (d->aer[k].severity == a->severity) dg_verdict_evidence(v, i, d->aer[k].at.line, d->aer[k].at.text);
        dg_verdict_step(v, "lspci -vvv -s %s   # LnkSta speed/width vs LnkCap, error status", a->device[0] ? a->device : "<bdf>");
        dg_verdict_step(v, "nvidia-smi -q -d PCIE   # current vs max link generation and width; replay counters");
        dg_verdict_step(v, "reseat the GPU/riser or move it to another slot if errors follow the slot");
    }
}

static void rule_host_oom(dg_ctx *c, const dg_rule *r)
{
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_dmesg_facts *d = c->inputs[i].dmesg;
        if (!d->n_oomkills) continue;
        dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
        if (!v) return;
        dg_verdict_raise(v, 0.8);
        dg_verdict_title(v, "the kernel OOM killer killed process %ld (%s): host memory ran out",
                 d->oomkills[0].pid, d->oomkills[0].comm);
        for (int k = 0; k < d->n_oomkills; k++) dg_verdict_evidence(v, i, d->oomkills[k].at.line, d->oomkills[k].at.text);
        dg_verdict_step(v, "free -g; check the job's memory limit (cgroup / SLURM --mem)");
        dg_verdict_step(v, "fewer DataLoader workers, smaller prefetch_factor, no full-dataset copies per rank; CPU offload uses host memory too");
    }
}

/* A CUDA call inside NCCL failed ("Cuda failure 2 'out of memory'"). */
static void rule_nccl_cuda(dg_ctx *c, const dg_rule *r)
{
    int cnt;
    issue_ref ir = find_issue(c, RD_NCCL_ISSUE_CUDA, NULL, &cnt);
    if (!ir.is) return;
    dg_verdict *v = dg_verdict_get(c, r->name, r->layer);
    if (!v) return;
    const char *q = strchr(ir.is->at.text, '\'');
    const char *q2 = q ? strchr(q + 1, '\'') : NULL;
    char what[96];
    snprintf(what, sizeof what, "%.*s", q && q2 ? (int)(q2 - q - 1) : 0, q ? q + 1 : "");
    bool oom = ir.is->code == 2 || strstr(what, "out of memory") != NULL;
    char where[96];
    dg_verdict_raise(v, 0.65);
    dg_verdict_title(v, "a CUDA call inside NCCL failed (error %ld%s%s%s)%s%s", ir.is->code, what[0] ? " '" : "", what,
                     what[0] ? "'" : "", issue_where(ir.is, where, sizeof where),
                     oom ? ": the GPU had no memory left for NCCL's buffers" : "");
    add_issue_evidence(c, v, RD_NCCL_ISSUE_CUDA, NULL);
    if (oom) {
        dg_verdict_step(v, "leave memory for NCCL: lower the framework's memory fraction or batch; NCCL_BUFFSIZE=2097152 shrinks its buffers");
        dg_verdict_step(v, "fewer communicators/channels: reuse process groups; NCCL_MAX_NCHANNELS=16");
    } else {
        dg_verdict_step(v, "dmesg -T | grep -i xid   # a GPU fault at the same time explains the CUDA error");
        dg_verdict_step(v, "check the driver supports the CUDA version NCCL was built with (nvidia-smi, NCCL version line)");
    }
}

/* A rank killed by a signal other than SIGBUS (that one is rule_shm's). */
static void rule_signal(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    bool oom_kill = false;
    for (int i = 0; i < c->n_inputs; i++) oom_kill |= c->inputs[i].dmesg->n_oomkills > 0;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_torch_facts *t = c->inputs[i].torch;
        for (int k = 0; k < t->n_signals; k++) {
            const rd_torch_error *e = &t->signals[k];
            if (e->signo == 7) continue;
            bool kill = e->signo == 9 || e->signo == 15;
            dg_verdict *v = dg_verdict_get(c, kill ? "process_killed" : "process_crashed", "host");
            if (!v) return;
            if (!v->n_evidence) {
                /* with an OOM-killer line the host_oom_killer verdict explains it */
                dg_verdict_raise(v, kill ? (oom_kill ? 0.4 : 0.55) : 0.5);
                v->rank = e->at.rank;
                dg_verdict_title(v, "rank %d was %s by %s%s", e->at.rank, kill ? "killed" : "terminated", e->what,
                                 kill ? ": the kernel OOM killer, the scheduler (time limit, preemption) or a user"
                                      : ": a crash in native code (CUDA/NCCL library, extension, driver)");
            }
            ev_torch(v, i, &e->at);
            if (kill) {
                dg_verdict_step(v, "dmesg -T | grep -i -e 'killed process' -e 'out of memory'   # on the rank's node");
                dg_verdict_step(v, "sacct -j <jobid> -o JobID,State,ExitCode,MaxRSS,Elapsed,Timelimit   # SLURM: time limit or memory");
                dg_verdict_step(v, "check the cgroup/container memory limit of the job (kubectl describe pod: OOMKilled)");
            } else {
                dg_verdict_step(v, "rerun with python -X faulthandler and ulimit -c unlimited; gdb python core to see the frame");
                dg_verdict_step(v, "check CUDA, NCCL and driver versions match what the framework was built with");
            }
        }
    }
}

static void rule_cuda_errors(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_torch_facts *t = c->inputs[i].torch;
        for (int k = 0; k < t->n_cuda_errors; k++) {
            const rd_torch_error *e = &t->cuda_errors[k];
            bool ecc = strstr(e->what, "ECC") != NULL;
            bool illegal = strstr(e->what, "illegal") != NULL || strstr(e->what, "misaligned") != NULL;
            const char *code = ecc ? "gpu_ecc_uncorrectable" : illegal ? "gpu_app_fault" : "cuda_error";
            dg_verdict *v = dg_verdict_get(c, code, "compute");
            if (!v) return;
            double conf = ecc ? 0.7 : illegal ? 0.6 : 0.5;
            if (conf > v->confidence) {
                dg_verdict_raise(v, conf);
                dg_verdict_title(v, "CUDA error on rank %d: %s", e->at.rank, e->what);
            }
            ev_torch(v, i, &e->at);
            if (ecc) dg_verdict_step(v, "nvidia-smi -q -d ECC,ROW_REMAPPER   # on that node; drain and reset the GPU");
            else dg_verdict_step(v, "rerun with CUDA_LAUNCH_BLOCKING=1, then compute-sanitizer python train.py to find the kernel");
            dg_verdict_step(v, "dmesg -T | grep -i xid   # a matching Xid tells hardware from application");
        }
    }
}

static void rule_smi(dg_ctx *c, const dg_rule *r)
{
    (void)r;
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_smiq_facts *s = c->inputs[i].smiq;
        if (!s) continue;
        for (int g = 0; g < s->n_gpus; g++) {
            const rd_smiq_gpu *gp = &s->gpus[g];
            dg_verdict *v = NULL;
            if (gp->remap_failure == 1) {
                v = dg_verdict_get(c, "gpu_row_remap_failure", "compute");
                dg_verdict_raise(v, 0.85);
                if (v) dg_verdict_title(v, "GPU %s (%s): row remapping failed - the memory fault cannot be repaired", gp->bus_id, gp->product);
                if (v) dg_verdict_evidence(v, i, gp->line_remap_failure, "Remapping Failure Occurred : Yes");
                dg_verdict_step(v, "drain the node and RMA the GPU");
            }
            if (gp->volatile_uncorr > 0) {
                v = dg_verdict_get(c, "gpu_ecc_uncorrectable", "compute");
                if (v && 0.75 > v->confidence) {
                    dg_verdict_raise(v, 0.75);
                    dg_verdict_title(v, "GPU %s (%s): %ld uncorrectable ECC error(s) since the driver loaded", gp->bus_id, gp->product, gp->volatile_uncorr);
                }
                dg_verdict_evidence(v, i, gp->line_ecc, gp->text_ecc);
                dg_verdict_step(v, "drain the node, reset the GPU (nvidia-smi -r -i %s) and rerun dcgmi diag -r 3", gp->bus_id);
            }
            if (gp->remap_pending == 1 || gp->retire_pending == 1) {
                v = dg_verdict_get(c, "gpu_row_remap_pending", "compute");
                if (v && 0.65 > v->confidence) {
                    dg_verdict_raise(v, 0.65);
                    dg_verdict_title(v, "GPU %s (%s): %s pending - takes effect only after a GPU reset", gp->bus_id, gp->product,
                             gp->remap_pending == 1 ? "row remapping" : "page retirement");
                }
                if (gp->line_remap_pending) dg_verdict_evidence(v, i, gp->line_remap_pending, gp->text_remap);
                if (gp->line_retire) dg_verdict_evidence(v, i, gp->line_retire, gp->text_retire);
                dg_verdict_step(v, "drain the node and reset the GPU: nvidia-smi -r -i %s (or reboot)", gp->bus_id);
                dg_verdict_step(v, "nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT   # confirm Pending : No afterwards");
            }
            if (gp->aggregate_uncorr > 0 && gp->volatile_uncorr <= 0 && !v) {
                v = dg_verdict_get(c, "gpu_ecc_history", "compute");
                dg_verdict_raise(v, 0.3);
                if (v) dg_verdict_title(v, "GPU %s (%s): %ld uncorrectable ECC error(s) in its lifetime, none since the driver loaded", gp->bus_id, gp->product, gp->aggregate_uncorr);
                if (v) dg_verdict_evidence(v, i, gp->line, gp->bus_id);
                dg_verdict_step(v, "watch it: nvidia-smi -q -d ECC after each job; RMA if the count grows");
            }
        }
    }
}

/* One row per rule; the engine runs them in this order (order does not
 * matter for the result: verdicts are merged by code and sorted). */
const dg_rule dg_rules[] = {
    {"cuda_oom", "compute", "CUDA out of memory: fragmentation vs oversized allocation, rank and phase", rule_oom},
    {"nccl_watchdog", "host", "watchdog timeouts: desync report, SeqNum/OpType mismatch, stalled process, peer/network stall", rule_watchdog},
    {"nccl_connect_failed", "inter", "NCCL socket connect to a peer failed (names the address and host)", rule_connect},
    {"ib_completion", "inter", "IB completion errors: 12/129 retry exceeded, 4/81 with GDR (PCIe ACS), others", rule_ib_completion},
    {"ibv_call", "inter", "verbs call failures: ibv_modify_qp Network is unreachable (RoCE GID/route), others", rule_ibv},
    {"nccl_shm", "intra", "NCCL shared memory / SIGBUS: /dev/shm too small in containers", rule_shm},
    {"nvls", "intra", "NVLS setup failures and NVLS unavailable on NVLS-capable nodes", rule_nvls},
    {"nccl_error", "inter", "NCCL error reported by PyTorch without a more specific cause", rule_nccl_errors},
    {"nccl_socket_fallback", "inter", "NCCL uses TCP sockets between nodes where RDMA was expected", rule_socket_fallback},
    {"gdr_disabled", "inter", "GPU Direct RDMA off or not shown in use across nodes over IB", rule_gdr},
    {"gpu_xid", "compute", "Xid events (table of meanings and actions) and GPU fallen off the bus", rule_xid},
    {"pcie_aer", "intra", "PCIe AER errors by severity", rule_aer},
    {"host_oom_killer", "host", "kernel OOM killer killed a process", rule_host_oom},
    {"cuda_error", "compute", "CUDA errors: ECC, illegal address, others", rule_cuda_errors},
    {"nccl_cuda_failure", "compute", "a CUDA call inside NCCL failed (out of memory for NCCL buffers, or a GPU fault)", rule_nccl_cuda},
    {"process_signal", "host", "a rank killed (SIGKILL/SIGTERM) or crashed (SIGSEGV/SIGABRT ...)", rule_signal},
    {"gpu_ecc", "compute", "nvidia-smi -q: uncorrectable ECC, pending row remaps/page retirement, remap failure", rule_smi},
};
const size_t dg_n_rules = sizeof dg_rules / sizeof dg_rules[0];
