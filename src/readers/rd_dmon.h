/* rd_dmon.h - reader for `nvidia-smi dmon` and `dcgmi dmon` output; facts in
 * src/model/ev_dmon.h.
 *
 * Both print a '#'-prefixed header naming the columns and then one row per
 * entity per sampling interval; the header is repeated every so often and
 * may differ between blocks (another -s selection or -e field list pasted
 * below). Nothing is positional: columns are whatever the headers name.
 *   - nvidia-smi dmon: "# gpu pwr gtemp mtemp sm mem enc dec ..." (older
 *     drivers: "temp" and no gtemp/mtemp), an optional unit line
 *     "# Idx W C C % % ...", optional leading "Date"/"Time" columns (-o DT);
 *     "-" marks a value the GPU does not report.
 *   - dcgmi dmon: "#Entity" or "# EntityId" then DCGM field short names
 *     (GPUTL, SMACT, SMOCC, TENSO, DRAMA, PCITX, ...); the entity spans two
 *     words ("GPU 2", and with MIG "GPU-I 1" for a GPU instance, "GPU-CI 3"
 *     for a compute instance); newer versions print an "ID" line under the
 *     header; "N/A" marks a missing value.
 * A table reader of the evidence table (evidence.h).
 */
#ifndef CP_READERS_RD_DMON_H
#define CP_READERS_RD_DMON_H

#include "evidence.h"

RD_EV_DECLARE(dmon);

#endif
