/* cmd_plan.c - `chainprof plan`: search layouts, what-if, capacity.
 *
 * Pinned layout flags (--tp, --pp, --zero, ...) constrain the search; every
 * other degree is enumerated by plan_search(). --what-if re-runs the search
 * with the changes and reports both the new best layout and the old best
 * layout under the new conditions. --tokens with --days (and no --gpus)
 * finds the smallest GPU count that trains the budget in time (doubling,
 * then bisecting whole nodes); --tokens with --gpus answers how many days
 * it takes.
 */
#include "cli.h"
#include "plan_args.h"
#include "../base/util.h"
#include "../plan/plan_report.h"
#include "../plan/planner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_TOP = 100, O_WHAT_IF, O_TOKENS, O_DAYS, O_MAX_GPUS };

static const cli_opt own_opts[] = {
    {"top", 'k', "K", O_TOP, 0, "show the K fastest fitting layouts (default 5)"},
    {"what-if", 0, "KEY=VALUE[,...]", O_WHAT_IF, 0, "re-plan with these changes and show the gain"},
    {"tokens", 0, "N", O_TOKENS, 0, "token budget for capacity questions (e.g. 15e12)"},
    {"days", 0, "D", O_DAYS, 0, "time budget in days: with --tokens and no --gpus, find the GPU count"},
    {"max-gpus", 0, "N", O_MAX_GPUS, 0, "largest GPU count tried by the capacity search (default 65536)"},
};

static void space_from(const plan_args *pa, plan_space *sp)
{
    plan_space_init(sp);
    sp->tp = pa->tp, sp->pp = pa->pp, sp->cp = pa->cp, sp->ep = pa->ep, sp->vpp = pa->vpp, sp->etp = pa->etp;
    sp->micro_batch = pa->micro_batch;
    sp->zero = pa->zero, sp->recompute = pa->recompute, sp->sp = pa->sp;
}

/* Default global batch: about 4M tokens per step (GPT-3 used 3.2M, Llama 3
 * 4M-16M), rounded to a power of two sequences. */
static void default_batch(plan_inputs *in)
{
    if (in->global_batch > 0 || in->shape.seq <= 0) return;
    double seqs = 4194304.0 / in->shape.seq;
    int gb = 1;
    while (gb * 2 <= seqs + 0.5) gb *= 2;
    in->global_batch = gb;
}

static const rep_col k_cols[] = {
    {"rank", "#", NULL, -1},
    {"layout", "layout", NULL, -1},
    {"tokens_per_s", "tokens/s", "tokens/s", 0},
    {"step_time_s", "step", "s", 3},
    {"mfu", "MFU", NULL, 3},
    {"memory_bytes", "memory", "bytes", -1},
    {"compute_s", "compute", "s", 3},
    {"tp_comm_s", "TP", "s", 3},
    {"cp_comm_s", "CP", "s", 3},
    {"pp_bubble_s", "bubble", "s", 3},
    {"pp_p2p_s", "P2P", "s", 3},
    {"dp_comm_s", "DP", "s", 3},
    {"ep_comm_s", "EP", "s", 3},
    {"other_s", "opt+data+ckpt", "s", 3},
};

static void add_table(rep_report *r, rep_node *parent, const char *key, const char *title,
                      const plan_candidate *c, int n)
{
    rep_node *t = rep_table(r, parent, key, title, k_cols, CP_ARRAY_LEN(k_cols));
    for (int i = 0; i < n; i++) {
        const plan_result *x = &c[i].res;
        const plan_breakdown *b = &x->breakdown;
        char lay[160];
        plan_layout_text(&c[i].in, x, lay, sizeof lay);
        rep_node *row = rep_row(r, t);
        rep_cell_int(r, row, i + 1);
        rep_cell_str(r, row, lay);
        rep_cell_num(r, row, x->tokens_per_s);
        rep_cell_num(r, row, x->step_time_s);
        rep_cell_num(r, row, x->mfu);
        rep_cell_num(r, row, x->memory.total_bytes);
        rep_cell_num(r, row, b->compute_s);
        rep_cell_num(r, row, b->tp_comm_s);
        rep_cell_num(r, row, b->cp_comm_s);
        rep_cell_num(r, row, b->pp_bubble_s);
        rep_cell_num(r, row, b->pp_p2p_s);
        rep_cell_num(r, row, b->dp_comm_s);
        rep_cell_num(r, row, b->ep_comm_s);
        rep_cell_num(r, row, b->optimizer_s + b->data_s + b->checkpoint_s);
    }
}

static void add_stats(rep_report *r, rep_node *parent, const plan_search_stats *st, double ms)
{
    rep_node *s = rep_obj(r, parent, "search", "search");
    rep_int(r, s, "evaluated", "layouts evaluated", st->evaluated, NULL);
    rep_int(r, s, "invalid", "inconsistent", st->invalid, NULL);
    rep_int(r, s, "no_fit", "do not fit in memory", st->no_fit, NULL);
    rep_int(r, s, "fitting", "fitting", st->kept, NULL);
    rep_num(r, s, "elapsed_ms", "search time", ms, "ms");
}

/* Does the best layout on g GPUs train `tokens` within `days`? */
static int trains_in_time(const plan_args *pa, const plan_space *sp, int g, double tokens, double days,
                          plan_candidate *best)
{
    plan_inputs in = pa->in;
    in.gpus = g;
    return plan_search(&in, sp, best, 1, NULL) == 1 && tokens / best->res.tokens_per_s <= days * 86400.0;
}

/* Smallest GPU count that trains `tokens` within `days`: doubling whole
 * nodes until one does, then bisecting the node count between the last
 * failure and the first success (layout divisibility makes the answer
 * "smallest found", not a proof of minimality). Returns 0 when none up to
 * max_gpus does; *best is the winning layout. */
static int capacity_gpus(const plan_args *pa, const plan_space *sp, double tokens, double days, int max_gpus,
                         plan_candidate *best)
{
    int gpn = pa->in.gpus_per_node > 0 ? pa->in.gpus_per_node : pa->in.gpu->gpus_per_node;
    int lo = 0, hi = 0; /* in nodes: lo fails (0 = none tried), hi succeeds */
    for (int nodes = 1; nodes * gpn <= max_gpus; nodes *= 2) {
        if (trains_in_time(pa, sp, nodes * gpn, tokens, days, best)) {
            hi = nodes;
            break;
        }
        lo = nodes;
    }
    if (!hi) return 0;
    plan_candidate probe;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (trains_in_time(pa, sp, mid * gpn, tokens, days, &probe)) hi = mid;
        else lo = mid;
    }
    trains_in_time(pa, sp, hi * gpn, tokens, days, best);
    return hi * gpn;
}

int cmd_plan(cli_ctx *ctx)
{
    size_t n;
    cli_opt *table = plan_cli_table(own_opts, CP_ARRAY_LEN(own_opts), &n);
    bool done;
    plan_candidate *top = NULL, *alt = NULL;
    rep_report *r = NULL;
    int rc = cli_parse_cmd(ctx, table, n, true, &done);
    if (rc || done) goto out;
    long k, max_gpus;
    double tokens, days;
    if (cli_get_long(ctx, O_TOP, 5, 1, 1000, &k) < 0 || cli_get_double(ctx, O_TOKENS, NAN, 1, 1e18, &tokens) < 0 ||
        cli_get_double(ctx, O_DAYS, NAN, 1e-6, 1e6, &days) < 0 ||
        cli_get_long(ctx, O_MAX_GPUS, 65536, 1, 1 << 24, &max_gpus) < 0) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    plan_args pa;
    if ((rc = plan_args_build(ctx, &pa)) != 0) goto out;
    if (pa.in.shape.layers <= 0 || pa.in.shape.hidden <= 0 || pa.in.shape.heads <= 0 || pa.in.shape.seq <= 0 ||
        pa.in.shape.vocab <= 0) {
        rc = cli_usage_error(ctx, "no model: give --preset NAME or --layers, --hidden, --heads, --seq and --vocab");
        goto out;
    }
    default_batch(&pa.in);
    plan_space sp;
    space_from(&pa, &sp);
    r = rep_new("chainprof.plan/1", ctx->argc, ctx->argv);
    rep_arr(r, r->root, "inputs", "inputs");
    plan_candidate cap_best;
    if (!isnan(tokens) && pa.in.gpus <= 0) {
        if (isnan(days)) {
            rc = cli_usage_error(ctx, "--tokens without --gpus needs --days");
            goto out;
        }
        int g = capacity_gpus(&pa, &sp, tokens, days, (int)max_gpus, &cap_best);
        rep_node *c = rep_obj(r, r->root, "capacity", "capacity");
        rep_num(r, c, "tokens", "token budget", tokens, "tokens");
        rep_num(r, c, "days", "time budget", days, "days");
        if (!g) {
            rep_null(r, c, "gpus", "GPUs needed", NULL);
            rep_str(r, c, "note", "note", "no GPU count up to --max-gpus trains the budget in time");
            rc = cli_emit(ctx, r, NULL, 0);
            goto out;
        }
        rep_int(r, c, "gpus", "GPUs needed", g, NULL);
        rep_num(r, c, "train_days", "training time at that size", tokens / cap_best.res.tokens_per_s / 86400.0, "days");
        pa.in.gpus = g;
    }
    if (pa.in.gpus <= 0) {
        rc = cli_usage_error(ctx, "no GPU count: give --gpus N (or --tokens and --days)");
        goto out;
    }
    top = cp_xcalloc((size_t)k, sizeof *top);
    plan_search_stats st;
    int64_t t0 = cp_now_ns();
    int got = plan_search(&pa.in, &sp, top, (int)k, &st);
    double ms = (double)(cp_now_ns() - t0) / 1e6;
    if (got > 0) plan_report_inputs(r, r->root, pa.model_name, &top[0].in, &top[0].res);
    add_stats(r, r->root, &st, ms);
    if (got == 0) {
        rep_node *nf = rep_obj(r, r->root, "no_fit", "nothing fits");
        if (st.no_fit == 0)
            rep_str(r, nf, "reason", "no valid layout; the first one rejected because", st.first_invalid);
        if (st.no_fit > 0) {
            char lay[160];
            plan_layout_text(&top[0].in, &top[0].res, lay, sizeof lay);
            rep_str(r, nf, "closest_layout", "closest layout", lay);
            rep_num(r, nf, "needs_bytes", "needs", top[0].res.memory.total_bytes, "bytes");
            rep_num(r, nf, "hbm_bytes", "HBM", top[0].res.memory.hbm_bytes, "bytes");
            rep_str(r, nf, "overflow", "largest component", top[0].res.memory.overflow ? top[0].res.memory.overflow : "");
        }
        rc = cli_emit(ctx, r, NULL, 0);
        if (rc == 0) rc = CLI_EXIT_FAIL;
        goto out;
    }
    add_table(r, r->root, "layouts", "fastest fitting layouts", top, got);
    rep_node *best = rep_obj(r, r->root, "best", "best layout");
    char lay[160];
    plan_layout_text(&top[0].in, &top[0].res, lay, sizeof lay);
    rep_str(r, best, "layout_text", "layout", lay);
    plan_report_result(r, best, &top[0].in, &top[0].res);
    if (!isnan(tokens)) {
        rep_node *c = rep_child(r->root, "capacity");
        if (!c) {
            c = rep_obj(r, r->root, "capacity", "capacity");
            rep_num(r, c, "tokens", "token budget", tokens, "tokens");
            rep_int(r, c, "gpus", "GPUs", pa.in.gpus, NULL);
        }
        rep_num(r, c, "best_layout_days", "training time with the best layout", tokens / top[0].res.tokens_per_s / 86400.0, "days");
    }
    const char *wi = cli_get(ctx, O_WHAT_IF);
    if (wi) {
        plan_args wa = pa;
        if ((rc = plan_args_apply_list(ctx, &wa, wi)) != 0) goto out;
        plan_space wsp;
        space_from(&wa, &wsp);
        alt = cp_xcalloc((size_t)k, sizeof *alt);
        plan_search_stats wst;
        int wgot = plan_search(&wa.in, &wsp, alt, (int)k, &wst);
        rep_node *w;
        if (wgot > 0) {
            plan_report_delta(r, r->root, "what_if", wi, &top[0].res, &alt[0].res);
            w = rep_child(r->root, "what_if");
            plan_layout_text(&alt[0].in, &alt[0].res, lay, sizeof lay);
            rep_str(r, w, "best_layout", "best layout after the change", lay);
            add_table(r, w, "layouts", "fastest fitting layouts after the change", alt, wgot);
        } else {
            w = rep_obj(r, r->root, "what_if", "what-if");
            rep_str(r, w, "changes", "changes", wi);
            rep_str(r, w, "note", "note", "no layout fits after the change");
        }
        /* the baseline's best layout under the changed conditions */
        plan_args same = pa;
        plan_args_apply_list(ctx, &same, wi);
        plan_inputs si = top[0].in;
        si.gpu = same.in.gpu, si.net_efficiency = same.in.net_efficiency, si.gemm_efficiency = same.in.gemm_efficiency;
        si.nic_gbit_s = same.in.nic_gbit_s, si.nics_per_node = same.in.nics_per_node, si.nvlink_gbytes = same.in.nvlink_gbytes;
        si.storage_gbytes = same.in.storage_gbytes, si.ckpt_every_s = same.in.ckpt_every_s, si.ckpt_async = same.in.ckpt_async;
        si.data_stall_ms = same.in.data_stall_ms, si.power_w = same.in.power_w, si.hbm_bytes = same.in.hbm_bytes;
        plan_result sres;
        char err[200];
        if (plan_model(&si, &sres, err, sizeof err) == 0)
            plan_report_delta(r, w, "same_layout", "baseline best layout under the changes", &top[0].res, &sres);
    }
    rc = cli_emit(ctx, r, NULL, 0);
out:
    rep_free(r);
    free(top);
    free(alt);
    free(table);
    return rc;
}
