/* an_rules_bench.c - rule family "bench": benchmark outputs that measure a
 * path (nccl-tests / rccl-tests, perftest; facts in ev_nccltests.h,
 * ev_perftest.h). Unlike a log, a benchmark below its expected rate carries
 * a gain: the share of its own time saved at a healthy rate (time scaling
 * as 1/bandwidth), with the assumption stated. Invalid runs (wrong data,
 * independent processes instead of one job) are said first and suppress the
 * bandwidth judgement of the same file: their numbers do not measure the
 * path.
 */
#include "rulebook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/util.h"
#include "../model/catalog.h"

/* ---- nccl-tests: validity ---- */

static void r_failed(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_TESTS, f) {
        const ev_nccltests *t = f->as.nccltests;
        if (!t->n_failures)
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "%s reported a failure: %s", t->rccl ? "rccl-tests" : "nccl-tests", t->failure);
        rb_cite_line(x, f, t->failure_line, "%s", t->failure);
        rb_step(x, "the failure line names the failing call; the NCCL_DEBUG=INFO WARN line just before it names the cause");
    }
}

static void r_wrong(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_TESTS, f) {
        const ev_nccltests *t = f->as.nccltests;
        for (size_t i = 0; i < t->n_runs; i++) {
            const ev_nt_run *run = &t->runs[i];
            bool oob = run->oob_ok == 0 || run->oob_values > 0;
            if (!run->wrong_rows && !oob)
                continue;
            rb_finding *x = rb_raise(c, self);
            rb_title(x, "%s %s returned wrong data: %lld row%s with wrong elements%s%lld%s - a collective that corrupts data (a forced protocol, a faulty GPU/NIC or link)",
                     t->rccl ? "rccl-tests" : "nccl-tests", run->op[0] ? run->op : "collective", (long long)run->wrong_rows,
                     run->wrong_rows == 1 ? "" : "s", oob ? ", out of bounds values " : "", oob ? (long long)run->oob_values : 0LL,
                     oob ? (run->oob_ok == 0 ? " FAILED" : "") : "");
            if (run->wrong_line)
                rb_cite_line(x, f, run->wrong_line, "first row with wrong elements");
            if (run->oob_line)
                rb_cite_line(x, f, run->oob_line, "Out of bounds values : %lld %s", (long long)run->oob_values,
                             run->oob_ok == 0 ? "FAILED" : "OK");
            rb_step(x, "unset NCCL_PROTO / NCCL_ALGO overrides (a forced LL128 can corrupt data where NCCL would not enable it)");
            rb_step(x, "rerun on subsets of GPUs/nodes to isolate the rank; dmesg -T | grep -i -e xid -e aer on each node");
            rb_step(x, "upgrade NCCL; report with NCCL_DEBUG=INFO if it persists");
        }
    }
}

/* The same output holds the sweeps of several independent processes: sizes
 * restart inside one run, one "Avg bus bandwidth" per process, or the NCCL
 * lines show the same rank of an equal-sized communicator on two hosts. */
static bool independent(const rb_ctx *c, const ev_file *f, const ev_file **nf)
{
    const ev_nccltests *t = f->as.nccltests;
    *nf = NULL;
    for (size_t i = 0; i < c->set->n_files; i++) {
        const ev_file *g = &c->set->files[i];
        if (g->kind == EV_NCCL_LOG && g->input == f->input && g->as.nccl->independent_comms)
            *nf = g;
    }
    int restarts = 0, avgs = 0;
    for (size_t i = 0; i < t->n_runs; i++) {
        restarts += t->runs[i].size_restarts;
        avgs += t->runs[i].avg_lines > 1;
    }
    return *nf || (restarts && avgs);
}

static void r_no_mpi(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_TESTS, f) {
        const ev_nccltests *t = f->as.nccltests;
        const ev_file *nf;
        if (!independent(c, f, &nf))
            continue;
        rb_finding *x = rb_raise(c, self);
        int ranks = nf ? nf->as.nccl->nranks : 0;
        rb_title(x, "%s ran as independent single-node jobs, not one job across the nodes%s%d ranks each%s: its bandwidth never crossed the network",
                 t->rccl ? "rccl-tests" : "nccl-tests", ranks ? " (" : "", ranks, ranks ? ")" : "");
        if (nf)
            rb_cite(x, nf, &nf->as.nccl->independent_at);
        for (size_t i = 0; i < t->n_runs; i++) {
            if (t->runs[i].restart_line)
                rb_cite_line(x, f, t->runs[i].restart_line, "the size column starts again: another process's sweep");
            if (t->runs[i].avg_lines > 1)
                rb_cite_line(x, f, t->runs[i].avg_line, "one of %d \"Avg bus bandwidth\" lines", t->runs[i].avg_lines);
        }
        rb_step(x, "rebuild the tests with MPI: make clean && make MPI=1 MPI_HOME=<mpi> (without it, mpirun starts unrelated copies)");
        rb_step(x, "then mpirun -np <total GPUs> -N <GPUs per node> ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1");
        rb_step(x, "a correct run prints one '# Rank' line per GPU of every node and one Avg bus bandwidth");
    }
}

/* ---- nccl-tests: bandwidth ---- */

/* Most devices of a run on one host (a run without hosts counts as one). */
static int ranks_per_host(const ev_nt_run *run)
{
    int best = 0;
    for (size_t i = 0; i < run->n_devices; i++) {
        int n = 0;
        for (size_t j = 0; j < run->n_devices; j++)
            n += strcmp(run->devices[i].host, run->devices[j].host) == 0;
        if (n > best)
            best = n;
    }
    return best;
}

/* Expected busbw for a run's GPU and scope, with where it came from: the
 * trace analysis's expectation (an_expected_busbw_gbps), except inside a
 * node where the scale-up fabric cannot be counted on - more GPUs on the
 * host than the fabric's domain, a 2-GPU domain (an NVLink bridge between
 * PCIe cards, an optional part), or a device that names itself PCIe where
 * the catalog row it matched is not - which leaves the PCIe link; for a GPU
 * unknown to the
 * catalog the slowest host link a training GPU has today. */
static double expected_busbw(const rb_ctx *c, const ev_nt_run *run, const char *gpu, bool inter, const char **source)
{
    const hw_gpu *g = gpu && gpu[0] ? hw_gpu_find(gpu) : NULL;
    an_opts o = {.nic_gbit_s = c->opts.nic_gbit_s, .nvlink_gbps = c->opts.nvlink_gbps};
    an_ctx k = {.opts = &o};
    double v = an_expected_busbw_gbps(&k, g, inter, source);
    if (!inter && g && g->pcie_gbps > 0 && !(c->opts.nvlink_gbps > 0) && g->scaleup_gbps > g->pcie_gbps) {
        int per_host = ranks_per_host(run);
        bool says_pcie = strcasestr(gpu, "pcie") && !strcasestr(g->name, "pcie");
        /* a 2-GPU domain is an optional bridge between PCIe cards: not assumed present */
        bool bridge = g->scaleup_domain > 0 && g->scaleup_domain <= 2;
        if (says_pcie || bridge || (g->scaleup_domain > 0 && per_host > g->scaleup_domain)) {
            *source = says_pcie ? "catalog PCIe rate (the device names itself PCIe)"
                      : bridge  ? "catalog PCIe rate (NVLink bridges between PCIe cards are optional)"
                                : "catalog PCIe rate (more GPUs on the host than the scale-up domain)";
            return g->pcie_gbps;
        }
    }
    if (!isnan(v) || inter)
        return v;
    *source = "PCIe 3.0 x16 (GPU not in the catalog)";
    return 15.75;
}

#define NT_LOW_FRAC 0.5

static void r_below_expected(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_TESTS, f) {
        const ev_nccltests *t = f->as.nccltests;
        const ev_file *nf;
        if (independent(c, f, &nf)) /* its numbers do not measure the path */
            continue;
        for (size_t i = 0; i < t->n_runs; i++) {
            const ev_nt_run *run = &t->runs[i];
            if (run->wrong_rows)
                continue;
            double bw;
            const ev_nt_row *row = ev_nt_max_busbw(run, &bw);
            bool inter = run->n_hosts > 1;
            const char *gpu = run->n_devices ? run->devices[0].name : NULL, *src = NULL;
            double exp = expected_busbw(c, run, gpu, inter, &src);
            if (!row || !isfinite(exp) || bw >= NT_LOW_FRAC * exp)
                continue;
            rb_finding *x = rb_find(c, self->code);
            double target = (inter ? AN_NET_TARGET_FRAC : AN_INTRA_TARGET_FRAC) * exp;
            double gain = 100 * (1 - bw / target);
            if (x && isfinite(x->gain_pct) && x->gain_pct >= gain)
                continue; /* one finding per file set: the worst run names it */
            x = rb_raise(c, self);
            x->n_cite = 0;
            x->layer = inter ? CP_LAYER_INTER : CP_LAYER_INTRA;
            rb_severity(x, bw < 0.25 * exp ? AN_SEV_HIGH : AN_SEV_MEDIUM);
            rb_title(x, "%s %s busbw %.2f GB/s is %.0f %% of the expected %.1f GB/s (%s)", t->rccl ? "rccl-tests" : "nccl-tests",
                     run->op[0] ? run->op : "collective", bw, 100 * bw / exp, exp, inter ? "inter-node" : "intra-node");
            rb_gain(x, gain,
                    "share of this benchmark's collective time (best row, no training step measured) saved at %.0f %% of the expected %s busbw %.1f GB/s (from %s), time scaling as 1/busbw",
                    100 * target / exp, inter ? "inter-node" : "intra-node", exp, src);
            rb_cite_line(x, f, row->line, "%s of %lld bytes: busbw %.2f GB/s (best row)", run->op[0] ? run->op : "collective",
                         (long long)row->size_bytes, bw);
            if (isfinite(run->avg_busbw_gbps))
                rb_cite_line(x, f, run->avg_line, "Avg bus bandwidth %.3f GB/s", run->avg_busbw_gbps);
            if (run->n_devices)
                rb_cite_line(x, f, run->devices[0].line, "%zu ranks on %d host%s, %s", run->n_devices, run->n_hosts,
                             run->n_hosts == 1 ? "" : "s", gpu && gpu[0] ? gpu : "GPU unnamed");
            x->n_steps = 0;
            const hw_gpu *hg = gpu && gpu[0] ? hw_gpu_find(gpu) : NULL;
            bool amd = t->rccl || (hg && hg->vendor && strcasecmp(hg->vendor, "AMD") == 0);
            const char *ccl = amd ? "RCCL" : "NCCL";
            if (inter) {
                rb_step(x, "compare with ib_write_bw between the same nodes: if perftest is fine, suspect %s's transport (socket fallback, GDR off, too few channels/QPs)", ccl);
                rb_step(x, "if perftest is slow too, the fabric: ECMP collisions, adaptive routing, a degraded link or port");
            } else if (amd) {
                rb_step(x, "check that the GPUs use P2P over xGMI: rocm-smi --showtopo; NCCL_DEBUG=INFO (RCCL reads it) shows P2P/IPC channels, not SHM");
                rb_step(x, "nothing should force copies through host memory: ACS or an IOMMU in translation mode (iommu=pt), a container without --ipc=host");
            } else {
                rb_step(x, "check that the GPUs use P2P/NVLink: nvidia-smi topo -m; NCCL_DEBUG=INFO shows P2P/IPC channels, not SHM");
                rb_step(x, "nothing should force copies through host memory: ACS or an IOMMU in translation mode, a container without --ipc=host, a GPU without P2P");
            }
        }
    }
}

/* A busbw dip: a size whose busbw falls below 60 % of the best smaller
 * size, with the sweep recovering to 90 % of it at larger sizes (a size
 * where NCCL's choice of algorithm or protocol, or a buffer/chunk
 * threshold, costs bandwidth). */
#define DIP_FRAC 0.6
#define DIP_RECOVER 0.9
#define DIP_MIN_GBPS 0.05
#define DIP_MIN_SHARE 0.02 /* of the run's best busbw: latency-bound jitter at tiny sizes is no dip */

static void r_dip(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_TESTS, f) {
        const ev_nccltests *t = f->as.nccltests;
        const ev_file *nf;
        if (independent(c, f, &nf))
            continue;
        for (size_t i = 0; i < t->n_runs; i++) {
            const ev_nt_run *run = &t->runs[i];
            size_t top = 0; /* the best row so far */
            double best;
            if (!ev_nt_max_busbw(run, &best))
                continue;
            for (size_t k = 1; k + 1 < run->n_rows; k++) {
                double peak = ev_nt_row_busbw(&run->rows[top]), cur = ev_nt_row_busbw(&run->rows[k]);
                if (!(cur < DIP_FRAC * peak) || !(peak >= DIP_MIN_GBPS) || !(peak >= DIP_MIN_SHARE * best) || run->rows[k].size_bytes <= run->rows[top].size_bytes) {
                    if (cur > peak)
                        top = k;
                    continue;
                }
                size_t low = k; /* the bottom of the dip */
                double after = 0;
                for (size_t j = k + 1; j < run->n_rows; j++) {
                    double v = ev_nt_row_busbw(&run->rows[j]);
                    if (v > after)
                        after = v;
                    if (after < DIP_RECOVER * peak && v < ev_nt_row_busbw(&run->rows[low]))
                        low = j;
                }
                if (after < DIP_RECOVER * peak)
                    break; /* a plateau or a fall that stays: not a dip */
                rb_finding *x = rb_raise(c, self);
                if (!x->title[0]) {
                    char a[32], b[32];
                    x->layer = run->n_hosts > 1 ? CP_LAYER_INTER : CP_LAYER_INTRA;
                    rb_title(x, "%s %s busbw dips to %.2f GB/s at %s after %.2f GB/s at %s, recovering to %.2f GB/s at larger sizes",
                             t->rccl ? "rccl-tests" : "nccl-tests", run->op[0] ? run->op : "collective", ev_nt_row_busbw(&run->rows[low]),
                             rb_bytes((double)run->rows[low].size_bytes, a, sizeof a), peak,
                             rb_bytes((double)run->rows[top].size_bytes, b, sizeof b), after);
                }
                rb_cite_line(x, f, run->rows[top].line, "busbw %.2f GB/s at %lld bytes", peak, (long long)run->rows[top].size_bytes);
                rb_cite_line(x, f, run->rows[low].line, "busbw %.2f GB/s at %lld bytes", ev_nt_row_busbw(&run->rows[low]),
                             (long long)run->rows[low].size_bytes);
                rb_step(x, "rerun the sizes around the dip with NCCL_ALGO=Ring and =Tree (and NCCL_PROTO=Simple) to see which choice is slow there");
                rb_step(x, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING prints the algorithm/protocol per size; a tuner plugin or NCCL_*_THRESHOLD setting may pick badly");
                break;
            }
        }
    }
}

/* ---- iperf3 ---- */

static void r_iperf_failed(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_IPERF, f) {
        const ev_iperf *p = f->as.iperf;
        if (!p->n_errors)
            continue;
        rb_finding *x = rb_raise(c, self);
        if (!x->title[0])
            rb_title(x, "iperf3 failed: %s", p->error);
        rb_cite_line(x, f, p->error_line, "iperf3: error - %s", p->error);
        rb_step(x, "start the server first (iperf3 -s) and check the port (-p, default 5201) is open between the hosts: nc -zv <server> 5201");
        rb_step(x, "'the server is busy running a test': one client at a time per server port; start more servers on other ports for parallel tests");
    }
}

/* ---- perftest ---- */

static void r_perftest_failed(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_PERFTEST, f) {
        const ev_perftest *p = f->as.perftest;
        if (!p->n_failures)
            continue;
        rb_finding *x = rb_raise(c, self);
        if (!x->title[0]) {
            switch (p->fail_kind) {
            case EV_PT_FAIL_CONNECT:
                rb_title(x, "perftest could not reach its peer over TCP (its out-of-band connection): the server is not running there, or a firewall or the wrong address is in the way");
                rb_step(x, "start the server side first (ib_write_bw -d <dev> with no host), then the client with the server's IP; -p <port> when 18515 is blocked");
                break;
            case EV_PT_FAIL_QP:
                rb_title(x, "perftest could not move its QP to ready-to-receive: the two sides disagree on the path (RoCE GID index, MTU, link layer, port)");
                rb_step(x, "show_gids on both nodes: pass the same RoCE v2 GID index with -x <idx> on both sides; ibv_devinfo for port state and active_mtu");
                break;
            case EV_PT_FAIL_COMPLETION:
                rb_title(x, "perftest's transfers completed with error status %ld: the RDMA path between the nodes drops or rejects traffic", p->fail_status);
                rb_step(x, "status 12 is the transport retry counter: the peer never acknowledged (GID, PFC/lossless config, a bad link); status 4/10 are protection/access errors");
                break;
            case EV_PT_FAIL_DEVICE:
                rb_title(x, "perftest found no usable RDMA device: the driver, the device name (-d) or the container's /dev/infiniband");
                rb_step(x, "ibv_devices; ibv_devinfo   # the names -d accepts; in a container mount /dev/infiniband and the RDMA libraries");
                break;
            default:
                rb_title(x, "perftest failed before measuring: %s", p->failure);
                break;
            }
        }
        rb_cite_line(x, f, p->failure_line, "%s", p->failure);
    }
}

#define PT_LOW_FRAC 0.75
#define PT_TARGET_FRAC 0.9 /* what a healthy RDMA link carries in ib_*_bw */

/* The link rate a bandwidth test ran on: --nic-gbps, else the smallest
 * standard Ethernet/IB rate at or above the measured peak. */
static double line_rate(const rb_ctx *c, double peak_gbit, const char **source)
{
    static const double rates[] = {10, 25, 40, 50, 100, 200, 400, 800, 1600};
    if (c->opts.nic_gbit_s > 0) {
        *source = "--nic-gbps";
        return c->opts.nic_gbit_s;
    }
    *source = "the smallest standard rate at or above the peak";
    for (size_t i = 0; i < CP_ARRAY_LEN(rates); i++)
        if (rates[i] >= peak_gbit)
            return rates[i];
    return NAN;
}

/* PCIe data rate per lane after encoding, Gbit/s, for a link speed in GT/s
 * (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s). */
static double pcie_lane_gbit(double gts) { return gts <= 5.0 ? gts * 0.8 : gts * 128.0 / 130.0; }

/* A downgraded PCIe link in the same input that caps the measured rate:
 * the device and its capacity in Gbit/s, or NULL. */
static const ev_lspci_dev *pcie_cap(const rb_ctx *c, const ev_file *f, double measured_gbit, double *cap_gbit,
                                    const ev_file **lf)
{
    for (size_t i = 0; i < c->set->n_files; i++) {
        const ev_file *g = &c->set->files[i];
        if (g->kind != EV_LSPCI || g->input != f->input)
            continue;
        for (int d = 0; d < g->as.lspci->n_devs; d++) {
            const ev_lspci_dev *dv = &g->as.lspci->devs[d];
            if (!dv->downgraded || dv->sta_gts <= 0 || dv->sta_width <= 0)
                continue;
            double cap = pcie_lane_gbit(dv->sta_gts) * dv->sta_width;
            if (measured_gbit >= 0.7 * cap && measured_gbit <= 1.05 * cap) {
                *cap_gbit = cap;
                *lf = g;
                return dv;
            }
        }
    }
    return NULL;
}

static void r_perftest(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_PERFTEST, f) {
        const ev_perftest *p = f->as.perftest;
        for (size_t i = 0; i < p->n_runs; i++) {
            const ev_pt_run *run = &p->runs[i];
            const ev_pt_row *best = run->is_latency ? NULL : ev_pt_best_bw(run);
            if (!best)
                continue;
            const char *src;
            double rate = line_rate(c, best->bw_peak_gbit_s, &src);
            if (!isfinite(rate) || best->bw_avg_gbit_s >= PT_LOW_FRAC * rate)
                continue;
            double gain = 100 * (1 - best->bw_avg_gbit_s / (PT_TARGET_FRAC * rate));
            double cap;
            const ev_file *lf = NULL;
            const ev_lspci_dev *dv = pcie_cap(c, f, best->bw_avg_gbit_s, &cap, &lf);
            const rb_rule *r = dv ? rb_rule_of("PCIE_LINK_DOWNGRADED") : self;
            rb_finding *x = rb_find(c, r->code);
            if (x && isfinite(x->gain_pct) && x->gain_pct >= gain)
                continue;
            x = rb_raise(c, r);
            x->n_cite = 0;
            rb_severity(x, best->bw_avg_gbit_s < 0.5 * rate ? AN_SEV_HIGH : AN_SEV_MEDIUM);
            if (dv)
                rb_title(x, "%s reaches %.1f Gb/s, %.0f %% of a %.0f Gb/s link: the NIC's PCIe link is downgraded (x%d at %.0f GT/s, capable of x%d), capping it near %.1f Gb/s",
                         run->tool[0] ? run->tool : "perftest", best->bw_avg_gbit_s, 100 * best->bw_avg_gbit_s / rate, rate, dv->sta_width,
                         dv->sta_gts, dv->cap_width, cap);
            else
                rb_title(x, "%s reaches %.1f Gb/s, %.0f %% of a %.0f Gb/s link", run->tool[0] ? run->tool : "perftest", best->bw_avg_gbit_s,
                         100 * best->bw_avg_gbit_s / rate, rate);
            rb_gain(x, gain,
                    "share of this benchmark's transfer time (best message size) saved at %.0f %% of the line rate (from %s), time scaling as 1/bandwidth",
                    100 * PT_TARGET_FRAC, src);
            rb_cite_line(x, f, best->line, "%lld-byte messages: average %.2f Gb/s, peak %.2f Gb/s", (long long)best->bytes,
                         best->bw_avg_gbit_s, best->bw_peak_gbit_s);
            if (run->device[0])
                rb_cite_line(x, f, run->device_line, "device %s, %d QP%s, MTU %d", run->device, run->qps, run->qps == 1 ? "" : "s",
                             run->mtu_bytes);
            if (dv) {
                rb_cite(x, lf, &dv->lnkcap_at);
                rb_cite(x, lf, &dv->lnksta_at);
            }
            x->n_steps = 0;
            if (dv) {
                rb_step(x, "move the NIC to a slot wired x%d (check the board manual: slots that share lanes with another device drop to x8)", dv->cap_width);
                rb_step(x, "sudo lspci -vv -s <nic bdf> | grep -e LnkCap -e LnkSta   # LnkSta must match LnkCap");
            } else {
                rb_step(x, "ibstat / ethtool <dev>: port speed and width (a split or degraded port shows half the rate)");
                rb_step(x, "the MTU (4096 for RoCE/IB), more QPs (-q 4), the NIC's PCIe link (lspci -vv LnkSta), NUMA placement (run on the NIC's socket)");
            }
        }
    }
}

#define FAIL AN_SEV_CRITICAL

static const rb_rule k_rules[] = {
    {"NCCLTESTS_WRONG_DATA", CP_LAYER_INTER, FAIL, 0.85,
     "nccl-tests/rccl-tests rows with #wrong > 0 (or an error value marked '*'), '# Out of bounds values : N FAILED'",
     "NVIDIA/nccl-tests README (#wrong must be 0); https://github.com/NVIDIA/nccl/issues/1261 (a forced protocol corrupting data)",
     "the collective returned wrong results: remove protocol/algorithm overrides, isolate the rank or link, check for GPU and PCIe errors, upgrade NCCL",
     r_wrong},
    {"NCCLTESTS_NO_MPI", CP_LAYER_INTER, AN_SEV_HIGH, 0.8,
     "one output with the size column restarting and an Avg bus bandwidth per process, or NCCL comm lines with the same rank and size on two hosts",
     "https://github.com/NVIDIA/nccl-tests/issues/182 (maintainer: compile the tests with MPI=1); NVIDIA/nccl-tests README",
     "nccl-tests built without MPI runs one independent job per process under mpirun: rebuild with MPI=1 and run one rank per GPU", r_no_mpi},
    {"NCCLTESTS_BELOW_EXPECTED", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.6,
     "a run's best busbw below 50 % of the expected busbw (inter-node: NIC per GPU from --nic-gbps or the catalog; intra-node: NVLink/PCIe)",
     "NVIDIA/nccl-tests doc/PERFORMANCE.md (busbw is comparable to the hardware's peak)",
     "the collective path runs far below the hardware: find which hop (NVLink, xGMI or PCIe inside the node, NIC and fabric between nodes) is slow",
     r_below_expected},
    {"NCCLTESTS_BUSBW_DIP", CP_LAYER_INTER, AN_SEV_LOW, 0.4,
     "busbw at one size below 60 % of the best smaller size (itself >= 2 % of the run's best), recovering to 90 % of it at larger sizes",
     "https://github.com/aws/aws-ofi-nccl/issues/65 (a dip at one size range); NCCL env docs (NCCL_ALGO, NCCL_PROTO)",
     "one size range runs slower than smaller sizes: compare algorithms/protocols there (NCCL_ALGO, NCCL_PROTO) and check thresholds a tuner sets", r_dip},
    {"NCCLTESTS_FAILED", CP_LAYER_INTER, FAIL, 0.5, "nccl-tests 'NCCL failure', 'CUDA failure', 'Test failure' lines", "NVIDIA/nccl-tests (common.cu)",
     "the test did not complete: the NCCL WARN line before the failure names the cause", r_failed},
    {"IPERF_FAILED", CP_LAYER_INTER, FAIL, 0.6, "iperf3: error - <reason> (unable to connect to server, the server is busy, ...)",
     "iperf3(1) (esnet/iperf: the error messages of iperf_error.c)",
     "the TCP test did not run: a server not listening, a firewall, or a server busy with another client", r_iperf_failed},
    {"PERFTEST_FAILED", CP_LAYER_INTER, FAIL, 0.7,
     "perftest: Couldn't connect to <host>:<port> / Failed to modify QP <n> to RTR / Failed status <n>: wr_id ... syndrom / Couldn't get device info",
     "linux-rdma/perftest (perftest_communication.c, perftest_resources.c messages); NCCL troubleshooting (run ib_write_bw between the nodes)",
     "the RDMA test itself failed: its message names the stage (TCP exchange, QP setup, transfer, device)", r_perftest_failed},
    {"PERFTEST_BELOW_LINE_RATE", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.6,
     "a perftest bandwidth run's best average below 75 % of the line rate (--nic-gbps or the smallest standard rate at or above its peak)",
     "linux-rdma/perftest README; NVIDIA RDMA performance tuning (a healthy link carries 90-98 %)",
     "the RDMA path runs below its link: port speed/width, MTU, QPs, the NIC's PCIe link, NUMA placement", r_perftest},
};

const rb_family rb_family_bench = {.name = "bench",
                                   .summary = "benchmarks: nccl-tests/rccl-tests validity and busbw, perftest bandwidth",
                                   .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
