/* an_layers.c - five-layer attribution: every instant of every step of every
 * rank goes to exactly one of host, compute, intra, inter, storage or idle.
 *
 * Design
 * - One sweep per rank over interval boundaries in exact nanoseconds. Every
 *   GPU activity and every relevant host region becomes a +1/-1 pair on a
 *   label counter; step boundaries are points of the same sweep, so every
 *   segment between two consecutive points lies wholly inside or outside one
 *   step. Each in-step segment gets one layer by the priority rule of
 *   docs/METRICS.md (compute > communication (inter wins over intra) >
 *   copies > storage > host > idle), hence the exposed times of a step add
 *   up to its duration exactly (no rounding anywhere) -- the tests assert it.
 * - Hidden time of a layer is the time it was active but the instant went to
 *   a higher-priority layer (e.g. NCCL overlapped by GEMMs is hidden inter).
 * - Node membership decides inter vs intra: hostnames when every traced rank
 *   has one, else --gpus-per-node, else the trace's device count (Kineto
 *   lists the devices visible on the node), else one node.
 * - Steps are the ProfilerStep#N CPU annotations, all of them (unlike HTA,
 *   none is dropped). A rank without steps gets one implicit window over all
 *   its events so its totals still cover the whole trace.
 *
 * Output: per rank `layers.{host,...}.{exposed_ns,hidden_ns}`, the same under
 * each `steps[]` entry (found by id when an earlier analyzer created the
 * array, else created here), and a top-level `layer_breakdown` table for
 * people. Typed results in ctx->results[AN_layers] (an_verdict.h).
 */
#include "an_verdict.h"
#include "../base/buf.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sweep labels: what may be running at an instant. */
enum {
    LB_COMPUTE,       /* compute kernel */
    LB_INTER,         /* collective whose group spans nodes */
    LB_INTRA,         /* collective inside one node */
    LB_COPY_INTRA,    /* H2D/D2H/P2P (and other host-involving) copies */
    LB_COPY_PAGEABLE, /* ... pageable or synchronous ones (also counted above) */
    LB_COPY_COMPUTE,  /* D2D copies and memsets */
    LB_STORAGE,       /* host inside a checkpoint / I/O region */
    LB_FILE_IO,       /* host inside a file I/O call (nsys OS runtime trace) */
    LB_DATALOADER,    /* host inside the data loader */
    LB_LAUNCH,        /* host inside a runtime/driver call */
    LB_HOST,          /* host inside another framework op */
    LB_STEP,          /* step boundary (no counter meaning) */
    LB__COUNT
};

/* A sweep point is one uint64: (t - base) >> shift in the high bits, then
 * the label (4 bits) and 1 for a start, so the points sort as plain keys
 * (8 bytes a point plus 8 of sort scratch; a (key, val) pair cost twice
 * that, 64 bytes an event). Points of one instant are applied together,
 * so their order inside the instant does not matter. base is the rank's
 * first start; shift is 0 unless the rank spans over 2^58 ns (9 years:
 * damaged timestamps), which is then swept at 2^shift ns resolution. */
#define PT_LOW_BITS 5
_Static_assert(LB__COUNT <= 16, "a sweep label fits in 4 bits");
#define PT_SPAN_MAX ((int64_t)1 << 58)

typedef struct pts {
    uint64_t *v;
    size_t n, cap;
    int64_t base;
    int shift;
} pts;

static void pts_add(pts *p, int64_t t0, int64_t t1, int lab)
{
    if (t1 <= t0)
        return;
    cp_xgrow((void **)&p->v, &p->cap, p->n + 2, sizeof *p->v);
    uint64_t l = (uint64_t)lab << 1;
    p->v[p->n++] = ((uint64_t)(t0 - p->base) >> p->shift << PT_LOW_BITS) | l | 1;
    p->v[p->n++] = ((uint64_t)(t1 - p->base) >> p->shift << PT_LOW_BITS) | l;
}

static int64_t pts_time(const pts *p, uint64_t v) { return p->base + (int64_t)(v >> PT_LOW_BITS << p->shift); }

/* base and shift from the rank's time span. */
static void pts_init(pts *p, const tl_timeline *tl, const tl_rank *rk)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        if (tr->ev_begin < tr->ev_end) /* a track is in start order */
            lo = CP_MIN(lo, tl->ts_ns[tr->ev_begin]);
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++)
            hi = CP_MAX(hi, tl_end_ns(tl, i));
    }
    p->base = lo <= hi ? lo : 0;
    p->shift = 0;
    while (lo <= hi && (uint64_t)(hi - lo) >> p->shift >= (uint64_t)PT_SPAN_MAX)
        p->shift++;
}

/* What a sweep needs besides the timeline: caches that make the per-event
 * work a table lookup (the name tests are case-insensitive substring
 * searches; on a 1 GB trace doing them per event was most of analyze's
 * time), and the window a sweep is restricted to. */
typedef struct sweep_env {
    const an_ctx *ctx;
    const an_layers_result *lr;
    uint8_t *host_class;   /* per name id: 0 not yet, else HC_* */
    uint32_t io_class_key; /* "class": file I/O calls with a storage class (chainprof run traces) */
    int64_t win_t0, win_t1; /* only events overlapping [win_t0, win_t1) take part */
} sweep_env;

enum { HC_NONE = AN_HC_OTHER, HC_STORAGE = AN_HC_STORAGE, HC_DATALOADER = AN_HC_DATALOADER, HC_FILE_IO };

/* Host regions that mean the GPU waits on storage: known save/load APIs
 * and checkpoint regions, case-insensitive substrings of the event name
 * (python functions, annotations, ops, NVTX ranges). */
static const char *const storage_patterns[] = {
    "checkpoint", "torch.save", "torch.load", "serialization.py", "dcp.save", "dcp.load", "distributed.checkpoint",
    "save_state_dict", "fsync", "file_read", "read_file", "np.load", "np.save", "safetensors", "pickle.dump",
    "pickle.load", "save_pretrained", "from_pretrained",
};
/* ... except activation checkpointing, which recomputes the forward pass in
 * the backward (compute, not storage): torch.utils.checkpoint and its
 * CheckpointFunction, FSDP's checkpoint_wrapper (module names
 * "_checkpoint_wrapped_module", CheckpointWrapper), Megatron's and
 * DeepSpeed's activation checkpointing, Hugging Face's
 * gradient_checkpointing. */
static const char *const recompute_patterns[] = {
    "utils.checkpoint", "utils/checkpoint.py", "checkpointfunction", "checkpoint_wrapper", "checkpointwrapper",
    "checkpoint_wrapped", "activation_checkpoint", "checkpoint_sequential", "gradient_checkpointing",
    "checkpoint_activations", "activation_checkpointing", "checkpointing.py", "non_reentrant", "recompute",
};
static const char *const dataloader_patterns[] = {
    "dataloader", "data_loader", "_next_data", "enumerate(DataLoader", "collate", "dataset.__getitem__",
};
/* OS runtime calls that do file I/O, by their libc names as nsys traces
 * them (exact names; nsys' OSRT_API also holds poll, ioctl, pthread_*,
 * which are not). read/write may also be on a pipe or socket: inside a
 * data-loader region they stay data loading. */
static const char *const file_io_calls[] = {
    "open", "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64", "fclose", "fdopen",
    "read", "pread", "pread64", "preadv", "preadv2", "readv", "fread", "fgets",
    "write", "pwrite", "pwrite64", "pwritev", "pwritev2", "writev", "fwrite", "fputs", "fflush",
    "fsync", "fdatasync", "sync", "syncfs", "sync_file_range", "msync", "fallocate", "posix_fallocate",
    "ftruncate", "copy_file_range", "io_submit", "io_getevents", "io_uring_enter", "stat", "stat64",
    "fstat", "fstat64", "lstat", "statx", "unlink", "rename", "mkdir",
};

static bool matches(const char *name, const char *const *pat, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cp_str_icontains(name, pat[i]))
            return true;
    return false;
}

int an_host_class_of(const char *name)
{
    if (matches(name, storage_patterns, CP_ARRAY_LEN(storage_patterns)))
        return matches(name, recompute_patterns, CP_ARRAY_LEN(recompute_patterns)) ? HC_NONE : HC_STORAGE;
    return matches(name, dataloader_patterns, CP_ARRAY_LEN(dataloader_patterns)) ? HC_DATALOADER : HC_NONE;
}

bool an_is_file_io_call(const char *name)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(file_io_calls); i++)
        if (strcmp(name, file_io_calls[i]) == 0)
            return true;
    return false;
}

/* The class of a host event's name (cached per name id). */
static int host_class(sweep_env *env, uint32_t name_id, const char *name)
{
    uint8_t *c = &env->host_class[name_id];
    if (!*c)
        *c = (uint8_t)an_host_class_of(name);
    return *c;
}

/* Append [t0, t1) to the rank's exposed-host segments, merged with the last
 * one when they touch (the sweep visits instants in time order). */
static void host_seg_add(an_rank_layers *out, size_t *cap, int64_t t0, int64_t t1)
{
    if (out->n_host_segs && out->host_segs[2 * out->n_host_segs - 1] == t0) {
        out->host_segs[2 * out->n_host_segs - 1] = t1;
        return;
    }
    cp_xgrow((void **)&out->host_segs, cap, 2 * out->n_host_segs + 2, sizeof *out->host_segs);
    out->host_segs[2 * out->n_host_segs] = t0;
    out->host_segs[2 * out->n_host_segs + 1] = t1;
    out->n_host_segs++;
}

static bool step_id(const char *name, int64_t *id)
{
    if (strncmp(name, "ProfilerStep#", 13) != 0)
        return false;
    char *end;
    long long v = strtoll(name + 13, &end, 10);
    if (end == name + 13)
        return false;
    *id = v;
    return true;
}

const an_step_layers *an_step_by_id(const an_rank_layers *rl, int64_t id)
{
    size_t lo = 0, hi = rl->n_steps;
    /* ids increase with time in practice; fall back to a scan */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rl->steps[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < rl->n_steps && rl->steps[lo].id == id)
        return &rl->steps[lo];
    for (size_t i = 0; i < rl->n_steps; i++)
        if (rl->steps[i].id == id)
            return &rl->steps[i];
    return NULL;
}

/* ---- node membership ---- */

int32_t an_node_of(const an_layers_result *lr, int32_t rank)
{
    size_t lo = 0, hi = lr->n_rank_nums;
    while (lo < hi) { /* binary search: rank_nums ascending */
        size_t mid = lo + (hi - lo) / 2;
        if (lr->rank_nums[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (rank >= 0 && lo < lr->n_rank_nums && lr->rank_nums[lo] == rank && lr->node_of_rank[lo] >= 0)
        return lr->node_of_rank[lo];
    return lr->gpus_per_node > 0 && rank >= 0 ? rank / lr->gpus_per_node : 0;
}

/* Parse "[0, 1, 2]" (or "0,1,2"). Returns the count (may exceed max). */
static int parse_rank_list(const char *s, int32_t *out, int max)
{
    int n = 0;
    while (*s) {
        if (*s >= '0' && *s <= '9') {
            long v = strtol(s, (char **)&s, 10);
            if (n < max)
                out[n] = (int32_t)v;
            n++;
        } else {
            s++;
        }
    }
    return n;
}

int an_event_group(const an_ctx *ctx, size_t ev, int32_t *out, int max)
{
    const tl_timeline *tl = ctx->tl;
    const char *rs = tl_arg_str(tl, ev, "Process Group Ranks");
    if (rs) {
        int n = parse_rank_list(rs, out, max);
        if (n > 0)
            return n;
    }
    const tl_rank *rk = &tl->ranks[tl->tracks[tl->track[ev]].rank_index];
    const char *pgname = tl_arg_str(tl, ev, "Process Group Name");
    if (pgname)
        for (int i = 0; i < rk->meta.n_pgs; i++) {
            const tl_pg *pg = &rk->meta.pgs[i];
            if (pg->ranks && pg->name && strcmp(tl_str(tl, pg->name), pgname) == 0) {
                for (int j = 0; j < pg->size && j < max; j++)
                    out[j] = pg->ranks[j];
                return pg->size;
            }
        }
    /* unknown group: the job's world (traced ranks, or 0..world_size-1) */
    int32_t ws = rk->meta.world_size;
    if (ws > 0) {
        for (int j = 0; j < ws && j < max; j++)
            out[j] = j;
        return ws;
    }
    for (size_t j = 0; j < ctx->n_job && (int)j < max; j++)
        out[j] = ctx->job[j].rank;
    return (int)ctx->n_job;
}

bool an_event_inter(const an_ctx *ctx, const an_layers_result *lr, size_t ev)
{
    int32_t g[1024];
    int n = an_event_group(ctx, ev, g, (int)CP_ARRAY_LEN(g));
    if (n > (int)CP_ARRAY_LEN(g))
        n = (int)CP_ARRAY_LEN(g);
    for (int i = 1; i < n; i++)
        if (an_node_of(lr, g[i]) != an_node_of(lr, g[0]))
            return true;
    return false;
}

static bool arg_rank(const tl_timeline *tl, size_t ev, uint32_t key, int64_t *out)
{
    tl_arg a;
    if (key == UINT32_MAX || !tl_arg_by_id(tl, ev, key, &a))
        return false;
    if (a.type == TL_ARG_INT)
        *out = a.v.i;
    else if (a.type == TL_ARG_NUM && a.v.d >= 0 && a.v.d <= INT32_MAX)
        *out = (int64_t)a.v.d;
    else if (a.type == TL_ARG_STR)
        *out = strtoll(tl_str(tl, a.v.s), NULL, 10);
    else
        return false;
    return true;
}

/* Older traces name no peer on the kernel; the host op that launched it
 * does: ProcessGroupNCCL's profiling title "nccl:send A->B" / "nccl:recv
 * A<-B" (ranks in the group), or record_param_comms' own args. Looks at
 * the CPU events of the launch's thread that enclose the launch call (the
 * few just before it: the title and record_param_comms wrap the launch
 * directly). Returns the peer's rank in the group, -1 unknown. */
#define AN_P2P_LAUNCH_SCAN 16
static int64_t peer_from_launch(const an_ctx *ctx, const an_layers_result *lr, size_t ev, int *dir)
{
    const tl_timeline *tl = ctx->tl;
    int32_t l = tl->link[ev];
    if (l < 0 || tl->tracks[tl->track[l]].key.kind != TL_TRACK_CPU)
        return -1;
    const tl_track *tr = &tl->tracks[tl->track[l]];
    for (size_t k = 1; k <= AN_P2P_LAUNCH_SCAN && (size_t)l >= tr->ev_begin + k; k++) {
        size_t i = (size_t)l - k;
        if (tl_end_ns(tl, i) < tl_end_ns(tl, (size_t)l))
            continue; /* ended before the launch did: not around it */
        const char *nm = tl_str(tl, tl->name[i]);
        int self, peer;
        char arrow[3];
        if (nm && sscanf(nm, "nccl:send %d%2[-><]%d", &self, arrow, &peer) == 3 && !strcmp(arrow, "->")) {
            *dir = AN_P2P_SEND;
            return peer;
        }
        if (nm && sscanf(nm, "nccl:recv %d%2[-><]%d", &self, arrow, &peer) == 3 && !strcmp(arrow, "<-")) {
            *dir = AN_P2P_RECV;
            return peer;
        }
        int64_t local;
        if (nm && !strcmp(nm, "record_param_comms") && arg_rank(tl, i, lr->rank_key, &local))
            return local; /* direction from the kernel's collective name */
    }
    return -1;
}

int32_t an_event_p2p_peer(const an_ctx *ctx, const an_layers_result *lr, size_t ev, int *dir)
{
    const tl_timeline *tl = ctx->tl;
    *dir = 0;
    tl_arg a;
    if (!lr->p2p_class || !tl_arg_by_id(tl, ev, lr->coll_name_key, &a) || a.type != TL_ARG_STR ||
        lr->p2p_class[a.v.s] > AN_P2P_RECV)
        return -1; /* a collective, or "sendrecv" / a coalesced batch: no single peer */
    *dir = lr->p2p_class[a.v.s];
    int64_t peer = -1, local;
    if (!arg_rank(tl, ev, *dir == AN_P2P_SEND ? lr->dst_rank_key : lr->src_rank_key, &peer)) {
        int d = *dir;
        if (!arg_rank(tl, ev, lr->rank_key, &local))
            local = peer_from_launch(ctx, lr, ev, &d);
        int32_t mem[AN_P2P_MAX_GROUP];
        int n = local >= 0 && d == *dir ? an_event_group(ctx, ev, mem, AN_P2P_MAX_GROUP) : 0;
        if (local >= 0 && local < n && local < AN_P2P_MAX_GROUP)
            peer = mem[local];
    }
    int32_t self = tl->ranks[tl->tracks[tl->track[ev]].rank_index].meta.rank;
    return peer >= 0 && peer <= INT32_MAX && peer != self ? (int32_t)peer : -1;
}

void an_event_scope(const an_ctx *ctx, const an_layers_result *lr, size_t ev, int *group_size, bool *inter)
{
    tl_arg a;
    struct an_pgr_info *c =
        tl_arg_by_id(ctx->tl, ev, lr->pgr_key, &a) && a.type == TL_ARG_STR && lr->pgr_info ? &lr->pgr_info[a.v.s] : NULL;
    int dir;
    int32_t peer = an_event_p2p_peer(ctx, lr, ev, &dir);
    if (peer >= 0) { /* a pair: its two nodes, whatever else the group spans */
        int32_t g[1];
        *group_size = c && c->known ? c->size : an_event_group(ctx, ev, g, 1);
        *inter = an_node_of(lr, ctx->tl->ranks[ctx->tl->tracks[ctx->tl->track[ev]].rank_index].meta.rank) !=
                 an_node_of(lr, peer);
        return;
    }
    if (c && c->known) {
        *group_size = c->size;
        *inter = c->inter;
        return;
    }
    int32_t g[1024];
    int64_t nn, gs;
    if (tl_arg_int(ctx->tl, ev, "nNodes", &nn) && nn > 0) {
        /* the collective says how many nodes its communicator spans
         * (chainprof run traces, from NCCL's profiler plugin) */
        *group_size = tl_arg_int(ctx->tl, ev, "Group size", &gs) && gs > 0 ? (int)gs
                                                                           : an_event_group(ctx, ev, g, (int)CP_ARRAY_LEN(g));
        *inter = nn > 1;
        return;
    }
    *group_size = an_event_group(ctx, ev, g, (int)CP_ARRAY_LEN(g));
    *inter = an_event_inter(ctx, lr, ev);
    if (c)
        *c = (struct an_pgr_info){ *group_size, 1, *inter };
}

/* Nodes of the job's ranks (ctx->job: every traced rank, sorted by rank,
 * also those other processes hold under mpirun). */
static void build_node_map(const an_ctx *ctx, an_layers_result *lr)
{
    const an_job_rank *job = ctx->job;
    size_t n = ctx->n_job;
    bool all_hosts = n > 0;
    int max_dev = 0;
    lr->rank_nums = cp_xmalloc((n + 1) * sizeof *lr->rank_nums);
    lr->node_of_rank = cp_xmalloc((n + 1) * sizeof *lr->node_of_rank);
    lr->n_rank_nums = n;
    for (size_t i = 0; i < n; i++) {
        lr->rank_nums[i] = job[i].rank;
        lr->node_of_rank[i] = -1;
        if (!job[i].hostname)
            all_hosts = false;
        max_dev = CP_MAX(max_dev, job[i].n_devices);
    }
    if (ctx->opts && ctx->opts->gpus_per_node > 0) {
        lr->gpus_per_node = ctx->opts->gpus_per_node;
        lr->node_source = "--gpus-per-node";
    } else if (all_hosts) {
        /* nodes numbered by first appearance in rank order; untraced ranks
         * fall back to rank / (most ranks seen on one host) */
        const char **hosts = cp_xcalloc(n, sizeof *hosts);
        int *per = cp_xcalloc(n, sizeof *per);
        size_t nh = 0;
        for (size_t i = 0; i < n; i++) {
            size_t k = 0;
            while (k < nh && strcmp(hosts[k], job[i].hostname) != 0)
                k++;
            if (k == nh)
                hosts[nh++] = job[i].hostname;
            per[k]++;
            lr->node_of_rank[i] = (int32_t)k;
        }
        int mx = 1;
        for (size_t k = 0; k < nh; k++)
            mx = CP_MAX(mx, per[k]);
        lr->gpus_per_node = mx;
        lr->node_source = "hostname";
        free(hosts);
        free(per);
    } else if (max_dev > 0) {
        lr->gpus_per_node = max_dev;
        lr->node_source = "device count";
    } else {
        lr->gpus_per_node = 0;
        lr->node_source = "single node";
    }
    int32_t n_nodes = 0, last = -1;
    for (size_t i = 0; i < n; i++) { /* ranks are sorted, nodes non-decreasing in practice */
        int32_t nd = an_node_of(lr, job[i].rank);
        if (nd != last)
            n_nodes++;
        last = nd;
    }
    lr->n_nodes = n_nodes;
}

/* ---- the sweep ---- */

static bool pageable_copy(const tl_timeline *tl, size_t ev)
{
    if (tl->flags[ev] & (TL_F_PAGEABLE | TL_F_SYNC_CALL))
        return true;
    int64_t l = tl->link[ev];
    if (l >= 0) {
        if (tl->flags[l] & TL_F_SYNC_CALL)
            return true;
        const char *n = tl_str(tl, tl->name[l]);
        if (!strcmp(n, "cudaMemcpy") || !strcmp(n, "hipMemcpy"))
            return true;
    }
    return false;
}

typedef struct step_win {
    int64_t id, ts, end;
} step_win;

static int step_cmp(const void *a, const void *b)
{
    const step_win *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Gather this rank's intervals and steps that overlap the env's window. */
static void collect(sweep_env *env, size_t ri, pts *p, step_win **steps, size_t *n_steps)
{
    const tl_timeline *tl = env->ctx->tl;
    const tl_rank *rk = &tl->ranks[ri];
    size_t cap = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    pts_init(p, tl, rk);
    if (env->win_t0 == INT64_MIN) { /* whole rank: two points an event, the common case, in one allocation */
        p->cap = 2 * rk->n_events + 64;
        p->v = cp_xmalloc(p->cap * sizeof *p->v);
    }
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
            int64_t a = tl->ts_ns[i], b = tl_end_ns(tl, i);
            if (b <= a || b <= env->win_t0 || a >= env->win_t1)
                continue;
            int lab = -1;
            switch ((tl_kclass)tl->kclass[i]) {
            case TL_K_COMPUTE: lab = LB_COMPUTE; break;
            case TL_K_COMM: {
                int gsize;
                bool inter;
                an_event_scope(env->ctx, env->lr, i, &gsize, &inter);
                lab = inter ? LB_INTER : LB_INTRA;
                break;
            }
            case TL_K_MEMSET: lab = LB_COPY_COMPUTE; break;
            case TL_K_MEMCPY:
                if (tl->copy_dir[i] == TL_COPY_D2D) {
                    lab = LB_COPY_COMPUTE;
                } else {
                    lab = LB_COPY_INTRA;
                    if (pageable_copy(tl, i))
                        pts_add(p, a, b, LB_COPY_PAGEABLE);
                }
                break;
            default: break;
            }
            if (lab < 0 && tr->key.kind == TL_TRACK_CPU) {
                const char *name = tl_str(tl, tl->name[i]);
                int64_t sid;
                tl_cat c = (tl_cat)tl->cat[i];
                if ((c == TL_CAT_USER_ANNOTATION || c == TL_CAT_CPU_OP) && step_id(name, &sid)) {
                    cp_xgrow((void **)steps, &cap, *n_steps + 1, sizeof **steps);
                    (*steps)[(*n_steps)++] = (step_win){ sid, a, b };
                    continue;
                }
                /* OS runtime calls (few) are file I/O or nothing; the I/O
                 * calls of chainprof run traces carry a storage class */
                bool io = c == TL_CAT_OSRT &&
                          (an_is_file_io_call(name) || tl_arg_by_id(tl, i, env->io_class_key, NULL));
                int hc = c == TL_CAT_OSRT ? (io ? HC_FILE_IO : HC_NONE) : host_class(env, tl->name[i], name);
                if (c == TL_CAT_OSRT)
                    lab = io ? LB_FILE_IO : -1;
                else if (hc == HC_STORAGE)
                    lab = LB_STORAGE;
                else if (hc == HC_DATALOADER)
                    lab = LB_DATALOADER;
                else if (c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER)
                    lab = LB_LAUNCH;
                else if (c == TL_CAT_CPU_OP || c == TL_CAT_USER_ANNOTATION)
                    lab = LB_HOST;
                /* python_function frames are not host time by themselves:
                 * the top-level frames span the whole run */
            }
            if (lab < 0)
                continue;
            pts_add(p, a, b, lab);
            lo = CP_MIN(lo, a);
            hi = CP_MAX(hi, b);
        }
    }
    if (*n_steps > 1) {
        qsort(*steps, *n_steps, sizeof **steps, step_cmp);
        /* drop duplicate ids (the same step annotated on two threads) and
         * clip overlaps so every instant belongs to at most one step */
        size_t w = 1;
        for (size_t i = 1; i < *n_steps; i++) {
            step_win s = (*steps)[i];
            bool dup = false;
            for (size_t j = 0; j < w; j++)
                dup |= (*steps)[j].id == s.id;
            if (dup)
                continue;
            if (s.ts < (*steps)[w - 1].end)
                s.ts = (*steps)[w - 1].end;
            if (s.end <= s.ts)
                s.end = s.ts;
            (*steps)[w++] = s;
        }
        *n_steps = w;
    }
    if (*n_steps == 0 && lo < hi) {
        *steps = cp_xmalloc(sizeof **steps);
        (*steps)[0] = (step_win){ -1, lo, hi };
        *n_steps = 1;
    }
    for (size_t s = 0; s < *n_steps; s++)
        pts_add(p, (*steps)[s].ts, (*steps)[s].end, LB_STEP);
}

static cp_layer attribute(an_step_layers *st, const int *c, int64_t d)
{
    bool active[CP_LAYER__COUNT] = { 0 };
    active[CP_LAYER_COMPUTE] = c[LB_COMPUTE] > 0 || c[LB_COPY_COMPUTE] > 0;
    active[CP_LAYER_INTER] = c[LB_INTER] > 0;
    active[CP_LAYER_INTRA] = c[LB_INTRA] > 0 || c[LB_COPY_INTRA] > 0;
    /* a file I/O call inside a data-loader region is the data loader's */
    bool storage = c[LB_STORAGE] > 0 || (c[LB_FILE_IO] > 0 && c[LB_DATALOADER] == 0);
    active[CP_LAYER_STORAGE] = storage;
    active[CP_LAYER_HOST] = c[LB_DATALOADER] > 0 || c[LB_LAUNCH] > 0 || c[LB_HOST] > 0;
    cp_layer l;
    if (c[LB_COMPUTE] > 0)
        l = CP_LAYER_COMPUTE;
    else if (c[LB_INTER] > 0)
        l = CP_LAYER_INTER;
    else if (c[LB_INTRA] > 0)
        l = CP_LAYER_INTRA;
    else if (c[LB_COPY_INTRA] > 0) {
        l = CP_LAYER_INTRA;
        st->copy_intra_ns += d;
        if (storage) /* the checkpoint's device-to-host snapshot */
            st->copy_in_storage_ns += d;
        else if (c[LB_COPY_PAGEABLE] > 0)
            st->copy_pageable_ns += d;
    } else if (c[LB_COPY_COMPUTE] > 0)
        l = CP_LAYER_COMPUTE;
    else if (storage)
        l = CP_LAYER_STORAGE;
    else if (active[CP_LAYER_HOST]) {
        l = CP_LAYER_HOST;
        if (c[LB_DATALOADER] > 0)
            st->host_dataloader_ns += d;
        else if (c[LB_LAUNCH] > 0)
            st->host_launch_ns += d;
    } else
        l = CP_LAYER_IDLE;
    st->exposed_ns[l] += d;
    for (int k = 0; k < CP_LAYER__COUNT; k++)
        if (active[k] && k != (int)l)
            st->hidden_ns[k] += d;
    bool comm = c[LB_INTER] > 0 || c[LB_INTRA] > 0;
    if (comm) {
        st->comm_active_ns += d;
        if (c[LB_COMPUTE] > 0)
            st->comm_overlap_ns += d;
    }
    return l;
}

/* Segments of one step for the timeline chart: [start offset, length,
 * layer], consecutive equal layers merged, and segments shorter than
 * min_ns folded into their predecessor (a chart has ~1000 pixels). */
typedef struct seg_sink {
    int64_t step_id;
    int64_t min_ns;
    cp_buf json;
    int64_t cur_t, cur_d;
    int cur_l, n;
    an_layer_track *track; /* every step, absolute times, into this array instead of json */
} seg_sink;

static void seg_flush(seg_sink *k)
{
    if (k->cur_l < 0)
        return;
    if (k->track) {
        an_layer_track *t = k->track;
        cp_xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof *t->v);
        t->v[t->n++] = (an_layer_seg){ k->cur_t, k->cur_d, (cp_layer)k->cur_l };
    } else {
        cp_buf_printf(&k->json, "%s[%lld,%lld,%d]", k->n++ ? "," : "", (long long)k->cur_t, (long long)k->cur_d,
                      k->cur_l);
    }
    k->cur_l = -1;
}

static void seg_add(seg_sink *k, int64_t t, int64_t d, cp_layer l)
{
    bool adjacent = k->cur_l >= 0 && k->cur_t + k->cur_d == t;
    if ((k->cur_l == (int)l && (adjacent || !k->track)) || (adjacent && d < k->min_ns)) {
        k->cur_d += d;
        return;
    }
    seg_flush(k);
    k->cur_t = t;
    k->cur_d = d;
    k->cur_l = (int)l;
}

static void sweep_rank(sweep_env *env, size_t ri, an_rank_layers *out, seg_sink *sink)
{
    const an_layers_result *lr = env->lr;
    pts p = { 0 };
    step_win *sw = NULL;
    size_t ns = 0;
    collect(env, ri, &p, &sw, &ns);
    out->rank = env->ctx->tl->ranks[ri].meta.rank;
    out->node = an_node_of(lr, out->rank);
    out->implicit_step = ns == 1 && sw[0].id == -1;
    out->n_steps = ns;
    out->steps = cp_xcalloc(ns ? ns : 1, sizeof *out->steps);
    for (size_t s = 0; s < ns; s++) {
        out->steps[s].id = sw[s].id;
        out->steps[s].ts_ns = sw[s].ts;
        out->steps[s].dur_ns = sw[s].end - sw[s].ts;
    }
    cp_sort_u64(p.v, p.n, NULL);
    int cnt[LB__COUNT] = { 0 };
    size_t si = 0, seg_cap = 0;
    for (size_t i = 0; i < p.n;) {
        uint64_t instant = p.v[i] >> PT_LOW_BITS;
        int64_t t = pts_time(&p, p.v[i]);
        while (i < p.n && p.v[i] >> PT_LOW_BITS == instant) {
            cnt[(p.v[i] >> 1) & 15] += p.v[i] & 1 ? 1 : -1;
            i++;
        }
        if (i == p.n)
            break;
        int64_t t1 = pts_time(&p, p.v[i]);
        while (si < ns && sw[si].end <= t)
            si++;
        if (si < ns && sw[si].ts <= t && t1 <= sw[si].end) {
            cp_layer l = attribute(&out->steps[si], cnt, t1 - t);
            if (l == CP_LAYER_HOST)
                host_seg_add(out, &seg_cap, t, t1);
            if (sink && sink->track)
                seg_add(sink, t, t1 - t, l);
            else if (sink && sw[si].id == sink->step_id)
                seg_add(sink, t - sw[si].ts, t1 - t, l);
        }
    }
    an_step_layers *tot = &out->total;
    memset(tot, 0, sizeof *tot);
    tot->id = -1;
    for (size_t s = 0; s < ns; s++) {
        const an_step_layers *st = &out->steps[s];
        tot->dur_ns += st->dur_ns;
        for (int k = 0; k < CP_LAYER__COUNT; k++) {
            tot->exposed_ns[k] += st->exposed_ns[k];
            tot->hidden_ns[k] += st->hidden_ns[k];
        }
        tot->host_dataloader_ns += st->host_dataloader_ns;
        tot->host_launch_ns += st->host_launch_ns;
        tot->copy_intra_ns += st->copy_intra_ns;
        tot->copy_pageable_ns += st->copy_pageable_ns;
        tot->copy_in_storage_ns += st->copy_in_storage_ns;
        tot->comm_active_ns += st->comm_active_ns;
        tot->comm_overlap_ns += st->comm_overlap_ns;
    }
    if (ns)
        tot->ts_ns = out->steps[0].ts_ns;
    free(p.v);
    free(sw);
}

typedef struct sweep_job {
    sweep_env *env;
    an_layers_result *lr;
} sweep_job;

static void sweep_one(void *ctx, size_t r)
{
    sweep_job *j = ctx;
    sweep_rank(j->env, r, &j->lr->ranks[r], NULL);
}

/* ---- report ---- */

static void put_layers(rep_report *r, rep_node *parent, const an_step_layers *st)
{
    rep_node *o = rep_obj(r, parent, "layers", "layers");
    o->flags |= REP_F_NO_TEXT;
    for (int k = 0; k < CP_LAYER__COUNT; k++) {
        rep_node *l = rep_obj(r, o, cp_layer_key((cp_layer)k), cp_layer_key((cp_layer)k));
        rep_int(r, l, "exposed_ns", "exposed", st->exposed_ns[k], "ns");
        rep_int(r, l, "hidden_ns", "hidden", st->hidden_ns[k], "ns");
    }
}

static rep_node *find_step(rep_node *steps, int64_t id)
{
    for (rep_node *c = steps->first; c; c = c->next) {
        rep_node *idn = rep_child(c, "id");
        if (idn && idn->type == REP_INT && idn->v.i == id && !rep_child(c, "layers"))
            return c;
    }
    return NULL;
}

/* The step with the longest duration on any rank, as segments per rank
 * (a second sweep restricted to that step's window), for the HTML timeline. */
static void slowest_step(sweep_env *env, const an_layers_result *lr)
{
    rep_report *r = env->ctx->rep;
    int64_t best_id = -2, best_dur = -1, best_rank = INT64_MAX;
    for (size_t i = 0; i < lr->n_ranks; i++)
        for (size_t s = 0; s < lr->ranks[i].n_steps; s++)
            if (lr->ranks[i].steps[s].dur_ns > best_dur) {
                best_dur = lr->ranks[i].steps[s].dur_ns;
                best_id = lr->ranks[i].steps[s].id;
                best_rank = lr->ranks[i].rank;
            }
    /* the job's longest step: the first in rank order among the longest,
     * as the loop above finds it over all ranks, when other processes hold
     * some of them (mpirun): the greatest (duration, -rank) wins */
    const an_opts *opt = env->ctx->opts;
    if (opt && opt->job_max) {
        int64_t t[3] = { best_dur, best_rank == INT64_MAX ? INT64_MIN : -best_rank, best_id };
        if (opt->job_max(opt->job_hook, t, 3) < 0)
            return;
        best_dur = t[0];
        best_id = t[2];
    }
    if (best_dur < 0)
        return;
    rep_node *o = rep_obj(r, r->root, "slowest_step", "slowest step");
    o->flags |= REP_F_NO_TEXT | REP_F_NO_CSV;
    if (best_id >= 0)
        rep_int(r, o, "id", "step", best_id, NULL);
    else
        rep_null(r, o, "id", "step", NULL);
    rep_int(r, o, "dur_ns", "duration (longest rank)", best_dur, "ns");
    rep_node *ranks = rep_arr(r, o, "ranks", "ranks");
    for (size_t i = 0; i < lr->n_ranks; i++) {
        seg_sink k = { .step_id = best_id, .min_ns = best_dur / 2000, .json = CP_BUF_INIT, .cur_l = -1 };
        cp_buf_putc(&k.json, '[');
        const an_rank_layers *rl = &lr->ranks[i];
        for (size_t s = 0; s < rl->n_steps; s++)
            if (rl->steps[s].id == best_id) {
                an_rank_layers scratch = { 0 };
                env->win_t0 = rl->steps[s].ts_ns;
                env->win_t1 = rl->steps[s].ts_ns + rl->steps[s].dur_ns;
                sweep_rank(env, i, &scratch, &k);
                free(scratch.steps);
                free(scratch.host_segs);
                break;
            }
        seg_flush(&k);
        cp_buf_putc(&k.json, ']');
        rep_node *ro = rep_obj(r, ranks, NULL, NULL);
        rep_int(r, ro, "rank", "rank", rl->rank, NULL);
        rep_json(r, ro, "segments", cp_buf_str(&k.json));
        cp_buf_free(&k.json);
    }
}

an_layer_track *an_layers_timeline(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    an_layers_result *lr = ctx->results[AN_layers];
    an_layer_track *out = cp_xcalloc(tl->n_ranks + 1, sizeof *out);
    if (!lr)
        return out;
    size_t n_str = cp_intern_count(&tl->strings);
    sweep_env env = { .ctx = ctx, .lr = lr, .host_class = cp_xcalloc(n_str + 1, 1),
                      .io_class_key = cp_intern_find(&tl->strings, "class", 5),
                      .win_t0 = INT64_MIN, .win_t1 = INT64_MAX };
    for (size_t id = 0; id < n_str; id++)
        host_class(&env, (uint32_t)id, cp_intern_str(&tl->strings, (uint32_t)id));
    for (size_t i = 0; i < tl->n_ranks; i++) {
        seg_sink k = { .step_id = -2, .min_ns = 0, .json = CP_BUF_INIT, .cur_l = -1, .track = &out[i] };
        an_rank_layers scratch = { 0 };
        sweep_rank(&env, i, &scratch, &k);
        seg_flush(&k);
        free(scratch.steps);
        free(scratch.host_segs);
    }
    free(env.host_class);
    return out;
}

static void free_result(void *self)
{
    an_layers_result *lr = self;
    for (size_t i = 0; i < lr->n_ranks; i++) {
        free(lr->ranks[i].steps);
        free(lr->ranks[i].host_segs);
    }
    free(lr->ranks);
    free(lr->rank_nums);
    free(lr->node_of_rank);
    free(lr->pgr_info);
    free(lr->p2p_class);
    free(lr);
}

static void free_job_copy(void *self)
{
    an_layers_result *lr = self;
    for (size_t i = 0; i < lr->n_ranks; i++)
        free(lr->ranks[i].steps);
    free(lr->ranks);
    free(lr);
}

/* Wire form of one rank: its scalars, then n_steps an_step_layers. */
typedef struct job_rank_head {
    int64_t rank, node, implicit_step, n_steps;
    an_step_layers total;
} job_rank_head;

an_layers_result *an_layers_job(const an_ctx *ctx, const an_layers_result *lr, int *rc)
{
    *rc = 0;
    if (!ctx->opts || !ctx->opts->job_gather)
        return (an_layers_result *)lr;
    cp_buf msg = CP_BUF_INIT;
    for (size_t r = 0; r < lr->n_ranks; r++) {
        const an_rank_layers *rl = &lr->ranks[r];
        job_rank_head h = { rl->rank, rl->node, rl->implicit_step, (int64_t)rl->n_steps, rl->total };
        cp_buf_append(&msg, &h, sizeof h);
        cp_buf_append(&msg, rl->steps, rl->n_steps * sizeof *rl->steps);
    }
    void *all = NULL;
    size_t bytes = 0, pos = 0, cap = 0;
    *rc = an_job_gather(ctx, msg.data, msg.len, &all, &bytes);
    cp_buf_free(&msg);
    an_layers_result *job = cp_xcalloc(1, sizeof *job);
    *job = *lr; /* the node map and scope caches are the job's already */
    job->free = free_job_copy;
    job->ranks = NULL;
    job->n_ranks = 0;
    const unsigned char *p = all;
    while (*rc == 0 && pos < bytes) {
        job_rank_head h;
        if (bytes - pos < sizeof h || (memcpy(&h, p + pos, sizeof h), h.n_steps < 0) ||
            (uint64_t)h.n_steps > (bytes - pos - sizeof h) / sizeof(an_step_layers)) {
            *rc = CP_ERR_FORMAT;
            break;
        }
        pos += sizeof h;
        cp_xgrow((void **)&job->ranks, &cap, job->n_ranks + 1, sizeof *job->ranks);
        an_rank_layers *rl = &job->ranks[job->n_ranks++];
        *rl = (an_rank_layers){ (int32_t)h.rank, (int32_t)h.node, h.implicit_step != 0, (size_t)h.n_steps,
                                cp_xmalloc(((size_t)h.n_steps + 1) * sizeof *rl->steps), h.total, NULL, 0 };
        memcpy(rl->steps, p + pos, (size_t)h.n_steps * sizeof *rl->steps);
        pos += (size_t)h.n_steps * sizeof *rl->steps;
    }
    free(all);
    for (size_t i = 1; i < job->n_ranks; i++) /* rank order, as one timeline has them */
        for (size_t j = i; j > 0 && job->ranks[j].rank < job->ranks[j - 1].rank; j--) {
            an_rank_layers t = job->ranks[j];
            job->ranks[j] = job->ranks[j - 1];
            job->ranks[j - 1] = t;
        }
    if (*rc < 0) {
        free_job_copy(job);
        return NULL;
    }
    return job;
}

void an_layers_job_free(const an_layers_result *lr, an_layers_result *job)
{
    if (job && job != lr)
        job->free(job);
}

static double pct(int64_t a, int64_t b) { return b > 0 ? 100.0 * (double)a / (double)b : NAN; }

int an_layers_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    rep_report *r = ctx->rep;
    an_layers_result *lr = cp_xcalloc(1, sizeof *lr);
    lr->free = free_result;
    ctx->results[AN_layers] = lr;
    build_node_map(ctx, lr);
    lr->n_ranks = tl->n_ranks;
    lr->ranks = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *lr->ranks);
    size_t n_str = cp_intern_count(&tl->strings);
    const char *pgr = "Process Group Ranks";
    lr->pgr_key = cp_intern_find(&tl->strings, pgr, strlen(pgr));
    lr->dst_rank_key = cp_intern_find(&tl->strings, "Dst Rank", 8);
    lr->src_rank_key = cp_intern_find(&tl->strings, "Src Rank", 8);
    lr->rank_key = cp_intern_find(&tl->strings, "Rank", 4);
    lr->coll_name_key = cp_intern_find(&tl->strings, "Collective name", 15);
    lr->p2p_class = cp_xmalloc(n_str + 1);
    for (size_t id = 0; id < n_str; id++) { /* filled once: the sweeps only read it */
        const char *nm = cp_intern_str(&tl->strings, (uint32_t)id);
        bool send = nm && cp_str_icontains(nm, "send"), recv = nm && cp_str_icontains(nm, "recv");
        lr->p2p_class[id] = send == recv ? 3 : send ? AN_P2P_SEND : AN_P2P_RECV;
    }
    lr->pgr_info = cp_xcalloc(n_str + 1, sizeof *lr->pgr_info);
    sweep_env env = { .ctx = ctx, .lr = lr, .host_class = cp_xcalloc(n_str + 1, 1),
                      .io_class_key = cp_intern_find(&tl->strings, "class", 5),
                      .win_t0 = INT64_MIN, .win_t1 = INT64_MAX };
    /* fill both caches first, so the sweeps only read them and run one rank
     * per thread */
    for (size_t id = 0; id < n_str; id++)
        host_class(&env, (uint32_t)id, cp_intern_str(&tl->strings, (uint32_t)id));
    for (size_t e = 0; e < tl->n_events; e++)
        if (tl->kclass[e] == TL_K_COMM) {
            int gsize;
            bool inter;
            an_event_scope(ctx, lr, e, &gsize, &inter);
        }
    sweep_job job = { &env, lr };
    cp_par_for(tl->n_ranks, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, sweep_one, &job);

    static const rep_col cols[] = {
        { "rank", "rank", NULL, -1 },       { "node", "node", NULL, -1 },
        { "steps", "steps", NULL, -1 },     { "time_ns", "time", "ns", -1 },
        { "host_pct", "host", "%", 1 },     { "compute_pct", "compute", "%", 1 },
        { "intra_pct", "intra", "%", 1 },   { "inter_pct", "inter", "%", 1 },
        { "storage_pct", "storage", "%", 1 }, { "idle_pct", "idle", "%", 1 },
    };
    rep_node *tab = rep_table(r, r->root, "layer_breakdown", "five-layer breakdown (exposed time)", cols,
                              CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < tl->n_ranks; i++) {
        const an_rank_layers *rl = &lr->ranks[i];
        rep_node *rn = ctx->rank_nodes[i];
        rep_int(r, rn, "node", "node", rl->node, NULL);
        if (rl->n_steps == 0) {
            rep_null(r, rn, "layers", "layers", NULL);
        } else {
            put_layers(r, rn, &rl->total);
            rep_node *steps = rep_child(rn, "steps");
            if (!steps) {
                steps = rep_arr(r, rn, "steps", "steps");
                steps->flags |= REP_F_NO_TEXT;
            }
            for (size_t s = 0; s < rl->n_steps; s++) {
                const an_step_layers *st = &rl->steps[s];
                rep_node *so = find_step(steps, st->id);
                if (!so) {
                    so = rep_obj(r, steps, NULL, NULL);
                    if (st->id >= 0)
                        rep_int(r, so, "id", "step", st->id, NULL);
                    else
                        rep_null(r, so, "id", "step", NULL);
                    rep_int(r, so, "dur_ns", "duration", st->dur_ns, "ns");
                }
                if (!rep_child(so, "start_ns")) /* the steps table's row has one: no duplicate key */
                    rep_int(r, so, "start_ns", "start", st->ts_ns - tl->t0_ns, "ns");
                put_layers(r, so, st);
            }
        }
        rep_node *row = rep_row(r, tab);
        rep_cell_int(r, row, rl->rank);
        rep_cell_int(r, row, rl->node);
        rep_cell_int(r, row, (int64_t)rl->n_steps);
        rep_cell_int(r, row, rl->total.dur_ns);
        for (int k = 0; k < CP_LAYER__COUNT; k++)
            rep_cell_num(r, row, pct(rl->total.exposed_ns[k], rl->total.dur_ns));
    }
    slowest_step(&env, lr);
    free(env.host_class);
    rep_node *nm = rep_obj(r, r->root, "nodes", "node membership");
    rep_int(r, nm, "count", "nodes", lr->n_nodes, NULL);
    rep_str(r, nm, "source", "from", lr->node_source);
    if (lr->gpus_per_node > 0)
        rep_int(r, nm, "gpus_per_node", "GPUs per node", lr->gpus_per_node, NULL);
    else
        rep_null(r, nm, "gpus_per_node", "GPUs per node", NULL);
    return 0;
}
