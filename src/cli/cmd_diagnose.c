/* cmd_diagnose.c - `chainprof diagnose`: failure logs in, root cause out.
 *
 * Flow: expand the arguments (files, directories, globs; plain, .gz, .zst)
 * into a sorted file list; read them into the evidence set with the one
 * reading loop every log and report kind goes through (src/readers/
 * evidence.h, one thread per file up to --threads); run the rule book
 * (src/analysis/rulebook.h: the same rules and codes `analyze` uses), which
 * also orders the failures of every rank in time; turn its findings (the
 * verdicts), the timeline and what was read into the report tree (schema
 * chainprof.diagnose/2) that every writer renders. Unknown or empty input is
 * not an error: the report says "no known failure signature found" with
 * what was read. --fail-on turns a verdict at or above a confidence into
 * exit status 4 (for scripts and CI).
 */
#include "cli.h"
#include "../analysis/rulebook.h"
#include "../base/log.h"
#include "../base/paths.h"
#include "../base/util.h"
#include "../model/evidence.h"
#include "../readers/evidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_FAIL_ON = 100, O_EVENTS, O_RULES, O_NIC_GBPS, O_NVLINK_GBPS };

static const cli_opt opts[] = {
    { "fail-on", 0, "LEVEL", O_FAIL_ON, 0,
      "exit 4 when a verdict has at least this confidence: any, medium (0.5), high (0.8) or a number 0..1" },
    { "events", 0, "N", O_EVENTS, 0, "timeline events kept in the report (default 200, 0 = none)" },
    { "nic-gbps", 0, "GBIT", O_NIC_GBPS, 0,
      "NIC line rate per GPU in Gb/s, for benchmark verdicts (default: hardware catalog; as in analyze)" },
    { "nvlink-gbps", 0, "GBYTE", O_NVLINK_GBPS, 0,
      "NVLink bandwidth per GPU per direction in GB/s, for benchmark verdicts (default: catalog)" },
    { "rules", 0, NULL, O_RULES, 0, "list the rule book (every code, what it keys on, where that is documented) and exit" },
};

/* --rules: the rule book as a table (chainprof.rulebook/1). */
static int list_rules(cli_ctx *ctx)
{
    rep_report *rep = rep_new("chainprof.rulebook/1", ctx->argc, ctx->argv);
    static const rep_col cols[] = {
        {"code", "code", NULL, 0}, {"family", "family", NULL, 0}, {"layer", "layer", NULL, 0},
        {"severity", "severity", NULL, 0}, {"confidence", "confidence", NULL, 2}, {"keys_on", "keys on", NULL, 0},
        {"source", "documented in", NULL, 0}, {"advice", "advice", NULL, 0},
    };
    rep_node *t = rep_table(rep, rep->root, "rules", "rule book (run order)", cols, CP_ARRAY_LEN(cols));
    for (const rb_family *const *fam = rb_families(); *fam; fam++)
        for (size_t i = 0; i < (*fam)->n_rules; i++) {
            const rb_rule *r = &(*fam)->rules[i];
            rep_node *row = rep_row(rep, t);
            rep_cell_str(rep, row, r->code);
            rep_cell_str(rep, row, (*fam)->name);
            rep_cell_str(rep, row, cp_layer_key(r->layer));
            rep_cell_str(rep, row, an_severity_name(r->severity));
            rep_cell_num(rep, row, r->confidence);
            rep_cell_str(rep, row, r->keys_on);
            rep_cell_str(rep, row, r->source);
            rep_cell_str(rep, row, r->advice);
        }
    int rc = cli_emit(ctx, rep, NULL, 0);
    rep_free(rep);
    return rc;
}

static bool keep_log_file(const char *path, void *ctx)
{
    (void)path;
    (void)ctx;
    return true; /* logs have any name: rank3.out, slurm-1234.err, dmesg */
}

/* "any" | "medium" | "high" | number in [0,1] -> threshold; -1 when bad */
static double parse_fail_on(const char *s)
{
    if (!strcmp(s, "any")) return 1e-9;
    if (!strcmp(s, "medium")) return 0.5;
    if (!strcmp(s, "high")) return 0.8;
    char *end;
    double v = strtod(s, &end);
    return end != s && !*end && v >= 0 && v <= 1 ? v : -1;
}

static void add_evidence(rep_report *r, rep_node *parent, const ev_set *s, const rb_finding *x)
{
    rep_node *ev = rep_arr(r, parent, "evidence", "evidence");
    for (int e = 0; e < x->n_cite; e++) {
        rep_node *o = rep_obj(r, ev, NULL, NULL);
        rep_str(r, o, "file", "file", s->inputs[x->cite[e].input].path);
        if (x->cite[e].line > 0)
            rep_int(r, o, "line", "line", x->cite[e].line, NULL);
        else
            rep_null(r, o, "line", "line", NULL);
        rep_str(r, o, "text", "text", x->cite[e].text);
    }
}

/* A field as a JSON value: whole numbers as integers (sequence numbers). */
static rep_node *add_field(rep_report *r, rep_node *o, const rb_kv *f)
{
    if (!f->is_num) return rep_str(r, o, f->key, f->key, f->text);
    if (f->num == (double)(int64_t)f->num && fabs(f->num) < 9007199254740992.0) return rep_int(r, o, f->key, f->key, (int64_t)f->num, NULL);
    return rep_num(r, o, f->key, f->key, f->num, NULL);
}

static void add_verdicts(rep_report *r, const ev_set *s, const rb_ctx *c)
{
    rep_node *arr = rep_arr(r, r->root, "verdicts", "verdicts (most likely first)");
    for (size_t i = 0; i < c->n; i++) {
        const rb_finding *x = &c->v[i];
        rep_node *o = rep_obj(r, arr, NULL, NULL);
        rep_str(r, o, "code", "code", x->code);
        rep_str(r, o, "layer", "layer", cp_layer_key(x->layer));
        rep_str(r, o, "severity", "severity", an_severity_name(x->severity));
        rep_str(r, o, "title", "root cause", x->title);
        rep_node *conf = rep_num(r, o, "confidence", "confidence", x->confidence, NULL);
        conf->digits = 2;
        if (x->rank >= 0) rep_int(r, o, "rank", "rank", x->rank, NULL);
        else rep_null(r, o, "rank", "rank", NULL);
        /* a verdict that names what identifies it (fields: a Flight Recorder
         * verdict's pg, seq, op) lists its culprits even when there is one */
        if (x->n_ranks > 1 || (x->n_fields && x->n_ranks)) {
            rep_node *rs = rep_arr(r, o, "ranks", "ranks");
            for (int k = 0; k < x->n_ranks; k++) rep_int(r, rs, NULL, NULL, x->ranks[k], NULL);
        }
        if (x->n_fields) {
            rep_node *fs = rep_obj(r, o, "fields", "about");
            for (int k = 0; k < x->n_fields; k++) add_field(r, fs, &x->fields[k]);
            /* and each at the verdict's top level (diagnose JSON: "pg", "seq", "op") */
            for (int k = 0; k < x->n_fields; k++)
                if (!rep_child(o, x->fields[k].key)) add_field(r, o, &x->fields[k])->flags |= REP_F_NO_TEXT;
        }
        rep_bool(r, o, "first_failure", "holds the first failure in time", x->first_failure);
        add_evidence(r, o, s, x);
        rep_str(r, o, "recommendation", "what to do", x->rule ? x->rule->advice : NULL);
        rep_node *steps = rep_arr(r, o, "next_steps", "next steps");
        for (int k = 0; k < x->n_steps; k++) rep_str(r, steps, NULL, NULL, x->steps[k]);
    }
}

static void add_events(rep_report *r, const ev_set *s, const rb_ctx *c, long max_events)
{
    static const rep_col cols[] = {
        { "time", "time", NULL, -1 }, { "rank", "rank", NULL, -1 }, { "host", "host", NULL, -1 },
        { "kind", "event", NULL, -1 }, { "file", "file", NULL, -1 }, { "line", "line", NULL, -1 },
        { "text", "text", NULL, -1 },
    };
    rep_int(r, r->root, "events_total", "timeline events found", (int64_t)c->n_events, NULL);
    rep_node *t = rep_table(r, r->root, "events", "timeline across ranks (earliest first)", cols, CP_ARRAY_LEN(cols));
    for (size_t k = 0; k < c->n_events && (long)k < max_events; k++) {
        const rb_event *e = &c->events[k];
        rep_node *row = rep_row(r, t);
        char ts[48];
        ev_time_format(e->ts, ts, sizeof ts);
        rep_cell_str(r, row, ts[0] ? ts : NULL);
        if (e->rank >= 0) rep_cell_int(r, row, e->rank);
        else rep_cell_null(r, row);
        rep_cell_str(r, row, e->host[0] ? e->host : NULL);
        rep_cell_str(r, row, e->kind);
        rep_cell_str(r, row, s->inputs[e->input].path);
        rep_cell_int(r, row, e->line);
        rep_cell_str(r, row, e->text);
    }
}

static void add_first_failure(rep_report *r, const ev_set *s, const rb_ctx *c)
{
    const rb_event *e = rb_first_failure(c);
    if (!e) {
        rep_null(r, r->root, "first_failure", "first failure", NULL);
        return;
    }
    rep_node *o = rep_obj(r, r->root, "first_failure", "first failure");
    char ts[48];
    ev_time_format(e->ts, ts, sizeof ts);
    rep_str(r, o, "kind", "event", e->kind);
    if (e->rank >= 0) rep_int(r, o, "rank", "rank", e->rank, NULL);
    else rep_null(r, o, "rank", "rank", NULL);
    rep_str(r, o, "host", "host", e->host[0] ? e->host : NULL);
    rep_str(r, o, "time", "time", ts[0] ? ts : NULL);
    rep_str(r, o, "file", "file", s->inputs[e->input].path);
    rep_int(r, o, "line", "line", e->line, NULL);
    rep_str(r, o, "text", "text", e->text);
}

/* Each evidence file's facts: context for the verdicts (and the whole
 * answer when nothing failed). The same entries analyze writes. */
static void add_evidence_files(rep_report *r, const ev_set *s)
{
    rep_node *arr = rep_arr(r, r->root, "evidence", "evidence files read");
    for (size_t i = 0; i < s->n_files; i++) {
        const ev_file *f = &s->files[i];
        rep_node *e = rep_obj(r, arr, NULL, NULL);
        rep_str(r, e, "path", "file", f->path);
        rep_str(r, e, "kind", "kind", ev_kind_key(f->kind));
        ev_file_report(f, r, e);
    }
}

static const char *summary_of(const ev_set *s, const rb_ctx *c, char *buf, size_t size)
{
    if (c->n) {
        snprintf(buf, size, "%s (confidence %.2f)", c->v[0].title, c->v[0].confidence);
        return buf;
    }
    long long bytes = 0;
    long lines = 0;
    int unknown = 0;
    for (size_t i = 0; i < s->n_inputs; i++) {
        bytes += s->inputs[i].bytes;
        lines += s->inputs[i].lines;
        unknown += s->inputs[i].kinds == 0;
    }
    snprintf(buf, size, "no known failure signature found in %zu input(s), %ld line(s), %lld byte(s) read (%d not recognised as any log format)",
             s->n_inputs, lines, bytes, unknown);
    return buf;
}

int cmd_diagnose(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done) return rc;
    if (cli_has(ctx, O_RULES)) return list_rules(ctx);
    if (ctx->args.n_pos == 0) return cli_usage_error(ctx, "no input: give log files, directories or globs");
    rb_opts ro = {0, 0};
    if (cli_get_double(ctx, O_NIC_GBPS, 0, 0, 1e6, &ro.nic_gbit_s) < 0 ||
        cli_get_double(ctx, O_NVLINK_GBPS, 0, 0, 1e6, &ro.nvlink_gbps) < 0)
        return CLI_EXIT_USAGE;
    double fail_on = -1;
    if (cli_get(ctx, O_FAIL_ON) && (fail_on = parse_fail_on(cli_get(ctx, O_FAIL_ON))) < 0)
        return cli_usage_error(ctx, "--fail-on %s: expected any, medium, high or a number from 0 to 1", cli_get(ctx, O_FAIL_ON));
    long max_events;
    if (cli_get_long(ctx, O_EVENTS, 200, 0, RB_MAX_EVENTS, &max_events) < 0) return CLI_EXIT_USAGE;
    int nthreads = cli_threads(ctx);
    if (nthreads < 0) return CLI_EXIT_USAGE;

    cp_paths paths;
    if ((rc = cli_expand_inputs(ctx, keep_log_file, &paths)) != 0)
        return rc;
    cp_error err;
    cp_error_clear(&err);
    ev_set set;
    ev_set_init(&set);
    long dropped = 0;
    rep_report *rep = NULL;
    rb_ctx *c = NULL;
    if (rd_ev_read_files(&set, paths.v, paths.n, nthreads, &dropped, &err) < 0) {
        rc = cli_fail(&err);
        goto out;
    }
    c = rb_run(&set, &ro);

    /* verdict first, then the timeline, then what was read (the text
     * writer follows this order) */
    rep = rep_new("chainprof.diagnose/2", ctx->argc, ctx->argv);
    char summary[400];
    rep_str(rep, rep->root, "summary", "diagnosis", summary_of(&set, c, summary, sizeof summary));
    add_verdicts(rep, &set, c);
    add_first_failure(rep, &set, c);
    add_events(rep, &set, c, max_events);
    rb_report(c, rep, rep->root);
    add_evidence_files(rep, &set);
    for (size_t i = 0; i < set.n_inputs; i++) {
        char kinds[128];
        rep_node *in = rep_input(rep, set.inputs[i].path, ev_kinds_str(set.inputs[i].kinds, kinds, sizeof kinds),
                                 (uint64_t)set.inputs[i].bytes);
        rep_int(rep, in, "lines", "lines", set.inputs[i].lines, NULL);
    }
    diag_set d;
    diag_init(&d);
    ev_set_diag(&set, &d);
    if (dropped) diag_count_n(&d, DIAG_LIMIT_REACHED, (uint64_t)dropped, NULL, -1);
    cli_paths_diag(&paths, &d);
    if (c->events_dropped) diag_count_n(&d, DIAG_LIMIT_REACHED, (uint64_t)c->events_dropped, NULL, -1);
    if (c->findings_dropped) diag_count_n(&d, DIAG_LIMIT_REACHED, (uint64_t)c->findings_dropped, NULL, -1);
    rep_diagnostics(rep, &d);
    rc = cli_emit(ctx, rep, paths.v, paths.n);
    if (!rc && fail_on >= 0 && c->n && c->v[0].confidence >= fail_on) {
        cp_log_info("diagnose: verdict %s at confidence %.2f >= --fail-on %s", c->v[0].code, c->v[0].confidence,
                    cli_get(ctx, O_FAIL_ON));
        rc = CLI_EXIT_CHECK;
    }
out:
    rep_free(rep);
    rb_free(c);
    ev_set_free(&set);
    cp_paths_free(&paths);
    return rc;
}
