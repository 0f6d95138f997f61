/* collmodel.c - the collective cost model (see collmodel.h for the contract and
 * docs/METRICS.md "Collective cost model" for the formulas).
 *
 * Where the numbers come from:
 *   - latencies (microseconds): NCCL's tuner defaults, NVIDIA/nccl
 *     src/graph/tuning.cc (ncclTunerConstantsDefaults: baseLatencies and
 *     hwLatencies per NVLink/PCI/NET, algorithm and protocol), with its ring,
 *     tree, CollNet, NVLS and NVLSTree latency formulas and the tree
 *     correction factors by message size;
 *   - protocol bandwidth factors: the same file (LL = half the bandwidth
 *     capped by llMaxBws, LL128 x 0.92, tree x 0.92, NVLS efficiency 0.85
 *     Hopper / 0.74 Blackwell);
 *   - achieved link fractions: NCCL's per-link NVLink bandwidths
 *     (src/graph/topo.h: SM80 20.0, SM90 20.6, SM100 40.1 GB/s per link of
 *     25/25/50 GB/s line rate, i.e. 0.80-0.82) and the NCCL maintainers'
 *     published figures: "For NDR @ 400Gbps you should see 46-48GB/s per
 *     NIC" (nccl-tests issue 290), "8x200Gbit/s IB ... we measure 192GB/s
 *     AllReduce BusBW" (nccl issue 812), "On 8 GPUs [H100 NVLS] peak busBw
 *     of ~480GB/s (algbw ~275GB/s)" (nccl-tests issue 212).
 * None of this code is NCCL's: the formulas are re-derived from what the
 * algorithms move over which link, and the constants are cited facts.
 *
 * The validation against published nccl-tests outputs is in
 * docs/data/nccl_tests_published.csv (run by `chainprof model --validate`),
 * with the figures per source in docs/MODEL.md.
 */
#include "model/collmodel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const collm_consts k_consts = {
    .nvlink_eff = 0.80,      /* NCCL per-link NVLink figures / line rate (SM80 20/25, SM90 20.6/25, SM100 40.1/50) */
    .pcie_eff = 0.76,        /* NCCL PCI_BW 12 GB/s for a Gen3 x16 link of 15.75 GB/s */
    .net_eff = 0.94,         /* 46-48 GB/s per 400 Gb/s NIC, 192 GB/s over 8x200 Gb/s (NCCL maintainers) */
    .nvls_eta_hopper = 0.611,/* 8xH100 NVLS all-reduce algbw ~275 GB/s of 450 (NCCL maintainer) */
    .ll128_eff = 0.92,       /* tuning.cc: LL128 busBw * 0.92 */
    .ll_eff = 0.5,           /* tuning.cc: LL busBw * 0.5 */
    .tree_eff = 0.92,        /* tuning.cc: tree all-reduce busBw * 0.92 */
    /* a protocol reaches half its bandwidth once about one pipeline of its
     * buffers is in flight: NCCL's LL buffer (8 lines x 512 threads x 8
     * steps x 16 B = 512 KiB) and LL128 buffer (120 x 640 x 8 x 8 B =
     * 4.9 MB) per channel; Simple's 16 MB (four 4 MiB channel buffers) is
     * fitted to the published sweeps (docs/data/nccl_tests_published.csv:
     * 8 to 24 MB all fit within 1 point of median error) */
    .half_bytes = {524288.0, 4915200.0, 16e6},
};

const collm_consts *collm_consts_get(void) { return &k_consts; }

/* ---- NCCL tuner constants (tuning.cc), microseconds ---- */

enum { HW_NVLINK, HW_PCI, HW_NET };

/* base latency [algo][proto] for ring, tree, nvls, nvlstree, collnet(chain), p2p (as ring) */
static const double k_base_us[COLLM_ALGO_N][COLLM_PROTO_N] = {
    {6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {6.6, 14.0, 8.4},
};
/* hardware latency per step [hw][algo][proto] */
static const double k_hw_us[3][COLLM_ALGO_N][COLLM_PROTO_N] = {
    /* NVLINK */ {{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}, {0, 0, 25}, {0, 0, 25}, {0, 0, 2.8}, {0.6, 1.9, 3.4}},
    /* PCI */ {{1.0, 2.5, 5.7}, {1.0, 1.9, 4.0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 2.8}, {1.0, 2.5, 5.7}},
    /* NET */ {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 30}, {2.7, 4.0, 14.0}},
};
/* LL bandwidth caps (GB/s): one node by architecture, then 2 and >2 nodes */
static const double k_ll_max_1node[] = {39.0 /* other */, 39.0, 87.7, 141.0, 282.0};
static const double k_ll_max_2nodes = 39.0, k_ll_max_nodes = 20.4;
/* NVLS efficiency by architecture (0 = no NVLS) */
static const double k_nvls_eff[] = {0, 0, 0, 0.85, 0.74};
/* tree bandwidth correction by protocol, for message sizes 64 B << i */
static const double k_tree_corr[COLLM_PROTO_N][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};
static const double k_net_overhead_us = 1.0; /* getNetOverhead on x86 Intel; x3 for Simple */

double collm_ring_step_us(bool inter)
{
    return k_hw_us[inter ? HW_NET : HW_NVLINK][COLLM_ALGO_RING][COLLM_PROTO_SIMPLE];
}

static const char *const k_algo_names[COLLM_ALGO_N] = {"ring", "tree", "nvls", "nvlstree", "collnet", "p2p"};
static const char *const k_proto_names[COLLM_PROTO_N] = {"LL", "LL128", "Simple"};

const char *collm_algo_name(int algo)
{
    if (algo == COLLM_ALGO_AUTO) return "auto";
    return algo >= 0 && algo < COLLM_ALGO_N ? k_algo_names[algo] : "unknown";
}

int collm_algo_parse(const char *s)
{
    if (!s || !*s || strcasecmp(s, "auto") == 0) return COLLM_ALGO_AUTO;
    for (int i = 0; i < COLLM_ALGO_N; i++)
        if (strcasecmp(s, k_algo_names[i]) == 0) return i;
    if (strcasecmp(s, "collnetchain") == 0 || strcasecmp(s, "collnetdirect") == 0 || strcasecmp(s, "sharp") == 0)
        return COLLM_ALGO_COLLNET;
    return -2;
}

const char *collm_proto_name(int proto)
{
    if (proto == COLLM_PROTO_AUTO) return "auto";
    return proto >= 0 && proto < COLLM_PROTO_N ? k_proto_names[proto] : "unknown";
}

int collm_proto_parse(const char *s)
{
    if (!s || !*s || strcasecmp(s, "auto") == 0) return COLLM_PROTO_AUTO;
    for (int i = 0; i < COLLM_PROTO_N; i++)
        if (strcasecmp(s, k_proto_names[i]) == 0) return i;
    return -2;
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, int errsz, const char *fmt, ...)
{
    if (err && errsz > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, (size_t)errsz, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int collm_arch(const hw_gpu *gpu)
{
    if (!gpu || !gpu->vendor || strcmp(gpu->vendor, "NVIDIA") != 0 || !gpu->arch) return COLLM_ARCH_OTHER;
    if (strncmp(gpu->arch, "Blackwell", 9) == 0) return COLLM_ARCH_BLACKWELL;
    if (strcmp(gpu->arch, "Hopper") == 0) return COLLM_ARCH_HOPPER;
    if (strcmp(gpu->arch, "Ampere") == 0) return COLLM_ARCH_AMPERE;
    if (strcmp(gpu->arch, "Volta") == 0) return COLLM_ARCH_VOLTA;
    return COLLM_ARCH_OTHER;
}

void collm_query_init(collm_query *q)
{
    memset(q, 0, sizeof *q);
    q->op = COLL_ALL_REDUCE;
    q->nodes = 1;
    q->algo = COLLM_ALGO_AUTO;
    q->proto = COLLM_PROTO_AUTO;
}

int collm_topo_for(const collm_query *q, collm_topo *t, char *err, int errsz)
{
    memset(t, 0, sizeof *t);
    const hw_gpu *gpu = q->gpu;
    if (!gpu) return fail(err, errsz, "no gpu given");
    if (q->nodes < 1 || q->gpus_per_node < 1 || q->nodes > (1 << 20) || q->gpus_per_node > 4096)
        return fail(err, errsz, "nodes and gpus per node must be 1..1048576 and 1..4096");
    if (!(q->bytes >= 0) || q->bytes > 1e18 || !isfinite(q->nic_gbit_s) || q->nic_gbit_s < 0 ||
        q->nic_gbit_s > 1e6 || !isfinite(q->nvlink_gbps) || q->nvlink_gbps < 0 || q->nvlink_gbps > 1e6 ||
        q->nics_per_node < 0 || q->nics_per_node > 4096)
        return fail(err, errsz, "message size, link rates or NIC count out of range");
    long long n = (long long)q->nodes * q->gpus_per_node;
    if (n > (1 << 24)) return fail(err, errsz, "at most 2^24 ranks");
    t->ranks = (int)n;
    t->arch = collm_arch(gpu);
    int host_gpus = gpu->gpus_per_node > 0 ? gpu->gpus_per_node : 8;
    int g = q->gpus_per_node;
    /* The scale-up domain: an NVL72-class rack spans hosts (trays); a board
     * spans one host; a bridged pair or no NVLink at all leaves PCIe. */
    double nvl = q->nvlink_gbps > 0 ? q->nvlink_gbps : gpu->scaleup_gbps;
    int dom = gpu->scaleup_domain > 1 ? gpu->scaleup_domain : 1;
    if (dom > host_gpus && g <= host_gpus) {
        int hosts_per_dom = dom / host_gpus;
        long long pd = (long long)hosts_per_dom * g;
        t->per_domain = (int)(pd < n ? pd : n);
    } else if (g <= dom) {
        t->per_domain = g;
    } else {
        t->per_domain = g; /* more ranks per host than NVLink reaches: the ring crosses PCIe */
        t->pcie = true;
    }
    if (dom <= 1 || nvl <= 0) t->pcie = true;
    t->intra_gbps = t->pcie ? (gpu->pcie_gbps > 0 ? gpu->pcie_gbps : 16.0) : nvl;
    t->nvswitch = !t->pcie && dom >= 4 && gpu->vendor && strcmp(gpu->vendor, "NVIDIA") == 0;
    /* NICs: each GPU drives its share of its host's NICs */
    int nics = q->nics_per_node > 0 ? q->nics_per_node : gpu->nics_per_node;
    double rate = q->nic_gbit_s > 0 ? q->nic_gbit_s : gpu->nic_gbit_s;
    double per_gpu_nics = (double)nics / host_gpus;
    double rank_nics = per_gpu_nics < 1.0 ? per_gpu_nics : floor(per_gpu_nics);
    int hosts_in_dom = (t->per_domain + g - 1) / g;
    double used = g * per_gpu_nics;
    if (used > nics) used = nics;
    t->net_gbps = hosts_in_dom * used * rate / 8.0;
    t->nic_gbps = (rank_nics > 0 ? rank_nics : 1.0) * rate / 8.0;
    if (t->per_domain >= t->ranks) t->net_gbps = 0;
    else if (t->net_gbps <= 0) return fail(err, errsz, "the job spans nodes but no NIC bandwidth is known");
    t->sharp = q->sharp;
    t->gpus_per_nic = per_gpu_nics > 0 ? 1.0 / per_gpu_nics : 0;
    return 0;
}

static int log2i(int v)
{
    int l = 0;
    while (v > 1) v >>= 1, l++;
    return l;
}

/* May (algo, proto) run op on t? NULL when yes, else the reason. */
static const char *unsupported(coll_op op, const collm_topo *t, int algo, int proto)
{
    int domains = (t->ranks + t->per_domain - 1) / t->per_domain;
    bool p2p_op = op == COLL_ALL_TO_ALL || op == COLL_SEND_RECV;
    if (p2p_op != (algo == COLLM_ALGO_P2P))
        return p2p_op ? "all-to-all and send/recv run as point-to-point (algo p2p)"
                      : "p2p is only for all-to-all and send/recv";
    if (proto == COLLM_PROTO_LL128 && (t->pcie || (domains > 1 && t->arch < COLLM_ARCH_HOPPER)))
        return "LL128 needs NVLink (and Hopper or later across nodes)";
    switch (algo) {
    case COLLM_ALGO_RING:
        return op == COLL_ALL_REDUCE || op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER ||
                       op == COLL_BROADCAST || op == COLL_REDUCE
                   ? NULL
                   : "ring does not run this op";
    case COLLM_ALGO_TREE: return op == COLL_ALL_REDUCE ? NULL : "tree runs all-reduce only";
    case COLLM_ALGO_NVLS:
        if (proto != COLLM_PROTO_SIMPLE) return "NVLS runs the Simple protocol only";
        if (!t->nvswitch || k_nvls_eff[t->arch] <= 0) return "NVLS needs NVSwitch and Hopper or later";
        if (domains > 1) return "NVLS across NVLink domains needs CollNet (use nvlstree)";
        if (t->per_domain < 2) return "NVLS needs two GPUs";
        return op == COLL_ALL_REDUCE || op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER
                   ? NULL
                   : "NVLS runs all-reduce, all-gather and reduce-scatter";
    case COLLM_ALGO_NVLSTREE:
        if (proto != COLLM_PROTO_SIMPLE) return "NVLSTree runs the Simple protocol only";
        if (!t->nvswitch || k_nvls_eff[t->arch] <= 0) return "NVLSTree needs NVSwitch and Hopper or later";
        if (domains < 2) return "NVLSTree needs more than one NVLink domain";
        return op == COLL_ALL_REDUCE ? NULL : "NVLSTree runs all-reduce only";
    case COLLM_ALGO_COLLNET:
        if (proto != COLLM_PROTO_SIMPLE) return "CollNet runs the Simple protocol only";
        if (!t->sharp) return "CollNet needs in-network reduction (SHARP); say so with --sharp";
        if (domains < 2) return "CollNet needs more than one node";
        return op == COLL_ALL_REDUCE ? NULL : "CollNet is modelled for all-reduce only";
    case COLLM_ALGO_P2P: return proto == COLLM_PROTO_LL128 ? "p2p runs LL or Simple" : NULL;
    default: return "unknown algorithm";
    }
}


/* Large-message bus bandwidth of (algo, Simple) with its two bounds. */
static double simple_busbw(coll_op op, const collm_topo *t, int algo, int domains, double *intra_b, double *net_b)
{
    const collm_consts *k = &k_consts;
    int n = t->ranks, g = t->per_domain;
    double ring_intra = t->intra_gbps * (t->pcie ? k->pcie_eff : k->nvlink_eff);
    double net = domains > 1 ? t->net_gbps * k->net_eff : INFINITY;
    double eta = k_nvls_eff[t->arch] > 0 ? k->nvls_eta_hopper * k_nvls_eff[t->arch] / k_nvls_eff[COLLM_ARCH_HOPPER] : 0;
    double f = coll_busbw_factor(op, n);
    *intra_b = g > 1 ? ring_intra : INFINITY;
    *net_b = net;
    switch (algo) {
    case COLLM_ALGO_RING: break;
    case COLLM_ALGO_TREE:
        /* on two nodes the tree crosses the network once per direction while
         * busbw counts the ring's 2(n-1)/n: it can exceed the NICs */
        if (domains == 2) *net_b = 2.0 * net;
        *intra_b *= k->tree_eff;
        *net_b *= k->tree_eff;
        break;
    case COLLM_ALGO_NVLS: *intra_b = eta * t->intra_gbps * f; break;
    case COLLM_ALGO_NVLSTREE:
        *intra_b = eta * t->intra_gbps * f;
        if (domains == 2) *net_b = 2.0 * net;
        break;
    case COLLM_ALGO_COLLNET:
        /* reduce-scatter + all-gather inside the domain over the ring, one
         * pass of the buffer through the switches' reduction */
        *intra_b = g > 1 ? ring_intra / (2.0 * (g - 1) / g) * f : INFINITY;
        *net_b = net * f;
        /* CollNet wants a NIC per GPU: r GPUs sharing one cost (1 + r) / 2
         * (NCCL's tuner, src/graph/tuning.cc, CollNet Direct refinement) */
        if (t->gpus_per_nic > 1) {
            double pen = 1.0 + (t->gpus_per_nic - 1.0) / 2.0;
            *intra_b /= pen;
            *net_b /= pen;
        }
        break;
    case COLLM_ALGO_P2P: {
        /* every rank sends to every peer; off-domain traffic leaves through
         * the rank's own NIC (all-to-all does not aggregate NICs) */
        double in_frac = op == COLL_SEND_RECV ? (domains > 1 ? 0 : 1) : (double)(g - 1) / n;
        double out_frac = op == COLL_SEND_RECV ? (domains > 1 ? 1 : 0) : (double)(n - g) / n;
        double nic = t->nic_gbps * k->net_eff;
        *intra_b = in_frac > 0 ? ring_intra / in_frac * f : INFINITY;
        *net_b = out_frac > 0 ? nic / out_frac * f : INFINITY;
        break;
    }
    default: break;
    }
    return *intra_b < *net_b ? *intra_b : *net_b;
}

static double latency_us(coll_op op, const collm_topo *t, int algo, int proto, int domains, double bytes)
{
    int n = t->ranks, g = t->per_domain, nn = domains;
    int hw_intra = t->pcie ? HW_PCI : HW_NVLINK;
    double base = k_base_us[algo][proto];
    double intra = k_hw_us[hw_intra][algo][proto];
    double inter = k_hw_us[HW_NET][g == 1 && algo == COLLM_ALGO_RING ? COLLM_ALGO_TREE : algo][proto];
    switch (algo) {
    case COLLM_ALGO_RING: {
        if (op == COLL_BROADCAST || op == COLL_REDUCE) return base + (nn > 1 ? inter : intra);
        int steps = op == COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
        int isteps = nn == 1 ? 0 : (op == COLL_ALL_REDUCE ? 2 * (nn - 1) : nn - 1);
        double ovh = nn > 1 ? k_net_overhead_us * (proto == COLLM_PROTO_SIMPLE ? 3 : 1) : 0;
        double li = intra > ovh ? intra : ovh;
        double lat = base + (steps - isteps) * li + isteps * inter;
        /* the ring's plateau effect on large multi-node all-reduces */
        if (proto == COLLM_PROTO_SIMPLE && nn > 1 && op == COLL_ALL_REDUCE && bytes / (16.0 * n) >= 64)
            lat *= t->arch >= COLLM_ARCH_AMPERE ? 1.4 : 1.9;
        return lat;
    }
    case COLLM_ALGO_TREE: return base + 2.0 * ((g - 1) * intra + log2i(nn) * inter);
    case COLLM_ALGO_NVLS: return intra + (nn > 1 ? inter : 0);
    case COLLM_ALGO_NVLSTREE: return base + intra + 2.0 * log2i(nn) * inter;
    case COLLM_ALGO_COLLNET: return base + 2.0 * (g - 1) * intra + inter;
    case COLLM_ALGO_P2P: return base + (nn > 1 ? k_hw_us[HW_NET][COLLM_ALGO_RING][proto] : intra);
    default: return base;
    }
}

/* Model one (algo, proto); returns 0 or -1 when it cannot run. */
static int model_one(coll_op op, double bytes, const collm_topo *t, int algo, int proto, collm_result *r)
{
    if (unsupported(op, t, algo, proto)) return -1;
    const collm_consts *k = &k_consts;
    int n = t->ranks;
    int domains = (t->ranks + t->per_domain - 1) / t->per_domain;
    double ib, nb;
    double bus = simple_busbw(op, t, algo, domains, &ib, &nb);
    if (proto == COLLM_PROTO_LL128) bus *= k->ll128_eff;
    if (proto == COLLM_PROTO_LL) {
        double cap = domains == 1 ? k_ll_max_1node[t->arch] : (domains == 2 ? k_ll_max_2nodes : k_ll_max_nodes);
        bus *= k->ll_eff;
        if (bus > cap) bus = cap;
    }
    if (algo == COLLM_ALGO_TREE && op == COLL_ALL_REDUCE && bytes >= 64) {
        int li = log2i((int)(bytes / 64 > 1e9 ? 1e9 : bytes / 64));
        if (li >= 0 && li < 24) bus *= k_tree_corr[proto][li];
    }
    double f = coll_busbw_factor(op, n);
    double algbw = f > 0 ? bus / f : bus; /* GB/s */
    memset(r, 0, sizeof *r);
    r->algo = algo, r->proto = proto, r->domains = domains;
    r->latency_s = latency_us(op, t, algo, proto, domains, bytes) * 1e-6;
    r->bandwidth_s = algbw > 0 && isfinite(algbw) ? (bytes + k->half_bytes[proto]) / (algbw * 1e9) : 0;
    r->time_s = r->latency_s + r->bandwidth_s;
    r->algbw_gbps = r->time_s > 0 ? bytes / r->time_s / 1e9 : 0;
    r->busbw_gbps = r->algbw_gbps * f;
    r->peak_busbw_gbps = bus;
    r->intra_busbw_gbps = isfinite(ib) ? ib : NAN;
    r->net_busbw_gbps = isfinite(nb) ? nb : NAN;
    if (r->latency_s > r->bandwidth_s) r->bound = "latency";
    else if (isfinite(nb) && nb <= ib) r->bound = "network";
    else r->bound = t->pcie ? "pcie" : "nvlink";
    return 0;
}

int collm_model(coll_op op, double bytes, const collm_topo *t, int algo, int proto,
                    collm_result *r, char *err, int errsz)
{
    memset(r, 0, sizeof *r);
    if ((unsigned)op >= COLL_N_OPS) return fail(err, errsz, "unknown collective");
    if (t->ranks < 1 || t->per_domain < 1) return fail(err, errsz, "no ranks");
    if (!(bytes >= 0) || bytes > 1e18) return fail(err, errsz, "message size out of range");
    if (t->ranks == 1 || bytes == 0) {
        r->algo = algo, r->proto = proto, r->domains = 1, r->bound = "none";
        r->intra_busbw_gbps = r->net_busbw_gbps = NAN;
        return 0;
    }
    bool found = false;
    const char *why = NULL;
    for (int a = 0; a < COLLM_ALGO_N; a++) {
        if (algo != COLLM_ALGO_AUTO && a != algo) continue;
        for (int p = 0; p < COLLM_PROTO_N; p++) {
            if (proto != COLLM_PROTO_AUTO && p != proto) continue;
            collm_result c;
            const char *w = unsupported(op, t, a, p);
            if (w) why = w; /* the last protocol tried (Simple) names the algorithm's own limit */
            if (model_one(op, bytes, t, a, p, &c) != 0) continue;
            if (!found || c.time_s < r->time_s) *r = c, found = true;
        }
    }
    if (!found)
        return fail(err, errsz, "%s/%s cannot run %s here: %s", collm_algo_name(algo), collm_proto_name(proto),
                    coll_op_name(op), why ? why : "no algorithm applies");
    return 0;
}

int collm_estimate(const collm_query *q, collm_result *r, char *err, int errsz)
{
    collm_topo t;
    if (collm_topo_for(q, &t, err, errsz) < 0) return -1;
    return collm_model(q->op, q->bytes, &t, q->algo, q->proto, r, err, errsz);
}

double collm_time_s(coll_op op, double bytes, const collm_topo *t)
{
    collm_result r;
    if (t->ranks <= 1 || !(bytes > 0)) return 0;
    if (collm_model(op, bytes, t, COLLM_ALGO_AUTO, COLLM_PROTO_AUTO, &r, NULL, 0) < 0) return 0;
    return r.time_s;
}
