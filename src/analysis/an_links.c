/* an_links.c - the network link by link: bandwidth on the wire between every
 * pair of ranks, from NCCL's proxy operations (`chainprof run` traces,
 * docs/FORMATS.md), and the slow host or link they single out.
 *
 * Design
 * - A proxy operation is one channel's transfer to (send) or from (receive)
 *   one peer, with the bytes it moved and the time its steps spent on the
 *   wire: sends from SendWait to the step's end (the data travels and the
 *   peer acknowledges it), which waiting for the peer's clear-to-send is
 *   not part of. Pair bandwidth i -> j = sum of bytes / sum of wire time of
 *   i's send operations to j (receive operations when a rank has no sends).
 *   Collective time cannot tell a slow link from a slow rank (every member
 *   of a collective waits for the slowest transfer); this can.
 * - Peers are communicator ranks: each rank's operations carry its own
 *   rank in the communicator (comm_rank) and the communicator's name
 *   (Process Group Name), so the map comm rank -> traced rank comes from
 *   the trace itself, for every communicator, sub-communicators included.
 * - The decision is the one `probe coll` makes on measured pairs
 *   (model/p2p_slow: median per host pair, median per host, below half the
 *   median of hosts is slow), so both commands name the same host for the
 *   same link speeds.
 * - A slow host is a finding (NET_SLOW_HOST): its gain is the exposed
 *   communication time that would go if its links ran at the median,
 *   assuming the job's collectives wait for its transfers: exposed
 *   intra+inter x (1 - its median / the hosts' median), per step, mean over
 *   ranks, as a share of step time.
 *
 * Output: top-level `links` (the p2p_slow section: verdict, grouped_by,
 * reference_gbps, margin, hosts[], links[], plus source, pairs); the typed
 * findings in ctx->results[AN_links] (an an_findings_result), which
 * an_findings ranks with the others. Nothing when no proxy operation is in
 * the trace.
 */
#include "an_verdict.h"
#include "../base/util.h"
#include "../model/p2p_slow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct keys {
    uint32_t wire, bytes, peer, pg, comm_rank;
    uint32_t send, recv;
} keys;

static uint32_t key_of(const tl_timeline *tl, const char *k) { return cp_intern_find(&tl->strings, k, strlen(k)); }

static bool arg_i(const tl_timeline *tl, size_t ev, uint32_t key, int64_t *v)
{
    tl_arg a;
    if (!tl_arg_by_id(tl, ev, key, &a) || (a.type != TL_ARG_INT && a.type != TL_ARG_BOOL))
        return false;
    *v = a.v.i;
    return true;
}

static uint32_t arg_s(const tl_timeline *tl, size_t ev, uint32_t key)
{
    tl_arg a;
    return tl_arg_by_id(tl, ev, key, &a) && a.type == TL_ARG_STR ? a.v.s : UINT32_MAX;
}

/* comm rank -> rank index, per communicator name. */
typedef struct member {
    uint32_t pg;
    int64_t comm_rank;
    size_t rank_index;
} member;

typedef struct pairs {
    size_t n;                  /* traced ranks */
    double *bytes, *wire_ns;   /* n x n, sends */
    double *rbytes, *rwire_ns; /* n x n, receives (fallback) */
    member *m;
    size_t n_m, cap_m;
    bool any;
} pairs;

static void add_member(pairs *p, uint32_t pg, int64_t cr, size_t ri)
{
    for (size_t i = 0; i < p->n_m; i++)
        if (p->m[i].pg == pg && p->m[i].comm_rank == cr)
            return;
    cp_xgrow((void **)&p->m, &p->cap_m, p->n_m + 1, sizeof *p->m);
    p->m[p->n_m++] = (member){ pg, cr, ri };
}

static long index_of(const pairs *p, uint32_t pg, int64_t cr)
{
    for (size_t i = 0; i < p->n_m; i++)
        if (p->m[i].pg == pg && p->m[i].comm_rank == cr)
            return (long)p->m[i].rank_index;
    return -1;
}

/* Every proxy operation: members first (a pass), then the pair sums. */
static void gather(const tl_timeline *tl, const keys *k, pairs *p)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t ri = 0; ri < tl->n_ranks; ri++) {
            const tl_rank *rk = &tl->ranks[ri];
            for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
                const tl_track *tr = &tl->tracks[t];
                for (size_t e = tr->ev_begin; e < tr->ev_end; e++) {
                    uint32_t name = tl->name[e];
                    if (name != k->send && name != k->recv)
                        continue;
                    int64_t cr, peer, bytes, wire;
                    uint32_t pg = arg_s(tl, e, k->pg);
                    if (pg == UINT32_MAX || !arg_i(tl, e, k->comm_rank, &cr))
                        continue;
                    if (pass == 0) {
                        add_member(p, pg, cr, ri);
                        continue;
                    }
                    long pj;
                    if (!arg_i(tl, e, k->peer, &peer) || !arg_i(tl, e, k->bytes, &bytes) ||
                        !arg_i(tl, e, k->wire, &wire) || wire <= 0 || bytes <= 0 ||
                        (pj = index_of(p, pg, peer)) < 0 || (size_t)pj == ri)
                        continue;
                    size_t cell = ri * p->n + (size_t)pj;
                    if (name == k->send) {
                        p->bytes[cell] += (double)bytes;
                        p->wire_ns[cell] += (double)wire;
                    } else { /* a receive measures the link peer -> me */
                        cell = (size_t)pj * p->n + ri;
                        p->rbytes[cell] += (double)bytes;
                        p->rwire_ns[cell] += (double)wire;
                    }
                    p->any = true;
                }
            }
        }
}

/* Exposed communication per step and step time, means over ranks. */
static void comm_exposed(const an_layers_result *lr, double *comm_ns, double *step_ns)
{
    *comm_ns = *step_ns = 0;
    if (!lr || !lr->n_ranks)
        return;
    for (size_t i = 0; i < lr->n_ranks; i++) {
        const an_step_layers *t = &lr->ranks[i].total;
        *comm_ns += (double)(t->exposed_ns[CP_LAYER_INTER] + t->exposed_ns[CP_LAYER_INTRA]);
        *step_ns += (double)t->dur_ns;
    }
    *comm_ns /= (double)lr->n_ranks;
    *step_ns /= (double)lr->n_ranks;
}

static void free_result(void *self)
{
    an_findings_result *r = self;
    free(r->v);
    free(r);
}

static void findings(an_ctx *ctx, const p2p_slow_result *v, an_findings_result *out)
{
    double comm_ns, step_ns;
    comm_exposed(ctx->results[AN_layers], &comm_ns, &step_ns);
    for (size_t e = 0; e < v->n_ents; e++) {
        if (!v->ents[e].slow)
            continue;
        double ratio = v->reference_gbps > 0 ? v->ents[e].score_gbps / v->reference_gbps : NAN;
        double gain = step_ns > 0 && isfinite(ratio) ? 100.0 * comm_ns * (1 - ratio) / step_ns : NAN;
        char title[160], assumption[320];
        snprintf(title, sizeof title, "%s %s's links run at %.3f GB/s, %.0f %% of the median %s's", v->by_host ? "host" : "rank",
                 v->ents[e].label, v->ents[e].score_gbps, 100 * ratio, v->by_host ? "host" : "rank");
        snprintf(assumption, sizeof assumption, "the collectives wait for this %s's transfers: its links at the "
                 "median %.3f GB/s would cut exposed communication (%.3f ms per rank) by %.0f %%",
                 v->by_host ? "host" : "rank", v->reference_gbps, comm_ns / 1e6, 100 * (1 - ratio));
        an_finding *x = an_finding_add(out, "NET_SLOW_HOST", CP_LAYER_INTER, gain, title,
                                       "check this host's NIC, cable and switch port (link speed, errors, "
                                       "throttling, a congested or mis-hashed path): ib_write_bw or iperf3 from it "
                                       "to another host, `chainprof probe net` / `probe coll` across the hosts",
                                       assumption);
        for (size_t l = 0; l < v->n_links; l++)
            if (v->links[l].slow && ((size_t)v->links[l].a == e || (size_t)v->links[l].b == e))
                an_finding_evidence(x, "link %s <-> %s: %.3f GB/s on the wire (NCCL proxy steps)",
                                    v->ents[v->links[l].a].label, v->ents[v->links[l].b].label, v->links[l].bw_gbps);
    }
}

int an_links_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    an_findings_result *out = cp_xcalloc(1, sizeof *out);
    out->free = free_result;
    ctx->results[AN_links] = out;
    keys k = { key_of(tl, "wire_ns"), key_of(tl, "bytes"), key_of(tl, "peer"), key_of(tl, "Process Group Name"),
               key_of(tl, "comm_rank"), key_of(tl, "ncclProxyOp Send"), key_of(tl, "ncclProxyOp Recv") };
    /* under mpirun: whether any process has proxy steps; the pairs need
     * every rank's, which are not exchanged (yet) */
    int64_t has[2] = { k.wire != UINT32_MAX && (k.send != UINT32_MAX || k.recv != UINT32_MAX), (int64_t)tl->n_ranks };
    int rc = an_job_sum(ctx, has, 2);
    if (rc < 0)
        return rc;
    if (!has[0] || has[1] < 2)
        return 0;
    if (an_dist_give_up(ctx, AN_links))
        return 0;
    size_t n = tl->n_ranks;
    pairs p = { .n = n, .bytes = cp_xcalloc(n * n, sizeof(double)), .wire_ns = cp_xcalloc(n * n, sizeof(double)),
                .rbytes = cp_xcalloc(n * n, sizeof(double)), .rwire_ns = cp_xcalloc(n * n, sizeof(double)) };
    gather(tl, &k, &p);
    if (p.any) {
        double *bw = cp_xmalloc(n * n * sizeof *bw);
        const char **hosts = cp_xcalloc(n, sizeof *hosts);
        size_t n_pairs = 0;
        for (size_t i = 0; i < n; i++) {
            hosts[i] = tl->ranks[i].meta.hostname ? tl_str(tl, tl->ranks[i].meta.hostname) : NULL;
            for (size_t j = 0; j < n; j++) {
                size_t c = i * n + j;
                double b = p.wire_ns[c] > 0 ? p.bytes[c] : p.rbytes[c], w = p.wire_ns[c] > 0 ? p.wire_ns[c] : p.rwire_ns[c];
                bw[c] = i != j && w > 0 ? b / w : NAN; /* bytes per ns = GB/s */
                n_pairs += isfinite(bw[c]);
            }
        }
        p2p_slow_result v;
        p2p_slow_analyze((int)n, hosts, bw, P2P_SLOW_MARGIN, &v);
        rep_node *sec = p2p_slow_report(ctx->rep, ctx->rep->root, "links", "links (time on the wire, NCCL proxy steps)",
                                        &v);
        rep_str(ctx->rep, sec, "source", "from", "NCCL profiler proxy operations: bytes / time on the wire");
        rep_int(ctx->rep, sec, "pairs", "rank pairs measured", (int64_t)n_pairs, NULL);
        findings(ctx, &v, out);
        p2p_slow_free(&v);
        free(bw);
        free(hosts);
    }
    free(p.bytes), free(p.wire_ns), free(p.rbytes), free(p.rwire_ns), free(p.m);
    return 0;
}
