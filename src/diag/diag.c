/* diag.c - diagnose engine: inputs, one reading pass, cross-rank timeline,
 * first failure, rules, ranking (see diag.h).
 *
 * Reading: every line is split off a 1 MiB window (no whole-file buffers;
 * plain, gzip and zstd through cp_src), its
 * prefix parsed once, and handed to the NCCL, PyTorch and kernel readers; an
 * input whose first bytes are nvidia-smi -q output goes to that reader only.
 *
 * Timeline: the readers' findings become dg_events. Ordering is by wall-clock
 * time when the lines carry one (glog, ISO, syslog, dmesg -T; years are
 * ignored when one side lacks it), then kernel boot time, then input order
 * and line number - so a job whose ranks log with timestamps is ordered
 * across ranks, and one without keeps each file's order.
 *
 * First failure: the earliest error event that is not a symptom. Watchdog
 * timeouts, aborts and "unhandled system error" summaries are symptoms: they
 * follow whatever broke first on some rank. The verdict whose evidence holds
 * the first failure gets a small confidence bonus, so among equally specific
 * signatures the one that came first wins.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/par.h"
#include "../base/paths.h"
#include "../base/src.h"
#include "../base/util.h"

#define READ_CHUNK (1 << 20)
#define FIRST_FAILURE_BONUS 0.05

dg_ctx *dg_new(void)
{
    dg_ctx *c = cp_xcalloc(1, sizeof *c);
    c->first_failure = -1;
    rd_nccl_init(&c->empty_nccl_, "");
    rd_torch_init(&c->empty_torch_, "");
    rd_dmesg_init(&c->empty_dmesg_, "");
    return c;
}

void dg_free(dg_ctx *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_inputs; i++) {
        dg_input *in = &c->inputs[i];
        free(in->path);
        if (in->nccl != &c->empty_nccl_) free(in->nccl);
        if (in->torch != &c->empty_torch_) free(in->torch);
        if (in->dmesg != &c->empty_dmesg_) free(in->dmesg);
        free(in->smiq);
    }
    free(c->inputs);
    free(c->events);
    free(c);
}

/* ---- inputs ------------------------------------------------------------- */

static dg_input *new_input(dg_ctx *c, const char *name)
{
    if (c->n_inputs == DG_MAX_INPUTS) {
        c->inputs_dropped++;
        return NULL;
    }
    size_t cap = (size_t)c->n_inputs;
    if ((c->n_inputs & (c->n_inputs - 1)) == 0) /* grow at powers of two */
        c->inputs = cp_xrealloc(c->inputs, (cap ? cap * 2 : 8) * sizeof *c->inputs);
    dg_input *in = &c->inputs[c->n_inputs++];
    memset(in, 0, sizeof *in);
    in->path = cp_xstrdup(name);
    in->file_rank = rd_rank_from_name(name);
    in->nccl = cp_xmalloc(sizeof *in->nccl);
    in->torch = cp_xmalloc(sizeof *in->torch);
    in->dmesg = cp_xmalloc(sizeof *in->dmesg);
    rd_nccl_init(in->nccl, in->path);
    rd_torch_init(in->torch, in->path);
    rd_dmesg_init(in->dmesg, in->path);
    return in;
}

static void feed_line(dg_input *in, const char *line, size_t len, long lineno)
{
    in->lines++;
    if (in->smiq) {
        rd_smiq_line(in->smiq, line, len, lineno);
        return;
    }
    rd_prefix pfx;
    rd_prefix_parse(line, len, &pfx);
    /* an untimed line (a traceback, an NCCL line) happened no earlier than
     * the last timed line of its file: inherit that time for ordering */
    if (pfx.ts.clock == RD_CLOCK_NONE) pfx.ts = in->last_ts;
    else in->last_ts = pfx.ts;
    /* an untagged line of "rank3.log" is rank 3's */
    if (pfx.rank < 0 && pfx.local_rank < 0 && in->file_rank >= 0) {
        pfx.rank = in->file_rank;
        in->file_rank_lines++;
    }
    rd_nccl_line_pfx(in->nccl, &pfx, line, len, lineno);
    rd_torch_line_pfx(in->torch, &pfx, line, len, lineno);
    rd_dmesg_line_pfx(in->dmesg, &pfx, line, len, lineno);
}

static void start_input(dg_input *in, const char *head, size_t n)
{
    if (rd_smiq_sniff(head, n)) {
        in->smiq = cp_xmalloc(sizeof *in->smiq);
        rd_smiq_init(in->smiq, in->path);
    }
}

static void finish_input(dg_input *in)
{
    rd_nccl_finish(in->nccl);
    rd_torch_finish(in->torch);
    rd_dmesg_finish(in->dmesg);
    if (in->smiq) rd_smiq_finish(in->smiq);
    char *k = in->kinds;
    size_t cap = sizeof in->kinds;
    k[0] = '\0';
    const rd_torch_facts *t = in->torch;
    if (in->nccl->nccl_lines) strncat(k, "nccl,", cap - strlen(k) - 1);
    if (t->n_ooms || t->n_timeouts || t->n_progress || t->n_desyncs || t->n_nccl_errors ||
        t->n_signals || t->n_cuda_errors || t->tracebacks)
        strncat(k, "pytorch,", cap - strlen(k) - 1);
    if (in->dmesg->kernel_lines) strncat(k, "kernel,", cap - strlen(k) - 1);
    if (in->smiq && in->smiq->recognised) strncat(k, "nvidia-smi-q,", cap - strlen(k) - 1);
    size_t L = strlen(k);
    if (L) k[L - 1] = '\0';
    else snprintf(k, cap, "unknown");
}

/* Give back the facts of readers that found nothing in `in`. */
static void compact_input(dg_ctx *c, dg_input *in)
{
    if (in->nccl != &c->empty_nccl_ && !in->nccl->nccl_lines && !in->nccl->n_issues) {
        free(in->nccl);
        in->nccl = &c->empty_nccl_;
    }
    const rd_torch_facts *t = in->torch;
    if (t != &c->empty_torch_ && !(t->n_ooms || t->n_timeouts || t->n_progress || t->n_desyncs || t->n_nccl_errors ||
                                   t->n_signals || t->n_cuda_errors || t->dropped || t->desync_timeout_at.line)) {
        free(in->torch);
        in->torch = &c->empty_torch_;
    }
    const rd_dmesg_facts *d = in->dmesg;
    if (d != &c->empty_dmesg_ && !(d->n_xids || d->n_bus || d->n_aer || d->n_oomkills || d->dropped)) {
        free(in->dmesg);
        in->dmesg = &c->empty_dmesg_;
    }
}

struct line_state {
    dg_input *in;
    long lineno;
};

static void buffer_lines(struct line_state *st, const char *buf, size_t len, bool final,
                         size_t *consumed)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl && !final) break;
        const char *e = nl ? nl : end;
        size_t L = (size_t)(e - p);
        if (L && p[L - 1] == '\r') L--;
        if (L > DG_MAX_LINE_BYTES) { /* the readers see the head only */
            st->in->long_lines++;
            L = DG_MAX_LINE_BYTES;
        }
        feed_line(st->in, p, L, ++st->lineno);
        p = nl ? nl + 1 : end;
    }
    *consumed = (size_t)(p - buf);
}

int dg_add_buffer(dg_ctx *c, const char *name, const char *buf, size_t len, cp_error *err)
{
    (void)err;
    dg_input *in = new_input(c, name);
    if (!in) return 0; /* over the input cap: counted */
    start_input(in, buf, len);
    struct line_state st = {in, 0};
    size_t used;
    buffer_lines(&st, buf, len, true, &used);
    in->bytes = (long long)len;
    finish_input(in);
    compact_input(c, in);
    return 0;
}

/* Stream one file (plain, .gz or .zst) through a fixed window into `in`.
 * Touches only `in`, so files are read in parallel. */
static int read_file(dg_input *in, cp_error *err)
{
    cp_src *src;
    int rc = cp_src_open(&src, in->path, err);
    if (rc < 0) return rc;
    char *win = cp_xmalloc(READ_CHUNK + DG_MAX_LINE_BYTES);
    struct line_state st = {in, 0};
    size_t have = 0;
    bool first = true, skipping = false;
    for (;;) {
        ssize_t got = cp_src_read(src, win + have, READ_CHUNK, err);
        if (got < 0) {
            rc = (int)got;
            break;
        }
        in->bytes += got;
        if (first) {
            start_input(in, win, (size_t)got);
            first = false;
        }
        size_t len = have + (size_t)got, used = 0;
        if (skipping) { /* the rest of an over-long line */
            const char *nl = memchr(win, '\n', len);
            if (!nl) {
                have = 0;
                if (got == 0) break;
                continue;
            }
            len -= (size_t)(nl + 1 - win);
            memmove(win, nl + 1, len);
            skipping = false;
        }
        buffer_lines(&st, win, len, got == 0, &used);
        have = len - used;
        if (have) memmove(win, win + used, have);
        if (have >= DG_MAX_LINE_BYTES) { /* cut: feed the head, skip to the newline */
            in->long_lines++;
            feed_line(in, win, DG_MAX_LINE_BYTES, ++st.lineno);
            have = 0;
            skipping = true;
        }
        if (got == 0) break;
    }
    in->truncated = cp_src_truncated(src);
    free(win);
    cp_src_close(src);
    finish_input(in);
    return rc;
}

typedef struct read_job {
    dg_input *inputs;
    cp_error *errs;
    int *rcs;
} read_job;

static void read_one(void *ctx, size_t i)
{
    read_job *job = ctx;
    cp_error_clear(&job->errs[i]);
    job->rcs[i] = read_file(&job->inputs[i], &job->errs[i]);
}

int dg_add_files(dg_ctx *c, char *const *paths, size_t n, int nthreads, cp_error *err)
{
    int first = c->n_inputs;
    for (size_t i = 0; i < n; i++) new_input(c, paths[i]); /* all before any pointer is taken */
    size_t m = (size_t)(c->n_inputs - first);
    if (!m) return 0;
    read_job job = {&c->inputs[first], cp_xcalloc(m, sizeof(cp_error)), cp_xcalloc(m, sizeof(int))};
    cp_par_for(m, nthreads, read_one, &job);
    for (size_t i = 0; i < m; i++) compact_input(c, &c->inputs[first + (int)i]);
    int rc = 0;
    for (size_t i = 0; i < m && !rc; i++)
        if (job.rcs[i] < 0) {
            rc = job.rcs[i];
            if (err) *err = job.errs[i];
        }
    free(job.errs);
    free(job.rcs);
    return rc;
}

static bool keep_any(const char *path, void *ctx)
{
    (void)path;
    (void)ctx;
    return true;
}

int dg_add_path(dg_ctx *c, const char *path, cp_error *err)
{
    cp_paths ps = {0};
    int rc = cp_paths_add(&ps, path, keep_any, NULL, err);
    if (rc == 0) {
        cp_paths_sort_unique(&ps);
        rc = dg_add_files(c, ps.v, ps.n, 1, err);
    }
    cp_paths_free(&ps);
    return rc;
}

/* ---- events ------------------------------------------------------------- */

static void add_event(dg_ctx *c, int input, long line, rd_time ts, int rank, const char *host,
                      const char *kind, int sev, bool symptom, const char *text)
{
    if (c->n_events == DG_MAX_EVENTS) {
        c->events_dropped++;
        return;
    }
    if ((c->n_events & (c->n_events - 1)) == 0) /* grow at powers of two */
        c->events = cp_xrealloc(c->events, (c->n_events ? (size_t)c->n_events * 2 : 64) * sizeof *c->events);
    dg_event *e = &c->events[c->n_events++];
    e->input = input;
    e->line = line;
    e->ts = ts;
    e->rank = rank;
    snprintf(e->host, sizeof e->host, "%s", host ? host : "");
    e->kind = kind;
    e->severity = sev;
    e->symptom = symptom;
    /* the message without launcher/NCCL/time prefixes: the event already
     * carries rank, host and time, and the evidence keeps the whole line */
    rd_prefix pfx;
    rd_prefix_parse(text, strlen(text), &pfx);
    rd_copy_trim(e->text, sizeof e->text, pfx.msg, pfx.msg_len);
}

static void events_from_input(dg_ctx *c, int i)
{
    const dg_input *in = &c->inputs[i];
    const rd_nccl_facts *n = in->nccl;
    for (int k = 0; k < n->n_issues; k++) {
        const rd_nccl_issue *is = &n->issues[k];
        bool sym = is->kind == RD_NCCL_ISSUE_SYSTEM;
        add_event(c, i, is->at.line, is->ts, is->rank, is->host, "nccl_warn",
                  is->kind == RD_NCCL_ISSUE_OTHER ? DG_SEV_WARN : DG_SEV_ERROR, sym, is->at.text);
    }
    const rd_torch_facts *t = in->torch;
    for (int k = 0; k < t->n_ooms; k++)
        add_event(c, i, t->ooms[k].at.line, t->ooms[k].at.ts, t->ooms[k].at.rank, "", "cuda_oom",
                  DG_SEV_ERROR, false, t->ooms[k].at.text);
    for (int k = 0; k < t->n_timeouts; k++)
        add_event(c, i, t->timeouts[k].at.line, t->timeouts[k].at.ts, t->timeouts[k].at.rank, "",
                  "watchdog_timeout", DG_SEV_ERROR, true, t->timeouts[k].at.text);
    for (int k = 0; k < t->n_progress; k++)
        add_event(c, i, t->progress[k].at.line, t->progress[k].at.ts, t->progress[k].at.rank, "",
                  "watchdog_progress", DG_SEV_INFO, true, t->progress[k].at.text);
    for (int k = 0; k < t->n_desyncs; k++)
        add_event(c, i, t->desyncs[k].at.line, t->desyncs[k].at.ts, t->desyncs[k].lag_rank, "",
                  "desync_report", DG_SEV_ERROR, false, t->desyncs[k].at.text);
    for (int k = 0; k < t->n_nccl_errors; k++)
        add_event(c, i, t->nccl_errors[k].at.line, t->nccl_errors[k].at.ts,
                  t->nccl_errors[k].at.rank, "", "nccl_error", DG_SEV_ERROR, true,
                  t->nccl_errors[k].at.text);
    for (int k = 0; k < t->n_signals; k++)
        add_event(c, i, t->signals[k].at.line, t->signals[k].at.ts, t->signals[k].at.rank, "",
                  "signal", DG_SEV_ERROR, false, t->signals[k].at.text);
    for (int k = 0; k < t->n_cuda_errors; k++)
        add_event(c, i, t->cuda_errors[k].at.line, t->cuda_errors[k].at.ts,
                  t->cuda_errors[k].at.rank, "", "cuda_error", DG_SEV_ERROR, false,
                  t->cuda_errors[k].at.text);
    const rd_dmesg_facts *d = in->dmesg;
    for (int k = 0; k < d->n_xids; k++) {
        const rd_xid_info *xi = rd_xid_lookup(d->xids[k].code);
        bool sym = xi && strcmp(xi->bucket, "gpu_xid_secondary") == 0;
        add_event(c, i, d->xids[k].at.line, d->xids[k].at.ts, -1, d->xids[k].at.host, "xid",
                  DG_SEV_ERROR, sym, d->xids[k].at.text);
    }
    for (int k = 0; k < d->n_bus; k++)
        add_event(c, i, d->bus[k].at.line, d->bus[k].at.ts, -1, d->bus[k].at.host,
                  "gpu_fell_off_bus", DG_SEV_ERROR, false, d->bus[k].at.text);
    for (int k = 0; k < d->n_aer; k++)
        add_event(c, i, d->aer[k].at.line, d->aer[k].at.ts, -1, d->aer[k].at.host, "pcie_aer",
                  d->aer[k].severity == RD_AER_CORRECTED ? DG_SEV_WARN : DG_SEV_ERROR, false,
                  d->aer[k].at.text);
    for (int k = 0; k < d->n_oomkills; k++)
        add_event(c, i, d->oomkills[k].at.line, d->oomkills[k].at.ts, -1, d->oomkills[k].at.host,
                  "host_oom_kill", DG_SEV_ERROR, false, d->oomkills[k].at.text);
    if (in->smiq) {
        for (int g = 0; g < in->smiq->n_gpus; g++) {
            const rd_smiq_gpu *gp = &in->smiq->gpus[g];
            rd_time none = {0, 0, RD_CLOCK_NONE};
            if (gp->line_ecc)
                add_event(c, i, gp->line_ecc, none, -1, "", "ecc_state", DG_SEV_ERROR, false, gp->text_ecc);
            if (gp->line_remap_pending)
                add_event(c, i, gp->line_remap_pending, none, -1, "", "row_remap_pending",
                          DG_SEV_WARN, false, gp->text_remap);
        }
    }
}

static int clock_class(const rd_time *t)
{
    return t->clock == RD_CLOCK_WALL ? 0 : t->clock == RD_CLOCK_BOOT ? 1 : 2;
}

static int cmp_events(const void *pa, const void *pb)
{
    const dg_event *a = pa, *b = pb;
    int ca = clock_class(&a->ts), cb = clock_class(&b->ts);
    if (ca != cb) return ca - cb;
    if (ca == 1 && a->input != b->input) return a->input - b->input; /* boot clocks differ per host */
    if (ca < 2 && a->ts.ns != b->ts.ns) return a->ts.ns < b->ts.ns ? -1 : 1;
    if (a->input != b->input) return a->input - b->input;
    return a->line < b->line ? -1 : a->line > b->line;
}

static int cmp_verdicts(const void *pa, const void *pb)
{
    const dg_verdict *a = pa, *b = pb;
    if (a->confidence != b->confidence) return a->confidence > b->confidence ? -1 : 1;
    return strcmp(a->code, b->code);
}

void dg_run(dg_ctx *c)
{
    c->n_events = 0;
    c->n_verdicts = 0;
    c->bytes_read = 0;
    c->lines_read = 0;
    for (int i = 0; i < c->n_inputs; i++) {
        c->bytes_read += c->inputs[i].bytes;
        c->lines_read += c->inputs[i].lines;
    }
    for (int i = 0; i < c->n_inputs; i++) events_from_input(c, i);
    if (c->n_events) qsort(c->events, (size_t)c->n_events, sizeof *c->events, cmp_events);
    /* first failure: earliest non-symptom error; else the earliest error */
    c->first_failure = -1;
    for (int pass = 0; pass < 2 && c->first_failure < 0; pass++)
        for (int k = 0; k < c->n_events; k++)
            if (c->events[k].severity == DG_SEV_ERROR && (pass == 1 || !c->events[k].symptom)) {
                c->first_failure = k;
                break;
            }
    for (size_t r = 0; r < dg_n_rules; r++) dg_rules[r].fn(c, &dg_rules[r]);
    /* drop verdicts no rule raised above 0, mark and reward the first failure */
    int w = 0;
    for (int v = 0; v < c->n_verdicts; v++) {
        dg_verdict *vd = &c->verdicts[v];
        if (vd->confidence <= 0) continue;
        if (c->first_failure >= 0) {
            const dg_event *ff = &c->events[c->first_failure];
            for (int e = 0; e < vd->n_evidence; e++)
                if (vd->evidence[e].input == ff->input && vd->evidence[e].line == ff->line) {
                    vd->first_failure = true;
                    vd->confidence += FIRST_FAILURE_BONUS;
                    if (vd->confidence > 0.99) vd->confidence = 0.99;
                    break;
                }
        }
        vd->confidence = (double)(long)(vd->confidence * 100 + 0.5) / 100; /* 2 decimals, stable in JSON */
        if (w != v) c->verdicts[w] = *vd;
        w++;
    }
    c->n_verdicts = w;
    qsort(c->verdicts, (size_t)c->n_verdicts, sizeof *c->verdicts, cmp_verdicts);
}

const char *dg_summary(const dg_ctx *c, char *buf, size_t size)
{
    int unknown = 0;
    for (int i = 0; i < c->n_inputs; i++)
        if (strcmp(c->inputs[i].kinds, "unknown") == 0) unknown++;
    snprintf(buf, size,
             "no known failure signature found in %d input(s), %ld line(s), %lld byte(s) read (%d not recognised as any log format)",
             c->n_inputs, c->lines_read, c->bytes_read, unknown);
    return buf;
}

/* ---- verdict helpers for the rules --------------------------------------- */

dg_verdict *dg_verdict_get(dg_ctx *c, const char *code, const char *layer)
{
    for (int v = 0; v < c->n_verdicts; v++)
        if (strcmp(c->verdicts[v].code, code) == 0) return &c->verdicts[v];
    if (c->n_verdicts == DG_MAX_VERDICTS) return NULL;
    dg_verdict *v = &c->verdicts[c->n_verdicts++];
    memset(v, 0, sizeof *v);
    v->code = code;
    v->layer = layer;
    v->rank = -1;
    return v;
}

void dg_verdict_raise(dg_verdict *v, double confidence)
{
    if (v && confidence > v->confidence) v->confidence = confidence > 0.99 ? 0.99 : confidence;
}

void dg_verdict_evidence(dg_verdict *v, int input, long line, const char *text)
{
    if (!v || line <= 0) return;
    for (int e = 0; e < v->n_evidence; e++)
        if (v->evidence[e].input == input && v->evidence[e].line == line) return;
    if (v->n_evidence == DG_MAX_EVIDENCE) {
        v->evidence_dropped++;
        return;
    }
    dg_evidence *e = &v->evidence[v->n_evidence++];
    e->input = input;
    e->line = line;
    snprintf(e->text, sizeof e->text, "%s", text);
}

void dg_verdict_step(dg_verdict *v, const char *fmt, ...)
{
    if (!v || v->n_steps == DG_MAX_STEPS) return;
    char buf[DG_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int s = 0; s < v->n_steps; s++)
        if (strcmp(v->steps[s], buf) == 0) return;
    memcpy(v->steps[v->n_steps++], buf, sizeof buf);
}

void dg_verdict_title(dg_verdict *v, const char *fmt, ...)
{
    if (!v) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->title, sizeof v->title, fmt, ap);
    va_end(ap);
}
