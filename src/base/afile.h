/* afile.h - atomic output files.
 *
 * Nothing a user gave is ever overwritten half-way: output is written to a
 * temporary file in the destination's directory (same filesystem), flushed
 * with fsync, and renamed over the destination only when complete. A failed
 * or abandoned write leaves the old file untouched and no temporary behind.
 * Refuses to write over a path that is one of the run's inputs (the caller
 * passes them) so `-o trace.json` cannot destroy a trace.
 */
#ifndef CP_BASE_AFILE_H
#define CP_BASE_AFILE_H

#include "error.h"

#include <stddef.h>

/* Write data to path atomically. A path that is a symbolic link is
 * followed: the file it names is replaced (the link stays); a dangling link
 * is refused. While the temporary file exists, SIGINT, SIGTERM and SIGHUP
 * (when the program has no handler of its own) remove it before the process
 * dies. Returns 0 or a negative status. */
int cp_afile_write(const char *path, const void *data, size_t n, cp_error *err);

/* True when a and b name the same existing file (same device and inode). */
int cp_same_file(const char *a, const char *b);

#endif
