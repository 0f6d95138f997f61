/* an_whatif.h - the what-if's replay model, shared by its two graph
 * builders: an_whatif.c (Kineto / nsys traces, on an_critpath's dependency
 * graph) and an_whatif_pp.c (the OSDI'25 artifact's op timelines, on the
 * pipeline's own dependency model).
 *
 * A builder describes its graph (nodes, predecessors with the binding one,
 * lags) through wi_graph_src and its ops (a span start -> end node, the
 * lag into the end node being the op's duration) in wi_model.ops, with
 * each op's worker, DP rank, stage, type and identity group; then
 * wi_topo_order, wi_compact and wi_ideals turn that into the replay's
 * arrays, and wi_report runs every scenario (S, S_t, S_w per DP rank and
 * per stage, M_W, M_S) and writes the common part of the `whatif` section.
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

/* A builder's graph: nodes 0..n-1. */
typedef struct wi_graph_src {
    size_t n;
    const void *ctx;
    size_t (*preds)(const void *ctx, uint64_t v, const uint64_t **src);
    /* index in src of the binding predecessor, SIZE_MAX for a source */
    size_t (*binding)(const void *ctx, uint64_t v, const uint64_t *src, size_t np);
    /* the binding predecessor's lag (b < SIZE_MAX) or a source's instant */
    int64_t (*lag0)(const void *ctx, uint64_t v, const uint64_t *src, size_t b);
} wi_graph_src;

typedef struct wi_model {
    uint32_t *order;       /* topological order (freed once compacted) */
    size_t n_order;
    /* the replay's compact graph, nodes by topological position q: preds
     * pred[pstart[q] .. pstart[q+1]) (positions, the binding one first),
     * lag0[q] = the binding lag (a source: its instant), opq[q] = the op
     * whose span ends at q, -1 */
    uint32_t *pstart, *pred;
    int64_t *lag0;
    int32_t *opq;
    uint32_t *op_start_q, *op_end_q;
    int64_t *op_ideal;     /* per op: its group's ideal duration */
    size_t n_sources;      /* nodes without a predecessor: replayed at their instant */
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

/* Topological order of gs's nodes (Kahn); nodes on a cycle are left out. */
void wi_topo_order(wi_model *m, const wi_graph_src *gs);
/* The compact arrays from gs and m->order (then freed); ops whose span is
 * on a cycle get step -1. Needs m->ideal and each op's group. */
void wi_compact(wi_model *m, const wi_graph_src *gs);
/* m->ideal per group: the mean of the ops' dur_ns, or the median for
 * communication (the op's comm flag). Fills m->n_groups from the ops. */
void wi_ideals(wi_model *m);
/* Run the scenarios and write t_original_ns .. by_stage under top. */
void wi_report(rep_report *rp, rep_node *top, wi_model *m);
void wi_model_free(wi_model *m);

/* The op-timeline builder (an_whatif_pp.c): the timeline rank index of the
 * one op timeline in the job, -1 when there is none. */
int an_whatif_pp_rank(const tl_timeline *tl);
/* The what-if on that rank's pipeline, written under top. */
int an_whatif_pp_run(an_ctx *ctx, rep_node *top, size_t rank_index);

#define AN_WI_MAX_VISITS ((uint64_t)4e9)   /* node visits over all replays */

#endif
