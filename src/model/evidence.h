/* evidence.h - the evidence model: what the logs and benchmark outputs say.
 *
 * The fourth shared model next to timeline, topology and report. Readers
 * (src/readers, one file per format, table in src/readers/evidence.def) fill
 * it; the rule book (src/analysis/rulebook.h) reads it, for `analyze` and
 * `diagnose` alike. Nothing here judges: fact types are data only.
 *
 *   ev_set    every input read (ev_input: path, size, lines, damage) and every
 *             evidence file found in them (ev_file);
 *   ev_file   one kind found in one input {path, kind, typed facts, damage};
 *             one input may yield several (NCCL INFO lines interleaved with
 *             an nccl-tests table give an nccl_log and an nccl_tests file);
 *   facts     one struct per kind (evidence.def), declared in ev_<member>.h:
 *             each fact carries the line it was read from.
 *
 * Access is typed: f->as.nccl is the ev_nccl * of a file whose kind is
 * EV_NCCL_LOG (ev_next() walks the files of one kind). The set owns
 * everything in it; ev_set_free releases the facts through each kind's
 * free function.
 *
 * Checklist for a new evidence kind (one file per piece plus one row each):
 *   1. src/model/ev_<member>.h/.c: the fact struct, ev_<member>_free(),
 *      ev_<member>_report() (the facts as an evidence[] entry's fields);
 *   2. one X row in src/model/evidence.def and its #include below;
 *   3. the reader: src/readers/rd_<fmt>.c + one row in src/readers/evidence.def
 *      (checklist in src/readers/evidence.h);
 *   4. rules: src/analysis/an_rules_<family>.c + one row in
 *      src/analysis/rulebook.def (checklist in src/analysis/rulebook.h);
 *   5. the kind key and facts in docs/FORMATS.md ("Evidence files"), a
 *      fixture, unit tests and a fuzz target.
 */
#ifndef CP_MODEL_EVIDENCE_H
#define CP_MODEL_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "ev_base.h"
#include "ev_counters.h"
#include "ev_dmesg.h"
#include "ev_dmon.h"
#include "ev_fio.h"
#include "ev_frdump.h"
#include "ev_iperf.h"
#include "ev_launcher.h"
#include "ev_lspci.h"
#include "ev_nccl.h"
#include "ev_nccltests.h"
#include "ev_ncu.h"
#include "ev_perftest.h"
#include "ev_smiq.h"
#include "ev_topo.h"
#include "ev_torch.h"
#include "report.h"

typedef enum ev_kind {
#define X(e, key, type, member, title) EV_##e,
#include "evidence.def"
#undef X
    EV__COUNT
} ev_kind;

const char *ev_kind_key(ev_kind k);   /* "nccl_log"; "?" out of range */
const char *ev_kind_title(ev_kind k); /* "NCCL_DEBUG log" */
/* Kind by key, or -1. */
int ev_kind_by_key(const char *key);

typedef struct ev_file {
    const char *path; /* the input's path (owned by the set) */
    uint32_t input;   /* index into ev_set.inputs */
    ev_kind kind;
    union {
        void *any;
#define X(e, key, type, member, title) type *member;
#include "evidence.def"
#undef X
    } as;             /* the member of `kind` */
    diag_set *diag;   /* damage this kind's reader counted; NULL when none */
} ev_file;

typedef struct ev_input {
    char *path;
    long long bytes;      /* read (decompressed) */
    long lines;
    bool truncated;       /* a compressed input ended early */
    uint32_t kinds;       /* bit per ev_kind found in it */
    diag_set *diag;       /* damage of the reading itself (cut lines, truncation,
                           * ranks from the file name); NULL when none */
} ev_input;

typedef struct ev_set {
    ev_input *inputs;
    size_t n_inputs, cap_inputs;
    ev_file *files;
    size_t n_files, cap_files;
} ev_set;

void ev_set_init(ev_set *s);
void ev_set_free(ev_set *s);

/* Append an input (path copied); returns its index. */
uint32_t ev_set_add_input(ev_set *s, const char *path);
/* Append an evidence file of `kind` with its facts (ownership moves to the
 * set) and, when d counted anything, a copy of d. Returns the file. */
ev_file *ev_set_add_file(ev_set *s, uint32_t input, ev_kind kind, void *facts, const diag_set *d);
/* Record damage of an input's reading (merged into its diag). */
void ev_input_diag(ev_set *s, uint32_t input, const diag_set *d);

/* The next file of `kind` after prev (NULL: the first), or NULL. */
const ev_file *ev_next(const ev_set *s, ev_kind kind, const ev_file *prev);
/* How many files of `kind` the set holds. */
size_t ev_count(const ev_set *s, ev_kind kind);

/* Every input's and file's damage added into out (initialised by the caller). */
void ev_set_diag(const ev_set *s, diag_set *out);

/* "nccl_log,nccl_tests" of the kinds in mask (in evidence.def order), or
 * "unknown" when none; into buf. */
const char *ev_kinds_str(uint32_t mask, char *buf, size_t size);

/* Free facts of `kind` (the kind's free function). */
void ev_facts_free(ev_kind kind, void *facts);
/* The file's facts as fields of obj (an evidence[] entry): the kind's
 * report function. */
void ev_file_report(const ev_file *f, rep_report *r, rep_node *obj);

#endif
