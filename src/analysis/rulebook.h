/* rulebook.h - the one rule book: every signature chainprof recognises in
 * evidence files and failure logs, written once, with one code, for
 * `analyze` (findings merged with the trace findings) and `diagnose`
 * (verdicts with a timeline) alike.
 *
 * Input: an evidence set (src/model/evidence.h), typed facts per kind.
 * Output: findings {code, layer, severity, confidence, gain, title,
 * evidence FILE:LINE, advice, next steps}, ranked, plus a cross-file
 * timeline of failure events and the first failure in time.
 *
 * Structure: families of rules, one file each (src/analysis/an_rules_<f>.c),
 * listed in rulebook.def in run order. A family is a static table of rules;
 * each rule row names its code, layer, default severity and confidence, the
 * documented message or condition it keys on and where that is documented
 * (NCCL's environment and troubleshooting docs, PyTorch's docs, NVIDIA's
 * Xid catalog, an issue thread where maintainers state the meaning), its
 * advice, and the function that evaluates it. A family may also turn its
 * facts into timeline events (its `events` function), which the engine
 * orders before any rule runs, so rules can ask which failure came first.
 *
 * Ranking (the same for both commands, docs/METRICS.md): critical first
 * (the job cannot run), then findings with a known gain (highest first),
 * then by severity, then by confidence (0..1: how surely this explains the
 * trouble; +0.05 for the finding that cites the first failure in time),
 * then table order. an_findings keeps this order among evidence findings
 * (its comparator is the same up to severity, its last key insertion order).
 *
 * Codes: UPPER_SNAKE_CASE with a family prefix where one reads naturally
 * (NCCL_, TORCH_, GPU_, NCCLTESTS_, PERFTEST_, TOPO_, DMON_, FIO_, PCIE_,
 * MPI_); one code per signature, stable (part of the JSON schemas); each
 * documented in docs/FORMATS.md ("Rule book codes"), which a test checks.
 *
 * Checklist for a new rule (one row, plus its function):
 *   1. if the signature is a new kind of line, teach the reader
 *      (src/readers, fact + line) with a unit test on a line in the format
 *      the tool prints (from its source or a public log);
 *   2. a row in the family's table: code, layer, severity, confidence,
 *      keys_on (the documented message/condition), source (where it is
 *      documented: a doc page or an issue thread, never a sample file of
 *      ours), advice, eval;
 *   3. eval: for each file of the kinds it reads (RB_EACH), when the
 *      signature is present: x = rb_raise(c, self); rb_title(); rb_cite()
 *      for each line that shows it; rb_step() with commands a user can
 *      paste; rb_rank() when it is about one rank; rb_gain() only when the
 *      evidence measures the time the fix would save;
 *   4. the code in docs/FORMATS.md (regenerate the table: chainprof
 *      diagnose --rules --json | python3 scripts/rulebook_doc.py
 *      docs/FORMATS.md) and a test whose top finding it is
 *      (an inline case in tests/unit/test_diagnose.c, a fixture in
 *      tests/cli/verdict_evidence.sh, or a real log's row in tests/cli/corpus.sh).
 * Checklist for a new family (one file plus one row): a file
 * src/analysis/an_rules_<name>.c defining `const rb_family rb_family_<name>`
 * (name, summary, its rule table, optional events and report functions)
 * and one RB_FAMILY(<name>) row in rulebook.def. A family whose rules share
 * one expensive computation (a cross-rank match) runs it in its first
 * rule's eval, keeps it with rb_set_state and reads it back with rb_state
 * in the other rules and in its report function; a verdict about several
 * ranks calls rb_rank once per rank, and names what else identifies it
 * (process group, sequence number, op) with rb_field / rb_field_num; both
 * reports show ranks[] and fields{} with the finding.
 */
#ifndef CP_ANALYSIS_RULEBOOK_H
#define CP_ANALYSIS_RULEBOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/evidence.h"
#include "an_verdict.h"

#define RB_MAX_EVIDENCE 8
#define RB_MAX_STEPS 8
#define RB_STEP_MAX 200
#define RB_MAX_FINDINGS 256
#define RB_MAX_EVENTS 65536
#define RB_FIRST_FAILURE_BONUS 0.05
#define RB_MAX_RANKS 64
#define RB_MAX_FIELDS 8
#define RB_MAX_STATES 16

/* One evidence line of a finding: FILE:LINE: text. */
typedef struct rb_cited {
    uint32_t input;       /* index into the set's inputs */
    long line;            /* 1-based; 0 for a file-level note */
    char text[EV_TEXT_MAX];
} rb_cited;

struct rb_rule;
struct rb_family;
struct rep_report;
struct rep_node;

/* A named value of a finding beyond the common ones (a Flight Recorder
 * verdict's process group, sequence number, op). */
typedef struct rb_kv {
    char key[24];         /* JSON key: lower_snake */
    char text[96];        /* the value as text ("" for a number) */
    double num;           /* the value when is_num */
    bool is_num;
} rb_kv;

typedef struct rb_finding {
    const char *code;     /* the rule's code */
    const struct rb_rule *rule;
    cp_layer layer;
    an_severity severity;
    double confidence;    /* 0..1 */
    double gain_pct;      /* step time saved if fixed, % of the evidence's own time; NaN unknown */
    char assumption[320]; /* what the gain assumes, or why there is none */
    int rank;             /* the rank it is about (the first of ranks[]); -1 */
    int n_ranks;          /* every rank it names (culprits), in rb_rank order */
    long ranks_dropped;
    int ranks[RB_MAX_RANKS];
    int n_fields;
    rb_kv fields[RB_MAX_FIELDS];
    bool first_failure;   /* cites the earliest failure in time */
    char title[240];
    int n_cite;
    long cites_dropped;
    rb_cited cite[RB_MAX_EVIDENCE];
    int n_steps;
    char steps[RB_MAX_STEPS][RB_STEP_MAX];
    uint32_t order;       /* creation order: the last ranking key */
} rb_finding;

/* A failure or warning in time, from any file, for the cross-rank timeline. */
typedef enum rb_event_sev { RB_EV_INFO = 0, RB_EV_WARN, RB_EV_ERROR } rb_event_sev;

typedef struct rb_event {
    uint32_t input;
    long line;
    ev_time ts;
    int rank;             /* -1 unknown */
    char host[64];
    const char *kind;     /* static: "nccl_warn", "cuda_oom", "watchdog_timeout", "xid", ... */
    int severity;         /* rb_event_sev */
    bool symptom;         /* a consequence of another failure (timeout, abort) */
    char text[EV_TEXT_MAX]; /* the message without its prefixes */
} rb_event;

typedef struct rb_opts {
    double nic_gbit_s;    /* NIC line rate per GPU, Gbit/s; 0 = catalog */
    double nvlink_gbps;   /* NVLink per GPU per direction, GB/s; 0 = catalog */
} rb_opts;

typedef struct rb_ctx {
    const ev_set *set;
    rb_opts opts;
    rb_event *events;     /* sorted: wall clock, then boot time, then input and line */
    size_t n_events, cap_events;
    long events_dropped;
    long first_failure;   /* index into events, -1 none */
    rb_finding *v;        /* ranked after rb_run */
    size_t n, cap;
    long findings_dropped;
    rb_finding scratch;   /* what rb_raise returns past RB_MAX_FINDINGS (discarded) */
    struct {              /* families' own results (rb_set_state) */
        const char *family;
        void *state;
        void (*free)(void *state);
    } states[RB_MAX_STATES];
    int n_states;
} rb_ctx;

typedef struct rb_rule {
    const char *code;
    cp_layer layer;
    an_severity severity;  /* default; eval may lower or raise it */
    double confidence;     /* default */
    const char *keys_on;   /* the documented message or condition it keys on */
    const char *source;    /* where that is documented */
    const char *advice;    /* what to do, for people */
    void (*eval)(rb_ctx *c, const struct rb_rule *self);
} rb_rule;

typedef struct rb_family {
    const char *name;
    const char *summary;
    const rb_rule *rules;
    size_t n_rules;
    /* Timeline events from one file (NULL: the family has none). */
    void (*events)(rb_ctx *c, const ev_file *f);
    /* Its own section of both commands' reports, from its state (a
     * per-rank table), added to root under a key of its own; NULL none. */
    void (*report)(const rb_ctx *c, struct rep_report *r, struct rep_node *root);
} rb_family;

/* The families, in run order (rulebook.def), NULL-terminated. */
const rb_family *const *rb_families(void);
/* The rule of a code, or NULL (for docs and tests). */
const rb_rule *rb_rule_of(const char *code);

/* Run the rule book over s: events, first failure, every rule, ranking.
 * The ctx borrows s (it must outlive c); free with rb_free. */
rb_ctx *rb_run(const ev_set *s, const rb_opts *o);
void rb_free(rb_ctx *c);
/* Every family's report section (rb_family.report), for both commands. */
void rb_report(const rb_ctx *c, struct rep_report *r, struct rep_node *root);

/* ---- for rules ---- */

/* Walk the files of one kind: RB_EACH(c, EV_NCCL_LOG, f) { f->as.nccl ... } */
#define RB_EACH(c, kind, f) for (const ev_file *f = ev_next((c)->set, kind, NULL); f; f = ev_next((c)->set, kind, f))

/* The finding of the rule's code (created at the rule's severity and
 * confidence, or raised to them when it exists: several rules and files
 * add to one finding). Never NULL: past RB_MAX_FINDINGS a scratch finding
 * that is discarded (counted in findings_dropped). */
rb_finding *rb_raise(rb_ctx *c, const rb_rule *r);
/* Raise (never lower) a finding's confidence; set its severity. */
void rb_confidence(rb_finding *x, double confidence);
void rb_severity(rb_finding *x, an_severity s);
void rb_title(rb_finding *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Cite a fact's line of file f (nothing when at->line is 0; once per line). */
void rb_cite(rb_finding *x, const ev_file *f, const ev_at *at);
/* Cite a line of f with a text of ours (line 0: about the whole file). */
void rb_cite_line(rb_finding *x, const ev_file *f, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rb_step(rb_finding *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The gain and what it assumes; a finding without rb_gain has a null gain
 * and its rule's default assumption ("not measurable from ... alone"). */
void rb_gain(rb_finding *x, double pct, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A rank the finding is about: appended to ranks[] (once each); the first
 * is x->rank. */
void rb_rank(rb_finding *x, int rank);
/* A named value (key lower_snake, at most RB_MAX_FIELDS; a key set twice
 * keeps the last value). */
void rb_field(rb_finding *x, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rb_field_num(rb_finding *x, const char *key, double v);
/* A family's own results for its rules and its report hook: set once (the
 * ctx frees it with free_fn at rb_free), NULL until set. Keyed by the
 * family name, so a family's first rule can compute what the others read
 * (a cross-rank match run once). */
void rb_set_state(rb_ctx *c, const char *family, void *state, void (*free_fn)(void *state));
void *rb_state(const rb_ctx *c, const char *family);
/* The finding of a code, or NULL. */
rb_finding *rb_find(rb_ctx *c, const char *code);
/* Drop the finding of a code (a more specific rule explains it). */
void rb_drop(rb_ctx *c, const char *code);

/* For families' event functions: one event at a fact's line. */
void rb_event_add(rb_ctx *c, const ev_file *f, const ev_at *at, const char *kind, rb_event_sev sev, bool symptom);
/* The first failure in time, or NULL. */
const rb_event *rb_first_failure(const rb_ctx *c);

/* "12.34 GiB" / "4.62 MiB"; "?" when unknown (< 0). */
const char *rb_bytes(double b, char *buf, size_t size);

#endif
