/* rep_wire.h - report subtrees as bytes, and merging subtrees: how the
 * processes of `mpirun ... chainprof analyze` send their ranks' report
 * objects to rank 0 (src/cli/analyze_dist.c). See rep_wire.c. */
#ifndef CP_MODEL_REP_WIRE_H
#define CP_MODEL_REP_WIRE_H

#include "../base/buf.h"
#include "../base/error.h"
#include "../base/intern.h"
#include "report.h"

/* A message: one or more subtrees sharing a dictionary of strings (keys,
 * titles, units and string values repeat across ranks: each is sent once). */
typedef struct rep_wire_enc {
    cp_buf *b;
    cp_intern dict;
} rep_wire_enc;

void rep_wire_enc_init(rep_wire_enc *e, cp_buf *b);
void rep_wire_enc_free(rep_wire_enc *e);
/* Append node n and everything under it. */
void rep_wire_put(rep_wire_enc *e, const rep_node *n);

typedef struct rep_wire_dec {
    const unsigned char *p;
    size_t len, pos;
    const char **dict; /* strings met so far (in the report's arena), [0] = "" */
    size_t n_dict, cap_dict;
} rep_wire_dec;

void rep_wire_dec_init(rep_wire_dec *d, const void *data, size_t len);
void rep_wire_dec_free(rep_wire_dec *d);
/* Decode the next subtree as the last child of parent (parent NULL: a
 * detached node, for rep_wire_merge). A short or inconsistent message is
 * CP_ERR_FORMAT naming what and where; d->pos then stays where it was and
 * parent may hold a partial node (give the report up). */
int rep_wire_get(rep_report *r, rep_node *parent, rep_wire_dec *d, rep_node **out, cp_error *err);

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
