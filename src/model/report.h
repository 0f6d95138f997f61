/* report.h - what we conclude: one typed tree every writer renders.
 *
 * fio's lesson: one statistics model, several output formats, nothing
 * formatted in two places. A report is a tree of nodes. Objects and arrays
 * nest; leaves are typed (int, number, string, bool, null) and carry a key
 * (the JSON name, snake_case with its unit), a title (for people) and a unit.
 * A table is an array of row objects plus column metadata, so JSON renders it
 * as an array of objects, text as an aligned table and CSV as CSV. Because
 * text is rendered from the same nodes, every number shown in text exists in
 * the JSON.
 *
 * Rules the writers rely on:
 * - NaN numbers mean unknown and render as null / "-".
 * - Order is insertion order (stable output).
 * - Percentages are stored unrounded; renderers round for display only.
 *
 * Ownership: every node and string lives in the report's arena; strings
 * passed in are copied. rep_free releases everything.
 */
#ifndef CP_MODEL_REPORT_H
#define CP_MODEL_REPORT_H

#include "../base/arena.h"
#include "diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum rep_type {
    REP_OBJ, REP_ARR, REP_INT, REP_NUM, REP_STR, REP_BOOL, REP_NULL, REP_JSON /* raw JSON text */
} rep_type;

/* Node flags */
#define REP_F_TABLE 0x01u     /* REP_ARR whose elements are rows (see rep_table) */
#define REP_F_NO_TEXT 0x02u   /* omitted by the text writer (bulky JSON-only detail,
                                 e.g. per-event lists; never a headline number) */
#define REP_F_NO_CSV 0x04u

typedef struct rep_col {
    const char *key, *title, *unit;
    int digits; /* decimals shown in text for numbers; -1 = automatic */
} rep_col;

typedef struct rep_node rep_node;
struct rep_node {
    rep_type type;
    uint32_t flags;
    const char *key;   /* NULL for array elements */
    const char *title; /* NULL: text uses the key */
    const char *unit;  /* NULL: none */
    int digits;        /* text decimals for REP_NUM; -1 automatic */
    union {
        int64_t i;
        double d;
        const char *s;
        bool b;
    } v;
    rep_node *first, *last, *next, *parent;
    size_t n_children;
    /* tables */
    rep_col *cols;
    size_t n_cols;
};

typedef struct rep_report {
    cp_arena arena;
    rep_node *root;
} rep_report;

/* Create a report whose root object starts with the envelope every command
 * shares: schema, tool {name, version}, command [argv]. */
rep_report *rep_new(const char *schema, int argc, char **argv);
void rep_free(rep_report *r);

rep_node *rep_obj(rep_report *r, rep_node *parent, const char *key, const char *title);
rep_node *rep_arr(rep_report *r, rep_node *parent, const char *key, const char *title);
rep_node *rep_int(rep_report *r, rep_node *parent, const char *key, const char *title, int64_t v,
                  const char *unit);
rep_node *rep_num(rep_report *r, rep_node *parent, const char *key, const char *title, double v,
                  const char *unit);
rep_node *rep_str(rep_report *r, rep_node *parent, const char *key, const char *title, const char *s);
rep_node *rep_bool(rep_report *r, rep_node *parent, const char *key, const char *title, bool b);
rep_node *rep_null(rep_report *r, rep_node *parent, const char *key, const char *title, const char *unit);
rep_node *rep_json(rep_report *r, rep_node *parent, const char *key, const char *json);

/* Tables. cols is copied. Add rows with rep_row, then cells in column order
 * with rep_cell_* (the cell takes its key/unit from the column). */
rep_node *rep_table(rep_report *r, rep_node *parent, const char *key, const char *title,
                    const rep_col *cols, size_t n_cols);
rep_node *rep_row(rep_report *r, rep_node *table);
void rep_cell_int(rep_report *r, rep_node *row, int64_t v);
void rep_cell_num(rep_report *r, rep_node *row, double v);
void rep_cell_str(rep_report *r, rep_node *row, const char *s);
void rep_cell_null(rep_report *r, rep_node *row);
void rep_cell_bool(rep_report *r, rep_node *row, bool b);

/* Move obj's child `key` to just after its child `after` (to the front when
 * after is NULL). Order is what text readers meet first; JSON consumers
 * read by key. Returns false when either child is missing. */
bool rep_move_after(rep_node *obj, const char *key, const char *after);

/* Lookup a direct child by key (NULL if none). */
rep_node *rep_child(const rep_node *obj, const char *key);
/* Lookup by a dotted path from the root, e.g. "ranks.0.temporal.idle_pct". */
rep_node *rep_path(const rep_report *r, const char *path);

/* Standard subtrees. */
/* inputs[]: one entry per input file. */
rep_node *rep_input(rep_report *r, const char *path, const char *kind, uint64_t bytes);
/* diagnostics: {total, codes: {key: {count, first, description}}} from a diag_set. */
void rep_diagnostics(rep_report *r, const diag_set *d);

#endif
