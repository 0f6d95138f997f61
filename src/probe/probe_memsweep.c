/* probe_memsweep.c - the caches the OS reports and where a working-set
 * sweep's bandwidth stops falling (see probe_mem.h).
 *
 * Why a sweep: a VM's guest sees the cache sizes the hypervisor chose to
 * show (CPUID, then sysfs and hwloc), not the host's. On the 2-vCPU
 * development VM sysfs says 32 MiB of L3, yet STREAM arrays of 3 x 128 MiB
 * ran at 257 GB/s, ten times DRAM: the host's last-level cache held them.
 * So the memory probe measures the bandwidth of growing working sets and
 * takes DRAM's figure where the curve is flat at its large end, and the
 * largest cache as the last working set that was still faster; the STREAM
 * arrays are then sized by that, not only by what the OS reports.
 */
#include "probe_mem.h"
#include "probe.h"
#include "../base/util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t probe_parse_cache_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    case 0:
    case '\n': return v;
    default: return 0;
    }
}

#define MAX_SETS 256 /* distinct instances per level we tell apart */

typedef struct level_acc {
    int level;
    uint64_t instance_bytes;
    char sets[MAX_SETS][64]; /* shared_cpu_list of each instance seen */
    int n_sets;
} level_acc;

static void add_instance(level_acc *acc, size_t *n_acc, size_t max, int level, uint64_t bytes, const char *set)
{
    level_acc *a = NULL;
    for (size_t i = 0; i < *n_acc && !a; i++)
        if (acc[i].level == level)
            a = &acc[i];
    if (!a) {
        if (*n_acc >= max)
            return;
        a = &acc[(*n_acc)++];
        memset(a, 0, sizeof *a);
        a->level = level;
        a->instance_bytes = bytes;
    }
    for (int i = 0; i < a->n_sets; i++)
        if (!strcmp(a->sets[i], set))
            return; /* another CPU of the same instance */
    if (a->n_sets < MAX_SETS)
        snprintf(a->sets[a->n_sets++], sizeof a->sets[0], "%s", set);
}

static int cmp_cache(const void *x, const void *y)
{
    return ((const probe_cache *)x)->level - ((const probe_cache *)y)->level;
}

size_t probe_caches(const cp_fsroot *fs, probe_cache *out, size_t max)
{
    level_acc *acc = cp_xcalloc(8, sizeof *acc);
    size_t n_acc = 0;
    for (int cpu = 0; cpu < 4096; cpu++) {
        char dir[96], path[160], buf[128];
        snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/cache", cpu);
        if (!cp_fsroot_exists(fs, dir)) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
            if (!cp_fsroot_exists(fs, path))
                break; /* CPUs are numbered densely in sysfs */
            continue;  /* present, but no cache information */
        }
        for (int idx = 0; idx < 16; idx++) {
            int64_t level;
            snprintf(path, sizeof path, "%s/index%d/level", dir, idx);
            if (!cp_fsroot_read_i64(fs, path, &level))
                continue; /* indexes are dense on x86, not promised elsewhere */
            snprintf(path, sizeof path, "%s/index%d/type", dir, idx);
            if (!cp_fsroot_read_line(fs, path, buf, sizeof buf) || !strcmp(buf, "Instruction"))
                continue;
            snprintf(path, sizeof path, "%s/index%d/size", dir, idx);
            if (!cp_fsroot_read_line(fs, path, buf, sizeof buf))
                continue;
            uint64_t bytes = probe_parse_cache_size(buf);
            snprintf(path, sizeof path, "%s/index%d/shared_cpu_list", dir, idx);
            char set[64];
            if (!cp_fsroot_read_line(fs, path, set, sizeof set))
                snprintf(set, sizeof set, "cpu%d", cpu); /* unknown sharing: count it once per CPU */
            if (bytes)
                add_instance(acc, &n_acc, 8, (int)level, bytes, set);
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < n_acc && n < max; i++)
        out[n++] = (probe_cache){ acc[i].level, acc[i].instance_bytes, acc[i].n_sets,
                                  acc[i].instance_bytes * (uint64_t)acc[i].n_sets };
    free(acc);
    qsort(out, n, sizeof *out, cmp_cache);
    return n;
}

uint64_t probe_llc_bytes(const cp_fsroot *fs)
{
    probe_cache c[8];
    size_t n = probe_caches(fs, c, 8);
    return n ? c[n - 1].total_bytes : 0;
}

/* DMI type 17 (memory device) of the SMBIOS spec: data width (bits) at
 * 0x0A, size at 0x0C (0 = empty slot), speed (MT/s) at 0x15, configured
 * speed at 0x20. Sum over populated devices of MT/s x width / 8: an upper
 * bound, since DIMMs that share a channel do not add up. NaN when the
 * entries are absent or unreadable (they need root). */
double probe_dmi_mem_peak_gbps(const cp_fsroot *fs, int *dimms)
{
    double sum = 0;
    *dimms = 0;
    for (int i = 0; i < 1024; i++) {
        char path[96];
        unsigned char raw[0x60];
        snprintf(path, sizeof path, "/sys/firmware/dmi/entries/17-%d/raw", i);
        int fd = cp_fsroot_open(fs, path);
        if (fd < 0)
            break;
        ssize_t n = read(fd, raw, sizeof raw);
        close(fd);
        if (n < 0x17 || raw[0] != 17 || raw[1] < 0x17)
            continue;
        unsigned width = raw[0x0A] | raw[0x0B] << 8, size = raw[0x0C] | raw[0x0D] << 8;
        unsigned speed = raw[0x15] | raw[0x16] << 8;
        if (raw[1] >= 0x22 && n >= 0x22) {
            unsigned conf = raw[0x20] | raw[0x21] << 8;
            if (conf && conf != 0xFFFF)
                speed = conf;
        }
        if (size == 0 || width == 0 || width == 0xFFFF || speed == 0 || speed == 0xFFFF)
            continue;
        sum += (double)speed * 1e6 * width / 8 / 1e9;
        (*dimms)++;
    }
    return *dimms ? sum : NAN;
}

uint64_t probe_stream_array_bytes(uint64_t explicit_bytes, uint64_t cache_bytes, int quick, uint64_t cap_bytes,
                                  bool *capped)
{
    uint64_t b = explicit_bytes;
    if (!b) {
        uint64_t floor = (quick ? 64ull : 256ull) << 20;
        b = 4 * cache_bytes > floor ? 4 * cache_bytes : floor;
        if (cap_bytes && b > cap_bytes)
            b = cap_bytes;
    }
    if (capped) /* by the memory bound, or by the user's --size */
        *capped = b < 4 * cache_bytes;
    return b / 64 * 64;
}

static double median_of(const probe_sweep_point *p, size_t first, size_t last)
{
    size_t n = last - first + 1;
    double *v = cp_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = p[first + i].gbps;
    double m = probe_median(v, n);
    free(v);
    return m;
}

static bool within(double v, double level)
{
    return isfinite(v) && level > 0 && fabs(v / level - 1) <= PROBE_PLATEAU_TOL;
}

void probe_find_plateau(const probe_sweep_point *p, size_t n, probe_plateau *out)
{
    memset(out, 0, sizeof *out);
    out->gbps = NAN;
    if (n < PROBE_PLATEAU_MIN_POINTS)
        return;
    double level = median_of(p, n - PROBE_PLATEAU_MIN_POINTS, n - 1);
    /* back from the end while points are on the level; one point off it
     * with the one before it back on is noise (a cache only ever makes the
     * smaller working sets faster, never one in the middle of DRAM's range) */
    size_t first = n, kept = 0;
    double v[64];
    while (first > 0) {
        if (within(p[first - 1].gbps, level))
            first--;
        else if (first >= 2 && kept >= 1 && within(p[first - 2].gbps, level))
            first -= 2;
        else
            break;
        if (kept < 64)
            v[kept++] = p[first].gbps;
    }
    if (kept < PROBE_PLATEAU_MIN_POINTS)
        return;
    out->found = true;
    out->first = first;
    out->gbps = probe_median(v, kept);
    out->start_bytes = p[first].ws_bytes;
    /* only a faster point is a cache; a slower one (a GPU copy still paying
     * its launch overhead) is not */
    out->cache_bytes = first > 0 && p[first - 1].gbps > out->gbps ? p[first - 1].ws_bytes : 0;
}

size_t probe_sweep_runs(const probe_sweep_point *p, size_t n, probe_sweep_run *runs, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k <= max;) {
        size_t j = i;
        while (j + 1 < n && within(p[j + 1].gbps, p[i].gbps))
            j++;
        if (k == max)
            break;
        runs[k++] = (probe_sweep_run){ i, j, median_of(p, i, j) };
        i = j + 1;
    }
    return k;
}

bool probe_sweep_settled(const probe_sweep_point *p, size_t n, uint64_t os_llc_bytes, uint64_t min_ws_bytes)
{
    probe_plateau pl;
    probe_find_plateau(p, n, &pl);
    if (!pl.found)
        return false;
    /* a working set is a whole number of triad elements (24 bytes): 2 GiB
     * comes out 8 bytes short, so the bounds get 1 % of slack */
    double last = (double)p[n - 1].ws_bytes * 1.01;
    return last >= 4.0 * (double)os_llc_bytes && last >= 4.0 * (double)pl.cache_bytes && last >= (double)min_ws_bytes;
}
