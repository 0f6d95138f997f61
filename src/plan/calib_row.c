/* calib_row.c - one published run (a CSV row) as model inputs.
 *
 * The rules interpret what a row states; they are the same for every row and
 * are documented in docs/MODEL.md ("How a row becomes model inputs"). They
 * are never tuned per row, per preset or per source: a source only selects
 * the framework it ran, and a framework only brings the settings that
 * framework documents as its defaults.
 *
 *   shape      the preset whose family and size match `model` (GQA, MLP width,
 *              gating, MoE that the CSV does not carry), overridden by the
 *              row's columns; a missing vocabulary comes from the preset, or
 *              from the family (GPT-style: GPT-2 BPE padded to 51200), and
 *              the row says so in its note;
 *   GPU        hw_gpu_find(gpu_type); "<N>GB" overrides HBM, "@<W>W" sets a
 *              power limit;
 *   framework  from `source` (calib_framework): Megatron-LM as in its 2021/22
 *              papers, DeepSpeed ZeRO-3, torchtitan, MosaicML llm-foundry
 *              (its benchmark harness ran FlashAttention in Triton),
 *              NeMo / Megatron-Core (including the DGX Cloud benchmarking
 *              recipes), JAX stacks, or a generic modern stack;
 *   layout     the tp/pp/dp/ep columns, and CP=, VP=/VPP=, EP=, ETP=, FSDP,
 *              ZeRO-k, SP in cp_sp or notes; "N model chunks" = VP N;
 *              unstated degrees come from dp (TP filling the node), or from
 *              the planner;
 *   recompute  as stated; unstated: the framework's default (none for
 *              Megatron-Core/NeMo, full for the 2021 papers, torchtitan's
 *              selective AC = every second layer), else the planner's best;
 *   precision  "fp8"/"float8" = FP8 GEMMs; "mxfp8"/"MX" the MXFP8 recipe,
 *              "block" the block-scaled one, otherwise per-tensor scaling;
 *   figure     the first present of step_time_s, tokens_per_s_per_gpu,
 *              tokens_per_s, tflops_per_gpu (in the row's convention:
 *              SC21's 96Bslh^2(1+s/6h+V/16lh) counts the recomputed
 *              forward), mfu_pct; compared as a step-time error.
 */
#include "plan/calib_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "plan/plan_report.h"

const char *const calib_cols[C_NCOLS] = {
    "source", "model", "layers", "hidden", "heads", "seq_len", "vocab", "gpu_type", "num_gpus",
    "tp", "pp", "dp", "cp_sp", "ep", "micro_batch", "global_batch", "recompute", "precision",
    "tflops_per_gpu", "tokens_per_s", "tokens_per_s_per_gpu", "mfu_pct", "step_time_s",
    "flops_convention", "notes", "peak_mem_gib",
    /* optional, for datasets that carry them */
    "cp", "kv_heads", "ffn_hidden", "experts", "num_experts", "topk", "top_k", "moe_ffn_hidden", "swiglu",
    "etp", "vp",
};

int calib_split_csv(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        char *out = p, *start = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0') break;
                if (*p == '"' && p[1] == '"') *out++ = '"', p += 2;
                else if (*p == '"') { p++; break; }
                else *out++ = *p++;
            }
            while (*p && *p != ',') p++;
        } else {
            while (*p && *p != ',') *out++ = *p++;
        }
        char sep = *p;
        *out = '\0';
        f[n++] = start;
        if (sep != ',') break;
        p++;
    }
    return n;
}

char *calib_next_line(const char **p, const char *end)
{
    if (*p >= end) return NULL;
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    const char *e = nl ? nl : end;
    *p = nl ? nl + 1 : end;
    if (e > s && e[-1] == '\r') e--;
    return cp_xstrndup(s, (size_t)(e - s));
}

int calib_icontains(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, nl) == 0) return 1;
    return 0;
}

double calib_num(const char *s)
{
    if (!s || !*s) return NAN;
    char *end;
    double v = strtod(s, &end);
    return end == s ? NAN : v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double calib_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Whole number of a cell; 0 when empty, not a number or beyond 1e8 (the
 * model refuses absurd sizes anyway; this keeps every product in range). */
static int inum(const char *s)
{
    double v = calib_num(s);
    return v >= 0 && v <= 1e8 ? (int)v : 0;
}

/* "KEY=N" or "KEY N" anywhere in s (case-insensitive, KEY not preceded by a
 * letter, so "VP" does not match "VPP" and "EP" not "ETP"); 0 if absent. */
static int keyed(const char *s, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = s; *p; p++) {
        if (strncasecmp(p, key, kl) != 0) continue;
        if (p > s && isalpha((unsigned char)p[-1])) continue;
        const char *q = p + kl;
        if (isalpha((unsigned char)*q)) continue;
        while (*q == ' ' || *q == '=' || *q == ':') q++;
        if (isdigit((unsigned char)*q)) {
            long v = strtol(q, NULL, 10);
            return v > 0 && v <= 1000000 ? (int)v : 0;
        }
    }
    return 0;
}

/* ---- model family: preset and vocabulary ------------------------------ */

static void lower_alnum(const char *in, char *out, size_t size, int keep_space)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < size; p++) {
        unsigned char ch = (unsigned char)*p;
        if (isalnum(ch)) out[n++] = (char)tolower(ch);
        else if (keep_space && n > 0 && out[n - 1] != ' ') out[n++] = ' ';
    }
    out[n] = '\0';
}

/* The size token ("405b", "8x7b", "a22b" parts) of a name, e.g. "340b". */
static int has_size(const char *low, const char *size)
{
    size_t sl = strlen(size);
    for (const char *p = low; (p = strstr(p, size)) != NULL; p++) {
        int before = p == low || !isdigit((unsigned char)p[-1]);
        int after = !isalnum((unsigned char)p[sl]);
        if (before && after) return 1;
    }
    return 0;
}

/* Preset by family and size in a free-form model name ("Llama 3.1 8B",
 * "LLAMA3-70B", "Nemotron-340B", "Mixtral-8x22B", "DeepSeek-V3"). */
static const plan_preset *match_preset(const char *model)
{
    char low[128];
    lower_alnum(model, low, sizeof low, 1);
    if (strstr(low, "llama")) {
        static const char *const sizes[] = {"405b", "70b", "13b", "8b", "7b"};
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            if (!has_size(low, sizes[i])) continue;
            const char *fam = strstr(low, "llama 2") || strstr(low, "llama2") ? "llama2" : "llama3";
            char name[32];
            snprintf(name, sizeof name, "%s-%s", strcmp(sizes[i], "405b") == 0 ? "llama3.1" : fam, sizes[i]);
            return plan_preset_find(name);
        }
        return NULL;
    }
    char flat[128];
    lower_alnum(model, flat, sizeof flat, 0);
    for (size_t i = 0; i < plan_preset_count(); i++) {
        const plan_preset *pr = plan_preset_at(i);
        if (strncmp(pr->name, "gpt3", 4) == 0 || strncmp(pr->name, "llama", 5) == 0) continue;
        /* family = the name's leading letters, size = what follows the
         * first '-' ("nemotron4-340b" -> "nemotron" + "340b") */
        char fam[32], size[32];
        size_t k = 0;
        for (const char *p = pr->name; *p && isalpha((unsigned char)*p) && k + 1 < sizeof fam; p++) fam[k++] = *p;
        fam[k] = '\0';
        const char *dash = strchr(pr->name, '-');
        lower_alnum(dash ? dash + 1 : "", size, sizeof size, 0);
        if (!k || !strstr(flat, fam)) continue;
        if (!size[0] || strstr(flat, size)) return pr;
    }
    return NULL;
}

/* Vocabulary a family implies when the row does not give one (the padded
 * sizes their trainers use). */
static int family_vocab(const char *model, const plan_preset *pr, const char **from)
{
    if (pr && pr->shape.vocab > 0) {
        *from = pr->name;
        return pr->shape.vocab;
    }
    static const struct {
        const char *fam;
        int vocab;
        const char *why;
    } k_fam[] = {
        {"llama 2", 32000, "Llama 2 tokenizer"}, {"llama2", 32000, "Llama 2 tokenizer"},
        {"llama", 128256, "Llama 3 tokenizer"},  {"mpt", 50368, "MPT (GPT-NeoX tokenizer padded)"},
        {"nemotron", 256000, "Nemotron tokenizer"}, {"mixtral", 32000, "Mistral tokenizer"},
        {"qwen", 151936, "Qwen tokenizer"},       {"deepseek", 129280, "DeepSeek-V3 tokenizer"},
        {"gpt", 51200, "GPT-2 BPE (50257) padded to 51200 as Megatron/NeMo do"},
    };
    char low[128];
    lower_alnum(model, low, sizeof low, 1);
    for (size_t i = 0; i < sizeof k_fam / sizeof *k_fam; i++)
        if (strstr(low, k_fam[i].fam)) {
            *from = k_fam[i].why;
            return k_fam[i].vocab;
        }
    return 0;
}

/* ---- framework from the source --------------------------------------- */

typedef enum fw {
    FW_GENERIC = 0,
    FW_MEGATRON21, /* Megatron-LM papers (Narayanan SC21, Korthikanti 2022) */
    FW_TITAN,      /* torchtitan (FSDP2, SDPA flash = FA2) */
    FW_FOUNDRY,    /* MosaicML llm-foundry (FSDP, flash-attn 2) */
    FW_NEMO,       /* NeMo / Megatron-Core (TE, cuDNN attention, TP comm overlap) */
    FW_JAX,        /* MaxText / Paxml */
} fw;

static fw framework(const char *src)
{
    if (calib_icontains(src, "Narayanan") || calib_icontains(src, "Korthikanti")) return FW_MEGATRON21;
    if (calib_icontains(src, "torchtitan")) return FW_TITAN;
    if (calib_icontains(src, "llm-foundry") || calib_icontains(src, "mosaicml")) return FW_FOUNDRY;
    if (calib_icontains(src, "maxtext") || calib_icontains(src, "paxml")) return FW_JAX;
    if (calib_icontains(src, "nemo") || calib_icontains(src, "dgxc") || calib_icontains(src, "megatron-core") ||
        calib_icontains(src, "megatron-bridge") || calib_icontains(src, "mcore"))
        return FW_NEMO;
    return FW_GENERIC;
}

void plan_calib_source_key(const char *source, char *out, size_t size)
{
    static const struct {
        const char *needle, *key;
    } k_src[] = {
        {"Narayanan", "Megatron-LM SC21 (Narayanan et al.)"},
        {"Korthikanti", "Korthikanti et al. 2022"},
        {"torchtitan", "torchtitan"},
        {"llm-foundry", "MosaicML llm-foundry"},
        {"dgxc-benchmarking", "NVIDIA DGX Cloud benchmarking recipes"},
        {"nemo", "NVIDIA NeMo performance summary"},
        {"maxtext", "MaxText"},
        {"paxml", "Paxml"},
    };
    for (size_t i = 0; i < sizeof k_src / sizeof *k_src; i++)
        if (calib_icontains(source, k_src[i].needle)) {
            snprintf(out, size, "%s", k_src[i].key);
            return;
        }
    size_t n = strcspn(source, "(;@");
    while (n > 0 && source[n - 1] == ' ') n--;
    snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), source);
}

/* Largest power of two <= limit that divides v. */
static int pow2_div(int v, int limit)
{
    int t = 1;
    while (t * 2 <= limit && v % (t * 2) == 0) t *= 2;
    return t;
}

/* Append one assumption to the row's note ("a; b"). */
static void note_add(plan_calib_row *r, const char *what)
{
    size_t len = strlen(r->note);
    if (len + 3 >= sizeof r->note) return;
    if (len) r->note[len++] = ';', r->note[len++] = ' ', r->note[len] = '\0';
    snprintf(r->note + len, sizeof r->note - len, "%s", what);
}

#define COL(c) (col[c] >= 0 && col[c] < nf ? f[col[c]] : "")

/* Shape: preset, row columns, default vocabulary. */
static int row_shape(char **f, int nf, const int *col, plan_calib_row *r, plan_inputs *in)
{
    const plan_preset *pr = match_preset(COL(C_MODEL));
    if (pr) in->shape = pr->shape;
    else in->shape.tied_embeddings = 1;
    int layers = inum(COL(C_LAYERS)), hidden = inum(COL(C_HIDDEN)), heads = inum(COL(C_HEADS));
    int seq = inum(COL(C_SEQ)), vocab = inum(COL(C_VOCAB));
    if (vocab <= 0) {
        const char *from = NULL;
        vocab = family_vocab(COL(C_MODEL), pr, &from);
        if (vocab > 0) {
            char what[128];
            snprintf(what, sizeof what, "vocab %d assumed (%s)", vocab, from);
            note_add(r, what);
        }
    }
    if (layers <= 0 || hidden <= 0 || heads <= 0 || seq <= 0 || vocab <= 0) {
        snprintf(r->why, sizeof r->why, "model shape incomplete (%s)",
                 vocab <= 0 ? "no vocabulary and no known family" : "layers, hidden, heads or seq_len missing");
        return -1;
    }
    in->shape.layers = layers, in->shape.hidden = hidden, in->shape.heads = heads;
    in->shape.seq = seq, in->shape.vocab = vocab;
    /* optional shape columns override the preset */
    if (inum(COL(C_KV)) > 0) in->shape.kv_heads = inum(COL(C_KV));
    if (inum(COL(C_FFN)) > 0) in->shape.ffn_hidden = inum(COL(C_FFN));
    int experts = inum(COL(C_EXPERTS)) > 0 ? inum(COL(C_EXPERTS)) : inum(COL(C_EXPERTS2));
    if (experts > 0) in->shape.experts = experts;
    int topk = inum(COL(C_TOPK)) > 0 ? inum(COL(C_TOPK)) : inum(COL(C_TOPK2));
    if (topk > 0) in->shape.topk = topk;
    if (inum(COL(C_MOE_FFN)) > 0) in->shape.moe_ffn_hidden = inum(COL(C_MOE_FFN));
    const char *sw = COL(C_SWIGLU);
    if (*sw) in->shape.gated = cp_str_ieq(sw, "true") || cp_str_ieq(sw, "yes") || !strcmp(sw, "1");
    return 0;
}

/* GPU, HBM override and power limit. */
static int row_gpu(char **f, int nf, const int *col, plan_calib_row *r, plan_inputs *in)
{
    in->gpu = hw_gpu_find(COL(C_GPU));
    if (!in->gpu) {
        snprintf(r->why, sizeof r->why, "gpu '%s' not in the catalog", COL(C_GPU));
        return -1;
    }
    const char *gb_txt = COL(C_GPU);
    for (const char *p = gb_txt; *p; p++) {
        if (isdigit((unsigned char)*p) && (p == gb_txt || !isalnum((unsigned char)p[-1]))) {
            char *end;
            long v = strtol(p, &end, 10);
            if (strncasecmp(end, "GB", 2) == 0 && v > 0 && v < 100000) in->hbm_bytes = v * 1e9;
            p = end - 1;
        }
    }
    const char *at = strchr(gb_txt, '@');
    if (at && atof(at + 1) > 0 && atof(at + 1) < 100000 && strchr(at, 'W')) in->power_w = atof(at + 1);
    in->gpus = inum(COL(C_NGPU));
    if (in->gpus <= 0) {
        snprintf(r->why, sizeof r->why, "num_gpus missing");
        return -1;
    }
    return 0;
}

/* Framework settings, sharding and precision. */
static void row_stack(char **f, int nf, const int *col, fw w, plan_inputs *in, plan_space *sp)
{
    const char *cpsp = COL(C_CPSP), *notes = COL(C_NOTES), *prec = COL(C_PREC);
    in->attn = w == FW_MEGATRON21 ? PLAN_ATTN_UNFUSED : w == FW_TITAN ? PLAN_ATTN_FA2 : PLAN_ATTN_FLASH;
    /* llm-foundry's benchmark tables were produced by submit_benchmarks.py
     * with --attn_impl triton (its default until 2024; the MPT yamls said the
     * same): FlashAttention in Triton with the ALiBi bias */
    if (w == FW_FOUNDRY) {
        int fa2 = calib_icontains(notes, "attn_impl: flash") || calib_icontains(notes, "attn_impl=flash") ||
                  calib_icontains(notes, "FlashAttention-2") || calib_icontains(notes, "FA2");
        in->attn = fa2 ? PLAN_ATTN_FA2 : PLAN_ATTN_TRITON;
    }
    /* NeMo's performance recipes pipeline TP communication with the GEMMs
     * (tp_comm_overlap) and reduce gradients in bf16 (grad_reduce_in_fp32
     * off, scripts/performance/helpers.py of NVIDIA/NeMo) */
    in->tp_overlap = w == FW_NEMO;
    in->stack = w == FW_TITAN || w == FW_FOUNDRY || w == FW_GENERIC ? PLAN_STACK_EAGER : PLAN_STACK_FUSED;
    in->grad_reduce_bytes = w == FW_NEMO ? 2 : 0;
    /* Megatron rows say when SP is on; the others shard the sequence with TP */
    sp->sp = w == FW_MEGATRON21 ? strstr(cpsp, "SP") != NULL : -1;
    int fsdp = calib_icontains(cpsp, "FSDP") || calib_icontains(notes, "FSDP");
    int fsdp_off = calib_icontains(cpsp, "FSDP=0") || calib_icontains(cpsp, "FSDP 0") ||
                   calib_icontains(notes, "FSDP=0") || calib_icontains(notes, "FSDP: 0");
    if (fsdp_off) fsdp = 0;
    int zero3 = calib_icontains(notes, "ZeRO-3") || calib_icontains(cpsp, "ZeRO-3");
    int zero2 = calib_icontains(notes, "ZeRO-2") || calib_icontains(cpsp, "ZeRO-2");
    int zero1 = calib_icontains(notes, "ZeRO-1") || calib_icontains(notes, "distributed optimizer");
    in->fsdp = (fsdp || (w == FW_TITAN && !fsdp_off)) && !zero3;
    in->fsdp_keep = in->fsdp && (calib_icontains(cpsp, "SHARD_GRAD_OP") || calib_icontains(notes, "SHARD_GRAD_OP"));
    if (in->fsdp || zero3) sp->zero = 3;
    else if (zero2) sp->zero = 2;
    else if (zero1) sp->zero = 1;
    else sp->zero = w == FW_MEGATRON21 ? 0 : 1; /* modern stacks: distributed optimizer */
    in->fp8 = calib_icontains(prec, "float8") || calib_icontains(prec, "fp8");
    if (in->fp8 && (calib_icontains(prec, "mxfp8") || calib_icontains(prec, "mx ")))
        in->fp8_recipe = PLAN_FP8_MXFP8;
    else if (in->fp8 && calib_icontains(prec, "block"))
        in->fp8_recipe = PLAN_FP8_BLOCK;
    if (calib_icontains(notes, "optimizer offload") || calib_icontains(notes, "cpu offload: optimizer"))
        in->offload = true;
}

/* Degrees the row states (columns first, then CP=/VP=/EP=/ETP= tokens). */
static void row_layout(char **f, int nf, const int *col, fw w, plan_inputs *in, plan_space *sp, int *dp_out)
{
    const char *cpsp = COL(C_CPSP), *notes = COL(C_NOTES);
    int tp = inum(COL(C_TP)), pp = inum(COL(C_PP)), dp = inum(COL(C_DP));
    int cp = inum(COL(C_CP));
    if (keyed(cpsp, "CP")) cp = keyed(cpsp, "CP");
    if (cp <= 0) cp = keyed(notes, "CP");
    if (cp <= 0) cp = 1;
    sp->cp = cp;
    int ep = inum(COL(C_EP));
    if (ep <= 0) ep = keyed(cpsp, "EP") ? keyed(cpsp, "EP") : keyed(notes, "EP");
    sp->ep = ep > 0 ? ep : (in->shape.experts > 0 ? 0 : 1);
    int etp = inum(COL(C_ETP));
    if (etp <= 0) etp = keyed(cpsp, "ETP") ? keyed(cpsp, "ETP") : keyed(notes, "ETP");
    sp->etp = etp;
    if (tp <= 0 && pp <= 0 && dp > 0 && in->gpus % (dp * cp) == 0) {
        int mp = in->gpus / (dp * cp);
        tp = pow2_div(mp, in->gpu->gpus_per_node);
        pp = mp / tp;
    } else if (dp > 0 && (tp > 0) != (pp > 0) && in->gpus % (dp * cp) == 0) {
        int rest = in->gpus / (dp * cp);
        if (tp > 0) pp = rest / tp;
        else tp = rest / pp;
    }
    if (tp > 0) sp->tp = tp;
    if (pp > 0) sp->pp = pp;
    if (tp <= 0 && pp <= 0 && dp <= 0) sp->tp = pow2_div(in->gpus, in->gpu->gpus_per_node);
    /* interleaving */
    int vp = inum(COL(C_VP));
    if (vp <= 0) vp = keyed(cpsp, "VPP") ? keyed(cpsp, "VPP") : keyed(cpsp, "VP");
    if (vp <= 0) vp = keyed(notes, "VPP") ? keyed(notes, "VPP") : keyed(notes, "VP");
    const char *ch = strstr(notes, "model chunks");
    sp->vpp = 1;
    if (vp > 0) {
        sp->vpp = vp;
    } else if (ch) {
        const char *q = ch;
        while (q > notes && (q[-1] == ' ' || isdigit((unsigned char)q[-1]))) q--;
        int v = atoi(q);
        sp->vpp = v > 0 ? v : 0;
    } else if (calib_icontains(notes, "interleaved") && w != FW_GENERIC) {
        sp->vpp = 2; /* interleaved without a chunk count: two chunks per stage */
    }
    if (sp->pp == 1) sp->vpp = 1;
    *dp_out = dp;
}

/* Recomputation as stated, else the framework's default. Returns "half". */
static int row_recompute(char **f, int nf, const int *col, fw w, plan_space *sp, plan_calib_row *r)
{
    const char *rc = COL(C_RC);
    if (strncasecmp(rc, "full", 4) == 0) sp->recompute = PLAN_RC_FULL;
    else if (strncasecmp(rc, "none", 4) == 0 || strncasecmp(rc, "no", 2) == 0) sp->recompute = PLAN_RC_NONE;
    else if (w == FW_TITAN && (*rc == '\0' || strncasecmp(rc, "selective", 9) == 0))
        return sp->recompute = PLAN_RC_FULL, 1; /* torchtitan selective AC (its default) */
    else if (strncasecmp(rc, "selective", 9) == 0) sp->recompute = PLAN_RC_SELECTIVE;
    else if (w == FW_MEGATRON21) sp->recompute = PLAN_RC_FULL; /* the 2021 papers recomputed fully */
    else if (w == FW_NEMO) {
        sp->recompute = PLAN_RC_NONE; /* Megatron-Core: recompute_granularity None unless set */
        note_add(r, "recompute none assumed (Megatron-Core default)");
    } else sp->recompute = -1; /* unstated: the planner's best */
    return 0;
}

int calib_interpret(char **f, int nf, const int *col, plan_calib_row *r, calib_case *cs)
{
    memset(cs, 0, sizeof *cs);
    plan_inputs *in = &cs->base;
    plan_space *sp = &cs->sp;
    plan_inputs_init(in);
    plan_space_init(sp);
    snprintf(r->model, sizeof r->model, "%s", COL(C_MODEL));
    plan_calib_source_key(COL(C_SOURCE), r->source, sizeof r->source);
    if (row_shape(f, nf, col, r, in) < 0 || row_gpu(f, nf, col, r, in) < 0) return -1;
    fw w = framework(COL(C_SOURCE));
    row_stack(f, nf, col, w, in, sp);
    int dp;
    row_layout(f, nf, col, w, in, sp, &dp);
    cs->half = row_recompute(f, nf, col, w, sp, r);
    int mb = inum(COL(C_MB)), gb = inum(COL(C_GB));
    if (mb > 0) {
        sp->micro_batch = mb;
    } else if (w == FW_TITAN && sp->pp > 1 && gb > 0 && dp > 0 && (long long)dp * sp->pp <= gb &&
               gb % (dp * sp->pp) == 0) {
        /* torchtitan splits the local batch into as many micro-batches as
         * pipeline stages unless told otherwise */
        sp->micro_batch = gb / (dp * sp->pp);
    }
    if (gb <= 0) {
        if (sp->pp <= 0 || dp <= 0 || mb <= 0) {
            snprintf(r->why, sizeof r->why, "global batch and layout both unstated");
            return -1;
        }
        long long g = (long long)dp * mb * 8 * sp->pp; /* the Korthikanti Table 5 setup */
        if (g > 100000000LL) {
            snprintf(r->why, sizeof r->why, "derived global batch too large");
            return -1;
        }
        gb = (int)g;
    }
    in->global_batch = gb;
    double mem = calib_num(COL(C_MEM));
    r->mem_measured_bytes = isnan(mem) ? NAN : mem * 1073741824.0;
    /* the compared figure */
    double v;
    static const struct {
        int c, m;
        const char *name;
    } k_fig[] = {
        {C_STEP, M_STEP, "step_time_s"},        {C_TPSG, M_TPSG, "tokens_per_s_per_gpu"},
        {C_TPS, M_TPS, "tokens_per_s"},         {C_TFLOPS, M_TFLOPS, "tflops_per_gpu"},
        {C_MFU, M_MFU, "mfu_pct"},
    };
    size_t i;
    for (i = 0; i < sizeof k_fig / sizeof *k_fig; i++)
        if (!isnan(v = calib_num(COL(k_fig[i].c)))) break;
    if (i == sizeof k_fig / sizeof *k_fig) {
        snprintf(r->why, sizeof r->why, "no measured figure");
        return -1;
    }
    snprintf(r->metric, sizeof r->metric, "%s", k_fig[i].name);
    cs->metric = k_fig[i].m;
    cs->measured = r->measured = v;
    if (!(v > 0) || isinf(v)) {
        snprintf(r->why, sizeof r->why, "measured %s is not a positive number", r->metric);
        return -1;
    }
    const char *conv = COL(C_CONV);
    if (cs->metric == M_TFLOPS &&
        (calib_icontains(conv, "96Bslh") || calib_icontains(conv, "eq.(3)") || calib_icontains(conv, "eq. (3)"))) {
        const plan_shape *m = &in->shape;
        double B = gb, s = m->seq, l = m->layers, h = m->hidden, V = m->vocab;
        cs->conv_flops = 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
    }
    return 0;
}
#undef COL

/* torchtitan's selective AC: half the (pinned or searched) stage's layers
 * recomputed; the best pp under that rule. */
static int search_half(const calib_case *cs, plan_inputs *base, plan_candidate *best)
{
    int layers = base->shape.layers, got = 0;
    bool closest = false;
    for (int try_pp = 1; try_pp <= layers; try_pp++) {
        if (cs->sp.pp > 0 && try_pp != cs->sp.pp) continue;
        if (cs->sp.pp <= 0 && layers % try_pp) continue;
        plan_space s2 = cs->sp;
        s2.pp = try_pp;
        base->recompute_layers = ((layers + try_pp - 1) / try_pp + 1) / 2;
        plan_candidate c;
        memset(&c, 0, sizeof c);
        if (plan_search(base, &s2, &c, 1, NULL) == 1) {
            if (!got || c.res.tokens_per_s > best->res.tokens_per_s) *best = c;
            got = 1;
        } else if (!got && !closest && c.res.memory.total_bytes > 0) {
            *best = c;
            closest = true;
        }
    }
    return got;
}

static bool space_is_free(const plan_space *sp, const plan_shape *m)
{
    return sp->tp <= 0 || sp->pp <= 0 || sp->vpp <= 0 || sp->micro_batch <= 0 || sp->zero < 0 ||
           sp->recompute < 0 || (m->experts > 0 && sp->ep <= 0);
}

int calib_resolve(calib_case *cs, const plan_defaults *k, plan_calib_row *r)
{
    plan_inputs base = cs->base;
    base.k = k;
    plan_candidate best[1];
    memset(best, 0, sizeof best);
    cs->searched = cs->half || space_is_free(&cs->sp, &base.shape);
    int got = cs->half ? search_half(cs, &base, best) : plan_search(&base, &cs->sp, best, 1, NULL);
    if (got != 1 && best[0].res.memory.total_bytes > 0) {
        /* the run happened, so it fit: model it anyway and say so */
        if (r) {
            char what[96];
            snprintf(what, sizeof what, "model says it does not fit: %.1f GB of %.1f GB",
                     best[0].res.memory.total_bytes / 1e9, best[0].res.memory.hbm_bytes / 1e9);
            note_add(r, what);
        }
        got = 1;
    }
    if (got != 1) {
        if (r) {
            plan_search_stats st;
            plan_search(&base, &cs->sp, best, 1, &st);
            snprintf(r->why, sizeof r->why, "no valid layout for the stated constraints%s%.100s",
                     st.first_invalid[0] ? ": " : "", st.first_invalid);
        }
        return -1;
    }
    cs->in = best[0].in;
    cs->in.k = NULL;
    if (r) {
        plan_layout_text(&best[0].in, &best[0].res, r->layout, sizeof r->layout);
        if (cs->half) {
            size_t len = strlen(r->layout);
            snprintf(r->layout + len, sizeof r->layout - len, " (%d layers)", best[0].in.recompute_layers);
        }
        r->mem_predicted_bytes = best[0].res.memory.total_bytes;
    }
    return 0;
}

double calib_predict(const calib_case *cs, const plan_defaults *k, double *fig, plan_result *res_out)
{
    plan_inputs in = cs->in;
    in.k = k;
    plan_result res;
    *fig = NAN;
    if (plan_model(&in, &res, NULL, 0) < 0) return NAN;
    if (res_out) *res_out = res;
    double gpus = in.gpus > 0 ? in.gpus : (double)res.tp * res.pp * res.cp * res.dp;
    switch (cs->metric) {
    case M_STEP: *fig = res.step_time_s; return res.step_time_s / cs->measured - 1.0;
    case M_TPSG: *fig = res.tokens_per_s / gpus; break;
    case M_TPS: *fig = res.tokens_per_s; break;
    case M_TFLOPS:
        *fig = (cs->conv_flops > 0 ? cs->conv_flops : res.hw_flops_per_step) / res.step_time_s / gpus / 1e12;
        break;
    case M_MFU: *fig = res.mfu * 100.0; break;
    default: return NAN;
    }
    /* throughput-like figures are inversely proportional to the step time */
    return cs->measured / *fig - 1.0;
}
