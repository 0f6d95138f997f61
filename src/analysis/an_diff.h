/* an_diff.h - two analyzed trace sets compared (`chainprof diff`).
 *
 * an_diff reads two an_ctx that an_run_all filled (the "base" and the
 * "test" trace set) and writes one report: the step time of each and its
 * change, the exposed time per layer per step, the findings of each with
 * their estimated gains, and HTA TraceDiff's operator and kernel diff of
 * one rank and profiler step of each (counts and total durations by name:
 * added, deleted, increased, decreased, unchanged). Definitions:
 * docs/METRICS.md "Trace diff".
 */
#ifndef CP_ANALYSIS_AN_DIFF_H
#define CP_ANALYSIS_AN_DIFF_H

#include "analysis.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct an_diff_opts {
    bool has_rank;            /* false: each set's first rank (HTA's default) */
    int32_t rank;
    bool has_iteration;       /* false: each set's first profiler step (HTA's default) */
    int64_t iteration;
    bool all_iterations;      /* every profiler step instead of one */
    double fail_on_pct;       /* step time regression that counts as failed; < 0: no check */
} an_diff_opts;

/* Write the comparison under rep's root. *regressed is set when the test
 * set's step time exceeds the base's by more than fail_on_pct. Returns 0,
 * or -1 with err set when a requested rank or step is in neither set. */
int an_diff(const an_ctx *base, const an_ctx *test, const an_diff_opts *o, rep_report *rep, bool *regressed,
            cp_error *err);

#endif
