/* util.c - see util.h. */
#include "util.h"
#include "log.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t size)
{
    cp_log_error("out of memory allocating %zu bytes", size);
    abort();
}

void *cp_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        oom(size);
    return p;
}

void *cp_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *cp_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        oom(size);
    return q;
}

void cp_xgrow(void **p, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c += c / 2 + 8;
    if (c > SIZE_MAX / elem_size)
        oom(SIZE_MAX);
    *p = cp_xrealloc(*p, c * elem_size);
    *cap = c;
}

char *cp_xstrdup(const char *s)
{
    return cp_xstrndup(s, strlen(s));
}

char *cp_xstrndup(const char *s, size_t n)
{
    char *d = cp_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

int64_t cp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool cp_str_ieq(const char *a, const char *b)
{
    return strcasecmp(a, b) == 0;
}

bool cp_str_istarts(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

const char *cp_str_icontains(const char *hay, const char *needle)
{
    return strcasestr(hay, needle);
}

bool cp_str_ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int cp_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
