/* presets.c - model shapes with their sources (see presets.h).
 *
 * Values are the published architecture hyper-parameters. Where a model has
 * a feature the performance model does not represent exactly, the nearest
 * representable shape is used and the comment says so (DeepSeek-V3 MLA is
 * given by its projection parameter count; sliding-window attention in
 * gpt-oss is modelled as full causal attention; squared-ReLU MLPs count as
 * 2-matrix MLPs).
 */
#include "plan/presets.h"

#include <strings.h>

/* layers, hidden, heads, kv, head_dim, ffn, gated, seq, vocab,
 * experts, topk, moe_ffn, shared, dense_layers, attn_params, tied */
static const plan_preset k_presets[] = {
    /* Brown et al. 2020 (arXiv:2005.14165) Table 2.1; vocab padded to 51200 as in Megatron-LM */
    {"gpt3-175b", "GPT-3 175B", "Brown et al. 2020 arXiv:2005.14165 Table 2.1",
     {96, 12288, 96, 0, 0, 0, 0, 2048, 51200, 0, 0, 0, 0, 0, 0, 1}},
    /* same table, 13B row (d_model 5140 rounded to 5120 as Megatron configs do) */
    {"gpt3-13b", "GPT-3 13B", "Brown et al. 2020 arXiv:2005.14165 Table 2.1 (h 5140 -> 5120)",
     {40, 5120, 40, 0, 0, 0, 0, 2048, 51200, 0, 0, 0, 0, 0, 0, 1}},
    /* Touvron et al. 2023 (arXiv:2307.09288) and meta-llama/Llama-2-*-hf config.json */
    {"llama2-7b", "Llama 2 7B", "arXiv:2307.09288; meta-llama/Llama-2-7b-hf config.json",
     {32, 4096, 32, 32, 0, 11008, 1, 4096, 32000, 0, 0, 0, 0, 0, 0, 0}},
    {"llama2-13b", "Llama 2 13B", "arXiv:2307.09288; meta-llama/Llama-2-13b-hf config.json",
     {40, 5120, 40, 40, 0, 13824, 1, 4096, 32000, 0, 0, 0, 0, 0, 0, 0}},
    {"llama2-70b", "Llama 2 70B", "arXiv:2307.09288 (GQA 8); meta-llama/Llama-2-70b-hf config.json",
     {80, 8192, 64, 8, 0, 28672, 1, 4096, 32000, 0, 0, 0, 0, 0, 0, 0}},
    /* Llama 3 herd paper (arXiv:2407.21783) Table 3 */
    {"llama3-8b", "Llama 3 8B", "arXiv:2407.21783 Table 3",
     {32, 4096, 32, 8, 0, 14336, 1, 8192, 128256, 0, 0, 0, 0, 0, 0, 0}},
    {"llama3-70b", "Llama 3 70B", "arXiv:2407.21783 Table 3",
     {80, 8192, 64, 8, 0, 28672, 1, 8192, 128256, 0, 0, 0, 0, 0, 0, 0}},
    {"llama3.1-405b", "Llama 3.1 405B", "arXiv:2407.21783 Table 3",
     {126, 16384, 128, 8, 0, 53248, 1, 8192, 128256, 0, 0, 0, 0, 0, 0, 0}},
    /* Jiang et al. 2024 (arXiv:2401.04088) Table 1; trained context 32k, preset uses 4096 */
    {"mixtral-8x7b", "Mixtral 8x7B", "arXiv:2401.04088 Table 1; mistralai/Mixtral-8x7B-v0.1 config.json",
     {32, 4096, 32, 8, 0, 14336, 1, 4096, 32000, 8, 2, 14336, 0, 0, 0, 0}},
    {"mixtral-8x22b", "Mixtral 8x22B", "mistralai/Mixtral-8x22B-v0.1 config.json",
     {56, 6144, 48, 8, 0, 16384, 1, 4096, 32768, 8, 2, 16384, 0, 0, 0, 0}},
    /* DeepSeek-V3 (arXiv:2412.19437) Sec 4.2 + config.json: MLA with q_lora 1536, kv_lora 512,
     * qk head 192 (128+64 rope), v head 128 -> projection params
     * 7168*1536 + 1536*128*192 + 7168*576 + 512*128*256 + 128*128*7168 = 187105280;
     * head_dim 160 = mean of qk (192) and v (128) widths for the attention core */
    {"deepseek-v3", "DeepSeek-V3 671B", "arXiv:2412.19437 Sec 4.2; deepseek-ai/DeepSeek-V3 config.json",
     {61, 7168, 128, 128, 160, 18432, 1, 4096, 129280, 256, 8, 2048, 1, 3, 187105280.0, 0}},
    /* Qwen3 technical report (arXiv:2505.09388) Table 2; Qwen/Qwen3-*-A*B config.json */
    {"qwen3-30b-a3b", "Qwen3-30B-A3B", "arXiv:2505.09388 Table 2; Qwen/Qwen3-30B-A3B config.json",
     {48, 2048, 32, 4, 128, 6144, 1, 4096, 151936, 128, 8, 768, 0, 0, 0, 0}},
    {"qwen3-235b-a22b", "Qwen3-235B-A22B", "arXiv:2505.09388 Table 2; Qwen/Qwen3-235B-A22B config.json",
     {94, 4096, 64, 4, 128, 12288, 1, 4096, 151936, 128, 8, 1536, 0, 0, 0, 0}},
    /* OpenAI gpt-oss model card (arXiv:2508.10925) Table 1; openai/gpt-oss-120b config.json.
     * Alternating 128-token sliding-window layers are modelled as full causal attention. */
    {"gpt-oss-120b", "gpt-oss-120b", "arXiv:2508.10925 Table 1; openai/gpt-oss-120b config.json",
     {36, 2880, 64, 8, 64, 2880, 1, 4096, 201088, 128, 4, 2880, 0, 0, 0, 0}},
    /* Nemotron-4 15B (arXiv:2402.16819) Table 1; squared-ReLU MLP (2 matrices) */
    {"nemotron4-15b", "Nemotron-4 15B", "arXiv:2402.16819 Table 1",
     {32, 6144, 48, 8, 0, 24576, 0, 4096, 256000, 0, 0, 0, 0, 0, 0, 0}},
    /* Nemotron-4 340B (arXiv:2406.11704) Table 1 */
    {"nemotron4-340b", "Nemotron-4 340B", "arXiv:2406.11704 Table 1",
     {96, 18432, 96, 8, 0, 73728, 0, 4096, 256000, 0, 0, 0, 0, 0, 0, 0}},
    /* Grok-1 (github:xai-org/grok-1 run.py): 64 layers, emb 6144, 48 q / 8 kv heads,
     * 8 experts top-2, widening factor 8 -> gated FFN width 32768, vocab 131072, ctx 8192 */
    {"grok1-314b", "Grok-1 314B", "github:xai-org/grok-1 run.py (model config)",
     {64, 6144, 48, 8, 128, 32768, 1, 8192, 131072, 8, 2, 32768, 0, 0, 0, 0}},
};

#define NPRESETS (sizeof(k_presets) / sizeof(k_presets[0]))

size_t plan_preset_count(void) { return NPRESETS; }

const plan_preset *plan_preset_at(size_t i) { return i < NPRESETS ? &k_presets[i] : NULL; }

const plan_preset *plan_preset_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcasecmp(k_presets[i].name, name) == 0) return &k_presets[i];
    return NULL;
}
