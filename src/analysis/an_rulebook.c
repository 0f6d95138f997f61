/* an_rulebook.c - the rule book's engine (see rulebook.h): the family
 * table, the timeline and first failure, the helpers rules use, and the
 * ranking both commands present.
 *
 * Timeline: the families' events are ordered by wall-clock time when the
 * lines carry one (glog, ISO, syslog, dmesg -T; years are ignored when one
 * side lacks it), then kernel boot time (per input: boot clocks differ per
 * host), then input order and line number - so a job whose ranks log with
 * timestamps is ordered across ranks, and one without keeps each file's
 * order. The first failure is the earliest error that is not a symptom
 * (watchdog timeouts, aborts and "unhandled system error" follow whatever
 * broke first on some rank); without one, the earliest error.
 */
#include "rulebook.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

#define RB_FAMILY(name) extern const rb_family rb_family_##name;
#include "rulebook.def"
#undef RB_FAMILY

static const rb_family *const k_families[] = {
#define RB_FAMILY(name) &rb_family_##name,
#include "rulebook.def"
#undef RB_FAMILY
    NULL,
};

const rb_family *const *rb_families(void) { return k_families; }

const rb_rule *rb_rule_of(const char *code)
{
    for (const rb_family *const *f = k_families; *f; f++)
        for (size_t i = 0; i < (*f)->n_rules; i++)
            if (strcmp((*f)->rules[i].code, code) == 0)
                return &(*f)->rules[i];
    return NULL;
}

/* ---- findings ---- */

rb_finding *rb_find(rb_ctx *c, const char *code)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].code, code) == 0)
            return &c->v[i];
    return NULL;
}

rb_finding *rb_raise(rb_ctx *c, const rb_rule *r)
{
    rb_finding *x = rb_find(c, r->code);
    if (x) {
        rb_confidence(x, r->confidence);
        return x;
    }
    if (c->n == RB_MAX_FINDINGS) {
        c->findings_dropped++;
        memset(&c->scratch, 0, sizeof c->scratch);
        c->scratch.code = r->code;
        c->scratch.rule = r;
        c->scratch.gain_pct = NAN;
        c->scratch.rank = -1;
        return &c->scratch;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->v = cp_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    x = &c->v[c->n];
    memset(x, 0, sizeof *x);
    x->code = r->code;
    x->rule = r;
    x->layer = r->layer;
    x->severity = r->severity;
    x->confidence = r->confidence;
    x->gain_pct = NAN;
    x->rank = -1;
    x->order = (uint32_t)c->n++;
    return x;
}

void rb_confidence(rb_finding *x, double confidence)
{
    if (x && confidence > x->confidence)
        x->confidence = confidence > 0.99 ? 0.99 : confidence;
}

void rb_severity(rb_finding *x, an_severity s)
{
    if (x)
        x->severity = s;
}

void rb_title(rb_finding *x, const char *fmt, ...)
{
    if (!x)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->title, sizeof x->title, fmt, ap);
    va_end(ap);
}

static void cite(rb_finding *x, uint32_t input, long line, const char *text)
{
    if (!x)
        return;
    for (int i = 0; i < x->n_cite; i++)
        if (x->cite[i].input == input && x->cite[i].line == line && (line > 0 || !strcmp(x->cite[i].text, text)))
            return;
    if (x->n_cite == RB_MAX_EVIDENCE) {
        x->cites_dropped++;
        return;
    }
    rb_cited *e = &x->cite[x->n_cite++];
    e->input = input;
    e->line = line;
    snprintf(e->text, sizeof e->text, "%s", text);
}

void rb_cite(rb_finding *x, const ev_file *f, const ev_at *at)
{
    if (x && f && at && at->line > 0)
        cite(x, f->input, at->line, at->text);
}

void rb_cite_line(rb_finding *x, const ev_file *f, long line, const char *fmt, ...)
{
    if (!x || !f)
        return;
    char buf[EV_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cite(x, f->input, line, buf);
}

void rb_step(rb_finding *x, const char *fmt, ...)
{
    if (!x || x->n_steps == RB_MAX_STEPS)
        return;
    char buf[RB_STEP_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int s = 0; s < x->n_steps; s++)
        if (strcmp(x->steps[s], buf) == 0)
            return;
    memcpy(x->steps[x->n_steps++], buf, sizeof buf);
}

void rb_gain(rb_finding *x, double pct, const char *fmt, ...)
{
    if (!x)
        return;
    x->gain_pct = pct;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->assumption, sizeof x->assumption, fmt, ap);
    va_end(ap);
}

void rb_rank(rb_finding *x, int rank)
{
    if (!x || rank < 0)
        return;
    if (x->rank < 0)
        x->rank = rank;
    for (int i = 0; i < x->n_ranks; i++)
        if (x->ranks[i] == rank)
            return;
    if (x->n_ranks == RB_MAX_RANKS)
        x->ranks_dropped++;
    else
        x->ranks[x->n_ranks++] = rank;
}

static rb_kv *kv_slot(rb_finding *x, const char *key)
{
    for (int i = 0; i < x->n_fields; i++)
        if (strcmp(x->fields[i].key, key) == 0)
            return &x->fields[i];
    if (x->n_fields == RB_MAX_FIELDS)
        return NULL;
    rb_kv *kv = &x->fields[x->n_fields++];
    memset(kv, 0, sizeof *kv);
    snprintf(kv->key, sizeof kv->key, "%s", key);
    return kv;
}

void rb_field(rb_finding *x, const char *key, const char *fmt, ...)
{
    rb_kv *kv = x ? kv_slot(x, key) : NULL;
    if (!kv)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kv->text, sizeof kv->text, fmt, ap);
    va_end(ap);
    kv->is_num = false;
}

void rb_field_num(rb_finding *x, const char *key, double v)
{
    rb_kv *kv = x ? kv_slot(x, key) : NULL;
    if (!kv)
        return;
    kv->text[0] = 0;
    kv->num = v;
    kv->is_num = true;
}

void rb_set_state(rb_ctx *c, const char *family, void *state, void (*free_fn)(void *state))
{
    for (int i = 0; i < c->n_states; i++)
        if (strcmp(c->states[i].family, family) == 0) {
            if (c->states[i].free)
                c->states[i].free(c->states[i].state);
            c->states[i].state = state;
            c->states[i].free = free_fn;
            return;
        }
    if (c->n_states == RB_MAX_STATES) { /* more families than states: a table edit away */
        if (free_fn)
            free_fn(state);
        return;
    }
    c->states[c->n_states].family = family;
    c->states[c->n_states].state = state;
    c->states[c->n_states].free = free_fn;
    c->n_states++;
}

void *rb_state(const rb_ctx *c, const char *family)
{
    for (int i = 0; i < c->n_states; i++)
        if (strcmp(c->states[i].family, family) == 0)
            return c->states[i].state;
    return NULL;
}

void rb_report(const rb_ctx *c, struct rep_report *r, struct rep_node *root)
{
    for (const rb_family *const *fam = k_families; *fam; fam++)
        if ((*fam)->report)
            (*fam)->report(c, r, root);
}

void rb_drop(rb_ctx *c, const char *code)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].code, code) == 0) {
            memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof *c->v);
            c->n--;
            return;
        }
}

const char *rb_bytes(double b, char *buf, size_t size)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    if (b < 0)
        snprintf(buf, size, "?");
    else if (b >= gib)
        snprintf(buf, size, "%.2f GiB", b / gib);
    else
        snprintf(buf, size, "%.2f MiB", b / (1024.0 * 1024.0));
    return buf;
}

/* ---- timeline ---- */

void rb_event_add(rb_ctx *c, const ev_file *f, const ev_at *at, const char *kind, rb_event_sev sev, bool symptom)
{
    if (!at || at->line <= 0)
        return;
    if (c->n_events == RB_MAX_EVENTS) {
        c->events_dropped++;
        return;
    }
    if (c->n_events == c->cap_events) {
        c->cap_events = c->cap_events ? 2 * c->cap_events : 64;
        c->events = cp_xrealloc(c->events, c->cap_events * sizeof *c->events);
    }
    rb_event *e = &c->events[c->n_events++];
    e->input = f->input;
    e->line = at->line;
    e->ts = at->ts;
    e->rank = at->rank;
    snprintf(e->host, sizeof e->host, "%s", at->host);
    e->kind = kind;
    e->severity = sev;
    e->symptom = symptom;
    snprintf(e->text, sizeof e->text, "%s", at->text);
}

const rb_event *rb_first_failure(const rb_ctx *c)
{
    return c->first_failure >= 0 ? &c->events[c->first_failure] : NULL;
}

static int clock_class(const ev_time *t) { return t->clock == EV_CLOCK_WALL ? 0 : t->clock == EV_CLOCK_BOOT ? 1 : 2; }

static int cmp_events(const void *pa, const void *pb)
{
    const rb_event *a = pa, *b = pb;
    int ca = clock_class(&a->ts), cb = clock_class(&b->ts);
    if (ca != cb)
        return ca - cb;
    if (ca == 1 && a->input != b->input) /* boot clocks differ per host */
        return a->input < b->input ? -1 : 1;
    if (ca == 0) {
        int t = ev_time_cmp(a->ts, b->ts);
        if (t == -1 || t == 1)
            return t;
    } else if (ca == 1 && a->ts.ns != b->ts.ns) {
        return a->ts.ns < b->ts.ns ? -1 : 1;
    }
    if (a->input != b->input)
        return a->input < b->input ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

static void order_events(rb_ctx *c)
{
    if (c->n_events > 1)
        qsort(c->events, c->n_events, sizeof *c->events, cmp_events);
    c->first_failure = -1;
    for (int pass = 0; pass < 2 && c->first_failure < 0; pass++)
        for (size_t k = 0; k < c->n_events; k++)
            if (c->events[k].severity == RB_EV_ERROR && (pass == 1 || !c->events[k].symptom)) {
                c->first_failure = (long)k;
                break;
            }
}

/* ---- ranking ---- */

static int cmp_findings(const void *pa, const void *pb)
{
    const rb_finding *x = pa, *y = pb;
    bool cx = x->severity == AN_SEV_CRITICAL, cy = y->severity == AN_SEV_CRITICAL;
    if (cx != cy) /* a failure signature comes before any slowness */
        return cx ? -1 : 1;
    bool kx = isfinite(x->gain_pct), ky = isfinite(y->gain_pct);
    if (kx != ky) /* a measured gain before an unknown one */
        return kx ? -1 : 1;
    if (kx && x->gain_pct != y->gain_pct)
        return x->gain_pct > y->gain_pct ? -1 : 1;
    if (x->severity != y->severity)
        return x->severity > y->severity ? -1 : 1;
    if (x->confidence != y->confidence)
        return x->confidence > y->confidence ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static void mark_first_failure(rb_ctx *c)
{
    const rb_event *ff = rb_first_failure(c);
    if (!ff)
        return;
    for (size_t i = 0; i < c->n; i++) {
        rb_finding *x = &c->v[i];
        for (int e = 0; e < x->n_cite; e++)
            if (x->cite[e].input == ff->input && x->cite[e].line == ff->line) {
                x->first_failure = true;
                x->confidence += RB_FIRST_FAILURE_BONUS;
                if (x->confidence > 0.99)
                    x->confidence = 0.99;
                break;
            }
    }
}

rb_ctx *rb_run(const ev_set *s, const rb_opts *o)
{
    rb_ctx *c = cp_xcalloc(1, sizeof *c);
    c->set = s;
    if (o)
        c->opts = *o;
    c->first_failure = -1;
    for (const rb_family *const *fam = k_families; *fam; fam++)
        if ((*fam)->events)
            for (size_t i = 0; i < s->n_files; i++)
                (*fam)->events(c, &s->files[i]);
    order_events(c);
    for (const rb_family *const *fam = k_families; *fam; fam++)
        for (size_t i = 0; i < (*fam)->n_rules; i++)
            (*fam)->rules[i].eval(c, &(*fam)->rules[i]);
    size_t w = 0; /* a finding without a title was raised and left empty: drop it */
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].title[0])
            c->v[w++] = c->v[i];
    c->n = w;
    mark_first_failure(c);
    for (size_t i = 0; i < c->n; i++) {
        rb_finding *x = &c->v[i];
        x->confidence = (double)(long)(x->confidence * 100 + 0.5) / 100; /* 2 decimals, stable in JSON */
        if (!x->assumption[0])
            snprintf(x->assumption, sizeof x->assumption, "%s",
                     x->severity == AN_SEV_CRITICAL
                         ? "none: a failure signature (the job does not run), not a slowdown to scale"
                         : "not measurable from this evidence alone: analyze the traces of the job with it");
    }
    if (c->n > 1)
        qsort(c->v, c->n, sizeof *c->v, cmp_findings);
    return c;
}

void rb_free(rb_ctx *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_states; i++)
        if (c->states[i].free)
            c->states[i].free(c->states[i].state);
    free(c->events);
    free(c->v);
    free(c);
}
