/* render.c - the table of output formats and the shared value formatter. */
#include "render.h"
#include "../base/util.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

static const render_format formats[] = {
    { "text", ".txt", render_text },
    { "perfetto", ".perfetto.json", NULL }, /* needs the traces: analyze writes it (render_perfetto.h) */
    { "json", ".json", render_json },
    { "csv", ".csv", render_csv },
    { "html", ".html", render_html },
};

const render_format *render_find(const char *name)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(formats); i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

const render_format *render_for_path(const char *path)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(formats); i++)
        if (cp_str_ends(path, formats[i].extension))
            return &formats[i];
    return NULL;
}

const char *render_names(void) { return "text|json|csv|html|perfetto"; }

/* Time in ns, sizes in bytes, rates in bytes/s and work in FLOP (FLOP/s)
 * are scaled; everything else is shown as is. */
static void scaled(cp_buf *b, double v, const char *unit, int digits)
{
    static const struct { const char *unit; double div; const char *shown; } scales[] = {
        { "ns", 1e9, "s" }, { "ns", 1e6, "ms" }, { "ns", 1e3, "us" }, { "ns", 1, "ns" },
        { "bytes", 1e9, "GB" }, { "bytes", 1e6, "MB" }, { "bytes", 1e3, "KB" }, { "bytes", 1, "B" },
        { "bytes/s", 1e12, "TB/s" }, { "bytes/s", 1e9, "GB/s" }, { "bytes/s", 1e6, "MB/s" }, { "bytes/s", 1, "B/s" },
        { "FLOP", 1e12, "TFLOP" }, { "FLOP", 1e9, "GFLOP" }, { "FLOP", 1e6, "MFLOP" }, { "FLOP", 1, "FLOP" },
        { "FLOP/s", 1e12, "TFLOP/s" }, { "FLOP/s", 1e9, "GFLOP/s" }, { "FLOP/s", 1e6, "MFLOP/s" }, { "FLOP/s", 1, "FLOP/s" },
    };
    if (unit) {
        for (size_t i = 0; i < CP_ARRAY_LEN(scales); i++) {
            if (strcmp(unit, scales[i].unit) != 0)
                continue;
            if (fabs(v) >= scales[i].div || scales[i].div == 1) {
                double x = v / scales[i].div;
                if (scales[i].div == 1)
                    cp_buf_printf(b, "%.0f %s", x, scales[i].shown);
                else
                    cp_buf_printf(b, "%.*f %s", digits >= 0 ? digits : 3, x, scales[i].shown);
                return;
            }
        }
    }
    int d = digits >= 0 ? digits : (fabs(v) >= 100 ? 1 : 2);
    if (unit && strcmp(unit, "%") == 0)
        cp_buf_printf(b, "%.*f%%", d, v);
    else if (unit)
        cp_buf_printf(b, "%.*f %s", d, v, unit);
    else
        cp_buf_printf(b, "%.*f", d, v);
}

void render_value(cp_buf *b, const rep_node *n)
{
    switch (n->type) {
    case REP_INT:
        if (n->unit && (!strcmp(n->unit, "ns") || !strcmp(n->unit, "bytes")))
            scaled(b, (double)n->v.i, n->unit, n->digits);
        else if (n->unit)
            cp_buf_printf(b, "%" PRId64 " %s", n->v.i, n->unit);
        else
            cp_buf_printf(b, "%" PRId64, n->v.i);
        break;
    case REP_NUM:
        if (!isfinite(n->v.d))
            cp_buf_puts(b, "-");
        else
            scaled(b, n->v.d, n->unit, n->digits);
        break;
    case REP_STR: cp_buf_puts(b, n->v.s); break;
    case REP_BOOL: cp_buf_puts(b, n->v.b ? "yes" : "no"); break;
    case REP_NULL: cp_buf_puts(b, "-"); break;
    case REP_ARR: /* a list cell (e.g. step ids): its scalars, comma-separated */
        for (const rep_node *c = n->first; c; c = c->next) {
            if (c != n->first)
                cp_buf_putc(b, ',');
            if (c->type != REP_OBJ && c->type != REP_ARR)
                render_value(b, c);
        }
        break;
    default: break;
    }
}
