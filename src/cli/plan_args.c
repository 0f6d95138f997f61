/* plan_args.c - the shared model/layout/hardware/job options (see plan_args.h).
 *
 * Every way of giving a value (flag, --config key, --what-if key) ends in
 * apply(), so validation and error messages are identical whichever was used.
 * The --config reader accepts one flat JSON object of scalars; nested values
 * are refused with their line and column rather than guessed at.
 */
#include "plan_args.h"
#include "../base/buf.h"
#include "../base/src.h"
#include "../base/util.h"
#include "../model/catalog.h"
#include "../plan/presets.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    P_PRESET = 200, P_LAYERS, P_HIDDEN, P_HEADS, P_KV_HEADS, P_HEAD_DIM, P_FFN, P_SWIGLU, P_SEQ, P_VOCAB,
    P_EXPERTS, P_TOPK, P_MOE_FFN, P_SHARED, P_DENSE_LAYERS,
    P_GPUS = 220, P_GPN, P_TP, P_PP, P_DP, P_CP, P_EP, P_VPP, P_SP, P_MB, P_GB, P_RC, P_RC_LAYERS, P_ZERO,
    P_FSDP, P_OFFLOAD, P_DTYPE, P_ATTN,
    P_GPU = 240, P_HBM_GB, P_POWER, P_NIC_GBPS, P_NICS, P_NVLINK, P_STORAGE, P_NET_EFF, P_GEMM_EFF,
    P_CKPT_EVERY = 250, P_CKPT, P_DATA_STALL,
    P_CONFIG = 260,
    P_ETP = 270, P_FP8_RECIPE, P_TP_OVERLAP, P_STACK, P_ACT_OFFLOAD, P_GRAD_BYTES,
};

const cli_opt plan_model_opts[] = {
    {"config", 0, "FILE.json", P_CONFIG, 0, "read these options from a flat JSON object (flags override)"},
    {"preset", 0, "NAME", P_PRESET, 0, "model shape preset (gpt3-175b, llama3-70b, ...; see the manual)"},
    {"layers", 0, "N", P_LAYERS, 0, "transformer layers"},
    {"hidden", 0, "N", P_HIDDEN, 0, "hidden size"},
    {"heads", 0, "N", P_HEADS, 0, "attention heads"},
    {"kv-heads", 0, "N", P_KV_HEADS, 0, "key/value heads (GQA; default = heads)"},
    {"head-dim", 0, "N", P_HEAD_DIM, 0, "per-head width (default hidden/heads)"},
    {"ffn-hidden", 0, "N", P_FFN, 0, "MLP width (default 4*hidden)"},
    {"swiglu", 0, NULL, P_SWIGLU, 0, "gated MLP (SwiGLU: three matrices)"},
    {"seq", 0, "N", P_SEQ, 0, "sequence length"},
    {"vocab", 0, "N", P_VOCAB, 0, "vocabulary size"},
    {"experts", 0, "N", P_EXPERTS, 0, "routed experts per MoE layer"},
    {"topk", 0, "N", P_TOPK, 0, "experts per token"},
    {"moe-ffn-hidden", 0, "N", P_MOE_FFN, 0, "width of one expert MLP"},
    {"shared-experts", 0, "N", P_SHARED, 0, "always-active experts"},
    {"dense-layers", 0, "N", P_DENSE_LAYERS, 0, "leading dense layers of an MoE model"},
    {"gpus", 0, "N", P_GPUS, 0, "GPUs in the job"},
    {"gpus-per-node", 0, "N", P_GPN, 0, "GPUs per node (default: the catalog node)"},
    {"tp", 0, "N", P_TP, 0, "tensor-parallel degree"},
    {"pp", 0, "N", P_PP, 0, "pipeline-parallel degree"},
    {"dp", 0, "N", P_DP, 0, "data-parallel degree (default gpus/(tp*pp*cp))"},
    {"cp", 0, "N", P_CP, 0, "context-parallel degree"},
    {"ep", 0, "N", P_EP, 0, "expert-parallel degree"},
    {"vpp", 0, "N", P_VPP, 0, "interleaved pipeline chunks per stage"},
    {"sp", 0, NULL, P_SP, 0, "sequence parallelism (with TP)"},
    {"micro-batch", 0, "N", P_MB, 0, "sequences per micro-batch"},
    {"global-batch", 0, "N", P_GB, 0, "sequences per step"},
    {"recompute", 0, "MODE", P_RC, 0, "activation recomputation: none, selective or full"},
    {"recompute-layers", 0, "N", P_RC_LAYERS, 0, "with full: layers per stage recomputed (default all)"},
    {"zero", 0, "N", P_ZERO, 0, "ZeRO stage 0-3 (DeepSpeed semantics)"},
    {"fsdp", 0, NULL, P_FSDP, 0, "PyTorch FSDP2 sharding (ZeRO-3 with per-block units)"},
    {"offload", 0, NULL, P_OFFLOAD, 0, "optimizer state in host memory"},
    {"dtype", 0, "TYPE", P_DTYPE, 0, "GEMM precision: bf16 or fp8"},
    {"attention", 0, "KIND", P_ATTN, 0, "attention kernel: flash (the GPU's own fused kernel, default), fa2 "
                                        "(FlashAttention-2 / PyTorch SDPA), triton (FlashAttention in Triton, "
                                        "e.g. MPT's ALiBi attn_impl) or unfused"},
    {"etp", 0, "N", P_ETP, 0, "expert tensor-parallel degree (default tp); EP x ETP fold over TP x CP x DP"},
    {"fp8-recipe", 0, "NAME", P_FP8_RECIPE, 0, "with --dtype fp8: tensor (per-tensor scaling, default), block "
                                              "(block-scaled) or mxfp8 (Blackwell micro-scaling)"},
    {"tp-overlap", 0, NULL, P_TP_OVERLAP, 0, "TP collectives pipelined with the GEMMs (Megatron-Core/TE "
                                            "tp_comm_overlap)"},
    {"stack", 0, "KIND", P_STACK, 0, "elementwise kernels: fused (Megatron/TE, XLA; default) or eager (PyTorch "
                                    "eager)"},
    {"offload-activations", 0, "N", P_ACT_OFFLOAD, 0, "layers per stage whose activations live in host memory"},
    {"grad-reduce-bytes", 0, "N", P_GRAD_BYTES, 0, "bytes per gradient in the data-parallel reduction: 4 (fp32, "
                                                  "default) or 2 (bf16)"},
    {"gpu", 0, "NAME", P_GPU, 0, "accelerator from the catalog (A100, H100, B200, MI300X, ...)"},
    {"hbm-gb", 0, "GB", P_HBM_GB, 0, "device memory override, 1e9 bytes"},
    {"power-w", 0, "W", P_POWER, 0, "board power limit (default: the catalog TDP)"},
    {"nic-gbps", 0, "GBIT", P_NIC_GBPS, 0, "scale-out NIC line rate, Gb/s"},
    {"nics-per-node", 0, "N", P_NICS, 0, "scale-out NICs per node"},
    {"nvlink-gbps", 0, "GBYTE", P_NVLINK, 0, "NVLink per GPU per direction, GB/s"},
    {"storage-gbps", 0, "GBYTE", P_STORAGE, 0, "aggregate checkpoint write bandwidth, GB/s"},
    {"net-efficiency", 0, "F", P_NET_EFF, 0, "inter-node busbw / line rate (default 0.80)"},
    {"gemm-efficiency", 0, "F", P_GEMM_EFF, 0, "large-GEMM rate / peak (default: catalog MAMF x 0.95)"},
    {"ckpt-every", 0, "SECONDS", P_CKPT_EVERY, 0, "checkpoint interval (0 = none)"},
    {"ckpt", 0, "MODE", P_CKPT, 0, "checkpoint mode: sync or async"},
    {"data-stall-ms", 0, "MS", P_DATA_STALL, 0, "data-loader stall per step"},
};
const size_t plan_n_model_opts = sizeof plan_model_opts / sizeof plan_model_opts[0];

int plan_config_opt_id(void) { return P_CONFIG; }

cli_opt *plan_cli_table(const cli_opt *own, size_t n_own, size_t *n)
{
    *n = n_own + plan_n_model_opts;
    cli_opt *t = cp_xcalloc(*n, sizeof *t);
    memcpy(t, own, n_own * sizeof *t);
    memcpy(t + n_own, plan_model_opts, plan_n_model_opts * sizeof *t);
    return t;
}

static const cli_opt *opt_by_id(int id)
{
    for (size_t i = 0; i < plan_n_model_opts; i++)
        if (plan_model_opts[i].id == id) return &plan_model_opts[i];
    return NULL;
}

/* Option by name; '_' and '-' are the same so JSON keys may be snake_case. */
static const cli_opt *opt_by_name(const char *name)
{
    for (size_t i = 0; i < plan_n_model_opts; i++) {
        const char *a = plan_model_opts[i].name, *b = name;
        while (*a && *b && (*a == *b || (*a == '-' && *b == '_'))) a++, b++;
        if (!*a && !*b) return &plan_model_opts[i];
    }
    return NULL;
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

static int parse_num(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi)) return -1;
    *out = x;
    return 0;
}

static int parse_bool(const char *v, bool *out)
{
    if (!v || cp_str_ieq(v, "true") || !strcmp(v, "1") || cp_str_ieq(v, "yes") || cp_str_ieq(v, "on")) {
        *out = true;
        return 0;
    }
    if (cp_str_ieq(v, "false") || !strcmp(v, "0") || cp_str_ieq(v, "no") || cp_str_ieq(v, "off")) {
        *out = false;
        return 0;
    }
    return -1;
}

/* Apply one value. `where` names its origin for messages ("--tp",
 * "config.json:3:5: key 'tp'", "--what-if tp"). Returns 0 or 2. */
static int apply(const cli_ctx *ctx, plan_args *pa, int id, const char *val, const char *where)
{
    plan_inputs *in = &pa->in;
    plan_shape *m = &in->shape;
    long l = 0;
    double d = 0;
    bool b = false;
    const cli_opt *o = opt_by_id(id);
    if (!o) return cli_usage_error(ctx, "%s: unknown option", where);
    if (!o->arg) {
        if (parse_bool(val, &b) < 0)
            return cli_usage_error(ctx, "%s: '%s' is not true or false", where, val);
    } else if (!val) {
        return cli_usage_error(ctx, "%s: a value is required", where);
    }
    /* integer-valued options */
    static const int ints[] = {P_LAYERS, P_HIDDEN, P_HEADS, P_KV_HEADS, P_HEAD_DIM, P_FFN, P_SEQ, P_VOCAB,
                               P_EXPERTS, P_TOPK, P_MOE_FFN, P_SHARED, P_DENSE_LAYERS, P_GPUS, P_GPN,
                               P_TP, P_PP, P_DP, P_CP, P_EP, P_VPP, P_MB, P_GB, P_RC_LAYERS, P_ZERO, P_NICS,
                               P_ETP, P_ACT_OFFLOAD, P_GRAD_BYTES};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        if (ints[i] != id) continue;
        long hi = id == P_ZERO ? 3 : id == P_GRAD_BYTES ? 8 : id == P_GPUS ? (1L << 24) : 100000000L;
        if (parse_long(val, 0, hi, &l) < 0)
            return cli_usage_error(ctx, "%s: '%s' is not a whole number from 0 to %ld", where, val, hi);
    }
    static const int nums[] = {P_HBM_GB, P_POWER, P_NIC_GBPS, P_NVLINK, P_STORAGE, P_NET_EFF, P_GEMM_EFF,
                               P_CKPT_EVERY, P_DATA_STALL};
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        if (nums[i] != id) continue;
        double hi = id == P_NET_EFF || id == P_GEMM_EFF ? 1.0 : 1e12;
        double lo = id == P_NET_EFF || id == P_GEMM_EFF ? 0.001 : 0.0;
        if (parse_num(val, lo, hi, &d) < 0)
            return cli_usage_error(ctx, "%s: '%s' is not a number from %g to %g", where, val, lo, hi);
    }
    switch (id) {
    case P_PRESET: {
        const plan_preset *p = plan_preset_find(val);
        if (!p) return cli_usage_error(ctx, "%s: unknown preset '%s' (see chainprof help model)", where, val);
        *m = p->shape;
        pa->model_name = p->name;
        break;
    }
    case P_LAYERS: m->layers = (int)l; break;
    case P_HIDDEN: m->hidden = (int)l; break;
    case P_HEADS: m->heads = (int)l; break;
    case P_KV_HEADS: m->kv_heads = (int)l; break;
    case P_HEAD_DIM: m->head_dim = (int)l; break;
    case P_FFN: m->ffn_hidden = (int)l; break;
    case P_SWIGLU: m->gated = b; break;
    case P_SEQ: m->seq = (int)l; break;
    case P_VOCAB: m->vocab = (int)l; break;
    case P_EXPERTS: m->experts = (int)l; break;
    case P_TOPK: m->topk = (int)l; break;
    case P_MOE_FFN: m->moe_ffn_hidden = (int)l; break;
    case P_SHARED: m->shared_experts = (int)l; break;
    case P_DENSE_LAYERS: m->dense_layers = (int)l; break;
    case P_GPUS: in->gpus = (int)l; break;
    case P_GPN: in->gpus_per_node = (int)l; break;
    case P_TP: in->tp = pa->tp = (int)l; break;
    case P_PP: in->pp = pa->pp = (int)l; break;
    case P_DP: in->dp = (int)l; break;
    case P_CP: in->cp = pa->cp = (int)l; break;
    case P_EP: in->ep = pa->ep = (int)l; break;
    case P_VPP: in->vpp = pa->vpp = (int)l; break;
    case P_SP: in->sp = b, pa->sp = b; break;
    case P_MB: in->micro_batch = pa->micro_batch = (int)l; break;
    case P_GB: in->global_batch = (int)l; break;
    case P_RC:
        if (cp_str_ieq(val, "none")) in->recompute = PLAN_RC_NONE;
        else if (cp_str_ieq(val, "selective")) in->recompute = PLAN_RC_SELECTIVE;
        else if (cp_str_ieq(val, "full")) in->recompute = PLAN_RC_FULL;
        else return cli_usage_error(ctx, "%s: '%s' is not none, selective or full", where, val);
        pa->recompute = (int)in->recompute;
        break;
    case P_RC_LAYERS: in->recompute_layers = (int)l; break;
    case P_ZERO: in->zero = pa->zero = (int)l; break;
    case P_FSDP:
        in->fsdp = b;
        in->zero = pa->zero = b ? 3 : in->zero;
        break;
    case P_OFFLOAD: in->offload = b; break;
    case P_DTYPE:
        if (cp_str_ieq(val, "bf16") || cp_str_ieq(val, "fp16")) in->fp8 = false;
        else if (cp_str_ieq(val, "fp8")) in->fp8 = true;
        else return cli_usage_error(ctx, "%s: '%s' is not bf16 or fp8", where, val);
        break;
    case P_ATTN:
        if (cp_str_ieq(val, "flash")) in->attn = PLAN_ATTN_FLASH;
        else if (cp_str_ieq(val, "fa2")) in->attn = PLAN_ATTN_FA2;
        else if (cp_str_ieq(val, "unfused")) in->attn = PLAN_ATTN_UNFUSED;
        else if (cp_str_ieq(val, "triton")) in->attn = PLAN_ATTN_TRITON;
        else return cli_usage_error(ctx, "%s: '%s' is not flash, fa2, triton or unfused", where, val);
        break;
    case P_ETP: in->etp = pa->etp = (int)l; break;
    case P_FP8_RECIPE:
        if (cp_str_ieq(val, "tensor")) in->fp8_recipe = PLAN_FP8_TENSOR;
        else if (cp_str_ieq(val, "block")) in->fp8_recipe = PLAN_FP8_BLOCK;
        else if (cp_str_ieq(val, "mxfp8")) in->fp8_recipe = PLAN_FP8_MXFP8;
        else return cli_usage_error(ctx, "%s: '%s' is not tensor, block or mxfp8", where, val);
        break;
    case P_TP_OVERLAP: in->tp_overlap = b; break;
    case P_STACK:
        if (cp_str_ieq(val, "fused")) in->stack = PLAN_STACK_FUSED;
        else if (cp_str_ieq(val, "eager")) in->stack = PLAN_STACK_EAGER;
        else return cli_usage_error(ctx, "%s: '%s' is not fused or eager", where, val);
        break;
    case P_ACT_OFFLOAD: in->act_offload_layers = (int)l; break;
    case P_GRAD_BYTES: in->grad_reduce_bytes = (int)l; break;
    case P_GPU:
        in->gpu = hw_gpu_find(val);
        if (!in->gpu) return cli_usage_error(ctx, "%s: '%s' is not in the hardware catalog (see chainprof help model)", where, val);
        break;
    case P_HBM_GB: in->hbm_bytes = d * 1e9; break;
    case P_POWER: in->power_w = d; break;
    case P_NIC_GBPS: in->nic_gbit_s = d; break;
    case P_NICS: in->nics_per_node = (int)l; break;
    case P_NVLINK: in->nvlink_gbytes = d; break;
    case P_STORAGE: in->storage_gbytes = d; break;
    case P_NET_EFF: in->net_efficiency = d; break;
    case P_GEMM_EFF: in->gemm_efficiency = d; break;
    case P_CKPT_EVERY: in->ckpt_every_s = d; break;
    case P_CKPT:
        if (cp_str_ieq(val, "async")) in->ckpt_async = true;
        else if (cp_str_ieq(val, "sync")) in->ckpt_async = false;
        else return cli_usage_error(ctx, "%s: '%s' is not sync or async", where, val);
        break;
    case P_DATA_STALL: in->data_stall_ms = d; break;
    case P_CONFIG: break;
    default: return cli_usage_error(ctx, "%s: not a model option", where);
    }
    return 0;
}

/* ---- --config: one flat JSON object ---------------------------------- */

typedef struct kv {
    char *key, *val; /* val NULL for JSON null */
    long line, col;
} kv;

typedef struct jp {
    const char *p, *end, *start, *path;
    cp_error *err;
} jp;

static void jp_pos(const jp *j, const char *at, long *line, long *col)
{
    *line = 1, *col = 1;
    for (const char *q = j->start; q < at; q++) {
        if (*q == '\n') (*line)++, *col = 1;
        else (*col)++;
    }
}

static int jp_fail(jp *j, const char *why)
{
    long line, col;
    jp_pos(j, j->p, &line, &col);
    return cp_error_set(j->err, CP_ERR_USAGE, j->path, line, col, j->p - j->start, "bad config: %s", why);
}

static void jp_ws(jp *j)
{
    while (j->p < j->end && isspace((unsigned char)*j->p)) j->p++;
}

/* A JSON string (escapes \" \\ \/ \n \t and \uXXXX below 0x80). */
static int jp_string(jp *j, char **out)
{
    cp_buf b = CP_BUF_INIT;
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\' && j->p < j->end) {
            char e = *j->p++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == 'u' && j->end - j->p >= 4) {
                unsigned v = (unsigned)strtoul((char[5]){j->p[0], j->p[1], j->p[2], j->p[3], 0}, NULL, 16);
                j->p += 4;
                c = v < 0x80 ? (char)v : '?';
            } else c = e;
        }
        cp_buf_putc(&b, c);
    }
    if (j->p >= j->end) {
        cp_buf_free(&b);
        return jp_fail(j, "unterminated string");
    }
    j->p++;
    *out = cp_xstrndup(b.data ? b.data : "", b.len);
    cp_buf_free(&b);
    return 0;
}

static int load_config(const char *path, kv **out, size_t *n, cp_error *err)
{
    cp_buf file = CP_BUF_INIT;
    int rc = cp_src_read_all(path, &file, 1 << 20, err);
    if (rc < 0) return rc;
    jp j = {file.data, file.data + file.len, file.data, path, err};
    *out = NULL, *n = 0;
    size_t cap = 0;
    jp_ws(&j);
    if (j.p >= j.end || *j.p != '{') {
        rc = jp_fail(&j, "expected a JSON object");
        goto out;
    }
    j.p++;
    for (;;) {
        jp_ws(&j);
        if (j.p < j.end && *j.p == '}') break;
        if (j.p >= j.end || *j.p != '"') {
            rc = jp_fail(&j, "expected a key string");
            goto out;
        }
        kv item = {0};
        jp_pos(&j, j.p, &item.line, &item.col);
        if ((rc = jp_string(&j, &item.key)) < 0) goto out;
        jp_ws(&j);
        if (j.p >= j.end || *j.p != ':') {
            free(item.key);
            rc = jp_fail(&j, "expected ':'");
            goto out;
        }
        j.p++;
        jp_ws(&j);
        if (j.p < j.end && *j.p == '"') {
            if ((rc = jp_string(&j, &item.val)) < 0) {
                free(item.key);
                goto out;
            }
        } else {
            const char *s = j.p;
            while (j.p < j.end && !strchr(",}\n\r\t ", *j.p)) j.p++;
            if (j.p == s || *s == '{' || *s == '[') {
                free(item.key);
                rc = jp_fail(&j, "values must be strings, numbers or booleans");
                goto out;
            }
            item.val = cp_xstrndup(s, (size_t)(j.p - s));
            if (!strcmp(item.val, "null")) free(item.val), item.val = NULL;
        }
        cp_xgrow((void **)out, &cap, *n + 1, sizeof **out);
        (*out)[(*n)++] = item;
        jp_ws(&j);
        if (j.p < j.end && *j.p == ',') {
            j.p++;
            continue;
        }
        if (j.p < j.end && *j.p == '}') break;
        rc = jp_fail(&j, "expected ',' or '}'");
        goto out;
    }
    rc = 0;
out:
    cp_buf_free(&file);
    return rc;
}

static void free_kv(kv *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].key), free(v[i].val);
    free(v);
}

int plan_args_build(const cli_ctx *ctx, plan_args *pa)
{
    memset(pa, 0, sizeof *pa);
    plan_inputs_init(&pa->in);
    pa->zero = pa->recompute = pa->sp = -1;
    pa->in.ckpt_async = false;
    kv *cfg = NULL;
    size_t ncfg = 0;
    const char *cpath = cli_get(ctx, P_CONFIG);
    if (cpath) {
        cp_error err;
        cp_error_clear(&err);
        if (load_config(cpath, &cfg, &ncfg, &err) < 0) {
            free_kv(cfg, ncfg); /* the items read before the error */
            return cli_fail(&err);
        }
    }
    char where[600];
    int rc = 0;
    /* presets first (config, then command line), so every other key overrides */
    for (size_t i = 0; i < ncfg && !rc; i++) {
        const cli_opt *o = opt_by_name(cfg[i].key);
        if (!o) {
            snprintf(where, sizeof where, "%s:%ld:%ld: key '%s'", cpath, cfg[i].line, cfg[i].col, cfg[i].key);
            rc = cli_usage_error(ctx, "%s: not a model option", where);
        } else if (o->id == P_CONFIG) {
            snprintf(where, sizeof where, "%s:%ld:%ld: key 'config'", cpath, cfg[i].line, cfg[i].col);
            rc = cli_usage_error(ctx, "%s: a config cannot include another", where);
        } else if (o->id == P_PRESET) {
            snprintf(where, sizeof where, "%s:%ld:%ld: key 'preset'", cpath, cfg[i].line, cfg[i].col);
            rc = apply(ctx, pa, o->id, cfg[i].val, where);
        }
    }
    for (size_t i = 0; i < ctx->args.n_vals && !rc; i++)
        if (ctx->args.vals[i].id == P_PRESET) rc = apply(ctx, pa, P_PRESET, ctx->args.vals[i].val, "--preset");
    for (size_t i = 0; i < ncfg && !rc; i++) {
        const cli_opt *o = opt_by_name(cfg[i].key);
        if (o->id == P_PRESET || !cfg[i].val) continue;
        snprintf(where, sizeof where, "%s:%ld:%ld: key '%s'", cpath, cfg[i].line, cfg[i].col, cfg[i].key);
        rc = apply(ctx, pa, o->id, cfg[i].val, where);
    }
    free_kv(cfg, ncfg);
    for (size_t i = 0; i < ctx->args.n_vals && !rc; i++) {
        const cli_val *v = &ctx->args.vals[i];
        const cli_opt *o = opt_by_id(v->id);
        if (!o || v->id == P_PRESET || v->id == P_CONFIG) continue;
        snprintf(where, sizeof where, "--%s", o->name);
        rc = apply(ctx, pa, v->id, v->val, where);
    }
    if (rc) return rc;
    if (!pa->in.gpu) pa->in.gpu = hw_gpu_find("A100-SXM4-80GB");
    return 0;
}

int plan_args_apply_list(const cli_ctx *ctx, plan_args *pa, const char *list)
{
    char *copy = cp_xstrdup(list);
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) *eq = '\0';
        const cli_opt *o = opt_by_name(tok);
        char where[160];
        snprintf(where, sizeof where, "--what-if %s", tok);
        if (!o || o->id == P_CONFIG)
            rc = cli_usage_error(ctx, "%s: not a model option", where);
        else
            rc = apply(ctx, pa, o->id, eq ? eq + 1 : NULL, where);
    }
    free(copy);
    return rc;
}
