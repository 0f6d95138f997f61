/* tl_query.c - read-side helpers of the timeline: argument lookup, rank
 * lookup, per-rank event selection, and the GPU event classification every
 * reader shares (so a kernel is "communication" by one rule whatever format
 * it came from). */
#include "timeline.h"
#include "tl_extras.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const cat_names[] = {
#define X(e, s) s,
#include "tl_cat.def"
#undef X
};

tl_cat tl_cat_from_name(const char *s, size_t n)
{
    for (int c = 0; c < TL_CAT__COUNT - 1; c++)
        if (strlen(cat_names[c]) == n && strncasecmp(cat_names[c], s, n) == 0)
            return (tl_cat)c;
    /* Kineto variants of the same thing */
    if (n == 6 && strncmp(s, "Kernel", 6) == 0)
        return TL_CAT_KERNEL;
    if (n == 6 && strncmp(s, "Memcpy", 6) == 0)
        return TL_CAT_GPU_MEMCPY;
    if (n == 6 && strncmp(s, "Memset", 6) == 0)
        return TL_CAT_GPU_MEMSET;
    if (n == 7 && strncmp(s, "Runtime", 7) == 0)
        return TL_CAT_CUDA_RUNTIME;
    if (n == 9 && strncmp(s, "Operator", 9) == 0)
        return TL_CAT_CPU_OP;
    return TL_CAT_OTHER;
}

const char *tl_cat_name(tl_cat c) { return c < TL_CAT__COUNT ? cat_names[c] : ""; }

const char *tl_kclass_name(tl_kclass k)
{
    static const char *const n[] = { "none", "compute", "communication", "memcpy", "memset", "sync" };
    return k <= TL_K_SYNC ? n[k] : "?";
}

const char *tl_copy_dir_name(tl_copy_dir d)
{
    static const char *const n[] = { "none", "h2d", "d2h", "d2d", "p2p", "h2h", "other" };
    return d <= TL_COPY_OTHER ? n[d] : "?";
}

static bool is_comm_name(const char *name)
{
    /* NCCL: ncclKernel_*, ncclDevKernel_*, ncclSendRecv...; RCCL keeps the
     * nccl names and some builds prefix rccl; HIP-side collectives from
     * other libraries show as "rccl"/"Rccl" */
    return strcasestr(name, "nccl") != NULL || strcasestr(name, "rccl") != NULL;
}

tl_kclass tl_classify(tl_cat cat, const char *name)
{
    switch (cat) {
    case TL_CAT_GPU_MEMCPY: return TL_K_MEMCPY;
    case TL_CAT_GPU_MEMSET: return TL_K_MEMSET;
    case TL_CAT_CUDA_SYNC: return TL_K_SYNC;
    case TL_CAT_KERNEL:
        if (is_comm_name(name))
            return TL_K_COMM;
        if (strncmp(name, "Memcpy", 6) == 0)
            return TL_K_MEMCPY;
        if (strncmp(name, "Memset", 6) == 0)
            return TL_K_MEMSET;
        return TL_K_COMPUTE;
    default: return TL_K_NONE;
    }
}

tl_copy_dir tl_copy_direction(const char *name, bool *pageable)
{
    *pageable = strstr(name, "Pageable") != NULL;
    static const struct { const char *tag; tl_copy_dir dir; } map[] = {
        { "HtoD", TL_COPY_H2D }, { "DtoH", TL_COPY_D2H }, { "DtoD", TL_COPY_D2D },
        { "PtoP", TL_COPY_P2P }, { "HtoH", TL_COPY_H2H },
        { "HostToDevice", TL_COPY_H2D }, { "DeviceToHost", TL_COPY_D2H },
        { "DeviceToDevice", TL_COPY_D2D }, { "PeerToPeer", TL_COPY_P2P }, { "HostToHost", TL_COPY_H2H },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(map); i++)
        if (strstr(name, map[i].tag))
            return map[i].dir;
    return TL_COPY_OTHER;
}

size_t tl_event_args(const tl_timeline *tl, size_t ev, tl_arg *out, size_t max)
{
    uint64_t n;
    const uint8_t *p = tlx_head(tl_event_extra(tl, ev), NULL, &n, NULL, NULL);
    for (size_t k = 0; k < n && k < max; k++)
        p = tlx_get_arg(p, &out[k]);
    return (size_t)n;
}

bool tl_arg_by_id(const tl_timeline *tl, size_t ev, uint32_t key_id, tl_arg *out)
{
    if (key_id == UINT32_MAX)
        return false;
    uint64_t n;
    const uint8_t *p = tlx_head(tl_event_extra(tl, ev), NULL, &n, NULL, NULL);
    for (uint64_t k = 0; k < n; k++) {
        tl_arg a;
        p = tlx_get_arg(p, &a);
        if (a.key == key_id) {
            if (out)
                *out = a;
            return true;
        }
    }
    return false;
}

bool tl_arg_get(const tl_timeline *tl, size_t ev, const char *key, tl_arg *out)
{
    return tl_arg_by_id(tl, ev, cp_intern_find(&tl->strings, key, strlen(key)), out);
}

bool tl_arg_int(const tl_timeline *tl, size_t ev, const char *key, int64_t *out)
{
    tl_arg a;
    if (!tl_arg_get(tl, ev, key, &a) || (a.type != TL_ARG_INT && a.type != TL_ARG_BOOL))
        return false;
    *out = a.v.i;
    return true;
}

bool tl_arg_num(const tl_timeline *tl, size_t ev, const char *key, double *out)
{
    tl_arg a;
    if (!tl_arg_get(tl, ev, key, &a))
        return false;
    if (a.type == TL_ARG_NUM)
        *out = a.v.d;
    else if (a.type == TL_ARG_INT || a.type == TL_ARG_BOOL)
        *out = (double)a.v.i;
    else
        return false;
    return true;
}

const char *tl_arg_str(const tl_timeline *tl, size_t ev, const char *key)
{
    tl_arg a;
    return tl_arg_get(tl, ev, key, &a) && a.type == TL_ARG_STR ? tl_str(tl, a.v.s) : NULL;
}

int64_t tl_ext_id(const tl_timeline *tl, size_t ev)
{
    int64_t ext;
    tlx_head(tl_event_extra(tl, ev), NULL, NULL, &ext, NULL);
    return ext;
}

uint32_t tl_event_cat_name(const tl_timeline *tl, size_t ev)
{
    unsigned flags;
    uint32_t cat;
    tlx_head(tl_event_extra(tl, ev), &flags, NULL, NULL, &cat);
    if (flags & XH_CAT)
        return cat;
    if (flags & XH_CAT_NONE)
        return 0;
    uint32_t c = tl->cat[ev] < TL_CAT__COUNT ? tl->cat_str[tl->cat[ev]] : UINT32_MAX;
    return c == UINT32_MAX ? 0 : c;
}

int tl_rank_index(const tl_timeline *tl, int32_t rank)
{
    size_t lo = 0, hi = tl->n_ranks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tl->ranks[mid].meta.rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < tl->n_ranks && tl->ranks[lo].meta.rank == rank ? (int)lo : -1;
}

bool tl_pred_gpu(const tl_timeline *tl, size_t ev, void *ctx)
{
    (void)ctx;
    return tl->tracks[tl->track[ev]].key.kind == TL_TRACK_GPU;
}

bool tl_pred_kclass(const tl_timeline *tl, size_t ev, void *ctx)
{
    return tl->kclass[ev] == *(const tl_kclass *)ctx;
}

size_t tl_rank_select(const tl_timeline *tl, size_t rank_index, tl_pred pred, void *ctx, size_t **out)
{
    const tl_rank *r = &tl->ranks[rank_index];
    size_t n = 0, cap = 0;
    size_t *v = NULL;
    for (uint32_t t = r->track_begin; t < r->track_end; t++)
        for (size_t i = tl->tracks[t].ev_begin; i < tl->tracks[t].ev_end; i++)
            if (!pred || pred(tl, i, ctx)) {
                cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
                v[n++] = i;
            }
    cp_sort_idx2(v, n, tl->ts_ns, tl->dur_ns, true); /* (ts, longer first, index) */
    *out = v;
    return n;
}
