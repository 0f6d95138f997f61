/* an_commmatrix.c - the communication matrix: bytes and time between every
 * pair of ranks, per process group and per layer (intra/inter node), with
 * the slowest pairs named.
 *
 * Design
 * - Source: every collective kernel an_collectives recorded (op, group
 *   size, bytes in nccl-tests' convention, transfer time with the wait
 *   split off when matched). What one rank puts on its links for one
 *   collective is bytes x the op's busbw factor (model/vocab.h: the
 *   nccl-tests factor is exactly the per-rank link traffic over the
 *   algorithm bandwidth), so the matrix and the busbw figures agree by
 *   construction.
 * - Who receives it: without NCCL's channel layout, the group's members in
 *   the order the trace lists them form the ring (NCCL's default ring
 *   visits ranks in that order inside a node): ring ops (all-reduce,
 *   all-gather, reduce-scatter, broadcast, reduce) send everything to the
 *   next member; all-to-all sends an equal share to every other member.
 * - Point-to-point: a send puts its message (bytes, factor 1) on (self,
 *   peer) when the peer is known (an_collectives: "Dst Rank" / "Src Rank",
 *   else "Rank" in the group), its time the pair's transfer; a recv adds
 *   (peer, self) only when no traced send was paired with it (its sender is
 *   untraced), so a pair is never counted twice. Older traces name no peer:
 *   those kernels are counted (`unplaced_kernels`) and left out.
 * - A pair's time is the transfer time of the kernels that used it, so its
 *   bandwidth (bytes / time, GB/s) is what that link achieved while busy;
 *   the slowest pairs are the lowest bandwidths, each beside its scope's
 *   median. The links of one ring share its transfer time, so they tie;
 *   ties list inter-node pairs first (the hop that bounds a ring across
 *   nodes). Per-link figures need NCCL's proxy steps (an_links).
 * - Each rank's own kernels give its outgoing row, so a partial trace gives
 *   exact rows for the traced ranks and nothing invented for the others.
 */
#include "an_verdict.h"
#include "../base/buf.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AN_CM_SLOWEST 5
#define AN_CM_MAX_GROUP 4096

typedef struct cm_rec {
    int32_t src, dst;
    uint32_t group;   /* dense group index */
    int64_t bytes, time_ns;
} cm_rec;

typedef struct cm_group {
    uint32_t key;     /* "Process Group Ranks" (else "Process Group Name"), id in the run's dict, 0 unknown */
    uint32_t name;    /* "Process Group Name", id in the run's dict, 0 unknown */
    int32_t size;
    bool inter;
    int64_t bytes, time_ns;
} cm_group;

static uint64_t rec_key(const void *p, int k, const void *ctx)
{
    (void)ctx;
    const cm_rec *r = p;
    return k == 0 ? (uint64_t)(uint32_t)r->src : k == 1 ? (uint64_t)(uint32_t)r->dst : r->group;
}

static bool ring_op(coll_op op)
{
    return op == COLL_ALL_REDUCE || op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER || op == COLL_BROADCAST ||
           op == COLL_REDUCE;
}

static const char *arg_s(const tl_timeline *tl, size_t ev, uint32_t key)
{
    tl_arg a;
    return key != UINT32_MAX && tl_arg_by_id(tl, ev, key, &a) && a.type == TL_ARG_STR ? tl_str(tl, a.v.s) : "";
}

/* One placed share of a kernel's traffic, before the groups are numbered:
 * pos orders them as one timeline's kernel records come (the shares of one
 * all-to-all in member order); key and name are ids in the run's dict. */
typedef struct cm_share {
    int64_t pos, src, dst, size, bytes, time_ns;
    uint32_t key, name;
} cm_share;

static uint64_t share_key(const void *p, int k, const void *ctx)
{
    (void)k, (void)ctx;
    return (uint64_t)((const cm_share *)p)->pos;
}

/* This process's kernels' shares (every kernel in one process). */
static size_t own_shares(an_ctx *ctx, const an_collectives_result *cr, cp_intern *dict, cm_share **out,
                         int64_t *unplaced)
{
    const tl_timeline *tl = ctx->tl;
    uint32_t k_pgr = cp_intern_find(&tl->strings, "Process Group Ranks", 19);
    uint32_t k_pgn = cp_intern_find(&tl->strings, "Process Group Name", 18);
    cm_share *v = NULL;
    size_t n = 0, cap = 0;
    int32_t *mem = cp_xmalloc(AN_CM_MAX_GROUP * sizeof *mem);
    for (size_t i = 0; cr && i < cr->n_kernel_recs; i++) {
        const an_coll_kernel *k = &cr->kernels[i];
        int32_t self = tl->ranks[tl->tracks[tl->track[k->ev]].rank_index].meta.rank;
        int gs = an_event_group(ctx, k->ev, mem, AN_CM_MAX_GROUP);
        int at = -1;
        for (int j = 0; j < gs && j < AN_CM_MAX_GROUP; j++)
            if (mem[j] == self)
                at = j;
        const char *name = arg_s(tl, k->ev, k_pgn), *key = arg_s(tl, k->ev, k_pgr);
        uint32_t nid = cp_intern_s(dict, name), kid = *key ? cp_intern_s(dict, key) : nid;
        if (k->op == COLL_SEND_RECV && k->p2p && k->peer >= 0 && k->bytes > 0) {
            if (k->p2p == AN_P2P_RECV && k->matched)
                continue; /* its sender's row has it */
            bool send = k->p2p == AN_P2P_SEND;
            cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
            v[n++] = (cm_share){ (int64_t)k->pos, send ? self : k->peer, send ? k->peer : self, gs, k->bytes,
                                 k->transfer_ns, kid, nid };
            continue;
        }
        if (k->op == COLL_SEND_RECV || k->op == COLL_OTHER || gs < 2 || gs > AN_CM_MAX_GROUP || at < 0 ||
            k->bytes <= 0) {
            (*unplaced)++;
            continue;
        }
        int64_t wire = (int64_t)llround((double)k->bytes * an_busbw_factor(k->op, gs));
        for (int j = 0; j < gs; j++) { /* ring ops: the next member; all-to-all: every other one */
            bool ring = ring_op(k->op);
            if (ring ? j != (at + 1) % gs : j == at)
                continue;
            cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
            v[n++] = (cm_share){ (int64_t)k->pos, self, mem[j], gs, ring ? wire : wire / (gs - 1), k->transfer_ns, kid, nid };
        }
    }
    free(mem);
    *out = v;
    return n;
}

/* Under mpirun: every process's shares, in the order one timeline gives
 * them. A process's part: its group strings once ({length, bytes} each, in
 * dict order), then its shares with key and name as indices into them.
 * Returns the new count, or (size_t)-1. */
static size_t job_shares(an_ctx *ctx, cp_intern *dict, cm_share **pv, size_t n, int64_t *unplaced)
{
    if (!ctx->opts || !ctx->opts->job_gather)
        return n;
    cp_buf msg = CP_BUF_INIT;
    int64_t head[2] = { (int64_t)cp_intern_count(dict), (int64_t)n };
    cp_buf_append(&msg, head, sizeof head);
    for (uint32_t i = 0; i < (uint32_t)head[0]; i++) {
        int64_t len = cp_intern_len(dict, i);
        cp_buf_append(&msg, &len, sizeof len);
        cp_buf_append(&msg, cp_intern_str(dict, i), (size_t)len);
    }
    cp_buf_append(&msg, *pv, n * sizeof **pv);
    void *all = NULL;
    size_t bytes = 0, pos = 0, m = 0, cap = 0;
    int rc = an_job_sum(ctx, unplaced, 1);
    if (rc == 0)
        rc = an_job_gather(ctx, msg.data, msg.len, &all, &bytes);
    cp_buf_free(&msg);
    cm_share *v = NULL;
    const char *p = all;
    uint32_t *map = NULL;
    size_t cap_map = 0;
    while (rc == 0 && pos < bytes) {
        if (bytes - pos < sizeof head || (memcpy(head, p + pos, sizeof head), head[0] < 0 || head[1] < 0)) {
            rc = CP_ERR_FORMAT;
            break;
        }
        pos += sizeof head;
        cp_xgrow((void **)&map, &cap_map, (size_t)head[0] + 1, sizeof *map);
        for (int64_t i = 0; i < head[0] && rc == 0; i++) {
            int64_t len;
            if (bytes - pos < sizeof len || (memcpy(&len, p + pos, sizeof len), len < 0) ||
                (uint64_t)len > bytes - pos - sizeof len) {
                rc = CP_ERR_FORMAT;
                break;
            }
            map[i] = cp_intern_n(dict, p + pos + sizeof len, (size_t)len);
            pos += sizeof len + (size_t)len;
        }
        if (rc == 0 && (uint64_t)head[1] > (bytes - pos) / sizeof(cm_share))
            rc = CP_ERR_FORMAT;
        for (int64_t i = 0; rc == 0 && i < head[1]; i++) {
            cm_share sh;
            memcpy(&sh, p + pos, sizeof sh);
            pos += sizeof sh;
            if (sh.key >= (uint64_t)head[0] || sh.name >= (uint64_t)head[0]) {
                rc = CP_ERR_FORMAT;
                break;
            }
            sh.key = map[sh.key];
            sh.name = map[sh.name];
            cp_xgrow((void **)&v, &cap, m + 1, sizeof *v);
            v[m++] = sh;
        }
    }
    free(map);
    free(all);
    free(*pv);
    *pv = v;
    if (rc < 0)
        return (size_t)-1;
    cp_sort_records(v, m, sizeof *v, 1, share_key, NULL); /* stable: an all-to-all's shares keep their order */
    return m;
}

static uint32_t group_index(cm_group **gv, size_t *ng, size_t *cap, uint32_t key, uint32_t name, int32_t size)
{
    for (size_t i = 0; i < *ng; i++)
        if ((*gv)[i].key == key && (*gv)[i].size == size)
            return (uint32_t)i;
    cp_xgrow((void **)gv, cap, *ng + 1, sizeof **gv);
    (*gv)[*ng] = (cm_group){ key, name, size, false, 0, 0 };
    return (uint32_t)(*ng)++;
}

static int cmp_slow(const void *pa, const void *pb)
{
    const cp_kv *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->val < b->val ? -1 : a->val > b->val; /* inter (bit 62 clear) first, then pair order */
}

static double gbps(int64_t bytes, int64_t ns) { return ns > 0 ? (double)bytes / (double)ns : NAN; }

int an_commmatrix_run(an_ctx *ctx)
{
    rep_report *rp = ctx->rep;
    const an_collectives_result *cr = ctx->results[AN_collectives];
    const an_layers_result *lr = ctx->results[AN_layers];
    rep_node *top = rep_obj(rp, rp->root, "comm_matrix", "communication matrix: traffic between ranks");
    rep_str(rp, top, "pattern", NULL,
            "bytes x busbw factor per kernel; ring ops to the next member in the group's order, all-to-all "
            "evenly to every other member; send/recv to the named peer");
    cp_intern dict; /* group strings; id 0 is "" (unknown) */
    cp_intern_init(&dict);
    int64_t unplaced = 0;
    cm_share *sh = NULL;
    size_t nsh = job_shares(ctx, &dict, &sh, own_shares(ctx, cr, &dict, &sh, &unplaced), &unplaced);
    if (nsh == (size_t)-1) {
        free(sh);
        cp_intern_free(&dict);
        return CP_ERR_FORMAT;
    }
    cm_rec *v = cp_xmalloc((nsh ? nsh : 1) * sizeof *v);
    size_t n = 0;
    cm_group *gv = NULL;
    size_t ng = 0, capg = 0;
    for (size_t i = 0; i < nsh; i++) { /* groups numbered by first appearance, as the kernels come */
        uint32_t gi = group_index(&gv, &ng, &capg, sh[i].key, sh[i].name, (int32_t)sh[i].size);
        v[n++] = (cm_rec){ (int32_t)sh[i].src, (int32_t)sh[i].dst, gi, sh[i].bytes, sh[i].time_ns };
    }
    free(sh);
    cp_sort_records(v, n, sizeof *v, 3, rec_key, NULL);
    /* per (src, dst, group), then per (src, dst) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && v[m - 1].src == v[i].src && v[m - 1].dst == v[i].dst && v[m - 1].group == v[i].group) {
            v[m - 1].bytes += v[i].bytes;
            v[m - 1].time_ns += v[i].time_ns;
        } else {
            v[m++] = v[i];
        }
    }
    n = m;
    int64_t scope_bytes[2] = { 0, 0 }, scope_ns[2] = { 0, 0 };
    static const rep_col cols[] = {
        { "src", "from rank", NULL, -1 },      { "dst", "to rank", NULL, -1 },  { "scope", "scope", NULL, -1 },
        { "bytes", "bytes", "bytes", -1 },     { "time_ns", "busy", "ns", -1 }, { "gbps", "bandwidth", "GB/s", 2 },
        { "groups", "groups", NULL, -1 },
    };
    rep_node *tab = rep_table(rp, top, "pairs", "traffic per rank pair (all groups)", cols, CP_ARRAY_LEN(cols));
    typedef struct pair { int32_t src, dst; bool inter; int64_t bytes, ns; double gbps; } pair;
    pair *pv = cp_xmalloc((n ? n : 1) * sizeof *pv);
    size_t np = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        pair p = { v[i].src, v[i].dst, lr && an_node_of(lr, v[i].src) != an_node_of(lr, v[i].dst), 0, 0, NAN };
        int groups = 0;
        while (j < n && v[j].src == v[i].src && v[j].dst == v[i].dst) {
            p.bytes += v[j].bytes;
            p.ns += v[j].time_ns;
            cm_group *g = &gv[v[j].group];
            g->bytes += v[j].bytes;
            g->time_ns += v[j].time_ns;
            g->inter |= p.inter;
            groups++;
            j++;
        }
        p.gbps = gbps(p.bytes, p.ns);
        scope_bytes[p.inter] += p.bytes;
        scope_ns[p.inter] += p.ns;
        pv[np++] = p;
        rep_node *row = rep_row(rp, tab);
        rep_cell_int(rp, row, p.src);
        rep_cell_int(rp, row, p.dst);
        rep_cell_str(rp, row, p.inter ? "inter" : "intra");
        rep_cell_int(rp, row, p.bytes);
        rep_cell_int(rp, row, p.ns);
        if (isfinite(p.gbps))
            rep_cell_num(rp, row, p.gbps);
        else
            rep_cell_null(rp, row);
        rep_cell_int(rp, row, groups);
        i = j;
    }
    static const rep_col gcols[] = {
        { "group", "process group", NULL, -1 }, { "ranks", "ranks", NULL, -1 }, { "scope", "scope", NULL, -1 },
        { "bytes", "bytes", "bytes", -1 },      { "time_ns", "busy", "ns", -1 },
    };
    rep_node *gt = rep_table(rp, top, "by_group", "traffic per process group", gcols, CP_ARRAY_LEN(gcols));
    for (size_t i = 0; i < ng; i++) {
        rep_node *row = rep_row(rp, gt);
        const char *nm = gv[i].name ? cp_intern_str(&dict, gv[i].name) : gv[i].key ? cp_intern_str(&dict, gv[i].key) : NULL;
        if (nm)
            rep_cell_str(rp, row, nm);
        else
            rep_cell_null(rp, row);
        rep_cell_int(rp, row, gv[i].size);
        rep_cell_str(rp, row, gv[i].inter ? "inter" : "intra");
        rep_cell_int(rp, row, gv[i].bytes);
        rep_cell_int(rp, row, gv[i].time_ns);
    }
    rep_node *ly = rep_obj(rp, top, "layers", "traffic per layer");
    rep_int(rp, ly, "intra_bytes", NULL, scope_bytes[0], "bytes");
    rep_int(rp, ly, "intra_time_ns", NULL, scope_ns[0], "ns");
    rep_int(rp, ly, "inter_bytes", NULL, scope_bytes[1], "bytes");
    rep_int(rp, ly, "inter_time_ns", NULL, scope_ns[1], "ns");
    /* the slowest pairs, beside their scope's median */
    double med[2] = { NAN, NAN };
    for (int sc = 0; sc < 2; sc++) {
        double *b = cp_xmalloc((np ? np : 1) * sizeof *b);
        size_t k = 0;
        for (size_t i = 0; i < np; i++)
            if (pv[i].inter == sc && isfinite(pv[i].gbps))
                b[k++] = pv[i].gbps;
        if (k) {
            cp_sort_f64(b, k);
            med[sc] = k % 2 ? b[k / 2] : (b[k / 2 - 1] + b[k / 2]) / 2;
        }
        free(b);
    }
    cp_kv *ord = cp_xmalloc((np ? np : 1) * sizeof *ord);
    size_t no = 0;
    for (size_t i = 0; i < np; i++)
        if (isfinite(pv[i].gbps))
            ord[no++] = (cp_kv){ cp_key_f64(pv[i].gbps), (uint64_t)!pv[i].inter << 62 | i };
    /* equal bandwidths (the links of one ring share its transfer time):
     * inter-node pairs first, the hop that bounds a ring across nodes */
    qsort(ord, no, sizeof *ord, cmp_slow);
    rep_node *sl = rep_arr(rp, top, "slowest", "slowest rank pairs");
    for (size_t i = 0; i < no && i < AN_CM_SLOWEST; i++) {
        const pair *p = &pv[ord[i].val & ~(UINT64_C(1) << 62)];
        rep_node *o = rep_obj(rp, sl, NULL, NULL);
        rep_int(rp, o, "src", NULL, p->src, NULL);
        rep_int(rp, o, "dst", NULL, p->dst, NULL);
        rep_str(rp, o, "scope", NULL, p->inter ? "inter" : "intra");
        rep_num(rp, o, "gbps", NULL, p->gbps, "GB/s");
        rep_num(rp, o, "scope_median_gbps", NULL, med[p->inter], "GB/s");
    }
    rep_int(rp, top, "unplaced_kernels", "kernels whose peers are unknown (send/recv naming no peer, no group)", unplaced, NULL);
    free(ord);
    free(pv);
    free(v);
    free(gv);
    cp_intern_free(&dict);
    return 0;
}
