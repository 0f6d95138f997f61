/* rd_monitor.h - reader of `chainprof monitor --json-lines` files (schema
 * chainprof.monitor/1, one JSON object per sample); facts in
 * src/model/ev_counters.h: each GPU's PCIe replay, uncorrected ECC and Xid
 * counters and each InfiniBand / RoCE port's error counters over the file,
 * and the ports' rates from the last sample. So `chainprof diagnose
 * node.jsonl` raises the counter alerts the live monitor raised (rule
 * family "counters"); the GPU utilisation rules read dmon output instead.
 * A line that is not a monitor sample (damaged, cut) is counted as
 * evidence_bad_row and skipped. A table reader (evidence.h).
 */
#ifndef CP_READERS_RD_MONITOR_H
#define CP_READERS_RD_MONITOR_H

#include "evidence.h"

RD_EV_DECLARE(monitor);

#endif
