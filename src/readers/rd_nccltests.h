/* rd_nccltests.h - reader for nccl-tests and rccl-tests output
 * (all_reduce_perf & co.); facts in src/model/ev_nccltests.h.
 *
 * One file may hold several runs (a script that runs every *_perf binary in
 * turn, or a job log with one run per size sweep); each run is a header block
 * ("# nThread ..." parameters, "# Using devices" with one line per rank), a
 * column header, rows, and the "# Avg bus bandwidth" summary. NCCL INFO lines
 * interleaved with the table (NCCL_DEBUG=INFO) are skipped here and read by
 * the NCCL log reader from the same input.
 *
 * The table is read against its own column header, not fixed positions, so
 * every column set seen in the wild parses:
 *   - old (nccl-tests <= 2.10): "error" columns with a max-error value, no
 *     "root" column for all_reduce/reduce_scatter/all_gather;
 *   - new: "#wrong" columns with a count of wrong elements, "redop" and "root"
 *     on every collective (all_gather prints "none"/-1);
 *   - per-op variations: all_gather without redop, broadcast with only root;
 *   - rccl-tests (ROCm): the same table, "rccl-tests: Version ..." banner,
 *     device lines without "Group" and with a full PCI address.
 * The first time/algbw/busbw/(error|#wrong) group is out-of-place, the second
 * is in-place. "N/A" cells are unknown, not errors; a trailing "*" marks an
 * error above the test's threshold. A table reader of the evidence table.
 */
#ifndef CP_READERS_RD_NCCLTESTS_H
#define CP_READERS_RD_NCCLTESTS_H

#include "../base/error.h"
#include "../model/topo.h"
#include "evidence.h"

RD_EV_DECLARE(nccltests);

/* Add the hosts and GPUs of every run's device list ("on HOST device D
 * [BUS] NAME") to the topology model, with their lines as provenance (source:
 * the file they came from). GPUs already there (same host and index) get the
 * name and bus filled when they had none. Returns 0, or CP_ERR_NOMEM when a
 * model cap is reached. */
int rd_nt_fill_topo(const ev_nccltests *r, const char *source, topo *t, cp_error *err);

#endif
