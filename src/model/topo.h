/* topo.h - the topology model: what the machine (or cluster) is.
 *
 * Filled from several places that each know part of the picture:
 * `nvidia-smi topo -m` (GPUs, NICs, path classes between them, CPU/NUMA
 * affinity), probes (measured bandwidth and latency), NCCL logs (NICs, GDR,
 * transports), the hardware catalog (rated bandwidths). So every field a
 * source may not know has an explicit "unknown" (-1, NaN, ""), and adding a
 * host, NUMA node, GPU, NIC or link that already exists returns the existing
 * one, which a later source may refine.
 *
 * Entities live in flat arrays and refer to each other by index (host,
 * NUMA node, socket); links join two endpoints given as {type, index}. A link
 * is the path between two devices as the source describes it: for topo -m it
 * is nvidia-smi's path class (NV#, PIX, PXB, PHB, NODE, SYS), not a single
 * physical cable. Links are undirected and unique per endpoint pair.
 *
 * Units: bandwidth_gbps is GB/s (1e9 bytes per second, one direction), the
 * unit nccl-tests' busbw uses, so rules compare them directly; latency_us in
 * microseconds. NaN = unknown (null in JSON).
 *
 * Provenance: every entity and link carries a source {file, line}, file being
 * an index into topo.sources (the names of the inputs), line 0 when unknown.
 *
 * The model is saved as JSON ("chainprof.topo/1", see docs/FORMATS.md) and
 * loaded again with topo_from_json, so a topology captured on a cluster can
 * be planned against on a laptop.
 *
 * Ownership: topo_new returns a model the caller frees with topo_free; all
 * strings are fixed-size fields inside the entities (truncated when longer).
 * Caps: TOPO_MAX_ITEMS entities of each kind and links (further adds fail).
 */
#ifndef CP_MODEL_TOPO_H
#define CP_MODEL_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "../base/buf.h"
#include "../base/error.h"
#include "../base/jsonw.h"

#define TOPO_MAX_ITEMS 65536

/* X(enum, "json key", "meaning"); the order is from closest to farthest for
 * the PCIe/SMP classes, which topo_link_kind_rank exposes. */
#define TOPO_LINK_KINDS(X)                                                        \
    X(TOPO_LINK_UNKNOWN, "unknown", "path of unknown kind")                       \
    X(TOPO_LINK_NVLINK, "nvlink", "a bonded set of NVLinks (NV# in topo -m)")     \
    X(TOPO_LINK_PIX, "pix", "PCIe through at most one bridge")                    \
    X(TOPO_LINK_PXB, "pxb", "PCIe through several bridges, no host bridge")       \
    X(TOPO_LINK_PHB, "phb", "PCIe through a host bridge (the CPU)")               \
    X(TOPO_LINK_NODE, "node", "PCIe plus the interconnect between host bridges of one NUMA node") \
    X(TOPO_LINK_SYS, "sys", "PCIe plus the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)")  \
    X(TOPO_LINK_NET, "net", "a network link between hosts (InfiniBand, RoCE, Ethernet)")

typedef enum topo_link_kind {
#define TOPO_LINK_ENUM(e, k, d) e,
    TOPO_LINK_KINDS(TOPO_LINK_ENUM)
#undef TOPO_LINK_ENUM
    TOPO_LINK__COUNT
} topo_link_kind;

typedef enum topo_ep_type {
    TOPO_EP_HOST = 0,
    TOPO_EP_NUMA,
    TOPO_EP_GPU,
    TOPO_EP_NIC,
    TOPO_EP__COUNT
} topo_ep_type;

typedef struct topo_src {
    int32_t file;   /* index into topo.sources; -1 none */
    uint32_t line;  /* 1-based; 0 unknown */
} topo_src;

typedef struct topo_ref {
    topo_ep_type type;
    uint32_t index;  /* into the array of that type */
} topo_ref;

typedef struct topo_host {
    char name[96];
    topo_src src;
} topo_host;

typedef struct topo_socket {
    uint32_t host;
    int id;            /* OS physical package id */
    topo_src src;
} topo_socket;

typedef struct topo_numa {
    uint32_t host;
    int id;            /* OS NUMA node id */
    int socket;        /* index into sockets; -1 unknown */
    char cpus[128];    /* CPU list as the OS prints it, "48-63,176-191"; "" unknown */
    topo_src src;
} topo_numa;

typedef struct topo_gpu {
    uint32_t host;
    int index;         /* device index on its host (GPU3 -> 3) */
    char name[96];     /* "NVIDIA H100 80GB HBM3"; "" unknown */
    char pci_bus[32];  /* "0000:04:00"; "" unknown */
    int numa;          /* index into numa_nodes; -1 unknown */
    char cpu_affinity[128];
    topo_src src;
} topo_gpu;

typedef struct topo_nic {
    uint32_t host;
    char name[48];     /* RDMA or netdev name, "mlx5_0" */
    char label[16];    /* the name topo -m used, "NIC0"; "" none */
    int numa;          /* index into numa_nodes; -1 unknown */
    double port_gbps;  /* GB/s of one port, NaN unknown */
    topo_src src;
} topo_nic;

typedef struct topo_link {
    topo_link_kind kind;
    topo_ref a, b;
    int lanes;             /* NVLink count for NV#; 0 otherwise */
    double bandwidth_gbps; /* GB/s one direction; NaN unknown */
    double latency_us;     /* NaN unknown */
    topo_src src;
} topo_link;

typedef struct topo {
    char **sources; size_t n_sources, cap_sources;
    topo_host *hosts; size_t n_hosts, cap_hosts;
    topo_socket *sockets; size_t n_sockets, cap_sockets;
    topo_numa *numa_nodes; size_t n_numa, cap_numa;
    topo_gpu *gpus; size_t n_gpus, cap_gpus;
    topo_nic *nics; size_t n_nics, cap_nics;
    topo_link *links; size_t n_links, cap_links;
} topo;

/* A new empty model (aborts on out of memory, cp_xmalloc policy). Free with
 * topo_free (NULL is fine). */
topo *topo_new(void);
void topo_free(topo *t);

const char *topo_link_kind_key(topo_link_kind k);
const char *topo_link_kind_what(topo_link_kind k);
/* TOPO_LINK_UNKNOWN for an unknown key. */
topo_link_kind topo_link_kind_from_key(const char *key);
/* 0 for NVLink, then PIX < PXB < PHB < NODE < SYS < NET; larger is farther.
 * Unknown ranks last. */
int topo_link_kind_rank(topo_link_kind k);

/* Index of the source name (added when new); -1 when the cap is reached. */
int32_t topo_add_source(topo *t, const char *name);

/* Each add returns the index of the entity (existing one when the key
 * matches: host name; host+socket id; host+numa id; host+gpu index; host+nic
 * name), or -1 when the cap is reached. src is recorded when new. */
int topo_add_host(topo *t, const char *name, topo_src src);
int topo_add_socket(topo *t, uint32_t host, int id, topo_src src);
int topo_add_numa(topo *t, uint32_t host, int id, topo_src src);
int topo_add_gpu(topo *t, uint32_t host, int index, topo_src src);
int topo_add_nic(topo *t, uint32_t host, const char *name, topo_src src);

/* Add or update the link between a and b (either order). Returns its index
 * or -1 (cap reached, or an endpoint that does not exist). */
int topo_add_link(topo *t, topo_link_kind kind, topo_ref a, topo_ref b, int lanes,
                  double bandwidth_gbps, double latency_us, topo_src src);

/* The link between a and b (either order), or NULL. */
const topo_link *topo_find_link(const topo *t, topo_ref a, topo_ref b);

/* Write the model as one "chainprof.topo/1" JSON object (for embedding in a
 * report envelope) / append it as a whole document (with a final newline) to
 * out, which the caller owns. */
void topo_write_json(const topo *t, cp_jw *w);
void topo_to_json(const topo *t, cp_buf *out);

/* Parse JSON written by topo_to_json (unknown keys ignored, so later
 * versions with added keys still load). On success *out is a new model the
 * caller frees. Errors name the byte offset and what was expected. */
int topo_from_json(const char *json, size_t len, const char *name, topo **out, cp_error *err);

#endif
