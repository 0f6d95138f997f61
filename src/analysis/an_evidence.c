/* an_evidence.c - the evidence files given to analyze: one `evidence[]`
 * entry per evidence file (kind, facts with their lines, how many findings
 * cite it), and the rule book's findings (rulebook.h) handed to an_findings
 * as an_finding rows, which merges them with the trace findings into one
 * ranked findings[].
 *
 * The rule book ranks its findings; they are appended in that order, and
 * an_findings' comparator agrees with the rule book's up to its last key,
 * so on evidence alone analyze's top finding is diagnose's top verdict.
 * Text lives in the rule book's context (titles, advice, next steps), kept
 * alive with the result until an_ctx_free.
 */
#include "an_verdict.h"
#include "rulebook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/buf.h"
#include "../base/util.h"

typedef struct ev_result {
    an_evidence_result base; /* first: an_findings reads it as an an_findings_result */
    rb_ctx *rb;
    char **recs;             /* recommendation strings of the findings */
    size_t n_recs;
} ev_result;

static void free_result(void *self)
{
    ev_result *o = self;
    free(o->base.v);
    for (size_t i = 0; i < o->n_recs; i++)
        free(o->recs[i]);
    free(o->recs);
    rb_free(o->rb);
    free(o);
}

/* "advice. Next: step; step" (the rule's advice and the finding's steps). */
static char *recommendation(const rb_finding *x)
{
    cp_buf b = CP_BUF_INIT;
    cp_buf_puts(&b, x->rule && x->rule->advice ? x->rule->advice : "");
    for (int s = 0; s < x->n_steps; s++) {
        cp_buf_puts(&b, s ? "; " : (b.len ? ". Next: " : "Next: "));
        cp_buf_puts(&b, x->steps[s]);
    }
    char *r = cp_xstrdup(b.data ? b.data : "");
    cp_buf_free(&b);
    return r;
}

static void to_finding(ev_result *out, const ev_set *set, const rb_finding *x)
{
    an_finding *f = an_finding_add(&out->base, x->code, x->layer, x->gain_pct, x->title, NULL, x->assumption);
    f->severity = x->severity;
    f->rank = x->rank;
    out->recs[out->n_recs] = recommendation(x);
    f->recommendation = out->recs[out->n_recs++];
    for (int k = 0; k < x->n_cite; k++) {
        const rb_cited *e = &x->cite[k];
        const char *path = set->inputs[e->input].path;
        if (e->line > 0)
            an_finding_evidence(f, "%s:%ld: %s", path, e->line, e->text);
        else
            an_finding_evidence(f, "%s: %s", path, e->text);
    }
    if (x->cites_dropped)
        an_finding_evidence(f, "... and %ld more line%s", x->cites_dropped, x->cites_dropped == 1 ? "" : "s");
}

/* Findings that cite an input. */
static int64_t citing(const rb_ctx *rb, uint32_t input)
{
    int64_t n = 0;
    for (size_t i = 0; i < rb->n; i++)
        for (int k = 0; k < rb->v[i].n_cite; k++)
            if (rb->v[i].cite[k].input == input) {
                n++;
                break;
            }
    return n;
}

int an_evidence_run(an_ctx *ctx)
{
    rep_report *rp = ctx->rep;
    ev_result *out = cp_xcalloc(1, sizeof *out);
    out->base.free = free_result;
    ctx->results[AN_evidence] = out;
    rep_node *arr = rep_arr(rp, rp->root, "evidence", "evidence files");
    const ev_set *set = ctx->opts ? ctx->opts->evidence : NULL;
    if (!set || !set->n_files)
        return 0;
    rb_opts ro = {ctx->opts->nic_gbit_s, ctx->opts->nvlink_gbps};
    out->rb = rb_run(set, &ro);
    out->recs = cp_xcalloc(out->rb->n + 1, sizeof *out->recs);
    for (size_t i = 0; i < out->rb->n; i++)
        to_finding(out, set, &out->rb->v[i]);
    rb_report(out->rb, rp, rp->root);
    for (size_t i = 0; i < set->n_files; i++) {
        const ev_file *f = &set->files[i];
        rep_node *e = rep_obj(rp, arr, NULL, NULL);
        rep_str(rp, e, "path", "file", f->path);
        rep_str(rp, e, "kind", "kind", ev_kind_key(f->kind));
        ev_file_report(f, rp, e);
        rep_int(rp, e, "findings", "findings citing it", citing(out->rb, f->input), NULL);
    }
    return 0;
}
