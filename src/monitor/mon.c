/* mon.c - one sample of every layer (see mon.h): base/sysstat for the
 * host, storage and /proc/net/dev, sysfs for link speeds and InfiniBand /
 * RoCE ports, NVML for the GPUs. Devices and ports are sorted by name so
 * two samples of one machine list them in the same order (readdir's order
 * is the filesystem's). */
#include "mon.h"
#include "../base/util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
    const char *dir, *file, *metric, *help;
    double scale;
} k_ib[] = {
#define X(id, dir, file, scale, metric, help) { dir, file, metric, help, scale },
#include "../model/ib_counters.def"
#undef X
};

double mon_ib_scale(int id) { return id >= 0 && id < MON_IB_N ? k_ib[id].scale : NAN; }
const char *mon_ib_metric(int id) { return id >= 0 && id < MON_IB_N ? k_ib[id].metric : "?"; }
const char *mon_ib_help(int id) { return id >= 0 && id < MON_IB_N ? k_ib[id].help : "?"; }
const char *mon_ib_file(int id) { return id >= 0 && id < MON_IB_N ? k_ib[id].file : "?"; }

void mon_open(mon *m, const char *fsroot, bool with_gpu)
{
    memset(m, 0, sizeof *m);
    cp_fsroot_init(&m->fs, fsroot);
    if (!with_gpu) {
        snprintf(m->gpu_why, sizeof m->gpu_why, "GPU sampling off (--no-gpu)");
        return;
    }
    char why[512];
    if (gpu_nvml_open(&m->nvml, why, sizeof why) == 0)
        m->gpu_ok = true;
    else
        snprintf(m->gpu_why, sizeof m->gpu_why, "%s", why);
}

void mon_close(mon *m)
{
    if (m->gpu_ok)
        gpu_nvml_close(&m->nvml);
    memset(m, 0, sizeof *m);
}

void mon_sample_free(mon_sample *s)
{
    cp_ss_sample_free(&s->ss);
    free(s->net_speed_mbit_s);
    free(s->ib);
    free(s->gpus);
    memset(s, 0, sizeof *s);
}

double mon_ib_rate_gbit_s(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v > 0))
        return NAN;
    while (*end == ' ')
        end++;
    return strncmp(end, "Gb/sec", 6) == 0 ? v : NAN;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names in a directory (without . and ..), sorted; the caller frees. */
static size_t list_dir(const cp_fsroot *fs, const char *path, char ***out)
{
    *out = NULL;
    DIR *d = cp_fsroot_opendir(fs, path);
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d)) && n < MON_MAX_IB_PORTS) {
        if (e->d_name[0] == '.')
            continue;
        cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
        v[n++] = cp_xstrdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void read_port(const cp_fsroot *fs, const char *dev, const char *port, mon_ib_port *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->dev, sizeof p->dev, "%s", dev);
    p->port = (unsigned)strtoul(port, NULL, 10);
    p->rate_gbit_s = NAN;
    char path[512], line[128];
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/rate", dev, port);
    if (cp_fsroot_read_line(fs, path, line, sizeof line))
        p->rate_gbit_s = mon_ib_rate_gbit_s(line);
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/state", dev, port);
    if (cp_fsroot_read_line(fs, path, line, sizeof line)) {
        const char *colon = strchr(line, ':'); /* "4: ACTIVE" */
        const char *st = colon ? colon + 1 : line;
        while (*st == ' ')
            st++;
        snprintf(p->state, sizeof p->state, "%.*s", (int)sizeof p->state - 1, st);
    }
    snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/link_layer", dev, port);
    if (!cp_fsroot_read_line(fs, path, p->link_layer, sizeof p->link_layer))
        p->link_layer[0] = 0;
    for (int i = 0; i < MON_IB_N; i++) {
        int64_t v;
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%s/%s/%s", dev, port, k_ib[i].dir, k_ib[i].file);
        if (cp_fsroot_read_i64(fs, path, &v) && v >= 0) {
            p->c[i] = (uint64_t)v;
            p->have |= 1u << i;
        }
    }
}

static void take_ib(const cp_fsroot *fs, mon_sample *s)
{
    s->n_ib = 0;
    char **devs;
    size_t nd = list_dir(fs, "/sys/class/infiniband", &devs);
    for (size_t d = 0; d < nd; d++) {
        char path[512], **ports;
        snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports", devs[d]);
        size_t np = list_dir(fs, path, &ports);
        for (size_t p = 0; p < np && s->n_ib < MON_MAX_IB_PORTS; p++) {
            cp_xgrow((void **)&s->ib, &s->cap_ib, s->n_ib + 1, sizeof *s->ib);
            read_port(fs, devs[d], ports[p], &s->ib[s->n_ib++]);
        }
        free_list(ports, np);
    }
    free_list(devs, nd);
}

/* /sys/class/net/IF/speed in Mbit/s (-1 or unreadable when the link is down
 * or virtual: NaN). */
static void take_speeds(const cp_fsroot *fs, mon_sample *s)
{
    cp_xgrow((void **)&s->net_speed_mbit_s, &s->cap_speed, s->ss.n_nets + 1, sizeof *s->net_speed_mbit_s);
    for (size_t i = 0; i < s->ss.n_nets; i++) {
        char path[256];
        int64_t v;
        snprintf(path, sizeof path, "/sys/class/net/%s/speed", s->ss.nets[i].name);
        s->net_speed_mbit_s[i] = cp_fsroot_read_i64(fs, path, &v) && v > 0 ? (double)v : NAN;
    }
}

int mon_take(mon *m, mon_sample *s, cp_error *err)
{
    int64_t t0 = cp_now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->wall_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    unsigned what = CP_SS_STAT | CP_SS_LOADAVG | CP_SS_PSI | CP_SS_MEMINFO | CP_SS_DISKSTATS | CP_SS_NETDEV;
    int rc = cp_ss_take(&m->fs, what, &s->ss, err);
    take_speeds(&m->fs, s);
    take_ib(&m->fs, s);
    s->n_gpus = 0;
    if (m->gpu_ok) {
        cp_xgrow((void **)&s->gpus, &s->cap_gpus, m->nvml.n_devices + 1, sizeof *s->gpus);
        for (unsigned i = 0; i < m->nvml.n_devices; i++)
            gpu_nvml_read(&m->nvml, i, &s->gpus[s->n_gpus++]);
    }
    s->take_s = (double)(cp_now_ns() - t0) / 1e9;
    return rc;
}
