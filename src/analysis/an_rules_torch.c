/* an_rules_torch.c - rule family "torch": what a PyTorch job's console says
 * when it fails (facts in src/model/ev_torch.h): CUDA out of memory and why,
 * ProcessGroupNCCL watchdog timeouts and what they point at, collective
 * desynchronisation, fatal signals, CUDA errors.
 *
 * Watchdog timeouts are read together across ranks, in this order of
 * strength: a desync report or a fingerprint mismatch (an application bug)
 * > ranks timing out in different collectives (the same) > a "ran for" far
 * beyond the timeout (the process itself was stalled) > every rank inside
 * the collective with work enqueued (a peer GPU or the network stalled) or
 * a collective too small to take the timeout (a rank had not arrived yet).
 */
#include "rulebook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

#define MAX_RANK_SEEN 1024

/* ---- CUDA out of memory ---- */

typedef struct oom_ref {
    const ev_torch_oom *o;
    const ev_file *f;
    int n;
} oom_ref;

static oom_ref first_oom(rb_ctx *c)
{
    oom_ref r = {NULL, NULL, 0};
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_ooms; k++) {
            const ev_torch_oom *o = &f->as.torch->ooms[k];
            r.n++;
            if (!r.o || ev_time_cmp(o->at.ts, r.o->at.ts) == -1) {
                r.o = o;
                r.f = f;
            }
        }
    return r;
}

enum { OOM_NONE, OOM_OTHER, OOM_FRAG, OOM_OVERSIZED, OOM_PLAIN };

/* Which of the OOM rules explains this OOM. Another process holding the
 * memory first (NVML's "Process N has X memory in use", listed beside the
 * failing process's own "this process has"); then fragmentation: the
 * cache's reserved-but-unallocated memory (with what is free) would hold
 * the request, so no block of that size was contiguous; else the request
 * does not fit. */
static int oom_class(const ev_torch_oom *o)
{
    bool known = o->requested_bytes > 0 && o->reserved_unalloc_bytes >= 0;
    if (!known)
        return OOM_PLAIN;
    if (o->in_use_bytes >= 0 && o->other_procs_bytes > 0 &&
        (o->other_procs_bytes >= o->in_use_bytes || (o->total_bytes > 0 && o->other_procs_bytes >= 0.5 * o->total_bytes)))
        return OOM_OTHER;
    double unalloc = o->reserved_unalloc_bytes, free_b = o->free_bytes > 0 ? o->free_bytes : 0;
    if (unalloc >= o->requested_bytes || (unalloc >= 0.5 * o->requested_bytes && unalloc + free_b >= o->requested_bytes))
        return OOM_FRAG;
    return OOM_OVERSIZED;
}

static void oom_title(rb_finding *x, const ev_torch_oom *o, const char *why)
{
    char req[32], fre[32], tot[32], alloc[32], ru[32], where[48] = "";
    if (o->at.rank >= 0)
        snprintf(where, sizeof where, " on rank %d", o->at.rank);
    rb_title(x, "CUDA out of memory%s (GPU %d, %s phase): tried to allocate %s with %s free of %s; %s allocated by PyTorch, %s reserved but unallocated%s%s",
             where, o->gpu, ev_torch_phase_name(o->phase), rb_bytes(o->requested_bytes, req, sizeof req),
             rb_bytes(o->free_bytes, fre, sizeof fre), rb_bytes(o->total_bytes, tot, sizeof tot),
             rb_bytes(o->allocated_bytes, alloc, sizeof alloc), rb_bytes(o->reserved_unalloc_bytes, ru, sizeof ru),
             why[0] ? " - " : "", why);
}

static rb_finding *oom_finding(rb_ctx *c, const rb_rule *self, int cls, const char *why)
{
    oom_ref r = first_oom(c);
    if (!r.o || oom_class(r.o) != cls)
        return NULL;
    rb_finding *x = rb_raise(c, self);
    oom_title(x, r.o, why);
    rb_rank(x, r.o->at.rank);
    rb_cite(x, r.f, &r.o->at);
    if (r.o->frame[0])
        rb_step(x, "the failing allocation is at %s", r.o->frame);
    if (r.n > 1)
        rb_step(x, "%d out-of-memory errors in the inputs; the earliest is shown", r.n);
    return x;
}

static rb_finding *issue_finding(rb_ctx *c, const rb_rule *self, int kind);

static void r_oom_other(rb_ctx *c, const rb_rule *self)
{
    oom_ref r = first_oom(c);
    if (!r.o || oom_class(r.o) != OOM_OTHER)
        return;
    rb_finding *x = rb_raise(c, self);
    char other[32], own[32], tot[32];
    rb_title(x, "CUDA out of memory%s: another process (pid %ld%s) holds %s of the GPU's %s while this one uses %s - a stale or concurrent process, not the model's size",
             r.o->at.rank >= 0 ? " on this rank" : "", r.o->other_pid, r.o->n_other_procs > 1 ? " and others" : "",
             rb_bytes(r.o->other_procs_bytes, other, sizeof other), rb_bytes(r.o->total_bytes, tot, sizeof tot),
             rb_bytes(r.o->in_use_bytes, own, sizeof own));
    rb_rank(x, r.o->at.rank);
    rb_cite(x, r.f, &r.o->at);
    rb_step(x, "nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # who holds the GPU");
    rb_step(x, "kill or wait for pid %ld (a crashed run's process that did not exit); restart only once its memory is freed", r.o->other_pid);
    rb_step(x, "share GPUs deliberately only with a memory cap per process (torch.cuda.set_per_process_memory_fraction) or MIG");
}

static void r_oom_frag(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = oom_finding(c, self, OOM_FRAG, "fragmentation");
    if (!x)
        return;
    rb_step(x, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
    rb_step(x, "or limit block splitting: PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512");
    rb_step(x, "record a memory snapshot: torch.cuda.memory._record_memory_history(); torch.cuda.memory._dump_snapshot('oom.pickle')");
}

static void r_oom_oversized(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = oom_finding(c, self, OOM_OVERSIZED, "the allocation does not fit");
    if (!x)
        return;
    const ev_torch_oom *o = first_oom(c).o;
    rb_step(x, "reduce the micro-batch size or sequence length");
    if (o->phase == EV_TORCH_PHASE_BACKWARD || o->phase == EV_TORCH_PHASE_FORWARD)
        rb_step(x, "enable activation checkpointing (torch.utils.checkpoint) for the %s activations", ev_torch_phase_name(o->phase));
    if (o->phase == EV_TORCH_PHASE_OPTIMIZER)
        rb_step(x, "shard optimizer state (ZeRO-1/2, FSDP) or use a lower-precision optimizer state");
    rb_step(x, "split the model further: more tensor/pipeline parallelism or FSDP/ZeRO-3");
    rb_step(x, "print(torch.cuda.memory_summary()) at the failing step to see the largest users");
}

static void r_oom_plain(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = oom_finding(c, self, OOM_PLAIN, "");
    if (!x) { /* cuBLAS failing to allocate its workspace is the same shortage */
        bool any = false;
        RB_EACH(c, EV_TORCH, f)
            any |= ev_torch_issue_of(f->as.torch, EV_TORCH_ISSUE_CUBLAS_ALLOC) != NULL;
        if (!any || first_oom(c).o)
            return;
        x = issue_finding(c, self, EV_TORCH_ISSUE_CUBLAS_ALLOC);
        rb_title(x, "cuBLAS could not allocate its workspace (CUBLAS_STATUS_ALLOC_FAILED): the GPU was out of memory when the first matrix multiply ran");
        rb_step(x, "nvidia-smi   # another process may hold the GPU; otherwise reduce the batch or model size on this GPU");
        return;
    }
    rb_step(x, "the message lacks the allocator's numbers: print(torch.cuda.memory_summary()) at the failing step");
    rb_step(x, "reduce the micro-batch size or sequence length; try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
}

/* ---- collectives and the watchdog ---- */

typedef struct wd_ref {
    const ev_torch_watchdog *w;
    const ev_file *f;
} wd_ref;

/* Every watchdog timeout of every input, in input order. */
static wd_ref *timeouts(rb_ctx *c, int *n)
{
    *n = 0;
    RB_EACH(c, EV_TORCH, f)
        *n += f->as.torch->n_timeouts;
    wd_ref *refs = cp_xmalloc((size_t)(*n ? *n : 1) * sizeof *refs);
    int k = 0;
    RB_EACH(c, EV_TORCH, f)
        for (int i = 0; i < f->as.torch->n_timeouts; i++)
            refs[k++] = (wd_ref){&f->as.torch->timeouts[i], f};
    return refs;
}

static bool stalled(const ev_torch_watchdog *w) { return w->timeout_ms > 0 && w->ran_for_ms > 2 * w->timeout_ms; }

/* The first pair of timeouts on different ranks in different collectives. */
static bool mismatched(const wd_ref *refs, int n, int *b)
{
    for (int k = 1; k < n; k++) {
        const ev_torch_watchdog *a = refs[0].w, *w = refs[k].w;
        if (w->at.rank == a->at.rank && w->at.rank >= 0)
            continue;
        if (w->seq != a->seq || strcmp(w->op, a->op) != 0) {
            *b = k;
            return true;
        }
    }
    return false;
}

static void r_desync(rb_ctx *c, const rb_rule *self)
{
    /* 1. the desync report names the lagging rank */
    RB_EACH(c, EV_TORCH, f) {
        const ev_torch *t = f->as.torch;
        if (!t->n_desyncs)
            continue;
        const ev_torch_desync *d = &t->desyncs[0];
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "collective desynchronization: rank %d finished collective #%ld but never joined #%ld%s%s - an application bug, not a network fault",
                 d->lag_rank, d->finished_seq, d->missing_seq, t->desync_op[0] ? "; the others wait in " : "", t->desync_op);
        rb_rank(x, d->lag_rank);
        rb_cite(x, f, &d->at);
        rb_cite(x, f, &t->desync_timeout_at);
        if (t->n_timeouts)
            rb_cite(x, f, &t->timeouts[0].at);
        rb_step(x, "find the code path where rank %d skips collective #%ld (a rank-dependent if, an early exit, uneven data)", d->lag_rank,
                d->missing_seq);
        break;
    }
    /* 2. TORCH_DISTRIBUTED_DEBUG=DETAIL's fingerprint check */
    RB_EACH(c, EV_TORCH, f) {
        const ev_torch *t = f->as.torch;
        if (!t->n_mismatches)
            continue;
        const ev_torch_mismatch *m = &t->mismatches[0];
        rb_finding *x = rb_raise(c, self);
        if (!x->title[0]) {
            bool same_seq = m->seq >= 0 && m->seq == m->other_seq;
            rb_title(x, "collective desynchronization: rank %d runs %s #%ld%s%s while rank %d runs %s #%ld%s%s%s - the ranks issue different collectives (an application bug)",
                     m->rank, m->op, m->seq, m->shape[0] ? " of shape " : "", m->shape, m->other_rank, m->other_op, m->other_seq,
                     m->other_shape[0] ? " of shape " : "", m->other_shape,
                     same_seq && strcmp(m->shape, m->other_shape) ? " (same sequence number, different tensors: a rank-dependent model path)" : "");
            rb_rank(x, m->rank);
        }
        rb_cite(x, f, &m->at);
        rb_step(x, "find where the ranks' code paths differ (a branch on the data of one rank skips a module and its gradient bucket)");
        break;
    }
    /* 3. timeouts in different collectives on different ranks */
    int n, b = -1;
    wd_ref *refs = timeouts(c, &n);
    if (n && mismatched(refs, n, &b)) {
        const ev_torch_watchdog *a = refs[0].w, *w = refs[b].w;
        rb_finding *x = rb_raise(c, self);
        rb_confidence(x, 0.8);
        if (!x->title[0]) {
            x->confidence = 0.8;
            rb_title(x, "collective desynchronization: rank %d timed out in %s SeqNum=%ld while rank %d timed out in %s SeqNum=%ld - the ranks issue different collectives",
                     a->at.rank, a->op, a->seq, w->at.rank, w->op, w->seq);
        }
        rb_cite(x, refs[0].f, &a->at);
        rb_cite(x, refs[b].f, &w->at);
    }
    free(refs);
    rb_finding *x = rb_find(c, self->code);
    if (x) {
        rb_step(x, "TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_NCCL_DESYNC_DEBUG=1 to print the mismatch on every rank");
        rb_step(x, "TORCH_FR_BUFFER_SIZE=2000, then python -m torch.distributed.flight_recorder.fr_trace <dump dir> to compare the ranks' last collectives");
    }
}

static void r_stalled(rb_ctx *c, const rb_rule *self)
{
    if (rb_find(c, "TORCH_COLLECTIVE_DESYNC"))
        return;
    int n;
    wd_ref *refs = timeouts(c, &n);
    for (int k = 0; k < n; k++) {
        const ev_torch_watchdog *w = refs[k].w;
        if (!stalled(w))
            continue;
        rb_finding *x = rb_raise(c, self);
        if (!x->title[0]) {
            rb_rank(x, w->at.rank);
            rb_title(x, "the process was stalled, not the collective: %s SeqNum=%ld ran for %ld ms against a %ld ms timeout (%.1fx) on rank %d",
                     w->op, w->seq, w->ran_for_ms, w->timeout_ms, (double)w->ran_for_ms / (double)w->timeout_ms, w->at.rank);
        }
        rb_cite(x, refs[k].f, &w->at);
        rb_step(x, "py-spy dump --pid <pid> on the stalled rank (host stack: GIL, data loader, checkpoint I/O)");
        rb_step(x, "check the host: vmstat 1, dmesg -T | tail (swap, OOM killer, hung tasks), cgroup CPU throttling");
    }
    free(refs);
}

/* Ranks the timeouts and progress lines came from, and the largest rank any
 * log mentions. */
typedef struct seen_ranks {
    bool seen[MAX_RANK_SEEN];
    int n, max;
} seen_ranks;

static void see(seen_ranks *s, int rk)
{
    if (rk >= 0 && rk < MAX_RANK_SEEN && !s->seen[rk]) {
        s->seen[rk] = true;
        s->n++;
    }
    if (rk > s->max)
        s->max = rk;
}

/* Every progress line says its rank enqueued work up to or past seq: all
 * ranks that spoke were inside the collective. */
static bool all_enqueued(rb_ctx *c, long seq, int *lines)
{
    *lines = 0;
    bool all = true;
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_progress; k++) {
            (*lines)++;
            long e = f->as.torch->progress[k].last_enqueued;
            if (e < 0 || e < seq)
                all = false;
        }
    return *lines > 0 && all;
}

/* A collective of at most this many elements is a synchronisation (PyTorch's
 * barrier() is a one-element all-reduce; flags agreed across ranks): its
 * timeout, without progress lines showing every rank inside it, is a rank
 * that had not arrived - not data that took too long to move. */
#define TINY_NUMEL 16

static void watchdog_steps(rb_ctx *c, rb_finding *x)
{
    const rb_event *ff = rb_first_failure(c);
    if (ff && strcmp(ff->kind, "watchdog_timeout") != 0 && strcmp(ff->kind, "watchdog_progress") != 0) {
        char ts[48];
        ev_time_format(ff->ts, ts, sizeof ts);
        const char *base = strrchr(c->set->inputs[ff->input].path, '/');
        base = base ? base + 1 : c->set->inputs[ff->input].path;
        rb_step(x, "rank %d%s%s failed first (%s%s%s, %s:%ld): start there", ff->rank, ff->host[0] ? " on " : "", ff->host,
                ff->kind, ts[0] ? " at " : "", ts, base, ff->line);
    }
}

static void timeout_verdict(rb_ctx *c, const rb_rule *self, bool late_wanted)
{
    if (rb_find(c, "TORCH_COLLECTIVE_DESYNC"))
        return;
    int n;
    wd_ref *refs = timeouts(c, &n);
    int n_stalled = 0;
    for (int k = 0; k < n; k++)
        n_stalled += stalled(refs[k].w);
    if (!n || n_stalled == n) { /* every timeout is explained by a stalled process */
        free(refs);
        return;
    }
    const ev_torch_watchdog *a = refs[0].w;
    bool tiny = true;
    for (int k = 0; k < n; k++)
        tiny &= refs[k].w->numel_in >= 0 && refs[k].w->numel_in <= TINY_NUMEL;
    int progress;
    bool inside = all_enqueued(c, a->seq, &progress);
    bool late = tiny && !inside;
    if (late != late_wanted) {
        free(refs);
        return;
    }
    seen_ranks s;
    memset(&s, 0, sizeof s);
    s.max = -1;
    rb_finding *x = rb_raise(c, self);
    for (int k = 0; k < n; k++) {
        see(&s, refs[k].w->at.rank);
        if (x->n_cite < 4)
            rb_cite(x, refs[k].f, &refs[k].w->at);
    }
    long min_done = -1, max_done = -1;
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_progress; k++) {
            const ev_torch_progress *p = &f->as.torch->progress[k];
            if (p->last_completed >= 0 && (min_done < 0 || p->last_completed < min_done))
                min_done = p->last_completed;
            if (p->last_completed > max_done)
                max_done = p->last_completed;
            see(&s, p->at.rank);
            if (x->n_cite < 6)
                rb_cite(x, f, &p->at);
        }
    RB_EACH(c, EV_NCCL_LOG, f)
        if (f->as.nccl->nranks - 1 > s.max)
            s.max = f->as.nccl->nranks - 1;
    if (s.n < 2 && !late)
        x->confidence = 0.5;
    char missing[96] = "";
    size_t off = 0;
    int n_missing = 0;
    for (int rk = 0; rk <= s.max && rk < MAX_RANK_SEEN; rk++) {
        if (s.seen[rk])
            continue;
        if (n_missing++ < 8 && off < sizeof missing - 8)
            off += (size_t)snprintf(missing + off, sizeof missing - off, "%s%d", off ? "," : "", rk);
    }
    char numel[40] = "";
    if (a->numel_in >= 0)
        snprintf(numel, sizeof numel, "NumelIn=%ld, ", a->numel_in);
    if (late)
        rb_title(x, "NCCL watchdog timeout in a %ld-element %s (SeqNum=%ld, timeout %ld ms) on %d rank(s): too small to take the timeout on any network - another rank had not reached the collective (uneven or slow work on it)%s%s",
                 a->numel_in, a->op, a->seq, a->timeout_ms, s.n ? s.n : 1, n_missing ? "; no timeout line from rank(s) " : "",
                 missing);
    else
        rb_title(x, "NCCL watchdog timeout: %d rank(s) stuck in %s SeqNum=%ld (%stimeout %ld ms)%s - a peer rank's GPU or the network stalled%s%s%s",
                 s.n ? s.n : 1, a->op, a->seq, numel, a->timeout_ms,
                 inside ? " with the work enqueued on every rank that reported" : "", n_missing ? "; no timeout line from rank(s) " : "",
                 missing, n_missing ? " - look at their logs first" : "");
    watchdog_steps(c, x);
    if (min_done >= 0 && min_done != max_done)
        rb_step(x, "last completed work differs across ranks (%ld vs %ld): the rank with %ld is behind", min_done, max_done, min_done);
    if (late) {
        rb_step(x, "find what the other ranks do before this collective (evaluation, generation, checkpointing, data preprocessing on one rank) and balance it");
        rb_step(x, "if the wait is expected, raise the timeout: init_process_group(..., timeout=timedelta(hours=N))");
        rb_step(x, "py-spy dump --pid <pid> on every rank to see which one is still computing");
    } else {
        rb_step(x, "look for the first error on any rank before the timeout (NCCL WARN, Xid, OOM, a killed process) - this timeout is a symptom");
        rb_step(x, "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_BUFFER_SIZE=2000");
        rb_step(x, "test the fabric between the nodes: ib_write_bw -d <hca> <peer> and all_reduce_perf -b 8 -e 1G -f 2 -g 1 across the nodes");
    }
    free(refs);
}

static void r_timeout_late(rb_ctx *c, const rb_rule *self) { timeout_verdict(c, self, true); }
static void r_timeout_stall(rb_ctx *c, const rb_rule *self) { timeout_verdict(c, self, false); }

/* ---- signals and CUDA errors ---- */

static void signal_rule(rb_ctx *c, const rb_rule *self, bool kill)
{
    bool oom_kill = false;
    RB_EACH(c, EV_KERNEL, f)
        oom_kill |= f->as.dmesg->n_oomkills > 0;
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_signals; k++) {
            const ev_torch_error *e = &f->as.torch->signals[k];
            bool is_kill = e->signo == 9 || e->signo == 15;
            if (e->signo == 7 || is_kill != kill) /* SIGBUS is the shared-memory rule's */
                continue;
            rb_finding *x = rb_raise(c, self);
            if (!x->title[0]) {
                if (kill && oom_kill) /* the OOM killer's line explains it */
                    x->confidence = 0.4;
                rb_rank(x, e->at.rank);
                rb_title(x, "rank %d was %s by %s%s", e->at.rank, kill ? "killed" : "terminated", e->what,
                         kill ? ": the kernel OOM killer, the scheduler (time limit, preemption) or a user"
                              : ": a crash in native code (CUDA/NCCL library, extension, driver)");
            }
            rb_cite(x, f, &e->at);
            if (kill) {
                rb_step(x, "dmesg -T | grep -i -e 'killed process' -e 'out of memory'   # on the rank's node");
                rb_step(x, "sacct -j <jobid> -o JobID,State,ExitCode,MaxRSS,Elapsed,Timelimit   # Slurm: time limit or memory");
                rb_step(x, "check the cgroup/container memory limit of the job (kubectl describe pod: OOMKilled)");
            } else {
                rb_step(x, "rerun with python -X faulthandler and ulimit -c unlimited; gdb python core to see the frame");
                rb_step(x, "check CUDA, NCCL and driver versions match what the framework was built with");
            }
        }
}

static void r_killed(rb_ctx *c, const rb_rule *self) { signal_rule(c, self, true); }
static void r_crashed(rb_ctx *c, const rb_rule *self) { signal_rule(c, self, false); }

/* cudaErrorSystemNotReady (802): "system not yet initialized". */
static bool is_not_ready(const ev_torch_error *e)
{
    return e->code == 802 || strstr(e->what, "cudaErrorSystemNotReady") || strstr(e->what, "system not yet initialized");
}

static bool is_ecc(const ev_torch_error *e) { return strstr(e->what, "ECC") != NULL; }

static void not_ready_steps(rb_finding *x)
{
    rb_title(x, "CUDA cannot start: error 802 (cudaErrorSystemNotReady, \"system not yet initialized\") - on NVSwitch systems the NVIDIA Fabric Manager is not running");
    rb_step(x, "systemctl status nvidia-fabricmanager   # install it (the driver's version) and start it: systemctl enable --now nvidia-fabricmanager");
    rb_step(x, "nvidia-smi -q | grep -i -A2 fabric   # State: Completed, Status: Success");
    rb_step(x, "in Kubernetes the GPU operator's validator fails the same way until the fabric manager runs on the host");
}

static void r_not_ready(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_LOG, f) /* NCCL's "Cuda failure 'system not yet initialized'" */
        for (int k = 0; k < f->as.nccl->n_issues; k++) {
            const ev_nccl_issue *is = &f->as.nccl->issues[k];
            if (is->kind != EV_NCCL_ISSUE_CUDA || (is->code != 802 && !strstr(is->detail, "system not yet initialized")))
                continue;
            rb_finding *x = rb_raise(c, self);
            rb_rank(x, is->at.rank);
            rb_cite(x, f, &is->at);
            not_ready_steps(x);
        }
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_cuda_errors; k++) {
            const ev_torch_error *e = &f->as.torch->cuda_errors[k];
            if (!is_not_ready(e))
                continue;
            rb_finding *x = rb_raise(c, self);
            rb_rank(x, e->at.rank);
            rb_cite(x, f, &e->at);
            not_ready_steps(x);
        }
}

/* ---- environment messages that name their cause (ev_torch issues) ---- */

/* The finding of a rule over every issue of one kind (each cited, ranks
 * named), or NULL when the inputs hold none. */
static rb_finding *issue_finding(rb_ctx *c, const rb_rule *self, int kind)
{
    rb_finding *x = NULL;
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_issues; k++) {
            const ev_torch_issue *is = &f->as.torch->issues[k];
            if (is->kind != kind)
                continue;
            if (!x)
                x = rb_raise(c, self);
            rb_rank(x, is->at.rank);
            rb_cite(x, f, &is->at);
        }
    return x;
}

static void r_store(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_STORE_UNREACHABLE);
    if (!x)
        return;
    rb_title(x, "the ranks could not reach the c10d store (rendezvous) on MASTER_ADDR:MASTER_PORT: rank 0 not up or gone, a wrong address or port, or a firewall between the nodes");
    rb_step(x, "on a failing node: nc -zv $MASTER_ADDR $MASTER_PORT   # the port must be open and served by rank 0's store");
    rb_step(x, "check rank 0's log first: a rank 0 that crashed or is still loading leaves every other rank waiting on the store");
    rb_step(x, "MASTER_ADDR must be an address of rank 0's node reachable from all nodes (not localhost, not a container-internal IP)");
}

static void r_port_in_use(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_STORE_PORT_IN_USE);
    if (!x)
        return;
    rb_title(x, "rank 0 could not open the c10d store: MASTER_PORT is already in use on its node (a previous run still alive, or two jobs with one port)");
    rb_step(x, "ss -ltnp | grep $MASTER_PORT   # on rank 0's node: which process holds the port; end a leftover run");
    rb_step(x, "give each job its own MASTER_PORT (torchrun --master_port, or --rdzv-endpoint host:0 for a free port)");
}

static void r_watchdog_hang(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_WATCHDOG_HANG);
    if (!x)
        return;
    rb_title(x, "ProcessGroupNCCL's watchdog itself hung: a CUDA or NCCL call blocked the process (a GPU fault, a hung kernel, a deadlock holding the GIL), not a slow collective");
    rb_step(x, "dmesg -T | grep -i xid   # a GPU fault at that time explains a hung CUDA call");
    rb_step(x, "py-spy dump --native --pid <pid> on a hung rank; TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 for a Flight Recorder dump");
}

static void r_ddp_unused(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_DDP_UNUSED);
    if (!x)
        return;
    rb_title(x, "DistributedDataParallel: some parameters took no part in the loss, so the gradient reduction of the previous step never finished");
    rb_step(x, "DistributedDataParallel(model, find_unused_parameters=True), or make every parameter contribute to the loss on every rank");
    rb_step(x, "TORCH_DISTRIBUTED_DEBUG=DETAIL names the parameters that received no gradient");
}

static void r_dataloader_shm(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_DATALOADER_SHM);
    if (!x)
        return;
    rb_title(x, "DataLoader workers ran out of shared memory (/dev/shm): the container's default 64 MB is too small for the batches they pass");
    rb_step(x, "docker run --ipc=host (or --shm-size=16g); in Kubernetes mount an emptyDir with medium: Memory at /dev/shm");
    rb_step(x, "df -h /dev/shm   # inside the container; fewer num_workers or smaller prefetch_factor only lower the need");
}

static void r_driver(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_DRIVER_MISMATCH);
    if (!x)
        return;
    rb_title(x, "the NVIDIA driver does not match the software above it: a CUDA runtime newer than the driver supports, or a driver upgraded under running NVML (Driver/library version mismatch)");
    rb_step(x, "nvidia-smi   # the driver version and the highest CUDA version it supports; the job's CUDA runtime must not be newer (or use the CUDA forward-compatibility package)");
    rb_step(x, "after a driver upgrade: reboot (or unload and reload the nvidia kernel modules) so the kernel module and the user-space libraries match");
}

static void r_no_device(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = issue_finding(c, self, EV_TORCH_ISSUE_NO_DEVICE);
    if (!x)
        return;
    rb_title(x, "the process sees no CUDA device: a container started without GPUs, CUDA_VISIBLE_DEVICES empty or wrong, or the driver not loaded");
    rb_step(x, "nvidia-smi -L inside the same container or job step; docker run --gpus all / the Kubernetes nvidia.com/gpu resource / srun --gpus");
    rb_step(x, "echo $CUDA_VISIBLE_DEVICES   # a scheduler or launcher may set it to an empty list");
}

/* A CUDA error whose line names a cause of its own (a driver mismatch,
 * no device, a cuBLAS allocation failure) belongs to that cause's rule. */
static bool claimed(const ev_torch *t, const ev_torch_error *e) { return ev_torch_issue_on_line(t, e->at.line); }

static void r_cuda_error(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_cuda_errors; k++) {
            const ev_torch_error *e = &f->as.torch->cuda_errors[k];
            if (ev_torch_error_is_access_fault(e) || is_ecc(e) || is_not_ready(e) || claimed(f->as.torch, e) ||
                strstr(e->what, "NVLink"))
                continue;
            rb_finding *x = rb_raise(c, self);
            if (!x->title[0]) {
                rb_rank(x, e->at.rank);
                if (e->at.rank >= 0)
                    rb_title(x, "CUDA error on rank %d: %s", e->at.rank, e->what);
                else
                    rb_title(x, "CUDA error: %s", e->what);
            }
            rb_cite(x, f, &e->at);
            rb_step(x, "rerun with CUDA_LAUNCH_BLOCKING=1 to get the failing call; dmesg -T | grep -i xid for a GPU fault");
        }
}

/* ---- timeline ---- */

static void events(rb_ctx *c, const ev_file *f)
{
    if (f->kind != EV_TORCH)
        return;
    const ev_torch *t = f->as.torch;
    for (int k = 0; k < t->n_ooms; k++)
        rb_event_add(c, f, &t->ooms[k].at, "cuda_oom", RB_EV_ERROR, false);
    for (int k = 0; k < t->n_timeouts; k++)
        rb_event_add(c, f, &t->timeouts[k].at, "watchdog_timeout", RB_EV_ERROR, true);
    for (int k = 0; k < t->n_progress; k++)
        rb_event_add(c, f, &t->progress[k].at, "watchdog_progress", RB_EV_INFO, true);
    for (int k = 0; k < t->n_desyncs; k++)
        rb_event_add(c, f, &t->desyncs[k].at, "desync_report", RB_EV_ERROR, false);
    for (int k = 0; k < t->n_mismatches; k++)
        rb_event_add(c, f, &t->mismatches[k].at, "collective_mismatch", RB_EV_ERROR, false);
    for (int k = 0; k < t->n_nccl_errors; k++)
        rb_event_add(c, f, &t->nccl_errors[k].at, "nccl_error", RB_EV_ERROR, true);
    for (int k = 0; k < t->n_signals; k++)
        rb_event_add(c, f, &t->signals[k].at, "signal", RB_EV_ERROR, false);
    for (int k = 0; k < t->n_cuda_errors; k++)
        rb_event_add(c, f, &t->cuda_errors[k].at, "cuda_error", RB_EV_ERROR, false);
    for (int k = 0; k < t->n_issues; k++)
        rb_event_add(c, f, &t->issues[k].at, ev_torch_issue_key(t->issues[k].kind), RB_EV_ERROR, false);
}

#define FAIL AN_SEV_CRITICAL
static const char *const DIST = "https://pytorch.org/docs/stable/distributed.html";

static const rb_rule k_rules[] = {
    {"CUDA_OOM_OTHER_PROCESS", CP_LAYER_COMPUTE, FAIL, 0.9,
     "CUDA out of memory ... Process N has X memory in use ... this process has Y memory in use, with X the larger or half the GPU",
     "PyTorch's caching allocator OOM message (NVML's process list); https://github.com/rwth-i6/returnn/issues/1649",
     "another process holds the GPU's memory (a crashed run's process that did not exit, a second job on the GPU): free it before starting, or cap each process's share",
     r_oom_other},
    {"CUDA_OOM_FRAGMENTATION", CP_LAYER_COMPUTE, FAIL, 0.9,
     "CUDA out of memory ... Y is reserved by PyTorch but unallocated, with Y (plus what is free) enough for the request",
     "https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf (expandable_segments against fragmentation)",
     "the cache holds the memory but not in one block: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb), and a memory snapshot to see who fragments it",
     r_oom_frag},
    {"CUDA_OOM_OVERSIZED", CP_LAYER_COMPUTE, FAIL, 0.9,
     "CUDA out of memory. Tried to allocate X ... where neither free nor reserved-but-unallocated memory could hold it",
     "https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
     "the job needs more memory than the GPU has at that step: smaller micro-batch or sequence, activation checkpointing, sharded optimizer state, more model parallelism",
     r_oom_oversized},
    {"CUDA_OOM", CP_LAYER_COMPUTE, FAIL, 0.75, "CUDA out of memory without the allocator's numbers, or CUBLAS_STATUS_ALLOC_FAILED (cuBLAS's workspace)",
     "https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
     "the GPU ran out of memory: print the allocator's summary at the failing step to see whether it is fragmentation or size", r_oom_plain},
    {"TORCH_COLLECTIVE_DESYNC", CP_LAYER_HOST, FAIL, 0.9,
     "the TORCH_NCCL_DESYNC_DEBUG report ([r] finished collective #a, but didn't join collective #b), 'Detected mismatch between collectives on ranks', or watchdog timeouts in different SeqNum/OpType on different ranks",
     "https://pytorch.org/docs/stable/distributed.html#debugging-torch-distributed-applications (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
     "the ranks issue different collectives (a rank-dependent branch, an early exit, uneven data): find where their code paths differ", r_desync},
    {"TORCH_PROCESS_STALLED", CP_LAYER_HOST, FAIL, 0.7,
     "Watchdog caught collective operation timeout ... ran for N milliseconds with N more than twice Timeout(ms)",
     DIST, "the watchdog itself ran late: the process was stalled (GIL, swap, a hung host call), not the collective", r_stalled},
    {"TORCH_TIMEOUT_LATE_RANK", CP_LAYER_HOST, FAIL, 0.65,
     "Watchdog caught collective operation timeout on a barrier-sized collective (NumelIn <= 16, as barrier()'s one-element all-reduce) without progress lines showing every rank inside it",
     "https://github.com/EleutherAI/lm-evaluation-harness/pull/1404 (one rank's longer work made the others time out); PyTorch init_process_group timeout",
     "a rank had not called the collective when the others timed out: balance the work before it, or raise the process group's timeout when the wait is expected",
     r_timeout_late},
    {"NCCL_TIMEOUT_STALL", CP_LAYER_INTER, FAIL, 0.6,
     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum, OpType) on the same collective, with 'last enqueued NCCL work' at or past it",
     "https://pytorch.org/docs/stable/distributed.html (watchdog, TORCH_NCCL_DUMP_ON_TIMEOUT); NCCL troubleshooting",
     "every rank is inside the collective and it did not complete: a peer's GPU or the network stalled; find the first error on any rank before the timeout",
     r_timeout_stall},
    {"TORCH_PROCESS_KILLED", CP_LAYER_HOST, FAIL, 0.55, "Signal 9 (SIGKILL) / 15 (SIGTERM) received by PID (torchrun's failure summary)",
     "https://pytorch.org/docs/stable/elastic/errors.html",
     "a rank was killed from outside: the kernel OOM killer, the scheduler (time limit, preemption) or a user", r_killed},
    {"TORCH_PROCESS_CRASHED", CP_LAYER_HOST, FAIL, 0.5, "Signal N received by PID for another fatal signal (SIGSEGV, SIGABRT, ...)",
     "https://pytorch.org/docs/stable/elastic/errors.html", "a rank crashed in native code: get its stack (faulthandler, a core dump)", r_crashed},
    {"CUDA_SYSTEM_NOT_READY", CP_LAYER_INTRA, FAIL, 0.85,
     "CUDA error 802 cudaErrorSystemNotReady / cuda runtime error (802) : system not yet initialized",
     "CUDA runtime API (cudaErrorSystemNotReady: required driver daemons not running); https://github.com/pytorch/pytorch/issues/35710",
     "CUDA refuses work until the system is initialised: on NVSwitch (HGX/DGX) systems install and start nvidia-fabricmanager, the driver's version",
     r_not_ready},
    {"TORCH_STORE_UNREACHABLE", CP_LAYER_HOST, FAIL, 0.75,
     "c10d: The client socket has timed out after Ns while trying to connect to (host, port) / has failed to connect / store->get(...) got error via c10d key-value store / DistStoreError: Timed out after N seconds waiting for clients / RendezvousTimeoutError",
     "https://pytorch.org/docs/stable/distributed.html#environment-variable-initialization (MASTER_ADDR, MASTER_PORT: rank 0 serves the TCPStore)",
     "every rank must reach rank 0's store: MASTER_ADDR routable from all nodes, MASTER_PORT open, rank 0 started and alive", r_store},
    {"TORCH_MASTER_PORT_IN_USE", CP_LAYER_HOST, FAIL, 0.85,
     "c10d: The server socket has failed to bind to ...:PORT (errno: 98 - Address already in use) / has failed to listen on any local network address",
     "https://pytorch.org/docs/stable/elastic/run.html (--master-port; --rdzv-endpoint with port 0 picks a free one)",
     "the rendezvous port is taken on rank 0's node: stop the leftover process or use another MASTER_PORT", r_port_in_use},
    {"TORCH_WATCHDOG_HANG", CP_LAYER_COMPUTE, FAIL, 0.6,
     "ProcessGroupNCCL's watchdog got stuck for N seconds without making progress / Heartbeat monitor timed out!",
     "PyTorch ProcessGroupNCCL heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING, TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC): a NCCL/CUDA API hang blocking the watchdog",
     "a CUDA or NCCL call hung inside the process: look for a GPU fault (Xid) and take a stack of the hung rank", r_watchdog_hang},
    {"TORCH_DDP_UNUSED_PARAMS", CP_LAYER_HOST, FAIL, 0.85,
     "Expected to have finished reduction in the prior iteration before starting a new one (DDP reducer)",
     "https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html (find_unused_parameters)",
     "parameters unused in the forward pass leave DDP's reduction open: find_unused_parameters=True or use every parameter", r_ddp_unused},
    {"TORCH_DATALOADER_SHM", CP_LAYER_HOST, FAIL, 0.85,
     "DataLoader: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm) / workers are out of shared memory",
     "https://github.com/pytorch/pytorch#docker-image (use --ipc=host or --shm-size: the DataLoader's workers share memory through /dev/shm)",
     "give the container a larger /dev/shm (--ipc=host or --shm-size) so DataLoader workers can pass batches", r_dataloader_shm},
    {"CUDA_DRIVER_MISMATCH", CP_LAYER_COMPUTE, FAIL, 0.85,
     "The NVIDIA driver on your system is too old / CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver, 35) / Failed to initialize NVML: Driver/library version mismatch",
     "https://docs.nvidia.com/deploy/cuda-compatibility/ (minimum driver per CUDA runtime); NVML_ERROR_LIB_RM_VERSION_MISMATCH (NVML API reference)",
     "match the driver to the CUDA runtime (upgrade the driver or use an older CUDA build), and reboot after a driver upgrade so kernel module and libraries agree",
     r_driver},
    {"CUDA_NO_DEVICE", CP_LAYER_COMPUTE, FAIL, 0.75,
     "CUDA error: no CUDA-capable device is detected (cudaErrorNoDevice, 100) / No CUDA GPUs are available / Found no NVIDIA driver on your system",
     "CUDA runtime API error codes (cudaErrorNoDevice); https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/ (containers see GPUs only when given them)",
     "give the process its GPUs: the container runtime's --gpus, the scheduler's GPU request, a CUDA_VISIBLE_DEVICES that names existing devices", r_no_device},
    {"CUDA_ERROR", CP_LAYER_COMPUTE, FAIL, 0.5, "another 'CUDA error: <message>'", "CUDA runtime API error codes",
     "a CUDA call failed: rerun with CUDA_LAUNCH_BLOCKING=1 to find it; check for a GPU fault (Xid) at the same time", r_cuda_error},
};

const rb_family rb_family_torch = {.name = "torch",
                                   .summary = "PyTorch logs: out of memory, watchdog timeouts, desync, signals, CUDA errors",
                                   .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules), .events = events};
