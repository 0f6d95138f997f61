/* jsonw.h - streaming JSON writer with stable key order.
 *
 * Keys come out in the order the caller writes them, so output is stable
 * run to run. Doubles that are NaN or infinite are written as null (the
 * schema rule: unknown is null, never 0 or "nan"). Doubles use the shortest
 * "%.17g"-exact form only when needed: %.15g first and %.17g when that does
 * not round-trip. Output goes into a cp_buf owned by the caller.
 * Strings are escaped so the output is valid JSON whatever the input bytes
 * (control characters as \u00XX, ill-formed UTF-8 bytes as '?', counted).
 */
#ifndef CP_BASE_JSONW_H
#define CP_BASE_JSONW_H

#include "buf.h"

#include <stdbool.h>
#include <stdint.h>

#define CP_JW_MAX_DEPTH 64

typedef struct cp_jw {
    cp_buf *out;        /* borrowed */
    int depth;
    int indent;         /* spaces per level; 0 = compact */
    bool first[CP_JW_MAX_DEPTH];
    bool after_key;
    size_t n_replaced;  /* ill-formed UTF-8 bytes written as '?' */
} cp_jw;

void cp_jw_init(cp_jw *w, cp_buf *out, int indent);
void cp_jw_key(cp_jw *w, const char *key);
void cp_jw_obj_begin(cp_jw *w);
void cp_jw_obj_end(cp_jw *w);
void cp_jw_arr_begin(cp_jw *w);
void cp_jw_arr_end(cp_jw *w);
void cp_jw_str(cp_jw *w, const char *s);
void cp_jw_strn(cp_jw *w, const char *s, size_t n);
void cp_jw_int(cp_jw *w, int64_t v);
void cp_jw_uint(cp_jw *w, uint64_t v);
void cp_jw_double(cp_jw *w, double v);
void cp_jw_bool(cp_jw *w, bool v);
void cp_jw_null(cp_jw *w);
/* Insert already-valid JSON text as a value. */
void cp_jw_raw(cp_jw *w, const char *json, size_t n);

/* Append s as a JSON string literal (quotes included) to b. Output is
 * always valid UTF-8: each byte of s that is not part of a well-formed
 * UTF-8 sequence (RFC 3629) is written as '?'; returns how many were. */
size_t cp_json_escape(cp_buf *b, const char *s, size_t n);

#endif
