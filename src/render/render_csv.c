/* render_csv.c - the report tree as CSV blocks (RFC 4180 quoting).
 *
 * First block "# values": every scalar outside tables as path,value,unit.
 * Then one block per table, "# <path>" followed by a header of column keys
 * and the rows. Values are raw (unscaled, unrounded): CSV is for machines.
 *
 * A cell is looked up by its column's key, so a row with a missing or an
 * extra child never shifts its neighbours; keys a later analyzer adds to the
 * rows beyond the table's columns (an_layers adds per-step layers to the
 * steps table) become extra columns after them, in first-seen order. A cell
 * holding a list or an object (a straggler's steps) is one rule for every
 * table: its scalars joined with "; ", objects as key=value, nested keys
 * dotted ("host.exposed_ns=5; host.hidden_ns=0"). */
#include "render.h"

#include "../base/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A text cell. One that a spreadsheet would run as a formula (it starts
 * with = + - @, a tab or a carriage return: a kernel or file name from the
 * input can) is neutralised as OWASP's CSV-injection rule says: a leading
 * single quote, the whole cell quoted. Numbers are written by put_scalar and
 * never pass here, so a negative number stays a number. */
static void csv_str(cp_buf *b, const char *s)
{
    bool formula = s[0] && strchr("=+-@\t\r", s[0]);
    if (!formula && !strpbrk(s, ",\"\n\r")) {
        cp_buf_puts(b, s);
        return;
    }
    cp_buf_putc(b, '"');
    if (formula)
        cp_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '"')
            cp_buf_putc(b, '"');
        cp_buf_putc(b, *s);
    }
    cp_buf_putc(b, '"');
}

/* A scalar as text, unquoted; null (and NaN) is empty. */
static void put_scalar(cp_buf *b, const rep_node *n)
{
    switch (n->type) {
    case REP_INT: cp_buf_printf(b, "%" PRId64, n->v.i); break;
    case REP_NUM:
        if (isfinite(n->v.d))
            cp_buf_printf(b, "%.17g", n->v.d);
        break;
    case REP_STR:
    case REP_JSON: cp_buf_puts(b, n->v.s); break;
    case REP_BOOL: cp_buf_puts(b, n->v.b ? "true" : "false"); break;
    default: break;
    }
}

static void csv_value(cp_buf *b, const rep_node *n)
{
    if (n->type == REP_STR)
        csv_str(b, n->v.s);
    else if (n->type != REP_JSON)
        put_scalar(b, n);
}

/* Flatten a list or object cell into b (see the header): prefix is the
 * dotted key path inside the cell, "" at its top. */
static void flatten(cp_buf *b, const rep_node *n, const char *prefix, bool *first)
{
    if (n->type == REP_OBJ || n->type == REP_ARR) {
        for (const rep_node *c = n->first; c; c = c->next) {
            if (n->type == REP_OBJ && c->key) {
                size_t len = strlen(prefix) + strlen(c->key) + 2;
                char *sub = cp_xmalloc(len);
                snprintf(sub, len, "%s%s%s", prefix, prefix[0] ? "." : "", c->key);
                flatten(b, c, sub, first);
                free(sub);
            } else {
                flatten(b, c, prefix, first);
            }
        }
        return;
    }
    if (!*first)
        cp_buf_puts(b, "; ");
    *first = false;
    if (prefix[0])
        cp_buf_printf(b, "%s=", prefix);
    put_scalar(b, n);
}

static void csv_cell(cp_buf *b, const rep_node *n, cp_buf *tmp)
{
    if (!n)
        return;
    if (n->type != REP_OBJ && n->type != REP_ARR) {
        csv_value(b, n);
        return;
    }
    bool first = true;
    cp_buf_reset(tmp);
    flatten(tmp, n, "", &first);
    csv_str(b, cp_buf_str(tmp));
}

static void path_of(cp_buf *p, const rep_node *n)
{
    if (!n->parent)
        return;
    path_of(p, n->parent);
    if (p->len)
        cp_buf_putc(p, '.');
    if (n->key) {
        cp_buf_puts(p, n->key);
    } else {
        int i = 0;
        for (const rep_node *c = n->parent->first; c && c != n; c = c->next)
            i++;
        cp_buf_printf(p, "%d", i);
    }
}

static void scalars(cp_buf *b, const rep_node *n, cp_buf *path)
{
    if (n->flags & REP_F_NO_CSV)
        return;
    if (n->type == REP_OBJ || (n->type == REP_ARR && !(n->flags & REP_F_TABLE))) {
        for (const rep_node *c = n->first; c; c = c->next)
            scalars(b, c, path);
        return;
    }
    if (n->type == REP_ARR || n->type == REP_JSON)
        return;
    cp_buf_reset(path);
    path_of(path, n);
    csv_str(b, cp_buf_str(path));
    cp_buf_putc(b, ',');
    csv_value(b, n);
    cp_buf_putc(b, ',');
    csv_str(b, n->unit ? n->unit : "");
    cp_buf_putc(b, '\n');
}

static bool has_key(const char *const *keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

static void tables(cp_buf *b, const rep_node *n, cp_buf *path)
{
    if (n->flags & REP_F_NO_CSV)
        return;
    if (n->type == REP_ARR && (n->flags & REP_F_TABLE)) {
        cp_buf_reset(path);
        path_of(path, n);
        cp_buf_printf(b, "\n# %s\n", cp_buf_str(path));
        /* header: the columns, then keys the rows add (see the top) */
        size_t n_keys = 0, cap = n->n_cols;
        const char **keys = cp_xmalloc((cap ? cap : 1) * sizeof *keys);
        for (size_t c = 0; c < n->n_cols; c++)
            keys[n_keys++] = n->cols[c].key;
        for (const rep_node *row = n->first; row; row = row->next)
            for (const rep_node *x = row->first; x; x = x->next)
                if (x->key && !has_key(keys, n_keys, x->key)) {
                    cp_xgrow((void **)&keys, &cap, n_keys + 1, sizeof *keys);
                    keys[n_keys++] = x->key;
                }
        for (size_t c = 0; c < n_keys; c++) {
            csv_str(b, keys[c]);
            cp_buf_putc(b, c + 1 < n_keys ? ',' : '\n');
        }
        cp_buf tmp = CP_BUF_INIT;
        for (const rep_node *row = n->first; row; row = row->next)
            for (size_t c = 0; c < n_keys; c++) {
                csv_cell(b, rep_child(row, keys[c]), &tmp);
                cp_buf_putc(b, c + 1 < n_keys ? ',' : '\n');
            }
        cp_buf_free(&tmp);
        free(keys);
        return;
    }
    if (n->type == REP_OBJ || n->type == REP_ARR)
        for (const rep_node *c = n->first; c; c = c->next)
            tables(b, c, path);
}

int render_csv(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err)
{
    (void)o;
    (void)err;
    cp_buf path = CP_BUF_INIT;
    cp_buf_puts(out, "# values\npath,value,unit\n");
    scalars(out, r->root, &path);
    tables(out, r->root, &path);
    cp_buf_free(&path);
    return 0;
}
