/* an_rules_fr.c - rule family "fr": PyTorch Flight Recorder dumps of every
 * rank, matched across ranks to name the rank and the collective that
 * stopped the job (facts in ev_frdump.h).
 *
 * Matching follows fr_trace (torch/distributed/flight_recorder/components):
 * per process group (name + member ranks from pg_config: split groups may
 * share a name), collectives by collective_seq_id and point-to-point ops by
 * their peers in order; ring buffers that dropped old entries are aligned by
 * starting at the highest first sequence number any member still holds.
 * Where fr_trace prints every mismatch, this family walks each group from
 * that start and stops at the first sequence number where its members part
 * ways ("a point"):
 *   - their entries differ in op, shapes or dtypes (fr_trace's MatchState
 *     checks, with its exceptions for all_to_all, scatter, gather and
 *     broadcast): a desynchronised program, an application bug;
 *   - a member never entered it (its last entry in the group is earlier)
 *     while others wait in it (not completed);
 *   - a member has no readable dump while others wait;
 *   - every member entered and it did not complete (stuck inside NCCL);
 * and, for send/recv, a pending send without the peer's pending recv (or the
 * reverse). Then it follows the chain: a rank missing from a point that is
 * itself blocked in another group's op is a victim of that op's point, so
 * the verdict names the rank at the end of the chain (dead, on the host, or
 * waiting on a peer that never posted). A rank that never entered and sits in
 * no NCCL call is lagging when the others are two or more collectives ahead
 * (asynchronous enqueueing), else missing. When every entry completed, the
 * hang is not in NCCL.
 *
 * The first rule computes all of this once (rb_set_state); the others raise
 * their verdicts from it. Each verdict names ranks[] (rb_rank), pg, seq and
 * op (rb_field), cites the dumps, and takes in the watchdog / NCCL / kernel
 * lines of the same run: the timeout findings it explains are absorbed
 * (their lines cited here, their codes dropped), and error events of the
 * culprit ranks are cited. The report hook adds the per-rank table at the
 * failing collective.
 */
#include "rulebook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"
#include "../model/report.h"

#define FR_MAX_POINTS 256
#define FR_TABLE_ROWS 64
#define FR_MAX_RANK (1 << 22)
#define FR_MAX_PENDING_P2P 4096
#define FR_LAG_SEVERAL 2

typedef enum fr_kind {
    PT_OP = 0, PT_SIZE, PT_DTYPE, /* desync */
    PT_MISSING, PT_NODUMP, PT_P2P, PT_STUCK,
} fr_kind;

typedef enum fr_root { ROOT_NONE = 0, ROOT_DEAD, ROOT_HOST, ROOT_BLOCKED } fr_root;

typedef struct fr_group {
    const char *name, *desc;
    uint64_t ranks_hash;
    const int32_t *members;
    uint32_t n_members;
} fr_group;

typedef struct fr_span { uint32_t g, start, n; } fr_span;

typedef struct fr_rank {
    const ev_file *f;
    const ev_frdump *d;
    int rank;
    uint32_t *order;      /* entry indices grouped by group, record order inside */
    fr_span *spans;
    uint32_t n_spans;
    int32_t first_open;   /* first entry not completed; -1 none */
} fr_rank;

typedef struct fr_point {
    int kind;             /* fr_kind */
    uint32_t g;
    int64_t seq;
    int ref;              /* index into ranks of the entry shown as the group's op */
    uint32_t ref_entry;
    int n_culprits;
    int culprits[RB_MAX_RANKS]; /* global ranks */
    long culprits_more;
    int64_t t_ns;         /* earliest time_created_ns of its waiting entries; INT64_MAX */
    long lag;             /* PT_MISSING: collectives the others are ahead */
    long waiting;         /* members inside it, not completed */
    bool victim;          /* reached from another point's chain */
} fr_point;

typedef struct fr_rootv {
    int rank;
    int code;             /* 0 dead, 1 p2p peer never posted, 2 host, 3 blocked elsewhere */
    int point;            /* the point whose culprit it is */
} fr_rootv;

typedef struct fr_state {
    fr_rank *ranks;
    size_t n_ranks;
    int32_t *by_rank;     /* global rank -> index into ranks; -1 */
    size_t n_by_rank;
    fr_group *groups;
    size_t n_groups;
    fr_point pts[FR_MAX_POINTS];
    int n_pts;
    long points_dropped, duplicate_ranks, no_rank;
    fr_rootv roots[RB_MAX_RANKS]; /* culprits at the ends of the chains */
    int n_roots;
    int shown;            /* the point of the top verdict (report table); -1 */
    int n_done;           /* verdict points raised (for the ALL_COMPLETED rule) */
} fr_state;

/* ---- building the cross-rank view ---------------------------------------- */

static const ev_fr_entry *ent(const fr_rank *r, uint32_t i) { return &r->d->entries[i]; }
static const char *estr(const fr_rank *r, uint32_t id) { return ev_fr_str(r->d, id); }
static const char *op_of(const fr_rank *r, const ev_fr_entry *e) { return estr(r, e->op); }

static uint32_t group_of(fr_state *st, const ev_frdump *d, const ev_fr_pg *pg)
{
    const char *name = ev_fr_str(d, pg->name);
    uint32_t n;
    const int32_t *m = ev_fr_pg_ranks(d, pg, &n);
    for (size_t i = 0; i < st->n_groups; i++) {
        fr_group *g = &st->groups[i];
        if (strcmp(g->name, name)) continue;
        if (!n) return (uint32_t)i;
        if (!g->n_members) { g->members = m, g->n_members = n, g->ranks_hash = pg->ranks_hash; return (uint32_t)i; }
        if (g->ranks_hash == pg->ranks_hash) return (uint32_t)i;
    }
    size_t cap = st->n_groups;
    cp_xgrow((void **)&st->groups, &cap, st->n_groups + 1, sizeof(*st->groups));
    st->groups[st->n_groups] = (fr_group){name, ev_fr_str(d, pg->desc), pg->ranks_hash, m, n};
    return (uint32_t)st->n_groups++;
}

static void index_rank(fr_state *st, fr_rank *r)
{
    const ev_frdump *d = r->d;
    uint32_t *start = cp_xcalloc(d->n_pgs + 1, sizeof *start), *cnt = cp_xcalloc(d->n_pgs + 1, sizeof *cnt);
    for (size_t i = 0; i < d->n_entries; i++) cnt[d->entries[i].pg]++;
    r->spans = cp_xcalloc(d->n_pgs + 1, sizeof *r->spans);
    uint32_t at = 0;
    for (size_t p = 0; p < d->n_pgs; p++) {
        start[p] = at;
        if (cnt[p]) r->spans[r->n_spans++] = (fr_span){group_of(st, d, &d->pgs[p]), at, cnt[p]};
        at += cnt[p];
        cnt[p] = 0;
    }
    r->order = cp_xmalloc((d->n_entries + 1) * sizeof *r->order);
    r->first_open = -1;
    for (size_t i = 0; i < d->n_entries; i++) {
        const ev_fr_entry *e = &d->entries[i];
        r->order[start[e->pg] + cnt[e->pg]++] = (uint32_t)i;
        if (r->first_open < 0 && e->state != EV_FR_COMPLETED) r->first_open = (int32_t)i;
    }
    free(start);
    free(cnt);
}

static const fr_span *span_of(const fr_rank *r, uint32_t g)
{
    for (uint32_t s = 0; s < r->n_spans; s++)
        if (r->spans[s].g == g) return &r->spans[s];
    return NULL;
}

/* The group (global index) of a rank's entry. */
static uint32_t group_of_entry(const fr_rank *r, uint32_t i)
{
    for (uint32_t s = 0; s < r->n_spans; s++)
        for (uint32_t k = 0; k < r->spans[s].n; k++)
            if (r->order[r->spans[s].start + k] == i) return r->spans[s].g;
    return UINT32_MAX;
}

static int rank_idx(const fr_state *st, int rank)
{
    return rank >= 0 && (size_t)rank < st->n_by_rank ? st->by_rank[rank] : -1;
}

/* A member whose dump can say where it was: present and not damaged empty. */
static bool readable(const fr_state *st, int rank)
{
    int i = rank_idx(st, rank);
    return i >= 0 && !(st->ranks[i].d->damaged && st->ranks[i].d->n_entries == 0);
}

static fr_point *add_point(fr_state *st, int kind, uint32_t g, int64_t seq, int ref, uint32_t ref_entry)
{
    if (st->n_pts == FR_MAX_POINTS) { st->points_dropped++; return NULL; }
    fr_point *p = &st->pts[st->n_pts++];
    memset(p, 0, sizeof *p);
    *p = (fr_point){.kind = kind, .g = g, .seq = seq, .ref = ref, .ref_entry = ref_entry, .t_ns = INT64_MAX};
    return p;
}

static void add_culprit(fr_point *p, int rank)
{
    for (int i = 0; i < p->n_culprits; i++)
        if (p->culprits[i] == rank) return;
    if (p->n_culprits < RB_MAX_RANKS) p->culprits[p->n_culprits++] = rank;
    else p->culprits_more++;
}

/* ---- comparing two entries of one collective (fr_trace's Op.match) ------- */

static bool starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static int entry_cmp(const fr_rank *ra, const ev_fr_entry *a, const fr_rank *rb, const ev_fr_entry *b)
{
    const char *op = op_of(ra, a);
    if (strcmp(op, op_of(rb, b))) return PT_OP;
    bool a2a = starts(op, "all_to_all");
    if (!a2a && strcmp(op, "scatter") && a->in_sig != b->in_sig) return PT_SIZE;
    if (!a2a && strcmp(op, "gather") && a->out_sig != b->out_sig) return PT_SIZE;
    if (strcmp(op, "scatter") && strcmp(op, "broadcast") && a->has_in && b->has_in &&
        strcmp(estr(ra, a->in_dtypes), estr(rb, b->in_dtypes)))
        return PT_DTYPE;
    if (strcmp(op, "gather") && a->has_out && b->has_out && strcmp(estr(ra, a->out_dtypes), estr(rb, b->out_dtypes)))
        return PT_DTYPE;
    return -1;
}

/* ---- one group's collectives --------------------------------------------- */

typedef struct fr_cur {
    int idx;              /* into st->ranks; -1 no readable dump */
    const fr_span *sp;
    uint32_t at;          /* cursor in the span */
    int64_t first, last;  /* collective seq range held; -1 none */
} fr_cur;

static void scan_group(fr_state *st, uint32_t g)
{
    const fr_group *gr = &st->groups[g];
    uint32_t n = gr->n_members;
    if (!n) return;
    fr_cur *cur = cp_xcalloc(n, sizeof *cur);
    int *pres = cp_xmalloc(n * sizeof *pres);
    uint32_t *pres_e = cp_xmalloc(n * sizeof *pres_e);
    int64_t s0 = -1, s1 = -1;
    for (uint32_t m = 0; m < n; m++) {
        fr_cur *c = &cur[m];
        c->idx = readable(st, gr->members[m]) ? rank_idx(st, gr->members[m]) : -1;
        c->first = c->last = -1;
        if (c->idx < 0 || !(c->sp = span_of(&st->ranks[c->idx], g))) continue;
        const fr_rank *r = &st->ranks[c->idx];
        for (uint32_t k = 0; k < c->sp->n; k++) {
            const ev_fr_entry *e = ent(r, r->order[c->sp->start + k]);
            if (e->is_p2p || e->coll_seq < 0) continue;
            if (c->first < 0) c->first = e->coll_seq;
            if (e->coll_seq > c->last) c->last = e->coll_seq;
        }
        if (c->first >= 0 && c->first > s0) s0 = c->first;
        if (c->last > s1) s1 = c->last;
    }
    int64_t next = s0;
    for (int64_t s = s0; s0 >= 0 && s <= s1 && next != INT64_MAX; s = next) {
        int np = 0;
        next = INT64_MAX; /* the next sequence number any member holds: gaps are skipped */
        bool open = false;
        int64_t t = INT64_MAX;
        for (uint32_t m = 0; m < n; m++) {
            fr_cur *c = &cur[m];
            if (!c->sp) continue;
            const fr_rank *r = &st->ranks[c->idx];
            while (c->at < c->sp->n) {
                const ev_fr_entry *e = ent(r, r->order[c->sp->start + c->at]);
                if (!e->is_p2p && e->coll_seq >= s) break;
                c->at++;
            }
            if (c->at >= c->sp->n) continue;
            uint32_t ei = r->order[c->sp->start + c->at];
            const ev_fr_entry *e = ent(r, ei);
            for (uint32_t k = c->at; k < c->sp->n; k++) {
                const ev_fr_entry *q = ent(r, r->order[c->sp->start + k]);
                if (!q->is_p2p && q->coll_seq > s) { if (q->coll_seq < next) next = q->coll_seq; break; }
            }
            if (e->coll_seq != s) continue;
            pres[np] = (int)m, pres_e[np++] = ei;
            if (e->state != EV_FR_COMPLETED) {
                open = true;
                if (e->created_ns && e->created_ns < t) t = e->created_ns;
            }
        }
        if (!np) continue;
        /* the majority entry (Boyer-Moore vote on equality) is the reference */
        int ref = 0, votes = 0;
        for (int i = 0; i < np; i++) {
            const fr_rank *ri = &st->ranks[cur[pres[i]].idx], *rr = &st->ranks[cur[pres[ref]].idx];
            if (!votes) ref = i, votes = 1;
            else votes += entry_cmp(rr, ent(rr, pres_e[ref]), ri, ent(ri, pres_e[i])) < 0 ? 1 : -1;
        }
        const fr_rank *rr = &st->ranks[cur[pres[ref]].idx];
        const ev_fr_entry *re = ent(rr, pres_e[ref]);
        int kind = -1, ndiff = 0;
        for (int i = 0; i < np; i++) {
            const fr_rank *ri = &st->ranks[cur[pres[i]].idx];
            int k = entry_cmp(rr, re, ri, ent(ri, pres_e[i]));
            if (k >= 0) ndiff++, kind = kind < 0 || k < kind ? k : kind;
        }
        fr_point *p = NULL;
        if (kind >= 0 && (p = add_point(st, kind, g, s, cur[pres[ref]].idx, pres_e[ref]))) {
            for (int i = 0; i < np; i++) {
                const fr_rank *ri = &st->ranks[cur[pres[i]].idx];
                if (entry_cmp(rr, re, ri, ent(ri, pres_e[i])) >= 0) add_culprit(p, gr->members[pres[i]]);
            }
        }
        if (!p && open) {
            /* who is not in it: never arrived (last seq earlier), no readable dump */
            int nodump = 0, missing = 0;
            long lag = 0;
            for (uint32_t m = 0; m < n; m++) {
                bool here = false;
                for (int i = 0; i < np && !here; i++) here = pres[i] == (int)m;
                if (here) continue;
                if (cur[m].idx < 0 || (cur[m].last < s && st->ranks[cur[m].idx].d->damaged)) nodump++;
                else if (cur[m].last < s) missing++;
            }
            int kind2 = missing ? PT_MISSING : nodump ? PT_NODUMP : (np == (int)n ? PT_STUCK : -1);
            if (kind2 >= 0 && (p = add_point(st, kind2, g, s, cur[pres[ref]].idx, pres_e[ref]))) {
                for (uint32_t m = 0; m < n && kind2 != PT_STUCK; m++) {
                    bool here = false;
                    for (int i = 0; i < np && !here; i++) here = pres[i] == (int)m;
                    if (here) continue;
                    bool cut = cur[m].idx >= 0 && st->ranks[cur[m].idx].d->damaged; /* a dump cut short says nothing past its end */
                    if (kind2 == PT_MISSING && cur[m].idx >= 0 && !cut && cur[m].last < s) {
                        add_culprit(p, gr->members[m]);
                        if (s1 - cur[m].last > lag) lag = (long)(s1 - cur[m].last);
                    } else if (kind2 == PT_NODUMP && (cur[m].idx < 0 || (cut && cur[m].last < s))) {
                        add_culprit(p, gr->members[m]);
                    }
                }
                p->lag = lag;
            }
        }
        if (p) {
            p->t_ns = t;
            for (int i = 0; i < np; i++) {
                const fr_rank *ri = &st->ranks[cur[pres[i]].idx];
                p->waiting += ent(ri, pres_e[i])->state != EV_FR_COMPLETED;
            }
            break;
        }
    }
    free(cur);
    free(pres);
    free(pres_e);
}

/* ---- one group's send/recv ------------------------------------------------ */

typedef struct fr_pend { int idx; uint32_t e; int rank, peer; bool send, used; } fr_pend;

static void scan_p2p(fr_state *st, uint32_t g)
{
    const fr_group *gr = &st->groups[g];
    fr_pend *pd = NULL;
    size_t np = 0, cap = 0;
    for (uint32_t m = 0; m < gr->n_members; m++) {
        int idx = readable(st, gr->members[m]) ? rank_idx(st, gr->members[m]) : -1;
        const fr_span *sp = idx >= 0 ? span_of(&st->ranks[idx], g) : NULL;
        for (uint32_t k = 0; sp && k < sp->n && np < FR_MAX_PENDING_P2P; k++) {
            const fr_rank *r = &st->ranks[idx];
            uint32_t ei = r->order[sp->start + k];
            const ev_fr_entry *e = ent(r, ei);
            if (!e->is_p2p || e->state == EV_FR_COMPLETED || e->src < 0 || e->dst < 0) continue;
            bool send = !strcmp(op_of(r, e), "send");
            int peer = send ? e->dst : e->src;
            if ((uint32_t)peer >= gr->n_members) continue;
            cp_xgrow((void **)&pd, &cap, np + 1, sizeof *pd);
            pd[np++] = (fr_pend){idx, ei, gr->members[m], gr->members[peer], send, false};
        }
    }
    for (size_t i = 0; i < np; i++) {
        if (pd[i].used) continue;
        const fr_rank *ri = &st->ranks[pd[i].idx];
        const ev_fr_entry *a = ent(ri, pd[i].e);
        bool found = false;
        for (size_t j = 0; j < np && !found; j++) {
            if (j == i || pd[j].used || pd[j].rank != pd[i].peer || pd[j].peer != pd[i].rank || pd[j].send == pd[i].send) continue;
            found = true;
            pd[i].used = pd[j].used = true;
            const fr_rank *rj = &st->ranks[pd[j].idx];
            const ev_fr_entry *b = ent(rj, pd[j].e);
            uint64_t sa = pd[i].send ? a->in_sig : a->out_sig, sb = pd[j].send ? b->in_sig : b->out_sig;
            fr_point *p;
            if (sa != sb && (p = add_point(st, PT_SIZE, g, a->p2p_seq, pd[i].idx, pd[i].e))) {
                add_culprit(p, pd[i].rank), add_culprit(p, pd[j].rank);
                p->t_ns = a->created_ns ? a->created_ns : INT64_MAX;
                p->waiting = 2;
            }
        }
        if (found) continue;
        pd[i].used = true;
        fr_point *p = add_point(st, readable(st, pd[i].peer) ? PT_P2P : PT_NODUMP, g, a->p2p_seq, pd[i].idx, pd[i].e);
        if (!p) break;
        add_culprit(p, pd[i].peer);
        p->t_ns = a->created_ns ? a->created_ns : INT64_MAX;
        p->waiting = 1;
    }
    free(pd);
}

/* ---- following the chain to the root ------------------------------------- */

/* The failing point in group g (missing, no dump, p2p), or -1. */
static int point_in(const fr_state *st, uint32_t g)
{
    for (int i = 0; i < st->n_pts; i++)
        if (st->pts[i].g == g && st->pts[i].kind >= PT_MISSING && st->pts[i].kind != PT_STUCK) return i;
    return -1;
}

static bool chain_kind(int kind) { return kind == PT_MISSING || kind == PT_NODUMP || kind == PT_P2P; }

/* The point a culprit is blocked in (its first open entry's group), or -1. */
static int blocked_in(const fr_state *st, int rank)
{
    if (!readable(st, rank)) return -1;
    const fr_rank *r = &st->ranks[rank_idx(st, rank)];
    return r->first_open < 0 ? -1 : point_in(st, group_of_entry(r, (uint32_t)r->first_open));
}

/* Where culprit `rank` of point `from` really is: dead (no readable dump),
 * on the host (no open NCCL call), or blocked in another group's op whose
 * point names the next rank. *at gets the point whose culprit the root is. */
static int resolve(const fr_state *st, int rank, int from, bool *seen, int *at, int *root_rank)
{
    *at = from;
    *root_rank = rank;
    if (!readable(st, rank)) return ROOT_DEAD;
    if (st->ranks[rank_idx(st, rank)].first_open < 0) return ROOT_HOST;
    int next = blocked_in(st, rank);
    if (next < 0 || seen[next]) return ROOT_BLOCKED;
    seen[next] = true;
    int k = ROOT_BLOCKED;
    for (int i = 0; i < st->pts[next].n_culprits && k == ROOT_BLOCKED; i++)
        k = resolve(st, st->pts[next].culprits[i], next, seen, at, root_rank);
    if (k == ROOT_BLOCKED) *at = from, *root_rank = rank;
    return k;
}

/* Every chain point a culprit of another point is blocked in is a victim;
 * the others are where chains start (when every point is a victim, ranks
 * wait on each other in a cycle: the earliest point starts). Then each
 * start's culprits are resolved to their roots, once. */
static void find_roots(fr_state *st)
{
    for (int i = 0; i < st->n_pts; i++)
        for (int j = 0; chain_kind(st->pts[i].kind) && j < st->pts[i].n_culprits; j++) {
            int next = blocked_in(st, st->pts[i].culprits[j]);
            if (next >= 0 && next != i) st->pts[next].victim = true;
        }
    int starts = 0, earliest = -1;
    for (int i = 0; i < st->n_pts; i++)
        if (chain_kind(st->pts[i].kind)) {
            starts += !st->pts[i].victim;
            if (earliest < 0 || st->pts[i].t_ns < st->pts[earliest].t_ns) earliest = i;
        }
    if (!starts && earliest >= 0) st->pts[earliest].victim = false;
    bool *seen = cp_xcalloc((size_t)st->n_pts + 1, sizeof *seen);
    for (int i = 0; i < st->n_pts; i++) {
        if (!chain_kind(st->pts[i].kind) || st->pts[i].victim) continue;
        for (int j = 0; j < st->pts[i].n_culprits && st->n_roots < RB_MAX_RANKS; j++) {
            memset(seen, 0, sizeof *seen * (size_t)st->n_pts);
            seen[i] = true;
            int at, rr, k = resolve(st, st->pts[i].culprits[j], i, seen, &at, &rr);
            bool dup = false;
            for (int q = 0; q < st->n_roots && !dup; q++) dup = st->roots[q].rank == rr;
            if (dup) continue;
            int code = k == ROOT_DEAD ? 0 : k == ROOT_BLOCKED ? 3 : st->pts[at].kind == PT_P2P ? 1 : 2;
            st->roots[st->n_roots++] = (fr_rootv){rr, code, at};
        }
    }
    free(seen);
}

static void fr_state_free(void *p)
{
    fr_state *st = p;
    for (size_t i = 0; i < st->n_ranks; i++) free(st->ranks[i].order), free(st->ranks[i].spans);
    free(st->ranks);
    free(st->by_rank);
    free(st->groups);
    free(st);
}

static fr_state *build(rb_ctx *c)
{
    fr_state *st = rb_state(c, "fr");
    if (st || !ev_count(c->set, EV_FRDUMP)) return st;
    st = cp_xcalloc(1, sizeof *st);
    st->shown = -1;
    int max_rank = -1;
    RB_EACH(c, EV_FRDUMP, f)
        if (f->as.frdump->rank > max_rank && f->as.frdump->rank < FR_MAX_RANK) max_rank = f->as.frdump->rank;
    st->n_by_rank = (size_t)(max_rank + 1);
    st->by_rank = cp_xmalloc((st->n_by_rank + 1) * sizeof *st->by_rank);
    for (size_t i = 0; i < st->n_by_rank; i++) st->by_rank[i] = -1;
    st->ranks = cp_xcalloc(ev_count(c->set, EV_FRDUMP), sizeof *st->ranks);
    RB_EACH(c, EV_FRDUMP, f) {
        const ev_frdump *d = f->as.frdump;
        if (d->rank < 0 || d->rank >= FR_MAX_RANK) { st->no_rank++; continue; }
        if (st->by_rank[d->rank] >= 0) { st->duplicate_ranks++; continue; }
        fr_rank *r = &st->ranks[st->n_ranks];
        r->f = f, r->d = d, r->rank = d->rank;
        index_rank(st, r);
        st->by_rank[d->rank] = (int32_t)st->n_ranks++;
    }
    for (uint32_t g = 0; g < st->n_groups; g++) {
        scan_group(st, g);
        scan_p2p(st, g);
    }
    find_roots(st);
    rb_set_state(c, "fr", st, fr_state_free);
    return st;
}

/* ---- verdicts ------------------------------------------------------------- */

static void pg_text(const fr_group *g, char *buf, size_t n)
{
    if (g->desc[0] && strcmp(g->desc, "undefined")) snprintf(buf, n, "%s (%s)", g->name, g->desc);
    else snprintf(buf, n, "%s", g->name);
}

static void ranks_text(const int *v, int n, long more, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o < cap; i++) o += (size_t)snprintf(buf + o, cap - o, "%s%d", i ? ", " : "", v[i]);
    if (more && o < cap) snprintf(buf + o, cap - o, " and %ld more", more);
}

/* The facts every FR verdict carries: ranks, pg, seq, op, and the dumps. */
static void identify(rb_ctx *c, fr_state *st, rb_finding *x, const fr_point *p, const int *culprits, int n)
{
    const fr_group *g = &st->groups[p->g];
    const fr_rank *r = &st->ranks[p->ref];
    const ev_fr_entry *e = ent(r, p->ref_entry);
    for (int i = 0; i < n; i++) rb_rank(x, culprits[i]);
    rb_field(x, "pg", "%s", g->name);
    rb_field(x, "pg_desc", "%s", g->desc);
    rb_field_num(x, "seq", (double)p->seq);
    rb_field(x, "op", "%s", op_of(r, e));
    rb_cite_line(x, r->f, 0, "rank %d: %s #%lld of group %s: %s, %s, %s", r->rank, op_of(r, e), (long long)p->seq, g->name,
                 ev_fr_state_name(e->state), estr(r, e->sizes), estr(r, e->in_dtypes));
    for (int i = 0; i < n && i < 3; i++) {
        int ci = rank_idx(st, culprits[i]);
        if (ci < 0 || ci == p->ref) continue;
        const fr_rank *cr = &st->ranks[ci];
        const fr_span *sp = span_of(cr, p->g);
        if (!cr->d->n_entries) {
            rb_cite_line(x, cr->f, 0, "rank %d: dump unreadable (%s)", cr->rank, cr->d->error);
            continue;
        }
        uint32_t last = sp && sp->n ? cr->order[sp->start + sp->n - 1] : (uint32_t)cr->d->n_entries - 1;
        const ev_fr_entry *le = ent(cr, last);
        rb_cite_line(x, cr->f, 0, "rank %d: last entry %s #%lld (%s)%s%s", cr->rank, op_of(cr, le),
                     (long long)(le->is_p2p ? le->p2p_seq : le->coll_seq), ev_fr_state_name(le->state),
                     estr(cr, le->frames)[0] ? " at " : "", estr(cr, le->frames));
    }
    /* the same run's error lines of the culprit ranks (NCCL WARN, Xid, a signal) */
    int cited = 0;
    for (size_t k = 0; k < c->n_events && cited < 3; k++) {
        const rb_event *ev = &c->events[k];
        bool mine = false;
        for (int i = 0; i < n && !mine; i++) mine = ev->rank == culprits[i];
        if (!mine || ev->severity != RB_EV_ERROR || ev->symptom) continue;
        for (size_t fi = 0; fi < c->set->n_files; fi++)
            if (c->set->files[fi].input == ev->input) {
                rb_cite_line(x, &c->set->files[fi], ev->line, "%s", ev->text);
                cited++;
                break;
            }
    }
}

/* Watchdog timeouts and generic stall verdicts are what an FR verdict
 * explains: their lines join it, their codes go. */
static void absorb(rb_ctx *c, rb_finding *x)
{
    static const char *const codes[] = {"NCCL_TIMEOUT_STALL", "TORCH_TIMEOUT_LATE_RANK", "TORCH_PROCESS_STALLED", "TORCH_COLLECTIVE_DESYNC"};
    for (size_t k = 0; k < CP_ARRAY_LEN(codes); k++) {
        rb_finding *o = rb_find(c, codes[k]);
        if (!o || o == x) continue;
        for (int i = 0; i < o->n_cite && x->n_cite < RB_MAX_EVIDENCE; i++) x->cite[x->n_cite++] = o->cite[i];
        rb_drop(c, codes[k]);
    }
}

/* A finding of another family about a culprit rank (an IB error, a CUDA
 * error, a signal on that rank) is the cause the dumps point at: it takes
 * the FR identity (ranks, pg, seq, op) and the dumps' lines, and the FR
 * finding goes, so the run gives one verdict with the evidence of both. */
static void merge_into_cause(rb_ctx *c, rb_finding *x)
{
    rb_finding *o = NULL;
    for (size_t i = 0; i < c->n && !o; i++) {
        rb_finding *y = &c->v[i];
        if (y == x || !strncmp(y->code, "FR_", 3) || y->severity < AN_SEV_HIGH || y->rank < 0) continue;
        for (int k = 0; k < x->n_ranks && !o; k++)
            if (x->ranks[k] == y->rank) o = y;
    }
    if (!o) return;
    for (int k = 0; k < x->n_ranks; k++) rb_rank(o, x->ranks[k]);
    for (int k = 0; k < x->n_fields; k++) {
        if (x->fields[k].is_num) rb_field_num(o, x->fields[k].key, x->fields[k].num);
        else rb_field(o, x->fields[k].key, "%s", x->fields[k].text);
    }
    rb_cited fr = x->n_cite ? x->cite[0] : (rb_cited){0};
    if (x->n_cite) snprintf(fr.text, sizeof fr.text, "Flight Recorder: %.170s", x->title);
    for (int k = -1; k < x->n_cite && o->n_cite < RB_MAX_EVIDENCE; k++) {
        const rb_cited *w = k < 0 ? &fr : &x->cite[k];
        if (k < 0 && !x->n_cite) continue;
        bool dup = false;
        for (int q = 0; q < o->n_cite && !dup; q++) dup = o->cite[q].input == w->input && o->cite[q].line == w->line && w->line > 0;
        if (!dup) o->cite[o->n_cite++] = *w;
    }
    rb_confidence(o, x->confidence);
    rb_drop(c, x->code);
}

static const char *frames_of(const fr_state *st, int rank)
{
    int i = rank_idx(st, rank);
    if (i < 0 || !st->ranks[i].d->n_entries) return "";
    const fr_rank *r = &st->ranks[i];
    return estr(r, ent(r, (uint32_t)(r->first_open >= 0 ? (size_t)r->first_open : r->d->n_entries - 1))->frames);
}

static void mark_shown(fr_state *st, int pt)
{
    if (st->shown < 0) st->shown = pt;
    st->n_done++;
}

static void r_desync(rb_ctx *c, const rb_rule *self)
{
    fr_state *st = build(c);
    int want = !strcmp(self->code, "FR_OP_MISMATCH") ? PT_OP : !strcmp(self->code, "FR_SIZE_MISMATCH") ? PT_SIZE : PT_DTYPE;
    int best = -1;
    for (int i = 0; st && i < st->n_pts; i++)
        if (st->pts[i].kind == want && (best < 0 || st->pts[i].t_ns < st->pts[best].t_ns)) best = i;
    if (best < 0) return;
    const fr_point *p = &st->pts[best];
    const fr_group *g = &st->groups[p->g];
    const fr_rank *r = &st->ranks[p->ref];
    const ev_fr_entry *e = ent(r, p->ref_entry);
    const fr_rank *cr = rank_idx(st, p->culprits[0]) >= 0 ? &st->ranks[rank_idx(st, p->culprits[0])] : r;
    const ev_fr_entry *ce = NULL;
    const fr_span *sp = span_of(cr, p->g);
    for (uint32_t k = 0; sp && k < sp->n && !ce; k++) {
        const ev_fr_entry *q = ent(cr, cr->order[sp->start + k]);
        if (q->is_p2p == e->is_p2p && (e->is_p2p ? q->p2p_seq : q->coll_seq) == p->seq) ce = q;
    }
    if (!ce) ce = e;
    rb_finding *x = rb_raise(c, self);
    char pg[160], who[200];
    pg_text(g, pg, sizeof pg);
    ranks_text(p->culprits, p->n_culprits, p->culprits_more, who, sizeof who);
    const char *what = want == PT_OP ? "runs" : want == PT_SIZE ? "passes" : "uses";
    const char *mine = want == PT_OP ? op_of(cr, ce) : want == PT_SIZE ? estr(cr, ce->sizes) : estr(cr, ce->in_dtypes);
    const char *theirs = want == PT_OP ? op_of(r, e) : want == PT_SIZE ? estr(r, e->sizes) : estr(r, e->in_dtypes);
    rb_title(x, "ranks part ways at %s #%lld of process group %s: rank%s %s %s %s, the others %s (desynchronised program: an application bug)",
             op_of(r, e), (long long)p->seq, pg, p->n_culprits > 1 ? "s" : "", who, what, mine, theirs);
    identify(c, st, x, p, p->culprits, p->n_culprits);
    absorb(c, x);
    rb_step(x, "the frames of rank %d's entry show the call that differs: %s", p->culprits[0], estr(cr, ce->frames)[0] ? estr(cr, ce->frames) : "(no frames in a JSON dump)");
    rb_step(x, "rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL: c10d checks every collective's op, shapes and dtypes across ranks and fails at the first mismatch");
    mark_shown(st, best);
}

static int root_points(const fr_state *st, int want, int *pts, int *roots, int n)
{
    int k = 0;
    for (int i = 0; i < st->n_roots && k < n; i++)
        if (st->roots[i].code == want) pts[k] = st->roots[i].point, roots[k++] = st->roots[i].rank;
    return k;
}

/* want: 0 dead (no readable dump), 1 p2p peer never posted, 2 on the host
 * (missing or lagging), 3 blocked elsewhere with no point of its own. */
static void raise_roots(rb_ctx *c, const rb_rule *self, int want)
{
    fr_state *st = build(c);
    if (!st) return;
    int pts[RB_MAX_RANKS], roots[RB_MAX_RANKS], n = root_points(st, want, pts, roots, RB_MAX_RANKS);
    bool lagging_rule = !strcmp(self->code, "FR_RANK_LAGGING");
    int keep = 0;
    for (int i = 0; i < n; i++) {
        if (want == 2) {
            bool lag = st->pts[pts[i]].lag >= FR_LAG_SEVERAL;
            if (lag != lagging_rule) continue;
        }
        pts[keep] = pts[i], roots[keep++] = roots[i];
    }
    if (!keep) return;
    const fr_point *p = &st->pts[pts[0]];
    const fr_group *g = &st->groups[p->g];
    const fr_rank *r = &st->ranks[p->ref];
    const ev_fr_entry *e = ent(r, p->ref_entry);
    char pg[160], who[200];
    pg_text(g, pg, sizeof pg);
    ranks_text(roots, keep, 0, who, sizeof who);
    const char *pl = keep > 1 ? "s" : "";
    rb_finding *x = rb_raise(c, self);
    const char *fr = frames_of(st, roots[0]);
    if (want == 0) {
        bool any_file = rank_idx(st, roots[0]) >= 0;
        rb_title(x, "rank%s %s left %s Flight Recorder dump while %ld rank%s wait in %s #%lld of process group %s: a dead host or process (or a dump not collected)",
                 pl, who, any_file ? "no readable" : "no", p->waiting, p->waiting == 1 ? "" : "s", op_of(r, e), (long long)p->seq, pg);
        rb_step(x, "check the host of rank %d: dmesg / journalctl -k for Xid, fallen off the bus, the OOM killer; the job launcher's log for the process's exit", roots[0]);
    } else if (want == 1) {
        rb_title(x, "rank %d waits in %s #%lld of process group %s and rank%s %s never posted the matching %s (%s)",
                 r->rank, op_of(r, e), (long long)p->seq, pg, pl, who, strcmp(op_of(r, e), "send") ? "send" : "recv",
                 fr[0] ? fr : "in no NCCL call");
        rb_step(x, "check the send/recv order of the pipeline schedule on ranks %d and %d: every send needs the peer's recv in the same order", r->rank, roots[0]);
    } else if (want == 2 && lagging_rule) {
        rb_title(x, "rank%s %s never reached %s #%lld of process group %s: %ld collective%s behind the others and in no NCCL call%s%s",
                 pl, who, op_of(r, e), (long long)p->seq, pg, p->lag, p->lag == 1 ? "" : "s", fr[0] ? ": last frames " : "", fr);
    } else if (want == 2) {
        rb_title(x, "rank%s %s never entered %s #%lld of process group %s: its last entry there is earlier and it is in no NCCL call%s%s",
                 pl, who, op_of(r, e), (long long)p->seq, pg, fr[0] ? ": last frames " : "", fr);
    } else {
        rb_title(x, "rank%s %s never entered %s #%lld of process group %s: %s inside another group's collective (ranks waiting on each other across groups)",
                 pl, who, op_of(r, e), (long long)p->seq, pg, keep > 1 ? "they are" : "it is");
        rb_step(x, "compare the order in which ranks call collectives on different process groups: every member must issue them in the same order");
    }
    if (want == 2) {
        rb_step(x, "py-spy dump --pid <pid of rank %d> (or the stack the job printed on SIGUSR1): where it sits on the host (data loader, a CPU op, I/O, a Python-side barrier)", roots[0]);
        if (lagging_rule) rb_field_num(x, "lag", (double)p->lag);
    }
    identify(c, st, x, p, roots, keep);
    absorb(c, x);
    rb_step(x, "python -m torch.distributed.flight_recorder.fr_trace <dump dir> (fr_trace) for the full cross-rank match");
    mark_shown(st, pts[0]);
    merge_into_cause(c, x);
}

static void r_dead(rb_ctx *c, const rb_rule *self) { raise_roots(c, self, 0); }
static void r_p2p(rb_ctx *c, const rb_rule *self) { raise_roots(c, self, 1); }
static void r_host(rb_ctx *c, const rb_rule *self) { raise_roots(c, self, 2); }
static void r_blocked(rb_ctx *c, const rb_rule *self) { raise_roots(c, self, 3); }

static void r_stuck(rb_ctx *c, const rb_rule *self)
{
    fr_state *st = build(c);
    if (!st || st->n_done) return;
    int best = -1;
    for (int i = 0; i < st->n_pts; i++)
        if (st->pts[i].kind == PT_STUCK && (best < 0 || st->pts[i].t_ns < st->pts[best].t_ns)) best = i;
    if (best < 0) return;
    const fr_point *p = &st->pts[best];
    const fr_rank *r = &st->ranks[p->ref];
    char pg[160];
    pg_text(&st->groups[p->g], pg, sizeof pg);
    rb_finding *x = rb_raise(c, self);
    rb_title(x, "every rank of process group %s entered %s #%lld and it did not complete: the hang is inside the collective (network, GPU or NCCL), not a missing rank",
             pg, op_of(r, ent(r, p->ref_entry)), (long long)p->seq);
    identify(c, st, x, p, NULL, 0);
    absorb(c, x);
    rb_step(x, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and the kernel log of every host: IB/RoCE errors, Xid, link flaps");
    mark_shown(st, best);
}

static void r_all_completed(rb_ctx *c, const rb_rule *self)
{
    fr_state *st = build(c);
    if (!st || st->n_done || st->n_pts || !st->n_ranks) return;
    long entries = 0;
    for (size_t i = 0; i < st->n_ranks; i++) {
        if (st->ranks[i].first_open >= 0) return;
        entries += (long)st->ranks[i].d->n_entries;
    }
    if (!entries) return;
    rb_finding *x = rb_raise(c, self);
    rb_title(x, "every collective in the Flight Recorder dumps of %zu rank%s completed: the job is not stuck in NCCL; the hang is on the host side",
             st->n_ranks, st->n_ranks == 1 ? "" : "s");
    rb_cite_line(x, st->ranks[0].f, 0, "rank %d: %zu entries, all completed", st->ranks[0].rank, st->ranks[0].d->n_entries);
    absorb(c, x);
    rb_step(x, "py-spy dump --pid <pid> on every rank: the Python stack the ranks are in (data loader, checkpoint I/O, a host-side barrier)");
    rb_step(x, "TORCH_NCCL_TRACE_BUFFER_SIZE large enough to hold a whole step, so the dump reaches back to where the ranks diverged");
}

/* ---- the per-rank table at the failing collective ------------------------ */

static void row_of(const fr_state *st, rep_report *r, rep_node *t, const fr_point *p, int rank)
{
    rep_node *row = rep_row(r, t);
    rep_cell_int(r, row, rank);
    int i = rank_idx(st, rank);
    const fr_rank *fr = i >= 0 ? &st->ranks[i] : NULL;
    const ev_fr_entry *e = NULL, *last = NULL;
    const fr_span *sp = fr ? span_of(fr, p->g) : NULL;
    const ev_fr_entry *ref = ent(&st->ranks[p->ref], p->ref_entry);
    for (uint32_t k = 0; sp && k < sp->n; k++) {
        const ev_fr_entry *q = ent(fr, fr->order[sp->start + k]);
        if (q->is_p2p != ref->is_p2p) continue;
        if ((q->is_p2p ? q->p2p_seq : q->coll_seq) == p->seq && !e) e = q;
        last = q;
    }
    const ev_fr_entry *show = e ? e : last;
    rep_cell_str(r, row, !fr ? "no dump" : !fr->d->n_entries ? "unreadable" : e ? ev_fr_state_name(e->state) : "not entered");
    if (show) {
        rep_cell_int(r, row, show->is_p2p ? show->p2p_seq : show->coll_seq);
        rep_cell_str(r, row, op_of(fr, show));
        rep_cell_str(r, row, estr(fr, show->sizes));
        rep_cell_str(r, row, estr(fr, show->in_dtypes));
        rep_cell_str(r, row, estr(fr, show->frames)[0] ? estr(fr, show->frames) : NULL);
    } else {
        for (int k = 0; k < 5; k++) rep_cell_null(r, row);
    }
}

static void report(const rb_ctx *c, rep_report *r, rep_node *root)
{
    const fr_state *st = rb_state(c, "fr");
    if (!st) return;
    rep_node *o = rep_obj(r, root, "flight_recorder", "Flight Recorder: ranks at the failing collective");
    rep_int(r, o, "dumps", "rank dumps read", (int64_t)st->n_ranks, NULL);
    rep_int(r, o, "process_groups", "process groups", (int64_t)st->n_groups, NULL);
    rep_int(r, o, "points", "places where ranks part ways", st->n_pts, NULL);
    rep_int(r, o, "duplicate_ranks", "dumps of a rank already read (ignored)", st->duplicate_ranks, NULL);
    if (st->shown < 0) return;
    const fr_point *p = &st->pts[st->shown];
    const fr_group *g = &st->groups[p->g];
    rep_str(r, o, "pg", "process group", g->name);
    rep_str(r, o, "pg_desc", "group description", g->desc);
    rep_int(r, o, "seq", "sequence number", p->seq, NULL);
    static const rep_col cols[] = {{"rank", "rank", NULL, -1}, {"state", "state", NULL, -1}, {"seq", "seq (there, or its last)", NULL, -1},
                                   {"op", "op", NULL, -1}, {"sizes", "sizes", NULL, -1}, {"dtype", "dtype", NULL, -1},
                                   {"last_frame", "last frames", NULL, -1}};
    rep_node *t = rep_table(r, o, "ranks", "ranks at the failing collective (culprits first)", cols, CP_ARRAY_LEN(cols));
    int rows = 0;
    for (int i = 0; i < p->n_culprits && rows < FR_TABLE_ROWS; i++, rows++) row_of(st, r, t, p, p->culprits[i]);
    for (uint32_t m = 0; m < g->n_members && rows < FR_TABLE_ROWS; m++) {
        bool culprit = false;
        for (int i = 0; i < p->n_culprits && !culprit; i++) culprit = p->culprits[i] == g->members[m];
        if (!culprit) row_of(st, r, t, p, g->members[m]), rows++;
    }
    rep_int(r, o, "rows_omitted", "members not shown", (int64_t)g->n_members > rows ? (int64_t)g->n_members - rows : 0, NULL);
}

static const char *const k_src = "torch/distributed/flight_recorder/components (fr_trace: builder.py, utils.py, types.py); torch/csrc/distributed/c10d/FlightRecorderDetail.hpp";

static const rb_rule k_rules[] = {
    {"FR_OP_MISMATCH", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.92, "Flight Recorder entries of one collective_seq_id with different ops across the group's ranks (fr_trace COLLECTIVE_TYPE_MISMATCH)", k_src,
     "the ranks run different collectives at the same point: a rank took another code path (a condition on rank, data or an exception); make every rank issue the same collectives in the same order", r_desync},
    {"FR_SIZE_MISMATCH", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.92, "Flight Recorder entries of one collective_seq_id with different input/output shapes (fr_trace SIZE_OR_SYNTAX_MISMATCH)", k_src,
     "the ranks pass tensors of different shapes to the same collective: uneven batches or buckets, a model that differs by rank; fix the shapes (or use the _v variants)", r_desync},
    {"FR_DTYPE_MISMATCH", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.92, "Flight Recorder entries of one collective_seq_id with different dtypes (fr_trace COLLECTIVE_DTYPE_MISMATCH)", k_src,
     "the ranks pass different dtypes to the same collective (mixed precision enabled on some ranks only): make the dtype the same on every rank", r_desync},
    {"FR_RANK_NO_DUMP", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.85, "a member rank of the group has no (readable) Flight Recorder dump while the others wait in a collective", k_src,
     "the rank's process or host died (no dump on timeout): find why in its host's kernel log and the launcher's log, replace the node, restart from the last checkpoint", r_dead},
    {"FR_P2P_UNMATCHED", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.88, "a send (recv) left open in a rank's dump without the peer's open recv (send) of that pair (fr_trace's p2p match)", k_src,
     "a point-to-point op has no partner: the pipeline schedule differs between the two ranks, or the peer is stuck before it; make sends and recvs pair up in the same order on both sides", r_p2p},
    {"FR_RANK_LAGGING", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.9, "a rank's last entry in the group is 2 or more collectives behind the others' and it has no open entry (not in any NCCL call)", k_src,
     "the rank is stuck on the host side (data loading, a CPU op, I/O, a Python-side wait) while the others went on enqueueing collectives: look at its stack", r_host},
    {"FR_RANK_MISSING", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.9, "a rank's last entry in the group is earlier than the collective the others wait in (fr_trace: not all ranks joining collective)", k_src,
     "the rank never called the collective the others wait in: look at what it did instead (its stack), or at the other group it is blocked in", r_host},
    {"FR_RANK_BLOCKED_ELSEWHERE", CP_LAYER_HOST, AN_SEV_CRITICAL, 0.8, "the ranks missing from a collective are each inside another group's collective that itself is not failing: the groups are used in different orders", k_src,
     "ranks wait on each other across process groups: issue collectives on different groups in the same order on every rank", r_blocked},
    {"FR_COLLECTIVE_STUCK", CP_LAYER_INTER, AN_SEV_CRITICAL, 0.7, "every member of the group has an open entry for the same collective_seq_id and none is missing", k_src,
     "every rank is inside the collective and it does not finish: the fault is in the transport (network, NVLink, a GPU) or NCCL; look at NCCL WARN lines and the kernel logs", r_stuck},
    {"FR_ALL_COMPLETED", CP_LAYER_HOST, AN_SEV_HIGH, 0.6, "every entry of every dump is completed", k_src,
     "no collective is pending: the job hangs outside NCCL (host side); look at the Python stacks of the ranks", r_all_completed},
};

const rb_family rb_family_fr = {.name = "fr",
                                .summary = "PyTorch Flight Recorder dumps: the rank and the collective that stopped the job",
                                .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules), .report = report};
