/* model_mem.c - per-GPU memory of the step model (see model_int.h):
 * Korthikanti et al. 2022 activations (generalised to GQA, gated MLPs and
 * MoE), ZeRO/FSDP sharding of parameters, gradients and optimizer state
 * (experts over their own expert-DP group), the pipeline's in-flight
 * micro-batches under (interleaved) 1F1B, host offload, and the runtime. */
#include "plan/model_int.h"

void plan_fill_memory(const ctx *c, const stage *st, double P_opt, double T, plan_memory *mem)
{
    const plan_inputs *in = c->in;
    const plan_shape *m = &in->shape;
    int pp = in->pp, vpp = in->vpp;
    (void)T;
    bool p_shard = in->zero >= 3 && !(in->fsdp && (pp > 1 || in->fsdp_keep));
    mem->params_bytes = 2.0 * (st->P_dense / (p_shard ? st->dp_dense : 1) + st->P_exp / (p_shard ? st->dp_exp : 1));
    mem->grads_bytes = 2.0 * (st->P_dense / (in->zero >= 2 ? st->dp_dense : 1) + st->P_exp / (in->zero >= 2 ? st->dp_exp : 1));
    mem->optimizer_bytes = in->offload ? 0 : 12.0 * P_opt;
    double s = (double)m->seq / in->cp;
    plan_recompute kept = in->recompute == PLAN_RC_SELECTIVE ? PLAN_RC_SELECTIVE : PLAN_RC_NONE;
    double act_layer = plan_act_bytes_per_layer(m, s, in->micro_batch, in->tp, in->sp, kept, in->attn);
    double act_ckpt = plan_act_bytes_per_layer(m, s, in->micro_batch, in->tp, in->sp, PLAN_RC_FULL, in->attn);
    int kept_layers = st->Ls - st->rl;
    int off = in->act_offload_layers < kept_layers ? in->act_offload_layers : kept_layers;
    /* offloaded layers keep only their input on the GPU */
    double stage_act = (kept_layers - off) * act_layer + (st->rl + off) * act_ckpt;
    /* 1F1B: the first stage holds min(m, p) micro-batches; interleaving adds (p-1)/(p*v) */
    double inflight = 1.0;
    if (pp > 1)
        inflight = (st->nmb < pp ? st->nmb : pp) * (1.0 + (vpp > 1 ? (double)(pp - 1) / (pp * vpp) : 0));
    mem->activations_bytes = stage_act * inflight;
    if (st->rl > 0 || off > 0) mem->activations_bytes += act_layer; /* one layer live in its backward */
    /* logits (bf16) + fp32 softmax/loss and its gradient on the last stage */
    double Tm = (double)in->micro_batch * m->seq / in->cp;
    double logits = Tm * c->x.V / in->tp * (2.0 + 4.0 + 4.0);
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
