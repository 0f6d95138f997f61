/* an_collectives.c - every NCCL kernel with its collective args: bytes,
 * algbw/busbw with the nccl-tests conventions, intra or inter node, a table
 * by op x size bucket x scope, and the split of each kernel's time into
 * waiting for the other ranks and transferring.
 *
 * Design
 * - Bytes follow nccl-tests' "size" column: the larger of the input and
 *   output element counts times the dtype size (the whole buffer for
 *   all-reduce/broadcast, the gathered output for all-gather, the scattered
 *   input for reduce-scatter). algbw = bytes / time; since one byte per
 *   nanosecond is exactly 1 GB/s (GB = 1e9 B), bytes/ns is the figure.
 *   busbw = algbw * factor(op, n), the nccl-tests factors of the model's
 *   collective vocabulary (model/vocab.h, collectives.def).
 * - Wait vs transfer: a collective cannot start moving data before its last
 *   member arrives. The k-th collective of one process group on every rank is
 *   the same operation (NCCL requires every member to issue a group's
 *   collectives in the same order), so records are matched by (group, k).
 *   When every member of the group is traced and the ops agree, the latest
 *   kernel start is when the transfer begins: a rank's wait is
 *   latest_start - its start (clipped to its duration) and the instance's
 *   transfer time is the duration of the last-arriving rank's kernel. Busbw
 *   is computed on transfer time, so a slow rank does not masquerade as a
 *   slow network. Send/recv pair apart (match_p2p: the k-th send a->b with
 *   the k-th recv on b from a, the peer from the args), as a two-member
 *   instance. Unmatched kernels (partial traces, send/recv) count their
 *   whole duration as transfer; a scope's busbw is taken from the kernels
 *   whose transfer is known, and is flagged a lower bound when it has only
 *   unmatched group collectives (one rank's trace of eight cannot tell its
 *   wait from the transfer).
 * - The wait of each kernel is added to its step (by kernel start) in the
 *   layers result, for the stragglers analysis and the findings rules.
 * - Expected busbw per scope: --nic-gbps (Gbit/s, converted) / --nvlink-gbps,
 *   else the built-in hardware catalog (model/catalog.h) by the GPU named in
 *   deviceProperties; unknown -> null.
 */
#include "an_verdict.h"
#include "../base/buf.h"
#include "../base/par.h"
#include "../base/sort.h"
#include "../base/util.h"
#include "../model/catalog.h"
#include "../model/collmodel.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double an_busbw_factor(coll_op op, int n) { return n > 1 ? coll_busbw_factor(op, n) : 1.0; }

/* Element size of PyTorch dtype names as record_param_comms writes them. */
static int dtype_size(const char *d)
{
    static const struct { const char *name; int size; } t[] = {
        { "Float", 4 },         { "float", 4 },       { "Double", 8 },      { "Half", 2 },
        { "BFloat16", 2 },      { "Int", 4 },         { "Long", 8 },        { "Short", 2 },
        { "Char", 1 },          { "Byte", 1 },        { "Bool", 1 },        { "ComplexFloat", 8 },
        { "ComplexDouble", 16 }, { "ComplexHalf", 4 }, { "UInt16", 2 },     { "UInt32", 4 },
        { "UInt64", 8 },        { "float32", 4 },     { "float16", 2 },     { "bfloat16", 2 },
    };
    if (!d)
        return 0;
    for (size_t i = 0; i < CP_ARRAY_LEN(t); i++)
        if (strcmp(d, t[i].name) == 0)
            return t[i].size;
    if (strncmp(d, "Float8", 6) == 0)
        return 1;
    return 0;
}

typedef struct rec {
    uint32_t rank_index; /* in the job's ranks (ctx->job), the timeline's own in one process */
    uint32_t local;      /* in this timeline's ranks; UINT32_MAX: another process's rank */
    int32_t rank;
    size_t ev;       /* the kernel's event (the critical path's cross-rank edges) */
    uint64_t pg;     /* group identity: name id << 32 | ranks-string id */
    int64_t seq;
    int64_t start, end;
    int64_t bytes;
    int32_t n;
    coll_op op;
    bool inter, matched;
    uint8_t dir;     /* point-to-point: AN_P2P_SEND / AN_P2P_RECV, 0 a collective or unknown */
    int32_t peer;    /* point-to-point: the peer's global rank, -1 unknown */
    size_t last_ev;  /* matched: the kernel of the instance's last-arriving rank */
    int64_t transfer_ns, wait_ns;
    double busbw;
} rec;



/* String ids of the arg keys gather reads, looked up once per run. */
typedef struct coll_keys {
    uint32_t op, in_n, out_n, dtype, pg_name, pg_ranks, group_size;
} coll_keys;

static uint32_t key_id(const tl_timeline *tl, const char *key)
{
    return cp_intern_find(&tl->strings, key, strlen(key));
}

static uint32_t arg_str_id(const tl_timeline *tl, size_t ev, uint32_t key)
{
    tl_arg a;
    return tl_arg_by_id(tl, ev, key, &a) && a.type == TL_ARG_STR ? a.v.s : 0;
}

static const char *arg_str(const tl_timeline *tl, size_t ev, uint32_t key)
{
    tl_arg a;
    return tl_arg_by_id(tl, ev, key, &a) && a.type == TL_ARG_STR ? tl_str(tl, a.v.s) : NULL;
}

/* An element count or group size from the trace: a whole number in
 * [0, 2^48], so count x element size (at most 16 bytes) cannot overflow; a
 * value outside (1e308, a negative count) is treated as absent. */
#define AN_COLL_MAX_COUNT (INT64_C(1) << 48)
static bool arg_count(const tl_timeline *tl, size_t ev, uint32_t key, int64_t *out)
{
    tl_arg a;
    if (!tl_arg_by_id(tl, ev, key, &a))
        return false;
    if (a.type == TL_ARG_INT || a.type == TL_ARG_BOOL) {
        if (a.v.i < 0 || a.v.i > AN_COLL_MAX_COUNT)
            return false;
        *out = a.v.i;
    } else if (a.type == TL_ARG_NUM) {
        if (!(a.v.d >= 0 && a.v.d <= (double)AN_COLL_MAX_COUNT))
            return false;
        *out = (int64_t)a.v.d;
    } else {
        return false;
    }
    return true;
}

/* One rank's collective records (a job of gather: ranks run in parallel;
 * the layer sweep already filled an_event_scope's cache, so it is only
 * read here). */
typedef struct gather_job {
    const an_ctx *ctx;
    const an_layers_result *lr;
    coll_keys k;
    rec *v;                      /* every rank's records, rank r's from at[r] */
    size_t *at, *n;              /* per rank: first slot, records kept */
    int64_t *n_kernels, *n_noargs;
} gather_job;

/* Collective kernels of rank ri: an upper bound of its records. */
static size_t count_comm(const tl_timeline *tl, size_t ri)
{
    const tl_rank *rk = &tl->ranks[ri];
    size_t n = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++)
        for (size_t i = tl->tracks[t].ev_begin; i < tl->tracks[t].ev_end; i++)
            n += tl->kclass[i] == TL_K_COMM;
    return n;
}

static void gather_rank(void *ctx, size_t ri)
{
    gather_job *j = ctx;
    const tl_timeline *tl = j->ctx->tl;
    const coll_keys *k = &j->k;
    const tl_rank *rk = &tl->ranks[ri];
    rec *v = j->v + j->at[ri];
    size_t n = 0;
    for (uint32_t t = rk->track_begin; t < rk->track_end; t++) {
        const tl_track *tr = &tl->tracks[t];
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
            if (tl->kclass[i] != TL_K_COMM)
                continue;
            j->n_kernels[ri]++;
            const char *opname = arg_str(tl, i, k->op);
            int64_t in_n = -1, out_n = -1;
            bool has_in = arg_count(tl, i, k->in_n, &in_n);
            bool has_out = arg_count(tl, i, k->out_n, &out_n);
            int dsz = dtype_size(arg_str(tl, i, k->dtype));
            if (!opname || (!has_in && !has_out) || dsz == 0) {
                j->n_noargs[ri]++;
                continue;
            }
            rec *r = &v[n++];
            memset(r, 0, sizeof *r);
            r->rank_index = r->local = (uint32_t)ri;
            r->rank = rk->meta.rank;
            r->ev = i;
            r->pg = (uint64_t)arg_str_id(tl, i, k->pg_name) << 32 | arg_str_id(tl, i, k->pg_ranks);
            r->start = tl->ts_ns[i];
            r->end = tl_end_ns(tl, i);
            r->bytes = CP_MAX(in_n, out_n) * dsz;
            r->op = coll_op_classify(opname);
            r->peer = -1;
            int g, dir = 0;
            an_event_scope(j->ctx, j->lr, i, &g, &r->inter); /* a pair's own scope when its peer is known */
            if (r->op == COLL_SEND_RECV && j->lr) {
                r->peer = an_event_p2p_peer(j->ctx, j->lr, i, &dir);
                r->dir = (uint8_t)dir;
            }
            int64_t gs;
            if (g <= 0 && arg_count(tl, i, k->group_size, &gs) && gs <= INT_MAX)
                g = (int)gs;
            r->n = g > 0 ? g : 1;
            r->transfer_ns = r->end - r->start;
        }
    }
    j->n[ri] = n;
}

/* Records of every traced collective kernel, in (rank, track, event)
 * order; counts kernels without args. One array sized by the collective
 * kernels of each rank (a cheap scan of the class column), filled by the
 * ranks in parallel at their offsets and closed up: no per-rank arrays
 * growing by doubling and no second copy of them all. */
static rec *gather(const an_ctx *ctx, const an_layers_result *lr, size_t *n_out, int64_t *n_kernels,
                   int64_t *n_noargs)
{
    const tl_timeline *tl = ctx->tl;
    size_t nr = tl->n_ranks ? tl->n_ranks : 1;
    gather_job j = { ctx, lr,
                     { key_id(tl, "Collective name"), key_id(tl, "In msg nelems"), key_id(tl, "Out msg nelems"),
                       key_id(tl, "dtype"), key_id(tl, "Process Group Name"), key_id(tl, "Process Group Ranks"),
                       key_id(tl, "Group size") },
                     NULL, cp_xcalloc(nr, sizeof(size_t)), cp_xcalloc(nr, sizeof(size_t)),
                     cp_xcalloc(nr, sizeof(int64_t)), cp_xcalloc(nr, sizeof(int64_t)) };
    size_t bound = 0;
    for (size_t r = 0; r < tl->n_ranks; r++) {
        j.at[r] = bound;
        bound += count_comm(tl, r);
    }
    j.v = cp_xmalloc((bound ? bound : 1) * sizeof *j.v);
    cp_par_for(tl->n_ranks, ctx->opts && ctx->opts->nthreads > 0 ? ctx->opts->nthreads : 1, gather_rank, &j);
    rec *v = j.v;
    size_t n = 0;
    for (size_t r = 0; r < tl->n_ranks; r++) {
        if (j.n[r] && j.at[r] != n)
            memmove(v + n, v + j.at[r], j.n[r] * sizeof *v);
        n += j.n[r];
        *n_kernels += j.n_kernels[r];
        *n_noargs += j.n_noargs[r];
    }
    free(j.at);
    free(j.n);
    free(j.n_kernels);
    free(j.n_noargs);
    *n_out = n;
    return v;
}

/* ---- sharded run (mpirun): every process's records, through an_job_gather ---- */

/* One record as it travels; the group's name and ranks strings by index
 * into the strings before the records (the process's own numbering). */
typedef struct wire_rec {
    int64_t start, end, bytes, ev; /* ev: the sender's own event index */
    int32_t rank, n, op, inter, peer, dir;
    uint32_t name, ranks;
} wire_rec;

static void put_records(const tl_timeline *tl, const rec *v, size_t n, cp_buf *msg)
{
    cp_intern loc;
    cp_intern_init(&loc);
    wire_rec *w = cp_xcalloc(n ? n : 1, sizeof *w);
    for (size_t i = 0; i < n; i++) {
        uint32_t name = (uint32_t)(v[i].pg >> 32), ranks = (uint32_t)v[i].pg;
        w[i] = (wire_rec){ v[i].start, v[i].end, v[i].bytes, (int64_t)v[i].ev, v[i].rank, v[i].n, (int32_t)v[i].op,
                           v[i].inter, v[i].peer, v[i].dir, cp_intern_s(&loc, tl_str(tl, name)),
                           cp_intern_s(&loc, tl_str(tl, ranks)) };
    }
    uint32_t ns = (uint32_t)cp_intern_count(&loc), nr = (uint32_t)n;
    cp_buf_append(msg, &ns, sizeof ns);
    for (uint32_t i = 0; i < ns; i++) {
        uint32_t len = cp_intern_len(&loc, i);
        cp_buf_append(msg, &len, sizeof len);
        cp_buf_append(msg, cp_intern_str(&loc, i), len);
    }
    cp_buf_append(msg, &nr, sizeof nr);
    cp_buf_append(msg, w, n * sizeof *w);
    free(w);
    cp_intern_free(&loc);
}

static bool take(const unsigned char *p, size_t len, size_t *pos, void *out, size_t n)
{
    if (n > len - *pos)
        return false;
    memcpy(out, p + *pos, n);
    *pos += n;
    return true;
}

/* One process's part of the gathered bytes appended to *out (groups
 * re-interned into dict); false on a damaged message. */
static bool get_records(const an_ctx *ctx, const unsigned char *p, size_t len, size_t *pos, cp_intern *dict,
                        rec **out, size_t *n, size_t *cap)
{
    uint32_t ns, nr = 0;
    if (!take(p, len, pos, &ns, sizeof ns) || ns > (len - *pos) / sizeof(uint32_t))
        return false;
    uint32_t *gid = cp_xcalloc(ns + 1, sizeof *gid);
    bool ok = true;
    for (uint32_t i = 0; i < ns && ok; i++) {
        uint32_t sl;
        ok = take(p, len, pos, &sl, sizeof sl) && sl <= len - *pos;
        if (ok) {
            gid[i] = cp_intern_n(dict, (const char *)p + *pos, sl);
            *pos += sl;
        }
    }
    ok = ok && take(p, len, pos, &nr, sizeof nr) && nr <= (len - *pos) / sizeof(wire_rec);
    for (uint32_t i = 0; i < nr && ok; i++) {
        wire_rec w;
        take(p, len, pos, &w, sizeof w);
        int li = tl_rank_index(ctx->tl, w.rank);
        ok = w.name < ns && w.ranks < ns && an_job_index(ctx, w.rank) != UINT32_MAX;
        if (!ok)
            break;
        cp_xgrow((void **)out, cap, *n + 1, sizeof **out);
        rec *r = &(*out)[(*n)++];
        memset(r, 0, sizeof *r);
        *r = (rec){ .rank_index = an_job_index(ctx, w.rank), .local = li >= 0 ? (uint32_t)li : UINT32_MAX,
                    .rank = w.rank, .ev = li >= 0 ? (size_t)w.ev : SIZE_MAX, .pg = (uint64_t)gid[w.name] << 32 | gid[w.ranks],
                    .start = w.start, .end = w.end, .bytes = w.bytes, .n = w.n, .op = (coll_op)w.op,
                    .inter = w.inter != 0, .last_ev = SIZE_MAX, .transfer_ns = w.end - w.start,
                    .peer = w.peer, .dir = (uint8_t)w.dir };
    }
    free(gid);
    return ok;
}

/* Replace this process's records by the job's, in (process, rank, track,
 * event) order, which the (rank, time) sort of match() makes the order one
 * timeline of every rank gives. Events are this process's own: ev is
 * SIZE_MAX in other ranks' records, so the matched members (the critical
 * path's input, not computed under mpirun) are left empty and the kernel
 * records are this process's, each with its place among the job's. */
static int exchange(const an_ctx *ctx, rec **pv, size_t *pn)
{
    cp_buf msg = CP_BUF_INIT;
    put_records(ctx->tl, *pv, *pn, &msg);
    void *all = NULL;
    size_t bytes = 0;
    int rc = an_job_gather(ctx, msg.data, msg.len, &all, &bytes);
    cp_buf_free(&msg);
    if (rc < 0)
        return rc;
    cp_intern dict;
    cp_intern_init(&dict);
    rec *v = NULL;
    size_t n = 0, cap = 0, pos = 0;
    bool ok = true;
    while (ok && pos < bytes)
        ok = get_records(ctx, all, bytes, &pos, &dict, &v, &n, &cap);
    cp_intern_free(&dict);
    free(all);
    free(*pv);
    *pv = v ? v : cp_xmalloc(sizeof *v);
    *pn = n;
    return ok ? 0 : CP_ERR_FORMAT;
}

/* Sequence numbers per (rank, group), then the cross-rank match. */
/* Record orders (cp_sort_records: stable radix passes, last key first). */
enum rec_order {
    BY_RANK_TIME,   /* (rank_index, start) */
    BY_MATCH,       /* (pg, seq, rank): the same collective on every rank side by side */
    BY_GROUP,       /* (op, intra before inter, bytes) = the table's (op, scope, bucket, bytes) */
};

static const int rec_order_keys[] = { 2, 3, 3 }; /* keys of each rec_order */

static uint64_t rec_key(const void *p, int k, const void *ctx)
{
    const rec *r = p;
    switch (*(const enum rec_order *)ctx) {
    case BY_RANK_TIME: return k == 0 ? r->rank_index : cp_key_i64(r->start);
    case BY_MATCH: return k == 0 ? r->pg : k == 1 ? cp_key_i64(r->seq) : cp_key_i64(r->rank);
    case BY_GROUP: return k == 0 ? (uint64_t)r->op : k == 1 ? (uint64_t)r->inter : cp_key_i64(r->bytes);
    }
    return 0;
}

static void sort_recs(rec *v, size_t n, enum rec_order o)
{
    cp_sort_records(v, n, sizeof *v, rec_order_keys[o], rec_key, &o);
}

/* Groups renumbered by first appearance in (rank, time) order: the match
 * order then depends on the records alone, not on string ids, which differ
 * between one timeline and the shards of one under mpirun. */
static void canonical_groups(rec *v, size_t n)
{
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv), *fk = cp_xmalloc((n ? n : 1) * sizeof *fk);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ v[i].pg, i };
    cp_sort_kv(kv, n, NULL); /* stable: a group's records in record order, its first one first */
    size_t ng = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || kv[i].key != kv[i - 1].key) {
            fk[ng] = (cp_kv){ kv[i].val, ng };
            ng++;
        }
    cp_sort_kv(fk, ng, NULL); /* groups by their first record */
    uint64_t *ord = cp_xmalloc((ng ? ng : 1) * sizeof *ord);
    for (size_t k = 0; k < ng; k++)
        ord[fk[k].val] = k;
    for (size_t i = 0, g = 0; i < n; i++) {
        if (i && kv[i].key != kv[i - 1].key)
            g++;
        v[kv[i].val].pg = ord[g];
    }
    free(kv);
    free(fk);
    free(ord);
}

/* Point-to-point pairs: the k-th send a->b of a group is the k-th recv on
 * b from a (NCCL delivers one pair's messages in order). v is in (rank,
 * time) order; each record's k comes from a per-(rank, group, peer,
 * direction) counter, then (group, src, dst, k) brings each send beside
 * its recv. Like a collective, the transfer starts when the later of the
 * two arrived: the pair's transfer time is that kernel's duration, the
 * other one's wait the gap. */
typedef struct p2p_key { uint64_t pg; int32_t src, dst; int64_t k; size_t i; uint8_t dir; } p2p_key;

static uint64_t p2p_rec_key(const void *p, int k, const void *ctx)
{
    (void)ctx;
    const p2p_key *r = p;
    switch (k) {
    case 0: return r->pg;
    case 1: return (uint32_t)r->src;
    case 2: return (uint32_t)r->dst;
    case 3: return cp_key_i64(r->k);
    default: return r->dir;
    }
}

static void match_p2p(rec *v, size_t n, int64_t *n_matched, int64_t *n_p2p)
{
    p2p_key *pk = NULL;
    size_t m = 0, cap = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].op == COLL_SEND_RECV && v[i].dir && v[i].peer >= 0) {
            cp_xgrow((void **)&pk, &cap, m + 1, sizeof *pk);
            bool send = v[i].dir == AN_P2P_SEND;
            pk[m++] = (p2p_key){ v[i].pg, send ? v[i].rank : v[i].peer, send ? v[i].peer : v[i].rank, 0, i, v[i].dir };
        }
    /* k: the record's position among its rank's records with the same
     * (group, src, dst, direction), in time order (v's order) */
    cp_sort_records(pk, m, sizeof *pk, 3, p2p_rec_key, NULL); /* stable: time order kept within a key */
    for (size_t a = 0; a < m;) {
        size_t b = a;
        int64_t ks = 0, kr = 0;
        while (b < m && pk[b].pg == pk[a].pg && pk[b].src == pk[a].src && pk[b].dst == pk[a].dst) {
            pk[b].k = pk[b].dir == AN_P2P_SEND ? ks++ : kr++;
            b++;
        }
        a = b;
    }
    cp_sort_records(pk, m, sizeof *pk, 5, p2p_rec_key, NULL);
    for (size_t a = 0; a + 1 < m; a++) {
        const p2p_key *x = &pk[a], *y = &pk[a + 1];
        if (x->dir != AN_P2P_SEND || y->dir != AN_P2P_RECV || x->pg != y->pg || x->src != y->src || x->dst != y->dst ||
            x->k != y->k)
            continue;
        rec *s = &v[x->i], *r = &v[y->i];
        rec *last = r->start > s->start ? r : s;
        int64_t arrive = last->start, transfer = last->end - last->start;
        rec *both[2] = { s, r };
        for (int q = 0; q < 2; q++) {
            both[q]->wait_ns = CP_MIN(CP_MAX(arrive - both[q]->start, 0), both[q]->end - both[q]->start);
            both[q]->transfer_ns = transfer;
            both[q]->matched = true;
            both[q]->last_ev = last->ev;
        }
        *n_matched += 2;
        *n_p2p += 2;
        a++;
    }
    free(pk);
}

static void match(rec *v, size_t n, int64_t *n_matched, int64_t *n_p2p)
{
    sort_recs(v, n, BY_RANK_TIME);
    canonical_groups(v, n);
    match_p2p(v, n, n_matched, n_p2p);
    uint64_t *keys = NULL;
    int64_t *cnt = NULL;
    size_t nk = 0, capk = 0, capc = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].rank_index != v[i - 1].rank_index)
            nk = 0;
        if (v[i].op == COLL_SEND_RECV) { /* paired apart: not in the group's collective order */
            v[i].seq = -1;
            continue;
        }
        size_t k = 0;
        while (k < nk && keys[k] != v[i].pg)
            k++;
        if (k == nk) {
            cp_xgrow((void **)&keys, &capk, nk + 1, sizeof *keys);
            cp_xgrow((void **)&cnt, &capc, nk + 1, sizeof *cnt);
            keys[nk] = v[i].pg;
            cnt[nk++] = 0;
        }
        v[i].seq = cnt[k]++;
    }
    free(keys);
    free(cnt);
    sort_recs(v, n, BY_MATCH);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].pg == v[i].pg && v[j].seq == v[i].seq)
            j++;
        bool ok = v[i].op != COLL_SEND_RECV && v[i].n > 1 && (int32_t)(j - i) == v[i].n;
        for (size_t k = i + 1; k < j && ok; k++)
            ok = v[k].op == v[i].op && v[k].rank != v[k - 1].rank;
        if (ok) {
            size_t last = i;
            for (size_t k = i + 1; k < j; k++)
                if (v[k].start > v[last].start)
                    last = k;
            int64_t arrive = v[last].start, transfer = v[last].end - v[last].start;
            for (size_t k = i; k < j; k++) {
                int64_t dur = v[k].end - v[k].start;
                v[k].wait_ns = CP_MIN(CP_MAX(arrive - v[k].start, 0), dur);
                v[k].transfer_ns = transfer;
                v[k].matched = true;
                v[k].last_ev = v[last].ev;
            }
            *n_matched += (int64_t)(j - i);
        }
        i = j;
    }
}

static double quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    cp_sort_f64(v, n);
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    double f = pos - (double)lo;
    return lo + 1 < n ? v[lo] * (1 - f) + v[lo + 1] * f : v[lo];
}

typedef struct wpair {
    double v, w;
} wpair;

/* Median of values weighted by w (transfer time): the busbw at which half
 * of the scope's transfer time was spent. */
static double weighted_median(wpair *p, size_t n)
{
    if (n == 0)
        return NAN;
    cp_kv *kv = cp_xmalloc(n * sizeof *kv);
    double tot = 0, acc = 0;
    for (size_t i = 0; i < n; i++) {
        kv[i] = (cp_kv){ cp_key_f64(p[i].v), i };
        tot += p[i].w;
    }
    cp_sort_kv(kv, n, NULL);
    double med = p[kv[n - 1].val].v;
    for (size_t i = 0; i < n; i++) {
        acc += p[kv[i].val].w;
        if (acc >= tot / 2) {
            med = p[kv[i].val].v;
            break;
        }
    }
    free(kv);
    return med;
}

static int bucket_of(int64_t bytes)
{
    int b = 0;
    while (b < 62 && (INT64_C(1) << (b + 1)) <= bytes)
        b++;
    return b;
}

double an_expected_busbw_gbps(const an_ctx *ctx, const hw_gpu *gpu, bool inter, const char **source)
{
    const an_opts *o = ctx->opts;
    *source = NULL;
    if (inter) {
        if (o && o->nic_gbit_s > 0) {
            *source = "--nic-gbps";
            return cp_gbit_s_to_gbps(o->nic_gbit_s);
        }
        if (gpu && hw_gpu_nic_gbps_per_gpu(gpu) > 0) {
            *source = "catalog";
            return hw_gpu_nic_gbps_per_gpu(gpu);
        }
        return NAN;
    }
    if (o && o->nvlink_gbps > 0) {
        *source = "--nvlink-gbps";
        return o->nvlink_gbps;
    }
    if (gpu && (gpu->scaleup_gbps > 0 || gpu->pcie_gbps > 0)) {
        *source = "catalog";
        return gpu->scaleup_gbps > 0 ? gpu->scaleup_gbps : gpu->pcie_gbps;
    }
    return NAN;
}

static void expected(const an_ctx *ctx, an_collectives_result *cr)
{
    const an_job_result *j = ctx->results[AN_job];
    const hw_gpu *gpu = j ? j->gpu : NULL; /* only a row of the trace's own vendor */
    cr->expected_inter_gbps = an_expected_busbw_gbps(ctx, gpu, true, &cr->expected_inter_source);
    cr->expected_intra_gbps = an_expected_busbw_gbps(ctx, gpu, false, &cr->expected_intra_source);
}

/* A kernel whose wait cannot be told from its transfer: a collective of a
 * group with more than one rank that the cross-rank match could not pair
 * (some members untraced), so its whole duration counts as transfer. */
static bool unsplit(const rec *r) { return !r->matched && r->op != COLL_SEND_RECV && r->n > 1; }

/* Per scope: the time-weighted median busbw over the kernels whose
 * transfer time is known (matched, or send/recv and one-rank groups); when
 * a scope has none, over the unsplit kernels, flagged as a lower bound
 * (their durations include waiting for the untraced ranks). */
static void scope_summaries(const rec *v, size_t n, an_collectives_result *cr)
{
    wpair *wp = cp_xcalloc(n ? n : 1, sizeof *wp);
    for (int scope = 0; scope < 2; scope++) {
        int64_t known_ns = 0, unsplit_ns = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i].inter == (scope == 1) && v[i].op != COLL_OTHER) {
                if (unsplit(&v[i]))
                    unsplit_ns += v[i].end - v[i].start;
                else
                    known_ns += v[i].transfer_ns;
            }
        bool lower = known_ns == 0 && unsplit_ns > 0;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i].inter == (scope == 1) && isfinite(v[i].busbw) && v[i].op != COLL_OTHER && unsplit(&v[i]) == lower)
                wp[m++] = (wpair){ v[i].busbw, (double)v[i].transfer_ns };
        double med = weighted_median(wp, m);
        if (scope) {
            cr->inter_busbw_gbps = med;
            cr->inter_busbw_lower_bound = lower;
            cr->inter_unsplit_ns = unsplit_ns;
        } else {
            cr->intra_busbw_gbps = med;
            cr->intra_busbw_lower_bound = lower;
            cr->intra_unsplit_ns = unsplit_ns;
        }
    }
    free(wp);
}

/* What the collective cost model (model/collmodel.h) expects for this op,
 * size and scope: n ranks packed onto nodes of --gpus-per-node (else the
 * catalog node; one host when intra), NCCL's own algorithm choice; NaN when
 * the GPU or op is unknown. */
static double model_expected_gbps(const an_ctx *ctx, const hw_gpu *gpu, coll_op op, int64_t bytes, int n, bool inter)
{
    if (!gpu || op == COLL_OTHER || n < 2 || bytes <= 0)
        return NAN;
    const an_opts *o = ctx->opts;
    collm_query q;
    collm_query_init(&q);
    q.op = op, q.bytes = (double)bytes, q.gpu = gpu;
    int per = o && o->gpus_per_node > 0 ? o->gpus_per_node : (gpu->gpus_per_node > 0 ? gpu->gpus_per_node : 8);
    q.gpus_per_node = inter ? (n < per ? n : per) : n;
    q.nodes = inter ? (n + q.gpus_per_node - 1) / q.gpus_per_node : 1;
    if (inter && q.nodes < 2)
        q.nodes = 2, q.gpus_per_node = (n + 1) / 2;
    if (o && o->nic_gbit_s > 0)
        q.nic_gbit_s = o->nic_gbit_s, q.nics_per_node = q.gpus_per_node; /* --nic-gbps is per GPU */
    if (o && o->nvlink_gbps > 0)
        q.nvlink_gbps = o->nvlink_gbps;
    collm_result r;
    return collm_estimate(&q, &r, NULL, 0) == 0 && r.busbw_gbps > 0 ? r.busbw_gbps : NAN;
}

static void add_wait_to_steps(an_layers_result *lr, const rec *r)
{
    an_rank_layers *rl = &lr->ranks[r->local];
    size_t lo = 0, hi = rl->n_steps;
    while (lo < hi) { /* first step ending after the kernel start */
        size_t mid = (lo + hi) / 2;
        if (rl->steps[mid].ts_ns + rl->steps[mid].dur_ns <= r->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < rl->n_steps && rl->steps[lo].ts_ns <= r->start) {
        rl->steps[lo].comm_wait_ns += r->wait_ns;
        if (r->inter)
            rl->steps[lo].comm_wait_inter_ns += r->wait_ns;
        rl->total.comm_wait_ns += r->wait_ns;
        if (r->inter)
            rl->total.comm_wait_inter_ns += r->wait_ns;
    }
}


/* The matched kernels, by event, for the critical path's cross-rank edges. */
static void keep_members(an_collectives_result *cr, const rec *v, size_t n)
{
    size_t k = 0;
    cr->members = cp_xmalloc((cr->n_matched ? (size_t)cr->n_matched : 1) * sizeof *cr->members);
    for (size_t i = 0; i < n; i++)
        if (v[i].matched)
            cr->members[k++] = (an_coll_member){ v[i].ev, v[i].last_ev, v[i].peer, v[i].dir };
    cr->n_members = k;
    cp_kv *kv = cp_xmalloc((k ? k : 1) * sizeof *kv);
    for (size_t i = 0; i < k; i++)
        kv[i] = (cp_kv){ cr->members[i].ev, i };
    cp_sort_kv(kv, k, NULL);
    an_coll_member *s = cp_xmalloc((k ? k : 1) * sizeof *s);
    for (size_t i = 0; i < k; i++)
        s[i] = cr->members[kv[i].val];
    free(kv);
    free(cr->members);
    cr->members = s;
}

/* Every kernel's record, for the communication matrix (v is in match
 * order here; the matrix does not depend on the order). */
static void keep_kernels(an_collectives_result *cr, const rec *v, size_t n)
{
    cr->kernels = cp_xmalloc((n ? n : 1) * sizeof *cr->kernels);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].local != UINT32_MAX) /* under mpirun: this process's ranks */
            cr->kernels[k++] = (an_coll_kernel){ v[i].ev, i, v[i].op, v[i].n, v[i].bytes, v[i].transfer_ns, v[i].peer,
                                                 v[i].dir, v[i].matched };
    cr->n_kernel_recs = k;
}

static void free_result(void *self)
{
    an_collectives_result *cr = self;
    free(cr->groups);
    free(cr->members);
    free(cr->kernels);
    free(cr);
}

int an_collectives_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    rep_report *rp = ctx->rep;
    an_layers_result *lr = ctx->results[AN_layers];
    an_collectives_result *cr = cp_xcalloc(1, sizeof *cr);
    cr->free = free_result;
    ctx->results[AN_collectives] = cr;
    expected(ctx, cr);

    size_t n = 0;
    rec *v = gather(ctx, lr, &n, &cr->n_kernels, &cr->n_without_args);
    bool sharded = ctx->opts && ctx->opts->job_gather;
    if (sharded) {
        int64_t cnt[2] = { cr->n_kernels, cr->n_without_args };
        int rc = an_job_sum(ctx, cnt, 2);
        if (rc == 0)
            rc = exchange(ctx, &v, &n);
        if (rc < 0) {
            free(v);
            return rc;
        }
        cr->n_kernels = cnt[0], cr->n_without_args = cnt[1];
    }
    match(v, n, &cr->n_matched, &cr->n_p2p_matched);
    if (!sharded)
        keep_members(cr, v, n);
    for (size_t i = 0; i < n; i++) {
        rec *r = &v[i];
        r->busbw = r->transfer_ns > 0 ? (double)r->bytes / (double)r->transfer_ns * an_busbw_factor(r->op, r->n)
                                      : NAN;
        if (r->local != UINT32_MAX)
            add_wait_to_steps(lr, r);
    }

    keep_kernels(cr, v, n);
    scope_summaries(v, n, cr);
    for (size_t i = 0; i < n; i++)
        if (v[i].inter)
            cr->inter_bytes_total += v[i].bytes;

    const an_job_result *job = ctx->results[AN_job];
    const hw_gpu *gpu = job ? job->gpu : NULL; /* only a row of the trace's own vendor */

    /* the op x bucket x scope table */
    sort_recs(v, n, BY_GROUP);
    static const rep_col cols[] = {
        { "op", "op", NULL, -1 },
        { "scope", "scope", NULL, -1 },
        { "bytes", "size (median)", "bytes", -1 },
        { "bucket_min_bytes", "bucket from", "bytes", -1 },
        { "count", "kernels", NULL, -1 },
        { "total_ns", "time", "ns", -1 },
        { "wait_ns", "wait", "ns", -1 },
        { "p50_algbw_gbps", "algbw p50", "GB/s", 1 },
        { "p50_busbw_gbps", "busbw p50", "GB/s", 1 },
        { "p95_busbw_gbps", "busbw p95", "GB/s", 1 },
        { "expected_busbw_gbps", "expected", "GB/s", 1 },
        { "efficiency_pct", "of expected", "%", 0 },
    };
    rep_node *tab = rep_table(rp, rp->root, "collectives", "collectives (op x size x scope)", cols,
                              CP_ARRAY_LEN(cols));
    double *bw = cp_xcalloc(n ? n : 1, sizeof *bw), *alg = cp_xcalloc(n ? n : 1, sizeof *alg);
    size_t capg = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].op == v[i].op && v[j].inter == v[i].inter && bucket_of(v[j].bytes) == bucket_of(v[i].bytes))
            j++;
        an_coll_group g = { .op = v[i].op, .inter = v[i].inter, .bucket_log2 = bucket_of(v[i].bytes),
                            .count = (int64_t)(j - i), .median_bytes = v[i + (j - i) / 2].bytes };
        size_t m = 0;
        for (size_t k = i; k < j; k++) {
            g.total_ns += v[k].end - v[k].start;
            g.wait_ns += v[k].wait_ns;
            if (isfinite(v[k].busbw)) {
                bw[m] = v[k].busbw;
                alg[m++] = v[k].busbw / an_busbw_factor(v[k].op, v[k].n);
            }
        }
        g.p50_busbw_gbps = quantile(bw, m, 0.5);
        g.p95_busbw_gbps = quantile(bw, m, 0.95);
        g.p50_algbw_gbps = quantile(alg, m, 0.5);
        /* what the collective cost model expects for this size and scope,
         * else the scope's link rate */
        g.expected_busbw_gbps = model_expected_gbps(ctx, gpu, g.op, g.median_bytes, v[i].n, g.inter);
        if (!isfinite(g.expected_busbw_gbps))
            g.expected_busbw_gbps = g.inter ? cr->expected_inter_gbps : cr->expected_intra_gbps;
        cp_xgrow((void **)&cr->groups, &capg, cr->n_groups + 1, sizeof *cr->groups);
        cr->groups[cr->n_groups++] = g;

        rep_node *row = rep_row(rp, tab);
        rep_cell_str(rp, row, coll_op_name(g.op));
        rep_cell_str(rp, row, g.inter ? "inter" : "intra");
        rep_cell_int(rp, row, g.median_bytes);
        rep_cell_int(rp, row, INT64_C(1) << g.bucket_log2);
        rep_cell_int(rp, row, g.count);
        rep_cell_int(rp, row, g.total_ns);
        rep_cell_int(rp, row, g.wait_ns);
        rep_cell_num(rp, row, g.p50_algbw_gbps);
        rep_cell_num(rp, row, g.p50_busbw_gbps);
        rep_cell_num(rp, row, g.p95_busbw_gbps);
        rep_cell_num(rp, row, g.expected_busbw_gbps);
        rep_cell_num(rp, row, 100.0 * g.p50_busbw_gbps / g.expected_busbw_gbps);
        i = j;
    }
    free(bw);
    free(alg);

    rep_node *s = rep_obj(rp, rp->root, "collectives_summary", "collectives summary");
    rep_int(rp, s, "kernels", "communication kernels", cr->n_kernels, NULL);
    rep_int(rp, s, "with_args", "with collective args", cr->n_kernels - cr->n_without_args, NULL);
    rep_int(rp, s, "matched", "matched across ranks", cr->n_matched, NULL);
    rep_int(rp, s, "p2p_matched", "send/recv paired with their peer's (in matched)", cr->n_p2p_matched, NULL);
    rep_num(rp, s, "inter_busbw_gbps", "inter-node busbw (time-weighted median)", cr->inter_busbw_gbps, "GB/s");
    rep_num(rp, s, "expected_inter_busbw_gbps", "expected inter-node busbw", cr->expected_inter_gbps, "GB/s");
    rep_str(rp, s, "expected_inter_source", "expected inter from", cr->expected_inter_source);
    rep_bool(rp, s, "inter_busbw_lower_bound", "inter busbw is a lower bound (ranks missing)", cr->inter_busbw_lower_bound);
    rep_num(rp, s, "intra_busbw_gbps", "intra-node busbw (time-weighted median)", cr->intra_busbw_gbps, "GB/s");
    rep_num(rp, s, "expected_intra_busbw_gbps", "expected intra-node busbw", cr->expected_intra_gbps, "GB/s");
    rep_str(rp, s, "expected_intra_source", "expected intra from", cr->expected_intra_source);
    rep_bool(rp, s, "intra_busbw_lower_bound", "intra busbw is a lower bound (ranks missing)", cr->intra_busbw_lower_bound);
    rep_int(rp, s, "unsplit_ns", "collective time not split into wait and transfer (ranks missing)",
            cr->inter_unsplit_ns + cr->intra_unsplit_ns, "ns");
    rep_str(rp, s, "expected_per_group", "each group's expected busbw",
            gpu ? "collective cost model (NCCL's choice for its op, size, ranks and scope)" : "the scope's line rate");
    for (size_t i = 0; i < tl->n_ranks; i++)
        rep_int(rp, ctx->rank_nodes[i], "collective_wait_ns", "wait in collectives", lr->ranks[i].total.comm_wait_ns,
                "ns");
    free(v);
    return 0;
}
