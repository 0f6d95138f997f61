/* model.c - the analytical training-step model (see model.h for the contract,
 * docs/METRICS.md "Performance model" for every formula with its source).
 *
 * Shape of the computation, for one pipeline stage and one micro-batch:
 *
 *   per layer, forward:  GEMMs (roofline per GEMM: max(FLOPs / (peak * eff),
 *                        bytes / HBM) + launch), attention core (flash: causal
 *                        half of the score FLOPs at attn_eff; unfused: full
 *                        s^2 FLOPs plus score-matrix traffic), elementwise
 *                        traffic, TP all-reduces, CP ring exchange (hidden
 *                        behind attention when it can be), EP all-to-alls;
 *   backward:            2x the GEMMs, attn_bwd_factor x attention, 2x the
 *                        elementwise traffic and the same collectives, plus the
 *                        recomputed forward when recomputation is on;
 *   step:                (m + (p-1)/v) stage times (1F1B / interleaved), the
 *                        exposed DP/ZeRO traffic, optimizer, data stall, the
 *                        amortized checkpoint and a fixed per-step overhead.
 *
 * Why a roofline per GEMM rather than one efficiency factor: the same defaults
 * must cover h=2304 on one GPU and h=25600 split 8 ways, and small GEMMs are
 * bandwidth- and launch-bound; the roofline gets that from the hardware's own
 * HBM bandwidth instead of a fitted curve.
 */
#include "plan/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The one set of constants. Sources and reasoning in docs/METRICS.md. */
static const plan_defaults k_defaults = {
    .gemm_eff_fallback = 0.80,   /* typical MAMF of recent NVIDIA parts */
    .gemm_sustain = 0.95,
    .attn_eff = 0.35,
    .attn_bwd_factor = 3.0,      /* FA2 backward: 2.5x the forward matmuls, at lower efficiency */
    .mem_eff = 0.80,
    .nvlink_eff = HW_SCALEUP_BUSBW_FRAC, /* 8xA100 busbw 234.9/300, 8xH200 367.6/450 */
    .net_eff = HW_NET_BUSBW_FRAC,       /* ~24 GB/s per 200G HDR NIC (NCCL maintainer) / 25 */
    .a2a_eff = 0.60,
    .lat_intra_s = 5e-6,
    .lat_inter_s = 25e-6,
    .kernel_s = 10e-6,
    .ew_h_bytes = 60.0,
    .ew_f_bytes = 2.0,
    .score_bytes = 12.0,
    .fp8_speedup_cap = 1.6,
    .power_exp = 0.75,
    .dp_overlap = 1.0,
    .fsdp_overlap = 0.5,
    .z3_prefetch_params = 5e7,
    .pp_p2p_exposed = 0.5,
    .overlap_cost = 0.2,
    .moe_imbalance = 1.1,
    .step_overhead_s = 0.02,
    .storage_node_gbytes = 273.0 / 384.0, /* SC21 Sec 5.10: 273 GB/s over 384 DGX A100 */
    .ckpt_bytes_per_param = 14.0,         /* bf16 weights + fp32 master, Adam m, v */
    .overhead_bytes = 2.5e9,
    .hbm_usable = 0.96,
};

const plan_defaults *plan_defaults_get(void) { return &k_defaults; }


void plan_inputs_init(plan_inputs *in)
{
    memset(in, 0, sizeof *in);
    in->tp = in->pp = in->cp = in->ep = in->vpp = 1;
    in->micro_batch = 1;
    in->recompute = PLAN_RC_NONE;
    in->attn = PLAN_ATTN_FLASH;
}

/* ---- shape helpers ---------------------------------------------------- */

typedef struct dims {
    double h, a, kv, d, f, fe, s, V, E, k, sh, g; /* g = matrices per MLP */
    double attn_p, mlp_p, exp_p;                 /* params: attention, dense MLP, one expert */
    int L, Ld, Lm;                               /* layers, dense, MoE */
} dims;

static void get_dims(const plan_shape *m, dims *x)
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
    get_dims(m, &x);
    double layer_common = x.attn_p + 2.0 * x.h;
    double moe = x.E * x.exp_p + x.sh * x.exp_p + x.h * x.E;
    double emb = x.V * x.h * (m->tied_embeddings ? 1.0 : 2.0);
    return emb + x.L * layer_common + x.Ld * x.mlp_p + x.Lm * moe + x.h;
}

double plan_params_active(const plan_shape *m)
{
    dims x;
    get_dims(m, &x);
    double layer_common = x.attn_p + 2.0 * x.h;
    double moe = (x.k + x.sh) * x.exp_p + x.h * x.E;
    double emb = x.V * x.h * (m->tied_embeddings ? 1.0 : 2.0);
    return emb + x.L * layer_common + x.Ld * x.mlp_p + x.Lm * moe + x.h;
}

double plan_flops_per_token_fwd(const plan_shape *m)
{
    dims x;
    get_dims(m, &x);
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
    get_dims(m, &x);
    if (x.L <= 0) return 0;
    return (x.Ld * act_bytes(&x, 0, s, b, tp, sp, rc, attn) + x.Lm * act_bytes(&x, 1, s, b, tp, sp, rc, attn)) / x.L;
}

/* ---- collectives ------------------------------------------------------ */

double plan_allreduce_s(double bytes, int n, double bw, double lat)
{
    if (n <= 1 || bytes <= 0) return 0;
    double ring = 2.0 * (n - 1) / n * bytes / bw + 2.0 * (n - 1) * lat;
    double tree = 2.0 * bytes / bw + 2.0 * ceil(log2((double)n)) * lat;
    return ring < tree ? ring : tree;
}

double plan_allgather_s(double bytes, int n, double bw, double lat)
{
    if (n <= 1 || bytes <= 0) return 0;
    return (double)(n - 1) / n * bytes / bw + (n - 1) * lat;
}

/* ---- the model -------------------------------------------------------- */

typedef struct ctx {
    const plan_inputs *in;
    const plan_defaults *k;
    dims x;
    double peak, peak_gemm, eff, hbm_bw;
    double nvl_bw, nic_bw_gpu; /* bytes/s, line rate */
    int domain, gpn;
} ctx;

__attribute__((format(printf, 3, 4))) static int fail(char *err, int errsz, const char *fmt, ...)
{
    if (err && errsz > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, (size_t)errsz, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* One GEMM (m x k) . (k x n): roofline plus launch cost. */
static double gemm_s(const ctx *c, double m, double n, double kk)
{
    if (m <= 0 || n <= 0 || kk <= 0) return 0;
    double flops = 2.0 * m * n * kk;
    double bytes = 2.0 * (m * kk + kk * n + m * n);
    double tc = flops / (c->peak_gemm * c->eff);
    double tm = bytes / (c->hbm_bw * c->k->mem_eff);
    return (tc > tm ? tc : tm) + c->k->kernel_s;
}

/* Bandwidth (bytes/s, after efficiency) of a group of n ranks laid out with
 * `stride` consecutive ranks between members; g = members per node. */
static double group_bw(const ctx *c, int n, int stride, int *inter)
{
    int per_node = c->gpn / (stride > 0 ? stride : 1);
    if (per_node < 1) per_node = 1;
    int dom = c->domain / (stride > 0 ? stride : 1);
    if (n <= dom && c->domain >= n * stride) {
        *inter = 0;
        return c->nvl_bw * c->k->nvlink_eff;
    }
    *inter = 1;
    int g = per_node < n ? per_node : n;
    double eff = c->in->net_efficiency > 0 ? c->in->net_efficiency : c->k->net_eff;
    return g * c->nic_bw_gpu * eff;
}

typedef struct pass_t {
    double comp, tp, cp, ep;
} pass_t;

/* Forward work of one layer (dense or MoE) for one micro-batch of T tokens. */
static void layer_fwd(const ctx *c, int moe, double T, pass_t *o, double *attn_s)
{
    const plan_inputs *in = c->in;
    const dims *x = &c->x;
    double tp = in->tp, h = x->h;
    double t = 0;
    /* attention projections: QKV (n = q + 2 kv widths) and output */
    double qkv_n = (in->shape.attn_params > 0 ? x->attn_p / (2.0 * h) : x->a * x->d + 2.0 * x->kv * x->d);
    double o_k = (in->shape.attn_params > 0 ? x->attn_p / (2.0 * h) : x->a * x->d);
    t += gemm_s(c, T, qkv_n / tp, h);
    t += gemm_s(c, T, h, o_k / tp);
    /* MLP */
    double act_elems;
    if (!moe) {
        t += gemm_s(c, T, (x->g - 1.0) * x->f / tp, h);
        t += gemm_s(c, T, h, x->f / tp);
        act_elems = x->g * x->f / tp;
    } else {
        double ep = in->ep > 0 ? in->ep : 1;
        double local = x->E / ep;
        double me = T * x->k * ep / (x->E > 0 ? x->E : 1); /* tokens per local expert */
        for (int i = 0; i < 2; i++) { /* identical experts: time one, multiply */
            double one = i == 0 ? gemm_s(c, me, (x->g - 1.0) * x->fe / tp, h)
                                : gemm_s(c, me, h, x->fe / tp);
            /* the step waits for the busiest expert GPU */
            t += one * local * c->k->moe_imbalance;
        }
        /* token permutation: copy each routed token copy into expert order
         * and back (read + write, in and out) */
        t += 4.0 * T * x->k * h * 2.0 / tp / (c->hbm_bw * c->k->mem_eff) + 4 * c->k->kernel_s;
        if (x->sh > 0) {
            t += gemm_s(c, T, (x->g - 1.0) * x->fe * x->sh / tp, h);
            t += gemm_s(c, T, h, x->fe * x->sh / tp);
        }
        t += gemm_s(c, T, x->E, h); /* router */
        act_elems = x->g * x->fe * (x->k + x->sh) / tp;
    }
    /* attention core */
    double core_flops = 4.0 * T * x->s * x->a * x->d / tp;
    double ta;
    if (in->attn == PLAN_ATTN_FLASH) {
        ta = 0.5 * core_flops / (c->peak * c->eff * c->k->attn_eff) + 2 * c->k->kernel_s;
    } else {
        double score_bytes = c->k->score_bytes * T * x->s * x->a / tp; /* write, softmax r/w, dropout r/w, read */
        ta = core_flops / (c->peak * c->eff) + score_bytes / (c->hbm_bw * c->k->mem_eff) +
             5 * c->k->kernel_s;
    }
    t += ta;
    *attn_s = ta;
    /* elementwise: norms, residual adds, dropout, rotary (replicated without SP) */
    double repl = c->k->ew_h_bytes * h / (in->sp ? tp : 1.0);
    double ew_bytes = T * (repl + c->k->ew_f_bytes * act_elems);
    t += ew_bytes / (c->hbm_bw * c->k->mem_eff) + 8 * c->k->kernel_s;
    o->comp = t;
    /* TP: two all-reduces (or AG+RS under SP) of the layer activations */
    o->tp = 0;
    if (in->tp > 1) {
        int inter;
        double bw = group_bw(c, in->tp, 1, &inter);
        double lat = inter ? c->k->lat_inter_s : c->k->lat_intra_s;
        o->tp = 2.0 * plan_allreduce_s(2.0 * T * h, in->tp, bw, lat);
    }
    /* CP: ring exchange of K and V chunks, overlapped with attention */
    o->cp = 0;
    if (in->cp > 1) {
        int inter;
        double bw = group_bw(c, in->cp, in->tp, &inter);
        double lat = inter ? c->k->lat_inter_s : c->k->lat_intra_s;
        double bytes = (in->cp - 1) * (2.0 * T * 2.0 * x->kv * x->d / tp);
        double comm = bytes / bw + (in->cp - 1) * lat;
        /* ring attention runs one attention kernel and one exchange per
         * step; the extra launches and syncs are not hidden */
        o->cp = (comm > ta ? comm - ta : 0) + 2.0 * (in->cp - 1) * c->k->kernel_s;
    }
    /* EP: dispatch + combine all-to-all of topk token copies */
    o->ep = 0;
    if (moe && in->ep > 1) {
        int inter;
        double bw = group_bw(c, in->ep, in->tp * in->cp, &inter);
        double lat = inter ? c->k->lat_inter_s : c->k->lat_intra_s;
        double bytes = 2.0 * T * x->k * h * 2.0 / tp * (in->ep - 1) / in->ep;
        o->ep = bytes / (bw * c->k->a2a_eff) + 2.0 * (in->ep - 1) * lat;
    }
}

/* What the step-level accounting needs to know about the slowest stage. */
typedef struct stage {
    int Ls, rl, nmb;           /* layers per stage, of them recomputed, micro-batches */
    double st_comp;            /* compute of one micro-batch on the stage */
    double last_bwd;           /* backward of the last micro-batch (hides DP traffic) */
    double stage_dense;        /* non-expert parameters of the stage's layers */
    double P_dense, P_exp;     /* parameters per GPU: non-expert (incl. embeddings), expert */
    double dp_dense, dp_exp;   /* sharding degrees: DP*CP, and DP*CP/EP for experts */
} stage;

static void stage_params(const ctx *c, stage *st)
{
    const dims *x = &c->x;
    const plan_inputs *in = c->in;
    double fd = (double)x->Ld / x->L, fm = (double)x->Lm / x->L;
    double layer_dense = x->attn_p + 2 * x->h + x->mlp_p;
    double layer_moe = x->attn_p + 2 * x->h + x->sh * x->exp_p + x->h * x->E;
    double emb = x->V * x->h;
    st->stage_dense = st->Ls * (fd * layer_dense + fm * layer_moe);
    /* the first stage holds the embedding; with one stage the output layer too */
    double emb_stage = in->pp == 1 ? emb * (in->shape.tied_embeddings ? 1 : 2) : emb;
    st->P_dense = (st->stage_dense + emb_stage) / in->tp;
    st->P_exp = st->Ls * fm * x->E * x->exp_p / (in->tp * in->ep);
    st->dp_dense = (double)in->dp * in->cp;
    st->dp_exp = (double)in->dp * in->cp / in->ep;
}

/* Exposed data-parallel / ZeRO traffic per step. */
static double dp_traffic(const ctx *c, const stage *st)
{
    const plan_inputs *in = c->in;
    const plan_defaults *k = c->k;
    int inter;
    int nd = in->dp * in->cp, ne = in->dp * in->cp / in->ep;
    double bw = group_bw(c, nd, in->tp, &inter);
    double lat = inter ? k->lat_inter_s : k->lat_intra_s;
    double bwe = bw, late = lat;
    if (in->ep > 1) {
        bwe = group_bw(c, ne, in->tp * in->cp * in->ep, &inter);
        late = inter ? k->lat_inter_s : k->lat_intra_s;
    }
    double gbytes = 4.0; /* gradients reduced in fp32 */
    if (in->zero < 3) {
        /* one all-reduce (or reduce-scatter + all-gather, same volume) per
         * step, overlapped with the last micro-batch's backward */
        double ar = plan_allreduce_s(gbytes * st->P_dense, nd, bw, lat) + plan_allreduce_s(gbytes * st->P_exp, ne, bwe, late);
        double hide = k->dp_overlap * st->last_bwd;
        return ar > hide ? ar - hide + k->overlap_cost * hide : k->overlap_cost * ar;
    }
    /* Sharded parameters. FSDP2 gathers one transformer block per
     * collective, prefetches the next block, gathers once for recompute +
     * backward, and under PP keeps parameters gathered for the whole step
     * (reshard_after_forward off). DeepSpeed ZeRO-3 fetches per weight
     * matrix (4 per layer), again for the recomputed forward, and can
     * prefetch only up to its bucket (stage3_prefetch_bucket_size), so big
     * matrices are fetched just in time. Each collective is its own ring
     * with its own latency. */
    double ncoll = (st->Ls > 0 ? st->Ls : 1) * (in->fsdp ? 1.0 : 4.0);
    double ag = ncoll * (plan_allgather_s(2.0 * st->P_dense / ncoll, nd, bw, lat) +
                         plan_allgather_s(2.0 * st->P_exp / ncoll, ne, bwe, late));
    double rs = ncoll * (plan_allgather_s(gbytes * st->P_dense / ncoll, nd, bw, lat) +
                         plan_allgather_s(gbytes * st->P_exp / ncoll, ne, bwe, late));
    double gathers = in->fsdp || st->rl == 0 ? 2.0 : 3.0;
    double per_mb = gathers * ag + rs;
    double overlap = k->fsdp_overlap;
    if (!in->fsdp) {
        double matrix = (st->P_dense + st->P_exp) / ncoll * st->dp_dense; /* one matrix, unsharded */
        double f = k->z3_prefetch_params / matrix;
        overlap *= f < 1.0 ? f : 1.0;
    }
    double hide = overlap * st->st_comp;
    double exposed = per_mb > hide ? per_mb - hide + k->overlap_cost * hide : k->overlap_cost * per_mb;
    return in->fsdp && in->pp > 1 ? exposed : st->nmb * exposed;
}

/* Per-GPU memory of the stage that holds the most (Korthikanti, ZeRO). */
static void fill_memory(const ctx *c, const stage *st, double P_opt, double T, plan_memory *mem)
{
    const plan_inputs *in = c->in;
    const plan_shape *m = &in->shape;
    int pp = in->pp, vpp = in->vpp;
    bool p_shard = in->zero >= 3 && !(in->fsdp && pp > 1);
    mem->params_bytes = 2.0 * (st->P_dense / (p_shard ? st->dp_dense : 1) + st->P_exp / (p_shard ? st->dp_exp : 1));
    mem->grads_bytes = 2.0 * (st->P_dense / (in->zero >= 2 ? st->dp_dense : 1) + st->P_exp / (in->zero >= 2 ? st->dp_exp : 1));
    mem->optimizer_bytes = in->offload ? 0 : 12.0 * P_opt;
    double s = (double)m->seq / in->cp;
    plan_recompute kept = in->recompute == PLAN_RC_SELECTIVE ? PLAN_RC_SELECTIVE : PLAN_RC_NONE;
    double act_layer = plan_act_bytes_per_layer(m, s, in->micro_batch, in->tp, in->sp, kept, in->attn);
    double act_ckpt = plan_act_bytes_per_layer(m, s, in->micro_batch, in->tp, in->sp, PLAN_RC_FULL, in->attn);
    double stage_act = (st->Ls - st->rl) * act_layer + st->rl * act_ckpt;
    /* 1F1B: the first stage holds min(m, p) micro-batches; interleaving adds (p-1)/(p*v) */
    double inflight = 1.0;
    if (pp > 1)
        inflight = (st->nmb < pp ? st->nmb : pp) * (1.0 + (vpp > 1 ? (double)(pp - 1) / (pp * vpp) : 0));
    mem->activations_bytes = stage_act * inflight;
    if (st->rl > 0) mem->activations_bytes += act_layer; /* one recomputed layer live in its backward */
    /* logits (bf16) + fp32 softmax/loss and its gradient on the last stage */
    double logits = T * c->x.V / in->tp * (2.0 + 4.0 + 4.0);
    double gather = in->zero >= 3 && st->Ls > 0 ? 2.0 * 2.0 * st->stage_dense / st->Ls / in->tp : 0;
    mem->other_bytes = c->k->overhead_bytes + logits + gather;
    mem->total_bytes =
        mem->params_bytes + mem->grads_bytes + mem->optimizer_bytes + mem->activations_bytes + mem->other_bytes;
    mem->hbm_bytes = in->hbm_bytes > 0 ? in->hbm_bytes : in->gpu->hbm_bytes;
    mem->fits = mem->total_bytes <= mem->hbm_bytes * c->k->hbm_usable;
    mem->overflow = NULL;
    if (!mem->fits) {
        static const char *const names[] = {"params", "grads", "optimizer", "activations", "other"};
        double v[] = {mem->params_bytes, mem->grads_bytes, mem->optimizer_bytes, mem->activations_bytes,
                      mem->other_bytes};
        int best = 0;
        for (int i = 1; i < 5; i++)
            if (v[i] > v[best]) best = i;
        mem->overflow = names[best];
    }
}

int plan_model(const plan_inputs *in, plan_result *out, char *err, int errsz)
{
    ctx c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    c.in = in;
    c.k = &k_defaults;
    const hw_gpu *gpu = in->gpu;
    if (!gpu) return fail(err, errsz, "no gpu given");
    const plan_shape *m = &in->shape;
    if (m->layers <= 0 || m->hidden <= 0 || m->heads <= 0 || m->seq <= 0 || m->vocab <= 0)
        return fail(err, errsz, "model shape incomplete: layers, hidden, heads, seq and vocab are required");
    if (m->hidden % m->heads != 0 && m->head_dim <= 0)
        return fail(err, errsz, "hidden %d is not divisible by heads %d", m->hidden, m->heads);
    /* caps on what the caller controls: every product below stays far
     * inside int and double precision */
    if (m->layers > 100000 || m->hidden > 10000000 || m->heads > 100000 || m->seq > 100000000 ||
        m->vocab > 100000000 || m->experts > 100000 || m->ffn_hidden > 100000000 ||
        m->moe_ffn_hidden > 100000000 || m->kv_heads > 100000 || m->head_dim > 100000 || m->topk > 100000 ||
        m->shared_experts > 100000)
        return fail(err, errsz, "model shape out of range");
    if (in->gpus > (1 << 24) || in->tp > (1 << 24) || in->pp > (1 << 24) || in->cp > (1 << 24) ||
        in->ep > (1 << 24) || in->vpp > (1 << 24) || in->dp > (1 << 24) || in->micro_batch > (1 << 24) ||
        in->global_batch > (1 << 28))
        return fail(err, errsz, "layout out of range (at most 2^24 GPUs, 2^28 sequences per step)");
    if (in->gpus_per_node > 65536 || in->nics_per_node > 65536 || in->recompute_layers > 100000)
        return fail(err, errsz, "node design out of range (at most 65536 GPUs or NICs per node)");
    const double knobs[] = {in->hbm_bytes, in->power_w, in->nic_gbit_s, in->nvlink_gbytes, in->storage_gbytes,
                            in->net_efficiency, in->gemm_efficiency, in->ckpt_every_s, in->data_stall_ms};
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
        if (!isfinite(knobs[i]) || knobs[i] < 0 || knobs[i] > 1e15)
            return fail(err, errsz, "a hardware or job setting is negative, infinite or absurdly large");
    if (in->net_efficiency > 1 || in->gemm_efficiency > 1)
        return fail(err, errsz, "efficiencies are fractions of 1");
    get_dims(m, &c.x);
    int tp = in->tp > 0 ? in->tp : 1, pp = in->pp > 0 ? in->pp : 1, cp = in->cp > 0 ? in->cp : 1;
    int ep = in->ep > 0 ? in->ep : 1, vpp = in->vpp > 0 && pp > 1 ? in->vpp : 1;
    int gpus = in->gpus;
    int dp = in->dp;
    double mp = (double)tp * pp * cp; /* exact in double for the capped degrees */
    if (mp > (1 << 24) || (dp > 0 && mp * dp > (1 << 24)))
        return fail(err, errsz, "layout out of range (at most 2^24 GPUs, 2^28 sequences per step)");
    if (gpus <= 0 && dp > 0) gpus = tp * pp * cp * dp;
    if (gpus <= 0) return fail(err, errsz, "number of gpus not given");
    if (gpus % (tp * pp * cp) != 0)
        return fail(err, errsz, "gpus %d not divisible by tp*pp*cp = %d", gpus, tp * pp * cp);
    if (dp <= 0) dp = gpus / (tp * pp * cp);
    if (dp * tp * pp * cp != gpus)
        return fail(err, errsz, "tp*pp*cp*dp = %d does not equal gpus %d", dp * tp * pp * cp, gpus);
    if (m->experts > 0 && (m->experts % ep != 0))
        return fail(err, errsz, "experts %d not divisible by ep %d", m->experts, ep);
    if (ep > 1 && (m->experts <= 0 || (dp * cp) % ep != 0))
        return fail(err, errsz, "ep %d needs an MoE model and must divide dp*cp = %d", ep, dp * cp);
    if (pp > m->layers) return fail(err, errsz, "pp %d exceeds layers %d", pp, m->layers);
    if (vpp > 1 && (long long)pp * vpp > m->layers)
        return fail(err, errsz, "layers %d fewer than pp*vpp = %lld chunks", m->layers, (long long)pp * vpp);
    if (m->seq % cp != 0) return fail(err, errsz, "seq %d not divisible by cp %d", m->seq, cp);
    int mb = in->micro_batch > 0 ? in->micro_batch : 1;
    if ((long long)dp * mb > (1 << 28))
        return fail(err, errsz, "layout out of range (at most 2^24 GPUs, 2^28 sequences per step)");
    int gb = in->global_batch > 0 ? in->global_batch : dp * mb;
    if (gb % (dp * mb) != 0)
        return fail(err, errsz, "global batch %d not divisible by dp*micro_batch = %d", gb, dp * mb);
    int nmb = gb / (dp * mb);

    plan_inputs eff_in = *in;
    eff_in.tp = tp, eff_in.pp = pp, eff_in.cp = cp, eff_in.ep = ep, eff_in.vpp = vpp;
    eff_in.dp = dp, eff_in.gpus = gpus, eff_in.micro_batch = mb, eff_in.global_batch = gb;
    if (tp == 1) eff_in.sp = false;
    if (eff_in.fsdp && eff_in.zero < 3) eff_in.zero = 3;
    c.in = &eff_in;
    in = &eff_in;

    c.peak = gpu->bf16_tflops > 0 ? gpu->bf16_tflops * 1e12 : gpu->fp16_tflops * 1e12;
    if (c.peak <= 0) return fail(err, errsz, "gpu %s has no 16-bit tensor peak", gpu->name);
    /* a board power limit below TDP lowers the sustained tensor clock
     * (DVFS: power ~ f * V^2 with V partly tracking f); HBM is unaffected */
    double clock = 1.0;
    if (in->power_w > 0 && gpu->tdp_w > 0 && in->power_w < gpu->tdp_w)
        clock = pow(in->power_w / gpu->tdp_w, c.k->power_exp);
    c.peak *= clock;
    c.peak_gemm = c.peak;
    if (in->fp8) {
        if (gpu->fp8_tflops <= 0) return fail(err, errsz, "gpu %s does not support fp8", gpu->name);
        double r = gpu->fp8_tflops * 1e12 / c.peak;
        c.peak_gemm = c.peak * (r < c.k->fp8_speedup_cap ? r : c.k->fp8_speedup_cap);
    }
    c.eff = in->gemm_efficiency > 0
                ? in->gemm_efficiency
                : (gpu->mamf_frac > 0 ? gpu->mamf_frac : c.k->gemm_eff_fallback) * c.k->gemm_sustain;
    c.hbm_bw = gpu->hbm_gbps * 1e9;
    c.gpn = in->gpus_per_node > 0 ? in->gpus_per_node : gpu->gpus_per_node;
    c.domain = gpu->scaleup_domain > c.gpn ? gpu->scaleup_domain : c.gpn;
    if (in->gpus_per_node > 0 && gpu->scaleup_domain <= gpu->gpus_per_node) c.domain = c.gpn;
    double nvl = in->nvlink_gbytes > 0 ? in->nvlink_gbytes : gpu->scaleup_gbps;
    if (nvl <= 0) nvl = gpu->pcie_gbps > 0 ? gpu->pcie_gbps : 16;
    c.nvl_bw = nvl * 1e9;
    int nics = in->nics_per_node > 0 ? in->nics_per_node : gpu->nics_per_node;
    double nic_gbit_s = in->nic_gbit_s > 0 ? in->nic_gbit_s : gpu->nic_gbit_s;
    c.nic_bw_gpu = nics * nic_gbit_s / 8.0 * 1e9 / c.gpn;
    if (c.nic_bw_gpu <= 0) return fail(err, errsz, "no scale-out bandwidth (nics x gbps)");

    /* ---- per micro-batch, per layer ---- */
    double T = (double)mb * m->seq / cp;
    pass_t fd = {0}, fm = {0};
    double ad = 0, am = 0;
    if (c.x.Ld > 0) layer_fwd(&c, 0, T, &fd, &ad);
    if (c.x.Lm > 0) layer_fwd(&c, 1, T, &fm, &am);
    double fd_frac = (double)c.x.Ld / c.x.L, fm_frac = (double)c.x.Lm / c.x.L;
    int Ls = (m->layers + pp - 1) / pp;
    /* recompute: layers per stage fully recomputed */
    int rl = 0;
    if (in->recompute == PLAN_RC_FULL) rl = in->recompute_layers > 0 && in->recompute_layers < Ls ? in->recompute_layers : Ls;
    double rfrac = Ls > 0 ? (double)rl / Ls : 0;

    pass_t lf, lb;
    double attn = fd_frac * ad + fm_frac * am;
    lf.comp = fd_frac * fd.comp + fm_frac * fm.comp;
    lf.tp = fd_frac * fd.tp + fm_frac * fm.tp;
    lf.cp = fd_frac * fd.cp + fm_frac * fm.cp;
    lf.ep = fd_frac * fd.ep + fm_frac * fm.ep;
    /* backward: GEMMs and elementwise 2x, attention attn_bwd_factor x */
    double bwd_attn = in->attn == PLAN_ATTN_FLASH ? c.k->attn_bwd_factor : 2.0;
    lb.comp = 2.0 * (lf.comp - attn) + bwd_attn * attn;
    lb.tp = lf.tp, lb.cp = 2.0 * lf.cp, lb.ep = lf.ep;
    /* recompute adds to the backward pass */
    lb.comp += rfrac * lf.comp;
    lb.tp += rfrac * lf.tp;
    lb.cp += rfrac * lf.cp;
    lb.ep += rfrac * lf.ep;
    if (in->recompute == PLAN_RC_SELECTIVE) lb.comp += attn;

    /* logits + loss on the last stage; embedding lookup negligible */
    double lg_f = gemm_s(&c, T, c.x.V / tp, c.x.h) + 3.0 * T * c.x.V / tp * 4.0 / (c.hbm_bw * c.k->mem_eff);
    double lg_b = 2.0 * gemm_s(&c, T, c.x.V / tp, c.x.h) + 2.0 * T * c.x.V / tp * 4.0 / (c.hbm_bw * c.k->mem_eff);
    double lg_tp = 0;
    if (tp > 1) {
        int inter;
        double bw = group_bw(&c, tp, 1, &inter);
        lg_tp = 2.0 * plan_allreduce_s(2.0 * T * c.x.h, tp, bw, inter ? c.k->lat_inter_s : c.k->lat_intra_s);
    }

    double st_comp = Ls * (lf.comp + lb.comp) + lg_f + lg_b;
    double st_tp = Ls * (lf.tp + lb.tp) + lg_tp;
    double st_cp = Ls * (lf.cp + lb.cp);
    double st_ep = Ls * (lf.ep + lb.ep);
    double t_mb = st_comp + st_tp + st_cp + st_ep;

    plan_breakdown *bd = &out->breakdown;
    bd->compute_s = nmb * st_comp;
    bd->tp_comm_s = nmb * st_tp;
    bd->cp_comm_s = nmb * st_cp;
    bd->ep_comm_s = nmb * st_ep;
    bd->pp_bubble_s = pp > 1 ? (double)(pp - 1) / vpp * t_mb : 0;

    /* pipeline P2P: activations of one micro-batch between stages */
    if (pp > 1) {
        int inter;
        double bw = group_bw(&c, pp, tp * cp * dp, &inter);
        double bytes = 2.0 * T * c.x.h / (in->sp ? tp : 1);
        double msg = bytes / bw + (inter ? c.k->lat_inter_s : c.k->lat_intra_s);
        bd->pp_p2p_s = 2.0 * (pp - 1) * msg + 2.0 * nmb * vpp * msg * c.k->pp_p2p_exposed;
    }

    stage st = {0};
    st.Ls = Ls, st.rl = rl, st.nmb = nmb, st.st_comp = st_comp, st.last_bwd = Ls * lb.comp + lg_b;
    stage_params(&c, &st);
    bd->dp_comm_s = dp_traffic(&c, &st);

    /* ---- optimizer (memory-bound Adam over the local shard) ---- */
    double P_opt = st.P_dense / (in->zero >= 1 ? st.dp_dense : 1) + st.P_exp / (in->zero >= 1 ? st.dp_exp : 1);
    double pcie = (gpu->pcie_gbps > 0 ? gpu->pcie_gbps : 32) * 1e9 * 0.8;
    if (in->offload)
        bd->optimizer_s = P_opt * 6.0 / pcie + P_opt * 32.0 / 50e9; /* grads/params over PCIe, CPU Adam */
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
        double block = in->ckpt_async ? out->ckpt_bytes / gpus / pcie : out->ckpt_bytes / (out->storage_gbytes * 1e9);
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
    double label_peak = c.peak / clock;
    out->peak_tflops = label_peak / 1e12;
    out->mfu = out->model_flops_per_step / (out->step_time_s * gpus * label_peak);
    out->hfu = hw / (out->step_time_s * gpus * label_peak);

    fill_memory(&c, &st, P_opt, T, &out->memory);

    out->tp = tp, out->pp = pp, out->dp = dp, out->cp = cp, out->ep = ep, out->vpp = vpp;
    out->micro_batch = mb, out->global_batch = gb, out->microbatches = nmb;
    out->params_total = plan_params_total(m);
    out->params_active = plan_params_active(m);
    out->gemm_eff = c.eff;
    out->net_gbytes_per_gpu = c.nic_bw_gpu / 1e9;
    out->nvlink_gbytes = c.nvl_bw / 1e9;
    return 0;
}
