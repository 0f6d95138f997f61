/* calib.h - check the performance model against published training runs,
 * honestly: in-sample and leave-one-source-out.
 *
 * Reads CSVs of measured runs (the published_runs.csv format: one run per
 * line with model shape, GPU, layout, recompute, precision and at least one
 * measured figure among step_time_s, tokens_per_s_per_gpu, tokens_per_s,
 * tflops_per_gpu, mfu_pct), turns each row into plan_inputs with the
 * documented mapping rules (calib_row.c: the framework a source ran, the
 * layout it states, defaults it implies), fills layout fields the row leaves
 * unstated with the planner's best choice under the stated ones, and
 * compares the predicted step time with the measured one.
 *
 * Two figures per row and per source:
 *   - in-sample: the shipped constants (plan_defaults_get), which were fitted
 *     once on all the published sources;
 *   - leave-one-source-out (LOSO): the few physical constants of
 *     plan_calib_params are refitted on every source but one (each source
 *     weighted equally, from the documented prior, within physical bounds),
 *     and that source is predicted with them. This is the number that says
 *     how the model does on runs it was not calibrated on.
 * A "source" is one publication or benchmark suite (plan_calib_source_key).
 *
 * The same code backs `chainprof model --validate FILE.csv...` and the
 * calibration unit test, so what the test enforces is what users can run on
 * their own data.
 *
 * Ownership: the caller owns the row array and the summary; strings are
 * copied into them.
 */
#ifndef CP_PLAN_CALIB_H
#define CP_PLAN_CALIB_H

#include "plan/model.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct plan_calib_row {
    long line;                 /* 1-based line in its CSV */
    int file;                  /* index of its CSV among the inputs */
    char model[96];
    char source[96];           /* the source key (plan_calib_source_key) */
    char metric[32];           /* which measured column was compared */
    double measured, predicted;/* that figure, measured and predicted (shipped constants) */
    double err;                /* step-time error: predicted / measured step - 1; NaN when skipped */
    double loso_predicted;     /* the figure predicted with this source left out of the fit */
    double loso_err;           /* its step-time error; NaN when not computed */
    double mem_measured_bytes; /* peak memory when the row gives it, else NaN */
    double mem_predicted_bytes;
    char layout[128];          /* the layout that was modelled */
    char why[160];             /* reason a row was skipped, else "" */
    char note[192];            /* assumptions and caveats on a modelled row */
} plan_calib_row;

/* Caps on what the input controls. */
#define PLAN_CALIB_MAX_ROWS 4096
#define PLAN_CALIB_MAX_BYTES (64u << 20)
#define PLAN_CALIB_MAX_FILES 16
#define PLAN_CALIB_MAX_SOURCES 64
#define PLAN_CALIB_MAX_PARAMS 12

typedef struct plan_calib_source {
    char key[96];
    int rows, used;
    double median_abs_err, mean_abs_err, max_abs_err;   /* in-sample */
    double loso_median_abs_err, loso_max_abs_err;       /* left out of the fit */
} plan_calib_source;

/* One fitted constant: its prior (the physically motivated starting value),
 * bounds, the value fitted on all sources and the spread over LOSO folds. */
typedef struct plan_calib_param {
    const char *name, *what;
    double prior, lo, hi;
    double shipped;            /* the value in plan_defaults_get() */
    double fitted_all;         /* refit on every source from the prior */
    double fold_min, fold_max; /* over the leave-one-source-out fits */
} plan_calib_param;

typedef struct plan_calib_summary {
    int rows, used, skipped;
    int truncated;             /* rows beyond PLAN_CALIB_MAX_ROWS were ignored */
    /* shipped constants (in-sample) */
    double median_abs_err, max_abs_err, mean_abs_err;
    long worst_line;
    int worst_file;
    /* leave-one-source-out */
    int loso_used;
    double loso_median_abs_err, loso_mean_abs_err, loso_max_abs_err;
    /* refit on all sources (what the shipped constants should be) */
    double fit_median_abs_err;
    int mem_rows;
    double mem_median_abs_err, mem_max_abs_err;
    int n_sources;
    plan_calib_source sources[PLAN_CALIB_MAX_SOURCES];
    int n_params;
    plan_calib_param params[PLAN_CALIB_MAX_PARAMS];
} plan_calib_summary;

typedef struct plan_calib_opts {
    bool loso;                 /* run the leave-one-source-out fits */
} plan_calib_opts;

/* Run every row of the CSVs at paths[0..n). Writes up to cap rows into rows
 * (may be NULL with cap 0) and the summary. Returns 0, or -1 with err filled
 * when a file cannot be read or its header lacks the required columns. Rows
 * that cannot be modelled are counted as skipped with a reason, never
 * fatal. */
int plan_calib_files(const char *const *paths, int n, const plan_calib_opts *o, plan_calib_row *rows, int cap,
                     plan_calib_summary *sum, char *err, int errsz);

/* The same over one CSV text in memory; name is used in messages. */
int plan_calib_mem(const char *data, size_t len, const char *name, const plan_calib_opts *o, plan_calib_row *rows,
                   int cap, plan_calib_summary *sum, char *err, int errsz);

/* The publication or suite a `source` cell belongs to ("torchtitan",
 * "MosaicML llm-foundry", "NVIDIA DGX Cloud benchmarking recipes", ...):
 * known families by name, else the text before the first '(' or ';'. */
void plan_calib_source_key(const char *source, char *out, size_t size);

#endif
