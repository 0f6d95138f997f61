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

/* Length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 if ill-formed. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t k;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        k = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        k = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return k;
}

size_t cp_json_escape(cp_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t replaced = 0;
    cp_buf_reserve(b, n + 2);
    cp_buf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t k = utf8_len((const unsigned char *)s + i, n - i);
            if (k) {
                i += k - 1;
                continue;
            }
            /* an ill-formed byte (input in another encoding, a name cut
             * in a fixed-size field): '?', so the output stays valid JSON;
             * one byte for one, so what is read back and written again
             * (topology JSON) fits the same fields and comes out the same */
            cp_buf_append(b, s + run, i - run);
            run = i + 1;
            cp_buf_putc(b, '?');
            replaced++;
            continue;
        }
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
    return replaced;
}

void cp_jw_key(cp_jw *w, const char *key)
{
    before_item(w);
    w->n_replaced += cp_json_escape(w->out, key, strlen(key));
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
    w->n_replaced += cp_json_escape(w->out, s, n);
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
