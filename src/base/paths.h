/* paths.h - turn command-line input arguments into a sorted file list.
 *
 * An argument may be a file, a directory (its regular files, recursively,
 * filtered by the caller's predicate) or a glob pattern (expanded here so
 * quoting it protects it from the shell's limits). Results are sorted by
 * name so runs are reproducible, and duplicates are removed.
 */
#ifndef CP_BASE_PATHS_H
#define CP_BASE_PATHS_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct cp_paths {
    char **v; /* owned strings */
    size_t n, cap;
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
