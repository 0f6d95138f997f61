/* arena.h - bump allocator: many small objects, one free.
 *
 * Models (timeline strings, report nodes) allocate from an arena and are
 * freed all at once; nothing allocated here is freed individually. Chunks
 * grow geometrically up to 16 MiB; a request larger than a chunk gets a chunk
 * of its own. Not thread-safe: one arena per thread or per model.
 */
#ifndef CP_BASE_ARENA_H
#define CP_BASE_ARENA_H

#include <stddef.h>

typedef struct cp_arena_chunk cp_arena_chunk;
typedef struct cp_arena {
    cp_arena_chunk *head;
    size_t next_size;
    size_t total_bytes; /* bytes obtained from malloc, for memory reports */
} cp_arena;

void cp_arena_init(cp_arena *a);
/* Frees every chunk; the arena can be reused after cp_arena_init. */
void cp_arena_free(cp_arena *a);
/* Returns memory aligned to `align` (a power of two); never NULL. Owned by the arena. */
void *cp_arena_alloc(cp_arena *a, size_t size, size_t align);
void *cp_arena_zalloc(cp_arena *a, size_t size);
/* Copies n bytes and appends a NUL. */
char *cp_arena_strndup(cp_arena *a, const char *s, size_t n);
char *cp_arena_strdup(cp_arena *a, const char *s);
char *cp_arena_printf(cp_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CP_ANEW(a, T) ((T *)cp_arena_zalloc((a), sizeof(T)))
#define CP_ANEWN(a, T, n) ((T *)cp_arena_zalloc((a), sizeof(T) * (n)))

#endif
