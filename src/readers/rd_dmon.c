/* ev_dmon.c - nvidia-smi dmon / dcgmi dmon reader. See ev_dmon.h.
 *
 * One pass over the text: rows are read against the header above them; the
 * file's columns are the union of every header's (a header naming a new
 * column widens the samples read so far, so the value array keeps one
 * stride). A block's header maps each of
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

/* Reading state: the facts first, so the helpers that take the facts reach
 * the state by a cast (a pointer to a struct's first member is a pointer to
 * the struct); end moves the facts into their own allocation. */
typedef struct dst {
    ev_dmon d;
    char *name;       /* the input, for damage notes */
    diag_set local;   /* damage counted while reading */
    block b;          /* the header block rows are read against */
    uint32_t header_at;
} dst;

static diag_set *d_diag(ev_dmon *d) { return &((dst *)d)->local; }
static const char *d_name(ev_dmon *d) { return ((dst *)d)->name; }

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

static int add_col(ev_dmon *d, const rd_field *t, uint32_t line)
{
    for (size_t i = 0; i < d->n_cols; i++)
        if (rd_feq(t, d->cols[i].name))
            return (int)i;
    if (d->n_cols >= EV_DMON_MAX_COLS) {
        rd_note(d_diag(d), DIAG_LIMIT_REACHED, d_name(d), line);
        return -1;
    }
    ev_dmon_col *c = &d->cols[d->n_cols];
    rd_copy(c->name, sizeof c->name, t->p, t->len);
    c->line = line;
    /* one pass: a header that names a new column widens every sample read
     * so far (rare: blocks of another field list pasted below) */
    size_t nc = d->n_cols, wide = nc + 1;
    if (d->cap_samples) {
        d->values = cp_xrealloc(d->values, d->cap_samples * wide * sizeof *d->values);
        for (size_t s = d->n_samples; s-- > 0;) {
            memmove(d->values + s * wide, d->values + s * nc, nc * sizeof *d->values);
            d->values[s * wide + nc] = NAN;
        }
    }
    return (int)d->n_cols++;
}

static void make_block(ev_dmon *d, block *b, const rd_field *f, int n, uint32_t line)
{
    b->n = n;
    b->line = line;
    for (int i = 0; i < n; i++) {
        b->col[i] = -1;
        if (is_entity_name(&f[i])) {
            b->kind[i] = K_ENTITY;
            if (!rd_feq(&f[i], "gpu"))
                d->flavor = EV_DMON_DCGMI;
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
static void take_units(ev_dmon *d, const block *b, const char *line, size_t len)
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

static int find_entity(ev_dmon *d, const char *name, size_t n, uint32_t line)
{
    for (size_t i = 0; i < d->n_entities; i++)
        if (strlen(d->entities[i].name) == n && memcmp(d->entities[i].name, name, n) == 0)
            return (int)i;
    if (rd_grow((void **)&d->entities, &d->cap_entities, d->n_entities, sizeof *d->entities,
                EV_DMON_MAX_ENTITIES) < 0) {
        rd_note(d_diag(d), DIAG_LIMIT_REACHED, d_name(d), line);
        return -1;
    }
    ev_dmon_entity *e = &d->entities[d->n_entities];
    memset(e, 0, sizeof *e);
    rd_copy(e->name, sizeof e->name, name, n);
    /* "0" -> GPU 0; "GPU 2" -> GPU 2; "GPU-I 1" (a MIG GPU instance) and
     * "GPU-CI 3" (a compute instance) are not GPUs */
    e->mig = rd_starts(name, n, "GPU-CI") ? EV_DMON_GPU_CI : rd_starts(name, n, "GPU-I") ? EV_DMON_GPU_I : EV_DMON_GPU;
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

static void parse_row(ev_dmon *d, const block *b, const rd_field *f, int n, uint32_t line)
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
        rd_note(d_diag(d), DIAG_EVIDENCE_BAD_ROW, d_name(d), line);
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
    if (d->n_samples >= EV_DMON_MAX_SAMPLES) {
        rd_note(d_diag(d), DIAG_LIMIT_REACHED, d_name(d), line);
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
            rd_note(d_diag(d), DIAG_EVIDENCE_BAD_VALUE, d_name(d), line);
    }
    ev_dmon_sample *sm = &d->samples[s];
    sm->entity = (uint32_t)ent;
    sm->seq = d->entities[ent].n_samples++;
    sm->line = line;
    memcpy(sm->time, time, sizeof time);
    d->n_samples++;
}

void *rd_dmon_begin(const char *name)
{
    dst *st = cp_xcalloc(1, sizeof *st);
    st->name = cp_xstrdup(name ? name : "");
    diag_init(&st->local);
    return st;
}

void rd_dmon_line(void *stp, const rd_line *ln)
{
    dst *st = stp;
    ev_dmon *d = &st->d;
    const char *line = ln->text;
    size_t len = ln->len;
    uint32_t lineno = (uint32_t)ln->no;
    rd_field f[RD_MAX_FIELDS];
    int n;
    if (header_fields(line, len, f, &n)) {
        make_block(d, &st->b, f, n, lineno);
        st->header_at = lineno;
        if (!d->first_header_line)
            d->first_header_line = lineno;
        return;
    }
    int k = rd_split(line, len, f, RD_MAX_FIELDS, NULL);
    if (k == 0)
        return;
    if (f[0].p[0] == '#') {
        if (st->b.n && st->header_at + 1 == lineno)
            take_units(d, &st->b, line, len);
        return;
    }
    if (k == 1 && (rd_feq(&f[0], "ID") || rd_feq(&f[0], "Id")))
        return; /* dcgmi's line under the header */
    int64_t x;
    int looks_row = rd_i64(f[0].p, f[0].len, &x) == 0 || rd_starts(f[0].p, f[0].len, "GPU");
    if (!looks_row)
        return;
    if (!st->b.n) {
        rd_note(&st->local, DIAG_EVIDENCE_ORPHAN_ROW, st->name, lineno);
        return;
    }
    parse_row(d, &st->b, f, k, lineno);
}

void *rd_dmon_end(void *stp, diag_set *diag)
{
    dst *st = stp;
    ev_dmon *d = NULL;
    if (st->d.first_header_line) {
        d = cp_xmalloc(sizeof *d);
        *d = st->d; /* the arrays move with it */
        ev_dmon_compute_stats(d);
        diag_merge(diag, &st->local);
    } else { /* no header with a gpu or Entity column: not dmon output */
        free(st->d.entities);
        free(st->d.samples);
        free(st->d.values);
    }
    free(st->name);
    free(st);
    return d;
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
