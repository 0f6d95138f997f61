/* ev_lspci.c - lspci facts: free, report entry. */
#include "ev_lspci.h"

#include <stdlib.h>

void ev_lspci_free(ev_lspci *f) { free(f); }

void ev_lspci_report(const ev_lspci *f, rep_report *r, rep_node *o)
{
    static const rep_col cols[] = {
        {"device", "device", NULL, 0},       {"cap_gts", "LnkCap speed", "GT/s", 1},
        {"cap_width", "LnkCap width", NULL, 0}, {"sta_gts", "LnkSta speed", "GT/s", 1},
        {"sta_width", "LnkSta width", NULL, 0}, {"acs_redirect", "ACS redirects P2P", NULL, 0},
        {"line", "line", NULL, 0},
    };
    rep_node *t = rep_table(r, o, "devices", "PCIe devices", cols, sizeof cols / sizeof cols[0]);
    for (int i = 0; i < f->n_devs; i++) {
        const ev_lspci_dev *d = &f->devs[i];
        rep_node *row = rep_row(r, t);
        if (d->bdf[0])
            rep_cell_str(r, row, d->bdf);
        else
            rep_cell_null(r, row);
        if (d->cap_gts > 0)
            rep_cell_num(r, row, d->cap_gts);
        else
            rep_cell_null(r, row);
        if (d->cap_width > 0)
            rep_cell_int(r, row, d->cap_width);
        else
            rep_cell_null(r, row);
        if (d->sta_gts > 0)
            rep_cell_num(r, row, d->sta_gts);
        else
            rep_cell_null(r, row);
        if (d->sta_width > 0)
            rep_cell_int(r, row, d->sta_width);
        else
            rep_cell_null(r, row);
        if (d->acs_redirect >= 0)
            rep_cell_str(r, row, d->acs_redirect ? "yes" : "no");
        else
            rep_cell_null(r, row);
        rep_cell_int(r, row, d->line);
    }
}
