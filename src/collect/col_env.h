/* col_env.h - the environment `chainprof run` (src/cli/cmd_run.c) sets for
 * the job and the collector (col_rec.c) reads: one list for both sides.
 * Documented in docs/man/chainprof-run.txt. */
#ifndef CP_COLLECT_COL_ENV_H
#define CP_COLLECT_COL_ENV_H

#define COL_ENV_OUT "CHAINPROF_OUT"              /* output directory: enables the collector */
#define COL_ENV_MODE "CHAINPROF_MODE"            /* trace | summary */
#define COL_ENV_STEPS "CHAINPROF_STEPS"          /* A-B, A-, -B */
#define COL_ENV_RING_KB "CHAINPROF_RING_KB"      /* per-thread ring, KiB */
#define COL_ENV_STDERR "CHAINPROF_SUMMARY_STDERR" /* 1: summary lines also to stderr */
#define COL_ENV_CKPT_DIRS "CHAINPROF_CKPT_DIRS"  /* ':'-separated path prefixes of checkpoints */
#define COL_ENV_DATA_DIRS "CHAINPROF_DATA_DIRS"  /* ... of datasets */
#define COL_ENV_CLOCK "CHAINPROF_CLOCK"          /* "SYNC OFFSET_NS RTT_NS" from `chainprof run` */
#define COL_ENV_HOST "CHAINPROF_HOSTNAME"        /* host name to record (else gethostname) */
#define COL_ENV_JOB "CHAINPROF_JOB"              /* job id to record */
#define COL_ENV_CUPTI "CHAINPROF_CUPTI"          /* 0: do not load CUPTI; a path: this libcupti */
#define COL_ENV_FLUSH_MS "CHAINPROF_FLUSH_MS"    /* background drain period (default 20) */

#define COL_ENV_RUN_PID "CHAINPROF_RUN_PID"      /* pid of the `chainprof run` that started the job */
#define COL_ENV_LIB "CHAINPROF_COLLECT_LIB"      /* the collector's path (the Python package loads it) */

/* Where a process's rank comes from, in this order (the launchers' own
 * variables): X(rank, world size, local rank); the n-th row is
 * CPT_RANK_ENV_* n + 1 in the trace header. */
#define COL_RANK_VARS(X)                                                        \
    X("RANK", "WORLD_SIZE", "LOCAL_RANK")                                      \
    X("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK") \
    X("PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK")                             \
    X("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")

/* The collector's file name, and the names of its outputs in --out DIR. */
#define COL_LIB_NAME "libchainprof_collect.so"
#define COL_TRACE_EXT ".cptrace"
#define COL_STEPS_EXT ".steps.jsonl"

#endif
