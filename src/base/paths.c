/* paths.c - see paths.h. */
#include "paths.h"
#include "util.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CP_PATHS_MAX_DEPTH 16

static void push(cp_paths *p, const char *s)
{
    cp_xgrow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v);
    p->v[p->n++] = cp_xstrdup(s);
}

static int add_dir(cp_paths *p, const char *dir, int depth, cp_path_keep_fn keep, void *ctx,
                   cp_error *err)
{
    if (depth > CP_PATHS_MAX_DEPTH)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return cp_error_sys(err, CP_ERR_IO, dir, "cannot open directory");
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *full;
        if (asprintf(&full, "%s/%s", dir, e->d_name) < 0)
            continue;
        struct stat st;
        if (stat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                add_dir(p, full, depth + 1, keep, ctx, NULL);
            else if (S_ISREG(st.st_mode) && (!keep || keep(full, ctx)))
                push(p, full);
        }
        free(full);
    }
    closedir(d);
    return 0;
}

int cp_paths_add(cp_paths *p, const char *arg, cp_path_keep_fn keep, void *ctx, cp_error *err)
{
    struct stat st;
    if (stat(arg, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return add_dir(p, arg, 0, keep, ctx, err);
        push(p, arg);
        return 0;
    }
    if (strpbrk(arg, "*?[")) {
        glob_t g;
        int rc = glob(arg, 0, NULL, &g);
        if (rc == GLOB_NOMATCH)
            return cp_error_set(err, CP_ERR_IO, arg, 0, 0, -1, "no file matches this pattern");
        if (rc != 0)
            return cp_error_set(err, CP_ERR_IO, arg, 0, 0, -1, "cannot expand pattern");
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (stat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode))
                add_dir(p, g.gl_pathv[i], 0, keep, ctx, NULL);
            else
                push(p, g.gl_pathv[i]);
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
    memset(p, 0, sizeof *p);
}

const char *cp_path_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}
