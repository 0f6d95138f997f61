/* evidence.h - registry of the evidence readers and content sniffing.
 *
 * `chainprof analyze` takes evidence files in any order and any name; each
 * file's kind is decided from its content: every reader's sniffer looks at
 * the first RD_SNIFF_BYTES and returns a confidence 0..100, the highest one
 * at or above RD_EVIDENCE_MIN_CONFIDENCE wins (ties go to the earlier row).
 * The parse and free functions of a row take and give the reader's own
 * result struct as void *; the caller casts by kind name.
 *
 * How to add a reader:
 *   1. write src/readers/rd_<fmt>.c/.h with rd_<fmt>_sniff, rd_<fmt>_parse
 *      (data, len, name, &out, err), rd_<fmt>_free, a `diag_set diag` member
 *      in the result, and rd_<fmt>_report in evidence_report.c;
 *   2. add one RD_EVIDENCE_ADAPT(<fmt>, type) line and one row to the table in
 *      evidence.c (key, title, adapters);
 *   3. give it a fixture, a unit test and a fuzz target, and document the
 *      format in docs/FORMATS.md.
 */
#ifndef CP_READERS_EVIDENCE_H
#define CP_READERS_EVIDENCE_H

#include <stddef.h>

#include "../base/error.h"
#include "../model/diag.h"
#include "../model/report.h"

#define RD_EVIDENCE_MIN_CONFIDENCE 50

typedef int (*rd_sniff_fn)(const char *buf, size_t len);
typedef int (*rd_parse_fn)(const char *data, size_t len, const char *name, void **out,
                           cp_error *err);
typedef void (*rd_free_fn)(void *facts);
typedef void (*rd_report_fn)(const void *facts, rep_report *r, rep_node *obj);
typedef const diag_set *(*rd_diag_fn)(const void *facts);

typedef struct rd_evidence_kind {
    const char *key;   /* stable name reported in JSON: "nccl_tests", "perftest", ... */
    const char *title; /* for people: "nccl-tests output" */
    rd_sniff_fn sniff;
    rd_parse_fn parse;
    rd_free_fn free;
    rd_report_fn report; /* the facts as an evidence[] entry's fields */
    rd_diag_fn diag;     /* the damage counted while parsing */
} rd_evidence_kind;

/* The table (static storage, never freed) and its length. */
const rd_evidence_kind *rd_evidence_kinds(size_t *n);

/* Kind by key, or NULL. */
const rd_evidence_kind *rd_evidence_kind_by_key(const char *key);

/* Best kind for the content, or NULL when no sniffer reaches
 * RD_EVIDENCE_MIN_CONFIDENCE. *confidence (may be NULL) gets the best score. */
const rd_evidence_kind *rd_evidence_detect(const char *buf, size_t len, int *confidence);

/* Every kind whose sniffer reaches RD_EVIDENCE_MIN_CONFIDENCE, best first
 * (a log may hold two formats, e.g. nccl-tests run with NCCL_DEBUG=INFO).
 * Stores at most max kinds in out; returns how many matched. */
size_t rd_evidence_detect_all(const char *buf, size_t len, const rd_evidence_kind **out,
                              size_t max);

/* Detect the kind of the file at path from its first RD_SNIFF_BYTES.
 * Returns the kind's key, or "not recognised" (then err holds CP_ERR_FORMAT
 * naming the file; an unreadable file gives CP_ERR_IO). */
const char *rd_evidence_detect_path(const char *path, int *confidence, cp_error *err);

/* Read the file, detect its kind and parse it. On success *kind and *facts
 * are set and the caller frees facts with (*kind)->free. */
int rd_evidence_load(const char *path, const rd_evidence_kind **kind, void **facts,
                     cp_error *err);

#endif
