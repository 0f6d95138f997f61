/* dmesg_log.h - reader of kernel logs (dmesg, dmesg -T, journalctl -k,
 * /var/log/syslog, /var/log/kern.log) for GPU and PCIe faults.
 *
 * Extracts: NVIDIA Xid events ("NVRM: Xid (PCI:0000:3b:00): 79, pid=...,
 * GPU has fallen off the bus."), the multi-line "has fallen off the bus and is
 * not responding to commands" message that newer drivers print without an Xid
 * line, PCIe AER reports (corrected / non-fatal / fatal, with the device),
 * and the kernel OOM killer ("Out of memory: Killed process N (python)").
 *
 * The Xid table (rd_xid_lookup) carries NVIDIA's documented meaning of each
 * code the diagnose issue lists (13, 31, 43, 45, 48, 61-64, 68, 69, 74, 79,
 * 92, 94, 95, 109, 119-121, 140, 143, 144-150), the bucket it belongs to,
 * and the action NVIDIA's Xid catalog recommends, in our own words.
 *
 * Use like nccl_log.h: init, line per line, finish. Plain data owned by the
 * caller; `file` is borrowed; fixed caps with a dropped counter.
 */
#ifndef CP_READERS_DMESG_LOG_H
#define CP_READERS_DMESG_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "log_prefix.h"

#define RD_DMESG_TEXT_MAX 200
#define RD_DMESG_MAX_ITEMS 32

typedef struct rd_dmesg_at {
    long line;
    rd_time ts;
    char host[64]; /* syslog host; "" */
    char text[RD_DMESG_TEXT_MAX];
} rd_dmesg_at;

/* One row of the Xid table. `bucket` groups codes that lead to the same
 * verdict (it is the verdict code the diagnose rules use). */
typedef struct rd_xid_info {
    int code;
    const char *meaning; /* what NVIDIA documents the Xid to mean */
    const char *bucket;  /* "gpu_fell_off_bus", "gpu_ecc_uncorrectable", ... */
    const char *cause;   /* "hardware", "application", "driver/firmware", ... */
    const char *action;  /* what to do first */
    double weight;       /* how strongly it explains a job failure, 0..1 */
} rd_xid_info;

/* The documented row for `code`, or NULL for codes the table lacks. */
const rd_xid_info *rd_xid_lookup(int code);

typedef struct rd_dmesg_xid {
    int code;
    char pci[24];   /* "0000:3b:00" as printed; "" */
    long pid;       /* "pid=1234" or "pid: 1234"; -1 */
    rd_dmesg_at at;
} rd_dmesg_xid;

typedef struct rd_dmesg_bus { /* fallen off the bus without an Xid line */
    char pci[24];
    rd_dmesg_at at;
} rd_dmesg_bus;

typedef enum rd_aer_severity { RD_AER_CORRECTED = 0, RD_AER_NONFATAL, RD_AER_FATAL } rd_aer_severity;

typedef struct rd_dmesg_aer {
    int severity;   /* rd_aer_severity */
    char device[24]; /* BDF of the reporting/erring device */
    char type[32];  /* "Physical Layer", "Transaction Layer", "Data Link Layer" */
    rd_dmesg_at at;
} rd_dmesg_aer;

typedef struct rd_dmesg_oomkill {
    long pid;
    char comm[32];
    rd_dmesg_at at;
} rd_dmesg_oomkill;

typedef struct rd_dmesg_facts {
    const char *file; /* borrowed */
    long lines;
    long kernel_lines; /* lines with a kernel time/tag or an NVRM/AER marker */
    int n_xids;
    int n_bus;
    int n_aer;
    long aer_total[3]; /* per severity, including those past the cap */
    int n_oomkills;
    long dropped;
    rd_keyset keys_;   /* private: phrases looked for, one pass per line */
    /* private: last "The NVIDIA GPU <bdf>" seen, for the multi-line message */
    char last_gpu_[24];
    long last_gpu_line_;
    /* arrays last: only [0, n_x) is ever written or read (init skips them) */
    rd_dmesg_xid xids[RD_DMESG_MAX_ITEMS];
    rd_dmesg_bus bus[RD_DMESG_MAX_ITEMS];
    rd_dmesg_aer aer[RD_DMESG_MAX_ITEMS];
    rd_dmesg_oomkill oomkills[RD_DMESG_MAX_ITEMS];
} rd_dmesg_facts;

void rd_dmesg_init(rd_dmesg_facts *f, const char *file);
void rd_dmesg_line(rd_dmesg_facts *f, const char *line, size_t len, long lineno);
void rd_dmesg_line_pfx(rd_dmesg_facts *f, const rd_prefix *pfx, const char *line, size_t len,
                       long lineno);
void rd_dmesg_finish(rd_dmesg_facts *f);
void rd_dmesg_parse_buf(rd_dmesg_facts *f, const char *file, const char *buf, size_t len);

const char *rd_aer_severity_name(int s);

#endif
