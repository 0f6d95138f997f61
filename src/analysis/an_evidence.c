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
 * - An evidence file says what is wrong but mostly not how much of the step
 *   it costs: a benchmark (nccl-tests, perftest) below its expected rate
 *   carries a gain as a share of its own time, every other finding a null
 *   gain with gain_assumption saying why; failure signatures (the job
 *   cannot run) are `critical` and rank first, the rest rank by severity
 *   after the findings with a gain.
 * - One static rule table per evidence kind (`nccl_rules`, below; the
 *   checks of nccl-tests, perftest and topology outputs are in
 *   an_evidence_tables.c, apart because their reader headers and the NCCL
 *   log reader's must not meet in one translation unit; dmon samples in
 *   an_evidence_dmon.c). Checklist for a rule:
 *   a row or a check here, the code in docs/METRICS.md ("Findings from
 *   evidence files"), and a fixture or real sample in the tests.
 */
#include "an_verdict.h"
#include "../base/util.h"
#include "../readers/nccl_log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NCCL logs ---- */

typedef struct nccl_rule {
    const char *code;
    cp_layer layer;
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

/* GPU Direct RDMA, by the strength of what the log shows:
 *   - "GPU Direct RDMA Disabled" (NCCL says so, with its reason): medium;
 *   - NET/IB channel lines and not one of them NET/IB/<dev>/GDRDMA: the
 *     connections were made without GDR, seen line by line: medium;
 *   - IB in use and neither a GDR line nor any channel line: an absence
 *     (an excerpt of the init often ends before the connection lines that
 *     would show GDR): low.
 * Not raised when the log holds an IB failure: the failure says more. */
static void r_gdr_off(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    bool ib = f->net == RD_NCCL_NET_IB || f->ib_using_at.line > 0 || f->transports[RD_NCCL_TR_NET_IB] > 0;
    bool failed = false; /* a failure signature says more than an absence */
    for (int i = 0; i < f->n_issues; i++)
        failed |= f->issues[i].kind == RD_NCCL_ISSUE_IB_COMPLETION || f->issues[i].kind == RD_NCCL_ISSUE_IBV_CALL;
    const char *rec = "load nvidia-peermem (or nv_peer_mem on old drivers), keep GPU and NIC under one PCIe "
                      "switch (NCCL_NET_GDR_LEVEL), and check the log shows NET/IB/<dev>/GDRDMA channels; without "
                      "GDR every inter-node transfer is staged through host memory";
    if (f->gdr == RD_NCCL_GDR_OFF) {
        char t[160];
        snprintf(t, sizeof t, "GPU Direct RDMA is disabled%s%s", f->gdr_reason[0] ? ": " : "", f->gdr_reason);
        an_finding *x = add(out, self, t, rec);
        cite(x, path, &f->gdr_at);
        return;
    }
    if (!ib || failed || f->gdr == RD_NCCL_GDR_ON || f->transports[RD_NCCL_TR_NET_IB_GDR] > 0)
        return;
    if (f->transports[RD_NCCL_TR_NET_IB] > 0) {
        char t[160];
        snprintf(t, sizeof t, "GPU Direct RDMA is not used: %ld NET/IB channel%s, none via GDRDMA",
                 f->transports[RD_NCCL_TR_NET_IB], f->transports[RD_NCCL_TR_NET_IB] == 1 ? "" : "s");
        an_finding *x = add(out, self, t, rec);
        cite(x, path, &f->transport_at[RD_NCCL_TR_NET_IB]);
        cite(x, path, &f->ib_using_at);
        return;
    }
    an_finding *x = add(out, self, "GPU Direct RDMA is not seen in use on the IB transport", rec);
    x->severity = AN_SEV_LOW;
    cite(x, path, &f->ib_using_at);
    an_finding_evidence(x, "%s: no \"GPU Direct RDMA Enabled\" line and no NET/IB/GDRDMA channel in %ld lines", path,
                        f->lines);
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

/* One IB device for >= 4 GPUs of a host. The log lists the NICs NCCL
 * uses, not the NICs the node has: when NCCL_IB_HCA narrowed the list it is
 * a configuration choice (medium, the rule's severity); otherwise it is the
 * node's capacity as NCCL sees it, which the log cannot tell from a
 * container or driver hiding NICs, so low (nvidia-smi topo -m decides:
 * TOPO_FEW_NICS). */
static void r_single_nic(an_evidence_result *out, const nccl_rule *self, const char *path, const rd_nccl_facts *f)
{
    if (f->n_devs != 1 || f->net != RD_NCCL_NET_IB)
        return;
    int most = 0;
    for (int h = 0; h < f->n_hosts; h++)
        most = CP_MAX(most, f->host_ranks[h]);
    if (most < 4)
        return;
    const char *hca = rd_nccl_env(f, "NCCL_IB_HCA");
    char t[160];
    snprintf(t, sizeof t, "one NIC (%s) serves %d GPUs of a node%s", f->devs[0].name, most,
             hca ? " (NCCL_IB_HCA selects it)" : "");
    an_finding *x = add(out, self, t,
                        "give each GPU (or pair) its own NIC: list all HCAs in NCCL_IB_HCA, check that the other "
                        "NICs are up and visible in the container (nvidia-smi topo -m lists the node's NICs); one "
                        "NIC caps every GPU at its share of one link");
    cite(x, path, &f->ib_using_at);
    if (hca) {
        for (int i = 0; i < f->n_env; i++)
            if (!strcmp(f->env[i].name, "NCCL_IB_HCA") && f->env[i].line > 0)
                an_finding_evidence(x, "%s:%ld: NCCL_IB_HCA set by environment to %s", path, f->env[i].line,
                                    f->env[i].value);
    } else {
        x->severity = AN_SEV_LOW;
        an_finding_evidence(x, "%s: the NICs NCCL uses, not necessarily all the node has (no NCCL_IB_HCA line)", path);
    }
}

/* Rows run in this order, and among findings of one severity without a gain
 * the merged list keeps it (docs/METRICS.md): failure signatures, then the
 * transport NCCL chose (sockets, GDR: configuration a user can change),
 * then capacity (one NIC), then the intra-node path. */
static const nccl_rule nccl_rules[] = {
    { "NCCL_IB_ERR12_RETRY", CP_LAYER_INTER, AN_SEV_CRITICAL, r_ib_err12 },
    { "NCCL_IB_ERR4_GDR", CP_LAYER_INTER, AN_SEV_CRITICAL, r_ib_err4_gdr },
    { "NCCL_IB_ERROR", CP_LAYER_INTER, AN_SEV_CRITICAL, r_ib_other },
    { "NCCL_IBV_UNREACHABLE", CP_LAYER_INTER, AN_SEV_CRITICAL, r_ibv_unreachable },
    { "NCCL_CONNECT_FAILED", CP_LAYER_INTER, AN_SEV_CRITICAL, r_connect },
    { "NCCL_SOCKET_FALLBACK", CP_LAYER_INTER, AN_SEV_HIGH, r_socket },
    { "NCCL_GDR_DISABLED", CP_LAYER_INTER, AN_SEV_MEDIUM, r_gdr_off },
    { "NCCL_SINGLE_NIC", CP_LAYER_INTER, AN_SEV_MEDIUM, r_single_nic },
    { "NCCL_P2P_NOT_USED", CP_LAYER_INTRA, AN_SEV_MEDIUM, r_p2p },
    { "NCCL_NVLS_UNAVAILABLE", CP_LAYER_INTRA, AN_SEV_LOW, r_nvls },
};

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
            an_ev_nccl_tests(ctx, out, ev->path, ev->facts, e);
        } else if (!strcmp(ev->kind, "perftest")) {
            an_ev_perftest(ctx, out, ev->path, ev->facts, e);
        } else if (!strcmp(ev->kind, "nvidia_smi_topo")) {
            an_ev_topo(out, ev->path, ev->facts, e, rp);
        } else if (!strcmp(ev->kind, "dmon")) {
            an_ev_dmon(ctx, out, ev->path, ev->facts, e);
        }
        rep_int(rp, e, "findings", "findings", (int64_t)(out->n - before), NULL);
    }
    return 0;
}
