/* torch_log.c - PyTorch failure-log reader (see torch_log.h; facts in
 * src/model/ev_torch.h).
 *
 * One pass, line by line. Tracebacks are followed with a small state per
 * rank tag (so ranks interleaved in one launcher log do not mix): while a
 * "Traceback (most recent call last):" block is open its "File ..., in func"
 * frames set phase flags (backward wins over optimizer over forward, because
 * a backward pass is entered from the training loop, never the reverse) and
 * remember the innermost frame outside site-packages - the user's line. The
 * block closes at the first unindented line, which is the exception; an OOM
 * on that line or within the next few lines takes the traceback's phase.
 */
#include "torch_log.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

/* Phrases that make a line worth a closer look (rd_keyset gate). */
enum { K_ERROR, K_WORKNCCL, K_COLLECTIVE, K_SIGBUS, K_OOM, K_TRACEBACK, K_NCCL_WORK, K_SIGNAL, K_RANK, K_CUDA_RT };
static const char *const k_keys[] = {
    "rror", "WorkNCCL(", "collective", "SIGBUS", "out of memory", "Traceback (most recent call last)", "NCCL work",
    "ignal ", "rank ", "cuda runtime error",
};

/* Environment messages that name their cause, as they are printed:
 * c10d (torch/csrc/distributed/c10d: TCPStore, socket.cpp,
 * ProcessGroupNCCL.cpp), DDP's reducer, the DataLoader, PyTorch's CUDA
 * lazy init, CUDA runtime error strings, NVML, cuBLAS. One keyset over the
 * phrases gates them in one scan. */
static const struct {
    int kind;
    const char *phrase;
} k_issue_phrases[] = {
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "client socket has timed out after"},
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "client socket has failed to connect"},
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "via c10d key-value store by key"},
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "RendezvousTimeoutError"},
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "RendezvousConnectionError"},
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "Timed out initializing process group in store based barrier"},
    {EV_TORCH_ISSUE_STORE_UNREACHABLE, "seconds waiting for clients"},
    {EV_TORCH_ISSUE_STORE_PORT_IN_USE, "server socket has failed to listen on any local network address"},
    {EV_TORCH_ISSUE_STORE_PORT_IN_USE, "Address already in use"},
    {EV_TORCH_ISSUE_WATCHDOG_HANG, "watchdog got stuck for"},
    {EV_TORCH_ISSUE_WATCHDOG_HANG, "Heartbeat monitor timed out"},
    {EV_TORCH_ISSUE_DDP_UNUSED, "Expected to have finished reduction in the prior iteration"},
    {EV_TORCH_ISSUE_DATALOADER_SHM, "insufficient shared memory (shm)"},
    {EV_TORCH_ISSUE_DATALOADER_SHM, "workers are out of shared memory"},
    {EV_TORCH_ISSUE_DRIVER_MISMATCH, "driver on your system is too old"},
    {EV_TORCH_ISSUE_DRIVER_MISMATCH, "CUDA driver version is insufficient for CUDA runtime version"},
    {EV_TORCH_ISSUE_DRIVER_MISMATCH, "Driver/library version mismatch"},
    {EV_TORCH_ISSUE_NO_DEVICE, "no CUDA-capable device is detected"},
    {EV_TORCH_ISSUE_NO_DEVICE, "No CUDA GPUs are available"},
    {EV_TORCH_ISSUE_NO_DEVICE, "Found no NVIDIA driver on your system"},
    {EV_TORCH_ISSUE_CUBLAS_ALLOC, "CUBLAS_STATUS_ALLOC_FAILED"},
    {EV_TORCH_ISSUE_P2P_UNSUPPORTED, "peer access is not supported between these two devices"},
};

typedef struct tb_slot { /* reading state of one traceback */
    int key;         /* rank, -2-local_rank, or -1 for untagged lines */
    bool open;
    int phase_flags; /* bit per ev_torch_phase */
    char frame[160]; /* innermost user frame so far */
    long closed_line;
    long used;
} tb_slot;

#define TB_SLOTS 8

typedef struct tst {
    ev_torch *ev;
    rd_keyset keys;
    rd_keyset issue_keys; /* k_issue_phrases */
    int elastic_rank; /* "rank : N" of torchrun's failure summary; -1 */
    /* open tracebacks, one slot per rank tag (interleaved ranks in one
     * launcher log each keep their own), least recently used recycled */
    tb_slot tb[TB_SLOTS];
    long tb_tick;
} tst;

/* torchrun's failure summary names the rank on its own line before the
 * signal: "  rank      : 3 (local_rank: 3)" ... "  traceback : Signal 9 (SIGKILL)
 * received by PID 1234". Returns the rank, or -1 when the line is not that. */
static int elastic_rank_line(const char *s, const char *end)
{
    while (s < end && *s == ' ')
        s++;
    if (end - s < 6 || memcmp(s, "rank", 4) != 0)
        return -1;
    s += 4;
    while (s < end && *s == ' ')
        s++;
    if (s >= end || *s != ':')
        return -1;
    s++;
    while (s < end && *s == ' ')
        s++;
    long v;
    return rd_scan_long(&s, end, &v) == 0 && v >= 0 && v < 1000000 ? (int)v : -1;
}

int rd_torch_scan_size(const char **p, const char *end, double *bytes)
{
    const char *s = *p;
    double v;
    if (rd_scan_double(&s, end, &v) != 0)
        return -1;
    while (s < end && *s == ' ')
        s++;
    static const struct {
        const char *u;
        double mul;
    } units[] = {{"bytes", 1},          {"KiB", 1024.0},  {"MiB", 1048576.0},    {"GiB", 1073741824.0},
                 {"TiB", 1099511627776.0}, {"KB", 1024.0}, {"MB", 1048576.0},     {"GB", 1073741824.0},
                 {"TB", 1099511627776.0}, {"B", 1}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t L = strlen(units[i].u);
        if ((size_t)(end - s) >= L && memcmp(s, units[i].u, L) == 0) {
            *bytes = v * units[i].mul;
            *p = s + L;
            return 0;
        }
    }
    return -1;
}

static void set_at(ev_at *at, const rd_line *ln, int rank)
{
    at->line = ln->no;
    at->rank = rank;
    at->ts = ln->pfx->ts;
    snprintf(at->host, sizeof at->host, "%s", ln->pfx->host);
    rd_copy_trim(at->text, sizeof at->text, ln->text, ln->len);
}

static int line_rank(const rd_prefix *pfx) { return pfx->rank >= 0 ? pfx->rank : pfx->local_rank; }

/* size right after `key` (skipping spaces), or -1 */
static double size_after(const char *s, const char *end, const char *key)
{
    const char *k = find(s, (size_t)(end - s), key);
    double b;
    if (!k)
        return -1;
    k += strlen(key);
    while (k < end && *k == ' ')
        k++;
    return rd_torch_scan_size(&k, end, &b) == 0 ? b : -1;
}

/* size right before `key` ("14.56 GiB already allocated"), or -1 */
static double size_before(const char *s, const char *end, const char *key)
{
    const char *k = find(s, (size_t)(end - s), key);
    if (!k)
        return -1;
    /* walk back over "<num> <unit>" : find the start of the number */
    const char *q = k;
    while (q > s && q[-1] == ' ')
        q--;
    while (q > s && isalpha((unsigned char)q[-1]))
        q--; /* unit */
    while (q > s && q[-1] == ' ')
        q--;
    while (q > s && (isdigit((unsigned char)q[-1]) || q[-1] == '.'))
        q--;
    double b;
    return rd_torch_scan_size(&q, k, &b) == 0 ? b : -1;
}

static int tb_key(const rd_prefix *pfx)
{
    return pfx->rank >= 0 ? pfx->rank : pfx->local_rank >= 0 ? -2 - pfx->local_rank : -1;
}

/* the traceback slot of this line's rank tag, or -1 */
static int tb_find(const tst *st, int key)
{
    for (int i = 0; i < TB_SLOTS; i++)
        if (st->tb[i].key == key)
            return i;
    return -1;
}

/* "Process 118636 has 71.62 GiB memory in use." (NVML's list of the GPU's
 * processes); "this process has" is the failing process itself. */
static void other_processes(ev_torch_oom *o, const char *s, const char *end)
{
    o->other_procs_bytes = -1;
    o->other_pid = -1;
    double best = -1;
    for (const char *p = s; (p = find(p, (size_t)(end - p), "Process ")) != NULL; p += 8) {
        const char *q = p + 8;
        long pid;
        if (rd_scan_long(&q, end, &pid) != 0)
            continue;
        double b = size_after(q, end, " has ");
        if (b < 0 || !find(q, (size_t)(end - q) > 40 ? 40 : (size_t)(end - q), "memory in use"))
            continue;
        o->other_procs_bytes = (o->other_procs_bytes < 0 ? 0 : o->other_procs_bytes) + b;
        o->n_other_procs++;
        if (b > best) {
            best = b;
            o->other_pid = pid;
        }
    }
}

static void parse_oom(tst *st, const rd_line *ln, const char *s, const char *end)
{
    ev_torch *f = st->ev;
    if (f->n_ooms == EV_TORCH_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    ev_torch_oom *o = &f->ooms[f->n_ooms++];
    memset(o, 0, sizeof *o);
    o->requested_bytes = size_after(s, end, "Tried to allocate");
    o->gpu = -1;
    const char *g = find(s, (size_t)(end - s), "GPU ");
    if (g) {
        const char *q = g + 4;
        long v;
        if (rd_scan_long(&q, end, &v) == 0)
            o->gpu = (int)v;
    }
    if (find(s, (size_t)(end - s), "total capacity of")) { /* new format */
        o->format = 2;
        o->total_bytes = size_after(s, end, "total capacity of");
        o->free_bytes = size_after(s, end, "of which");
        o->in_use_bytes = size_after(s, end, "this process has");
        o->allocated_bytes = size_before(s, end, "is allocated by PyTorch");
        o->reserved_unalloc_bytes = size_before(s, end, "is reserved by PyTorch but unallocated");
        other_processes(o, s, end);
    } else { /* old format, possibly without the parenthesised details */
        o->format = 1;
        o->total_bytes = size_before(s, end, "total capacity");
        o->allocated_bytes = size_before(s, end, "already allocated");
        o->free_bytes = size_before(s, end, "free;");
        double reserved = size_before(s, end, "reserved in total by PyTorch");
        if (reserved < 0)
            reserved = size_before(s, end, "cached)");
        o->in_use_bytes = -1;
        o->other_procs_bytes = -1;
        o->other_pid = -1;
        o->reserved_unalloc_bytes = reserved >= 0 && o->allocated_bytes >= 0 ? reserved - o->allocated_bytes : -1;
    }
    /* phase from the traceback that just closed (or is still open) */
    int t = tb_find(st, tb_key(ln->pfx));
    if (t >= 0 && (st->tb[t].open || (st->tb[t].closed_line && ln->no - st->tb[t].closed_line <= 3))) {
        int fl = st->tb[t].phase_flags;
        o->phase = (fl & (1 << EV_TORCH_PHASE_BACKWARD))    ? EV_TORCH_PHASE_BACKWARD
                   : (fl & (1 << EV_TORCH_PHASE_OPTIMIZER)) ? EV_TORCH_PHASE_OPTIMIZER
                   : (fl & (1 << EV_TORCH_PHASE_FORWARD))   ? EV_TORCH_PHASE_FORWARD
                                                            : EV_TORCH_PHASE_UNKNOWN;
        memcpy(o->frame, st->tb[t].frame, sizeof o->frame); /* same size, terminated */
    }
    set_at(&o->at, ln, line_rank(ln->pfx));
}

/* WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for 600060 milliseconds */
static void parse_watchdog(tst *st, const rd_line *ln, const char *s, const char *end)
{
    ev_torch *f = st->ev;
    if (f->n_timeouts == EV_TORCH_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    ev_torch_watchdog *w = &f->timeouts[f->n_timeouts++];
    memset(w, 0, sizeof *w);
    w->seq = rd_long_after(s, end, "SeqNum=");
    w->numel_in = rd_long_after(s, end, "NumelIn=");
    w->numel_out = rd_long_after(s, end, "NumelOut=");
    w->timeout_ms = rd_long_after(s, end, "Timeout(ms)=");
    w->ran_for_ms = rd_long_after(s, end, "ran for ");
    w->format = find(s, (size_t)(end - s), "NumelIn=") ? 2 : 1;
    const char *op = find(s, (size_t)(end - s), "OpType=");
    if (op) {
        op += 7;
        const char *e = op;
        while (e < end && *e != ',' && *e != ')' && *e != ' ')
            e++;
        rd_copy_trim(w->op, sizeof w->op, op, (size_t)(e - op));
    }
    set_at(&w->at, ln, line_rank(ln->pfx));
}

/* The value after "key=" up to ',' or ')' (TensorShape=[...] up to ']'). */
static void kv(const char *s, const char *end, const char *key, char *out, size_t size)
{
    out[0] = '\0';
    const char *k = find(s, (size_t)(end - s), key);
    if (!k)
        return;
    k += strlen(key);
    const char *e = k;
    if (e < end && *e == '[') {
        while (e < end && *e != ']')
            e++;
        if (e < end)
            e++;
    } else {
        while (e < end && *e != ',' && *e != ')')
            e++;
    }
    rd_copy_trim(out, size, k, (size_t)(e - k));
}

/* "Detected mismatch between collectives on ranks. Rank 1 is running
 * collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE,
 * TensorShape=[195812480], ...), but Rank 0 is running collective:
 * CollectiveFingerPrint(...)" (TORCH_DISTRIBUTED_DEBUG=DETAIL) */
static void parse_mismatch(tst *st, const rd_line *ln, const char *s, const char *end)
{
    ev_torch *f = st->ev;
    if (f->n_mismatches == EV_TORCH_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    ev_torch_mismatch *m = &f->mismatches[f->n_mismatches++];
    memset(m, 0, sizeof *m);
    const char *a = find(s, (size_t)(end - s), "Rank ");
    const char *b = a ? find(a + 5, (size_t)(end - a - 5), ", but Rank ") : NULL;
    const char *amid = b ? b : end;
    m->rank = a ? (int)rd_long_after(a, amid, "Rank") : -1;
    m->seq = a ? rd_long_after(a, amid, "SequenceNumber=") : -1;
    if (a) {
        kv(a, amid, "OpType=", m->op, sizeof m->op);
        kv(a, amid, "TensorShape=", m->shape, sizeof m->shape);
    }
    m->other_rank = b ? (int)rd_long_after(b, end, "but Rank") : -1;
    m->other_seq = b ? rd_long_after(b, end, "SequenceNumber=") : -1;
    if (b) {
        kv(b, end, "OpType=", m->other_op, sizeof m->other_op);
        kv(b, end, "TensorShape=", m->other_shape, sizeof m->other_shape);
    }
    set_at(&m->at, ln, m->rank >= 0 ? m->rank : line_rank(ln->pfx));
}

static void add_error(tst *st, ev_torch_error *arr, int *n, const rd_line *ln, int rank, const char *what,
                      size_t what_len, int signo, long code)
{
    if (*n == EV_TORCH_MAX_ITEMS) {
        st->ev->dropped++;
        return;
    }
    ev_torch_error *e = &arr[(*n)++];
    memset(e, 0, sizeof *e);
    rd_copy_trim(e->what, sizeof e->what, what, what_len);
    e->signo = signo;
    e->code = code;
    set_at(&e->at, ln, rank);
}

/* After "Signal " / "signal: ": "9 (SIGKILL)". Adds a signal item; false when
 * the text is not a signal number. */
static bool signal_line(tst *st, const rd_line *ln, const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == ':'))
        p++;
    long signo;
    if (rd_scan_long(&p, end, &signo) != 0 || signo <= 0 || signo > 64)
        return false;
    char name[16];
    const char *lp = memchr(p, '(', (size_t)(end - p));
    const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
    if (lp && rp && lp - p < 3)
        rd_copy_trim(name, sizeof name, lp + 1, (size_t)(rp - lp - 1));
    else
        snprintf(name, sizeof name, "signal %ld", signo);
    int rank = line_rank(ln->pfx);
    if (rank < 0)
        rank = st->elastic_rank;
    add_error(st, st->ev->signals, &st->ev->n_signals, ln, rank, name, strlen(name), (int)signo, -1);
    return true;
}

/* CUDA runtime errors in the spellings PyTorch and the CUDA samples print:
 *   "CUDA error: an illegal memory access was encountered"
 *   "cuda runtime error (802) : system not yet initialized at ..."   (old PyTorch)
 *   "CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) ..."
 * Returns true when the line was one. */
static bool cuda_error_line(tst *st, const rd_line *ln, const char *s, const char *end)
{
    size_t n = (size_t)(end - s);
    const char *k;
    ev_torch *f = st->ev;
    int rank = line_rank(ln->pfx);
    if ((k = find(s, n, "cuda runtime error (")) != NULL) {
        long code = rd_long_after(k, end, "(");
        const char *w = find(k, (size_t)(end - k), ") : ");
        w = w ? w + 4 : k;
        const char *stop = find(w, (size_t)(end - w), " at ");
        add_error(st, f->cuda_errors, &f->n_cuda_errors, ln, rank, w, (size_t)((stop ? stop : end) - w), 0, code);
        return true;
    }
    if ((k = find(s, n, " code=")) != NULL && find(s, n, "CUDA error")) {
        long code = rd_long_after(k, end, "code=");
        const char *lp = memchr(k, '(', (size_t)(end - k));
        const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
        if (lp && rp)
            add_error(st, f->cuda_errors, &f->n_cuda_errors, ln, rank, lp + 1, (size_t)(rp - lp - 1), 0, code);
        else
            add_error(st, f->cuda_errors, &f->n_cuda_errors, ln, rank, k + 1, (size_t)(end - k - 1), 0, code);
        return true;
    }
    if ((k = find(s, n, "CUDA error: ")) != NULL) {
        add_error(st, f->cuda_errors, &f->n_cuda_errors, ln, rank, k + 12, (size_t)(end - k - 12), 0, -1);
        return true;
    }
    return false;
}

static void traceback_line(tst *st, const rd_prefix *pfx, const char *s, const char *end, long lineno)
{
    size_t n = (size_t)(end - s);
    int key = tb_key(pfx), i = tb_find(st, key);
    if (find(s, n, "Traceback (most recent call last)")) {
        st->ev->tracebacks++;
        if (i < 0) { /* recycle the least recently used slot */
            i = 0;
            for (int j = 1; j < TB_SLOTS; j++)
                if (st->tb[j].used < st->tb[i].used)
                    i = j;
        }
        st->tb[i].key = key;
        st->tb[i].open = true;
        st->tb[i].phase_flags = 0;
        st->tb[i].frame[0] = '\0';
        st->tb[i].closed_line = 0;
        st->tb[i].used = ++st->tb_tick;
        return;
    }
    if (i < 0 || !st->tb[i].open)
        return;
    st->tb[i].used = ++st->tb_tick;
    tb_slot *tb = &st->tb[i];
    if (n && (s[0] == ' ' || s[0] == '\t')) {
        const char *fr = find(s, n, "File \"");
        if (fr) { /*   File "/base/mem-oom.py", line 6, in forward */
            const char *path = fr + 6;
            const char *q = memchr(path, '"', (size_t)(end - path));
            const char *in = find(s, n, ", in ");
            const char *func = in ? in + 5 : end;
            size_t fn = (size_t)(end - func);
            if (find(func, fn, "backward") || (q && find(path, (size_t)(q - path), "autograd")))
                tb->phase_flags |= 1 << EV_TORCH_PHASE_BACKWARD;
            else if (q && find(path, (size_t)(q - path), "/optim/"))
                tb->phase_flags |= 1 << EV_TORCH_PHASE_OPTIMIZER;
            else if (find(func, fn, "forward"))
                tb->phase_flags |= 1 << EV_TORCH_PHASE_FORWARD;
            if (q && !find(path, (size_t)(q - path), "site-packages") && !find(path, (size_t)(q - path), "dist-packages")) {
                const char *base = path;
                for (const char *c = path; c < q; c++)
                    if (*c == '/')
                        base = c + 1;
                snprintf(tb->frame, sizeof tb->frame, "%.*s:%ld in %.*s", (int)(q - base > 80 ? 80 : q - base), base,
                         rd_long_after(s, end, ", line "), (int)(fn > 60 ? 60 : fn), func);
            }
        } else { /* source line of a frame: "    loss.backward()" */
            if (find(s, n, ".backward("))
                tb->phase_flags |= 1 << EV_TORCH_PHASE_BACKWARD;
            else if (find(s, n, "optimizer.step(") || find(s, n, "optim.step("))
                tb->phase_flags |= 1 << EV_TORCH_PHASE_OPTIMIZER;
        }
        return;
    }
    tb->open = false;
    tb->closed_line = lineno;
}

/* "[1] finished collective #2, but didn't join collective #3" */
static void desync_line(tst *st, const rd_line *ln, const char *s, const char *k, const char *end)
{
    ev_torch *f = st->ev;
    const char *lb = k;
    while (lb > s && lb[-1] != '[')
        lb--;
    long r;
    const char *q = lb;
    if (f->n_desyncs < EV_TORCH_MAX_ITEMS && rd_scan_long(&q, k, &r) == 0 && q == k) {
        ev_torch_desync *d = &f->desyncs[f->n_desyncs++];
        d->lag_rank = (int)r;
        d->finished_seq = rd_long_after(k, end, "finished collective #");
        d->missing_seq = rd_long_after(k, end, "join collective #");
        set_at(&d->at, ln, line_rank(ln->pfx));
    }
}

/* "NCCL error in: .../ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8" */
static void nccl_error_line(tst *st, const rd_line *ln, const char *k, const char *end)
{
    const char *c = find(k, (size_t)(end - k), ", ");
    const char *w = c ? c + 2 : k;
    const char *stop = find(w, (size_t)(end - w), ", NCCL version");
    const char *paren = find(w, (size_t)(end - w), " (run with");
    if (!stop || (paren && paren < stop))
        stop = paren ? paren : end;
    add_error(st, st->ev->nccl_errors, &st->ev->n_nccl_errors, ln, line_rank(ln->pfx), w, (size_t)(stop - w), 0, -1);
}

void rd_torch_line(void *stp, const rd_line *ln)
{
    tst *st = stp;
    ev_torch *f = st->ev;
    const rd_prefix *pfx = ln->pfx;
    f->lines++;
    const char *s = pfx->msg, *end = pfx->msg + pfx->msg_len;
    size_t n = pfx->msg_len;
    const char *k;
    if (pfx->pid >= 0)
        return; /* an NCCL-prefixed line is never PyTorch's own */
    uint32_t issues = rd_keyset_scan(&st->issue_keys, s, n);
    if (issues) { /* one item per line: the first phrase's kind */
        int kind = k_issue_phrases[__builtin_ctz(issues)].kind;
        if (f->n_issues == EV_TORCH_MAX_ITEMS) {
            f->dropped++;
        } else if (!ev_torch_issue_of(f, kind) || f->n_issues < EV_TORCH_MAX_ITEMS / 2) {
            ev_torch_issue *it = &f->issues[f->n_issues++];
            it->kind = kind;
            set_at(&it->at, ln, line_rank(pfx));
        }
    }
    uint32_t mask = rd_keyset_scan(&st->keys, s, n);
    int tb = tb_find(st, tb_key(pfx));
    if ((tb >= 0 && st->tb[tb].open) || (mask & (1u << K_TRACEBACK)))
        traceback_line(st, pfx, s, end, ln->no);
    if (n < 8 || !mask)
        return;

    if (find(s, n, "out of memory") && (find(s, n, "CUDA") || find(s, n, "Tried to allocate"))) {
        parse_oom(st, ln, s, end);
    } else if ((k = find(s, n, "WorkNCCL(")) != NULL && find(s, n, "imeout")) {
        parse_watchdog(st, ln, s, end);
    } else if (find(s, n, "last completed NCCL work")) {
        if (f->n_progress == EV_TORCH_MAX_ITEMS) {
            f->dropped++;
            return;
        }
        ev_torch_progress *p = &f->progress[f->n_progress++];
        p->at_work = rd_long_after(s, end, "at work:");
        p->last_enqueued = rd_long_after(s, end, "last enqueued NCCL work:");
        p->last_completed = rd_long_after(s, end, "last completed NCCL work:");
        set_at(&p->at, ln, line_rank(pfx));
    } else if ((k = find(s, n, "] finished collective #")) != NULL) {
        desync_line(st, ln, s, k, end);
    } else if (find(s, n, "finished collective #") && (k = find(ln->text, ln->len, "] finished collective #")) != NULL) {
        /* "[1] finished collective #2, ..." at the start of a line: the prefix
         * parser took "[1] " for a launcher's process tag */
        desync_line(st, ln, ln->text, k, ln->text + ln->len);
    } else if ((k = find(s, n, "Timeout at collective:")) != NULL) {
        /* " - [0] Timeout at collective: ALLREDUCE, #3" */
        const char *op = k + 22;
        while (op < end && *op == ' ')
            op++;
        const char *e = op;
        while (e < end && *e != ',' && *e != ' ')
            e++;
        rd_copy_trim(f->desync_op, sizeof f->desync_op, op, (size_t)(e - op));
        f->desync_seq = rd_long_after(e, end, "#");
        set_at(&f->desync_timeout_at, ln, line_rank(pfx));
    } else if (find(s, n, "mismatch between collectives")) {
        parse_mismatch(st, ln, s, end);
    } else if ((k = find(s, n, "NCCL error")) != NULL) {
        nccl_error_line(st, ln, k, end);
    } else if ((mask & (1u << K_RANK)) && elastic_rank_line(s, end) >= 0) {
        st->elastic_rank = elastic_rank_line(s, end);
    } else if ((mask & (1u << K_SIGNAL)) && (k = find(s, n, "ignal ")) != NULL && k > s &&
               (k[-1] == 'S' || k[-1] == 's') && signal_line(st, ln, k + 6, end)) {
        /* "Signal 9 (SIGKILL) received by PID 1234", "signal: 7 (SIGBUS)" */
    } else if (find(s, n, "SIGBUS") || find(s, n, "Bus error")) {
        add_error(st, f->signals, &f->n_signals, ln, line_rank(pfx), "SIGBUS", 6, 7, -1);
    } else {
        cuda_error_line(st, ln, s, end);
    }
}

void *rd_torch_begin(const char *name)
{
    (void)name;
    tst *st = cp_xcalloc(1, sizeof *st);
    st->ev = cp_xmalloc(sizeof *st->ev);
    memset(st->ev, 0, offsetof(ev_torch, ooms)); /* the arrays after it are filled as items come */
    st->ev->desync_seq = -1;
    rd_keyset_init(&st->keys, k_keys, (int)CP_ARRAY_LEN(k_keys));
    const char *phrases[CP_ARRAY_LEN(k_issue_phrases)];
    for (size_t i = 0; i < CP_ARRAY_LEN(k_issue_phrases); i++)
        phrases[i] = k_issue_phrases[i].phrase;
    rd_keyset_init(&st->issue_keys, phrases, (int)CP_ARRAY_LEN(k_issue_phrases));
    for (int i = 0; i < TB_SLOTS; i++)
        st->tb[i].key = -1000;
    st->elastic_rank = -1;
    return st;
}

void *rd_torch_end(void *stp, diag_set *diag)
{
    tst *st = stp;
    ev_torch *f = st->ev;
    free(st);
    if (!ev_torch_any(f)) {
        free(f);
        return NULL;
    }
    if (f->dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->dropped, NULL, -1);
    return f;
}

int rd_torch_sniff(const char *head, size_t n)
{
    /* a scan reader: it reads every text input; the score only lets a
     * PyTorch log be named as such when nothing else claims it */
    static const char *const marks[] = {"Traceback (most recent call last)", "ProcessGroupNCCL", "torch.",
                                        "CUDA out of memory", "torch.distributed"};
    int hits = 0;
    for (size_t i = 0; i < CP_ARRAY_LEN(marks); i++)
        hits += rd_memmem(head, n, marks[i]) != NULL;
    return hits >= 2 ? 80 : hits ? 50 : 0;
}
