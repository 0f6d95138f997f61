/* ev_iperf.c - iperf3 facts: queries, free, report entry. */
#include "ev_iperf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

void ev_iperf_free(ev_iperf *r)
{
    if (!r)
        return;
    free(r->sections);
    free(r->rows);
    free(r);
}

const ev_iperf_row *ev_iperf_best(const ev_iperf *r)
{
    const ev_iperf_row *best = NULL;
    for (int role = EV_IPERF_RECEIVER; role >= EV_IPERF_SENDER && !best; role--)
        for (size_t i = 0; i < r->n_rows; i++) {
            const ev_iperf_row *w = &r->rows[i];
            if ((int)w->role == role && w->bits_per_s > 0 && (!best || w->bits_per_s > best->bits_per_s))
                best = w;
        }
    return best;
}

void ev_iperf_report(const ev_iperf *facts, rep_report *r, rep_node *o)
{
    const ev_iperf *p = facts;
    const ev_iperf_row *best = ev_iperf_best(p);
    rep_num(r, o, "bits_per_s", "throughput", best ? best->bits_per_s : NAN, "bit/s");
    ev_rep_str(r, o, "role", "measured at", best ? (best->role == EV_IPERF_RECEIVER ? "receiver" : "sender") : NULL);
    ev_rep_line(r, o, "line", best ? best->line : 0);
    int64_t retr = 0;
    int any = 0;
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].role == EV_IPERF_SENDER && p->rows[i].retr >= 0 && p->rows[i].stream >= 0) {
            retr += p->rows[i].retr;
            any = 1;
        }
    ev_rep_int(r, o, "retransmits", "TCP retransmits (senders)", any ? retr : -1, NULL);
    rep_int(r, o, "rows", "rows", (int64_t)p->n_rows, NULL);
    rep_int(r, o, "errors", "iperf3 errors", p->n_errors, NULL);
    if (p->n_errors) {
        rep_str(r, o, "first_error", "first error", p->error);
        ev_rep_line(r, o, "first_error_line", p->error_line);
    }
}
