/* ev_fio.c - fio normal-output reader. See ev_fio.h.
 *
 * Line by line with a current job and a current direction: a result line
 * "(groupid=" opens a job (matched by name to its "(g=N)" definition line
 * when there is one), a "read:"/"write:"/"trim:" line selects the direction
 * the following latency and percentile lines belong to.
 */
#include "rd_fio.h"

#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const dir_names[EV_FIO__DIRS] = {"read", "write", "trim"};

/* Number with an optional k/m suffix ("12.3k" IOPS, "1234k" usec). */
static int num_suffix(const char *p, size_t n, double *out)
{
    double mul = 1;
    if (n > 1 && (p[n - 1] == 'k' || p[n - 1] == 'K'))
        mul = 1e3, n--;
    else if (n > 1 && (p[n - 1] == 'm' || p[n - 1] == 'M'))
        mul = 1e6, n--;
    if (rd_num(p, n, out) < 0)
        return -1;
    *out *= mul;
    return 0;
}

/* Split "30.0GiB" into number and unit; returns the unit multiplier in bytes
 * or -1. KB/MB/GB are 1024-based in fio 2.x output (legacy). */
static double unit_bytes(const char *u, size_t n, int legacy)
{
    static const struct { const char *u; double si, bin; } units[] = {
        {"B", 1, 1}, {"KiB", 1024.0, 1024.0}, {"MiB", 1048576.0, 1048576.0},
        {"GiB", 1073741824.0, 1073741824.0}, {"TiB", 1099511627776.0, 1099511627776.0},
        {"kB", 1e3, 1024.0}, {"KB", 1e3, 1024.0}, {"MB", 1e6, 1048576.0},
        {"GB", 1e9, 1073741824.0}, {"TB", 1e12, 1099511627776.0},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].u) == n && memcmp(units[i].u, u, n) == 0)
            return legacy ? units[i].bin : units[i].si;
    return -1;
}

int rd_fio_size(const char *p, size_t n, int legacy, double *bytes)
{
    size_t k = 0;
    while (k < n && ((p[k] >= '0' && p[k] <= '9') || p[k] == '.'))
        k++;
    double v, mul = unit_bytes(p + k, n - k, legacy);
    if (k == 0 || mul < 0 || rd_num(p, k, &v) < 0)
        return -1;
    *bytes = v * mul;
    return 0;
}

static int rate(const char *p, size_t n, int legacy, double *bytes_s)
{
    if (n < 3 || memcmp(p + n - 2, "/s", 2) != 0)
        return -1;
    return rd_fio_size(p, n - 2, legacy, bytes_s);
}

int rd_fio_rate(const char *p, size_t n, double *bytes_s)
{
    return rate(p, n, 0, bytes_s);
}

/* Value of "key=" in [s, s+n): the text after '=' (spaces skipped) up to the
 * first of ",", " ", "(" or the end. */
static int kv(const char *s, size_t n, const char *key, const char **v, size_t *vn)
{
    size_t kl = strlen(key);
    for (const char *p = rd_find(s, n, key); p; p = rd_find(p + 1, n - (size_t)(p + 1 - s), key)) {
        if (p > s && ((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z')))
            continue; /* "bw=" inside "aggrbw=" */
        const char *q = p + kl, *e = s + n;
        while (q < e && *q == ' ')
            q++;
        const char *t = q;
        while (t < e && *t != ',' && *t != ' ' && *t != '(' && *t != ')' && *t != ':')
            t++;
        *v = q;
        *vn = (size_t)(t - q);
        return *vn > 0 ? 0 : -1;
    }
    return -1;
}

static double kv_num(const char *s, size_t n, const char *key)
{
    const char *v;
    size_t vn;
    double x;
    if (kv(s, n, key, &v, &vn) < 0 || num_suffix(v, vn, &x) < 0)
        return NAN;
    return x;
}

typedef struct parser {
    ev_fio *f;
    char *name;          /* the input, for damage notes */
    diag_set local;      /* damage counted while reading */
    ev_fio_job *job;
    int dir;             /* current direction in job, -1 none */
    int in_pct;          /* inside "clat percentiles" lines */
    double pct_mul;      /* percentile unit -> us */
    ev_fio_group *group;
} parser;

static ev_fio_job *job_by_name(parser *ps, const char *name, size_t n, uint32_t line)
{
    ev_fio *f = ps->f;
    for (size_t i = 0; i < f->n_jobs; i++)
        if (strlen(f->jobs[i].name) == n && memcmp(f->jobs[i].name, name, n) == 0 &&
            f->jobs[i].line == 0)
            return &f->jobs[i];
    /* ps->job points into f->jobs: keep it valid across the move */
    ptrdiff_t cur = ps->job ? ps->job - f->jobs : -1;
    int grown = rd_grow((void **)&f->jobs, &f->cap_jobs, f->n_jobs, sizeof *f->jobs, EV_FIO_MAX_JOBS);
    if (cur >= 0)
        ps->job = &f->jobs[cur];
    if (grown < 0) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, line);
        return NULL;
    }
    ev_fio_job *j = &f->jobs[f->n_jobs++];
    memset(j, 0, sizeof *j);
    rd_copy(j->name, sizeof j->name, name, n);
    j->iodepth = j->groupid = j->jobs = j->err = -1;
    j->pid = -1;
    for (int d = 0; d < EV_FIO__DIRS; d++) {
        ev_fio_io *io = &j->io[d];
        io->iops = io->bw_bytes_s = io->io_bytes = io->runtime_ms = NAN;
        ev_fio_lat *l[3] = {&io->slat, &io->clat, &io->lat};
        for (int k = 0; k < 3; k++)
            l[k]->min_us = l[k]->max_us = l[k]->avg_us = l[k]->stdev_us = NAN;
    }
    return j;
}

/* "seqwrite: (g=0): rw=write, bs=(R) 1024KiB-1024KiB, ..., ioengine=psync, iodepth=1" */
/* The job named before ": (g=" / ": (groupid=" at g. */
static ev_fio_job *job_of_line(parser *ps, const char *line, const char *g, uint32_t lineno)
{
    const char *name = line;
    size_t nn = (size_t)(g - line);
    rd_trim(&name, &nn);
    return job_by_name(ps, name, nn, lineno);
}

static void parse_def(parser *ps, const char *line, size_t len, const char *g, uint32_t lineno)
{
    ev_fio_job *j = job_of_line(ps, line, g, lineno);
    if (!j)
        return;
    j->def_line = lineno;
    const char *v;
    size_t vn;
    if (kv(line, len, "rw=", &v, &vn) == 0)
        rd_copy(j->rw, sizeof j->rw, v, vn);
    if (kv(line, len, "ioengine=", &v, &vn) == 0)
        rd_copy(j->ioengine, sizeof j->ioengine, v, vn);
    double d = kv_num(line, len, "iodepth=");
    j->iodepth = rd_d2int(d, -1);
    const char *bs = rd_find(line, len, "bs=");
    if (bs) {
        const char *end = rd_find(bs, len - (size_t)(bs - line), ", ioengine=");
        size_t bn = (size_t)((end ? end : line + len) - bs - 3);
        rd_copy(j->bs, sizeof j->bs, bs + 3, bn);
    }
}

/* "seqwrite: (groupid=0, jobs=1): err= 0: pid=14175: Wed Sep 11 ..." */
static void parse_result(parser *ps, const char *line, size_t len, const char *g, uint32_t lineno)
{
    ev_fio_job *j = job_of_line(ps, line, g, lineno);
    ps->job = j;
    ps->dir = -1;
    ps->in_pct = 0;
    if (!j)
        return;
    j->line = lineno;
    j->groupid = rd_d2int(kv_num(line, len, "groupid="), -1);
    j->jobs = rd_d2int(kv_num(line, len, "jobs="), -1);
    j->err = rd_d2int(kv_num(line, len, "err="), -1);
    j->pid = rd_d2i64(kv_num(line, len, "pid="), -1);
}

/* fio 3: "write: IOPS=734, BW=734MiB/s (770MB/s)(30.0GiB/41847msec)"
 * fio 2: "write: io=30720MB, bw=751234KB/s, iops=733, runt= 41847msec" */
static void parse_dir(parser *ps, int dir, const char *s, size_t n, uint32_t lineno)
{
    ev_fio_io *io = &ps->job->io[dir];
    io->present = 1;
    io->line = lineno;
    ps->dir = dir;
    ps->in_pct = 0;
    const char *v;
    size_t vn;
    int legacy = rd_find(s, n, "IOPS=") == NULL;
    io->iops = kv_num(s, n, legacy ? "iops=" : "IOPS=");
    if (kv(s, n, legacy ? "bw=" : "BW=", &v, &vn) == 0 && rate(v, vn, legacy, &io->bw_bytes_s) < 0) {
        io->bw_bytes_s = NAN;
        rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
    }
    if (legacy) {
        if (kv(s, n, "io=", &v, &vn) == 0)
            rd_fio_size(v, vn, 1, &io->io_bytes);
        if (kv(s, n, "runt=", &v, &vn) == 0 && vn > 4 && memcmp(v + vn - 4, "msec", 4) == 0)
            rd_num(v, vn - 4, &io->runtime_ms);
        return;
    }
    /* "(30.0GiB/41847msec)": the last parenthesis group with a '/' */
    for (const char *p = s + n; p > s; p--) {
        if (p[-1] != '(')
            continue;
        const char *close = memchr(p, ')', (size_t)(s + n - p));
        const char *slash = close ? memchr(p, '/', (size_t)(close - p)) : NULL;
        if (!slash)
            continue;
        rd_fio_size(p, (size_t)(slash - p), 0, &io->io_bytes);
        size_t rn = (size_t)(close - slash - 1);
        if (rn > 4 && memcmp(close - 4, "msec", 4) == 0)
            rd_num(slash + 1, rn - 4, &io->runtime_ms);
        break;
    }
}

static double time_unit_us(const char *s, size_t n)
{
    if (rd_find(s, n, "(nsec)"))
        return 1e-3;
    if (rd_find(s, n, "(msec)"))
        return 1e3;
    if (rd_find(s, n, "(sec)"))
        return 1e6;
    return 1.0; /* usec */
}

/* "clat (usec): min=185, max=100354, avg=1333.63, stdev=1047.15" */
static void parse_lat(parser *ps, ev_fio_lat *l, const char *s, size_t n, uint32_t lineno)
{
    double mul = time_unit_us(s, n);
    l->min_us = kv_num(s, n, "min=") * mul;
    l->max_us = kv_num(s, n, "max=") * mul;
    l->avg_us = kv_num(s, n, "avg=") * mul;
    l->stdev_us = kv_num(s, n, "stdev=") * mul;
    l->line = lineno;
    if (isnan(l->avg_us))
        rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
}

/* "|  1.00th=[  231],  5.00th=[  302], 10.00th=[ 1205]," */
static void parse_pct(parser *ps, const char *s, size_t n)
{
    ev_fio_io *io = &ps->job->io[ps->dir];
    for (const char *p = rd_find(s, n, "th=["); p; ) {
        const char *q = p;
        while (q > s && (q[-1] == '.' || (q[-1] >= '0' && q[-1] <= '9')))
            q--;
        const char *open = p + 4, *close = memchr(open, ']', (size_t)(s + n - open));
        double pc, v;
        if (!close)
            break;
        const char *vs = open;
        size_t vn = (size_t)(close - open);
        rd_trim(&vs, &vn);
        if (rd_num(q, (size_t)(p - q), &pc) == 0 && rd_num(vs, vn, &v) == 0 && io->n_pct < EV_FIO_MAX_PCT) {
            io->pct[io->n_pct] = pc;
            io->pct_us[io->n_pct] = v * ps->pct_mul;
            io->n_pct++;
        }
        p = rd_find(close, (size_t)(s + n - close), "th=[");
    }
}

/* "  WRITE: bw=734MiB/s (770MB/s), ..., io=30.0GiB (32.2GB), run=..." or
 * fio 2 "  WRITE: io=30720MB, aggrb=751234KB/s, ..." */
static void parse_group_dir(parser *ps, int dir, const char *s, size_t n)
{
    const char *v;
    size_t vn;
    int legacy = rd_find(s, n, "aggrb=") != NULL;
    if (kv(s, n, legacy ? "aggrb=" : "bw=", &v, &vn) == 0)
        rate(v, vn, legacy, &ps->group->bw_bytes_s[dir]);
    if (kv(s, n, "io=", &v, &vn) == 0)
        rd_fio_size(v, vn, legacy, &ps->group->io_bytes[dir]);
}

static int dir_prefix(const char *s, size_t n, int upper)
{
    for (int d = 0; d < EV_FIO__DIRS; d++) {
        size_t k = strlen(dir_names[d]);
        if (n > k && strncasecmp(s, dir_names[d], k) == 0 && (s[k] == ':' || (s[k] == ' ' && n > k + 1 && s[k + 1] == ':'))) {
            if (upper && !(s[0] >= 'A' && s[0] <= 'Z'))
                return -1;
            if (!upper && !(s[0] >= 'a' && s[0] <= 'z'))
                return -1;
            return d;
        }
    }
    return -1;
}

/* A "Run status group N" total; id -1 for the bare "READ: bw=..." lines of
 * an excerpt (each a group of its own). */
static void open_group(parser *ps, int id, uint32_t lineno)
{
    ev_fio *f = ps->f;
    ps->job = NULL;
    if (rd_grow((void **)&f->groups, &f->cap_groups, f->n_groups, sizeof *f->groups, EV_FIO_MAX_JOBS) < 0) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);
        ps->group = NULL;
        return;
    }
    ev_fio_group *gr = ps->group = &f->groups[f->n_groups++];
    memset(gr, 0, sizeof *gr);
    gr->id = id;
    gr->line = lineno;
    for (int d = 0; d < EV_FIO__DIRS; d++)
        gr->bw_bytes_s[d] = gr->io_bytes[d] = NAN;
}

void rd_fio_line(void *ctx, const rd_line *ln)
{
    parser *ps = ctx;
    const char *line = ln->text;
    size_t len = ln->len;
    uint32_t lineno = (uint32_t)ln->no;
    ev_fio *f = ps->f;
    const char *s = line;
    size_t n = len;
    rd_trim(&s, &n);
    if (n == 0)
        return;
    if (rd_starts(s, n, "fio-") && n > 4 && n < 32 && s[4] >= '0' && s[4] <= '9') {
        rd_copy(f->version, sizeof f->version, s, n);
        f->version_line = lineno;
        return;
    }
    if (rd_starts(s, n, "fio: ")) {
        if (f->n_warnings++ == 0) {
            rd_copy(f->warning, sizeof f->warning, s, n);
            f->warning_line = lineno;
        }
        return;
    }
    const char *g;
    if ((g = rd_find(line, len, ": (groupid=")) != NULL) {
        parse_result(ps, line, len, g, lineno);
        return;
    }
    if ((g = rd_find(line, len, ": (g=")) != NULL) {
        parse_def(ps, line, len, g, lineno);
        return;
    }
    if (rd_starts(s, n, "Run status group ")) {
        open_group(ps, rd_leading_int(s + strlen("Run status group "), n - strlen("Run status group "), -1), lineno);
        return;
    }
    int d = dir_prefix(s, n, 1);
    if (d >= 0 && (!ps->group || ps->job || !isnan(ps->group->bw_bytes_s[d])) && rd_find(s, n, "bw=")) {
        open_group(ps, -1, lineno); /* "READ: bw=796MiB/s ..." pasted without its group line */
        if (ps->group)
            ps->group->line = lineno;
    }
    if (ps->group && !ps->job && d >= 0) {
        parse_group_dir(ps, d, s, n);
        return;
    }
    if (!ps->job)
        return;
    if ((d = dir_prefix(s, n, 0)) >= 0) {
        parse_dir(ps, d, s, n, lineno);
        return;
    }
    if (ps->dir < 0)
        return;
    ev_fio_io *io = &ps->job->io[ps->dir];
    if (rd_find(s, n, "percentiles (")) {
        ps->in_pct = rd_starts(s, n, "clat");
        ps->pct_mul = time_unit_us(s, n);
        return;
    }
    if (s[0] == '|') {
        if (ps->in_pct)
            parse_pct(ps, s, n);
        return;
    }
    ps->in_pct = 0;
    if (!rd_find(s, n, "min="))
        return; /* "lat (usec) : 250=1.2%" distribution, bw/iops/cpu lines */
    if (rd_starts(s, n, "slat ("))
        parse_lat(ps, &io->slat, s, n, lineno);
    else if (rd_starts(s, n, "clat ("))
        parse_lat(ps, &io->clat, s, n, lineno);
    else if (rd_starts(s, n, "lat ("))
        parse_lat(ps, &io->lat, s, n, lineno);
}

void *rd_fio_begin(const char *name)
{
    parser *ps = cp_xcalloc(1, sizeof *ps);
    ps->f = cp_xcalloc(1, sizeof *ps->f);
    ps->name = cp_xstrdup(name ? name : "");
    diag_init(&ps->local);
    ps->dir = -1;
    return ps;
}

void *rd_fio_end(void *st, diag_set *diag)
{
    parser *ps = st;
    ev_fio *f = ps->f;
    size_t results = f->n_groups;
    for (size_t i = 0; i < f->n_jobs; i++)
        results += f->jobs[i].line != 0;
    if (results == 0) { /* no job result and no run status group */
        ev_fio_free(f);
        f = NULL;
    } else {
        diag_merge(diag, &ps->local);
    }
    free(ps->name);
    free(ps);
    return f;
}


int rd_fio_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    int score = 0;
    if (rd_find(buf, len, ": (groupid="))
        score += 50;
    if (rd_find(buf, len, ": (g=") && rd_find(buf, len, "ioengine="))
        score += 30;
    if (rd_find(buf, len, "Run status group"))
        score += 30;
    if (rd_find(buf, len, "clat (") || rd_find(buf, len, "IOPS="))
        score += 10;
    /* group totals pasted alone: "READ: bw=796MiB/s (835MB/s), ..., run=30001-30001msec" */
    if ((rd_find(buf, len, "READ: bw=") || rd_find(buf, len, "WRITE: bw=")) && rd_find(buf, len, "run="))
        score += 60;
    return score > 100 ? 100 : score;
}
