/* probe_blockdev.c - the block device under a directory and how its queue
 * splits the storage probe's I/O (see probe_storage.h).
 *
 * The filesystem's st_dev names the device (MAJOR:MINOR); /sys/dev/block
 * links it to its sysfs directory, and a partition's parent directory is
 * its disk, whose queue/ holds the limits that decide how a read() or
 * write() of one block becomes requests:
 *   max_sectors_kb   the largest request the kernel builds
 *   max_segments     scatter-gather entries per request: a buffer of 4 KiB
 *                    pages that are not physically adjacent needs one per
 *                    page, so a 1 MiB block is 256 segments
 *   nr_requests, scheduler, rotational, write_cache (a virtual disk in
 *   "write back" keeps writes in the host until a flush)
 * docs/PERFORMANCE.md found the virtio effect this makes visible: a virtio
 * disk takes 254 segments per request, so each 1 MiB block of a page-backed
 * buffer goes down as 2 requests (1016 KiB + 8 KiB), while one physically
 * contiguous (huge-page) buffer is one segment and one request; the same
 * O_DIRECT read loop ran 2.0-2.6 GB/s with a huge-page buffer against
 * 1.1-2.2 GB/s with 4 KiB pages. The probe keeps fio's 4 KiB-page buffers
 * (so the two stay comparable) and says how many requests a block became,
 * from these limits and from the disk's own counters.
 */
#include "probe_storage.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void read_str(const cp_fsroot *fs, const char *dir, const char *file, char *buf, size_t size)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (!cp_fsroot_read_line(fs, path, buf, size))
        buf[0] = 0;
}

static int64_t read_num(const cp_fsroot *fs, const char *dir, const char *file)
{
    char path[1200];
    int64_t v;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return cp_fsroot_read_i64(fs, path, &v) ? v : -1;
}

/* "none [mq-deadline] kyber" -> "mq-deadline"; a single name as it is. */
static void current_scheduler(char *s)
{
    char *open = strchr(s, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close) {
        memmove(s, open + 1, (size_t)(close - open - 1));
        s[close - open - 1] = 0;
    }
}

int probe_blockdev_of(const cp_fsroot *fs, unsigned major, unsigned minor, probe_blockdev *out)
{
    memset(out, 0, sizeof *out);
    char link[64], dir[1024];
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major, minor);
    if (!cp_fsroot_resolve(fs, link, dir, sizeof dir))
        return CP_ERR_UNAVAILABLE; /* tmpfs, overlay, NFS: no block device */
    char probe_path[1100];
    snprintf(probe_path, sizeof probe_path, "%s/partition", dir);
    if (cp_fsroot_exists(fs, probe_path)) { /* a partition: its disk is the parent directory */
        const char *slash = strrchr(dir, '/');
        snprintf(out->part, sizeof out->part, "%.39s", slash + 1);
        dir[slash - dir] = 0;
    }
    const char *slash = strrchr(dir, '/');
    snprintf(out->name, sizeof out->name, "%.39s", slash ? slash + 1 : dir);
    out->virt = strstr(dir, "/devices/virtual/") != NULL;
    static const char *const buses[] = { "virtio", "nvme", "scsi", "mmc", "xen" };
    for (size_t i = 0; i < CP_ARRAY_LEN(buses) && !out->bus[0]; i++)
        if (strstr(dir, buses[i]))
            snprintf(out->bus, sizeof out->bus, "%s", buses[i]);
    char q[1100];
    snprintf(q, sizeof q, "%s/queue", dir);
    out->nr_requests = read_num(fs, q, "nr_requests");
    out->max_sectors_kb = read_num(fs, q, "max_sectors_kb");
    out->max_hw_sectors_kb = read_num(fs, q, "max_hw_sectors_kb");
    out->max_segments = read_num(fs, q, "max_segments");
    out->max_segment_size = read_num(fs, q, "max_segment_size");
    out->rotational = read_num(fs, q, "rotational");
    out->logical_block_size = read_num(fs, q, "logical_block_size");
    out->physical_block_size = read_num(fs, q, "physical_block_size");
    out->read_ahead_kb = read_num(fs, q, "read_ahead_kb");
    read_str(fs, q, "write_cache", out->write_cache, sizeof out->write_cache);
    read_str(fs, q, "scheduler", out->scheduler, sizeof out->scheduler);
    current_scheduler(out->scheduler);
    out->found = true;
    return 0;
}

int probe_block_requests(const probe_blockdev *d, uint64_t block_bytes, size_t page_bytes, uint64_t *req_bytes)
{
    *req_bytes = 0;
    if (!d->found || d->max_sectors_kb <= 0)
        return -1;
    uint64_t per = (uint64_t)d->max_sectors_kb * 1024;
    if (d->max_segments > 0) {
        /* one segment per page unless pages happen to be physically adjacent */
        uint64_t seg = page_bytes;
        if (d->max_segment_size > 0 && (uint64_t)d->max_segment_size < seg)
            seg = (uint64_t)d->max_segment_size;
        uint64_t by_segments = (uint64_t)d->max_segments * seg;
        if (by_segments < per)
            per = by_segments;
    }
    *req_bytes = per;
    return (int)((block_bytes + per - 1) / per);
}

void probe_blockdev_describe(const probe_blockdev *d, uint64_t block_bytes, size_t page_bytes, char *buf, size_t size)
{
    if (!d->found) {
        snprintf(buf, size, "no block device under the directory (tmpfs, overlay or a network filesystem)");
        return;
    }
    uint64_t req = 0;
    int n = probe_block_requests(d, block_bytes, page_bytes, &req);
    int w = snprintf(buf, size, "device %s%s%s%s%s (%s%srotational %lld, write cache %s, scheduler %s, nr_requests %lld, "
                     "max_sectors_kb %lld, max_segments %lld)",
                     d->name, d->part[0] ? " (partition " : "", d->part, d->part[0] ? ")" : "", d->virt ? " [virtual]" : "",
                     d->bus, d->bus[0] ? ", " : "", (long long)d->rotational, d->write_cache[0] ? d->write_cache : "?",
                     d->scheduler[0] ? d->scheduler : "?", (long long)d->nr_requests, (long long)d->max_sectors_kb,
                     (long long)d->max_segments);
    if (w < 0 || (size_t)w >= size || n < 1)
        return;
    bool by_segments = d->max_segments > 0 && (uint64_t)d->max_segments * page_bytes < (uint64_t)d->max_sectors_kb * 1024;
    if (n == 1)
        snprintf(buf + w, size - (size_t)w, ": a %llu KiB block of %zu KiB pages fits one request",
                 (unsigned long long)(block_bytes >> 10), page_bytes >> 10);
    else
        snprintf(buf + w, size - (size_t)w,
                 ": a %llu KiB block goes down as up to %d requests of at most %llu KiB (%s)%s",
                 (unsigned long long)(block_bytes >> 10), n, (unsigned long long)(req >> 10),
                 by_segments ? "a segment per 4 KiB page that is not physically next to the one before, "
                               "max_segments per request"
                             : "max_sectors_kb",
                 by_segments ? "; adjacent pages merge, and a huge-page buffer is one segment: the disk's counters "
                               "in each figure's method say what happened"
                             : "");
}

void probe_disk_io_of(const cp_ss_sample *a, const cp_ss_sample *b, const char *disk, probe_disk_io *out)
{
    memset(out, 0, sizeof *out);
    out->avg_request_bytes = out->queue_avg = NAN;
    const cp_ss_disk *x = cp_ss_disk_find(a, disk), *y = cp_ss_disk_find(b, disk);
    double ms = (double)(b->mono_ns - a->mono_ns) / 1e6;
    if (!x || !y || !(ms > 0))
        return;
    out->valid = true;
    out->reads = y->reads >= x->reads ? y->reads - x->reads : 0;
    out->writes = y->writes >= x->writes ? y->writes - x->writes : 0;
    uint64_t sectors = (y->read_sectors >= x->read_sectors ? y->read_sectors - x->read_sectors : 0) +
                       (y->write_sectors >= x->write_sectors ? y->write_sectors - x->write_sectors : 0);
    uint64_t ios = out->reads + out->writes;
    out->bytes = sectors * CP_SS_SECTOR_BYTES;
    if (ios)
        out->avg_request_bytes = (double)out->bytes / (double)ios;
    out->queue_avg = (double)(y->weighted_ms >= x->weighted_ms ? y->weighted_ms - x->weighted_ms : 0) / ms;
}
