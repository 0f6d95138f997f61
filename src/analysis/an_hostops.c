/* an_hostops.c - the `hostops` analyzer: which host ops the GPU waited for.
 *
 * The five-layer sweep (an_layers) says how much of each step was exposed
 * host time (the GPU idle while the host was busy) but not what the host was
 * doing. "Launch-bound" and "one long CPU op on the critical path" expose the
 * same host time and need opposite fixes: CUDA graphs and fusion cut launch
 * overhead spread over thousands of small ops, but do nothing for a
 * 700 ms aten::normal_ that builds the batch on the CPU (seen on a real H200
 * trace: 88 % of the step, no launches in it). This analyzer names the ops.
 *
 * Method, per rank: walk every CPU thread's framework ops (cpu_op and
 * user_annotation events, not the ProfilerStep annotations) in start order
 * with a stack, so each instant of the thread goes to its innermost open op
 * (the op's "self" time; runtime calls such as cudaLaunchKernel are not ops
 * and count to the op that made them). Each self interval is intersected
 * with the rank's exposed-host segments from an_layers, in one forward pass
 * (both are in time order). When two threads both run ops at an exposed
 * instant, both are credited: an op's figure is "time the GPU sat idle while
 * this op ran", and the rows may add up to more than the exposed host time.
 *
 * Output: `host_ops`, the top AN_HOSTOPS_ROWS names by exposed time summed
 * over ranks (share of the summed step time, calls that were exposed, time
 * per such call), and the typed result for the findings rules
 * (an_hostops_result in an_verdict.h). Ranks run one after another into one
 * accumulator indexed by name id.
 */
#include "an_verdict.h"
#include "../base/buf.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct open_op {
    int64_t end_ns;
    uint32_t name;
    bool exposed; /* got some exposed time: counts as an exposed call */
} open_op;

typedef struct walker {
    const int64_t *segs; /* the rank's exposed-host [start, end) pairs */
    size_t n_segs, k;    /* k: first segment that may still overlap */
    int64_t *exposed_ns; /* per name id, summed over ranks */
    int64_t *calls;      /* per name id: calls with exposed time */
    open_op *stack;
    size_t depth, cap;
    int64_t cur_ns;      /* self time of the top op runs from here */
} walker;

/* Credit the exposed part of [t0, t1) to the top op. t0 never decreases
 * between calls on one thread, so the segment cursor only moves forward. */
static void credit(walker *w, int64_t t0, int64_t t1)
{
    if (t1 <= t0 || w->depth == 0)
        return;
    while (w->k < w->n_segs && w->segs[2 * w->k + 1] <= t0)
        w->k++;
    int64_t got = 0;
    for (size_t j = w->k; j < w->n_segs && w->segs[2 * j] < t1; j++)
        got += CP_MIN(t1, w->segs[2 * j + 1]) - CP_MAX(t0, w->segs[2 * j]);
    if (got > 0) {
        open_op *top = &w->stack[w->depth - 1];
        w->exposed_ns[top->name] += got;
        top->exposed = true;
    }
}

/* Close every open op that ends at or before t. */
static void close_until(walker *w, int64_t t)
{
    while (w->depth && w->stack[w->depth - 1].end_ns <= t) {
        open_op *top = &w->stack[w->depth - 1];
        credit(w, w->cur_ns, top->end_ns);
        w->cur_ns = CP_MAX(w->cur_ns, top->end_ns);
        w->calls[top->name] += top->exposed;
        w->depth--;
    }
}

static void walk_track(walker *w, const tl_timeline *tl, const tl_track *tr, const uint8_t *is_op)
{
    w->k = 0;
    w->depth = 0;
    w->cur_ns = INT64_MIN;
    for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
        if (!is_op[tl->name[i]] || (tl->cat[i] != TL_CAT_CPU_OP && tl->cat[i] != TL_CAT_USER_ANNOTATION))
            continue;
        int64_t a = tl->ts_ns[i], b = tl_end_ns(tl, i);
        if (b <= a)
            continue;
        close_until(w, a);
        credit(w, w->cur_ns, a);
        cp_xgrow((void **)&w->stack, &w->cap, w->depth + 1, sizeof *w->stack);
        w->stack[w->depth++] = (open_op){ b, tl->name[i], false };
        w->cur_ns = a;
    }
    close_until(w, INT64_MAX);
}

static int row_cmp(const void *a, const void *b)
{
    const an_hostop *x = a, *y = b;
    if (x->exposed_ns != y->exposed_ns)
        return x->exposed_ns > y->exposed_ns ? -1 : 1;
    return strcmp(x->label, y->label); /* by name, not string id: the same in every process */
}

static void free_result(void *self)
{
    an_hostops_result *h = self;
    free(h->v);
    cp_intern_free(&h->names);
    free(h);
}

/* Sharded run (mpirun): every process's ops summed by name, through
 * an_job_gather. A process's part: {step_ns, n_ops}, then per op
 * {exposed_ns, calls, name length} and the name. The labels then live in
 * out->names; out->v is the job's, in row order. */
static int job_ops(const an_ctx *ctx, an_hostops_result *out)
{
    cp_buf msg = CP_BUF_INIT;
    int64_t head[2] = { out->step_ns, (int64_t)out->n };
    cp_buf_append(&msg, head, sizeof head);
    for (size_t i = 0; i < out->n; i++) {
        int64_t h[3] = { out->v[i].exposed_ns, out->v[i].calls, (int64_t)strlen(out->v[i].label) };
        cp_buf_append(&msg, h, sizeof h);
        cp_buf_append(&msg, out->v[i].label, (size_t)h[2]);
    }
    void *all = NULL;
    size_t bytes = 0, pos = 0, n_alloc = 0;
    int rc = an_job_gather(ctx, msg.data, msg.len, &all, &bytes);
    cp_buf_free(&msg);
    if (rc < 0)
        return rc;
    const unsigned char *p = all;
    int64_t *acc = NULL; /* per label id: exposed_ns, calls */
    out->step_ns = 0;
    while (rc == 0 && pos < bytes) {
        if (bytes - pos < sizeof head) {
            rc = CP_ERR_FORMAT;
            break;
        }
        memcpy(head, p + pos, sizeof head);
        pos += sizeof head;
        out->step_ns += head[0];
        for (int64_t k = 0; k < head[1] && rc == 0; k++) {
            int64_t h[3];
            if (bytes - pos < sizeof h || (memcpy(h, p + pos, sizeof h), h[2] < 0) ||
                (uint64_t)h[2] > bytes - pos - sizeof h) {
                rc = CP_ERR_FORMAT;
                break;
            }
            uint32_t id = cp_intern_n(&out->names, (const char *)p + pos + sizeof h, (size_t)h[2]);
            if (id >= n_alloc) {
                size_t m = CP_MAX(2 * n_alloc, (size_t)id + 1);
                acc = cp_xrealloc(acc, 2 * m * sizeof *acc);
                memset(acc + 2 * n_alloc, 0, 2 * (m - n_alloc) * sizeof *acc);
                n_alloc = m;
            }
            acc[2 * id] += h[0];
            acc[2 * id + 1] += h[1];
            pos += sizeof h + (size_t)h[2];
        }
    }
    free(all);
    out->n = 0;
    for (size_t id = 0; rc == 0 && id < n_alloc; id++)
        if (acc[2 * id] > 0) {
            cp_xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
            out->v[out->n++] = (an_hostop){ UINT32_MAX, cp_intern_str(&out->names, (uint32_t)id), acc[2 * id],
                                            acc[2 * id + 1] };
        }
    free(acc);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, row_cmp);
    return rc;
}

int an_hostops_run(an_ctx *ctx)
{
    const tl_timeline *tl = ctx->tl;
    const an_layers_result *lr = ctx->results[AN_layers];
    an_hostops_result *out = cp_xcalloc(1, sizeof *out);
    out->free = free_result;
    ctx->results[AN_hostops] = out;
    size_t n_str = cp_intern_count(&tl->strings);
    uint8_t *is_op = cp_xcalloc(n_str + 1, 1);
    for (size_t id = 0; id < n_str; id++)
        is_op[id] = strncmp(cp_intern_str(&tl->strings, (uint32_t)id), "ProfilerStep#", 13) != 0;
    walker w = { .exposed_ns = cp_xcalloc(n_str + 1, sizeof(int64_t)), .calls = cp_xcalloc(n_str + 1, sizeof(int64_t)) };
    for (size_t r = 0; lr && r < tl->n_ranks && r < lr->n_ranks; r++) {
        const an_rank_layers *rl = &lr->ranks[r];
        out->step_ns += rl->total.dur_ns;
        if (!rl->n_host_segs)
            continue;
        w.segs = rl->host_segs;
        w.n_segs = rl->n_host_segs;
        const tl_rank *rk = &tl->ranks[r];
        for (uint32_t t = rk->track_begin; t < rk->track_end; t++)
            if (tl->tracks[t].key.kind == TL_TRACK_CPU)
                walk_track(&w, tl, &tl->tracks[t], is_op);
    }
    for (size_t id = 0; id < n_str; id++)
        if (w.exposed_ns[id] > 0) {
            cp_xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
            out->v[out->n++] = (an_hostop){ (uint32_t)id, tl_str(tl, (uint32_t)id), w.exposed_ns[id], w.calls[id] };
        }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, row_cmp);
    free(w.exposed_ns);
    free(w.calls);
    free(w.stack);
    free(is_op);
    cp_intern_init(&out->names);
    if (ctx->opts && ctx->opts->job_gather) {
        int rc = job_ops(ctx, out);
        if (rc < 0)
            return rc;
    }

    static const rep_col cols[] = {
        { "name", "op", NULL, -1 },
        { "exposed_ns", "GPU idle while it ran", "ns", -1 },
        { "exposed_pct", "of step time", "%", 1 },
        { "calls", "exposed calls", NULL, -1 },
        { "exposed_per_call_ns", "per call", "ns", -1 },
    };
    rep_node *tab = rep_table(ctx->rep, ctx->rep->root, "host_ops",
                              "host ops the GPU waited for (self time while the GPU was idle, all ranks)", cols,
                              CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < out->n && i < AN_HOSTOPS_ROWS; i++) {
        const an_hostop *o = &out->v[i];
        rep_node *row = rep_row(ctx->rep, tab);
        rep_cell_str(ctx->rep, row, o->label);
        rep_cell_int(ctx->rep, row, o->exposed_ns);
        rep_cell_num(ctx->rep, row, out->step_ns > 0 ? 100.0 * (double)o->exposed_ns / (double)out->step_ns : NAN);
        rep_cell_int(ctx->rep, row, o->calls);
        if (o->calls > 0)
            rep_cell_int(ctx->rep, row, o->exposed_ns / o->calls);
        else
            rep_cell_null(ctx->rep, row);
    }
    return 0;
}
