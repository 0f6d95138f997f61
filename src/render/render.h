/* render.h - writers of the report model.
 *
 * Each writer turns a rep_report into bytes and knows nothing about where
 * the numbers came from. How to add a format: write render_<fmt>.c with a
 * function of type render_fn, add one row to the table in render.c, and
 * describe it in docs/FORMATS.md.
 */
#ifndef CP_RENDER_RENDER_H
#define CP_RENDER_RENDER_H

#include "../base/buf.h"
#include "../base/error.h"
#include "../model/report.h"

#include <stdbool.h>

typedef struct render_opts {
    bool color;       /* ANSI colour in text (TTY and no NO_COLOR only) */
    int width;        /* text width hint, 0 = 100 */
} render_opts;

typedef int (*render_fn)(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err);

typedef struct render_format {
    const char *name;      /* --format value */
    const char *extension; /* for -o FILE detection, with the dot */
    render_fn fn;          /* NULL: a format that needs more than the report (perfetto:
                            * the traces too), written by the command that has it */
} render_format;

/* NULL when unknown. */
const render_format *render_find(const char *name);
/* Format for an output path by its extension; NULL when none matches. */
const render_format *render_for_path(const char *path);
/* "text|json|csv|html|perfetto" for help texts. */
const char *render_names(void);

int render_text(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err);
int render_json(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err);
int render_csv(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err);
int render_html(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err);

/* One report node as JSON into w (its key first when it has one): the one
 * JSON form of the report, for writers that embed part of it. */
struct cp_jw;
void render_json_node(struct cp_jw *w, const rep_node *n);

/* Shared by writers: display a number with its unit scaled for people
 * ("12.3 ms" from ns, "1.50 GB" from bytes). */
void render_value(cp_buf *b, const rep_node *n);

#endif
