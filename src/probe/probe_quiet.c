/* probe_quiet.c - quietness windows around the probes (see probe_quiet.h).
 *
 * Limits are set where a figure starts to move by more than the spread a
 * quiet machine shows: a tenth of the CPUs taken by others already costs a
 * memory probe on all cores that share (STREAM threads wait for the
 * slowest), 2 % steal is a hypervisor handing our vCPUs out, 1 % of the
 * time stalled on memory is reclaim or swapping in progress, 10 MB/s of
 * someone else's disk traffic is enough to move a virtual disk's figures,
 * and a 10 % clock change is a frequency step, not jitter.
 */
#include "probe_quiet.h"
#include "../base/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void probe_quiet_default_limits(probe_quiet_limits *l)
{
    *l = (probe_quiet_limits){
        .others_cpu_pct = 10, .steal_pct = 2, .iowait_pct = 5,
        .psi_cpu_pct = 20, .psi_memory_pct = 1, .psi_io_pct = 10,
        .others_disk_bytes_per_s = 10e6, .net_bytes_per_s = 10e6,
        .freq_change_pct = 10,
    };
}

static void add_reason(probe_quiet_window *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_reason(probe_quiet_window *w, const char *fmt, ...)
{
    size_t n = strlen(w->reasons);
    if (n + 3 >= sizeof w->reasons)
        return;
    if (n)
        n += (size_t)snprintf(w->reasons + n, sizeof w->reasons - n, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->reasons + n, sizeof w->reasons - n, fmt, ap);
    va_end(ap);
    w->quiet = false;
}

static double per_s(double bytes, double seconds)
{
    return isfinite(bytes) && seconds > 0 ? bytes / seconds : NAN;
}

void probe_quiet_assess(const char *what, unsigned own, const cp_ss_delta *d, const cp_ss_sample *end,
                        const probe_quiet_limits *lim, probe_quiet_window *w)
{
    memset(w, 0, sizeof *w);
    snprintf(w->what, sizeof w->what, "%s", what);
    w->own = own;
    w->quiet = true;
    w->seconds = d->seconds;
    w->n_cpus = d->n_cpus;
    /* user-mode work of others: all user time minus ours */
    w->others_cpu_pct = NAN;
    if (isfinite(d->user_pct) && d->cpu_s > 0) {
        double self = isfinite(d->self_user_cpu_s) ? d->self_user_cpu_s / d->cpu_s * 100 : 0;
        w->others_cpu_pct = d->user_pct > self ? d->user_pct - self : 0;
    }
    w->steal_pct = d->steal_pct;
    w->iowait_pct = d->iowait_pct;
    w->psi_cpu_pct = d->psi_some_pct[CP_SS_PSI_CPU];
    w->psi_memory_pct = d->psi_some_pct[CP_SS_PSI_MEMORY];
    w->psi_io_pct = d->psi_some_pct[CP_SS_PSI_IO];
    w->disk_bytes_per_s = per_s(isfinite(d->disk_read_bytes) ? d->disk_read_bytes + d->disk_write_bytes : NAN,
                                d->seconds);
    w->others_disk_bytes_per_s = w->disk_bytes_per_s;
    if (isfinite(w->disk_bytes_per_s) && isfinite(d->self_read_bytes)) {
        double self = per_s(d->self_read_bytes + d->self_write_bytes, d->seconds);
        w->others_disk_bytes_per_s = w->disk_bytes_per_s > self ? w->disk_bytes_per_s - self : 0;
    }
    w->disk_queue_avg = d->disk_queue_avg;
    w->net_bytes_per_s = per_s(isfinite(d->net_rx_bytes) ? d->net_rx_bytes + d->net_tx_bytes : NAN, d->seconds);
    w->freq_min_mhz = d->freq_min_mhz;
    w->freq_max_mhz = d->freq_max_mhz;
    w->load1 = end && (end->have & CP_SS_LOADAVG) ? end->load.avg1 : NAN;

    /* NaN compares false: an unknown source is never a reason */
    if (w->others_cpu_pct > lim->others_cpu_pct)
        add_reason(w, "other processes used %.1f %% of the %d CPUs (limit %g %%)", w->others_cpu_pct, w->n_cpus,
                   lim->others_cpu_pct);
    if (w->steal_pct > lim->steal_pct)
        add_reason(w, "the hypervisor stole %.1f %% of the CPU time (limit %g %%)", w->steal_pct, lim->steal_pct);
    if (!(own & PROBE_OWN_DISK) && w->iowait_pct > lim->iowait_pct)
        add_reason(w, "iowait %.1f %% (limit %g %%)", w->iowait_pct, lim->iowait_pct);
    if (!(own & PROBE_OWN_CPU_PSI) && w->psi_cpu_pct > lim->psi_cpu_pct)
        add_reason(w, "tasks waited for a CPU %.1f %% of the time (PSI cpu some, limit %g %%)", w->psi_cpu_pct,
                   lim->psi_cpu_pct);
    if (w->psi_memory_pct > lim->psi_memory_pct)
        add_reason(w, "memory pressure: tasks stalled on memory %.1f %% of the time (PSI, limit %g %%)",
                   w->psi_memory_pct, lim->psi_memory_pct);
    if (!(own & PROBE_OWN_DISK) && w->psi_io_pct > lim->psi_io_pct)
        add_reason(w, "tasks stalled on I/O %.1f %% of the time (PSI io some, limit %g %%)", w->psi_io_pct,
                   lim->psi_io_pct);
    if (w->others_disk_bytes_per_s > lim->others_disk_bytes_per_s)
        add_reason(w, "other disk traffic %.1f MB/s (limit %g MB/s)", w->others_disk_bytes_per_s / 1e6,
                   lim->others_disk_bytes_per_s / 1e6);
    if (!(own & PROBE_OWN_NET) && w->net_bytes_per_s > lim->net_bytes_per_s)
        add_reason(w, "network traffic %.1f MB/s on the NICs (limit %g MB/s)", w->net_bytes_per_s / 1e6,
                   lim->net_bytes_per_s / 1e6);
}

void probe_quiet_init(probe_quiet *q, const cp_fsroot *fs)
{
    memset(q, 0, sizeof *q);
    probe_quiet_default_limits(&q->limits);
    q->fs = fs;
    q->freq_min_mhz = q->freq_max_mhz = NAN;
}

void probe_quiet_free(probe_quiet *q)
{
    cp_ss_sample_free(&q->mark);
    free(q->w);
    memset(q, 0, sizeof *q);
}

static const unsigned quiet_sources =
    CP_SS_STAT | CP_SS_LOADAVG | CP_SS_PSI | CP_SS_CPUFREQ | CP_SS_DISKSTATS | CP_SS_NETDEV | CP_SS_SELF;

static void track_freq(probe_quiet *q, const cp_ss_sample *s)
{
    if (!(s->have & CP_SS_CPUFREQ))
        return;
    q->freq_source = s->freq_source;
    for (size_t i = 0; i < s->n_freqs; i++) {
        double f = s->freqs[i].cur_mhz;
        if (isnan(q->freq_min_mhz) || f < q->freq_min_mhz)
            q->freq_min_mhz = f;
        if (isnan(q->freq_max_mhz) || f > q->freq_max_mhz)
            q->freq_max_mhz = f;
    }
}

void probe_quiet_start(probe_quiet *q)
{
    /* a malformed file is as good as absent here: the sample says what it has */
    cp_ss_take(q->fs, quiet_sources, &q->mark, NULL);
    q->have_mark = true;
    track_freq(q, &q->mark);
}

void probe_quiet_end(probe_quiet *q, const char *what, unsigned own)
{
    if (!q->have_mark)
        return;
    cp_ss_sample end = { 0 };
    cp_ss_take(q->fs, quiet_sources, &end, NULL);
    track_freq(q, &end);
    cp_ss_delta d;
    cp_ss_delta_of(&q->mark, &end, &d);
    cp_xgrow((void **)&q->w, &q->cap, q->n + 1, sizeof *q->w);
    probe_quiet_assess(what, own, &d, &end, &q->limits, &q->w[q->n++]);
    /* the end of this window starts the next one */
    cp_ss_sample_free(&q->mark);
    q->mark = end;
}

void probe_quiet_baseline(probe_quiet *q, double seconds)
{
    probe_quiet_start(q);
    struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
    probe_quiet_end(q, "before", 0);
}

static double freq_change_pct(const probe_quiet *q)
{
    return q->freq_max_mhz > 0 ? (q->freq_max_mhz - q->freq_min_mhz) / q->freq_max_mhz * 100 : NAN;
}

bool probe_quiet_verdict(const probe_quiet *q, char *buf, size_t size)
{
    bool quiet = true;
    size_t len = 0;
    buf[0] = 0;
#define APPEND(...)                                                                         \
    do {                                                                                    \
        if (len < size)                                                                     \
            len += (size_t)snprintf(buf + len, size - len, __VA_ARGS__);                    \
    } while (0)
    for (size_t i = 0; i < q->n; i++) {
        if (q->w[i].quiet)
            continue;
        bool before = !strcmp(q->w[i].what, "before");
        APPEND("%s%s%s: %s", quiet ? "the machine was not quiet: " : "; ", before ? "before the probes" : "during ",
               before ? "" : q->w[i].what, q->w[i].reasons);
        quiet = false;
    }
    double fc = freq_change_pct(q);
    if (fc > q->limits.freq_change_pct) {
        APPEND("%sthe CPU clock changed between %.0f and %.0f MHz (%.1f %%, limit %g %%)",
               quiet ? "the machine was not quiet: " : "; ", q->freq_min_mhz, q->freq_max_mhz, fc,
               q->limits.freq_change_pct);
        quiet = false;
    }
    if (quiet)
        APPEND(q->n ? "the machine was quiet" : "quietness not checked");
#undef APPEND
    return quiet && q->n;
}

void probe_quiet_report(const probe_quiet *q, rep_report *r, rep_node *parent)
{
    char verdict[2048];
    bool quiet = probe_quiet_verdict(q, verdict, sizeof verdict);
    rep_node *o = rep_obj(r, parent, "quiet", "quietness");
    rep_bool(r, o, "quiet", "quiet", quiet);
    rep_str(r, o, "verdict", "verdict", verdict);
    rep_num(r, o, "freq_min_mhz", "lowest CPU clock seen", q->freq_min_mhz, "MHz");
    rep_num(r, o, "freq_max_mhz", "highest CPU clock seen", q->freq_max_mhz, "MHz");
    rep_num(r, o, "freq_change_pct", "clock change", freq_change_pct(q), "%");
    rep_str(r, o, "freq_source", "clock source",
            q->freq_source == CP_SS_FREQ_CPUFREQ   ? "cpufreq scaling_cur_freq"
            : q->freq_source == CP_SS_FREQ_CPUINFO ? "/proc/cpuinfo cpu MHz"
                                                   : "none");
    const probe_quiet_limits *l = &q->limits;
    rep_node *lim = rep_obj(r, o, "limits", "limits");
    rep_num(r, lim, "others_cpu_pct", "other processes' CPU", l->others_cpu_pct, "%");
    rep_num(r, lim, "steal_pct", "steal", l->steal_pct, "%");
    rep_num(r, lim, "iowait_pct", "iowait", l->iowait_pct, "%");
    rep_num(r, lim, "psi_cpu_pct", "PSI cpu some", l->psi_cpu_pct, "%");
    rep_num(r, lim, "psi_memory_pct", "PSI memory some", l->psi_memory_pct, "%");
    rep_num(r, lim, "psi_io_pct", "PSI io some", l->psi_io_pct, "%");
    rep_num(r, lim, "others_disk_bytes_per_s", "other disk traffic", l->others_disk_bytes_per_s, "B/s");
    rep_num(r, lim, "net_bytes_per_s", "NIC traffic", l->net_bytes_per_s, "B/s");
    rep_num(r, lim, "freq_change_pct", "clock change", l->freq_change_pct, "%");
    static const rep_col cols[] = {
        { "window", "window", NULL, -1 },           { "seconds", "s", "s", 2 },
        { "cpus", "CPUs", NULL, -1 },               { "others_cpu_pct", "others CPU", "%", 1 },
        { "steal_pct", "steal", "%", 1 },           { "iowait_pct", "iowait", "%", 1 },
        { "psi_cpu_pct", "PSI cpu", "%", 1 },       { "psi_memory_pct", "PSI mem", "%", 1 },
        { "psi_io_pct", "PSI io", "%", 1 },         { "disk_bytes_per_s", "disk", "B/s", 0 },
        { "others_disk_bytes_per_s", "others disk", "B/s", 0 }, { "disk_queue_avg", "disk queue", NULL, 2 },
        { "net_bytes_per_s", "NIC", "B/s", 0 },     { "freq_min_mhz", "clock min", "MHz", 0 },
        { "freq_max_mhz", "clock max", "MHz", 0 },  { "load1", "load 1m", NULL, 2 },
        { "quiet", "quiet", NULL, -1 },             { "reasons", "reasons", NULL, -1 },
    };
    rep_node *t = rep_table(r, o, "windows", "windows", cols, CP_ARRAY_LEN(cols));
    for (size_t i = 0; i < q->n; i++) {
        const probe_quiet_window *w = &q->w[i];
        rep_node *row = rep_row(r, t);
        rep_cell_str(r, row, w->what);
        rep_cell_num(r, row, w->seconds);
        rep_cell_int(r, row, w->n_cpus);
        const double v[] = { w->others_cpu_pct, w->steal_pct, w->iowait_pct, w->psi_cpu_pct, w->psi_memory_pct,
                             w->psi_io_pct, w->disk_bytes_per_s, w->others_disk_bytes_per_s, w->disk_queue_avg,
                             w->net_bytes_per_s, w->freq_min_mhz, w->freq_max_mhz, w->load1 };
        for (size_t k = 0; k < CP_ARRAY_LEN(v); k++)
            rep_cell_num(r, row, v[k]);
        rep_cell_bool(r, row, w->quiet);
        if (w->reasons[0])
            rep_cell_str(r, row, w->reasons);
        else
            rep_cell_null(r, row);
    }
}
