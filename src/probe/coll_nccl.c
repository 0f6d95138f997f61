/* coll_nccl.c - NCCL engine for the coll sweep (see coll_nccl.h).
 *
 * Every NCCL or CUDA failure becomes a cp_error naming the call and the
 * library's own text. Steps that can fail on one rank only are followed by
 * an agreement (an all-reduce of "failed" flags over the comm, which has
 * timeouts), so the ranks leave together.
 *
 * Waiting for a collective polls the stream and, every 64 rounds, the
 * communicator's asynchronous error (ncclCommGetAsyncError, when the
 * library has it): a peer that died or a network failure is reported by
 * NCCL there while the device work never finishes. Either that error or
 * the comm's timeout aborts the communicator (ncclCommAbort, which is what
 * unblocks the device) and fails the sweep with a message naming the call,
 * instead of waiting forever.
 */
#include "coll_nccl.h"

#include "../base/util.h"

#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int nccl_fail(coll_nccl *x, int e, const char *call, cp_error *err)
{
    return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "nccl: %s failed: %s", call, x->g->ncclGetErrorString(e));
}

static int cuda_fail(coll_nccl *x, int e, const char *call, cp_error *err)
{
    return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "nccl: %s failed: %s", call, x->g->GetErrorString(e));
}

/* All ranks learn whether any failed; a rank that did not fail itself gets
 * a message saying another did. Returns rc of this rank or the agreement. */
static int agree(coll_nccl *x, int rc, const char *step, cp_error *err)
{
    int64_t bad[1] = { rc < 0 };
    cp_error tmp;
    int arc = comm_allreduce_i64(x->c, bad, 1, COMM_MAX, &tmp);
    if (arc < 0) {
        if (err)
            *err = tmp;
        return arc;
    }
    if (rc < 0)
        return rc;
    if (bad[0])
        return cp_error_set(err, CP_ERR_UNAVAILABLE, NULL, 0, 0, -1, "nccl: %s failed on another rank", step);
    return 0;
}

/* This rank's index among the ranks on its host. */
static int local_rank(comm *c, cp_error *err)
{
    int n = comm_size(c), me = comm_rank(c), local = 0;
    char (*names)[COMM_HOST_MAX] = cp_xcalloc((size_t)n, sizeof *names);
    int rc = comm_hostnames(c, names, err);
    for (int r = 0; rc == 0 && r < me; r++)
        local += strcmp(names[r], names[me]) == 0;
    free(names);
    return rc < 0 ? rc : local;
}

int coll_nccl_open(coll_nccl *x, gpu_rt *g, comm *c, cp_error *err)
{
    memset(x, 0, sizeof *x);
    x->g = g, x->c = c, x->rank = comm_rank(c), x->n = comm_size(c);
    gpu_nccl_version_str(g->nccl_version, x->version, sizeof x->version);
    int local = local_rank(c, err);
    if (local < 0)
        return local;
    x->dev = local % g->n_devices;
    int e, rc = 0;
    if ((e = g->SetDevice(x->dev)) != 0)
        rc = cuda_fail(x, e, "cudaSetDevice", err);
    else if ((e = g->StreamCreate(&x->stream)) != 0)
        rc = cuda_fail(x, e, "cudaStreamCreate", err);
    gpu_nccl_id id;
    memset(&id, 0, sizeof id);
    if (rc == 0 && x->rank == 0 && (e = g->ncclGetUniqueId(&id)) != 0)
        rc = nccl_fail(x, e, "ncclGetUniqueId", err);
    if ((rc = agree(x, rc, "CUDA stream or NCCL id set-up", err)) < 0)
        goto fail;
    if ((rc = comm_bcast(c, &id, sizeof id, COMM_DT_BYTE, 0, err)) < 0)
        goto fail;
    if ((e = g->ncclCommInitRank(&x->nc, x->n, id, x->rank)) != 0) {
        x->nc = NULL;
        rc = nccl_fail(x, e, "ncclCommInitRank", err);
    }
    if ((rc = agree(x, rc, "ncclCommInitRank", err)) < 0)
        goto fail;
    return 0;
fail:
    coll_nccl_close(x);
    return rc;
}

static void free_bufs(coll_nccl *x)
{
    if (x->dsend)
        x->g->Free(x->dsend);
    if (x->drecv)
        x->g->Free(x->drecv);
    x->dsend = x->drecv = NULL;
}

void coll_nccl_close(coll_nccl *x)
{
    if (!x->g)
        return;
    free_bufs(x);
    if (x->nc)
        x->g->ncclCommDestroy(x->nc);
    if (x->stream)
        x->g->StreamDestroy(x->stream);
    x->nc = x->stream = NULL;
}

static int eng_setup(void *self, size_t max_count, cp_error *err)
{
    coll_nccl *x = self;
    int e = x->g->SetDevice(x->dev), rc = 0;
    x->max_count = max_count;
    if (e == 0 && (e = x->g->Malloc((void **)&x->dsend, max_count * sizeof(float))) == 0)
        e = x->g->Malloc((void **)&x->drecv, max_count * sizeof(float));
    if (e != 0)
        rc = cp_error_set(err, CP_ERR_NOMEM, NULL, 0, 0, -1, "nccl: cudaMalloc of 2 x %zu bytes on GPU %d failed: %s",
                          max_count * sizeof(float), x->dev, x->g->GetErrorString(e));
    return agree(x, rc, "device buffer allocation", err);
}

static int eng_upload(void *self, const float *send, const float *recv, size_t count, cp_error *err)
{
    coll_nccl *x = self;
    int e = x->g->Memcpy(x->dsend, send, count * sizeof(float), GPU_H2D);
    if (e == 0)
        e = x->g->Memcpy(x->drecv, recv, count * sizeof(float), GPU_H2D);
    return e ? cuda_fail(x, e, "cudaMemcpy to the device", err) : 0;
}

static int eng_download(void *self, float *recv, size_t count, cp_error *err)
{
    coll_nccl *x = self;
    int e = x->g->Memcpy(recv, x->drecv, count * sizeof(float), GPU_D2H);
    return e ? cuda_fail(x, e, "cudaMemcpy from the device", err) : 0;
}

/* ncclSend/ncclRecv in one group: to every peer (all-to-all) or around the ring. */
static int grouped(coll_nccl *x, coll_op op, size_t count, cp_error *err)
{
    gpu_rt *g = x->g;
    size_t blk = count / (size_t)x->n;
    int e = g->ncclGroupStart();
    if (e != 0)
        return nccl_fail(x, e, "ncclGroupStart", err);
    if (op == COLL_ALL_TO_ALL) {
        for (int p = 0; p < x->n && e == 0; p++) {
            e = g->ncclSend(x->dsend + (size_t)p * blk, blk, GPU_NCCL_FLOAT32, p, x->nc, x->stream);
            if (e == 0)
                e = g->ncclRecv(x->drecv + (size_t)p * blk, blk, GPU_NCCL_FLOAT32, p, x->nc, x->stream);
        }
    } else {
        e = g->ncclSend(x->dsend, count, GPU_NCCL_FLOAT32, (x->rank + 1) % x->n, x->nc, x->stream);
        if (e == 0)
            e = g->ncclRecv(x->drecv, count, GPU_NCCL_FLOAT32, (x->rank - 1 + x->n) % x->n, x->nc, x->stream);
    }
    int e2 = g->ncclGroupEnd(); /* always close the group, even after a failed call */
    if (e != 0)
        return nccl_fail(x, e, "ncclSend/ncclRecv", err);
    return e2 ? nccl_fail(x, e2, "ncclGroupEnd", err) : 0;
}

static int eng_run(void *self, coll_op op, bool in_place, size_t count, cp_error *err)
{
    coll_nccl *x = self;
    gpu_rt *g = x->g;
    size_t blk = count / (size_t)x->n;
    float *own = x->drecv + (size_t)x->rank * blk; /* this rank's block of recv */
    const float *src = in_place ? x->drecv : x->dsend;
    int e;
    switch (op) {
    case COLL_ALL_REDUCE:
        e = g->ncclAllReduce(src, x->drecv, count, GPU_NCCL_FLOAT32, GPU_NCCL_SUM, x->nc, x->stream);
        break;
    case COLL_ALL_GATHER:
        e = g->ncclAllGather(in_place ? own : x->dsend, x->drecv, blk, GPU_NCCL_FLOAT32, x->nc, x->stream);
        break;
    case COLL_REDUCE_SCATTER:
        e = g->ncclReduceScatter(src, in_place ? own : x->drecv, blk, GPU_NCCL_FLOAT32, GPU_NCCL_SUM, x->nc,
                                 x->stream);
        break;
    case COLL_ALL_TO_ALL:
        if (!g->ncclAlltoAll) {
            x->last_op = op;
            x->last_bytes = count * sizeof(float);
            return grouped(x, op, count, err);
        }
        e = g->ncclAlltoAll(x->dsend, x->drecv, blk, GPU_NCCL_FLOAT32, x->nc, x->stream);
        break;
    case COLL_BROADCAST: e = g->ncclBroadcast(x->drecv, x->drecv, count, GPU_NCCL_FLOAT32, 0, x->nc, x->stream); break;
    case COLL_SEND_RECV:
        x->last_op = op;
        x->last_bytes = count * sizeof(float);
        return grouped(x, op, count, err);
    default: return cp_error_set(err, CP_ERR_INTERNAL, NULL, 0, 0, -1, "nccl: op %d not measurable", op);
    }
    x->last_op = op;
    x->last_bytes = count * sizeof(float);
    return e ? nccl_fail(x, e, coll_nccl_call(x, op), err) : 0;
}

/* Abort the communicator after a failed wait: the device work it left
 * behind ends, and close must not destroy it again. */
static void abort_comm(coll_nccl *x)
{
    x->g->ncclCommAbort(x->nc);
    x->nc = NULL;
}

/* Poll the stream against the comm's timeout, and the communicator's
 * asynchronous error every 64 rounds; either failure aborts the NCCL
 * communicator, which unblocks the device. */
static int eng_wait(void *self, cp_error *err)
{
    coll_nccl *x = self;
    double limit_s = comm_timeout_s(x->c);
    int64_t t0 = cp_now_ns();
    struct timespec nap = { 0, 20000 };
    for (unsigned spin = 0;; spin++) {
        int e = x->g->StreamQuery(x->stream);
        if (e == 0)
            return 0;
        if (e != GPU_ERR_NOT_READY)
            return cuda_fail(x, e, "cudaStreamQuery", err);
        if (x->g->ncclCommGetAsyncError && (spin & 63) == 0) {
            int ae = 0, qe = x->g->ncclCommGetAsyncError(x->nc, &ae);
            if (qe != 0 || (ae != 0 && ae != GPU_NCCL_IN_PROGRESS)) {
                const char *why = x->g->ncclGetErrorString(qe ? qe : ae);
                abort_comm(x);
                return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1,
                                    "nccl: %s of %zu bytes failed while running: %s (%s); communicator aborted",
                                    coll_nccl_call(x, x->last_op), x->last_bytes, why,
                                    qe ? "ncclCommGetAsyncError failed" : "asynchronous error");
            }
        }
        if ((double)(cp_now_ns() - t0) / 1e9 > limit_s) {
            abort_comm(x);
            return cp_error_set(err, CP_ERR_TIMEOUT, NULL, 0, 0, -1,
                                "nccl: collective did not finish within %.0f s (a peer died or hangs; %s of %zu "
                                "bytes); communicator aborted",
                                limit_s, coll_nccl_call(x, x->last_op), x->last_bytes);
        }
        if (spin < 100)
            sched_yield();
        else
            nanosleep(&nap, NULL);
    }
}

static void eng_teardown(void *self)
{
    free_bufs(self);
}

void coll_nccl_engine(coll_nccl *x, coll_engine *eng)
{
    *eng = (coll_engine){ .self = x, .setup = eng_setup, .upload = eng_upload, .run = eng_run, .wait = eng_wait,
                          .download = eng_download, .teardown = eng_teardown, .rs_in_place_at_block = true,
                          .no_in_place_all_to_all = true };
}

const char *coll_nccl_call(const coll_nccl *x, coll_op op)
{
    switch (op) {
    case COLL_ALL_REDUCE: return "ncclAllReduce sum";
    case COLL_ALL_GATHER: return "ncclAllGather";
    case COLL_REDUCE_SCATTER: return "ncclReduceScatter sum";
    case COLL_ALL_TO_ALL: return x->g->ncclAlltoAll ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv to every peer";
    case COLL_BROADCAST: return "ncclBroadcast root 0";
    case COLL_SEND_RECV: return "grouped ncclSend/ncclRecv ring";
    default: return "?";
    }
}
