/* sysstat.c - samplers of /proc and /sys counters (see sysstat.h).
 *
 * Every parser walks the text once with strtoull/strtod and never trusts a
 * line to be complete: older kernels have fewer columns (diskstats grew
 * from 11 to 17 fields, /proc/stat from 4 to 10 CPU columns), and those
 * missing columns read as 0. A line that does not start the way its file's
 * lines must (a /proc/stat "cpuN" without a number, a diskstats line
 * without major, minor and name) makes the file malformed.
 */
#include "sysstat.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t cp_ss_cpu_ticks(const cp_ss_cpu *c)
{
    return c->user + c->nice + c->system + c->idle + c->iowait + c->irq + c->softirq + c->steal;
}

uint64_t cp_ss_cpu_busy_ticks(const cp_ss_cpu *c)
{
    return c->user + c->nice + c->system + c->irq + c->softirq;
}

const char *cp_ss_psi_name(int resource)
{
    static const char *const names[CP_SS_PSI_N] = { "cpu", "memory", "io" };
    return resource >= 0 && resource < CP_SS_PSI_N ? names[resource] : "?";
}

/* Up to max unsigned numbers from p; returns how many were read and sets
 * *end after the last. Stops at the end of the line. */
static int read_u64s(const char *p, uint64_t *v, int max, const char **end)
{
    int n = 0;
    while (n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            break;
        char *e;
        v[n++] = strtoull(p, &e, 10);
        p = e;
    }
    if (end)
        *end = p;
    return n;
}

static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

/* ---- /proc/stat ---- */

static void cpu_from(cp_ss_cpu *c, int cpu, const uint64_t *v, int n)
{
    memset(c, 0, sizeof *c);
    c->cpu = cpu;
    uint64_t *f[] = { &c->user, &c->nice, &c->system, &c->idle, &c->iowait, &c->irq,
                      &c->softirq, &c->steal, &c->guest, &c->guest_nice };
    for (int i = 0; i < n && i < 10; i++)
        *f[i] = v[i];
}

int cp_ss_parse_stat(const char *text, cp_ss_sample *s)
{
    s->n_cpus = 0;
    s->ctxt = s->procs_running = s->procs_blocked = 0;
    bool total = false;
    for (const char *p = text; *p; p = next_line(p)) {
        uint64_t v[10];
        if (!strncmp(p, "cpu", 3)) {
            const char *q = p + 3;
            int id = -1;
            if (*q >= '0' && *q <= '9') {
                char *e;
                id = (int)strtol(q, &e, 10);
                q = e;
            } else if (*q != ' ') {
                return CP_ERR_FORMAT;
            }
            int n = read_u64s(q, v, 10, NULL);
            if (n < 4) /* user nice system idle exist since Linux 2.4 */
                return CP_ERR_FORMAT;
            if (id < 0) {
                cpu_from(&s->total, -1, v, n);
                total = true;
            } else {
                cp_xgrow((void **)&s->cpus, &s->cap_cpus, s->n_cpus + 1, sizeof *s->cpus);
                cpu_from(&s->cpus[s->n_cpus++], id, v, n);
            }
        } else if (!strncmp(p, "ctxt ", 5) && read_u64s(p + 5, v, 1, NULL) == 1) {
            s->ctxt = v[0];
        } else if (!strncmp(p, "procs_running ", 14) && read_u64s(p + 14, v, 1, NULL) == 1) {
            s->procs_running = v[0];
        } else if (!strncmp(p, "procs_blocked ", 14) && read_u64s(p + 14, v, 1, NULL) == 1) {
            s->procs_blocked = v[0];
        }
    }
    return total ? 0 : CP_ERR_FORMAT;
}

/* ---- /proc/loadavg: "1.90 1.49 0.81 5/118 17261" ---- */

int cp_ss_parse_loadavg(const char *text, cp_ss_loadavg *out)
{
    memset(out, 0, sizeof *out);
    return sscanf(text, "%lf %lf %lf %d/%d", &out->avg1, &out->avg5, &out->avg15, &out->runnable, &out->tasks) == 5
               ? 0
               : CP_ERR_FORMAT;
}

/* ---- /proc/pressure/X: "some avg10=0.98 avg60=0.62 avg300=0.44 total=6387538" ---- */

static int psi_line(const char *p, cp_ss_psi_line *l)
{
    unsigned long long total;
    if (sscanf(p, "avg10=%lf avg60=%lf avg300=%lf total=%llu", &l->avg10, &l->avg60, &l->avg300, &total) != 4)
        return CP_ERR_FORMAT;
    l->total_us = total;
    l->valid = true;
    return 0;
}

int cp_ss_parse_psi(const char *text, cp_ss_psi *out)
{
    memset(out, 0, sizeof *out);
    for (const char *p = text; *p; p = next_line(p)) {
        int rc = 0;
        if (!strncmp(p, "some ", 5))
            rc = psi_line(p + 5, &out->some);
        else if (!strncmp(p, "full ", 5))
            rc = psi_line(p + 5, &out->full);
        if (rc)
            return rc;
    }
    return out->some.valid ? 0 : CP_ERR_FORMAT;
}

/* ---- /proc/meminfo: "MemAvailable:   23456789 kB" ---- */

int cp_ss_parse_meminfo(const char *text, cp_ss_meminfo *out)
{
    static const struct { const char *key; size_t off; } fields[] = {
        { "MemTotal", offsetof(cp_ss_meminfo, total_bytes) },
        { "MemFree", offsetof(cp_ss_meminfo, free_bytes) },
        { "MemAvailable", offsetof(cp_ss_meminfo, available_bytes) },
        { "Buffers", offsetof(cp_ss_meminfo, buffers_bytes) },
        { "Cached", offsetof(cp_ss_meminfo, cached_bytes) },
        { "Dirty", offsetof(cp_ss_meminfo, dirty_bytes) },
        { "Writeback", offsetof(cp_ss_meminfo, writeback_bytes) },
        { "Shmem", offsetof(cp_ss_meminfo, shmem_bytes) },
        { "SwapTotal", offsetof(cp_ss_meminfo, swap_total_bytes) },
        { "SwapFree", offsetof(cp_ss_meminfo, swap_free_bytes) },
        { "AnonHugePages", offsetof(cp_ss_meminfo, anon_huge_bytes) },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(fields); i++)
        *(int64_t *)((char *)out + fields[i].off) = -1;
    int found = 0;
    for (const char *p = text; *p; p = next_line(p)) {
        const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');
        if (!colon || (nl && colon > nl))
            continue;
        size_t klen = (size_t)(colon - p);
        for (size_t i = 0; i < CP_ARRAY_LEN(fields); i++) {
            if (strlen(fields[i].key) != klen || strncmp(p, fields[i].key, klen))
                continue;
            char *e;
            unsigned long long v = strtoull(colon + 1, &e, 10);
            while (*e == ' ')
                e++;
            if (e == colon + 1)
                return CP_ERR_FORMAT;
            *(int64_t *)((char *)out + fields[i].off) = (int64_t)(v * (!strncmp(e, "kB", 2) ? 1024ull : 1ull));
            found++;
        }
    }
    return found ? 0 : CP_ERR_FORMAT;
}

/* ---- /proc/diskstats: "254 0 vda 46859 7566 6668018 ..." ---- */

int cp_ss_parse_diskstats(const char *text, cp_ss_sample *s)
{
    s->n_disks = 0;
    for (const char *p = text; *p; p = next_line(p)) {
        while (*p == ' ')
            p++;
        if (*p == '\n' || !*p)
            continue;
        uint64_t mm[2], v[17] = { 0 };
        const char *q;
        if (read_u64s(p, mm, 2, &q) != 2)
            return CP_ERR_FORMAT;
        while (*q == ' ')
            q++;
        size_t nlen = strcspn(q, " \t\n");
        if (nlen == 0 || nlen >= sizeof s->disks->name)
            return CP_ERR_FORMAT;
        if (read_u64s(q + nlen, v, 17, NULL) < 11) /* the 11 fields of Linux 2.6 */
            return CP_ERR_FORMAT;
        cp_xgrow((void **)&s->disks, &s->cap_disks, s->n_disks + 1, sizeof *s->disks);
        cp_ss_disk *d = &s->disks[s->n_disks++];
        memset(d, 0, sizeof *d);
        memcpy(d->name, q, nlen);
        d->major = (unsigned)mm[0];
        d->minor = (unsigned)mm[1];
        uint64_t *f[] = { &d->reads, &d->reads_merged, &d->read_sectors, &d->read_ms, &d->writes,
                          &d->writes_merged, &d->write_sectors, &d->write_ms, &d->in_flight, &d->io_ms,
                          &d->weighted_ms, &d->discards, &d->discards_merged, &d->discard_sectors,
                          &d->discard_ms, &d->flushes, &d->flush_ms };
        for (int i = 0; i < 17; i++)
            *f[i] = v[i];
    }
    return 0;
}

/* ---- /proc/net/dev: " eth0: 142061953 2781 0 0 0 0 0 0 105144 1473 ..." ---- */

int cp_ss_parse_netdev(const char *text, cp_ss_sample *s)
{
    s->n_nets = 0;
    for (const char *p = text; *p; p = next_line(p)) {
        const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!colon || (nl && colon > nl) || memchr(p, '|', len)) /* the two header lines have '|' */
            continue;
        while (*p == ' ')
            p++;
        size_t nlen = (size_t)(colon - p);
        if (nlen == 0 || nlen >= sizeof s->nets->name)
            return CP_ERR_FORMAT;
        uint64_t v[16];
        if (read_u64s(colon + 1, v, 16, NULL) != 16)
            return CP_ERR_FORMAT;
        cp_xgrow((void **)&s->nets, &s->cap_nets, s->n_nets + 1, sizeof *s->nets);
        cp_ss_net *n = &s->nets[s->n_nets++];
        memset(n, 0, sizeof *n);
        memcpy(n->name, p, nlen);
        n->rx_bytes = v[0], n->rx_packets = v[1], n->rx_errs = v[2], n->rx_drop = v[3];
        n->tx_bytes = v[8], n->tx_packets = v[9], n->tx_errs = v[10], n->tx_drop = v[11];
        n->virt = !strcmp(n->name, "lo"); /* until sysfs says more */
    }
    return 0;
}

/* ---- /proc/cpuinfo "cpu MHz : 2450.000" ---- */

int cp_ss_parse_cpuinfo_mhz(const char *text, cp_ss_sample *s)
{
    s->n_freqs = 0;
    int cpu = -1;
    for (const char *p = text; *p; p = next_line(p)) {
        const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');
        if (!colon || (nl && colon > nl))
            continue;
        if (!strncmp(p, "processor", 9)) {
            cpu = atoi(colon + 1);
        } else if (!strncmp(p, "cpu MHz", 7)) {
            char *e;
            double mhz = strtod(colon + 1, &e);
            if (e == colon + 1 || !(mhz > 0))
                return CP_ERR_FORMAT;
            cp_xgrow((void **)&s->freqs, &s->cap_freqs, s->n_freqs + 1, sizeof *s->freqs);
            s->freqs[s->n_freqs++] = (cp_ss_freq){ cpu >= 0 ? cpu : (int)s->n_freqs, mhz };
        }
    }
    return 0;
}

/* ---- /proc/self ---- */

int cp_ss_parse_self_stat(const char *text, cp_ss_self *out)
{
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses,
     * so the fields start after the last ')' */
    const char *p = strrchr(text, ')');
    if (!p)
        return CP_ERR_FORMAT;
    p++;
    while (*p == ' ')
        p++;
    if (!*p)
        return CP_ERR_FORMAT;
    p++; /* the state letter (field 3) */
    /* fields 4..17: ppid pgrp session tty_nr tpgid(-1 without a terminal)
     * flags minflt cminflt majflt cmajflt utime stime cutime cstime */
    long long v[14];
    for (int i = 0; i < 14; i++) {
        char *e;
        v[i] = strtoll(p, &e, 10);
        if (e == p)
            return CP_ERR_FORMAT;
        p = e;
    }
    out->utime = (uint64_t)v[10];
    out->stime = (uint64_t)v[11];
    out->cutime = (uint64_t)v[12];
    out->cstime = (uint64_t)v[13];
    return 0;
}

int cp_ss_parse_self_io(const char *text, cp_ss_self *out)
{
    out->read_bytes = out->write_bytes = -1;
    for (const char *p = text; *p; p = next_line(p)) {
        if (!strncmp(p, "read_bytes:", 11))
            out->read_bytes = strtoll(p + 11, NULL, 10);
        else if (!strncmp(p, "write_bytes:", 12))
            out->write_bytes = strtoll(p + 12, NULL, 10);
    }
    return out->read_bytes >= 0 && out->write_bytes >= 0 ? 0 : CP_ERR_FORMAT;
}

/* ---- taking a sample ---- */

const cp_ss_disk *cp_ss_disk_find(const cp_ss_sample *s, const char *name)
{
    for (size_t i = 0; i < s->n_disks; i++)
        if (!strcmp(s->disks[i].name, name))
            return &s->disks[i];
    return NULL;
}

const cp_ss_net *cp_ss_net_find(const cp_ss_sample *s, const char *name)
{
    for (size_t i = 0; i < s->n_nets; i++)
        if (!strcmp(s->nets[i].name, name))
            return &s->nets[i];
    return NULL;
}

/* Whether /sys/DIR/NAME is a link into /devices/virtual; *exists whether it
 * is there at all. A '/' in a block device name is '!' in sysfs. */
static bool sysfs_virtual(const cp_fsroot *fs, const char *dir, const char *name, bool *exists)
{
    char path[256], target[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (char *c = path + strlen(dir) + 1; *c; c++)
        if (*c == '/')
            *c = '!';
    *exists = cp_fsroot_exists(fs, path);
    if (cp_fsroot_readlink(fs, path, target, sizeof target) < 0)
        return false;
    return strstr(target, "/virtual/") != NULL;
}

typedef int (*text_parser)(const char *text, void *out);

/* Read path into the sample's text buffer and parse it; 1 when read and
 * parsed, 0 when absent, <0 when malformed (err set). */
static int read_parse(const cp_fsroot *fs, const char *path, cp_ss_sample *s, text_parser parse, void *out,
                      cp_error *err)
{
    if (cp_fsroot_slurp(fs, path, &s->text, &s->cap_text) < 0)
        return 0;
    if (parse(s->text, out) < 0)
        return cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1, "not the kernel's format");
    return 1;
}

static int p_stat(const char *t, void *o) { return cp_ss_parse_stat(t, o); }
static int p_load(const char *t, void *o) { return cp_ss_parse_loadavg(t, o); }
static int p_psi(const char *t, void *o) { return cp_ss_parse_psi(t, o); }
static int p_mem(const char *t, void *o) { return cp_ss_parse_meminfo(t, o); }
static int p_disk(const char *t, void *o) { return cp_ss_parse_diskstats(t, o); }
static int p_net(const char *t, void *o) { return cp_ss_parse_netdev(t, o); }
static int p_mhz(const char *t, void *o) { return cp_ss_parse_cpuinfo_mhz(t, o); }
static int p_sstat(const char *t, void *o) { return cp_ss_parse_self_stat(t, o); }
static int p_sio(const char *t, void *o) { return cp_ss_parse_self_io(t, o); }

/* cpufreq of every CPU /proc/stat listed (or cpu0.. when it was not read). */
static int take_freq(const cp_fsroot *fs, cp_ss_sample *s, cp_error *err)
{
    s->n_freqs = 0;
    s->freq_source = CP_SS_FREQ_NONE;
    size_t n = s->n_cpus ? s->n_cpus : (size_t)cp_cpu_count();
    for (size_t i = 0; i < n; i++) {
        int cpu = s->n_cpus ? s->cpus[i].cpu : (int)i;
        char path[128];
        int64_t khz;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
        if (!cp_fsroot_read_i64(fs, path, &khz) || khz <= 0)
            continue;
        cp_xgrow((void **)&s->freqs, &s->cap_freqs, s->n_freqs + 1, sizeof *s->freqs);
        s->freqs[s->n_freqs++] = (cp_ss_freq){ cpu, (double)khz / 1e3 };
    }
    if (s->n_freqs) {
        s->freq_source = CP_SS_FREQ_CPUFREQ;
        return 1;
    }
    int rc = read_parse(fs, "/proc/cpuinfo", s, p_mhz, s, err);
    if (rc > 0 && s->n_freqs)
        s->freq_source = CP_SS_FREQ_CPUINFO;
    return rc < 0 ? rc : s->n_freqs > 0;
}

int cp_ss_take(const cp_fsroot *fs, unsigned what, cp_ss_sample *s, cp_error *err)
{
    s->have = 0;
    s->mono_ns = cp_now_ns();
    int rc, worst = 0;
#define TAKE(bit, expr)        \
    if (what & (bit)) {        \
        rc = (expr);           \
        if (rc > 0)            \
            s->have |= (bit);  \
        else if (rc < 0)       \
            worst = rc;        \
    }
    TAKE(CP_SS_STAT, read_parse(fs, "/proc/stat", s, p_stat, s, err))
    TAKE(CP_SS_LOADAVG, read_parse(fs, "/proc/loadavg", s, p_load, &s->load, err))
    if (what & CP_SS_PSI) {
        bool all = true;
        for (int r = 0; r < CP_SS_PSI_N; r++) {
            char path[64];
            snprintf(path, sizeof path, "/proc/pressure/%s", cp_ss_psi_name(r));
            memset(&s->psi[r], 0, sizeof s->psi[r]);
            rc = read_parse(fs, path, s, p_psi, &s->psi[r], err);
            if (rc < 0)
                worst = rc;
            all &= rc > 0;
        }
        if (all)
            s->have |= CP_SS_PSI;
    }
    TAKE(CP_SS_CPUFREQ, take_freq(fs, s, err))
    TAKE(CP_SS_MEMINFO, read_parse(fs, "/proc/meminfo", s, p_mem, &s->mem, err))
    TAKE(CP_SS_DISKSTATS, read_parse(fs, "/proc/diskstats", s, p_disk, s, err))
    for (size_t i = 0; (s->have & CP_SS_DISKSTATS) && i < s->n_disks; i++)
        s->disks[i].virt = sysfs_virtual(fs, "/sys/block", s->disks[i].name, &s->disks[i].whole);
    TAKE(CP_SS_NETDEV, read_parse(fs, "/proc/net/dev", s, p_net, s, err))
    for (size_t i = 0; (s->have & CP_SS_NETDEV) && i < s->n_nets; i++) {
        bool exists;
        bool virt = sysfs_virtual(fs, "/sys/class/net", s->nets[i].name, &exists);
        if (exists)
            s->nets[i].virt = virt;
    }
    if (what & CP_SS_SELF) {
        memset(&s->self, 0, sizeof s->self);
        s->self.read_bytes = s->self.write_bytes = -1;
        rc = read_parse(fs, "/proc/self/stat", s, p_sstat, &s->self, err);
        if (rc < 0)
            worst = rc;
        if (rc > 0)
            s->have |= CP_SS_SELF;
        cp_ss_self io = s->self;
        if (read_parse(fs, "/proc/self/io", s, p_sio, &io, NULL) > 0) /* unreadable in some containers */
            s->self = io;
    }
#undef TAKE
    return worst;
}

void cp_ss_sample_free(cp_ss_sample *s)
{
    free(s->cpus);
    free(s->disks);
    free(s->nets);
    free(s->freqs);
    free(s->text);
    memset(s, 0, sizeof *s);
}

static void *dup_array(const void *src, size_t n, size_t elem, size_t *cap)
{
    *cap = n;
    if (!n)
        return NULL;
    void *p = cp_xmalloc(n * elem);
    memcpy(p, src, n * elem);
    return p;
}

void cp_ss_sample_copy(cp_ss_sample *dst, const cp_ss_sample *src)
{
    *dst = *src;
    dst->cpus = dup_array(src->cpus, src->n_cpus, sizeof *src->cpus, &dst->cap_cpus);
    dst->disks = dup_array(src->disks, src->n_disks, sizeof *src->disks, &dst->cap_disks);
    dst->nets = dup_array(src->nets, src->n_nets, sizeof *src->nets, &dst->cap_nets);
    dst->freqs = dup_array(src->freqs, src->n_freqs, sizeof *src->freqs, &dst->cap_freqs);
    dst->text = NULL; /* a scratch buffer: not copied */
    dst->cap_text = 0;
}

/* ---- deltas ---- */

static double dpos(uint64_t a, uint64_t b)
{
    return b >= a ? (double)(b - a) : 0.0;
}

static void cpu_delta(const cp_ss_sample *a, const cp_ss_sample *b, cp_ss_delta *o)
{
    const cp_ss_cpu *x = &a->total, *y = &b->total;
    double ticks = dpos(cp_ss_cpu_ticks(x), cp_ss_cpu_ticks(y));
    if (!(ticks > 0))
        return;
    o->user_pct = (dpos(x->user, y->user) + dpos(x->nice, y->nice)) / ticks * 100;
    o->system_pct = (dpos(x->system, y->system) + dpos(x->irq, y->irq) + dpos(x->softirq, y->softirq)) / ticks * 100;
    o->iowait_pct = dpos(x->iowait, y->iowait) / ticks * 100;
    o->steal_pct = dpos(x->steal, y->steal) / ticks * 100;
    o->idle_pct = dpos(x->idle, y->idle) / ticks * 100;
    double busy = dpos(cp_ss_cpu_busy_ticks(x), cp_ss_cpu_busy_ticks(y));
    o->busy_pct = busy / ticks * 100;
    o->busy_cpu_s = busy / CP_SS_USER_HZ;
    o->cpu_s = ticks / CP_SS_USER_HZ;
    o->n_cpus = (int)b->n_cpus;
}

static void disk_delta(const cp_ss_sample *a, const cp_ss_sample *b, cp_ss_delta *o)
{
    o->disk_read_bytes = o->disk_write_bytes = o->disk_queue_avg = 0;
    double weighted_ms = 0;
    for (size_t i = 0; i < b->n_disks; i++) {
        const cp_ss_disk *y = &b->disks[i];
        if (!y->whole || y->virt)
            continue;
        const cp_ss_disk *x = cp_ss_disk_find(a, y->name);
        if (!x)
            continue;
        o->disk_read_bytes += dpos(x->read_sectors, y->read_sectors) * CP_SS_SECTOR_BYTES;
        o->disk_write_bytes += dpos(x->write_sectors, y->write_sectors) * CP_SS_SECTOR_BYTES;
        weighted_ms += dpos(x->weighted_ms, y->weighted_ms);
    }
    /* weighted ms grows by (requests in flight) per ms: its rate is the mean queue */
    o->disk_queue_avg = o->seconds > 0 ? weighted_ms / (o->seconds * 1e3) : NAN;
}

static void net_delta(const cp_ss_sample *a, const cp_ss_sample *b, cp_ss_delta *o)
{
    o->net_rx_bytes = o->net_tx_bytes = 0;
    for (size_t i = 0; i < b->n_nets; i++) {
        const cp_ss_net *y = &b->nets[i];
        const cp_ss_net *x = y->virt ? NULL : cp_ss_net_find(a, y->name);
        if (!x)
            continue;
        o->net_rx_bytes += dpos(x->rx_bytes, y->rx_bytes);
        o->net_tx_bytes += dpos(x->tx_bytes, y->tx_bytes);
    }
}

static void freq_range(const cp_ss_sample *s, double *lo, double *hi)
{
    for (size_t i = 0; i < s->n_freqs; i++) {
        double f = s->freqs[i].cur_mhz;
        if (isnan(*lo) || f < *lo)
            *lo = f;
        if (isnan(*hi) || f > *hi)
            *hi = f;
    }
}

void cp_ss_delta_of(const cp_ss_sample *a, const cp_ss_sample *b, cp_ss_delta *o)
{
    memset(o, 0, sizeof *o);
    double *nan_fields[] = { &o->user_pct, &o->system_pct, &o->iowait_pct, &o->steal_pct, &o->idle_pct,
                             &o->busy_pct, &o->cpu_s, &o->busy_cpu_s, &o->self_cpu_s, &o->self_user_cpu_s, &o->disk_read_bytes,
                             &o->disk_write_bytes, &o->disk_queue_avg, &o->self_read_bytes, &o->self_write_bytes,
                             &o->net_rx_bytes, &o->net_tx_bytes, &o->freq_min_mhz, &o->freq_max_mhz };
    for (size_t i = 0; i < CP_ARRAY_LEN(nan_fields); i++)
        *nan_fields[i] = NAN;
    for (int r = 0; r < CP_SS_PSI_N; r++)
        o->psi_some_pct[r] = o->psi_full_pct[r] = NAN;
    o->seconds = (double)(b->mono_ns - a->mono_ns) / 1e9;
    unsigned both = a->have & b->have;
    if (both & CP_SS_STAT)
        cpu_delta(a, b, o);
    if (both & CP_SS_SELF) {
        const cp_ss_self *x = &a->self, *y = &b->self;
        o->self_cpu_s = (dpos(x->utime, y->utime) + dpos(x->stime, y->stime) + dpos(x->cutime, y->cutime) +
                         dpos(x->cstime, y->cstime)) / CP_SS_USER_HZ;
        o->self_user_cpu_s = (dpos(x->utime, y->utime) + dpos(x->cutime, y->cutime)) / CP_SS_USER_HZ;
        if (x->read_bytes >= 0 && y->read_bytes >= 0) {
            o->self_read_bytes = dpos((uint64_t)x->read_bytes, (uint64_t)y->read_bytes);
            o->self_write_bytes = dpos((uint64_t)x->write_bytes, (uint64_t)y->write_bytes);
        }
    }
    if (both & CP_SS_DISKSTATS)
        disk_delta(a, b, o);
    if (both & CP_SS_NETDEV)
        net_delta(a, b, o);
    if ((both & CP_SS_PSI) && o->seconds > 0)
        for (int r = 0; r < CP_SS_PSI_N; r++) {
            o->psi_some_pct[r] = dpos(a->psi[r].some.total_us, b->psi[r].some.total_us) / (o->seconds * 1e6) * 100;
            if (a->psi[r].full.valid && b->psi[r].full.valid)
                o->psi_full_pct[r] =
                    dpos(a->psi[r].full.total_us, b->psi[r].full.total_us) / (o->seconds * 1e6) * 100;
        }
    if (both & CP_SS_CPUFREQ) {
        freq_range(a, &o->freq_min_mhz, &o->freq_max_mhz);
        freq_range(b, &o->freq_min_mhz, &o->freq_max_mhz);
    }
}
