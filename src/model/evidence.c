/* evidence.c - the evidence set and the kind table (see evidence.h). */
#include "evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"
#include "ev_rep.h"

static const struct {
    const char *key, *title;
} k_kinds[] = {
#define X(e, key, type, member, title) {key, title},
#include "evidence.def"
#undef X
};

const char *ev_kind_key(ev_kind k) { return (unsigned)k < EV__COUNT ? k_kinds[k].key : "?"; }
const char *ev_kind_title(ev_kind k) { return (unsigned)k < EV__COUNT ? k_kinds[k].title : "?"; }

int ev_kind_by_key(const char *key)
{
    for (int k = 0; k < EV__COUNT; k++)
        if (strcmp(k_kinds[k].key, key) == 0)
            return k;
    return -1;
}

void ev_facts_free(ev_kind kind, void *facts)
{
    if (!facts)
        return;
    switch (kind) {
#define X(e, key, type, member, title) \
    case EV_##e:                       \
        ev_##member##_free(facts);     \
        break;
#include "evidence.def"
#undef X
    default:
        break;
    }
}

void ev_file_report(const ev_file *f, rep_report *r, rep_node *obj)
{
    switch (f->kind) {
#define X(e, key, type, member, title)               \
    case EV_##e:                                     \
        ev_##member##_report(f->as.member, r, obj); \
        break;
#include "evidence.def"
#undef X
    default:
        break;
    }
}

void ev_set_init(ev_set *s) { memset(s, 0, sizeof *s); }

void ev_set_free(ev_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_files; i++) {
        ev_facts_free(s->files[i].kind, s->files[i].as.any);
        free(s->files[i].diag);
    }
    for (size_t i = 0; i < s->n_inputs; i++) {
        free(s->inputs[i].path);
        free(s->inputs[i].diag);
    }
    free(s->files);
    free(s->inputs);
    memset(s, 0, sizeof *s);
}

uint32_t ev_set_add_input(ev_set *s, const char *path)
{
    if (s->n_inputs == s->cap_inputs) {
        s->cap_inputs = s->cap_inputs ? 2 * s->cap_inputs : 8;
        s->inputs = cp_xrealloc(s->inputs, s->cap_inputs * sizeof *s->inputs);
    }
    ev_input *in = &s->inputs[s->n_inputs];
    memset(in, 0, sizeof *in);
    in->path = cp_xstrdup(path ? path : "");
    return (uint32_t)s->n_inputs++;
}

static diag_set *diag_copy(const diag_set *d)
{
    if (!d || diag_total(d) == 0)
        return NULL;
    diag_set *c = cp_xmalloc(sizeof *c);
    *c = *d;
    return c;
}

ev_file *ev_set_add_file(ev_set *s, uint32_t input, ev_kind kind, void *facts, const diag_set *d)
{
    if (s->n_files == s->cap_files) {
        s->cap_files = s->cap_files ? 2 * s->cap_files : 8;
        s->files = cp_xrealloc(s->files, s->cap_files * sizeof *s->files);
        /* paths point into inputs, which do not move when files grow */
    }
    ev_file *f = &s->files[s->n_files++];
    memset(f, 0, sizeof *f);
    f->input = input;
    f->path = s->inputs[input].path;
    f->kind = kind;
    f->as.any = facts;
    f->diag = diag_copy(d);
    s->inputs[input].kinds |= 1u << kind;
    return f;
}

void ev_input_diag(ev_set *s, uint32_t input, const diag_set *d)
{
    ev_input *in = &s->inputs[input];
    if (!d || diag_total(d) == 0)
        return;
    if (!in->diag) {
        in->diag = cp_xmalloc(sizeof *in->diag);
        diag_init(in->diag);
    }
    diag_merge(in->diag, d);
}

const ev_file *ev_next(const ev_set *s, ev_kind kind, const ev_file *prev)
{
    size_t i = prev ? (size_t)(prev - s->files) + 1 : 0;
    for (; i < s->n_files; i++)
        if (s->files[i].kind == kind)
            return &s->files[i];
    return NULL;
}

size_t ev_count(const ev_set *s, ev_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_files; i++)
        n += s->files[i].kind == kind;
    return n;
}

void ev_set_diag(const ev_set *s, diag_set *out)
{
    for (size_t i = 0; i < s->n_inputs; i++)
        if (s->inputs[i].diag)
            diag_merge(out, s->inputs[i].diag);
    for (size_t i = 0; i < s->n_files; i++)
        if (s->files[i].diag)
            diag_merge(out, s->files[i].diag);
}

const char *ev_kinds_str(uint32_t mask, char *buf, size_t size)
{
    size_t off = 0;
    if (!size)
        return buf;
    buf[0] = '\0';
    for (int k = 0; k < EV__COUNT; k++)
        if (mask & (1u << k)) {
            int w = snprintf(buf + off, size - off, "%s%s", off ? "," : "", k_kinds[k].key);
            if (w < 0 || (size_t)w >= size - off)
                break;
            off += (size_t)w;
        }
    if (!off)
        snprintf(buf, size, "unknown");
    return buf;
}

/* ---- report helpers of the kinds (ev_rep.h) ---- */

void ev_rep_line(rep_report *r, rep_node *o, const char *key, long line)
{
    if (line > 0)
        rep_int(r, o, key, NULL, line, NULL);
    else
        rep_null(r, o, key, NULL, NULL);
}

void ev_rep_str(rep_report *r, rep_node *o, const char *key, const char *title, const char *s)
{
    if (s && s[0])
        rep_str(r, o, key, title, s);
    else
        rep_null(r, o, key, title, NULL);
}

void ev_rep_int(rep_report *r, rep_node *o, const char *key, const char *title, int64_t v, const char *unit)
{
    if (v >= 0)
        rep_int(r, o, key, title, v, unit);
    else
        rep_null(r, o, key, title, unit);
}

void ev_rep_at(rep_report *r, rep_node *o, const char *key, const char *title, const ev_at *at)
{
    if (!at || at->line <= 0) {
        rep_null(r, o, key, title, NULL);
        return;
    }
    rep_node *n = rep_obj(r, o, key, title);
    rep_int(r, n, "line", "line", at->line, NULL);
    rep_str(r, n, "text", "text", at->text);
}
