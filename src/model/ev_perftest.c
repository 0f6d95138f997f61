/* ev_perftest.c - perftest facts: queries, free, report entry. */
#include "ev_perftest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

void ev_perftest_free(ev_perftest *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_runs; i++) {
        free(r->runs[i].rows);
        free(r->runs[i].settings);
    }
    free(r->runs);
    free(r);
}

const ev_pt_row *ev_pt_best_bw(const ev_pt_run *run)
{
    const ev_pt_row *best = NULL;
    for (size_t i = 0; i < run->n_rows; i++) {
        const ev_pt_row *w = &run->rows[i];
        if (!isnan(w->bw_avg_gbit_s) && (!best || w->bw_avg_gbit_s > best->bw_avg_gbit_s))
            best = w;
    }
    return best;
}

const ev_pt_setting *ev_pt_setting_get(const ev_pt_run *run, const char *key)
{
    for (size_t i = 0; i < run->n_settings; i++)
        if (!strcasecmp(run->settings[i].key, key))
            return &run->settings[i];
    return NULL;
}

void ev_perftest_report(const ev_perftest *facts, rep_report *r, rep_node *o)
{
    const ev_perftest *p = facts;
    rep_node *runs = rep_arr(r, o, "runs", "perftest runs");
    for (size_t i = 0; i < p->n_runs; i++) {
        const ev_pt_run *run = &p->runs[i];
        rep_node *ro = rep_obj(r, runs, NULL, NULL);
        ev_rep_str(r, ro, "tool", "tool", run->tool);
        ev_rep_str(r, ro, "device", "device", run->device);
        ev_rep_str(r, ro, "link_type", "link type", run->link_type);
        ev_rep_int(r, ro, "qps", "QPs", run->qps, NULL);
        ev_rep_int(r, ro, "mtu_bytes", "MTU", run->mtu_bytes, "B");
        ev_rep_line(r, ro, "line", run->test_line);
        if (run->is_latency) {
            const ev_pt_row *w = run->n_rows ? &run->rows[0] : NULL;
            rep_num(r, ro, "t_typical_us", "typical latency", w ? w->t_typical_us : NAN, "us");
            rep_num(r, ro, "t_p99_us", "p99 latency", w ? w->t_p99_us : NAN, "us");
            rep_num(r, ro, "t_max_us", "max latency", w ? w->t_max_us : NAN, "us");
            ev_rep_int(r, ro, "bytes", "message size", w ? w->bytes : -1, "B");
            ev_rep_line(r, ro, "result_line", w ? w->line : 0);
        } else {
            const ev_pt_row *w = ev_pt_best_bw(run);
            rep_num(r, ro, "bw_avg_gbit_s", "average bandwidth", w ? w->bw_avg_gbit_s : NAN, "Gbit/s");
            rep_num(r, ro, "bw_peak_gbit_s", "peak bandwidth", w ? w->bw_peak_gbit_s : NAN, "Gbit/s");
            rep_num(r, ro, "msg_rate_mpps", "message rate", w ? w->msg_rate_mpps : NAN, "Mpps");
            ev_rep_int(r, ro, "bytes", "message size", w ? w->bytes : -1, "B");
            ev_rep_line(r, ro, "result_line", w ? w->line : 0);
        }
    }
    rep_int(r, o, "failures", "test failures", p->n_failures, NULL);
    if (p->n_failures) {
        rep_str(r, o, "first_failure", "first failure", p->failure);
        ev_rep_line(r, o, "first_failure_line", p->failure_line);
    }
}
