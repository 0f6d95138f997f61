/* comm.h - the small message-passing interface the cluster probes use.
 *
 * Two implementations sit behind one opaque handle: comm_local.c (one
 * process; every collective is a copy) and comm_mpi.c (Open MPI; the only
 * file in the project that includes mpi.h, compiled only when CMake found
 * MPI, which then defines CP_HAVE_MPI). Probes never see MPI types, so every
 * command builds and runs without MPI.
 *
 * Rules every call follows:
 * - returns 0 or a negative cp_status and fills the optional cp_error;
 * - every wait is bounded by the handle's timeout (comm_open's timeout_s):
 *   the MPI back-end posts the non-blocking form of each operation and polls
 *   it against a deadline, so a dead or stuck peer gives CP_ERR_TIMEOUT with
 *   the operation named, never a hang. After a timeout the only sensible next
 *   call is comm_abort (MPI cannot cancel a posted collective);
 * - a NULL send buffer means "in place" with MPI_IN_PLACE semantics
 *   (documented per call).
 *
 * Ownership: comm_open allocates the handle; comm_close frees it (and calls
 * MPI_Finalize when it called MPI_Init). Buffers always belong to the caller.
 */
#ifndef CP_COMM_COMM_H
#define CP_COMM_COMM_H

#include "../base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct comm comm;

typedef enum comm_dtype { COMM_DT_BYTE, COMM_DT_F32, COMM_DT_F64, COMM_DT_I64 } comm_dtype;
typedef enum comm_redop { COMM_SUM, COMM_MAX } comm_redop;

#define COMM_HOST_MAX 64 /* bytes per host name in comm_hostnames, NUL included */

/* Size in bytes of one element of dt. */
size_t comm_dtype_size(comm_dtype dt);

/* Open the communicator. Picks MPI when the process runs under mpirun
 * (OMPI_COMM_WORLD_SIZE or PMIX_RANK set) and the build has MPI, else the
 * one-process back-end. force_local skips MPI even then. timeout_s bounds
 * every later wait (<= 0: 60 s). */
int comm_open(comm **out, bool force_local, double timeout_s, cp_error *err);
void comm_close(comm *c);

int comm_rank(const comm *c);
int comm_size(const comm *c);
const char *comm_backend(const comm *c); /* "local" or "mpi" */
double comm_timeout_s(const comm *c);
void comm_set_timeout_s(comm *c, double timeout_s);

/* True when the build has the MPI back-end, with a reason when it has not. */
bool comm_mpi_built(const char **why_not);

int comm_barrier(comm *c, cp_error *err);

/* Broadcast count elements from root into buf on every rank. */
int comm_bcast(comm *c, void *buf, size_t count, comm_dtype dt, int root, cp_error *err);

/* recv[count*size] receives every rank's count elements in rank order.
 * send NULL: in place, this rank's part is already at recv + rank*count. */
int comm_allgather(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                   cp_error *err);

/* Element-wise reduction of count elements; send NULL: in place in recv. */
int comm_allreduce(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                   comm_redop op, cp_error *err);

/* send[recv_count*size] is reduced element-wise; rank r receives block r in
 * recv[recv_count]. send NULL: in place, the input is recv[recv_count*size]
 * and the result lands at its start (MPI_Reduce_scatter_block semantics). */
int comm_reduce_scatter(comm *c, const void *send, void *recv, size_t recv_count, comm_dtype dt,
                        comm_redop op, cp_error *err);

/* Block j of send (count elements) goes to rank j; block i of recv comes from
 * rank i. send NULL: in place (recv holds the outgoing blocks). */
int comm_alltoall(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                  cp_error *err);

/* Point to point (bytes). peer == own rank is a usage error. */
int comm_send(comm *c, const void *buf, size_t bytes, int peer, int tag, cp_error *err);
int comm_recv(comm *c, void *buf, size_t bytes, int peer, int tag, cp_error *err);

/* Send to dst and receive from src at once (both posted before either is
 * waited on, so a ring of these cannot deadlock). */
int comm_sendrecv(comm *c, const void *send, size_t send_bytes, int dst, void *recv,
                  size_t recv_bytes, int src, int tag, cp_error *err);

/* Variable-size gathers of bytes (MPI_Gatherv / MPI_Allgatherv): every
 * rank sends send_bytes (which may differ per rank, 0 included). The sizes
 * are exchanged first, so callers need not know them: *out (malloc'd, the
 * caller frees it) receives every rank's bytes concatenated in rank order
 * and sizes[size] each rank's count. comm_gatherv fills them at root only
 * (elsewhere *out is NULL and sizes untouched). The total must fit MPI's
 * int count (2 GiB): larger is CP_ERR_NOMEM (a cap), said before anything moves. */
int comm_gatherv(comm *c, const void *send, size_t send_bytes, int root, void **out, size_t *sizes,
                 cp_error *err);
int comm_allgatherv(comm *c, const void *send, size_t send_bytes, void **out, size_t *sizes, cp_error *err);

/* Convenience reductions of small arrays in place. */
int comm_allreduce_f64(comm *c, double *v, size_t n, comm_redop op, cp_error *err);
int comm_allreduce_i64(comm *c, int64_t *v, size_t n, comm_redop op, cp_error *err);

/* names[size][COMM_HOST_MAX] gets every rank's host name (CHAINPROF_HOSTNAME
 * overrides gethostname, for test hosts that share a UTS namespace). */
int comm_hostnames(comm *c, char (*names)[COMM_HOST_MAX], cp_error *err);

/* Own host name as comm_hostnames reports it. */
void comm_own_hostname(char out[COMM_HOST_MAX]);

/* Tear the whole job down (MPI_Abort); in the local back-end exit(code). */
_Noreturn void comm_abort(comm *c, int code);

/* ---- back-end table (comm.c dispatches through it) ---- */
typedef struct comm_ops {
    const char *name;
    int (*barrier)(comm *c, cp_error *err);
    int (*bcast)(comm *c, void *buf, size_t count, comm_dtype dt, int root, cp_error *err);
    int (*allgather)(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                     cp_error *err);
    int (*allreduce)(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                     comm_redop op, cp_error *err);
    int (*reduce_scatter)(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                          comm_redop op, cp_error *err);
    int (*alltoall)(comm *c, const void *send, void *recv, size_t count, comm_dtype dt,
                    cp_error *err);
    /* bytes; counts[size] and displs[size] as MPI's; recv NULL off root */
    int (*gatherv)(comm *c, const void *send, size_t send_bytes, void *recv, const int *counts,
                   const int *displs, int root, cp_error *err);
    int (*allgatherv)(comm *c, const void *send, size_t send_bytes, void *recv, const int *counts,
                      const int *displs, cp_error *err);
    int (*send)(comm *c, const void *buf, size_t bytes, int peer, int tag, cp_error *err);
    int (*recv)(comm *c, void *buf, size_t bytes, int peer, int tag, cp_error *err);
    int (*sendrecv)(comm *c, const void *send, size_t send_bytes, int dst, void *recv,
                    size_t recv_bytes, int src, int tag, cp_error *err);
    void (*abort)(comm *c, int code);
    void (*close)(comm *c);
} comm_ops;

struct comm {
    const comm_ops *ops;
    int rank, size;
    double timeout_s;
    void *impl; /* back-end state */
};

extern const comm_ops comm_local_ops;
#ifdef CP_HAVE_MPI
/* Initialise MPI (MPI_Init unless already initialised) and fill c. */
int comm_mpi_init(comm *c, cp_error *err);
#endif

#endif
