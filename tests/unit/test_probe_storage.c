/* test_probe_storage.c - the storage probe's page-cache eviction: the
 * mincore page count must see a freshly written file as cached and a
 * re-read one as cached again, and probe_drop_file_cache must leave no
 * page of it cached, so that the probe's buffered read measures the
 * device. Runs in a temporary directory under the working directory (the
 * build tree: a disk filesystem); skipped on tmpfs, which cannot drop its
 * pages. */
#include "test_util.h"
#include "probe/probe_storage.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <stdbool.h>
#include <sys/statfs.h>
#include <unistd.h>

enum { FILE_BYTES = (4 << 20) + 100 }; /* not a page multiple: the last page counts */

typedef struct fx {
    char dir[64], path[96];
    int fd;
    uint64_t pages;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "./cp_storage_test_XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/seq", f->dir);
    f->fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (f->fd < 0)
        return -1;
    char *buf = malloc(FILE_BYTES);
    for (size_t i = 0; i < FILE_BYTES; i++)
        buf[i] = (char)(i * 2654435761u >> 13);
    ssize_t w = pwrite(f->fd, buf, FILE_BYTES, 0); /* buffered, not synced: dirty pages */
    free(buf);
    if (w != FILE_BYTES)
        return -1;
    long page = sysconf(_SC_PAGESIZE);
    f->pages = ((uint64_t)FILE_BYTES + (uint64_t)page - 1) / (uint64_t)page;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    close(f->fd);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static bool on_tmpfs(const fx *f)
{
    struct statfs sb;
    return statfs(f->dir, &sb) == 0 && sb.f_type == TMPFS_MAGIC;
}

static void test_drop_then_reread(void **state)
{
    fx *f = *state;
    if (on_tmpfs(f))
        skip();
    cp_error err;
    uint64_t resident = 0, total = 0;

    /* just written: every page is in the cache (dirty) */
    assert_int_equal(probe_file_cached_pages(f->fd, f->path, FILE_BYTES, &resident, &total, &err), 0);
    assert_int_equal(total, f->pages);
    assert_int_equal(resident, f->pages);

    /* dropped: none left, although the pages were dirty (fsync first) */
    assert_int_equal(probe_drop_file_cache(f->fd, f->path, FILE_BYTES, &resident, &total, &err), 0);
    assert_int_equal(total, f->pages);
    assert_int_equal(resident, 0);
    assert_int_equal(probe_file_cached_pages(f->fd, f->path, FILE_BYTES, &resident, &total, &err), 0);
    assert_int_equal(resident, 0);

    /* a read brings them back: the count is not blind */
    char *buf = malloc(FILE_BYTES);
    assert_int_equal(pread(f->fd, buf, FILE_BYTES, 0), FILE_BYTES);
    free(buf);
    assert_int_equal(probe_file_cached_pages(f->fd, f->path, FILE_BYTES, &resident, &total, &err), 0);
    assert_int_equal(resident, f->pages);

    /* a prefix: only its pages are counted */
    assert_int_equal(probe_file_cached_pages(f->fd, f->path, 8192, &resident, &total, &err), 0);
    assert_int_equal(total, 8192 / sysconf(_SC_PAGESIZE));
    assert_int_equal(resident, total);
}

static void test_errors(void **state)
{
    fx *f = *state;
    cp_error err;
    uint64_t resident = 7, total = 7;
    assert_int_equal(probe_file_cached_pages(f->fd, f->path, 0, &resident, &total, &err), 0);
    assert_int_equal(resident, 0);
    assert_int_equal(total, 0);

    /* a descriptor that cannot be mapped: an error naming the file, not a crash */
    int wfd = open(f->path, O_WRONLY | O_CLOEXEC);
    assert_true(wfd >= 0);
    assert_true(probe_file_cached_pages(wfd, f->path, FILE_BYTES, &resident, &total, &err) < 0);
    assert_int_equal(err.code, CP_ERR_IO);
    assert_int_equal(err.sys_errno, EACCES);
    assert_non_null(strstr(err.msg, "cannot map"));
    close(wfd);
    assert_true(probe_drop_file_cache(-1, f->path, FILE_BYTES, &resident, &total, &err) < 0);
    assert_int_equal(err.sys_errno, EBADF);
}

/* The device under a filesystem and how its queue splits a 1 MiB block,
 * from the captured trees (tests/fixtures/fsroot). */
static void test_blockdev(void **state)
{
    (void)state;
    char dir[1024];
    cp_fsroot fs;
    cp_fsroot_init(&fs, cp_test_fixture("fsroot/metal", dir, sizeof dir));
    probe_blockdev d;
    /* a partition: its disk's queue */
    assert_int_equal(probe_blockdev_of(&fs, 259, 1, &d), 0);
    assert_string_equal(d.name, "nvme0n1");
    assert_string_equal(d.part, "nvme0n1p1");
    assert_string_equal(d.bus, "nvme");
    assert_false(d.virt);
    assert_int_equal(d.max_sectors_kb, 128);
    assert_int_equal(d.max_segments, 33);
    assert_int_equal(d.nr_requests, 1023);
    assert_string_equal(d.scheduler, "none");
    assert_string_equal(d.write_cache, "write back");
    uint64_t req;
    /* min(128 KiB, 33 x 4 KiB) = 128 KiB: 8 requests, by max_sectors_kb */
    assert_int_equal(probe_block_requests(&d, 1u << 20, 4096, &req), 8);
    assert_int_equal(req, 128u << 10);
    char line[700];
    probe_blockdev_describe(&d, 1u << 20, 4096, line, sizeof line);
    assert_non_null(strstr(line, "device nvme0n1 (partition nvme0n1p1) (nvme, rotational 0"));
    assert_non_null(strstr(line, "up to 8 requests of at most 128 KiB (max_sectors_kb)"));
    assert_int_equal(probe_blockdev_of(&fs, 253, 0, &d), 0);
    assert_true(d.virt);
    assert_int_equal(d.max_segments, -1); /* the reduced tree has no queue files for dm-0 */
    assert_int_equal(probe_block_requests(&d, 1u << 20, 4096, &req), -1);
    assert_int_equal(probe_blockdev_of(&fs, 0, 44, &d), CP_ERR_UNAVAILABLE); /* tmpfs: no device */
    probe_blockdev_describe(&d, 1u << 20, 4096, line, sizeof line);
    assert_non_null(strstr(line, "no block device"));

    /* the virtio disk of the development VM: 254 segments, so a 1 MiB block of pages is 2 requests */
    cp_fsroot_init(&fs, cp_test_fixture("fsroot/vm-a", dir, sizeof dir));
    assert_int_equal(probe_blockdev_of(&fs, 254, 0, &d), 0);
    assert_string_equal(d.name, "vda");
    assert_string_equal(d.part, "");
    assert_string_equal(d.bus, "virtio");
    assert_string_equal(d.scheduler, "mq-deadline");
    assert_int_equal(probe_block_requests(&d, 1u << 20, 4096, &req), 2);
    assert_int_equal(req, 254u * 4096);
    probe_blockdev_describe(&d, 1u << 20, 4096, line, sizeof line);
    assert_non_null(strstr(line, "up to 2 requests of at most 1016 KiB (a segment per 4 KiB page"));

    /* what vda did between the two captures */
    cp_fsroot fb;
    cp_fsroot_init(&fb, cp_test_fixture("fsroot/vm-b", dir, sizeof dir));
    cp_ss_sample a = { 0 }, b = { 0 };
    cp_ss_take(&fs, CP_SS_DISKSTATS, &a, NULL);
    cp_ss_take(&fb, CP_SS_DISKSTATS, &b, NULL);
    a.mono_ns = 0;
    b.mono_ns = 1585000000;
    probe_disk_io io;
    probe_disk_io_of(&a, &b, "vda", &io);
    assert_true(io.valid);
    assert_int_equal(io.reads, 7);
    assert_int_equal(io.writes, 11);
    assert_int_equal(io.bytes, (168 + 65552) * 512);
    CP_ASSERT_NEAR(io.avg_request_bytes, (168.0 + 65552) * 512 / 18, 1e-6);
    CP_ASSERT_NEAR(io.queue_avg, 87.0 / 1585, 1e-12);
    probe_disk_io_of(&a, &b, "sdz", &io);
    assert_false(io.valid);
    cp_ss_sample_free(&a);
    cp_ss_sample_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_drop_then_reread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test(test_blockdev),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
