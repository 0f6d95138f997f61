/* syn_pp.c - pipeline-parallel synthetic job and its what-if truth.
 *
 * Design
 * - Workers are (dp rank d, stage p), TP size 1. Each step every worker
 *   runs its Megatron schedule: 1F1B (chunks = 1: min(P-p-1, M) warm-up
 *   forwards, then forward/backward pairs, then the remaining backwards) or
 *   the interleaved one (chunks V > 1: warm-up (P-p-1)*2 + (V-1)*P, the k-th
 *   forward runs chunk (k mod PV)/P of microbatch (k / PV)*P + k mod P, the
 *   k-th backward the mirrored chunk), then grads-reduce-scatter over its DP
 *   group, then the optimizer; the next step follows its optimizer.
 * - The dependency model: an op starts when the worker's previous op ends
 *   and, for a forward on virtual stage v = chunk*P + p > 0, when the same
 *   microbatch's forward on v-1 has ended plus the activation transfer
 *   (forward-send/recv); a backward on v < VP-1 waits for v+1's backward
 *   plus the gradient transfer. A grads-reduce-scatter starts its transfer
 *   when the last member of its DP group arrives; each member's span runs
 *   from its own arrival to the common end.
 * - Truth: the paper's what-if on this model. The ideal duration of an op
 *   type is the mean over all its instances (computation) or the median
 *   (communication); a scenario replays the model with some ops at ideal.
 *   S = T_orig / T_ideal; S_t, S_dp, S_stage: the ideal with only that
 *   type / DP rank / stage as traced; M_W = (T_orig - T_rem) / (T_orig -
 *   T_ideal), T_rem the original with the top 3 % of workers (at least one,
 *   by min(S_dp, S_stage), ties to the lower d*P + p) at ideal; M_S the same
 *   with the last stage at ideal. T = mean over steps of latest op end minus
 *   earliest op start.
 * - Output is a pure function of the configuration and seed.
 */
#include "syn_pp.h"
#include "syn_int.h"
#include "syn_pp_int.h"
#include "../base/afile.h"
#include "../base/buf.h"
#include "../base/jsonw.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pt_name[PT_N] = { "forward-compute", "backward-compute", "optimizer",
                                           "grads-reduce-scatter", "forward-send/recv", "backward-send/recv" };

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void syn_pp_default(syn_pp_config *c)
{
    memset(c, 0, sizeof *c);
    c->pp = 4;
    c->dp = 2;
    c->microbatches = 8;
    c->chunks = 1;
    c->steps = 2;
    c->seed = 1;
    c->fwd_ns = 2000000;
    c->p2p_ns = 100000;
    c->dp_ns = 3000000;
    c->opt_ns = 1000000;
    c->gpus_per_node = 8;
    c->p2p_bytes = 2097152; /* 1024 tokens x 1024 wide, bf16: ~21 GB/s over p2p_ns */
    c->dp_bytes = 67108864;
    c->imb_stage = -1;
    c->slow_dp = -1;
    c->slow_pp = -1;
}

static int bad(cp_error *err, const char *item, const char *why)
{
    return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--inject '%s': %s", item, why);
}

int syn_pp_parse_inject(syn_pp_config *c, const char *spec, cp_error *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        const char *v = eq ? eq + 1 : "";
        char *end;
        if (eq)
            *eq = 0;
        if (!strcmp(it, "stage-imbalance")) {
            c->imb_stage = (int)strtol(v, &end, 10);
            c->imb_factor = *end == ':' ? strtod(end + 1, &end) : 1.5;
            if (end == v || *end || c->imb_factor <= 0)
                return bad(err, spec, "stage-imbalance=STAGE[:FACTOR], FACTOR > 0");
        } else if (!strcmp(it, "seqlen-imbalance")) {
            c->seq_spread = strtod(v, &end);
            if (end == v || *end || c->seq_spread <= 0 || c->seq_spread >= 1)
                return bad(err, spec, "seqlen-imbalance=A with 0 < A < 1");
        } else if (!strcmp(it, "straggler")) {
            c->slow_dp = (int)strtol(v, &end, 10);
            if (end == v || *end != '.')
                return bad(err, spec, "straggler=DP.PP[:FACTOR]");
            const char *q = end + 1;
            c->slow_pp = (int)strtol(q, &end, 10);
            c->slow_factor = *end == ':' ? strtod(end + 1, &end) : 1.5;
            if (end == q || *end || c->slow_factor <= 0)
                return bad(err, spec, "straggler=DP.PP[:FACTOR], FACTOR > 0");
        } else {
            return bad(err, spec, "pipeline jobs take stage-imbalance, seqlen-imbalance, straggler");
        }
    }
    return 0;
}

int syn_pp_check(const syn_pp_config *c, cp_error *err)
{
    if (c->pp < 1 || c->dp < 1 || (size_t)c->pp * (size_t)c->dp > SYN_PP_MAX_WORKERS)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--pp x --dp must be 1..%d workers", SYN_PP_MAX_WORKERS);
    if (c->microbatches < 1 || c->chunks < 1 || c->steps < 1)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "--microbatches, --chunks and --steps must be at least 1");
    if (c->chunks > 1 && c->microbatches % c->pp)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "interleaved schedule: --microbatches %d is not a multiple of --pp %d",
                            c->microbatches, c->pp);
    if (c->imb_stage >= c->pp)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "stage-imbalance: stage %d, the job has %d", c->imb_stage, c->pp);
    if (c->slow_dp >= c->dp || c->slow_pp >= c->pp)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "straggler %d.%d outside --dp %d x --pp %d", c->slow_dp, c->slow_pp,
                            c->dp, c->pp);
    return 0;
}

/* ---- the job ---- */

static double compute_factor(const pp_job *j, int s, int d, int p, int mb)
{
    const syn_pp_config *c = j->c;
    double f = 1;
    if (p == c->imb_stage)
        f *= c->imb_factor;
    if (d == c->slow_dp && p == c->slow_pp)
        f *= c->slow_factor;
    if (c->seq_spread > 0 && mb >= 0) { /* one sequence mix per (step, dp rank, microbatch): all its stages */
        uint64_t h = mix64(c->seed ^ mix64(((uint64_t)s << 40) ^ ((uint64_t)d << 20) ^ (uint64_t)mb));
        f *= 1 + c->seq_spread * (2 * ((double)(h >> 11) / 9007199254740992.0) - 1);
    }
    return f;
}

static size_t fb_index(const pp_job *j, int s, int d, int vs, int mb)
{
    return (((size_t)s * (size_t)j->D + (size_t)d) * (size_t)(j->P * j->V) + (size_t)vs) * (size_t)j->M + (size_t)mb;
}

/* The k-th forward (or backward) micro-op of a stage: its chunk and microbatch. */
static void sched_op(const pp_job *j, int k, bool bwd, int *chunk, int *mb)
{
    int pv = j->P * j->V;
    int ch = (k % pv) / j->P;
    *chunk = bwd ? j->V - 1 - ch : ch;
    *mb = (k / pv) * j->P + k % j->P;
    if (j->V == 1)
        *mb = k;
}

static uint32_t add_op(pp_job *j, size_t *cap, int kind, int s, uint32_t w, int chunk, int mb, int64_t dur)
{
    cp_xgrow((void **)&j->ops, cap, j->n_ops + 1, sizeof *j->ops);
    j->ops[j->n_ops] = (pop){ (uint8_t)kind, (int16_t)chunk, mb, s, w, -1, dur };
    return (uint32_t)j->n_ops++;
}

static void build(pp_job *j)
{
    const syn_pp_config *c = j->c;
    size_t cap = 0, total = (size_t)j->M * (size_t)j->V;
    size_t nfb = fb_index(j, j->S, 0, 0, 0);
    uint32_t *fidx = cp_xmalloc((nfb ? nfb : 1) * sizeof *fidx), *bidx = cp_xmalloc((nfb ? nfb : 1) * sizeof *bidx);
    j->ord_start = cp_xcalloc(j->n_w + 1, sizeof *j->ord_start);
    size_t per_w = (size_t)j->S * (2 * total + 2);
    j->order = cp_xmalloc(j->n_w * per_w * sizeof *j->order);
    for (uint32_t w = 0; w < j->n_w; w++) {
        int d = (int)w / j->P, p = (int)w % j->P;
        size_t n = 0;
        uint32_t *ord = j->order + w * per_w;
        for (int s = 0; s < j->S; s++) {
            int warm;
            if (j->V == 1)
                warm = CP_MIN(j->P - p - 1, j->M);
            else
                warm = j->M == j->P ? (int)total : CP_MIN((j->P - p - 1) * 2 + (j->V - 1) * j->P, (int)total);
            int nf = 0, nb = 0;
            while (nf < (int)total || nb < (int)total) {
                bool fwd = nf < warm || (nf < (int)total && nf - warm <= nb);
                int ch, mb;
                sched_op(j, fwd ? nf : nb, !fwd, &ch, &mb);
                int vs = ch * j->P + p;
                int64_t dur = llround((double)c->fwd_ns * (fwd ? 1 : 2) * compute_factor(j, s, d, p, mb));
                uint32_t o = add_op(j, &cap, fwd ? PK_F : PK_B, s, w, ch, mb, dur);
                (fwd ? fidx : bidx)[fb_index(j, s, d, vs, mb)] = o;
                ord[n++] = o;
                fwd ? nf++ : nb++;
            }
            ord[n++] = add_op(j, &cap, PK_RS, s, w, 0, -1, c->dp_ns);
            ord[n++] = add_op(j, &cap, PK_OPT, s, w, 0, -1, llround((double)c->opt_ns * compute_factor(j, s, d, p, -1)));
        }
        j->ord_start[w + 1] = j->ord_start[w] + n;
    }
    /* compact the per-worker orders and wire the cross-stage dependencies */
    for (uint32_t w = 1; w < j->n_w; w++)
        memmove(j->order + j->ord_start[w], j->order + w * per_w, (j->ord_start[w + 1] - j->ord_start[w]) * sizeof *j->order);
    int vp = j->P * j->V;
    for (size_t k = 0; k < j->n_ops; k++) {
        pop *o = &j->ops[k];
        if (o->kind != PK_F && o->kind != PK_B)
            continue;
        int d = (int)o->w / j->P, vs = o->chunk * j->P + (int)o->w % j->P;
        if (o->kind == PK_F && vs > 0)
            o->dep = (int32_t)fidx[fb_index(j, o->step, d, vs - 1, o->mb)];
        if (o->kind == PK_B && vs < vp - 1)
            o->dep = (int32_t)bidx[fb_index(j, o->step, d, vs + 1, o->mb)];
    }
    free(fidx);
    free(bidx);
}

static int op_type(const pop *o)
{
    return o->kind == PK_F ? PT_F : o->kind == PK_B ? PT_B : o->kind == PK_OPT ? PT_OPT : PT_RS;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void ideals(pp_job *j)
{
    double sum[PT_N] = { 0 };
    size_t cnt[PT_N] = { 0 };
    int64_t *rs = cp_xmalloc((j->n_ops ? j->n_ops : 1) * sizeof *rs);
    size_t nrs = 0;
    for (size_t k = 0; k < j->n_ops; k++) {
        int t = op_type(&j->ops[k]);
        if (t == PT_RS)
            rs[nrs++] = j->ops[k].dur_ns;
        sum[t] += (double)j->ops[k].dur_ns;
        cnt[t]++;
    }
    for (int t = 0; t < PT_N; t++)
        j->ideal[t] = cnt[t] ? llround(sum[t] / (double)cnt[t]) : 0;
    qsort(rs, nrs, sizeof *rs, cmp_i64); /* communication: the median */
    if (nrs)
        j->ideal[PT_RS] = nrs % 2 ? rs[nrs / 2] : (rs[nrs / 2 - 1] + rs[nrs / 2]) / 2;
    j->ideal[PT_FP2P] = j->ideal[PT_BP2P] = j->c->p2p_ns; /* every transfer is p2p_ns */
    free(rs);
}

/* ---- replay ---- */

typedef struct pp_sel {
    bool base_ideal;
    int type, dp, stage;        /* -1: not selected on that axis */
    const uint8_t *workers;     /* per worker, or NULL */
} pp_sel;

static bool flipped(const pp_job *j, const pp_sel *s, uint32_t w, int type)
{
    return (s->type >= 0 && type == s->type) || (s->dp >= 0 && (int)w / j->P == s->dp) ||
           (s->stage >= 0 && (int)w % j->P == s->stage) || (s->workers && s->workers[w]);
}

static int64_t dur_of(const pp_job *j, const pp_sel *s, uint32_t w, int type, int64_t traced)
{
    return s->base_ideal != flipped(j, s, w, type) ? j->ideal[type] : traced;
}

/* Replay into start/end (per op); returns the mean step time. */
static double replay(const pp_job *j, const pp_sel *s, int64_t *st, int64_t *en)
{
    size_t nw = j->n_w;
    size_t *ptr = cp_xmalloc(nw * sizeof *ptr);
    int64_t *free_at = cp_xcalloc(nw, sizeof *free_at);
    uint8_t *done = cp_xcalloc(j->n_ops ? j->n_ops : 1, 1);
    for (size_t w = 0; w < nw; w++)
        ptr[w] = j->ord_start[w];
    bool progress = true;
    while (progress) {
        progress = false;
        for (uint32_t w = 0; w < nw; w++)
            while (ptr[w] < j->ord_start[w + 1]) {
                uint32_t k = j->order[ptr[w]];
                const pop *o = &j->ops[k];
                if (o->kind == PK_RS) { /* joins the DP group: every member must have arrived */
                    st[k] = free_at[w];
                    done[k] = 1;
                    int64_t last = INT64_MIN;
                    bool all = true;
                    size_t pos = ptr[w] - j->ord_start[w];
                    for (int d = 0; d < j->D && all; d++) {
                        uint32_t v = (uint32_t)(d * j->P) + w % (uint32_t)j->P;
                        uint32_t kv = j->order[j->ord_start[v] + pos]; /* same position: same schedule */
                        all = done[kv] && ptr[v] == j->ord_start[v] + pos;
                        if (all)
                            last = CP_MAX(last, st[kv]);
                    }
                    if (!all)
                        break;
                    int64_t e = last + dur_of(j, s, w, PT_RS, o->dur_ns);
                    for (int d = 0; d < j->D; d++) {
                        uint32_t v = (uint32_t)(d * j->P) + w % (uint32_t)j->P;
                        en[j->order[j->ord_start[v] + pos]] = e;
                        free_at[v] = e;
                        ptr[v]++;
                    }
                    progress = true;
                    continue;
                }
                int64_t t0 = free_at[w];
                if (o->dep >= 0) {
                    if (!done[o->dep])
                        break;
                    int pt = o->kind == PK_F ? PT_FP2P : PT_BP2P; /* the edge belongs to the receiver */
                    t0 = CP_MAX(t0, en[o->dep] + dur_of(j, s, w, pt, j->c->p2p_ns));
                }
                st[k] = t0;
                en[k] = t0 + dur_of(j, s, w, op_type(o), o->dur_ns);
                done[k] = 1;
                free_at[w] = en[k];
                ptr[w]++;
                progress = true;
            }
    }
    double sum = 0;
    for (int step = 0; step < j->S; step++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t k = 0; k < j->n_ops; k++)
            if (j->ops[k].step == step) {
                lo = CP_MIN(lo, st[k]);
                hi = CP_MAX(hi, en[k]);
            }
        sum += (double)(hi - lo);
    }
    free(ptr);
    free(free_at);
    free(done);
    return sum / j->S;
}

/* ---- output ---- */

static const char *const thread_kind[] = { "compute", "pp-comm", "dp-comm" };

static void put_op(cp_buf *b, const pp_job *j, uint32_t w, int thr, const char *name, int64_t t0, int64_t t1,
                   const pop *o, size_t seq)
{
    cp_buf_printf(b,
                  ",\n{\"ph\":\"X\",\"name\":\"%s\",\"pid\":\"DP rank [%d]\",\"tid\":\"PP rank %d, TP rank 0, %s\","
                  "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%d,\"mb_id\":%d,\"model_chunk\":%d,\"seq_id\":%zu}}",
                  name, (int)w / j->P, (int)w % j->P, thread_kind[thr], (double)t0 / 1e3, (double)(t1 - t0) / 1e3,
                  o->step, o->mb, o->chunk, seq);
}

static void write_trace(cp_buf *b, const pp_job *j, const int64_t *st, const int64_t *en, uint64_t *n_ops)
{
    cp_buf_puts(b, "[\n{\"ph\":\"M\",\"name\":\"chainprof.synth\",\"pid\":\"synth\",\"args\":{}}");
    *n_ops = 0;
    static const char *const cname[] = { "forward-compute", "backward-compute", "grads-reduce-scatter", "optimizer" };
    for (uint32_t w = 0; w < j->n_w; w++)
        for (size_t q = j->ord_start[w]; q < j->ord_start[w + 1]; q++) {
            uint32_t k = j->order[q];
            const pop *o = &j->ops[k];
            size_t seq = q - j->ord_start[w];
            put_op(b, j, w, o->kind == PK_RS ? 2 : 0, cname[o->kind], st[k], en[k], o, seq);
            ++*n_ops;
            if (o->dep >= 0) { /* the transfer that fed it: send on the producer, recv here */
                const char *sn = o->kind == PK_F ? "forward-send" : "backward-send";
                const char *rn = o->kind == PK_F ? "forward-recv" : "backward-recv";
                int64_t t0 = en[o->dep], t1 = t0 + j->c->p2p_ns;
                put_op(b, j, j->ops[o->dep].w, 1, sn, t0, t1, o, seq);
                put_op(b, j, w, 1, rn, t0, t1, o, seq);
                *n_ops += 2;
            }
        }
    cp_buf_puts(b, "\n]\n");
}

/* One array of {ID_KEY: i, "slowdown": v[i]} rows (by_dp_rank, by_stage). */
static void write_slowdown_rows(cp_jw *w, const char *key, const char *id_key, const double *v, int n)
{
    cp_jw_key(w, key);
    cp_jw_arr_begin(w);
    for (int i = 0; i < n; i++) {
        cp_jw_obj_begin(w);
        jw_kv_i(w, id_key, i);
        jw_kv_d(w, "slowdown", v[i]);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
}

typedef struct pp_truth {
    double t_orig, t_ideal, t_rem, t_last, by_type[PT_N];
    double *by_dp, *by_stage;
    uint8_t *fixed;
} pp_truth;

static void truth(const pp_job *j, pp_truth *t, int64_t *st, int64_t *en)
{
    pp_sel none = { false, -1, -1, -1, NULL };
    pp_sel ideal = { true, -1, -1, -1, NULL };
    t->t_orig = replay(j, &none, st, en);
    t->t_ideal = replay(j, &ideal, st, en);
    for (int k = 0; k < PT_N; k++)
        t->by_type[k] = replay(j, &(pp_sel){ true, k, -1, -1, NULL }, st, en) / t->t_ideal;
    t->by_dp = cp_xmalloc((size_t)j->D * sizeof *t->by_dp);
    t->by_stage = cp_xmalloc((size_t)j->P * sizeof *t->by_stage);
    for (int d = 0; d < j->D; d++)
        t->by_dp[d] = replay(j, &(pp_sel){ true, -1, d, -1, NULL }, st, en) / t->t_ideal;
    for (int p = 0; p < j->P; p++)
        t->by_stage[p] = replay(j, &(pp_sel){ true, -1, -1, p, NULL }, st, en) / t->t_ideal;
    /* M_W: the top 3 % of workers by min(S_dp, S_stage) */
    size_t n_fix = CP_MAX((j->n_w * 3 + 99) / 100, (size_t)1);
    t->fixed = cp_xcalloc(j->n_w, 1);
    for (size_t i = 0; i < n_fix; i++) {
        size_t best = SIZE_MAX;
        double bs = -1;
        for (size_t w = 0; w < j->n_w; w++) {
            double sw = CP_MIN(t->by_dp[w / (size_t)j->P], t->by_stage[w % (size_t)j->P]);
            if (!t->fixed[w] && sw > bs) {
                bs = sw;
                best = w;
            }
        }
        t->fixed[best] = 1;
    }
    t->t_rem = replay(j, &(pp_sel){ false, -1, -1, -1, t->fixed }, st, en);
    t->t_last = replay(j, &(pp_sel){ false, -1, -1, j->P - 1, NULL }, st, en);
}

static void write_truth(cp_buf *b, const pp_job *j, const pp_truth *t)
{
    const syn_pp_config *c = j->c;
    cp_jw w;
    cp_jw_init(&w, b, 2);
    cp_jw_obj_begin(&w);
    cp_jw_key(&w, "schema");
    cp_jw_str(&w, "chainprof.synth-pp/1");
    cp_jw_key(&w, "config");
    cp_jw_obj_begin(&w);
    jw_kv_i(&w, "pp", c->pp);
    jw_kv_i(&w, "dp", c->dp);
    jw_kv_i(&w, "microbatches", c->microbatches);
    jw_kv_i(&w, "chunks", c->chunks);
    cp_jw_key(&w, "schedule");
    cp_jw_str(&w, c->chunks > 1 ? "interleaved" : "1f1b");
    jw_kv_i(&w, "steps", c->steps);
    jw_kv_i(&w, "fwd_ns", c->fwd_ns);
    jw_kv_i(&w, "p2p_ns", c->p2p_ns);
    jw_kv_i(&w, "dp_ns", c->dp_ns);
    jw_kv_i(&w, "opt_ns", c->opt_ns);
    jw_kv_i(&w, "imbalanced_stage", c->imb_stage);
    jw_kv_d(&w, "imbalance_factor", c->imb_stage >= 0 ? c->imb_factor : NAN);
    jw_kv_d(&w, "seqlen_spread", c->seq_spread);
    jw_kv_i(&w, "straggler_dp", c->slow_dp);
    jw_kv_i(&w, "straggler_pp", c->slow_pp);
    jw_kv_d(&w, "straggler_factor", c->slow_dp >= 0 ? c->slow_factor : NAN);
    jw_kv_i(&w, "gpus_per_node", c->gpus_per_node);
    jw_kv_i(&w, "p2p_bytes", c->p2p_bytes);
    jw_kv_i(&w, "dp_bytes", c->dp_bytes);
    cp_jw_obj_end(&w);
    cp_jw_key(&w, "kineto"); /* the same schedule as Kineto traces (syn_ppk.c) */
    cp_jw_obj_begin(&w);
    jw_kv_s(&w, "rank", "stage * dp + dp_rank");
    jw_kv_i(&w, "origin_ns", SYN_ORIGIN_NS);
    jw_kv_i(&w, "step_shift_ns", SYN_PPK_STEP_GAP_NS);
    cp_jw_key(&w, "files");
    cp_jw_arr_begin(&w);
    for (int r = 0; r < c->pp * c->dp; r++) {
        char name[64];
        snprintf(name, sizeof name, "rank-%d.json%s", r, syn_pp_ext(c));
        cp_jw_str(&w, name);
    }
    cp_jw_arr_end(&w);
    cp_jw_obj_end(&w);
    cp_jw_key(&w, "whatif");
    cp_jw_obj_begin(&w);
    jw_kv_d(&w, "t_original_ns", t->t_orig);
    jw_kv_d(&w, "t_ideal_ns", t->t_ideal);
    jw_kv_d(&w, "slowdown", t->t_orig / t->t_ideal);
    double gap = t->t_orig - t->t_ideal;
    jw_kv_d(&w, "worker_metric", gap > 0 ? (t->t_orig - t->t_rem) / gap : NAN);
    jw_kv_d(&w, "stage_metric", gap > 0 ? (t->t_orig - t->t_last) / gap : NAN);
    cp_jw_key(&w, "workers_fixed");
    cp_jw_arr_begin(&w);
    for (size_t k = 0; k < j->n_w; k++)
        if (t->fixed[k]) {
            cp_jw_obj_begin(&w);
            jw_kv_i(&w, "dp", (int64_t)k / j->P);
            jw_kv_i(&w, "pp", (int64_t)k % j->P);
            cp_jw_obj_end(&w);
        }
    cp_jw_arr_end(&w);
    cp_jw_key(&w, "ideal_ns");
    cp_jw_obj_begin(&w);
    for (int k = 0; k < PT_N; k++)
        jw_kv_i(&w, pt_name[k], j->ideal[k]);
    cp_jw_obj_end(&w);
    cp_jw_key(&w, "by_op_type");
    cp_jw_arr_begin(&w);
    for (int k = 0; k < PT_N; k++) {
        cp_jw_obj_begin(&w);
        cp_jw_key(&w, "op");
        cp_jw_str(&w, pt_name[k]);
        jw_kv_d(&w, "slowdown", t->by_type[k]);
        cp_jw_obj_end(&w);
    }
    cp_jw_arr_end(&w);
    write_slowdown_rows(&w, "by_dp_rank", "rank", t->by_dp, j->D);
    write_slowdown_rows(&w, "by_stage", "stage", t->by_stage, j->P);
    cp_jw_obj_end(&w);
    cp_jw_obj_end(&w);
    cp_buf_putc(b, '\n');
}

static int write_file(const char *dir, const char *name, const cp_buf *b, cp_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return cp_afile_write(path, b->data, b->len, err);
}

int syn_pp_write(const syn_pp_config *c, const char *dir, uint64_t *n_ops, double *t_ns, cp_error *err)
{
    int rc = syn_prepare_dir(dir, c->force, err);
    if (rc)
        return rc;
    pp_job j = { .c = c, .P = c->pp, .D = c->dp, .M = c->microbatches, .V = c->chunks, .S = c->steps };
    j.n_w = (size_t)c->pp * (size_t)c->dp;
    build(&j);
    ideals(&j);
    int64_t *st = cp_xmalloc(j.n_ops * sizeof *st), *en = cp_xmalloc(j.n_ops * sizeof *en);
    pp_truth t = { 0 };
    truth(&j, &t, st, en);
    *t_ns = replay(&j, &(pp_sel){ false, -1, -1, -1, NULL }, st, en); /* the trace: last, into st/en */
    cp_buf tb = CP_BUF_INIT, gb = CP_BUF_INIT;
    write_trace(&tb, &j, st, en, n_ops);
    write_truth(&gb, &j, &t);
    rc = write_file(dir, "optrace.json", &tb, err);
    if (!rc)
        rc = write_file(dir, "synth.json", &gb, err);
    if (!rc)
        rc = syn_ppk_write(&j, st, en, dir, err);
    cp_buf_free(&tb);
    cp_buf_free(&gb);
    free(st);
    free(en);
    free(t.by_dp);
    free(t.by_stage);
    free(t.fixed);
    free(j.ops);
    free(j.order);
    free(j.ord_start);
    return rc;
}
