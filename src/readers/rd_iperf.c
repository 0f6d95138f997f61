/* ev_iperf.c - iperf3 text output reader. See ev_iperf.h.
 *
 * A row is "[ID] START-END sec N UNIT R UNIT/sec [retr] [cwnd UNIT]
 * [sender|receiver]"; everything else (headers, separators, the "iperf
 * Done." line) is skipped.
 */
#include "rd_iperf.h"

#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "GBytes" -> 2^30; "Bytes" -> 1. */
/* Reading state: the facts first, so the helpers that take the facts reach
 * the state by a cast (a pointer to a struct's first member is a pointer to
 * the struct); end moves the facts into their own allocation. */
typedef struct ist {
    ev_iperf r;
    char *name;     /* the input, for damage notes */
    diag_set local; /* damage counted while reading */
} ist;

static diag_set *i_diag(ev_iperf *r) { return &((ist *)r)->local; }
static const char *i_name(ev_iperf *r) { return ((ist *)r)->name; }

static double byte_unit(const rd_field *f)
{
    static const struct { const char *u; double m; } t[] = {
        {"Bytes", 1}, {"KBytes", 1024.0}, {"MBytes", 1048576.0},
        {"GBytes", 1073741824.0}, {"TBytes", 1099511627776.0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (rd_feq(f, t[i].u))
            return t[i].m;
    return -1;
}

/* "Gbits/sec" -> 1e9. */
static double bit_unit(const rd_field *f)
{
    static const struct { const char *u; double m; } t[] = {
        {"bits/sec", 1}, {"Kbits/sec", 1e3}, {"Mbits/sec", 1e6}, {"Gbits/sec", 1e9}, {"Tbits/sec", 1e12},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (rd_feq(f, t[i].u))
            return t[i].m;
    return -1;
}

static ev_iperf_section *new_section(ev_iperf *r, uint32_t line)
{
    if (rd_grow((void **)&r->sections, &r->cap_sections, r->n_sections, sizeof *r->sections,
                EV_IPERF_MAX_SECTIONS) < 0) {
        rd_note(i_diag(r), DIAG_LIMIT_REACHED, i_name(r), line);
        return NULL;
    }
    ev_iperf_section *s = &r->sections[r->n_sections++];
    memset(s, 0, sizeof *s);
    s->port = -1;
    s->is_server = -1;
    s->line = line;
    return s;
}

/* "Connecting to host 10.24.24.5, port 5000" / "Accepted connection from
 * 10.0.0.1, port 40000": host is the word after `after`, port after "port". */
static void connection(ev_iperf *r, const rd_field *f, int n, int host_at, int is_server, uint32_t line)
{
    /* "Server listening" then "Accepted connection" is one section */
    ev_iperf_section *s = NULL;
    if (is_server && r->n_sections > 0) {
        ev_iperf_section *last = &r->sections[r->n_sections - 1];
        int used = r->n_rows > 0 && r->rows[r->n_rows - 1].section == r->n_sections - 1;
        if (last->is_server == 1 && !last->remote[0] && !used)
            s = last;
    }
    if (!s)
        s = new_section(r, line);
    if (!s)
        return;
    s->is_server = is_server;
    if (host_at < n) {
        size_t hl = f[host_at].len;
        if (hl > 0 && f[host_at].p[hl - 1] == ',')
            hl--;
        rd_copy(s->remote, sizeof s->remote, f[host_at].p, hl);
    }
    for (int i = host_at; i + 1 < n; i++) {
        int64_t port;
        if (rd_feq(&f[i], "port") && rd_i64(f[i + 1].p, f[i + 1].len, &port) == 0 && port >= 0 && port < 65536)
            s->port = (int)port;
    }
}

/* Fields after the "[ N]" / "[SUM]" tag, which may be split ("[", "4]"). */
static int row_start(const rd_field *f, int n, int *stream)
{
    if (n < 1 || f[0].p[0] != '[')
        return -1;
    int i = 0;
    char tag[16];
    size_t tl = 0;
    for (; i < n && tl < sizeof tag - 1; i++) {
        for (uint32_t k = 0; k < f[i].len && tl < sizeof tag - 1; k++)
            tag[tl++] = f[i].p[k];
        if (f[i].p[f[i].len - 1] == ']')
            break;
    }
    if (i >= n)
        return -1;
    tag[tl] = '\0';
    if (strcmp(tag, "[SUM]") == 0) {
        *stream = -1;
        return i + 1;
    }
    int64_t id;
    if (tl < 3 || rd_i64(tag + 1, tl - 2, &id) < 0 || id < 0 || id > 1 << 20)
        return -1;
    *stream = (int)id;
    return i + 1;
}

static void parse_row(ev_iperf *r, const rd_field *f, int n, int i, int stream, uint32_t line)
{
    /* START-END sec N Bunit R bunit [retr] [cwnd Bunit] [sender|receiver] */
    if (n - i < 6 || !rd_feq(&f[i + 1], "sec"))
        return; /* "local ... connected to ..." and header lines */
    const char *dash = memchr(f[i].p + 1, '-', f[i].len - 1);
    double start, end, v, rate;
    double bm = byte_unit(&f[i + 3]), rm = bit_unit(&f[i + 5]);
    if (!dash || rd_num(f[i].p, (size_t)(dash - f[i].p), &start) < 0 ||
        rd_num(dash + 1, f[i].len - (size_t)(dash + 1 - f[i].p), &end) < 0 || bm < 0 || rm < 0 ||
        rd_num(f[i + 2].p, f[i + 2].len, &v) < 0 || rd_num(f[i + 4].p, f[i + 4].len, &rate) < 0) {
        rd_note(i_diag(r), DIAG_EVIDENCE_BAD_VALUE, i_name(r), line);
        return;
    }
    ev_iperf_row row = {.stream = stream, .role = EV_IPERF_INTERVAL, .start_s = start, .end_s = end,
                        .bytes = v * bm, .bits_per_s = rate * rm, .retr = -1, .cwnd_bytes = NAN,
                        .line = line};
    int k = i + 6;
    if (k < n && (rd_feq(&f[n - 1], "sender") || rd_feq(&f[n - 1], "receiver"))) {
        row.role = rd_feq(&f[n - 1], "sender") ? EV_IPERF_SENDER : EV_IPERF_RECEIVER;
        n--;
    }
    int64_t retr;
    if (k < n && rd_i64(f[k].p, f[k].len, &retr) == 0) {
        row.retr = retr;
        k++;
    }
    double cw;
    if (k + 1 < n && rd_num(f[k].p, f[k].len, &cw) == 0 && byte_unit(&f[k + 1]) > 0)
        row.cwnd_bytes = cw * byte_unit(&f[k + 1]);
    if (r->n_sections == 0 && !new_section(r, line))
        return;
    row.section = (uint32_t)(r->n_sections - 1);
    if (rd_grow((void **)&r->rows, &r->cap_rows, r->n_rows, sizeof *r->rows, EV_IPERF_MAX_ROWS) < 0) {
        rd_note(i_diag(r), DIAG_LIMIT_REACHED, i_name(r), line);
        return;
    }
    r->rows[r->n_rows++] = row;
}

void rd_iperf_line(void *ctx, const rd_line *ln)
{
    ev_iperf *r = &((ist *)ctx)->r;
    const char *line = ln->text;
    size_t len = ln->len;
    uint32_t lineno = (uint32_t)ln->no;
    const char *e = rd_find(line, len, "iperf3: error - ");
    if (e) { /* "iperf3: error - unable to connect to server: Connection refused" */
        if (r->n_errors++ == 0) {
            rd_copy(r->error, sizeof r->error, e + 16, len - (size_t)(e + 16 - line));
            r->error_line = lineno;
        }
        return;
    }
    rd_field f[32];
    int n = rd_split(line, len, f, 32, NULL);
    if (n == 0)
        return;
    if (n >= 4 && rd_feq(&f[0], "Connecting") && rd_feq(&f[1], "to") && rd_feq(&f[2], "host")) {
        connection(r, f, n, 3, 0, lineno);
        return;
    }
    if (n >= 4 && rd_feq(&f[0], "Accepted") && rd_feq(&f[1], "connection") && rd_feq(&f[2], "from")) {
        connection(r, f, n, 3, 1, lineno);
        return;
    }
    if (n >= 3 && rd_feq(&f[0], "Server") && rd_feq(&f[1], "listening")) {
        ev_iperf_section *s = new_section(r, lineno);
        if (s)
            s->is_server = 1;
        return;
    }
    int stream, i = row_start(f, n, &stream);
    if (i > 0)
        parse_row(r, f, n, i, stream, lineno);
}

void *rd_iperf_begin(const char *name)
{
    ist *st = cp_xcalloc(1, sizeof *st);
    st->name = cp_xstrdup(name ? name : "");
    diag_init(&st->local);
    return st;
}

void *rd_iperf_end(void *stp, diag_set *diag)
{
    ist *st = stp;
    ev_iperf *r = NULL;
    if (st->r.n_rows || st->r.n_errors) {
        r = cp_xmalloc(sizeof *r);
        *r = st->r; /* the arrays move with it */
        diag_merge(diag, &st->local);
    } else { /* no interval or summary row: not iperf3 output */
        free(st->r.sections);
        free(st->r.rows);
    }
    free(st->name);
    free(st);
    return r;
}



int rd_iperf_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    int score = 0;
    if (rd_find(buf, len, "[ ID] Interval"))
        score += 50;
    if (rd_find(buf, len, "bits/sec"))
        score += 30;
    if (rd_find(buf, len, "Bytes") && rd_find(buf, len, "  sec  "))
        score += 20;
    if (rd_find(buf, len, "sender") || rd_find(buf, len, "receiver") || rd_find(buf, len, "iperf"))
        score += 10;
    if (rd_find(buf, len, "iperf3: error - "))
        score += 60;
    return score > 100 ? 100 : score;
}
