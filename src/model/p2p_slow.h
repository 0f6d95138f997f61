/* p2p_slow.h - single out the slow host or link in a pair bandwidth matrix.
 *
 * Input: n ranks, each rank's host name and the measured one-way bandwidth of
 * every rank pair (bw[i*n+j], i != j; NaN = not measured). Pure function, so
 * the decision is unit-tested on hand-made matrices.
 *
 * Method (robust to one bad host among few): the "entities" are the distinct
 * hosts when the ranks span more than one host (pairs inside a host are left
 * out: they measure shared memory, not the network), else the ranks.
 *   pair(a,b)  = median bandwidth of the rank pairs between entity a and b
 *   score(a)   = median of pair(a,b) over every other b
 *   reference  = median of score(a) over every entity
 * An entity is slow when score(a) < (1 - margin) * reference; a link (a,b) is
 * slow when pair(a,b) < (1 - margin) * reference. With one throttled host
 * among k >= 3, every one of its links is slow, so its score drops, while
 * each other host has only one slow link of k-1 and its median stays fast.
 * With two entities there is only one link and nothing can be singled out:
 * `decidable` is false. Default margin P2P_SLOW_MARGIN (0.5: below half the
 * median), documented in docs/METRICS.md.
 *
 * Used by `probe coll` (pair bandwidths it measures) and `analyze` (pair
 * bandwidths on the wire from NCCL's proxy steps in `chainprof run` traces),
 * which share the verdict sentence and the report section below.
 *
 * Ownership: p2p_slow_analyze fills *out with malloc'd arrays; free them with
 * p2p_slow_free.
 */
#ifndef CP_MODEL_P2P_SLOW_H
#define CP_MODEL_P2P_SLOW_H

#include "report.h"

#include <stdbool.h>
#include <stddef.h>

#define P2P_SLOW_MARGIN 0.5

typedef struct p2p_entity {
    const char *name; /* borrowed from the hosts[] input, or "rank N" */
    char label[80];
    double score_gbps;
    bool slow;
} p2p_entity;

typedef struct p2p_link {
    int a, b; /* entity indices, a < b */
    double bw_gbps;
    bool slow;
} p2p_link;

typedef struct p2p_slow_result {
    bool by_host;      /* entities are hosts (else ranks) */
    bool decidable;    /* at least 3 entities with measurements */
    double reference_gbps;
    double margin;
    p2p_entity *ents;
    size_t n_ents;
    p2p_link *links;
    size_t n_links;
} p2p_slow_result;

/* hosts[i] is rank i's host name (may be NULL: every rank its own entity). */
void p2p_slow_analyze(int n, const char *const *hosts, const double *bw, double margin,
                      p2p_slow_result *out);
void p2p_slow_free(p2p_slow_result *r);
/* One sentence naming the slow hosts/ranks and links, or saying none is or
 * that it cannot be told. */
void p2p_slow_verdict(const p2p_slow_result *v, char *buf, size_t n);
/* The section: verdict, grouped_by, reference_gbps, margin, the hosts and
 * links tables (schema in docs/FORMATS.md, `p2p` of probe, `links` of
 * analyze). */
rep_node *p2p_slow_report(rep_report *r, rep_node *parent, const char *key, const char *title,
                          const p2p_slow_result *v);

#endif
