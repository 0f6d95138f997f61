/* an_evidence_tables.c - the evidence rules over table-shaped outputs:
 * nccl-tests (busbw against the expected busbw), perftest (bandwidth
 * against the line rate) and nvidia-smi topo -m (GPU pairs across sockets,
 * GPUs per NIC). Part of the evidence analyzer (an_evidence.c), which calls
 * these per file; see its header for the design and METRICS.md for the
 * codes.
 */
#include "an_verdict.h"
#include "../base/util.h"
#include "../model/catalog.h"
#include "../readers/rd_nccltests.h"
#include "../readers/rd_perftest.h"
#include "../readers/rd_topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- nccl-tests ---- */

/* Expected busbw for a GPU name and scope, with where it came from. */
static double expected_busbw(const an_ctx *ctx, const char *gpu, bool inter, const char **source)
{
    const hw_gpu *g = gpu && gpu[0] ? hw_gpu_find(gpu) : NULL;
    double v = an_expected_busbw_gbps(ctx, g, inter, source);
    if (!isnan(v) || inter)
        return v;
    /* an unknown GPU inside one node: judge it against the slowest host link
     * a training GPU has today, PCIe 3.0 x16 */
    *source = "PCIe 3.0 x16 (GPU not in the catalog)";
    return 15.75;
}

#define NT_LOW_FRAC 0.5

void an_ev_nccl_tests(an_ctx *ctx, an_evidence_result *out, const char *path, const void *facts, rep_node *e)
{
    const rd_nccltests *t = facts;
    rep_report *rp = ctx->rep;
    rep_node *runs = rep_arr(rp, e, "runs", "runs");
    for (size_t i = 0; i < t->n_runs; i++) {
        const rd_nt_run *run = &t->runs[i];
        double bw;
        const rd_nt_row *row = rd_nt_max_busbw(run, &bw);
        bool inter = run->n_hosts > 1;
        const char *gpu = run->n_devices ? run->devices[0].name : NULL, *src = NULL;
        double exp = expected_busbw(ctx, gpu, inter, &src);
        rep_node *ro = rep_obj(rp, runs, NULL, NULL);
        rep_str(rp, ro, "op", "op", run->op[0] ? run->op : NULL);
        rep_str(rp, ro, "scope", "scope", inter ? "inter" : "intra");
        rep_int(rp, ro, "ranks", "ranks", (int64_t)run->n_devices, NULL);
        rep_num(rp, ro, "max_busbw_gbps", "best busbw", row ? bw : NAN, "GB/s");
        rep_num(rp, ro, "avg_busbw_gbps", "average busbw", run->avg_busbw_gbps, "GB/s");
        rep_num(rp, ro, "expected_busbw_gbps", "expected", exp, "GB/s");
        if (!row || !isfinite(exp) || bw >= NT_LOW_FRAC * exp)
            continue;
        char title[160], a[320];
        snprintf(title, sizeof title, "nccl-tests %s busbw %.2f GB/s is %.0f %% of the expected %.1f GB/s",
                 run->op[0] ? run->op : "collective", bw, 100 * bw / exp, exp);
        /* the benchmark's collective time at its best row scales as
         * 1/busbw: at the healthy target it would take bw/target of it */
        double target = (inter ? AN_NET_TARGET_FRAC : AN_INTRA_TARGET_FRAC) * exp;
        double gain = 100 * (1 - bw / target);
        snprintf(a, sizeof a,
                 "share of this benchmark's collective time (best row, no training step measured) saved at %.0f %% of "
                 "the expected %s busbw %.1f GB/s (from %s), time scaling as 1/busbw",
                 100 * target / exp, inter ? "inter-node" : "intra-node", exp, src);
        an_finding *x = an_finding_add(out, "NCCLTESTS_BELOW_EXPECTED", inter ? CP_LAYER_INTER : CP_LAYER_INTRA, gain, title,
                                       inter ? "compare with ib_write_bw between the same nodes: if perftest is fine, "
                                               "suspect NCCL's transport (socket fallback, GDR off, too few "
                                               "channels/QPs); if not, the fabric (ECMP, adaptive routing, links)"
                                             : "check that the GPUs use P2P/NVLink (nvidia-smi topo -m; NCCL_DEBUG=INFO "
                                               "shows P2P/IPC, not SHM) and that nothing (ACS, IOMMU, containers "
                                               "without --ipc=host) forces copies through host memory",
                                       a);
        x->severity = bw < 0.25 * exp ? AN_SEV_HIGH : AN_SEV_MEDIUM;
        an_finding_evidence(x, "%s:%u: %s of %lld bytes: busbw %.2f GB/s (best row)", path, row->line,
                            run->op[0] ? run->op : "collective", (long long)row->size_bytes, bw);
        if (isfinite(run->avg_busbw_gbps))
            an_finding_evidence(x, "%s:%u: Avg bus bandwidth %.3f GB/s", path, run->avg_line, run->avg_busbw_gbps);
        if (run->n_devices)
            an_finding_evidence(x, "%s:%u: %zu ranks on %d host%s, %s", path, run->devices[0].line, run->n_devices,
                                run->n_hosts, run->n_hosts == 1 ? "" : "s", gpu && gpu[0] ? gpu : "GPU unnamed");
    }
    if (t->n_failures) {
        an_finding *x = an_finding_add(out, "NCCLTESTS_FAILED", CP_LAYER_INTER, NAN, "nccl-tests reported a failure",
                                       "the test did not complete: read the failure line and the NCCL_DEBUG=INFO "
                                       "log of the same run",
                                       "none: the test failed, there is no bandwidth to scale");
        x->severity = AN_SEV_CRITICAL;
        an_finding_evidence(x, "%s:%u: %s", path, t->failure_line, t->failure);
    }
}

/* ---- perftest ---- */

#define PT_LOW_FRAC 0.75
#define PT_TARGET_FRAC 0.9 /* what a healthy RDMA link carries in ib_*_bw */

/* The link rate a bandwidth test ran on: --nic-gbps, else the smallest
 * standard Ethernet/IB rate at or above the measured peak. */
static double line_rate(const an_ctx *ctx, double peak_gbit, const char **source)
{
    static const double rates[] = { 10, 25, 40, 50, 100, 200, 400, 800, 1600 };
    if (ctx->opts && ctx->opts->nic_gbit_s > 0) {
        *source = "--nic-gbps";
        return ctx->opts->nic_gbit_s;
    }
    *source = "the smallest standard rate at or above the peak";
    for (size_t i = 0; i < CP_ARRAY_LEN(rates); i++)
        if (rates[i] >= peak_gbit)
            return rates[i];
    return NAN;
}

void an_ev_perftest(an_ctx *ctx, an_evidence_result *out, const char *path, const void *facts, rep_node *e)
{
    const rd_perftest *p = facts;
    rep_report *rp = ctx->rep;
    rep_node *runs = rep_arr(rp, e, "runs", "runs");
    for (size_t i = 0; i < p->n_runs; i++) {
        const rd_pt_run *run = &p->runs[i];
        rep_node *ro = rep_obj(rp, runs, NULL, NULL);
        rep_str(rp, ro, "tool", "tool", run->tool[0] ? run->tool : NULL);
        rep_str(rp, ro, "device", "device", run->device[0] ? run->device : NULL);
        if (run->is_latency) {
            const rd_pt_row *r0 = run->n_rows ? &run->rows[0] : NULL;
            rep_num(rp, ro, "lat_typical_us", "typical latency", r0 ? r0->t_typical_us : NAN, "us");
            continue;
        }
        const rd_pt_row *best = rd_pt_best_bw(run);
        if (!best)
            continue;
        const char *src;
        double rate = line_rate(ctx, best->bw_peak_gbit_s, &src);
        rep_num(rp, ro, "bw_avg_gbit_s", "average bandwidth", best->bw_avg_gbit_s, "Gb/s");
        rep_num(rp, ro, "line_rate_gbit_s", "line rate", rate, "Gb/s");
        if (!isfinite(rate) || best->bw_avg_gbit_s >= PT_LOW_FRAC * rate)
            continue;
        char title[160], a[320];
        snprintf(title, sizeof title, "%s reaches %.1f Gb/s, %.0f %% of a %.0f Gb/s link",
                 run->tool[0] ? run->tool : "perftest", best->bw_avg_gbit_s, 100 * best->bw_avg_gbit_s / rate, rate);
        double gain = 100 * (1 - best->bw_avg_gbit_s / (PT_TARGET_FRAC * rate));
        snprintf(a, sizeof a,
                 "share of this benchmark's transfer time (best message size) saved at %.0f %% of the line rate "
                 "(from %s), time scaling as 1/bandwidth",
                 100 * PT_TARGET_FRAC, src);
        an_finding *x = an_finding_add(out, "PERFTEST_BELOW_LINE_RATE", CP_LAYER_INTER, gain, title,
                                       "check the port speed and width (ibstat / ethtool: a split or degraded port "
                                       "shows half the rate), the MTU (4096 for RoCE/IB), the number of QPs (-q), "
                                       "the NIC's PCIe link (lspci -vv LnkSta) and NUMA placement (run on the NIC's "
                                       "socket)",
                                       a);
        x->severity = best->bw_avg_gbit_s < 0.5 * rate ? AN_SEV_HIGH : AN_SEV_MEDIUM;
        an_finding_evidence(x, "%s:%u: %lld-byte messages: average %.2f Gb/s, peak %.2f Gb/s", path, best->line,
                            (long long)best->bytes, best->bw_avg_gbit_s, best->bw_peak_gbit_s);
        if (run->device[0])
            an_finding_evidence(x, "%s:%u: device %s, %d QP%s, MTU %d", path, run->device_line, run->device,
                                run->qps, run->qps == 1 ? "" : "s", run->mtu_bytes);
    }
}

/* ---- nvidia-smi topo -m ---- */

void an_ev_topo(an_evidence_result *out, const char *path, const void *facts, rep_node *e, rep_report *rp)
{
    const rd_topo *m = facts;
    int nv = 0, sys = 0, gi = -1, gj = -1;
    for (size_t i = 0; i < m->n_devs; i++)
        for (size_t j = i + 1; j < m->n_devs; j++) {
            if (!m->devs[i].is_gpu || !m->devs[j].is_gpu)
                continue;
            const rd_topo_cell *c = rd_topo_cell_at(m, i, j);
            nv += c && c->kind == TOPO_LINK_NVLINK;
            if (c && c->kind == TOPO_LINK_SYS) {
                if (!sys++) {
                    gi = (int)i;
                    gj = (int)j;
                }
            }
        }
    rep_int(rp, e, "gpus", "GPUs", m->n_gpus, NULL);
    rep_int(rp, e, "nics", "NICs", m->n_nics, NULL);
    rep_int(rp, e, "nvlink_pairs", "GPU pairs over NVLink", nv, NULL);
    rep_int(rp, e, "sys_pairs", "GPU pairs across sockets (SYS)", sys, NULL);
    if (m->n_gpus >= 2 && nv == 0 && sys > 0) {
        char t[160];
        snprintf(t, sizeof t, "no NVLink: %d GPU pair%s talk across CPU sockets (SYS)", sys, sys == 1 ? "" : "s");
        an_finding *x = an_finding_add(out, "TOPO_GPU_PAIRS_SYS", CP_LAYER_INTRA, NAN, t,
                                       "place the ranks of one tensor/pipeline group on GPUs behind one PCIe switch "
                                       "(PIX) or one socket (CUDA_VISIBLE_DEVICES), keep P2P enabled and ACS off; "
                                       "cross-socket P2P is slow or unsupported and NCCL falls back to host memory",
                                       "not measurable from the matrix alone");
        x->severity = AN_SEV_MEDIUM;
        an_finding_evidence(x, "%s:%u: %s to %s is SYS (PCIe + the inter-socket link)", path, m->devs[gi].line,
                            m->devs[gi].label, m->devs[gj].label);
        an_finding_evidence(x, "%s: %d GPUs, no NV# cell in the matrix", path, m->n_gpus);
    }
    if (m->n_nics > 0 && m->n_gpus >= 4 * m->n_nics) {
        char t[160];
        snprintf(t, sizeof t, "%d GPUs share %d NIC%s", m->n_gpus, m->n_nics, m->n_nics == 1 ? "" : "s");
        an_finding *x = an_finding_add(out, "TOPO_FEW_NICS", CP_LAYER_INTER, NAN, t,
                                       "inter-node collectives get at most the NICs' share per GPU: add NICs (one per "
                                       "GPU or pair on training nodes) or expect busbw <= NIC rate x NICs / GPUs",
                                       "not measurable from the matrix alone");
        x->severity = AN_SEV_MEDIUM;
        an_finding_evidence(x, "%s:%u: %d GPU and %d NIC rows", path, m->header_line, m->n_gpus, m->n_nics);
    }
}

