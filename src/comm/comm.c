/* comm.c - back-end choice and the calls every back-end shares.
 *
 * comm_open picks the back-end (MPI under mpirun when built, else local) and
 * dispatches each call through the comm_ops table, after argument checks
 * that both back-ends need (peer in range, root in range), so the back-ends
 * only move bytes.
 */
#include "comm.h"

#include "../base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t comm_dtype_size(comm_dtype dt)
{
    switch (dt) {
    case COMM_DT_BYTE: return 1;
    case COMM_DT_F32: return 4;
    case COMM_DT_F64: return 8;
    case COMM_DT_I64: return 8;
    }
    return 1;
}

bool comm_mpi_built(const char **why_not)
{
#ifdef CP_HAVE_MPI
    if (why_not)
        *why_not = NULL;
    return true;
#else
    if (why_not)
        *why_not = "built without MPI (libopenmpi-dev was not found at configure time)";
    return false;
#endif
}

/* Under mpirun: Open MPI sets OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK. */
static bool under_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL;
}

int comm_open(comm **out, bool force_local, double timeout_s, cp_error *err)
{
    *out = NULL;
    comm *c = cp_xcalloc(1, sizeof *c);
    c->timeout_s = timeout_s > 0 ? timeout_s : 60.0;
    c->ops = &comm_local_ops;
    c->rank = 0;
    c->size = 1;
    if (!force_local && under_mpirun()) {
#ifdef CP_HAVE_MPI
        int rc = comm_mpi_init(c, err);
        if (rc < 0) {
            free(c);
            return rc;
        }
#else
        /* launched by mpirun but built without MPI: each process would think
         * it is alone and the probe would silently measure nothing useful */
        free(c);
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1,
                            "running under mpirun: this chainprof was built without MPI");
#endif
    }
    *out = c;
    return 0;
}

void comm_close(comm *c)
{
    if (!c)
        return;
    if (c->ops->close)
        c->ops->close(c);
    free(c);
}

int comm_rank(const comm *c) { return c->rank; }
int comm_size(const comm *c) { return c->size; }
const char *comm_backend(const comm *c) { return c->ops->name; }
double comm_timeout_s(const comm *c) { return c->timeout_s; }
void comm_set_timeout_s(comm *c, double timeout_s) { c->timeout_s = timeout_s > 0 ? timeout_s : 60.0; }

int comm_barrier(comm *c, cp_error *err) { return c->ops->barrier(c, err); }

int comm_bcast(comm *c, void *buf, size_t count, comm_dtype dt, int root, cp_error *err)
{
    if (root < 0 || root >= c->size)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "broadcast: root %d out of range", root);
    return c->ops->bcast(c, buf, count, dt, root, err);
}

int comm_allgather(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                   cp_error *err)
{
    return c->ops->allgather(c, send, recv, count, dt, err);
}

int comm_allreduce(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                   comm_redop op, cp_error *err)
{
    return c->ops->allreduce(c, send, recv, count, dt, op, err);
}

int comm_reduce_scatter(comm *c, const void *send, void *recv, size_t recv_count, comm_dtype dt,
                        comm_redop op, cp_error *err)
{
    return c->ops->reduce_scatter(c, send, recv, recv_count, dt, op, err);
}

int comm_alltoall(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                  cp_error *err)
{
    return c->ops->alltoall(c, send, recv, count, dt, err);
}

static int check_peer(const comm *c, int peer, const char *what, cp_error *err)
{
    if (peer < 0 || peer >= c->size || peer == c->rank)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "%s: peer rank %d invalid (rank %d of %d)",
                            what, peer, c->rank, c->size);
    return 0;
}

int comm_send(comm *c, const void *buf, size_t bytes, int peer, int tag, cp_error *err)
{
    int rc = check_peer(c, peer, "send", err);
    return rc < 0 ? rc : c->ops->send(c, buf, bytes, peer, tag, err);
}

int comm_recv(comm *c, void *buf, size_t bytes, int peer, int tag, cp_error *err)
{
    int rc = check_peer(c, peer, "recv", err);
    return rc < 0 ? rc : c->ops->recv(c, buf, bytes, peer, tag, err);
}

int comm_sendrecv(comm *c, const void *send, size_t send_bytes, int dst, void *recv,
                  size_t recv_bytes, int src, int tag, cp_error *err)
{
    int rc = check_peer(c, dst, "sendrecv", err);
    if (rc == 0)
        rc = check_peer(c, src, "sendrecv", err);
    return rc < 0 ? rc : c->ops->sendrecv(c, send, send_bytes, dst, recv, recv_bytes, src, tag, err);
}

/* Every rank's byte count (allgather), then MPI-style int counts and
 * displacements; fails on every rank alike when the total passes INT_MAX. */
static int vsizes(comm *c, size_t send_bytes, size_t *sizes, int *counts, int *displs, size_t *total,
                  cp_error *err)
{
    int64_t *all = cp_xcalloc((size_t)c->size, sizeof *all);
    all[c->rank] = (int64_t)send_bytes;
    int rc = c->ops->allgather(c, NULL, all, 1, COMM_DT_I64, err);
    *total = 0;
    for (int r = 0; rc == 0 && r < c->size; r++) {
        if (all[r] < 0 || (uint64_t)all[r] > (uint64_t)INT_MAX - *total) {
            rc = cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1,
                              "gather: %d ranks send more than %d bytes in all (MPI's int count)", c->size, INT_MAX);
            break;
        }
        displs[r] = (int)*total;
        counts[r] = (int)all[r];
        sizes[r] = (size_t)all[r];
        *total += (size_t)all[r];
    }
    free(all);
    return rc;
}

static int gather_any(comm *c, const void *send, size_t send_bytes, int root, void **out, size_t *sizes,
                      cp_error *err)
{
    *out = NULL;
    size_t *tmp = cp_xcalloc((size_t)c->size, sizeof *tmp), total = 0;
    int *counts = cp_xcalloc((size_t)c->size, sizeof *counts), *displs = cp_xcalloc((size_t)c->size, sizeof *displs);
    int rc = vsizes(c, send_bytes, tmp, counts, displs, &total, err);
    bool here = root < 0 || root == c->rank; /* root < 0: all-gather */
    void *recv = rc == 0 && here ? cp_xmalloc(total ? total : 1) : NULL;
    if (rc == 0)
        rc = root < 0 ? c->ops->allgatherv(c, send, send_bytes, recv, counts, displs, err)
                      : c->ops->gatherv(c, send, send_bytes, recv, counts, displs, root, err);
    if (rc == 0 && here) {
        memcpy(sizes, tmp, (size_t)c->size * sizeof *sizes);
        *out = recv;
    } else {
        free(recv);
    }
    free(tmp);
    free(counts);
    free(displs);
    return rc;
}

int comm_gatherv(comm *c, const void *send, size_t send_bytes, int root, void **out, size_t *sizes,
                 cp_error *err)
{
    if (root < 0 || root >= c->size)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1, "gather: root %d out of range", root);
    return gather_any(c, send, send_bytes, root, out, sizes, err);
}

int comm_allgatherv(comm *c, const void *send, size_t send_bytes, void **out, size_t *sizes, cp_error *err)
{
    return gather_any(c, send, send_bytes, -1, out, sizes, err);
}

int comm_allreduce_f64(comm *c, double *v, size_t n, comm_redop op, cp_error *err)
{
    return c->ops->allreduce(c, NULL, v, n, COMM_DT_F64, op, err);
}

int comm_allreduce_i64(comm *c, int64_t *v, size_t n, comm_redop op, cp_error *err)
{
    return c->ops->allreduce(c, NULL, v, n, COMM_DT_I64, op, err);
}

void comm_own_hostname(char out[COMM_HOST_MAX])
{
    const char *env = getenv("CHAINPROF_HOSTNAME");
    if (env && *env) {
        snprintf(out, COMM_HOST_MAX, "%s", env);
        return;
    }
    if (gethostname(out, COMM_HOST_MAX) != 0)
        snprintf(out, COMM_HOST_MAX, "unknown");
    out[COMM_HOST_MAX - 1] = '\0';
}

int comm_hostnames(comm *c, char (*names)[COMM_HOST_MAX], cp_error *err)
{
    char own[COMM_HOST_MAX] = {0};
    comm_own_hostname(own);
    memcpy(names[c->rank], own, COMM_HOST_MAX);
    return c->ops->allgather(c, NULL, names, COMM_HOST_MAX, COMM_DT_BYTE, err);
}

_Noreturn void comm_abort(comm *c, int code)
{
    c->ops->abort(c, code);
    exit(code); /* back-ends do not return; this keeps _Noreturn honest */
}
