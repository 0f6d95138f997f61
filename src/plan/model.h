/* model.h - analytical step-time, MFU and memory model of transformer training.
 *
 * plan_model() takes a model shape, a parallel layout, hardware and job
 * settings (plan_inputs) and predicts one training step (plan_result): the
 * time split along the chain (compute, TP/CP/EP/DP communication, pipeline
 * bubble and P2P, optimizer, data, amortized checkpoint), throughput, MFU/HFU
 * and per-GPU memory. It is pure arithmetic on plain structs: no allocation,
 * no I/O, microseconds per call, so the planner can call it for every layout.
 *
 * Conventions (full formulas and sources in docs/METRICS.md "Performance
 * model"):
 *   - MFU counts model FLOPs only (Megatron/Korthikanti 72BslH^2(1+s/6h+
 *     V/12lh) generalised to GQA, gated MLPs and MoE), never recompute; HFU
 *     adds the recomputed FLOPs. Both are against the dense BF16 peak.
 *   - Time is computed from the work the GPU really does (causal attention
 *     does half of the score FLOPs, fused kernels move less memory), so
 *     convention FLOPs and time are deliberately not the same number.
 *   - Every efficiency that is not a spec-sheet number lives in
 *     plan_defaults_get(); one set of values serves every input.
 *
 * Ownership: all structs are plain values owned by the caller. plan_inputs
 * points at a catalog row (static storage) and never owns it.
 */
#ifndef CP_PLAN_MODEL_H
#define CP_PLAN_MODEL_H

#include <stdbool.h>

#include "model/catalog.h"
#include "plan/presets.h"

typedef enum plan_recompute {
    PLAN_RC_NONE = 0,
    PLAN_RC_SELECTIVE, /* Korthikanti: recompute the attention core only */
    PLAN_RC_FULL,      /* recompute whole layers (recompute_layers of them per stage) */
} plan_recompute;

typedef enum plan_attn {
    PLAN_ATTN_FLASH = 0, /* the architecture's own fused kernel (FA2 on Ampere, cuDNN/FA3 on
                            Hopper, cuDNN on Blackwell): causal skip, no s^2 buffers */
    PLAN_ATTN_UNFUSED,   /* materialised scores (Megatron 2021): full s^2 work and memory */
    PLAN_ATTN_FA2,       /* FlashAttention-2 wherever it runs (PyTorch SDPA, flash-attn 2):
                            on Hopper and later it cannot use the new tensor-core path */
    PLAN_ATTN_TRITON,    /* FlashAttention in Triton (flash_attn_triton, the FA1-era kernel with
                            an additive bias, e.g. ALiBi): FA2 is 1.3-1.5x faster forward and
                            about 2x faster backward (Dao 2023, arXiv:2307.08691 sec. 4.1) */
} plan_attn;

typedef enum plan_fp8_recipe {
    PLAN_FP8_TENSOR = 0, /* one scale per tensor (delayed or current scaling) */
    PLAN_FP8_BLOCK,      /* 1x128 / 128x128 block scales (DeepSeek-V3 style), software-scaled GEMMs */
    PLAN_FP8_MXFP8,      /* 32-element micro-scaling, hardware-scaled GEMMs (Blackwell) */
} plan_fp8_recipe;

/* How the framework launches the layer's elementwise work. */
typedef enum plan_stack {
    PLAN_STACK_FUSED = 0, /* fused kernels (Megatron/TE, XLA): norms, bias-activation, rotary fused */
    PLAN_STACK_EAGER,     /* PyTorch eager: one kernel per elementwise op, Python dispatch per op */
} plan_stack;

typedef struct plan_defaults plan_defaults;

typedef struct plan_inputs {
    plan_shape shape;
    /* layout; 0 means "derive" for dp and "1" for the other degrees */
    int gpus, gpus_per_node;
    int tp, pp, dp, cp, ep, vpp;
    int etp;                   /* expert tensor parallel; 0 = tp (Megatron-Core's default).
                                  EP x ETP folds over TP x CP x DP (parallel folding) */
    bool sp;                   /* sequence parallelism (with TP) */
    int micro_batch;           /* samples per micro-batch */
    int global_batch;          /* samples per step; 0 = dp * micro_batch */
    plan_recompute recompute;
    int recompute_layers;      /* FULL: layers per stage recomputed; 0 = all */
    int zero;                  /* 0..3 (DeepSpeed ZeRO stages) */
    bool fsdp;                 /* PyTorch FSDP2: ZeRO-3 sharding, per-block units */
    bool fsdp_keep;            /* FSDP without resharding after the forward (SHARD_GRAD_OP,
                                  reshard_after_forward=False): one gather per micro-batch */
    bool offload;              /* optimizer state (and its step) in host memory */
    int act_offload_layers;    /* layers per stage whose activations live in host memory */
    bool fp8;                  /* FP8 GEMMs (weights/optimizer as BF16 mixed) */
    plan_fp8_recipe fp8_recipe;
    plan_attn attn;
    bool tp_overlap;           /* TP collectives pipelined with the GEMMs (TE userbuffers) */
    plan_stack stack;          /* fused (default) or eager elementwise kernels */
    int grad_reduce_bytes;     /* bytes per gradient element in the DP reduction; 0 = 4 (fp32) */
    /* hardware; 0 / negative = catalog default */
    const hw_gpu *gpu;
    double hbm_bytes;
    double power_w;            /* board power limit; 0 = the catalog TDP */
    double nic_gbit_s;
    int nics_per_node;
    double nvlink_gbytes;      /* per GPU per direction */
    double storage_gbytes;     /* aggregate checkpoint write bandwidth */
    double net_efficiency;     /* achieved / line rate for inter-node collectives */
    double gemm_efficiency;    /* achieved / dense peak for large GEMMs */
    /* job */
    double ckpt_every_s;       /* 0 = no checkpoints */
    bool ckpt_async;
    double data_stall_ms;      /* per step */
    /* the model's constants; NULL = plan_defaults_get() (the calibration
     * passes trial sets here) */
    const plan_defaults *k;
} plan_inputs;

/* The one set of model constants (see plan_defaults_get()). The first
 * group is what the calibration fits across sources (physical quantities
 * with physical bounds, plan_calib_param_*); the rest are fixed facts or
 * documented framework defaults. */
struct plan_defaults {
    /* fitted across sources */
    double gemm_sustain;       /* sustained / burst (MAMF) matmul rate in long runs */
    double attn_frac;          /* native fused attention forward: achieved / dense peak */
    double mem_eff;            /* achieved / peak HBM bandwidth for elementwise */
    double overlap_cost;       /* hidden communication still slows compute by this fraction of it */
    double fp8_rel;            /* FP8 GEMM fraction of FP8 peak / BF16 GEMM fraction of BF16 peak */
    double kernel_s;           /* launch + tail per kernel */
    double ew_h_bytes;         /* elementwise bytes per token per layer fwd, x hidden (fused stack) */
    double ew_eager_h_bytes;   /* the same for an eager stack (one kernel per op) */
    double host_kernel_s;      /* host time to issue one kernel: a layer is never faster than its launches */
    double net_train_eff;      /* busbw in a training job / nccl-tests busbw (fabric sharing) */
    /* fixed */
    double gemm_eff_fallback;  /* GEMM eff when the catalog has no MAMF figure */
    double attn_bwd_factor;    /* flash bwd / fwd time */
    double triton_fwd_slow;    /* Triton FlashAttention forward time / FA2's */
    double triton_bwd_slow;    /* Triton FlashAttention backward time / FA2's */
    double ew_f_bytes;         /* elementwise bytes per token per layer fwd, x MLP width */
    double score_bytes;        /* unfused attention: bytes per score element fwd */
    double fp8_cast_bytes;     /* bytes moved per GEMM-input element to quantize it */
    double fp8_block_gemm;     /* block-scaled (software) FP8 GEMM rate / tensor-scaled */
    double power_exp;          /* tensor throughput ~ (power limit / TDP)^power_exp */
    double dp_overlap;         /* fraction of last-microbatch backward usable to hide DP */
    double fsdp_overlap;       /* fraction of compute usable to hide ZeRO-3/FSDP traffic */
    double z3_prefetch_params; /* DeepSpeed stage3_prefetch_bucket_size default */
    double pp_p2p_exposed;     /* exposed fraction of steady-state P2P without overlap */
    double moe_imbalance;      /* busiest expert GPU's load / average (balanced routing) */
    double step_overhead_s;    /* per-step host/logging/sync overhead */
    double storage_node_gbytes;/* checkpoint write GB/s per node */
    double ckpt_bytes_per_param;
    double overhead_bytes;     /* CUDA context, NCCL buffers, allocator slack */
    double hbm_usable;         /* usable fraction of the label capacity */
};

const plan_defaults *plan_defaults_get(void);

typedef struct plan_breakdown {
    double compute_s, tp_comm_s, cp_comm_s, pp_bubble_s, pp_p2p_s, dp_comm_s,
        ep_comm_s, optimizer_s, data_s, checkpoint_s;
} plan_breakdown;

typedef struct plan_memory {
    double params_bytes, grads_bytes, optimizer_bytes, activations_bytes,
        other_bytes, total_bytes, hbm_bytes;
    bool fits;
    const char *overflow;      /* largest component when !fits, else NULL */
} plan_memory;

typedef struct plan_result {
    double step_time_s, tokens_per_s, tflops_per_gpu, mfu, hfu;
    plan_breakdown breakdown;
    plan_memory memory;
    /* derived layout and counts */
    int tp, pp, dp, cp, ep, etp, vpp, micro_batch, global_batch, microbatches;
    double params_total, params_active;
    double model_flops_per_step, hw_flops_per_step;
    double peak_tflops;        /* dense BF16 peak per GPU */
    double gemm_eff;           /* large-GEMM efficiency used */
    double attn_tflops;        /* fused attention forward rate used */
    double net_gbytes_per_gpu; /* scale-out per GPU, line rate */
    double nvlink_gbytes;
    double storage_gbytes;
    double ckpt_bytes;
} plan_result;

/* Fill `in` with defaults: 1-way everything, bf16, flash attention, no
 * recompute, micro-batch 1; shape zeroed. */
void plan_inputs_init(plan_inputs *in);

/* Run the model. Returns 0, or -1 with a message in err (size errsz) when
 * the inputs are inconsistent (degrees do not divide, missing GPU, ...).
 * The result is fully written on success. */
int plan_model(const plan_inputs *in, plan_result *out, char *err, int errsz);

/* Model FLOPs of one forward pass over one token (all layers + logits),
 * Megatron convention (non-causal attention scores). */
double plan_flops_per_token_fwd(const plan_shape *m);

/* Parameter counts: total and activated per token (MoE). */
double plan_params_total(const plan_shape *m);
double plan_params_active(const plan_shape *m);

/* Korthikanti activation bytes of ONE layer for one micro-batch of b
 * sequences (s tokens each, already divided by CP) on one TP rank. */
double plan_act_bytes_per_layer(const plan_shape *m, double s, double b, int tp, bool sp,
                                plan_recompute rc, plan_attn attn);

/* Format a message into err (size errsz; both may be NULL/0) and return
 * -1: the plan layer's one way of failing. */
int plan_errf(char *err, int errsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* FlashAttention-2 forward rate as a fraction of the dense BF16 peak on
 * gpu's architecture (measured; 0 when unknown: treated as native). */
double plan_fa2_frac(const hw_gpu *gpu);
/* "flash", "unfused", "fa2" or "triton" (the --attention spelling). */
const char *plan_attn_name(plan_attn a);

#endif
