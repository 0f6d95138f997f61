/* p2p_slow.c - the slow host/link decision (method in p2p_slow.h). */
#include "p2p_slow.h"

#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the finite values of v[n] (reordered); NaN when none. */
static double median_finite(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[k++] = v[i];
    if (k == 0)
        return NAN;
    qsort(v, k, sizeof *v, cmp_dbl);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

void p2p_slow_analyze(int n, const char *const *hosts, const double *bw, double margin,
                      p2p_slow_result *out)
{
    memset(out, 0, sizeof *out);
    out->margin = margin;
    if (n < 1)
        return;
    int *ent_of = cp_xcalloc((size_t)n, sizeof *ent_of);
    out->ents = cp_xcalloc((size_t)n, sizeof *out->ents);
    /* group ranks by host name */
    for (int i = 0; i < n; i++) {
        const char *h = hosts ? hosts[i] : NULL;
        size_t e = out->n_ents;
        for (size_t k = 0; h && k < out->n_ents; k++)
            if (out->ents[k].name && strcmp(out->ents[k].name, h) == 0) {
                e = k;
                break;
            }
        if (e == out->n_ents) {
            out->ents[e].name = h;
            out->n_ents++;
        }
        ent_of[i] = (int)e;
    }
    out->by_host = out->n_ents > 1;
    if (!out->by_host) { /* one host: the ranks are the entities */
        out->n_ents = (size_t)n;
        for (int i = 0; i < n; i++) {
            out->ents[i].name = NULL;
            ent_of[i] = i;
        }
    }
    for (size_t e = 0; e < out->n_ents; e++) {
        if (out->by_host)
            snprintf(out->ents[e].label, sizeof out->ents[e].label, "%s", out->ents[e].name);
        else
            snprintf(out->ents[e].label, sizeof out->ents[e].label, "rank %zu", e);
    }
    size_t ne = out->n_ents;
    out->links = cp_xcalloc(ne * (ne - 1) / 2 + 1, sizeof *out->links);
    double *vals = cp_xcalloc((size_t)n * (size_t)n + ne + 1, sizeof *vals);
    double *pair = cp_xcalloc(ne * ne, sizeof *pair);
    for (size_t a = 0; a < ne; a++)
        for (size_t b = a + 1; b < ne; b++) {
            size_t k = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (i != j && (size_t)ent_of[i] == a && (size_t)ent_of[j] == b) {
                        vals[k++] = bw[(size_t)i * (size_t)n + (size_t)j];
                        vals[k++] = bw[(size_t)j * (size_t)n + (size_t)i];
                    }
            double m = median_finite(vals, k);
            pair[a * ne + b] = pair[b * ne + a] = m;
            out->links[out->n_links++] = (p2p_link){(int)a, (int)b, m, false};
        }
    size_t measured = 0;
    for (size_t a = 0; a < ne; a++) {
        size_t k = 0;
        for (size_t b = 0; b < ne; b++)
            if (b != a)
                vals[k++] = pair[a * ne + b];
        out->ents[a].score_gbps = median_finite(vals, k);
        if (isfinite(out->ents[a].score_gbps))
            measured++;
    }
    for (size_t a = 0; a < ne; a++)
        vals[a] = out->ents[a].score_gbps;
    out->reference_gbps = median_finite(vals, ne);
    out->decidable = measured >= 3;
    if (out->decidable) {
        double cut = (1.0 - margin) * out->reference_gbps;
        for (size_t a = 0; a < ne; a++)
            out->ents[a].slow = isfinite(out->ents[a].score_gbps) && out->ents[a].score_gbps < cut;
        for (size_t l = 0; l < out->n_links; l++)
            out->links[l].slow = isfinite(out->links[l].bw_gbps) && out->links[l].bw_gbps < cut;
    }
    free(pair);
    free(vals);
    free(ent_of);
}

void p2p_slow_free(p2p_slow_result *r)
{
    free(r->ents);
    free(r->links);
    memset(r, 0, sizeof *r);
}

void p2p_slow_verdict(const p2p_slow_result *v, char *verdict, size_t n)
{
    size_t off = 0;
    const char *what = v->by_host ? "host" : "rank";
    verdict[0] = 0;
    if (!v->decidable)
        off += (size_t)snprintf(verdict, n, "undecidable: fewer than 3 %ss with measurements, no slow %s can be "
                                "singled out", what, what);
    for (size_t e = 0; e < v->n_ents && off < n; e++)
        if (v->ents[e].slow)
            off += (size_t)snprintf(verdict + off, n - off, "%sslow %s %s (%.3f GB/s vs %.3f)", off ? "; " : "",
                                    what, v->ents[e].label, v->ents[e].score_gbps, v->reference_gbps);
    for (size_t l = 0; l < v->n_links && off < n; l++)
        if (v->links[l].slow)
            off += (size_t)snprintf(verdict + off, n - off, "%sslow link %s <-> %s (%.3f GB/s)", off ? "; " : "",
                                    v->ents[v->links[l].a].label, v->ents[v->links[l].b].label,
                                    v->links[l].bw_gbps);
    if (!off)
        snprintf(verdict, n, "no slow %s or link (every %s within %.0f%% of the median %.3f GB/s)", what, what,
                 100 * v->margin, v->reference_gbps);
}

rep_node *p2p_slow_report(rep_report *r, rep_node *parent, const char *key, const char *title,
                          const p2p_slow_result *v)
{
    char verdict[1024];
    p2p_slow_verdict(v, verdict, sizeof verdict);
    rep_node *p = rep_obj(r, parent, key, title);
    rep_str(r, p, "verdict", "verdict", verdict);
    rep_str(r, p, "grouped_by", "grouped by", v->by_host ? "host" : "rank");
    rep_num(r, p, "reference_gbps", "median", v->reference_gbps, "GB/s");
    rep_num(r, p, "margin", "slow below (fraction under median)", v->margin, NULL);
    static const rep_col ecols[] = { { "name", "host/rank", NULL, -1 }, { "median_gbps", "median pair", "GB/s", 3 },
                                     { "slow", "slow", NULL, -1 } };
    rep_node *t = rep_table(r, p, "hosts", "hosts", ecols, 3);
    for (size_t e = 0; e < v->n_ents; e++) {
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, v->ents[e].label);
        rep_cell_num(r, row, v->ents[e].score_gbps);
        rep_cell_bool(r, row, v->ents[e].slow);
    }
    static const rep_col lcols[] = { { "a", "from", NULL, -1 }, { "b", "to", NULL, -1 },
                                     { "bw_gbps", "bandwidth", "GB/s", 3 }, { "slow", "slow", NULL, -1 } };
    t = rep_table(r, p, "links", "links", lcols, 4);
    for (size_t l = 0; l < v->n_links; l++) {
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, v->ents[v->links[l].a].label);
        rep_cell_str(r, row, v->ents[v->links[l].b].label);
        rep_cell_num(r, row, v->links[l].bw_gbps);
        rep_cell_bool(r, row, v->links[l].slow);
    }
    return p;
}
