/* rep_wire.h - report subtrees as bytes, and merging subtrees: how the
 * processes of `mpirun ... chainprof analyze` send their ranks' report
 * objects to rank 0 (src/cli/analyze_dist.c). See rep_wire.c. */
#ifndef CP_MODEL_REP_WIRE_H
#define CP_MODEL_REP_WIRE_H

#include "../base/buf.h"
#include "../base/error.h"
#include "report.h"

/* Append node n and everything under it to b. */
void rep_wire_put(cp_buf *b, const rep_node *n);

/* Decode one subtree from data[*pos..len) as the last child of parent
 * (parent NULL: a detached node, for rep_wire_merge); *pos advances past
 * it. A short or inconsistent buffer is CP_ERR_FORMAT naming what. */
int rep_wire_get(rep_report *r, rep_node *parent, const unsigned char *data, size_t len, size_t *pos,
                 rep_node **out, cp_error *err);

/* Merge src (detached, same report) into dst: objects by key (a key dst
 * lacks is appended in src's order), arrays by appending src's elements
 * (an array that had elements and got more is marked REP_F_MERGED); for
 * leaves dst's value stays. src is consumed. */
void rep_wire_merge(rep_node *dst, rep_node *src);
#define REP_F_MERGED 0x100u

/* Stable sort of arr's elements by their integer child `key` (elements
 * without one keep their place relative to each other, after the rest). */
void rep_sort_by_int(rep_node *arr, const char *key);
/* rep_sort_by_int on every REP_F_MERGED array under n (the mark cleared). */
void rep_sort_merged(rep_node *n, const char *key);

#endif
