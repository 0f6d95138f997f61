/* an_rules_counters.c - rule family "counters": error counters that rose
 * over a window of samples and links that trained below their peers (facts
 * in model/ev_counters.h, which `chainprof monitor` fills from its recent
 * samples; its alerts are these findings).
 *
 * A counter "rises" when its last sample is above its first: any increase
 * of these counters is an event the hardware counts only on faults (a
 * replayed TLP, a symbol error, a link that went down), so there is no
 * threshold to fit. The rate per second is in the title for triage.
 *
 * A link is "below line rate" when it is ACTIVE and its rate is below the
 * rate the user gave (--nic-gbit-s, rb_opts.nic_gbit_s) or, without one,
 * below the fastest ACTIVE link of the same link layer in the window: a
 * host's fabric ports are cabled alike, so one port at 200 Gb/s beside
 * 400 Gb/s ones trained down (a cable, a transceiver, a lane).
 */
#include "rulebook.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/util.h"

/* One finding per rule, citing every entity whose counter rose. */
static void rising(rb_ctx *c, const rb_rule *self, const char *key, const char *what, const char *step)
{
    rb_finding *x = NULL;
    int n = 0;
    const ev_counter *worst = NULL;
    RB_EACH(c, EV_COUNTERS, f)
        for (size_t i = 0; i < f->as.counters->n; i++) {
            const ev_counter *k = &f->as.counters->v[i];
            if (strcmp(k->key, key) != 0 || !(k->last > k->first))
                continue;
            if (!x)
                x = rb_raise(c, self);
            n++;
            if (!worst || k->last - k->first > worst->last - worst->first)
                worst = k;
            rb_cite_line(x, f, k->line, "%s: %s %.0f -> %.0f over %.3g s", k->entity, key, k->first, k->last, k->seconds);
        }
    if (!x)
        return;
    double d = worst->last - worst->first;
    char per[64] = "";
    if (worst->seconds > 0)
        snprintf(per, sizeof per, " in %.3g s (%.3g/s)", worst->seconds, d / worst->seconds);
    rb_title(x, "%s on %s: +%.0f%s%s", what, worst->entity, d, per, n > 1 ? ", and others" : "");
    rb_field(x, "entity", "%s", worst->entity);
    rb_field_num(x, "increase", d);
    rb_step(x, "%s", step);
}

static void r_replay(rb_ctx *c, const rb_rule *self)
{
    rising(c, self, EV_CTR_PCIE_REPLAY, "PCIe replays rising",
           "nvidia-smi -q -d PCIE   # replay counter, current vs max link generation and width; reseat the GPU or its riser");
}

static void r_ecc(rb_ctx *c, const rb_rule *self)
{
    rising(c, self, EV_CTR_ECC_UNCORRECTED, "uncorrected ECC errors rising",
           "nvidia-smi -q -d ECC,ROW_REMAPPER   # drain the node, reset the GPU so rows are remapped; replace it when remapping fails");
}

static void r_xid(rb_ctx *c, const rb_rule *self)
{
    rising(c, self, EV_CTR_XID, "Xid errors reported",
           "dmesg -T | grep -i xid   # the Xid code's meaning and action: chainprof diagnose on the kernel log");
}

static void r_symbol(rb_ctx *c, const rb_rule *self)
{
    rising(c, self, EV_CTR_SYMBOL_ERROR, "InfiniBand/RoCE symbol errors rising",
           "mlxlink -d <dev> -m -e -c   # eye, BER and cable; reseat or replace the cable or transceiver");
}

static void r_downed(rb_ctx *c, const rb_rule *self)
{
    rising(c, self, EV_CTR_LINK_DOWNED, "InfiniBand/RoCE link went down",
           "ibstat; dmesg -T | grep -i mlx   # a flapping link: check the cable and the switch port's log");
}

static void r_rcv_errors(rb_ctx *c, const rb_rule *self)
{
    rising(c, self, EV_CTR_RCV_ERRORS, "InfiniBand/RoCE receive errors rising",
           "perfquery -x   # with symbol errors: the physical link; alone: malformed packets from the peer");
}

static void r_line_rate(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_COUNTERS, f) {
        const ev_counters *k = f->as.counters;
        for (size_t i = 0; i < k->n_links; i++) {
            const ev_link *l = &k->links[i];
            if (strcmp(l->state, "ACTIVE") != 0 || !isfinite(l->rate_gbit_s))
                continue;
            double expect = c->opts.nic_gbit_s > 0 ? c->opts.nic_gbit_s : 0;
            if (!(expect > 0))
                for (size_t j = 0; j < k->n_links; j++)
                    if (strcmp(k->links[j].state, "ACTIVE") == 0 && strcmp(k->links[j].link_layer, l->link_layer) == 0 &&
                        k->links[j].rate_gbit_s > expect)
                        expect = k->links[j].rate_gbit_s;
            if (!(l->rate_gbit_s < expect))
                continue;
            rb_finding *x = rb_raise(c, self);
            if (!x->title[0])
                rb_title(x, "%s is up at %.0f Gbit/s, below the %.0f Gbit/s %s", l->entity, l->rate_gbit_s, expect,
                         c->opts.nic_gbit_s > 0 ? "line rate given" : "of its peer ports");
            rb_cite_line(x, f, l->line, "%s: %s %s at %.0f Gb/sec", l->entity, l->link_layer, l->state, l->rate_gbit_s);
            rb_field(x, "entity", "%s", l->entity);
            rb_step(x, "ibstat %s   # Rate and Physical state; mlxlink -d <dev> -m shows the cable and the lanes up", l->entity);
        }
    }
}

static const char *const IB_SYSFS = "Linux Documentation/ABI/stable/sysfs-class-infiniband (port counters); IBTA PortCounters";

static const rb_rule k_rules[] = {
    {"GPU_PCIE_REPLAY_RISING", CP_LAYER_INTRA, AN_SEV_MEDIUM, 0.55,
     "the NVML PCIe replay counter of a GPU increased between two samples",
     "NVML nvmlDeviceGetPcieReplayCounter; DCGM DCGM_FI_DEV_PCIE_REPLAY_COUNTER (dcgm-exporter's default counters)",
     "replays are TLPs the link resent after errors: a marginal riser, slot or retimer; each costs PCIe bandwidth and precedes link downgrades",
     r_replay},
    {"GPU_ECC_UNCORRECTED_RISING", CP_LAYER_COMPUTE, AN_SEV_HIGH, 0.6,
     "the volatile uncorrected ECC error count of a GPU increased between two samples",
     "NVML nvmlDeviceGetTotalEccErrors; NVIDIA GPU memory error management (row remapping)",
     "uncorrectable memory errors kill the CUDA contexts that touch them: drain the node, reset the GPU, replace it if remapping fails",
     r_ecc},
    {"GPU_XID_REPORTED", CP_LAYER_COMPUTE, AN_SEV_MEDIUM, 0.45,
     "an NVML Xid critical error event (nvmlEventTypeXidCriticalError) arrived",
     "NVML nvmlDeviceRegisterEvents; NVIDIA Xid errors catalog",
     "the driver reported an Xid: its code (chainprof_gpu_last_xid) says whether it is the application, the driver or the hardware",
     r_xid},
    {"IB_SYMBOL_ERRORS_RISING", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.55,
     "an InfiniBand/RoCE port's symbol_error counter increased between two samples", IB_SYSFS,
     "symbol errors are bit errors on the physical lanes: a dirty or failing cable or transceiver; they turn into retransmissions and downed links",
     r_symbol},
    {"IB_LINK_DOWNED", CP_LAYER_INTER, AN_SEV_HIGH, 0.6,
     "an InfiniBand/RoCE port's link_downed counter increased between two samples", IB_SYSFS,
     "the link failed its error recovery and went down: collectives over it stall or fail; check the cable and the switch port",
     r_downed},
    {"IB_RCV_ERRORS_RISING", CP_LAYER_INTER, AN_SEV_LOW, 0.4,
     "an InfiniBand/RoCE port's port_rcv_errors counter increased between two samples", IB_SYSFS,
     "packets arrive damaged: with symbol errors the physical link, alone a peer or switch sending malformed packets",
     r_rcv_errors},
    {"NIC_BELOW_LINE_RATE", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.5,
     "an ACTIVE InfiniBand/RoCE port's rate below --nic-gbit-s, or below the fastest ACTIVE port of the same link layer",
     "Linux Documentation/ABI/stable/sysfs-class-infiniband (ports/N/rate); ibstat(8)",
     "the port trained below its peers: a cable, transceiver or lane fault halves what collectives over it carry", r_line_rate},
};

const rb_family rb_family_counters = {.name = "counters",
                                      .summary = "hardware counters over a window (chainprof monitor): PCIe replays, ECC, Xid, IB errors, link rates",
                                      .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
