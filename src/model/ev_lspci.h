/* ev_lspci.h - facts of `lspci -vv` output (whole, or the LnkCap/LnkSta and
 * ACSCtl lines people paste): per PCIe device, the link's capability and
 * status (speed in GT/s, width) and whether Access Control Services redirect
 * peer-to-peer requests (ACSCtl "SrcValid+ ReqRedir+ CmpltRedir+ ..."). An
 * excerpt without the device's header line gets an anonymous device.
 *
 * Filled by src/readers/rd_lspci.c. Plain data (ev_lspci_free).
 */
#ifndef CP_MODEL_EV_LSPCI_H
#define CP_MODEL_EV_LSPCI_H

#include <stdbool.h>

#include "ev_base.h"
#include "report.h"

#define EV_LSPCI_MAX_DEVS 256

typedef struct ev_lspci_dev {
    char bdf[16];         /* "41:00.0" / "0000:41:00.0"; "" for an excerpt */
    char desc[80];        /* "PCI bridge: Advanced Micro Devices ..."; "" */
    long line;            /* header line (first fact line of an excerpt) */
    double cap_gts, sta_gts; /* LnkCap / LnkSta speed in GT/s; 0 unknown */
    int cap_width, sta_width; /* lanes; 0 unknown */
    bool downgraded;      /* lspci marks LnkSta "(downgraded)" */
    ev_at lnkcap_at, lnksta_at;
    int acs_redirect;     /* ACSCtl: 1 when SrcValid+/ReqRedir+/CmpltRedir+ is on, 0 all off, -1 no line */
    ev_at acs_at;
} ev_lspci_dev;

typedef struct ev_lspci {
    long lines;
    int n_devs;
    long devs_dropped;
    ev_lspci_dev devs[EV_LSPCI_MAX_DEVS];
} ev_lspci;

void ev_lspci_free(ev_lspci *f);
void ev_lspci_report(const ev_lspci *f, rep_report *r, rep_node *obj);

#endif
