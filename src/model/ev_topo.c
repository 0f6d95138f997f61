/* ev_topo.c - nvidia-smi topo -m facts: queries, free, report entry. */
#include "ev_topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

const char *ev_topo_p2p_key(int s)
{
    static const char *const k[] = {"-", "OK", "CNS", "GNS", "TNS", "NS", "DR", "U"};
    return s >= 0 && s < (int)(sizeof k / sizeof k[0]) ? k[s] : "?";
}

void ev_topo_free(ev_topo *m)
{
    if (!m)
        return;
    free(m->devs);
    free(m->cells);
    free(m);
}

const ev_topo_cell *ev_topo_cell_at(const ev_topo *m, size_t i, size_t j)
{
    if (i >= m->n_devs || j >= m->n_devs)
        return NULL;
    return &m->cells[i * m->n_devs + j];
}

int ev_topo_find(const ev_topo *m, const char *label)
{
    for (size_t i = 0; i < m->n_devs; i++)
        if (strcmp(m->devs[i].label, label) == 0)
            return (int)i;
    return -1;
}

/* The cell for a pair, from either row (a pasted matrix may lack one). */
ev_topo_cell ev_topo_pair(const ev_topo *m, size_t i, size_t j)
{
    ev_topo_cell c = m->cells[i * m->n_devs + j];
    if (c.kind == TOPO_LINK_UNKNOWN)
        c = m->cells[j * m->n_devs + i];
    return c;
}

int ev_topo_nearest_nic(const ev_topo *m, size_t i, topo_link_kind *kind)
{
    int best = -1;
    topo_link_kind bk = TOPO_LINK_UNKNOWN;
    for (size_t j = 0; j < m->n_devs; j++) {
        if (j == i || m->devs[j].is_gpu)
            continue;
        ev_topo_cell c = ev_topo_pair(m, i, j);
        if (c.kind == TOPO_LINK_UNKNOWN)
            continue;
        if (best < 0 || topo_link_kind_rank(c.kind) < topo_link_kind_rank(bk)) {
            best = (int)j;
            bk = c.kind;
        }
    }
    if (kind)
        *kind = bk;
    return best;
}

void ev_topo_report(const ev_topo *facts, rep_report *r, rep_node *o)
{
    const ev_topo *m = facts;
    rep_int(r, o, "gpus", "GPUs", m->n_gpus, NULL);
    rep_int(r, o, "nics", "NICs", m->n_nics, NULL);
    static const rep_col cols[] = {
        {"gpu", "GPU", NULL, 0}, {"numa", "NUMA", NULL, 0}, {"nvlink_peers", "NVLink peers", NULL, 0},
        {"nearest_nic", "nearest NIC", NULL, 0}, {"nic_path", "path", NULL, 0}, {"line", "line", NULL, 0},
    };
    rep_node *tab = rep_table(r, o, "gpu_paths", "GPU paths", cols, sizeof cols / sizeof cols[0]);
    for (size_t i = 0; i < m->n_devs; i++) {
        const ev_topo_dev *dv = &m->devs[i];
        if (!dv->is_gpu)
            continue;
        int peers = 0;
        for (size_t j = 0; j < m->n_devs; j++)
            peers += m->devs[j].is_gpu && ev_topo_cell_at(m, i, j)->kind == TOPO_LINK_NVLINK;
        topo_link_kind k;
        int nic = ev_topo_nearest_nic(m, i, &k);
        rep_node *row = rep_row(r, tab);
        rep_cell_str(r, row, dv->label);
        if (dv->numa_affinity >= 0)
            rep_cell_int(r, row, dv->numa_affinity);
        else
            rep_cell_null(r, row);
        rep_cell_int(r, row, peers);
        if (nic >= 0) {
            rep_cell_str(r, row, m->devs[nic].name);
            rep_cell_str(r, row, topo_link_kind_key(k));
        } else {
            rep_cell_null(r, row);
            rep_cell_null(r, row);
        }
        rep_cell_int(r, row, dv->line);
    }
}
