/* ev_dmesg.h - facts of a kernel log (dmesg, dmesg -T, journalctl -k,
 * /var/log/syslog, kern.log) about GPUs and PCIe: NVIDIA Xid events, the
 * "has fallen off the bus" message newer drivers print without an Xid, PCIe
 * AER reports by severity, and the kernel OOM killer.
 *
 * Filled by src/readers/dmesg_log.c; what each Xid means is the rule book's
 * (src/analysis/an_rules_kernel.c, from NVIDIA's Xid catalog). Fixed caps with
 * a dropped counter. Plain data (ev_dmesg_free).
 */
#ifndef CP_MODEL_EV_DMESG_H
#define CP_MODEL_EV_DMESG_H

#include <stdbool.h>

#include "ev_base.h"
#include "report.h"

#define EV_DMESG_MAX_ITEMS 32

typedef struct ev_dmesg_xid {
    int code;
    char pci[24];   /* "0000:3b:00" as printed; "" */
    long pid;       /* "pid=1234" or "pid: 1234"; -1 */
    ev_at at;
} ev_dmesg_xid;

typedef struct ev_dmesg_bus { /* fallen off the bus without an Xid line */
    char pci[24];
    ev_at at;
} ev_dmesg_bus;

typedef enum ev_aer_severity { EV_AER_CORRECTED = 0, EV_AER_NONFATAL, EV_AER_FATAL } ev_aer_severity;
const char *ev_aer_severity_name(int s);

typedef struct ev_dmesg_aer {
    int severity;    /* ev_aer_severity */
    char device[24]; /* BDF of the reporting/erring device */
    char type[32];   /* "Physical Layer", "Transaction Layer", "Data Link Layer" */
    ev_at at;
} ev_dmesg_aer;

typedef struct ev_dmesg_oomkill {
    long pid;
    char comm[32];
    ev_at at;
} ev_dmesg_oomkill;

typedef struct ev_dmesg {
    long lines;
    long kernel_lines; /* lines with a kernel time/tag or an NVRM/AER marker */
    int n_xids;
    int n_bus;
    int n_aer;
    long aer_total[3]; /* per severity, including those past the cap */
    int n_oomkills;
    long dropped;
    /* arrays last: only [0, n_x) is ever written or read */
    ev_dmesg_xid xids[EV_DMESG_MAX_ITEMS];
    ev_dmesg_bus bus[EV_DMESG_MAX_ITEMS];
    ev_dmesg_aer aer[EV_DMESG_MAX_ITEMS];
    ev_dmesg_oomkill oomkills[EV_DMESG_MAX_ITEMS];
} ev_dmesg;

bool ev_dmesg_any(const ev_dmesg *f);
void ev_dmesg_free(ev_dmesg *f);
void ev_dmesg_report(const ev_dmesg *f, rep_report *r, rep_node *obj);

#endif
