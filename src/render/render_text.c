/* render_text.c - the report tree for people.
 *
 * Objects become indented sections, scalars "title: value unit" lines,
 * tables aligned columns (numbers right, text left, long text cut with an
 * ellipsis at 64 characters; the JSON keeps it whole). Values are scaled for
 * reading (ns -> ms, bytes -> GB) by render_value, the one formatter. */
#include "render.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

#define CELL_MAX 64

static void indent(cp_buf *b, int depth) { cp_buf_fill(b, ' ', (size_t)depth * 2); }

static const char *label(const rep_node *n) { return n->title ? n->title : n->key ? n->key : ""; }

static bool is_scalar(const rep_node *n) { return n->type != REP_OBJ && n->type != REP_ARR && n->type != REP_JSON; }

static void cell_text(cp_buf *b, const rep_node *n)
{
    size_t start = b->len;
    render_value(b, n);
    if (b->len - start > CELL_MAX) {
        b->len = start + CELL_MAX - 3;
        cp_buf_puts(b, "...");
    }
}

static void table(cp_buf *b, const rep_node *t, int depth)
{
    size_t nc = t->n_cols;
    if (!t->first) {
        indent(b, depth);
        cp_buf_printf(b, "%s: (none)\n", label(t));
        return;
    }
    size_t *w = cp_xcalloc(nc, sizeof *w);
    bool *right = cp_xcalloc(nc, sizeof *right);
    cp_buf tmp = CP_BUF_INIT;
    for (size_t c = 0; c < nc; c++) {
        cp_buf_reset(&tmp);
        cp_buf_puts(&tmp, t->cols[c].title);
        w[c] = tmp.len;
    }
    for (const rep_node *row = t->first; row; row = row->next) {
        size_t c = 0;
        for (const rep_node *x = row->first; x && c < nc; x = x->next, c++) {
            cp_buf_reset(&tmp);
            cell_text(&tmp, x);
            w[c] = CP_MAX(w[c], tmp.len);
            if (x->type == REP_INT || x->type == REP_NUM)
                right[c] = true;
        }
    }
    indent(b, depth);
    cp_buf_printf(b, "%s\n", label(t));
    indent(b, depth + 1);
    for (size_t c = 0; c < nc; c++) {
        size_t len = strlen(t->cols[c].title);
        if (right[c])
            cp_buf_fill(b, ' ', w[c] - len);
        cp_buf_puts(b, t->cols[c].title);
        if (!right[c] && c + 1 < nc)
            cp_buf_fill(b, ' ', w[c] - len);
        cp_buf_puts(b, c + 1 < nc ? "  " : "\n");
    }
    for (const rep_node *row = t->first; row; row = row->next) {
        indent(b, depth + 1);
        size_t c = 0;
        for (const rep_node *x = row->first; x && c < nc; x = x->next, c++) {
            cp_buf_reset(&tmp);
            cell_text(&tmp, x);
            if (right[c])
                cp_buf_fill(b, ' ', w[c] - tmp.len);
            cp_buf_append(b, tmp.data, tmp.len);
            if (!right[c] && c + 1 < nc)
                cp_buf_fill(b, ' ', w[c] - tmp.len);
            if (c + 1 < nc)
                cp_buf_puts(b, "  ");
        }
        cp_buf_putc(b, '\n');
    }
    cp_buf_free(&tmp);
    free(w);
    free(right);
}

static void node(cp_buf *b, const rep_node *n, int depth, int index)
{
    if (n->flags & REP_F_NO_TEXT)
        return;
    if (is_scalar(n)) {
        indent(b, depth);
        if (n->key || n->title)
            cp_buf_printf(b, "%s: ", label(n));
        render_value(b, n);
        cp_buf_putc(b, '\n');
        return;
    }
    if (n->type == REP_ARR && (n->flags & REP_F_TABLE)) {
        table(b, n, depth);
        return;
    }
    if (n->type == REP_JSON)
        return;
    indent(b, depth);
    if (index >= 0)
        cp_buf_printf(b, "[%d]\n", index);
    else
        cp_buf_printf(b, "%s%s\n", label(n), n->type == REP_ARR && !n->first ? ": (none)" : "");
    int i = 0;
    for (const rep_node *c = n->first; c; c = c->next, i++)
        node(b, c, depth + 1, n->type == REP_ARR && !is_scalar(c) ? i : -1);
}

int render_text(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err)
{
    (void)o;
    (void)err;
    const rep_node *root = r->root;
    const rep_node *schema = rep_child(root, "schema");
    const rep_node *ver = rep_path(r, "tool.version");
    cp_buf_printf(out, "chainprof %s (%s)\n", ver && ver->type == REP_STR ? ver->v.s : "?",
                  schema && schema->type == REP_STR ? schema->v.s : "?");
    for (const rep_node *c = root->first; c; c = c->next) {
        if (c->key && (!strcmp(c->key, "schema") || !strcmp(c->key, "tool")))
            continue;
        node(out, c, 0, -1);
    }
    return 0;
}
