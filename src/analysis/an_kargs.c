/* an_kargs.c - the `kargs` analyzer: the metadata the PyTorch profiler
 * attaches to communication kernels and to Triton launches, per rank.
 *
 * nccl_kernels[]: every GPU kernel with a "Collective name" argument or a
 * name containing ncclKernel / ncclDevKernel, with its collective, message
 * element counts, data type, split sizes and process group (name,
 * description, ranks) as the trace records them (HTA parses the same
 * arguments with its nccl ParserConfig), longest first.
 * triton_ops[]: every CPU op with a kernel_backend argument (torch.compile
 * launches of Triton kernels) with its backend, kernel hash, file and grid
 * (HTA ParserConfig.ARGS_TRITON_KERNELS). Both JSON/CSV tables list at most
 * AN_LAUNCH_ROWS rows unless --launch-table; the counts are complete.
 */
#include "an_results.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

enum { K_COLL, K_IN, K_OUT, K_GROUP, K_DTYPE, K_IN_SPLIT, K_OUT_SPLIT, K_PG_NAME, K_PG_DESC, K_PG_RANKS, K_BACKEND,
       K_HASH, K_FILE, K_GRID, K__COUNT };
static const char *const key_names[K__COUNT] = {
    "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "In split size",
    "Out split size", "Process Group Name", "Process Group Description", "Process Group Ranks",
    "kernel_backend", "kernel_hash", "kernel_file", "grid",
};

typedef struct kargs_rank {
    size_t *nccl, n_nccl;    /* timeline events, longest first */
    size_t *triton, n_triton;
} kargs_rank;

typedef struct kargs_result {
    void (*free)(void *self);
    size_t n_ranks;
    kargs_rank *ranks;
} kargs_result;

static uint64_t dur_key(const void *rec, int k, const void *ctx)
{
    const tl_timeline *tl = ctx;
    size_t ev = *(const size_t *)rec;
    return k == 0 ? ~cp_key_i64(tl->dur_ns[ev]) : ev; /* longest first, then event order */
}

static void kargs_free(void *self)
{
    kargs_result *r = self;
    for (size_t i = 0; i < r->n_ranks; i++) {
        free(r->ranks[i].nccl);
        free(r->ranks[i].triton);
    }
    free(r->ranks);
    free(r);
}

/* The argument as a report cell: its string, number or null. */
static void arg_cell(an_ctx *ctx, rep_node *row, size_t ev, uint32_t key)
{
    const tl_timeline *tl = ctx->tl;
    tl_arg a;
    if (key == UINT32_MAX || !tl_arg_by_id(tl, ev, key, &a))
        rep_cell_null(ctx->rep, row);
    else if (a.type == TL_ARG_STR)
        rep_cell_str(ctx->rep, row, tl_str(tl, a.v.s));
    else if (a.type == TL_ARG_NUM)
        rep_cell_num(ctx->rep, row, a.v.d);
    else
        rep_cell_int(ctx->rep, row, a.v.i);
}

static void emit_rank(an_ctx *ctx, size_t r, const kargs_rank *kr, const uint32_t *keys)
{
    const tl_timeline *tl = ctx->tl;
    bool all = ctx->opts && ctx->opts->launch_table;
    rep_node *o = rep_obj(ctx->rep, ctx->rank_nodes[r], "kernel_args", "profiler metadata of NCCL kernels and Triton ops");
    rep_int(ctx->rep, o, "nccl_kernel_count", "NCCL kernels", (int64_t)kr->n_nccl, NULL);
    rep_int(ctx->rep, o, "triton_op_count", "Triton launches (CPU ops with kernel_backend)", (int64_t)kr->n_triton, NULL);
    static const rep_col ncols[] = {
        { "name", "kernel", NULL, -1 },         { "dur_ns", "duration", "ns", -1 },
        { "collective", "collective", NULL, -1 }, { "in_msg_nelems", "input elements", NULL, -1 },
        { "out_msg_nelems", "output elements", NULL, -1 }, { "group_size", "group size", NULL, -1 },
        { "dtype", "dtype", NULL, -1 },         { "in_split_size", "input splits", NULL, -1 },
        { "out_split_size", "output splits", NULL, -1 }, { "process_group_name", "process group", NULL, -1 },
        { "process_group_desc", "process group description", NULL, -1 },
        { "process_group_ranks", "process group ranks", NULL, -1 },
    };
    rep_node *t = rep_table(ctx->rep, o, "nccl_kernels", "NCCL kernels, longest first", ncols, CP_ARRAY_LEN(ncols));
    t->flags |= REP_F_NO_TEXT;
    for (size_t i = 0; i < kr->n_nccl && (all || i < AN_LAUNCH_ROWS); i++) {
        size_t ev = kr->nccl[i];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, tl_str(tl, tl->name[ev]));
        rep_cell_int(ctx->rep, row, tl->dur_ns[ev]);
        for (int k = K_COLL; k <= K_PG_RANKS; k++)
            arg_cell(ctx, row, ev, keys[k]);
    }
    static const rep_col tcols[] = {
        { "name", "op", NULL, -1 },           { "cat", "category", NULL, -1 },
        { "dur_ns", "duration", "ns", -1 },   { "kernel_backend", "backend", NULL, -1 },
        { "kernel_hash", "kernel hash", NULL, -1 }, { "kernel_file", "kernel file", NULL, -1 },
        { "grid", "grid", NULL, -1 },
    };
    t = rep_table(ctx->rep, o, "triton_ops", "Triton launches, longest first", tcols, CP_ARRAY_LEN(tcols));
    t->flags |= REP_F_NO_TEXT;
    for (size_t i = 0; i < kr->n_triton && (all || i < AN_LAUNCH_ROWS); i++) {
        size_t ev = kr->triton[i];
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_str(ctx->rep, row, tl_str(tl, tl->name[ev]));
        rep_cell_str(ctx->rep, row, tl_str(tl, tl_event_cat_name(tl, ev)));
        rep_cell_int(ctx->rep, row, tl->dur_ns[ev]);
        for (int k = K_BACKEND; k <= K_GRID; k++)
            arg_cell(ctx, row, ev, keys[k]);
    }
}

int an_kargs_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    uint32_t keys[K__COUNT];
    for (int k = 0; k < K__COUNT; k++)
        keys[k] = cp_intern_find(&tl->strings, key_names[k], strlen(key_names[k]));
    kargs_result *res = cp_xcalloc(1, sizeof *res);
    res->free = kargs_free;
    res->n_ranks = tl->n_ranks;
    res->ranks = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *res->ranks);
    ctx->results[AN_kargs] = res;
    /* names that mark an NCCL kernel, decided once per string */
    size_t ns = cp_intern_count(&tl->strings);
    uint8_t *nccl_name = cp_xcalloc(ns ? ns : 1, 1);
    for (size_t s = 0; s < ns; s++) {
        const char *nm = cp_intern_str(&tl->strings, (uint32_t)s);
        nccl_name[s] = strstr(nm, "ncclKernel") || strstr(nm, "ncclDevKernel");
    }
    for (size_t r = 0; r < tl->n_ranks; r++) {
        kargs_rank *kr = &res->ranks[r];
        const tl_rank *rk = &tl->ranks[r];
        size_t cap_n = 0, cap_t = 0;
        for (size_t t = rk->track_begin; t < rk->track_end; t++) {
            const tl_track *tr = &tl->tracks[t];
            bool gpu = tr->key.kind == TL_TRACK_GPU;
            for (size_t e = tr->ev_begin; e < tr->ev_end; e++) {
                tl_arg a;
                if (gpu && (nccl_name[tl->name[e]] ||
                            (keys[K_COLL] != UINT32_MAX && tl_arg_by_id(tl, e, keys[K_COLL], &a)))) {
                    cp_xgrow((void **)&kr->nccl, &cap_n, kr->n_nccl + 1, sizeof *kr->nccl);
                    kr->nccl[kr->n_nccl++] = e;
                } else if (!gpu && keys[K_BACKEND] != UINT32_MAX && tl_arg_by_id(tl, e, keys[K_BACKEND], &a) &&
                           !(a.type == TL_ARG_STR && !tl_str(tl, a.v.s)[0])) {
                    cp_xgrow((void **)&kr->triton, &cap_t, kr->n_triton + 1, sizeof *kr->triton);
                    kr->triton[kr->n_triton++] = e;
                }
            }
        }
        cp_sort_records(kr->nccl, kr->n_nccl, sizeof *kr->nccl, 2, dur_key, tl);
        cp_sort_records(kr->triton, kr->n_triton, sizeof *kr->triton, 2, dur_key, tl);
        emit_rank(ctx, r, kr, keys);
    }
    free(nccl_name);
    return 0;
}
