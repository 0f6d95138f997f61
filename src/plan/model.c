/* model.c - the analytical training-step model (see model.h for the contract,
 * docs/METRICS.md "Performance model" for every formula with its source).
 *
 * Shape of the computation, for one pipeline stage and one micro-batch:
 *
 *   per layer, forward:  GEMMs (roofline per GEMM: max(FLOPs / (peak * eff),
 *                        bytes / HBM) + launch; FP8 GEMMs at the FP8 peak plus
 *                        the recipe's quantisation traffic), attention core
 *                        (fused: causal half of the score FLOPs at the
 *                        kernel's measured rate; unfused: full s^2 FLOPs plus
 *                        score-matrix traffic), elementwise traffic, and the
 *                        layer's collectives (model_comm.c: TP, CP, EP through
 *                        the collective cost model, model/collmodel.c);
 *   backward:            2x the GEMMs, attn_bwd_factor x attention, 2x the
 *                        elementwise traffic and the same collectives, plus the
 *                        recomputed forward when recomputation is on;
 *   step:                m micro-batches + Megatron-Core's interleaved 1F1B
 *                        bubble (p-1)/v stage-times, the exposed DP/ZeRO
 *                        traffic with the overlap windows its schedule gives,
 *                        optimizer, data stall, the amortized checkpoint and a
 *                        fixed per-step overhead.
 *
 * Why a roofline per GEMM rather than one efficiency factor: the same defaults
 * must cover h=2304 on one GPU and h=25600 split 8 ways, and small GEMMs are
 * bandwidth- and launch-bound; the roofline gets that from the hardware's own
 * HBM bandwidth instead of a fitted curve.
 */
#include "plan/model_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The one set of constants. Sources and reasoning in docs/METRICS.md. The
 * fitted ones (plan_calib's k_params: gemm_sustain, attn_frac, mem_eff,
 * overlap_cost, fp8_rel, kernel_s, ew_h_bytes, ew_eager_h_bytes,
 * net_train_eff, fsdp_overlap) hold the values `model --validate` fits on all
 * published sources from the documented priors, rounded (docs/MODEL.md
 * gives them with their leave-one-source-out spread). */
static const plan_defaults k_defaults = {
    .gemm_sustain = 0.91,
    .attn_frac = 0.45,           /* FA3 reaches 75 % of H100 peak at best (arXiv:2407.08608) */
    .mem_eff = 0.90,
    .overlap_cost = 0.35,
    .fp8_rel = 0.93,             /* cuBLASLt FP8 GEMM 1366/1979 on H200 and 2907/5000 on GB200 vs BF16 MAMF
                                    0.803/0.729 (Azure AI-benchmarking-guide, stas00 MAMF table) */
    .kernel_s = 14e-6,
    .ew_h_bytes = 33.0,
    .ew_eager_h_bytes = 74.0,
    .host_kernel_s = 10e-6,      /* PyTorch eager dispatch + cudaLaunchKernel, order of 10 us per op */
    .net_train_eff = 0.5,
    .gemm_eff_fallback = 0.80,   /* typical MAMF of recent NVIDIA parts */
    .attn_bwd_factor = 3.0,      /* flash backward: 2.5x the forward matmuls, at lower efficiency */
    .triton_fwd_slow = 1.4,      /* FA2 1.3-1.5x faster forward than FlashAttention in Triton, */
    .triton_bwd_slow = 2.0,      /* about 2x faster backward (arXiv:2307.08691 sec. 4.1) */
    .ew_f_bytes = 2.0,
    .score_bytes = 12.0,
    .fp8_cast_bytes = 4.0,       /* read bf16 (2) + write fp8 (1) + its transpose for the backward (1) */
    .fp8_block_gemm = 0.9,       /* software block scaling in the GEMM main loop */
    .power_exp = 0.75,
    .dp_overlap = 1.0,
    .fsdp_overlap = 0.92,
    .z3_prefetch_params = 5e7,
    .pp_p2p_exposed = 0.5,
    .moe_imbalance = 1.1,
    .step_overhead_s = 0.02,
    .storage_node_gbytes = 273.0 / 384.0, /* SC21 Sec 5.10: 273 GB/s over 384 DGX A100 */
    .ckpt_bytes_per_param = 14.0,         /* bf16 weights + fp32 master, Adam m, v */
    .overhead_bytes = 2.5e9,
    .hbm_usable = 0.96,
};

const plan_defaults *plan_defaults_get(void) { return &k_defaults; }

/* FlashAttention-2 forward, head dim 128 (64 on A100), batch 2, sequence
 * 8192, as a fraction of the dense BF16 peak: 179.5/312 (ND A100 v4),
 * 329.3/989.4 (ND H200 v5), 373.9/2500 (ND GB200 v6), all from
 * github:Azure/AI-benchmarking-guide Azure_Results. FA2 uses the Ampere
 * tensor-core path, which Hopper and Blackwell run at a fraction of their
 * peak. */
double plan_fa2_frac(const hw_gpu *gpu)
{
    switch (collm_arch(gpu)) {
    case COLLM_ARCH_AMPERE: return 179.5 / 312.0;
    case COLLM_ARCH_HOPPER: return 329.3 / 989.4;
    case COLLM_ARCH_BLACKWELL: return 373.9 / 2500.0;
    default: return 0;
    }
}

const char *plan_attn_name(plan_attn a)
{
    switch (a) {
    case PLAN_ATTN_UNFUSED: return "unfused";
    case PLAN_ATTN_FA2: return "fa2";
    case PLAN_ATTN_TRITON: return "triton";
    default: return "flash";
    }
}

void plan_inputs_init(plan_inputs *in)
{
    memset(in, 0, sizeof *in);
    in->tp = in->pp = in->cp = in->ep = in->vpp = 1;
    in->micro_batch = 1;
    in->recompute = PLAN_RC_NONE;
    in->attn = PLAN_ATTN_FLASH;
}

/* ---- shape helpers ---------------------------------------------------- */

void plan_dims(const plan_shape *m, dims *x)
{
    x->h = m->hidden;
    x->a = m->heads;
    x->kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
    x->d = m->head_dim > 0 ? m->head_dim : (m->heads > 0 ? x->h / x->a : 0);
    x->f = m->ffn_hidden > 0 ? m->ffn_hidden : 4.0 * x->h;
    x->fe = m->moe_ffn_hidden > 0 ? m->moe_ffn_hidden : x->f;
    x->s = m->seq;
    x->V = m->vocab;
    x->E = m->experts;
    x->k = m->experts > 0 ? (m->topk > 0 ? m->topk : 1) : 0;
    x->sh = m->experts > 0 ? m->shared_experts : 0;
    x->g = m->gated ? 3.0 : 2.0;
    x->attn_p = m->attn_params > 0 ? m->attn_params
                                   : x->h * x->a * x->d * 2.0 + 2.0 * x->h * x->kv * x->d;
    x->mlp_p = x->g * x->h * x->f;
    x->exp_p = x->g * x->h * x->fe;
    x->L = m->layers;
    x->Ld = m->experts > 0 ? (m->dense_layers < m->layers ? m->dense_layers : m->layers) : m->layers;
    x->Lm = x->L - x->Ld;
}

double plan_params_total(const plan_shape *m)
{
    dims x;
    plan_dims(m, &x);
    double layer_common = x.attn_p + 2.0 * x.h;
    double moe = x.E * x.exp_p + x.sh * x.exp_p + x.h * x.E;
    double emb = x.V * x.h * (m->tied_embeddings ? 1.0 : 2.0);
    return emb + x.L * layer_common + x.Ld * x.mlp_p + x.Lm * moe + x.h;
}

double plan_params_active(const plan_shape *m)
{
    dims x;
    plan_dims(m, &x);
    double layer_common = x.attn_p + 2.0 * x.h;
    double moe = (x.k + x.sh) * x.exp_p + x.h * x.E;
    double emb = x.V * x.h * (m->tied_embeddings ? 1.0 : 2.0);
    return emb + x.L * layer_common + x.Ld * x.mlp_p + x.Lm * moe + x.h;
}

double plan_flops_per_token_fwd(const plan_shape *m)
{
    dims x;
    plan_dims(m, &x);
    double attn = 2.0 * x.attn_p + 4.0 * x.s * x.a * x.d;
    double dense = 2.0 * x.mlp_p;
    double moe = 2.0 * (x.k + x.sh) * x.exp_p + 2.0 * x.h * x.E;
    return x.L * attn + x.Ld * dense + x.Lm * moe + 2.0 * x.h * x.V;
}

/* ---- memory (Korthikanti et al. 2022, generalised) -------------------- */

/* Activation bytes of one layer of one kind (dense MLP or MoE). */
static double act_bytes(const dims *x, int moe, double s, double b, int tp, bool sp, plan_recompute rc,
                        plan_attn attn)
{
    double t = tp > 0 ? tp : 1;
    if (rc == PLAN_RC_FULL) return 2.0 * s * b * x->h / (sp ? t : 1.0);
    /* per token, in bytes: attention block 7h + 4*kv*d (MHA: 11h), MLP
     * 3h + 2f(g-1) + 2f (GPT 4h MLP: 19h; MoE: f = (topk + shared) experts),
     * two layernorm inputs 4h. Replicated under TP without SP: the 10h of
     * layernorm inputs, QKV/FC1 inputs and dropout masks. */
    double ff = moe ? (x->k + x->sh) * x->fe : x->f;
    double mlp = 3.0 * x->h + 2.0 * ff * (x->g - 1.0) + 2.0 * ff;
    double total = 7.0 * x->h + 4.0 * x->kv * x->d + mlp + 4.0 * x->h;
    double repl = 10.0 * x->h;
    double per_tok = (sp ? repl / t : repl) + (total - repl) / t;
    if (attn == PLAN_ATTN_UNFUSED && rc == PLAN_RC_NONE) per_tok += 5.0 * x->a * s / t;
    return per_tok * s * b;
}

double plan_act_bytes_per_layer(const plan_shape *m, double s, double b, int tp, bool sp,
                                plan_recompute rc, plan_attn attn)
{
    dims x;
    plan_dims(m, &x);
    if (x.L <= 0) return 0;
    return (x.Ld * act_bytes(&x, 0, s, b, tp, sp, rc, attn) + x.Lm * act_bytes(&x, 1, s, b, tp, sp, rc, attn)) / x.L;
}


/* ---- the model -------------------------------------------------------- */


int plan_errf(char *err, int errsz, const char *fmt, ...)
{
    if (err && errsz > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, (size_t)errsz, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* One GEMM (m x k) . (k x n): roofline plus launch cost. FP8 GEMMs read
 * one-byte operands at the FP8 rate. */
static double gemm_s(const ctx *c, double m, double n, double kk)
{
    if (m <= 0 || n <= 0 || kk <= 0) return 0;
    double flops = 2.0 * m * n * kk;
    double ob = c->in->fp8 ? 1.0 : 2.0;
    double bytes = ob * (m * kk + kk * n) + 2.0 * m * n;
    double tc = flops / (c->peak_gemm * c->eff);
    double tm = bytes / (c->hbm_bw * c->k->mem_eff);
    return (tc > tm ? tc : tm) + c->k->kernel_s;
}

/* Quantisation traffic of FP8 GEMM inputs (elements per token) */
static double cast_s(const ctx *c, double T, double elems)
{
    if (!c->in->fp8 || elems <= 0) return 0;
    return T * elems * c->k->fp8_cast_bytes / (c->hbm_bw * c->k->mem_eff) + c->k->kernel_s;
}

/* The MoE MLP of one layer for T tokens of the micro-batch on this rank:
 * experts (parallel folding: EP x ETP over the TP x CP x DP ranks), shared
 * experts, router and token permutation. Adds GEMM time to *gemm. */
static double moe_mlp_s(const ctx *c, double T, double *gemm, double *bwd_cast)
{
    const dims *x = &c->x;
    const plan_inputs *in = c->in;
    double tp = in->tp, h = x->h, etp = c->etp;
    double ep = in->ep > 0 ? in->ep : 1;
    double E = x->E > 0 ? x->E : 1;
    double local = x->E / ep;
    /* token-expert pairs one ETP group computes, spread over its local experts */
    double me = T * x->k * etp * ep / (tp * E);
    double t = 0;
    for (int i = 0; i < 2; i++) { /* identical experts: time one, multiply */
        double one = i == 0 ? gemm_s(c, me, (x->g - 1.0) * x->fe / etp, h) : gemm_s(c, me, h, x->fe / etp);
        t += one * local * c->k->moe_imbalance; /* the step waits for the busiest expert GPU */
    }
    double tok = T * x->k / tp; /* routed token copies leaving this rank */
    t += cast_s(c, tok * etp, h + x->fe / etp);
    *bwd_cast += cast_s(c, tok * etp, (x->g - 1.0) * x->fe / etp + h);
    double sh = 0;
    if (x->sh > 0) {
        sh += gemm_s(c, T, (x->g - 1.0) * x->fe * x->sh / tp, h);
        sh += gemm_s(c, T, h, x->fe * x->sh / tp);
    }
    double router = gemm_s(c, T, x->E, h);
    *gemm += t + sh + router;
    /* permutation: copy each routed token into expert order and back */
    double perm = 4.0 * tok * h * 2.0 / (c->hbm_bw * c->k->mem_eff) + 4 * c->k->kernel_s;
    return t + sh + router + perm;
}

/* Forward work of one layer (dense or MoE) for one micro-batch of T tokens.
 * *attn_s gets the attention core, *bwd_cast the backward's quantisation. */
static void layer_fwd(const ctx *c, int moe, double T, pass_t *o, double *attn_s, double *bwd_cast)
{
    const plan_inputs *in = c->in;
    const dims *x = &c->x;
    double tp = in->tp, h = x->h;
    double t = 0, gemm = 0;
    *bwd_cast = 0;
    /* attention projections: QKV (n = q + 2 kv widths) and output */
    double qkv_n = (in->shape.attn_params > 0 ? x->attn_p / (2.0 * h) : x->a * x->d + 2.0 * x->kv * x->d);
    double o_k = (in->shape.attn_params > 0 ? x->attn_p / (2.0 * h) : x->a * x->d);
    gemm += gemm_s(c, T, qkv_n / tp, h) + gemm_s(c, T, h, o_k / tp);
    t += cast_s(c, T, h + o_k / tp);
    *bwd_cast += cast_s(c, T, qkv_n / tp + h);
    double act_elems;
    if (!moe) {
        gemm += gemm_s(c, T, (x->g - 1.0) * x->f / tp, h) + gemm_s(c, T, h, x->f / tp);
        t += cast_s(c, T, h + x->f / tp);
        *bwd_cast += cast_s(c, T, (x->g - 1.0) * x->f / tp + h);
        act_elems = x->g * x->f / tp;
    } else {
        double g2 = 0;
        t += moe_mlp_s(c, T, &g2, bwd_cast) - g2;
        gemm += g2;
        act_elems = x->g * x->fe * (x->k + x->sh) / tp;
    }
    t += gemm;
    /* attention core */
    double core_flops = 4.0 * T * x->s * x->a * x->d / tp;
    double ta;
    if (in->attn != PLAN_ATTN_UNFUSED) {
        ta = 0.5 * core_flops / c->attn_rate + 2 * c->k->kernel_s;
    } else {
        double score_bytes = c->k->score_bytes * T * x->s * x->a / tp; /* write, softmax r/w, dropout r/w, read */
        ta = core_flops / (c->peak * c->eff) + score_bytes / (c->hbm_bw * c->k->mem_eff) + 5 * c->k->kernel_s;
    }
    t += ta;
    *attn_s = ta;
    /* elementwise: norms, residual adds, dropout, rotary (replicated without SP) */
    double ewh = in->stack == PLAN_STACK_EAGER ? c->k->ew_eager_h_bytes : c->k->ew_h_bytes;
    double repl = ewh * h / (in->sp ? tp : 1.0);
    double ew_bytes = T * (repl + c->k->ew_f_bytes * act_elems);
    t += ew_bytes / (c->hbm_bw * c->k->mem_eff) + 8 * c->k->kernel_s;
    o->comp = t;
    o->gemm = gemm;
    plan_layer_comm(c, moe, T, ta, o);
}

/* Validate and resolve the layout into `eff` (degrees, batch). */
static int resolve_layout(const plan_inputs *in, plan_inputs *eff, int *nmb_out, char *err, int errsz)
{
    const plan_shape *m = &in->shape;
    int tp = in->tp > 0 ? in->tp : 1, pp = in->pp > 0 ? in->pp : 1, cp = in->cp > 0 ? in->cp : 1;
    int ep = in->ep > 0 ? in->ep : 1, vpp = in->vpp > 0 && pp > 1 ? in->vpp : 1;
    int etp = in->etp > 0 ? in->etp : tp;
    int gpus = in->gpus;
    int dp = in->dp;
    double mp = (double)tp * pp * cp; /* exact in double for the capped degrees */
    if (mp > (1 << 24) || (dp > 0 && mp * dp > (1 << 24)) || etp > (1 << 24))
        return plan_errf(err, errsz, "layout out of range (at most 2^24 GPUs, 2^28 sequences per step)");
    if (gpus <= 0 && dp > 0) gpus = tp * pp * cp * dp;
    if (gpus <= 0) return plan_errf(err, errsz, "number of gpus not given");
    if (gpus % (tp * pp * cp) != 0)
        return plan_errf(err, errsz, "gpus %d not divisible by tp*pp*cp = %d", gpus, tp * pp * cp);
    if (dp <= 0) dp = gpus / (tp * pp * cp);
    if (dp * tp * pp * cp != gpus)
        return plan_errf(err, errsz, "tp*pp*cp*dp = %d does not equal gpus %d", dp * tp * pp * cp, gpus);
    if (m->experts > 0 && (m->experts % ep != 0))
        return plan_errf(err, errsz, "experts %d not divisible by ep %d", m->experts, ep);
    if (ep > 1 && m->experts <= 0) return plan_errf(err, errsz, "ep %d needs an MoE model", ep);
    /* parallel folding: the expert grid ETP x EP x expert-DP reuses the
     * TP x CP x DP ranks of each pipeline stage */
    long long fold = (long long)tp * cp * dp;
    if (m->experts > 0 && fold % ((long long)ep * etp) != 0)
        return plan_errf(err, errsz, "ep %d x etp %d must divide tp*cp*dp = %lld (expert parallel folding)", ep, etp, fold);
    if (pp > m->layers) return plan_errf(err, errsz, "pp %d exceeds layers %d", pp, m->layers);
    /* Megatron-Core may count the embedding and the loss as pipeline layers
     * (account_for_embedding/loss_in_pipeline_split), so L + 2 chunks */
    if (vpp > 1 && (long long)pp * vpp > m->layers + 2)
        return plan_errf(err, errsz, "layers %d (+ embedding and loss) fewer than pp*vpp = %lld chunks", m->layers,
                    (long long)pp * vpp);
    if (m->seq % cp != 0) return plan_errf(err, errsz, "seq %d not divisible by cp %d", m->seq, cp);
    int mb = in->micro_batch > 0 ? in->micro_batch : 1;
    if ((long long)dp * mb > (1 << 28))
        return plan_errf(err, errsz, "layout out of range (at most 2^24 GPUs, 2^28 sequences per step)");
    int gb = in->global_batch > 0 ? in->global_batch : dp * mb;
    if (gb % (dp * mb) != 0)
        return plan_errf(err, errsz, "global batch %d not divisible by dp*micro_batch = %d", gb, dp * mb);
    if (in->fp8 && in->fp8_recipe == PLAN_FP8_MXFP8 && collm_arch(in->gpu) != COLLM_ARCH_BLACKWELL)
        return plan_errf(err, errsz, "MXFP8 needs Blackwell tensor cores (%s is not)", in->gpu->name);
    *eff = *in;
    eff->tp = tp, eff->pp = pp, eff->cp = cp, eff->ep = ep, eff->vpp = vpp, eff->etp = m->experts > 0 ? etp : 1;
    eff->dp = dp, eff->gpus = gpus, eff->micro_batch = mb, eff->global_batch = gb;
    if (tp == 1) eff->sp = false;
    if (eff->fsdp && eff->zero < 3) eff->zero = 3;
    *nmb_out = gb / (dp * mb);
    return 0;
}

static int check_ranges(const plan_inputs *in, char *err, int errsz)
{
    const plan_shape *m = &in->shape;
    if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->seq <= 0 || m->vocab <= 0)
        return plan_errf(err, errsz, "model shape incomplete: layers, hidden, heads, seq and vocab are required");
    if (m->hidden % m->heads != 0 && m->head_dim <= 0)
        return plan_errf(err, errsz, "hidden %d is not divisible by heads %d", m->hidden, m->heads);
    /* caps on what the caller controls: every product below stays far
     * inside int and double precision */
    if (m->layers > 100000 || m->hidden > 10000000 || m->heads > 100000 || m->seq > 100000000 ||
        m->vocab > 100000000 || m->experts > 100000 || m->ffn_hidden > 100000000 ||
        m->moe_ffn_hidden > 100000000 || m->kv_heads > 100000 || m->head_dim > 100000 || m->topk > 100000 ||
        m->shared_experts > 100000)
        return plan_errf(err, errsz, "model shape out of range");
    if (in->gpus > (1 << 24) || in->tp > (1 << 24) || in->pp > (1 << 24) || in->cp > (1 << 24) ||
        in->ep > (1 << 24) || in->vpp > (1 << 24) || in->dp > (1 << 24) || in->micro_batch > (1 << 24) ||
        in->global_batch > (1 << 28) || in->etp > (1 << 24))
        return plan_errf(err, errsz, "layout out of range (at most 2^24 GPUs, 2^28 sequences per step)");
    if (in->gpus_per_node > 65536 || in->nics_per_node > 65536 || in->recompute_layers > 100000 ||
        in->act_offload_layers > 100000 || in->act_offload_layers < 0)
        return plan_errf(err, errsz, "node design out of range (at most 65536 GPUs or NICs per node)");
    if (in->grad_reduce_bytes < 0 || in->grad_reduce_bytes > 8)
        return plan_errf(err, errsz, "gradient reduction bytes must be 0 (fp32) .. 8");
    const double knobs[] = {in->hbm_bytes, in->power_w, in->nic_gbit_s, in->nvlink_gbytes, in->storage_gbytes,
                            in->net_efficiency, in->gemm_efficiency, in->ckpt_every_s, in->data_stall_ms};
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
        if (!isfinite(knobs[i]) || knobs[i] < 0 || knobs[i] > 1e15)
            return plan_errf(err, errsz, "a hardware or job setting is negative, infinite or absurdly large");
    if (in->net_efficiency > 1 || in->gemm_efficiency > 1)
        return plan_errf(err, errsz, "efficiencies are fractions of 1");
    return 0;
}

/* Peaks, efficiencies and link rates of the hardware into c. */
static int setup_hw(ctx *c, char *err, int errsz)
{
    const plan_inputs *in = c->in;
    const hw_gpu *gpu = in->gpu;
    c->peak = gpu->bf16_tflops > 0 ? gpu->bf16_tflops * 1e12 : gpu->fp16_tflops * 1e12;
    if (c->peak <= 0) return plan_errf(err, errsz, "gpu %s has no 16-bit tensor peak", gpu->name);
    /* a board power limit below TDP lowers the sustained tensor clock
     * (DVFS: power ~ f * V^2 with V partly tracking f); HBM is unaffected */
    double clock = 1.0;
    if (in->power_w > 0 && gpu->tdp_w > 0 && in->power_w < gpu->tdp_w)
        clock = pow(in->power_w / gpu->tdp_w, c->k->power_exp);
    c->peak *= clock;
    c->peak_gemm = c->peak;
    if (in->fp8) {
        if (gpu->fp8_tflops <= 0) return plan_errf(err, errsz, "gpu %s does not support fp8", gpu->name);
        c->peak_gemm = gpu->fp8_tflops * 1e12 * clock * c->k->fp8_rel *
                       (in->fp8_recipe == PLAN_FP8_BLOCK ? c->k->fp8_block_gemm : 1.0);
    }
    c->eff = in->gemm_efficiency > 0
                 ? in->gemm_efficiency
                 : (gpu->mamf_frac > 0 ? gpu->mamf_frac : c->k->gemm_eff_fallback) * c->k->gemm_sustain;
    double fa2 = plan_fa2_frac(gpu);
    double frac = (in->attn == PLAN_ATTN_FA2 || in->attn == PLAN_ATTN_TRITON) && fa2 > 0 ? fa2 : c->k->attn_frac;
    if (collm_arch(gpu) == COLLM_ARCH_AMPERE && fa2 > 0) frac = fa2; /* FA2 is Ampere's own kernel */
    c->attn_rate = c->peak * frac / (in->attn == PLAN_ATTN_TRITON ? c->k->triton_fwd_slow : 1.0);
    c->hbm_bw = gpu->hbm_gbps * 1e9;
    c->arch = collm_arch(gpu);
    c->gpn = in->gpus_per_node > 0 ? in->gpus_per_node : gpu->gpus_per_node;
    c->domain = gpu->scaleup_domain > c->gpn ? gpu->scaleup_domain : c->gpn;
    if (in->gpus_per_node > 0 && gpu->scaleup_domain <= gpu->gpus_per_node) c->domain = c->gpn;
    double nvl = in->nvlink_gbytes > 0 ? in->nvlink_gbytes : gpu->scaleup_gbps;
    if (nvl <= 0) nvl = gpu->pcie_gbps > 0 ? gpu->pcie_gbps : 16;
    c->nvl_bw = nvl * 1e9;
    int nics = in->nics_per_node > 0 ? in->nics_per_node : gpu->nics_per_node;
    double nic_gbit_s = in->nic_gbit_s > 0 ? in->nic_gbit_s : gpu->nic_gbit_s;
    c->nic_bw_gpu = nics * nic_gbit_s / 8.0 * 1e9 / c->gpn;
    if (c->nic_bw_gpu <= 0) return plan_errf(err, errsz, "no scale-out bandwidth (nics x gbps)");
    c->pcie_bw = (gpu->pcie_gbps > 0 ? gpu->pcie_gbps : 32) * 1e9 * 0.8;
    return 0;
}

/* One layer forward and backward averaged over dense and MoE layers. */
typedef struct layer_t {
    pass_t f, b;
    double attn, bwd_cast;
} layer_t;

static void layer_avg(const ctx *c, double T, double rfrac, layer_t *L)
{
    const dims *x = &c->x;
    const plan_inputs *in = c->in;
    pass_t fd = {0}, fm = {0};
    double ad = 0, am = 0, cd = 0, cm = 0;
    if (x->Ld > 0) layer_fwd(c, 0, T, &fd, &ad, &cd);
    if (x->Lm > 0) layer_fwd(c, 1, T, &fm, &am, &cm);
    double wd = (double)x->Ld / x->L, wm = (double)x->Lm / x->L;
    L->attn = wd * ad + wm * am;
    L->bwd_cast = wd * cd + wm * cm;
    L->f.comp = wd * fd.comp + wm * fm.comp;
    L->f.gemm = wd * fd.gemm + wm * fm.gemm;
    L->f.tp = wd * fd.tp + wm * fm.tp;
    L->f.cp = wd * fd.cp + wm * fm.cp;
    L->f.ep = wd * fd.ep + wm * fm.ep;
    /* backward: GEMMs and elementwise 2x (data and weight gradients),
     * attention attn_bwd_factor x, the gradients' quantisation */
    double bwd_attn = in->attn == PLAN_ATTN_UNFUSED ? 2.0
                      : in->attn == PLAN_ATTN_TRITON
                          ? c->k->attn_bwd_factor * c->k->triton_bwd_slow / c->k->triton_fwd_slow
                          : c->k->attn_bwd_factor;
    L->b.comp = 2.0 * (L->f.comp - L->attn) + bwd_attn * L->attn + L->bwd_cast;
    L->b.gemm = 2.0 * L->f.gemm;
    L->b.tp = L->f.tp, L->b.cp = 2.0 * L->f.cp, L->b.ep = L->f.ep;
    /* recompute adds to the backward pass */
    L->b.comp += rfrac * L->f.comp;
    L->b.gemm += rfrac * L->f.gemm;
    L->b.tp += rfrac * L->f.tp;
    L->b.cp += rfrac * L->f.cp;
    L->b.ep += rfrac * L->f.ep;
    if (in->recompute == PLAN_RC_SELECTIVE) L->b.comp += L->attn;
    /* the host issues every kernel: a layer pass is never shorter than its
     * launches (small micro-batches of small models are launch-bound) */
    double nk = 4 + 2 + (in->stack == PLAN_STACK_EAGER ? 20 : 8) + (x->Lm > 0 ? 6.0 * x->Lm / x->L : 0) +
                (in->fp8 ? 4 : 0) + (in->zero >= 3 ? 10 : 0);
    double hf = nk * c->k->host_kernel_s, hb = 2.0 * nk * c->k->host_kernel_s * (1.0 + rfrac / 2);
    if (L->f.comp < hf) L->f.comp = hf;
    if (L->b.comp < hb) L->b.comp = hb;
}

/* TP collectives pipelined with the GEMMs (TE userbuffers) leave exposed
 * what the GEMMs cannot cover, plus the cost of sharing the SMs. */
static double tp_exposed(const ctx *c, double tp, double gemm)
{
    if (!c->in->tp_overlap || tp <= 0) return tp;
    double hidden = tp < gemm ? tp : gemm;
    return tp - hidden + c->k->overlap_cost * hidden;
}

/* Host offload of activations: D2H in the forward, H2D in the backward,
 * overlapped with the layer's own compute. */
static double offload_s(const ctx *c, double layer_act_bytes, double layer_comp)
{
    double x = layer_act_bytes / c->pcie_bw;
    return x > layer_comp ? x - layer_comp : c->k->overlap_cost * x;
}

int plan_model(const plan_inputs *in_arg, plan_result *out, char *err, int errsz)
{
    ctx c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    c.k = in_arg->k ? in_arg->k : &k_defaults;
    if (!in_arg->gpu) return plan_errf(err, errsz, "no gpu given");
    if (check_ranges(in_arg, err, errsz) < 0) return -1;
    plan_inputs eff_in;
    int nmb = 1;
    if (resolve_layout(in_arg, &eff_in, &nmb, err, errsz) < 0) return -1;
    const plan_inputs *in = &eff_in;
    const plan_shape *m = &in->shape;
    c.in = in;
    c.etp = in->etp;
    plan_dims(m, &c.x);
    if (setup_hw(&c, err, errsz) < 0) return -1;
    int tp = in->tp, pp = in->pp, cp = in->cp, dp = in->dp, vpp = in->vpp, gpus = in->gpus;
    int mb = in->micro_batch, gb = in->global_batch;

    /* ---- per micro-batch, per layer ---- */
    double T = (double)mb * m->seq / cp;
    int Ls = (m->layers + pp - 1) / pp;
    int rl = 0; /* layers per stage fully recomputed */
    if (in->recompute == PLAN_RC_FULL) rl = in->recompute_layers > 0 && in->recompute_layers < Ls ? in->recompute_layers : Ls;
    double rfrac = Ls > 0 ? (double)rl / Ls : 0;
    layer_t L;
    layer_avg(&c, T, rfrac, &L);

    /* logits + loss on the last stage; embedding lookup negligible */
    double lg_f = gemm_s(&c, T, c.x.V / tp, c.x.h) + 3.0 * T * c.x.V / tp * 4.0 / (c.hbm_bw * c.k->mem_eff);
    double lg_b = 2.0 * gemm_s(&c, T, c.x.V / tp, c.x.h) + 2.0 * T * c.x.V / tp * 4.0 / (c.hbm_bw * c.k->mem_eff);
    double lg_tp = tp > 1 ? 2.0 * plan_group_coll_s(&c, COLL_ALL_REDUCE, 2.0 * T * c.x.h, tp, 1) : 0;

    double st_comp = Ls * (L.f.comp + L.b.comp) + lg_f + lg_b;
    double st_tp = Ls * (tp_exposed(&c, L.f.tp, L.f.gemm) + tp_exposed(&c, L.b.tp, L.b.gemm)) + lg_tp;
    double st_cp = Ls * (L.f.cp + L.b.cp);
    double st_ep = Ls * (L.f.ep + L.b.ep);
    double st_off = 0;
    if (in->act_offload_layers > 0) {
        int ol = in->act_offload_layers < Ls ? in->act_offload_layers : Ls;
        plan_recompute kept = in->recompute == PLAN_RC_SELECTIVE ? PLAN_RC_SELECTIVE : PLAN_RC_NONE;
        double act = plan_act_bytes_per_layer(m, T / mb, mb, tp, in->sp, kept, in->attn);
        st_off = ol * (offload_s(&c, act, L.f.comp) + offload_s(&c, act, L.b.comp));
    }
    double t_mb = st_comp + st_tp + st_cp + st_ep + st_off;

    plan_breakdown *bd = &out->breakdown;
    bd->compute_s = nmb * (st_comp + st_off);
    bd->tp_comm_s = nmb * st_tp;
    bd->cp_comm_s = nmb * st_cp;
    bd->ep_comm_s = nmb * st_ep;
    /* Megatron-Core's interleaved 1F1B: the fill and drain take (p-1)
     * chunk-steps of one v-th of a stage each */
    bd->pp_bubble_s = pp > 1 ? (double)(pp - 1) / vpp * t_mb : 0;

    stage st = {0};
    st.Ls = Ls, st.rl = rl, st.nmb = nmb, st.st_comp = st_comp;
    st.mb_fwd = Ls * L.f.comp + lg_f;
    st.mb_bwd = Ls * L.b.comp + lg_b;
    bd->pp_p2p_s = plan_pp_p2p(&c, &st, T);
    /* parameters of the stage that holds the most (the first: embedding) */
    {
        const dims *x = &c.x;
        double fd = (double)x->Ld / x->L, fm = (double)x->Lm / x->L;
        double layer_dense = x->attn_p + 2 * x->h + x->mlp_p;
        double layer_moe = x->attn_p + 2 * x->h + x->sh * x->exp_p + x->h * x->E;
        double emb = x->V * x->h;
        st.stage_dense = Ls * (fd * layer_dense + fm * layer_moe);
        double emb_stage = pp == 1 ? emb * (m->tied_embeddings ? 1 : 2) : emb;
        st.P_dense = (st.stage_dense + emb_stage) / tp;
        st.P_exp = Ls * fm * x->E * x->exp_p / ((double)in->etp * in->ep);
        st.dp_dense = (double)dp * cp;
        st.dp_exp = (double)tp * cp * dp / ((double)in->etp * in->ep);
    }
    bd->dp_comm_s = plan_dp_traffic(&c, &st);

    /* ---- optimizer (memory-bound Adam over the local shard) ---- */
    double P_opt = st.P_dense / (in->zero >= 1 ? st.dp_dense : 1) + st.P_exp / (in->zero >= 1 ? st.dp_exp : 1);
    if (in->offload)
        bd->optimizer_s = P_opt * 6.0 / c.pcie_bw + P_opt * 32.0 / 50e9; /* grads/params over PCIe, CPU Adam */
    else
        bd->optimizer_s = P_opt * 32.0 / (c.hbm_bw * c.k->mem_eff);
    bd->optimizer_s += c.k->step_overhead_s;
    bd->data_s = in->data_stall_ms > 0 ? in->data_stall_ms / 1000.0 : 0;

    double base = bd->compute_s + bd->tp_comm_s + bd->cp_comm_s + bd->pp_bubble_s + bd->pp_p2p_s +
                  bd->dp_comm_s + bd->ep_comm_s + bd->optimizer_s + bd->data_s;

    /* ---- checkpoint, amortized over the steps between two saves ---- */
    out->ckpt_bytes = plan_params_total(m) * c.k->ckpt_bytes_per_param;
    int nodes = (gpus + c.gpn - 1) / c.gpn;
    out->storage_gbytes = in->storage_gbytes > 0 ? in->storage_gbytes : c.k->storage_node_gbytes * nodes;
    if (in->ckpt_every_s > 0) {
        /* sync: the whole state to storage; async: only the device-to-host
         * snapshot of this GPU's share blocks training */
        double block = in->ckpt_async ? out->ckpt_bytes / gpus / c.pcie_bw : out->ckpt_bytes / (out->storage_gbytes * 1e9);
        bd->checkpoint_s = block * base / in->ckpt_every_s;
    }
    out->step_time_s = base + bd->checkpoint_s;

    /* ---- throughput, MFU, HFU ---- */
    double tokens = (double)gb * m->seq;
    double fpt = plan_flops_per_token_fwd(m);
    out->model_flops_per_step = 3.0 * fpt * tokens;
    double layer_fwd_tok = fpt - 2.0 * c.x.h * c.x.V;
    double hw = out->model_flops_per_step + rfrac * layer_fwd_tok * tokens;
    if (in->recompute == PLAN_RC_SELECTIVE) hw += 4.0 * c.x.s * c.x.a * c.x.d * c.x.L * tokens;
    out->hw_flops_per_step = hw;
    out->tokens_per_s = tokens / out->step_time_s;
    out->tflops_per_gpu = out->model_flops_per_step / out->step_time_s / gpus / 1e12;
    double clock = c.peak / (in->gpu->bf16_tflops > 0 ? in->gpu->bf16_tflops * 1e12 : in->gpu->fp16_tflops * 1e12);
    double label_peak = c.peak / clock;
    out->peak_tflops = label_peak / 1e12;
    out->mfu = out->model_flops_per_step / (out->step_time_s * gpus * label_peak);
    out->hfu = hw / (out->step_time_s * gpus * label_peak);

    plan_fill_memory(&c, &st, P_opt, T, &out->memory);

    out->tp = tp, out->pp = pp, out->dp = dp, out->cp = cp, out->ep = in->ep, out->etp = in->etp, out->vpp = vpp;
    out->micro_batch = mb, out->global_batch = gb, out->microbatches = nmb;
    out->params_total = plan_params_total(m);
    out->params_active = plan_params_active(m);
    out->gemm_eff = c.eff;
    out->attn_tflops = c.attn_rate / 1e12;
    out->net_gbytes_per_gpu = c.nic_bw_gpu / 1e9;
    out->nvlink_gbytes = c.nvl_bw / 1e9;
    return 0;
}
