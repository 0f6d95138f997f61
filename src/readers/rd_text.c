/* rd_text.c - line, field and number plumbing shared by the evidence readers.
 * See rd_text.h for the why. Everything works on views into the caller's
 * buffer; numbers are parsed from a bounded stack copy because strtod needs a
 * terminator and the buffer's lines have none. */
#include "rd_text.h"

#include "../base/buf.h"
#include "../base/src.h"
#include "../base/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <unistd.h>

void rd_note(diag_set *d, diag_code code, const char *name, uint32_t line)
{
    diag_count(d, code, name, line ? (long long)line : -1);
}

/* ---- lines ------------------------------------------------------------ */

void rd_lines_init(rd_lines *it, const char *data, size_t len)
{
    it->p = data;
    it->end = data ? data + len : data;
    it->lineno = 0;
}

int rd_lines_next(rd_lines *it, const char **line, size_t *len)
{
    if (!it->p)
        return 0;
    while (it->p < it->end && it->end - it->p >= 2 && it->p[0] == '#' && it->p[1] == '@') {
        const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
        it->p = nl ? nl + 1 : it->end;
        it->lineno++;
    }
    if (it->p >= it->end)
        return 0;
    const char *s = it->p;
    const char *nl = memchr(s, '\n', (size_t)(it->end - s));
    const char *e = nl ? nl : it->end;
    it->p = nl ? nl + 1 : it->end;
    size_t n = (size_t)(e - s);
    if (n > 0 && s[n - 1] == '\r')
        n--;
    it->lineno++;
    *line = s;
    *len = n;
    return 1;
}

void rd_each_line(const char *data, size_t len, rd_line_fn fn, void *ctx)
{
    rd_lines it;
    rd_lines_init(&it, data, len);
    const char *line;
    size_t n;
    while (rd_lines_next(&it, &line, &n))
        fn(ctx, line, n, it.lineno);
}

int rd_strip_launcher_tag(const char **line, size_t *len)
{
    const char *p = *line;
    size_t n = *len, i = 0;
    if (n > 2 && p[0] == '[') {
        /* "[job,rank]<stdout>:" or "<stderr>:" */
        const char *close = memchr(p, ']', n < 32 ? n : 32);
        if (close && (size_t)(close - p) + 1 < n && close[1] == '<') {
            const char *gt = memchr(close, '>', n - (size_t)(close - p));
            if (gt && (size_t)(gt - p) + 1 < n && gt[1] == ':') {
                i = (size_t)(gt - p) + 2;
                *line = p + i;
                *len = n - i;
                return 1;
            }
        }
        return 0;
    }
    while (i < n && i < 7 && p[i] >= '0' && p[i] <= '9')
        i++;
    if (i > 0 && i + 1 < n && p[i] == ':' && p[i + 1] == ' ') {
        *line = p + i + 2;
        *len = n - i - 2;
        return 1;
    }
    return 0;
}

/* ---- fields ----------------------------------------------------------- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int rd_split(const char *line, size_t len, rd_field *f, int max, int *truncated)
{
    int n = 0;
    size_t i = 0;
    if (truncated)
        *truncated = 0;
    while (i < len) {
        while (i < len && is_blank(line[i]))
            i++;
        if (i >= len)
            break;
        size_t s = i;
        while (i < len && !is_blank(line[i]))
            i++;
        if (n == max) {
            if (truncated)
                *truncated = 1;
            break;
        }
        f[n].p = line + s;
        f[n].len = (uint32_t)(i - s);
        f[n].col = (uint32_t)(s + 1);
        n++;
    }
    return n;
}

int rd_feq(const rd_field *f, const char *s)
{
    size_t n = strlen(s);
    return f->len == n && memcmp(f->p, s, n) == 0;
}

int rd_fieq(const rd_field *f, const char *s)
{
    size_t n = strlen(s);
    return f->len == n && strncasecmp(f->p, s, n) == 0;
}

/* ---- numbers ---------------------------------------------------------- */

/* NUL-terminated copy of a field for strtod/strtoll; -1 when empty or too
 * long to be a number. */
static int field_copy(char *tmp, size_t cap, const char *p, size_t n)
{
    if (n == 0 || n >= cap)
        return -1;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    return 0;
}

int rd_num(const char *p, size_t n, double *out)
{
    char tmp[64];
    if (field_copy(tmp, sizeof tmp, p, n) < 0)
        return -1;
    /* strtod accepts "inf", "nan" and hex floats; reports never print them
     * and a "nan" cell must not become a value. */
    for (size_t i = 0; i < n; i++) {
        char c = tmp[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' ||
              c == 'e' || c == 'E'))
            return -1;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(tmp, &end);
    if (end != tmp + n || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int rd_i64(const char *p, size_t n, int64_t *out)
{
    char tmp[32];
    if (field_copy(tmp, sizeof tmp, p, n) < 0)
        return -1;
    if (!((tmp[0] >= '0' && tmp[0] <= '9') || tmp[0] == '-' || tmp[0] == '+'))
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(tmp, &end, 10);
    if (end != tmp + n || errno == ERANGE)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int rd_d2int(double v, int dflt)
{
    return isfinite(v) && v >= (double)INT_MIN && v <= (double)INT_MAX ? (int)v : dflt;
}

int64_t rd_d2i64(double v, int64_t dflt)
{
    /* 2^63 is exactly representable; anything at or above it does not fit */
    return isfinite(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : dflt;
}

int rd_leading_int(const char *s, size_t n, int dflt)
{
    /* a line of a memory buffer is not NUL-terminated: copy the digits
     * first, never let strtol run past n */
    char tmp[32];
    size_t k = 0;
    while (k < n && k + 1 < sizeof tmp && (s[k] == ' ' || s[k] == '\t'))
        k++;
    size_t b = k;
    if (k < n && (s[k] == '-' || s[k] == '+'))
        k++;
    while (k < n && k + 1 < sizeof tmp && s[k] >= '0' && s[k] <= '9')
        k++;
    memcpy(tmp, s + b, k - b);
    tmp[k - b] = '\0';
    char *end;
    errno = 0;
    long v = strtol(tmp, &end, 10);
    if (end == tmp || errno == ERANGE || v < INT_MIN || v > INT_MAX)
        return dflt;
    return (int)v;
}

/* ---- strings ---------------------------------------------------------- */

void rd_trim(const char **p, size_t *n)
{
    while (*n > 0 && is_blank(**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n > 0 && is_blank((*p)[*n - 1]))
        (*n)--;
}

int rd_starts(const char *p, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(p, prefix, k) == 0;
}

const char *rd_find(const char *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    if (k == 0)
        return p;
    for (size_t i = 0; i + k <= n; i++)
        if (p[i] == needle[0] && memcmp(p + i, needle, k) == 0)
            return p + i;
    return NULL;
}

void rd_copy(char *dst, size_t cap, const char *p, size_t n)
{
    if (cap == 0)
        return;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(dst, p, n);
    dst[n] = '\0';
}

int rd_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t max)
{
    if (n + 1 > max)
        return -1;
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    if (nc > max)
        nc = max;
    *arr = cp_xrealloc(*arr, nc * elem);
    *cap = nc;
    return 0;
}

/* ---- files ------------------------------------------------------------ */

int rd_load_file(const char *path, char **data, size_t *len, cp_error *err)
{
    *data = NULL;
    *len = 0;
    cp_buf b = CP_BUF_INIT;
    int rc = cp_src_read_all(path, &b, RD_MAX_FILE_BYTES, err);
    if (rc < 0) {
        cp_buf_free(&b);
        return rc;
    }
    if (!b.data)
        cp_buf_reserve(&b, 1); /* an empty file still gives a NUL-terminated buffer */
    b.data[b.len] = '\0';
    *data = b.data; /* ownership passes to the caller: free() */
    *len = b.len;
    return 0;
}

int rd_which(const char *prog, char *out, size_t cap)
{
    const char *pathenv = getenv("PATH");
    for (const char *s = pathenv ? pathenv : ""; *s;) {
        size_t len = strcspn(s, ":");
        snprintf(out, cap, "%.*s/%s", (int)len, s, prog);
        if (len && access(out, X_OK) == 0)
            return 1;
        s += len + (s[len] == ':');
    }
    return 0;
}
