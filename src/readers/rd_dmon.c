/* rd_dmon.c - nvidia-smi dmon / dcgmi dmon reader. See rd_dmon.h.
 *
 * Two passes over the text: the first collects the union of the columns
 * named by every header (so the value array has a fixed stride), the second
 * reads rows against the header above them. A block's header maps each of
 * its positions to the entity, the date/time, or a column of the union.
 */
#include "rd_dmon.h"

#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { K_VALUE = 0, K_ENTITY, K_DATE, K_TIME };

typedef struct block {
    int n;
    unsigned char kind[RD_MAX_FIELDS];
    int col[RD_MAX_FIELDS];   /* union column for K_VALUE */
    uint32_t line;
} block;

/* Header token without a leading '#'. */
static rd_field strip_hash(const rd_field *f)
{
    rd_field t = *f;
    while (t.len > 0 && t.p[0] == '#') {
        t.p++;
        t.len--;
    }
    return t;
}

/* As the tools print them (case matters: prose mentioning a "GPU" is not a
 * header). */
static int is_entity_name(const rd_field *t)
{
    return rd_feq(t, "gpu") || rd_feq(t, "Entity") || rd_feq(t, "EntityId");
}

/* A header: a '#' line with a gpu / Entity / EntityId column. The unit line
 * ("# Idx W C ...") does not qualify. */
static int header_fields(const char *line, size_t len, rd_field *f, int *n)
{
    if (len == 0 || line[0] != '#')
        return 0;
    int k = rd_split(line, len, f, RD_MAX_FIELDS, NULL);
    int m = 0, ent = 0;
    for (int i = 0; i < k; i++) {
        rd_field t = strip_hash(&f[i]);
        if (t.len == 0)
            continue;
        if (is_entity_name(&t))
            ent = 1;
        f[m++] = t;
    }
    *n = m;
    return ent;
}

static int add_col(rd_dmon *d, const rd_field *t, uint32_t line)
{
    for (size_t i = 0; i < d->n_cols; i++)
        if (rd_feq(t, d->cols[i].name))
            return (int)i;
    if (d->n_cols >= RD_DMON_MAX_COLS) {
        rd_note(&d->diag, DIAG_LIMIT_REACHED, d->name, line);
        return -1;
    }
    rd_dmon_col *c = &d->cols[d->n_cols];
    rd_copy(c->name, sizeof c->name, t->p, t->len);
    c->line = line;
    return (int)d->n_cols++;
}

static void make_block(rd_dmon *d, block *b, const rd_field *f, int n, uint32_t line)
{
    b->n = n;
    b->line = line;
    for (int i = 0; i < n; i++) {
        b->col[i] = -1;
        if (is_entity_name(&f[i])) {
            b->kind[i] = K_ENTITY;
            if (!rd_feq(&f[i], "gpu"))
                d->flavor = RD_DMON_DCGMI;
        } else if (rd_fieq(&f[i], "Date")) {
            b->kind[i] = K_DATE;
        } else if (rd_fieq(&f[i], "Time")) {
            b->kind[i] = K_TIME;
        } else {
            b->kind[i] = K_VALUE;
            b->col[i] = add_col(d, &f[i], line);
        }
    }
}

/* "# Idx W C % ..." right under a header: units of its value columns. */
static void take_units(rd_dmon *d, const block *b, const char *line, size_t len)
{
    rd_field f[RD_MAX_FIELDS];
    int n = 0;
    int k = rd_split(line, len, f, RD_MAX_FIELDS, NULL);
    for (int i = 0; i < k; i++) {
        rd_field t = strip_hash(&f[i]);
        if (t.len)
            f[n++] = t;
    }
    if (n != b->n)
        return;
    for (int i = 0; i < n; i++)
        if (b->kind[i] == K_VALUE && b->col[i] >= 0 && !d->cols[b->col[i]].unit[0])
            rd_copy(d->cols[b->col[i]].unit, sizeof d->cols[0].unit, f[i].p, f[i].len);
}

static int find_entity(rd_dmon *d, const char *name, size_t n, uint32_t line)
{
    for (size_t i = 0; i < d->n_entities; i++)
        if (strlen(d->entities[i].name) == n && memcmp(d->entities[i].name, name, n) == 0)
            return (int)i;
    if (rd_grow((void **)&d->entities, &d->cap_entities, d->n_entities, sizeof *d->entities,
                RD_DMON_MAX_ENTITIES) < 0) {
        rd_note(&d->diag, DIAG_LIMIT_REACHED, d->name, line);
        return -1;
    }
    rd_dmon_entity *e = &d->entities[d->n_entities];
    memset(e, 0, sizeof *e);
    rd_copy(e->name, sizeof e->name, name, n);
    /* "0" -> GPU 0; "GPU 2" -> GPU 2; "GPU-I 1" (a MIG instance) -> not a GPU. */
    int64_t x;
    e->gpu = -1;
    if (rd_i64(name, n, &x) == 0 && x >= 0 && x < 1 << 20)
        e->gpu = (int)x;
    else if (n > 4 && memcmp(name, "GPU ", 4) == 0 && rd_i64(name + 4, n - 4, &x) == 0 && x >= 0 && x < 1 << 20)
        e->gpu = (int)x;
    return (int)d->n_entities++;
}

static int is_missing(const rd_field *f)
{
    return rd_feq(f, "-") || rd_fieq(f, "N/A");
}

static void parse_row(rd_dmon *d, const block *b, const rd_field *f, int n, uint32_t line)
{
    /* The entity may span two words ("GPU 2"): join them when the block's
     * entity column holds a word followed by a number. */
    rd_field v[RD_MAX_FIELDS];
    int m = 0;
    for (int i = 0; i < n && m < RD_MAX_FIELDS; i++) {
        v[m] = f[i];
        int64_t x;
        if (m < b->n && b->kind[m] == K_ENTITY && rd_i64(f[i].p, f[i].len, &x) < 0 && i + 1 < n &&
            rd_i64(f[i + 1].p, f[i + 1].len, &x) == 0) {
            v[m].len = (uint32_t)(f[i + 1].p + f[i + 1].len - f[i].p);
            i++;
        }
        m++;
    }
    if (m != b->n) {
        rd_note(&d->diag, DIAG_EVIDENCE_BAD_ROW, d->name, line);
        return;
    }
    int ent = -1;
    char time[24] = "";
    size_t tl = 0;
    for (int i = 0; i < m; i++) {
        if (b->kind[i] == K_ENTITY)
            ent = find_entity(d, v[i].p, v[i].len, line);
        else if ((b->kind[i] == K_DATE || b->kind[i] == K_TIME) && tl + v[i].len + 2 < sizeof time) {
            if (tl)
                time[tl++] = ' ';
            memcpy(time + tl, v[i].p, v[i].len);
            tl += v[i].len;
            time[tl] = '\0';
        }
    }
    if (ent < 0)
        return;
    if (d->n_samples >= RD_DMON_MAX_SAMPLES) {
        rd_note(&d->diag, DIAG_LIMIT_REACHED, d->name, line);
        return;
    }
    if (d->n_samples == d->cap_samples) {
        size_t nc = d->cap_samples ? d->cap_samples * 2 : 64;
        d->samples = cp_xrealloc(d->samples, nc * sizeof *d->samples);
        d->values = cp_xrealloc(d->values, nc * (d->n_cols ? d->n_cols : 1) * sizeof *d->values);
        d->cap_samples = nc;
    }
    size_t s = d->n_samples;
    double *row = d->values + s * d->n_cols;
    for (size_t c = 0; c < d->n_cols; c++)
        row[c] = NAN;
    for (int i = 0; i < m; i++) {
        if (b->kind[i] != K_VALUE || b->col[i] < 0 || is_missing(&v[i]))
            continue;
        double x;
        if (rd_num(v[i].p, v[i].len, &x) == 0)
            row[b->col[i]] = x;
        else
            rd_note(&d->diag, DIAG_EVIDENCE_BAD_VALUE, d->name, line);
    }
    rd_dmon_sample *sm = &d->samples[s];
    sm->entity = (uint32_t)ent;
    sm->seq = d->entities[ent].n_samples++;
    sm->line = line;
    memcpy(sm->time, time, sizeof time);
    d->n_samples++;
}

static void compute_stats(rd_dmon *d)
{
    size_t nc = d->n_cols, ne = d->n_entities;
    d->stats = cp_xcalloc(ne * nc + 1, sizeof *d->stats);
    d->col_stats = cp_xcalloc(nc + 1, sizeof *d->col_stats);
    for (size_t s = 0; s < d->n_samples; s++) {
        const double *row = d->values + s * nc;
        for (size_t c = 0; c < nc; c++) {
            if (isnan(row[c]))
                continue;
            rd_dmon_stat *targets[2] = {&d->stats[d->samples[s].entity * nc + c], &d->col_stats[c]};
            for (int k = 0; k < 2; k++) {
                rd_dmon_stat *st = targets[k];
                if (st->n == 0 || row[c] < st->min)
                    st->min = row[c];
                if (st->n == 0 || row[c] > st->max)
                    st->max = row[c];
                st->mean += row[c]; /* sum until the end */
                st->n++;
            }
        }
    }
    for (size_t i = 0; i < ne * nc + nc; i++) {
        rd_dmon_stat *st = i < ne * nc ? &d->stats[i] : &d->col_stats[i - ne * nc];
        if (st->n)
            st->mean /= st->n;
        else
            st->min = st->max = st->mean = NAN;
    }
}

int rd_dmon_parse(const char *data, size_t len, const char *name, rd_dmon **out, cp_error *err)
{
    *out = NULL;
    rd_dmon *d = cp_xcalloc(1, sizeof *d);
    d->name = cp_xstrdup(name ? name : "");
    rd_field f[RD_MAX_FIELDS];
    int n;
    rd_lines it;
    const char *line;
    size_t ln;
    block b;

    /* Pass 1: the union of the columns. */
    rd_lines_init(&it, data, len);
    while (rd_lines_next(&it, &line, &ln))
        if (header_fields(line, ln, f, &n)) {
            make_block(d, &b, f, n, it.lineno);
            if (!d->first_header_line)
                d->first_header_line = it.lineno;
        }
    if (!d->first_header_line) {
        rd_dmon_free(d);
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, -1,
                            "not dmon output: no header with a gpu or Entity column");
    }

    /* Pass 2: rows against the block above them. */
    b.n = 0;
    uint32_t header_at = 0;
    rd_lines_init(&it, data, len);
    while (rd_lines_next(&it, &line, &ln)) {
        if (header_fields(line, ln, f, &n)) {
            make_block(d, &b, f, n, it.lineno);
            header_at = it.lineno;
            continue;
        }
        int k = rd_split(line, ln, f, RD_MAX_FIELDS, NULL);
        if (k == 0)
            continue;
        if (f[0].p[0] == '#') {
            if (b.n && header_at + 1 == it.lineno)
                take_units(d, &b, line, ln);
            continue;
        }
        if (k == 1 && rd_feq(&f[0], "ID"))
            continue; /* dcgmi's line under the header */
        int64_t x;
        int looks_row = rd_i64(f[0].p, f[0].len, &x) == 0 || rd_starts(f[0].p, f[0].len, "GPU");
        if (!looks_row)
            continue;
        if (!b.n) {
            rd_note(&d->diag, DIAG_EVIDENCE_ORPHAN_ROW, d->name, it.lineno);
            continue;
        }
        parse_row(d, &b, f, k, it.lineno);
    }
    compute_stats(d);
    *out = d;
    return 0;
}

void rd_dmon_free(rd_dmon *d)
{
    if (!d)
        return;
    free(d->entities);
    free(d->samples);
    free(d->values);
    free(d->stats);
    free(d->col_stats);
    free(d->name);
    free(d);
}

int rd_dmon_col_find(const rd_dmon *d, const char *name)
{
    for (size_t i = 0; i < d->n_cols; i++)
        if (strcasecmp(d->cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

double rd_dmon_value(const rd_dmon *d, size_t s, size_t c)
{
    if (s >= d->n_samples || c >= d->n_cols)
        return NAN;
    return d->values[s * d->n_cols + c];
}

const rd_dmon_stat *rd_dmon_stat_of(const rd_dmon *d, size_t e, size_t c)
{
    if (c >= d->n_cols)
        return NULL;
    if (e == RD_DMON_ALL)
        return &d->col_stats[c];
    if (e >= d->n_entities)
        return NULL;
    return &d->stats[e * d->n_cols + c];
}

int rd_dmon_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    int score = 0;
    rd_lines it;
    rd_lines_init(&it, buf, len);
    const char *line;
    size_t n;
    rd_field f[RD_MAX_FIELDS];
    int k;
    /* Line-based: a header with a gpu/Entity column, the unit line, and a
     * typical column name; each counted once. */
    int header = 0, units = 0, typical = 0;
    while (rd_lines_next(&it, &line, &n) && it.lineno < 2000) {
        if (n == 0 || line[0] != '#')
            continue;
        if (!header && header_fields(line, n, f, &k)) {
            header = 1;
            for (int i = 0; i < k && !typical; i++)
                typical = rd_feq(&f[i], "pwr") || rd_feq(&f[i], "sm") || rd_feq(&f[i], "SMACT") ||
                          rd_feq(&f[i], "GPUTL") || rd_feq(&f[i], "POWER");
        } else if (!units && (rd_find(line, n, "# Idx") || rd_find(line, n, "Idx "))) {
            units = 1;
        }
    }
    score = header * 60 + units * 20 + typical * 20;
    return score > 100 ? 100 : score;
}
