/* an_critpath.h - the dependency graph of the critical path analysis
 * (an_critpath.c) and its typed result, for the analyses that replay it.
 *
 * Nodes are instants: node 2*ev is event ev's start, 2*ev+1 its end,
 * 2*n_ev + k the transfer start of matched collective kernel x[k] (the
 * instant its last member arrived), and 2*n_ev + n_x + i the arrival of
 * collective instance i (its members' latest start). Each rank keeps the edges into its own
 * nodes as a CSR by destination (predecessor lists); a predecessor may be
 * on another rank (collective peer edges). Every edge goes forward in time.
 *
 * Ownership: the graph borrows the timeline and the collectives result's
 * member list (both outlive it); an_critpath_result owns the graph.
 */
#ifndef CP_ANALYSIS_AN_CRITPATH_H
#define CP_ANALYSIS_AN_CRITPATH_H

#include "an_verdict.h"

#include <stddef.h>
#include <stdint.h>

/* HTA's CPEdgeType values first, then the cross-rank collective edges. */
typedef enum an_cp_edge {
    AN_CE_OP,     /* operator/kernel span, CPU nesting */
    AN_CE_DEP,    /* consecutive top-level CPU ops */
    AN_CE_LAUNCH, /* runtime launch start -> kernel start */
    AN_CE_KK,     /* previous kernel end -> kernel start, one stream */
    AN_CE_SYNC,   /* GPU work end -> blocking call end */
    AN_CE_WAIT,   /* collective kernel start -> its transfer start */
    AN_CE_PEER,   /* the instance's arrival node -> a member's transfer start */
    AN_CE_XFER,   /* transfer start -> collective kernel end */
    AN_CE_XSTREAM,/* inferred stream wait: other stream's work end -> a kernel
                   * that started long after its launch and its stream predecessor */
    AN_CE_ARRIVE, /* a member's kernel start -> its instance's arrival node */
    AN_CE_P2P,    /* a matched recv's end -> a kernel of its rank held until then
                   * (work.wait() makes the current stream wait on the NCCL stream) */
    AN_CE__COUNT
} an_cp_edge;

typedef struct an_cp_rank {
    size_t ev0, n_ev;           /* the rank's events [ev0, ev0 + n_ev) */
    size_t x0, n_x;             /* its matched collective kernels x[x0, x0 + n_x) */
    size_t a0, n_a;             /* the instances whose last arriver it is, inst[a0, a0 + n_a) */
    uint32_t *off;              /* 2*n_ev + n_x + n_a + 1 offsets into src/type; NULL: no
                                 * edges (none built, or more than 32-bit offsets hold) */
    uint32_t *src;              /* predecessor node ids (global; every id < AN_CP_MAX_NODES) */
    uint8_t *type;              /* an_cp_edge */
    size_t n_edges;
} an_cp_rank;

typedef struct an_cp_graph {
    const tl_timeline *tl;
    size_t n_ev;
    const an_coll_member *x;    /* borrowed: an_collectives_result.members */
    size_t n_x;
    /* collective instances (members sharing a last arriver), by last_ev:
     * the arrival node 2*n_ev + n_x + k is the instant the last member of
     * instance k started, with every member's start as a predecessor */
    struct an_cp_inst { size_t last_ev, m0, n_m; } *inst;
    size_t n_inst;
    size_t *inst_mem;           /* members' events, instance by instance */
    size_t *x_inst;             /* member -> its instance */
    size_t n_ranks;
    an_cp_rank *ranks;
    int32_t *parent;            /* CPU event -> its call-stack parent, -1 none (events < 2^31) */
    int64_t *by_type;           /* edges per (rank, type) */
    uint8_t *name_flags;        /* per string id, internal */
    size_t n_nodes, n_edges;
    int64_t dropped_edges, bad_nesting, merged_bwd_ranks;
} an_cp_graph;

/* Node ids are 32-bit (half the graph's memory of 64-bit ids): a larger
 * job gets no graph (the critical path and the what-if say skipped). */
#define AN_CP_MAX_NODES ((uint64_t)UINT32_MAX)

/* Build the graph of every rank (in parallel, ctx->opts->nthreads). Needs
 * the collectives result for the cross-rank edges (none without it). */
an_cp_graph *an_cp_graph_build(const an_ctx *ctx);
void an_cp_graph_free(an_cp_graph *g);
int64_t an_cp_node_ts(const an_cp_graph *g, uint64_t node);
/* Predecessors of node: count, with their ids and edge types. */
size_t an_cp_preds(const an_cp_graph *g, uint64_t node, const uint32_t **src, const uint8_t **type);
const char *an_cp_edge_name(an_cp_edge e);
/* Rank index of a node. */
uint32_t an_cp_node_rank(const an_cp_graph *g, uint64_t node);
/* The binding predecessor of node among its np predecessors src[]: the one
 * satisfied last (latest instant; on a tie the one on the node's rank,
 * then the first). Its position in src, SIZE_MAX when np is 0. The
 * critical path walks these; the what-if replays keep their gaps. */
size_t an_cp_binding(const an_cp_graph *g, uint64_t node, const uint32_t *src, size_t np);

#define AN_CP_TOP_EVENTS 10     /* events[] entries per step */
/* A kernel that starts this long after both its launch call ended and its
 * stream predecessor ended (or that has neither) waited for something the
 * trace does not name (cudaStreamWaitEvent without its event record): the
 * work of another stream of the rank that ended last inside that gap. HTA counts a
 * kernel-kernel delay below 1.5 ms as stream order; typical compute-stream
 * gaps are under 10 us, so 50 us leaves them alone. */
#define AN_CP_IMPLICIT_WAIT_NS 50000

/* One segment of a step's walked path with positive duration: the hop
 * from node `from` (UINT64_MAX: the node had no predecessor, the segment
 * starts at the window's start on its rank) to node `to` over an edge of
 * type `edge` (AN_CE__COUNT when there is none), clipped to the step window
 * [start_ns, end_ns) (timeline clock), carried by rank index `rank` (a
 * transfer: the rank whose arrival started it), its time belonging to
 * event `ev` (-1: a wait no event holds) in `layer`. Consecutive hops of a
 * path meet: hop i's end_ns is hop i+1's start_ns. */
typedef struct an_cp_hop {
    uint64_t from, to;
    int64_t start_ns, end_ns;
    int64_t ev;
    uint32_t rank;
    uint8_t edge;
    uint8_t layer;              /* cp_layer */
} an_cp_hop;

/* Hops kept per step (the earliest are dropped past it and counted): a path
 * longer than this is unreadable as a track anyway. */
#define AN_CP_MAX_HOPS 65536

typedef struct an_cp_path {
    int64_t id;                 /* step id, -1 the whole trace */
    an_cp_hop *hops;            /* forward in time */
    size_t n_hops;
    int64_t truncated;          /* positive-duration hops not kept (cap) */
} an_cp_path;

typedef struct an_critpath_result {
    void (*free)(void *self);
    an_cp_graph *graph;
    size_t n_steps, n_ranks;
    an_cp_path *paths;          /* n_steps, in the order of the report's steps[] */
    int64_t length_ns;          /* sum of the steps' path lengths */
    int64_t *rank_ns;           /* path time per rank index, all steps */
    int32_t carrier;            /* rank index carrying most of the path, -1 none */
} an_critpath_result;

#endif
