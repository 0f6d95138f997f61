/* coll_bench.c - collective sweep and pair matrix (see coll_bench.h).
 *
 * Buffers are float32 (nccl-tests' default type). Test values are small
 * integers so sums over ranks are exact and the check can compare with ==.
 * In-place forms follow MPI_IN_PLACE: all-reduce works in recv, all-gather
 * expects this rank's block already at recv + rank*block, reduce-scatter reads
 * the full input from recv and leaves its block at the start, all-to-all
 * reads the outgoing blocks from recv. Broadcast is in place by nature and
 * send-recv out of place by nature, so each has one row per size.
 */
#include "coll_bench.h"
#include "probe_stats.h"

#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

float coll_value(int rank, size_t i)
{
    return (float)((i * 7 + (size_t)rank * 3) % 17 + (size_t)rank);
}

void coll_cfg_defaults(coll_cfg *cfg, bool quick)
{
    if (!cfg->min_bytes)
        cfg->min_bytes = quick ? 1024 : 8;
    if (!cfg->max_bytes)
        cfg->max_bytes = quick ? (1u << 20) : (16u << 20);
    if (cfg->max_bytes < cfg->min_bytes)
        cfg->max_bytes = cfg->min_bytes;
    if (!(cfg->factor > 1.0))
        cfg->factor = quick ? 4.0 : 2.0;
    if (cfg->warmup <= 0)
        cfg->warmup = quick ? 2 : 5;
    if (cfg->iters <= 0)
        cfg->iters = quick ? 5 : 20;
    if (!cfg->ops_mask)
        cfg->ops_mask = (1u << COLL_N_OPS) - 1;
    if (!cfg->p2p_bytes)
        cfg->p2p_bytes = quick ? (256u << 10) : (1u << 20);
    if (cfg->p2p_iters <= 0)
        cfg->p2p_iters = quick ? 4 : 10;
}

typedef struct bufs {
    float *send, *recv;
    size_t count, n; /* elements of the op's full buffer; ranks */
    int rank;
    size_t rs_off;   /* where this rank's reduce-scatter block lands in recv */
} bufs;

/* Fill the input of op (in place or not) with the test vector. */
static void fill(coll_op op, bool in_place, bufs *b)
{
    size_t blk = b->count / b->n;
    float *in = in_place ? b->recv : b->send;
    for (size_t i = 0; i < b->count; i++)
        b->recv[i] = -1.0f;
    switch (op) {
    case COLL_ALL_GATHER: /* each rank contributes blk elements */
        if (in_place)
            for (size_t i = 0; i < blk; i++)
                b->recv[(size_t)b->rank * blk + i] = coll_value(b->rank, i);
        else
            for (size_t i = 0; i < blk; i++)
                b->send[i] = coll_value(b->rank, i);
        break;
    case COLL_BROADCAST:
        if (b->rank == 0)
            for (size_t i = 0; i < b->count; i++)
                b->recv[i] = coll_value(0, i);
        break;
    default:
        for (size_t i = 0; i < b->count; i++)
            in[i] = coll_value(b->rank, i);
        break;
    }
}

/* Elements of the output that differ from what op must produce. */
static int64_t check(coll_op op, const bufs *b)
{
    size_t blk = b->count / b->n;
    int n = (int)b->n, prev = (b->rank - 1 + n) % n;
    int64_t wrong = 0;
    size_t m = op == COLL_REDUCE_SCATTER ? blk : b->count;
    const float *got = op == COLL_REDUCE_SCATTER ? b->recv + b->rs_off : b->recv;
    for (size_t i = 0; i < m; i++) {
        float want = 0;
        switch (op) {
        case COLL_ALL_REDUCE:
            for (int r = 0; r < n; r++)
                want += coll_value(r, i);
            break;
        case COLL_REDUCE_SCATTER:
            for (int r = 0; r < n; r++)
                want += coll_value(r, (size_t)b->rank * blk + i);
            break;
        case COLL_ALL_GATHER: want = coll_value((int)(i / blk), i % blk); break;
        case COLL_ALL_TO_ALL: want = coll_value((int)(i / blk), (size_t)b->rank * blk + i % blk); break;
        case COLL_BROADCAST: want = coll_value(0, i); break;
        case COLL_SEND_RECV: want = coll_value(prev, i); break;
        default: break;
        }
        if (got[i] != want)
            wrong++;
    }
    return wrong;
}

static int run_op(comm *c, coll_op op, bool in_place, bufs *b, cp_error *err)
{
    size_t blk = b->count / b->n;
    const float *s = in_place ? NULL : b->send;
    int n = (int)b->n;
    switch (op) {
    case COLL_ALL_REDUCE: return comm_allreduce(c, s, b->recv, b->count, COMM_DT_F32, COMM_SUM, err);
    case COLL_ALL_GATHER: return comm_allgather(c, s, b->recv, blk, COMM_DT_F32, err);
    case COLL_REDUCE_SCATTER: return comm_reduce_scatter(c, s, b->recv, blk, COMM_DT_F32, COMM_SUM, err);
    case COLL_ALL_TO_ALL: return comm_alltoall(c, s, b->recv, blk, COMM_DT_F32, err);
    case COLL_BROADCAST: return comm_bcast(c, b->recv, b->count, COMM_DT_F32, 0, err);
    case COLL_SEND_RECV:
        return comm_sendrecv(c, b->send, b->count * 4, (b->rank + 1) % n, b->recv, b->count * 4,
                             (b->rank - 1 + n) % n, 7, err);
    default: return cp_error_set(err, CP_ERR_INTERNAL, NULL, 0, 0, -1, "coll: op %d not measurable", op);
    }
}

/* One call of op: on the engine's buffers, or through the comm. */
static int launch(comm *c, const coll_engine *eng, coll_op op, bool in_place, bufs *b, cp_error *err)
{
    return eng ? eng->run(eng->self, op, in_place, b->count, err) : run_op(c, op, in_place, b, err);
}

/* Host test vectors -> engine buffers (no-op for host buffers). */
static int stage(const coll_engine *eng, coll_op op, bool in_place, bufs *b, cp_error *err)
{
    fill(op, in_place, b);
    return eng ? eng->upload(eng->self, b->send, b->recv, b->count, err) : 0;
}

static int measure(comm *c, const coll_engine *eng, const coll_cfg *cfg, coll_op op, bool in_place, bufs *b,
                   coll_result *r, cp_error *err)
{
    int rc = stage(eng, op, in_place, b, err);
    for (int i = 0; i < cfg->warmup && rc == 0; i++)
        rc = launch(c, eng, op, in_place, b, err);
    if (rc == 0 && eng)
        rc = eng->wait(eng->self, err);
    int rounds = cfg->rounds > 0 ? (cfg->rounds < COLL_MAX_ROUNDS ? cfg->rounds : COLL_MAX_ROUNDS) : 1;
    double sec_r[COLL_MAX_ROUNDS];
    for (int k = 0; k < rounds && rc == 0; k++) {
        rc = comm_barrier(c, err);
        double t0 = now_s();
        for (int i = 0; i < cfg->iters && rc == 0; i++)
            rc = launch(c, eng, op, in_place, b, err);
        if (rc == 0 && eng) /* device work is asynchronous: the span ends when it is done */
            rc = eng->wait(eng->self, err);
        double t[1] = {(now_s() - t0) / cfg->iters};
        if (rc == 0)
            rc = comm_allreduce_f64(c, t, 1, COMM_SUM, err);
        sec_r[k] = t[0] / (double)b->n; /* mean over ranks */
    }
    if (rc < 0)
        return rc;
    r->size_bytes = (size_t)coll_bytes(op, b->count, sizeof(float));
    r->n_rounds = rounds;
    for (int k = 0; k < rounds; k++)
        r->round_busbw_gbps[k] = coll_busbw_gbps(op, (int)b->n, (double)r->size_bytes, sec_r[k]);
    double sec = probe_median(sec_r, (size_t)rounds); /* sorts sec_r: the busbw rounds are taken */
    int64_t wrong[1] = {-1};
    if (cfg->check) {
        b->rs_off = eng && eng->rs_in_place_at_block && in_place ? (size_t)b->rank * (b->count / b->n) : 0;
        if ((rc = stage(eng, op, in_place, b, err)) < 0 || (rc = launch(c, eng, op, in_place, b, err)) < 0)
            return rc;
        if (eng && ((rc = eng->wait(eng->self, err)) < 0 || (rc = eng->download(eng->self, b->recv, b->count, err)) < 0))
            return rc;
        wrong[0] = check(op, b);
        if ((rc = comm_allreduce_i64(c, wrong, 1, COMM_SUM, err)) < 0)
            return rc;
    }
    r->op = op;
    r->count = b->count;
    r->in_place = in_place;
    r->time_us = sec * 1e6;
    r->algbw_gbps = coll_algbw_gbps((double)r->size_bytes, sec);
    r->busbw_gbps = coll_busbw_gbps(op, (int)b->n, (double)r->size_bytes, sec);
    r->wrong = wrong[0];
    return 0;
}

int coll_sweep(comm *c, const coll_cfg *cfg, coll_result **out, size_t *n_out, cp_error *err)
{
    return coll_sweep_engine(c, NULL, cfg, out, n_out, err);
}

int coll_sweep_engine(comm *c, const coll_engine *eng, const coll_cfg *cfg, coll_result **out, size_t *n_out,
                      cp_error *err)
{
    size_t n = (size_t)comm_size(c), cap = 16, nr = 0;
    coll_result *res = cp_xmalloc(cap * sizeof *res);
    bufs b = {.n = n, .rank = comm_rank(c)};
    size_t max_count = cfg->max_bytes / sizeof(float) + n;
    b.send = cp_xcalloc(max_count, sizeof(float));
    b.recv = cp_xcalloc(max_count, sizeof(float));
    int rc = eng ? eng->setup(eng->self, max_count, err) : 0;
    for (int op = 0; op < COLL_N_OPS && rc == 0; op++) {
        if (!(cfg->ops_mask & (1u << op)) || op == COLL_REDUCE)
            continue; /* MPI reduce to one root is not in the list */
        if (op == COLL_SEND_RECV && n < 2)
            continue;
        double prev_count = -1;
        for (double bytes = (double)cfg->min_bytes; bytes <= (double)cfg->max_bytes * 1.0000001 && rc == 0;
             bytes *= cfg->factor) {
            size_t count = (size_t)bytes / sizeof(float);
            if (op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER || op == COLL_ALL_TO_ALL)
                count -= count % n; /* nccl-tests rounds to whole per-rank blocks */
            if (count == 0 || (double)count == prev_count)
                continue;
            prev_count = (double)count;
            b.count = count;
            for (int ip = 0; ip < 2 && rc == 0; ip++) {
                bool in_place = ip == 1;
                if ((op == COLL_BROADCAST && !in_place) || (op == COLL_SEND_RECV && in_place) ||
                    (op == COLL_ALL_TO_ALL && in_place && eng && eng->no_in_place_all_to_all))
                    continue;
                if (nr == cap)
                    res = cp_xrealloc(res, (cap *= 2) * sizeof *res);
                rc = measure(c, eng, cfg, (coll_op)op, in_place, &b, &res[nr], err);
                if (rc == 0)
                    nr++;
            }
        }
    }
    if (eng)
        eng->teardown(eng->self);
    free(b.send);
    free(b.recv);
    *out = res;
    *n_out = nr;
    return rc;
}

int coll_p2p_matrix(comm *c, const coll_cfg *cfg, double *bw_gbps, cp_error *err)
{
    int n = comm_size(c), me = comm_rank(c), rc = 0;
    size_t nn = (size_t)n * (size_t)n;
    for (size_t k = 0; k < nn; k++)
        bw_gbps[k] = 0;
    char *buf = cp_xcalloc(cfg->p2p_bytes + 1, 1);
    char ack = 0;
    for (int i = 0; i < n && rc == 0; i++)
        for (int j = 0; j < n && rc == 0; j++) {
            if (i == j)
                continue;
            rc = comm_barrier(c, err);
            if (rc < 0 || (me != i && me != j))
                continue;
            /* two untimed messages: the TCP transport connects lazily */
            int total = cfg->p2p_iters + 2;
            double t0 = 0;
            for (int k = 0; k < total && rc == 0; k++) {
                if (k == 2)
                    t0 = now_s();
                rc = me == i ? comm_send(c, buf, cfg->p2p_bytes, j, 11, err)
                             : comm_recv(c, buf, cfg->p2p_bytes, i, 11, err);
            }
            /* the ack makes the sender's clock include delivery */
            if (rc == 0)
                rc = me == i ? comm_recv(c, &ack, 1, j, 12, err) : comm_send(c, &ack, 1, i, 12, err);
            if (rc == 0 && me == i)
                bw_gbps[(size_t)i * (size_t)n + (size_t)j] =
                    (double)cfg->p2p_bytes * cfg->p2p_iters / (now_s() - t0) / 1e9;
        }
    free(buf);
    if (rc == 0)
        rc = comm_allreduce_f64(c, bw_gbps, nn, COMM_SUM, err);
    for (int i = 0; i < n; i++)
        bw_gbps[(size_t)i * (size_t)n + (size_t)i] = NAN;
    return rc;
}
