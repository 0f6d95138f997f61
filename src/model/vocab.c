/* vocab.c - the tables behind vocab.h: layer keys and collective names and
 * factors, expanded from layers.def and collectives.def.
 *
 * The bus bandwidth normalises the algorithm bandwidth so that it is
 * comparable to the link speed whatever the rank count: an all-reduce of S
 * bytes on a ring moves 2(n-1)/n * S bytes over each rank's link, a gather
 * or scatter (n-1)/n * S, a broadcast S (nccl-tests doc/PERFORMANCE.md).
 */
#include "model/vocab.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *key, *title;
} k_layers[CP_LAYER__COUNT] = {
#define X(e, key, title) { key, title },
#include "layers.def"
#undef X
};

const char *cp_layer_key(cp_layer l) { return (unsigned)l < CP_LAYER__COUNT ? k_layers[l].key : NULL; }

const char *cp_layer_title(cp_layer l) { return (unsigned)l < CP_LAYER__COUNT ? k_layers[l].title : NULL; }

int cp_layer_parse(const char *key)
{
    for (int i = 0; key && i < CP_LAYER__COUNT; i++)
        if (strcmp(key, k_layers[i].key) == 0)
            return i;
    return -1;
}

enum factor { TWICE_RING, RING, ONE };

static const struct {
    const char *name;
    enum factor factor;
} k_ops[COLL_N_OPS] = {
#define X(e, name, factor) { name, factor },
#include "collectives.def"
#undef X
};

const char *coll_op_name(coll_op op)
{
    if (op == COLL_OTHER)
        return "other";
    return (unsigned)op < COLL_N_OPS ? k_ops[op].name : "unknown";
}

/* s lower-cased without '_', '-' and ' ' into out (size bytes). */
static void flatten(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s && *s && n + 1 < size; s++)
        if (*s != '_' && *s != '-' && *s != ' ')
            out[n++] = (char)(*s >= 'A' && *s <= 'Z' ? *s + 32 : *s);
    out[n] = '\0';
}

int coll_op_parse(const char *s)
{
    char flat[64], name[32];
    flatten(s, flat, sizeof flat);
    for (int i = 0; i < COLL_N_OPS; i++) {
        flatten(k_ops[i].name, name, sizeof name);
        if (strcmp(flat, name) == 0)
            return i;
    }
    return -1;
}

coll_op coll_op_classify(const char *s)
{
    /* most specific first: "reducescatter" and "allreduce" contain "reduce" */
    static const struct {
        const char *sub;
        coll_op op;
    } k_subs[] = {
        { "allreduce", COLL_ALL_REDUCE },   { "allgather", COLL_ALL_GATHER }, { "reducescatter", COLL_REDUCE_SCATTER },
        { "alltoall", COLL_ALL_TO_ALL },    { "broadcast", COLL_BROADCAST },  { "reduce", COLL_REDUCE },
        { "send", COLL_SEND_RECV },         { "recv", COLL_SEND_RECV },
    };
    char k[96];
    flatten(s, k, sizeof k);
    for (size_t i = 0; i < sizeof k_subs / sizeof k_subs[0]; i++)
        if (strstr(k, k_subs[i].sub))
            return k_subs[i].op;
    return COLL_OTHER;
}

double coll_busbw_factor(coll_op op, int n)
{
    if (n < 1)
        return NAN;
    if (op == COLL_OTHER)
        return 1.0;
    if ((unsigned)op >= COLL_N_OPS)
        return NAN;
    switch (k_ops[op].factor) {
    case TWICE_RING: return 2.0 * (n - 1) / n;
    case RING: return (double)(n - 1) / n;
    case ONE: return 1.0;
    }
    return NAN;
}

double coll_bytes(coll_op op, size_t count, size_t elem_size)
{
    (void)op; /* every op reports the whole buffer; kept for the documented contract */
    return (double)count * (double)elem_size;
}

double coll_algbw_gbps(double bytes, double time_s) { return time_s > 0 ? bytes / time_s / 1e9 : NAN; }

double coll_busbw_gbps(coll_op op, int n, double bytes, double time_s)
{
    return coll_algbw_gbps(bytes, time_s) * coll_busbw_factor(op, n);
}
