/* dmesg_log.h - reader of kernel logs (dmesg, dmesg -T, journalctl -k,
 * /var/log/syslog, /var/log/kern.log) for GPU and PCIe faults; facts in
 * src/model/ev_dmesg.h.
 *
 * Extracts: NVIDIA Xid events ("NVRM: Xid (PCI:0000:3b:00): 79, pid=...,
 * GPU has fallen off the bus."), the multi-line "has fallen off the bus and is
 * not responding to commands" message that newer drivers print without an Xid
 * line, PCIe AER reports (corrected / non-fatal / fatal, with the device),
 * and the kernel OOM killer ("Out of memory: Killed process N (python)").
 * What an Xid means is the rule book's (an_rules_kernel.c). A scan reader
 * of the evidence table (evidence.h).
 */
#ifndef CP_READERS_DMESG_LOG_H
#define CP_READERS_DMESG_LOG_H

#include "evidence.h"

RD_EV_DECLARE(dmesg);

#endif
