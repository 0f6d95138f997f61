/* rd_ncu.c - Nsight Compute results in the three forms ncu writes, into
 * ev_ncu (src/model/ev_ncu.h): one record per profiled kernel launch.
 *
 *   details CSV  (ncu --csv): header "ID","Process ID",...,"Section Name",
 *                "Metric Name","Metric Unit","Metric Value"[,rule columns];
 *                one row per launch x metric (launches keyed by ID), rule
 *                rows with an empty metric;
 *   raw CSV      (ncu --csv --page raw): a header of metric names, a row of
 *                units (its ID cell empty), one row per launch;
 *   text         (ncu's default output): "[pid] process@host", a kernel line
 *                "name (grid)x(block), Context N, Stream N[, Device N, CC X.Y]"
 *                (2022 and older: "name, <date>, Context N, Stream N"), then
 *                "Section: NAME" blocks whose tables are framed by dash lines
 *                (the dash groups give the column extents, which differ per
 *                section and version) and OPT/WRN/INF rule paragraphs.
 *
 * Names map onto ev_ncu.def's rows through ncu_names.def; a name that maps
 * nowhere is counted (metrics_unmapped), never guessed. Units are parsed as
 * ncu prints them ("%", "byte", "Kbyte/block", "Gbyte/second", "Gbyte/s",
 * "usecond", "ns", "cycle/nsecond", "Ghz", "hz", "inst", thousands
 * separators) into the row's base unit; a unit of the wrong dimension or a
 * value that is not a number is damage (evidence_bad_value), "n/a" is
 * counted as such. The loop has removed "#@" lines and CRs; a UTF-8 BOM,
 * ==PROF== lines and the profiled program's own output are skipped here.
 */
#include "rd_ncu.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/util.h"
#include "rd_text.h"

#define NCU_MAX_COLS 4096   /* raw-page columns read (ncu writes a few hundred) */
#define NCU_SEEN_CAP 4096   /* distinct unmapped names counted exactly */

/* map_name results besides a row index: M_TENSOR - k is a tensor-path
 * counter whose precision row is k (0: none but the total). */
enum { M_NONE = -1, M_WRONG_DIM = -2, M_STALL = -1000, M_TENSOR = -3 };

static const struct {
    const char *name;
    int metric;
    double unitless_scale;
} k_names[] = {
#define N(name, m, s) {name, EV_NCU_##m, s},
#include "ncu_names.def"
#undef N
};

/* ---- units and values -------------------------------------------------- */

static int word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && strncasecmp(p, w, n) == 0; }

/* SI prefix of a unit word ("Kbyte" -> 1e3); *rest is the word after it. */
static double si_prefix(const char *p, size_t n, const char *base, int *ok)
{
    static const struct { const char *pre; double m; } t[] = {
        {"", 1}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t pl = strlen(t[i].pre);
        if (n > pl && strncasecmp(p, t[i].pre, pl) == 0 && word_is(p + pl, n - pl, base)) {
            *ok = 1;
            return t[i].m;
        }
    }
    *ok = 0;
    return 0;
}

static double time_unit(const char *p, size_t n)
{
    static const struct { const char *u; double ns; } t[] = {
        {"nsecond", 1}, {"ns", 1}, {"usecond", 1e3}, {"us", 1e3}, {"msecond", 1e6},
        {"ms", 1e6}, {"second", 1e9}, {"s", 1e9},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (word_is(p, n, t[i].u))
            return t[i].ns;
    return 0;
}

/* Dimension and multiplier into the base unit of ncu's unit string; *unitless
 * when it was empty. 0, or -1 for a unit nothing here knows (then COUNT). */
int rd_ncu_unit(const char *u, size_t n, int *dim, double *mul, int *unitless)
{
    rd_trim(&u, &n);
    *unitless = n == 0;
    *dim = EV_NCU_D_COUNT;
    *mul = 1;
    if (n == 0)
        return 0;
    if (n == 1 && u[0] == '%') {
        *dim = EV_NCU_D_PCT;
        return 0;
    }
    const char *slash = memchr(u, '/', n);
    size_t head = slash ? (size_t)(slash - u) : n;
    const char *tail = slash ? slash + 1 : NULL;
    size_t tl = slash ? n - head - 1 : 0;
    int ok;
    double m = si_prefix(u, head, "byte", &ok);
    if (ok) {
        double per = tail ? time_unit(tail, tl) : 0;
        if (per > 0) { /* Gbyte/second, Gbyte/s */
            *dim = EV_NCU_D_RATE;
            *mul = m * 1e9 / per;
        } else { /* byte, Kbyte/block */
            *dim = EV_NCU_D_BYTES;
            *mul = m;
        }
        return 0;
    }
    double t = time_unit(u, n);
    if (t > 0) {
        *dim = EV_NCU_D_TIME;
        *mul = t;
        return 0;
    }
    m = si_prefix(u, n, "hz", &ok);
    if (ok) {
        *dim = EV_NCU_D_FREQ;
        *mul = m;
        return 0;
    }
    if (tail && word_is(u, head, "cycle")) { /* cycle/nsecond = GHz */
        double per = time_unit(tail, tl);
        if (per > 0) {
            *dim = EV_NCU_D_FREQ;
            *mul = 1e9 / per;
            return 0;
        }
    }
    static const char *const counts[] = {"cycle", "inst", "warp", "block", "thread", "register", "sector",
                                         "request", "SM", "cluster", "sample", "wavefront", "instance"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        m = si_prefix(u, head, counts[i], &ok);
        if (ok) {
            *mul = m;
            return 0;
        }
    }
    return -1;
}

/* "54,207,744" / "1.24" / "n/a": 0 and *v, 1 for n/a, -1 not a number. */
int rd_ncu_value(const char *p, size_t n, double *v)
{
    rd_trim(&p, &n);
    if (n >= 3 && strncasecmp(p + n - 3, "n/a", 3) == 0)
        return 1; /* "n/a", "(!) n/a" */
    char buf[64];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == ',')
            continue; /* thousands separators */
        if (k + 1 >= sizeof buf)
            return -1;
        buf[k++] = p[i];
    }
    if (k == 0)
        return -1;
    return rd_num(buf, k, v) == 0 ? 0 : -1;
}

/* The precision row of a tensor-path counter by its source type
 * ("bf16_dst_fp32.sum" -> TENSOR_FP16_OPS); 0 for int and other sources. */
static int tensor_part(const char *src)
{
    static const struct { const char *pre; int m; } t[] = {
        {"fp16", EV_NCU_TENSOR_FP16_OPS}, {"bf16", EV_NCU_TENSOR_FP16_OPS}, {"tf32", EV_NCU_TENSOR_TF32_OPS},
        {"fp8", EV_NCU_TENSOR_FP8_OPS},   {"e4m3", EV_NCU_TENSOR_FP8_OPS},  {"e5m2", EV_NCU_TENSOR_FP8_OPS},
        {"fp64", EV_NCU_TENSOR_FP64_OPS},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strncmp(src, t[i].pre, strlen(t[i].pre)) == 0)
            return t[i].m;
    return 0;
}

/* The reason of a warp-stall counter name into out (may be NULL): 1 for
 * cycles per issue, 2 for PC samples, 0 when the name is none. */
static int stall_reason(const char *name, char *out, size_t cap)
{
    static const struct { const char *pre, *suf; int kind; } t[] = {
        {"smsp__average_warps_issue_stalled_", "_per_issue_active.ratio", 1},
        {"smsp__pcsamp_warps_issue_stalled_", "", 2},
    };
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t pl = strlen(t[i].pre), sl = strlen(t[i].suf);
        if (n <= pl + sl || strncmp(name, t[i].pre, pl) != 0 || strcmp(name + n - sl, t[i].suf) != 0 ||
            strstr(name + pl, "not_issued"))
            continue;
        if (out)
            rd_copy(out, cap, name + pl, n - pl - sl);
        return t[i].kind;
    }
    return 0;
}

/* Row index of a name for a dimension: the first row of that name whose
 * dimension matches; M_WRONG_DIM when the name exists with another one;
 * M_TENSOR - k for a tensor-path op counter (precision row k); M_STALL for
 * a warp-stall counter; M_NONE otherwise. */
static int map_name(const char *name, size_t n, int dim, bool unitless, double *scale)
{
    char buf[160];
    if (n >= sizeof buf)
        return M_NONE;
    memcpy(buf, name, n);
    buf[n] = '\0';
    if (strncmp(buf, "smsp__sass_thread_inst_executed_op_", 35) == 0)
        memmove(buf + 2, buf + 4, n - 3); /* smsp__ counters of the same name */
    if (strncmp(buf, "sm__ops_path_tensor_src_", 24) == 0 && cp_str_ends(buf, ".sum") &&
        !strstr(buf, "sparsity"))
        return dim == EV_NCU_D_COUNT ? M_TENSOR - tensor_part(buf + 24) : M_WRONG_DIM;
    if (stall_reason(buf, NULL, 0) && dim == EV_NCU_D_COUNT)
        return M_STALL;
    int seen = 0;
    for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
        if (strcmp(k_names[i].name, buf) == 0) {
            /* a value printed without a unit takes a row declared unitless too
             * (device__attribute_clock_rate: kHz) */
            if ((int)ev_ncu_metric_dim((ev_ncu_metric)k_names[i].metric) == dim ||
                (unitless && k_names[i].unitless_scale != 1)) {
                *scale = k_names[i].unitless_scale;
                return k_names[i].metric;
            }
            seen = 1;
        }
    return seen ? M_WRONG_DIM : M_NONE;
}

/* ---- reading state ----------------------------------------------------- */

typedef struct cell {
    const char *p;
    uint32_t len;
    bool quoted;
} cell;

typedef struct rawcol {
    int metric;     /* map_name result */
    double mul;     /* unit multiplier (after the units row) */
} rawcol;

typedef enum { F_NONE = 0, F_DETAILS, F_RAW, F_TEXT } form_t;

typedef struct nst {
    ev_ncu r;             /* first: the facts move out at the end */
    char *name;
    diag_set local;
    form_t form;
    bool first_line_seen;
    /* CSV */
    cell *cells;
    int ncol;             /* header columns */
    int c_id, c_pid, c_kernel, c_ctx, c_stream, c_block, c_grid, c_dev, c_cc;
    int c_section, c_mname, c_munit, c_mval, c_rname, c_rtype, c_rdesc, c_speedup;
    int c_display;        /* raw: device__attribute_display_name */
    rawcol *raw;
    char (*raw_names)[160]; /* the raw header's names, kept for the units row (the
                             * header line is gone by then: a name maps by its unit) */
    bool raw_units;       /* the units row was read */
    /* text */
    int64_t pid;
    ev_ncu_launch *cur;
    bool in_table, last_header;
    size_t col_end[3];    /* end offsets of the three table columns */
    ev_ncu_rule *rule;    /* rule paragraph being continued */
    size_t rule_len;
    /* distinct unmapped names */
    uint64_t *seen;
    size_t n_seen;
} nst;

static diag_set *dg(nst *s) { return &s->local; }

static void unmapped(nst *s, const char *p, size_t n)
{
    uint64_t h = cp_hash64(p, n) | 1;
    if (!s->seen)
        s->seen = cp_xcalloc(NCU_SEEN_CAP, sizeof *s->seen);
    size_t i = (size_t)(h % NCU_SEEN_CAP);
    for (size_t k = 0; k < NCU_SEEN_CAP; k++, i = (i + 1) % NCU_SEEN_CAP) {
        if (s->seen[i] == h)
            return;
        if (!s->seen[i]) {
            if (s->n_seen + 1 >= NCU_SEEN_CAP / 2)
                break; /* table full: counted, no longer deduplicated */
            s->seen[i] = h;
            s->n_seen++;
            break;
        }
    }
    if (s->r.n_unmapped_names < EV_NCU_MAX_UNMAPPED)
        rd_copy(s->r.unmapped[s->r.n_unmapped_names++], sizeof s->r.unmapped[0], p, n);
    s->r.metrics_unmapped++;
}

static ev_ncu_launch *new_launch(nst *s, long id, uint32_t line)
{
    if (rd_grow((void **)&s->r.launches, &s->r.cap, s->r.n, sizeof *s->r.launches, EV_NCU_MAX_LAUNCHES) < 0) {
        rd_note(dg(s), DIAG_LIMIT_REACHED, s->name, line);
        return NULL;
    }
    ev_ncu_launch *l = &s->r.launches[s->r.n++];
    memset(l, 0, sizeof *l);
    l->id = id;
    l->pid = s->pid;
    l->context = l->stream = l->device = -1;
    l->cc_major = l->cc_minor = -1;
    l->line = line;
    for (int m = 0; m < EV_NCU__COUNT; m++)
        l->v[m] = NAN;
    return l;
}

/* Copy a (possibly CSV-quoted) name, "" -> ", cut at EV_NCU_NAME_MAX. */
static void set_name(ev_ncu_launch *l, const char *p, size_t n, bool quoted)
{
    if (l->name)
        return;
    if (n > EV_NCU_NAME_MAX)
        n = EV_NCU_NAME_MAX;
    char *d = cp_xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        d[k++] = p[i];
        if (quoted && p[i] == '"' && i + 1 < n && p[i + 1] == '"')
            i++;
    }
    d[k] = '\0';
    l->name = d;
}

/* "(256, 1, 1)" -> dims; 0 on success. */
static int parse_dim3(const char *p, size_t n, int out[3])
{
    rd_trim(&p, &n);
    if (n < 2 || p[0] != '(' || p[n - 1] != ')')
        return -1;
    int k = 0;
    size_t i = 1;
    while (i < n - 1 && k < 3) {
        size_t j = i;
        while (j < n - 1 && p[j] != ',')
            j++;
        int64_t v;
        const char *q = p + i;
        size_t ql = j - i;
        rd_trim(&q, &ql);
        if (rd_i64(q, ql, &v) < 0 || v < 0 || v > INT32_MAX)
            return -1;
        out[k++] = (int)v;
        i = j + 1;
    }
    return k == 3 ? 0 : -1;
}

/* "8.9" -> 8, 9 */
static void parse_cc(ev_ncu_launch *l, const char *p, size_t n)
{
    rd_trim(&p, &n);
    const char *dot = memchr(p, '.', n);
    int64_t a, b;
    if (dot && rd_i64(p, (size_t)(dot - p), &a) == 0 && rd_i64(dot + 1, n - (size_t)(dot + 1 - p), &b) == 0 &&
        a >= 0 && a < 100 && b >= 0 && b < 100) {
        l->cc_major = (int)a;
        l->cc_minor = (int)b;
    }
}

static int small_int(const char *p, size_t n, int dflt)
{
    int64_t v;
    rd_trim(&p, &n);
    return rd_i64(p, n, &v) == 0 && v >= 0 && v < INT32_MAX ? (int)v : dflt;
}

/* Store one value of a metric row (mapped index m) with its unit. */
static void add_stall(ev_ncu_launch *l, const char *reason, double cycles, double samples)
{
    ev_ncu_stall *st = NULL;
    for (int i = 0; i < l->n_stalls && !st; i++)
        if (strcmp(l->stalls[i].reason, reason) == 0)
            st = &l->stalls[i];
    if (!st) {
        if (l->n_stalls >= EV_NCU_MAX_STALLS)
            return;
        st = &l->stalls[l->n_stalls++];
        rd_copy(st->reason, sizeof st->reason, reason, strlen(reason));
        st->cycles = st->samples = NAN;
    }
    if (!isnan(cycles))
        st->cycles = cycles;
    if (!isnan(samples))
        st->samples = samples;
}

static void store(nst *s, ev_ncu_launch *l, int m, double scale, double mul, bool unitless, const char *val,
                  size_t vn, uint32_t line, const char *name, size_t nn)
{
    double v;
    rd_trim(&val, &vn);
    if (vn == 0)
        return; /* an empty cell: the metric was not collected for this launch */
    int rc = rd_ncu_value(val, vn, &v);
    if (rc == 1) {
        s->r.values_na++;
        return;
    }
    if (rc < 0) {
        rd_note(dg(s), DIAG_EVIDENCE_BAD_VALUE, s->name, line);
        return;
    }
    v *= unitless ? scale : mul;
    s->r.values_read++;
    if (m == M_STALL) {
        char nm[160], reason[96];
        rd_copy(nm, sizeof nm, name, nn);
        int kind = stall_reason(nm, reason, sizeof reason);
        add_stall(l, reason, kind == 1 ? v : NAN, kind == 2 ? v : NAN);
        return;
    }
    if (m <= M_TENSOR) { /* the total and its source precision */
        int part = M_TENSOR - m;
        l->v[EV_NCU_TENSOR_OPS] = isnan(l->v[EV_NCU_TENSOR_OPS]) ? v : l->v[EV_NCU_TENSOR_OPS] + v;
        if (part > 0)
            l->v[part] = isnan(l->v[part]) ? v : l->v[part] + v;
        return;
    }
    if (isnan(l->v[m])) /* the first occurrence (a section and a --metrics row may both hold it) */
        l->v[m] = v;
}

/* A metric given by name, unit and value (details CSV and text rows). */
static void metric(nst *s, ev_ncu_launch *l, const char *name, size_t nn, const char *unit, size_t un,
                   const char *val, size_t vn, uint32_t line)
{
    int dim, unitless;
    double mul, scale = 1;
    if (rd_ncu_unit(unit, un, &dim, &mul, &unitless) < 0) {
        int m = map_name(name, nn, EV_NCU_D_COUNT, false, &scale);
        if (m == M_NONE)
            unmapped(s, name, nn);
        else
            rd_note(dg(s), DIAG_EVIDENCE_BAD_VALUE, s->name, line); /* a unit we do not know */
        return;
    }
    int m = map_name(name, nn, dim, unitless, &scale);
    if (m == M_NONE) {
        unmapped(s, name, nn);
        return;
    }
    if (m == M_WRONG_DIM) {
        rd_note(dg(s), DIAG_EVIDENCE_BAD_VALUE, s->name, line);
        return;
    }
    store(s, l, m, scale, mul, unitless, val, vn, line, name, nn);
}

static void add_rule(nst *s, ev_ncu_launch *l, const char *type, size_t tn, const char *name, size_t nn,
                     const char *text, size_t xn, double speedup, uint32_t line)
{
    s->rule = NULL;
    if (l->n_rules >= EV_NCU_MAX_RULES) {
        l->rules_dropped++;
        return;
    }
    ev_ncu_rule *r = &l->rules[l->n_rules++];
    memset(r, 0, sizeof *r);
    rd_copy(r->type, sizeof r->type, type, tn);
    rd_copy(r->name, sizeof r->name, name, nn);
    rd_copy(r->text, sizeof r->text, text, xn);
    r->speedup_pct = speedup;
    r->line = line;
    s->rule = r;
    s->rule_len = strlen(r->text);
}

/* ---- CSV forms --------------------------------------------------------- */

/* Split one CSV line into s->cells (quotes removed from the view, "" kept
 * as two bytes). Returns the number of cells, -1 for an unterminated quote. */
static int csv_split(nst *s, const char *p, size_t n)
{
    if (!s->cells)
        s->cells = cp_xcalloc(NCU_MAX_COLS, sizeof *s->cells);
    int k = 0;
    size_t i = 0;
    for (;;) {
        if (k >= NCU_MAX_COLS)
            return k;
        cell *c = &s->cells[k++];
        c->quoted = false;
        if (i < n && p[i] == '"') {
            size_t j = i + 1;
            for (;;) {
                if (j >= n)
                    return -1;
                if (p[j] == '"') {
                    if (j + 1 < n && p[j + 1] == '"') {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j++;
            }
            c->p = p + i + 1;
            c->len = (uint32_t)(j - i - 1);
            c->quoted = true;
            i = j + 1;
        } else {
            size_t j = i;
            while (j < n && p[j] != ',')
                j++;
            c->p = p + i;
            c->len = (uint32_t)(j - i);
            i = j;
        }
        if (i >= n)
            return k;
        if (p[i] != ',')
            return -1; /* text after a closing quote */
        i++;
        if (i == n) { /* trailing comma: one empty cell */
            if (k < NCU_MAX_COLS)
                s->cells[k++] = (cell){p + n, 0, false};
            return k;
        }
    }
}

static int cell_eq(const cell *c, const char *w) { return strlen(w) == c->len && memcmp(c->p, w, c->len) == 0; }

static const cell *col(nst *s, int n, int c) { return c >= 0 && c < n ? &s->cells[c] : NULL; }

static void header(nst *s, int n)
{
    static const struct { const char *name; size_t off; } k_cols[] = {
        {"ID", offsetof(nst, c_id)}, {"Process ID", offsetof(nst, c_pid)},
        {"Kernel Name", offsetof(nst, c_kernel)}, {"Context", offsetof(nst, c_ctx)},
        {"Stream", offsetof(nst, c_stream)}, {"Block Size", offsetof(nst, c_block)},
        {"Grid Size", offsetof(nst, c_grid)}, {"Device", offsetof(nst, c_dev)}, {"CC", offsetof(nst, c_cc)},
        {"Section Name", offsetof(nst, c_section)}, {"Metric Name", offsetof(nst, c_mname)},
        {"Metric Unit", offsetof(nst, c_munit)}, {"Metric Value", offsetof(nst, c_mval)},
        {"Rule Name", offsetof(nst, c_rname)}, {"Rule Type", offsetof(nst, c_rtype)},
        {"Rule Description", offsetof(nst, c_rdesc)}, {"Estimated Speedup", offsetof(nst, c_speedup)},
        {"device__attribute_display_name", offsetof(nst, c_display)},
    };
    for (size_t k = 0; k < sizeof k_cols / sizeof k_cols[0]; k++)
        *(int *)((char *)s + k_cols[k].off) = -1;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof k_cols / sizeof k_cols[0]; k++)
            if (cell_eq(&s->cells[i], k_cols[k].name))
                *(int *)((char *)s + k_cols[k].off) = i;
    s->ncol = n;
    if (s->c_mname >= 0 && s->c_mval >= 0) {
        s->form = F_DETAILS;
        s->r.form = EV_NCU_FORM_DETAILS_CSV;
        return;
    }
    s->form = F_RAW;
    s->r.form = EV_NCU_FORM_RAW_CSV;
    free(s->raw);
    s->raw = cp_xcalloc((size_t)n, sizeof *s->raw);
    s->raw_units = false;
    for (int i = 0; i < n; i++) {
        s->raw[i].metric = M_NONE;
        s->raw[i].mul = 1;
    }
}

/* Identification columns every CSV row carries. */
static void ident(nst *s, ev_ncu_launch *l, int n)
{
    const cell *c;
    if ((c = col(s, n, s->c_kernel)) && c->len)
        set_name(l, c->p, c->len, c->quoted);
    if ((c = col(s, n, s->c_pid))) {
        int64_t v;
        if (rd_i64(c->p, c->len, &v) == 0)
            l->pid = v;
    }
    if ((c = col(s, n, s->c_ctx)))
        l->context = small_int(c->p, c->len, l->context);
    if ((c = col(s, n, s->c_stream)))
        l->stream = small_int(c->p, c->len, l->stream);
    if ((c = col(s, n, s->c_dev)))
        l->device = small_int(c->p, c->len, l->device);
    if ((c = col(s, n, s->c_cc)) && l->cc_major < 0)
        parse_cc(l, c->p, c->len);
    if ((c = col(s, n, s->c_grid)) && !l->grid[0])
        (void)parse_dim3(c->p, c->len, l->grid);
    if ((c = col(s, n, s->c_block)) && !l->block[0])
        (void)parse_dim3(c->p, c->len, l->block);
    if ((c = col(s, n, s->c_display)) && !l->device_name[0])
        rd_copy(l->device_name, sizeof l->device_name, c->p, c->len);
}

static ev_ncu_launch *launch_by_id(nst *s, long id, uint32_t line)
{
    for (size_t i = s->r.n; i-- > 0;) /* rows of one launch are adjacent: the last is the usual hit */
        if (s->r.launches[i].id == id)
            return &s->r.launches[i];
    return new_launch(s, id, line);
}

static void details_row(nst *s, int n, long id, uint32_t line)
{
    ev_ncu_launch *l = launch_by_id(s, id, line);
    if (!l)
        return;
    ident(s, l, n);
    const cell *mn = col(s, n, s->c_mname), *mu = col(s, n, s->c_munit), *mv = col(s, n, s->c_mval);
    if (mn && mn->len && mv) {
        metric(s, l, mn->p, mn->len, mu ? mu->p : "", mu ? mu->len : 0, mv->p, mv->len, line);
        return;
    }
    const cell *rn = col(s, n, s->c_rname), *rt = col(s, n, s->c_rtype), *rd = col(s, n, s->c_rdesc);
    const cell *sp = col(s, n, s->c_speedup);
    if (rn && rn->len) {
        double v = NAN;
        if (sp && sp->len && rd_ncu_value(sp->p, sp->len, &v) != 0)
            v = NAN;
        add_rule(s, l, rt ? rt->p : "", rt ? rt->len : 0, rn->p, rn->len, rd ? rd->p : "", rd ? rd->len : 0, v,
                 line);
        s->rule = NULL;
    } /* a section row without metric or rule (the section's own line) says nothing */
}

/* The units row: each column's dimension and multiplier (a unitless column
 * is encoded as -10 - dim until raw_resolve maps its name). */
static void raw_units(nst *s, int n)
{
    for (int i = 0; i < s->ncol && i < n; i++) {
        int dim, unitless;
        double mul;
        const cell *u = &s->cells[i];
        if (rd_ncu_unit(u->p, u->len, &dim, &mul, &unitless) < 0) {
            s->raw[i].metric = M_WRONG_DIM;
            continue;
        }
        s->raw[i].mul = mul;
        s->raw[i].metric = unitless ? -10 - dim : dim;
    }
}

static void raw_row(nst *s, int n, long id, uint32_t line)
{
    ev_ncu_launch *l = new_launch(s, id, line);
    if (!l)
        return;
    ident(s, l, n);
    for (int i = 0; i < s->ncol && i < n; i++) {
        int m = s->raw[i].metric;
        if (m == M_NONE || m == M_WRONG_DIM || i == s->c_id)
            continue;
        const cell *c = &s->cells[i];
        const char *nm = s->raw_names ? s->raw_names[i] : "";
        store(s, l, m, s->raw[i].mul, s->raw[i].mul, false, c->p, c->len, line, nm, strlen(nm));
    }
}

/* ---- text form --------------------------------------------------------- */

static size_t indent(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && p[i] == ' ')
        i++;
    return i;
}

/* A table frame "---- ---- ----": three dash groups -> their end offsets. */
static int dash_line(nst *s, const char *p, size_t n)
{
    size_t i = indent(p, n), groups = 0, ends[3] = {0, 0, 0};
    if (i >= n || p[i] != '-')
        return 0;
    while (i < n) {
        if (p[i] != '-')
            return 0;
        while (i < n && p[i] == '-')
            i++;
        if (groups < 3)
            ends[groups] = i;
        groups++;
        while (i < n && p[i] == ' ')
            i++;
    }
    if (groups != 3)
        return -1; /* the rule separator "----- -----" (two groups) */
    memcpy(s->col_end, ends, sizeof ends);
    return 1;
}

/* "name (g)x(b), Context 1, Stream 7, Device 0, CC 8.0" or the 2022 form
 * "name, 2022-Jun-02 19:46:33, Context 1, Stream 7". */
static void kernel_line(nst *s, const char *p, size_t n, uint32_t line)
{
    const char *ctx = rd_find(p, n, ", Context ");
    ev_ncu_launch *l = new_launch(s, -1, line);
    if (!l)
        return;
    s->cur = l;
    s->in_table = false;
    s->rule = NULL;
    size_t head = (size_t)(ctx - p);
    const char *x = NULL;
    for (size_t i = 0; i + 3 <= head; i++)
        if (p[i] == ')' && p[i + 1] == 'x' && p[i + 2] == '(')
            x = p + i;
    size_t name_end = head;
    if (x && p[head - 1] == ')') {
        const char *g = x;
        while (g > p && *g != '(')
            g--;
        if (parse_dim3(g, (size_t)(x + 1 - g), l->grid) == 0 &&
            parse_dim3(x + 2, head - (size_t)(x + 2 - p), l->block) == 0)
            name_end = (size_t)(g - p);
    } else { /* ", <date>" before Context: the name ends at the last ", " followed by a digit */
        for (size_t i = head; i-- > 1;)
            if (p[i - 1] == ',' && p[i] == ' ' && i + 1 < head && p[i + 1] >= '0' && p[i + 1] <= '9') {
                name_end = i - 1;
                break;
            }
    }
    const char *nm = p;
    size_t nl = name_end;
    rd_trim(&nm, &nl);
    set_name(l, nm, nl, false);
    /* the fields after the name: "Context 1, Stream 7, Device 0, CC 8.0" */
    const char *q = ctx + 2, *end = p + n;
    while (q < end) {
        const char *c = memchr(q, ',', (size_t)(end - q));
        size_t fl = c ? (size_t)(c - q) : (size_t)(end - q);
        const char *f = q;
        rd_trim(&f, &fl);
        const char *sp = memchr(f, ' ', fl);
        if (sp) {
            size_t kl = (size_t)(sp - f), vl = fl - kl - 1;
            if (word_is(f, kl, "Context"))
                l->context = small_int(sp + 1, vl, -1);
            else if (word_is(f, kl, "Stream"))
                l->stream = small_int(sp + 1, vl, -1);
            else if (word_is(f, kl, "Device"))
                l->device = small_int(sp + 1, vl, -1);
            else if (word_is(f, kl, "CC"))
                parse_cc(l, sp + 1, vl);
        }
        q = c ? c + 1 : end;
    }
}

static void text_rule(nst *s, const char *p, size_t n, uint32_t line)
{
    size_t tl = 0;
    while (tl < n && p[tl] != ' ')
        tl++;
    const char *body = p + tl;
    size_t bl = n - tl;
    rd_trim(&body, &bl);
    double speedup = NAN;
    const char *es = rd_find(body, bl, "Estimated Speedup: ");
    if (es) {
        const char *v = es + 19, *e = v;
        while (e < body + bl && *e != '%' && *e != ' ')
            e++;
        double d;
        if (rd_num(v, (size_t)(e - v), &d) == 0)
            speedup = d;
    }
    if (s->cur)
        add_rule(s, s->cur, p, tl, "", 0, body, bl, speedup, line);
}

static bool is_rule_tag(const char *p, size_t n)
{
    static const char *const tags[] = {"OPT ", "WRN ", "INF ", "ERROR ", "WARNING "};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (rd_starts(p, n, tags[i]))
            return true;
    return false;
}

static void text_line(nst *s, const char *p, size_t n, uint32_t line)
{
    size_t in = indent(p, n);
    const char *t = p + in;
    size_t tn = n - in;
    while (tn && t[tn - 1] == ' ')
        tn--;
    if (tn == 0) {
        s->rule = NULL;
        return;
    }
    if (t[0] == '[' && rd_find(t, tn, "] ") && rd_find(t, tn, "@")) { /* "[5341] matrix_sums@127.0.0.1" */
        int64_t pid;
        const char *e = memchr(t, ']', tn);
        if (e && rd_i64(t + 1, (size_t)(e - t - 1), &pid) == 0)
            s->pid = pid;
        s->cur = NULL;
        return;
    }
    if (rd_find(t, tn, ", Context ") && rd_find(t, tn, ", Stream ") && !rd_starts(t, tn, "Section:")) {
        kernel_line(s, t, tn, line);
        return;
    }
    if (!s->cur)
        return; /* the program's own output, ==PROF== lines */
    if (rd_starts(t, tn, "Section: ")) {
        s->in_table = false;
        s->rule = NULL;
        return;
    }
    int d = dash_line(s, p, n);
    if (d) {
        s->rule = NULL;
        if (d < 0)
            return;
        if (!s->in_table)
            s->in_table = true, s->last_header = false;
        else if (!s->last_header)
            s->in_table = false;
        else
            s->last_header = false;
        return;
    }
    if (is_rule_tag(t, tn)) {
        s->in_table = false;
        text_rule(s, t, tn, line);
        return;
    }
    if (s->in_table) {
        size_t e0 = s->col_end[0] < n ? s->col_end[0] : n, e1 = s->col_end[1] < n ? s->col_end[1] : n;
        const char *name = p, *unit = p + e0, *val = p + e1;
        size_t nl = e0, ul = e1 - e0, vl = n - e1;
        rd_trim(&name, &nl);
        if (rd_starts(name, nl, "Metric Name")) {
            s->last_header = true;
            return;
        }
        s->last_header = false;
        if (!nl)
            return;
        metric(s, s->cur, name, nl, unit, ul, val, vl, line);
        return;
    }
    if (s->rule && in >= 6 && s->rule_len + 1 < sizeof s->rule->text) { /* a rule paragraph goes on */
        size_t room = sizeof s->rule->text - s->rule_len - 1;
        s->rule->text[s->rule_len++] = ' ';
        rd_copy(s->rule->text + s->rule_len, room, t, tn);
        s->rule_len = strlen(s->rule->text);
    }
}

/* ---- the reader contract ----------------------------------------------- */

static void raw_header_names(nst *s, int n)
{
    if (!s->raw_names)
        s->raw_names = cp_xcalloc(NCU_MAX_COLS, sizeof *s->raw_names);
    for (int i = 0; i < n; i++)
        rd_copy(s->raw_names[i], sizeof s->raw_names[i], s->cells[i].p, s->cells[i].len);
}

/* After the units row: each column's name against its unit's dimension. */
static void raw_resolve(nst *s)
{
    for (int i = 0; i < s->ncol; i++) {
        int code = s->raw[i].metric;
        if (i == s->c_id || i == s->c_pid || i == s->c_kernel || i == s->c_ctx || i == s->c_stream ||
            i == s->c_block || i == s->c_grid || i == s->c_dev || i == s->c_cc || i == s->c_display ||
            !strstr(s->raw_names[i], "__")) { /* identification columns; metrics all have "__" */
            s->raw[i].metric = M_NONE;
            continue;
        }
        const char *nm = s->raw_names[i];
        size_t nl = strlen(nm);
        if (code == M_WRONG_DIM) { /* unknown unit */
            double sc;
            if (map_name(nm, nl, EV_NCU_D_COUNT, false, &sc) != M_NONE)
                rd_note(dg(s), DIAG_EVIDENCE_BAD_VALUE, s->name, 0);
            else
                unmapped(s, nm, nl);
            s->raw[i].metric = M_NONE;
            continue;
        }
        bool unitless = code <= -10;
        int dim = unitless ? -10 - code : code;
        double sc = 1;
        int m = map_name(nm, nl, dim, unitless, &sc);
        if (m == M_NONE)
            unmapped(s, nm, nl);
        else if (m == M_WRONG_DIM)
            rd_note(dg(s), DIAG_EVIDENCE_BAD_VALUE, s->name, 0);
        s->raw[i].metric = m < 0 && m > M_TENSOR ? M_NONE : m;
        if (unitless && m >= 0)
            s->raw[i].mul = sc;
    }
}

static void csv_line_ctx(nst *s, const char *p, size_t len, uint32_t line)
{
    int n = csv_split(s, p, len);
    if (n < 0) {
        rd_note(dg(s), DIAG_EVIDENCE_BAD_ROW, s->name, line);
        return;
    }
    if (n >= 2 && cell_eq(&s->cells[0], "ID") && cell_eq(&s->cells[1], "Process ID")) {
        header(s, n);
        if (s->form == F_RAW)
            raw_header_names(s, n);
        return;
    }
    if (s->form == F_RAW && !s->raw_units) {
        raw_units(s, n);
        raw_resolve(s);
        s->raw_units = true;
        if (n >= 1 && s->cells[0].len == 0)
            return; /* the units row (no ID) */
    }
    const cell *idc = col(s, n, s->c_id);
    int64_t id;
    if (!idc || rd_i64(idc->p, idc->len, &id) < 0 || id < 0) {
        rd_note(dg(s), DIAG_EVIDENCE_BAD_ROW, s->name, line);
        return;
    }
    if (s->form == F_DETAILS && n < s->c_mval + 1) {
        rd_note(dg(s), DIAG_EVIDENCE_BAD_ROW, s->name, line);
        return;
    }
    if (s->form == F_DETAILS)
        details_row(s, n, (long)id, line);
    else
        raw_row(s, n, (long)id, line);
}

void rd_ncu_line(void *ctx, const rd_line *ln)
{
    nst *s = ctx;
    const char *p = ln->text;
    size_t n = ln->len;
    uint32_t line = (uint32_t)ln->no;
    if (n >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
        p += 3, n -= 3; /* UTF-8 BOM */
    if (rd_starts(p, n, "==PROF==") || rd_starts(p, n, "==WARNING==") || rd_starts(p, n, "==ERROR=="))
        return;
    if (rd_starts(p, n, "\"ID\",\"Process ID\"")) {
        csv_line_ctx(s, p, n, line);
        return;
    }
    if (s->form == F_DETAILS || s->form == F_RAW) {
        if (n && p[0] == '"')
            csv_line_ctx(s, p, n, line);
        return; /* the program's own output between CSV rows */
    }
    if (s->form == F_NONE || s->form == F_TEXT) {
        bool was = s->cur != NULL;
        text_line(s, p, n, line);
        if (!was && s->cur && s->form == F_NONE) {
            s->form = F_TEXT;
            s->r.form = EV_NCU_FORM_TEXT;
        }
    }
}

void *rd_ncu_begin(const char *name)
{
    nst *s = cp_xcalloc(1, sizeof *s);
    s->name = cp_xstrdup(name ? name : "");
    s->pid = -1;
    s->c_id = -1;
    diag_init(&s->local);
    return s;
}

/* ncu's CPIStall rule: "each warp of this kernel spends 12.2 cycles being
 * stalled waiting for a scoreboard dependency on a L1TEX (...) operation."
 * -> a stall with its words and cycles, when the counters did not give it. */
static void rule_stalls(ev_ncu_launch *l)
{
    static const char mid[] = " cycles being stalled ";
    for (int i = 0; i < l->n_rules; i++) {
        const char *t = l->rules[i].text, *m = strstr(t, mid), *sp = strstr(t, "spends ");
        if (!m || !sp || sp > m)
            continue;
        double cyc;
        if (rd_num(sp + 7, (size_t)(m - sp - 7), &cyc) < 0)
            continue;
        const char *why = m + sizeof mid - 1, *end = why;
        int paren = 0;
        while (*end && !(paren == 0 && *end == '.' && (end[1] == ' ' || !end[1]))) {
            paren += *end == '(' ? 1 : *end == ')' ? -1 : 0;
            end++;
        }
        char reason[96];
        rd_copy(reason, sizeof reason, why, (size_t)(end - why));
        add_stall(l, reason, cyc, NAN);
    }
}

/* Totals the file gives in parts. */
static void finish_launch(ev_ncu_launch *l)
{
    double *v = l->v;
    rule_stalls(l);
    if (isnan(v[EV_NCU_DRAM_BYTES]) && !isnan(v[EV_NCU_DRAM_READ_BYTES]) && !isnan(v[EV_NCU_DRAM_WRITE_BYTES]))
        v[EV_NCU_DRAM_BYTES] = v[EV_NCU_DRAM_READ_BYTES] + v[EV_NCU_DRAM_WRITE_BYTES];
    if (isnan(v[EV_NCU_GRID_SIZE]) && l->grid[0])
        v[EV_NCU_GRID_SIZE] = (double)l->grid[0] * l->grid[1] * l->grid[2];
    if (isnan(v[EV_NCU_BLOCK_SIZE]) && l->block[0])
        v[EV_NCU_BLOCK_SIZE] = (double)l->block[0] * l->block[1] * l->block[2];
    if (!l->name)
        l->name = cp_xstrdup("");
}

void *rd_ncu_end(void *ctx, diag_set *diag)
{
    nst *s = ctx;
    ev_ncu *r = NULL;
    if (s->r.n) {
        r = cp_xmalloc(sizeof *r);
        *r = s->r;
        for (size_t i = 0; i < r->n; i++)
            finish_launch(&r->launches[i]);
        diag_merge(diag, &s->local);
    } else {
        for (size_t i = 0; i < s->r.n; i++)
            free(s->r.launches[i].name);
        free(s->r.launches);
    }
    free(s->cells);
    free(s->raw);
    free(s->seen);
    free(s->name);
    free(s->raw_names);
    free(s);
    return r;
}

int rd_ncu_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    if (rd_find(buf, len, "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\""))
        return 95;
    int score = 0;
    if (rd_find(buf, len, "==PROF== "))
        score += 40;
    if (rd_find(buf, len, "    Section: "))
        score += 40;
    if (rd_find(buf, len, ", Context ") && rd_find(buf, len, ", Stream "))
        score += 30;
    return score > 100 ? 100 : score;
}
