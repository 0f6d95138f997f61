/* fsroot.c - procfs/sysfs paths under a movable root (see fsroot.h). */
#include "fsroot.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cp_fsroot_init(cp_fsroot *fs, const char *root)
{
    if (!root || !*root)
        root = getenv(CP_FSROOT_ENV);
    if (!root || !*root)
        root = "/";
    snprintf(fs->root, sizeof fs->root, "%s", root);
    size_t n = strlen(fs->root);
    while (n > 0 && fs->root[n - 1] == '/') /* "/" becomes "": paths bring their own slash */
        fs->root[--n] = 0;
    fs->live = n == 0;
}

const char *cp_fsroot_name(const cp_fsroot *fs)
{
    return fs->root[0] ? fs->root : "/";
}

const char *cp_fsroot_path(const cp_fsroot *fs, const char *path, char *buf, size_t size)
{
    if (!path || path[0] != '/')
        return NULL;
    int n = snprintf(buf, size, "%s%s", fs->root, path);
    return n < 0 || (size_t)n >= size ? NULL : buf;
}

FILE *cp_fsroot_fopen(const cp_fsroot *fs, const char *path)
{
    char p[4096];
    if (!cp_fsroot_path(fs, path, p, sizeof p)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return fopen(p, "re");
}

int cp_fsroot_open(const cp_fsroot *fs, const char *path)
{
    char p[4096];
    if (!cp_fsroot_path(fs, path, p, sizeof p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(p, O_RDONLY | O_CLOEXEC);
}

DIR *cp_fsroot_opendir(const cp_fsroot *fs, const char *path)
{
    char p[4096];
    if (!cp_fsroot_path(fs, path, p, sizeof p)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return opendir(p);
}

/* Read fd to its end into *buf, NUL-terminated: grown as needed when grow,
 * else cut at *cap - 1 bytes. Closes fd. Length, or -1 with errno. procfs
 * files are generated per read() call, so it reads until EOF. */
static ssize_t read_to_end(int fd, char **buf, size_t *cap, bool grow)
{
    size_t len = 0;
    for (;;) {
        if (grow && len + 4096 + 1 > *cap) {
            size_t want = *cap ? *cap * 2 : 16384;
            while (want < len + 4096 + 1)
                want *= 2;
            *buf = cp_xrealloc(*buf, want);
            *cap = want;
        }
        if (len + 1 >= *cap)
            break;
        ssize_t r = read(fd, *buf + len, *cap - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    (*buf)[len] = 0;
    return (ssize_t)len;
}

ssize_t cp_fsroot_read(const cp_fsroot *fs, const char *path, char *buf, size_t size)
{
    if (size == 0)
        return -1;
    buf[0] = 0;
    int fd = cp_fsroot_open(fs, path);
    if (fd < 0)
        return -1;
    char *b = buf;
    ssize_t n = read_to_end(fd, &b, &size, false);
    if (n < 0)
        buf[0] = 0;
    return n;
}

ssize_t cp_fsroot_slurp(const cp_fsroot *fs, const char *path, char **buf, size_t *cap)
{
    int fd = cp_fsroot_open(fs, path);
    return fd < 0 ? -1 : read_to_end(fd, buf, cap, true);
}

bool cp_fsroot_read_line(const cp_fsroot *fs, const char *path, char *buf, size_t size)
{
    if (cp_fsroot_read(fs, path, buf, size) <= 0)
        return false;
    buf[strcspn(buf, "\n")] = 0;
    return buf[0] != 0;
}

bool cp_fsroot_read_i64(const cp_fsroot *fs, const char *path, int64_t *out)
{
    char buf[64];
    if (!cp_fsroot_read_line(fs, path, buf, sizeof buf))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == buf || *end || errno)
        return false;
    *out = v;
    return true;
}

bool cp_fsroot_exists(const cp_fsroot *fs, const char *path)
{
    char p[4096];
    struct stat sb;
    return cp_fsroot_path(fs, path, p, sizeof p) && lstat(p, &sb) == 0;
}

ssize_t cp_fsroot_readlink(const cp_fsroot *fs, const char *path, char *buf, size_t size)
{
    char p[4096];
    if (size == 0 || !cp_fsroot_path(fs, path, p, sizeof p))
        return -1;
    ssize_t n = readlink(p, buf, size - 1);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return n;
}

/* Fold "." and ".." of an absolute path in place. */
static void fold_dots(char *p)
{
    char *out = p, *seg = p;
    while (*seg) {
        while (*seg == '/')
            seg++;
        char *end = seg + strcspn(seg, "/");
        size_t len = (size_t)(end - seg);
        if (len == 0)
            break;
        if (len == 1 && seg[0] == '.') {
            /* nothing */
        } else if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > p && *--out != '/')
                ;
        } else {
            *out++ = '/';
            memmove(out, seg, len);
            out += len;
        }
        seg = end;
    }
    if (out == p)
        *out++ = '/';
    *out = 0;
}

const char *cp_fsroot_resolve(const cp_fsroot *fs, const char *path, char *buf, size_t size)
{
    if (!cp_fsroot_exists(fs, path))
        return NULL;
    char target[2048];
    ssize_t n = cp_fsroot_readlink(fs, path, target, sizeof target);
    int w;
    if (n < 0) {
        w = snprintf(buf, size, "%s", path);
    } else if (target[0] == '/') {
        w = snprintf(buf, size, "%s", target);
    } else {
        const char *slash = strrchr(path, '/');
        w = snprintf(buf, size, "%.*s/%s", (int)(slash - path), path, target);
    }
    if (w < 0 || (size_t)w >= size)
        return NULL;
    fold_dots(buf);
    return buf;
}
