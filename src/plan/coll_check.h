/* coll_check.h - the collective cost model against published nccl-tests
 * measurements.
 *
 * Reads CSVs of facts (docs/data/nccl_tests_published.csv: source,
 * collective, size_bytes, nodes, gpus_per_node, gpu, nics_per_node,
 * nic_gbit_s, algo, sharp, busbw_gbps, notes), models every row with the
 * collective cost model (model/collmodel.h: the algorithm the row forced, else NCCL's
 * own choice) and reports the busbw error per row, per source and overall.
 * Backs `chainprof model --validate FILE.csv` for such files and the unit
 * test that holds the model to its published figures.
 *
 * Ownership: the caller owns the rows and the summary.
 */
#ifndef CP_PLAN_COLL_CHECK_H
#define CP_PLAN_COLL_CHECK_H

#include <stddef.h>

typedef struct plan_coll_check_row {
    long line;
    int file;
    char source[96];           /* the text before the first '(' of the source cell */
    char op[24], gpu[40];
    double bytes;
    int nodes, gpus_per_node;
    char algo[16], proto[8];   /* what the model ran */
    double measured_gbps, predicted_gbps;
    double err;                /* predicted / measured busbw - 1; NaN when skipped */
    char why[160];
} plan_coll_check_row;

#define PLAN_COLL_CHECK_MAX_ROWS 4096
#define PLAN_COLL_CHECK_MAX_SOURCES 64

typedef struct plan_coll_check_source {
    char key[96];
    int rows, used;
    double median_abs_err, max_abs_err;
} plan_coll_check_source;

typedef struct plan_coll_check_summary {
    int rows, used, skipped, truncated;
    double median_abs_err, mean_abs_err, max_abs_err;
    long worst_line;
    int worst_file;
    int n_sources;
    plan_coll_check_source sources[PLAN_COLL_CHECK_MAX_SOURCES];
} plan_coll_check_summary;

/* Model every row of the CSVs; rows may be NULL with cap 0. Returns 0, or
 * -1 with err when a file cannot be read or lacks a required column. */
int plan_coll_check_files(const char *const *paths, int n, plan_coll_check_row *rows, int cap,
                          plan_coll_check_summary *sum, char *err, int errsz);

/* The same over one CSV text in memory; name is used in messages. */
int plan_coll_check_mem(const char *data, size_t len, const char *name, plan_coll_check_row *rows, int cap,
                        plan_coll_check_summary *sum, char *err, int errsz);

#endif
