/* comm_mpi.c - the Open MPI back-end: the only file that includes mpi.h.
 *
 * Every operation is posted in its non-blocking form (MPI-3 MPI_I*) and
 * completed by polling MPI_Test against a deadline of c->timeout_s, so a
 * killed or stuck peer becomes CP_ERR_TIMEOUT naming the operation instead of
 * a hang. MPI cannot cancel a posted collective, so after a timeout the
 * caller reports and calls comm_abort. The poll sleeps 0 first (spinning is
 * the fast path for short collectives) then backs off to 50 us after 1 ms, so
 * an oversubscribed run does not starve its peers of CPU.
 *
 * Errors from MPI are returned (MPI_ERRORS_RETURN on COMM_WORLD) and turned
 * into cp_error messages with MPI_Error_string.
 */
#include "comm.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct mpi_state {
    int we_initialised;
} mpi_state;

static MPI_Datatype mpi_type(comm_dtype dt)
{
    switch (dt) {
    case COMM_DT_BYTE: return MPI_BYTE;
    case COMM_DT_F32: return MPI_FLOAT;
    case COMM_DT_F64: return MPI_DOUBLE;
    case COMM_DT_I64: return MPI_INT64_T;
    }
    return MPI_BYTE;
}

static MPI_Op mpi_op(comm_redop op) { return op == COMM_MAX ? MPI_MAX : MPI_SUM; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int mpi_fail(cp_error *err, int mrc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mrc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "mpi error %d", mrc);
    return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "mpi %s failed: %s", what, msg);
}

/* Wait for req until the deadline; see the file comment. */
static int wait_req(comm *c, MPI_Request *req, int mrc, const char *what, cp_error *err)
{
    if (mrc != MPI_SUCCESS)
        return mpi_fail(err, mrc, what);
    double start = now_s(), deadline = start + c->timeout_s;
    for (;;) {
        int done = 0;
        mrc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS)
            return mpi_fail(err, mrc, what);
        if (done)
            return 0;
        double t = now_s();
        if (t > deadline)
            return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1,
                                "mpi %s on rank %d: no completion after %.0f s (peer dead or stuck)",
                                what, c->rank, c->timeout_s);
        if (t - start > 1e-3) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
}

static int m_barrier(comm *c, cp_error *err)
{
    MPI_Request r;
    return wait_req(c, &r, MPI_Ibarrier(MPI_COMM_WORLD, &r), "barrier", err);
}

static int m_bcast(comm *c, void *buf, size_t count, comm_dtype dt, int root, cp_error *err)
{
    MPI_Request r;
    return wait_req(c, &r, MPI_Ibcast(buf, (int)count, mpi_type(dt), root, MPI_COMM_WORLD, &r),
                    "broadcast", err);
}

static int m_allgather(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                       cp_error *err)
{
    MPI_Request r;
    MPI_Datatype t = mpi_type(dt);
    int mrc = send ? MPI_Iallgather(send, (int)count, t, recv, (int)count, t, MPI_COMM_WORLD, &r)
                   : MPI_Iallgather(MPI_IN_PLACE, 0, t, recv, (int)count, t, MPI_COMM_WORLD, &r);
    return wait_req(c, &r, mrc, "all-gather", err);
}

static int m_allreduce(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                       comm_redop op, cp_error *err)
{
    MPI_Request r;
    int mrc = MPI_Iallreduce(send ? send : MPI_IN_PLACE, recv, (int)count, mpi_type(dt), mpi_op(op),
                             MPI_COMM_WORLD, &r);
    return wait_req(c, &r, mrc, "all-reduce", err);
}

static int m_reduce_scatter(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                            comm_redop op, cp_error *err)
{
    MPI_Request r;
    int mrc = MPI_Ireduce_scatter_block(send ? send : MPI_IN_PLACE, recv, (int)count, mpi_type(dt),
                                        mpi_op(op), MPI_COMM_WORLD, &r);
    return wait_req(c, &r, mrc, "reduce-scatter", err);
}

static int m_alltoall(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                      cp_error *err)
{
    MPI_Request r;
    MPI_Datatype t = mpi_type(dt);
    int mrc = send ? MPI_Ialltoall(send, (int)count, t, recv, (int)count, t, MPI_COMM_WORLD, &r)
                   : MPI_Ialltoall(MPI_IN_PLACE, 0, t, recv, (int)count, t, MPI_COMM_WORLD, &r);
    return wait_req(c, &r, mrc, "all-to-all", err);
}

static int m_gatherv(comm *c, const void *send, size_t send_bytes, void *recv, const int *counts,
                     const int *displs, int root, cp_error *err)
{
    MPI_Request r;
    int mrc = MPI_Igatherv(send, (int)send_bytes, MPI_BYTE, recv, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD, &r);
    return wait_req(c, &r, mrc, "gather", err);
}

static int m_allgatherv(comm *c, const void *send, size_t send_bytes, void *recv, const int *counts,
                        const int *displs, cp_error *err)
{
    MPI_Request r;
    int mrc = MPI_Iallgatherv(send, (int)send_bytes, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD, &r);
    return wait_req(c, &r, mrc, "all-gather (variable)", err);
}

static int m_send(comm *c, const void *buf, size_t bytes, int peer, int tag, cp_error *err)
{
    MPI_Request r;
    return wait_req(c, &r, MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r), "send", err);
}

static int m_recv(comm *c, void *buf, size_t bytes, int peer, int tag, cp_error *err)
{
    MPI_Request r;
    return wait_req(c, &r, MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r), "recv", err);
}

static int m_sendrecv(comm *c, const void *send, size_t send_bytes, int dst, void *recv,
                      size_t recv_bytes, int src, int tag, cp_error *err)
{
    MPI_Request r[2];
    int mrc = MPI_Irecv(recv, (int)recv_bytes, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r[0]);
    if (mrc != MPI_SUCCESS)
        return mpi_fail(err, mrc, "sendrecv");
    mrc = MPI_Isend(send, (int)send_bytes, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &r[1]);
    int rc = wait_req(c, &r[1], mrc, "sendrecv (send)", err);
    if (rc == 0)
        rc = wait_req(c, &r[0], MPI_SUCCESS, "sendrecv (recv)", err);
    return rc;
}

static void m_abort(comm *c, int code)
{
    (void)c;
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static void m_close(comm *c)
{
    mpi_state *s = c->impl;
    int fin = 0;
    if (s && s->we_initialised && MPI_Finalized(&fin) == MPI_SUCCESS && !fin)
        MPI_Finalize();
    free(s);
    c->impl = NULL;
}

static const comm_ops mpi_ops = {
    .name = "mpi",
    .barrier = m_barrier,
    .bcast = m_bcast,
    .allgather = m_allgather,
    .allreduce = m_allreduce,
    .reduce_scatter = m_reduce_scatter,
    .alltoall = m_alltoall,
    .gatherv = m_gatherv,
    .allgatherv = m_allgatherv,
    .send = m_send,
    .recv = m_recv,
    .sendrecv = m_sendrecv,
    .abort = m_abort,
    .close = m_close,
};

int comm_mpi_init(comm *c, cp_error *err)
{
    int inited = 0;
    mpi_state *s = calloc(1, sizeof *s);
    if (!s)
        return cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1, "mpi init: out of memory");
    MPI_Initialized(&inited);
    if (!inited) {
        int mrc = MPI_Init(NULL, NULL);
        if (mrc != MPI_SUCCESS) {
            free(s);
            return mpi_fail(err, mrc, "init");
        }
        s->we_initialised = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->ops = &mpi_ops;
    c->impl = s;
    return 0;
}
