/* fsroot.h - every procfs and sysfs path opened through one root.
 *
 * hwloc's lesson (HWLOC_FSROOT): code that reads /proc and /sys is only
 * testable if the root of those trees can be moved. Every reader of a
 * kernel file in chainprof (the probes, base/sysstat, the monitor) names
 * the file by its absolute path ("/proc/stat", "/sys/block/vda/queue/
 * nr_requests") and opens it through a cp_fsroot, which prefixes the root:
 * "/" on a live machine, a captured tree in the tests
 * (tests/fixtures/fsroot/NAME/proc/stat ...). A root comes from an explicit
 * argument, else $CHAINPROF_FSROOT, else "/".
 *
 * The root is a value the caller owns (no global): a probe context, a
 * monitor or a unit test each hold one. Relative symlinks inside a captured
 * tree resolve inside it (sysfs's links are relative), so a fixture can
 * keep /sys/class/net/eth0 -> ../../devices/... as the kernel has it.
 *
 * Only reading is offered: nothing under /proc or /sys is written.
 */
#ifndef CP_BASE_FSROOT_H
#define CP_BASE_FSROOT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CP_FSROOT_ENV "CHAINPROF_FSROOT"

typedef struct cp_fsroot {
    char root[1024]; /* without a trailing slash; "" means "/" */
    bool live;       /* the real "/": facts about this process (getrusage) match the files */
} cp_fsroot;

/* root: explicit directory, or NULL for $CHAINPROF_FSROOT, else "/". */
void cp_fsroot_init(cp_fsroot *fs, const char *root);
/* The root as given ("/" for the live system). */
const char *cp_fsroot_name(const cp_fsroot *fs);

/* root + path into buf; path must be absolute. Returns buf, or NULL when
 * the result does not fit (nothing is then opened). */
const char *cp_fsroot_path(const cp_fsroot *fs, const char *path, char *buf, size_t size);

/* Open for reading (fopen "re" / open O_RDONLY|O_CLOEXEC / opendir); NULL
 * or -1 with errno set, as the libc calls. */
FILE *cp_fsroot_fopen(const cp_fsroot *fs, const char *path);
int cp_fsroot_open(const cp_fsroot *fs, const char *path);
DIR *cp_fsroot_opendir(const cp_fsroot *fs, const char *path);

/* A whole (small) file into buf, NUL-terminated and cut at size - 1 bytes.
 * Returns its length, or -1 (errno set) when it cannot be read. */
ssize_t cp_fsroot_read(const cp_fsroot *fs, const char *path, char *buf, size_t size);
/* A whole file of any size into *buf (grown with realloc as needed; *cap
 * its size; both may start 0/NULL and are the caller's to free), NUL-
 * terminated. Returns its length, or -1 (errno set). For files that may
 * outgrow a fixed buffer (/proc/stat of many CPUs, diskstats of many
 * devices) read again and again by a sampler: the buffer is reused. */
ssize_t cp_fsroot_slurp(const cp_fsroot *fs, const char *path, char **buf, size_t *cap);
/* The first line without its newline; false when unreadable or empty. */
bool cp_fsroot_read_line(const cp_fsroot *fs, const char *path, char *buf, size_t size);
/* A file holding one integer (sysfs style, e.g. "2048\n"); false when
 * unreadable or not a number. */
bool cp_fsroot_read_i64(const cp_fsroot *fs, const char *path, int64_t *out);

/* Whether path exists (lstat: a dangling link of a reduced tree exists). */
bool cp_fsroot_exists(const cp_fsroot *fs, const char *path);
/* A symlink's target as stored (not resolved), NUL-terminated; -1 if path
 * is not a link. */
ssize_t cp_fsroot_readlink(const cp_fsroot *fs, const char *path, char *buf, size_t size);

/* The path a sysfs link points at, as an absolute path inside the tree:
 * "/sys/dev/block/254:1" -> "/sys/devices/pci0000:00/.../vda/vda1" (its
 * target joined to the link's directory, "." and ".." folded; only the last
 * component is followed, which is all sysfs needs). A path that is not a
 * link is returned as it is. NULL when it does not fit or does not exist. */
const char *cp_fsroot_resolve(const cp_fsroot *fs, const char *path, char *buf, size_t size);

#endif
