/* mon.h - `chainprof monitor`: live samples of the five layers.
 *
 * One sample (mon_take) holds, read at one moment:
 *   host     /proc/stat, loadavg, PSI, meminfo (base/sysstat)
 *   storage  /proc/diskstats per device (base/sysstat)
 *   network  /proc/net/dev per interface and its link speed
 *            (/sys/class/net/IF/speed), and every InfiniBand / RoCE port
 *            under /sys/class/infiniband with the counters of model/ib_counters.def
 *   GPU      each GPU through NVML (gpu/gpu_nvml.h): utilisation, SM clock
 *            and throttle reasons, memory, power, temperature, PCIe and
 *            NVLink throughput, PCIe replays, ECC, row remapping, Xid events
 * Every /proc and /sys path goes through the monitor's cp_fsroot, so the
 * tests replay captured trees (tests/fixtures/fsroot) with the fake NVML.
 *
 * What is done with samples lives beside this: mon_prom.c (the Prometheus
 * text exposition of one sample), mon_json.c (one JSON line per sample,
 * with the rates since the previous one), mon_http.c (the /metrics
 * endpoint), mon_evidence.c (a window of samples as evidence facts, so the
 * alerts come from the rule book that `analyze` and `diagnose` run).
 *
 * Ownership: a mon owns its NVML handle; a mon_sample owns its arrays and
 * reuses them on the next mon_take (periodic sampling allocates nothing
 * once they are sized). Free both.
 */
#ifndef CP_MONITOR_MON_H
#define CP_MONITOR_MON_H

#include "../base/buf.h"
#include "../base/error.h"
#include "../base/fsroot.h"
#include "../base/sysstat.h"
#include "../gpu/gpu_nvml.h"
#include "../model/evidence.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
#define X(id, dir, file, scale, metric, help) MON_IB_##id,
#include "../model/ib_counters.def"
#undef X
    MON_IB_N
};

#define MON_MAX_IB_PORTS 256

typedef struct mon_ib_port {
    char dev[64];          /* "mlx5_0" */
    unsigned port;         /* 1-based, as sysfs names it */
    char link_layer[16];   /* "InfiniBand", "Ethernet" (RoCE) */
    char state[24];        /* "ACTIVE", "DOWN" (the text after "4: ") */
    double rate_gbit_s;    /* the "rate" file: "400 Gb/sec (4X NDR)"; NaN unknown */
    uint64_t c[MON_IB_N];  /* raw counters, before their scale */
    uint32_t have;         /* bit per MON_IB_* read */
} mon_ib_port;

typedef struct mon_sample {
    int64_t wall_ns;       /* CLOCK_REALTIME when taken */
    cp_ss_sample ss;       /* host, storage, /proc/net/dev (mono_ns inside) */
    double *net_speed_mbit_s; /* per ss.nets entry: /sys/class/net/IF/speed; NaN unknown */
    size_t cap_speed;
    mon_ib_port *ib;
    size_t n_ib, cap_ib;
    gpu_nvml_dev *gpus;
    size_t n_gpus, cap_gpus;
    double take_s;         /* how long taking it took */
} mon_sample;

typedef struct mon {
    cp_fsroot fs;
    bool gpu_ok;
    char gpu_why[512];     /* why there are no GPU samples ("" when there are) */
    gpu_nvml nvml;
} mon;

/* fsroot: NULL for $CHAINPROF_FSROOT or "/"; with_gpu false skips NVML
 * (gpu_why says so). */
void mon_open(mon *m, const char *fsroot, bool with_gpu);
void mon_close(mon *m);
/* One sample of every layer. Returns 0, or CP_ERR_FORMAT with err naming a
 * malformed file (the sample keeps what parsed). */
int mon_take(mon *m, mon_sample *s, cp_error *err);
void mon_sample_free(mon_sample *s);

/* The rate "400 Gb/sec (4X NDR)" or "2.5 Gb/sec (1X SDR)" in Gbit/s; NaN. */
double mon_ib_rate_gbit_s(const char *text);
/* The scale and the key of a counter (model/ib_counters.def). */
double mon_ib_scale(int id);
const char *mon_ib_metric(int id);
const char *mon_ib_help(int id);
const char *mon_ib_file(int id);

/* ---- outputs ---- */

/* An alert as the monitor shows it: a rule book finding's code and title. */
typedef struct mon_alert {
    char code[48];
    char layer[16];
    char severity[16];
    char title[240];
} mon_alert;

/* The Prometheus text exposition (format 0.0.4) of sample s: every series
 * with its # HELP and # TYPE, names chainprof_*, units in the names, label
 * values escaped. alerts: the current alerts (chainprof_alert series). */
void mon_prom(const mon *m, const mon_sample *s, const mon_alert *alerts, size_t n_alerts, cp_buf *out);
/* Append a label value escaped as the text format wants (\\, \", \n). */
void mon_prom_escape(cp_buf *out, const char *value);

/* One JSON object (no newline) of s, with rates since prev when given. */
void mon_json(const mon *m, const mon_sample *prev, const mon_sample *s, const mon_alert *alerts, size_t n_alerts,
              cp_buf *out);
/* One terse line for a terminal. */
void mon_tty_line(const mon_sample *prev, const mon_sample *s, size_t n_alerts, cp_buf *out);

#endif

/* ---- the recent samples, as evidence for the rule book ---- */

/* What of a sample the alerts need: the GPUs and the ports. */
typedef struct mon_window_entry {
    int64_t mono_ns;
    gpu_nvml_dev *gpus;
    size_t n_gpus, cap_gpus;
    mon_ib_port *ib;
    size_t n_ib, cap_ib;
} mon_window_entry;

typedef struct mon_window {
    mon_window_entry *e; /* a ring of cap entries */
    size_t cap, n, next;
    uint64_t pushed;     /* samples ever pushed: the window holds the first one while pushed == n */
} mon_window;

#define MON_WINDOW_INPUT "chainprof monitor" /* the input name findings cite */

void mon_window_init(mon_window *w, size_t cap);
void mon_window_push(mon_window *w, const mon_sample *s);
void mon_window_free(mon_window *w);
/* Add the window to set (ev_set_init'd by the caller) as one input with
 * two files: the GPUs as `nvidia-smi dmon` samples (ev_dmon: sm, mem, pwr,
 * gtemp, pviol, tviol, rxpci, txpci) and the error counters and links
 * (ev_counters). A finding's FILE:LINE is MON_WINDOW_INPUT and the 1-based
 * sample of the window. */
void mon_window_evidence(const mon_window *w, ev_set *set);
