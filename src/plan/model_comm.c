/* model_comm.c - the step model's communication (see model_int.h): every
 * collective a layout issues, timed by the collective cost model (model/collmodel.c)
 * on the topology its group really sees, and hidden where the framework's
 * schedule hides it.
 *
 * Rank order is Megatron-Core's (tp fastest, then cp, then dp, pp slowest;
 * experts fold ETP x EP x expert-DP over the same TP x CP x DP ranks), so a
 * group's members are `stride` ranks apart: TP 1, CP tp, DP tp*cp, EP etp,
 * expert-DP etp*ep, PP neighbours tp*cp*dp. How many members share one
 * NVLink domain follows from the stride and the domain size (8 for an HGX
 * board, 72 for an NVL72 rack), and the members in a domain share its NICs
 * with the other groups running at the same time.
 */
#include "plan/model_int.h"

#include <math.h>

void plan_group_topo(const ctx *c, int n, int stride, collm_topo *t)
{
    const plan_inputs *in = c->in;
    const hw_gpu *gpu = in->gpu;
    const collm_consts *k = collm_consts_get();
    if (stride < 1) stride = 1;
    int D = c->domain > 0 ? c->domain : 1;
    long long span = (long long)n * stride;
    int g;
    if (span <= D) g = n;
    else if (stride >= D) g = 1;
    else g = D / stride < n ? D / stride : n;
    if (g < 1) g = 1;
    t->ranks = n;
    t->per_domain = g;
    t->arch = c->arch;
    int nvl_dom = gpu->scaleup_domain > 1 ? gpu->scaleup_domain : 1;
    /* a bridged pair (or no NVLink) leaves larger groups on PCIe */
    t->pcie = nvl_dom <= 1 || (g > nvl_dom && span <= c->gpn);
    t->intra_gbps = t->pcie ? c->pcie_bw / 0.8 / 1e9 : c->nvl_bw / 1e9;
    t->nvswitch = !t->pcie && nvl_dom >= 4 && gpu->vendor && gpu->vendor[0] == 'N';
    /* --net-efficiency is the achieved / line rate inside the job; the cost
     * model has its own nccl-tests fraction, so the option replaces the
     * product of that and net_train_eff */
    double f = in->net_efficiency > 0 ? in->net_efficiency / k->net_eff : c->k->net_train_eff;
    t->nic_gbps = c->nic_bw_gpu / 1e9 * f;
    t->net_gbps = g < n ? g * t->nic_gbps : 0;
    t->sharp = false;
    int nics = in->nics_per_node > 0 ? in->nics_per_node : gpu->nics_per_node;
    t->gpus_per_nic = nics > 0 ? (double)c->gpn / nics : 0;
}

double plan_group_coll_s(const ctx *c, coll_op op, double bytes, int n, int stride)
{
    if (n <= 1 || !(bytes > 0)) return 0;
    collm_topo t;
    plan_group_topo(c, n, stride, &t);
    return collm_time_s(op, bytes, &t);
}

void plan_layer_comm(const ctx *c, int moe, double T, double attn_s, pass_t *o)
{
    const plan_inputs *in = c->in;
    const dims *x = &c->x;
    double h = x->h, tp = in->tp;
    /* TP: two all-reduces of the layer activations, or under SP two
     * all-gathers and two reduce-scatters of the same buffers */
    o->tp = 0;
    if (in->tp > 1) {
        double b = 2.0 * T * h;
        o->tp = in->sp ? 2.0 * (plan_group_coll_s(c, COLL_ALL_GATHER, b, in->tp, 1) +
                                plan_group_coll_s(c, COLL_REDUCE_SCATTER, b, in->tp, 1))
                       : 2.0 * plan_group_coll_s(c, COLL_ALL_REDUCE, b, in->tp, 1);
    }
    /* CP: ring attention passes K and V chunks round the CP ring, one
     * send/recv per step, overlapped with that step's attention kernel;
     * the extra launches and syncs are not hidden */
    o->cp = 0;
    if (in->cp > 1) {
        double msg = 2.0 * T * 2.0 * x->kv * x->d / tp;
        double comm = (in->cp - 1) * plan_group_coll_s(c, COLL_SEND_RECV, msg, in->cp, in->tp);
        o->cp = (comm > attn_s ? comm - attn_s : 0) + 2.0 * (in->cp - 1) * c->k->kernel_s;
    }
    /* EP: token dispatch and combine all-to-alls of the routed copies this
     * rank holds (inside or across NVLink domains as the group falls), and
     * with expert TP the gather/scatter of those tokens inside ETP */
    o->ep = 0;
    if (moe && in->ep > 1) {
        double b = T / tp * x->k * h * 2.0;
        o->ep = 2.0 * plan_group_coll_s(c, COLL_ALL_TO_ALL, b, in->ep, c->etp);
    }
    if (moe && c->etp > 1) {
        double b = T / tp * x->k * h * 2.0 * c->etp;
        o->ep += plan_group_coll_s(c, COLL_ALL_GATHER, b, c->etp, 1) +
                 plan_group_coll_s(c, COLL_REDUCE_SCATTER, b, c->etp, 1);
    }
}

/* Communication `x` overlapped with a compute window `w`. */
static double hide(const ctx *c, double x, double w)
{
    if (x <= 0) return 0;
    if (w <= 0) return x;
    return x > w ? x - w + c->k->overlap_cost * w : c->k->overlap_cost * x;
}

/* Megatron's DDP buckets gradients (and the distributed optimizer's
 * parameter gathers): max(40M, 1M x dp) parameters per collective. */
static double bucketed(const ctx *c, coll_op op, double params, double bytes_per, int n, int stride)
{
    if (n <= 1 || params <= 0) return 0;
    double bucket = 4e7 > 1e6 * n ? 4e7 : 1e6 * n;
    double nb = ceil(params / bucket);
    return nb * plan_group_coll_s(c, op, params / nb * bytes_per, n, stride);
}

/* Compute that can hide the gradient reduce-scatter (backward) and the
 * parameter all-gather (forward): the last (first) micro-batch, and with
 * interleaving the cooldown (warmup) chunk-steps of Megatron-Core's
 * schedule, (p-1)*2 + (v-1)*p of them on the first stage. */
static void dp_windows(const ctx *c, const stage *st, double *wb, double *wf)
{
    const plan_inputs *in = c->in;
    double ov = c->k->dp_overlap;
    if (in->vpp <= 1) {
        *wb = ov * st->mb_bwd, *wf = ov * st->mb_fwd;
        return;
    }
    double warm = 2.0 * (in->pp - 1) + (double)(in->vpp - 1) * in->pp;
    double chunks = (double)st->nmb * in->vpp;
    if (warm > chunks) warm = chunks;
    *wb = ov * warm * st->mb_bwd / in->vpp;
    *wf = ov * warm * st->mb_fwd / in->vpp;
}

double plan_dp_traffic(const ctx *c, const stage *st)
{
    const plan_inputs *in = c->in;
    const plan_defaults *k = c->k;
    int nd = in->dp * in->cp, ne = (int)(st->dp_exp + 0.5);
    int sd = in->tp, se = c->etp * in->ep;
    double gbytes = in->grad_reduce_bytes > 0 ? in->grad_reduce_bytes : 4.0;
    if (in->zero < 3) {
        double wb, wf;
        dp_windows(c, st, &wb, &wf);
        if (in->zero == 0) {
            double ar = bucketed(c, COLL_ALL_REDUCE, st->P_dense, gbytes, nd, sd) +
                        bucketed(c, COLL_ALL_REDUCE, st->P_exp, gbytes, ne, se);
            return hide(c, ar, wb);
        }
        /* distributed optimizer: reduce-scatter the gradients during the
         * backward, all-gather the updated bf16 parameters during the next
         * forward */
        double rs = bucketed(c, COLL_REDUCE_SCATTER, st->P_dense, gbytes, nd, sd) +
                    bucketed(c, COLL_REDUCE_SCATTER, st->P_exp, gbytes, ne, se);
        double ag = bucketed(c, COLL_ALL_GATHER, st->P_dense, 2.0, nd, sd) +
                    bucketed(c, COLL_ALL_GATHER, st->P_exp, 2.0, ne, se);
        return hide(c, rs, wb) + hide(c, ag, wf);
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
    double ag = ncoll * (plan_group_coll_s(c, COLL_ALL_GATHER, 2.0 * st->P_dense / ncoll, nd, sd) +
                         plan_group_coll_s(c, COLL_ALL_GATHER, 2.0 * st->P_exp / ncoll, ne, se));
    double rs = ncoll * (plan_group_coll_s(c, COLL_REDUCE_SCATTER, gbytes * st->P_dense / ncoll, nd, sd) +
                         plan_group_coll_s(c, COLL_REDUCE_SCATTER, gbytes * st->P_exp / ncoll, ne, se));
    double gathers = in->fsdp_keep ? 1.0 : (in->fsdp || st->rl == 0 ? 2.0 : 3.0);
    double per_mb = gathers * ag + rs;
    double overlap = k->fsdp_overlap;
    if (!in->fsdp) {
        double matrix = (st->P_dense + st->P_exp) / ncoll * st->dp_dense; /* one matrix, unsharded */
        double f = k->z3_prefetch_params / matrix;
        overlap *= f < 1.0 ? f : 1.0;
    }
    double exposed = hide(c, per_mb, overlap * st->st_comp);
    return in->fsdp && (in->pp > 1 || in->fsdp_keep) ? exposed : st->nmb * exposed;
}

double plan_pp_p2p(const ctx *c, const stage *st, double T)
{
    const plan_inputs *in = c->in;
    if (in->pp <= 1) return 0;
    double bytes = 2.0 * T * c->x.h / (in->sp ? in->tp : 1);
    double msg = plan_group_coll_s(c, COLL_SEND_RECV, bytes, in->pp, in->tp * in->cp * in->dp);
    double fill = 2.0 * (in->pp - 1) * msg;
    if (in->vpp <= 1) return fill + 2.0 * st->nmb * msg * c->k->pp_p2p_exposed;
    /* interleaved: Megatron-Core overlaps each chunk's send/recv with the
     * next chunk's compute (overlap_p2p_comm) */
    double chunk = (st->mb_fwd + st->mb_bwd) / (2.0 * in->vpp);
    double per = msg > chunk ? msg - chunk + c->k->overlap_cost * chunk : c->k->overlap_cost * msg;
    return fill + 2.0 * st->nmb * in->vpp * per;
}
