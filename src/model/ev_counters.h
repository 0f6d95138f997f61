/* ev_counters.h - facts of hardware counters sampled over a window: how
 * each error counter of a device moved between its first and last sample
 * (PCIe replays of a GPU, symbol errors and downed links of an InfiniBand
 * port, ...), and the links with the rate they trained at. Filled by
 * `chainprof monitor` from its recent samples (src/monitor/mon_evidence.c)
 * so its alerts come from the rule book (src/analysis/an_rules_counters.c)
 * like every finding of analyze and diagnose.
 *
 * A series' `line` is the 1-based sample of the window where the counter
 * first rose (0: it did not), what a finding cites as FILE:LINE. Units:
 * counts as the device counts them, seconds, Gbit/s. The struct owns its
 * arrays: ev_counters_free.
 */
#ifndef CP_MODEL_EV_COUNTERS_H
#define CP_MODEL_EV_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_COUNTERS_MAX 4096

/* The counters the rules know, by key. */
#define EV_CTR_PCIE_REPLAY "pcie_replay"       /* GPU: NVML PCIe replay counter */
#define EV_CTR_ECC_UNCORRECTED "ecc_uncorrected" /* GPU: volatile uncorrected ECC errors */
#define EV_CTR_XID "xid"                       /* GPU: Xid critical error events */
#define EV_CTR_SYMBOL_ERROR "symbol_error"     /* IB/RoCE port */
#define EV_CTR_LINK_DOWNED "link_downed"       /* IB/RoCE port */
#define EV_CTR_RCV_ERRORS "port_rcv_errors"    /* IB/RoCE port */

typedef struct ev_counter {
    char entity[96];     /* "GPU 1", "mlx5_0 port 1" */
    char key[32];        /* EV_CTR_* */
    double first, last;  /* the counter at the window's first and last sample */
    double seconds;      /* between those samples */
    int64_t t_first_ns, t_last_ns; /* when they were taken (any one clock) */
    uint32_t n_samples;
    uint32_t line;       /* the sample where it first rose; 0 none */
    double last_value;   /* a value the counter's event carried (the last Xid); NaN */
} ev_counter;

typedef struct ev_link {
    char entity[96];     /* "mlx5_0 port 1", "eth0" */
    char link_layer[16]; /* "InfiniBand", "Ethernet" */
    char state[24];      /* "ACTIVE" */
    double rate_gbit_s;  /* NaN unknown */
    uint32_t line;       /* the sample it was read in */
} ev_link;

typedef struct ev_counters {
    char source[64];     /* "chainprof monitor" */
    uint32_t n_window;   /* samples in the window */
    ev_counter *v;
    size_t n, cap;
    ev_link *links;
    size_t n_links, cap_links;
} ev_counters;

/* One sample of a counter, in time order: the series of (entity, key) is
 * found or started, its first/last values, times and the sample where it
 * first rose updated (line: the 1-based sample). The one definition of "a
 * counter rose" that the monitor's window and the JSON-lines reader share.
 * false past EV_COUNTERS_MAX series. */
bool ev_counters_observe(ev_counters *c, const char *entity, const char *key, double value, int64_t t_ns,
                         uint32_t line);
/* Append a link (copied); false past EV_COUNTERS_MAX. */
bool ev_counters_add_link(ev_counters *c, const ev_link *l);
/* The link of entity (to update it with a later sample), or NULL. */
ev_link *ev_counters_link(ev_counters *c, const char *entity);
void ev_counters_free(ev_counters *c);
void ev_counters_report(const ev_counters *c, rep_report *r, rep_node *obj);

#endif
