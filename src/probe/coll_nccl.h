/* coll_nccl.h - the coll sweep on GPU buffers through NCCL (a coll_engine).
 *
 * coll_nccl_open is collective over the comm: each rank picks its GPU (its
 * rank among the ranks of its host, modulo the devices it sees, as one
 * process per GPU is the NCCL norm), rank 0 creates the NCCL unique id and
 * broadcasts it through the comm (MPI or local), and every rank joins the
 * NCCL communicator. The ranks agree on success after each step, so a rank
 * that fails to set up makes every rank fail with the same story instead of
 * leaving peers waiting in NCCL.
 *
 * The engine keeps one stream and two device buffers (cudaMalloc); the
 * sweep's host test vectors are copied in with cudaMemcpy and the result
 * copied back for the correctness check. `wait` polls cudaStreamQuery
 * against the comm's timeout and ncclCommGetAsyncError (NCCL >= 2.4; the
 * declaration is in gpu.h) and aborts the NCCL communicator on either: a
 * dead peer gives CP_ERR_IO with NCCL's reason as soon as NCCL reports it,
 * or CP_ERR_TIMEOUT at the timeout, never a hang.
 *
 * In-place forms follow NCCL: all-gather from recv + rank*block,
 * reduce-scatter into recv + rank*block; NCCL has no in-place all-to-all, so
 * that row is left out. All-to-all is ncclAlltoAll when the library has it,
 * else ncclSend/ncclRecv to every peer in one group (as nccl-tests does).
 *
 * Ownership: coll_nccl borrows the gpu_rt and the comm (both must outlive
 * it); coll_nccl_close releases the NCCL communicator, stream and buffers.
 */
#ifndef CP_PROBE_COLL_NCCL_H
#define CP_PROBE_COLL_NCCL_H

#include "../comm/comm.h"
#include "../gpu/gpu.h"
#include "coll_bench.h"

typedef struct coll_nccl {
    gpu_rt *g;
    comm *c;
    int dev, rank, n;
    void *nc, *stream;
    float *dsend, *drecv;
    size_t max_count;
    coll_op last_op;      /* the collective being waited for (error messages) */
    size_t last_bytes;
    char version[32]; /* "2.28.9" */
} coll_nccl;

/* Collective over c; needs gpu_nccl_available(g). 0, or a negative status
 * (CP_ERR_UNAVAILABLE / CP_ERR_IO) with the reason in err on every rank. */
int coll_nccl_open(coll_nccl *x, gpu_rt *g, comm *c, cp_error *err);
void coll_nccl_close(coll_nccl *x);

/* The engine over x (x must outlive the sweep). */
void coll_nccl_engine(coll_nccl *x, coll_engine *eng);

/* The NCCL call(s) behind op, for the `method` column. */
const char *coll_nccl_call(const coll_nccl *x, coll_op op);

#endif
