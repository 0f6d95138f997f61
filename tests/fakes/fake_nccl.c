/* fake_nccl.c - a fake NCCL for tests, over host memory and shared files.
 *
 * "Device" buffers of the fake cudart are host memory, so the collectives
 * here are plain loops. Ranks in separate processes (mpirun -np N) meet in a
 * file that ncclGetUniqueId names inside the unique id: every rank maps it
 * (MAP_SHARED), so the ranks share one segment holding a barrier and one
 * data slot per rank. Each call runs to completion before it returns (the
 * stream argument is ignored, as the fake cudart's streams are dummies):
 *   collective: copy my input into my slot; barrier; compute my output
 *               from every slot; barrier (slots free again).
 *   group:      ncclSend/ncclRecv between ncclGroupStart/End are queued; at
 *               ncclGroupEnd each rank packs its sends into its slot and
 *               publishes (offset, bytes) per peer; barrier; each receive
 *               copies from its peer's slot; barrier. One send per peer per
 *               group, and every rank must end its group at the same time
 *               (true of ring and all-to-all patterns).
 * Only float32 (ncclFloat32 = 7) and ncclSum (0) are implemented.
 *
 * Knobs (env): FAKE_NCCL_SLOT_BYTES (largest message per rank, default
 * 64 MiB; the file is sparse), FAKE_NCCL_DIR (where the segment lives,
 * default /dev/shm or /tmp), FAKE_NCCL_CORRUPT=1 (all-reduce results are off
 * by one in element 0, so a correctness check must see it).
 * Failure injection: FAKE_NCCL_FAIL=async makes the FAKE_NCCL_FAIL_AT-th
 * collective call of the process (default 1; a group counts once) return
 * at once without doing its work, as if a peer died under it: the
 * communicator then reports ncclRemoteError through ncclCommGetAsyncError
 * and the stream never drains (this fake sets the fake cudart's
 * FAKE_STREAM_HANG). FAKE_NCCL_FAIL=hang does the same without the error.
 * FAKE_NCCL_ABORT_LOG=FILE appends "abort rank R" for every ncclCommAbort.
 * Build variants: -DFAKE_MISSING_SYMBOL drops ncclCommInitRank,
 * -DFAKE_NO_ALLTOALL drops ncclAlltoAll and reports version 2.18.5.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { OK = 0, SYSTEM_ERROR = 2, INTERNAL_ERROR = 3, INVALID_ARGUMENT = 4, INVALID_USAGE = 5, REMOTE_ERROR = 6 };
enum { MAX_RANKS = 64, MAX_GROUP = 2 * MAX_RANKS, F32 = 7, SUM = 0 };

typedef struct { char internal[128]; } fake_id;

typedef struct msg { uint64_t off, bytes; } msg;
typedef struct shared_hdr {
    atomic_int joined, count, sense;
    msg table[MAX_RANKS][MAX_RANKS]; /* table[src][dst]: src's send to dst in src's slot */
} shared_hdr;

typedef struct fake_comm {
    shared_hdr *h;
    char *data;
    size_t slot, map_bytes;
    int n, rank, sense;
    int async_err; /* what ncclCommGetAsyncError reports */
} fake_comm;

typedef struct p2p { int send; void *buf; size_t count; int peer; fake_comm *c; } p2p;
static p2p group_ops[MAX_GROUP];
static int group_depth, group_n;

int ncclGetVersion(int *v)
{
#ifdef FAKE_NO_ALLTOALL
    *v = 21805;
#else
    *v = 22809;
#endif
    return OK;
}

const char *ncclGetErrorString(int e)
{
    switch (e) {
    case OK: return "no error";
    case SYSTEM_ERROR: return "unhandled system error (fake)";
    case INVALID_ARGUMENT: return "invalid argument (fake)";
    case INVALID_USAGE: return "invalid usage (fake)";
    case REMOTE_ERROR: return "remote process exited or there was a network error (fake)";
    default: return "internal error (fake)";
    }
}

static const char *seg_dir(void)
{
    const char *d = getenv("FAKE_NCCL_DIR");
    if (d && *d)
        return d;
    struct stat st;
    return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
}

int ncclGetUniqueId(fake_id *id)
{
    static int counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "%s/fake_nccl.%d.%d.%ld", seg_dir(), (int)getpid(), counter++,
             (long)ts.tv_nsec);
    return OK;
}

/* Sense-reversing barrier over the shared header; gives up after 60 s so a
 * dead peer fails the call instead of hanging the test. */
static int barrier(fake_comm *c)
{
    c->sense = !c->sense;
    if (atomic_fetch_add(&c->h->count, 1) == c->n - 1) {
        atomic_store(&c->h->count, 0);
        atomic_store(&c->h->sense, c->sense);
        return OK;
    }
    struct timespec t0, now, nap = { 0, 20000 };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned spin = 0; atomic_load(&c->h->sense) != c->sense; spin++) {
        if (spin < 64) {
            sched_yield();
            continue;
        }
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60)
            return SYSTEM_ERROR;
    }
    return OK;
}

#ifndef FAKE_MISSING_SYMBOL
static size_t slot_bytes(void)
{
    const char *s = getenv("FAKE_NCCL_SLOT_BYTES");
    long long v = s ? atoll(s) : 0;
    return v > 0 ? (size_t)v : (size_t)64 << 20;
}

int ncclCommInitRank(fake_comm **out, int n, fake_id id, int rank)
{
    if (n < 1 || n > MAX_RANKS || rank < 0 || rank >= n || strncmp(id.internal, "/", 1) != 0)
        return INVALID_ARGUMENT;
    fake_comm *c = calloc(1, sizeof *c);
    if (!c)
        return SYSTEM_ERROR;
    c->n = n, c->rank = rank, c->slot = slot_bytes();
    size_t hdr = (sizeof(shared_hdr) + 4095) & ~(size_t)4095;
    c->map_bytes = hdr + c->slot * (size_t)n;
    int fd = open(id.internal, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_bytes) != 0) {
        if (fd >= 0)
            close(fd);
        free(c);
        return SYSTEM_ERROR;
    }
    void *m = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        free(c);
        return SYSTEM_ERROR;
    }
    c->h = m;
    c->data = (char *)m + hdr;
    /* wait until every rank has mapped the file, then it can go */
    atomic_fetch_add(&c->h->joined, 1);
    struct timespec nap = { 0, 100000 };
    for (int i = 0; atomic_load(&c->h->joined) < n; i++) {
        if (i > 600000) { /* 60 s */
            munmap(m, c->map_bytes);
            free(c);
            return SYSTEM_ERROR;
        }
        nanosleep(&nap, NULL);
    }
    int rc = barrier(c);
    if (rank == 0)
        unlink(id.internal);
    *out = c;
    return rc;
}
#endif

static void comm_free(fake_comm *c)
{
    munmap(c->h, c->map_bytes);
    free(c);
}

int ncclCommDestroy(fake_comm *c)
{
    if (!c)
        return INVALID_ARGUMENT;
    int rc = barrier(c);
    comm_free(c);
    return rc;
}

int ncclCommAbort(fake_comm *c)
{
    const char *log = getenv("FAKE_NCCL_ABORT_LOG");
    FILE *f = c && log && *log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "abort rank %d\n", c->rank);
        fclose(f);
    }
    if (c)
        comm_free(c);
    return OK;
}

int ncclCommGetAsyncError(fake_comm *c, int *err)
{
    if (!c || !err)
        return INVALID_ARGUMENT;
    *err = c->async_err;
    return OK;
}

/* Whether this collective call is the one FAKE_NCCL_FAIL picks; if so it
 * leaves the work undone and the stream stuck (see the top). */
static int injected(fake_comm *c)
{
    static int calls;
    const char *mode = getenv("FAKE_NCCL_FAIL");
    if (!mode || !*mode)
        return 0;
    const char *at = getenv("FAKE_NCCL_FAIL_AT");
    if (++calls != (at && *at ? atoi(at) : 1))
        return 0;
    if (!strcmp(mode, "async"))
        c->async_err = REMOTE_ERROR;
    setenv("FAKE_STREAM_HANG", "1", 1);
    return 1;
}

static float *slot_of(fake_comm *c, int r) { return (float *)(void *)(c->data + (size_t)r * c->slot); }

/* Copy in bytes of mine into my slot and wait for everyone. */
static int post(fake_comm *c, const void *in, size_t bytes)
{
    if (bytes > c->slot)
        return INVALID_ARGUMENT;
    if (bytes)
        memmove(slot_of(c, c->rank), in, bytes);
    return barrier(c);
}

static int reduce_from(fake_comm *c, float *out, size_t count, size_t first)
{
    for (size_t i = 0; i < count; i++) {
        float s = 0;
        for (int r = 0; r < c->n; r++)
            s += slot_of(c, r)[first + i];
        out[i] = s;
    }
    return OK;
}

int ncclAllReduce(const void *s, void *r, size_t count, int dt, int op, fake_comm *c, void *stream)
{
    (void)stream;
    if (dt != F32 || op != SUM || !c)
        return INVALID_ARGUMENT;
    if (injected(c))
        return OK;
    int rc = post(c, s, count * 4);
    if (rc)
        return rc;
    reduce_from(c, r, count, 0);
    if (count && getenv("FAKE_NCCL_CORRUPT") && atoi(getenv("FAKE_NCCL_CORRUPT")))
        ((float *)r)[0] += 1;
    return barrier(c);
}

int ncclReduceScatter(const void *s, void *r, size_t recvcount, int dt, int op, fake_comm *c, void *stream)
{
    (void)stream;
    if (dt != F32 || op != SUM || !c)
        return INVALID_ARGUMENT;
    if (injected(c))
        return OK;
    int rc = post(c, s, recvcount * 4 * (size_t)c->n);
    if (rc)
        return rc;
    reduce_from(c, r, recvcount, (size_t)c->rank * recvcount);
    return barrier(c);
}

int ncclAllGather(const void *s, void *r, size_t sendcount, int dt, fake_comm *c, void *stream)
{
    (void)stream;
    if (dt != F32 || !c)
        return INVALID_ARGUMENT;
    if (injected(c))
        return OK;
    int rc = post(c, s, sendcount * 4);
    if (rc)
        return rc;
    for (int k = 0; k < c->n; k++)
        memmove((float *)r + (size_t)k * sendcount, slot_of(c, k), sendcount * 4);
    return barrier(c);
}

int ncclBroadcast(const void *s, void *r, size_t count, int dt, int root, fake_comm *c, void *stream)
{
    (void)stream;
    if (dt != F32 || !c || root < 0 || root >= c->n)
        return INVALID_ARGUMENT;
    if (injected(c))
        return OK;
    int rc = post(c, s, c->rank == root ? count * 4 : 0);
    if (rc)
        return rc;
    memmove(r, slot_of(c, root), count * 4);
    return barrier(c);
}

#ifndef FAKE_NO_ALLTOALL
int ncclAlltoAll(const void *s, void *r, size_t count, int dt, fake_comm *c, void *stream)
{
    (void)stream;
    if (dt != F32 || !c)
        return INVALID_ARGUMENT;
    if (injected(c))
        return OK;
    int rc = post(c, s, count * 4 * (size_t)c->n);
    if (rc)
        return rc;
    for (int k = 0; k < c->n; k++)
        memmove((float *)r + (size_t)k * count, slot_of(c, k) + (size_t)c->rank * count, count * 4);
    return barrier(c);
}
#endif

int ncclGroupStart(void)
{
    group_depth++;
    return OK;
}

/* Run the queued point-to-point operations (all on one comm). */
static int run_group(void)
{
    int n = group_n;
    group_n = 0;
    if (!n)
        return OK;
    fake_comm *c = group_ops[0].c;
    if (injected(c))
        return OK;
    uint64_t off = 0;
    memset(c->h->table[c->rank], 0, sizeof c->h->table[c->rank]);
    for (int i = 0; i < n; i++) {
        p2p *o = &group_ops[i];
        if (o->c != c)
            return INVALID_USAGE;
        if (!o->send)
            continue;
        size_t bytes = o->count * 4;
        if (off + bytes > c->slot || c->h->table[c->rank][o->peer].bytes)
            return INVALID_ARGUMENT; /* too big, or a second send to one peer */
        memcpy(c->data + (size_t)c->rank * c->slot + off, o->buf, bytes);
        c->h->table[c->rank][o->peer] = (msg){ off, bytes ? bytes : 1 }; /* nonzero: "posted" */
        off += bytes;
    }
    int rc = barrier(c);
    for (int i = 0; i < n && !rc; i++) {
        p2p *o = &group_ops[i];
        if (o->send)
            continue;
        msg m = c->h->table[o->peer][c->rank];
        size_t bytes = o->count * 4;
        if (!m.bytes || (bytes && m.bytes != bytes))
            rc = INVALID_USAGE; /* no matching send of that size */
        else if (bytes)
            memcpy(o->buf, c->data + (size_t)o->peer * c->slot + m.off, bytes);
    }
    int rc2 = barrier(c);
    return rc ? rc : rc2;
}

int ncclGroupEnd(void)
{
    if (group_depth <= 0)
        return INVALID_USAGE;
    return --group_depth ? OK : run_group();
}

static int queue(int send, void *buf, size_t count, int dt, int peer, fake_comm *c)
{
    if (dt != F32 || !c || peer < 0 || peer >= c->n || group_n >= MAX_GROUP)
        return INVALID_ARGUMENT;
    group_ops[group_n++] = (p2p){ send, buf, count, peer, c };
    return group_depth ? OK : run_group();
}

int ncclSend(const void *s, size_t count, int dt, int peer, fake_comm *c, void *stream)
{
    (void)stream;
    return queue(1, (void *)(uintptr_t)s, count, dt, peer, c);
}

int ncclRecv(void *r, size_t count, int dt, int peer, fake_comm *c, void *stream)
{
    (void)stream;
    return queue(0, r, count, dt, peer, c);
}
