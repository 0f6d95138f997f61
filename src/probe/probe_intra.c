/* probe_intra.c - what the machine is and how fast data moves inside it.
 *
 * Topology (hwloc, I/O devices included): packages, cores, hardware
 * threads, NUMA nodes with their memory, the last-level cache, and the PCI
 * devices that matter to a training job (GPUs: class 0x03xx; NICs: class
 * 0x02xx and InfiniBand 0x0207) with their PCI address and link speed,
 * written into the report's `topology` object. Without hwloc the object
 * holds the CPU count only.
 *
 * Shared-memory copy between two processes: a producer copies blocks into
 * a two-slot buffer in MAP_SHARED memory and a forked consumer copies them
 * out, each slot handed over with an atomic sequence number (the shape of
 * MPI/NCCL shared-memory transports). Bandwidth = payload bytes / wall time,
 * so each byte counts once though it is copied twice. Measured with both
 * processes on one NUMA node and, when there are several, with producer and
 * consumer on different nodes (the buffer is first-touched by the producer,
 * so the consumer reads across the interconnect).
 * The child exits on its own if the parent dies (it polls getppid), so a
 * killed run never leaves a spinning process behind.
 */
#include "probe.h"
#include "../base/util.h"
#include "../gpu/gpu.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef CP_HAVE_HWLOC
#include <hwloc.h>
#endif

#define SLOT_BYTES (1u << 20)
#define N_SLOTS 2

typedef struct shm_chan {
    _Atomic uint64_t full[N_SLOTS];  /* sequence number written by the producer */
    _Atomic uint64_t empty[N_SLOTS]; /* sequence number consumed */
    _Atomic int abort;
    char pad[64];
    unsigned char data[N_SLOTS][SLOT_BYTES];
} shm_chan;

#ifdef CP_HAVE_HWLOC
static hwloc_topology_t load_topo(bool io)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0)
        return NULL;
    if (io)
        hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}

static void bind_to_node(hwloc_topology_t t, int node)
{
    if (!t || node < 0)
        return;
    hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)node);
    if (!n)
        return;
    hwloc_cpuset_t set = hwloc_bitmap_dup(n->cpuset);
    hwloc_bitmap_singlify(set);
    hwloc_set_cpubind(t, set, HWLOC_CPUBIND_PROCESS);
    hwloc_bitmap_free(set);
}

static void write_topology(probe_ctx *ctx)
{
    hwloc_topology_t t = load_topo(true);
    if (!t)
        return;
    rep_report *r = ctx->rep;
    rep_node *top = ctx->topology;
    rep_str(r, top, "source", "source", "hwloc");
    rep_int(r, top, "packages", "sockets", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE), NULL);
    rep_int(r, top, "cores", "cores", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), NULL);
    rep_int(r, top, "pus", "hardware threads", hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU), NULL);
    hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    char mbuf[128];
    snprintf(mbuf, sizeof mbuf, "%s", model ? model : "?");
    for (size_t l = strlen(mbuf); l && mbuf[l - 1] == ' '; l--) /* CPUID pads the name */
        mbuf[l - 1] = 0;
    rep_str(r, top, "cpu_model", "CPU model", mbuf);
    int n_numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    rep_node *numa = rep_arr(r, top, "numa_nodes", "NUMA nodes");
    for (int i = 0; i < n_numa; i++) {
        hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
        rep_node *o = rep_obj(r, numa, NULL, NULL);
        rep_int(r, o, "os_index", "node", n->os_index, NULL);
        rep_int(r, o, "memory_bytes", "memory", (int64_t)(n->attr ? n->attr->numanode.local_memory : 0), "bytes");
        rep_int(r, o, "pus", "hardware threads", hwloc_bitmap_weight(n->cpuset), NULL);
    }
    rep_node *gpus = rep_arr(r, top, "gpus", "GPUs");
    rep_node *nics = rep_arr(r, top, "nics", "NICs");
    for (hwloc_obj_t p = hwloc_get_next_pcidev(t, NULL); p; p = hwloc_get_next_pcidev(t, p)) {
        unsigned cls = p->attr->pcidev.class_id;
        bool gpu = (cls >> 8) == 0x03, nic = (cls >> 8) == 0x02;
        if (!gpu && !nic)
            continue;
        char bdf[32];
        snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%x", p->attr->pcidev.domain, p->attr->pcidev.bus,
                 p->attr->pcidev.dev, p->attr->pcidev.func);
        rep_node *o = rep_obj(r, gpu ? gpus : nics, NULL, NULL);
        rep_str(r, o, "pci", "PCI address", bdf);
        char vid[16];
        snprintf(vid, sizeof vid, "%04x:%04x", p->attr->pcidev.vendor_id, p->attr->pcidev.device_id);
        rep_str(r, o, "pci_id", "vendor:device", vid);
        /* hwloc's linkspeed is GB/s of the PCIe link; 0 when unknown */
        if (p->attr->pcidev.linkspeed > 0)
            rep_num(r, o, "pcie_link_gbps", "PCIe link", p->attr->pcidev.linkspeed, "GB/s");
        else
            rep_null(r, o, "pcie_link_gbps", "PCIe link", "GB/s");
        rep_node *names = rep_arr(r, o, "os_devices", "OS devices");
        for (hwloc_obj_t c = p->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE && c->name)
                rep_str(r, names, NULL, NULL, c->name);
        hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, p);
        hwloc_obj_t node = NULL;
        for (hwloc_obj_t a = anc; a && !node; a = a->parent)
            if (a->memory_first_child)
                node = a->memory_first_child;
        if (node)
            rep_int(r, o, "numa_node", "NUMA node", node->os_index, NULL);
        else
            rep_null(r, o, "numa_node", "NUMA node", NULL);
    }
    hwloc_topology_destroy(t);
}
#endif

static int numa_count(void)
{
#ifdef CP_HAVE_HWLOC
    hwloc_topology_t t = load_topo(false);
    if (!t)
        return 1;
    int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    hwloc_topology_destroy(t);
    return n > 0 ? n : 1;
#else
    return 1;
#endif
}

static bool wait_seq(_Atomic uint64_t *v, uint64_t want, shm_chan *ch, pid_t peer_parent)
{
    uint64_t spins = 0;
    while (atomic_load_explicit(v, memory_order_acquire) < want) {
        if (atomic_load_explicit(&ch->abort, memory_order_relaxed))
            return false;
        if ((++spins & 0xfffff) == 0) {
            if (peer_parent && getppid() != peer_parent)
                return false; /* the parent is gone */
            sched_yield();
        }
    }
    return true;
}

/* Move `total` bytes producer->consumer; returns GB/s or NaN on failure.
 * node_p/node_c: NUMA nodes to bind to (-1 = anywhere). */
static double shm_bandwidth(uint64_t total, int node_p, int node_c, char *why, size_t why_size)
{
    shm_chan *ch = mmap(NULL, sizeof *ch, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ch == MAP_FAILED) {
        snprintf(why, why_size, "mmap of the shared buffer failed: %s", strerror(errno));
        return NAN;
    }
    unsigned char *src = cp_xmalloc(SLOT_BYTES), *dst = cp_xmalloc(SLOT_BYTES);
    memset(src, 0x5a, SLOT_BYTES);
    uint64_t blocks = total / SLOT_BYTES;
    pid_t parent = getpid();
#ifdef CP_HAVE_HWLOC
    hwloc_topology_t topo = load_topo(false);
#endif
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork failed: %s", strerror(errno));
        munmap(ch, sizeof *ch);
        free(src), free(dst);
        return NAN;
    }
    if (pid == 0) { /* consumer */
#ifdef CP_HAVE_HWLOC
        bind_to_node(topo, node_c);
#else
        (void)node_c;
#endif
        for (uint64_t b = 0; b < blocks; b++) {
            int s = (int)(b % N_SLOTS);
            if (!wait_seq(&ch->full[s], b / N_SLOTS + 1, ch, parent))
                _exit(1);
            memcpy(dst, ch->data[s], SLOT_BYTES);
            atomic_store_explicit(&ch->empty[s], b / N_SLOTS + 1, memory_order_release);
        }
        _exit(dst[SLOT_BYTES - 1] == 0x5a ? 0 : 2);
    }
#ifdef CP_HAVE_HWLOC
    bind_to_node(topo, node_p);
#else
    (void)node_p;
#endif
    for (int s = 0; s < N_SLOTS; s++) /* first touch by the producer */
        memset(ch->data[s], 0, SLOT_BYTES);
    int64_t t0 = cp_now_ns();
    bool ok = true;
    for (uint64_t b = 0; b < blocks && ok; b++) {
        int s = (int)(b % N_SLOTS);
        if (b >= N_SLOTS)
            ok = wait_seq(&ch->empty[s], b / N_SLOTS, ch, 0);
        memcpy(ch->data[s], src, SLOT_BYTES);
        atomic_store_explicit(&ch->full[s], b / N_SLOTS + 1, memory_order_release);
        if ((b & 63) == 0) { /* the consumer died: stop waiting for it */
            int st;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                ok = false;
                pid = -1;
            }
        }
    }
    int status = 0;
    if (pid > 0) {
        if (!ok)
            atomic_store(&ch->abort, 1);
        waitpid(pid, &status, 0);
    }
    double secs = (double)(cp_now_ns() - t0) / 1e9;
#ifdef CP_HAVE_HWLOC
    bind_to_node(topo, -1);
    if (topo) {
        /* unbind the parent again: later probes use every CPU */
        hwloc_set_cpubind(topo, hwloc_topology_get_complete_cpuset(topo), HWLOC_CPUBIND_PROCESS);
        hwloc_topology_destroy(topo);
    }
#endif
    munmap(ch, sizeof *ch);
    free(src), free(dst);
    if (!ok || pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, why_size, "the consumer process failed (status %d)", status);
        return NAN;
    }
    return (double)(blocks * SLOT_BYTES) / secs / 1e9;
}

/* GPU rows: H2D/D2H pinned and pageable per device against the PCIe peak,
 * then the P2P matrix between every ordered pair of devices. */
static int gpu_rows(probe_ctx *ctx, cp_error *err)
{
    gpu_rt *g = probe_gpu(ctx);
    if (!g)
        return 0;
    size_t bytes = ctx->opts.quick ? (64u << 20) : (256u << 20);
    int reps = probe_rounds(ctx, 3, 10);
    char metric[64], method[256], why[256];
    double v[PROBE_MAX_ROUNDS];
    rep_node *names = ctx->topology ? rep_arr(ctx->rep, ctx->topology, "gpu_devices", "GPU devices") : NULL;
    for (int d = 0; d < g->n_devices; d++) {
        char name[96];
        gpu_name(g, d, name, sizeof name);
        if (names) {
            rep_node *o = rep_obj(ctx->rep, names, NULL, NULL);
            rep_int(ctx->rep, o, "index", "index", d, NULL);
            rep_str(ctx->rep, o, "name", "name", name[0] ? name : "?");
            rep_num(ctx->rep, o, "memory_peak_gbps", "memory peak", gpu_mem_peak_gbps(g, d), "GB/s");
            rep_num(ctx->rep, o, "pcie_peak_gbps", "PCIe peak per direction", gpu_pcie_peak_gbps(g, d), "GB/s");
        }
        static const struct { int kind; bool pinned; const char *tag; } kinds[] = {
            { GPU_H2D, true, "h2d_pinned" }, { GPU_D2H, true, "d2h_pinned" },
            { GPU_H2D, false, "h2d_pageable" }, { GPU_D2H, false, "d2h_pageable" },
        };
        for (size_t k = 0; k < CP_ARRAY_LEN(kinds); k++) {
            double bw = gpu_copy_gbps_rounds(g, d, kinds[k].kind, kinds[k].pinned, bytes, reps, v, why, sizeof why);
            if (isnan(bw))
                return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "gpu %d %s copy: %s", d, kinds[k].tag, why);
            snprintf(metric, sizeof metric, "gpu%d_%s_bandwidth", d, kinds[k].tag);
            snprintf(method, sizeof method,
                     "cudaMemcpy of %zu MiB, %s host memory, median of %d after a warm-up copy; peak = PCIe max "
                     "gen x width (NVML)",
                     bytes >> 20, kinds[k].pinned ? "pinned (cudaMallocHost)" : "pageable (malloc)", reps);
            probe_emit_rounds(ctx, metric, v, (size_t)reps, PROBE_STAT_MEDIAN, "GB/s", gpu_pcie_peak_gbps(g, d),
                              method);
        }
    }
    for (int a = 0; a < g->n_devices; a++)
        for (int b = 0; b < g->n_devices; b++) {
            if (a == b)
                continue;
            double bw = gpu_p2p_gbps_rounds(g, a, b, bytes, reps, v, why, sizeof why);
            if (isnan(bw))
                return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "gpu %d -> %d peer copy: %s", a, b, why);
            snprintf(metric, sizeof metric, "p2p_bandwidth_gpu%d_gpu%d", a, b);
            snprintf(method, sizeof method,
                     "cudaMemcpyPeer of %zu MiB, peer access enabled when possible, median of %d after a warm-up copy",
                     bytes >> 20, reps);
            probe_emit_rounds(ctx, metric, v, (size_t)reps, PROBE_STAT_MEDIAN, "GB/s", NAN, method);
        }
    return 0;
}

bool probe_intra_applies(probe_ctx *ctx, char *why, size_t why_size)
{
    (void)ctx, (void)why, (void)why_size;
    return true;
}

int probe_intra_run(probe_ctx *ctx, cp_error *err)
{
#ifdef CP_HAVE_HWLOC
    if (ctx->topology)
        write_topology(ctx);
#else
    if (ctx->topology)
        rep_int(ctx->rep, ctx->topology, "pus", "hardware threads", cp_cpu_count(), NULL);
#endif
    uint64_t total = ctx->opts.size_bytes ? ctx->opts.size_bytes : ctx->opts.quick ? (256ull << 20) : (4ull << 30);
    if (total < N_SLOTS * SLOT_BYTES)
        total = N_SLOTS * SLOT_BYTES;
    char why[256], method[320];
    int nodes = numa_count(), rounds = probe_rounds(ctx, 3, 5);
    uint64_t per = total / (uint64_t)rounds;
    if (per < N_SLOTS * SLOT_BYTES)
        per = N_SLOTS * SLOT_BYTES;
    double v[PROBE_MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        if (isnan(v[r] = shm_bandwidth(per, nodes > 1 ? 0 : -1, nodes > 1 ? 0 : -1, why, sizeof why)))
            return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "shared-memory copy: %s", why);
    snprintf(method, sizeof method,
             "fork + MAP_SHARED 2 x 1 MiB slots, producer memcpy in, consumer memcpy out, %llu MiB a round, median "
             "of %d rounds, %s",
             (unsigned long long)(per >> 20), rounds, nodes > 1 ? "both on NUMA node 0" : "one NUMA node");
    probe_emit_rounds(ctx, "shm_copy_bandwidth", v, (size_t)rounds, PROBE_STAT_MEDIAN, "GB/s", NAN, method);
    if (nodes > 1) {
        for (int r = 0; r < rounds; r++)
            if (isnan(v[r] = shm_bandwidth(per, 0, nodes - 1, why, sizeof why)))
                return cp_error_set(err, CP_ERR_IO, NULL, 0, 0, -1, "cross-NUMA shared-memory copy: %s", why);
        snprintf(method, sizeof method,
                 "as shm_copy_bandwidth, producer on NUMA node 0 and consumer on node %d, median of %d rounds",
                 nodes - 1, rounds);
        probe_emit_rounds(ctx, "shm_copy_cross_numa_bandwidth", v, (size_t)rounds, PROBE_STAT_MEDIAN, "GB/s", NAN,
                          method);
    }
    return gpu_rows(ctx, err);
}
