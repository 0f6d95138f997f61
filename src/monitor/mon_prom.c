/* mon_prom.c - one sample in the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/).
 *
 * Every family is written once, contiguously: "# HELP name text", "# TYPE
 * name counter|gauge", then its samples, one per label set. Names follow
 * Prometheus's conventions (https://prometheus.io/docs/practices/naming/):
 * the chainprof_ prefix, base units in the name (_seconds, _bytes,
 * _celsius, _watts, _hertz, _ratio for 0..1), _total for counters. Kernel
 * counters are exposed raw (Prometheus's rate() turns them into rates);
 * only what the kernel or NVML reports as a level is a gauge. Label values
 * are escaped (backslash, double quote, newline), HELP text too (backslash,
 * newline).
 *
 * The tables below are the one list of what is exposed: a field of the
 * sample structs, its factor to the base unit, its name and help; the docs
 * (docs/METRICS.md, "Monitor series") describe the same families.
 */
#include "mon.h"
#include "../base/util.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void mon_prom_escape(cp_buf *out, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            cp_buf_puts(out, "\\\\");
        else if (*v == '"')
            cp_buf_puts(out, "\\\"");
        else if (*v == '\n')
            cp_buf_puts(out, "\\n");
        else
            cp_buf_putc(out, *v);
    }
}

static void family(cp_buf *o, const char *name, const char *type, const char *help)
{
    cp_buf_printf(o, "# HELP %s ", name);
    for (const char *h = help; *h; h++) {
        if (*h == '\\')
            cp_buf_puts(o, "\\\\");
        else if (*h == '\n')
            cp_buf_puts(o, "\\n");
        else
            cp_buf_putc(o, *h);
    }
    cp_buf_printf(o, "\n# TYPE %s %s\n", name, type);
}

/* Label set under construction: `{k="v",...}` or "" when empty. */
typedef struct labels {
    cp_buf b;
} labels;

static void lb_reset(labels *l) { cp_buf_reset(&l->b); }
static void lb_add(labels *l, const char *key, const char *value)
{
    cp_buf_putc(&l->b, l->b.len ? ',' : '{');
    cp_buf_printf(&l->b, "%s=\"", key);
    mon_prom_escape(&l->b, value);
    cp_buf_putc(&l->b, '"');
}

/* The shortest of %.15g / %.17g that reads back as v (as base/jsonw does):
 * 74.516 stays "74.516", not "74.515999999999991". */
static void value_double(cp_buf *o, double v)
{
    if (isnan(v)) {
        cp_buf_puts(o, "NaN");
        return;
    }
    if (isinf(v)) {
        cp_buf_puts(o, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        snprintf(tmp, sizeof tmp, "%.17g", v);
    cp_buf_puts(o, tmp);
}

static void sample_d(cp_buf *o, const char *name, const labels *l, double v)
{
    cp_buf_puts(o, name);
    if (l && l->b.len)
        cp_buf_printf(o, "%s}", cp_buf_str(&l->b));
    cp_buf_putc(o, ' ');
    value_double(o, v);
    cp_buf_putc(o, '\n');
}

static void sample_u(cp_buf *o, const char *name, const labels *l, uint64_t v)
{
    cp_buf_puts(o, name);
    if (l && l->b.len)
        cp_buf_printf(o, "%s}", cp_buf_str(&l->b));
    cp_buf_printf(o, " %" PRIu64 "\n", v);
}

/* ---- host ---- */

static const struct { const char *mode; size_t off; } k_cpu_modes[] = {
    { "user", offsetof(cp_ss_cpu, user) },       { "nice", offsetof(cp_ss_cpu, nice) },
    { "system", offsetof(cp_ss_cpu, system) },   { "idle", offsetof(cp_ss_cpu, idle) },
    { "iowait", offsetof(cp_ss_cpu, iowait) },   { "irq", offsetof(cp_ss_cpu, irq) },
    { "softirq", offsetof(cp_ss_cpu, softirq) }, { "steal", offsetof(cp_ss_cpu, steal) },
};

static const struct { const char *name, *help; size_t off; } k_mem[] = {
    { "chainprof_memory_total_bytes", "physical memory (MemTotal)", offsetof(cp_ss_meminfo, total_bytes) },
    { "chainprof_memory_available_bytes", "memory available for new work without swapping (MemAvailable)",
      offsetof(cp_ss_meminfo, available_bytes) },
    { "chainprof_memory_free_bytes", "unused memory (MemFree)", offsetof(cp_ss_meminfo, free_bytes) },
    { "chainprof_memory_cached_bytes", "page cache (Cached)", offsetof(cp_ss_meminfo, cached_bytes) },
    { "chainprof_memory_dirty_bytes", "page cache waiting to be written (Dirty)", offsetof(cp_ss_meminfo, dirty_bytes) },
    { "chainprof_memory_writeback_bytes", "page cache being written (Writeback)", offsetof(cp_ss_meminfo, writeback_bytes) },
    { "chainprof_memory_swap_total_bytes", "swap space (SwapTotal)", offsetof(cp_ss_meminfo, swap_total_bytes) },
    { "chainprof_memory_swap_free_bytes", "unused swap (SwapFree)", offsetof(cp_ss_meminfo, swap_free_bytes) },
};

static uint64_t u64_at(const void *base, size_t off)
{
    uint64_t v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

static void prom_host(const cp_ss_sample *ss, labels *l, cp_buf *o)
{
    if (ss->have & CP_SS_STAT) {
        family(o, "chainprof_cpu_seconds_total", "counter", "CPU time of all CPUs by mode (/proc/stat, USER_HZ ticks / 100)");
        for (size_t i = 0; i < CP_ARRAY_LEN(k_cpu_modes); i++) {
            lb_reset(l);
            lb_add(l, "mode", k_cpu_modes[i].mode);
            sample_d(o, "chainprof_cpu_seconds_total", l, (double)u64_at(&ss->total, k_cpu_modes[i].off) / CP_SS_USER_HZ);
        }
        family(o, "chainprof_cpus", "gauge", "CPUs listed in /proc/stat");
        sample_u(o, "chainprof_cpus", NULL, ss->n_cpus);
        family(o, "chainprof_context_switches_total", "counter", "context switches since boot (/proc/stat ctxt)");
        sample_u(o, "chainprof_context_switches_total", NULL, ss->ctxt);
        family(o, "chainprof_procs_blocked", "gauge", "tasks blocked on I/O (/proc/stat procs_blocked)");
        sample_u(o, "chainprof_procs_blocked", NULL, ss->procs_blocked);
    }
    if (ss->have & CP_SS_LOADAVG) {
        family(o, "chainprof_load_average", "gauge", "run-queue load average (/proc/loadavg)");
        static const char *const w[] = { "1m", "5m", "15m" };
        double v[] = { ss->load.avg1, ss->load.avg5, ss->load.avg15 };
        for (int i = 0; i < 3; i++) {
            lb_reset(l);
            lb_add(l, "window", w[i]);
            sample_d(o, "chainprof_load_average", l, v[i]);
        }
    }
    if (ss->have & CP_SS_PSI) {
        family(o, "chainprof_pressure_stalled_seconds_total", "counter",
               "time tasks were stalled on a resource (/proc/pressure: some = at least one task, full = all non-idle tasks)");
        for (int r = 0; r < CP_SS_PSI_N; r++) {
            const cp_ss_psi_line *lines[] = { &ss->psi[r].some, &ss->psi[r].full };
            static const char *const kinds[] = { "some", "full" };
            for (int k = 0; k < 2; k++) {
                if (!lines[k]->valid)
                    continue;
                lb_reset(l);
                lb_add(l, "resource", cp_ss_psi_name(r));
                lb_add(l, "kind", kinds[k]);
                sample_d(o, "chainprof_pressure_stalled_seconds_total", l, (double)lines[k]->total_us / 1e6);
            }
        }
    }
    if (ss->have & CP_SS_MEMINFO)
        for (size_t i = 0; i < CP_ARRAY_LEN(k_mem); i++) {
            int64_t v;
            memcpy(&v, (const char *)&ss->mem + k_mem[i].off, sizeof v);
            if (v < 0)
                continue; /* the kernel lacks the field */
            family(o, k_mem[i].name, "gauge", k_mem[i].help);
            sample_d(o, k_mem[i].name, NULL, (double)v);
        }
}

/* ---- storage and network: tables over the sysstat structs ---- */

/* value = field x mul / div (a division by an exact integer, so 74516 ms
 * print as 74.516 s). */
typedef struct field_row {
    const char *name, *type, *help;
    size_t off;
    uint64_t mul, div;
} field_row;

static const field_row k_disk[] = {
    { "chainprof_disk_reads_completed_total", "counter", "reads completed", offsetof(cp_ss_disk, reads), 1, 1 },
    { "chainprof_disk_writes_completed_total", "counter", "writes completed", offsetof(cp_ss_disk, writes), 1, 1 },
    { "chainprof_disk_read_bytes_total", "counter", "bytes read (sectors x 512)", offsetof(cp_ss_disk, read_sectors),
      CP_SS_SECTOR_BYTES, 1 },
    { "chainprof_disk_written_bytes_total", "counter", "bytes written (sectors x 512)",
      offsetof(cp_ss_disk, write_sectors), CP_SS_SECTOR_BYTES, 1 },
    { "chainprof_disk_read_time_seconds_total", "counter", "time spent by all reads", offsetof(cp_ss_disk, read_ms), 1, 1000 },
    { "chainprof_disk_write_time_seconds_total", "counter", "time spent by all writes", offsetof(cp_ss_disk, write_ms),
      1, 1000 },
    { "chainprof_disk_io_time_seconds_total", "counter", "time the device had I/O in flight (busy)",
      offsetof(cp_ss_disk, io_ms), 1, 1000 },
    { "chainprof_disk_io_time_weighted_seconds_total", "counter",
      "I/O time weighted by requests in flight (its rate is the mean queue length)", offsetof(cp_ss_disk, weighted_ms), 1, 1000 },
    { "chainprof_disk_io_now", "gauge", "requests in flight now", offsetof(cp_ss_disk, in_flight), 1, 1 },
};

static const field_row k_net[] = {
    { "chainprof_network_receive_bytes_total", "counter", "bytes received", offsetof(cp_ss_net, rx_bytes), 1, 1 },
    { "chainprof_network_transmit_bytes_total", "counter", "bytes transmitted", offsetof(cp_ss_net, tx_bytes), 1, 1 },
    { "chainprof_network_receive_packets_total", "counter", "packets received", offsetof(cp_ss_net, rx_packets), 1, 1 },
    { "chainprof_network_transmit_packets_total", "counter", "packets transmitted", offsetof(cp_ss_net, tx_packets), 1, 1 },
    { "chainprof_network_receive_errors_total", "counter", "receive errors", offsetof(cp_ss_net, rx_errs), 1, 1 },
    { "chainprof_network_transmit_errors_total", "counter", "transmit errors", offsetof(cp_ss_net, tx_errs), 1, 1 },
    { "chainprof_network_receive_drop_total", "counter", "received packets dropped", offsetof(cp_ss_net, rx_drop), 1, 1 },
    { "chainprof_network_transmit_drop_total", "counter", "packets dropped before transmission",
      offsetof(cp_ss_net, tx_drop), 1, 1 },
};

static void put_scaled(cp_buf *o, const char *name, const labels *l, uint64_t v, uint64_t mul, uint64_t div)
{
    if (div == 1)
        sample_u(o, name, l, v * mul);
    else
        sample_d(o, name, l, (double)(v * mul) / (double)div);
}

static void prom_storage(const cp_ss_sample *ss, labels *l, cp_buf *o)
{
    if (!(ss->have & CP_SS_DISKSTATS))
        return;
    for (size_t f = 0; f < CP_ARRAY_LEN(k_disk); f++) {
        family(o, k_disk[f].name, k_disk[f].type, k_disk[f].help);
        for (size_t i = 0; i < ss->n_disks; i++) {
            const cp_ss_disk *d = &ss->disks[i];
            if (!d->whole)
                continue; /* a partition's traffic is its disk's */
            lb_reset(l);
            lb_add(l, "device", d->name);
            put_scaled(o, k_disk[f].name, l, u64_at(d, k_disk[f].off), k_disk[f].mul, k_disk[f].div);
        }
    }
}

static void prom_network(const mon_sample *s, labels *l, cp_buf *o)
{
    const cp_ss_sample *ss = &s->ss;
    if (ss->have & CP_SS_NETDEV) {
        for (size_t f = 0; f < CP_ARRAY_LEN(k_net); f++) {
            family(o, k_net[f].name, k_net[f].type, k_net[f].help);
            for (size_t i = 0; i < ss->n_nets; i++) {
                lb_reset(l);
                lb_add(l, "device", ss->nets[i].name);
                put_scaled(o, k_net[f].name, l, u64_at(&ss->nets[i], k_net[f].off), k_net[f].mul, k_net[f].div);
            }
        }
        family(o, "chainprof_network_speed_bytes", "gauge",
               "link speed in bytes per second (/sys/class/net/IF/speed Mbit/s x 125000); links up only");
        for (size_t i = 0; i < ss->n_nets; i++)
            if (!isnan(s->net_speed_mbit_s[i])) {
                lb_reset(l);
                lb_add(l, "device", ss->nets[i].name);
                sample_d(o, "chainprof_network_speed_bytes", l, s->net_speed_mbit_s[i] * 125000.0);
            }
    }
    if (!s->n_ib)
        return;
    char name[128], port[16];
    family(o, "chainprof_infiniband_port_info", "gauge", "an InfiniBand / RoCE port: its link layer and state (value 1)");
    for (size_t i = 0; i < s->n_ib; i++) {
        snprintf(port, sizeof port, "%u", s->ib[i].port);
        lb_reset(l);
        lb_add(l, "device", s->ib[i].dev);
        lb_add(l, "port", port);
        lb_add(l, "link_layer", s->ib[i].link_layer);
        lb_add(l, "state", s->ib[i].state);
        sample_u(o, "chainprof_infiniband_port_info", l, 1);
    }
    family(o, "chainprof_infiniband_port_rate_bytes", "gauge", "the port's active rate in bytes per second (rate file Gb/s x 1.25e8)");
    for (size_t i = 0; i < s->n_ib; i++) {
        if (isnan(s->ib[i].rate_gbit_s))
            continue;
        snprintf(port, sizeof port, "%u", s->ib[i].port);
        lb_reset(l);
        lb_add(l, "device", s->ib[i].dev);
        lb_add(l, "port", port);
        sample_d(o, "chainprof_infiniband_port_rate_bytes", l, s->ib[i].rate_gbit_s * 1.25e8);
    }
    for (int c = 0; c < MON_IB_N; c++) {
        bool any = false;
        for (size_t i = 0; i < s->n_ib; i++)
            any |= (s->ib[i].have >> c) & 1;
        if (!any)
            continue;
        snprintf(name, sizeof name, "chainprof_infiniband_port_%s", mon_ib_metric(c));
        family(o, name, "counter", mon_ib_help(c));
        for (size_t i = 0; i < s->n_ib; i++) {
            if (!((s->ib[i].have >> c) & 1))
                continue;
            snprintf(port, sizeof port, "%u", s->ib[i].port);
            lb_reset(l);
            lb_add(l, "device", s->ib[i].dev);
            lb_add(l, "port", port);
            put_scaled(o, name, l, s->ib[i].c[c], (uint64_t)mon_ib_scale(c), 1);
        }
    }
}

/* ---- GPU ---- */

enum { G_DBL, G_U64, G_UINT };
typedef struct gpu_row {
    const char *name, *type, *help;
    unsigned have;
    int kind;
    size_t off;
    double mul, div; /* value = field x mul / div */
} gpu_row;

#define GD(f) G_DBL, offsetof(gpu_nvml_dev, f)
#define GU(f) G_U64, offsetof(gpu_nvml_dev, f)
#define GI(f) G_UINT, offsetof(gpu_nvml_dev, f)
static const gpu_row k_gpu[] = {
    { "chainprof_gpu_utilization_ratio", "gauge", "share of the last sample period a kernel ran (NVML utilization.gpu)",
      GPU_NVH_UTIL, GD(util_pct), 1, 100 },
    { "chainprof_gpu_memory_utilization_ratio", "gauge", "share of the last sample period device memory was read or written",
      GPU_NVH_UTIL, GD(mem_util_pct), 1, 100 },
    { "chainprof_gpu_sm_clock_hertz", "gauge", "SM clock", GPU_NVH_CLOCK, GD(sm_clock_mhz), 1e6, 1 },
    { "chainprof_gpu_clock_throttle_reasons", "gauge", "NVML clock throttle (event) reasons bit mask",
      GPU_NVH_THROTTLE, GU(throttle_reasons), 1, 1 },
    { "chainprof_gpu_memory_used_bytes", "gauge", "device memory in use", GPU_NVH_MEMORY, GU(mem_used_bytes), 1, 1 },
    { "chainprof_gpu_memory_total_bytes", "gauge", "device memory", GPU_NVH_MEMORY, GU(mem_total_bytes), 1, 1 },
    { "chainprof_gpu_power_watts", "gauge", "board power draw", GPU_NVH_POWER, GD(power_w), 1, 1 },
    { "chainprof_gpu_temperature_celsius", "gauge", "GPU core temperature", GPU_NVH_TEMP, GD(temp_c), 1, 1 },
    { "chainprof_gpu_pcie_transmit_bytes_per_second", "gauge", "PCIe throughput from the GPU (NVML, a 20 ms window)",
      GPU_NVH_PCIE, GD(pcie_tx_bytes_per_s), 1, 1 },
    { "chainprof_gpu_pcie_receive_bytes_per_second", "gauge", "PCIe throughput to the GPU (NVML, a 20 ms window)",
      GPU_NVH_PCIE, GD(pcie_rx_bytes_per_s), 1, 1 },
    { "chainprof_gpu_pcie_replay_total", "counter", "PCIe link replays (retransmissions after link errors)",
      GPU_NVH_REPLAY, GU(pcie_replay_total), 1, 1 },
    { "chainprof_gpu_nvlink_transmitted_bytes_total", "counter", "NVLink data sent over all links",
      GPU_NVH_NVLINK, GU(nvlink_tx_bytes_total), 1, 1 },
    { "chainprof_gpu_nvlink_received_bytes_total", "counter", "NVLink data received over all links",
      GPU_NVH_NVLINK, GU(nvlink_rx_bytes_total), 1, 1 },
    { "chainprof_gpu_ecc_corrected_errors_total", "counter", "corrected ECC errors since the driver loaded (volatile)",
      GPU_NVH_ECC, GU(ecc_corrected_total), 1, 1 },
    { "chainprof_gpu_ecc_uncorrected_errors_total", "counter", "uncorrected ECC errors since the driver loaded (volatile)",
      GPU_NVH_ECC, GU(ecc_uncorrected_total), 1, 1 },
    { "chainprof_gpu_remapped_rows_correctable", "gauge", "rows remapped for correctable errors",
      GPU_NVH_REMAP, GI(remap_correctable), 1, 1 },
    { "chainprof_gpu_remapped_rows_uncorrectable", "gauge", "rows remapped for uncorrectable errors",
      GPU_NVH_REMAP, GI(remap_uncorrectable), 1, 1 },
    { "chainprof_gpu_row_remap_pending", "gauge", "1 when a remapping waits for a GPU reset", GPU_NVH_REMAP,
      GI(remap_pending), 1, 1 },
    { "chainprof_gpu_row_remap_failure", "gauge", "1 when a row could not be remapped", GPU_NVH_REMAP,
      GI(remap_failure), 1, 1 },
    { "chainprof_gpu_xid_errors_total", "counter", "Xid critical error events seen since the monitor started",
      GPU_NVH_XID, GU(xid_total), 1, 1 },
    { "chainprof_gpu_last_xid", "gauge", "the last Xid error code seen (0 none)", GPU_NVH_XID, GI(last_xid), 1, 1 },
};
#undef GD
#undef GU
#undef GI

static double gpu_value(const gpu_nvml_dev *g, const gpu_row *r)
{
    const char *p = (const char *)g + r->off;
    double d;
    uint64_t u;
    unsigned ui;
    switch (r->kind) {
    case G_DBL: memcpy(&d, p, sizeof d); return d * r->mul / r->div;
    case G_U64: memcpy(&u, p, sizeof u); return (double)u * r->mul / r->div;
    default: memcpy(&ui, p, sizeof ui); return (double)ui * r->mul / r->div;
    }
}

static void gpu_labels(labels *l, const gpu_nvml_dev *g)
{
    char idx[16];
    snprintf(idx, sizeof idx, "%u", g->index);
    lb_reset(l);
    lb_add(l, "gpu", idx);
    lb_add(l, "uuid", g->uuid);
}

static void prom_gpu(const mon *m, const mon_sample *s, labels *l, cp_buf *o)
{
    family(o, "chainprof_gpu_sampling_up", "gauge", "1 when GPUs are sampled through NVML; 0 with the reason as a label");
    lb_reset(l);
    lb_add(l, "reason", m->gpu_ok ? "" : m->gpu_why);
    sample_u(o, "chainprof_gpu_sampling_up", l, m->gpu_ok ? 1 : 0);
    if (!s->n_gpus)
        return;
    family(o, "chainprof_gpu_info", "gauge", "a GPU: its name (value 1)");
    for (size_t i = 0; i < s->n_gpus; i++) {
        gpu_labels(l, &s->gpus[i]);
        lb_add(l, "name", s->gpus[i].name);
        sample_u(o, "chainprof_gpu_info", l, 1);
    }
    for (size_t r = 0; r < CP_ARRAY_LEN(k_gpu); r++) {
        bool any = false;
        for (size_t i = 0; i < s->n_gpus; i++)
            any |= (s->gpus[i].have & k_gpu[r].have) != 0;
        if (!any)
            continue;
        family(o, k_gpu[r].name, k_gpu[r].type, k_gpu[r].help);
        for (size_t i = 0; i < s->n_gpus; i++)
            if (s->gpus[i].have & k_gpu[r].have) {
                gpu_labels(l, &s->gpus[i]);
                sample_d(o, k_gpu[r].name, l, gpu_value(&s->gpus[i], &k_gpu[r]));
            }
    }
    bool throttle = false;
    for (size_t i = 0; i < s->n_gpus; i++)
        throttle |= (s->gpus[i].have & GPU_NVH_THROTTLE) != 0;
    if (!throttle)
        return;
    family(o, "chainprof_gpu_clock_throttled", "gauge", "1 while NVML reports this clock throttle reason");
    static const struct { uint64_t bit; const char *key; } reasons[] = {
#define X(bit, key) { bit, #key },
        GPU_NV_THROTTLE_REASONS(X)
#undef X
    };
    for (size_t i = 0; i < s->n_gpus; i++) {
        if (!(s->gpus[i].have & GPU_NVH_THROTTLE))
            continue;
        for (size_t k = 0; k < CP_ARRAY_LEN(reasons); k++) {
            gpu_labels(l, &s->gpus[i]);
            lb_add(l, "reason", reasons[k].key);
            sample_u(o, "chainprof_gpu_clock_throttled", l, (s->gpus[i].throttle_reasons & reasons[k].bit) ? 1 : 0);
        }
    }
}

void mon_prom(const mon *m, const mon_sample *s, const mon_alert *alerts, size_t n_alerts, cp_buf *out)
{
    labels l = { { 0 } };
    prom_host(&s->ss, &l, out);
    prom_storage(&s->ss, &l, out);
    prom_network(s, &l, out);
    prom_gpu(m, s, &l, out);
    family(out, "chainprof_alert", "gauge",
           "1 for each finding the rule book raises over the monitor's recent samples (code, layer, severity)");
    for (size_t i = 0; i < n_alerts; i++) {
        lb_reset(&l);
        lb_add(&l, "code", alerts[i].code);
        lb_add(&l, "layer", alerts[i].layer);
        lb_add(&l, "severity", alerts[i].severity);
        sample_u(out, "chainprof_alert", &l, 1);
    }
    family(out, "chainprof_monitor_sample_duration_seconds", "gauge", "time the last sample of every layer took");
    sample_d(out, "chainprof_monitor_sample_duration_seconds", NULL, s->take_s);
    cp_buf_free(&l.b);
}
