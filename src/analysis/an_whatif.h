/* an_whatif.h - the what-if's replay model, shared by its two graph
 * builders: an_whatif.c (Kineto / nsys traces, on an_critpath's dependency
 * graph) and an_whatif_pp.c (the OSDI'25 artifact's op timelines, on the
 * pipeline's own dependency model).
 *
 * A builder describes its graph (nodes, predecessors with the binding one,
 * lags) through wi_graph_src and its ops (a span start -> end node, the
 * lag into the end node being the op's duration) in wi_model.ops, with
 * each op's worker, DP rank, stage, type and identity; then wi_ideals and
 * wi_compact turn that into the replay's arrays (nodes with one fixed-lag
 * predecessor folded onto an anchor + offset), and wi_report runs every
 * scenario (S, S_t, S_w per DP rank and per stage, M_W, M_S) and writes
 * the common part of the `whatif` section.
 * The definitions are in docs/METRICS.md ("What-if").
 */
#ifndef CP_ANALYSIS_AN_WHATIF_H
#define CP_ANALYSIS_AN_WHATIF_H

#include "analysis.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wi_op {
    size_t ev;             /* the timeline event */
    uint64_t start, end;   /* span nodes; the lag into end is the duration */
    int64_t dur_ns;        /* traced duration (transfer for collectives and p2p) */
    uint32_t name;
    uint32_t seq;          /* k-th op of its name in its step on its rank (Kineto) */
    uint32_t group;        /* identity whose typical value is the ideal */
    uint32_t type;         /* index into the reported types; >= n_types: not reported */
    uint32_t rank;         /* worker index */
    uint32_t dp, stage;    /* DP rank and stage indices of its worker */
    int32_t step;          /* index among the timed steps, -1: not timed */
    bool comm;             /* ideal = median (communication), else mean */
} wi_op;

/* A builder's graph: nodes 0..n-1 (n < WI_MAX_NODES), n_edges predecessor
 * entries in all (< 2^32). */
typedef struct wi_graph_src {
    size_t n, n_edges;
    const void *ctx;
    size_t (*preds)(const void *ctx, uint64_t v, const uint32_t **src);
    /* index in src of the binding predecessor, SIZE_MAX for a source */
    size_t (*binding)(const void *ctx, uint64_t v, const uint32_t *src, size_t np);
    /* the binding predecessor's lag (b < SIZE_MAX) or a source's instant */
    int64_t (*lag0)(const void *ctx, uint64_t v, const uint32_t *src, size_t b);
    /* optional: node v's instant in the replay of the traced durations,
     * when the builder knows it (lag0 = ts(v) - ts(binding), a source's
     * lag0 = ts(v)); then folded offsets are not stored but derived.
     * NULL: wi_compact keeps one offset per node while folding. */
    int64_t (*ts)(const void *ctx, uint64_t v);
} wi_graph_src;

#define WI_MAX_NODES ((uint64_t)UINT32_MAX - 4) /* node ids and slots are 32-bit, 4 values are marks */

typedef struct wi_model {
    /* the replay's compact graph. A node with one predecessor whose lag no
     * scenario changes (most CPU instants, every source) is folded: its
     * instant is always that of an earlier kept node ("anchor") plus a
     * constant offset, so it gets no slot. Kept nodes by topological
     * position q (slot 0: the constant 0 that sources hang from): preds
     * (pa[k], po[k]) for k in [pstart[q], pstart[q+1]), the instant being
     * t[pa[k]] + po[k], the binding one first with its lag folded into po;
     * opq[q] the op whose span ends at q (-1 none; its binding po holds no
     * lag, the scenario adds the op's traced or ideal duration). */
    size_t n_keep;
    uint32_t *pstart, *pa;
    int64_t *po;
    int32_t *opq;
    uint32_t *op_start_a, *op_end_q;  /* per op: its start's anchor, its end's slot */
    int64_t *op_start_o;   /* per op: its start's offset from the anchor */
    int64_t *op_trace;     /* per op: the traced lag of its span (the binding lag) */
    int64_t *op_ideal;     /* per op: its group's ideal duration */
    size_t n_sources;      /* nodes without a predecessor: replayed at their instant */
    bool out_of_range;     /* instants plus lags could overflow int64: not replayed */
    size_t n_cycle;        /* nodes on a dependency cycle or after one: not replayed */
    wi_op *ops;
    size_t n_ops;
    int64_t *ideal;        /* per group */
    size_t n_groups;
    size_t n_steps;        /* timed steps */
    /* what the report names: types, workers (dp, stage, tp per worker),
     * DP ranks and stages by label */
    size_t n_types, n_workers, n_dp, n_stages;
    const char **type_name;
    uint32_t *w_dp, *w_stage, *w_tp;
    int64_t *dp_label, *stage_label;
    int64_t *worker_label; /* workers_fixed as numbers (Kineto ranks); NULL: as {dp, pp, tp} */
    int nthreads;
} wi_model;

/* m->ops' groups and the groups' ideal durations: ops with the same
 * identity key (key(op), any 64-bit value) form a group, numbered in key
 * order; ideal = the mean of the group's dur_ns, or the median for
 * communication (the comm flag of its shortest op). Fills m->n_groups. */
void wi_ideals(wi_model *m, uint64_t (*key)(const wi_op *o));
/* The compact arrays from gs (topological order by a depth-first walk of
 * the predecessor lists, folding as above); ops whose span is on or after
 * a cycle get step -1, the nodes there are counted in n_cycle. Needs the
 * ideals; m->ops must be in ascending order of their end node. Sets
 * out_of_range when the latest source plus every lag and ideal could pass
 * the int64 range (a damaged input): the caller then skips the replays. */
void wi_compact(wi_model *m, const wi_graph_src *gs);
/* Run the scenarios and write t_original_ns .. by_stage under top;
 * returns T_original. */
double wi_report(rep_report *rp, rep_node *top, wi_model *m);
void wi_model_free(wi_model *m);

/* The op-timeline builder (an_whatif_pp.c): the timeline rank index of the
 * one op timeline in the job, -1 when there is none, -2 when there are
 * several (each is a job of its own). */
int an_whatif_pp_rank(const tl_timeline *tl);
/* The what-if on that rank's pipeline, written under top. */
int an_whatif_pp_run(an_ctx *ctx, rep_node *top, size_t rank_index);

/* A record sorted by three keys (cp_sort_records with wi_rec3_key): the
 * k-th op of a name in its step / annotation. */
typedef struct wi_rec3 {
    uint64_t k0, k1, k2;
    size_t i;
} wi_rec3;
uint64_t wi_rec3_key(const void *p, int k, const void *ctx);

/* The paper's op types (an_whatif_types.c): a Kineto op's type from its
 * annotations or its p2p direction. */
enum {
    WI_PT_FWD, WI_PT_BWD, WI_PT_FSR, WI_PT_BSR, WI_PT_RS, WI_PT_AG, WI_PT_EMB, WI_PT_LN, WI_PT_OPT, WI_PT_CLIP,
    WI_PT_GC, WI_PT__COUNT
};
#define WI_PT_NONE UINT32_MAX
#define WI_SUB_MAX ((1u << 26) - 1) /* a typed op's k-th place is kept in 26 bits of its identity */
const char *wi_ptype_name(uint32_t t);
/* Every op of m (in rank order, ev set) gets type = its paper type
 * (WI_PT_NONE: none) and, when typed, seq = its place in its annotation
 * (or its p2p direction). */
void wi_kineto_ptypes(const an_ctx *ctx, wi_model *m);
/* Positions of ev's rank (*self) and of peer (*q) in ev's process group
 * of *n members (*first: its first member, a rank number); true when they
 * are neighbours (next, previous, or last and first). peer -1 (a batched
 * SendRecv naming none): true when the rank is in the group. */
bool wi_p2p_positions(const an_ctx *ctx, size_t ev, int32_t peer, int *self, int *q, int *n, int32_t *first);

#define AN_WI_MAX_VISITS ((uint64_t)4e9)   /* node visits over all replays */

#endif
