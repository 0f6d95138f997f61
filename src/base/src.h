/* src.h - byte sources: plain files, gzip and zstd, read the same way.
 *
 * Readers never care how a file is compressed: cp_src_open sniffs the magic
 * bytes (1f 8b = gzip, 28 b5 2f fd = zstd, anything else = plain) and
 * cp_src_read hands out decompressed bytes in caller-sized chunks, so a
 * multi-GB trace streams through a fixed buffer. Multi-member gzip and
 * concatenated zstd frames are read to the end. A truncated compressed file
 * is reported as truncated, with the bytes decoded so far delivered first,
 * because damaged traces are common and their prefix is still useful;
 * corrupt compressed data (CRC, checksum, bad blocks) is reported as such
 * (cp_src_damage), never as truncation, again after the bytes before it.
 *
 * A cp_src is owned by its opener and used by one thread at a time.
 */
#ifndef CP_BASE_SRC_H
#define CP_BASE_SRC_H

#include "buf.h"
#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum cp_src_kind { CP_SRC_PLAIN, CP_SRC_GZIP, CP_SRC_ZSTD, CP_SRC_MEM } cp_src_kind;

typedef struct cp_src cp_src;

/* Open path ("-" is not supported: traces are files). On error returns a
 * negative status with err filled; *out is NULL. */
int cp_src_open(cp_src **out, const char *path, cp_error *err);
/* A source over caller memory (borrowed; must outlive the source). */
cp_src *cp_src_open_mem(const void *data, size_t n, const char *name);
/* Read up to n decompressed bytes. Returns the count (0 = end of data) or a
 * negative status. After the end, cp_src_truncated tells whether the
 * compressed stream ended early. */
ssize_t cp_src_read(cp_src *s, void *buf, size_t n, cp_error *err);
bool cp_src_truncated(const cp_src *s);
/* NULL, or what is wrong with the compressed data when it is damaged rather
 * than cut short, named as what it is ("gzip CRC-32 mismatch", "corrupt
 * deflate data (...)", "zstd checksum mismatch") with its compressed offset.
 * The bytes decoded before the damage were delivered; the read ended there. */
const char *cp_src_damage(const cp_src *s);
/* Decompressed bytes delivered so far. */
uint64_t cp_src_offset(const cp_src *s);
/* Compressed (on-disk) bytes consumed so far, and the file size (0 if unknown). */
uint64_t cp_src_raw_offset(const cp_src *s);
uint64_t cp_src_raw_size(const cp_src *s);
cp_src_kind cp_src_get_kind(const cp_src *s);
const char *cp_src_kind_name(cp_src_kind k);
const char *cp_src_name(const cp_src *s);
void cp_src_close(cp_src *s);

/* A FIFO, pipe or socket (`mkfifo`, `<(zcat x.json.gz)`, /dev/stdin) can be
 * read once only, but a command opens an input more than once (sniffing,
 * then reading). cp_src_spool copies such an input in one pass into an
 * anonymous memory file (memfd, at most max_bytes) and puts a path that
 * reopens it from the start ("/proc/self/fd/N") into out_path; the caller
 * closes *fd_out when done. Returns 1 when spooled, 0 when path is a regular
 * file or a directory (nothing to do), or a negative status: a device
 * (/dev/zero) is refused as not a file, a pipe above max_bytes as too large. */
int cp_src_spool(const char *path, char *out_path, size_t size, uint64_t max_bytes, int *fd_out, cp_error *err);

/* A plain file mapped read-only, for parsers that take their input in
 * place (zero copy: no read(2) copying every byte out of the page cache
 * into a buffer). Pages behind the parser are handed back with
 * cp_fmap_drop so the mapping adds only a window to the resident memory,
 * not the file. The file must not shrink while mapped (SIGBUS). */
typedef struct cp_fmap {
    const char *data;
    size_t n;
    size_t dropped; /* bytes at the front already handed back */
} cp_fmap;

/* Map path (a regular, non-empty file). Returns 0, or a negative status
 * with err filled: the caller then reads it through cp_src instead. */
int cp_fmap_open(cp_fmap *m, const char *path, cp_error *err);
/* Hand back the whole pages before offset `before` (the parser will not
 * look at them again); cheap to call often, it acts every CP_FMAP_STEP. */
#define CP_FMAP_STEP ((size_t)16 << 20)
void cp_fmap_drop(cp_fmap *m, size_t before);
void cp_fmap_close(cp_fmap *m);

/* Read the first up to n decompressed bytes of path into buf (for format
 * sniffing). Returns the count or a negative status. */
ssize_t cp_src_peek(const char *path, void *buf, size_t n, cp_error *err);
/* Read a whole (decompressed) file into out, failing past max_bytes. */
int cp_src_read_all(const char *path, cp_buf *out, size_t max_bytes, cp_error *err);

#endif
