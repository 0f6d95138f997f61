/* evidence.h - the evidence reader table and the one reading loop that fills
 * the evidence model (src/model/evidence.h) for `analyze` and `diagnose`.
 *
 * Every evidence and log format is one line-streaming reader: the loop
 * (rd_ev_read_*) streams each input once (plain, .gz or .zst, a fixed
 * window: a file of any size costs O(RD_EV_MAX_LINE_BYTES) plus the facts),
 * peels each line's prefixes once (log_prefix.h), and hands the line to
 * every reader active on that input. A reader is active when it is a scan
 * reader (RD_EV_SCAN in evidence.def) or when its sniffer scores the head
 * at least RD_EV_MIN_CONFIDENCE. At the end each active reader returns its
 * facts, or NULL when the input held none of its kind; so one input may
 * yield several evidence files (NCCL INFO lines interleaved with an
 * nccl-tests table give an nccl_log file and an nccl_tests file), and every
 * reader's damage counts land in the set (ev_set_diag merges them into the
 * report's diagnostics).
 *
 * The loop also does what every reader would otherwise repeat: it skips
 * "#@" lines (the provenance notes of the project's sample logs; line
 * numbers still count them), strips a trailing CR, cuts lines longer than
 * RD_EV_MAX_LINE_BYTES (counted), gives an untimed line the time of the last
 * timed line of its input (ordering across ranks), and gives an untagged
 * line of "rank3.log" rank 3 (counted as rank_from_filename).
 *
 * Reader contract (all four functions in one file, no globals):
 *   int   rd_<p>_sniff(const char *head, size_t n)  confidence 0..100 that
 *         head (the first bytes of an input) is this format;
 *   void *rd_<p>_begin(const char *name)            reading state (owned by
 *         the loop until end); name is the input's path, for messages;
 *   void  rd_<p>_line(void *st, const rd_line *ln)  one line; a line that
 *         is not this reader's is ignored cheaply;
 *   void *rd_<p>_end(void *st, diag_set *diag)       frees st; returns the
 *         facts (the model's type of the kind, caller owns) or NULL when
 *         the input held none; counts damage into diag.
 *
 * Checklist for a new reader (one file + one row):
 *   1. the kind and its fact type in src/model (checklist in
 *      src/model/evidence.h), unless it yields an existing kind;
 *   2. src/readers/rd_<fmt>.c (or <fmt>_log.c) with the four functions
 *      above, declared with RD_EV_DECLARE(<p>) in its header; every fact
 *      with its line; bad items counted (rd_note, diag.def codes), never
 *      fatal;
 *   3. one RD_EV row in src/readers/evidence.def;
 *   4. a fixture, unit tests (rd_ev_read_buffer), a fuzz target, the format
 *      in docs/FORMATS.md.
 * Whole-file readers (a Flight Recorder pickle or its one-line JSON, an
 * .ncu-rep that a tool converts): a row RD_EV_FILE(KIND, p, flags, ext) in
 * evidence.def and two functions instead of four:
 *   int   rd_<p>_sniff(const char *head, size_t n)  as above, on the head
 *         (binary allowed; 0 when the head cannot tell);
 *   void *rd_<p>_file(const char *path, const char *data, size_t len,
 *                     diag_set *diag)           the facts or NULL; data is
 *         the whole decompressed input (bytes as they are: no CR stripping,
 *         no line cuts, "#@" lines included), at most RD_EV_MAX_WHOLE_BYTES
 *         (larger inputs are counted as limit_reached and not read); with
 *         RD_EV_NO_DATA the loop does not read the input: data is NULL and
 *         the reader opens path itself (a converter such as ncu --import).
 *   `ext` (a file-name suffix such as ".ncu-rep", or NULL) claims an input
 *   by its name whatever its head says. An input a whole-file reader claims
 *   (sniff >= RD_EV_MIN_CONFIDENCE or ext) goes to it alone. Declare the
 *   two with RD_EV_FILE_DECLARE(p).
 */
#ifndef CP_READERS_EVIDENCE_H
#define CP_READERS_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/error.h"
#include "../model/diag.h"
#include "../model/evidence.h"
#include "log_prefix.h"

#define RD_EV_MIN_CONFIDENCE 50
#define RD_EV_MAX_LINE_BYTES 65536 /* longer lines are cut (counted as limit_reached) */
#define RD_EV_MAX_INPUTS 4096      /* inputs past it are counted, not read */

#define RD_EV_MAX_WHOLE_BYTES (1024LL << 20) /* whole-file readers: larger inputs are not read */

enum {
    RD_EV_SCAN = 1,    /* read every text input (log lines may appear anywhere) */
    RD_EV_ALONE = 2,   /* when it claims the head, no other reader sees the input
                        * (nvidia-smi -q: its "Key : Value" lines are nobody else's) */
    RD_EV_NO_DATA = 4, /* whole-file reader that opens the path itself */
};

/* One line as the loop hands it to a reader. */
typedef struct rd_line {
    const char *text;    /* the whole line, no newline or CR */
    size_t len;
    long no;             /* 1-based line number in the input */
    const rd_prefix *pfx; /* its prefixes, peeled once (rank/host/time, msg) */
} rd_line;

typedef struct rd_ev_reader {
    ev_kind kind;
    const char *name;    /* the prefix, for messages and tests */
    unsigned flags;      /* RD_EV_SCAN, RD_EV_ALONE, RD_EV_NO_DATA */
    int (*sniff)(const char *head, size_t n);
    /* line readers (RD_EV rows); NULL for whole-file readers */
    void *(*begin)(const char *name);
    void (*line)(void *st, const rd_line *ln);
    void *(*end)(void *st, diag_set *diag);
    /* whole-file readers (RD_EV_FILE rows); NULL for line readers */
    void *(*file)(const char *path, const char *data, size_t len, diag_set *diag);
    const char *ext;     /* file-name suffix that claims an input; NULL */
} rd_ev_reader;

#define RD_EV_DECLARE(p)                                   \
    int rd_##p##_sniff(const char *head, size_t n);        \
    void *rd_##p##_begin(const char *name);                \
    void rd_##p##_line(void *st, const rd_line *ln);       \
    void *rd_##p##_end(void *st, diag_set *diag)

#define RD_EV_FILE_DECLARE(p)                              \
    int rd_##p##_sniff(const char *head, size_t n);        \
    void *rd_##p##_file(const char *path, const char *data, size_t len, diag_set *diag)

/* The table (static storage) and its length. */
const rd_ev_reader *rd_ev_readers(size_t *n);
/* The reader of a kind, or NULL. */
const rd_ev_reader *rd_ev_reader_of(ev_kind kind);

/* Best table (non-scan) reader for a head, or NULL below
 * RD_EV_MIN_CONFIDENCE; *confidence (may be NULL) gets the best score. Scan
 * readers are asked too, so a head full of NCCL lines is claimed. */
const rd_ev_reader *rd_ev_detect(const char *head, size_t n, int *confidence);

/* Read each file into s: one input per path (in order), its evidence files
 * after it. Files are read on up to nthreads threads (one file per thread);
 * the set does not depend on the thread count. Returns 0, or the first
 * error (err filled: a file that cannot be opened or read); inputs past
 * RD_EV_MAX_INPUTS are counted in *dropped (may be NULL). */
int rd_ev_read_files(ev_set *s, char *const *paths, size_t n, int nthreads, long *dropped, cp_error *err);
/* Read one in-memory input named `name`. */
void rd_ev_read_buffer(ev_set *s, const char *name, const char *buf, size_t len);

/* Parse a buffer with one kind's reader only (tests, fuzz targets, callers
 * that know the kind): 0 and *facts set (caller frees with ev_facts_free),
 * or CP_ERR_FORMAT when the buffer holds none of the kind. diag (may be
 * NULL) gets the damage. */
int rd_ev_parse(ev_kind kind, const char *data, size_t len, const char *name, void **facts, diag_set *diag,
                cp_error *err);

#endif
