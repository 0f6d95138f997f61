/* cmd_analyze.c - `chainprof analyze`: traces and evidence in, one report out.
 *
 * Flow: expand the arguments (files, directories, globs) into input files;
 * sniff each one's content and hand it to the most confident trace reader;
 * read traces in parallel, one builder per file, one thread per file up to
 * --threads; freeze the timeline; run every analyzer; render. An input no
 * reader recognises stops the run with exit 3 and file:offset: reason,
 * because a wrong file on the command line is a user error worth fixing,
 * whereas damaged records inside a recognised file are counted and skipped.
 */
#include "cli.h"
#include "analyze_dist.h"
#include "../analysis/an_verdict.h"
#include "../analysis/an_critpath.h"
#include "../analysis/an_results.h"
#include "../base/afile.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/paths.h"
#include "../base/src.h"
#include "../base/util.h"
#include "../model/evidence.h"
#include "../readers/evidence.h"
#include "../readers/rd_ncu.h"
#include "../readers/reader.h"
#include "../render/render_perfetto.h"

#include <errno.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_GPUS_PER_NODE = 100, O_RANK_MAP, O_FAIL_ON, O_NIC_GBPS, O_NVLINK_GBPS, O_DETAIL, O_DB, O_NO_HISTORY,
       O_LAUNCH_TABLE, O_CKPT_EVERY, O_QUEUE_MAX, O_KSEQ, O_KSEQ_MIN, O_KSEQ_TOP,
       O_ANNOT_TOP, O_ANNOT_KEEP };

static const cli_opt opts[] = {
    { "gpus-per-node", 0, "N", O_GPUS_PER_NODE, 0,
      "GPUs per node, for intra/inter-node scope (default: the trace's device count)" },
    { "rank-map", 0, "PID=RANK,...", O_RANK_MAP, 0,
      "ranks of processes in Nsight Systems reports (default: one rank per process, in pid order)" },
    { "detail", 0, NULL, O_DETAIL, 0,
      "text output also lists every input and every rank's full analyses (JSON and CSV always have them)" },
    { "launch-table", 0, NULL, O_LAUNCH_TABLE, 0,
      "list every kernel launch in launch_stats.by_correlation (default: outliers only, at most 1000)" },
    { "queue-max", 0, "N", O_QUEUE_MAX, 0,
      "launch queue length counted as full in queue_full (default 1024, CUDA's per stream)" },
    { "kernel-seq", 0, "OP", O_KSEQ, 0,
      "frequent GPU kernel sequences launched by the shallowest ops whose name contains OP (HTA's)" },
    { "kernel-seq-min", 0, "N", O_KSEQ_MIN, 0, "GPU events an op needs for --kernel-seq (default 3)" },
    { "kernel-seq-top", 0, "N", O_KSEQ_TOP, 0, "patterns counted as top for --kernel-seq (default 5)" },
    { "annotation-top", 0, "N", O_ANNOT_TOP, 0,
      "user annotations listed by name before the rest fold into \"others\" (default 1000, HTA's)" },
    { "annotation-keep", 0, "STR", O_ANNOT_KEEP, 0,
      "user annotations whose name contains STR never fold into \"others\" (repeatable; HTA's allowlist)" },
    { "fail-on", 0, "SEVERITY", O_FAIL_ON, 0,
      "exit 4 when a finding at or above SEVERITY exists (info|low|medium|high|critical)" },
    { "nic-gbps", 0, "GBIT", O_NIC_GBPS, 0,
      "NIC line rate per GPU in Gb/s, the expected inter-node busbw (default: hardware catalog)" },
    { "nvlink-gbps", 0, "GBYTE", O_NVLINK_GBPS, 0,
      "NVLink bandwidth per GPU per direction in GB/s, the expected intra-node busbw (default: catalog)" },
    { "ckpt-every", 0, "SECONDS|Nsteps", O_CKPT_EVERY, 0,
      "checkpoint interval, to amortise a checkpoint stall (default: the trace's, else one every 30 min)" },
    { "db", 0, "PATH", O_DB, 0, "history database (default $XDG_DATA_HOME/chainprof/history.db)" },
    { "no-history", 0, NULL, O_NO_HISTORY, 0, "do not record this run in the history database" },
};

typedef struct input {
    const char *path;            /* what is opened: the file, or the spool of a pipe */
    const char *name;            /* what the user named (reports) */
    int spool_fd;                /* a pipe's data in memory (cp_src_spool), -1 none */
    char spool_path[64];
    const rd_trace_reader *reader;
    tl_builder *builder;
    tl_builder **extra; /* more ranks from the same file (rd_opts.more) */
    size_t n_extra;
    cp_error err;
    int rc;
    uint64_t size_bytes;
    const char *compression;
    bool from_dir;               /* found in a directory or by a glob, not named */
    bool remote;                 /* another process reads it (mpirun) */
    bool skipped;                /* from_dir and not a format we read */
    bool evidence;               /* not a trace: read into the evidence set */
    char kinds[96];              /* the evidence kinds found in it */
} input;

static bool is_evidence(const input *in) { return in->evidence; }
static const char *input_kind(const input *in) { return in->evidence ? in->kinds : in->reader->name; }

typedef struct read_job {
    input *inputs;
    size_t n;
    const char *rank_map;
    int threads_per_input; /* for a reader that splits one input (nsys) */
} read_job;

static tl_builder *more_builder(void *ctx, const char *source)
{
    input *in = ctx;
    in->extra = cp_xrealloc(in->extra, (in->n_extra + 1) * sizeof *in->extra);
    return in->extra[in->n_extra++] = tl_builder_new(source);
}

static void read_one(void *ctx, size_t i)
{
    read_job *job = ctx;
    input *in = &job->inputs[i];
    rd_opts ro = { .more = more_builder, .more_ctx = in, .rank_map = job->rank_map, .threads = job->threads_per_input };
    cp_error_clear(&in->err);
    if (is_evidence(in) || in->remote)
        return;
    in->builder = tl_builder_new(in->name);
    in->rc = in->reader->read(in->path, in->builder, &ro, &in->err);
}

/* An input that cannot be read (damaged beyond its first bytes, an I/O
 * error): among several inputs it is skipped with a warning, counted, and
 * the others are analysed (issue 21: one bad .zst must not stop a
 * 256-rank directory); alone it stops the run with its exit code. Returns
 * 0 when skipped, else the exit code. */
static int drop_input(input *in, size_t n_inputs, const cp_error *err, diag_set *skipped)
{
    if (n_inputs < 2)
        return cli_fail(err);
    char buf[1200];
    cp_log_warn("%s (skipped; the other inputs are analysed)", cp_error_format(err, buf, sizeof buf));
    diag_count(skipped, DIAG_UNREADABLE_FILE, in->name, -1);
    in->skipped = true;
    return 0;
}

/* --rank-map PID=RANK,...: every item whole numbers, PID > 0, 0 <= RANK <
 * INT32_MAX (the reader skips what it cannot use, so a typo would otherwise
 * pass silently: "--rank-map abc" was accepted). */
static bool valid_rank_map(const char *map)
{
    const char *s = map;
    do {
        char *end;
        errno = 0;
        long long pid = strtoll(s, &end, 10);
        if (end == s || *end != '=' || pid <= 0 || errno)
            return false;
        s = end + 1;
        long long rank = strtoll(s, &end, 10);
        if (end == s || rank < 0 || rank >= INT32_MAX || errno || (*end && *end != ','))
            return false;
        s = *end ? end + 1 : end;
    } while (*s);
    return true;
}

/* Whether the heap tunables (cli_reexec_with_thp) pay for these inputs:
 * they serve large traces, whose big arrays dominate; with the 2 MiB pages
 * they then included, 10,000 files of 170 bytes took 1.66 GB and 16.9 s
 * with them, 0.85 GB and 13.3 s without (docs/PERFORMANCE.md), and small
 * inputs gain nothing from a large mmap threshold either. So: only when the
 * inputs average at least CP_THP_MIN_MEAN_BYTES of JSON (pipes, of unknown
 * size, count as small). */
#define CP_THP_MIN_MEAN_BYTES (16u << 20)
static bool thp_pays(const cp_paths *paths)
{
    uint64_t total = 0;
    for (size_t i = 0; i < paths->n; i++) {
        struct stat st;
        if (stat(paths->v[i], &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        size_t len = strlen(paths->v[i]);
        bool packed = (len > 3 && !strcmp(paths->v[i] + len - 3, ".gz")) ||
                      (len > 4 && !strcmp(paths->v[i] + len - 4, ".zst"));
        /* Kineto JSON compresses ~10x or more (the reader's own estimate is 12x) */
        total += (uint64_t)st.st_size * (packed ? 10 : 1);
    }
    return paths->n && total / paths->n >= CP_THP_MIN_MEAN_BYTES;
}

/* Inputs that can be read only once (FIFOs, pipes) are copied into memory
 * first, in one pass, so sniffing and reading each see all of it (issue 21:
 * `analyze f.fifo` hung, `analyze <(zcat x.gz)` saw an empty input). At
 * most half the machine's memory; a device is refused. Returns an exit code. */
static int spool_pipes(input *inputs, size_t n, diag_set *skipped)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t max_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (uint64_t)1 << 32;
    for (size_t i = 0; i < n; i++) {
        cp_error err;
        cp_error_clear(&err);
        int r = cp_src_spool(inputs[i].name, inputs[i].spool_path, sizeof inputs[i].spool_path, max_bytes,
                             &inputs[i].spool_fd, &err);
        if (r < 0 && (r = drop_input(&inputs[i], n, &err, skipped)) != 0)
            return r;
        if (r > 0)
            inputs[i].path = inputs[i].spool_path;
    }
    return 0;
}

/* Sniff every input for a trace format; returns an exit code. */
static int detect_inputs(input *inputs, size_t n, diag_set *skipped)
{
    unsigned char *head = cp_xmalloc(RD_SNIFF_BYTES);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        cp_error err;
        cp_error_clear(&err);
        ssize_t got = cp_src_peek(inputs[i].path, head, RD_SNIFF_BYTES, &err);
        if (got < 0) {
            rc = drop_input(&inputs[i], n, &err, skipped);
            continue;
        }
        cp_src *s;
        if (cp_src_open(&s, inputs[i].path, NULL) == 0) {
            inputs[i].size_bytes = cp_src_raw_size(s);
            inputs[i].compression = cp_src_kind_name(cp_src_get_kind(s));
            cp_src_close(s);
        }
        inputs[i].reader = rd_detect(inputs[i].name, head, (size_t)got);
        inputs[i].evidence = !inputs[i].reader; /* the evidence loop decides what it is */
        if (rd_ncurep_ready(inputs[i].path, &err) < 0) { /* an .ncu-rep needs ncu: say what to run */
            rc = cli_fail(&err);
            break;
        }
    }
    free(head);
    return rc;
}

/* Read the evidence inputs into set (before the traces: they are small, and
 * a file that is nothing chainprof reads should stop the run before the
 * long part). A named file in which no reader finds its kind stops the run
 * (exit 3); one found in a directory is skipped and counted. */
static int load_evidence(input *inputs, size_t n, int nthreads, ev_set *set, diag_set *skipped)
{
    char **paths = cp_xcalloc(n ? n : 1, sizeof *paths);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (inputs[i].evidence)
            paths[m++] = (char *)inputs[i].path;
    cp_error err;
    cp_error_clear(&err);
    long dropped = 0;
    int rc = rd_ev_read_files(set, paths, m, nthreads, &dropped, &err);
    free(paths);
    if (rc < 0)
        return cli_fail(&err);
    if (dropped)
        diag_count_n(skipped, DIAG_LIMIT_REACHED, (uint64_t)dropped, NULL, -1);
    size_t k = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        input *in = &inputs[i];
        if (!in->evidence)
            continue;
        if (k >= set->n_inputs) { /* past RD_EV_MAX_INPUTS: counted above */
            in->skipped = true;
            continue;
        }
        const ev_input *ei = &set->inputs[k++];
        ev_kinds_str(ei->kinds, in->kinds, sizeof in->kinds);
        if (ei->kinds)
            continue;
        if (in->from_dir) { /* a stray file in a trace directory (a README, synth.json) */
            in->skipped = true;
            diag_count(skipped, DIAG_SKIPPED_FILE, in->name, -1);
            cp_log_warn("%s: skipped: not a trace or evidence format chainprof analyze reads", in->name);
            continue;
        }
        cp_error_set(&err, CP_ERR_FORMAT, in->name, 0, 0, 0,
                     "input not recognised: not a trace or evidence format chainprof analyze reads");
        rc = cli_fail(&err);
    }
    return rc;
}

/* The verdict first, then the per-rank summary and the layer view; the
 * envelope's inputs and the per-rank detail last, and in text only with
 * --detail (a 256-rank job would otherwise print thousands of lines before
 * the verdict). JSON and CSV keep everything. */
static void order_for_people(rep_report *rep, bool detail)
{
    static const char *const first[] = { "verdict", "findings", "rank_summary", "layer_breakdown" };
    const char *after = "command";
    for (size_t i = 0; i < CP_ARRAY_LEN(first); i++)
        if (rep_move_after(rep->root, first[i], after))
            after = first[i];
    rep_node *root = rep->root;
    const char *last[] = { "diagnostics", "inputs", "ranks" };
    for (size_t i = 0; i < CP_ARRAY_LEN(last); i++) {
        rep_node *n = rep_child(root, last[i]);
        if (n && root->last != n)
            rep_move_after(root, last[i], root->last->key);
    }
    if (!detail)
        for (size_t i = 1; i < CP_ARRAY_LEN(last); i++) {
            rep_node *n = rep_child(root, last[i]);
            if (n)
                n->flags |= REP_F_NO_TEXT;
        }
}

/* True when path is an existing file named on the command line (not found
 * by walking a directory or expanding a glob). */
static bool named_file(const cli_ctx *ctx, const char *path)
{
    for (size_t i = 0; i < ctx->args.n_pos; i++) {
        struct stat st;
        if (strcmp(ctx->args.pos[i], path) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

static bool keep_trace_file(const char *path, void *ctx)
{
    (void)ctx;
    return cp_str_ends(path, ".json") || cp_str_ends(path, ".json.gz") || cp_str_ends(path, ".json.zst") ||
           cp_str_ends(path, ".sqlite") || cp_str_ends(path, ".nsys-rep") || cp_str_ends(path, ".ncu-rep") || cp_str_ends(path, ".log") || cp_str_ends(path, ".txt") ||
           cp_str_ends(path, ".cptrace") ||
           /* PyTorch's raw memory timeline as HTA's tests name it (memory_timeline.raw.gz) */
           cp_str_ends(path, ".raw") || cp_str_ends(path, ".raw.gz") || cp_str_ends(path, ".raw.zst");
}

/* --ckpt-every: "900" or "900s" seconds (as `chainprof model` takes it),
 * "500steps" steps. Returns 0 or -1. */
/* The critical path's hops as the overlay's plain spans (NULL when the
 * analyzer did not run); *spans is the caller's to free. */
static const rp_critpath *critpath_spans(const tl_timeline *tl, an_ctx *an, rp_critpath *cp, rp_cp_span **spans)
{
    const an_critpath_result *cr = an->results[AN_critpath];
    *spans = NULL;
    if (!cr)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < cr->n_steps; i++)
        n += cr->paths[i].n_hops;
    rp_cp_span *v = cp_xcalloc(n ? n : 1, sizeof *v);
    *cp = (rp_critpath){ v, n, cr->n_steps, 0 };
    n = 0;
    for (size_t i = 0; i < cr->n_steps; i++) {
        const an_cp_path *p = &cr->paths[i];
        cp->truncated += p->truncated;
        for (size_t k = 0; k < p->n_hops; k++) {
            const an_cp_hop *h = &p->hops[k];
            const char *edge = h->edge < AN_CE__COUNT ? an_cp_edge_name((an_cp_edge)h->edge) : "window_start";
            /* a wait (idle time, or no event holds it) is named by its edge */
            bool wait = h->ev < 0 || h->layer == CP_LAYER_IDLE;
            v[n++] = (rp_cp_span){ h->start_ns, h->end_ns - h->start_ns, p->id, h->rank,
                                   wait ? edge : tl_str(tl, tl->name[h->ev]), edge, (cp_layer)h->layer };
        }
    }
    *spans = v;
    return cp;
}

/* The Perfetto overlays asked for (-o *.perfetto.json, --format perfetto on
 * stdout): they need the timeline and the layer sweep, which only this
 * command holds, so cli_emit leaves them to it. */
/* Every rank's counter tracks in the exact view (an_counter_tracks_of) as
 * the overlay writer's plain data, pointing at the analysis' own points
 * (own[r], freed by free_counter_tracks). */
static rp_counters *counter_tracks(const tl_timeline *tl, const an_ctx *an, an_counter_track ***own)
{
    _Static_assert(sizeof(rp_counter_pt) == sizeof(an_counter_pt), "counter point layouts differ");
    rp_counters *c = cp_xcalloc(tl->n_ranks + 1, sizeof *c);
    *own = cp_xcalloc(tl->n_ranks + 1, sizeof **own);
    for (size_t r = 0; r < tl->n_ranks; r++) {
        const an_rank_views *rv = an_views(an, r);
        if (!rv)
            continue;
        an_counter_track *t;
        size_t n = an_counter_tracks_of(an, &rv->exact, &t);
        rp_counter_track *v = cp_xcalloc(n + 1, sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = (rp_counter_track){ t[i].name, t[i].arg, t[i].stream, t[i].device,
                                       (const rp_counter_pt *)(const void *)t[i].pts, t[i].n };
        c[r] = (rp_counters){ v, n };
        (*own)[r] = t;
    }
    return c;
}

static void free_counter_tracks(rp_counters *c, an_counter_track **own, size_t n_ranks)
{
    for (size_t r = 0; r < n_ranks; r++) {
        if (own[r])
            an_counter_tracks_free(own[r], c[r].n);
        free((void *)c[r].v);
    }
    free(own);
    free(c);
}

static int write_perfetto(const cli_ctx *ctx, const tl_timeline *tl, an_ctx *an, const rep_report *rep,
                          char *const *inputs, size_t n_inputs)
{
    const char *outs[64];
    size_t n_out = cli_get_all(ctx, CLI_O_OUTPUT, outs, CP_ARRAY_LEN(outs));
    const char *fmt = cli_get(ctx, CLI_O_FORMAT);
    bool to_stdout = fmt && !cli_has(ctx, CLI_O_JSON) && strcmp(fmt, "perfetto") == 0;
    size_t want = to_stdout;
    for (size_t i = 0; i < n_out && i < CP_ARRAY_LEN(outs); i++) {
        const render_format *f = render_for_path(outs[i]);
        want += f && !f->fn;
        for (size_t k = 0; f && !f->fn && k < n_inputs; k++)
            if (!strcmp(outs[i], inputs[k]) || cp_same_file(outs[i], inputs[k]))
                return cli_usage_error(ctx, "-o %s: refusing to overwrite an input file", outs[i]);
    }
    if (!want)
        return 0;
    an_layer_track *lt = an_layers_timeline(an);
    rp_layer_track *tracks = cp_xcalloc(tl->n_ranks + 1, sizeof *tracks);
    for (size_t i = 0; i < tl->n_ranks; i++) {
        tracks[i].v = (const rp_layer_seg *)lt[i].v; /* same layout: checked below */
        tracks[i].n = lt[i].n;
    }
    _Static_assert(sizeof(rp_layer_seg) == sizeof(an_layer_seg), "segment layouts differ");
    cp_buf b = CP_BUF_INIT;
    cp_error err;
    cp_error_clear(&err);
    rp_critpath cpv;
    rp_cp_span *cp_spans;
    const rp_critpath *cp = critpath_spans(tl, an, &cpv, &cp_spans);
    an_counter_track **ctr_own;
    rp_counters *ctr = counter_tracks(tl, an, &ctr_own);
    an_kseq_mark_set *kms = cp_xcalloc(tl->n_ranks + 1, sizeof *kms);
    rp_marks *marks = cp_xcalloc(tl->n_ranks + 1, sizeof *marks);
    for (size_t r = 0; r < tl->n_ranks; r++)
        if (an_kseq_marks(an, r, &kms[r]))
            marks[r] = (rp_marks){ kms[r].base, kms[r].n_ev, kms[r].ev_row, kms[r].pattern, kms[r].count };
    rp_extra extra = { ctr, marks };
    int rc = render_perfetto(tl, rep, tracks, cp, &extra, &b, &err) < 0 ? cli_fail(&err) : 0;
    for (size_t r = 0; r < tl->n_ranks; r++)
        an_kseq_marks_free(&kms[r]);
    free(kms);
    free(marks);
    free_counter_tracks(ctr, ctr_own, tl->n_ranks);
    free(cp_spans);
    for (size_t i = 0; i < n_out && !rc && i < CP_ARRAY_LEN(outs); i++) {
        const render_format *f = render_for_path(outs[i]);
        if (f && !f->fn && cp_afile_write(outs[i], b.data, b.len, &err) < 0)
            rc = cli_fail(&err);
    }
    if (!rc && to_stdout && fwrite(b.data, 1, b.len, stdout) != b.len) {
        cp_log_error("cannot write to standard output");
        rc = CLI_EXIT_FAIL;
    }
    cp_buf_free(&b);
    for (size_t i = 0; i < tl->n_ranks; i++)
        free(lt[i].v);
    free(lt);
    free(tracks);
    return rc;
}

static int parse_ckpt_every(const char *v, double *seconds, double *steps)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || !(d > 0) || d > 1e9)
        return -1;
    if (!*end || !strcmp(end, "s"))
        *seconds = d;
    else if (!strcmp(end, "steps") || !strcmp(end, "step"))
        *steps = d;
    else
        return -1;
    return 0;
}

/* Under mpirun: what one process's run does that a sharded run cannot
 * (yet), refused up front with the reason; pipes (each process would read
 * a part), the Perfetto overlay (it draws every event) and --fail-on (the
 * findings need every rank). Returns 0 or an exit code. */
static int dist_refuse(const cli_ctx *ctx, const input *inputs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (inputs[i].path != inputs[i].name)
            return cli_usage_error(ctx, "%s: a pipe cannot be shared out over mpirun's processes: give a file",
                                   inputs[i].name);
    const char *outs[64];
    size_t n_out = cli_get_all(ctx, CLI_O_OUTPUT, outs, CP_ARRAY_LEN(outs));
    const char *fmt = cli_get(ctx, CLI_O_FORMAT);
    bool perfetto = fmt && !strcmp(fmt, "perfetto");
    for (size_t i = 0; i < n_out && i < CP_ARRAY_LEN(outs); i++) {
        const render_format *f = render_for_path(outs[i]);
        perfetto |= f && !f->fn;
    }
    if (perfetto)
        return cli_usage_error(ctx, "the Perfetto overlay needs every event in one process: run it without mpirun");
    if (cli_get(ctx, O_FAIL_ON))
        return cli_usage_error(ctx, "--fail-on under mpirun is not supported yet: run it in one process");
    return 0;
}

/* Bytes a trace will take to read: the file, ten times a compressed one
 * (the estimate thp_pays makes). */
static uint64_t read_estimate(const input *in)
{
    if (in->evidence || in->skipped)
        return 0;
    bool packed = in->compression && strcmp(in->compression, "plain") != 0;
    return in->size_bytes * (packed ? 10 : 1);
}

/* The report's account of the sharded run: tool.processes always (1 in
 * one process), and under mpirun the split and what was not computed. */
static void dist_report(rep_report *rep, const ad_run *dr, size_t n_job, const bool *gave_up)
{
    rep_node *tool = rep_child(rep->root, "tool");
    rep_int(rep, tool, "processes", "processes", dr->size, NULL);
    if (!ad_on(dr))
        return;
    rep_int(rep, tool, "summary_bytes", "report messages to rank 0", (int64_t)dr->summary_bytes, "bytes");
    rep_int(rep, tool, "exchange_bytes", "records rank 0 received from the analyzers' exchanges",
            (int64_t)dr->exchange_bytes, "bytes");
    rep_node *lb = rep_arr(rep, tool, "read_bytes", "input bytes each process read (estimated)");
    for (int p = 0; p < dr->size; p++)
        rep_int(rep, lb, NULL, NULL, (int64_t)dr->load_bytes[p], "bytes");
    rep_node *d = rep_obj(rep, rep->root, "distributed", "analysis shared out over MPI processes");
    rep_int(rep, d, "ranks", "ranks", (int64_t)n_job, NULL);
    rep_node *nc = rep_arr(rep, d, "not_computed", "analyses that need every rank at once (not yet under mpirun)");
    const an_analyzer *t = an_analyzers();
    for (size_t i = 0; t[i].name; i++)
        if (an_dist((an_id)i) == AN_DIST_JOB || gave_up[i])
            rep_str(rep, nc, NULL, NULL, t[i].name);
}

int cmd_analyze(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), true, &done);
    if (rc || done)
        return rc;
    if (ctx->args.n_pos == 0)
        return cli_usage_error(ctx, "no input: give trace files, directories or globs");
    long gpn, queue_max, kseq_min, kseq_top, annot_top;
    int nthreads = cli_threads(ctx);
    double nic_gbit_s, nvlink_gbps;
    if (nthreads < 0 || cli_get_long(ctx, O_GPUS_PER_NODE, 0, 0, 4096, &gpn) < 0 ||
        cli_get_long(ctx, O_QUEUE_MAX, 0, 1, 1L << 30, &queue_max) < 0 ||
        cli_get_long(ctx, O_KSEQ_MIN, 0, 1, 1L << 30, &kseq_min) < 0 ||
        cli_get_long(ctx, O_KSEQ_TOP, 0, 1, 1L << 30, &kseq_top) < 0 ||
        cli_get_long(ctx, O_ANNOT_TOP, 0, 1, 1L << 30, &annot_top) < 0 ||
        cli_get_double(ctx, O_NIC_GBPS, 0, 0, 1e6, &nic_gbit_s) < 0 ||
        cli_get_double(ctx, O_NVLINK_GBPS, 0, 0, 1e6, &nvlink_gbps) < 0)
        return CLI_EXIT_USAGE;
    double ckpt_s = 0, ckpt_steps = 0;
    if (cli_get(ctx, O_CKPT_EVERY) && parse_ckpt_every(cli_get(ctx, O_CKPT_EVERY), &ckpt_s, &ckpt_steps) < 0)
        return cli_usage_error(ctx, "--ckpt-every '%s': expected seconds (900) or steps (500steps), above 0",
                               cli_get(ctx, O_CKPT_EVERY));
    if (cli_get(ctx, O_RANK_MAP) && !valid_rank_map(cli_get(ctx, O_RANK_MAP)))
        return cli_usage_error(ctx, "--rank-map '%s': expected PID=RANK[,PID=RANK...] (whole numbers, PID above 0)",
                               cli_get(ctx, O_RANK_MAP));
    int fail_on = -1;
    if (cli_get(ctx, O_FAIL_ON) && (fail_on = an_severity_parse(cli_get(ctx, O_FAIL_ON))) < 0)
        return cli_usage_error(ctx, "--fail-on '%s': expected info, low, medium, high or critical",
                               cli_get(ctx, O_FAIL_ON));

    cp_paths paths;
    if ((rc = cli_expand_inputs(ctx, keep_trace_file, &paths)) != 0)
        return rc;
    if (thp_pays(&paths))
        cli_reexec_with_thp(ctx->argv);
    ad_run dr;
    if ((rc = ad_open(&dr, 300)) != 0) {
        cp_paths_free(&paths);
        return rc;
    }
    if (!cli_get(ctx, CLI_O_THREADS))
        nthreads = ad_threads(&dr, nthreads);
    cp_error err;
    cp_error_clear(&err);
    input *inputs = cp_xcalloc(paths.n, sizeof *inputs);
    for (size_t i = 0; i < paths.n; i++) {
        inputs[i].path = inputs[i].name = paths.v[i];
        inputs[i].spool_fd = -1;
        inputs[i].from_dir = !named_file(ctx, paths.v[i]);
    }
    diag_set skipped, dropped; /* before reading (every process alike), while reading (mpirun: this process's) */
    diag_init(&skipped);
    diag_init(&dropped);
    cli_paths_diag(&paths, &skipped);
    ev_set evidence;
    ev_set_init(&evidence);
    rc = spool_pipes(inputs, paths.n, &skipped);
    if (!rc && ad_on(&dr))
        rc = dist_refuse(ctx, inputs, paths.n);
    if (!rc)
        rc = detect_inputs(inputs, paths.n, &skipped);
    if (!rc)
        rc = load_evidence(inputs, paths.n, nthreads, &evidence, &skipped);
    size_t n_inputs = 0; /* drop the skipped ones, keeping order */
    for (size_t i = 0; i < paths.n; i++)
        if (!inputs[i].skipped)
            inputs[n_inputs++] = inputs[i];
    rep_report *rep = NULL, *local = NULL;
    tl_timeline *tl = NULL;
    an_ctx an = { 0 };
    if (!rc && n_inputs == 0)
        rc = cli_usage_error(ctx, "no trace or evidence file among the inputs");
    if (ad_on(&dr)) /* every process checked the same inputs; agree anyway */
        rc = ad_agree_rc(&dr, rc);
    if (!rc && ad_on(&dr)) {
        uint64_t *est = cp_xcalloc(n_inputs ? n_inputs : 1, sizeof *est);
        for (size_t i = 0; i < n_inputs; i++)
            est[i] = read_estimate(&inputs[i]);
        rc = ad_share(&dr, est, n_inputs);
        free(est);
        for (size_t i = 0; !rc && i < n_inputs; i++)
            inputs[i].remote = dr.owner[i] != dr.rank;
    }
    if (rc)
        goto out;

    if (cp_log_stderr_is_tty() && cp_log_level() >= CP_LOG_WARN)
        fprintf(stderr, "chainprof: reading %zu file%s on %d thread%s...\r", n_inputs, n_inputs == 1 ? "" : "s",
                nthreads, nthreads == 1 ? "" : "s");
    /* threads the files do not use split the large ones */
    size_t n_mine = 0;
    for (size_t i = 0; i < n_inputs; i++)
        n_mine += !inputs[i].remote;
    read_job job = { inputs, n_inputs, cli_get(ctx, O_RANK_MAP), (int)((size_t)nthreads / (n_mine ? n_mine : 1)) };
    clock_t c_read = clock(); /* phase CPU times for -vv: where analyze spends its time */
    cp_par_for(n_inputs, nthreads, read_one, &job);
    cp_log_phase("read", c_read);
    if (cp_log_stderr_is_tty() && cp_log_level() >= CP_LOG_WARN)
        fprintf(stderr, "\033[K");
    size_t n_read = n_inputs;
    for (size_t i = 0; i < n_inputs && !rc; i++)
        if (inputs[i].rc < 0) {
            rc = drop_input(&inputs[i], n_read, &inputs[i].err, ad_on(&dr) ? &dropped : &skipped);
            if (!rc) { /* its builders leave with it */
                n_read--;
                tl_builder_free(inputs[i].builder);
                inputs[i].builder = NULL;
                for (size_t k = 0; k < inputs[i].n_extra; k++)
                    tl_builder_free(inputs[i].extra[k]);
                inputs[i].n_extra = 0;
            }
        }
    if (ad_on(&dr)) { /* one process's unreadable file stops or thins the job's run alike */
        rc = ad_agree_rc(&dr, rc);
        int64_t *sk = cp_xcalloc(n_inputs ? n_inputs : 1, sizeof *sk);
        for (size_t i = 0; i < n_inputs; i++)
            sk[i] = inputs[i].skipped;
        if (!rc)
            rc = ad_agree_flags(&dr, sk, n_inputs);
        for (size_t i = 0; i < n_inputs; i++)
            inputs[i].skipped = sk[i] != 0;
        free(sk);
    }
    size_t n_builders = 0;
    for (size_t i = 0; i < n_inputs; i++)
        n_builders += 1 + inputs[i].n_extra;
    tl_builder **bs = cp_xcalloc(n_builders, sizeof *bs);
    n_builders = 0;
    for (size_t i = 0; i < n_inputs; i++) {
        if (inputs[i].builder)
            bs[n_builders++] = inputs[i].builder;
        inputs[i].builder = NULL;
        for (size_t k = 0; k < inputs[i].n_extra; k++)
            bs[n_builders++] = inputs[i].extra[k];
        inputs[i].n_extra = 0;
    }
    if (rc) {
        for (size_t i = 0; i < n_builders; i++)
            tl_builder_free(bs[i]);
        free(bs);
        goto out;
    }
    tl_finish_opts fo = { .nthreads = nthreads };
    clock_t c_finish = clock();
    if (tl_finish(bs, n_builders, &fo, &tl, &err) < 0)
        rc = cli_fail(&err);
    free(bs);
    int64_t t0_ns = 0;
    if (ad_on(&dr) && (rc = ad_agree_rc(&dr, rc)) == 0 && (rc = ad_job(&dr, tl, &t0_ns)) == 0)
        tl->t0_ns = t0_ns; /* the job's origin: every *_ns offset as one process has it */
    if (rc)
        goto out;
    cp_log_phase("timeline finish", c_finish);
    rep = dr.rank == 0 ? rep_new("chainprof.analyze/1", ctx->argc, ctx->argv) : NULL;
    local = ad_on(&dr) ? rep_new("chainprof.analyze/1", ctx->argc, ctx->argv) : rep;
    for (size_t i = 0; rep && i < n_inputs; i++) {
        if (inputs[i].skipped)
            continue; /* unreadable: in the diagnostics, not the inputs */
        rep_node *in = rep_input(rep, inputs[i].name, input_kind(&inputs[i]), inputs[i].size_bytes);
        rep_str(rep, in, "compression", "compression", inputs[i].compression);
    }
    if (!ad_on(&dr)) {
        diag_merge(&tl->diag, &skipped);
        ev_set_diag(&evidence, &tl->diag); /* every evidence reader's damage with the traces' */
        rep_diagnostics(rep, &tl->diag);
    }
    const char *annot_keep[64];
    an_opts ao = { .gpus_per_node = (int)gpn, .nthreads = nthreads, .nic_gbit_s = nic_gbit_s,
                   .launch_table = cli_has(ctx, O_LAUNCH_TABLE), .queue_max_length = queue_max,
                   .nvlink_gbps = nvlink_gbps, .ckpt_every_s = ckpt_s, .ckpt_every_steps = ckpt_steps,
                   .evidence = &evidence, .kseq_op = cli_get(ctx, O_KSEQ), .kseq_min_len = kseq_min,
                   .kseq_top_k = kseq_top, .annot_top = annot_top, .annot_keep = annot_keep,
                   .n_annot_keep = cli_get_all(ctx, O_ANNOT_KEEP, annot_keep, CP_ARRAY_LEN(annot_keep)) };
    if (ad_on(&dr)) {
        ao.job_ranks = dr.job;
        ao.n_job_ranks = dr.n_job;
        ao.rank_analyzers_only = true;
        ao.job_max = ad_job_max;
        ao.job_gather = ad_job_gather;
        ao.job_hook = &dr;
        ao.job_root = dr.rank == 0;
    }
    bool gave_up[AN__COUNT + 1] = { false };
    int arc = an_run_all(&an, tl, local, &ao, &err);
    if (arc < 0)
        rc = cli_fail(&err);
    else if (dr.failed)
        rc = cli_fail(&dr.err);
    if (ad_on(&dr) && (rc = ad_agree_rc(&dr, rc)) == 0) {
        diag_set mine = tl->diag, all; /* this process's damage, then the job's at rank 0 */
        diag_merge(&mine, &dropped);
        diag_init(&all);
        if (tl->diag.count[DIAG_TRUNCATED_FILE])
            cp_log_warn("%s: truncated trace; events up to the last complete one were used",
                        tl->diag.first[DIAG_TRUNCATED_FILE]);
        cp_buf msg = CP_BUF_INIT;
        ad_encode(local, &mine, &msg);
        memcpy(gave_up, an.not_computed, sizeof gave_up); /* the same on every process: job-wide decisions */
        /* the ranks' timeline and analyses are in msg: rank 0 merges the
         * job's report without them */
        an_ctx_free(&an);
        memset(&an, 0, sizeof an);
        rep_free(local);
        local = NULL;
        tl_free(tl);
        tl = NULL;
#ifdef __GLIBC__
        /* give the freed heap back now: rank 0's peak is then the job's
         * report, not that plus its own share's high-water mark */
        malloc_trim(0);
#endif
        clock_t c_gather = clock();
        rc = ad_gather(&dr, &msg, rep, &all);
        cp_log_phase("gather and merge", c_gather);
        if (!rc && rep) {
            diag_merge(&all, &skipped);
            ev_set_diag(&evidence, &all);
            rep_diagnostics(rep, &all);
            rep_move_after(rep->root, "diagnostics", rep_child(rep->root, "inputs") ? "inputs" : "command");
        }
        rc = ad_agree_rc(&dr, rc);
    }
    if (rc)
        goto out;
    if (!rep) /* not rank 0: its part is in rank 0's report */
        goto out;
    dist_report(rep, &dr, ad_on(&dr) ? dr.n_job : tl->n_ranks, gave_up);
    if (tl && tl->diag.count[DIAG_TRUNCATED_FILE])
        cp_log_warn("%s: truncated trace; events up to the last complete one were used",
                    tl->diag.first[DIAG_TRUNCATED_FILE]);
    order_for_people(rep, cli_has(ctx, O_DETAIL));
    clock_t c_emit = clock();
    rc = ad_on(&dr) ? 0 : write_perfetto(ctx, tl, &an, rep, paths.v, paths.n);
    if (!rc)
        rc = cli_emit(ctx, rep, paths.v, paths.n);
    cp_log_phase("output", c_emit);
    /* the run is recorded even when --fail-on trips: a failing run is history too */
    if (rc == 0)
        cli_history_record(ctx, rep, NULL, cli_get(ctx, O_DB), cli_has(ctx, O_NO_HISTORY));
    if (rc == 0 && fail_on >= 0) {
        const an_findings_result *fr = an.results[AN_findings];
        for (size_t i = 0; fr && i < fr->n; i++)
            if ((int)fr->v[i].severity >= fail_on) {
                cp_log_warn("--fail-on %s: finding %s (%s) has severity %s", cli_get(ctx, O_FAIL_ON),
                            fr->v[i].code, fr->v[i].title, an_severity_name(fr->v[i].severity));
                rc = CLI_EXIT_CHECK;
                break;
            }
    }
out:
    an_ctx_free(&an);
    if (local && local != rep)
        rep_free(local);
    rep_free(rep);
    tl_free(tl);
    for (size_t i = 0; i < n_inputs; i++) {
        tl_builder_free(inputs[i].builder);
        for (size_t k = 0; k < inputs[i].n_extra; k++)
            tl_builder_free(inputs[i].extra[k]);
        free(inputs[i].extra);
        if (inputs[i].spool_fd >= 0)
            close(inputs[i].spool_fd);
    }
    free(inputs);
    ev_set_free(&evidence);
    cp_paths_free(&paths);
    ad_close(&dr);
    return rc;
}
