/* afile.c - see afile.h. */
#include "afile.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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

/* The temporary file being written, for the signal handlers: a run killed
 * by SIGINT/SIGTERM/SIGHUP (Ctrl-C, a scheduler's kill) must not leave
 * NAME.tmp.XXXXXX behind. The one mutable static of base, and why: a signal
 * handler can reach nothing else. One slot: outputs are written one at a
 * time (cli_emit), and the handlers are installed only while one is. */
static char pending_tmp[4352];
static volatile sig_atomic_t pending_set;

static void on_signal(int sig)
{
    if (pending_set)
        unlink(pending_tmp); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };

static void guard(const char *tmp, struct sigaction *old)
{
    snprintf(pending_tmp, sizeof pending_tmp, "%s", tmp);
    pending_set = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < CP_ARRAY_LEN(caught); i++) {
        sigaction(caught[i], NULL, &old[i]);
        if (old[i].sa_handler == SIG_DFL) /* never over a handler the program set */
            sigaction(caught[i], &sa, NULL);
    }
}

static void unguard(const struct sigaction *old)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(caught); i++)
        if (old[i].sa_handler == SIG_DFL)
            sigaction(caught[i], &old[i], NULL);
    pending_set = 0;
}

/* Where path really is: -o through a symbolic link writes the file the link
 * names (the link stays a link, its target is replaced atomically); a link
 * to nothing is refused. A malloc'd path, or NULL with err set. */
static char *destination(const char *path, cp_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return cp_xstrdup(path);
    char *real = realpath(path, NULL);
    if (!real)
        cp_error_sys(err, CP_ERR_IO, path, "a symbolic link to nothing (or unresolvable): not written through");
    return real;
}

/* Fill, flush, close (always) and rename the temporary file. */
static int write_tmp(const char *path, const char *tmp, int fd, const void *data, size_t n, cp_error *err)
{
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
            return rc;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL) {
        int rc = cp_error_sys(err, CP_ERR_IO, path, "cannot flush output file");
        close(fd);
        return rc;
    }
    if (close(fd) != 0) /* NFS reports a full disk here */
        return cp_error_sys(err, CP_ERR_IO, path, "cannot write output file");
    if (rename(tmp, path) != 0)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot move output file into place");
    return 0;
}

int cp_afile_write(const char *path_arg, const void *data, size_t n, cp_error *err)
{
    char *path = destination(path_arg, err);
    if (!path)
        return err ? err->code : CP_ERR_IO;
    size_t plen = strlen(path);
    char *tmp = cp_xmalloc(plen + 32);
    snprintf(tmp, plen + 32, "%s.tmp.XXXXXX", path);
    struct sigaction old[CP_ARRAY_LEN(caught)];
    /* the temporary file exists from mkstemp on: hold the caught signals
     * until the handler knows its name, so a kill in between is delivered
     * to the handler (which removes it), not to the default action */
    sigset_t hold, prev;
    sigemptyset(&hold);
    for (size_t i = 0; i < CP_ARRAY_LEN(caught); i++)
        sigaddset(&hold, caught[i]);
    pthread_sigmask(SIG_BLOCK, &hold, &prev);
    int fd = mkstemp(tmp);
    if (fd >= 0)
        guard(tmp, old);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    int rc;
    if (fd < 0) {
        rc = cp_error_sys(err, CP_ERR_IO, path, "cannot create output file");
    } else {
        rc = write_tmp(path, tmp, fd, data, n, err); /* closes fd */
        if (rc < 0)
            unlink(tmp);
        unguard(old);
    }
    free(tmp);
    free(path);
    return rc;
}
