/* ev_ncu.c - Nsight Compute facts: the metric table, free, report entry.
 * The per-launch roofline (kernels_roofline[]) is the analysis'; the
 * evidence[] entry only says what the file held. */
#include "ev_ncu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

static const struct {
    const char *key, *title;
    ev_ncu_dim dim;
} k_metrics[] = {
#define X(e, key, dim, title) {key, title, dim},
#include "ev_ncu.def"
#undef X
};

const char *ev_ncu_metric_key(ev_ncu_metric m) { return (unsigned)m < EV_NCU__COUNT ? k_metrics[m].key : "?"; }
const char *ev_ncu_metric_title(ev_ncu_metric m) { return (unsigned)m < EV_NCU__COUNT ? k_metrics[m].title : "?"; }
ev_ncu_dim ev_ncu_metric_dim(ev_ncu_metric m) { return (unsigned)m < EV_NCU__COUNT ? k_metrics[m].dim : EV_NCU_D_COUNT; }

const char *ev_ncu_form_key(ev_ncu_form f)
{
    static const char *const k[] = {"details_csv", "raw_csv", "text"};
    return (unsigned)f < 3 ? k[f] : "?";
}

void ev_ncu_free(ev_ncu *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->launches[i].name);
    free(r->launches);
    free(r);
}

void ev_ncu_report(const ev_ncu *p, rep_report *r, rep_node *o)
{
    rep_str(r, o, "form", "ncu output form", ev_ncu_form_key(p->form));
    rep_int(r, o, "launches", "profiled kernel launches", (int64_t)p->n, NULL);
    rep_int(r, o, "values_read", "metric values read", p->values_read, NULL);
    rep_int(r, o, "values_na", "values ncu gave as n/a", p->values_na, NULL);
    rep_int(r, o, "metrics_unmapped", "metric names not mapped (not used)", p->metrics_unmapped, NULL);
    rep_node *u = rep_arr(r, o, "unmapped_examples", "unmapped metric names (first ones)");
    u->flags |= REP_F_NO_TEXT;
    for (int i = 0; i < p->n_unmapped_names; i++)
        rep_str(r, u, NULL, NULL, p->unmapped[i]);
    ev_rep_line(r, o, "line", p->n ? (long)p->launches[0].line : 0);
}
