/* paths.h - turn command-line input arguments into a sorted file list.
 *
 * An argument may be a file, a directory (its regular files, recursively,
 * filtered by the caller's predicate) or a glob pattern (expanded here so
 * quoting it protects it from the shell's limits). Results are sorted by
 * name so runs are reproducible, and duplicates are removed.
 *
 * Directory walks are bounded: a directory already entered (same device and
 * inode, however it was reached: a symlink to `.` or `..`) is not entered
 * again, a file already taken under another name is not taken again, the
 * depth is capped at CP_PATHS_MAX_DEPTH, and only regular files are taken
 * from inside directories (a FIFO there would block the run; one named
 * explicitly is taken, it is what the user asked for). Entries that cannot
 * be read are warned about and counted, never skipped silently.
 */
#ifndef CP_BASE_PATHS_H
#define CP_BASE_PATHS_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>

#define CP_PATHS_MAX_DEPTH 16

typedef struct cp_paths {
    char **v; /* owned strings */
    size_t n, cap;
    /* (device, inode) of every directory entered and file taken, so a
     * symlink loop is entered once and one file reached by two names is
     * read once (issue 21); owned, freed by cp_paths_free */
    struct cp_path_id *seen;
    size_t n_seen, cap_seen;
    /* entries inside directories that could not be read (unreadable
     * directories and files, dangling links) or lie deeper than the depth
     * bound; each is also warned about once */
    size_t n_unreadable, n_too_deep;
    char *first_skipped; /* the first of those (owned), NULL when none */
} cp_paths;

/* keep(path, ctx) decides which files found inside directories are taken;
 * files named explicitly are always taken. */
typedef bool (*cp_path_keep_fn)(const char *path, void *ctx);

int cp_paths_add(cp_paths *p, const char *arg, cp_path_keep_fn keep, void *ctx, cp_error *err);
void cp_paths_sort_unique(cp_paths *p);
void cp_paths_free(cp_paths *p);
/* The file name part of a path (pointer into path). */
const char *cp_path_base(const char *path);

#endif
