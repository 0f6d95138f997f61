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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_drop_then_reread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
