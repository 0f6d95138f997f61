/* busbw.c - nccl-tests bandwidth conventions (see busbw.h for the formulas).
 *
 * The bus bandwidth normalises the algorithm bandwidth so that it is
 * comparable to the link speed whatever the rank count: an all-reduce of S
 * bytes on a ring moves 2(n-1)/n * S bytes over each rank's link, a gather or
 * scatter (n-1)/n * S, a broadcast S.
 */
#include "busbw.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const op_names[COLL_N_OPS] = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv",
};

const char *coll_op_name(coll_op op)
{
    return (unsigned)op < COLL_N_OPS ? op_names[op] : "unknown";
}

int coll_op_parse(const char *s)
{
    char flat[32];
    size_t n = 0;
    for (const char *p = s; *p && n + 1 < sizeof flat; p++)
        if (*p != '_' && *p != '-')
            flat[n++] = *p;
    flat[n] = '\0';
    for (int i = 0; i < COLL_N_OPS; i++) {
        char name[32];
        size_t k = 0;
        for (const char *p = op_names[i]; *p; p++)
            if (*p != '_')
                name[k++] = *p;
        name[k] = '\0';
        if (strcasecmp(flat, name) == 0)
            return i;
    }
    return -1;
}

double coll_busbw_factor(coll_op op, int n)
{
    if (n < 1)
        return NAN;
    switch (op) {
    case COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL: return (double)(n - 1) / n;
    case COLL_BROADCAST:
    case COLL_REDUCE:
    case COLL_SEND_RECV: return 1.0;
    case COLL_N_OPS: break;
    }
    return NAN;
}

double coll_bytes(coll_op op, size_t count, size_t elem_size)
{
    (void)op; /* every op reports the whole buffer; kept for the documented contract */
    return (double)count * (double)elem_size;
}

double coll_algbw_gbps(double bytes, double time_s)
{
    return time_s > 0 ? bytes / time_s / 1e9 : NAN;
}

double coll_busbw_gbps(coll_op op, int n, double bytes, double time_s)
{
    return coll_algbw_gbps(bytes, time_s) * coll_busbw_factor(op, n);
}
