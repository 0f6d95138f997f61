/* render_json.c - the report tree as JSON (2-space indent, stable order).
 * Numbers are unrounded; NaN is null; tables are arrays of row objects. */
#include "render.h"
#include "../base/jsonw.h"
#include "../base/log.h"

#include <string.h>

void render_json_node(cp_jw *w, const rep_node *n)
{
    if (n->key)
        cp_jw_key(w, n->key);
    switch (n->type) {
    case REP_OBJ:
        cp_jw_obj_begin(w);
        for (const rep_node *c = n->first; c; c = c->next)
            render_json_node(w, c);
        cp_jw_obj_end(w);
        break;
    case REP_ARR:
        cp_jw_arr_begin(w);
        for (const rep_node *c = n->first; c; c = c->next)
            render_json_node(w, c);
        cp_jw_arr_end(w);
        break;
    case REP_INT: cp_jw_int(w, n->v.i); break;
    case REP_NUM: cp_jw_double(w, n->v.d); break;
    case REP_STR: cp_jw_str(w, n->v.s); break;
    case REP_BOOL: cp_jw_bool(w, n->v.b); break;
    case REP_NULL: cp_jw_null(w); break;
    case REP_JSON: cp_jw_raw(w, n->v.s, strlen(n->v.s)); break;
    }
}

int render_json(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err)
{
    (void)o;
    (void)err;
    cp_jw w;
    cp_jw_init(&w, out, 2);
    render_json_node(&w, r->root);
    cp_buf_putc(out, '\n');
    if (w.n_replaced)
        cp_log_warn_once("json-utf8", "%zu byte%s of the inputs' strings %s not valid UTF-8; written as '?'",
                         w.n_replaced, w.n_replaced == 1 ? "" : "s", w.n_replaced == 1 ? "was" : "were");
    return 0;
}
