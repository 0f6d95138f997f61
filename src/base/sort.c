/* sort.c - LSD radix sort of cp_kv records (see sort.h for why). Digits are
 * taken from (key - min), so only the bits that vary cost a pass; an input
 * already in order costs one scan; small inputs use insertion sort, where
 * the counting passes would dominate. All digits' histograms come from one
 * read of the input instead of one read per pass, and a digit every record
 * shares (a constant tie-break field, say) skips its scatter pass. */
#include "sort.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

enum { DIGIT_BITS = 11, BUCKETS = 1 << DIGIT_BITS, SMALL_N = 64 };

/* One radix sort for each record type, from one body: T the record, KEY(x)
 * its uint64 sort key. */
#define DEFINE_RADIX_SORT(fn, T, KEY)                                                  \
    static void fn##_insertion(T *v, size_t n)                                         \
    {                                                                                  \
        for (size_t i = 1; i < n; i++) {                                               \
            T x = v[i];                                                                \
            size_t j = i;                                                              \
            while (j > 0 && KEY(v[j - 1]) > KEY(x)) {                                  \
                v[j] = v[j - 1];                                                       \
                j--;                                                                   \
            }                                                                          \
            v[j] = x;                                                                  \
        }                                                                              \
    }                                                                                  \
    static void fn(T *v, size_t n, T *tmp)                                             \
    {                                                                                  \
        if (n < SMALL_N) {                                                             \
            fn##_insertion(v, n);                                                      \
            return;                                                                    \
        }                                                                              \
        uint64_t lo = KEY(v[0]), hi = KEY(v[0]);                                       \
        int sorted = 1;                                                                \
        for (size_t i = 1; i < n; i++) {                                               \
            sorted &= KEY(v[i - 1]) <= KEY(v[i]);                                      \
            lo = KEY(v[i]) < lo ? KEY(v[i]) : lo;                                      \
            hi = KEY(v[i]) > hi ? KEY(v[i]) : hi;                                      \
        }                                                                              \
        if (sorted)                                                                    \
            return;                                                                    \
        int bits = 64 - __builtin_clzll(hi - lo); /* hi > lo: not sorted */            \
        int passes = (bits + DIGIT_BITS - 1) / DIGIT_BITS;                             \
        /* every digit's histogram in one read of the input */                        \
        size_t *count = cp_xcalloc((size_t)passes * BUCKETS, sizeof *count);           \
        for (size_t i = 0; i < n; i++) {                                               \
            uint64_t d = KEY(v[i]) - lo;                                               \
            for (int p = 0; p < passes; p++)                                           \
                count[(size_t)p * BUCKETS + ((d >> (p * DIGIT_BITS)) & (BUCKETS - 1))]++;\
        }                                                                              \
        T *own = NULL;                                                                 \
        if (!tmp)                                                                      \
            tmp = own = cp_xmalloc(n * sizeof *tmp);                                   \
        T *src = v, *dst = tmp;                                                        \
        for (int p = 0; p < passes; p++) {                                             \
            size_t *c = count + (size_t)p * BUCKETS;                                   \
            int shift = p * DIGIT_BITS;                                                \
            /* a digit all records share does not reorder anything */                 \
            if (c[((KEY(src[0]) - lo) >> shift) & (BUCKETS - 1)] == n)                 \
                continue;                                                              \
            size_t sum = 0;                                                            \
            for (size_t b = 0; b < BUCKETS; b++) {                                     \
                size_t k = c[b];                                                       \
                c[b] = sum;                                                            \
                sum += k;                                                              \
            }                                                                          \
            for (size_t i = 0; i < n; i++)                                             \
                dst[c[((KEY(src[i]) - lo) >> shift) & (BUCKETS - 1)]++] = src[i];      \
            T *t = src;                                                                \
            src = dst;                                                                 \
            dst = t;                                                                   \
        }                                                                              \
        if (src != v)                                                                  \
            memcpy(v, src, n * sizeof *v);                                             \
        free(count);                                                                   \
        free(own);                                                                     \
    }

#define KV_KEY(x) ((x).key)
#define U64_KEY(x) (x)
DEFINE_RADIX_SORT(radix_kv, cp_kv, KV_KEY)
DEFINE_RADIX_SORT(radix_u64, uint64_t, U64_KEY)

void cp_sort_kv(cp_kv *v, size_t n, cp_kv *tmp) { radix_kv(v, n, tmp); }
void cp_sort_u64(uint64_t *v, size_t n, uint64_t *tmp) { radix_u64(v, n, tmp); }

void cp_sort_f64(double *v, size_t n)
{
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ cp_key_f64(v[i]), 0 };
    cp_sort_kv(kv, n, NULL);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = kv[i].key;
        union { uint64_t u; double d; } c = { k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k };
        v[i] = c.d;
    }
    free(kv);
}

/* Order k2 inside each run of equal k1 keys: the runs are short on real
 * traces (events starting at the same instant), so insertion sort; a long
 * run (a damaged trace with one timestamp) is radix sorted instead. Both are
 * stable, so equal (k1, k2) keep their order in idx. */
static void sort_ties_by_k2(cp_kv *kv, size_t n, cp_kv *tmp, const int64_t *k2, bool k2_desc)
{
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && kv[hi].key == kv[lo].key; hi++)
            ;
        if (hi - lo < 2)
            continue;
        for (size_t i = lo; i < hi; i++) {
            uint64_t k = cp_key_i64(k2[kv[i].val]);
            tmp[i - lo] = (cp_kv){ k2_desc ? ~k : k, kv[i].val };
        }
        cp_sort_kv(tmp, hi - lo, NULL); /* under 64 records: insertion, no scratch */
        for (size_t i = lo; i < hi; i++)
            kv[i].val = tmp[i - lo].val;
    }
}

void cp_sort_idx2(size_t *idx, size_t n, const int64_t *k1, const int64_t *k2, bool k2_desc)
{
    /* one sort by k1, then ties by k2: the same order as a k2 pass then a
     * k1 pass, but input already in k1 order (most tracks) costs a scan */
    cp_kv *kv = cp_xmalloc((n ? n : 1) * sizeof *kv), *tmp = cp_xmalloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        kv[i] = (cp_kv){ cp_key_i64(k1[idx[i]]), idx[i] };
    cp_sort_kv(kv, n, tmp);
    sort_ties_by_k2(kv, n, tmp, k2, k2_desc);
    for (size_t i = 0; i < n; i++)
        idx[i] = (size_t)kv[i].val;
    free(kv);
    free(tmp);
}

void cp_sort_records(void *base, size_t n, size_t elem, int n_keys, cp_record_key key, const void *ctx)
{
    if (n < 2)
        return;
    unsigned char *v = base;
    cp_kv *kv = cp_xmalloc(n * sizeof *kv), *tmp = cp_xmalloc(n * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        kv[i].val = i;
    for (int k = n_keys - 1; k >= 0; k--) {
        for (size_t i = 0; i < n; i++)
            kv[i].key = key(v + kv[i].val * elem, k, ctx);
        cp_sort_kv(kv, n, tmp);
    }
    free(tmp);
    /* Apply the permutation in place, one cycle at a time (record i takes
     * record kv[i].val): one record of scratch instead of a second copy of
     * the array, which on large inputs was the sort's own peak. A position
     * is marked done by pointing it at itself. */
    unsigned char *hold = cp_xmalloc(elem);
    for (size_t i = 0; i < n; i++) {
        if (kv[i].val == i)
            continue;
        memcpy(hold, v + i * elem, elem);
        size_t j = i;
        for (;;) {
            size_t k = (size_t)kv[j].val;
            kv[j].val = j;
            if (k == i) {
                memcpy(v + j * elem, hold, elem);
                break;
            }
            memcpy(v + j * elem, v + k * elem, elem);
            j = k;
        }
    }
    free(hold);
    free(kv);
}
