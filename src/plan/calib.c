/* calib.c - published-run validation of the performance model (see calib.h):
 * read the CSVs, model every row (calib_row.c), score the shipped
 * constants, refit the few physical constants without each source in turn
 * and predict that source (leave-one-source-out).
 *
 * The fit: coordinate descent over the constants of k_params, each within
 * physical bounds, starting from its documented prior, minimising the mean
 * Huber loss of log(predicted / measured step time) with every source
 * weighted equally (so a suite with 200 rows does not outvote a paper with
 * 9). Layouts the planner had to choose are kept fixed while fitting and
 * chosen again with the fold's constants before the left-out rows are
 * predicted, so a held-out row never sees constants fitted on itself.
 */
#include "plan/calib_int.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/src.h"
#include "base/util.h"

/* The fitted constants: name, meaning, field, physical bounds, prior. */
static const struct {
    const char *name, *what;
    size_t off;
    double lo, hi, prior;
} k_params[] = {
    {"gemm_sustain", "sustained / burst (MAMF) GEMM rate", offsetof(plan_defaults, gemm_sustain), 0.80, 1.0, 0.95},
    {"attn_frac", "native fused attention forward / dense peak", offsetof(plan_defaults, attn_frac), 0.35, 0.80, 0.55},
    {"mem_eff", "achieved / peak HBM bandwidth", offsetof(plan_defaults, mem_eff), 0.60, 0.90, 0.80},
    {"overlap_cost", "compute slowdown per second of hidden communication", offsetof(plan_defaults, overlap_cost),
     0.0, 0.5, 0.2},
    {"fp8_rel", "FP8 GEMM efficiency / BF16 GEMM efficiency", offsetof(plan_defaults, fp8_rel), 0.60, 1.0, 0.83},
    {"kernel_s", "launch and tail per kernel (s; shown in us)", offsetof(plan_defaults, kernel_s), 2e-6, 30e-6, 10e-6},
    {"ew_h_bytes", "elementwise bytes per token and layer, x hidden (fused)", offsetof(plan_defaults, ew_h_bytes), 20,
     120, 60},
    {"ew_eager_h_bytes", "the same, eager PyTorch", offsetof(plan_defaults, ew_eager_h_bytes), 40, 200, 90},
    {"net_train_eff", "network busbw in training / in nccl-tests", offsetof(plan_defaults, net_train_eff), 0.5, 1.0,
     1.0},
    {"fsdp_overlap", "share of compute that hides ZeRO-3/FSDP traffic", offsetof(plan_defaults, fsdp_overlap), 0.2,
     1.0, 0.5},
};
#define NPARAMS (sizeof k_params / sizeof *k_params)

static double getp(const plan_defaults *k, size_t i)
{
    double v;
    memcpy(&v, (const char *)k + k_params[i].off, sizeof v);
    return v;
}

static void setp(plan_defaults *k, size_t i, double v) { memcpy((char *)k + k_params[i].off, &v, sizeof v); }

static void prior(plan_defaults *k)
{
    *k = *plan_defaults_get();
    for (size_t i = 0; i < NPARAMS; i++) setp(k, i, k_params[i].prior);
}


/* ---- the data set ----------------------------------------------------- */

typedef struct dataset {
    calib_case *cases;
    int n;
    size_t cap;
    int src_rows[PLAN_CALIB_MAX_SOURCES]; /* modelled rows per source */
} dataset;

static int source_index(plan_calib_summary *sum, const char *key)
{
    for (int i = 0; i < sum->n_sources; i++)
        if (strcmp(sum->sources[i].key, key) == 0) return i;
    if (sum->n_sources >= PLAN_CALIB_MAX_SOURCES) return PLAN_CALIB_MAX_SOURCES - 1; /* the last absorbs the rest */
    plan_calib_source *s = &sum->sources[sum->n_sources];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    s->median_abs_err = s->mean_abs_err = s->max_abs_err = s->loso_median_abs_err = s->loso_max_abs_err = NAN;
    return sum->n_sources++;
}

/* Header -> column map; -1 with err when a required column is missing. */
static int map_header(char *line, const char *name, int *col, char *err, int errsz)
{
    char *f[CALIB_MAXCOLS];
    int nh = calib_split_csv(line, f, CALIB_MAXCOLS);
    for (int c = 0; c < C_NCOLS; c++) {
        col[c] = -1;
        for (int i = 0; i < nh; i++)
            if (strcmp(f[i], calib_cols[c]) == 0) col[c] = i;
    }
    static const int required[] = {C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_SEQ, C_GPU, C_NGPU};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (col[required[i]] < 0) {
            snprintf(err, (size_t)errsz, "%s:1: header lacks column '%s'", name, calib_cols[required[i]]);
            return -1;
        }
    return 0;
}

/* Read one CSV's rows into rows[] and the data set. */
static int load(const char *data, size_t len, const char *name, int file, dataset *ds, plan_calib_row *rows,
                int cap, plan_calib_summary *sum, char *err, int errsz)
{
    const char *p = data, *end = data + len;
    int col[C_NCOLS];
    char *line = calib_next_line(&p, end);
    if (!line) {
        snprintf(err, (size_t)errsz, "%s:1: empty file", name);
        return -1;
    }
    int rc = map_header(line, name, col, err, errsz);
    free(line);
    if (rc < 0) return -1;
    char *f[CALIB_MAXCOLS];
    for (long lineno = 2; (line = calib_next_line(&p, end)) != NULL; lineno++) {
        if (!line[0]) {
            free(line);
            continue;
        }
        if (sum->rows >= PLAN_CALIB_MAX_ROWS || sum->rows >= cap) {
            sum->truncated = 1;
            free(line);
            break;
        }
        int nf = calib_split_csv(line, f, CALIB_MAXCOLS);
        plan_calib_row *r = &rows[sum->rows];
        memset(r, 0, sizeof *r);
        r->line = lineno, r->file = file;
        r->err = r->loso_err = r->predicted = r->loso_predicted = NAN;
        r->mem_measured_bytes = r->mem_predicted_bytes = NAN;
        calib_case cs;
        int ok = calib_interpret(f, nf, col, r, &cs) == 0 && calib_resolve(&cs, NULL, r) == 0;
        if (ok) {
            cs.src = source_index(sum, r->source);
            cs.row = sum->rows;
            cp_xgrow((void **)&ds->cases, &ds->cap, (size_t)ds->n + 1, sizeof *ds->cases);
            ds->cases[ds->n++] = cs;
        } else {
            sum->skipped++;
            sum->sources[source_index(sum, r->source)].rows++;
        }
        sum->rows++;
        free(line);
    }
    return 0;
}

/* ---- fitting ---------------------------------------------------------- */

static double huber_log(double e)
{
    if (!(e > -1.0)) return 2.0; /* refused or absurd: a large, bounded penalty */
    double x = fabs(log1p(e)), d = 0.1;
    return x < d ? x * x / (2 * d) : x - d / 2;
}

/* Mean loss over the cases not in source `skip` (-1: none skipped), every
 * source weighted equally. */
static double objective(const dataset *ds, int skip, const plan_defaults *k)
{
    double tot = 0, wsum = 0;
    for (int i = 0; i < ds->n; i++) {
        const calib_case *c = &ds->cases[i];
        if (c->src == skip || ds->src_rows[c->src] <= 0) continue;
        double fig, w = 1.0 / ds->src_rows[c->src];
        tot += w * huber_log(calib_predict(c, k, &fig, NULL));
        wsum += w;
    }
    return wsum > 0 ? tot / wsum : INFINITY;
}

/* Coordinate descent from the prior within the bounds: a coarse grid over
 * the whole range, then two finer grids around the best point. */
static void fit(const dataset *ds, int skip, plan_defaults *k)
{
    prior(k);
    double best = objective(ds, skip, k);
    static const double span[] = {1.0, 0.25, 0.06};
    enum { GRID = 9 };
    for (size_t sweep = 0; sweep < sizeof span / sizeof *span; sweep++) {
        for (size_t i = 0; i < NPARAMS; i++) {
            double lo = k_params[i].lo, hi = k_params[i].hi, cur = getp(k, i);
            double w = (hi - lo) * span[sweep];
            double a = cur - w / 2 < lo ? lo : cur - w / 2, b = cur + w / 2 > hi ? hi : cur + w / 2;
            if (sweep == 0) a = lo, b = hi;
            double bestv = cur;
            for (int g = 0; g < GRID; g++) {
                double v = a + (b - a) * g / (GRID - 1);
                setp(k, i, v);
                double o = objective(ds, skip, k);
                if (o < best - 1e-12) best = o, bestv = v;
            }
            setp(k, i, bestv);
        }
    }
}

/* ---- reporting -------------------------------------------------------- */

static void score_shipped(dataset *ds, plan_calib_row *rows, plan_calib_summary *sum)
{
    for (int i = 0; i < ds->n; i++) {
        calib_case *c = &ds->cases[i];
        plan_calib_row *r = &rows[c->row];
        double fig;
        r->err = calib_predict(c, NULL, &fig, NULL);
        r->predicted = fig;
        if (isnan(r->err)) {
            snprintf(r->why, sizeof r->why, "the model refused the resolved layout");
            sum->skipped++;
            continue;
        }
        sum->used++;
        ds->src_rows[c->src]++;
    }
}

/* Leave each source out in turn: fit on the others, predict it. */
static void loso(dataset *ds, plan_calib_row *rows, plan_calib_summary *sum)
{
    for (int s = 0; s < sum->n_sources; s++) {
        if (ds->src_rows[s] <= 0) continue;
        int others = 0;
        for (int t = 0; t < sum->n_sources; t++) others += t != s && ds->src_rows[t] > 0;
        if (!others) continue;
        plan_defaults k;
        fit(ds, s, &k);
        for (size_t i = 0; i < NPARAMS && i < PLAN_CALIB_MAX_PARAMS; i++) {
            double v = getp(&k, i);
            plan_calib_param *p = &sum->params[i];
            if (isnan(p->fold_min) || v < p->fold_min) p->fold_min = v;
            if (isnan(p->fold_max) || v > p->fold_max) p->fold_max = v;
        }
        for (int i = 0; i < ds->n; i++) {
            calib_case c = ds->cases[i];
            plan_calib_row *r = &rows[c.row];
            if (c.src != s || isnan(r->err)) continue;
            if (c.searched && calib_resolve(&c, &k, NULL) < 0) continue;
            double fig;
            r->loso_err = calib_predict(&c, &k, &fig, NULL);
            r->loso_predicted = fig;
        }
    }
}

static void summarise(const dataset *ds, const plan_calib_row *rows, plan_calib_summary *sum)
{
    int n = sum->rows;
    double *a = cp_xcalloc((size_t)n + 1, sizeof *a), *b = cp_xcalloc((size_t)n + 1, sizeof *b);
    double *m = cp_xcalloc((size_t)n + 1, sizeof *m);
    int na = 0, nb = 0, nm = 0;
    double ta = 0, tb = 0;
    for (int i = 0; i < ds->n; i++) {
        const plan_calib_row *r = &rows[ds->cases[i].row];
        if (isnan(r->err)) continue;
        double e = fabs(r->err);
        a[na++] = e, ta += e;
        if (isnan(sum->max_abs_err) || e > sum->max_abs_err)
            sum->max_abs_err = e, sum->worst_line = r->line, sum->worst_file = r->file;
        if (!isnan(r->loso_err)) {
            double l = fabs(r->loso_err);
            b[nb++] = l, tb += l;
            if (isnan(sum->loso_max_abs_err) || l > sum->loso_max_abs_err) sum->loso_max_abs_err = l;
        }
        if (!isnan(r->mem_measured_bytes) && r->mem_measured_bytes > 0) {
            double me = fabs(r->mem_predicted_bytes - r->mem_measured_bytes) / r->mem_measured_bytes;
            m[nm++] = me;
            if (isnan(sum->mem_max_abs_err) || me > sum->mem_max_abs_err) sum->mem_max_abs_err = me;
        }
    }
    sum->mean_abs_err = na ? ta / na : NAN;
    sum->median_abs_err = calib_median(a, na);
    sum->loso_used = nb;
    sum->loso_mean_abs_err = nb ? tb / nb : NAN;
    sum->loso_median_abs_err = calib_median(b, nb);
    sum->mem_rows = nm;
    sum->mem_median_abs_err = calib_median(m, nm);
    /* per source */
    for (int s = 0; s < sum->n_sources; s++) {
        plan_calib_source *src = &sum->sources[s];
        na = nb = 0, ta = 0;
        for (int i = 0; i < ds->n; i++) {
            const plan_calib_row *r = &rows[ds->cases[i].row];
            if (ds->cases[i].src != s) continue;
            src->rows++;
            if (isnan(r->err)) continue;
            src->used++;
            a[na++] = fabs(r->err), ta += fabs(r->err);
            if (isnan(src->max_abs_err) || fabs(r->err) > src->max_abs_err) src->max_abs_err = fabs(r->err);
            if (!isnan(r->loso_err)) {
                b[nb++] = fabs(r->loso_err);
                if (isnan(src->loso_max_abs_err) || fabs(r->loso_err) > src->loso_max_abs_err)
                    src->loso_max_abs_err = fabs(r->loso_err);
            }
        }
        src->mean_abs_err = na ? ta / na : NAN;
        src->median_abs_err = calib_median(a, na);
        src->loso_median_abs_err = calib_median(b, nb);
    }
    free(a), free(b), free(m);
}

static void init_summary(plan_calib_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->median_abs_err = sum->max_abs_err = sum->mean_abs_err = NAN;
    sum->loso_median_abs_err = sum->loso_mean_abs_err = sum->loso_max_abs_err = NAN;
    sum->fit_median_abs_err = NAN;
    sum->mem_median_abs_err = sum->mem_max_abs_err = NAN;
    sum->n_params = (int)(NPARAMS < PLAN_CALIB_MAX_PARAMS ? NPARAMS : PLAN_CALIB_MAX_PARAMS);
    for (int i = 0; i < sum->n_params; i++) {
        plan_calib_param *p = &sum->params[i];
        p->name = k_params[i].name, p->what = k_params[i].what;
        p->prior = k_params[i].prior, p->lo = k_params[i].lo, p->hi = k_params[i].hi;
        p->shipped = getp(plan_defaults_get(), (size_t)i);
        p->fitted_all = p->fold_min = p->fold_max = NAN;
    }
}

/* Everything after loading: score, fit on all, leave-one-source-out. */
static void evaluate(dataset *ds, const plan_calib_opts *o, plan_calib_row *rows, plan_calib_summary *sum)
{
    score_shipped(ds, rows, sum);
    if (o && o->loso && ds->n > 0) {
        plan_defaults k;
        fit(ds, -1, &k);
        double *e = cp_xcalloc((size_t)ds->n, sizeof *e);
        int ne = 0;
        for (int i = 0; i < ds->n; i++) {
            double fig, v = calib_predict(&ds->cases[i], &k, &fig, NULL);
            if (!isnan(v) && !isnan(rows[ds->cases[i].row].err)) e[ne++] = fabs(v);
        }
        sum->fit_median_abs_err = calib_median(e, ne);
        free(e);
        for (int i = 0; i < sum->n_params; i++) sum->params[i].fitted_all = getp(&k, (size_t)i);
        loso(ds, rows, sum);
    }
    summarise(ds, rows, sum);
}

int plan_calib_mem(const char *data, size_t len, const char *name, const plan_calib_opts *o, plan_calib_row *rows,
                   int cap, plan_calib_summary *sum, char *err, int errsz)
{
    init_summary(sum);
    dataset ds = {0};
    int own = rows == NULL;
    if (own) rows = cp_xcalloc(PLAN_CALIB_MAX_ROWS, sizeof *rows), cap = PLAN_CALIB_MAX_ROWS;
    int rc = load(data, len, name, 0, &ds, rows, cap, sum, err, errsz);
    if (rc == 0) evaluate(&ds, o, rows, sum);
    free(ds.cases);
    if (own) free(rows);
    return rc;
}

int plan_calib_files(const char *const *paths, int n, const plan_calib_opts *o, plan_calib_row *rows, int cap,
                     plan_calib_summary *sum, char *err, int errsz)
{
    init_summary(sum);
    if (n < 1 || n > PLAN_CALIB_MAX_FILES) {
        snprintf(err, (size_t)errsz, "between 1 and %d CSV files", PLAN_CALIB_MAX_FILES);
        return -1;
    }
    dataset ds = {0};
    int own = rows == NULL;
    if (own) rows = cp_xcalloc(PLAN_CALIB_MAX_ROWS, sizeof *rows), cap = PLAN_CALIB_MAX_ROWS;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        cp_buf buf = CP_BUF_INIT;
        cp_error e;
        cp_error_clear(&e);
        if (cp_src_read_all(paths[i], &buf, PLAN_CALIB_MAX_BYTES, &e) < 0) {
            cp_error_format(&e, err, (size_t)errsz);
            rc = -1;
        } else {
            rc = load(buf.data ? buf.data : "", buf.len, paths[i], i, &ds, rows, cap, sum, err, errsz);
        }
        cp_buf_free(&buf);
    }
    if (rc == 0) evaluate(&ds, o, rows, sum);
    free(ds.cases);
    if (own) free(rows);
    return rc;
}
