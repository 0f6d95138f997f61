/* comm_local.c - the one-process back-end.
 *
 * With one rank every collective is the identity (a reduction of one
 * contribution) or a copy from send to recv, so commands that use comm run
 * unchanged without MPI. Point-to-point has no peer and is rejected by the
 * peer check in comm.c before it gets here.
 */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

static int local_barrier(comm *c, cp_error *err)
{
    (void)c, (void)err;
    return 0;
}

static int local_bcast(comm *c, void *buf, size_t count, comm_dtype dt, int root, cp_error *err)
{
    (void)c, (void)buf, (void)count, (void)dt, (void)root, (void)err;
    return 0;
}

static void copy_in(const void *send, void *recv, size_t bytes)
{
    if (send && send != recv && bytes)
        memmove(recv, send, bytes);
}

static int local_allgather(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                           cp_error *err)
{
    (void)c, (void)err;
    copy_in(send, recv, count * comm_dtype_size(dt));
    return 0;
}

static int local_allreduce(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                           comm_redop op, cp_error *err)
{
    (void)c, (void)op, (void)err;
    copy_in(send, recv, count * comm_dtype_size(dt));
    return 0;
}

static int local_alltoall(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                          cp_error *err)
{
    (void)c, (void)err;
    copy_in(send, recv, count * comm_dtype_size(dt));
    return 0;
}

static int local_gatherv(comm *c, const void *send, size_t send_bytes, void *recv, const int *counts,
                         const int *displs, int root, cp_error *err)
{
    (void)c, (void)counts, (void)displs, (void)root, (void)err;
    copy_in(send, recv, send_bytes);
    return 0;
}

static int local_allgatherv(comm *c, const void *send, size_t send_bytes, void *recv, const int *counts,
                            const int *displs, cp_error *err)
{
    return local_gatherv(c, send, send_bytes, recv, counts, displs, 0, err);
}

static int local_p2p(comm *c, const void *buf, size_t bytes, int peer, int tag, cp_error *err)
{
    (void)c, (void)buf, (void)bytes, (void)tag;
    return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "point-to-point with rank %d: one-process run has no peer", peer);
}

static int local_recv(comm *c, void *buf, size_t bytes, int peer, int tag, cp_error *err)
{
    return local_p2p(c, buf, bytes, peer, tag, err);
}

static int local_sendrecv(comm *c, const void *send, size_t send_bytes, int dst, void *recv,
                          size_t recv_bytes, int src, int tag, cp_error *err)
{
    (void)recv, (void)recv_bytes, (void)src;
    return local_p2p(c, send, send_bytes, dst, tag, err);
}

static void local_abort(comm *c, int code)
{
    (void)c;
    exit(code);
}

const comm_ops comm_local_ops = {
    .name = "local",
    .barrier = local_barrier,
    .bcast = local_bcast,
    .allgather = local_allgather,
    .allreduce = local_allreduce,
    .reduce_scatter = local_allreduce, /* one rank: block 0 is the whole input */
    .alltoall = local_alltoall,
    .gatherv = local_gatherv,
    .allgatherv = local_allgatherv,
    .send = local_p2p,
    .recv = local_recv,
    .sendrecv = local_sendrecv,
    .abort = local_abort,
    .close = NULL,
};
