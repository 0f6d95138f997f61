/* analyze_dist.h - `mpirun -np P chainprof analyze`: the files shared out
 * over processes, per-rank analyses where the ranks are, one report on
 * rank 0 (see analyze_dist.c). Used by cmd_analyze.c only. */
#ifndef CP_CLI_ANALYZE_DIST_H
#define CP_CLI_ANALYZE_DIST_H

#include "../analysis/analysis.h"
#include "../base/buf.h"
#include "../base/error.h"
#include "../comm/comm.h"
#include "../model/diag.h"
#include "../model/report.h"
#include "../model/timeline.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ad_run {
    comm *cm;              /* NULL: one process, not under mpirun */
    int rank, size;
    int32_t *owner;        /* per input: the process that reads it */
    uint64_t *load_bytes;  /* per process: the input bytes it reads */
    an_job_rank *job;      /* every rank of the job, sorted by rank */
    size_t n_job;
    char *job_hosts;       /* the gathered records job[].hostname points into */
    size_t summary_bytes;  /* report message bytes rank 0 received, all processes */
    size_t exchange_bytes; /* bytes this process received through the analyzers' job hooks */
    cp_error err;          /* the first failure of a collective inside the analysis (job_max) */
    int failed;
} ad_run;

/* Under mpirun (OMPI_COMM_WORLD_SIZE/PMIX_RANK set): open the MPI
 * communicator; else leave d->cm NULL. Returns 0 or an exit code. */
int ad_open(ad_run *d, double timeout_s);
void ad_close(ad_run *d);
static inline bool ad_on(const ad_run *d) { return d->cm != NULL; }

/* Threads for one process when -j is not given: the machine's cores over
 * the processes mpirun started on this host (OMPI_COMM_WORLD_LOCAL_SIZE),
 * at least 1, so P processes on one host do not each start one per core. */
int ad_threads(const ad_run *d, int cores);

/* Share n files out by est_bytes (rank 0 decides, everyone gets its
 * split). Returns 0 or an exit code. */
int ad_share(ad_run *d, const uint64_t *est_bytes, size_t n);

/* The job's worst exit code (every process passes its own; all get the
 * greatest). A process that failed alone printed why. */
int ad_agree_rc(ad_run *d, int rc);

/* OR of per-input flags over processes (flags[n] in place, 0/1). */
int ad_agree_flags(ad_run *d, int64_t *flags, size_t n);

/* Exchange every process's ranks (number, host, devices, how the rank was
 * found) and the earliest event: fills d->job and *t0_ns (the job's; the
 * local timeline's t0_ns must be set to it before analysis). A rank number
 * on two processes, or a rank chainprof had to assign, stops the run: the
 * one-process answer for those renumbers across files this process cannot
 * see. Returns 0 or an exit code. */
int ad_job(ad_run *d, const tl_timeline *tl, int64_t *t0_ns);

/* The an_opts.job_max and job_gather hooks (hook = the ad_run). */
int ad_job_max(void *hook, int64_t *v, size_t n);
int ad_job_gather(void *hook, const void *mine, size_t bytes, void **all, size_t *all_bytes);

/* This process's report message: its diagnostics and every child of
 * local's root after the envelope, as rep_wire bytes appended to msg. */
void ad_encode(const rep_report *local, const diag_set *diag, cp_buf *msg);

/* Send msg to rank 0 (msg is freed). At rank 0 every process's message in
 * process order: *merged_diag gets their diagnostics and the nodes are
 * merged into out's root: objects by key, arrays with elements from two
 * processes ordered by `rank`. Returns 0 or an exit code. */
int ad_gather(ad_run *d, cp_buf *msg, rep_report *out, diag_set *merged_diag);

#endif
