/* rd_text.h - shared plumbing of the line-oriented evidence readers.
 *
 * The evidence readers (nccl-tests, perftest, nvidia-smi topo -m, dmon, fio,
 * iperf3) all read small text reports a person pasted or a tool printed. They
 * share one shape: walk the lines, split each into whitespace-separated
 * fields, recognise a header, read rows against it. This file holds that
 * shape once so each reader only states what is specific to its format:
 *
 *   - rd_lines: an iterator over the lines of a buffer (LF or CRLF), with the
 *     1-based line number every fact carries as its provenance; it skips
 *     `#@` lines (the provenance notes of the project's sample logs, which
 *     no tool prints), so those files read like the users' own;
 *   - rd_split: fields of one line with their 1-based columns, no copying;
 *   - rd_num/rd_i64: strict number parsing of one field (the whole field must
 *     be the number, so "12abc" is a bad value, not 12);
 *   - rd_note: count a dropped or unparsed item in the reader's diag_set
 *     under its diag.def code, with "file:line" of the first one;
 *   - rd_load_file: reading a whole evidence file (plain, .gz, .zst).
 *
 * Ownership: nothing here allocates except rd_load_file and rd_grow (the
 * caller owns the memory). Fields point into the caller's buffer. Out of
 * memory aborts (cp_xmalloc policy): caps keep honest inputs small.
 */
#ifndef CP_READERS_RD_TEXT_H
#define CP_READERS_RD_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../base/error.h"
#include "../model/diag.h"

/* How much of a file the sniffers look at (same definition as reader.h). */
#define RD_SNIFF_BYTES 65536
/* Evidence files are reports, not traces; anything larger is refused. */
#define RD_MAX_FILE_BYTES (256u * 1024u * 1024u)
/* Most fields one line may have; further fields are ignored and counted. */
#define RD_MAX_FIELDS 128

/* Count one item under code in d, at name:line (diag.h). */
void rd_note(diag_set *d, diag_code code, const char *name, uint32_t line);

/* ---- lines ------------------------------------------------------------ */

typedef struct rd_lines {
    const char *p, *end;
    uint32_t lineno; /* number of the line last returned */
} rd_lines;

void rd_lines_init(rd_lines *it, const char *data, size_t len);
/* Next line without its terminator (and without a trailing '\r'), skipping
 * lines that start with "#@" (line numbers still count them). Returns 0 at
 * the end. */
int rd_lines_next(rd_lines *it, const char **line, size_t *len);

/* Call fn(ctx, line, len, lineno) for every line of data (as rd_lines_next
 * gives them): the loop every line-oriented reader runs. */
typedef void (*rd_line_fn)(void *ctx, const char *line, size_t len, uint32_t lineno);
void rd_each_line(const char *data, size_t len, rd_line_fn fn, void *ctx);

/* Drop a launcher's per-line tag so the tool's own text remains: OpenMPI
 * --tag-output "[1,0]<stdout>:" and srun --label "12: ". Returns 1 when a
 * tag was removed. */
int rd_strip_launcher_tag(const char **line, size_t *len);

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

/* Conversions that never invoke undefined behaviour on hostile input:
 * dflt when v is NaN, infinite or outside the target type. */
int rd_d2int(double v, int dflt);
int64_t rd_d2i64(double v, int64_t dflt);
/* The decimal number at the start of s[0..n) ("4096[B]" -> 4096); dflt when
 * there is none or it does not fit an int. Reads no byte past n. */
int rd_leading_int(const char *s, size_t n, int dflt);

/* ---- strings ---------------------------------------------------------- */

/* Trim spaces and tabs on both sides, in place on the view. */
void rd_trim(const char **p, size_t *n);
/* 1 when [p, p+n) starts with prefix. */
int rd_starts(const char *p, size_t n, const char *prefix);
/* First occurrence of needle in [p, p+n), or NULL. */
const char *rd_find(const char *p, size_t n, const char *needle);
/* Copy into a fixed buffer, truncating, always NUL-terminated. */
void rd_copy(char *dst, size_t cap, const char *p, size_t n);

/* Make room for n+1 elements of size elem in *arr (capacity *cap, doubling).
 * Returns 0, or -1 when n+1 would exceed max (the caller counts DIAG_LIMIT_REACHED
 * and drops the item). Aborts on out of memory (cp_xrealloc). */
int rd_grow(void **arr, size_t *cap, size_t n, size_t elem, size_t max);

/* ---- files ------------------------------------------------------------ */

/* The executable `prog` on PATH into out (a converter such as nsys or ncu):
 * 1 when found, 0 when not. */
int rd_which(const char *prog, char *out, size_t cap);

/* Read a whole file (plain, .gz or .zst; at most RD_MAX_FILE_BYTES
 * decompressed) into a malloc'ed buffer with a NUL after the last byte.
 * Caller frees *data with free(). */
int rd_load_file(const char *path, char **data, size_t *len, cp_error *err);

#endif
