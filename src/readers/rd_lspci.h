/* rd_lspci.h - reader of `lspci -vv` output, whole or the lines people paste
 * (LnkCap, LnkSta, ACSCtl); facts in src/model/ev_lspci.h.
 *
 * A device starts at an unindented "41:00.0 PCI bridge: ..." (or
 * "0000:41:00.0 ...") line; its capability lines follow, indented.
 * "LnkCap: Port #0, Speed 8GT/s, Width x16", "LnkSta: Speed 8GT/s (ok),
 * Width x8 (downgraded)" and "ACSCtl: SrcValid+ TransBlk- ReqRedir+
 * CmpltRedir+ UpstreamFwd+ ..." are read; a "+" on SrcValid, ReqRedir or
 * CmpltRedir means ACS is redirecting peer-to-peer requests (through the
 * root complex / IOMMU). Lines may carry a "# " a person added. An excerpt
 * without a device line gets one anonymous device. A table reader of the
 * evidence table (evidence.h).
 */
#ifndef CP_READERS_RD_LSPCI_H
#define CP_READERS_RD_LSPCI_H

#include "evidence.h"

RD_EV_DECLARE(lspci);

#endif
