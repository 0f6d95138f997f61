/* syn_job.c - the job model of `chainprof synth` (see synth.h).
 *
 * One step of a GPT-style decoder trained with DDP (and optionally
 * Megatron-style tensor parallelism) on every rank, simulated so that
 * collectives can be synchronised across ranks without keeping events in
 * memory:
 *   A. in stages run for every rank in turn (begin, forward per half layer,
 *      loss, backward per half layer, end): CPU events and compute kernels
 *      are written at once. A tensor-parallel all-reduce ends a stage: it is
 *      synchronised across its TP group before the next stage, and the
 *      compute stream waits for it. Each DDP gradient bucket's all-reduce is
 *      launched on the autograd thread and kept as a pending record (its
 *      earliest start: bucket gradients ready and launch done);
 *   B. per data-parallel group, bucket by bucket: the transfer starts when
 *      the last rank arrives and ends at the same instant everywhere, so an
 *      early rank's NCCL kernel spans its wait plus the transfer;
 *   C. per rank: NCCL kernels written, the compute stream waits for the last
 *      all-reduce (DDP's finalize), optimizer, loss.item() host sync, and a
 *      synchronous checkpoint when due.
 * Times are int64 nanoseconds on one true clock; each rank's file adds a
 * small per-rank clock skew. All randomness comes from a per-rank splitmix64
 * seeded by --seed, so output is reproducible byte for byte. The header,
 * footer and ground truth are written by syn_files.c.
 */
#include "synth.h"
#include "syn_int.h"
#include "../base/buf.h"
#include "../base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- configuration ---------------------------------------------------- */

void syn_config_default(syn_config *c)
{
    memset(c, 0, sizeof *c);
    c->ranks = 2;
    c->gpus_per_node = 8;
    c->tp = 1;
    c->steps = 4;
    c->seed = 1;
    c->layers = 8;
    c->hidden = 4096;
    c->seq_len = 2048;
    c->micro_batch = 4;
    c->vocab = 50304;
    c->bucket_mb = 25;
    c->peak_tflops = 312.0;      /* A100 dense bf16 */
    c->gemm_eff = 0.62;
    c->hbm_gbps = 2039.0;        /* A100-SXM4-80GB HBM2e */
    c->mem_eff = 0.75;
    c->nvlink_busbw_gbps = 230.0; /* typical nccl-tests all_reduce busbw, 8x A100 NVSwitch */
    c->nic_busbw_gbps = 23.0;     /* 200 Gb/s HDR per GPU, ~92 % achievable */
    c->straggler_rank = -1;
    c->straggler_factor = 1.0;
}

static int bad_inject(cp_error *err, const char *item, const char *why)
{
    return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--inject '%s': %s", item, why);
}

/* strtod/strtol over the whole of [s, end) */
static int num_d(const char *s, const char *end, double *out)
{
    if (s >= end)
        return -1;
    char tmp[64];
    size_t n = (size_t)(end - s);
    if (n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *e;
    errno = 0;
    double v = strtod(tmp, &e);
    if (errno || *e || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int num_i(const char *s, const char *end, long *out)
{
    double d;
    if (num_d(s, end, &d) < 0 || d != floor(d) || fabs(d) > 1e9)
        return -1;
    *out = (long)d;
    return 0;
}

/* "X[@N]" -> x and every (default keeps *every) */
static int val_every(const char *v, const char *end, double *x, int *every)
{
    const char *at = memchr(v, '@', (size_t)(end - v));
    if (num_d(v, at ? at : end, x) < 0)
        return -1;
    if (at) {
        long n;
        if (num_i(at + 1, end, &n) < 0 || n < 1 || n > SYN_MAX_STEPS)
            return -1;
        *every = (int)n;
    }
    return 0;
}

static int parse_one(syn_config *c, const char *item, size_t len, cp_error *err)
{
    char it[256];
    if (len == 0)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--inject: empty item");
    if (len >= sizeof it)
        len = sizeof it - 1;
    memcpy(it, item, len);
    it[len] = 0;
    char *eq = strchr(it, '=');
    size_t klen = eq ? (size_t)(eq - it) : len;
    const char *v = eq ? eq + 1 : NULL, *vend = it + len;
#define KIND(s) (klen == sizeof(s) - 1 && !memcmp(it, s, klen))
    if (KIND("slow-network")) {
        double f;
        if (!v || num_d(v, vend, &f) < 0 || !(f > 0 && f <= 1))
            return bad_inject(err, it, "needs a fraction of link bandwidth in (0, 1], e.g. slow-network=0.4");
        c->slow_network = f;
    } else if (KIND("sync-checkpoint")) {
        double s;
        c->ckpt_every = 5;
        if (!v || val_every(v, vend, &s, &c->ckpt_every) < 0 || !(s > 0 && s <= 3600))
            return bad_inject(err, it, "needs SECONDS[@EVERY] with 0 < SECONDS <= 3600, e.g. sync-checkpoint=8@5");
        c->ckpt_s = s;
    } else if (KIND("straggler")) {
        long r;
        double f = 1.25;
        const char *colon = v ? memchr(v, ':', (size_t)(vend - v)) : NULL;
        if (!v || num_i(v, colon ? colon : vend, &r) < 0 || r < 0 ||
            (colon && (num_d(colon + 1, vend, &f) < 0 || !(f >= 1.01 && f <= 100))))
            return bad_inject(err, it, "needs RANK[:FACTOR] with FACTOR in [1.01, 100], e.g. straggler=3:1.2");
        c->straggler_rank = (int)r;
        c->straggler_factor = f;
    } else if (KIND("dataloader-stall") || KIND("host-work")) { /* both MS[@EVERY] of host time */
        bool dl = KIND("dataloader-stall");
        double ms, *out = dl ? &c->dl_stall_ms : &c->host_work_ms;
        int *every = dl ? &c->dl_every : &c->hw_every;
        *every = 1;
        if (!v || val_every(v, vend, &ms, every) < 0 || !(ms > 0 && ms <= 600000))
            return bad_inject(err, it, dl ? "needs MS[@EVERY] with 0 < MS <= 600000, e.g. dataloader-stall=200"
                                          : "needs MS[@EVERY] with 0 < MS <= 600000, e.g. host-work=300");
        *out = ms;
    } else if (KIND("launch-bound")) {
        long n = 3000;
        if (v && (num_i(v, vend, &n) < 0 || n < 1 || n > 1000000))
            return bad_inject(err, it, "takes an optional count of tiny kernels per step in [1, 1000000]");
        c->launch_bound = (int)n;
    } else if (KIND("pageable-h2d")) {
        double mb = 256;
        if (v && (num_d(v, vend, &mb) < 0 || !(mb > 0 && mb <= 65536)))
            return bad_inject(err, it, "takes an optional MB copied per step in (0, 65536]");
        c->pageable_mb = mb;
    } else {
        return bad_inject(err, it,
                          "unknown problem (known: slow-network=F, sync-checkpoint=S[@N], straggler=R[:F], "
                          "dataloader-stall=MS[@N], launch-bound[=N], pageable-h2d[=MB], host-work=MS[@N])");
    }
#undef KIND
    return 0;
}

int syn_parse_inject(syn_config *c, const char *spec, cp_error *err)
{
    const char *p = spec;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int rc = parse_one(c, p, len, err);
        if (rc)
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int syn_config_check(const syn_config *c, cp_error *err)
{
    if (c->straggler_rank >= c->ranks)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                            "--inject straggler=%d: no such rank (the job has %d)", c->straggler_rank, c->ranks);
    if (c->slow_network > 0 && c->ranks <= c->gpus_per_node)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                            "--inject slow-network: the job fits on one node (%d ranks, %d GPUs per node); "
                            "use more ranks than --gpus-per-node",
                            c->ranks, c->gpus_per_node);
    if (c->tp < 1 || c->gpus_per_node % c->tp != 0 || c->ranks % c->tp != 0)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                            "--tp %d: must divide --gpus-per-node (%d) and --ranks (%d): tensor-parallel groups "
                            "stay inside a node",
                            c->tp, c->gpus_per_node, c->ranks);
    if ((c->hidden / 128) % c->tp != 0)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                            "--tp %d: must divide the %d attention heads (--hidden / 128)", c->tp, c->hidden / 128);
    if (c->hidden % 128 != 0)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--hidden %d: must be a multiple of 128", c->hidden);
    return 0;
}

/* ---- kernels ------------------------------------------------------------ */

typedef struct kspec {
    const char *name;
    int regs;
    int smem;
    int block;       /* threads per block (x) */
} kspec;

enum { K_GEMM_TN, K_GEMM_NN, K_GEMM_NT, K_FLASH_FWD, K_FLASH_BWD, K_LN_FWD, K_LN_BWD, K_ADD, K_GELU,
       K_GELU_BWD, K_EMBED, K_EMBED_BWD, K_SOFTMAX, K_ADAM, K_TINY, K_NCCL, K_COUNT };

static const kspec kernels[K_COUNT] = {
    [K_GEMM_TN] = { "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn", 232, 98304, 256 },
    [K_GEMM_NN] = { "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn", 232, 98304, 256 },
    [K_GEMM_NT] = { "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt", 232, 98304, 256 },
    [K_FLASH_FWD] = { "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
                      "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, true, "
                      "false, false, false, true, true, false>(pytorch_flash::Flash_fwd_params)",
                      255, 49152, 128 },
    [K_FLASH_BWD] = { "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, "
                      "64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, "
                      "cutlass::bfloat16_t> >, true, false, false, false, false, true, false, false>"
                      "(pytorch_flash::Flash_bwd_params)",
                      255, 147456, 256 },
    [K_LN_FWD] = { "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, "
                   "float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, "
                   "c10::BFloat16*)",
                   30, 0, 128 },
    [K_LN_BWD] = { "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, "
                   "float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 "
                   "const*, c10::BFloat16*, int)",
                   40, 0, 128 },
    [K_ADD] = { "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
                "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
                "at::detail::Array<char*, 3>)",
                24, 0, 128 },
    [K_GELU] = { "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
                 "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::"
                 "operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::"
                 "GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
                 "const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
                 28, 0, 128 },
    [K_GELU_BWD] = { "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::"
                     "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::"
                     "operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >"
                     "(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
                     "{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, "
                     "c10::BFloat16)#1}, at::detail::Array<char*, 3>)",
                     32, 0, 128 },
    [K_EMBED] = { "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, "
                  "2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::"
                  "TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<long, unsigned int>, int, "
                  "int, unsigned int, unsigned int, long)",
                  26, 0, 128 },
    [K_EMBED_BWD] = { "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, "
                      "long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int)",
                      40, 8192, 1024 },
    [K_SOFTMAX] = { "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, float, "
                    "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, c10::BFloat16 const*, int)",
                    38, 0, 1024 },
    [K_ADAM] = { "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
                 "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
                 "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, "
                 "double*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous "
                 "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, "
                 "double, double, double, double, bool, double*, double*)",
                 96, 0, 512 },
    [K_TINY] = { "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
                 "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::"
                 "AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
                 "at::detail::Array<char*, 2>)",
                 20, 0, 128 },
    [K_NCCL] = { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 96, 87568, 544 },
};


/* CPU costs of the PyTorch dispatcher and CUDA runtime, ns (A100 host, typical). */
#define CPU_OUTER_NS 4000
#define CPU_INNER_NS 3000
#define CPU_LAUNCH_NS 5500
#define CPU_POST_NS 2000
#define CPU_GAP_NS 1500
#define GPU_QUEUE_NS 6000  /* launch call start to earliest kernel start */
#define KERNEL_MIN_NS 2500


static uint64_t rnd(rank_st *r)
{
    uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* x scaled by a uniform factor in [1-a, 1+a] */
static int64_t jit(rank_st *r, double x, double a)
{
    double u = (double)(rnd(r) >> 11) * (1.0 / 9007199254740992.0);
    return (int64_t)llround(x * (1.0 - a + 2.0 * a * u));
}

static int64_t gemm_ns(const job *j, rank_st *r, double flops)
{
    double ns = flops / (j->c->peak_tflops * 1e12 * j->c->gemm_eff) * 1e9 * r->compute_factor;
    return CP_MAX(KERNEL_MIN_NS, jit(r, ns, 0.02));
}

static int64_t mem_ns(const job *j, rank_st *r, double bytes)
{
    double ns = bytes / (j->c->hbm_gbps * 1e9 * j->c->mem_eff) * 1e9 * r->compute_factor;
    return CP_MAX(KERNEL_MIN_NS, jit(r, ns, 0.03));
}


/* A kernel or copy starts on the compute stream at ks. */
static void note_gpu(rank_st *r, int64_t ks)
{
    if (r->first_gpu_step < 0)
        r->first_gpu_step = ks;
    if (r->first_gpu_opt < 0)
        r->first_gpu_opt = ks;
}

/* A cpu_op/user_annotation/python_function with the usual ids; returns its External id. */
static int64_t put_cpu(rank_st *r, const char *cat, const char *name, int64_t tid, int64_t ts, int64_t dur)
{
    int64_t ext = ++r->ext;
    syn_ev_x(&r->out, cat, name, r->pid, tid, T(r, ts), dur);
    syn_arg_i(&r->out, "External id", ext, 1);
    syn_arg_i(&r->out, "Record function id", ++r->rfid, 0);
    syn_arg_i(&r->out, "Ev Idx", r->evidx++, 0);
    syn_ev_end(&r->out);
    return ext;
}

/* A CUDA runtime call; flow: it launched GPU work (an ac2g flow starts here). */
static void put_runtime(rank_st *r, const char *name, int cbid, int64_t tid, int64_t ts, int64_t dur, int64_t corr,
                        int64_t ext, int flow)
{
    syn_ev_x(&r->out, "cuda_runtime", name, r->pid, tid, T(r, ts), dur);
    syn_arg_i(&r->out, "External id", ext, 1);
    syn_arg_i(&r->out, "cbid", cbid, 0);
    syn_arg_i(&r->out, "correlation", corr, 0);
    syn_ev_end(&r->out);
    if (flow)
        syn_ev_flow(&r->out, 's', corr, r->pid, tid, T(r, ts));
}

static void put_kernel(rank_st *r, int k, int64_t stream, int64_t ts, int64_t dur, int64_t corr,
                       int64_t ext, int64_t grid_x, int64_t grid_y, int64_t nelems, const pg_info *pg)
{
    const kspec *ks = &kernels[k];
    syn_out *o = &r->out;
    syn_ev_x(o, "kernel", ks->name, r->dev, stream, T(r, ts), dur);
    syn_arg_i(o, "External id", ext, 1);
    syn_arg_i(o, "queued", 0, 0);
    syn_arg_i(o, "device", r->dev, 0);
    syn_arg_i(o, "context", 1, 0);
    syn_arg_i(o, "stream", stream, 0);
    syn_arg_i(o, "correlation", corr, 0);
    syn_arg_i(o, "registers per thread", ks->regs, 0);
    syn_arg_i(o, "shared memory", ks->smem, 0);
    double blocks = (double)(grid_x * grid_y);
    SYN_LIT(o, ", \"blocks per SM\": ");
    syn_put_f(o, blocks / SYN_NUM_SMS);
    SYN_LIT(o, ", \"warps per SM\": ");
    syn_put_f(o, blocks * (ks->block / 32) / SYN_NUM_SMS);
    SYN_LIT(o, ", \"grid\": [");
    syn_put_i64(o, grid_x);
    SYN_LIT(o, ", ");
    syn_put_i64(o, grid_y);
    SYN_LIT(o, ", 1], \"block\": [");
    syn_put_i64(o, ks->block);
    SYN_LIT(o, ", 1, 1]");
    double occ = blocks * ks->block / (SYN_NUM_SMS * 2048.0) * 100.0;
    syn_arg_i(o, "est. achieved occupancy %", (int64_t)CP_MIN(occ, k == K_NCCL ? 0 : 50.0), 0);
    if (k == K_NCCL) {
        SYN_LIT(o, ", \"Collective name\": \"allreduce\"");
        syn_arg_i(o, "In msg nelems", nelems, 0);
        syn_arg_i(o, "Out msg nelems", nelems, 0);
        syn_arg_i(o, "Group size", pg->size, 0);
        SYN_LIT(o, ", \"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
                   "\"Process Group Name\": \"");
        syn_puts(o, pg->name);
        SYN_LIT(o, "\", \"Process Group Description\": \"");
        syn_puts(o, pg->desc);
        SYN_LIT(o, "\", \"Process Group Ranks\": \"");
        syn_puts(o, pg->ranks);
        SYN_LIT(o, "\"");
    }
    syn_ev_end(o);
    syn_ev_flow(o, 'f', corr, r->dev, stream, T(r, ts));
}

static void put_memcpy(rank_st *r, const char *name, int64_t ts, int64_t dur, int64_t corr, int64_t ext,
                       int64_t bytes)
{
    syn_out *o = &r->out;
    syn_ev_x(o, "gpu_memcpy", name, r->dev, SYN_COMPUTE_STREAM, T(r, ts), dur);
    syn_arg_i(o, "External id", ext, 1);
    syn_arg_i(o, "device", r->dev, 0);
    syn_arg_i(o, "context", 1, 0);
    syn_arg_i(o, "stream", SYN_COMPUTE_STREAM, 0);
    syn_arg_i(o, "correlation", corr, 0);
    syn_arg_i(o, "bytes", bytes, 0);
    SYN_LIT(o, ", \"memory bandwidth (GB/s)\": ");
    syn_put_f(o, (double)bytes / (double)dur);
    syn_ev_end(o);
    syn_ev_flow(o, 'f', corr, r->dev, SYN_COMPUTE_STREAM, T(r, ts));
}

/* The GPU side of an annotation: [first, last) of its work on one stream
 * (num >= 0 appends a number to the name, as in "ProfilerStep#3"). */
static void put_gpu_annotation(rank_st *r, const char *name, int64_t num, int64_t stream, int64_t first, int64_t last,
                               int64_t ext)
{
    if (first < 0 || last <= first)
        return;
    if (num >= 0)
        syn_ev_x_num(&r->out, "gpu_user_annotation", name, num, r->dev, stream, T(r, first), last - first);
    else
        syn_ev_x(&r->out, "gpu_user_annotation", name, r->dev, stream, T(r, first), last - first);
    syn_arg_i(&r->out, "External id", ext, 1);
    syn_ev_end(&r->out);
}

/* Nested cpu_ops names[0..n) on thread tid starting at *cpu, the innermost
 * launching kernel k for gpu_dur on the compute stream (not before
 * gpu_not_before). Advances *cpu and r->gpu_ns; returns the kernel's end. */
static int64_t run_op(rank_st *r, int64_t tid, int64_t *cpu, const char *const *names, int n, int k,
                      int64_t gpu_dur, int64_t grid_x, int64_t grid_y)
{
    int64_t pre[4], start[4];
    int64_t t = *cpu;
    for (int i = 0; i < n; i++) {
        start[i] = t;
        pre[i] = jit(r, i == 0 ? CPU_OUTER_NS : CPU_INNER_NS, 0.2);
        t += pre[i];
    }
    int64_t launch = t, launch_dur = jit(r, CPU_LAUNCH_NS, 0.25);
    t += launch_dur;
    int64_t ends[4];
    for (int i = n - 1; i >= 0; i--) {
        t += jit(r, CPU_POST_NS, 0.2);
        ends[i] = t;
    }
    int64_t ext = 0;
    for (int i = 0; i < n; i++)
        ext = put_cpu(r, "cpu_op", names[i], tid, start[i], ends[i] - start[i]);
    int64_t corr = ++r->corr;
    put_runtime(r, "cudaLaunchKernel", 211, tid, launch, launch_dur, corr, ext, 1);
    int64_t ks = CP_MAX(r->gpu_ns, launch + GPU_QUEUE_NS);
    put_kernel(r, k, SYN_COMPUTE_STREAM, ks, gpu_dur, corr, ext, grid_x, grid_y, 0, NULL);
    note_gpu(r, ks);
    r->gpu_ns = ks + gpu_dur;
    r->compute_kernel_ns += gpu_dur;
    *cpu = t + jit(r, CPU_GAP_NS, 0.3);
    return r->gpu_ns;
}

#define OP(...) (const char *const[]){ __VA_ARGS__ }, (int)CP_ARRAY_LEN(((const char *const[]){ __VA_ARGS__ }))

/* A host-to-device or device-to-host copy on the compute stream. sync: the
 * runtime call returns only when the copy is done (pageable memory). */
static void run_copy(rank_st *r, int64_t tid, int64_t *cpu, const char *memcpy_name, int64_t bytes, double gbps,
                     int sync)
{
    int64_t t = *cpu;
    int64_t s0 = t, s1 = (t += jit(r, CPU_OUTER_NS, 0.2)), s2 = (t += jit(r, CPU_INNER_NS, 0.2));
    t += jit(r, CPU_INNER_NS, 0.2);
    int64_t launch = t;
    int64_t dur = CP_MAX(1500, (int64_t)llround((double)bytes / gbps) + 1200);
    int64_t ks = CP_MAX(r->gpu_ns, launch + GPU_QUEUE_NS / 2);
    note_gpu(r, ks);
    r->gpu_ns = ks + dur;
    int64_t launch_dur = sync ? r->gpu_ns + 3000 - launch : jit(r, 4500, 0.2);
    t = launch + launch_dur + jit(r, CPU_POST_NS, 0.2);
    int64_t e2 = t, e1 = (t += jit(r, CPU_POST_NS, 0.2)), e0 = (t += jit(r, CPU_POST_NS, 0.2));
    put_cpu(r, "cpu_op", "aten::to", tid, s0, e0 - s0);
    put_cpu(r, "cpu_op", "aten::_to_copy", tid, s1, e1 - s1);
    int64_t ext = put_cpu(r, "cpu_op", "aten::copy_", tid, s2, e2 - s2);
    int64_t corr = ++r->corr;
    put_runtime(r, "cudaMemcpyAsync", 41, tid, launch, launch_dur, corr, ext, 1);
    put_memcpy(r, memcpy_name, ks, dur, corr, ext, bytes);
    *cpu = t + jit(r, CPU_GAP_NS, 0.3);
}

/* Host waits for the compute stream (loss.item()): a 4-byte D2H copy and
 * cudaStreamSynchronize. */
static void run_item(rank_st *r, int64_t tid, int64_t *cpu)
{
    int64_t t = *cpu, s0 = t, s1 = (t += jit(r, CPU_OUTER_NS, 0.2));
    t += jit(r, CPU_INNER_NS, 0.2);
    int64_t launch = t, launch_dur = jit(r, 4000, 0.2);
    int64_t ks = CP_MAX(r->gpu_ns, launch + GPU_QUEUE_NS / 2);
    note_gpu(r, ks);
    r->gpu_ns = ks + 1800;
    int64_t corr = ++r->corr;
    t = launch + launch_dur + 500;
    int64_t sync0 = t, sync_end = CP_MAX(t + 2000, r->gpu_ns + 2500);
    t = sync_end + jit(r, CPU_POST_NS, 0.2);
    int64_t e1 = t, e0 = (t += jit(r, CPU_POST_NS, 0.2));
    put_cpu(r, "cpu_op", "aten::item", tid, s0, e0 - s0);
    int64_t ext = put_cpu(r, "cpu_op", "aten::_local_scalar_dense", tid, s1, e1 - s1);
    put_runtime(r, "cudaMemcpyAsync", 41, tid, launch, launch_dur, corr, ext, 1);
    put_memcpy(r, "Memcpy DtoH (Device -> Pageable)", ks, 1800, corr, ext, 4);
    put_runtime(r, "cudaStreamSynchronize", 131, tid, sync0, sync_end - sync0, ++r->corr, ext, 0);
    *cpu = t + jit(r, CPU_GAP_NS, 0.3);
}

/* ---- one step ----------------------------------------------------------- */

static int64_t ceil_div(double a, double b) { return CP_MAX(1, (int64_t)ceil(a / b)); }

/* The host side of an all-reduce over pg on thread tid: record_param_comms,
 * nccl:all_reduce, the launch. The pending record (earliest start: ready_gpu
 * and the launch done) goes to *out, or is appended to the step's buckets. */
static void launch_allreduce(rank_st *r, int64_t tid, int64_t *cursor, int64_t bytes, int64_t ready_gpu,
                             const pg_info *pg, pend_coll *out)
{
    int64_t nelems = bytes / 2;
    int64_t t0 = *cursor, t1 = t0 + jit(r, 9000, 0.2), launch = t1 + jit(r, 12000, 0.2);
    int64_t launch_dur = jit(r, 9000, 0.2);
    int64_t e1 = launch + launch_dur + jit(r, 6000, 0.2), e0 = e1 + jit(r, 15000, 0.2);
    int64_t ext = ++r->ext;
    syn_out *o = &r->out;
    syn_ev_x(o, "cpu_op", "record_param_comms", r->pid, tid, T(r, t0), e0 - t0);
    syn_arg_i(o, "External id", ext, 1);
    syn_arg_i(o, "Record function id", ++r->rfid, 0);
    SYN_LIT(o, ", \"Process Group Name\": \"");
    syn_puts(o, pg->name);
    SYN_LIT(o, "\"");
    syn_arg_i(o, "Global rank stride", pg->stride, 0);
    syn_arg_i(o, "Out msg nelems", nelems, 0);
    SYN_LIT(o, ", \"Process Group Ranks\": \"");
    syn_puts(o, pg->ranks);
    SYN_LIT(o, "\"");
    syn_arg_i(o, "Group size", pg->size, 0);
    syn_arg_i(o, "Global rank start", pg->start, 0);
    syn_arg_i(o, "Ev Idx", r->evidx++, 0);
    syn_arg_i(o, "In msg nelems", nelems, 0);
    SYN_LIT(o, ", \"In split size\": \"[]\", \"Out split size\": \"[]\", \"dtype\": \"BFloat16\", "
               "\"Process Group Description\": \"");
    syn_puts(o, pg->desc);
    SYN_LIT(o, "\", \"Collective name\": \"allreduce\"");
    syn_ev_end(o);
    put_cpu(r, "user_annotation", "nccl:all_reduce", tid, t1, e1 - t1);
    int64_t corr = ++r->corr;
    put_runtime(r, "cudaLaunchKernelExC", 430, tid, launch, launch_dur, corr, ext, 1);
    pend_coll p = { .ready_ns = CP_MAX(ready_gpu, launch + GPU_QUEUE_NS), .corr = corr, .ext = ext, .nelems = nelems };
    if (out) {
        *out = p;
    } else {
        cp_xgrow((void **)&r->pend, &r->cap_pend, r->n_pend + 1, sizeof *r->pend);
        r->pend[r->n_pend++] = p;
    }
    *cursor = e0 + jit(r, CPU_GAP_NS, 0.3);
}

/* Gradient bytes accumulate into DDP buckets; each full bucket launches an
 * all-reduce from the autograd thread, ready once the producing kernel ended. */
static void add_grad(const job *j, rank_st *r, int64_t bytes)
{
    if (j->dp < 2)
        return;
    int64_t bucket = (int64_t)j->c->bucket_mb * 1024 * 1024;
    r->bk_acc_bytes += bytes;
    while (r->bk_acc_bytes >= bucket) {
        launch_allreduce(r, r->tid_bw, &r->bw_ns, bucket, r->gpu_ns, r->dp_pg, NULL);
        r->bk_acc_bytes -= bucket;
    }
}

/* Tensor parallelism: all-reduce of an activation (forward) or its gradient
 * (backward) right after the GEMM that produced it. */
static void tp_launch(rank_st *r, int64_t tid, int64_t *cursor, int64_t bytes)
{
    launch_allreduce(r, tid, cursor, bytes, r->gpu_ns, r->tp_pg, &r->tp_pend);
}

/* Phase A, in stages run for every rank in turn, so that tensor-parallel
 * all-reduces (on the critical path between stages) can be synchronised
 * across their group before the next stage. With --tp 1 the stages simply
 * run back to back. Widths of sharded weights are divided by tp. */

static void st_begin(const job *j, rank_st *r, int step)
{
    const syn_config *c = j->c;
    double tok = (double)j->tokens, h = c->hidden;
    int64_t tid = r->tid_main, *cpu = &r->cpu_ns;
    r->first_gpu_step = -1;
    int64_t dl = jit(r, 350000, 0.3);
    if (c->dl_stall_ms > 0 && step % c->dl_every == 0)
        dl += (int64_t)llround(c->dl_stall_ms * 1e6);
    put_cpu(r, "user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", tid, *cpu, dl);
    r->dl_ns += dl;
    *cpu += dl + jit(r, 20000, 0.3);
    if (c->host_work_ms > 0 && step % c->hw_every == 0) { /* the batch built on the CPU: no launches */
        int64_t hw = (int64_t)llround(c->host_work_ms * 1e6);
        put_cpu(r, "cpu_op", "aten::normal_", tid, *cpu, hw);
        r->hw_ns += hw;
        *cpu += hw + jit(r, 5000, 0.3);
    }
    for (int i = 0; i < 2; i++) /* input ids and labels, int64, pinned, non_blocking */
        run_copy(r, tid, cpu, "Memcpy HtoD (Pinned -> Device)", (int64_t)tok * 8, 22.0, 0);
    if (c->pageable_mb > 0)
        run_copy(r, tid, cpu, "Memcpy HtoD (Pageable -> Device)", (int64_t)llround(c->pageable_mb * 1e6), 5.5, 1);
    r->fwd0_ns = *cpu;
    *cpu += jit(r, 30000, 0.3);
    run_op(r, tid, cpu, OP("aten::embedding", "aten::index_select"), K_EMBED, mem_ns(j, r, 2 * tok * h * 2),
           ceil_div(tok * h, 512), 1);
}

/* Forward of half a layer: attention (half 0) or MLP (half 1), each ending
 * with the row-parallel GEMM whose output tensor parallelism all-reduces. */
static void st_fwd(const job *j, rank_st *r, int l, int half)
{
    const syn_config *c = j->c;
    double tok = (double)j->tokens, h = c->hidden, S = c->seq_len, mb = c->micro_batch, tp = j->tp;
    int64_t tid = r->tid_main, *cpu = &r->cpu_ns, heads = c->hidden / 128 / j->tp;
    if (half || l > 0) /* the residual add after the previous block */
        run_op(r, tid, cpu, OP("aten::add"), K_ADD, mem_ns(j, r, 3 * tok * h * 2), ceil_div(tok * h, 512), 1);
    run_op(r, tid, cpu, OP("aten::layer_norm", "aten::native_layer_norm"), K_LN_FWD,
           mem_ns(j, r, 2 * tok * h * 2), (int64_t)tok, 1);
    if (!half) {
        run_op(r, tid, cpu, OP("aten::linear", "aten::addmm"), K_GEMM_TN, gemm_ns(j, r, 2 * tok * h * 3 * h / tp),
               ceil_div(3 * h / tp, 128), ceil_div(tok, 256));
        run_op(r, tid, cpu,
               OP("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                  "aten::_flash_attention_forward"),
               K_FLASH_FWD, gemm_ns(j, r, 2 * mb * S * S * h / tp), ceil_div(S, 128), (int64_t)mb * heads);
        run_op(r, tid, cpu, OP("aten::linear", "aten::addmm"), K_GEMM_TN, gemm_ns(j, r, 2 * tok * h * h / tp),
               ceil_div(h, 128), ceil_div(tok, 256));
    } else {
        run_op(r, tid, cpu, OP("aten::linear", "aten::addmm"), K_GEMM_TN, gemm_ns(j, r, 2 * tok * h * 4 * h / tp),
               ceil_div(4 * h / tp, 128), ceil_div(tok, 256));
        run_op(r, tid, cpu, OP("aten::gelu"), K_GELU, mem_ns(j, r, 2 * tok * 4 * h / tp * 2),
               ceil_div(tok * 4 * h / tp, 512), 1);
        run_op(r, tid, cpu, OP("aten::linear", "aten::addmm"), K_GEMM_TN, gemm_ns(j, r, 2 * tok * 4 * h * h / tp),
               ceil_div(h, 128), ceil_div(tok, 256));
    }
    if (j->tp > 1)
        tp_launch(r, tid, cpu, (int64_t)(tok * h * 2));
}

#define LNB OP("autograd::engine::evaluate_function: NativeLayerNormBackward0", "NativeLayerNormBackward0", \
               "aten::native_layer_norm_backward")
#define MMB OP("autograd::engine::evaluate_function: MmBackward0", "MmBackward0", "aten::mm")
#define ADDMMB OP("autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm")

/* The rest of the forward, the loss, and the start of the backward on the
 * autograd engine's thread (DDP hooks launch buckets from there). */
static void st_fwd_end(const job *j, rank_st *r)
{
    const syn_config *c = j->c;
    double tok = (double)j->tokens, h = c->hidden, V = c->vocab / (double)j->tp;
    int64_t tid = r->tid_main, *cpu = &r->cpu_ns, *bw = &r->bw_ns;
    run_op(r, tid, cpu, OP("aten::add"), K_ADD, mem_ns(j, r, 3 * tok * h * 2), ceil_div(tok * h, 512), 1);
    run_op(r, tid, cpu, OP("aten::layer_norm", "aten::native_layer_norm"), K_LN_FWD,
           mem_ns(j, r, 2 * tok * h * 2), (int64_t)tok, 1);
    run_op(r, tid, cpu, OP("aten::linear", "aten::mm"), K_GEMM_TN, gemm_ns(j, r, 2 * tok * h * V),
           ceil_div(V, 128), ceil_div(tok, 256));
    put_cpu(r, "user_annotation", "DistributedDataParallel.forward", tid, r->fwd0_ns, *cpu - r->fwd0_ns);
    run_op(r, tid, cpu, OP("aten::cross_entropy", "aten::log_softmax", "aten::_log_softmax"), K_SOFTMAX,
           mem_ns(j, r, 2 * tok * V * 2), (int64_t)tok, 1);

    *bw = *cpu + jit(r, 25000, 0.3);
    r->bk_acc_bytes = 0;
    run_op(r, r->tid_bw, bw,
           OP("autograd::engine::evaluate_function: LogSoftmaxBackward0", "LogSoftmaxBackward0",
              "aten::_log_softmax_backward_data"),
           K_SOFTMAX, mem_ns(j, r, 3 * tok * V * 2), (int64_t)tok, 1);
    run_op(r, r->tid_bw, bw, MMB, K_GEMM_NN, gemm_ns(j, r, 2 * tok * V * h), ceil_div(h, 128), ceil_div(tok, 256));
    run_op(r, r->tid_bw, bw, MMB, K_GEMM_NT, gemm_ns(j, r, 2 * tok * V * h), ceil_div(V, 128), ceil_div(h, 256));
    add_grad(j, r, (int64_t)(V * h * 2));
}

/* Backward of half a layer (MLP first, then attention). It starts with the
 * layer norm backward of the block before it, which needs the tensor-parallel
 * all-reduce of that block's input gradient. */
static void st_bwd(const job *j, rank_st *r, int l, int half)
{
    const syn_config *c = j->c;
    double tok = (double)j->tokens, h = c->hidden, S = c->seq_len, mb = c->micro_batch, tp = j->tp;
    int64_t *bw = &r->bw_ns, heads = c->hidden / 128 / j->tp;
    run_op(r, r->tid_bw, bw, LNB, K_LN_BWD, mem_ns(j, r, 3 * tok * h * 2), (int64_t)tok, 1);
    if (!(l == c->layers - 1 && half == 1))
        add_grad(j, r, (int64_t)(2 * h * 2));
    /* (in, out) widths of the two GEMMs of this half, last first */
    double w[2][2];
    if (half) {
        w[0][0] = 4 * h / tp, w[0][1] = h, w[1][0] = h, w[1][1] = 4 * h / tp;
    } else {
        w[0][0] = h / tp, w[0][1] = h, w[1][0] = h, w[1][1] = 3 * h / tp;
    }
    for (int g = 0; g < 2; g++) {
        double flops = 2 * tok * w[g][0] * w[g][1];
        run_op(r, r->tid_bw, bw, ADDMMB, K_GEMM_NN, gemm_ns(j, r, flops), ceil_div(w[g][0], 128),
               ceil_div(tok, 256));
        run_op(r, r->tid_bw, bw, ADDMMB, K_GEMM_NT, gemm_ns(j, r, flops), ceil_div(w[g][1], 128),
               ceil_div(w[g][0], 256));
        add_grad(j, r, (int64_t)(w[g][0] * w[g][1] * 2 + w[g][1] * 2));
        if (g == 0 && half)
            run_op(r, r->tid_bw, bw,
                   OP("autograd::engine::evaluate_function: GeluBackward0", "GeluBackward0", "aten::gelu_backward"),
                   K_GELU_BWD, mem_ns(j, r, 3 * tok * 4 * h / tp * 2), ceil_div(tok * 4 * h / tp, 512), 1);
        if (g == 0 && !half)
            run_op(r, r->tid_bw, bw,
                   OP("autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0",
                      "ScaledDotProductFlashAttentionBackward0",
                      "aten::_scaled_dot_product_flash_attention_backward"),
                   K_FLASH_BWD, gemm_ns(j, r, 5 * mb * S * S * h / tp), ceil_div(S, 128), (int64_t)mb * heads);
    }
    if (j->tp > 1)
        tp_launch(r, r->tid_bw, bw, (int64_t)(tok * h * 2));
}

static void st_bwd_end(const job *j, rank_st *r)
{
    const syn_config *c = j->c;
    double tok = (double)j->tokens, h = c->hidden, V = c->vocab / (double)j->tp;
    int64_t *bw = &r->bw_ns;
    run_op(r, r->tid_bw, bw, LNB, K_LN_BWD, mem_ns(j, r, 3 * tok * h * 2), (int64_t)tok, 1);
    add_grad(j, r, (int64_t)(2 * h * 2));
    run_op(r, r->tid_bw, bw,
           OP("autograd::engine::evaluate_function: EmbeddingBackward0", "EmbeddingBackward0",
              "aten::embedding_dense_backward"),
           K_EMBED_BWD, mem_ns(j, r, 3 * tok * h * 2), ceil_div(h, 32), 1);
    add_grad(j, r, (int64_t)(V * h * 2));
    if (r->bk_acc_bytes > 0 && j->dp > 1)
        launch_allreduce(r, r->tid_bw, bw, r->bk_acc_bytes, r->gpu_ns, r->dp_pg, NULL);
    r->cpu_ns = *bw + jit(r, 20000, 0.3); /* loss.backward() returns on the main thread */
}
#undef LNB
#undef MMB
#undef ADDMMB

/* Earliest common start of one collective over `n` ranks (member i is rank
 * first + i * stride), each arriving at its pending record's ready time or
 * when its stream is free; all end together. Returns the end. */
static int64_t sync_one(job *j, int first, int stride, int n, int tp_kind, size_t b, double gbps, int64_t lat)
{
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        rank_st *r = &j->r[first + i * stride];
        pend_coll *p = tp_kind ? &r->tp_pend : &r->pend[b];
        int64_t *free_ns = tp_kind ? &r->tp_comm_ns : &r->comm_ns;
        p->start_ns = CP_MAX(p->ready_ns, *free_ns);
        start = CP_MAX(start, p->start_ns);
    }
    rank_st *r0 = &j->r[first];
    double bytes = (double)(tp_kind ? r0->tp_pend.nelems : r0->pend[b].nelems) * 2;
    int64_t end = start + lat + (int64_t)llround(bytes * 2.0 * (n - 1) / n / gbps);
    for (int i = 0; i < n; i++) {
        rank_st *r = &j->r[first + i * stride];
        pend_coll *p = tp_kind ? &r->tp_pend : &r->pend[b];
        p->end_ns = end;
        if (tp_kind) {
            r->tp_comm_ns = end;
        } else {
            r->nccl_wait_ns += start - p->start_ns;
            r->comm_ns = end;
        }
    }
    return end;
}

/* Tensor-parallel all-reduce of every TP group: kernels written at once, and
 * the compute stream waits for them (the next op needs the reduced tensor). */
static void tp_sync(job *j)
{
    if (j->tp < 2)
        return;
    for (int g = 0; g < j->c->ranks / j->tp; g++) {
        sync_one(j, g * j->tp, 1, j->tp, 1, 0, j->c->nvlink_busbw_gbps, 12000);
        for (int i = 0; i < j->tp; i++) {
            rank_st *r = &j->r[g * j->tp + i];
            pend_coll *p = &r->tp_pend;
            put_kernel(r, K_NCCL, SYN_TP_STREAM, p->start_ns, p->end_ns - p->start_ns, p->corr, p->ext, 16, 1,
                       p->nelems, r->tp_pg);
            r->tp_kernel_ns += p->end_ns - p->start_ns;
            r->gpu_ns = CP_MAX(r->gpu_ns, p->end_ns);
        }
    }
}

/* Phase A for all ranks, then phase B: DDP buckets of each data-parallel
 * group end at the same instant on every member. */
static void step_compute_all(job *j, int step)
{
    const syn_config *c = j->c;
    int n = c->ranks;
    for (int i = 0; i < n; i++)
        st_begin(j, &j->r[i], step);
    for (int l = 0; l < c->layers; l++)
        for (int half = 0; half < 2; half++) {
            for (int i = 0; i < n; i++)
                st_fwd(j, &j->r[i], l, half);
            tp_sync(j);
        }
    for (int i = 0; i < n; i++)
        st_fwd_end(j, &j->r[i]);
    for (int l = c->layers - 1; l >= 0; l--)
        for (int half = 1; half >= 0; half--) {
            for (int i = 0; i < n; i++)
                st_bwd(j, &j->r[i], l, half);
            tp_sync(j);
        }
    for (int i = 0; i < n; i++)
        st_bwd_end(j, &j->r[i]);
    if (j->dp < 2)
        return;
    for (int t = 0; t < j->tp; t++)
        for (size_t b = 0; b < j->r[t].n_pend; b++)
            sync_one(j, t, j->tp, j->dp, 0, b, j->coll_gbps, j->nodes > 1 ? 25000 : 12000);
}

/* Phase C: NCCL kernels, optimizer, loss.item(), checkpoint, step annotation. */
static void step_finish(const job *j, rank_st *r, int step, int64_t step0, int64_t *cpu)
{
    const syn_config *c = j->c;
    int64_t tid = r->tid_main, bwd_end = r->gpu_ns;
    int64_t comm_first = r->n_pend ? r->pend[0].start_ns : -1, comm_last = r->n_pend ? r->pend[r->n_pend - 1].end_ns : -1;
    for (size_t b = 0; b < r->n_pend; b++) {
        pend_coll *p = &r->pend[b];
        put_kernel(r, K_NCCL, SYN_NCCL_STREAM, p->start_ns, p->end_ns - p->start_ns, p->corr, p->ext, 16, 1,
                   p->nelems, r->dp_pg);
        r->nccl_kernel_ns += p->end_ns - p->start_ns;
        r->gpu_ns = CP_MAX(r->gpu_ns, p->end_ns); /* DDP: compute stream waits for the buckets */
    }
    r->n_pend = 0;
    r->exposed_comm_ns += r->gpu_ns - bwd_end;

    int64_t opt0 = *cpu;
    r->first_gpu_opt = -1;
    *cpu += jit(r, 15000, 0.3);
    if (c->launch_bound > 0) {
        /* GradScaler's found_inf check syncs the host, then a non-foreach
         * optimizer launches one tiny kernel per op per small parameter */
        run_item(r, tid, cpu);
        for (int i = 0; i < c->launch_bound; i++) {
            run_op(r, tid, cpu, OP(i % 3 == 0 ? "aten::mul_" : i % 3 == 1 ? "aten::add_" : "aten::addcmul_"),
                   K_TINY, jit(r, 2300, 0.1), 8, 1);
            r->tiny_kernels++;
        }
    }
    double layer_params = 12.0 * c->hidden * c->hidden;
    for (int l = 0; l < c->layers; l++)
        run_op(r, tid, cpu, OP("aten::_fused_adamw_"), K_ADAM, mem_ns(j, r, layer_params * 22), 320, 1);
    int64_t opt_ext = put_cpu(r, "user_annotation", "Optimizer.step#AdamW.step", tid, opt0, *cpu - opt0);
    put_gpu_annotation(r, "Optimizer.step#AdamW.step", -1, SYN_COMPUTE_STREAM, r->first_gpu_opt, r->gpu_ns, opt_ext);
    put_cpu(r, "user_annotation", "Optimizer.zero_grad#AdamW.zero_grad", tid, *cpu, jit(r, 40000, 0.3));
    *cpu += jit(r, 60000, 0.3);
    run_item(r, tid, cpu); /* loss.item(): the host waits for the GPU */

    if (c->ckpt_s > 0 && (step + 1) % c->ckpt_every == 0) {
        int64_t k0 = *cpu, total = (int64_t)llround(c->ckpt_s * 1e9);
        *cpu += jit(r, 50000, 0.3);
        /* each rank copies its 1/world shard of the bf16 weights to the host
         * (a sharded save), then serialises and writes: the host is busy, the
         * GPU idles, and most of the time is the write (storage) */
        for (int l = 0; l < c->layers; l++)
            run_copy(r, tid, cpu, "Memcpy DtoH (Device -> Pageable)", (int64_t)(layer_params * 2 / c->ranks), 10.0,
                     1);
        int64_t w0 = *cpu, w1 = CP_MAX(w0 + 1000000, k0 + total - 20000);
        put_cpu(r, "python_function", "torch/serialization.py(628): save", tid, w0, w1 - w0);
        *cpu = w1 + jit(r, 20000, 0.3);
        put_cpu(r, "user_annotation", "checkpoint", tid, k0, *cpu - k0);
        r->ckpt_ns += *cpu - k0;
    }
    *cpu += jit(r, 30000, 0.3);
    int64_t step_ext = ++r->ext;
    syn_ev_x_num(&r->out, "user_annotation", "ProfilerStep#", step, r->pid, tid, T(r, step0), *cpu - step0);
    syn_arg_i(&r->out, "External id", step_ext, 1);
    syn_arg_i(&r->out, "Record function id", ++r->rfid, 0);
    syn_arg_i(&r->out, "Ev Idx", r->evidx++, 0);
    syn_ev_end(&r->out);
    put_gpu_annotation(r, "ProfilerStep#", step, SYN_COMPUTE_STREAM, r->first_gpu_step, r->gpu_ns, step_ext);
    if (comm_first >= 0)
        put_gpu_annotation(r, "ProfilerStep#", step, SYN_NCCL_STREAM, comm_first, comm_last, step_ext);
    r->step_sum_ns += *cpu - step0;
}

/* A group of n ranks start, start + stride, ... */
void syn_pg_init(pg_info *pg, const char *name, const char *desc, int start, int stride, int n)
{
    snprintf(pg->name, sizeof pg->name, "%s", name);
    pg->desc = desc;
    pg->size = n;
    pg->start = start;
    pg->stride = stride;
    cp_buf b = CP_BUF_INIT;
    cp_buf_putc(&b, '[');
    for (int i = 0; i < n; i++)
        cp_buf_printf(&b, i ? ", %d" : "%d", start + i * stride);
    cp_buf_putc(&b, ']');
    pg->ranks = b.data;
}

int syn_write_job(const syn_config *c, const char *dir, syn_result *res, cp_error *err)
{
    int rc = syn_config_check(c, err);
    if (rc)
        return rc;
    if ((rc = syn_prepare_dir(dir, c->force, err)))
        return rc;
    job j = { .c = c };
    j.nodes = (c->ranks + c->gpus_per_node - 1) / c->gpus_per_node;
    j.coll_gbps = j.nodes > 1 ? c->nic_busbw_gbps * (c->slow_network > 0 ? c->slow_network : 1.0)
                              : c->nvlink_busbw_gbps;
    j.tokens = (int64_t)c->micro_batch * c->seq_len;
    j.tp = c->tp;
    j.dp = c->ranks / c->tp;
    syn_pg_init(&j.world, "0", "default_pg", 0, 1, c->ranks);
    if (j.tp > 1) {
        int ntp = c->ranks / j.tp;
        j.tp_pgs = cp_xcalloc((size_t)ntp, sizeof *j.tp_pgs);
        j.dp_pgs = cp_xcalloc((size_t)j.tp, sizeof *j.dp_pgs);
        char name[16];
        for (int g = 0; g < ntp; g++) {
            snprintf(name, sizeof name, "%d", 1 + g);
            syn_pg_init(&j.tp_pgs[g], name, "mesh_tp", g * j.tp, 1, j.tp);
        }
        for (int t = 0; t < j.tp; t++) {
            snprintf(name, sizeof name, "%d", 1 + ntp + t);
            syn_pg_init(&j.dp_pgs[t], name, "mesh_dp", t, j.tp, j.dp);
        }
    }
    const char *ext = c->compress == SYN_GZIP ? ".gz" : c->compress == SYN_ZSTD ? ".zst" : "";
    j.r = cp_xcalloc((size_t)c->ranks, sizeof *j.r);
    int opened = 0;
    for (int i = 0; i < c->ranks && !rc; i++) {
        rank_st *r = &j.r[i];
        r->rank = i;
        r->dev = i % c->gpus_per_node;
        r->rng = c->seed * 0x2545f4914f6cdd1dULL + (uint64_t)i * 0x9e3779b97f4a7c15ULL + 1;
        r->pid = 2910249 + (int64_t)i * 1013;
        r->tid_main = r->pid;
        r->tid_bw = r->pid + 9503;
        r->shift_ns = SYN_ORIGIN_NS + jit(r, 40000, 1.0) - 40000; /* skew in [-40, 40] us */
        r->compute_factor = i == c->straggler_rank ? c->straggler_factor : 1.0;
        r->tp_pg = j.tp > 1 ? &j.tp_pgs[i / j.tp] : NULL;
        r->dp_pg = j.tp > 1 ? &j.dp_pgs[i % j.tp] : &j.world;
        r->cpu_ns = 1000000 + jit(r, 200000, 0.5);
        char path[4096];
        snprintf(path, sizeof path, "%s/rank-%d.json%s", dir, i, ext);
        rc = syn_out_open(&r->out, path, c->compress, c->force, err);
        if (!rc) {
            opened++;
            syn_put_header(&j, r);
        }
    }
    for (int s = 0; s < c->steps && !rc; s++) {
        int64_t *step0 = cp_xcalloc((size_t)c->ranks, sizeof *step0);
        for (int i = 0; i < c->ranks; i++)
            step0[i] = j.r[i].cpu_ns;
        step_compute_all(&j, s);
        for (int i = 0; i < c->ranks; i++)
            step_finish(&j, &j.r[i], s, step0[i], &j.r[i].cpu_ns);
        free(step0);
        for (int i = 0; i < c->ranks && !rc; i++)
            if (j.r[i].out.err.code) {
                if (err)
                    *err = j.r[i].out.err;
                rc = j.r[i].out.err.code;
            }
    }
    syn_result sum = { 0 };
    for (int i = 0; i < opened; i++) {
        rank_st *r = &j.r[i];
        char name[64]; /* the JSON's own name: same text whatever the compression */
        snprintf(name, sizeof name, "rank-%d.json", i);
        if (!rc)
            syn_put_footer(r, CP_MAX(r->cpu_ns, r->gpu_ns), name);
        sum.json_bytes += r->out.json_bytes + r->out.len;
        sum.events += r->out.events;
        cp_error e2;
        int rc2 = syn_out_close(&r->out, rc == 0, &e2);
        sum.file_bytes += r->out.file_bytes;
        if (rc2 && !rc) {
            rc = rc2;
            if (err)
                *err = e2;
        }
    }
    if (!rc)
        rc = syn_write_truth(&j, dir, ext, err);
    sum.mean_step_ns = c->steps ? j.r[0].step_sum_ns / c->steps : 0;
    if (res)
        *res = sum;
    for (int i = 0; i < c->ranks; i++)
        free(j.r[i].pend);
    free(j.r);
    free(j.world.ranks);
    for (int g = 0; j.tp_pgs && g < c->ranks / j.tp; g++)
        free(j.tp_pgs[g].ranks);
    for (int t = 0; j.dp_pgs && t < j.tp; t++)
        free(j.dp_pgs[t].ranks);
    free(j.tp_pgs);
    free(j.dp_pgs);
    return rc;
}
