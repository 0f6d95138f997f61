/* jsonw.c - see jsonw.h. */
#include "jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_jw_init(cp_jw *w, cp_buf *out, int indent)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->indent = indent;
    w->first[0] = true;
}

static void newline(cp_jw *w)
{
    if (!w->indent)
        return;
    cp_buf_putc(w->out, '\n');
    cp_buf_fill(w->out, ' ', (size_t)(w->depth * w->indent));
}

/* Separator and indentation before a value or a key. */
static void before_item(cp_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth > 0) {
        if (!w->first[w->depth])
            cp_buf_putc(w->out, ',');
        newline(w);
    }
    w->first[w->depth] = false;
}

void cp_json_escape(cp_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    cp_buf_reserve(b, n + 2);
    cp_buf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        cp_buf_append(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': cp_buf_puts(b, "\\\""); break;
        case '\\': cp_buf_puts(b, "\\\\"); break;
        case '\n': cp_buf_puts(b, "\\n"); break;
        case '\r': cp_buf_puts(b, "\\r"); break;
        case '\t': cp_buf_puts(b, "\\t"); break;
        default: {
            char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
            cp_buf_puts(b, u);
        }
        }
    }
    cp_buf_append(b, s + run, n - run);
    cp_buf_putc(b, '"');
}

void cp_jw_key(cp_jw *w, const char *key)
{
    before_item(w);
    cp_json_escape(w->out, key, strlen(key));
    cp_buf_puts(w->out, w->indent ? ": " : ":");
    w->after_key = true;
}

static void open(cp_jw *w, char c)
{
    before_item(w);
    cp_buf_putc(w->out, c);
    if (w->depth + 1 < CP_JW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

static void close_(cp_jw *w, char c)
{
    bool empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty)
        newline(w);
    cp_buf_putc(w->out, c);
}

void cp_jw_obj_begin(cp_jw *w) { open(w, '{'); }
void cp_jw_obj_end(cp_jw *w) { close_(w, '}'); }
void cp_jw_arr_begin(cp_jw *w) { open(w, '['); }
void cp_jw_arr_end(cp_jw *w) { close_(w, ']'); }

void cp_jw_strn(cp_jw *w, const char *s, size_t n)
{
    before_item(w);
    cp_json_escape(w->out, s, n);
}

void cp_jw_str(cp_jw *w, const char *s)
{
    if (!s) {
        cp_jw_null(w);
        return;
    }
    cp_jw_strn(w, s, strlen(s));
}

void cp_jw_int(cp_jw *w, int64_t v)
{
    before_item(w);
    cp_buf_printf(w->out, "%" PRId64, v);
}

void cp_jw_uint(cp_jw *w, uint64_t v)
{
    before_item(w);
    cp_buf_printf(w->out, "%" PRIu64, v);
}

void cp_jw_double(cp_jw *w, double v)
{
    if (!isfinite(v)) {
        cp_jw_null(w);
        return;
    }
    before_item(w);
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        snprintf(tmp, sizeof tmp, "%.17g", v);
    /* keep it a JSON number that reads back as floating point */
    if (!strpbrk(tmp, ".eEn"))
        strcat(tmp, ".0");
    cp_buf_puts(w->out, tmp);
}

void cp_jw_bool(cp_jw *w, bool v)
{
    before_item(w);
    cp_buf_puts(w->out, v ? "true" : "false");
}

void cp_jw_null(cp_jw *w)
{
    before_item(w);
    cp_buf_puts(w->out, "null");
}

void cp_jw_raw(cp_jw *w, const char *json, size_t n)
{
    before_item(w);
    cp_buf_append(w->out, json, n);
}
