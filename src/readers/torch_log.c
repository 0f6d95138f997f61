/* torch_log.c - PyTorch failure-log reader (see torch_log.h).
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
#include <string.h>

static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

const char *rd_torch_phase_name(int phase)
{
    switch (phase) {
    case RD_TORCH_PHASE_FORWARD: return "forward";
    case RD_TORCH_PHASE_BACKWARD: return "backward";
    case RD_TORCH_PHASE_OPTIMIZER: return "optimizer";
    default: return "unknown";
    }
}

/* Phrases that make a line worth a closer look (rd_keyset gate). */
enum { K_ERROR, K_WORKNCCL, K_COLLECTIVE, K_SIGBUS, K_OOM, K_TRACEBACK, K_NCCL_WORK, K_SIGNAL, K_RANK };
static const char *const k_keys[] = {
    "rror", "WorkNCCL(", "collective", "SIGBUS", "out of memory", "Traceback (most recent call last)", "NCCL work",
    "ignal ", "rank ",
};

/* torchrun's failure summary names the rank on its own line before the
 * signal: "  rank      : 3 (local_rank: 3)" ... "  traceback : Signal 9 (SIGKILL)
 * received by PID 1234". Returns the rank, or -1 when the line is not that. */
static int elastic_rank_line(const char *s, const char *end)
{
    while (s < end && *s == ' ') s++;
    if (end - s < 6 || memcmp(s, "rank", 4) != 0) return -1;
    s += 4;
    while (s < end && *s == ' ') s++;
    if (s >= end || *s != ':') return -1;
    s++;
    while (s < end && *s == ' ') s++;
    long v;
    return rd_scan_long(&s, end, &v) == 0 && v >= 0 && v < 1000000 ? (int)v : -1;
}

void rd_torch_init(rd_torch_facts *f, const char *file)
{
    memset(f, 0, offsetof(rd_torch_facts, ooms)); /* the arrays after it are filled as items come */
    rd_keyset_init(&f->keys_, k_keys, (int)(sizeof k_keys / sizeof k_keys[0]));
    f->file = file;
    f->desync_seq = -1;
    for (size_t i = 0; i < sizeof f->tb_ / sizeof f->tb_[0]; i++) f->tb_[i].key = -1000;
    f->elastic_rank_ = -1;
}

int rd_torch_scan_size(const char **p, const char *end, double *bytes)
{
    const char *s = *p;
    double v;
    if (rd_scan_double(&s, end, &v) != 0) return -1;
    while (s < end && *s == ' ') s++;
    static const struct { const char *u; double mul; } units[] = {
        {"bytes", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
        {"TiB", 1099511627776.0}, {"KB", 1024.0}, {"MB", 1048576.0}, {"GB", 1073741824.0},
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

static void set_at(rd_torch_at *at, const rd_prefix *pfx, const char *line, size_t len, long lineno)
{
    at->line = lineno;
    at->rank = pfx->rank >= 0 ? pfx->rank : pfx->local_rank;
    at->ts = pfx->ts;
    rd_copy_trim(at->text, sizeof at->text, line, len);
}

/* size right after `key` (skipping spaces), or -1 */
static double size_after(const char *s, const char *end, const char *key)
{
    const char *k = find(s, (size_t)(end - s), key);
    double b;
    if (!k) return -1;
    k += strlen(key);
    while (k < end && *k == ' ') k++;
    return rd_torch_scan_size(&k, end, &b) == 0 ? b : -1;
}

/* size right before `key` ("14.56 GiB already allocated"), or -1 */
static double size_before(const char *s, const char *end, const char *key)
{
    const char *k = find(s, (size_t)(end - s), key);
    if (!k) return -1;
    /* walk back over "<num> <unit>" : find the start of the number */
    const char *q = k;
    while (q > s && q[-1] == ' ') q--;
    while (q > s && isalpha((unsigned char)q[-1])) q--; /* unit */
    while (q > s && q[-1] == ' ') q--;
    while (q > s && (isdigit((unsigned char)q[-1]) || q[-1] == '.')) q--;
    double b;
    return rd_torch_scan_size(&q, k, &b) == 0 ? b : -1;
}

#define TB_SLOTS ((int)(sizeof ((rd_torch_facts *)0)->tb_ / sizeof(rd_torch_tb)))

static int tb_key(const rd_prefix *pfx)
{
    return pfx->rank >= 0 ? pfx->rank : pfx->local_rank >= 0 ? -2 - pfx->local_rank : -1;
}

/* the traceback slot of this line's rank tag, or NULL */
static int tb_find(const rd_torch_facts *f, int key)
{
    for (int i = 0; i < TB_SLOTS; i++)
        if (f->tb_[i].key == key) return i;
    return -1;
}

static void parse_oom(rd_torch_facts *f, const rd_prefix *pfx, const char *s, const char *end,
                      const char *line, size_t len, long lineno)
{
    if (f->n_ooms == RD_TORCH_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    rd_torch_oom *o = &f->ooms[f->n_ooms++];
    memset(o, 0, sizeof *o);
    o->requested_bytes = size_after(s, end, "Tried to allocate");
    o->gpu = -1;
    const char *g = find(s, (size_t)(end - s), "GPU ");
    if (g) {
        const char *q = g + 4;
        long v;
        if (rd_scan_long(&q, end, &v) == 0) o->gpu = (int)v;
    }
    if (find(s, (size_t)(end - s), "total capacity of")) { /* new format */
        o->format = 2;
        o->total_bytes = size_after(s, end, "total capacity of");
        o->free_bytes = size_after(s, end, "of which");
        o->in_use_bytes = size_after(s, end, "this process has");
        o->allocated_bytes = size_before(s, end, "is allocated by PyTorch");
        o->reserved_unalloc_bytes = size_before(s, end, "is reserved by PyTorch but unallocated");
    } else { /* old format, possibly without the parenthesised details */
        o->format = 1;
        o->total_bytes = size_before(s, end, "total capacity");
        o->allocated_bytes = size_before(s, end, "already allocated");
        o->free_bytes = size_before(s, end, "free;");
        double reserved = size_before(s, end, "reserved in total by PyTorch");
        if (reserved < 0) reserved = size_before(s, end, "cached)");
        o->in_use_bytes = -1;
        o->reserved_unalloc_bytes =
            reserved >= 0 && o->allocated_bytes >= 0 ? reserved - o->allocated_bytes : -1;
    }
    /* phase from the traceback that just closed (or is still open) */
    int t = tb_find(f, tb_key(pfx));
    if (t >= 0 && (f->tb_[t].open || (f->tb_[t].closed_line && lineno - f->tb_[t].closed_line <= 3))) {
        int fl = f->tb_[t].phase_flags;
        o->phase = (fl & (1 << RD_TORCH_PHASE_BACKWARD))    ? RD_TORCH_PHASE_BACKWARD
                   : (fl & (1 << RD_TORCH_PHASE_OPTIMIZER)) ? RD_TORCH_PHASE_OPTIMIZER
                   : (fl & (1 << RD_TORCH_PHASE_FORWARD))   ? RD_TORCH_PHASE_FORWARD
                                                           : RD_TORCH_PHASE_UNKNOWN;
        memcpy(o->frame, f->tb_[t].frame, sizeof o->frame); /* same size, terminated */
    }
    set_at(&o->at, pfx, line, len, lineno);
}

/* WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for 600060 milliseconds */
static void parse_watchdog(rd_torch_facts *f, const rd_prefix *pfx, const char *s, const char *end,
                           const char *line, size_t len, long lineno)
{
    if (f->n_timeouts == RD_TORCH_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    rd_torch_watchdog *w = &f->timeouts[f->n_timeouts++];
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
        while (e < end && *e != ',' && *e != ')' && *e != ' ') e++;
        rd_copy_trim(w->op, sizeof w->op, op, (size_t)(e - op));
    }
    set_at(&w->at, pfx, line, len, lineno);
}

static void add_error(rd_torch_facts *f, rd_torch_error *arr, int *n, const rd_prefix *pfx,
                      const char *what, size_t what_len, int signo, const char *line, size_t len,
                      long lineno)
{
    if (*n == RD_TORCH_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    rd_torch_error *e = &arr[(*n)++];
    memset(e, 0, sizeof *e);
    rd_copy_trim(e->what, sizeof e->what, what, what_len);
    e->signo = signo;
    set_at(&e->at, pfx, line, len, lineno);
}

/* After "Signal " / "signal: ": "9 (SIGKILL)". Adds a signal item; false when
 * the text is not a signal number. */
static bool signal_line(rd_torch_facts *f, const rd_prefix *pfx, const char *p, const char *end,
                        const char *line, size_t len, long lineno)
{
    while (p < end && (*p == ' ' || *p == ':')) p++;
    long signo;
    if (rd_scan_long(&p, end, &signo) != 0 || signo <= 0 || signo > 64) return false;
    char name[16];
    const char *lp = memchr(p, '(', (size_t)(end - p));
    const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
    if (lp && rp && lp - p < 3) rd_copy_trim(name, sizeof name, lp + 1, (size_t)(rp - lp - 1));
    else snprintf(name, sizeof name, "signal %ld", signo);
    rd_prefix tagged = *pfx;
    if (tagged.rank < 0 && tagged.local_rank < 0) tagged.rank = f->elastic_rank_;
    add_error(f, f->signals, &f->n_signals, &tagged, name, strlen(name), (int)signo, line, len, lineno);
    return true;
}

static void traceback_line(rd_torch_facts *f, const rd_prefix *pfx, const char *s, const char *end,
                           long lineno)
{
    size_t n = (size_t)(end - s);
    int key = tb_key(pfx), i = tb_find(f, key);
    if (find(s, n, "Traceback (most recent call last)")) {
        f->tracebacks++;
        if (i < 0) { /* recycle the least recently used slot */
            i = 0;
            for (int j = 1; j < TB_SLOTS; j++)
                if (f->tb_[j].used < f->tb_[i].used) i = j;
        }
        f->tb_[i].key = key;
        f->tb_[i].open = true;
        f->tb_[i].phase_flags = 0;
        f->tb_[i].frame[0] = '\0';
        f->tb_[i].closed_line = 0;
        f->tb_[i].used = ++f->tb_tick_;
        return;
    }
    if (i < 0 || !f->tb_[i].open) return;
    f->tb_[i].used = ++f->tb_tick_;
    rd_torch_tb *tb = &f->tb_[i];
    if (n && (s[0] == ' ' || s[0] == '\t')) {
        const char *fr = find(s, n, "File \"");
        if (fr) { /*   File "/base/mem-oom.py", line 6, in forward */
            const char *path = fr + 6;
            const char *q = memchr(path, '"', (size_t)(end - path));
            const char *in = find(s, n, ", in ");
            const char *func = in ? in + 5 : end;
            size_t fn = (size_t)(end - func);
            if (find(func, fn, "backward") || (q && find(path, (size_t)(q - path), "autograd")))
                tb->phase_flags |= 1 << RD_TORCH_PHASE_BACKWARD;
            else if (q && find(path, (size_t)(q - path), "/optim/"))
                tb->phase_flags |= 1 << RD_TORCH_PHASE_OPTIMIZER;
            else if (find(func, fn, "forward"))
                tb->phase_flags |= 1 << RD_TORCH_PHASE_FORWARD;
            if (q && !find(path, (size_t)(q - path), "site-packages") &&
                !find(path, (size_t)(q - path), "dist-packages")) {
                const char *base = path;
                for (const char *c = path; c < q; c++)
                    if (*c == '/') base = c + 1;
                snprintf(tb->frame, sizeof tb->frame, "%.*s:%ld in %.*s", (int)(q - base > 80 ? 80 : q - base),
                         base, rd_long_after(s, end, ", line "), (int)(fn > 60 ? 60 : fn), func);
            }
        } else { /* source line of a frame: "    loss.backward()" */
            if (find(s, n, ".backward(")) tb->phase_flags |= 1 << RD_TORCH_PHASE_BACKWARD;
            else if (find(s, n, "optimizer.step(") || find(s, n, "optim.step("))
                tb->phase_flags |= 1 << RD_TORCH_PHASE_OPTIMIZER;
        }
        return;
    }
    tb->open = false;
    tb->closed_line = lineno;
}

void rd_torch_line_pfx(rd_torch_facts *f, const rd_prefix *pfx, const char *line, size_t len,
                       long lineno)
{
    f->lines++;
    const char *s = pfx->msg, *end = pfx->msg + pfx->msg_len;
    size_t n = pfx->msg_len;
    const char *k;
    if (pfx->pid >= 0) return; /* an NCCL-prefixed line is never PyTorch's own */
    uint32_t mask = rd_keyset_scan(&f->keys_, s, n);
    int tb = tb_find(f, tb_key(pfx));
    if ((tb >= 0 && f->tb_[tb].open) || (mask & (1u << K_TRACEBACK))) traceback_line(f, pfx, s, end, lineno);
    if (n < 8 || !mask) return;

    if (find(s, n, "out of memory") && (find(s, n, "CUDA") || find(s, n, "Tried to allocate"))) {
        parse_oom(f, pfx, s, end, line, len, lineno);
    } else if ((k = find(s, n, "WorkNCCL(")) != NULL && find(s, n, "imeout")) {
        parse_watchdog(f, pfx, s, end, line, len, lineno);
    } else if (find(s, n, "last completed NCCL work")) {
        if (f->n_progress == RD_TORCH_MAX_ITEMS) {
            f->dropped++;
            return;
        }
        rd_torch_progress *p = &f->progress[f->n_progress++];
        p->at_work = rd_long_after(s, end, "at work:");
        p->last_enqueued = rd_long_after(s, end, "last enqueued NCCL work:");
        p->last_completed = rd_long_after(s, end, "last completed NCCL work:");
        set_at(&p->at, pfx, line, len, lineno);
    } else if ((k = find(s, n, "] finished collective #")) != NULL) {
        /* "[1] finished collective #2, but didn't join collective #3" */
        const char *lb = k;
        while (lb > s && lb[-1] != '[') lb--;
        long r;
        const char *q = lb;
        if (f->n_desyncs < RD_TORCH_MAX_ITEMS && rd_scan_long(&q, k, &r) == 0 && q == k) {
            rd_torch_desync *d = &f->desyncs[f->n_desyncs++];
            d->lag_rank = (int)r;
            d->finished_seq = rd_long_after(k, end, "finished collective #");
            d->missing_seq = rd_long_after(k, end, "join collective #");
            set_at(&d->at, pfx, line, len, lineno);
        }
    } else if ((k = find(s, n, "Timeout at collective:")) != NULL) {
        /* " - [0] Timeout at collective: ALLREDUCE, #3" */
        const char *op = k + 22;
        while (op < end && *op == ' ') op++;
        const char *e = op;
        while (e < end && *e != ',' && *e != ' ') e++;
        rd_copy_trim(f->desync_op, sizeof f->desync_op, op, (size_t)(e - op));
        f->desync_seq = rd_long_after(e, end, "#");
        set_at(&f->desync_timeout_at, pfx, line, len, lineno);
    } else if ((k = find(s, n, "NCCL error")) != NULL) {
        /* "NCCL error in: .../ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8" */
        const char *c = find(k, (size_t)(end - k), ", ");
        const char *w = c ? c + 2 : k;
        const char *stop = find(w, (size_t)(end - w), ", NCCL version");
        const char *paren = find(w, (size_t)(end - w), " (run with");
        if (!stop || (paren && paren < stop)) stop = paren ? paren : end;
        add_error(f, f->nccl_errors, &f->n_nccl_errors, pfx, w, (size_t)(stop - w), 0, line, len,
                  lineno);
    } else if ((mask & (1u << K_RANK)) && elastic_rank_line(s, end) >= 0) {
        f->elastic_rank_ = elastic_rank_line(s, end);
    } else if ((mask & (1u << K_SIGNAL)) && (k = find(s, n, "ignal ")) != NULL && k > s &&
               (k[-1] == 'S' || k[-1] == 's') && signal_line(f, pfx, k + 6, end, line, len, lineno)) {
        /* "Signal 9 (SIGKILL) received by PID 1234", "signal: 7 (SIGBUS)" */
    } else if (find(s, n, "SIGBUS") || find(s, n, "Bus error")) {
        add_error(f, f->signals, &f->n_signals, pfx, "SIGBUS", 6, 7, line, len, lineno);
    } else if ((k = find(s, n, "CUDA error: ")) != NULL) {
        add_error(f, f->cuda_errors, &f->n_cuda_errors, pfx, k + 12, (size_t)(end - k - 12), 0,
                  line, len, lineno);
    }
}

void rd_torch_line(rd_torch_facts *f, const char *line, size_t len, long lineno)
{
    rd_prefix pfx;
    rd_prefix_parse(line, len, &pfx);
    rd_torch_line_pfx(f, &pfx, line, len, lineno);
}

void rd_torch_finish(rd_torch_facts *f)
{
    for (int i = 0; i < TB_SLOTS; i++) f->tb_[i].open = false;
}

static void line_cb(void *ctx, const char *line, size_t len, long lineno)
{
    rd_torch_line(ctx, line, len, lineno);
}

void rd_torch_parse_buf(rd_torch_facts *f, const char *file, const char *buf, size_t len)
{
    rd_torch_init(f, file);
    rd_each_line(buf, len, line_cb, f);
    rd_torch_finish(f);
}
