/* ev_smiq.c - nvidia-smi -q facts: free, report entry. */
#include "ev_smiq.h"

#include <stdlib.h>

#include "ev_rep.h"

void ev_smiq_free(ev_smiq *f) { free(f); }

void ev_smiq_report(const ev_smiq *f, rep_report *r, rep_node *o)
{
    ev_rep_str(r, o, "driver", "driver version", f->driver);
    static const rep_col cols[] = {
        {"gpu", "GPU", NULL, 0},           {"product", "product", NULL, 0},
        {"volatile_uncorrectable", "uncorrectable ECC (volatile)", NULL, 0},
        {"aggregate_uncorrectable", "uncorrectable ECC (lifetime)", NULL, 0},
        {"remapped_uncorrectable", "rows remapped (uncorrectable)", NULL, 0},
        {"remap_pending", "remap pending", NULL, 0}, {"line", "line", NULL, 0},
    };
    rep_node *t = rep_table(r, o, "gpus", "GPUs", cols, sizeof cols / sizeof cols[0]);
    for (int g = 0; g < f->n_gpus; g++) {
        const ev_smiq_gpu *gp = &f->gpus[g];
        rep_node *row = rep_row(r, t);
        if (gp->bus_id[0])
            rep_cell_str(r, row, gp->bus_id);
        else
            rep_cell_null(r, row);
        if (gp->product[0])
            rep_cell_str(r, row, gp->product);
        else
            rep_cell_null(r, row);
        long v[] = {gp->volatile_uncorr, gp->aggregate_uncorr, gp->remap_uncorr};
        for (size_t k = 0; k < 3; k++) {
            if (v[k] >= 0)
                rep_cell_int(r, row, v[k]);
            else
                rep_cell_null(r, row);
        }
        if (gp->remap_pending >= 0)
            rep_cell_str(r, row, gp->remap_pending ? "yes" : "no");
        else
            rep_cell_null(r, row);
        rep_cell_int(r, row, gp->line);
    }
}
