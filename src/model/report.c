/* report.c - see report.h. */
#include "report.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHAINPROF_VERSION
#define CHAINPROF_VERSION "0.0.0"
#endif

static const char *dup(rep_report *r, const char *s)
{
    return s ? cp_arena_strdup(&r->arena, s) : NULL;
}

static rep_node *add(rep_report *r, rep_node *parent, rep_type t, const char *key, const char *title,
                     const char *unit)
{
    rep_node *n = CP_ANEW(&r->arena, rep_node);
    n->type = t;
    n->key = parent && parent->type == REP_ARR ? NULL : dup(r, key);
    n->title = dup(r, title);
    n->unit = dup(r, unit);
    n->digits = -1;
    if (parent) {
        n->parent = parent;
        if (parent->last)
            parent->last->next = n;
        else
            parent->first = n;
        parent->last = n;
        parent->n_children++;
    }
    return n;
}

rep_report *rep_new(const char *schema, int argc, char **argv)
{
    rep_report *r = cp_xcalloc(1, sizeof *r);
    cp_arena_init(&r->arena);
    r->root = add(r, NULL, REP_OBJ, NULL, NULL, NULL);
    rep_str(r, r->root, "schema", "schema", schema);
    rep_node *tool = rep_obj(r, r->root, "tool", "tool");
    rep_str(r, tool, "name", "name", "chainprof");
    rep_str(r, tool, "version", "version", CHAINPROF_VERSION);
    rep_node *cmd = rep_arr(r, r->root, "command", "command");
    for (int i = 0; i < argc; i++)
        rep_str(r, cmd, NULL, NULL, argv[i]);
    cmd->flags |= REP_F_NO_TEXT;
    return r;
}

void rep_free(rep_report *r)
{
    if (!r)
        return;
    cp_arena_free(&r->arena);
    free(r);
}

rep_node *rep_obj(rep_report *r, rep_node *parent, const char *key, const char *title)
{
    return add(r, parent, REP_OBJ, key, title, NULL);
}

rep_node *rep_arr(rep_report *r, rep_node *parent, const char *key, const char *title)
{
    return add(r, parent, REP_ARR, key, title, NULL);
}

rep_node *rep_int(rep_report *r, rep_node *parent, const char *key, const char *title, int64_t v,
                  const char *unit)
{
    rep_node *n = add(r, parent, REP_INT, key, title, unit);
    n->v.i = v;
    return n;
}

rep_node *rep_num(rep_report *r, rep_node *parent, const char *key, const char *title, double v,
                  const char *unit)
{
    rep_node *n = add(r, parent, REP_NUM, key, title, unit);
    n->v.d = v;
    return n;
}

rep_node *rep_str(rep_report *r, rep_node *parent, const char *key, const char *title, const char *s)
{
    if (!s)
        return rep_null(r, parent, key, title, NULL);
    rep_node *n = add(r, parent, REP_STR, key, title, NULL);
    n->v.s = dup(r, s);
    return n;
}

rep_node *rep_bool(rep_report *r, rep_node *parent, const char *key, const char *title, bool b)
{
    rep_node *n = add(r, parent, REP_BOOL, key, title, NULL);
    n->v.b = b;
    return n;
}

rep_node *rep_null(rep_report *r, rep_node *parent, const char *key, const char *title, const char *unit)
{
    return add(r, parent, REP_NULL, key, title, unit);
}

rep_node *rep_json(rep_report *r, rep_node *parent, const char *key, const char *json)
{
    rep_node *n = add(r, parent, REP_JSON, key, NULL, NULL);
    n->v.s = dup(r, json);
    n->flags |= REP_F_NO_TEXT | REP_F_NO_CSV;
    return n;
}

rep_node *rep_table(rep_report *r, rep_node *parent, const char *key, const char *title,
                    const rep_col *cols, size_t n_cols)
{
    rep_node *t = add(r, parent, REP_ARR, key, title, NULL);
    t->flags |= REP_F_TABLE;
    t->cols = CP_ANEWN(&r->arena, rep_col, n_cols ? n_cols : 1);
    for (size_t i = 0; i < n_cols; i++) {
        t->cols[i].key = dup(r, cols[i].key);
        t->cols[i].title = dup(r, cols[i].title ? cols[i].title : cols[i].key);
        t->cols[i].unit = dup(r, cols[i].unit);
        t->cols[i].digits = cols[i].digits;
    }
    t->n_cols = n_cols;
    return t;
}

rep_node *rep_row(rep_report *r, rep_node *table)
{
    return add(r, table, REP_OBJ, NULL, NULL, NULL);
}

/* The column a new cell of `row` belongs to. */
static const rep_col *next_col(const rep_node *row)
{
    const rep_node *t = row->parent;
    if (!t || !(t->flags & REP_F_TABLE) || row->n_children >= t->n_cols)
        return NULL;
    return &t->cols[row->n_children];
}

static rep_node *cell(rep_report *r, rep_node *row, rep_type type)
{
    const rep_col *c = next_col(row);
    rep_node *n = add(r, row, type, c ? c->key : "?", c ? c->title : NULL, c ? c->unit : NULL);
    if (c)
        n->digits = c->digits;
    return n;
}

void rep_cell_int(rep_report *r, rep_node *row, int64_t v) { cell(r, row, REP_INT)->v.i = v; }
void rep_cell_num(rep_report *r, rep_node *row, double v) { cell(r, row, REP_NUM)->v.d = v; }
void rep_cell_str(rep_report *r, rep_node *row, const char *s)
{
    if (!s) {
        cell(r, row, REP_NULL);
        return;
    }
    cell(r, row, REP_STR)->v.s = dup(r, s);
}
void rep_cell_null(rep_report *r, rep_node *row) { cell(r, row, REP_NULL); }
void rep_cell_bool(rep_report *r, rep_node *row, bool b) { cell(r, row, REP_BOOL)->v.b = b; }

rep_node *rep_child(const rep_node *obj, const char *key)
{
    if (!obj)
        return NULL;
    for (rep_node *c = obj->first; c; c = c->next)
        if (c->key && strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

static void unlink_child(rep_node *obj, rep_node *c)
{
    rep_node *prev = NULL;
    for (rep_node *x = obj->first; x && x != c; x = x->next)
        prev = x;
    if (prev)
        prev->next = c->next;
    else
        obj->first = c->next;
    if (obj->last == c)
        obj->last = prev;
    c->next = NULL;
}

bool rep_move_after(rep_node *obj, const char *key, const char *after)
{
    rep_node *c = rep_child(obj, key);
    rep_node *a = after ? rep_child(obj, after) : NULL;
    if (!c || (after && !a) || c == a)
        return false;
    unlink_child(obj, c);
    if (a) {
        c->next = a->next;
        a->next = c;
        if (obj->last == a)
            obj->last = c;
    } else {
        c->next = obj->first;
        obj->first = c;
        if (!obj->last)
            obj->last = c;
    }
    return true;
}

rep_node *rep_path(const rep_report *r, const char *path)
{
    rep_node *n = r->root;
    char seg[256];
    while (n && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof seg)
            return NULL;
        memcpy(seg, path, len);
        seg[len] = 0;
        path += len + (path[len] == '.');
        if (n->type == REP_ARR) {
            char *end;
            long idx = strtol(seg, &end, 10);
            if (*end || idx < 0)
                return NULL;
            rep_node *c = n->first;
            while (c && idx-- > 0)
                c = c->next;
            n = c;
        } else {
            n = rep_child(n, seg);
        }
    }
    return n;
}

rep_node *rep_input(rep_report *r, const char *path, const char *kind, uint64_t bytes)
{
    rep_node *inputs = rep_child(r->root, "inputs");
    if (!inputs)
        inputs = rep_arr(r, r->root, "inputs", "inputs");
    rep_node *o = rep_obj(r, inputs, NULL, NULL);
    rep_str(r, o, "path", "path", path);
    rep_str(r, o, "kind", "kind", kind);
    rep_int(r, o, "size_bytes", "size", (int64_t)bytes, "bytes");
    return o;
}

void rep_diagnostics(rep_report *r, const diag_set *d)
{
    rep_node *o = rep_obj(r, r->root, "diagnostics", "diagnostics");
    rep_int(r, o, "total", "damaged or skipped input items", (int64_t)diag_total(d), NULL);
    static const rep_col cols[] = {
        { "code", "code", NULL, -1 },
        { "count", "count", NULL, -1 },
        { "first", "first at", NULL, -1 },
        { "description", "meaning", NULL, -1 },
    };
    rep_node *t = rep_table(r, o, "codes", "by code", cols, CP_ARRAY_LEN(cols));
    for (int c = 0; c < DIAG__COUNT; c++) {
        if (!d->count[c])
            continue;
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, diag_key((diag_code)c));
        rep_cell_int(r, row, (int64_t)d->count[c]);
        rep_cell_str(r, row, d->first[c][0] ? d->first[c] : NULL);
        rep_cell_str(r, row, diag_desc((diag_code)c));
    }
}
