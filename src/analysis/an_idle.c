/* an_idle.c - the `idle` analyzer: why each stream sits idle, per rank.
 *
 * Every gap before a GPU event on a stream is classified as
 *   host wait   the CPU call that launched the event started after the
 *               stream's previous work ended (the host was late),
 *   kernel wait otherwise, a gap under 30 us (launch overhead between
 *               back-to-back kernels),
 *   other       otherwise (waiting on events, other streams, ...).
 * HTA (BreakdownAnalysis._analyze_idle_time_for_stream) looks only at
 * events of its kernel categories (kernel, gpu_memcpy, gpu_memset, MTIA
 * mtia_ccp_events: no cuda_sync, no GPU annotations) and measures the gap
 * from the end of the previous event in start order, so an event that
 * overlaps its predecessor yields a negative "gap" that is summed too. The
 * exact view measures from the running maximum end and counts only real
 * gaps, which never go negative.
 */
#include "an_results.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>

void an_idle_compute(const an_view *v, an_idle_rank *out)
{
    out->streams = NULL;
    out->n = 0;
    if (!v->n_gpu)
        return;
    /* GPU work by (stream, position in time order): one stable radix sort */
    cp_kv *kv = cp_xmalloc(v->n_gpu * sizeof *kv);
    for (size_t k = 0; k < v->n_gpu; k++)
        kv[k] = (cp_kv){ cp_key_i64(v->stream[v->gpu[k]]), k };
    cp_sort_kv(kv, v->n_gpu, NULL);
    size_t *pos = cp_xmalloc(v->n_gpu * sizeof *pos);
    for (size_t k = 0; k < v->n_gpu; k++)
        pos[k] = (size_t)kv[k].val;
    free(kv);
    size_t cap = 0;
    int64_t prev = 0;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t i = v->gpu[pos[k]];
        if (v->kernel_cat && !v->kernel_cat[i])
            continue; /* HTA looks only at kernel, memcpy and memset categories (no cuda_sync) */
        if (!out->n || out->streams[out->n - 1].stream != v->stream[i]) {
            cp_xgrow((void **)&out->streams, &cap, out->n + 1, sizeof *out->streams);
            out->streams[out->n++] = (an_idle_stream){ .stream = v->stream[i] };
            prev = v->t1[i];
            continue;
        }
        an_idle_stream *s = &out->streams[out->n - 1];
        int64_t gap = v->t0[i] - prev;
        if (!v->exact || gap > 0) { /* HTA sums overlaps as negative gaps */
            int c = AN_IDLE_OTHER;
            if (v->partner[i] >= 0 && v->t0[v->partner[i]] > prev)
                c = AN_IDLE_HOST;
            else if (gap < AN_KERNEL_WAIT_NS)
                c = AN_IDLE_KERNEL;
            s->idle_ns[c] += gap;
            s->total_ns += gap;
        }
        prev = v->exact ? CP_MAX(prev, v->t1[i]) : v->t1[i];
    }
    free(pos);
}

static void emit(an_ctx *ctx, rep_node *parent, const void *out)
{
    const an_idle_rank *ir = out;
    static const rep_col cols[] = {
        { "stream", "stream", NULL, -1 },
        { "category", "category", NULL, -1 },
        { "idle_ns", "idle", "ns", -1 },
        { "ratio", "share of stream idle", NULL, 3 },
    };
    static const char *const names[AN_IDLE__COUNT] = { "host_wait", "kernel_wait", "other" };
    rep_node *t = rep_table(ctx->rep, parent, "idle_breakdown", "idle time breakdown", cols, CP_ARRAY_LEN(cols));
    for (size_t s = 0; s < ir->n; s++)
        for (int c = 0; c < AN_IDLE__COUNT; c++) {
            rep_node *row = rep_row(ctx->rep, t);
            rep_cell_int(ctx->rep, row, ir->streams[s].stream);
            rep_cell_str(ctx->rep, row, names[c]);
            rep_cell_int(ctx->rep, row, ir->streams[s].idle_ns[c]);
            if (ir->streams[s].total_ns != 0)
                rep_cell_num(ctx->rep, row, (double)ir->streams[s].idle_ns[c] / (double)ir->streams[s].total_ns);
            else
                rep_cell_null(ctx->rep, row);
        }
}

static void compute(const an_ctx *ctx, const an_view *v, void *out)
{
    (void)ctx;
    an_idle_compute(v, out);
}

static void free_rank(void *out) { free(((an_idle_rank *)out)->streams); }

int an_idle_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(an_idle_rank), compute, emit, free_rank };
    return an_run_dual(ctx, AN_idle, &ops);
}
