/* an_rules_pcie.c - rule family "pcie": what lspci -vv says about PCIe links
 * and Access Control Services (facts in ev_lspci.h). A perftest below line
 * rate that a downgraded link explains is reported by the bench family under
 * PCIE_LINK_DOWNGRADED with its gain; here the link is said on its own.
 */
#include "rulebook.h"

#include <stdio.h>
#include <string.h>

#include "../base/util.h"

static void r_downgraded(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_LSPCI, f)
        for (int d = 0; d < f->as.lspci->n_devs; d++) {
            const ev_lspci_dev *dv = &f->as.lspci->devs[d];
            bool slower = dv->cap_gts > 0 && dv->sta_gts > 0 && dv->sta_gts < dv->cap_gts;
            bool narrower = dv->cap_width > 0 && dv->sta_width > 0 && dv->sta_width < dv->cap_width;
            if (!dv->downgraded && !slower && !narrower)
                continue;
            rb_finding *x = rb_raise(c, self);
            if (!x->title[0])
                rb_title(x, "PCIe link of %s%s%s runs at x%d %.1f GT/s, capable of x%d %.1f GT/s (downgraded)", dv->bdf[0] ? dv->bdf : "a device",
                         dv->desc[0] ? " " : "", dv->desc, dv->sta_width, dv->sta_gts, dv->cap_width, dv->cap_gts);
            rb_cite(x, f, &dv->lnkcap_at);
            rb_cite(x, f, &dv->lnksta_at);
            rb_step(x, "reseat the card or move it to a slot wired for x%d; check the board manual for lanes shared with another slot", dv->cap_width);
            rb_step(x, "nvidia-smi -q -d PCIE (GPUs): current vs max link generation and width");
        }
}

static void r_acs(rb_ctx *c, const rb_rule *self)
{
    int n = 0;
    const ev_lspci_dev *first = NULL;
    rb_finding *x = NULL;
    RB_EACH(c, EV_LSPCI, f)
        for (int d = 0; d < f->as.lspci->n_devs; d++) {
            const ev_lspci_dev *dv = &f->as.lspci->devs[d];
            if (dv->acs_redirect != 1)
                continue;
            if (!x)
                x = rb_raise(c, self);
            if (!first)
                first = dv;
            n++;
            rb_cite(x, f, &dv->acs_at);
        }
    if (!x)
        return;
    /* "PCI bridge: Broadcom / LSI ..." -> "PCI bridge" */
    int cls = (int)strcspn(first->desc, ":");
    rb_title(x, "PCIe ACS redirects peer-to-peer requests on %d device%s (%s%s%.*s%s): GPU-GPU P2P and GPU Direct RDMA go through the root complex (or fail)",
             n, n == 1 ? "" : "s", first->bdf[0] ? first->bdf : "a bridge", first->desc[0] ? " " : "", cls, first->desc,
             n > 1 ? ", ..." : "");
    rb_step(x, "disable ACS on the bridges between GPUs and NICs: in the BIOS, with pci=noacs, or setpci -s <bdf> ECAP_ACS+6.w=0000 at boot");
    rb_step(x, "confirm with NCCL_P2P_DISABLE=1 / NCCL_NET_GDR_LEVEL=LOC: if the hang or error goes away, ACS is the cause");
}

static const rb_rule k_rules[] = {
    {"PCIE_LINK_DOWNGRADED", CP_LAYER_INTRA, AN_SEV_MEDIUM, 0.6, "lspci -vv LnkSta below LnkCap (speed or width), marked '(downgraded)'",
     "PCI Express link status (lspci(8)); https://github.com/linux-rdma/perftest (bandwidth is capped by the slower of NIC port and PCIe link)",
     "the device's PCIe link trained below what it supports: reseat or move it to a slot with the full lane count", r_downgraded},
    {"PCIE_ACS_REDIRECT", CP_LAYER_INTRA, AN_SEV_HIGH, 0.6, "lspci -vv ACSCtl with SrcValid+, ReqRedir+ or CmpltRedir+",
     "NCCL troubleshooting, PCI Access Control Services (ACS); https://github.com/NVIDIA/nccl/issues/2079",
     "ACS sends peer-to-peer traffic through the root complex: disable it on the bridges between GPUs and NICs for P2P and GPU Direct RDMA", r_acs},
};

const rb_family rb_family_pcie = {.name = "pcie",
                                  .summary = "lspci -vv: PCIe link width/speed, ACS",
                                  .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
