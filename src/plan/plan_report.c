/* plan_report.c - report subtrees for the performance model (see plan_report.h).
 *
 * The breakdown is emitted twice on purpose: once as the `breakdown` object
 * with the schema's fixed keys (what scripts read), once as the `chain` table
 * that maps each component to the layer of the compute chain it loads and
 * gives its share of the step (what people read). Both come from the same
 * plan_breakdown, so they cannot drift apart.
 */
#include "plan/plan_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *plan_recompute_name(plan_recompute rc)
{
    switch (rc) {
    case PLAN_RC_SELECTIVE: return "selective";
    case PLAN_RC_FULL: return "full";
    default: return "none";
    }
}

void plan_layout_text(const plan_inputs *in, const plan_result *res, char *buf, size_t size)
{
    char shard[8];
    if (in->fsdp) snprintf(shard, sizeof shard, "fsdp");
    else snprintf(shard, sizeof shard, "zero%d", in->zero);
    snprintf(buf, size, "tp%d pp%d dp%d cp%d ep%d vpp%d mb%d %s rc=%s%s%s", res->tp, res->pp, res->dp, res->cp,
             res->ep, res->vpp, res->micro_batch, shard, plan_recompute_name(in->recompute),
             in->sp && res->tp > 1 ? " sp" : "", in->fp8 ? " fp8" : "");
}

/* Component -> key, title, chain layer. Order = schema order. */
static const struct {
    const char *key, *title, *layer;
    size_t off;
} k_parts[] = {
    {"compute_s", "GPU compute (incl. recompute)", "compute", offsetof(plan_breakdown, compute_s)},
    {"tp_comm_s", "tensor-parallel collectives", "intra", offsetof(plan_breakdown, tp_comm_s)},
    {"cp_comm_s", "context-parallel exchange (exposed)", "intra", offsetof(plan_breakdown, cp_comm_s)},
    {"pp_bubble_s", "pipeline bubble", "compute", offsetof(plan_breakdown, pp_bubble_s)},
    {"pp_p2p_s", "pipeline send/recv (exposed)", "inter", offsetof(plan_breakdown, pp_p2p_s)},
    {"dp_comm_s", "data-parallel / ZeRO traffic (exposed)", "inter", offsetof(plan_breakdown, dp_comm_s)},
    {"ep_comm_s", "expert all-to-all", "inter", offsetof(plan_breakdown, ep_comm_s)},
    {"optimizer_s", "optimizer step + per-step overhead", "host", offsetof(plan_breakdown, optimizer_s)},
    {"data_s", "data loading stall", "storage", offsetof(plan_breakdown, data_s)},
    {"checkpoint_s", "checkpoint (amortized per step)", "storage", offsetof(plan_breakdown, checkpoint_s)},
};

static double part(const plan_breakdown *b, size_t i)
{
    double v;
    memcpy(&v, (const char *)b + k_parts[i].off, sizeof v);
    return v;
}

void plan_report_result(rep_report *r, rep_node *parent, const plan_inputs *in, const plan_result *res)
{
    (void)in;
    rep_num(r, parent, "step_time_s", "step time", res->step_time_s, "s");
    rep_num(r, parent, "tokens_per_s", "throughput", res->tokens_per_s, "tokens/s");
    rep_num(r, parent, "tokens_per_s_per_gpu", "throughput per GPU", res->tokens_per_s / (res->tp * res->pp * res->dp * res->cp), "tokens/s");
    rep_num(r, parent, "tflops_per_gpu", "model TFLOP/s per GPU", res->tflops_per_gpu, "TFLOP/s");
    rep_node *m = rep_num(r, parent, "mfu", "MFU (model FLOPs / BF16 peak)", res->mfu, NULL);
    m->digits = 3;
    m = rep_num(r, parent, "hfu", "HFU (incl. recompute)", res->hfu, NULL);
    m->digits = 3;
    rep_node *b = rep_obj(r, parent, "breakdown", "step time by component");
    for (size_t i = 0; i < sizeof k_parts / sizeof *k_parts; i++)
        rep_num(r, b, k_parts[i].key, k_parts[i].title, part(&res->breakdown, i), "s");
    static const rep_col cols[] = {
        {"component", "component", NULL, -1}, {"layer", "chain layer", NULL, -1},
        {"time_s", "time", "s", 3},           {"share_pct", "share", "%", 1},
    };
    rep_node *t = rep_table(r, parent, "chain", "where the step time goes", cols, 4);
    for (size_t i = 0; i < sizeof k_parts / sizeof *k_parts; i++) {
        double v = part(&res->breakdown, i);
        if (v <= 0) continue;
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, k_parts[i].key);
        rep_cell_str(r, row, k_parts[i].layer);
        rep_cell_num(r, row, v);
        rep_cell_num(r, row, 100.0 * v / res->step_time_s);
    }
    const plan_memory *mm = &res->memory;
    rep_node *mem = rep_obj(r, parent, "memory", "memory per GPU");
    rep_num(r, mem, "params_bytes", "parameters", mm->params_bytes, "bytes");
    rep_num(r, mem, "grads_bytes", "gradients", mm->grads_bytes, "bytes");
    rep_num(r, mem, "optimizer_bytes", "optimizer state", mm->optimizer_bytes, "bytes");
    rep_num(r, mem, "activations_bytes", "activations", mm->activations_bytes, "bytes");
    rep_num(r, mem, "other_bytes", "logits, buffers, runtime", mm->other_bytes, "bytes");
    rep_num(r, mem, "total_bytes", "total", mm->total_bytes, "bytes");
    rep_num(r, mem, "hbm_bytes", "HBM capacity", mm->hbm_bytes, "bytes");
    rep_bool(r, mem, "fits", "fits", mm->fits);
    if (mm->overflow) rep_str(r, mem, "overflow", "largest component (does not fit)", mm->overflow);
    else rep_null(r, mem, "overflow", "largest component (does not fit)", NULL);
}

void plan_report_inputs(rep_report *r, rep_node *parent, const char *model_name, const plan_inputs *in,
                        const plan_result *res)
{
    const plan_shape *s = &in->shape;
    rep_node *m = rep_obj(r, parent, "model", "model");
    if (model_name) rep_str(r, m, "name", "name", model_name);
    else rep_null(r, m, "name", "name", NULL);
    rep_int(r, m, "layers", "layers", s->layers, NULL);
    rep_int(r, m, "hidden", "hidden", s->hidden, NULL);
    rep_int(r, m, "heads", "heads", s->heads, NULL);
    rep_int(r, m, "kv_heads", "KV heads", s->kv_heads > 0 ? s->kv_heads : s->heads, NULL);
    rep_int(r, m, "ffn_hidden", "FFN hidden", s->ffn_hidden > 0 ? s->ffn_hidden : 4 * s->hidden, NULL);
    rep_bool(r, m, "swiglu", "gated MLP (SwiGLU)", s->gated != 0);
    rep_int(r, m, "seq", "sequence length", s->seq, "tokens");
    rep_int(r, m, "vocab", "vocabulary", s->vocab, NULL);
    rep_int(r, m, "experts", "experts", s->experts, NULL);
    rep_int(r, m, "topk", "experts per token", s->experts > 0 ? s->topk : 0, NULL);
    rep_node *n = rep_num(r, m, "params_total", "parameters", res->params_total, NULL);
    n->digits = 0;
    n = rep_num(r, m, "params_active", "active parameters per token", res->params_active, NULL);
    n->digits = 0;
    rep_num(r, m, "model_flops_per_step", "model FLOPs per step", res->model_flops_per_step, "FLOP")->digits = 0;
    rep_num(r, m, "hw_flops_per_step", "hardware FLOPs per step (incl. recompute)", res->hw_flops_per_step, "FLOP")
        ->digits = 0;

    rep_node *h = rep_obj(r, parent, "hardware", "hardware");
    rep_str(r, h, "gpu", "GPU", in->gpu ? in->gpu->name : "");
    rep_num(r, h, "peak_tflops", "dense BF16 peak", res->peak_tflops, "TFLOP/s");
    rep_num(r, h, "hbm_bytes", "HBM", res->memory.hbm_bytes, "bytes");
    rep_num(r, h, "nvlink_gbytes_per_s", "scale-up per GPU per direction", res->nvlink_gbytes, "GB/s");
    rep_num(r, h, "net_gbytes_per_s_per_gpu", "scale-out per GPU (line rate)", res->net_gbytes_per_gpu, "GB/s");
    rep_num(r, h, "storage_gbytes_per_s", "checkpoint write bandwidth", res->storage_gbytes, "GB/s");
    if (in->gpu) rep_str(r, h, "node", "default node design", in->gpu->node_name);
    if (in->gpu) rep_str(r, h, "source", "catalog source", in->gpu->source);

    rep_node *l = rep_obj(r, parent, "layout", "layout");
    int gpus = res->tp * res->pp * res->dp * res->cp;
    rep_int(r, l, "gpus", "GPUs", gpus, NULL);
    rep_int(r, l, "tp", "tensor parallel", res->tp, NULL);
    rep_int(r, l, "pp", "pipeline parallel", res->pp, NULL);
    rep_int(r, l, "dp", "data parallel", res->dp, NULL);
    rep_int(r, l, "cp", "context parallel", res->cp, NULL);
    rep_int(r, l, "ep", "expert parallel", res->ep, NULL);
    rep_int(r, l, "vpp", "interleaved chunks per stage", res->vpp, NULL);
    rep_bool(r, l, "sp", "sequence parallel", in->sp && res->tp > 1);
    rep_int(r, l, "micro_batch", "micro-batch", res->micro_batch, "sequences");
    rep_int(r, l, "global_batch", "global batch", res->global_batch, "sequences");
    rep_int(r, l, "microbatches", "micro-batches per step", res->microbatches, NULL);
    rep_str(r, l, "recompute", "recomputation", plan_recompute_name(in->recompute));
    rep_int(r, l, "zero", "ZeRO stage", in->zero, NULL);
    rep_bool(r, l, "fsdp", "FSDP", in->fsdp);
    rep_bool(r, l, "offload", "optimizer offload", in->offload);
    rep_str(r, l, "dtype", "GEMM dtype", in->fp8 ? "fp8" : "bf16");
    rep_str(r, l, "attention", "attention kernel", plan_attn_name(in->attn));

    const plan_defaults *d = plan_defaults_get();
    rep_node *a = rep_obj(r, parent, "assumptions", "assumptions");
    rep_num(r, a, "gemm_efficiency", "large-GEMM efficiency (of peak)", res->gemm_eff, NULL);
    rep_num(r, a, "attention_efficiency", "fused attention forward (of peak)", res->attn_tflops / res->peak_tflops, NULL);
    rep_num(r, a, "hbm_efficiency", "elementwise HBM efficiency", d->mem_eff, NULL);
    const collm_consts *cc = collm_consts_get();
    rep_num(r, a, "nvlink_efficiency", "NVLink busbw / link rate", cc->nvlink_eff, NULL);
    rep_num(r, a, "net_efficiency", "network busbw / line rate",
            in->net_efficiency > 0 ? in->net_efficiency : cc->net_eff * d->net_train_eff, NULL);
    rep_num(r, a, "latency_intra_us", "collective step latency, intra-node", collm_ring_step_us(false), "us");
    rep_num(r, a, "latency_inter_us", "collective step latency, inter-node", collm_ring_step_us(true), "us");
    rep_num(r, a, "fsdp_overlap", "share of compute that hides ZeRO-3/FSDP traffic", d->fsdp_overlap, NULL);
    rep_num(r, a, "overlap_cost", "slowdown from hidden communication", d->overlap_cost, NULL);
    rep_num(r, a, "step_overhead_s", "fixed per-step overhead", d->step_overhead_s, "s");
    rep_num(r, a, "ckpt_bytes", "checkpoint size", res->ckpt_bytes, "bytes");
    rep_num(r, a, "ckpt_every_s", "checkpoint interval", in->ckpt_every_s > 0 ? in->ckpt_every_s : NAN, "s");
    rep_str(r, a, "ckpt", "checkpoint mode", in->ckpt_async ? "async" : "sync");
}

void plan_report_delta(rep_report *r, rep_node *parent, const char *key, const char *changes,
                       const plan_result *base, const plan_result *alt)
{
    rep_node *w = rep_obj(r, parent, key, "what-if");
    rep_str(r, w, "changes", "changes", changes);
    rep_num(r, w, "baseline_step_time_s", "baseline step time", base->step_time_s, "s");
    rep_num(r, w, "step_time_s", "step time", alt->step_time_s, "s");
    rep_num(r, w, "baseline_tokens_per_s", "baseline throughput", base->tokens_per_s, "tokens/s");
    rep_num(r, w, "tokens_per_s", "throughput", alt->tokens_per_s, "tokens/s");
    rep_node *n = rep_num(r, w, "baseline_mfu", "baseline MFU", base->mfu, NULL);
    n->digits = 3;
    n = rep_num(r, w, "mfu", "MFU", alt->mfu, NULL);
    n->digits = 3;
    rep_num(r, w, "speedup", "speedup", alt->tokens_per_s / base->tokens_per_s, "x");
    static const rep_col cols[] = {
        {"component", "component", NULL, -1},
        {"baseline_s", "baseline", "s", 3},
        {"what_if_s", "what-if", "s", 3},
        {"delta_s", "change", "s", 3},
    };
    rep_node *t = rep_table(r, w, "breakdown", "per component", cols, 4);
    for (size_t i = 0; i < sizeof k_parts / sizeof *k_parts; i++) {
        double a = part(&base->breakdown, i), b = part(&alt->breakdown, i);
        if (a <= 0 && b <= 0) continue;
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, k_parts[i].key);
        rep_cell_num(r, row, a);
        rep_cell_num(r, row, b);
        rep_cell_num(r, row, b - a);
    }
}

static void coll_terms(rep_report *r, rep_node *o, const collm_result *res)
{
    rep_num(r, o, "time_us", "time", res->time_s * 1e6, "us");
    rep_num(r, o, "algbw_gbps", "algorithm bandwidth", res->algbw_gbps, "GB/s");
    rep_num(r, o, "busbw_gbps", "bus bandwidth (nccl-tests)", res->busbw_gbps, "GB/s");
    rep_node *t = rep_obj(r, o, "terms", "latency + bandwidth terms");
    rep_num(r, t, "latency_us", "latency term", res->latency_s * 1e6, "us");
    rep_num(r, t, "bandwidth_us", "bandwidth term (bytes / peak algbw)", res->bandwidth_s * 1e6, "us");
    rep_num(r, t, "peak_busbw_gbps", "large-message busbw of this algorithm", res->peak_busbw_gbps, "GB/s");
    rep_num(r, t, "intra_busbw_gbps", "scale-up bound", res->intra_busbw_gbps, "GB/s");
    rep_num(r, t, "net_busbw_gbps", "network bound", res->net_busbw_gbps, "GB/s");
    rep_str(r, t, "bound", "limited by", res->bound ? res->bound : "none");
    rep_int(r, t, "domains", "NVLink domains spanned", res->domains, NULL);
}

typedef struct coll_cand {
    collm_result res;
} coll_cand;

void plan_report_collective(rep_report *r, rep_node *parent, const collm_query *q, const collm_topo *t,
                            const collm_result *res)
{
    rep_node *o = rep_obj(r, parent, "collective", "collective");
    rep_str(r, o, "op", "operation", coll_op_name(q->op));
    rep_num(r, o, "bytes", "message size", q->bytes, "bytes")->digits = 0;
    rep_int(r, o, "nodes", "nodes", q->nodes, NULL);
    rep_int(r, o, "gpus_per_node", "GPUs per node", q->gpus_per_node, NULL);
    rep_int(r, o, "ranks", "ranks", t->ranks, NULL);
    rep_int(r, o, "ranks_per_domain", "ranks per NVLink domain", t->per_domain, NULL);
    rep_str(r, o, "gpu", "GPU", q->gpu ? q->gpu->name : "");
    rep_num(r, o, "intra_gbps", "scale-up line rate per GPU per direction", t->intra_gbps, "GB/s");
    rep_str(r, o, "intra_link", "scale-up link", t->pcie ? "pcie" : (t->nvswitch ? "nvswitch" : "nvlink"));
    rep_num(r, o, "net_gbps", "NIC line rate per NVLink domain", t->net_gbps > 0 ? t->net_gbps : NAN, "GB/s");
    rep_bool(r, o, "sharp", "in-network reduction (SHARP)", t->sharp);
    rep_str(r, o, "algo_requested", "algorithm asked", collm_algo_name(q->algo));
    rep_str(r, o, "proto_requested", "protocol asked", collm_proto_name(q->proto));
    rep_str(r, o, "algorithm", "algorithm", collm_algo_name(res->algo));
    rep_str(r, o, "protocol", "protocol", collm_proto_name(res->proto));
    coll_terms(r, o, res);
    coll_cand c[COLLM_ALGO_N * COLLM_PROTO_N];
    int n = 0;
    for (int a = 0; a < COLLM_ALGO_N; a++)
        for (int p = 0; p < COLLM_PROTO_N; p++)
            if (collm_model(q->op, q->bytes, t, a, p, &c[n].res, NULL, 0) == 0 && t->ranks > 1) n++;
    for (int i = 1; i < n; i++) /* insertion sort, fastest first */
        for (int j = i; j > 0 && c[j].res.time_s < c[j - 1].res.time_s; j--) {
            coll_cand tmp = c[j];
            c[j] = c[j - 1];
            c[j - 1] = tmp;
        }
    static const rep_col cols[] = {
        {"algorithm", "algorithm", NULL, -1}, {"protocol", "protocol", NULL, -1},
        {"time_us", "time", "us", 1},        {"busbw_gbps", "busbw", "GB/s", 1},
        {"latency_us", "latency", "us", 1},  {"peak_busbw_gbps", "peak busbw", "GB/s", 1},
    };
    rep_node *tb = rep_table(r, o, "candidates", "what the tuner weighs (fastest first)", cols, 6);
    for (int i = 0; i < n; i++) {
        rep_node *row = rep_row(r, tb);
        rep_cell_str(r, row, collm_algo_name(c[i].res.algo));
        rep_cell_str(r, row, collm_proto_name(c[i].res.proto));
        rep_cell_num(r, row, c[i].res.time_s * 1e6);
        rep_cell_num(r, row, c[i].res.busbw_gbps);
        rep_cell_num(r, row, c[i].res.latency_s * 1e6);
        rep_cell_num(r, row, c[i].res.peak_busbw_gbps);
    }
}
