/* afile.c - see afile.h. */
#include "afile.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cp_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cp_afile_write(const char *path, const void *data, size_t n, cp_error *err)
{
    size_t plen = strlen(path);
    char *tmp = cp_xmalloc(plen + 32);
    snprintf(tmp, plen + 32, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = cp_error_sys(err, CP_ERR_IO, path, "cannot create output file");
        free(tmp);
        return rc;
    }
    /* mkstemp creates 0600; outputs are ordinary files */
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    const char *p = data;
    size_t left = n;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int rc = cp_error_sys(err, CP_ERR_IO, path, "cannot write output file");
            close(fd);
            unlink(tmp);
            free(tmp);
            return rc;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL) {
        int rc = cp_error_sys(err, CP_ERR_IO, path, "cannot flush output file");
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        int rc = cp_error_sys(err, CP_ERR_IO, path, "cannot move output file into place");
        unlink(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return 0;
}
