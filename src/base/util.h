/* util.h - allocation that cannot fail silently, and small helpers.
 *
 * Out-of-memory is not a recoverable input error in this tool: the caps on
 * input-controlled sizes (see each reader) keep honest inputs far below the
 * machine's memory, so an allocation failure means the machine is exhausted.
 * cp_xmalloc & co. print one message and abort, like git's xmalloc, so the
 * rest of the code does not drown in NULL checks.
 */
#ifndef CP_BASE_UTIL_H
#define CP_BASE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

void *cp_xmalloc(size_t size);
void *cp_xcalloc(size_t n, size_t size);
void *cp_xrealloc(void *p, size_t size);
/* Grow *p (array of elem_size items, capacity *cap) to hold at least need items. */
void cp_xgrow(void **p, size_t *cap, size_t need, size_t elem_size);
char *cp_xstrdup(const char *s);
char *cp_xstrndup(const char *s, size_t n);

#define CP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define CP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Monotonic clock in nanoseconds (for progress and benchmarks, never for data). */
int64_t cp_now_ns(void);

/* Case-insensitive ASCII helpers. */
bool cp_str_ieq(const char *a, const char *b);
bool cp_str_istarts(const char *s, const char *prefix);
const char *cp_str_icontains(const char *hay, const char *needle);
bool cp_str_ends(const char *s, const char *suffix);

/* FNV-1a 64-bit hash of n bytes (interning, dedup). */
/* a + b and a - b clamped to the int64 range: for times and offsets a
 * damaged input makes too large (no undefined behaviour, no wrap) */
static inline int64_t cp_sat_add_i64(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
static inline int64_t cp_sat_sub_i64(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline uint64_t cp_hash64(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Number of online CPUs (>= 1). */
int cp_cpu_count(void);

#endif
