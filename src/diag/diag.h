/* diag.h - the `chainprof diagnose` engine: failure logs in, ranked verdicts out.
 *
 * A dg_ctx collects inputs (files, directories, or buffers), runs every log
 * reader over each line once (src/readers: nccl_log, torch_log, dmesg_log,
 * smi_query), turns what they found into a cross-rank timeline of events,
 * finds the first failure in time, and applies the rule table (diag_rules.c)
 * to produce verdicts {code, layer, title, confidence, evidence[], next
 * steps[]} sorted by confidence. It knows nothing about output formats: the
 * CLI renders the result through the report model.
 *
 * Life cycle: dg_new(); dg_add_path()/dg_add_files()/dg_add_buffer() any
 * number of times;
 * dg_run() once; read ->verdicts, ->events, ->inputs; dg_free().
 *
 * Ownership: the ctx owns everything it returns (inputs, facts, events,
 * verdicts); pointers stay valid until dg_free(). Caps: inputs, events,
 * evidence and steps per verdict are bounded; what is dropped is counted in
 * the dg_ctx counters and reported by the CLI.
 */
#ifndef CP_DIAG_DIAG_H
#define CP_DIAG_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/error.h"
#include "../readers/dmesg_log.h"
#include "../readers/log_prefix.h"
#include "../readers/nccl_log.h"
#include "../readers/smi_query.h"
#include "../readers/torch_log.h"

#define DG_TEXT_MAX 200
#define DG_MAX_EVIDENCE 8
#define DG_MAX_STEPS 8
#define DG_MAX_VERDICTS 64
#define DG_MAX_EVENTS 65536
#define DG_MAX_INPUTS 4096
#define DG_MAX_LINE_BYTES 65536 /* longer lines are cut (counted) */

typedef struct dg_input {
    char *path;           /* as given (owned) */
    long long bytes;
    long lines;
    long long_lines;      /* lines cut at DG_MAX_LINE_BYTES */
    bool truncated;       /* a compressed input ended early */
    char kinds[64];       /* what was recognised: "nccl,pytorch,kernel,nvidia-smi-q" or "unknown" */
    rd_nccl_facts *nccl;  /* never NULL; owned unless it is the ctx's shared empty facts */
    rd_torch_facts *torch;
    rd_dmesg_facts *dmesg;
    rd_smiq_facts *smiq;  /* NULL unless the input is nvidia-smi -q output */
    rd_time last_ts;      /* time of the last timed line (reading state) */
    int file_rank;        /* rank from the file name for untagged lines; -1 */
    long file_rank_lines; /* lines that took it */
} dg_input;

typedef struct dg_evidence {
    int input;            /* index into inputs */
    long line;            /* 1-based */
    char text[DG_TEXT_MAX];
} dg_evidence;

typedef enum dg_severity { DG_SEV_INFO = 0, DG_SEV_WARN, DG_SEV_ERROR } dg_severity;

typedef struct dg_event {
    int input;
    long line;
    rd_time ts;
    int rank;             /* -1 unknown */
    char host[64];
    const char *kind;     /* static: "oom", "watchdog_timeout", "nccl_warn", "xid", ... */
    int severity;         /* dg_severity */
    bool symptom;         /* a consequence of another failure (timeout, abort) */
    char text[DG_TEXT_MAX];
} dg_event;

typedef struct dg_verdict {
    const char *code;     /* static snake_case code, e.g. "ib_retry_exceeded" */
    const char *layer;    /* host|compute|intra|inter|storage */
    char title[240];
    double confidence;    /* 0..1 */
    int rank;             /* rank it is about, -1 */
    dg_evidence evidence[DG_MAX_EVIDENCE];
    int n_evidence;
    long evidence_dropped;
    char steps[DG_MAX_STEPS][DG_TEXT_MAX];
    int n_steps;
    bool first_failure;   /* its evidence contains the first failure in time */
} dg_verdict;

typedef struct dg_ctx {
    dg_input *inputs;
    int n_inputs;
    long inputs_dropped;
    dg_event *events;     /* sorted: wall-clock time, then boot time, then file order */
    int n_events;
    long events_dropped;
    int first_failure;    /* index into events, -1 when none */
    dg_verdict verdicts[DG_MAX_VERDICTS];
    int n_verdicts;
    long long bytes_read;
    long lines_read;
    /* private: inputs where a reader found nothing share these (not owned
     * by the input), so thousands of rank logs cost memory only for what
     * they contain */
    rd_nccl_facts empty_nccl_;
    rd_torch_facts empty_torch_;
    rd_dmesg_facts empty_dmesg_;
} dg_ctx;

dg_ctx *dg_new(void);
void dg_free(dg_ctx *c);

/* Add a file, a directory (its files, recursively, in name order) or a glob.
 * Returns 0, or a negative status with err filled; the ctx stays usable. Lines are read as they come (streaming): a file of any
 * size costs O(DG_MAX_LINE_BYTES) memory plus the bounded facts. */
int dg_add_path(dg_ctx *c, const char *path, cp_error *err);
/* Add files (no directory expansion) and read them on up to nthreads
 * threads, one file per thread. Returns 0 or the first error (err filled). */
int dg_add_files(dg_ctx *c, char *const *paths, size_t n, int nthreads, cp_error *err);
/* Add an in-memory input named `name` (copied). */
int dg_add_buffer(dg_ctx *c, const char *name, const char *buf, size_t len, cp_error *err);

/* Build events, order them, find the first failure, apply the rules. */
void dg_run(dg_ctx *c);

/* One-line summary for the "nothing found" case: "no known failure signature
 * found in N input(s), L line(s) read (kinds ...)" into buf. Returns buf. */
const char *dg_summary(const dg_ctx *c, char *buf, size_t size);

/* ---- rule table (diag_rules.c) --------------------------------------- */

typedef struct dg_rule {
    const char *name;     /* rule id (also the default verdict code) */
    const char *layer;    /* default layer */
    const char *summary;  /* one line for docs and --help */
    void (*fn)(dg_ctx *c, const struct dg_rule *r);
} dg_rule;

extern const dg_rule dg_rules[];
extern const size_t dg_n_rules;

/* For rules: the verdict with `code` (created with confidence 0 when new, so
 * several rules can add to one verdict); NULL when the table is full. */
dg_verdict *dg_verdict_get(dg_ctx *c, const char *code, const char *layer);
void dg_verdict_raise(dg_verdict *v, double confidence);
void dg_verdict_evidence(dg_verdict *v, int input, long line, const char *text);
void dg_verdict_step(dg_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set the title (printf-style, cut to fit). */
void dg_verdict_title(dg_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
