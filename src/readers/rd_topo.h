/* rd_topo.h - reader for `nvidia-smi topo -m` matrices; facts in
 * src/model/ev_topo.h.
 *
 * What is read: the header row naming the devices (GPU<n>, NIC<n>, or, in
 * drivers before the NIC legend, the RDMA name such as mlx5_0) and the
 * trailing affinity columns ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID");
 * one row per device with its path class to every other device: X (self),
 * NV<n> (n bonded NVLinks), PIX, PXB, PHB, NODE, SYS (SOC in old drivers);
 * the CPU and NUMA affinity cells of GPU rows; the "NIC Legend" mapping NIC<n>
 * to device names. Both layouts nvidia-smi prints parse: tab-separated with
 * empty cells, and space-aligned. A table reader of the evidence table.
 *
 * rd_topo_fill turns the matrix into the topology model (topo.h): one host,
 * its NUMA nodes (from the NUMA affinity, with the CPU list), GPUs, NICs and
 * one link per device pair with the path class. A NIC's NUMA node, which
 * topo -m leaves blank, is taken from a GPU it reaches without crossing the
 * inter-socket link (PIX/PXB/PHB/NODE); it stays unknown otherwise.
 */
#ifndef CP_READERS_RD_TOPO_H
#define CP_READERS_RD_TOPO_H

#include "../base/error.h"
#include "../model/topo.h"
#include "evidence.h"

RD_EV_DECLARE(topo);

/* Add the matrix read from `source` to t as host `host` (e.g. the hostname;
 * NULL -> "localhost"). Returns 0, or CP_ERR_NOMEM when a model cap is
 * reached. */
int rd_topo_fill(const ev_topo *m, const char *source, topo *t, const char *host, cp_error *err);

#endif
