/* presets.h - model shapes (transformer hyper-parameters) for `--preset`.
 *
 * plan_shape is the architecture half of the performance model's input: what
 * a model IS, independent of how it is laid out on GPUs. The presets in
 * presets.c are transcribed from the models' papers or released config
 * files, each with its source. Explicit command-line flags override preset
 * fields one by one (the CLI copies the preset, then applies flags).
 *
 * How to add a preset: append a row to k_presets in presets.c with a source
 * comment, then extend tests/unit/test_plan_model.c if it exercises a new
 * field (MoE, GQA, MLA projections).
 */
#ifndef CP_PLAN_PRESETS_H
#define CP_PLAN_PRESETS_H

#include <stddef.h>

typedef struct plan_shape {
    int layers;            /* transformer blocks */
    int hidden;            /* model width h */
    int heads;             /* attention (query) heads a */
    int kv_heads;          /* K/V heads (GQA); 0 = heads (MHA) */
    int head_dim;          /* per-head width; 0 = hidden / heads */
    int ffn_hidden;        /* dense MLP width f; 0 = 4h */
    int gated;             /* 1 = SwiGLU/GeGLU (3 MLP matrices), 0 = 2 matrices */
    int seq;               /* training sequence length s */
    int vocab;             /* vocabulary V (padded as trained) */
    int experts;           /* routed experts per MoE layer; 0 = dense model */
    int topk;              /* experts per token */
    int moe_ffn_hidden;    /* width of one expert's MLP */
    int shared_experts;    /* always-on experts of width moe_ffn_hidden */
    int dense_layers;      /* leading layers with a dense MLP in an MoE model */
    double attn_params;    /* attention projection params per layer; 0 = from heads */
    int tied_embeddings;   /* 1 = output layer shares the input embedding */
} plan_shape;

typedef struct plan_preset {
    const char *name;      /* e.g. "llama3-70b" */
    const char *title;     /* human name */
    const char *source;    /* paper / config the shape comes from */
    plan_shape shape;
} plan_preset;

/* Preset by case-insensitive name; NULL when unknown. Static storage. */
const plan_preset *plan_preset_find(const char *name);
size_t plan_preset_count(void);
const plan_preset *plan_preset_at(size_t i);

#endif
