/* analysis.c - the analyzer table and the driver that runs it. */
#include "analysis.h"
#include "../base/util.h"

#include "../base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define X(name, summary) int an_##name##_run(an_ctx *ctx);
#include "analyzers.def"
#undef X

static const an_analyzer table[] = {
#define X(name, summary) { #name, summary, an_##name##_run },
#include "analyzers.def"
#undef X
    { NULL, NULL, NULL },
};

const an_analyzer *an_analyzers(void) { return table; }

/* an_dist.def has one row per analyzer, in the same order: the enum of its
 * names must be the analyzer enum (checked here, at compile time) */
enum an_dist_row {
#define D(name, cls) AN_DIST_ROW_##name,
#include "an_dist.def"
#undef D
    AN_DIST_ROW__COUNT
};
#define X(name, summary) _Static_assert((int)AN_DIST_ROW_##name == (int)AN_##name, "an_dist.def: row of " #name " out of order");
#include "analyzers.def"
#undef X
_Static_assert((int)AN_DIST_ROW__COUNT == (int)AN__COUNT, "an_dist.def: one row per analyzer");

static const an_dist_class dist_table[] = {
#define D(name, cls) cls,
#include "an_dist.def"
#undef D
};

an_dist_class an_dist(an_id id) { return id < AN__COUNT ? dist_table[id] : AN_DIST_JOB; }

/* The job is the timeline's ranks unless the caller says more (mpirun). */
static void job_ranks(an_ctx *ctx, const tl_timeline *tl, const an_opts *opts)
{
    if (opts && opts->job_ranks) {
        ctx->job = opts->job_ranks;
        ctx->n_job = opts->n_job_ranks;
        return;
    }
    ctx->job_own = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *ctx->job_own);
    for (size_t i = 0; i < tl->n_ranks; i++) {
        const tl_rank_meta *m = &tl->ranks[i].meta;
        ctx->job_own[i] = (an_job_rank){ m->rank, m->n_devices, m->world_size, m->vendor,
                                         m->hostname ? tl_str(tl, m->hostname) : NULL,
                                         m->gpu_name ? tl_str(tl, m->gpu_name) : NULL };
    }
    ctx->job = ctx->job_own;
    ctx->n_job = tl->n_ranks;
}

static const char *vendor_name(tl_gpu_vendor v)
{
    switch (v) {
    case TL_VENDOR_NVIDIA: return "nvidia";
    case TL_VENDOR_AMD: return "amd";
    case TL_VENDOR_MTIA: return "mtia";
    default: return NULL;
    }
}

int an_run_all(an_ctx *ctx, const tl_timeline *tl, rep_report *rep, const an_opts *opts, cp_error *err)
{
    ctx->tl = tl;
    ctx->rep = rep;
    ctx->opts = opts;
    ctx->rank_nodes = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *ctx->rank_nodes);
    job_ranks(ctx, tl, opts);
    rep_node *ranks = rep_arr(rep, rep->root, "ranks", "ranks");
    for (size_t i = 0; i < tl->n_ranks; i++) {
        const tl_rank *r = &tl->ranks[i];
        rep_node *o = rep_obj(rep, ranks, NULL, NULL);
        ctx->rank_nodes[i] = o;
        rep_int(rep, o, "rank", "rank", r->meta.rank, NULL);
        rep_str(rep, o, "source", "file", tl_str(tl, r->source));
        rep_int(rep, o, "events", "events", (int64_t)r->n_events, NULL);
        rep_str(rep, o, "gpu", "GPU", r->meta.gpu_name ? tl_str(tl, r->meta.gpu_name) : NULL);
        rep_str(rep, o, "gpu_vendor", "GPU vendor", vendor_name(r->meta.vendor));
    }
    bool sharded = opts && opts->rank_analyzers_only;
    if (sharded && !opts->job_root)
        ctx->scratch = rep_new("scratch", 0, NULL);
    for (const an_analyzer *a = table; a->name; a++) {
        an_dist_class cls = an_dist((an_id)(a - table));
        if (sharded && cls == AN_DIST_JOB)
            continue;
        clock_t c0 = clock(); /* process CPU time: where analyze spends it, at -vv */
        ctx->rep = cls == AN_DIST_EXCHANGE && ctx->scratch ? ctx->scratch : rep;
        int rc = a->run(ctx);
        ctx->rep = rep;
        char what[64];
        snprintf(what, sizeof what, "analysis %s", a->name);
        cp_log_phase(what, c0);
        if (rc < 0)
            return cp_error_set(err, rc, NULL, 0, 0, -1, "analysis '%s' failed", a->name);
    }
    return 0;
}

void an_ctx_free(an_ctx *ctx)
{
    /* results are owned by the report/timeline lifetimes through each
     * analyzer's own free, registered by storing a destructor-first struct */
    for (int i = 0; i < AN__COUNT; i++)
        if (ctx->results[i]) {
            void (**dtor)(void *) = ctx->results[i];
            if (*dtor)
                (*dtor)(ctx->results[i]);
        }
    free(ctx->rank_nodes);
    free(ctx->job_own);
    rep_free(ctx->scratch);
}

bool an_dist_give_up(an_ctx *ctx, an_id id)
{
    if (!ctx->opts || !ctx->opts->job_gather)
        return false;
    ctx->not_computed[id] = true;
    return true;
}

uint32_t an_job_index(const an_ctx *ctx, int32_t rank)
{
    size_t lo = 0, hi = ctx->n_job;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ctx->job[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ctx->n_job && ctx->job[lo].rank == rank ? (uint32_t)lo : UINT32_MAX;
}

int an_job_gather(const an_ctx *ctx, const void *mine, size_t bytes, void **all, size_t *all_bytes)
{
    const an_opts *o = ctx->opts;
    if (o && o->job_gather)
        return o->job_gather(o->job_hook, mine, bytes, all, all_bytes);
    *all = cp_xmalloc(bytes ? bytes : 1);
    if (bytes)
        memcpy(*all, mine, bytes);
    *all_bytes = bytes;
    return 0;
}

int an_job_sum(const an_ctx *ctx, int64_t *v, size_t n)
{
    void *all;
    size_t bytes;
    if (!ctx->opts || !ctx->opts->job_gather)
        return 0;
    int rc = an_job_gather(ctx, v, n * sizeof *v, &all, &bytes);
    if (rc < 0)
        return rc;
    const int64_t *a = all;
    memset(v, 0, n * sizeof *v);
    for (size_t k = 0; k + n <= bytes / sizeof *v; k += n)
        for (size_t i = 0; i < n; i++)
            v[i] += a[k + i];
    free(all);
    return 0;
}
