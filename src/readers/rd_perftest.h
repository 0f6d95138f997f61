/* rd_perftest.h - reader for perftest output (ib_write_bw, ib_read_bw,
 * ib_send_bw, ib_atomic_bw and their *_lat siblings); facts in
 * src/model/ev_perftest.h.
 *
 * A file may hold several runs (a shell session pasted whole). Each run is a
 * banner ("RDMA_Write BW Test", "Send Latency Test"), a block of
 * "key : value" settings (two per line in most versions, tab or space
 * separated), the QP address lines, one results header and its rows. A
 * results header without a banner (an excerpt) opens a run of its own, and
 * a table pasted as comments ("# #bytes ...", "# 1048576 5000 ...") reads.
 *
 * The results header drives the columns, so both families parse:
 *   - bandwidth: #bytes #iterations BW peak[U] BW average[U] MsgRate[Mpps]
 *     with U one of Gb/sec (--report_gbits, decimal gigabits), MB/sec (older
 *     perftest; MB there is 2^20 bytes) or MiB/sec (newer perftest, same unit);
 *   - latency: #bytes #iterations t_min t_max t_typical [t_avg t_stdev
 *     99% percentile 99.9% percentile], all [usec].
 * Lines that are not rows (CPU frequency warnings, shell prompts) are
 * skipped. A table reader of the evidence table (evidence.h).
 */
#ifndef CP_READERS_RD_PERFTEST_H
#define CP_READERS_RD_PERFTEST_H

#include "evidence.h"

RD_EV_DECLARE(perftest);

#endif
