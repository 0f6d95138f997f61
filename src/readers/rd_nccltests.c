/* ev_nccltests.c - nccl-tests output reader. See ev_nccltests.h.
 *
 * One pass over the lines. A run opens at a "# nThread" parameter line (or at
 * a column header when none came before, for pasted excerpts) and collects
 * devices, a header and rows until the next run opens. The op name comes from
 * the nearest mention of a `<op>_perf` binary (command line, "===begin ...",
 * "# Collective test starting: ..."), taken when a run opens or while the
 * open run has none yet.
 */
#include "rd_nccltests.h"

#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum col_kind { C_OTHER, C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG, C_ERROR };

typedef struct colmap {
    int n;
    unsigned char kind[RD_MAX_FIELDS];
    unsigned char half[RD_MAX_FIELDS]; /* 0 out-of-place, 1 in-place */
} colmap;

typedef struct parser {
    ev_nccltests *r;
    char *name;          /* the input, for damage notes */
    diag_set local;      /* damage counted while reading */
    ev_nt_run *run;      /* open run, NULL before the first */
    colmap cols;         /* header of the open run (cols.n == 0: none yet) */
    char pending_op[32];
    uint32_t pending_op_line;
    uint32_t units_line; /* "#  (B)  (elements) ... (us) (GB/s)" seen, no header yet */
} parser;

static void run_init(ev_nt_run *run, uint32_t line)
{
    memset(run, 0, sizeof *run);
    run->nthread = run->ngpus = -1;
    run->min_bytes = run->max_bytes = -1;
    run->warmup_iters = run->iters = run->agg_iters = run->validation = run->graph = -1;
    run->avg_busbw_gbps = NAN;
    run->oob_values = -1;
    run->oob_ok = -1;
    run->first_line = run->last_line = line;
}

static ev_nt_run *open_run(parser *ps, uint32_t line)
{
    ev_nccltests *r = ps->r;
    if (rd_grow((void **)&r->runs, &r->cap_runs, r->n_runs, sizeof *r->runs, EV_NT_MAX_RUNS) < 0) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, line);
        ps->run = NULL;
        return NULL;
    }
    ev_nt_run *run = &r->runs[r->n_runs++];
    run_init(run, line);
    ps->cols.n = 0;
    if (ps->pending_op[0]) {
        memcpy(run->op, ps->pending_op, sizeof run->op);
        run->op_line = ps->pending_op_line;
        ps->pending_op[0] = '\0';
    }
    ps->run = run;
    return run;
}

/* Finds "<op>_perf" in a line (e.g. "./build/all_reduce_perf -b 8", "===begin
 * all_gather_perf test===", "all_reduce_perf_mpi"); copies <op> into op. */
static int find_op(const char *line, size_t len, char *op, size_t cap)
{
    const char *p = rd_find(line, len, "_perf");
    while (p) {
        const char *s = p;
        while (s > line && ((s[-1] >= 'a' && s[-1] <= 'z') || s[-1] == '_'))
            s--;
        size_t n = (size_t)(p - s);
        if (n >= 3) {
            rd_copy(op, cap, s, n);
            return 1;
        }
        size_t off = (size_t)(p - line) + 5;
        p = rd_find(p + 5, len - off, "_perf");
    }
    return 0;
}

static void take_op(parser *ps, const char *line, size_t len, uint32_t lineno)
{
    char op[32];
    if (!find_op(line, len, op, sizeof op))
        return;
    if (ps->run && !ps->run->op[0] && ps->run->n_rows == 0) {
        memcpy(ps->run->op, op, sizeof op);
        ps->run->op_line = lineno;
    } else if (rd_find(line, len, "concluded") && ps->run && !ps->run->op[0]) {
        /* "# Collective test concluded: X_perf" names the run just read. */
        memcpy(ps->run->op, op, sizeof op);
        ps->run->op_line = lineno;
    } else {
        memcpy(ps->pending_op, op, sizeof op);
        ps->pending_op_line = lineno;
    }
}

/* Value of "key" followed by a number in the parameter line; the keys are
 * single tokens optionally ending in ':' ("iters:", "minBytes"). */
static int64_t param(const rd_field *f, int n, const char *key)
{
    for (int i = 0; i + 1 < n; i++) {
        if (!rd_feq(&f[i], key))
            continue;
        const rd_field *v = &f[i + 1];
        int64_t x;
        if (rd_i64(v->p, v->len, &x) == 0)
            return x;
    }
    return -1;
}

static void parse_params(ev_nt_run *run, const rd_field *f, int n, uint32_t line)
{
    run->nthread = (int)param(f, n, "nThread");
    run->ngpus = (int)param(f, n, "nGpus");
    run->min_bytes = param(f, n, "minBytes");
    run->max_bytes = param(f, n, "maxBytes");
    /* "warmup iters: 5 iters: 20 agg iters: 1": walk the "iters:" tokens and
     * decide by the word before each. */
    for (int i = 1; i + 1 < n; i++) {
        if (!rd_feq(&f[i], "iters:"))
            continue;
        int64_t x;
        if (rd_i64(f[i + 1].p, f[i + 1].len, &x) < 0)
            continue;
        if (rd_feq(&f[i - 1], "warmup"))
            run->warmup_iters = (int)x;
        else if (rd_feq(&f[i - 1], "agg"))
            run->agg_iters = (int)x;
        else
            run->iters = (int)x;
    }
    run->validation = (int)param(f, n, "validation:");
    run->graph = (int)param(f, n, "graph:");
    run->params_line = line;
}

/* "#  Rank  0 Group  0 Pid   6899 on host device  0 [0000:04:00] NVIDIA H100"
 * (Group only in newer versions). Returns 0 when the line is such a line. */
static int parse_device(const char *line, size_t len, const rd_field *f, int n,
                        ev_nt_device *d, uint32_t lineno)
{
    int i = 0;
    if (i < n && rd_feq(&f[i], "#"))
        i++;
    if (i + 1 >= n || !rd_feq(&f[i], "Rank"))
        return -1;
    memset(d, 0, sizeof *d);
    d->group = -1;
    int64_t x;
    if (rd_i64(f[i + 1].p, f[i + 1].len, &x) < 0)
        return -1;
    d->rank = (int)x;
    i += 2;
    if (i + 1 < n && rd_feq(&f[i], "Group")) {
        if (rd_i64(f[i + 1].p, f[i + 1].len, &x) < 0)
            return -1;
        d->group = (int)x;
        i += 2;
    }
    if (i + 5 >= n || !rd_feq(&f[i], "Pid") || !rd_feq(&f[i + 2], "on") ||
        !rd_feq(&f[i + 4], "device"))
        return -1;
    if (rd_i64(f[i + 1].p, f[i + 1].len, &d->pid) < 0)
        return -1;
    rd_copy(d->host, sizeof d->host, f[i + 3].p, f[i + 3].len);
    if (rd_i64(f[i + 5].p, f[i + 5].len, &x) < 0)
        return -1;
    d->device = (int)x;
    i += 6;
    if (i < n && f[i].len >= 2 && f[i].p[0] == '[' && f[i].p[f[i].len - 1] == ']') {
        rd_copy(d->bus, sizeof d->bus, f[i].p + 1, f[i].len - 2);
        i++;
    }
    if (i < n) {
        const char *s = f[i].p;
        size_t k = (size_t)(line + len - s);
        rd_trim(&s, &k);
        rd_copy(d->name, sizeof d->name, s, k);
    }
    d->line = lineno;
    return 0;
}

static int count_hosts(const ev_nt_run *run)
{
    int hosts = 0;
    for (size_t i = 0; i < run->n_devices; i++) {
        size_t j = 0;
        while (j < i && strcmp(run->devices[j].host, run->devices[i].host) != 0)
            j++;
        if (j == i)
            hosts++;
    }
    return hosts;
}

/* Column header: a '#' line holding "size" and "busbw". */
static int parse_header(colmap *cm, const rd_field *f, int n)
{
    int has_size = 0, has_busbw = 0, times = 0, k = 0;
    memset(cm, 0, sizeof *cm);
    for (int i = 0; i < n; i++) {
        const char *p = f[i].p;
        size_t len = f[i].len;
        if (i == 0 && len > 0 && p[0] == '#') { /* "#" alone or "#size" */
            p++;
            len--;
            if (len == 0)
                continue;
        }
        rd_field t = {p, (uint32_t)len, f[i].col};
        unsigned char kind = C_OTHER;
        if (rd_feq(&t, "size")) kind = C_SIZE, has_size = 1;
        else if (rd_feq(&t, "count")) kind = C_COUNT;
        else if (rd_feq(&t, "type")) kind = C_TYPE;
        else if (rd_feq(&t, "redop")) kind = C_REDOP;
        else if (rd_feq(&t, "root")) kind = C_ROOT;
        else if (rd_feq(&t, "time")) kind = C_TIME, times++;
        else if (rd_feq(&t, "algbw")) kind = C_ALGBW;
        else if (rd_feq(&t, "busbw")) kind = C_BUSBW, has_busbw = 1;
        else if (rd_feq(&t, "#wrong") || rd_feq(&t, "wrong")) kind = C_WRONG;
        else if (rd_feq(&t, "error")) kind = C_ERROR;
        cm->kind[k] = kind;
        cm->half[k] = times >= 2 ? 1 : 0;
        k++;
    }
    cm->n = k;
    return has_size && has_busbw ? 0 : -1;
}

static int is_int_field(const rd_field *f)
{
    int64_t x;
    return rd_i64(f->p, f->len, &x) == 0;
}

/* An excerpt that starts below the column header (its units line
 * "(B) (elements) ... (us) (GB/s) (GB/s)" is the third header line): the
 * rows are read in nccl-tests' own layouts, told apart by their field
 * count and content - 13: size count type redop root, then time algbw busbw
 * #wrong twice (new); 12: size count type redop|root, time algbw busbw error
 * twice (old all_reduce/broadcast); 11: size count type, twice (old
 * all_gather). Returns 0 with cm filled, -1 for another shape. */
static int implied_header(colmap *cm, const rd_field *row, int n)
{
    char hdr[160];
    const char *err = n == 13 && is_int_field(&row[8]) ? "#wrong" : "error";
    if (n == 13)
        snprintf(hdr, sizeof hdr, "size count type redop root time algbw busbw %s time algbw busbw %s", err, err);
    else if (n == 12)
        snprintf(hdr, sizeof hdr, "size count type %s time algbw busbw error time algbw busbw error",
                 is_int_field(&row[3]) ? "root" : "redop");
    else if (n == 11)
        snprintf(hdr, sizeof hdr, "size count type time algbw busbw error time algbw busbw error");
    else
        return -1;
    rd_field f[RD_MAX_FIELDS];
    int k = rd_split(hdr, strlen(hdr), f, RD_MAX_FIELDS, NULL);
    return parse_header(cm, f, k);
}

static int is_na(const rd_field *f)
{
    return rd_fieq(f, "N/A") || rd_feq(f, "-") || rd_fieq(f, "nan");
}

static void result_init(ev_nt_result *res)
{
    res->time_us = res->algbw_gbps = res->busbw_gbps = res->max_error = NAN;
    res->wrong = -1;
}

static void parse_row(parser *ps, const rd_field *f, int n, uint32_t lineno)
{
    ev_nt_run *run = ps->run;
    if (n != ps->cols.n) {
        rd_note(&ps->local, DIAG_EVIDENCE_BAD_ROW, ps->name, lineno);
        return;
    }
    ev_nt_row row;
    memset(&row, 0, sizeof row);
    row.root = -1;
    row.size_bytes = row.count = -1;
    result_init(&row.oop);
    result_init(&row.inp);
    row.line = lineno;
    int bad = 0, flagged = 0;
    for (int i = 0; i < n; i++) {
        const rd_field *v = &f[i];
        ev_nt_result *res = ps->cols.half[i] ? &row.inp : &row.oop;
        double d;
        int64_t x;
        switch (ps->cols.kind[i]) {
        case C_SIZE:
            if (rd_i64(v->p, v->len, &row.size_bytes) < 0) bad = 1;
            break;
        case C_COUNT:
            if (rd_i64(v->p, v->len, &row.count) < 0) bad = 1;
            break;
        case C_TYPE: rd_copy(row.type, sizeof row.type, v->p, v->len); break;
        case C_REDOP: rd_copy(row.redop, sizeof row.redop, v->p, v->len); break;
        case C_ROOT:
            if (rd_i64(v->p, v->len, &x) == 0) row.root = x;
            else if (!is_na(v)) bad = 1;
            break;
        case C_TIME: case C_ALGBW: case C_BUSBW: case C_ERROR:
            if (ps->cols.kind[i] == C_ERROR && v->len > 1 && v->p[v->len - 1] == '*') {
                /* an error above nccl-tests' threshold is marked with '*' */
                flagged = 1;
                if (rd_num(v->p, v->len - 1, &d) == 0)
                    res->max_error = d;
                break;
            }
            if (rd_num(v->p, v->len, &d) < 0) {
                if (!is_na(v)) bad = 1;
                break;
            }
            if (ps->cols.kind[i] == C_TIME) res->time_us = d;
            else if (ps->cols.kind[i] == C_ALGBW) res->algbw_gbps = d;
            else if (ps->cols.kind[i] == C_BUSBW) res->busbw_gbps = d;
            else res->max_error = d;
            break;
        case C_WRONG:
            if (v->len > 1 && v->p[v->len - 1] == '*' && rd_i64(v->p, v->len - 1, &x) == 0) {
                res->wrong = x;
                flagged = 1;
            } else if (rd_i64(v->p, v->len, &x) == 0) res->wrong = x;
            else if (!is_na(v)) bad = 1;
            break;
        default: break;
        }
    }
    if (bad) {
        rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
        return;
    }
    if (rd_grow((void **)&run->rows, &run->cap_rows, run->n_rows, sizeof *run->rows, EV_NT_MAX_ROWS) < 0) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);
        return;
    }
    if (flagged || row.oop.wrong > 0 || row.inp.wrong > 0) {
        if (!run->wrong_rows++)
            run->wrong_line = lineno;
    }
    /* a size smaller than the row before: another process's sweep
     * interleaved in the same output (or a new sweep without a header) */
    if (run->n_rows && row.size_bytes < run->rows[run->n_rows - 1].size_bytes && !run->size_restarts++)
        run->restart_line = lineno;
    run->rows[run->n_rows++] = row;
    run->last_line = lineno;
}

/* "# Avg bus bandwidth    : 29.0317" / "# Out of bounds values : 0 OK" */
static void parse_summary(parser *ps, const char *line, size_t len, uint32_t lineno)
{
    const char *c = memchr(line, ':', len);
    if (!c || !ps->run)
        return;
    rd_field f[4];
    int n = rd_split(c + 1, len - (size_t)(c + 1 - line), f, 4, NULL);
    if (n < 1)
        return;
    ev_nt_run *run = ps->run;
    if (rd_find(line, len, "Avg bus bandwidth")) {
        double v;
        if (rd_num(f[0].p, f[0].len, &v) == 0) {
            run->avg_lines++;
            run->avg_busbw_gbps = v;
            run->avg_line = lineno;
            run->last_line = lineno;
        } else {
            rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
        }
    } else if (rd_find(line, len, "Out of bounds values")) {
        int64_t x;
        if (rd_i64(f[0].p, f[0].len, &x) == 0) {
            run->oob_values = x;
            run->oob_ok = n > 1 ? rd_feq(&f[1], "OK") : -1;
            run->oob_line = lineno;
            run->last_line = lineno;
        }
    }
}

/* "# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903" */
static void parse_version(ev_nccltests *r, const rd_field *f, int n, uint32_t lineno)
{
    rd_copy(r->tests_version, sizeof r->tests_version, f[3].p, f[3].len);
    r->version_line = lineno;
    for (int i = 4; i < n; i++) {
        int64_t v;
        if (rd_starts(f[i].p, f[i].len, "nccl-library=") &&
            rd_i64(f[i].p + 13, f[i].len - 13, &v) == 0 && v > 0 && v < 1000000)
            r->nccl_library = (int)v;
    }
}

static void note_failure(ev_nccltests *r, const char *line, size_t len, uint32_t lineno)
{
    if (r->n_failures++ == 0) {
        const char *s = line;
        size_t n = len;
        rd_trim(&s, &n);
        rd_copy(r->failure, sizeof r->failure, s, n);
        r->failure_line = lineno;
    }
}

void rd_nccltests_line(void *ctx, const rd_line *ln)
{
    parser *ps = ctx;
    const char *line = ln->text;
    size_t len = ln->len;
    uint32_t lineno = (uint32_t)ln->no;
    rd_strip_launcher_tag(&line, &len); /* mpirun --tag-output, srun --label */
    rd_field f[RD_MAX_FIELDS];
    int trunc = 0;
    int n = rd_split(line, len, f, RD_MAX_FIELDS, &trunc);
    if (n == 0)
        return;
    if (trunc)
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);

    if (rd_find(line, len, "_perf"))
        take_op(ps, line, len, lineno);
    if (rd_find(line, len, "NCCL failure") || rd_find(line, len, "CUDA failure") ||
        rd_find(line, len, "Test failure")) {
        note_failure(ps->r, line, len, lineno);
        return;
    }

    if (rd_starts(line, len, "rccl-tests:") || rd_starts(line, len, "# rccl-tests")) {
        /* "rccl-tests: Version develop:ab12cd3" (ROCm's fork); newer ones
         * "# rccl-tests version 2.17.9-<branch>:<sha> rccl-headers=N ..." */
        ps->r->rccl = 1;
        ps->r->rccl_line = lineno;
        for (int i = 1; i + 1 < n; i++)
            if (rd_feq(&f[i], "Version") || rd_feq(&f[i], "version")) {
                rd_copy(ps->r->tests_version, sizeof ps->r->tests_version, f[i + 1].p, f[i + 1].len);
                ps->r->version_line = lineno;
                break;
            }
        return;
    }
    if (f[0].p[0] == '#') {
        if (n >= 4 && rd_feq(&f[1], "nccl-tests") && rd_feq(&f[2], "version")) {
            parse_version(ps->r, f, n, lineno);
            return;
        }
        if (rd_find(line, len, "nThread") && rd_find(line, len, "nGpus")) {
            ev_nt_run *run = open_run(ps, lineno);
            if (run)
                parse_params(run, f, n, lineno);
            return;
        }
        if (rd_find(line, len, "Avg bus bandwidth") || rd_find(line, len, "Out of bounds values")) {
            parse_summary(ps, line, len, lineno);
            return;
        }
        colmap cm;
        if (rd_find(line, len, "busbw") && parse_header(&cm, f, n) == 0) {
            /* A header after rows without a new parameter line starts a new
             * run (pasted excerpts of several sweeps). */
            if (!ps->run || ps->run->n_rows > 0 || ps->cols.n > 0)
                if (!open_run(ps, lineno))
                    return;
            ps->cols = cm;
            ev_nt_run *run = ps->run;
            run->header_line = lineno;
            run->colset = EV_NT_COLS_UNKNOWN;
            for (int i = 0; i < cm.n; i++) {
                if (cm.kind[i] == C_WRONG) run->colset = EV_NT_COLS_NEW_WRONG;
                if (cm.kind[i] == C_ERROR && run->colset == EV_NT_COLS_UNKNOWN)
                    run->colset = EV_NT_COLS_OLD_ERROR;
                if (cm.kind[i] == C_REDOP) run->has_redop = 1;
                if (cm.kind[i] == C_ROOT) run->has_root = 1;
            }
            return;
        }
        if (!ps->cols.n && rd_find(line, len, "(B)") && rd_find(line, len, "(elements)")) {
            ps->units_line = lineno; /* the header's units line without the header above it */
            return;
        }
        ev_nt_device d;
        if (parse_device(line, len, f, n, &d, lineno) == 0) {
            if (!ps->run || ps->cols.n > 0)
                if (!open_run(ps, lineno))
                    return;
            ev_nt_run *run = ps->run;
            if (rd_grow((void **)&run->devices, &run->cap_devices, run->n_devices,
                        sizeof *run->devices, EV_NT_MAX_DEVICES) < 0) {
                rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);
                return;
            }
            run->devices[run->n_devices++] = d;
        }
        return;
    }
    /* Not a comment: a data row when it starts with an integer size under a
     * header; anything else (launcher lines, plugin logs, elisions) is not
     * ours to judge. */
    if (!is_int_field(&f[0]))
        return;
    if ((!ps->run || ps->cols.n == 0) && ps->units_line) {
        colmap cm;
        if (implied_header(&cm, f, n) == 0 && (ps->run || open_run(ps, ps->units_line))) {
            ps->cols = cm;
            ps->run->header_line = ps->units_line;
            ps->run->colset = cm.kind[8] == C_WRONG ? EV_NT_COLS_NEW_WRONG : EV_NT_COLS_OLD_ERROR;
            ps->run->has_redop = ps->run->has_root = n == 13;
            ps->units_line = 0;
        }
    }
    if (!ps->run || ps->cols.n == 0) {
        rd_note(&ps->local, DIAG_EVIDENCE_ORPHAN_ROW, ps->name, lineno);
        return;
    }
    parse_row(ps, f, n, lineno);
}

void *rd_nccltests_begin(const char *name)
{
    parser *ps = cp_xcalloc(1, sizeof *ps);
    ps->r = cp_xcalloc(1, sizeof *ps->r);
    ps->r->nccl_library = -1;
    ps->name = cp_xstrdup(name ? name : "");
    diag_init(&ps->local);
    return ps;
}

void *rd_nccltests_end(void *st, diag_set *diag)
{
    parser *ps = st;
    ev_nccltests *r = ps->r;
    /* Drop runs that never got a table (a parameter line of a run that
     * crashed keeps its failure in r->failure). */
    size_t keep = 0, tables = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        ev_nt_run *run = &r->runs[i];
        if (run->header_line)
            tables++;
        if (run->n_rows == 0 && isnan(run->avg_busbw_gbps) && run->n_devices == 0) {
            free(run->rows);
            free(run->devices);
            continue;
        }
        run->n_hosts = count_hosts(run);
        r->runs[keep++] = *run;
    }
    r->n_runs = keep;
    if (tables == 0 && (r->n_failures == 0 || keep == 0)) {
        /* no table, or a failure line without any run: not nccl-tests
         * output (an NCCL log that mentions a failure is the NCCL reader's) */
        ev_nccltests_free(r);
        r = NULL;
    } else {
        diag_merge(diag, &ps->local);
    }
    free(ps->name);
    free(ps);
    return r;
}


int rd_nt_fill_topo(const ev_nccltests *r, const char *source, topo *t, cp_error *err)
{
    int32_t file = topo_add_source(t, source);
    for (size_t i = 0; i < r->n_runs; i++) {
        const ev_nt_run *run = &r->runs[i];
        for (size_t j = 0; j < run->n_devices; j++) {
            const ev_nt_device *d = &run->devices[j];
            topo_src src = {file, d->line};
            int h = topo_add_host(t, d->host, src);
            int g = h < 0 ? -1 : topo_add_gpu(t, (uint32_t)h, d->device, src);
            if (g < 0)
                return cp_error_set(err, CP_ERR_NOMEM, source, d->line, 0, -1,
                                    "topology model full: more than %d items", TOPO_MAX_ITEMS);
            topo_gpu *gpu = &t->gpus[g];
            if (!gpu->name[0])
                rd_copy(gpu->name, sizeof gpu->name, d->name, strlen(d->name));
            if (!gpu->pci_bus[0])
                rd_copy(gpu->pci_bus, sizeof gpu->pci_bus, d->bus, strlen(d->bus));
        }
    }
    return 0;
}



int rd_nccltests_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    int score = 0;
    if (rd_find(buf, len, "# nThread") && rd_find(buf, len, "nGpus"))
        score += 40;
    if (rd_find(buf, len, "Avg bus bandwidth"))
        score += 30;
    if (rd_find(buf, len, "(elements)") && rd_find(buf, len, "(GB/s)"))
        score += 30; /* the header's units line (an excerpt below the column names) */
    /* Without a table it is at most a run that failed early, or an NCCL
     * debug log of a run (the parameter block alone stays below 50). */
    if (rd_find(buf, len, "busbw") && rd_find(buf, len, "algbw")) {
        score += 30;
        if (rd_find(buf, len, "out-of-place"))
            score += 10;
        if (rd_find(buf, len, "_perf"))
            score += 10;
    }
    return score > 100 ? 100 : score;
}
