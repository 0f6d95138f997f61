/* rd_optrace.c - op timelines in the format of the OSDI'25 straggler
 * study's open artifact (Lin et al., "Understanding Stragglers in Large
 * Model Training Using What-if Analysis"; its to_timeline output and
 * `chainprof synth --pp`): a Chrome-trace JSON array of events, or the
 * object form {"traceEvents": [...]}.
 *
 * Design
 * - Workers are named, not numbered: process `DP rank [d]`, thread `PP rank
 *   p, TP rank t, KIND` (KIND: compute, pp-comm, tp-comm, dp-comm, misc).
 *   The names come from "M" process_name / thread_name events (the
 *   artifact writes them after the ops, with numeric pid/tid) or from the
 *   pid/tid themselves when they are those strings (synth). So the reader
 *   keeps every "X" event until the end of the file and resolves its worker
 *   then. Everything lands in one timeline rank laid out as model/optrace.h
 *   says; the pipeline what-if (an_whatif_pp.c) reads it back from there.
 * - Sniffing is on that naming (or on the artifact's arg names next to its
 *   op names), never on "traceEvents" alone: a Kineto trace has neither.
 * - Damage: an X event without name or ts, or whose worker cannot be
 *   resolved, is skipped and counted (bad_event); a missing dur reads as 0
 *   (missing_dur), a negative one is clamped (negative_dur); malformed JSON
 *   inside the event array is skipped to the next event (damaged_json); a
 *   cut file keeps its complete events (truncated_file). A file with no
 *   worker-named op at all is not this format (CP_ERR_FORMAT, with offset).
 */
#include "reader.h"
#include "../base/jsontok.h"
#include "../base/sort.h"
#include "../base/src.h"
#include "../base/util.h"
#include "../model/optrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARG_NONE INT32_MIN
enum { A_STEP, A_MB, A_CHUNK, A_SEQ, A_N };
static const char *const arg_key[A_N] = { "step", "mb_id", "model_chunk", "seq_id" };

typedef struct raw_ev {
    int64_t ts_ns, dur_ns;
    uint32_t name, pid, tid;
    int32_t arg[A_N];
    long long offset;
} raw_ev;

typedef struct ot {
    const char *path;
    cp_jt *jt;
    cp_jt_tok tok;
    cp_intern *str;
    diag_set *diag;
    raw_ev *ev;
    size_t n_ev, cap_ev;
    cp_kv *pname, *tname;   /* pid -> process name; pid << 32 | tid -> thread name */
    size_t n_pname, n_tname, cap_pname, cap_tname;
} ot;

/* pid/tid as an interned key: numbers as "#<text>", strings as they are. */
static uint32_t id_key(ot *r, const cp_jt_tok *t)
{
    if (t->type == CP_JT_STRING)
        return cp_intern_n(r->str, t->s, t->n);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "#%.*s", (int)CP_MIN(t->n, (size_t)60), t->s);
    return cp_intern_n(r->str, buf, (size_t)n);
}

static int32_t arg_int(const cp_jt_tok *t)
{
    double d;
    if (t->type != CP_JT_NUMBER || cp_jt_parse_double(t->s, t->n, &d) || d != (double)(int32_t)d)
        return ARG_NONE; /* null, text or out of range: absent */
    return (int32_t)d;
}

/* Skip the value whose first token was just read (a container's rest). */
static int skip_value(ot *r, int t)
{
    return t == CP_JT_OBJ_BEGIN || t == CP_JT_ARR_BEGIN ? cp_jt_skip_rest(r->jt, NULL) : t;
}

static int read_args(ot *r, raw_ev *e, uint32_t *mname)
{
    unsigned depth = r->tok.depth;
    for (;;) {
        int t = cp_jt_next(r->jt, &r->tok, NULL);
        if (t < 0 || (t == CP_JT_OBJ_END && r->tok.depth == depth))
            return t;
        if (t != CP_JT_KEY)
            continue;
        int k = 0;
        while (k < A_N && !cp_jt_tok_eq(&r->tok, arg_key[k]))
            k++;
        bool is_name = cp_jt_tok_eq(&r->tok, "name");
        if (k == A_N && !is_name) {
            if ((t = cp_jt_skip(r->jt, NULL)) < 0)
                return t;
            continue;
        }
        if ((t = cp_jt_next(r->jt, &r->tok, NULL)) < 0)
            return t;
        if (k < A_N)
            e->arg[k] = arg_int(&r->tok);
        else if (t == CP_JT_STRING)
            *mname = cp_intern_n(r->str, r->tok.s, r->tok.n);
        if ((t = skip_value(r, t)) < 0)
            return t;
    }
}

static void add_name(cp_kv **v, size_t *n, size_t *cap, uint64_t key, uint32_t name)
{
    cp_xgrow((void **)v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = (cp_kv){ key, name };
}

/* One event object (its '{' just read). Returns > 0 or a negative status. */
static int read_event(ot *r)
{
    unsigned depth = r->tok.depth;
    raw_ev e = { .offset = r->tok.offset, .dur_ns = -1, .ts_ns = INT64_MIN, .name = UINT32_MAX,
                 .pid = UINT32_MAX, .tid = UINT32_MAX };
    for (int k = 0; k < A_N; k++)
        e.arg[k] = ARG_NONE;
    char ph = 0;
    bool has_dur = false;
    uint32_t mname = UINT32_MAX;
    int t;
    for (;;) {
        if ((t = cp_jt_next(r->jt, &r->tok, NULL)) < 0)
            return t;
        if (t == CP_JT_OBJ_END && r->tok.depth == depth)
            break;
        if (t != CP_JT_KEY)
            continue;
        enum { K_PH, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ARGS, K_OTHER } key = K_OTHER;
        static const char *const keys[] = { "ph", "name", "pid", "tid", "ts", "dur", "args" };
        for (int k = 0; k < (int)CP_ARRAY_LEN(keys); k++)
            if (cp_jt_tok_eq(&r->tok, keys[k]))
                key = k;
        if (key == K_OTHER) {
            if ((t = cp_jt_skip(r->jt, NULL)) < 0)
                return t;
            continue;
        }
        if ((t = cp_jt_next(r->jt, &r->tok, NULL)) < 0)
            return t;
        const cp_jt_tok *v = &r->tok;
        bool scalar = t == CP_JT_STRING || t == CP_JT_NUMBER;
        if (key == K_PH && t == CP_JT_STRING && v->n)
            ph = v->s[0];
        else if (key == K_NAME && t == CP_JT_STRING)
            e.name = cp_intern_n(r->str, v->s, v->n);
        else if ((key == K_PID || key == K_TID) && scalar)
            *(key == K_PID ? &e.pid : &e.tid) = id_key(r, v);
        else if (key == K_TS && scalar)
            cp_jt_parse_ns(v->s, v->n, &e.ts_ns);
        else if (key == K_DUR && scalar)
            has_dur = cp_jt_parse_ns(v->s, v->n, &e.dur_ns) >= 0;
        else if (key == K_ARGS && t == CP_JT_OBJ_BEGIN) {
            if ((t = read_args(r, &e, &mname)) < 0)
                return t;
            continue;
        }
        if ((t = skip_value(r, t)) < 0)
            return t;
    }
    if (ph == 'M') {
        const char *n = e.name != UINT32_MAX ? cp_intern_str(r->str, e.name) : "";
        if (mname == UINT32_MAX || e.pid == UINT32_MAX)
            return 1;
        if (!strcmp(n, "process_name"))
            add_name(&r->pname, &r->n_pname, &r->cap_pname, e.pid, mname);
        else if (!strcmp(n, "thread_name") && e.tid != UINT32_MAX)
            add_name(&r->tname, &r->n_tname, &r->cap_tname, (uint64_t)e.pid << 32 | e.tid, mname);
        return 1;
    }
    if (ph != 'X')
        return 1; /* other phases (counters, flows, instants) carry no op */
    if (e.name == UINT32_MAX || e.ts_ns == INT64_MIN || e.pid == UINT32_MAX || e.tid == UINT32_MAX) {
        diag_count(r->diag, DIAG_BAD_EVENT, r->path, e.offset);
        return 1;
    }
    if (!has_dur) {
        diag_count(r->diag, DIAG_MISSING_DUR, r->path, e.offset);
        e.dur_ns = 0;
    } else if (e.dur_ns < 0) {
        diag_count(r->diag, DIAG_NEGATIVE_DUR, r->path, e.offset);
        e.dur_ns = 0;
    }
    cp_xgrow((void **)&r->ev, &r->cap_ev, r->n_ev + 1, sizeof *r->ev);
    r->ev[r->n_ev++] = e;
    return 1;
}

/* The event array (its '[' just read): events until its ']'. Damaged
 * events are skipped to the next one; a cut file ends the walk. */
static int read_array(ot *r)
{
    unsigned depth = r->tok.depth;
    for (;;) {
        int t = cp_jt_next(r->jt, &r->tok, NULL);
        if (t == CP_JT_ARR_END && r->tok.depth == depth)
            return 0;
        if (t == CP_JT_OBJ_BEGIN)
            t = read_event(r);
        else if (t > 0 && (t = skip_value(r, t)) > 0)
            diag_count(r->diag, DIAG_BAD_EVENT, r->path, r->tok.offset);
        if (t >= 0)
            continue;
        if (cp_jt_truncated(r->jt)) {
            diag_count(r->diag, DIAG_TRUNCATED_FILE, r->path, cp_jt_last_complete_end(r->jt));
            return 0;
        }
        long long skipped = 0;
        if (t != CP_ERR_FORMAT || cp_jt_resync(r->jt, depth + 1, &skipped, NULL) < 0) {
            diag_count(r->diag, DIAG_TRUNCATED_FILE, r->path, cp_jt_offset(r->jt));
            return 0;
        }
        diag_count(r->diag, DIAG_DAMAGED_JSON, r->path, cp_jt_offset(r->jt));
    }
}

static int read_top(ot *r, cp_error *err)
{
    int t = cp_jt_next(r->jt, &r->tok, err);
    if (t == CP_JT_ARR_BEGIN)
        return read_array(r);
    if (t != CP_JT_OBJ_BEGIN)
        return cp_error_set(err, CP_ERR_FORMAT, r->path, 0, 0, t < 0 ? cp_jt_offset(r->jt) : r->tok.offset,
                            "not an op timeline: the top-level value is not an array or object");
    while ((t = cp_jt_next(r->jt, &r->tok, err)) == CP_JT_KEY) {
        if (r->tok.depth == 1 && cp_jt_tok_eq(&r->tok, "traceEvents")) {
            if ((t = cp_jt_next(r->jt, &r->tok, err)) == CP_JT_ARR_BEGIN)
                return read_array(r);
            break;
        }
        if (cp_jt_skip(r->jt, err) < 0)
            break;
    }
    return cp_error_set(err, CP_ERR_FORMAT, r->path, 0, 0, cp_jt_offset(r->jt),
                        "not an op timeline: the top-level object has no traceEvents array");
}

static uint32_t lookup(const cp_kv *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].key == key ? (uint32_t)v[lo].val : UINT32_MAX;
}

/* "DP rank [d]" and "PP rank p, TP rank t, KIND" -> worker and thread kind. */
static bool parse_worker(const char *proc, const char *thr, int *d, int *p, int *tp, int *kind)
{
    int n = -1;
    if (sscanf(proc, "DP rank [%d]%n", d, &n) != 1 || n < 0 || proc[n])
        return false;
    n = -1;
    if (sscanf(thr, "PP rank %d, TP rank %d, %n", p, tp, &n) != 2 || n < 0)
        return false;
    for (*kind = 0; *kind < OPT_KIND_N && strcmp(thr + n, optrace_kind_name[*kind]); ++*kind)
        ;
    return *kind < OPT_KIND_N && *d >= 0 && *p >= 0 && *tp >= 0 && *d <= OPTRACE_MAX_RANK && *p <= OPTRACE_MAX_RANK &&
           *tp <= OPTRACE_MAX_RANK;
}

/* Resolve every kept op's worker and hand it to the builder; returns the ops added. */
static size_t emit(ot *r, tl_builder *b)
{
    cp_sort_kv(r->pname, r->n_pname, NULL);
    cp_sort_kv(r->tname, r->n_tname, NULL);
    uint32_t akey[A_N];
    for (int k = 0; k < A_N; k++)
        akey[k] = cp_intern_s(r->str, arg_key[k]);
    size_t added = 0;
    for (size_t i = 0; i < r->n_ev; i++) {
        const raw_ev *e = &r->ev[i];
        uint32_t pn = lookup(r->pname, r->n_pname, e->pid);
        uint32_t tn = lookup(r->tname, r->n_tname, (uint64_t)e->pid << 32 | e->tid);
        pn = pn == UINT32_MAX ? e->pid : pn;
        tn = tn == UINT32_MAX ? e->tid : tn;
        int d, p, tp, kind;
        if (!parse_worker(cp_intern_str(r->str, pn), cp_intern_str(r->str, tn), &d, &p, &tp, &kind)) {
            diag_count(r->diag, DIAG_BAD_EVENT, r->path, e->offset);
            continue;
        }
        tl_track_key key = { TL_TRACK_CPU, d, optrace_tid(p, tp, kind), -1, -1 };
        uint32_t track = tl_builder_track(b, &key);
        tl_builder_track_name(b, track, tn);
        tl_ev ev = { e->ts_ns, e->dur_ns, e->name, 0, TL_CAT_OTHER, track, -1, -1, 0 };
        tl_builder_add(b, &ev);
        for (int k = 0; k < A_N; k++)
            if (e->arg[k] != ARG_NONE)
                tl_builder_arg_int(b, akey[k], e->arg[k]);
        added++;
    }
    return added;
}

int rd_optrace_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    (void)o;
    cp_src *src;
    int rc = cp_src_open(&src, path, err);
    if (rc < 0)
        return rc;
    ot r = { .path = path, .str = tl_builder_strings(b), .diag = tl_builder_diag(b) };
    cp_jt_opts jo = { .name = path };
    r.jt = cp_jt_open_src(src, &jo);
    rc = read_top(&r, err);
    if (rc >= 0 && !emit(&r, b))
        rc = cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, cp_jt_offset(r.jt),
                          "not an op timeline: no X event of a worker (process 'DP rank [d]', thread "
                          "'PP rank p, TP rank t, KIND')");
    if (rc >= 0) {
        tl_rank_meta *m = tl_builder_meta(b);
        m->format = cp_intern_s(r.str, OPTRACE_FORMAT);
        m->rank = 0; /* one file, one job: its workers are named inside (model/optrace.h) */
        m->rank_source = TL_RANK_FROM_TRACE;
        rc = 0;
    }
    cp_jt_close(r.jt);
    cp_src_close(src);
    free(r.ev);
    free(r.pname);
    free(r.tname);
    return rc;
}

/* Above Kineto's 95 for "traceEvents": only the artifact names its workers so. */
int rd_optrace_sniff(const char *path, const unsigned char *head, size_t n)
{
    (void)path;
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i >= n || (head[i] != '[' && head[i] != '{'))
        return 0;
#define HAS(lit) (memmem(head, n, lit, sizeof lit - 1) != NULL)
    int score = HAS("\"DP rank [") || HAS("\"PP rank ") ? 98
                : HAS("\"model_chunk\"") && HAS("\"seq_id\"") && (HAS("\"forward-compute\"") || HAS("\"backward-compute\""))
                    ? 97
                    : 0;
#undef HAS
    return score;
}
