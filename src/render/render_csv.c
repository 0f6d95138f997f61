/* render_csv.c - the report tree as CSV blocks (RFC 4180 quoting).
 *
 * First block "# values": every scalar outside tables as path,value,unit.
 * Then one block per table, "# <path>" followed by a header of column keys
 * and the rows. Values are raw (unscaled, unrounded): CSV is for machines. */
#include "render.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static void csv_str(cp_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        cp_buf_puts(b, s);
        return;
    }
    cp_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            cp_buf_putc(b, '"');
        cp_buf_putc(b, *s);
    }
    cp_buf_putc(b, '"');
}

static void csv_value(cp_buf *b, const rep_node *n)
{
    switch (n->type) {
    case REP_INT: cp_buf_printf(b, "%" PRId64, n->v.i); break;
    case REP_NUM:
        if (isfinite(n->v.d))
            cp_buf_printf(b, "%.17g", n->v.d);
        break;
    case REP_STR: csv_str(b, n->v.s); break;
    case REP_BOOL: cp_buf_puts(b, n->v.b ? "true" : "false"); break;
    default: break;
    }
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

static void tables(cp_buf *b, const rep_node *n, cp_buf *path)
{
    if (n->flags & REP_F_NO_CSV)
        return;
    if (n->type == REP_ARR && (n->flags & REP_F_TABLE)) {
        cp_buf_reset(path);
        path_of(path, n);
        cp_buf_printf(b, "\n# %s\n", cp_buf_str(path));
        for (size_t c = 0; c < n->n_cols; c++) {
            csv_str(b, n->cols[c].key);
            cp_buf_putc(b, c + 1 < n->n_cols ? ',' : '\n');
        }
        for (const rep_node *row = n->first; row; row = row->next) {
            for (const rep_node *x = row->first; x; x = x->next) {
                csv_value(b, x);
                cp_buf_putc(b, x->next ? ',' : '\n');
            }
        }
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
