/* comm_shard.c - how `mpirun ... chainprof analyze` shares files out.
 *
 * Longest processing time first (Graham's LPT): files sorted by size, the
 * largest first, each to the process with the least bytes so far. Reading
 * cost and timeline memory both grow with bytes, so equal bytes are the
 * best proxy for equal work and equal peak memory; LPT is within 4/3 of the
 * best split. Ties break by index (the smaller file index first, the
 * lower process first), so every process computes the same split from the
 * same sizes; the caller still broadcasts rank 0's split, so processes on
 * hosts that see different sizes (a file still growing) agree anyway.
 */
#include "comm_shard.h"

#include "../base/util.h"

#include <stdlib.h>

typedef struct shard_item {
    uint64_t bytes;
    size_t index;
} shard_item;

static int by_size_desc(const void *a, const void *b)
{
    const shard_item *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void comm_shard_by_size(const uint64_t *bytes, size_t n, int nproc, int32_t *owner, uint64_t *load)
{
    shard_item *v = cp_xcalloc(n ? n : 1, sizeof *v);
    uint64_t *l = cp_xcalloc(nproc > 0 ? (size_t)nproc : 1, sizeof *l);
    for (size_t i = 0; i < n; i++)
        v[i] = (shard_item){ bytes[i], i };
    qsort(v, n, sizeof *v, by_size_desc);
    for (size_t k = 0; k < n; k++) {
        int best = 0;
        for (int p = 1; p < nproc; p++)
            if (l[p] < l[best])
                best = p;
        owner[v[k].index] = best;
        l[best] += v[k].bytes;
    }
    if (load)
        for (int p = 0; p < nproc; p++)
            load[p] = l[p];
    free(v);
    free(l);
}
