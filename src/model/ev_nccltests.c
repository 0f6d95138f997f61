/* ev_nccltests.c - nccl-tests and rccl-tests facts: queries, free, report entry. */
#include "ev_nccltests.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

void ev_nccltests_free(ev_nccltests *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_runs; i++) {
        free(r->runs[i].rows);
        free(r->runs[i].devices);
    }
    free(r->runs);
    free(r);
}

double ev_nt_row_busbw(const ev_nt_row *row)
{
    double a = row->oop.busbw_gbps, b = row->inp.busbw_gbps;
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

const ev_nt_row *ev_nt_max_busbw(const ev_nt_run *run, double *busbw_gbps)
{
    const ev_nt_row *best = NULL;
    double bv = NAN;
    for (size_t i = 0; i < run->n_rows; i++) {
        double v = ev_nt_row_busbw(&run->rows[i]);
        if (!isnan(v) && (best == NULL || v > bv)) {
            best = &run->rows[i];
            bv = v;
        }
    }
    if (busbw_gbps)
        *busbw_gbps = bv;
    return best;
}

void ev_nccltests_report(const ev_nccltests *facts, rep_report *r, rep_node *o)
{
    const ev_nccltests *t = facts;
    rep_str(r, o, "tool", "tool", t->rccl ? "rccl-tests" : "nccl-tests");
    ev_rep_str(r, o, "nccl_tests_version", "nccl-tests version", t->tests_version);
    ev_rep_int(r, o, "nccl_library_version_code", "NCCL library (version code)", t->nccl_library, NULL);
    rep_node *runs = rep_arr(r, o, "runs", "nccl-tests runs");
    static const rep_col cols[] = {
        {"size_bytes", "size", "B", 0}, {"oop_time_us", "time (oop)", "us", 2},
        {"oop_busbw_gbps", "busbw (oop)", "GB/s", 2}, {"inp_time_us", "time (ip)", "us", 2},
        {"inp_busbw_gbps", "busbw (ip)", "GB/s", 2}, {"line", "line", NULL, 0},
    };
    for (size_t i = 0; i < t->n_runs; i++) {
        const ev_nt_run *run = &t->runs[i];
        rep_node *ro = rep_obj(r, runs, NULL, NULL);
        ev_rep_str(r, ro, "op", "collective", run->op);
        ev_rep_int(r, ro, "ranks", "ranks", (int64_t)run->n_devices, NULL);
        ev_rep_int(r, ro, "hosts", "hosts", run->n_hosts, NULL);
        rep_str(r, ro, "columns", "column set",
                run->colset == EV_NT_COLS_NEW_WRONG ? "wrong" :
                run->colset == EV_NT_COLS_OLD_ERROR ? "error" : "unknown");
        double peak;
        const ev_nt_row *best = ev_nt_max_busbw(run, &peak);
        rep_num(r, ro, "peak_busbw_gbps", "peak busbw", peak, "GB/s");
        ev_rep_int(r, ro, "peak_size_bytes", "at size", best ? best->size_bytes : -1, "B");
        ev_rep_line(r, ro, "peak_line", best ? best->line : 0);
        rep_num(r, ro, "avg_busbw_gbps", "avg bus bandwidth", run->avg_busbw_gbps, "GB/s");
        ev_rep_line(r, ro, "avg_line", run->avg_line);
        ev_rep_int(r, ro, "out_of_bounds_values", "out of bounds values", run->oob_values, NULL);
        rep_int(r, ro, "wrong_rows", "rows with #wrong > 0", run->wrong_rows, NULL);
        ev_rep_line(r, ro, "first_line", run->first_line);
        rep_node *tab = rep_table(r, ro, "rows", "rows", cols, sizeof cols / sizeof cols[0]);
        tab->flags |= REP_F_NO_TEXT;
        for (size_t k = 0; k < run->n_rows; k++) {
            const ev_nt_row *w = &run->rows[k];
            rep_node *row = rep_row(r, tab);
            rep_cell_int(r, row, w->size_bytes);
            rep_cell_num(r, row, w->oop.time_us);
            rep_cell_num(r, row, w->oop.busbw_gbps);
            rep_cell_num(r, row, w->inp.time_us);
            rep_cell_num(r, row, w->inp.busbw_gbps);
            rep_cell_int(r, row, w->line);
        }
    }
    rep_int(r, o, "failures", "test failures", t->n_failures, NULL);
    if (t->n_failures) {
        rep_str(r, o, "first_failure", "first failure", t->failure);
        ev_rep_line(r, o, "first_failure_line", t->failure_line);
    }
}
