/* ev_counters.c - counter window facts: append, free, report entry. */
#include "ev_counters.h"
#include "ev_rep.h"
#include "../base/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ev_counters_observe(ev_counters *c, const char *entity, const char *key, double value, int64_t t_ns,
                         uint32_t line)
{
    ev_counter *x = NULL;
    for (size_t i = c->n; i-- > 0;)
        if (strcmp(c->v[i].key, key) == 0 && strcmp(c->v[i].entity, entity) == 0) {
            x = &c->v[i];
            break;
        }
    if (!x) {
        if (c->n >= EV_COUNTERS_MAX)
            return false;
        cp_xgrow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v);
        x = &c->v[c->n++];
        memset(x, 0, sizeof *x);
        snprintf(x->entity, sizeof x->entity, "%s", entity);
        snprintf(x->key, sizeof x->key, "%s", key);
        x->first = value;
        x->t_first_ns = t_ns;
        x->last_value = NAN;
    } else if (!x->line && value > x->last) {
        x->line = line;
    }
    x->last = value;
    x->t_last_ns = t_ns;
    x->seconds = (double)(x->t_last_ns - x->t_first_ns) / 1e9;
    x->n_samples++;
    return true;
}

bool ev_counters_add_link(ev_counters *c, const ev_link *l)
{
    if (c->n_links >= EV_COUNTERS_MAX)
        return false;
    cp_xgrow((void **)&c->links, &c->cap_links, c->n_links + 1, sizeof *c->links);
    c->links[c->n_links++] = *l;
    return true;
}

ev_link *ev_counters_link(ev_counters *c, const char *entity)
{
    for (size_t i = 0; i < c->n_links; i++)
        if (strcmp(c->links[i].entity, entity) == 0)
            return &c->links[i];
    return NULL;
}

void ev_counters_free(ev_counters *c)
{
    if (!c)
        return;
    free(c->v);
    free(c->links);
    free(c);
}

void ev_counters_report(const ev_counters *c, rep_report *r, rep_node *o)
{
    ev_rep_str(r, o, "source", "source", c->source);
    rep_int(r, o, "samples", "samples in the window", c->n_window, NULL);
    static const rep_col cols[] = {
        {"entity", "entity", NULL, 0}, {"counter", "counter", NULL, 0}, {"first", "first", NULL, -1},
        {"last", "last", NULL, -1},    {"seconds", "seconds", "s", 1},  {"rose_at", "rose at sample", NULL, 0},
    };
    rep_node *t = rep_table(r, o, "counters", "counters over the window", cols, CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < c->n; i++) {
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, c->v[i].entity);
        rep_cell_str(r, row, c->v[i].key);
        rep_cell_num(r, row, c->v[i].first);
        rep_cell_num(r, row, c->v[i].last);
        rep_cell_num(r, row, c->v[i].seconds);
        if (c->v[i].line)
            rep_cell_int(r, row, c->v[i].line);
        else
            rep_cell_null(r, row);
    }
    static const rep_col lcols[] = {
        {"entity", "link", NULL, 0}, {"link_layer", "link layer", NULL, 0}, {"state", "state", NULL, 0},
        {"rate_gbit_s", "rate", "Gbit/s", 1},
    };
    rep_node *lt = rep_table(r, o, "links", "links", lcols, CP_ARRAY_LEN(lcols));
    for (size_t i = 0; i < c->n_links; i++) {
        rep_node *row = rep_row(r, lt);
        rep_cell_str(r, row, c->links[i].entity);
        rep_cell_str(r, row, c->links[i].link_layer);
        rep_cell_str(r, row, c->links[i].state);
        rep_cell_num(r, row, c->links[i].rate_gbit_s);
    }
}
