/* sort.h - LSD radix sort of (64-bit key, 64-bit value) records, for the
 * analyses' hot sorts.
 *
 * Why: the analyses sort millions of timestamps and (time, index) records
 * per rank; qsort with a comparison callback costs ~n log n indirect calls,
 * and on a 1 GB trace that was a sixth of analyze's CPU time. Timestamps of
 * one rank span far less than 2^64 ns, so a radix sort over the bits that
 * actually vary (from the min/max, found first) needs 3-4 passes of 11 bits
 * on real traces, each a sequential read and a scattered write. Damaged
 * traces (one event at ts 0) only cost more passes, never a wrong order.
 *
 * The caller maps its order onto the unsigned key (cp_key_i64 for signed
 * times; pack a tie-breaker into the low bits when it matters) and carries
 * whatever it needs in `val`. The sort is stable.
 */
#ifndef CP_SORT_H
#define CP_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cp_kv {
    uint64_t key;
    uint64_t val;
} cp_kv;

/* Order-preserving map of a signed value onto an unsigned key. */
static inline uint64_t cp_key_i64(int64_t x) { return (uint64_t)x ^ (UINT64_C(1) << 63); }
static inline int64_t cp_key_to_i64(uint64_t k) { return (int64_t)(k ^ (UINT64_C(1) << 63)); }
/* Order-preserving map of a double (not NaN) onto an unsigned key. */
static inline uint64_t cp_key_f64(double x)
{
    union { double d; uint64_t u; } c = { x };
    return c.u >> 63 ? ~c.u : c.u | (UINT64_C(1) << 63);
}

/* Sort the index array idx[0..n) by (k1[idx], k2[idx]), k2 descending when
 * k2_desc; equal keys keep their order in idx (callers build idx in index
 * order, which makes the index the last key). One stable sort by k1 (a
 * scan when idx is in k1 order already), then each run of equal k1 by k2.
 * k1/k2 are indexed by the values in idx. */
void cp_sort_idx2(size_t *idx, size_t n, const int64_t *k1, const int64_t *k2, bool k2_desc);

/* Sort n records of elem bytes at base by n_keys keys, key(rec, 0, ctx)
 * the most significant: one stable radix pass a key, from the last to the
 * first, over (key, index) pairs, then one permutation of the records in place.
 * Equal records keep their order. */
typedef uint64_t (*cp_record_key)(const void *rec, int k, const void *ctx);
void cp_sort_records(void *base, size_t n, size_t elem, int n_keys, cp_record_key key, const void *ctx);

/* Sort doubles (no NaN) ascending, through cp_sort_kv. */
void cp_sort_f64(double *v, size_t n);

/* Sort v[0..n) by key, ascending, stable. tmp: caller-owned scratch of n
 * records, or NULL to let the routine allocate (and free) its own. Never
 * fails (allocation failure aborts, as everywhere in chainprof). */
void cp_sort_kv(cp_kv *v, size_t n, cp_kv *tmp);
/* Sort plain keys ascending (half the memory of cp_kv where a record fits
 * in its key). tmp as for cp_sort_kv. */
void cp_sort_u64(uint64_t *v, size_t n, uint64_t *tmp);

#endif
