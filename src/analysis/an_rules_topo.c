/* an_rules_topo.c - rule family "topo": what an `nvidia-smi topo -m`
 * matrix says about the paths between GPUs and NICs (facts in ev_topo.h).
 * A matrix shows configuration, not traffic: no gains.
 */
#include "rulebook.h"

#include <stdio.h>

#include "../base/util.h"

static void r_pairs_sys(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_TOPO, f) {
        const ev_topo *m = f->as.topo;
        int nv = 0, sys = 0, gi = -1, gj = -1;
        for (size_t i = 0; i < m->n_devs; i++)
            for (size_t j = i + 1; j < m->n_devs; j++) {
                if (!m->devs[i].is_gpu || !m->devs[j].is_gpu)
                    continue;
                ev_topo_cell cell = ev_topo_pair(m, i, j);
                nv += cell.kind == TOPO_LINK_NVLINK;
                if (cell.kind == TOPO_LINK_SYS && !sys++) {
                    gi = (int)i;
                    gj = (int)j;
                }
            }
        if (m->n_gpus < 2 || nv > 0 || sys == 0)
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "no NVLink: %d GPU pair%s talk across CPU sockets (SYS)", sys, sys == 1 ? "" : "s");
        rb_cite_line(x, f, m->devs[gi].line, "%s to %s is SYS (PCIe + the inter-socket link)", m->devs[gi].label, m->devs[gj].label);
        rb_cite_line(x, f, m->header_line, "%d GPUs, no NV# cell in the matrix", m->n_gpus);
        rb_step(x, "place the ranks of one tensor/pipeline group on GPUs of one socket (CUDA_VISIBLE_DEVICES)");
        rb_step(x, "nvidia-smi topo -p2p r   # whether peer-to-peer works across the sockets at all");
    }
}

/* GPU pairs without NVLink that cross a PCIe host bridge (PHB) or the
 * interconnect between host bridges (NODE): their peer-to-peer traffic
 * passes the CPU's root complex, where ACS redirection and the IOMMU decide
 * whether it works (NCCL's P2P_LEVEL PHB: "Traffic will go through the
 * CPU"). Said once per matrix, low: the matrix cannot show ACS. */
static void r_host_bridge(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_TOPO, f) {
        const ev_topo *m = f->as.topo;
        int nv = 0, hb = 0, gi = -1, gj = -1;
        topo_link_kind k = TOPO_LINK_UNKNOWN;
        for (size_t i = 0; i < m->n_devs; i++)
            for (size_t j = i + 1; j < m->n_devs; j++) {
                if (!m->devs[i].is_gpu || !m->devs[j].is_gpu)
                    continue;
                ev_topo_cell cell = ev_topo_pair(m, i, j);
                nv += cell.kind == TOPO_LINK_NVLINK;
                if ((cell.kind == TOPO_LINK_PHB || cell.kind == TOPO_LINK_NODE) && !hb++) {
                    gi = (int)i;
                    gj = (int)j;
                    k = cell.kind;
                }
            }
        if (nv > 0 || hb == 0)
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "%d GPU pair%s without NVLink cross the CPU's PCIe host bridge (%s): peer-to-peer there depends on ACS being off and the IOMMU in passthrough",
                 hb, hb == 1 ? "" : "s", topo_link_kind_key(k));
        rb_cite_line(x, f, m->devs[gi].line, "%s to %s is %s", m->devs[gi].label, m->devs[gj].label, topo_link_kind_key(k));
        rb_step(x, "sudo lspci -vvv | grep ACSCtl   # 'SrcValid+ ReqRedir+ CmpltRedir+' on the root ports above the GPUs redirects P2P");
        rb_step(x, "if NCCL hangs or is slow between these GPUs: confirm with NCCL_P2P_DISABLE=1, then disable ACS (BIOS, pci=noacs, setpci)");
        rb_step(x, "cat /proc/cmdline   # iommu=pt (passthrough) keeps P2P direct");
    }
}

static void r_few_nics(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_TOPO, f) {
        const ev_topo *m = f->as.topo;
        if (m->n_nics <= 0 || m->n_gpus < 4 * m->n_nics)
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "%d GPUs share %d NIC%s", m->n_gpus, m->n_nics, m->n_nics == 1 ? "" : "s");
        rb_cite_line(x, f, m->header_line, "%d GPU and %d NIC rows", m->n_gpus, m->n_nics);
    }
}

/* nvidia-smi topo -p2p: GPU pairs whose peer-to-peer status is not OK. */
static void r_p2p_matrix(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_TOPO, f) {
        const ev_topo *m = f->as.topo;
        if (!m->p2p_line)
            continue;
        int bad = 0, ok = 0, why = EV_TOPO_P2P_UNKNOWN;
        size_t bi = 0, bj = 0;
        for (size_t i = 0; i < m->n_devs; i++)
            for (size_t j = i + 1; j < m->n_devs; j++) {
                if (!m->devs[i].is_gpu || !m->devs[j].is_gpu)
                    continue;
                int p = ev_topo_pair(m, i, j).p2p;
                if (p == EV_TOPO_P2P_OK) {
                    ok++;
                } else if (p != EV_TOPO_P2P_UNKNOWN && p != EV_TOPO_P2P_U) {
                    if (!bad++) {
                        why = p;
                        bi = i;
                        bj = j;
                    }
                }
            }
        if (!bad)
            continue;
        static const char *const what[] = {"", "", "the chipset does not support it", "the GPU does not support it",
                                           "the topology does not support it", "not supported", "disabled by a registry key"};
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "nvidia-smi topo -p2p: %d GPU pair%s cannot use peer-to-peer (%s: %s)%s", bad, bad == 1 ? "" : "s",
                 ev_topo_p2p_key(why), what[why], ok ? "" : ", none can");
        rb_cite_line(x, f, m->devs[bi].line ? m->devs[bi].line : m->p2p_line, "%s to %s: %s", m->devs[bi].label,
                     m->devs[bj].label, ev_topo_p2p_key(why));
        rb_step(x, "NCCL then copies through host memory (SHM): expect PCIe-level busbw; NCCL_P2P_DISABLE=1 avoids P2P attempts that crash (error 217)");
        rb_step(x, "GNS on GeForce/consumer GPUs is by design; CNS/TNS: check ACS and the IOMMU (lspci -vvv | grep ACSCtl, iommu=pt), or move the GPUs under one PCIe switch");
    }
}

static const rb_rule k_rules[] = {
    {"TOPO_P2P_NOT_SUPPORTED", CP_LAYER_INTRA, AN_SEV_HIGH, 0.6,
     "nvidia-smi topo -p2p r|w: GPU pairs marked CNS (chipset not supported), GNS (GPU not supported), TNS (topology not supported), NS or DR (disabled by regkey)",
     "nvidia-smi(1) topo -p2p legend; https://github.com/NVIDIA/nccl-tests/issues/287 (maintainer: GeForce cards do not support P2P)",
     "these GPUs cannot reach each other directly: collectives between them go through host memory; fix ACS/IOMMU where the hardware supports P2P, else plan for PCIe/host-memory bandwidth",
     r_p2p_matrix},
    {"TOPO_GPU_PAIRS_SYS", CP_LAYER_INTRA, AN_SEV_MEDIUM, 0.5, "nvidia-smi topo -m: no NV# cell between GPUs and a GPU pair marked SYS",
     "nvidia-smi topo -m legend (SYS: PCIe plus the SMP interconnect); NCCL env docs, NCCL_P2P_LEVEL",
     "place the ranks of one tensor/pipeline group on GPUs behind one PCIe switch (PIX) or one socket, keep P2P enabled and ACS off; cross-socket P2P is slow or unsupported and NCCL falls back to host memory",
     r_pairs_sys},
    {"TOPO_P2P_VIA_HOST_BRIDGE", CP_LAYER_INTRA, AN_SEV_LOW, 0.35,
     "nvidia-smi topo -m: GPU pairs without NVLink marked PHB or NODE",
     "NCCL env docs (NCCL_P2P_LEVEL PHB: traffic goes through the CPU); NCCL troubleshooting, PCI ACS; https://github.com/NVIDIA/nccl/issues/2079",
     "peer-to-peer between these GPUs goes through the root complex: keep ACS off on the root ports and the IOMMU in passthrough, or NCCL hangs or crawls",
     r_host_bridge},
    {"TOPO_FEW_NICS", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.45, "nvidia-smi topo -m: at least 4 GPU rows per NIC row", "NCCL env docs, NCCL_IB_HCA; nvidia-smi topo -m",
     "inter-node collectives get at most the NICs' share per GPU: add NICs (one per GPU or pair on training nodes) or expect busbw <= NIC rate x NICs / GPUs",
     r_few_nics},
};

const rb_family rb_family_topo = {.name = "topo",
                                  .summary = "nvidia-smi topo -m: GPU pairs across sockets or host bridges, GPUs per NIC",
                                  .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
