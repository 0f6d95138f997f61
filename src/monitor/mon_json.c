/* mon_json.c - one sample as a JSON line (`--json-lines FILE`, schema
 * chainprof.monitor/1: docs/FORMATS.md) and as a terse terminal line.
 *
 * Counters are written raw (`_total`, as the kernel counts them, scaled to
 * base units) and, when there is a previous sample, as rates over the
 * interval between the two (`_per_s`, `_pct`); a device absent from the
 * previous sample has null rates. A counter that went backwards (a device
 * re-added) gives a null rate, never a negative one.
 */
#include "mon.h"
#include "../base/jsonw.h"
#include "../base/util.h"

#include <math.h>
#include <string.h>
#include <time.h>

static double rate(uint64_t a, uint64_t b, double seconds, double scale)
{
    if (!(seconds > 0) || b < a)
        return NAN;
    return (double)(b - a) * scale / seconds;
}

static double interval_s(const mon_sample *prev, const mon_sample *s)
{
    return prev ? (double)(s->ss.mono_ns - prev->ss.mono_ns) / 1e9 : NAN;
}

static void json_host(cp_jw *w, const mon_sample *prev, const mon_sample *s)
{
    cp_ss_delta d;
    if (prev)
        cp_ss_delta_of(&prev->ss, &s->ss, &d);
    cp_jw_key(w, "host");
    cp_jw_obj_begin(w);
    cp_jw_key(w, "cpus");
    cp_jw_uint(w, s->ss.n_cpus);
    cp_jw_key(w, "cpu_busy_pct");
    cp_jw_double(w, prev ? d.busy_pct : NAN);
    cp_jw_key(w, "cpu_iowait_pct");
    cp_jw_double(w, prev ? d.iowait_pct : NAN);
    cp_jw_key(w, "cpu_steal_pct");
    cp_jw_double(w, prev ? d.steal_pct : NAN);
    cp_jw_key(w, "load1");
    cp_jw_double(w, s->ss.have & CP_SS_LOADAVG ? s->ss.load.avg1 : NAN);
    cp_jw_key(w, "mem_total_bytes");
    cp_jw_double(w, s->ss.have & CP_SS_MEMINFO && s->ss.mem.total_bytes >= 0 ? (double)s->ss.mem.total_bytes : NAN);
    cp_jw_key(w, "mem_available_bytes");
    cp_jw_double(w, s->ss.have & CP_SS_MEMINFO && s->ss.mem.available_bytes >= 0 ? (double)s->ss.mem.available_bytes : NAN);
    for (int k = 0; k < 2; k++) {
        cp_jw_key(w, k ? "psi_full_pct" : "psi_some_pct");
        cp_jw_obj_begin(w);
        for (int r = 0; r < CP_SS_PSI_N; r++) {
            cp_jw_key(w, cp_ss_psi_name(r));
            cp_jw_double(w, prev ? (k ? d.psi_full_pct[r] : d.psi_some_pct[r]) : NAN);
        }
        cp_jw_obj_end(w);
    }
    cp_jw_obj_end(w);
}

static void json_storage(cp_jw *w, const mon_sample *prev, const mon_sample *s, double dt)
{
    cp_jw_key(w, "storage");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < s->ss.n_disks; i++) {
        const cp_ss_disk *b = &s->ss.disks[i];
        if (!b->whole)
            continue;
        const cp_ss_disk *a = prev ? cp_ss_disk_find(&prev->ss, b->name) : NULL;
        cp_jw_obj_begin(w);
        cp_jw_key(w, "device");
        cp_jw_str(w, b->name);
        cp_jw_key(w, "virtual");
        cp_jw_bool(w, b->virt);
        cp_jw_key(w, "read_bytes_total");
        cp_jw_uint(w, b->read_sectors * CP_SS_SECTOR_BYTES);
        cp_jw_key(w, "written_bytes_total");
        cp_jw_uint(w, b->write_sectors * CP_SS_SECTOR_BYTES);
        cp_jw_key(w, "in_flight");
        cp_jw_uint(w, b->in_flight);
        cp_jw_key(w, "read_bytes_per_s");
        cp_jw_double(w, a ? rate(a->read_sectors, b->read_sectors, dt, CP_SS_SECTOR_BYTES) : NAN);
        cp_jw_key(w, "write_bytes_per_s");
        cp_jw_double(w, a ? rate(a->write_sectors, b->write_sectors, dt, CP_SS_SECTOR_BYTES) : NAN);
        /* busy: ms of I/O per ms of wall time; queue: weighted ms per ms */
        cp_jw_key(w, "busy_pct");
        cp_jw_double(w, a ? rate(a->io_ms, b->io_ms, dt, 0.1) : NAN);
        cp_jw_key(w, "queue_avg");
        cp_jw_double(w, a ? rate(a->weighted_ms, b->weighted_ms, dt, 1e-3) : NAN);
        /* latency: ms spent per request completed in the interval */
        double rl = NAN, wl = NAN;
        if (a && b->reads > a->reads && b->read_ms >= a->read_ms)
            rl = (double)(b->read_ms - a->read_ms) / (double)(b->reads - a->reads);
        if (a && b->writes > a->writes && b->write_ms >= a->write_ms)
            wl = (double)(b->write_ms - a->write_ms) / (double)(b->writes - a->writes);
        cp_jw_key(w, "read_latency_ms");
        cp_jw_double(w, rl);
        cp_jw_key(w, "write_latency_ms");
        cp_jw_double(w, wl);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
}

static void json_network(cp_jw *w, const mon_sample *prev, const mon_sample *s, double dt)
{
    cp_jw_key(w, "network");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < s->ss.n_nets; i++) {
        const cp_ss_net *b = &s->ss.nets[i];
        const cp_ss_net *a = prev ? cp_ss_net_find(&prev->ss, b->name) : NULL;
        cp_jw_obj_begin(w);
        cp_jw_key(w, "device");
        cp_jw_str(w, b->name);
        cp_jw_key(w, "virtual");
        cp_jw_bool(w, b->virt);
        cp_jw_key(w, "speed_mbit_s");
        cp_jw_double(w, s->net_speed_mbit_s[i]);
        cp_jw_key(w, "rx_bytes_total");
        cp_jw_uint(w, b->rx_bytes);
        cp_jw_key(w, "tx_bytes_total");
        cp_jw_uint(w, b->tx_bytes);
        cp_jw_key(w, "rx_bytes_per_s");
        cp_jw_double(w, a ? rate(a->rx_bytes, b->rx_bytes, dt, 1) : NAN);
        cp_jw_key(w, "tx_bytes_per_s");
        cp_jw_double(w, a ? rate(a->tx_bytes, b->tx_bytes, dt, 1) : NAN);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
    cp_jw_key(w, "infiniband");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < s->n_ib; i++) {
        const mon_ib_port *p = &s->ib[i], *q = NULL;
        for (size_t j = 0; prev && j < prev->n_ib; j++)
            if (prev->ib[j].port == p->port && strcmp(prev->ib[j].dev, p->dev) == 0)
                q = &prev->ib[j];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "device");
        cp_jw_str(w, p->dev);
        cp_jw_key(w, "port");
        cp_jw_uint(w, p->port);
        cp_jw_key(w, "link_layer");
        cp_jw_str(w, p->link_layer);
        cp_jw_key(w, "state");
        cp_jw_str(w, p->state);
        cp_jw_key(w, "rate_gbit_s");
        cp_jw_double(w, p->rate_gbit_s);
        cp_jw_key(w, "counters");
        cp_jw_obj_begin(w);
        for (int c = 0; c < MON_IB_N; c++)
            if ((p->have >> c) & 1) {
                cp_jw_key(w, mon_ib_metric(c));
                cp_jw_double(w, (double)p->c[c] * mon_ib_scale(c));
            }
        cp_jw_obj_end(w);
        bool rx = q && ((q->have >> MON_IB_RCV_DATA) & 1), tx = q && ((q->have >> MON_IB_XMIT_DATA) & 1);
        cp_jw_key(w, "rx_bytes_per_s");
        cp_jw_double(w, rx ? rate(q->c[MON_IB_RCV_DATA], p->c[MON_IB_RCV_DATA], dt, mon_ib_scale(MON_IB_RCV_DATA)) : NAN);
        cp_jw_key(w, "tx_bytes_per_s");
        cp_jw_double(w, tx ? rate(q->c[MON_IB_XMIT_DATA], p->c[MON_IB_XMIT_DATA], dt, mon_ib_scale(MON_IB_XMIT_DATA)) : NAN);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
}

static void json_gpus(cp_jw *w, const mon *m, const mon_sample *s)
{
    cp_jw_key(w, "gpu_unavailable");
    if (m->gpu_ok)
        cp_jw_null(w);
    else
        cp_jw_str(w, m->gpu_why);
    cp_jw_key(w, "gpus");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < s->n_gpus; i++) {
        const gpu_nvml_dev *g = &s->gpus[i];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "gpu");
        cp_jw_uint(w, g->index);
        cp_jw_key(w, "name");
        cp_jw_str(w, g->name);
        cp_jw_key(w, "uuid");
        cp_jw_str(w, g->uuid);
#define D(key, bit, v) cp_jw_key(w, key), cp_jw_double(w, (g->have & (bit)) ? (double)(v) : NAN)
        D("util_pct", GPU_NVH_UTIL, g->util_pct);
        D("mem_util_pct", GPU_NVH_UTIL, g->mem_util_pct);
        D("sm_clock_mhz", GPU_NVH_CLOCK, g->sm_clock_mhz);
        D("throttle_reasons", GPU_NVH_THROTTLE, g->throttle_reasons);
        D("mem_used_bytes", GPU_NVH_MEMORY, g->mem_used_bytes);
        D("mem_total_bytes", GPU_NVH_MEMORY, g->mem_total_bytes);
        D("power_w", GPU_NVH_POWER, g->power_w);
        D("temp_c", GPU_NVH_TEMP, g->temp_c);
        D("pcie_tx_bytes_per_s", GPU_NVH_PCIE, g->pcie_tx_bytes_per_s);
        D("pcie_rx_bytes_per_s", GPU_NVH_PCIE, g->pcie_rx_bytes_per_s);
        D("pcie_replay_total", GPU_NVH_REPLAY, g->pcie_replay_total);
        D("nvlink_tx_bytes_total", GPU_NVH_NVLINK, g->nvlink_tx_bytes_total);
        D("nvlink_rx_bytes_total", GPU_NVH_NVLINK, g->nvlink_rx_bytes_total);
        D("ecc_corrected_total", GPU_NVH_ECC, g->ecc_corrected_total);
        D("ecc_uncorrected_total", GPU_NVH_ECC, g->ecc_uncorrected_total);
        D("remapped_rows_correctable", GPU_NVH_REMAP, g->remap_correctable);
        D("remapped_rows_uncorrectable", GPU_NVH_REMAP, g->remap_uncorrectable);
        D("row_remap_pending", GPU_NVH_REMAP, g->remap_pending);
        D("xid_total", GPU_NVH_XID, g->xid_total);
        D("last_xid", GPU_NVH_XID, g->last_xid);
#undef D
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
}

void mon_json(const mon *m, const mon_sample *prev, const mon_sample *s, const mon_alert *alerts, size_t n_alerts,
              cp_buf *out)
{
    cp_jw w;
    cp_jw_init(&w, out, 0);
    double dt = interval_s(prev, s);
    cp_jw_obj_begin(&w);
    cp_jw_key(&w, "schema");
    cp_jw_str(&w, "chainprof.monitor/1");
    cp_jw_key(&w, "time_unix_ns");
    cp_jw_int(&w, s->wall_ns);
    cp_jw_key(&w, "interval_s");
    cp_jw_double(&w, dt);
    json_host(&w, prev, s);
    json_storage(&w, prev, s, dt);
    json_network(&w, prev, s, dt);
    json_gpus(&w, m, s);
    cp_jw_key(&w, "alerts");
    cp_jw_arr_begin(&w);
    for (size_t i = 0; i < n_alerts; i++) {
        cp_jw_obj_begin(&w);
        cp_jw_key(&w, "code");
        cp_jw_str(&w, alerts[i].code);
        cp_jw_key(&w, "layer");
        cp_jw_str(&w, alerts[i].layer);
        cp_jw_key(&w, "severity");
        cp_jw_str(&w, alerts[i].severity);
        cp_jw_key(&w, "title");
        cp_jw_str(&w, alerts[i].title);
        cp_jw_obj_end(&w);
    }
    cp_jw_arr_end(&w);
    cp_jw_obj_end(&w);
}

/* "12:00:01 cpu 35% iow 1% mem 41% | disk r 1.2 w 30.5 MB/s | net rx 0.1 tx 0.2 MB/s | ib ... | gpu ... | alerts 2" */
void mon_tty_line(const mon_sample *prev, const mon_sample *s, size_t n_alerts, cp_buf *out)
{
    time_t t = (time_t)(s->wall_ns / 1000000000);
    struct tm tm;
    localtime_r(&t, &tm);
    char hms[16];
    strftime(hms, sizeof hms, "%H:%M:%S", &tm);
    cp_buf_printf(out, "%s", hms);
    if (prev) {
        cp_ss_delta d;
        cp_ss_delta_of(&prev->ss, &s->ss, &d);
        cp_buf_printf(out, " cpu %.0f%% iow %.0f%%", d.busy_pct, d.iowait_pct);
        if (s->ss.mem.total_bytes > 0 && s->ss.mem.available_bytes >= 0)
            cp_buf_printf(out, " mem %.0f%%",
                          100.0 * (1.0 - (double)s->ss.mem.available_bytes / (double)s->ss.mem.total_bytes));
        cp_buf_printf(out, " | disk r %.1f w %.1f MB/s | net rx %.1f tx %.1f MB/s", d.disk_read_bytes / d.seconds / 1e6,
                      d.disk_write_bytes / d.seconds / 1e6, d.net_rx_bytes / d.seconds / 1e6,
                      d.net_tx_bytes / d.seconds / 1e6);
        double dt = interval_s(prev, s), rx = 0, tx = 0;
        for (size_t i = 0; i < s->n_ib; i++)
            for (size_t j = 0; j < prev->n_ib; j++)
                if (prev->ib[j].port == s->ib[i].port && strcmp(prev->ib[j].dev, s->ib[i].dev) == 0) {
                    double r = rate(prev->ib[j].c[MON_IB_RCV_DATA], s->ib[i].c[MON_IB_RCV_DATA], dt,
                                    mon_ib_scale(MON_IB_RCV_DATA));
                    double x = rate(prev->ib[j].c[MON_IB_XMIT_DATA], s->ib[i].c[MON_IB_XMIT_DATA], dt,
                                    mon_ib_scale(MON_IB_XMIT_DATA));
                    rx += isnan(r) ? 0 : r;
                    tx += isnan(x) ? 0 : x;
                }
        if (s->n_ib)
            cp_buf_printf(out, " | ib rx %.1f tx %.1f GB/s", rx / 1e9, tx / 1e9);
    }
    for (size_t i = 0; i < s->n_gpus; i++) {
        const gpu_nvml_dev *g = &s->gpus[i];
        cp_buf_printf(out, " | gpu%u %.0f%% %.0fW %.0fC%s", g->index, g->util_pct, g->power_w, g->temp_c,
                      g->throttle_reasons & ~0x1ULL ? " thr" : "");
    }
    cp_buf_printf(out, " | alerts %zu\n", n_alerts);
}
