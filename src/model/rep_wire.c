/* rep_wire.c - report subtrees as bytes (see rep_wire.h).
 *
 * Design
 * - The encoding is the node tree itself, depth first: type, flags, key,
 *   title, unit, digits, value, the table's columns, then the children
 *   count and the children. Strings are a 32-bit length (UINT32_MAX for
 *   NULL) and their bytes; integers and doubles are copied in the host's
 *   byte order, so every process of one job must run the same build on the
 *   same architecture (mpirun of one binary does).
 * - Decoding rebuilds the nodes through report.c's own constructors, so a
 *   decoded subtree is the tree the sender had: every writer renders it
 *   identically, which the MPI test checks field by field.
 * - Decoding checks every length against the buffer and nests at most
 *   REP_WIRE_DEPTH levels: the bytes come from our own processes, but a
 *   short or corrupted message must be an error, not a crash.
 */
#include "rep_wire.h"

#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

#define REP_WIRE_DEPTH 64

static void put_u32(cp_buf *b, uint32_t v) { cp_buf_append(b, &v, sizeof v); }

static void put_str(cp_buf *b, const char *s)
{
    if (!s) {
        put_u32(b, UINT32_MAX);
        return;
    }
    size_t n = strlen(s);
    put_u32(b, (uint32_t)n);
    cp_buf_append(b, s, n);
}

void rep_wire_put(cp_buf *b, const rep_node *n)
{
    unsigned char t = (unsigned char)n->type;
    cp_buf_append(b, &t, 1);
    put_u32(b, n->flags);
    put_str(b, n->key);
    put_str(b, n->title);
    put_str(b, n->unit);
    put_u32(b, (uint32_t)n->digits);
    switch (n->type) {
    case REP_INT: cp_buf_append(b, &n->v.i, sizeof n->v.i); break;
    case REP_NUM: cp_buf_append(b, &n->v.d, sizeof n->v.d); break;
    case REP_STR:
    case REP_JSON: put_str(b, n->v.s); break;
    case REP_BOOL: t = n->v.b; cp_buf_append(b, &t, 1); break;
    default: break;
    }
    put_u32(b, (uint32_t)n->n_cols);
    for (size_t i = 0; i < n->n_cols; i++) {
        put_str(b, n->cols[i].key);
        put_str(b, n->cols[i].title);
        put_str(b, n->cols[i].unit);
        put_u32(b, (uint32_t)n->cols[i].digits);
    }
    put_u32(b, (uint32_t)n->n_children);
    for (const rep_node *c = n->first; c; c = c->next)
        rep_wire_put(b, c);
}

typedef struct rd {
    rep_report *r;
    const unsigned char *p;
    size_t len, pos;
    cp_error *err;
    int bad;
} rd;

static int short_msg(rd *d, const char *what)
{
    if (!d->bad)
        cp_error_set(d->err, CP_ERR_FORMAT, NULL, 0, 0, (long long)d->pos,
                     "report message: %s runs past the end (%zu bytes)", what, d->len);
    d->bad = 1;
    return -1;
}

static int get(rd *d, void *out, size_t n, const char *what)
{
    if (d->bad || n > d->len - d->pos)
        return short_msg(d, what);
    memcpy(out, d->p + d->pos, n);
    d->pos += n;
    return 0;
}

static uint32_t get_u32(rd *d, const char *what)
{
    uint32_t v = 0;
    get(d, &v, sizeof v, what);
    return v;
}

/* A string in the report's arena (NULL for the NULL marker). */
static const char *get_str(rd *d, const char *what)
{
    uint32_t n = get_u32(d, what);
    if (d->bad || n == UINT32_MAX)
        return NULL;
    if (n > d->len - d->pos) {
        short_msg(d, what);
        return NULL;
    }
    const char *s = cp_arena_strndup(&d->r->arena, (const char *)d->p + d->pos, n);
    d->pos += n;
    return s;
}

static rep_node *node_of(rd *d, rep_node *parent, rep_type t, const char *key, const char *title,
                         const char *unit)
{
    switch (t) {
    case REP_OBJ: return rep_obj(d->r, parent, key, title);
    case REP_ARR: return rep_arr(d->r, parent, key, title);
    case REP_INT: return rep_int(d->r, parent, key, title, 0, unit);
    case REP_NUM: return rep_num(d->r, parent, key, title, 0, unit);
    case REP_STR: return rep_str(d->r, parent, key, title, "");
    case REP_BOOL: return rep_bool(d->r, parent, key, title, false);
    case REP_NULL: return rep_null(d->r, parent, key, title, unit);
    case REP_JSON: return rep_json(d->r, parent, key, "");
    }
    return NULL;
}

static rep_node *get_node(rd *d, rep_node *parent, int depth)
{
    unsigned char t = 0;
    if (get(d, &t, 1, "node type") < 0)
        return NULL;
    if (t > REP_JSON || depth > REP_WIRE_DEPTH) {
        cp_error_set(d->err, CP_ERR_FORMAT, NULL, 0, 0, (long long)d->pos, "report message: %s",
                     t > REP_JSON ? "unknown node type" : "nested too deep");
        d->bad = 1;
        return NULL;
    }
    uint32_t flags = get_u32(d, "flags");
    const char *key = get_str(d, "key"), *title = get_str(d, "title"), *unit = get_str(d, "unit");
    int digits = (int)get_u32(d, "digits");
    if (d->bad)
        return NULL;
    rep_node *n = node_of(d, parent, (rep_type)t, key, title, unit);
    n->unit = unit; /* as sent: constructors that take none leave it NULL */
    n->flags = flags;
    n->digits = digits;
    unsigned char b = 0;
    switch (n->type) {
    case REP_INT: get(d, &n->v.i, sizeof n->v.i, "integer"); break;
    case REP_NUM: get(d, &n->v.d, sizeof n->v.d, "number"); break;
    case REP_STR:
    case REP_JSON: n->v.s = get_str(d, "string"); break;
    case REP_BOOL: get(d, &b, 1, "bool"); n->v.b = b; break;
    default: break;
    }
    uint32_t nc = get_u32(d, "columns");
    if (!d->bad && nc > (d->len - d->pos) / 16) /* each column takes at least 16 bytes */
        short_msg(d, "columns");
    if (d->bad)
        return NULL;
    if (nc) {
        n->cols = CP_ANEWN(&d->r->arena, rep_col, nc);
        n->n_cols = nc;
        for (uint32_t i = 0; i < nc && !d->bad; i++) {
            n->cols[i].key = get_str(d, "column key");
            n->cols[i].title = get_str(d, "column title");
            n->cols[i].unit = get_str(d, "column unit");
            n->cols[i].digits = (int)get_u32(d, "column digits");
        }
    }
    uint32_t kids = get_u32(d, "children");
    for (uint32_t i = 0; i < kids && !d->bad; i++)
        get_node(d, n, depth + 1);
    return d->bad ? NULL : n;
}

int rep_wire_get(rep_report *r, rep_node *parent, const unsigned char *data, size_t len, size_t *pos,
                 rep_node **out, cp_error *err)
{
    rd d = { r, data, len, *pos, err, 0 };
    if (d.pos > len)
        return short_msg(&d, "start"), CP_ERR_FORMAT;
    rep_node *n = get_node(&d, parent, 0);
    if (!n)
        return CP_ERR_FORMAT;
    *pos = d.pos;
    if (out)
        *out = n;
    return 0;
}

static void append_child(rep_node *dst, rep_node *c)
{
    c->next = NULL;
    c->parent = dst;
    if (dst->type == REP_ARR)
        c->key = NULL;
    if (dst->last)
        dst->last->next = c;
    else
        dst->first = c;
    dst->last = c;
    dst->n_children++;
}

void rep_wire_merge(rep_node *dst, rep_node *src)
{
    if (dst->type != src->type || (dst->type != REP_OBJ && dst->type != REP_ARR))
        return;
    rep_node *c = src->first;
    while (c) {
        rep_node *next = c->next;
        rep_node *same = dst->type == REP_OBJ && c->key ? rep_child(dst, c->key) : NULL;
        if (same) {
            rep_wire_merge(same, c);
        } else {
            if (dst->type == REP_ARR && dst->n_children)
                dst->flags |= REP_F_MERGED;
            append_child(dst, c);
        }
        c = next;
    }
    src->first = src->last = NULL;
    src->n_children = 0;
}

typedef struct keyed {
    rep_node *n;
    int64_t k;
    size_t i;
    int has;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->has != y->has)
        return x->has ? -1 : 1;
    if (x->has && x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

void rep_sort_by_int(rep_node *arr, const char *key)
{
    if (!arr || arr->n_children < 2)
        return;
    keyed *v = cp_xcalloc(arr->n_children, sizeof *v);
    size_t n = 0;
    for (rep_node *c = arr->first; c; c = c->next, n++) {
        const rep_node *k = rep_child(c, key);
        v[n] = (keyed){ c, k && k->type == REP_INT ? k->v.i : 0, n, k && k->type == REP_INT };
    }
    qsort(v, n, sizeof *v, keyed_cmp);
    arr->first = arr->last = NULL;
    arr->n_children = 0;
    for (size_t i = 0; i < n; i++)
        append_child(arr, v[i].n);
    free(v);
}

void rep_sort_merged(rep_node *n, const char *key)
{
    for (rep_node *c = n->first; c; c = c->next)
        rep_sort_merged(c, key);
    if (n->flags & REP_F_MERGED) {
        n->flags &= ~REP_F_MERGED;
        rep_sort_by_int(n, key);
    }
}
