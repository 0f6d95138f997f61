/* buf.c - see buf.h. */
#include "buf.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_buf_free(cp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void cp_buf_reset(cp_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = 0;
}

void cp_buf_reserve(cp_buf *b, size_t extra)
{
    cp_xgrow((void **)&b->data, &b->cap, b->len + extra + 1, 1);
}

void cp_buf_append(cp_buf *b, const void *data, size_t n)
{
    cp_buf_reserve(b, n);
    if (n) /* data may be NULL for an empty append (an empty array's elements) */
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = 0;
}

void cp_buf_puts(cp_buf *b, const char *s) { cp_buf_append(b, s, strlen(s)); }

void cp_buf_putc(cp_buf *b, char c)
{
    cp_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

void cp_buf_fill(cp_buf *b, char c, size_t n)
{
    cp_buf_reserve(b, n);
    memset(b->data + b->len, c, n);
    b->len += n;
    b->data[b->len] = 0;
}

void cp_buf_printf(cp_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        cp_buf_append(b, tmp, (size_t)n);
        return;
    }
    cp_buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *cp_buf_str(const cp_buf *b) { return b->data ? b->data : ""; }
