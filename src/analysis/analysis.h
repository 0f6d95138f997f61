/* analysis.h - analyzers: each turns the frozen timeline into report nodes.
 *
 * Analyzers run in table order (analyzers.def) on one shared, const
 * timeline. Each writes its numbers under every rank's report object
 * (ctx->rank_nodes[i]) and/or at top level, and may leave typed results in
 * ctx->results[AN_<name>] for later analyzers (the findings rules read the
 * breakdowns instead of recomputing them). A results struct must start with
 * `void (*free)(void *self)`, which an_ctx_free calls. An analyzer that has nothing to
 * say for a trace (no GPU events, no steps) writes nulls, never zeros.
 *
 * Checklist for a new analyzer (one file + a row in each table):
 *   1. src/analysis/an_<name>.c with `int an_<name>_run(an_ctx *ctx)`;
 *   2. X(<name>, "summary") in analyzers.def (order = dependency order),
 *      and D(<name>, class) at the same place in an_dist.def: how it runs
 *      when mpirun shares the ranks out (AN_DIST_RANK if it reads one rank
 *      at a time; else exchange what it needs through an_job_gather, or
 *      AN_DIST_JOB: not computed under mpirun);
 *   3. its metrics (formula, unit, convention) in docs/METRICS.md and its
 *      JSON keys in docs/FORMATS.md;
 *   4. unit tests on small timelines built in code (tests/unit/).
 */
#ifndef CP_ANALYSIS_ANALYSIS_H
#define CP_ANALYSIS_ANALYSIS_H

#include "../base/error.h"
#include "../model/report.h"
#include "../model/timeline.h"

#include <stdbool.h>

typedef enum an_id {
#define X(name, summary) AN_##name,
#include "analyzers.def"
#undef X
    AN__COUNT
} an_id;

struct ev_set; /* src/model/evidence.h: the evidence files (owned by the caller) */

/* How an analyzer runs when the ranks are shared out over processes
 * (an_dist.def says which is which and why). */
typedef enum an_dist_class { AN_DIST_RANK, AN_DIST_EXCHANGE, AN_DIST_JOB } an_dist_class;
an_dist_class an_dist(an_id id);

/* One rank of the whole job, as every analyzer that needs the job's shape
 * (node membership, the world of an unnamed process group) sees it: from
 * the timeline in one process, from every process's timeline under mpirun. */
typedef struct an_job_rank {
    int32_t rank;
    int32_t n_devices;
    int32_t world_size;   /* -1 unknown */
    tl_gpu_vendor vendor;
    const char *hostname; /* NULL when the trace names none */
    const char *gpu_name; /* NULL when the trace names none */
} an_job_rank;

typedef struct an_opts {
    int gpus_per_node;       /* 0 = from the trace's device count */
    int nthreads;
    double nic_gbit_s;       /* NIC line rate per GPU in Gbit/s; 0 = catalog */
    double nvlink_gbps;      /* NVLink per GPU per direction in GB/s; 0 = catalog */
    /* the checkpoint interval (--ckpt-every): seconds or steps, 0 = not
     * given (then the trace's, else a stated default) */
    double ckpt_every_s;
    double ckpt_every_steps;
    const struct ev_set *evidence; /* evidence files for the rule book; NULL none */
    /* launch_stats.by_correlation lists every launch when true; otherwise
     * only the outliers (short kernels, runtime and delay outliers), at most
     * AN_LAUNCH_ROWS of them, so a trace of a million launches does not put
     * a million rows in the report */
    bool launch_table;
    int64_t queue_max_length; /* launch queue length counted as full; 0 = 1024 (AN_QUEUE_MAX_DEFAULT) */
    /* frequent kernel sequences (an_kseq.c, --kernel-seq): the operator
     * name (a substring; NULL: the analysis does not run), the GPU events
     * a root needs (0 = 3) and the patterns HTA calls top (0 = 5) */
    const char *kseq_op;
    int64_t kseq_min_len, kseq_top_k;
    /* user annotation breakdown (an_annotations.c): names kept before the
     * rest fold into "others" (0 = AN_ANNOT_TOP_DEFAULT, HTA's 1000), and
     * HTA's allowlist: names containing one of these strings never fold */
    int64_t annot_top;
    const char *const *annot_keep;
    size_t n_annot_keep;
    /* Sharded run (mpirun): every rank of the job sorted by rank (NULL: the
     * timeline's own ranks are the job), and run only the AN_DIST_RANK
     * analyzers, since this process holds some of the ranks */
    const an_job_rank *job_ranks;
    size_t n_job_ranks;
    bool rank_analyzers_only;
    /* Job-wide agreement in a sharded run: replaces v[0..n) by the
     * lexicographically greatest tuple any process holds. A collective:
     * every process's AN_DIST_RANK analyzers call it alike, whatever ranks
     * they hold. NULL in one process. Returns 0 or a negative cp_status. */
    int (*job_max)(void *hook, int64_t *v, size_t n);
    /* Every process's bytes (mine[bytes] here), concatenated in process
     * order into *all (malloc'd, the caller frees), *all_bytes long. A
     * collective like job_max. */
    int (*job_gather)(void *hook, const void *mine, size_t bytes, void **all, size_t *all_bytes);
    void *job_hook;
    bool job_root; /* sharded run: this process writes the job-wide nodes (rank 0) */
} an_opts;

#define AN_LAUNCH_ROWS 1000

typedef struct an_ctx {
    const tl_timeline *tl;
    rep_report *rep;
    rep_node **rank_nodes;   /* one report object per timeline rank, in ranks[] */
    const an_opts *opts;
    void *results[AN__COUNT + 1];
    const an_job_rank *job; /* every rank of the job, sorted by rank (opts' or job_own) */
    size_t n_job;
    an_job_rank *job_own;
    /* Sharded run, not the root: where AN_DIST_EXCHANGE analyzers' job-wide
     * nodes go (rank 0 writes the real ones); what they write under the
     * rank objects lives in its arena, so it is freed with the context */
    rep_report *scratch;
    /* Sharded run: analyzers that found input they cannot handle from
     * summaries (links' proxy steps, roofline's Nsight Compute results)
     * mark themselves here and write nothing; the report lists them, and
     * findings, which merges theirs, then writes nothing either */
    bool not_computed[AN__COUNT + 1];
} an_ctx;

/* In a sharded run: mark analyzer id as not computed (see an_ctx) and
 * return true; in one process: false (compute as usual). */
bool an_dist_give_up(an_ctx *ctx, an_id id);

/* Whether this process writes the job-wide rows of an AN_DIST_RANK
 * analyzer's tables (one process, or rank 0 of a sharded run): the others
 * leave them empty, so the merge keeps rank 0's once. */
static inline bool an_job_writer(const an_ctx *ctx)
{
    return !ctx->opts || !ctx->opts->job_gather || ctx->opts->job_root;
}
/* Index of rank in ctx->job (sorted by rank), UINT32_MAX when absent. */
uint32_t an_job_index(const an_ctx *ctx, int32_t rank);
/* Job-wide sums in a sharded run: v[0..n) replaced by the sum over every
 * process's v (no-op in one process). Every process calls it alike. */
int an_job_sum(const an_ctx *ctx, int64_t *v, size_t n);
/* Every process's bytes in process order (one process: a copy of mine);
 * *all is the caller's to free. */
int an_job_gather(const an_ctx *ctx, const void *mine, size_t bytes, void **all, size_t *all_bytes);

typedef struct an_analyzer {
    const char *name;
    const char *summary;
    int (*run)(an_ctx *ctx);
} an_analyzer;

/* The table, NULL-name terminated. */
const an_analyzer *an_analyzers(void);

/* Create the "ranks" array (one object per rank with rank, source, device
 * info) and run every analyzer. The caller owns ctx and frees it with
 * an_ctx_free. */
int an_run_all(an_ctx *ctx, const tl_timeline *tl, rep_report *rep, const an_opts *opts, cp_error *err);
void an_ctx_free(an_ctx *ctx);

#endif
