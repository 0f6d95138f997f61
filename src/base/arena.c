/* arena.c - see arena.h. */
#include "arena.h"
#include "util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct cp_arena_chunk {
    cp_arena_chunk *next;
    size_t size, used;
    max_align_t data[];
};

void cp_arena_init(cp_arena *a)
{
    memset(a, 0, sizeof *a);
    a->next_size = 4096;
}

void cp_arena_free(cp_arena *a)
{
    cp_arena_chunk *c = a->head;
    while (c) {
        cp_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->total_bytes = 0;
}

void *cp_arena_alloc(cp_arena *a, size_t size, size_t align)
{
    cp_arena_chunk *c = a->head;
    if (c) {
        size_t off = (c->used + align - 1) & ~(align - 1);
        if (off + size <= c->size) {
            c->used = off + size;
            return (char *)c->data + off;
        }
    }
    size_t want = size + align;
    size_t cs = a->next_size ? a->next_size : 4096;
    if (cs < want)
        cs = want;
    if (a->next_size < (16u << 20))
        a->next_size *= 2;
    c = cp_xmalloc(sizeof *c + cs);
    c->size = cs;
    c->used = 0;
    a->total_bytes += sizeof *c + cs;
    /* keep the fuller chunk out of the way only if the new one is a one-off */
    if (a->head && cs == want && a->head->size - a->head->used > 256) {
        c->next = a->head->next;
        a->head->next = c;
    } else {
        c->next = a->head;
        a->head = c;
    }
    size_t off = ((uintptr_t)c->data + align - 1) & ~(uintptr_t)(align - 1);
    off -= (uintptr_t)c->data;
    c->used = off + size;
    return (char *)c->data + off;
}

void *cp_arena_zalloc(cp_arena *a, size_t size)
{
    void *p = cp_arena_alloc(a, size, _Alignof(max_align_t));
    memset(p, 0, size);
    return p;
}

char *cp_arena_strndup(cp_arena *a, const char *s, size_t n)
{
    char *d = cp_arena_alloc(a, n + 1, 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *cp_arena_strdup(cp_arena *a, const char *s)
{
    return cp_arena_strndup(a, s, strlen(s));
}

char *cp_arena_printf(cp_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = cp_arena_alloc(a, (size_t)n + 1, 1);
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}
