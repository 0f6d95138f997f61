/* rep_wire.c - report subtrees as bytes (see rep_wire.h).
 *
 * Design
 * - The encoding is the node tree itself, depth first: type, flags, key,
 *   title, unit, digits, value, the table's columns, then the children
 *   count and the children. Integers are varints (zigzag when signed: the
 *   timeline's extras encoding, tl_extras.h), doubles their 8 bytes in the
 *   host's order, so every process of one job must run the same build on
 *   the same architecture (mpirun of one binary does).
 * - Strings go through a dictionary shared by the message: a reference is
 *   a varint, 0 NULL, 1 a new string (length, bytes) that takes the next
 *   index, k >= 2 the string of index k - 2 (index 0 is ""). The keys,
 *   titles and units of every rank's objects are the same few hundred
 *   strings, so a message costs about what its numbers do (bench_scale.sh
 *   prints the bytes per rank).
 * - Decoding rebuilds the nodes through report.c's own constructors, so a
 *   decoded subtree is the tree the sender had: every writer renders it
 *   identically, which the MPI test checks field by field.
 * - Decoding checks every length against the message and nests at most
 *   REP_WIRE_DEPTH levels: the bytes come from our own processes, but a
 *   short or corrupted message must be an error, not a crash.
 */
#include "rep_wire.h"

#include "../base/util.h"
#include "tl_extras.h"

#include <stdlib.h>
#include <string.h>

#define REP_WIRE_DEPTH 64

void rep_wire_enc_init(rep_wire_enc *e, cp_buf *b)
{
    e->b = b;
    cp_intern_init(&e->dict);
}

void rep_wire_enc_free(rep_wire_enc *e) { cp_intern_free(&e->dict); }

static void put_u(rep_wire_enc *e, uint64_t v)
{
    uint8_t tmp[10];
    cp_buf_append(e->b, tmp, (size_t)(tlx_put_u(tmp, v) - tmp));
}

static void put_s(rep_wire_enc *e, int64_t v)
{
    uint8_t tmp[10];
    cp_buf_append(e->b, tmp, (size_t)(tlx_put_s(tmp, v) - tmp));
}

static void put_str(rep_wire_enc *e, const char *s)
{
    if (!s) {
        put_u(e, 0);
        return;
    }
    size_t n = strlen(s);
    uint32_t id = cp_intern_find(&e->dict, s, n);
    if (id != UINT32_MAX) {
        put_u(e, (uint64_t)id + 2);
        return;
    }
    cp_intern_n(&e->dict, s, n); /* the next index, as the decoder counts */
    put_u(e, 1);
    put_u(e, n);
    cp_buf_append(e->b, s, n);
}

void rep_wire_put(rep_wire_enc *e, const rep_node *n)
{
    unsigned char t = (unsigned char)n->type;
    cp_buf_append(e->b, &t, 1);
    put_u(e, n->flags);
    put_str(e, n->key);
    put_str(e, n->title);
    put_str(e, n->unit);
    put_s(e, n->digits);
    switch (n->type) {
    case REP_INT: put_s(e, n->v.i); break;
    case REP_NUM: cp_buf_append(e->b, &n->v.d, sizeof n->v.d); break;
    case REP_STR:
    case REP_JSON: put_str(e, n->v.s); break;
    case REP_BOOL: put_u(e, n->v.b); break;
    default: break;
    }
    put_u(e, n->n_cols);
    for (size_t i = 0; i < n->n_cols; i++) {
        put_str(e, n->cols[i].key);
        put_str(e, n->cols[i].title);
        put_str(e, n->cols[i].unit);
        put_s(e, n->cols[i].digits);
    }
    put_u(e, n->n_children);
    for (const rep_node *c = n->first; c; c = c->next)
        rep_wire_put(e, c);
}

void rep_wire_dec_init(rep_wire_dec *d, const void *data, size_t len)
{
    memset(d, 0, sizeof *d);
    d->p = data;
    d->len = len;
}

void rep_wire_dec_free(rep_wire_dec *d)
{
    free(d->dict);
    d->dict = NULL;
    d->n_dict = d->cap_dict = 0;
}

typedef struct rd {
    rep_report *r;
    rep_wire_dec *d;
    size_t pos;
    cp_error *err;
    int bad;
} rd;

static int bad_msg(rd *x, const char *what)
{
    if (!x->bad)
        cp_error_set(x->err, CP_ERR_FORMAT, NULL, 0, 0, (long long)x->pos, "report message: damaged %s (%zu bytes)",
                     what, x->d->len);
    x->bad = 1;
    return -1;
}

static uint64_t get_u(rd *x, const char *what)
{
    uint64_t v = 0;
    for (unsigned s = 0; !x->bad; s += 7) {
        if (x->pos >= x->d->len || s > 63) {
            bad_msg(x, what);
            return 0;
        }
        unsigned char c = x->d->p[x->pos++];
        v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            break;
    }
    return v;
}

static int64_t get_s(rd *x, const char *what)
{
    uint64_t u = get_u(x, what);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static const char *get_str(rd *x, const char *what)
{
    rep_wire_dec *d = x->d;
    if (!d->n_dict) { /* index 0 is "", as in the encoder's table */
        cp_xgrow((void **)&d->dict, &d->cap_dict, 1, sizeof *d->dict);
        d->dict[d->n_dict++] = "";
    }
    uint64_t ref = get_u(x, what);
    if (x->bad || ref == 0)
        return NULL;
    if (ref >= 2) {
        if (ref - 2 >= d->n_dict)
            return bad_msg(x, what), NULL;
        return d->dict[ref - 2];
    }
    uint64_t n = get_u(x, what);
    if (x->bad || n > d->len - x->pos)
        return bad_msg(x, what), NULL;
    const char *s = cp_arena_strndup(&x->r->arena, (const char *)d->p + x->pos, (size_t)n);
    x->pos += (size_t)n;
    cp_xgrow((void **)&d->dict, &d->cap_dict, d->n_dict + 1, sizeof *d->dict);
    d->dict[d->n_dict++] = s;
    return s;
}

static rep_node *node_of(rd *x, rep_node *parent, rep_type t, const char *key, const char *title,
                         const char *unit)
{
    switch (t) {
    case REP_OBJ: return rep_obj(x->r, parent, key, title);
    case REP_ARR: return rep_arr(x->r, parent, key, title);
    case REP_INT: return rep_int(x->r, parent, key, title, 0, unit);
    case REP_NUM: return rep_num(x->r, parent, key, title, 0, unit);
    case REP_STR: return rep_str(x->r, parent, key, title, "");
    case REP_BOOL: return rep_bool(x->r, parent, key, title, false);
    case REP_NULL: return rep_null(x->r, parent, key, title, unit);
    case REP_JSON: return rep_json(x->r, parent, key, "");
    }
    return NULL;
}

/* A node's own fields into a new node under parent (NULL on damage). */
static rep_node *get_head(rd *x, rep_node *parent, int depth)
{
    if (x->pos >= x->d->len)
        return bad_msg(x, "node type"), NULL;
    unsigned char t = x->d->p[x->pos++];
    if (t > REP_JSON || depth > REP_WIRE_DEPTH)
        return bad_msg(x, t > REP_JSON ? "node type" : "nesting (too deep)"), NULL;
    uint32_t flags = (uint32_t)get_u(x, "flags");
    const char *key = get_str(x, "key"), *title = get_str(x, "title"), *unit = get_str(x, "unit");
    int digits = (int)get_s(x, "digits");
    if (x->bad)
        return NULL;
    /* the strings are the dictionary's, already in the report's arena:
     * nodes point at them instead of copying each (rank 0 holds every
     * rank's objects, the same few hundred keys and titles thousands of
     * times over) */
    rep_node *n = node_of(x, parent, (rep_type)t, NULL, NULL, NULL);
    n->key = parent && parent->type == REP_ARR ? NULL : key;
    n->title = title;
    n->unit = unit;
    n->flags = flags;
    n->digits = digits;
    switch (n->type) {
    case REP_INT: n->v.i = get_s(x, "integer"); break;
    case REP_NUM:
        if (sizeof n->v.d > x->d->len - x->pos)
            return bad_msg(x, "number"), NULL;
        memcpy(&n->v.d, x->d->p + x->pos, sizeof n->v.d);
        x->pos += sizeof n->v.d;
        break;
    case REP_STR:
    case REP_JSON: n->v.s = get_str(x, "string"); break;
    case REP_BOOL: n->v.b = get_u(x, "bool") != 0; break;
    default: break;
    }
    if (!x->bad && (n->type == REP_STR || n->type == REP_JSON) && !n->v.s)
        bad_msg(x, "string");
    return x->bad ? NULL : n;
}

static rep_node *get_node(rd *x, rep_node *parent, int depth)
{
    rep_node *n = get_head(x, parent, depth);
    if (!n)
        return NULL;
    uint64_t nc = get_u(x, "columns");
    if (!x->bad && nc > (x->d->len - x->pos) / 4) /* a column takes at least 4 bytes */
        bad_msg(x, "columns");
    if (x->bad)
        return NULL;
    if (nc) {
        n->cols = CP_ANEWN(&x->r->arena, rep_col, nc);
        n->n_cols = (size_t)nc;
        for (uint64_t i = 0; i < nc && !x->bad; i++) {
            n->cols[i].key = get_str(x, "column key");
            n->cols[i].title = get_str(x, "column title");
            n->cols[i].unit = get_str(x, "column unit");
            n->cols[i].digits = (int)get_s(x, "column digits");
        }
    }
    uint64_t kids = get_u(x, "children");
    if (!x->bad && kids > x->d->len - x->pos) /* a node takes at least 1 byte */
        bad_msg(x, "children");
    for (uint64_t i = 0; i < kids && !x->bad; i++)
        get_node(x, n, depth + 1);
    return x->bad ? NULL : n;
}

int rep_wire_get(rep_report *r, rep_node *parent, rep_wire_dec *d, rep_node **out, cp_error *err)
{
    rd x = { r, d, d->pos, err, 0 };
    size_t n_dict = d->n_dict;
    rep_node *n = get_node(&x, parent, 0);
    if (!n) {
        d->n_dict = n_dict < d->n_dict ? n_dict : d->n_dict; /* strings of the damaged part are not met */
        return CP_ERR_FORMAT;
    }
    d->pos = x.pos;
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
