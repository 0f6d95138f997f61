/* rd_iperf.h - reader for iperf3 text output (client and server side); facts
 * in src/model/ev_iperf.h.
 *
 * What is read: the interval rows "[  4]   0.00-1.00   sec  2.16 GBytes
 * 18.6 Gbits/sec    1    728 KBytes" (client rows with Retr and Cwnd, server
 * rows without; "[SUM]" rows of parallel streams), the final summary rows
 * ending in "sender" / "receiver", and the connection lines ("Connecting to
 * host H, port P", "[  4] local A port P connected to B port Q", "Accepted
 * connection from H, port P"). Both column headers parse (older iperf3 says
 * "Bandwidth", newer "Bitrate"); rows are recognised by shape, so an excerpt
 * that starts mid-run still reads. A new "Connecting"/"Accepted"/"Server
 * listening" line starts a new section (a pasted server log followed by the
 * client's).
 *
 * Units: transfer in bytes (iperf3's KBytes/MBytes/GBytes are 1024-based),
 * rates in bits/s (its Kbits/Mbits/Gbits are 1000-based), times in seconds.
 * A table reader of the evidence table (evidence.h).
 */
#ifndef CP_READERS_RD_IPERF_H
#define CP_READERS_RD_IPERF_H

#include "evidence.h"

RD_EV_DECLARE(iperf);

#endif
