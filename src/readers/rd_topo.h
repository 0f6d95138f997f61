/* rd_topo.h - reader for `nvidia-smi topo -m` matrices.
 *
 * What is read: the header row naming the devices (GPU<n>, NIC<n>, or, in
 * drivers before the NIC legend, the RDMA name such as mlx5_0) and the
 * trailing affinity columns ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID");
 * one row per device with its path class to every other device: X (self),
 * NV<n> (n bonded NVLinks), PIX, PXB, PHB, NODE, SYS (SOC in old drivers);
 * the CPU and NUMA affinity cells of GPU rows; the "NIC Legend" mapping NIC<n>
 * to device names. Both layouts nvidia-smi prints parse: tab-separated with
 * empty cells, and space-aligned.
 *
 * rd_topo_fill turns the matrix into the topology model (topo.h): one host,
 * its NUMA nodes (from the NUMA affinity, with the CPU list), GPUs, NICs and
 * one link per device pair with the path class. A NIC's NUMA node, which
 * topo -m leaves blank, is taken from a GPU it reaches without crossing the
 * inter-socket link (PIX/PXB/PHB/NODE); it stays unknown otherwise.
 *
 * Ownership: rd_topo_parse's result owns its arrays; free with rd_topo_free.
 */
#ifndef CP_READERS_RD_TOPO_H
#define CP_READERS_RD_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "../model/topo.h"
#include "../model/report.h"
#include "rd_text.h"

#define RD_TOPO_MAX_DEVICES 512

typedef struct rd_topo_dev {
    char label[24];       /* as in the matrix: "GPU0", "NIC3", "mlx5_0" */
    char name[48];        /* from the NIC legend ("mlx5_3"); label otherwise */
    int is_gpu;
    int index;            /* n of GPU<n>/NIC<n>; position among NICs otherwise */
    char cpu_affinity[128]; /* "" when blank or N/A */
    int numa_affinity;    /* -1 when blank or N/A */
    int gpu_numa_id;      /* -1 when absent or N/A */
    uint32_t line;        /* line of the device's row; 0 when it has none */
    uint32_t legend_line; /* line of its NIC legend entry; 0 none */
} rd_topo_dev;

typedef struct rd_topo_cell {
    topo_link_kind kind;  /* TOPO_LINK_UNKNOWN for self and unread cells */
    int lanes;            /* NV<n> -> n */
} rd_topo_cell;

typedef struct rd_topo {
    char *name;
    rd_topo_dev *devs;
    size_t n_devs;
    rd_topo_cell *cells;  /* n_devs * n_devs, row-major: cells[row * n + col] */
    int n_gpus, n_nics;
    uint32_t header_line;
    int tab_separated;
    int has_nic_legend;
    diag_set diag;   /* counted damage, "file:line" of the first of each code */
} rd_topo;

int rd_topo_sniff(const char *buf, size_t len);

/* Fails (CP_ERR_FORMAT) when no header row with device columns is found. */
int rd_topo_parse(const char *data, size_t len, const char *name, rd_topo **out, cp_error *err);

void rd_topo_free(rd_topo *m);

/* The facts analyze reports for this file (evidence[] entry), each with its
 * line, added to obj (evidence_report.c). */
void rd_topo_report(const rd_topo *facts, rep_report *r, rep_node *obj);

/* Cell between devices i and j. */
const rd_topo_cell *rd_topo_cell_at(const rd_topo *m, size_t i, size_t j);

/* Index of device by label ("GPU3"), or -1. */
int rd_topo_find(const rd_topo *m, const char *label);

/* For device i, the NIC with the closest path (lowest topo_link_kind_rank),
 * or -1 when there is no NIC. *kind gets that path's class. */
int rd_topo_nearest_nic(const rd_topo *m, size_t i, topo_link_kind *kind);

/* Add the matrix to t as host `host` (e.g. the hostname; NULL -> "localhost").
 * Returns 0, or CP_ERR_NOMEM when a model cap is reached. */
int rd_topo_fill(const rd_topo *m, topo *t, const char *host, cp_error *err);

#endif
