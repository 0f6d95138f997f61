/* calib.h - check the performance model against published training runs.
 *
 * Reads a CSV of measured runs (the published_runs.csv format: one run per
 * line with model shape, GPU, layout, recompute, precision and at least one
 * measured figure among step_time_s, tokens_per_s_per_gpu, tokens_per_s,
 * tflops_per_gpu, mfu_pct), turns each row into plan_inputs with the
 * documented mapping rules (plan_calib_row_inputs in calib.c), fills layout
 * fields the row leaves unstated with the planner's best choice under the
 * stated ones, and reports the relative error of every prediction.
 *
 * The same code backs `chainprof model --validate FILE.csv` and the
 * calibration unit test, so what the test enforces is what users can run on
 * their own data.
 *
 * Ownership: the caller owns the row array; strings are copied into it.
 */
#ifndef CP_PLAN_CALIB_H
#define CP_PLAN_CALIB_H

#include "plan/model.h"

#include <stddef.h>

typedef struct plan_calib_row {
    long line;                 /* 1-based line in the CSV */
    char model[96];
    char source[96];           /* first part of the source column */
    char metric[32];           /* which measured column was compared */
    double measured, predicted;
    double err;                /* (predicted - measured) / measured; NaN when skipped */
    double mem_measured_bytes; /* peak memory when the row gives it, else NaN */
    double mem_predicted_bytes;
    char layout[128];          /* the layout that was modelled */
    char why[160];             /* reason a row was skipped, else "" */
    char note[96];             /* caveat on a modelled row (e.g. predicted not to fit) */
} plan_calib_row;

/* Caps on what the input controls. */
#define PLAN_CALIB_MAX_ROWS 4096
#define PLAN_CALIB_MAX_BYTES (64u << 20)

typedef struct plan_calib_summary {
    int rows, used, skipped;
    int truncated;             /* rows beyond PLAN_CALIB_MAX_ROWS were ignored */
    double median_abs_err, max_abs_err, mean_abs_err;
    long worst_line;
    int mem_rows;
    double mem_median_abs_err, mem_max_abs_err;
} plan_calib_summary;

/* Run every row of the CSV at path. Writes up to cap rows into rows (may be
 * NULL with cap 0) and the summary. Returns 0, or -1 with err filled when the
 * file cannot be read or its header lacks the required columns. Rows that
 * cannot be modelled are counted as skipped with a reason, never fatal. */
int plan_calib_file(const char *path, plan_calib_row *rows, int cap, plan_calib_summary *sum,
                    char *err, int errsz);

/* The same over CSV text in memory; name is used in messages. */
int plan_calib_mem(const char *data, size_t len, const char *name, plan_calib_row *rows, int cap,
                   plan_calib_summary *sum, char *err, int errsz);

#endif
