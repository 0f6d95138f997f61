/* cmd_diagnose.c - `chainprof diagnose`: failure logs in, root cause out.
 *
 * Flow: expand the arguments (files, directories, globs; plain, .gz, .zst)
 * into a sorted file list; feed the files to the diagnose engine (src/diag,
 * one thread per file up to --threads),
 * which reads each line once through the shared log readers, builds the
 * cross-rank timeline and applies the rule table; turn its verdicts, events
 * and inputs into the report tree (schema chainprof.diagnose/1) that every
 * writer renders. Unknown or empty input is not an error: the report says
 * "no known failure signature found" with what was read. --fail-on turns a
 * verdict at or above a confidence into exit status 4 (for scripts and CI).
 */
#include "cli.h"
#include "../base/log.h"
#include "../base/paths.h"
#include "../base/util.h"
#include "../diag/diag.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_FAIL_ON = 100, O_EVENTS };

static const cli_opt opts[] = {
    { "fail-on", 0, "LEVEL", O_FAIL_ON, 0,
      "exit 4 when a verdict has at least this confidence: any, medium (0.5), high (0.8) or a number 0..1" },
    { "events", 0, "N", O_EVENTS, 0, "timeline events kept in the report (default 200, 0 = none)" },
};

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

static void add_evidence(rep_report *r, rep_node *parent, const dg_ctx *c, const dg_verdict *v)
{
    rep_node *ev = rep_arr(r, parent, "evidence", "evidence");
    for (int e = 0; e < v->n_evidence; e++) {
        rep_node *o = rep_obj(r, ev, NULL, NULL);
        rep_str(r, o, "file", "file", c->inputs[v->evidence[e].input].path);
        rep_int(r, o, "line", "line", v->evidence[e].line, NULL);
        rep_str(r, o, "text", "text", v->evidence[e].text);
    }
}

static void add_verdicts(rep_report *r, const dg_ctx *c)
{
    rep_node *arr = rep_arr(r, r->root, "verdicts", "verdicts (most likely first)");
    for (int i = 0; i < c->n_verdicts; i++) {
        const dg_verdict *v = &c->verdicts[i];
        rep_node *o = rep_obj(r, arr, NULL, NULL);
        rep_str(r, o, "code", "code", v->code);
        rep_str(r, o, "layer", "layer", v->layer);
        rep_str(r, o, "title", "root cause", v->title);
        rep_node *conf = rep_num(r, o, "confidence", "confidence", v->confidence, NULL);
        conf->digits = 2;
        if (v->rank >= 0) rep_int(r, o, "rank", "rank", v->rank, NULL);
        else rep_null(r, o, "rank", "rank", NULL);
        rep_bool(r, o, "first_failure", "holds the first failure in time", v->first_failure);
        add_evidence(r, o, c, v);
        rep_node *steps = rep_arr(r, o, "next_steps", "next steps");
        for (int s = 0; s < v->n_steps; s++) rep_str(r, steps, NULL, NULL, v->steps[s]);
    }
}

static void add_events(rep_report *r, const dg_ctx *c, long max_events)
{
    static const rep_col cols[] = {
        { "time", "time", NULL, -1 }, { "rank", "rank", NULL, -1 }, { "host", "host", NULL, -1 },
        { "kind", "event", NULL, -1 }, { "file", "file", NULL, -1 }, { "line", "line", NULL, -1 },
        { "text", "text", NULL, -1 },
    };
    rep_int(r, r->root, "events_total", "timeline events found", c->n_events, NULL);
    rep_node *t = rep_table(r, r->root, "events", "timeline across ranks (earliest first)", cols, CP_ARRAY_LEN(cols));
    for (int k = 0; k < c->n_events && k < max_events; k++) {
        const dg_event *e = &c->events[k];
        rep_node *row = rep_row(r, t);
        char ts[48];
        rd_time_format(e->ts, ts, sizeof ts);
        rep_cell_str(r, row, ts[0] ? ts : NULL);
        if (e->rank >= 0) rep_cell_int(r, row, e->rank);
        else rep_cell_null(r, row);
        rep_cell_str(r, row, e->host[0] ? e->host : NULL);
        rep_cell_str(r, row, e->kind);
        rep_cell_str(r, row, c->inputs[e->input].path);
        rep_cell_int(r, row, e->line);
        rep_cell_str(r, row, e->text);
    }
}

static void add_first_failure(rep_report *r, const dg_ctx *c)
{
    if (c->first_failure < 0) {
        rep_null(r, r->root, "first_failure", "first failure", NULL);
        return;
    }
    const dg_event *e = &c->events[c->first_failure];
    rep_node *o = rep_obj(r, r->root, "first_failure", "first failure");
    char ts[48];
    rd_time_format(e->ts, ts, sizeof ts);
    rep_str(r, o, "kind", "event", e->kind);
    if (e->rank >= 0) rep_int(r, o, "rank", "rank", e->rank, NULL);
    else rep_null(r, o, "rank", "rank", NULL);
    rep_str(r, o, "host", "host", e->host[0] ? e->host : NULL);
    rep_str(r, o, "time", "time", ts[0] ? ts : NULL);
    rep_str(r, o, "file", "file", c->inputs[e->input].path);
    rep_int(r, o, "line", "line", e->line, NULL);
    rep_str(r, o, "text", "text", e->text);
}

static void opt_str(rep_report *r, rep_node *o, const char *key, const char *title, const char *s)
{
    rep_str(r, o, key, title, s && s[0] ? s : NULL);
}

static void opt_int(rep_report *r, rep_node *o, const char *key, const char *title, long v, long unknown)
{
    if (v == unknown) rep_null(r, o, key, title, NULL);
    else rep_int(r, o, key, title, v, NULL);
}

/* What each NCCL log says about the communication stack: context for the
 * verdicts (and the whole answer when nothing failed). */
static void add_nccl_facts(rep_report *r, const dg_ctx *c)
{
    rep_node *arr = rep_arr(r, r->root, "nccl", "NCCL configuration seen");
    for (int i = 0; i < c->n_inputs; i++) {
        const rd_nccl_facts *f = c->inputs[i].nccl;
        if (!f->nccl_lines) continue;
        rep_node *o = rep_obj(r, arr, NULL, NULL);
        rep_str(r, o, "file", "file", c->inputs[i].path);
        opt_str(r, o, "version", "NCCL version", f->version);
        opt_str(r, o, "bootstrap", "bootstrap interface", f->bootstrap_if);
        opt_str(r, o, "net_plugin", "net plugin", f->net_plugin);
        static const char *const nets[] = {NULL, "ib", "socket", "other"};
        opt_str(r, o, "network", "network", f->network[0] ? f->network : nets[f->net]);
        rep_node *devs = rep_arr(r, o, "ib_devices", "IB/RoCE devices");
        for (int d = 0; d < f->n_devs; d++) {
            char buf[96];
            snprintf(buf, sizeof buf, "%s:%d/%s%s", f->devs[d].name, f->devs[d].port, f->devs[d].link,
                     f->devs[d].sharp ? "/SHARP" : "");
            rep_str(r, devs, NULL, NULL, buf);
        }
        opt_int(r, o, "gid_index", "GID index", f->gid_index, -1);
        static const char *const gdr[] = {NULL, "on", "off"};
        opt_str(r, o, "gdr", "GPU Direct RDMA", gdr[f->gdr]);
        opt_str(r, o, "gdr_reason", "GDR reason", f->gdr_reason);
        rep_node *tr = rep_obj(r, o, "transports", "channel transports");
        for (int t = 0; t < RD_NCCL_TR_COUNT; t++)
            if (f->transports[t]) rep_int(r, tr, rd_nccl_transport_key(t), rd_nccl_transport_name(t), f->transports[t], NULL);
        rep_int(r, o, "rings", "ring lines", f->rings, NULL);
        rep_int(r, o, "trees", "tree lines", f->trees, NULL);
        opt_int(r, o, "coll_channels", "coll channels", f->coll_channels, -1);
        opt_int(r, o, "nvls_channels", "nvls channels", f->nvls_channels, -1);
        if (f->nvls_available < 0) rep_null(r, o, "nvls_available", "NVLS available", NULL);
        else rep_bool(r, o, "nvls_available", "NVLS available", f->nvls_available == 1);
        opt_int(r, o, "nranks", "ranks", f->nranks, 0);
        rep_int(r, o, "hosts", "hosts seen", f->n_hosts, NULL);
        rep_int(r, o, "warnings", "NCCL WARN lines", f->warn_lines, NULL);
    }
}

/* caps and cut lines, counted under the shared diagnostic codes */
static void count_damage(const dg_ctx *c, diag_set *d)
{
    diag_init(d);
    if (c->inputs_dropped) diag_count_n(d, DIAG_LIMIT_REACHED, (uint64_t)c->inputs_dropped, NULL, -1);
    if (c->events_dropped) diag_count_n(d, DIAG_LIMIT_REACHED, (uint64_t)c->events_dropped, NULL, -1);
    for (int i = 0; i < c->n_inputs; i++) {
        const dg_input *in = &c->inputs[i];
        long over = in->nccl->issues_dropped + in->nccl->hosts_dropped + in->torch->dropped + in->dmesg->dropped +
                    (in->smiq ? in->smiq->gpus_dropped : 0) + in->long_lines;
        if (over) diag_count_n(d, DIAG_LIMIT_REACHED, (uint64_t)over, in->path, -1);
        if (in->truncated) diag_count(d, DIAG_TRUNCATED_FILE, in->path, in->bytes);
        if (in->file_rank_lines) diag_count(d, DIAG_RANK_FROM_FILENAME, in->path, -1);
    }
}

int cmd_diagnose(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done) return rc;
    if (ctx->args.n_pos == 0) return cli_usage_error(ctx, "no input: give log files, directories or globs");
    double fail_on = -1;
    if (cli_get(ctx, O_FAIL_ON) && (fail_on = parse_fail_on(cli_get(ctx, O_FAIL_ON))) < 0)
        return cli_usage_error(ctx, "--fail-on %s: expected any, medium, high or a number from 0 to 1", cli_get(ctx, O_FAIL_ON));
    long max_events;
    if (cli_get_long(ctx, O_EVENTS, 200, 0, DG_MAX_EVENTS, &max_events) < 0) return CLI_EXIT_USAGE;

    cp_paths paths;
    if ((rc = cli_expand_inputs(ctx, keep_log_file, &paths)) != 0)
        return rc;
    cp_error err;
    cp_error_clear(&err);
    int nthreads = cli_threads(ctx);
    if (nthreads < 0) {
        cp_paths_free(&paths);
        return CLI_EXIT_USAGE;
    }
    dg_ctx *c = dg_new();
    cp_error_clear(&err);
    if (dg_add_files(c, paths.v, paths.n, nthreads, &err) < 0) rc = cli_fail(&err);
    rep_report *rep = NULL;
    if (rc) goto out;
    dg_run(c);

    /* verdict first, then the timeline, then what was read (the text
     * writer follows this order) */
    rep = rep_new("chainprof.diagnose/1", ctx->argc, ctx->argv);
    char summary[400];
    if (c->n_verdicts)
        snprintf(summary, sizeof summary, "%s (confidence %.2f)", c->verdicts[0].title, c->verdicts[0].confidence);
    else
        dg_summary(c, summary, sizeof summary);
    rep_str(rep, rep->root, "summary", "diagnosis", summary);
    add_verdicts(rep, c);
    add_first_failure(rep, c);
    add_events(rep, c, max_events);
    add_nccl_facts(rep, c);
    for (int i = 0; i < c->n_inputs; i++) {
        rep_node *in = rep_input(rep, c->inputs[i].path, c->inputs[i].kinds, (uint64_t)c->inputs[i].bytes);
        rep_int(rep, in, "lines", "lines", c->inputs[i].lines, NULL);
    }
    diag_set d;
    count_damage(c, &d);
    rep_diagnostics(rep, &d);
    rc = cli_emit(ctx, rep, paths.v, paths.n);
    if (!rc && fail_on >= 0 && c->n_verdicts && c->verdicts[0].confidence >= fail_on) {
        cp_log_info("diagnose: verdict %s at confidence %.2f >= --fail-on %s", c->verdicts[0].code,
                    c->verdicts[0].confidence, cli_get(ctx, O_FAIL_ON));
        rc = CLI_EXIT_CHECK;
    }
out:
    rep_free(rep);
    dg_free(c);
    cp_paths_free(&paths);
    return rc;
}
