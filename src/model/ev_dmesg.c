/* ev_dmesg.c - kernel log facts: names, free, report entry. */
#include "ev_dmesg.h"

#include <stdlib.h>

const char *ev_aer_severity_name(int s)
{
    return s == EV_AER_FATAL ? "fatal" : s == EV_AER_NONFATAL ? "non-fatal" : "corrected";
}

bool ev_dmesg_any(const ev_dmesg *f) { return f->n_xids || f->n_bus || f->n_aer || f->n_oomkills || f->dropped; }

void ev_dmesg_free(ev_dmesg *f) { free(f); }

void ev_dmesg_report(const ev_dmesg *f, rep_report *r, rep_node *o)
{
    rep_int(r, o, "xids", "Xid events", f->n_xids, NULL);
    rep_int(r, o, "fallen_off_bus", "GPU fallen off the bus (no Xid)", f->n_bus, NULL);
    rep_int(r, o, "aer_fatal", "PCIe AER fatal", f->aer_total[EV_AER_FATAL], NULL);
    rep_int(r, o, "aer_nonfatal", "PCIe AER non-fatal", f->aer_total[EV_AER_NONFATAL], NULL);
    rep_int(r, o, "aer_corrected", "PCIe AER corrected", f->aer_total[EV_AER_CORRECTED], NULL);
    rep_int(r, o, "oom_kills", "OOM killer", f->n_oomkills, NULL);
}
