/* intern.c - see intern.h. */
#include "intern.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void rehash(cp_intern *t, size_t nslots)
{
    free(t->slots);
    t->slots = cp_xcalloc(nslots, sizeof *t->slots);
    t->nslots = nslots;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = t->hashes[id] & (nslots - 1);
        while (t->slots[i])
            i = (i + 1) & (nslots - 1);
        t->slots[i] = (uint32_t)id + 1;
    }
}

void cp_intern_init(cp_intern *t)
{
    memset(t, 0, sizeof *t);
    cp_arena_init(&t->arena);
    rehash(t, 256);
    cp_intern_n(t, "", 0);
}

void cp_intern_free(cp_intern *t)
{
    cp_arena_free(&t->arena);
    free(t->strs);
    free(t->lens);
    free(t->hashes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

uint32_t cp_intern_find(const cp_intern *t, const char *s, size_t n)
{
    uint64_t h = cp_hash64(s, n);
    size_t i = h & (t->nslots - 1);
    for (;;) {
        uint32_t v = t->slots[i];
        if (!v)
            return UINT32_MAX;
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->lens[id] == n && memcmp(t->strs[id], s, n) == 0)
            return id;
        i = (i + 1) & (t->nslots - 1);
    }
}

uint32_t cp_intern_n(cp_intern *t, const char *s, size_t n)
{
    uint64_t h = cp_hash64(s, n);
    size_t i = h & (t->nslots - 1);
    for (;;) {
        uint32_t v = t->slots[i];
        if (!v)
            break;
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->lens[id] == n && memcmp(t->strs[id], s, n) == 0)
            return id;
        i = (i + 1) & (t->nslots - 1);
    }
    if (t->n + 1 > t->cap_strs) {
        size_t cap = t->cap_strs;
        cp_xgrow((void **)&t->strs, &cap, t->n + 1, sizeof *t->strs);
        cap = t->cap_strs;
        cp_xgrow((void **)&t->lens, &cap, t->n + 1, sizeof *t->lens);
        cap = t->cap_strs;
        cp_xgrow((void **)&t->hashes, &cap, t->n + 1, sizeof *t->hashes);
        t->cap_strs = cap;
    }
    uint32_t id = (uint32_t)t->n++;
    t->strs[id] = cp_arena_strndup(&t->arena, s, n);
    t->lens[id] = (uint32_t)n;
    t->hashes[id] = h;
    t->slots[i] = id + 1;
    if (t->n * 2 > t->nslots)
        rehash(t, t->nslots * 2);
    return id;
}

uint32_t cp_intern_s(cp_intern *t, const char *s) { return cp_intern_n(t, s, strlen(s)); }
