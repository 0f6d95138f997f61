/* ev_dmon.c - dmon facts: queries, free, report entry. */
#include "ev_dmon.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"
#include "../base/util.h"

void ev_dmon_free(ev_dmon *d)
{
    if (!d)
        return;
    free(d->entities);
    free(d->samples);
    free(d->values);
    free(d->stats);
    free(d->col_stats);
    free(d);
}

int ev_dmon_col_find(const ev_dmon *d, const char *name)
{
    for (size_t i = 0; i < d->n_cols; i++)
        if (strcasecmp(d->cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

double ev_dmon_value(const ev_dmon *d, size_t s, size_t c)
{
    if (s >= d->n_samples || c >= d->n_cols)
        return NAN;
    return d->values[s * d->n_cols + c];
}

const ev_dmon_stat *ev_dmon_stat_of(const ev_dmon *d, size_t e, size_t c)
{
    if (c >= d->n_cols)
        return NULL;
    if (e == EV_DMON_ALL)
        return &d->col_stats[c];
    if (e >= d->n_entities)
        return NULL;
    return &d->stats[e * d->n_cols + c];
}

void ev_dmon_compute_stats(ev_dmon *d)
{
    size_t nc = d->n_cols, ne = d->n_entities;
    d->stats = cp_xcalloc(ne * nc + 1, sizeof *d->stats);
    d->col_stats = cp_xcalloc(nc + 1, sizeof *d->col_stats);
    for (size_t s = 0; s < d->n_samples; s++) {
        const double *row = d->values + s * nc;
        for (size_t c = 0; c < nc; c++) {
            if (isnan(row[c]))
                continue;
            ev_dmon_stat *targets[2] = {&d->stats[d->samples[s].entity * nc + c], &d->col_stats[c]};
            for (int k = 0; k < 2; k++) {
                ev_dmon_stat *st = targets[k];
                if (st->n == 0 || row[c] < st->min)
                    st->min = row[c];
                if (st->n == 0 || row[c] > st->max)
                    st->max = row[c];
                st->mean += row[c]; /* sum until the end */
                st->n++;
            }
        }
    }
    for (size_t i = 0; i < ne * nc + nc; i++) {
        ev_dmon_stat *st = i < ne * nc ? &d->stats[i] : &d->col_stats[i - ne * nc];
        if (st->n)
            st->mean /= st->n;
        else
            st->min = st->max = st->mean = NAN;
    }
}

void ev_dmon_report(const ev_dmon *facts, rep_report *r, rep_node *o)
{
    const ev_dmon *d = facts;
    rep_str(r, o, "tool", "tool", d->flavor == EV_DMON_DCGMI ? "dcgmi dmon" : "nvidia-smi dmon");
    rep_int(r, o, "entities", "entities", (int64_t)d->n_entities, NULL);
    rep_int(r, o, "samples", "samples", (int64_t)d->n_samples, NULL);
    static const rep_col cols[] = {
        {"column", "column", NULL, 0}, {"unit", "unit", NULL, 0}, {"n", "n", NULL, 0},
        {"min", "min", NULL, -1}, {"mean", "mean", NULL, -1}, {"max", "max", NULL, -1},
    };
    rep_node *tab = rep_table(r, o, "columns", "columns (all entities)", cols, sizeof cols / sizeof cols[0]);
    for (size_t c = 0; c < d->n_cols; c++) {
        const ev_dmon_stat *s = ev_dmon_stat_of(d, EV_DMON_ALL, c);
        rep_node *row = rep_row(r, tab);
        rep_cell_str(r, row, d->cols[c].name);
        if (d->cols[c].unit[0])
            rep_cell_str(r, row, d->cols[c].unit);
        else
            rep_cell_null(r, row);
        rep_cell_int(r, row, s->n);
        rep_cell_num(r, row, s->min);
        rep_cell_num(r, row, s->mean);
        rep_cell_num(r, row, s->max);
    }
}
