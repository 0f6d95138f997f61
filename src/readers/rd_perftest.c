/* ev_perftest.c - perftest output reader. See ev_perftest.h.
 *
 * A small state machine per run: a banner line opens a run in the SETTINGS
 * state where "key : value" pairs are collected; the "#bytes" header switches
 * to TABLE where numeric lines are rows. A command line naming an ib_*_bw /
 * ib_*_lat binary is remembered and given to the next run, so the tool name
 * survives even when the banner is ambiguous.
 */
#include "rd_perftest.h"

#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum pt_col { P_OTHER, P_BYTES, P_ITERS, P_BW_PEAK, P_BW_AVG, P_MSGRATE, P_TMIN, P_TMAX,
              P_TTYP, P_TAVG, P_TSTDEV, P_P99, P_P999 };

typedef struct parser {
    ev_perftest *r;
    char *name;         /* the input, for damage notes */
    diag_set local;     /* damage counted while reading */
    ev_pt_run *run;
    int in_table;
    int ncols;
    unsigned char col[RD_MAX_FIELDS];
    double bw_factor;   /* printed bandwidth -> Gbit/s */
    char pending_tool[32];
} parser;

/* ib_write_bw etc. anywhere in the line (a shell prompt, a script echo). */
static int find_tool(const char *line, size_t len, char *tool, size_t cap)
{
    const char *p = rd_find(line, len, "ib_");
    while (p) {
        size_t rest = len - (size_t)(p - line), n = 0;
        while (n < rest && ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '_'))
            n++;
        if (n > 6 && (rd_starts(p + n - 3, 3, "_bw") || rd_starts(p + n - 4, 4, "_lat"))) {
            rd_copy(tool, cap, p, n);
            return 1;
        }
        p = rd_find(p + 3, rest - 3, "ib_");
    }
    return 0;
}

/* "RDMA_Write BW Test" -> op "write", bandwidth. */
static void op_from_banner(ev_pt_run *run)
{
    static const struct { const char *word, *op; } ops[] = {
        {"RDMA_Write", "write"}, {"RDMA_Read", "read"}, {"Send", "send"}, {"Atomic", "atomic"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strncmp(run->test, ops[i].word, strlen(ops[i].word)) == 0)
            rd_copy(run->op, sizeof run->op, ops[i].op, strlen(ops[i].op));
    run->is_latency = strstr(run->test, "Latency") != NULL;
    if (!run->tool[0] && run->op[0])
        snprintf(run->tool, sizeof run->tool, "ib_%s_%s", run->op, run->is_latency ? "lat" : "bw");
}

static ev_pt_run *open_run(parser *ps, const char *banner, size_t n, uint32_t line)
{
    ev_perftest *r = ps->r;
    ps->in_table = 0;
    ps->run = NULL;
    if (rd_grow((void **)&r->runs, &r->cap_runs, r->n_runs, sizeof *r->runs, EV_PT_MAX_RUNS) < 0) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, line);
        return NULL;
    }
    ev_pt_run *run = &r->runs[r->n_runs++];
    memset(run, 0, sizeof *run);
    run->qps = run->mtu_bytes = run->tx_depth = run->gid_index = run->rdma_cm = -1;
    run->first_line = run->last_line = run->test_line = line;
    rd_copy(run->test, sizeof run->test, banner, n);
    if (ps->pending_tool[0]) {
        memcpy(run->tool, ps->pending_tool, sizeof run->tool);
        ps->pending_tool[0] = '\0';
    }
    op_from_banner(run);
    ps->run = run;
    return run;
}

static void typed_setting(ev_pt_run *run, const ev_pt_setting *s)
{
    const char *k = s->key, *v = s->value;
    if (!strcasecmp(k, "Device")) {
        rd_copy(run->device, sizeof run->device, v, strlen(v));
        run->device_line = s->line;
    } else if (!strcasecmp(k, "Number of qps")) {
        run->qps = rd_leading_int(v, strlen(v), -1);
        run->qps_line = s->line;
    } else if (!strcasecmp(k, "Link type")) {
        rd_copy(run->link_type, sizeof run->link_type, v, strlen(v));
        run->link_line = s->line;
    } else if (!strcasecmp(k, "Transport type")) {
        rd_copy(run->transport, sizeof run->transport, v, strlen(v));
    } else if (!strcasecmp(k, "Connection type")) {
        rd_copy(run->connection, sizeof run->connection, v, strlen(v));
    } else if (!strcasecmp(k, "Mtu")) {
        run->mtu_bytes = rd_leading_int(v, strlen(v), -1);
        run->mtu_line = s->line;
    } else if (!strcasecmp(k, "TX depth")) {
        run->tx_depth = rd_leading_int(v, strlen(v), -1);
    } else if (!strcasecmp(k, "GID index")) {
        run->gid_index = rd_leading_int(v, strlen(v), -1);
    } else if (!strcasecmp(k, "rdma_cm QPs")) {
        run->rdma_cm = !strcasecmp(v, "ON") ? 1 : !strcasecmp(v, "OFF") ? 0 : -1;
    }
}

/* " Dual-port       : OFF\t\tDevice         : mlx5_0": each ':' ends a key
 * that starts after the previous value; each value is one token. */
static void parse_settings(parser *ps, const char *line, size_t len, uint32_t lineno)
{
    ev_pt_run *run = ps->run;
    size_t pos = 0;
    while (pos < len) {
        const char *c = memchr(line + pos, ':', len - pos);
        if (!c)
            break;
        const char *k = line + pos;
        size_t kn = (size_t)(c - k);
        rd_trim(&k, &kn);
        rd_field v;
        size_t after = (size_t)(c + 1 - line);
        if (rd_split(c + 1, len - after, &v, 1, NULL) != 1 || kn == 0)
            break;
        if (rd_grow((void **)&run->settings, &run->cap_settings, run->n_settings,
                    sizeof *run->settings, EV_PT_MAX_SETTINGS) < 0) {
            rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);
            return;
        }
        ev_pt_setting *s = &run->settings[run->n_settings++];
        rd_copy(s->key, sizeof s->key, k, kn);
        rd_copy(s->value, sizeof s->value, v.p, v.len);
        s->line = lineno;
        typed_setting(run, s);
        pos = (size_t)(v.p + v.len - line);
    }
}

/* Unit inside the brackets of a column name, e.g. "peak[Gb/sec]" -> "Gb/sec". */
static void bracket_unit(const rd_field *f, char *unit, size_t cap)
{
    const char *o = memchr(f->p, '[', f->len);
    if (!o)
        return;
    const char *cl = memchr(o, ']', f->len - (size_t)(o - f->p));
    if (cl)
        rd_copy(unit, cap, o + 1, (size_t)(cl - o - 1));
}

static double unit_to_gbit(const char *unit)
{
    if (!strcasecmp(unit, "Gb/sec") || !strcasecmp(unit, "Gbit/sec"))
        return 1.0;
    /* MB/sec in perftest is 2^20 bytes (renamed MiB/sec in newer versions). */
    if (!strcasecmp(unit, "MB/sec") || !strcasecmp(unit, "MiB/sec"))
        return 1048576.0 * 8.0 / 1e9;
    return NAN;
}

/* "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]".
 * Column names with a space ("BW peak", "99% percentile") are re-joined by
 * looking at the word that starts them. */
static void parse_header(parser *ps, const rd_field *f, int n, uint32_t lineno)
{
    ev_pt_run *run = ps->run;
    ps->ncols = 0;
    ps->bw_factor = NAN;
    for (int i = 0; i < n; i++) {
        const rd_field *t = &f[i];
        unsigned char kind = P_OTHER;
        if (rd_feq(t, "BW") && i + 1 < n) {
            t = &f[++i];
            kind = rd_starts(t->p, t->len, "peak") ? P_BW_PEAK : rd_starts(t->p, t->len, "average") ? P_BW_AVG : P_OTHER;
            bracket_unit(t, run->bw_unit, sizeof run->bw_unit);
        } else if (t->len > 0 && t->p[t->len - 1] == '%' && i + 1 < n) {
            kind = rd_feq(t, "99%") ? P_P99 : rd_feq(t, "99.9%") ? P_P999 : P_OTHER;
            i++; /* "percentile[usec]" */
        } else if (rd_feq(t, "#bytes")) kind = P_BYTES;
        else if (rd_feq(t, "#iterations")) kind = P_ITERS;
        else if (rd_starts(t->p, t->len, "MsgRate")) kind = P_MSGRATE;
        else if (rd_starts(t->p, t->len, "t_min")) kind = P_TMIN;
        else if (rd_starts(t->p, t->len, "t_max")) kind = P_TMAX;
        else if (rd_starts(t->p, t->len, "t_typical")) kind = P_TTYP;
        else if (rd_starts(t->p, t->len, "t_avg")) kind = P_TAVG;
        else if (rd_starts(t->p, t->len, "t_stdev")) kind = P_TSTDEV;
        if (kind >= P_TMIN && kind <= P_TSTDEV && !run->lat_unit[0])
            bracket_unit(t, run->lat_unit, sizeof run->lat_unit);
        ps->col[ps->ncols++] = kind;
    }
    if (run->bw_unit[0])
        ps->bw_factor = unit_to_gbit(run->bw_unit);
    if (!run->is_latency && run->lat_unit[0] && !run->bw_unit[0])
        run->is_latency = 1;
    run->header_line = lineno;
    ps->in_table = 1;
}

static void parse_row(parser *ps, const rd_field *f, int n, uint32_t lineno)
{
    ev_pt_run *run = ps->run;
    if (n != ps->ncols) {
        rd_note(&ps->local, DIAG_EVIDENCE_BAD_ROW, ps->name, lineno);
        return;
    }
    ev_pt_row row;
    row.bytes = row.iterations = -1;
    row.bw_peak_gbit_s = row.bw_avg_gbit_s = row.bw_peak_raw = row.bw_avg_raw = NAN;
    row.msg_rate_mpps = NAN;
    row.t_min_us = row.t_max_us = row.t_typical_us = row.t_avg_us = row.t_stdev_us = NAN;
    row.t_p99_us = row.t_p999_us = NAN;
    row.line = lineno;
    int usec = !strcasecmp(run->lat_unit, "usec");
    for (int i = 0; i < n; i++) {
        double v;
        if (rd_num(f[i].p, f[i].len, &v) < 0) {
            rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
            return;
        }
        double *dst = NULL;
        switch (ps->col[i]) {
        case P_BYTES: row.bytes = rd_d2i64(v, -1); break;
        case P_ITERS: row.iterations = rd_d2i64(v, -1); break;
        case P_BW_PEAK: row.bw_peak_raw = v; row.bw_peak_gbit_s = v * ps->bw_factor; break;
        case P_BW_AVG: row.bw_avg_raw = v; row.bw_avg_gbit_s = v * ps->bw_factor; break;
        case P_MSGRATE: row.msg_rate_mpps = v; break;
        case P_TMIN: dst = &row.t_min_us; break;
        case P_TMAX: dst = &row.t_max_us; break;
        case P_TTYP: dst = &row.t_typical_us; break;
        case P_TAVG: dst = &row.t_avg_us; break;
        case P_TSTDEV: dst = &row.t_stdev_us; break;
        case P_P99: dst = &row.t_p99_us; break;
        case P_P999: dst = &row.t_p999_us; break;
        default: break;
        }
        if (dst && usec)
            *dst = v;
    }
    if (rd_grow((void **)&run->rows, &run->cap_rows, run->n_rows, sizeof *run->rows, EV_PT_MAX_ROWS) < 0) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);
        return;
    }
    run->rows[run->n_rows++] = row;
    run->last_line = lineno;
}

/* A banner: a line of its own ending in "BW Test" or "Latency Test". */
static int is_banner(const char *s, size_t n)
{
    return n < 64 && n > 8 &&
           ((n >= 7 && memcmp(s + n - 7, "BW Test", 7) == 0) ||
            (n >= 12 && memcmp(s + n - 12, "Latency Test", 12) == 0));
}

static int failure_line(ev_perftest *r, const char *s, size_t n, uint32_t lineno);

void rd_perftest_line(void *ctx, const rd_line *ln)
{
    parser *ps = ctx;
    const char *line = ln->text;
    size_t len = ln->len;
    uint32_t lineno = (uint32_t)ln->no;
    const char *s = line;
    size_t sn = len;
    rd_trim(&s, &sn);
    /* a results table pasted as comments: "# #bytes ...", "# 1048576 5000 ..." */
    if (sn > 2 && s[0] == '#' && s[1] == ' ') {
        const char *q = s + 1;
        size_t qn = sn - 1;
        rd_trim(&q, &qn);
        if (rd_starts(q, qn, "#bytes") || (qn && q[0] >= '0' && q[0] <= '9' && ps->in_table)) {
            s = q;
            sn = qn;
        }
    }
    if (sn == 0)
        return;
    if (failure_line(ps->r, s, sn, lineno))
        return;
    char tool[32];
    if (find_tool(s, sn, tool, sizeof tool)) {
        memcpy(ps->pending_tool, tool, sizeof tool);
        return;
    }
    if (is_banner(s, sn)) {
        open_run(ps, s, sn, lineno);
        return;
    }
    rd_field f[RD_MAX_FIELDS];
    int n = rd_split(s, sn, f, RD_MAX_FIELDS, NULL);
    if (n && rd_feq(&f[0], "#bytes") && rd_find(s, sn, "#iterations")) {
        /* a results table without its banner (an excerpt): a run of its own;
         * a second header in one run (the next test of a script) too */
        if ((!ps->run || ps->run->header_line) && !open_run(ps, "", 0, lineno))
            return;
        parse_header(ps, f, n, lineno);
        return;
    }
    if (!ps->run || s[0] == '-' || s[0] == '*')
        return;
    ev_pt_run *run = ps->run;
    if (ps->in_table) {
        int64_t x;
        if (rd_i64(f[0].p, f[0].len, &x) == 0)
            parse_row(ps, f, n, lineno);
        return;
    }
    if (rd_starts(s, sn, "local address:")) {
        run->n_local_qps++;
        return;
    }
    if (rd_starts(s, sn, "remote address:") || rd_starts(s, sn, "GID:"))
        return;
    if (memchr(s, ':', sn))
        parse_settings(ps, line, len, lineno);
}

/* A failure line of perftest (the phrases of perftest_communication.c and
 * perftest_resources.c); the first is kept. */
static int failure_line(ev_perftest *r, const char *s, size_t n, uint32_t lineno)
{
    static const struct { const char *phrase; int kind; } tab[] = {
        {"Couldn't connect to", EV_PT_FAIL_CONNECT},
        {"Unable to open file descriptor for socket connection", EV_PT_FAIL_CONNECT},
        {"Unable to init the socket connection", EV_PT_FAIL_CONNECT},
        {"Failed to modify QP", EV_PT_FAIL_QP},
        {"Failed to create QP", EV_PT_FAIL_QP},
        {"Failed status ", EV_PT_FAIL_COMPLETION},
        {"Completion with error", EV_PT_FAIL_COMPLETION},
        {"Couldn't get device info", EV_PT_FAIL_DEVICE},
        {"No IB devices found", EV_PT_FAIL_DEVICE},
        {"Couldn't get context for", EV_PT_FAIL_DEVICE},
        {"Failed to exchange data between server and clients", EV_PT_FAIL_OTHER},
        {"Couldn't allocate MR", EV_PT_FAIL_OTHER},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        const char *k = rd_find(s, n, tab[i].phrase);
        if (!k)
            continue;
        size_t pl = strlen(tab[i].phrase);
        long status = strcmp(tab[i].phrase, "Failed status ") == 0 ? rd_leading_int(k + pl, (size_t)(s + n - k) - pl, -1) : -1;
        if (r->n_failures++ == 0) {
            r->fail_kind = tab[i].kind;
            r->fail_status = status;
            rd_copy(r->failure, sizeof r->failure, s, n);
            r->failure_line = lineno;
        } else if (r->fail_kind == EV_PT_FAIL_COMPLETION && r->fail_status < 0) {
            r->fail_status = status; /* "Completion with error" then "Failed status 12: ..." */
        }
        return 1;
    }
    return 0;
}

void *rd_perftest_begin(const char *name)
{
    parser *ps = cp_xcalloc(1, sizeof *ps);
    ps->r = cp_xcalloc(1, sizeof *ps->r);
    ps->name = cp_xstrdup(name ? name : "");
    diag_init(&ps->local);
    return ps;
}

void *rd_perftest_end(void *st, diag_set *diag)
{
    parser *ps = st;
    ev_perftest *r = ps->r;
    size_t tables = 0;
    for (size_t i = 0; i < r->n_runs; i++)
        tables += r->runs[i].header_line != 0;
    if (tables == 0 && !r->n_failures) { /* no test banner followed by a #bytes header, no failure */
        ev_perftest_free(r);
        r = NULL;
    } else {
        diag_merge(diag, &ps->local);
    }
    free(ps->name);
    free(ps);
    return r;
}




int rd_perftest_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    int score = 0;
    if (rd_find(buf, len, "BW Test") || rd_find(buf, len, "Latency Test"))
        score += 40;
    if (rd_find(buf, len, "#bytes") && rd_find(buf, len, "#iterations"))
        score += 40;
    if (rd_find(buf, len, "BW peak[") || rd_find(buf, len, "t_typical["))
        score += 20;
    if (rd_find(buf, len, "Number of qps") || rd_find(buf, len, "Connection type"))
        score += 20;
    if (rd_find(buf, len, "local address:"))
        score += 10;
    /* a run that failed before its table: the tool and its failure words */
    if ((rd_find(buf, len, "ib_write_") || rd_find(buf, len, "ib_read_") || rd_find(buf, len, "ib_send_") ||
         rd_find(buf, len, "ib_atomic_")) &&
        (rd_find(buf, len, "Couldn't connect to") || rd_find(buf, len, "Failed to modify QP") ||
         rd_find(buf, len, "Failed status ") || rd_find(buf, len, "Unable to open file descriptor")))
        score += 60;
    return score > 100 ? 100 : score;
}
