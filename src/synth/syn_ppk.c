/* syn_ppk.c - the pipeline job (syn_pp.c) as PyTorch profiler (Kineto)
 * traces: one file per global rank, the schedule's ops as the kernels of a
 * Megatron-style 1F1B / interleaved step with NCCL point-to-point transfers
 * between stages and the DP reduce-scatter.
 *
 * Design
 * - Ranks: global rank g = stage * dp + dp rank (Megatron's order with TP
 *   1), so a DP group is consecutive ranks (inside a node when dp divides
 *   --gpus-per-node) and a pipeline group strides over nodes. Process
 *   groups are named as PyTorch numbers new_group() calls: "0" default_pg,
 *   then the DP groups "1".."P" (mesh_dp), then the pipeline groups
 *   "P+1".."P+D" (mesh_pp).
 * - GPU times are the schedule model's, unchanged inside a step; step s is
 *   shifted by (s + 1) x SYN_PPK_STEP_GAP_NS, the host's turnaround between
 *   steps (the loss.item() sync, the next ProfilerStep, the first
 *   launches), so every dependency of the model still holds and no kernel
 *   starts before its launch. Compute ops are one kernel each on the
 *   compute stream, inside a user_annotation named as the artifact's op;
 *   the reduce-scatter inside "grads-reduce-scatter", the p2p inside
 *   Megatron's "forward-send", "forward-recv", "backward-send" and
 *   "backward-recv" (what the Kineto what-if types its ops by).
 *   The op timeline's post-backward all-reduces (layernorm, embedding,
 *   gradient norm) are not written: their time is a gap on the streams.
 * - Point-to-point, as recent PyTorch writes it: record_param_comms with
 *   "Collective name" send / recv, the pipeline group's name, description
 *   and ranks, "Rank" (the peer's rank in the group) and "Dst Rank" (send) /
 *   "Src Rank" (recv) with the peer's global rank; the ncclDevKernel_SendRecv
 *   kernel carries the same args, as Kineto copies them from its
 *   record_param_comms. Each direction has its own NCCL stream, so stream
 *   order never serialises a send behind a recv. The host posts a stage's
 *   ops in schedule order at the step's start; a recv kernel runs from when
 *   its stream lets it start until its data has arrived (the producer's end
 *   plus p2p_ns), the send from the producer's end for p2p_ns: the k-th
 *   send a->b is the k-th recv on b from a, and the transfer starts at the
 *   later of the two kernels' starts, as the analysis pairs them.
 *   --batched-p2p writes each transfer as Megatron's batch_isend_irecv does
 *   (a coalesced group, even of one op): "Collective name" "coalesced"
 *   and no peer, so only the annotation and the group say what it is.
 * - The schedule must leave room for this: a transfer no longer than the
 *   compute op that produced it and a host that posts before the GPU needs
 *   it. A kernel that would start before its launch or overlap its stream's
 *   previous kernel is counted, and any makes the write fail (a usage error
 *   naming the fix) rather than write a trace that contradicts the truth.
 * - Output is a pure function of the configuration: fixed host costs, no
 *   randomness beyond the schedule's own.
 */
#include "syn_int.h"
#include "syn_pp_int.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PPK_QUEUE_NS 6000      /* launch call start to earliest kernel start */
#define PPK_COPY_NS 1800       /* the 4-byte loss copy of loss.item() */

enum { ST_COMPUTE, ST_DP, ST_SEND_NEXT, ST_RECV_PREV, ST_SEND_PREV, ST_RECV_NEXT, ST__COUNT };
static const int64_t stream_id[ST__COUNT] = { SYN_COMPUTE_STREAM, SYN_NCCL_STREAM, 28, 32, 36, 40 };

static const char *const k_gemm = "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn";
static const char *const k_adam =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
    "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
    "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*>"
    "(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::"
    "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, "
    "double, bool, double*, double*)";
static const char *const k_sendrecv = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";
static const char *const k_rs = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

typedef struct ppk_rank {
    syn_out out;
    int rank, stage, dprank, dev;
    int64_t pid;
    int64_t corr, ext, rfid, evidx;
    int64_t free_ns[ST__COUNT];  /* each stream free from (trace clock) */
    const pg_info *dp_pg, *pp_pg;
    int64_t violations;
} ppk_rank;

typedef struct ppk_job {
    const pp_job *j;
    const int64_t *st, *en;
    int32_t *consumer;           /* op -> the op on another worker that waits for it, -1 */
    pg_info world, *dp_pgs, *pp_pgs;
} ppk_job;

/* One communication's args: the collective's, the group's, and for
 * point-to-point the peer (peer_key "Dst Rank" / "Src Rank"). */
typedef struct comm_args {
    const char *name;            /* "send", "recv", "_reduce_scatter_base" */
    int64_t in_n, out_n;
    const pg_info *pg;
    int self_local;
    const char *peer_key;        /* NULL: a collective */
    int peer_local, peer_global;
} comm_args;

static int64_t tt(int64_t model_ns, int step)
{
    return SYN_ORIGIN_NS + model_ns + (int64_t)(step + 1) * SYN_PPK_STEP_GAP_NS;
}

static int global_rank(const pp_job *j, uint32_t w) { return (int)(w % (uint32_t)j->P) * j->D + (int)(w / (uint32_t)j->P); }

static int64_t put_cpu(ppk_rank *r, const char *cat, const char *name, int64_t ts, int64_t dur)
{
    int64_t ext = ++r->ext;
    syn_ev_x(&r->out, cat, name, r->pid, r->pid, ts, dur);
    syn_arg_i(&r->out, "External id", ext, 1);
    syn_arg_i(&r->out, "Record function id", ++r->rfid, 0);
    syn_arg_i(&r->out, "Ev Idx", r->evidx++, 0);
    syn_ev_end(&r->out);
    return ext;
}

static void put_runtime(ppk_rank *r, const char *name, int cbid, int64_t ts, int64_t dur, int64_t corr, int64_t ext)
{
    syn_ev_x(&r->out, "cuda_runtime", name, r->pid, r->pid, ts, dur);
    syn_arg_i(&r->out, "External id", ext, 1);
    syn_arg_i(&r->out, "cbid", cbid, 0);
    syn_arg_i(&r->out, "correlation", corr, 0);
    syn_ev_end(&r->out);
    if (cbid != 131) /* cudaStreamSynchronize launches nothing */
        syn_ev_flow(&r->out, 's', corr, r->pid, r->pid, ts);
}

static void put_str(syn_out *o, const char *key, const char *v)
{
    SYN_LIT(o, ", \"");
    syn_puts(o, key);
    SYN_LIT(o, "\": \"");
    syn_puts(o, v);
    SYN_LIT(o, "\"");
}

/* The collective args Kineto copies onto the kernel, in its order. */
static void put_kernel_comm(syn_out *o, const comm_args *a)
{
    put_str(o, "Collective name", a->name);
    syn_arg_i(o, "In msg nelems", a->in_n, 0);
    syn_arg_i(o, "Out msg nelems", a->out_n, 0);
    syn_arg_i(o, "Group size", a->pg->size, 0);
    SYN_LIT(o, ", \"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\"");
    put_str(o, "Process Group Name", a->pg->name);
    put_str(o, "Process Group Description", a->pg->desc);
    put_str(o, "Process Group Ranks", a->pg->ranks);
    if (a->peer_key)
        syn_arg_i(o, a->peer_key, a->peer_global, 0);
}

/* A kernel [ts, ts + dur) on stream s; counts a start before its launch
 * could reach the GPU or before the stream is free. */
static void put_kernel(ppk_rank *r, const char *name, int s, int64_t ts, int64_t dur, int64_t launch, int64_t corr,
                       int64_t ext, const comm_args *a)
{
    if (ts < launch + PPK_QUEUE_NS || ts < r->free_ns[s] || dur < 0)
        r->violations++;
    r->free_ns[s] = ts + dur;
    syn_out *o = &r->out;
    syn_ev_x(o, "kernel", name, r->dev, stream_id[s], ts, dur);
    syn_arg_i(o, "External id", ext, 1);
    syn_arg_i(o, "queued", 0, 0);
    syn_arg_i(o, "device", r->dev, 0);
    syn_arg_i(o, "context", 1, 0);
    syn_arg_i(o, "stream", stream_id[s], 0);
    syn_arg_i(o, "correlation", corr, 0);
    SYN_LIT(o, ", \"grid\": [108, 1, 1], \"block\": [256, 1, 1]");
    if (a)
        put_kernel_comm(o, a);
    syn_ev_end(o);
    syn_ev_flow(o, 'f', corr, r->dev, stream_id[s], ts);
}

/* The host side of one communication at *h: record_param_comms around the
 * nccl:* annotation and the launch. Returns the launch's start; *corr and
 * *ext get the ids its kernel carries. */
static int64_t post_comm(ppk_rank *r, int64_t *h, const comm_args *a, int64_t *corr, int64_t *ext)
{
    int64_t t0 = *h, t1 = t0 + 9000, launch = t1 + 12000, launch_dur = 9000;
    int64_t e1 = launch + launch_dur + 6000, e0 = e1 + 15000;
    syn_out *o = &r->out;
    *ext = ++r->ext;
    syn_ev_x(o, "cpu_op", "record_param_comms", r->pid, r->pid, t0, e0 - t0);
    syn_arg_i(o, "External id", *ext, 1);
    syn_arg_i(o, "Record function id", ++r->rfid, 0);
    put_str(o, "Collective name", a->name);
    SYN_LIT(o, ", \"dtype\": \"BFloat16\"");
    syn_arg_i(o, "In msg nelems", a->in_n, 0);
    syn_arg_i(o, "Out msg nelems", a->out_n, 0);
    SYN_LIT(o, ", \"In split size\": \"[]\", \"Out split size\": \"[]\"");
    syn_arg_i(o, "Global rank start", a->pg->start, 0);
    syn_arg_i(o, "Global rank stride", a->pg->stride, 0);
    syn_arg_i(o, "Group size", a->pg->size, 0);
    put_str(o, "Process Group Name", a->pg->name);
    put_str(o, "Process Group Description", a->pg->desc);
    put_str(o, "Process Group Ranks", a->pg->ranks);
    syn_arg_i(o, "Rank", a->peer_key ? a->peer_local : a->self_local, 0);
    if (a->peer_key)
        syn_arg_i(o, a->peer_key, a->peer_global, 0);
    syn_arg_i(o, "Ev Idx", r->evidx++, 0);
    syn_ev_end(o);
    char title[64];
    if (a->peer_key)
        snprintf(title, sizeof title, "nccl:%s %d%s%d", a->name, a->self_local, a->name[0] == 's' ? "->" : "<-",
                 a->peer_local);
    else
        snprintf(title, sizeof title, "nccl:%s", a->name);
    put_cpu(r, "user_annotation", title, t1, e1 - t1);
    *corr = ++r->corr;
    put_runtime(r, "cudaLaunchKernelExC", 430, launch, launch_dur, *corr, *ext);
    *h = e0 + 1500;
    return launch;
}

/* The host side of a communication inside a Megatron-style annotation
 * (ann: "grads-reduce-scatter", "forward-send", ...), what the what-if
 * takes the op's type from. */
static int64_t post_comm_in(ppk_rank *r, int64_t *h, const char *ann, const comm_args *a, int64_t *corr, int64_t *ext)
{
    int64_t a0 = *h;
    *h += 1000;
    int64_t launch = post_comm(r, h, a, corr, ext);
    put_cpu(r, "user_annotation", ann, a0, *h - a0);
    *h += 1000;
    return launch;
}

/* The host side of a compute op: the artifact's op name as an annotation
 * around one aten op and its launch. Returns the launch's start. */
static int64_t post_compute(ppk_rank *r, int64_t *h, const char *op, const char *aten, int64_t *corr, int64_t *ext)
{
    int64_t t0 = *h, t1 = t0 + 2000, launch = t1 + 4000, launch_dur = 5500;
    int64_t e1 = launch + launch_dur + 2000, e0 = e1 + 2000;
    put_cpu(r, "user_annotation", op, t0, e0 - t0);
    *ext = put_cpu(r, "cpu_op", aten, t1, e1 - t1);
    *corr = ++r->corr;
    put_runtime(r, "cudaLaunchKernel", 211, launch, launch_dur, *corr, *ext);
    *h = e0 + 1500;
    return launch;
}

static const char *const op_name[PK_N] = { [PK_F] = "forward-compute", [PK_B] = "backward-compute",
                                           [PK_RS] = "grads-reduce-scatter", [PK_OPT] = "optimizer" };

/* The p2p args of a transfer between the ops' workers, seen from `self`. */
static comm_args p2p_args(const ppk_job *k, const ppk_rank *r, uint32_t peer_w, bool send)
{
    const pp_job *j = k->j;
    int peer_stage = (int)(peer_w % (uint32_t)j->P);
    comm_args a = { send ? "send" : "recv", j->c->p2p_bytes / 2, j->c->p2p_bytes / 2, r->pp_pg, r->stage,
                    send ? "Dst Rank" : "Src Rank", peer_stage, global_rank(j, peer_w) };
    if (j->c->batched_p2p) { /* torch's coalesced group: the kernel's args name the batch, not a peer */
        a.name = "coalesced";
        a.peer_key = NULL;
    }
    return a;
}

/* One op of the rank's schedule: its recv, its compute or collective, its send. */
static void put_op(const ppk_job *k, ppk_rank *r, uint32_t o, int64_t *h)
{
    const pp_job *j = k->j;
    const pop *op = &j->ops[o];
    int s = op->step;
    int64_t corr, ext, launch;
    if (op->kind == PK_LN || op->kind == PK_EMB || op->kind == PK_CLIP)
        return; /* the post-backward all-reduces of the op timeline are not written as kernels (with TP 1 the
                 * layernorm one launches none); their time is a gap on the rank's streams */
    if (op->dep >= 0 && j->ops[op->dep].w != op->w) { /* its input from another stage */
        comm_args a = p2p_args(k, r, j->ops[op->dep].w, false);
        launch = post_comm_in(r, h, op->kind == PK_F ? "forward-recv" : "backward-recv", &a, &corr, &ext);
        int st = op->kind == PK_F ? ST_RECV_PREV : ST_RECV_NEXT;
        int64_t arrive = tt(k->en[op->dep], s), end = tt(k->en[op->dep] + j->c->p2p_ns, s);
        int64_t ts = CP_MIN(CP_MAX(launch + PPK_QUEUE_NS, r->free_ns[st]), arrive);
        put_kernel(r, k_sendrecv, st, ts, end - ts, launch, corr, ext, &a);
    }
    int64_t t0 = tt(k->st[o], s), t1 = tt(k->en[o], s);
    if (op->kind == PK_RS) {
        const pg_info *pg = r->dp_pg;
        comm_args a = { "_reduce_scatter_base", j->c->dp_bytes / 2, j->c->dp_bytes / 2 / pg->size, pg, r->dprank,
                        NULL, 0, 0 };
        launch = post_comm_in(r, h, op_name[PK_RS], &a, &corr, &ext);
        put_kernel(r, k_rs, ST_DP, t0, t1 - t0, launch, corr, ext, &a);
        r->free_ns[ST_COMPUTE] = CP_MAX(r->free_ns[ST_COMPUTE], t1); /* the optimizer waits for it */
        return;
    }
    launch = post_compute(r, h, op_name[op->kind], op->kind == PK_OPT ? "aten::_fused_adamw_" : "aten::mm", &corr,
                          &ext);
    put_kernel(r, op->kind == PK_OPT ? k_adam : k_gemm, ST_COMPUTE, t0, t1 - t0, launch, corr, ext, NULL);
    int32_t c = k->consumer[o];
    if (c >= 0) { /* its output to another stage, once it is computed */
        comm_args a = p2p_args(k, r, j->ops[c].w, true);
        launch = post_comm_in(r, h, op->kind == PK_F ? "forward-send" : "backward-send", &a, &corr, &ext);
        int st = op->kind == PK_F ? ST_SEND_NEXT : ST_SEND_PREV;
        put_kernel(r, k_sendrecv, st, t1, j->c->p2p_ns, launch, corr, ext, &a);
    }
}

/* loss.item() after the step's last op: a 4-byte copy behind the optimizer
 * and the host's wait for it. Returns when the host is back. */
static int64_t put_item(ppk_rank *r, int64_t h, int64_t gpu_end)
{
    int64_t s0 = h, s1 = s0 + 4000, launch = s1 + 3000, launch_dur = 4000;
    int64_t ks = CP_MAX(gpu_end, launch + PPK_QUEUE_NS / 2);
    int64_t sync0 = launch + launch_dur + 500, sync_end = CP_MAX(sync0 + 2000, ks + PPK_COPY_NS + 2500);
    int64_t e1 = sync_end + 2000, e0 = e1 + 2000;
    put_cpu(r, "cpu_op", "aten::item", s0, e0 - s0);
    int64_t ext = put_cpu(r, "cpu_op", "aten::_local_scalar_dense", s1, e1 - s1);
    int64_t corr = ++r->corr;
    put_runtime(r, "cudaMemcpyAsync", 41, launch, launch_dur, corr, ext);
    syn_out *o = &r->out;
    syn_ev_x(o, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", r->dev, SYN_COMPUTE_STREAM, ks, PPK_COPY_NS);
    syn_arg_i(o, "External id", ext, 1);
    syn_arg_i(o, "device", r->dev, 0);
    syn_arg_i(o, "context", 1, 0);
    syn_arg_i(o, "stream", SYN_COMPUTE_STREAM, 0);
    syn_arg_i(o, "correlation", corr, 0);
    syn_arg_i(o, "bytes", 4, 0);
    syn_ev_end(o);
    syn_ev_flow(o, 'f', corr, r->dev, SYN_COMPUTE_STREAM, ks);
    r->free_ns[ST_COMPUTE] = ks + PPK_COPY_NS;
    put_runtime(r, "cudaStreamSynchronize", 131, sync0, sync_end - sync0, ++r->corr, ext);
    return e0;
}

/* Every step of one rank: ProfilerStep#s from the host's turnaround to its
 * loss.item() sync, the ops posted in schedule order. */
static int64_t put_rank(const ppk_job *k, ppk_rank *r)
{
    const pp_job *j = k->j;
    uint32_t w = (uint32_t)(r->dprank * j->P + r->stage);
    size_t q = j->ord_start[w], q1 = j->ord_start[w + 1];
    int64_t h0 = tt(0, 0) - SYN_PPK_STEP_GAP_NS;
    for (int s = 0; s < j->S; s++) {
        int64_t h = h0 + 2000, gpu_end = 0;
        for (; q < q1 && j->ops[j->order[q]].step == s; q++) {
            put_op(k, r, j->order[q], &h);
            gpu_end = tt(k->en[j->order[q]], s);
        }
        h = put_item(r, h, gpu_end);
        int64_t ext = ++r->ext, end = h + 3000;
        syn_ev_x_num(&r->out, "user_annotation", "ProfilerStep#", s, r->pid, r->pid, h0, end - h0);
        syn_arg_i(&r->out, "External id", ext, 1);
        syn_arg_i(&r->out, "Record function id", ++r->rfid, 0);
        syn_arg_i(&r->out, "Ev Idx", r->evidx++, 0);
        syn_ev_end(&r->out);
        h0 = end + 1000;
    }
    return h0;
}

static void groups_init(ppk_job *k)
{
    const pp_job *j = k->j;
    syn_pg_init(&k->world, "0", "default_pg", 0, 1, j->P * j->D);
    k->dp_pgs = cp_xcalloc((size_t)j->P, sizeof *k->dp_pgs);
    k->pp_pgs = cp_xcalloc((size_t)j->D, sizeof *k->pp_pgs);
    char name[16];
    for (int p = 0; p < j->P; p++) {
        snprintf(name, sizeof name, "%d", 1 + p);
        syn_pg_init(&k->dp_pgs[p], name, "mesh_dp", p * j->D, 1, j->D);
    }
    for (int d = 0; d < j->D; d++) {
        snprintf(name, sizeof name, "%d", 1 + j->P + d);
        syn_pg_init(&k->pp_pgs[d], name, "mesh_pp", d, j->D, j->P);
    }
}

static void groups_free(ppk_job *k)
{
    free(k->world.ranks);
    for (int p = 0; p < k->j->P; p++)
        free(k->dp_pgs[p].ranks);
    for (int d = 0; d < k->j->D; d++)
        free(k->pp_pgs[d].ranks);
    free(k->dp_pgs);
    free(k->pp_pgs);
}

/* One rank's file: header, every step, footer; committed only when the
 * trace follows the schedule. */
static int write_rank(const ppk_job *k, int g, const char *dir, int64_t *violations, cp_error *err)
{
    const pp_job *j = k->j;
    ppk_rank r = { .rank = g, .stage = g / j->D, .dprank = g % j->D };
    r.dev = g % j->c->gpus_per_node;
    r.pid = 2910249 + (int64_t)g * 1013;
    r.dp_pg = &k->dp_pgs[r.stage];
    r.pp_pg = &k->pp_pgs[r.dprank];
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.json%s", dir, g, syn_pp_ext(j->c));
    int rc = syn_out_open(&r.out, path, (syn_compress)j->c->compress, j->c->force, err);
    if (rc)
        return rc;
    const pg_info *pgs[3] = { &k->world, r.dp_pg, r.pp_pg };
    int n_pgs = 1;
    if (j->D > 1)
        n_pgs = 2;
    if (j->P > 1)
        pgs[n_pgs++] = r.pp_pg;
    int64_t streams[ST__COUNT];
    for (int s = 0; s < ST__COUNT; s++)
        streams[s] = stream_id[s];
    syn_hdr hdr = { g, j->P * j->D, j->c->gpus_per_node, j->c->seed, r.pid, r.pid, r.pid, r.dev,
                    pgs, n_pgs, streams, j->P > 1 ? ST__COUNT : 2 };
    syn_put_header_ex(&r.out, &hdr);
    int64_t end = put_rank(k, &r);
    for (int s = 0; s < ST__COUNT; s++)
        end = CP_MAX(end, r.free_ns[s]);
    snprintf(path, sizeof path, "rank-%d.json", g); /* the JSON's own name, whatever the compression */
    syn_put_footer_ex(&r.out, end + 10000, path);
    *violations += r.violations;
    bool ok = !r.out.err.code && !*violations;
    cp_error e2;
    int rc2 = syn_out_close(&r.out, ok, &e2);
    if (rc2 && err)
        *err = e2;
    return rc2;
}

int syn_ppk_write(const pp_job *j, const int64_t *st, const int64_t *en, const char *dir, cp_error *err)
{
    ppk_job k = { .j = j, .st = st, .en = en, .consumer = cp_xmalloc((j->n_ops ? j->n_ops : 1) * sizeof(int32_t)) };
    for (size_t o = 0; o < j->n_ops; o++)
        k.consumer[o] = -1;
    for (size_t o = 0; o < j->n_ops; o++)
        if (j->ops[o].dep >= 0 && j->ops[j->ops[o].dep].w != j->ops[o].w)
            k.consumer[j->ops[o].dep] = (int32_t)o;
    groups_init(&k);
    int rc = 0;
    int64_t violations = 0;
    for (int g = 0; g < j->P * j->D && !rc && !violations; g++)
        rc = write_rank(&k, g, dir, &violations, err);
    if (!rc && violations)
        rc = cp_error_set(err, CP_ERR_USAGE, dir, 0, 0, -1,
                          "the Kineto traces cannot follow this schedule: a kernel would start before its launch "
                          "or overlap its stream (transfers longer than the compute ops that feed them?)");
    groups_free(&k);
    free(k.consumer);
    return rc;
}
