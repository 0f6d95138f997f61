/* rd_text.h - shared plumbing of the line-oriented evidence readers.
 *
 * The evidence readers (nccl-tests, perftest, nvidia-smi topo -m, dmon, fio,
 * iperf3) all read small text reports a person pasted or a tool printed. They
 * share one shape: walk the lines, split each into whitespace-separated
 * fields, recognise a header, read rows against it. This file holds that
 * shape once so each reader only states what is specific to its format:
 *
 *   - rd_lines: an iterator over the lines of a buffer (LF or CRLF), with the
 *     1-based line number every fact carries as its provenance;
 *   - rd_split: fields of one line with their 1-based columns, no copying;
 *   - rd_num/rd_i64: strict number parsing of one field (the whole field must
 *     be the number, so "12abc" is a bad value, not 12);
 *   - rd_diag: per-reader counters of dropped or unparsed items under named
 *     codes (reported by analyze, never fatal);
 *   - rd_load_file / rd_blank_annotations: reading a whole evidence file and,
 *     for the project's own test data, blanking `#@` provenance lines while
 *     keeping the line numbers true.
 *
 * Ownership: nothing here allocates except rd_load_file (caller frees) and
 * rd_strndup (caller frees). Fields point into the caller's buffer.
 */
#ifndef CP_READERS_RD_TEXT_H
#define CP_READERS_RD_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../base/error.h"

/* How much of a file the sniffers look at. */
#define RD_SNIFF_BYTES (64u * 1024u)
/* Evidence files are reports, not traces; anything larger is refused. */
#define RD_MAX_FILE_BYTES (256u * 1024u * 1024u)
/* Most fields one line may have; further fields are ignored and counted. */
#define RD_MAX_FIELDS 128

/* ---- diagnostics ------------------------------------------------------ */

/* X(enum, "snake_key", "what it means"). Keys are stable: analyze reports
 * them under diagnostics. */
#define RD_DIAG_LIST(X)                                                       \
    X(RD_DIAG_BAD_ROW, "evidence_bad_row",                                    \
      "a table row whose fields do not match the header above it")            \
    X(RD_DIAG_BAD_VALUE, "evidence_bad_value",                                \
      "a field that should hold a number does not")                           \
    X(RD_DIAG_TOO_MANY_FIELDS, "evidence_too_many_fields",                    \
      "a line with more fields than the reader keeps; the rest were ignored") \
    X(RD_DIAG_CAP, "evidence_cap_reached",                                    \
      "items beyond a reader's cap were dropped")                             \
    X(RD_DIAG_ORPHAN_ROW, "evidence_orphan_row",                              \
      "a data row before any header it could belong to")

typedef enum rd_diag_code {
#define RD_DIAG_ENUM(e, k, d) e,
    RD_DIAG_LIST(RD_DIAG_ENUM)
#undef RD_DIAG_ENUM
    RD_DIAG__COUNT
} rd_diag_code;

typedef struct rd_diag {
    uint32_t count[RD_DIAG__COUNT];
    uint32_t first_line[RD_DIAG__COUNT]; /* line of the first occurrence, 0 if none */
} rd_diag;

void rd_diag_note(rd_diag *d, rd_diag_code code, uint32_t line);
const char *rd_diag_key(rd_diag_code code);
const char *rd_diag_what(rd_diag_code code);
uint32_t rd_diag_total(const rd_diag *d);

/* ---- lines ------------------------------------------------------------ */

typedef struct rd_lines {
    const char *p, *end;
    uint32_t lineno; /* number of the line last returned */
} rd_lines;

void rd_lines_init(rd_lines *it, const char *data, size_t len);
/* Next line without its terminator (and without a trailing '\r').
 * Returns 0 at the end. */
int rd_lines_next(rd_lines *it, const char **line, size_t *len);

/* ---- fields ----------------------------------------------------------- */

typedef struct rd_field {
    const char *p;
    uint32_t len;
    uint32_t col; /* 1-based column of the first byte */
} rd_field;

/* Split on runs of spaces/tabs. Returns the number of fields stored (at most
 * max); *truncated (may be NULL) is set when the line had more. */
int rd_split(const char *line, size_t len, rd_field *f, int max, int *truncated);

/* 1 when the field equals s exactly / case-insensitively. */
int rd_feq(const rd_field *f, const char *s);
int rd_fieq(const rd_field *f, const char *s);

/* ---- numbers ---------------------------------------------------------- */

/* Parse the whole of [p, p+n) as a finite double / int64. 0 on success,
 * -1 when it is not a number. */
int rd_num(const char *p, size_t n, double *out);
int rd_i64(const char *p, size_t n, int64_t *out);

/* ---- strings ---------------------------------------------------------- */

/* Trim spaces and tabs on both sides, in place on the view. */
void rd_trim(const char **p, size_t *n);
/* 1 when [p, p+n) starts with prefix. */
int rd_starts(const char *p, size_t n, const char *prefix);
/* First occurrence of needle in [p, p+n), or NULL. */
const char *rd_find(const char *p, size_t n, const char *needle);
/* malloc'ed NUL-terminated copy (never NULL: aborts on OOM like xmalloc). */
char *rd_strndup(const char *p, size_t n);
/* Copy into a fixed buffer, truncating, always NUL-terminated. */
void rd_copy(char *dst, size_t cap, const char *p, size_t n);

/* Make room for n+1 elements of size elem in *arr (capacity *cap, doubling).
 * Returns 0, or -1 when n+1 would exceed max (the caller counts RD_DIAG_CAP
 * and drops the item). Aborts on out of memory. */
int rd_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t max);

/* ---- files ------------------------------------------------------------ */

/* Read a whole file (at most RD_MAX_FILE_BYTES) into a malloc'ed buffer with a
 * NUL after the last byte. Caller frees *data. */
int rd_load_file(const char *path, char **data, size_t *len, cp_error *err);

/* Overwrite every line that starts with "#@" with spaces (in place), so
 * line numbers and byte offsets stay those of the file. The project's sample logs carry such
 * provenance lines; users' files do not. Returns the number blanked. */
size_t rd_blank_annotations(char *data, size_t len);

#endif
