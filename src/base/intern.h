/* intern.h - string interning: equal strings get equal uint32 ids.
 *
 * Traces repeat a few thousand distinct names millions of times; the
 * timeline stores a 4-byte id per event instead of a pointer or a copy.
 * Id 0 is the empty string. Strings live in the table's arena and stay valid
 * until cp_intern_free. Open addressing with linear probing, power-of-two
 * capacity, resized at 50% load. Not thread-safe: each reader thread interns
 * into its own table and the timeline merge re-interns (cheap: one lookup per
 * distinct string, then a remap array).
 */
#ifndef CP_BASE_INTERN_H
#define CP_BASE_INTERN_H

#include "arena.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cp_intern {
    cp_arena arena;
    const char **strs; /* id -> NUL-terminated string */
    uint32_t *lens;    /* id -> length */
    uint64_t *hashes;  /* id -> hash */
    size_t n, cap_strs;
    uint32_t *slots;   /* hash slot -> id+1 (0 = empty) */
    size_t nslots;
} cp_intern;

void cp_intern_init(cp_intern *t);
void cp_intern_free(cp_intern *t);
uint32_t cp_intern_n(cp_intern *t, const char *s, size_t n);
uint32_t cp_intern_s(cp_intern *t, const char *s);
/* Lookup only; returns UINT32_MAX when absent. */
uint32_t cp_intern_find(const cp_intern *t, const char *s, size_t n);
static inline const char *cp_intern_str(const cp_intern *t, uint32_t id) { return t->strs[id]; }
static inline uint32_t cp_intern_len(const cp_intern *t, uint32_t id) { return t->lens[id]; }
static inline size_t cp_intern_count(const cp_intern *t) { return t->n; }

#endif
