/* an_launch.c - the `launch` analyzer: CUDA (and HIP, MTIA) launch
 * statistics per correlation id.
 *
 * For every runtime call that launches GPU work (exact view: cudaLaunchKernel,
 * cudaLaunchKernelExC, cuLaunchKernel, cuLaunchKernelEx, cudaMemcpyAsync,
 * cudaMemsetAsync, hipLaunchKernel, hipExtModuleLaunchKernel,
 * hipMemcpyAsync, hipMemsetAsync, hipMemcpyWithStream, MTIA's runFunction;
 * HTA view: only the CUDA runtime ones and MTIA's, as current HTA)
 * the CPU events and GPU events sharing its correlation id are joined (as
 * HTA's get_cuda_kernel_launch_stats joins them: every CPU row with every
 * GPU row of that id): cpu duration, gpu duration, launch delay = GPU start
 * - call end. HTA reports a GPU start before the call returned as delay 0
 * (the HTA view clamps); the exact view keeps the negative value, which
 * says the GPU started the work while the call was still returning.
 * Summary counts: short kernels (gpu < cpu <= 50 us: the launch costs more
 * than the work), runtime outliers (cpu > 50 us), delay outliers (> 100 us).
 */
#include "an_results.h"
#include "../base/sort.h"
#include "../base/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const launch_names[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaMemcpyAsync", "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync",
    "hipMemcpyWithStream",
};

/* What HTA's get_cuda_kernel_launch_stats joins (its queue length uses
 * every launch name above): HIP and the driver API's cuLaunchKernel* are
 * left out, so on ROCm traces HTA reports no launches. */
static const char *const hta_stats_names[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync",
    "runFunction - job_prep_and_submit_for_execution",
};

static bool name_in(const char *name, const char *const *set, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(name, set[k]) == 0)
            return true;
    return false;
}

bool an_is_launch_name(const char *name) { return name_in(name, launch_names, CP_ARRAY_LEN(launch_names)); }

bool an_is_hta_launch_stats_name(const char *name)
{
    return name_in(name, hta_stats_names, CP_ARRAY_LEN(hta_stats_names));
}

/* Rows by (corr, cpu_ns, gpu_ns). */
static uint64_t row_key(const void *rec, int k, const void *ctx)
{
    (void)ctx;
    const an_launch *r = rec;
    return cp_key_i64(k == 0 ? r->corr : k == 1 ? r->cpu_ns : r->gpu_ns);
}

void an_launch_compute(const an_ctx *ctx, const an_view *v, an_launch_rank *out)
{
    const tl_timeline *tl = ctx->tl;
    memset(out, 0, sizeof *out);
    bool all = ctx->opts && ctx->opts->launch_table;
    size_t n = v->n, m = n ? n : 1;
    /* CPU rows of the correlation ids that have a launch call in the view:
     * all CPU rows by id, then keep the id runs that contain a launch */
    an_corr_idx *cpu = cp_xmalloc(m * sizeof *cpu);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        if (v->mult[i] && v->stream[i] < 0 && tl->corr[v->base + i] >= 0)
            cpu[nc++] = (an_corr_idx){ tl->corr[v->base + i], i };
    an_corr_sort(cpu, nc);
    size_t kept = 0;
    unsigned flag = v->exact ? AN_NAME_LAUNCH : AN_NAME_HTA_LAUNCH_STATS;
    for (size_t a = 0, b; a < nc; a = b) {
        bool launch = false;
        for (b = a; b < nc && cpu[b].corr == cpu[a].corr; b++)
            launch |= an_name_is(ctx, tl->name[v->base + cpu[b].idx], flag);
        if (launch)
            for (size_t k = a; k < b; k++)
                cpu[kept++] = cpu[k];
    }
    nc = kept;
    size_t cap = 0;
    for (size_t k = 0; k < v->n_gpu; k++) {
        size_t g = v->gpu[k];
        int64_t c = tl->corr[v->base + g];
        if (c < 0)
            continue;
        for (size_t p = an_corr_lower(cpu, nc, c); p < nc && cpu[p].corr == c; p++) {
            size_t h = cpu[p].idx;
            an_launch L = { c, v->t1[h] - v->t0[h], v->t1[g] - v->t0[g], v->t0[g] - v->t1[h] };
            if (!v->exact && L.delay_ns < 0)
                L.delay_ns = 0;
            out->n++;
            out->sum_cpu_ns += (double)L.cpu_ns;
            out->sum_gpu_ns += (double)L.gpu_ns;
            out->sum_delay_ns += (double)L.delay_ns;
            bool short_kernel = L.cpu_ns <= AN_RUNTIME_CUTOFF_NS && L.gpu_ns < L.cpu_ns;
            bool slow_call = L.cpu_ns > AN_RUNTIME_CUTOFF_NS, late = L.delay_ns > AN_DELAY_CUTOFF_NS;
            out->short_kernels += short_kernel;
            out->runtime_outliers += slow_call;
            out->delay_outliers += late;
            if (all || short_kernel || slow_call || late) {
                cp_xgrow((void **)&out->rows, &cap, out->n_rows + 1, sizeof *out->rows);
                out->rows[out->n_rows++] = L;
            }
        }
    }
    free(cpu);
    cp_sort_records(out->rows, out->n_rows, sizeof *out->rows, 3, row_key, NULL);
    if (!all && out->n_rows > AN_LAUNCH_ROWS) { /* the report lists the first ones */
        out->n_rows = AN_LAUNCH_ROWS;
        out->rows = cp_xrealloc(out->rows, out->n_rows * sizeof *out->rows);
    }
}

static void emit(an_ctx *ctx, rep_node *parent, const void *out)
{
    const an_launch_rank *lr = out;
    bool all = ctx->opts && ctx->opts->launch_table;
    rep_node *o = rep_obj(ctx->rep, parent, "launch_stats", "kernel launch statistics");
    rep_int(ctx->rep, o, "launches", "launches joined to GPU work", (int64_t)lr->n, NULL);
    rep_int(ctx->rep, o, "short_kernels", "short kernels (gpu < cpu <= 50 us)", lr->short_kernels, NULL);
    rep_int(ctx->rep, o, "runtime_outliers", "runtime outliers (cpu > 50 us)", lr->runtime_outliers, NULL);
    rep_int(ctx->rep, o, "launch_delay_outliers", "launch delay outliers (> 100 us)", lr->delay_outliers, NULL);
    double s[3] = { lr->sum_cpu_ns, lr->sum_gpu_ns, lr->sum_delay_ns };
    static const char *const keys[] = { "cpu_duration_mean_ns", "gpu_duration_mean_ns", "launch_delay_mean_ns" };
    static const char *const titles[] = { "mean call duration", "mean GPU duration", "mean launch delay" };
    for (int k = 0; k < 3; k++) {
        if (lr->n)
            rep_num(ctx->rep, o, keys[k], titles[k], s[k] / (double)lr->n, "ns");
        else
            rep_null(ctx->rep, o, keys[k], titles[k], "ns");
    }
    rep_bool(ctx->rep, o, "by_correlation_complete", "every launch listed below", all || lr->n == 0);
    static const rep_col cols[] = {
        { "correlation", "correlation", NULL, -1 },
        { "cpu_duration_ns", "cpu duration", "ns", -1 },
        { "gpu_duration_ns", "gpu duration", "ns", -1 },
        { "launch_delay_ns", "launch delay", "ns", -1 },
    };
    rep_node *t = rep_table(ctx->rep, o, "by_correlation", all ? "per launch" : "outlier launches", cols,
                            CP_ARRAY_LEN(cols));
    t->flags |= REP_F_NO_TEXT;
    for (size_t i = 0; i < lr->n_rows; i++) {
        rep_node *row = rep_row(ctx->rep, t);
        rep_cell_int(ctx->rep, row, lr->rows[i].corr);
        rep_cell_int(ctx->rep, row, lr->rows[i].cpu_ns);
        rep_cell_int(ctx->rep, row, lr->rows[i].gpu_ns);
        rep_cell_int(ctx->rep, row, lr->rows[i].delay_ns);
    }
}

static void compute(const an_ctx *ctx, const an_view *v, void *out)
{
    an_launch_compute(ctx, v, out);
}

static void free_rank(void *out) { free(((an_launch_rank *)out)->rows); }

int an_launch_run(an_ctx *ctx)
{
    static const an_dual_ops ops = { sizeof(an_launch_rank), compute, emit, free_rank };
    return an_run_dual(ctx, AN_launch, &ops);
}
