/* paths.c - see paths.h. */
#include "paths.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cp_path_id {
    uint64_t dev, ino;
    int used;
};

static void push(cp_paths *p, const char *s)
{
    cp_xgrow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v);
    p->v[p->n++] = cp_xstrdup(s);
}

static size_t id_slot(const struct cp_path_id *t, size_t cap, uint64_t dev, uint64_t ino)
{
    size_t i = (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xc2b2ae3d27d4eb4full)) & (cap - 1);
    while (t[i].used && !(t[i].dev == dev && t[i].ino == ino))
        i = (i + 1) & (cap - 1);
    return i;
}

/* Records st's (device, inode); false when it was recorded before. */
static bool first_visit(cp_paths *p, const struct stat *st)
{
    if ((p->n_seen + 1) * 2 > p->cap_seen) {
        size_t nc = p->cap_seen ? p->cap_seen * 2 : 64;
        struct cp_path_id *t = cp_xcalloc(nc, sizeof *t);
        for (size_t i = 0; i < p->cap_seen; i++)
            if (p->seen[i].used)
                t[id_slot(t, nc, p->seen[i].dev, p->seen[i].ino)] = p->seen[i];
        free(p->seen);
        p->seen = t;
        p->cap_seen = nc;
    }
    size_t i = id_slot(p->seen, p->cap_seen, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
    if (p->seen[i].used)
        return false;
    p->seen[i] = (struct cp_path_id){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, 1 };
    p->n_seen++;
    return true;
}

static void note_skipped(cp_paths *p, const char *path)
{
    if (!p->first_skipped)
        p->first_skipped = cp_xstrdup(path);
}

static void unreadable(cp_paths *p, const char *path, const char *what, int errnum)
{
    p->n_unreadable++;
    note_skipped(p, path);
    cp_log_warn("%s: %s: %s (skipped)", path, what, strerror(errnum));
}

static int add_dir(cp_paths *p, const char *dir, const struct stat *dst, int depth, cp_path_keep_fn keep,
                   void *ctx, cp_error *err)
{
    if (!first_visit(p, dst))
        return 0; /* a symlink loop, or a directory named twice */
    if (depth > CP_PATHS_MAX_DEPTH) {
        p->n_too_deep++;
        note_skipped(p, dir);
        cp_log_warn("%s: deeper than %d directories (skipped)", dir, CP_PATHS_MAX_DEPTH);
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d) {
        if (depth == 0)
            return cp_error_sys(err, CP_ERR_IO, dir, "cannot open directory");
        unreadable(p, dir, "cannot open directory", errno);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *full;
        if (asprintf(&full, "%s/%s", dir, e->d_name) < 0)
            continue;
        struct stat st;
        if (stat(full, &st) != 0)
            unreadable(p, full, "cannot open", errno);
        else if (S_ISDIR(st.st_mode))
            add_dir(p, full, &st, depth + 1, keep, ctx, NULL);
        else if (S_ISREG(st.st_mode) && (!keep || keep(full, ctx))) {
            if (access(full, R_OK) != 0)
                unreadable(p, full, "cannot open", errno);
            else if (first_visit(p, &st))
                push(p, full);
        }
        free(full);
    }
    closedir(d);
    return 0;
}

/* A path named on the command line or by a glob: a directory is walked,
 * anything else (a file, a FIFO, /dev/stdin) is taken as it is, once. */
static int add_named(cp_paths *p, const char *path, const struct stat *st, cp_path_keep_fn keep, void *ctx,
                     cp_error *err)
{
    if (S_ISDIR(st->st_mode))
        return add_dir(p, path, st, 0, keep, ctx, err);
    if (first_visit(p, st))
        push(p, path);
    return 0;
}

int cp_paths_add(cp_paths *p, const char *arg, cp_path_keep_fn keep, void *ctx, cp_error *err)
{
    struct stat st;
    if (stat(arg, &st) == 0)
        return add_named(p, arg, &st, keep, ctx, err);
    if (strpbrk(arg, "*?[")) {
        glob_t g;
        int rc = glob(arg, 0, NULL, &g);
        if (rc == GLOB_NOMATCH)
            return cp_error_set(err, CP_ERR_IO, arg, 0, 0, -1, "no file matches this pattern");
        if (rc != 0)
            return cp_error_set(err, CP_ERR_IO, arg, 0, 0, -1, "cannot expand pattern");
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (stat(g.gl_pathv[i], &st) == 0)
                (void)add_named(p, g.gl_pathv[i], &st, keep, ctx, NULL);
            else
                unreadable(p, g.gl_pathv[i], "cannot open", errno);
        }
        globfree(&g);
        return 0;
    }
    return cp_error_sys(err, CP_ERR_IO, arg, "cannot open");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cp_paths_sort_unique(cp_paths *p)
{
    if (p->n < 2)
        return;
    qsort(p->v, p->n, sizeof *p->v, cmp_str);
    size_t w = 1;
    for (size_t i = 1; i < p->n; i++) {
        if (strcmp(p->v[i], p->v[w - 1]) == 0)
            free(p->v[i]);
        else
            p->v[w++] = p->v[i];
    }
    p->n = w;
}

void cp_paths_free(cp_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    free(p->seen);
    free(p->first_skipped);
    memset(p, 0, sizeof *p);
}

const char *cp_path_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}
