/* calib.c - published-run validation of the performance model (see calib.h).
 *
 * Mapping rules from a CSV row to model inputs (documented in docs/MODEL.md;
 * they interpret what the row states, they are never tuned per row):
 *   - shape: the preset whose family and size match the `model` column
 *     (for GQA/MLP/MoE details the CSV lacks), overridden by the row's
 *     layers, hidden, heads, seq_len, vocab and the optional kv_heads,
 *     ffn_hidden, experts (num_experts), topk (top_k), moe_ffn_hidden and
 *     swiglu columns; no preset = GPT (4h MLP, MHA, tied);
 *   - GPU: hw_gpu_find(gpu_type); "<N>GB" in gpu_type overrides HBM size,
 *     "@<W>W" sets a power limit;
 *   - software stack from `source`: the Megatron-LM papers (Narayanan SC21,
 *     Korthikanti) ran unfused attention (no FlashAttention yet), no
 *     distributed optimizer, and say when SP is on; torchtitan shards with
 *     FSDP2 and pairs TP with SP; any other source gets modern defaults
 *     (FlashAttention, distributed optimizer = ZeRO-1, SP with TP). "CP=k"
 *     in cp_sp (or a cp column) sets CP, FSDP / ZeRO-1/2/3 anywhere in the
 *     row set the sharding, the ep column the EP degree (searched for an
 *     MoE model when empty);
 *   - recompute: "full" and "none" as stated; torchtitan's selective AC
 *     (layer or op policy, and its config default when unstated)
 *     recomputes every second layer: full recomputation of half the layers;
 *     otherwise "selective" is Korthikanti selective recomputation;
 *     unstated: full for the Megatron papers, the planner's best otherwise;
 *   - "float8"/"fp8" in precision = FP8 GEMMs;
 *   - "N model chunks" in notes = interleaving degree N; "interleaved"
 *     without a count = 2 chunks per stage;
 *   - unstated tp/pp: from dp (model-parallel size n/dp, TP filling the
 *     node first); when dp is also unstated, the planner's best choice;
 *   - unstated micro-batch: torchtitan with PP uses its default of one
 *     micro-batch per pipeline stage (local batch / pp); other rows use
 *     the planner's best fitting micro-batch (the papers tuned it);
 *   - unstated global batch: 8*pp micro-batches per DP rank (the
 *     Korthikanti Table 5 setup);
 *   - compared figure, first present of: step_time_s, tokens_per_s_per_gpu,
 *     tokens_per_s, tflops_per_gpu (in the row's convention: Megatron eq. 3
 *     96Bslh^2(1+s/6h+V/16lh) for SC21), mfu_pct.
 */
#include "plan/calib.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/src.h"
#include "base/util.h"
#include "plan/plan_report.h"
#include "plan/planner.h"

#define MAXCOLS 64

enum {
    C_SOURCE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_SEQ, C_VOCAB, C_GPU, C_NGPU, C_TP, C_PP, C_DP,
    C_CPSP, C_EP, C_MB, C_GB, C_RC, C_PREC, C_TFLOPS, C_TPS, C_TPSG, C_MFU, C_STEP, C_CONV, C_NOTES,
    C_MEM, C_CP, C_KV, C_FFN, C_EXPERTS, C_EXPERTS2, C_TOPK, C_TOPK2, C_MOE_FFN, C_SWIGLU, C_NCOLS
};
static const char *const k_cols[C_NCOLS] = {
    "source", "model", "layers", "hidden", "heads", "seq_len", "vocab", "gpu_type", "num_gpus",
    "tp", "pp", "dp", "cp_sp", "ep", "micro_batch", "global_batch", "recompute", "precision",
    "tflops_per_gpu", "tokens_per_s", "tokens_per_s_per_gpu", "mfu_pct", "step_time_s",
    "flops_convention", "notes", "peak_mem_gib",
    /* optional, for datasets that carry them */
    "cp", "kv_heads", "ffn_hidden", "experts", "num_experts", "topk", "top_k", "moe_ffn_hidden", "swiglu",
};

/* Split one CSV record in place (RFC 4180 quotes, "" escapes). Returns the
 * field count; fields point into line. */
static int split_csv(char *line, char **f, int max)
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

static int icontains(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, nl) == 0) return 1;
    return 0;
}

static double num(const char *s)
{
    if (!s || !*s) return NAN;
    char *end;
    double v = strtod(s, &end);
    return end == s ? NAN : v;
}

/* Whole number of a cell; 0 when empty, not a number or beyond 1e8 (the
 * model refuses absurd sizes anyway; this keeps every product in range). */
static int inum(const char *s)
{
    double v = num(s);
    return v >= 0 && v <= 1e8 ? (int)v : 0;
}

/* Preset by family and size in a free-form model name ("Llama 3.1 8B"). */
static const plan_preset *match_preset(const char *model)
{
    char low[128];
    size_t n = 0;
    for (const char *p = model; *p && n + 1 < sizeof low; p++) low[n++] = (char)tolower((unsigned char)*p);
    low[n] = '\0';
    const char *size = NULL;
    static const char *const sizes[] = {"405b", "70b", "13b", "8b", "7b"};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && !size; i++)
        if (strstr(low, sizes[i])) size = sizes[i];
    char name[32];
    if (strstr(low, "llama") && size) {
        const char *fam = strstr(low, "llama 2") || strstr(low, "llama2") ? "llama2" : "llama3";
        snprintf(name, sizeof name, "%s-%s", strcmp(size, "405b") == 0 ? "llama3.1" : fam, size);
        return plan_preset_find(name);
    }
    /* other families: the preset name's letters and digits inside the
     * model's ("Mixtral 8x7B" ~ mixtral-8x7b, "DeepSeek-V3" ~ deepseek-v3);
     * GPT rows keep the generic GPT shape */
    char alnum[128], pname[64];
    size_t k = 0;
    for (const char *p = low; *p && k + 1 < sizeof alnum; p++)
        if (isalnum((unsigned char)*p)) alnum[k++] = *p;
    alnum[k] = '\0';
    for (size_t i = 0; i < plan_preset_count(); i++) {
        const plan_preset *pr = plan_preset_at(i);
        if (strncmp(pr->name, "gpt3", 4) == 0) continue;
        size_t q = 0;
        for (const char *p = pr->name; *p && q + 1 < sizeof pname; p++)
            if (isalnum((unsigned char)*p)) pname[q++] = (char)tolower((unsigned char)*p);
        pname[q] = '\0';
        if (strstr(alnum, pname)) return pr;
    }
    return NULL;
}

/* Largest power of two <= limit that divides v. */
static int pow2_div(int v, int limit)
{
    int t = 1;
    while (t * 2 <= limit && v % (t * 2) == 0) t *= 2;
    return t;
}

/* One row -> predicted figure. Fills r; returns 0 or -1 with r->why. */
static int run_row(char **f, int nf, const int *col, plan_calib_row *r)
{
#define COL(c) (col[c] >= 0 && col[c] < nf ? f[col[c]] : "")
    plan_inputs in;
    plan_inputs_init(&in);
    snprintf(r->model, sizeof r->model, "%s", COL(C_MODEL));
    snprintf(r->source, sizeof r->source, "%.*s", (int)strcspn(COL(C_SOURCE), "(;"), COL(C_SOURCE));
    const plan_preset *pr = match_preset(COL(C_MODEL));
    if (pr) {
        in.shape = pr->shape;
    } else {
        in.shape.tied_embeddings = 1;
    }
    int layers = inum(COL(C_LAYERS)), hidden = inum(COL(C_HIDDEN)), heads = inum(COL(C_HEADS));
    int seq = inum(COL(C_SEQ)), vocab = inum(COL(C_VOCAB));
    if (layers <= 0 || hidden <= 0 || heads <= 0 || seq <= 0 || vocab <= 0) {
        snprintf(r->why, sizeof r->why, "model shape incomplete");
        return -1;
    }
    in.shape.layers = layers, in.shape.hidden = hidden, in.shape.heads = heads;
    in.shape.seq = seq, in.shape.vocab = vocab;
    /* optional shape columns override the preset */
    if (inum(COL(C_KV)) > 0) in.shape.kv_heads = inum(COL(C_KV));
    if (inum(COL(C_FFN)) > 0) in.shape.ffn_hidden = inum(COL(C_FFN));
    int experts = inum(COL(C_EXPERTS)) > 0 ? inum(COL(C_EXPERTS)) : inum(COL(C_EXPERTS2));
    if (experts > 0) in.shape.experts = experts;
    int topk = inum(COL(C_TOPK)) > 0 ? inum(COL(C_TOPK)) : inum(COL(C_TOPK2));
    if (topk > 0) in.shape.topk = topk;
    if (inum(COL(C_MOE_FFN)) > 0) in.shape.moe_ffn_hidden = inum(COL(C_MOE_FFN));
    const char *sw = COL(C_SWIGLU);
    if (*sw) in.shape.gated = cp_str_ieq(sw, "true") || cp_str_ieq(sw, "yes") || !strcmp(sw, "1");
    in.gpu = hw_gpu_find(COL(C_GPU));
    if (!in.gpu) {
        snprintf(r->why, sizeof r->why, "gpu '%s' not in the catalog", COL(C_GPU));
        return -1;
    }
    const char *gb_txt = COL(C_GPU);
    for (const char *p = gb_txt; *p; p++) {
        if (isdigit((unsigned char)*p) && (p == gb_txt || !isalnum((unsigned char)p[-1]))) {
            char *end;
            long v = strtol(p, &end, 10);
            if (strncasecmp(end, "GB", 2) == 0 && v > 0) in.hbm_bytes = v * 1e9;
            p = end - 1;
        }
    }
    const char *at = strchr(gb_txt, '@');
    if (at && atof(at + 1) > 0 && strchr(at, 'W')) in.power_w = atof(at + 1);
    in.gpus = inum(COL(C_NGPU));
    if (in.gpus <= 0) {
        snprintf(r->why, sizeof r->why, "num_gpus missing");
        return -1;
    }
    /* The software stack, from the source: Megatron-LM as in its 2021/2022
     * papers, torchtitan, or anything else (modern Megatron-Core/NeMo-like
     * defaults). */
    int megatron = icontains(COL(C_SOURCE), "Narayanan") || icontains(COL(C_SOURCE), "Korthikanti");
    int titan = !megatron && icontains(COL(C_SOURCE), "torchtitan");
    in.attn = megatron ? PLAN_ATTN_UNFUSED : PLAN_ATTN_FLASH;
    const char *cpsp = COL(C_CPSP);
    int tp = inum(COL(C_TP)), pp = inum(COL(C_PP)), dp = inum(COL(C_DP));
    int cp = inum(COL(C_CP));
    const char *cpp = strstr(cpsp, "CP=");
    if (cpp) cp = atoi(cpp + 3);
    if (cp <= 0 || cp > 1000000) cp = 1;
    plan_space sp;
    plan_space_init(&sp);
    /* Megatron rows say when SP is on; torchtitan's TP plan and modern
     * Megatron always shard the sequence with TP */
    sp.sp = megatron ? strstr(cpsp, "SP") != NULL : -1;
    sp.cp = cp;
    int ep = inum(COL(C_EP));
    sp.ep = ep > 0 ? ep : (in.shape.experts > 0 ? 0 : 1);
    const char *notes_z = COL(C_NOTES);
    int fsdp = icontains(cpsp, "FSDP") || icontains(notes_z, "FSDP");
    int zero3 = icontains(notes_z, "ZeRO-3") || icontains(cpsp, "ZeRO-3");
    int zero2 = icontains(notes_z, "ZeRO-2") || icontains(cpsp, "ZeRO-2");
    int zero1 = icontains(notes_z, "ZeRO-1") || icontains(notes_z, "distributed optimizer");
    in.fsdp = (fsdp || titan) && !zero3; /* torchtitan shards with FSDP2 */
    if (fsdp || zero3 || titan) sp.zero = 3;
    else if (zero2) sp.zero = 2;
    else if (zero1) sp.zero = 1;
    else sp.zero = megatron ? 0 : 1; /* modern Megatron: distributed optimizer */
    /* tp/pp from what is stated */
    if (tp <= 0 && pp <= 0 && dp > 0 && in.gpus % (dp * cp) == 0) {
        int mp = in.gpus / (dp * cp);
        int gpn = in.gpu->gpus_per_node;
        tp = pow2_div(mp, gpn);
        pp = mp / tp;
    } else if (dp > 0 && (tp > 0) != (pp > 0)) {
        int rest = in.gpus / (dp * cp);
        if (tp > 0) pp = rest / tp;
        else tp = rest / pp;
    }
    if (tp > 0) sp.tp = tp;
    if (pp > 0) sp.pp = pp;
    if (tp <= 0 && pp <= 0 && dp <= 0) sp.tp = pow2_div(in.gpus, in.gpu->gpus_per_node);
    /* recompute */
    const char *rc = COL(C_RC);
    int half = 0;
    if (strncasecmp(rc, "full", 4) == 0) sp.recompute = PLAN_RC_FULL;
    else if (strncasecmp(rc, "none", 4) == 0) sp.recompute = PLAN_RC_NONE;
    else if (titan && (*rc == '\0' || strncasecmp(rc, "selective", 9) == 0))
        sp.recompute = PLAN_RC_FULL, half = 1; /* torchtitan selective AC (its default) */
    else if (strncasecmp(rc, "selective", 9) == 0) sp.recompute = PLAN_RC_SELECTIVE;
    else if (megatron) sp.recompute = PLAN_RC_FULL; /* the 2021 papers recomputed fully */
    else sp.recompute = -1;                         /* unstated: the planner's best */
    in.fp8 = icontains(COL(C_PREC), "float8") || icontains(COL(C_PREC), "fp8");
    /* interleaving */
    const char *notes = COL(C_NOTES);
    const char *ch = strstr(notes, "model chunks");
    sp.vpp = 1;
    if (ch) {
        const char *q = ch;
        while (q > notes && (q[-1] == ' ' || isdigit((unsigned char)q[-1]))) q--;
        int v = atoi(q);
        sp.vpp = v > 0 ? v : 0;
    } else if (icontains(notes, "interleaved")) {
        sp.vpp = 2; /* interleaved without a chunk count: two chunks per stage */
    }
    int mb = inum(COL(C_MB));
    int gb = inum(COL(C_GB));
    if (mb > 0) {
        sp.micro_batch = mb;
    } else if (titan && sp.pp > 1 && gb > 0 && dp > 0 && (long long)dp * sp.pp <= gb && gb % (dp * sp.pp) == 0) {
        /* torchtitan splits the local batch into as many micro-batches as
         * pipeline stages unless told otherwise */
        sp.micro_batch = gb / (dp * sp.pp);
    }
    if (gb <= 0) {
        if (sp.pp <= 0 || dp <= 0 || mb <= 0) {
            snprintf(r->why, sizeof r->why, "global batch and layout both unstated");
            return -1;
        }
        long long g = (long long)dp * mb * 8 * sp.pp;
        if (g > 100000000LL) {
            snprintf(r->why, sizeof r->why, "derived global batch too large");
            return -1;
        }
        gb = (int)g;
    }
    in.global_batch = gb;
    /* run: the planner fills whatever is still free */
    plan_candidate best[1];
    memset(best, 0, sizeof best);
    int got;
    if (half) {
        /* half the layers of the (pinned or searched) stage recomputed */
        got = 0;
        plan_candidate c;
        double best_tps = -1;
        for (int try_pp = 1; try_pp <= layers; try_pp++) {
            if (sp.pp > 0 && try_pp != sp.pp) continue;
            if (sp.pp <= 0 && layers % try_pp) continue;
            plan_space s2 = sp;
            s2.pp = try_pp;
            in.recompute_layers = ((layers + try_pp - 1) / try_pp + 1) / 2;
            if (plan_search(&in, &s2, &c, 1, NULL) == 1 && c.res.tokens_per_s > best_tps) {
                best_tps = c.res.tokens_per_s;
                best[0] = c;
                got = 1;
            }
        }
    } else {
        got = plan_search(&in, &sp, best, 1, NULL);
    }
    if (got != 1 && best[0].res.memory.total_bytes > 0) {
        /* the run happened, so it fit: model it anyway and say so */
        snprintf(r->note, sizeof r->note, "model says it does not fit: %.1f GB of %.1f GB",
                 best[0].res.memory.total_bytes / 1e9, best[0].res.memory.hbm_bytes / 1e9);
        got = 1;
    }
    if (got != 1) {
        if (best[0].res.memory.total_bytes > 0)
            snprintf(r->why, sizeof r->why,
                     "no layout fits: closest needs %.1f GB of %.1f GB (largest: %s %.1f GB act %.1f GB)",
                     best[0].res.memory.total_bytes / 1e9, best[0].res.memory.hbm_bytes / 1e9,
                     best[0].res.memory.overflow ? best[0].res.memory.overflow : "?",
                     best[0].res.memory.optimizer_bytes / 1e9, best[0].res.memory.activations_bytes / 1e9);
        else
            snprintf(r->why, sizeof r->why, "no valid layout for the stated constraints");
        return -1;
    }
    const plan_result *res = &best[0].res;
    const plan_inputs *bi = &best[0].in;
    plan_layout_text(bi, res, r->layout, sizeof r->layout);
    if (half) {
        size_t len = strlen(r->layout);
        snprintf(r->layout + len, sizeof r->layout - len, " (%d layers)", bi->recompute_layers);
    }
    r->mem_predicted_bytes = res->memory.total_bytes;
    double mem = num(COL(C_MEM));
    r->mem_measured_bytes = isnan(mem) ? NAN : mem * 1073741824.0;
    double v;
    if (!isnan(v = num(COL(C_STEP)))) {
        snprintf(r->metric, sizeof r->metric, "step_time_s");
        r->measured = v, r->predicted = res->step_time_s;
    } else if (!isnan(v = num(COL(C_TPSG)))) {
        snprintf(r->metric, sizeof r->metric, "tokens_per_s_per_gpu");
        r->measured = v, r->predicted = res->tokens_per_s / in.gpus;
    } else if (!isnan(v = num(COL(C_TPS)))) {
        snprintf(r->metric, sizeof r->metric, "tokens_per_s");
        r->measured = v, r->predicted = res->tokens_per_s;
    } else if (!isnan(v = num(COL(C_TFLOPS)))) {
        snprintf(r->metric, sizeof r->metric, "tflops_per_gpu");
        double fl;
        if (icontains(COL(C_CONV), "96Bslh") || icontains(COL(C_CONV), "eq.(3)") || icontains(COL(C_CONV), "eq. (3)")) {
            double B = gb, s = seq, l = layers, h = hidden, V = vocab;
            fl = 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
        } else {
            fl = res->hw_flops_per_step;
        }
        r->measured = v, r->predicted = fl / res->step_time_s / in.gpus / 1e12;
    } else if (!isnan(v = num(COL(C_MFU)))) {
        snprintf(r->metric, sizeof r->metric, "mfu_pct");
        r->measured = v, r->predicted = res->mfu * 100.0;
    } else {
        snprintf(r->why, sizeof r->why, "no measured figure");
        return -1;
    }
    if (!(r->measured > 0) || isinf(r->measured)) {
        snprintf(r->why, sizeof r->why, "measured %s is not a positive number", r->metric);
        return -1;
    }
    r->err = (r->predicted - r->measured) / r->measured;
    return 0;
#undef COL
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Next line of [*p, end) into a NUL-terminated malloc'd copy without the
 * line ending; NULL at the end of the data. */
static char *next_line(const char **p, const char *end)
{
    if (*p >= end) return NULL;
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    const char *e = nl ? nl : end;
    *p = nl ? nl + 1 : end;
    if (e > s && e[-1] == '\r') e--;
    return cp_xstrndup(s, (size_t)(e - s));
}

int plan_calib_mem(const char *data, size_t len, const char *name, plan_calib_row *rows, int cap,
                   plan_calib_summary *sum, char *err, int errsz)
{
    memset(sum, 0, sizeof *sum);
    sum->median_abs_err = sum->max_abs_err = sum->mean_abs_err = NAN;
    sum->mem_median_abs_err = sum->mem_max_abs_err = NAN;
    const char *p = data, *end = data + len;
    char *f[MAXCOLS];
    int col[C_NCOLS];
    char *line = next_line(&p, end);
    if (!line) {
        snprintf(err, (size_t)errsz, "%s:1: empty file", name);
        return -1;
    }
    int nh = split_csv(line, f, MAXCOLS);
    for (int c = 0; c < C_NCOLS; c++) {
        col[c] = -1;
        for (int i = 0; i < nh; i++)
            if (strcmp(f[i], k_cols[c]) == 0) col[c] = i;
    }
    free(line);
    static const int required[] = {C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_SEQ, C_VOCAB, C_GPU, C_NGPU};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        if (col[required[i]] < 0) {
            snprintf(err, (size_t)errsz, "%s:1: header lacks column '%s'", name, k_cols[required[i]]);
            return -1;
        }
    }
    double *errs = cp_xcalloc(PLAN_CALIB_MAX_ROWS, sizeof *errs);
    double *merrs = cp_xcalloc(PLAN_CALIB_MAX_ROWS, sizeof *merrs);
    double total = 0;
    int ne = 0, nm = 0;
    for (long lineno = 2; (line = next_line(&p, end)) != NULL; lineno++) {
        if (!line[0]) {
            free(line);
            continue;
        }
        if (sum->rows >= PLAN_CALIB_MAX_ROWS) {
            sum->truncated = 1;
            free(line);
            break;
        }
        int nf = split_csv(line, f, MAXCOLS);
        plan_calib_row r;
        memset(&r, 0, sizeof r);
        r.line = lineno;
        r.err = NAN;
        r.mem_measured_bytes = r.mem_predicted_bytes = NAN;
        sum->rows++;
        if (run_row(f, nf, col, &r) == 0) {
            sum->used++;
            double a = fabs(r.err);
            errs[ne++] = a;
            total += a;
            if (isnan(sum->max_abs_err) || a > sum->max_abs_err) sum->max_abs_err = a, sum->worst_line = lineno;
            if (!isnan(r.mem_measured_bytes)) {
                double me = fabs(r.mem_predicted_bytes - r.mem_measured_bytes) / r.mem_measured_bytes;
                merrs[nm++] = me;
                if (isnan(sum->mem_max_abs_err) || me > sum->mem_max_abs_err) sum->mem_max_abs_err = me;
            }
        } else {
            sum->skipped++;
        }
        free(line);
        if (rows && sum->rows <= cap) rows[sum->rows - 1] = r;
    }
    sum->median_abs_err = median(errs, ne);
    sum->mean_abs_err = ne ? total / ne : NAN;
    sum->mem_rows = nm;
    sum->mem_median_abs_err = median(merrs, nm);
    free(errs);
    free(merrs);
    return 0;
}

int plan_calib_file(const char *path, plan_calib_row *rows, int cap, plan_calib_summary *sum,
                    char *err, int errsz)
{
    cp_buf buf = CP_BUF_INIT;
    cp_error e;
    cp_error_clear(&e);
    if (cp_src_read_all(path, &buf, PLAN_CALIB_MAX_BYTES, &e) < 0) {
        memset(sum, 0, sizeof *sum);
        cp_error_format(&e, err, (size_t)errsz);
        cp_buf_free(&buf);
        return -1;
    }
    int rc = plan_calib_mem(buf.data ? buf.data : "", buf.len, path, rows, cap, sum, err, errsz);
    cp_buf_free(&buf);
    return rc;
}
