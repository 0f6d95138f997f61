/* planner.c - exhaustive layout search over the performance model.
 *
 * The space is small enough to enumerate (a 1024-GPU search is a few tens of
 * thousands of model calls, each a few microseconds), so there is no
 * heuristic pruning that could hide the best layout: every combination that
 * passes the divisibility rules is evaluated, and a fixed-size top-K array
 * is kept by insertion.
 */
#include "plan/planner.h"

#include <stdio.h>
#include <string.h>

void plan_space_init(plan_space *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->zero = -1;
    sp->recompute = -1;
    sp->sp = -1;
    sp->max_micro_batch = 8;
}

/* Ranking: tokens/s; exact ties go to the simpler layout (fewer CP, PP,
 * TP ranks, then the smaller micro-batch), which is what people would run. */
static int better(const plan_candidate *a, const plan_candidate *b)
{
    if (a->res.tokens_per_s != b->res.tokens_per_s) return a->res.tokens_per_s > b->res.tokens_per_s;
    if (a->res.cp != b->res.cp) return a->res.cp < b->res.cp;
    if (a->res.pp != b->res.pp) return a->res.pp < b->res.pp;
    if (a->res.tp != b->res.tp) return a->res.tp < b->res.tp;
    return a->res.micro_batch < b->res.micro_batch;
}

/* Keep `cand` in the sorted top array of capacity k holding *n entries. */
static void keep(plan_candidate *top, int k, int *n, const plan_candidate *cand)
{
    int pos = *n;
    while (pos > 0 && better(cand, &top[pos - 1])) pos--;
    if (pos >= k) return;
    int last = *n < k ? *n : k - 1;
    memmove(&top[pos + 1], &top[pos], (size_t)(last - pos) * sizeof *top);
    top[pos] = *cand;
    if (*n < k) (*n)++;
}

static int kv_ok(const plan_shape *m, int tp)
{
    int kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
    return m->heads % tp == 0 && (kv % tp == 0 || tp % kv == 0);
}

int plan_search(const plan_inputs *base, const plan_space *sp, plan_candidate *top, int k,
                plan_search_stats *st)
{
    plan_search_stats local = {0};
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    const plan_shape *m = &base->shape;
    const hw_gpu *gpu = base->gpu;
    if (!gpu || base->gpus <= 0 || k <= 0) return 0;
    int gpn = base->gpus_per_node > 0 ? base->gpus_per_node : gpu->gpus_per_node;
    int domain = gpu->scaleup_domain > gpn ? gpu->scaleup_domain : gpn;
    int n = 0;
    plan_candidate closest;
    double closest_over = -1;
    int maxmb = sp->max_micro_batch > 0 ? sp->max_micro_batch : 8;
    int rc_lo = sp->recompute >= 0 ? sp->recompute : 0, rc_hi = sp->recompute >= 0 ? sp->recompute : 2;
    /* searched sharding: ZeRO-1 (distributed optimizer) and FSDP2 */
    static const int zeros[] = {1, 3};
    if (base->gpus > (1 << 24)) return 0; /* the model's cap; keeps every product below in range */
    /* searched TP and CP degrees are powers of two; pinned ones are taken as given */
    for (long long tp = sp->tp > 0 ? sp->tp : 1; tp <= base->gpus; tp = sp->tp > 0 ? base->gpus + 1LL : tp * 2) {
        if (sp->tp <= 0 && (tp > domain || !kv_ok(m, (int)tp))) continue;
        for (long long pp = 1; pp <= m->layers && tp * pp <= base->gpus; pp++) {
            if (sp->pp > 0 ? pp != sp->pp : (m->layers % pp != 0)) continue;
            if (base->gpus % (tp * pp) != 0) continue;
            for (long long cp = sp->cp > 0 ? sp->cp : 1; tp * pp * cp <= base->gpus;
                 cp = sp->cp > 0 ? base->gpus + 1LL : cp * 2) {
                if (sp->cp <= 0 && m->seq % cp != 0) continue;
                if (base->gpus % (tp * pp * cp) != 0) continue;
                int dp = (int)(base->gpus / (tp * pp * cp));
                for (int ep = 1; ep <= (m->experts > 0 ? m->experts : 1); ep++) {
                    /* parallel folding: EP x ETP over TP x CP x DP */
                    long long etp = sp->etp > 0 ? sp->etp : tp;
                    if (sp->ep > 0 ? ep != sp->ep
                                   : (ep > 1 && (m->experts % ep != 0 || (tp * cp * dp) % (ep * etp) != 0)))
                        continue;
                    int vpp_lo = sp->vpp > 0 ? sp->vpp : 1, vpp_hi = sp->vpp > 0 ? sp->vpp : 4;
                    for (int vpp = vpp_lo; vpp <= vpp_hi; vpp++) {
                        /* interleaving needs whole layers per chunk; a pinned pp may
                         * split unevenly (torchtitan does), a searched one may not */
                        if (sp->vpp > 0 ? vpp != sp->vpp
                                        : (vpp > 1 && (pp == 1 || (sp->pp > 0 ? m->layers < pp * vpp
                                                                             : m->layers % (pp * vpp) != 0))))
                            continue;
                        int mb_lo = sp->micro_batch > 0 ? sp->micro_batch : 1;
                        int mb_hi = sp->micro_batch > 0 ? sp->micro_batch : maxmb;
                        for (int mb = mb_lo; mb <= mb_hi; mb *= 2) {
                            for (int zi = 0; zi < 2; zi++) {
                                int zero = sp->zero >= 0 ? sp->zero : zeros[zi];
                                if (sp->zero >= 0 && zi > 0) break;
                                for (int rc = rc_lo; rc <= rc_hi; rc++) {
                                    plan_candidate c;
                                    c.in = *base;
                                    c.in.tp = (int)tp, c.in.pp = (int)pp, c.in.cp = (int)cp, c.in.ep = ep;
                                    c.in.etp = sp->etp > 0 ? sp->etp : 0;
                                    c.in.vpp = vpp, c.in.dp = dp, c.in.micro_batch = mb;
                                    c.in.zero = zero;
                                    if (sp->zero < 0) c.in.fsdp = zero == 3;
                                    c.in.recompute = (plan_recompute)rc;
                                    c.in.sp = sp->sp >= 0 ? sp->sp != 0 : tp > 1;
                                    if (c.in.global_batch <= 0) {
                                        long long g = (long long)dp * mb * (pp > 1 ? 4 * pp : 1);
                                        c.in.global_batch = g < (1 << 28) ? (int)g : (1 << 28);
                                    }
                                    st->evaluated++;
                                    char why[160];
                                    if (plan_model(&c.in, &c.res, why, sizeof why) != 0) {
                                        if (!st->invalid++) snprintf(st->first_invalid, sizeof st->first_invalid, "%s", why);
                                        continue;
                                    }
                                    if (!c.res.memory.fits) {
                                        st->no_fit++;
                                        double over = c.res.memory.total_bytes / c.res.memory.hbm_bytes;
                                        if (closest_over < 0 || over < closest_over) closest_over = over, closest = c;
                                        continue;
                                    }
                                    st->kept++;
                                    keep(top, k, &n, &c);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if (n == 0 && closest_over > 0) top[0] = closest;
    return n;
}
