/* an_evidence.c - the evidence files given to analyze: one `evidence[]`
 * entry per file with its detected kind and headline facts, and the rules
 * that turn NCCL logs, nccl-tests, perftest and nvidia-smi topo -m outputs
 * into findings.
 *
 * Design
 * - The readers (src/readers: nccl_log.c, rd_nccltests.c, rd_perftest.c,
 *   rd_topo.c)
 *   have already reduced each file to typed facts with line numbers; this
 *   analyzer only judges them, so every evidence line of a finding cites
 *   FILE:LINE.
 * - An evidence file says what is wrong but not how much of the step it
 *   costs, so these findings carry no gain (null) unless a trace measures
 *   it; failure signatures (the job cannot run) are `critical` and rank
 *   first, the rest rank by severity after the measured findings.
 * - One static rule table per evidence kind (`nccl_rules`, below, and the
 *   table-driven checks of nccl-tests and perftest). Checklist for a rule:
 *   a row or a check here, the code in docs/METRICS.md ("Findings from
 *   evidence files"), and a fixture or real sample in the tests.
 */
#include "an_verdict.h"
#include "../base/util.h"
#include "../plan/catalog.h"
#include "../readers/nccl_log.h"
#include "../readers/rd_nccltests.h"
#include "../readers/rd_perftest.h"
#include "../readers/rd_topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NCCL logs ---- */

typedef struct nccl_rule {
    const char *code;
    an_layer layer;
    an_severity severity;
    void (*eval)(an_evidence_result *out, const struct nccl_rule *self, const char *path, const rd_nccl_facts *f);
} nccl_rule;

static an_finding *add(an_evidence_result *out, const nccl_rule *r, const char *title, const char *rec)
{
    an_finding *x = an_finding_add(out, r->code, r->layer, NAN, title, rec,
                                   "not measurable from the log alone: analyze the traces of the job with it");
    x->severity = r->severity;
    return x;
}

static void cite(an_finding *x, const char *path, const rd_nccl_at *at)
{
    if (at->line > 0)
        an_finding_evidence(x, "%s:%ld: %s", path, at->line, at->text);
}

/* "#@" lines annotate the sample corpus; they quote log lines, so a
 * quoted issue is never the one to cite (or count). */
static bool annotation(const rd_nccl_at *at) { return strncmp(at->text, "#@", 2) == 0; }

/* Issues of one kind whose code/vendor error match (-2 = any). */
static const rd_nccl_issue *first_issue(const rd_nccl_facts *f, int kind, long code, long vendor, int *count)
{
    const rd_nccl_issue *first = NULL;
    *count = 0;
    for (int i = 0; i < f->n_issues; i++) {
        const rd_nccl_issue *is = &f->issues[i];
        if (is->kind != kind || (code != -2 && is->code != code) || (vendor != -2 && is->vendor_err != vendor) ||
            annotation(&is->at))
            continue;
        if (!first)
            first = is;
        (*count)++;
    }
    return first;
}

static void r_ib_err12(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    int n;
    const rd_nccl_issue *is = first_issue(f, RD_NCCL_ISSUE_IB_COMPLETION, 12, -2, &n);
    if (!is)
        return;
    char t[160];
    snprintf(t, sizeof t, "NET/IB completion error 12 (transport retry counter exceeded)%s%ld",
             is->vendor_err >= 0 ? ", vendor err " : "", is->vendor_err >= 0 ? is->vendor_err : 0L);
    if (is->vendor_err < 0)
        t[strlen(t) - 1] = 0;
    an_finding *x = add(out, self, t,
                        "the peer never acknowledged: on RoCE make NCCL_IB_GID_INDEX select the RoCEv2 GID on every "
                        "node (show_gids), check PFC/ECN lossless configuration and the MTU end to end; on IB and "
                        "RoCE check the links (ibstat, ibdiagnet, cable/port flaps) and that no firewall drops the "
                        "QP traffic");
    cite(x, path, &is->at);
    if (n > 1)
        an_finding_evidence(x, "%d such completions in the log", n);
    cite(x, path, &f->gid_at);
    cite(x, path, &f->ib_using_at);
}

static void r_ib_err4_gdr(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    int n;
    const rd_nccl_issue *is = first_issue(f, RD_NCCL_ISSUE_IB_COMPLETION, 4, -2, &n);
    if (!is)
        return;
    bool gdr = f->gdr == RD_NCCL_GDR_ON || f->transports[RD_NCCL_TR_NET_IB_GDR] > 0;
    char t[160];
    snprintf(t, sizeof t, "NET/IB completion error 4 (local protection)%s%s", is->vendor_err == 81 ? ", vendor err 81" : "",
             gdr ? " with GPU Direct RDMA" : "");
    an_finding *x = add(out, self, t,
                        "the NIC cannot write GPU memory: disable ACS on the PCIe switches between GPU and NIC "
                        "(setpci, or the BIOS), check that nvidia-peermem (nv_peer_mem) matches the driver, and "
                        "confirm by running with NCCL_NET_GDR_LEVEL=LOC (GDR off), which should pass");
    cite(x, path, &is->at);
    if (n > 1)
        an_finding_evidence(x, "%d such completions in the log", n);
    cite(x, path, &f->gdr_at);
    cite(x, path, &f->transport_at[RD_NCCL_TR_NET_IB_GDR]);
}

static void r_ib_other(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    for (int i = 0; i < f->n_issues; i++) {
        const rd_nccl_issue *is = &f->issues[i];
        if (is->kind != RD_NCCL_ISSUE_IB_COMPLETION || is->code == 12 || is->code == 4 || annotation(&is->at))
            continue;
        char t[160];
        snprintf(t, sizeof t, "NET/IB completion error %ld, vendor err %ld", is->code, is->vendor_err);
        an_finding *x = add(out, self, t,
                            "look the status up in the verbs documentation (ibv_wc_status) and the vendor "
                            "syndrome in the NIC vendor's notes; check links and GID/MTU configuration");
        cite(x, path, &is->at);
        return; /* one is enough: the first failure is the cause */
    }
}

static void r_ibv_unreachable(an_evidence_result *out, const nccl_rule *self, const char *path,
                              const rd_nccl_facts *f)
{
    for (int i = 0; i < f->n_issues; i++) {
        const rd_nccl_issue *is = &f->issues[i];
        if (is->kind != RD_NCCL_ISSUE_IBV_CALL || !cp_str_icontains(is->at.text, "unreachable") || annotation(&is->at))
            continue;
        char t[160];
        snprintf(t, sizeof t, "verbs call failed: %s", is->detail[0] ? is->detail : "Network is unreachable");
        an_finding *x = add(out, self, t,
                            "the QP's address has no route: on RoCE the GID index selects a GID without a routable "
                            "address (IPv6 link-local or the wrong VLAN); set NCCL_IB_GID_INDEX to the RoCEv2 "
                            "IPv4 GID (show_gids) on every node and check the routes between the NIC subnets");
        cite(x, path, &is->at);
        cite(x, path, &f->gid_at);
        return;
    }
}

static void r_connect(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    int n;
    const rd_nccl_issue *is = first_issue(f, RD_NCCL_ISSUE_CONNECT, -2, -2, &n);
    if (!is)
        return;
    char t[160];
    snprintf(t, sizeof t, "NCCL could not connect to a peer%s%s", is->detail[0] ? ": " : "", is->detail);
    an_finding *x = add(out, self, t,
                        "one node's network is broken or blocked: resolve the peer address (nslookup) to its "
                        "host, test it (ping, the bootstrap port), exclude it from the job (e.g. sbatch "
                        "--exclude) and report it; check NCCL_SOCKET_IFNAME selects the same network on all nodes");
    cite(x, path, &is->at);
    cite(x, path, &f->bootstrap_at);
}

static void r_socket(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    bool socket = f->net == RD_NCCL_NET_SOCKET || f->transports[RD_NCCL_TR_NET_SOCKET] > 0;
    if (!socket)
        return;
    an_finding *x = add(out, self, "NCCL fell back to TCP sockets for inter-node traffic",
                        "make NCCL use RDMA: install/enable the NIC's verbs stack (rdma-core, the IB/RoCE device "
                        "visible in the container) or the cloud plugin (aws-ofi-nccl with EFA), check "
                        "NCCL_IB_DISABLE is unset and NCCL_NET_PLUGIN/NCCL_IB_HCA name existing devices; sockets "
                        "reach a fraction of the link");
    cite(x, path, &f->plugin_fail_at);
    cite(x, path, &f->ib_none_at);
    cite(x, path, &f->socket_using_at);
    cite(x, path, &f->transport_at[RD_NCCL_TR_NET_SOCKET]);
    cite(x, path, &f->network_at);
}

static void r_gdr_off(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    bool ib = f->net == RD_NCCL_NET_IB || f->ib_using_at.line > 0;
    bool failed = false; /* a failure signature says more than an absence */
    for (int i = 0; i < f->n_issues; i++)
        failed |= f->issues[i].kind == RD_NCCL_ISSUE_IB_COMPLETION || f->issues[i].kind == RD_NCCL_ISSUE_IBV_CALL;
    if (f->gdr != RD_NCCL_GDR_OFF && ib && !failed && f->gdr != RD_NCCL_GDR_ON &&
        f->transports[RD_NCCL_TR_NET_IB_GDR] == 0) {
        /* IB in use, and neither "GPU Direct RDMA Enabled" nor a
         * NET/IB/GDRDMA channel anywhere in the log: an absence, so low
         * (excerpts of logs often lack the lines that would show GDR) */
        an_finding *x = add(out, self, "GPU Direct RDMA is not seen in use on the IB transport",
                            "load nvidia-peermem (nv_peer_mem on old drivers) and keep GPU and NIC close on PCIe "
                            "(NCCL_NET_GDR_LEVEL); NCCL_DEBUG=INFO then shows NET/IB/<dev>/GDRDMA channels");
        x->severity = AN_SEV_LOW;
        cite(x, path, &f->ib_using_at);
        an_finding_evidence(x, "%s: no \"GPU Direct RDMA Enabled\" line and no NET/IB/GDRDMA channel in %ld lines", path,
                            f->lines);
        return;
    }
    if (f->gdr != RD_NCCL_GDR_OFF)
        return;
    char t[160];
    snprintf(t, sizeof t, "GPU Direct RDMA is disabled%s%s", f->gdr_reason[0] ? ": " : "", f->gdr_reason);
    an_finding *x = add(out, self, t,
                        "load nvidia-peermem (or nv_peer_mem on old drivers), keep GPU and NIC under one PCIe "
                        "switch (NCCL_NET_GDR_LEVEL), and check the log shows NET/IB/GDRDMA channels; without GDR "
                        "every transfer is staged through host memory");
    cite(x, path, &f->gdr_at);
}

static void r_p2p(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    long p2p = f->transports[RD_NCCL_TR_P2P_IPC] + f->transports[RD_NCCL_TR_P2P_CUMEM] +
               f->transports[RD_NCCL_TR_P2P_DIRECT];
    if (f->transports[RD_NCCL_TR_SHM] == 0 || p2p > 0)
        return;
    an_finding *x = add(out, self, "GPUs inside a node talk through shared host memory, not P2P/NVLink",
                        "allow peer access: unset NCCL_P2P_DISABLE, give the container IPC (--ipc=host) and all "
                        "GPUs of the node, check nvidia-smi topo -m for NV# or PIX paths and that ACS/IOMMU do not "
                        "block P2P");
    cite(x, path, &f->transport_at[RD_NCCL_TR_SHM]);
}

static void r_nvls(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    if (f->nvls_available != 0 && !(f->nvls_channels == 0 && f->coll_channels > 0 && f->nvls_available != 1))
        return;
    an_finding *x = add(out, self, "NVLink SHARP (NVLS) is not available",
                        "NVLS needs Hopper or newer with NVSwitch gen3, CUDA >= 12.1 multicast and a driver / "
                        "fabric manager that exposes multicast (nvidia-smi -q | grep -i multicast); inside "
                        "containers the IMEX/fabric channels must be visible");
    cite(x, path, &f->nvls_at);
    cite(x, path, &f->channels_at);
}

static void r_single_nic(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    if (f->n_devs != 1 || f->net != RD_NCCL_NET_IB)
        return;
    int most = 0;
    for (int h = 0; h < f->n_hosts; h++)
        most = CP_MAX(most, f->host_ranks[h]);
    if (most < 4)
        return;
    char t[160];
    snprintf(t, sizeof t, "one NIC (%s) serves %d GPUs of a node", f->devs[0].name, most);
    an_finding *x = add(out, self, t,
                        "give each GPU (or pair) its own NIC: list all HCAs in NCCL_IB_HCA, check that the other "
                        "NICs are up and visible in the container; one NIC caps every GPU at its share of one link");
    cite(x, path, &f->ib_using_at);
}

static const nccl_rule nccl_rules[] = {
    { "NCCL_IB_ERR12_RETRY", AN_L_INTER, AN_SEV_CRITICAL, r_ib_err12 },
    { "NCCL_IB_ERR4_GDR", AN_L_INTER, AN_SEV_CRITICAL, r_ib_err4_gdr },
    { "NCCL_IB_ERROR", AN_L_INTER, AN_SEV_CRITICAL, r_ib_other },
    { "NCCL_IBV_UNREACHABLE", AN_L_INTER, AN_SEV_CRITICAL, r_ibv_unreachable },
    { "NCCL_CONNECT_FAILED", AN_L_INTER, AN_SEV_CRITICAL, r_connect },
    { "NCCL_SOCKET_FALLBACK", AN_L_INTER, AN_SEV_HIGH, r_socket },
    { "NCCL_GDR_DISABLED", AN_L_INTER, AN_SEV_MEDIUM, r_gdr_off },
    { "NCCL_SINGLE_NIC", AN_L_INTER, AN_SEV_MEDIUM, r_single_nic },
    { "NCCL_P2P_NOT_USED", AN_L_INTRA, AN_SEV_MEDIUM, r_p2p },
    { "NCCL_NVLS_UNAVAILABLE", AN_L_INTRA, AN_SEV_LOW, r_nvls },
};

/* ---- nccl-tests ---- */

/* Expected busbw for a GPU name and scope, with where it came from. */
static double expected_busbw(const an_ctx *ctx, const char *gpu, bool inter, const char **source)
{
    const an_opts *o = ctx->opts;
    const plan_gpu *g = gpu && gpu[0] ? plan_gpu_find(gpu) : NULL;
    if (inter) {
        if (o && o->nic_gbps > 0) {
            *source = "--nic-gbps";
            return o->nic_gbps / 8;
        }
        if (g && plan_gpu_nic_gbytes_per_gpu(g) > 0) {
            *source = "catalog";
            return plan_gpu_nic_gbytes_per_gpu(g);
        }
        *source = NULL;
        return NAN;
    }
    if (o && o->nvlink_gbps > 0) {
        *source = "--nvlink-gbps";
        return o->nvlink_gbps;
    }
    if (g && (g->scaleup_gbytes_per_s > 0 || g->pcie_gbytes_per_s > 0)) {
        *source = "catalog";
        return g->scaleup_gbytes_per_s > 0 ? g->scaleup_gbytes_per_s : g->pcie_gbytes_per_s;
    }
    /* an unknown GPU inside one node: judge it against the slowest host link
     * a training GPU has today, PCIe 3.0 x16 */
    *source = "PCIe 3.0 x16 (GPU not in the catalog)";
    return 15.75;
}

#define NT_LOW_FRAC 0.5

static void nccl_tests(an_ctx *ctx, an_evidence_result *out, const char *path, const rd_nccltests *t, rep_node *e)
{
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
        char title[160], a[200];
        snprintf(title, sizeof title, "nccl-tests %s busbw %.2f GB/s is %.0f %% of the expected %.1f GB/s",
                 run->op[0] ? run->op : "collective", bw, 100 * bw / exp, exp);
        snprintf(a, sizeof a, "expected %s busbw from %s", inter ? "inter-node" : "intra-node", src);
        an_finding *x = an_finding_add(out, "NCCLTESTS_BELOW_EXPECTED", inter ? AN_L_INTER : AN_L_INTRA, NAN, title,
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
        an_finding *x = an_finding_add(out, "NCCLTESTS_FAILED", AN_L_INTER, NAN, "nccl-tests reported a failure",
                                       "the test did not complete: read the failure line and the NCCL_DEBUG=INFO "
                                       "log of the same run",
                                       "");
        x->severity = AN_SEV_CRITICAL;
        an_finding_evidence(x, "%s:%u: %s", path, t->failure_line, t->failure);
    }
}

/* ---- perftest ---- */

#define PT_LOW_FRAC 0.75

/* The link rate a bandwidth test ran on: --nic-gbps, else the smallest
 * standard Ethernet/IB rate at or above the measured peak. */
static double line_rate(const an_ctx *ctx, double peak_gbit, const char **source)
{
    static const double rates[] = { 10, 25, 40, 50, 100, 200, 400, 800, 1600 };
    if (ctx->opts && ctx->opts->nic_gbps > 0) {
        *source = "--nic-gbps";
        return ctx->opts->nic_gbps;
    }
    *source = "the smallest standard rate at or above the peak";
    for (size_t i = 0; i < CP_ARRAY_LEN(rates); i++)
        if (rates[i] >= peak_gbit)
            return rates[i];
    return NAN;
}

static void perftest(an_ctx *ctx, an_evidence_result *out, const char *path, const rd_perftest *p, rep_node *e)
{
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
        char title[160], a[200];
        snprintf(title, sizeof title, "%s reaches %.1f Gb/s, %.0f %% of a %.0f Gb/s link",
                 run->tool[0] ? run->tool : "perftest", best->bw_avg_gbit_s, 100 * best->bw_avg_gbit_s / rate, rate);
        snprintf(a, sizeof a, "line rate from %s", src);
        an_finding *x = an_finding_add(out, "PERFTEST_BELOW_LINE_RATE", AN_L_INTER, NAN, title,
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

static void topo_rules(an_evidence_result *out, const char *path, const rd_topo *m, rep_node *e, rep_report *rp)
{
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
        an_finding *x = an_finding_add(out, "TOPO_GPU_PAIRS_SYS", AN_L_INTRA, NAN, t,
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
        an_finding *x = an_finding_add(out, "TOPO_FEW_NICS", AN_L_INTER, NAN, t,
                                       "inter-node collectives get at most the NICs' share per GPU: add NICs (one per "
                                       "GPU or pair on training nodes) or expect busbw <= NIC rate x NICs / GPUs",
                                       "not measurable from the matrix alone");
        x->severity = AN_SEV_MEDIUM;
        an_finding_evidence(x, "%s:%u: %d GPU and %d NIC rows", path, m->header_line, m->n_gpus, m->n_nics);
    }
}

static void free_result(void *self)
{
    an_evidence_result *o = self;
    free(o->v);
    free(o);
}

int an_evidence_run(an_ctx *ctx)
{
    rep_report *rp = ctx->rep;
    an_evidence_result *out = cp_xcalloc(1, sizeof *out);
    out->free = free_result;
    ctx->results[AN_evidence] = out;
    rep_node *arr = rep_arr(rp, rp->root, "evidence", "evidence files");
    size_t n = ctx->opts ? ctx->opts->n_evidence : 0;
    for (size_t i = 0; i < n; i++) {
        const an_evidence_file *ev = &ctx->opts->evidence[i];
        rep_node *e = rep_obj(rp, arr, NULL, NULL);
        rep_str(rp, e, "path", "file", ev->path);
        rep_str(rp, e, "kind", "kind", ev->kind);
        size_t before = out->n;
        if (!strcmp(ev->kind, "nccl_log")) {
            const rd_nccl_facts *f = ev->facts;
            rep_str(rp, e, "nccl_version", "NCCL version", f->version[0] ? f->version : NULL);
            rep_str(rp, e, "network", "network", f->network[0] ? f->network : NULL);
            rep_str(rp, e, "gdr", "GPU Direct RDMA",
                    f->gdr == RD_NCCL_GDR_ON ? "on" : f->gdr == RD_NCCL_GDR_OFF ? "off" : NULL);
            rep_int(rp, e, "issues", "NCCL issues", f->n_issues, NULL);
            for (size_t k = 0; k < CP_ARRAY_LEN(nccl_rules); k++)
                nccl_rules[k].eval(out, &nccl_rules[k], ev->path, f);
        } else if (!strcmp(ev->kind, "nccl_tests")) {
            nccl_tests(ctx, out, ev->path, ev->facts, e);
        } else if (!strcmp(ev->kind, "perftest")) {
            perftest(ctx, out, ev->path, ev->facts, e);
        } else if (!strcmp(ev->kind, "nvidia_smi_topo")) {
            topo_rules(out, ev->path, ev->facts, e, rp);
        }
        rep_int(rp, e, "findings", "findings", (int64_t)(out->n - before), NULL);
    }
    return 0;
}
