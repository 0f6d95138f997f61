/* col_nccl.c - the communication layer's host side: the time each thread
 * spends inside NCCL's collective, point-to-point and group calls.
 *
 * The profiler plugin (col_nprof.c) runs inside these calls on the same
 * thread (NCCL starts its API events at the call, and launches a
 * non-grouped operation before returning), and leaves the communicator it
 * saw in the thread's cur_comm / cur_inter: that is how a call's time is
 * classified intra-node or inter-node without knowing NCCL's internals. A
 * CUPTI external correlation id is pushed around the call, so the NCCL
 * kernels it launches link back to it.
 *
 * Declarations (owned): ncclResult_t, ncclDataType_t and ncclRedOp_t are
 * int, ncclComm_t and cudaStream_t void *, ncclUniqueId 128 bytes passed
 * by value; checked by tests/vendor/check_collect_decls.c.
 */
#include "col.h"

#include <stdint.h>

typedef struct col_nccl_id {
    char internal[128];
} col_nccl_id;

typedef int (*col_ncclAllReduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*col_ncclAllGather_fn)(const void *, void *, size_t, int, void *, void *);
typedef int (*col_ncclReduceScatter_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*col_ncclBroadcast_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef int (*col_ncclReduce_fn)(const void *, void *, size_t, int, int, int, void *, void *);
typedef int (*col_ncclAlltoAll_fn)(const void *, void *, size_t, int, void *, void *);
typedef int (*col_ncclSend_fn)(const void *, size_t, int, int, void *, void *);
typedef int (*col_ncclRecv_fn)(void *, size_t, int, int, void *, void *);
typedef int (*col_ncclGroupEnd_fn)(void);
typedef int (*col_ncclCommInitRank_fn)(void **, int, col_nccl_id, int);
typedef int (*col_ncclCommDestroy_fn)(void *);

static const char *const api_name[CPT_NCCL__COUNT] = {
#define CPT_X(e, name) name,
    CPT_NCCL_APIS(CPT_X)
#undef CPT_X
};

#define NCCL_INTERNAL_ERROR 3 /* ncclInternalError: the real library was not found */

static uint64_t nccl_pre(col_thread *t)
{
    t->cur_comm = CPT_NO_COMM;
    t->cur_inter = -1;
    uint64_t id = col_new_id(t);
    col_cupti_push(id);
    return id;
}

static void nccl_post(col_thread *t, int api, int64_t t0, void *stream, uint64_t count, int flags, uint64_t id)
{
    int64_t dur = col_now() - t0;
    col_cupti_pop();
    col_count(t, true);
    if (atomic_load_explicit(&col_mode_now, memory_order_relaxed) == COL_SUMMARY) {
        if (api != CPT_NCCL_COMM_INIT_RANK && api != CPT_NCCL_COMM_DESTROY) {
            col_acc(t, t->cur_inter == 1 ? COL_A_INTER : t->cur_inter == 0 ? COL_A_INTRA : COL_A_COMM, dur);
            col_acc(t, COL_A_N_NCCL, 1);
        }
    } else if (col_tracing()) {
        cpt_rec r = { .kind = CPT_K_NCALL, .op = (uint8_t)api, .flags = (uint16_t)flags, .u32 = t->cur_comm,
                      .t_ns = t0, .dur_ns = dur, .a = (uint64_t)(uintptr_t)stream, .b = count, .c = id };
        col_push(t, &r);
    }
    col_leave(t);
}

#define WRAP(API, TYPE, STREAM, COUNT, FLAGS, ARGS)                                                   \
    static col_##TYPE##_fn real;                                                                      \
    COL_REAL(real, api_name[CPT_NCCL_##API], "libnccl");                                              \
    if (!real)                                                                                        \
        return NCCL_INTERNAL_ERROR;                                                                   \
    col_thread *t = col_enter();                                                                      \
    if (!t)                                                                                           \
        return real ARGS;                                                                             \
    int64_t t0 = col_now();                                                                           \
    uint64_t id = nccl_pre(t);                                                                        \
    int rc = real ARGS;                                                                               \
    nccl_post(t, CPT_NCCL_##API, t0, STREAM, (uint64_t)(COUNT), FLAGS, id);                           \
    return rc

COL_EXPORT int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    WRAP(ALL_REDUCE, ncclAllReduce, st, n, dt, (s, r, n, dt, op, c, st));
}

COL_EXPORT int ncclAllGather(const void *s, void *r, size_t n, int dt, void *c, void *st)
{
    WRAP(ALL_GATHER, ncclAllGather, st, n, dt, (s, r, n, dt, c, st));
}

COL_EXPORT int ncclReduceScatter(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    WRAP(REDUCE_SCATTER, ncclReduceScatter, st, n, dt, (s, r, n, dt, op, c, st));
}

COL_EXPORT int ncclBroadcast(const void *s, void *r, size_t n, int dt, int root, void *c, void *st)
{
    WRAP(BROADCAST, ncclBroadcast, st, n, dt, (s, r, n, dt, root, c, st));
}

COL_EXPORT int ncclReduce(const void *s, void *r, size_t n, int dt, int op, int root, void *c, void *st)
{
    WRAP(REDUCE, ncclReduce, st, n, dt, (s, r, n, dt, op, root, c, st));
}

COL_EXPORT int ncclAlltoAll(const void *s, void *r, size_t n, int dt, void *c, void *st)
{
    WRAP(ALL_TO_ALL, ncclAlltoAll, st, n, dt, (s, r, n, dt, c, st));
}

COL_EXPORT int ncclSend(const void *s, size_t n, int dt, int peer, void *c, void *st)
{
    WRAP(SEND, ncclSend, st, n, dt, (s, n, dt, peer, c, st));
}

COL_EXPORT int ncclRecv(void *r, size_t n, int dt, int peer, void *c, void *st)
{
    WRAP(RECV, ncclRecv, st, n, dt, (r, n, dt, peer, c, st));
}

COL_EXPORT int ncclGroupEnd(void) { WRAP(GROUP_END, ncclGroupEnd, NULL, 0, 0, ()); }

COL_EXPORT int ncclCommInitRank(void **comm, int nranks, col_nccl_id uid, int rank)
{
    WRAP(COMM_INIT_RANK, ncclCommInitRank, NULL, nranks, rank, (comm, nranks, uid, rank));
}

COL_EXPORT int ncclCommDestroy(void *c) { WRAP(COMM_DESTROY, ncclCommDestroy, NULL, 0, 0, (c)); }
