/* an_kseq.c - the `kseq` analyzer: frequent GPU kernel sequences launched
 * by one operator (`analyze --kernel-seq OP`), per rank, in both views.
 *
 * HTA's definition (CudaKernelAnalysis.get_frequent_cuda_kernel_sequences,
 * snapshot f4d0062), on HTA's call graph:
 * - the call graph: on every CPU thread, each event's parent is the
 *   innermost event open at its start (events in (start, longest first)
 *   order); a GPU event hangs under the runtime call that launched it
 *   (correlation). When the rank has exactly one "main" thread (an event
 *   named ProfilerStep#*) and one "backward" thread (an autograd::* event,
 *   no step), the backward thread's top-level events are re-hung under the
 *   main thread's "## backward ##" annotation (else ProfilerStep#) whose
 *   span contains them, the first such annotation winning; depth counts
 *   from 0 at a thread's top level through those links.
 * - candidates: events whose name contains OP; roots: the candidates at the
 *   smallest depth with at least MIN (default 3) GPU events in their
 *   subtree. Roots at one depth never nest, so every GPU event belongs to
 *   at most one root.
 * - per root: its name and its subtree's GPU event names in start order,
 *   joined by "|", is its pattern. Per pattern: roots (count), the summed
 *   GPU event time of the subtrees and the summed root time; rows sorted by
 *   count descending then pattern ascending (byte order, as Python sorts).
 *
 * HTA view: HTA's candidate set is every row of its frame whose name holds
 * OP, GPU events included (depth: the launching call's + 1, or -1 without
 * one) and events of no CPU thread (depth -1), so one such event makes the
 * smallest depth -1 and the result empty; replayed. Exact view: candidates
 * are CPU thread events only (the analysis is about CPU operators), exact
 * ns, and the GPU events are real GPU work. Both views: no instant events
 * (HTA's frame has none); an event ending at
 * the instant a zero-length one starts does not contain it (HTA's event
 * order is not a total order for that case). The TOP rows (default 5) are
 * HTA's top_k, which it draws and overlays (an_kseq_marks: the exact view's
 * occurrences, for the Perfetto overlay's args "Patterns"); every row is in the report
 * (at most AN_LAUNCH_ROWS unless --launch-table).
 */
#include "an_results.h"
#include "../base/buf.h"
#include "../base/intern.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

#define KSEQ_MIN_LEN_DEFAULT 3
#define KSEQ_TOP_DEFAULT 5

typedef struct kseq_row {
    uint32_t pat;            /* pattern id in the rank's own table */
    int64_t count;
    int64_t gpu_ns, cpu_ns;  /* summed GPU event time of the roots' subtrees; summed root time */
} kseq_row;

typedef struct kseq_rank {
    kseq_row *rows;
    size_t n;
    cp_intern pats;
    int64_t candidates;      /* events whose name contains OP */
    int64_t min_depth;       /* depth of the shallowest candidates; INT64_MIN when none */
    int64_t roots;           /* candidates at min_depth with >= MIN GPU events */
    int32_t *ev_row;         /* exact view: per rank-local event, the row (< top_k) of the root whose
                              * subtree holds it, -1 none: what the overlay marks (HTA's "Patterns") */
    size_t n_ev;
} kseq_rank;

/* CPU thread events sorted by (track, start, longest first, index) */
typedef struct ev_rec {
    int64_t grp, t0, ndur;
    size_t i;
} ev_rec;

static uint64_t ev_key(const void *rec, int k, const void *ctx)
{
    (void)ctx;
    const ev_rec *r = rec;
    return k == 0 ? cp_key_i64(r->grp) : k == 1 ? cp_key_i64(r->t0) : k == 2 ? cp_key_i64(r->ndur) : r->i;
}

typedef struct graph {
    int32_t *parent;         /* rank-local index, -1 top level (or not a CPU thread event) */
    int64_t *depth;          /* -1: not in the call graph */
    uint8_t *cpu;            /* 1: a CPU thread event of the view */
} graph;

/* A CPU thread event with a duration (HTA's frame has no instants). */
static bool cpu_event(const tl_timeline *tl, const an_view *v, size_t i)
{
    return v->mult[i] && v->stream[i] < 0 && !(tl->flags[v->base + i] & TL_F_INSTANT) &&
           tl->tracks[tl->track[v->base + i]].key.kind == TL_TRACK_CPU;
}

/* Nesting per thread; returns the sorted records (caller frees). */
static ev_rec *nest_threads(const tl_timeline *tl, const an_view *v, graph *g, size_t *n_out)
{
    ev_rec *e = cp_xmalloc((v->n ? v->n : 1) * sizeof *e);
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (cpu_event(tl, v, i)) {
            g->cpu[i] = 1;
            e[n++] = (ev_rec){ tl->track[v->base + i], v->t0[i], v->t0[i] - v->t1[i], i };
        }
    cp_sort_records(e, n, sizeof *e, 4, ev_key, NULL);
    size_t *open = cp_xmalloc((n ? n : 1) * sizeof *open), depth = 0;
    for (size_t k = 0; k < n; k++) {
        if (k && e[k].grp != e[k - 1].grp)
            depth = 0;
        size_t i = e[k].i;
        while (depth && v->t1[open[depth - 1]] <= v->t0[i])
            depth--;
        g->parent[i] = depth ? (int32_t)open[depth - 1] : -1;
        open[depth++] = i;
    }
    free(open);
    *n_out = n;
    return e;
}

/* HTA's link of the backward thread under the main thread's annotations. */
static void link_backward(const an_ctx *ctx, const an_view *v, graph *g, const ev_rec *e, size_t n)
{
    const tl_timeline *tl = ctx->tl;
    int64_t main_grp = -1, bwd_grp = -1;
    int n_main = 0, n_bwd = 0;
    for (size_t a = 0, b; a < n; a = b) {
        bool step = false, autograd = false;
        for (b = a; b < n && e[b].grp == e[a].grp; b++) {
            const char *s = an_name(ctx, v, e[b].i);
            step |= !strncmp(s, "ProfilerStep#", 13);
            autograd |= strstr(s, "autograd::") != NULL;
        }
        if (step)
            n_main++, main_grp = e[a].grp;
        else if (autograd)
            n_bwd++, bwd_grp = e[a].grp;
    }
    if (n_main != 1 || n_bwd != 1)
        return;
    size_t blo = 0, bhi; /* the backward thread's records [blo, bhi) */
    while (blo < n && e[blo].grp != bwd_grp)
        blo++;
    for (bhi = blo; bhi < n && e[bhi].grp == bwd_grp; bhi++)
        ;
    static const char *const anchors[] = { "## backward ##", "ProfilerStep#" };
    for (size_t pass = 0; pass < CP_ARRAY_LEN(anchors); pass++) {
        size_t la = strlen(anchors[pass]);
        bool any = false;
        for (size_t i = 0; i < v->n; i++) { /* the main thread's anchors, in event order */
            if (!g->cpu[i] || (int64_t)tl->track[v->base + i] != main_grp ||
                strncmp(an_name(ctx, v, i), anchors[pass], la))
                continue;
            any = true;
            size_t lo = blo, hi = bhi; /* first backward record starting at or after the anchor */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (e[mid].t0 < v->t0[i])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t k = lo; k < bhi && e[k].t0 <= v->t1[i]; k++)
                if (g->parent[e[k].i] == -1 && v->t1[e[k].i] <= v->t1[i])
                    g->parent[e[k].i] = (int32_t)i;
        }
        if (any)
            return;
    }
}

/* Depths from the parents (a parent may sit on another thread). */
static void fill_depths(const an_view *v, graph *g)
{
    for (size_t i = 0; i < v->n; i++)
        g->depth[i] = g->cpu[i] ? INT64_MIN : -1;
    size_t *chain = cp_xmalloc((v->n ? v->n : 1) * sizeof *chain);
    for (size_t i = 0; i < v->n; i++) {
        size_t nc = 0, x = i;
        while (g->depth[x] == INT64_MIN) {
            chain[nc++] = x;
            if (g->parent[x] < 0)
                break;
            x = (size_t)g->parent[x];
        }
        int64_t d = g->depth[x] == INT64_MIN ? -1 : g->depth[x]; /* -1: chain[nc-1] is top level */
        while (nc)
            g->depth[chain[--nc]] = ++d;
    }
    free(chain);
}

static int64_t event_depth(const an_view *v, const graph *g, size_t i)
{
    if (g->cpu[i])
        return g->depth[i];
    if (v->stream[i] >= 0 && v->partner[i] >= 0 && g->cpu[v->partner[i]])
        return g->depth[v->partner[i]] + 1;
    return -1;
}

/* The root holding GPU event k (its launching call's ancestor at depth d), or -1. */
static int64_t root_of(const an_view *v, const graph *g, const int32_t *slot, size_t k, int64_t d)
{
    if (slot[k] >= 0) /* a GPU event that is a root itself (HTA view, MIN <= 1) */
        return slot[k];
    int32_t x = v->partner[k];
    if (x < 0 || !g->cpu[x] || g->depth[x] < d)
        return -1;
    while (g->depth[x] > d)
        x = g->parent[x];
    return slot[x];
}

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
    const kseq_row *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return strcmp(cp_intern_str(ctx, a->pat), cp_intern_str(ctx, b->pat));
}

/* Candidates and the smallest depth among them. */
static size_t find_candidates(const an_ctx *ctx, const an_view *v, const graph *g, const char *op, size_t **out,
                              kseq_rank *kr)
{
    uint8_t *match = cp_xcalloc(cp_intern_count(&ctx->tl->strings) + 1, 1); /* by name: 0 unknown, 1 no, 2 yes */
    size_t *c = cp_xmalloc((v->n ? v->n : 1) * sizeof *c), n = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (!v->mult[i] || (v->exact && !g->cpu[i]))
            continue;
        uint32_t nm = ctx->tl->name[v->base + i];
        if (!match[nm])
            match[nm] = strstr(tl_str(ctx->tl, nm), op) ? 2 : 1;
        if (match[nm] == 2) {
            c[n++] = i;
            int64_t d = event_depth(v, g, i);
            if (kr->min_depth == INT64_MIN || d < kr->min_depth)
                kr->min_depth = d;
        }
    }
    free(match);
    kr->candidates = (int64_t)n;
    *out = c;
    return n;
}

/* Pattern of each root, aggregated into rows. */
static void build_rows(const an_ctx *ctx, const an_view *v, const graph *g, const size_t *roots, size_t nr,
                       const int32_t *slot, int64_t min_len, uint32_t *root_pat, kseq_rank *out)
{
    const tl_timeline *tl = ctx->tl;
    size_t *cnt = cp_xcalloc(nr + 1, sizeof *cnt), *kern = cp_xmalloc((v->n_gpu ? v->n_gpu : 1) * sizeof *kern);
    int64_t *gpu_ns = cp_xcalloc(nr + 1, sizeof *gpu_ns);
    for (size_t k = 0; k < v->n_gpu; k++) { /* GPU events in start order: counts per root */
        int64_t s = root_of(v, g, slot, v->gpu[k], out->min_depth);
        if (s >= 0)
            cnt[s + 1]++;
    }
    for (size_t s = 0; s < nr; s++)
        cnt[s + 1] += cnt[s];
    size_t *fill = cp_xmalloc((nr + 1) * sizeof *fill);
    memcpy(fill, cnt, (nr + 1) * sizeof *fill);
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t gk = v->gpu[k];
        int64_t s = root_of(v, g, slot, gk, out->min_depth);
        if (s >= 0) {
            kern[fill[s]++] = gk;
            gpu_ns[s] += v->t1[gk] - v->t0[gk];
        }
    }
    free(fill);
    size_t cap = 0, np = 0;
    int64_t *row_of = NULL; /* pattern id -> row */
    cp_buf b = CP_BUF_INIT;
    for (size_t s = 0; s < nr; s++) {
        root_pat[s] = UINT32_MAX;
        if ((int64_t)(cnt[s + 1] - cnt[s]) < min_len)
            continue; /* HTA's num_kernels filter */
        out->roots++;
        cp_buf_reset(&b);
        cp_buf_puts(&b, an_name(ctx, v, roots[s]));
        for (size_t k = cnt[s]; k < cnt[s + 1]; k++) {
            cp_buf_puts(&b, "|");
            cp_buf_puts(&b, tl_str(tl, tl->name[v->base + kern[k]]));
        }
        uint32_t id = root_pat[s] = cp_intern_s(&out->pats, cp_buf_str(&b));
        if (id >= np) {
            row_of = cp_xrealloc(row_of, (id + 1) * sizeof *row_of);
            for (; np <= id; np++)
                row_of[np] = -1;
        }
        if (row_of[id] < 0) {
            cp_xgrow((void **)&out->rows, &cap, out->n + 1, sizeof *out->rows);
            row_of[id] = (int64_t)out->n;
            out->rows[out->n++] = (kseq_row){ id, 0, 0, 0 };
        }
        kseq_row *r = &out->rows[row_of[id]];
        r->count++;
        r->gpu_ns += gpu_ns[s];
        r->cpu_ns += v->t1[roots[s]] - v->t0[roots[s]];
    }
    cp_buf_free(&b);
    free(row_of);
    free(cnt);
    free(kern);
    free(gpu_ns);
    if (out->n > 1)
        qsort_r(out->rows, out->n, sizeof *out->rows, cmp_row, &out->pats);
}

/* The exact view's marks for the overlay: every event of a top_k row's
 * roots' subtrees (the root, its CPU descendants, their GPU events; HTA's
 * pattern_occurrences) gets the row. */
static void mark_events(const an_ctx *ctx, const an_view *v, const graph *g, const int32_t *slot,
                        const uint32_t *root_pat, kseq_rank *out)
{
    size_t top = ctx->opts->kseq_top_k > 0 ? (size_t)ctx->opts->kseq_top_k : KSEQ_TOP_DEFAULT;
    size_t np = cp_intern_count(&out->pats);
    int32_t *row_of_pat = cp_xmalloc((np ? np : 1) * sizeof *row_of_pat);
    for (size_t p = 0; p < np; p++)
        row_of_pat[p] = -1;
    for (size_t k = 0; k < out->n && k < top; k++)
        row_of_pat[out->rows[k].pat] = (int32_t)k;
    out->n_ev = v->n;
    out->ev_row = cp_xmalloc((v->n ? v->n : 1) * sizeof *out->ev_row);
    for (size_t i = 0; i < v->n; i++) {
        int64_t s = -1;
        if (g->cpu[i] && g->depth[i] >= out->min_depth) {
            int32_t x = (int32_t)i;
            while (g->depth[x] > out->min_depth)
                x = g->parent[x];
            s = slot[x];
        } else if (!g->cpu[i] && v->mult[i] && v->stream[i] >= 0) {
            s = root_of(v, g, slot, i, out->min_depth);
        }
        out->ev_row[i] = s >= 0 && root_pat[s] != UINT32_MAX ? row_of_pat[root_pat[s]] : -1;
    }
    free(row_of_pat);
}

static void kseq_compute(const an_ctx *ctx, const an_view *v, void *outp)
{
    kseq_rank *out = outp;
    memset(out, 0, sizeof *out);
    cp_intern_init(&out->pats);
    out->min_depth = INT64_MIN;
    const char *op = ctx->opts->kseq_op;
    graph g = { cp_xmalloc((v->n ? v->n : 1) * sizeof *g.parent), cp_xmalloc((v->n ? v->n : 1) * sizeof *g.depth),
                cp_xcalloc(v->n ? v->n : 1, 1) };
    for (size_t i = 0; i < v->n; i++)
        g.parent[i] = -1;
    size_t ne;
    ev_rec *e = nest_threads(ctx->tl, v, &g, &ne);
    link_backward(ctx, v, &g, e, ne);
    free(e);
    fill_depths(v, &g);
    size_t *cand, nc = find_candidates(ctx, v, &g, op, &cand, out);
    /* roots: candidates at the smallest depth; slot = root number by event */
    int32_t *slot = cp_xmalloc((v->n ? v->n : 1) * sizeof *slot);
    for (size_t i = 0; i < v->n; i++)
        slot[i] = -1;
    size_t nr = 0;
    for (size_t k = 0; k < nc; k++)
        if (event_depth(v, &g, cand[k]) == out->min_depth)
            cand[nr++] = cand[k];
    for (size_t k = 0; k < nr; k++)
        slot[cand[k]] = (int32_t)k;
    int64_t min_len = ctx->opts->kseq_min_len > 0 ? ctx->opts->kseq_min_len : KSEQ_MIN_LEN_DEFAULT;
    uint32_t *root_pat = cp_xmalloc((nr ? nr : 1) * sizeof *root_pat);
    if (nr)
        build_rows(ctx, v, &g, cand, nr, slot, min_len, root_pat, out);
    if (nr && v->exact)
        mark_events(ctx, v, &g, slot, root_pat, out);
    free(root_pat);
    free(slot);
    free(cand);
    free(g.parent);
    free(g.depth);
    free(g.cpu);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *outp)
{
    const kseq_rank *kr = outp;
    const an_opts *o = ctx->opts;
    rep_node *n = rep_obj(ctx->rep, parent, "kernel_sequences", "frequent GPU kernel sequences of an operator");
    rep_str(ctx->rep, n, "operator", "operator name (substring)", o->kseq_op);
    rep_int(ctx->rep, n, "min_pattern_len", "GPU events a root needs",
            o->kseq_min_len > 0 ? o->kseq_min_len : KSEQ_MIN_LEN_DEFAULT, NULL);
    rep_int(ctx->rep, n, "top_k", "patterns HTA draws and overlays", o->kseq_top_k > 0 ? o->kseq_top_k : KSEQ_TOP_DEFAULT,
            NULL);
    rep_int(ctx->rep, n, "candidates", "events whose name contains the operator", kr->candidates, NULL);
    if (kr->min_depth == INT64_MIN)
        rep_null(ctx->rep, n, "min_depth", "call-graph depth of the shallowest candidates", NULL);
    else
        rep_int(ctx->rep, n, "min_depth", "call-graph depth of the shallowest candidates", kr->min_depth, NULL);
    rep_int(ctx->rep, n, "roots", "shallowest candidates with enough GPU events", kr->roots, NULL);
    rep_int(ctx->rep, n, "patterns", "distinct patterns", (int64_t)kr->n, NULL);
    static const rep_col cols[] = {
        { "pattern", "operator|kernel|kernel...", NULL, -1 },
        { "count", "occurrences", NULL, -1 },
        { "gpu_kernel_time_ns", "GPU event time of the occurrences", "ns", -1 },
        { "cpu_op_time_ns", "operator time of the occurrences", "ns", -1 },
    };
    rep_node *t = rep_table(ctx->rep, n, "rows", "patterns by count", cols, CP_ARRAY_LEN(cols));
    t->flags |= REP_F_NO_TEXT;
    size_t m = o->launch_table ? kr->n : CP_MIN(kr->n, (size_t)AN_LAUNCH_ROWS);
    for (size_t k = 0; k < m; k++) {
        const kseq_row *r = &kr->rows[k];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, cp_intern_str(&kr->pats, r->pat));
        rep_cell_int(ctx->rep, row, r->count);
        rep_cell_int(ctx->rep, row, r->gpu_ns);
        rep_cell_int(ctx->rep, row, r->cpu_ns);
    }
}

bool an_kseq_marks(const an_ctx *ctx, size_t r, an_kseq_mark_set *out)
{
    const kseq_rank *kr = an_dual_get(ctx, AN_kseq, r, true);
    if (!kr || !kr->ev_row)
        return false;
    const an_rank_views *rv = an_views(ctx, r);
    size_t top = ctx->opts->kseq_top_k > 0 ? (size_t)ctx->opts->kseq_top_k : KSEQ_TOP_DEFAULT;
    *out = (an_kseq_mark_set){ rv->exact.base, kr->n_ev, kr->ev_row, CP_MIN(top, kr->n), NULL, NULL };
    out->pattern = cp_xcalloc(out->n_rows + 1, sizeof *out->pattern);
    out->count = cp_xcalloc(out->n_rows + 1, sizeof *out->count);
    for (size_t k = 0; k < out->n_rows; k++) {
        out->pattern[k] = cp_intern_str(&kr->pats, kr->rows[k].pat);
        out->count[k] = kr->rows[k].count;
    }
    return true;
}

void an_kseq_marks_free(an_kseq_mark_set *m)
{
    free(m->pattern);
    free(m->count);
}

static void free_rank(void *outp)
{
    kseq_rank *kr = outp;
    free(kr->ev_row);
    free(kr->rows);
    cp_intern_free(&kr->pats);
}

int an_kseq_run(an_ctx *ctx)
{
    if (!ctx->opts || !ctx->opts->kseq_op || !*ctx->opts->kseq_op)
        return 0; /* only on request (--kernel-seq OP) */
    static const an_dual_ops ops = { sizeof(kseq_rank), kseq_compute, emit, free_rank };
    return an_run_dual(ctx, AN_kseq, &ops);
}
