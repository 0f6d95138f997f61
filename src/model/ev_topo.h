/* ev_topo.h - facts of an `nvidia-smi topo -m` matrix: the devices (GPU<n>,
 * NIC<n>, or RDMA names in old drivers) with their CPU/NUMA affinity, the
 * path class of every device pair (NV<n>, PIX, PXB, PHB, NODE, SYS), the
 * NIC legend, and the peer-to-peer status of a `nvidia-smi topo -p2p`
 * matrix (alone or after the -m matrix). Filled by src/readers/rd_topo.c (which also fills the topology
 * model from it). The struct owns its arrays: free with ev_topo_free.
 */
#ifndef CP_MODEL_EV_TOPO_H
#define CP_MODEL_EV_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "topo.h"

#define EV_TOPO_MAX_DEVICES 512

typedef struct ev_topo_dev {
    char label[24];       /* as in the matrix: "GPU0", "NIC3", "mlx5_0" */
    char name[48];        /* from the NIC legend ("mlx5_3"); label otherwise */
    int is_gpu;
    int index;            /* n of GPU<n>/NIC<n>; position among NICs otherwise */
    char cpu_affinity[128]; /* "" when blank or N/A */
    int numa_affinity;    /* -1 when blank or N/A */
    int gpu_numa_id;      /* -1 when absent or N/A */
    uint32_t line;        /* line of the device's row; 0 when it has none */
    uint32_t legend_line; /* line of its NIC legend entry; 0 none */
} ev_topo_dev;

/* `nvidia-smi topo -p2p r|w|n|a` status of a pair (its legend). */
typedef enum ev_topo_p2p {
    EV_TOPO_P2P_UNKNOWN = 0, /* no -p2p matrix, or self */
    EV_TOPO_P2P_OK,          /* OK  = Status Ok */
    EV_TOPO_P2P_CNS,         /* CNS = Chipset not supported */
    EV_TOPO_P2P_GNS,         /* GNS = GPU not supported */
    EV_TOPO_P2P_TNS,         /* TNS = Topology not supported */
    EV_TOPO_P2P_NS,          /* NS  = Not supported */
    EV_TOPO_P2P_DR,          /* DR  = Disabled by regkey */
    EV_TOPO_P2P_U,           /* U   = Unknown */
} ev_topo_p2p;
const char *ev_topo_p2p_key(int s); /* "OK", "CNS", ... as printed */

typedef struct ev_topo_cell {
    topo_link_kind kind;  /* TOPO_LINK_UNKNOWN for self and unread cells */
    int lanes;            /* NV<n> -> n */
    int p2p;              /* ev_topo_p2p, from a topo -p2p matrix of the same devices */
} ev_topo_cell;

typedef struct ev_topo {
    ev_topo_dev *devs;
    size_t n_devs;
    ev_topo_cell *cells;  /* n_devs * n_devs, row-major: cells[row * n + col] */
    int n_gpus, n_nics;
    uint32_t header_line;
    int tab_separated;
    int has_nic_legend;
    uint32_t p2p_line;    /* first row of a topo -p2p matrix; 0 none */
} ev_topo;

/* Cell between devices i and j. */
const ev_topo_cell *ev_topo_cell_at(const ev_topo *m, size_t i, size_t j);
/* The cell for a pair, from either row (a pasted matrix may lack one). */
ev_topo_cell ev_topo_pair(const ev_topo *m, size_t i, size_t j);
/* Index of device by label ("GPU3"), or -1. */
int ev_topo_find(const ev_topo *m, const char *label);
/* For device i, the NIC with the closest path (lowest topo_link_kind_rank),
 * or -1 when there is no NIC. *kind gets that path's class. */
int ev_topo_nearest_nic(const ev_topo *m, size_t i, topo_link_kind *kind);

void ev_topo_free(ev_topo *m);
void ev_topo_report(const ev_topo *m, rep_report *rp, rep_node *obj);

#endif
