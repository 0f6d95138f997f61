/* render_perfetto.c - the Perfetto overlay (see render_perfetto.h). One
 * pass over the frozen timeline writes the trace's events; the overlay
 * tracks follow. Times: µs with three decimals, exactly the timeline's ns
 * (the Kineto reader parses them back to the same ns), relative to the
 * input's baseTimeNanoseconds when the ranks share one (time_base_ns). With several ranks
 * every process id is prefixed by its rank (pid R*10^7 + pid) so ranks do
 * not merge into one process; one rank keeps its pids. */
#include "render_perfetto.h"
#include "render.h"
#include "../base/jsonw.h"
#include "../base/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RP_MAX_ARGS 64

static void jw_us(cp_jw *w, int64_t ns)
{
    char tmp[48];
    int64_t a = ns < 0 ? -ns : ns;
    snprintf(tmp, sizeof tmp, "%s%" PRId64 ".%03" PRId64, ns < 0 ? "-" : "", a / 1000, a % 1000);
    cp_jw_raw(w, tmp, strlen(tmp));
}

/* The time base the overlay writes: the traces' own baseTimeNanoseconds when
 * every rank that has one agrees (one rank always does), so each ts keeps
 * the magnitude and decimals it had in the input and a reader that rounds
 * through float64, as HTA does, gets the same numbers from the overlay as
 * from the trace; 0 (absolute times) otherwise. */
static int64_t time_base_ns(const tl_timeline *tl)
{
    int64_t base = 0;
    bool seen = false;
    for (size_t r = 0; r < tl->n_ranks; r++) {
        const tl_rank_meta *m = &tl->ranks[r].meta;
        if (!m->has_base_time)
            continue;
        if (seen && m->base_time_ns != base)
            return 0;
        base = m->base_time_ns;
        seen = true;
    }
    return base;
}

/* "ts": ns on the overlay's time base (time_base_ns, computed once per overlay). */
static void jw_ts(cp_jw *w, int64_t base_ns, int64_t ns)
{
    cp_jw_key(w, "ts");
    jw_us(w, ns - base_ns);
}

static int64_t pid_of(const tl_timeline *tl, const tl_track *t)
{
    int64_t pid = t->key.kind == TL_TRACK_GPU ? t->key.device : t->key.pid;
    if (tl->n_ranks > 1)
        pid += (int64_t)tl->ranks[t->rank_index].meta.rank * 10000000;
    return pid;
}

/* cat: "__metadata" for the trace's own tracks (Kineto's), "chainprof.meta" for the overlay's. */
static void meta(cp_jw *w, const char *cat, const char *what, int64_t pid, int64_t tid, const char *name)
{
    cp_jw_obj_begin(w);
    cp_jw_key(w, "ph"); cp_jw_str(w, "M");
    cp_jw_key(w, "cat"); cp_jw_str(w, cat);
    cp_jw_key(w, "name"); cp_jw_str(w, what);
    cp_jw_key(w, "pid"); cp_jw_int(w, pid);
    cp_jw_key(w, "tid"); cp_jw_int(w, tid);
    cp_jw_key(w, "args"); cp_jw_obj_begin(w); cp_jw_key(w, "name"); cp_jw_str(w, name); cp_jw_obj_end(w);
    cp_jw_obj_end(w);
}

static void arg_value(cp_jw *w, const tl_timeline *tl, const tl_arg *a)
{
    switch (a->type) {
    case TL_ARG_INT: cp_jw_int(w, a->v.i); break;
    case TL_ARG_NUM: cp_jw_double(w, a->v.d); break;
    case TL_ARG_STR: cp_jw_str(w, tl_str(tl, a->v.s)); break;
    default: cp_jw_bool(w, a->v.i != 0); break; /* TL_ARG_BOOL keeps its value in i */
    }
}

/* args "Patterns" of an event in a marked pattern's subtree. */
static void pattern_arg(cp_jw *w, const rp_marks *m, size_t e)
{
    if (!m || e < m->base || e - m->base >= m->n_ev || m->ev_row[e - m->base] < 0)
        return;
    int32_t row = m->ev_row[e - m->base];
    cp_jw_key(w, "Patterns");
    cp_jw_obj_begin(w);
    cp_jw_key(w, m->pattern[row]);
    cp_jw_int(w, m->count[row]);
    cp_jw_obj_end(w);
}

static void event(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const tl_track *t, size_t e, const rp_marks *m)
{
    uint32_t cat = tl_event_cat_name(tl, e);
    bool gpu = t->key.kind == TL_TRACK_GPU;
    cp_jw_obj_begin(w);
    cp_jw_key(w, "ph");
    cp_jw_str(w, tl->flags[e] & TL_F_INSTANT ? "i" : t->key.kind == TL_TRACK_OTHER ? "C" : "X");
    cp_jw_key(w, "cat");
    cp_jw_str(w, cat ? tl_str(tl, cat) : tl_cat_name((tl_cat)tl->cat[e]));
    cp_jw_key(w, "name");
    cp_jw_str(w, tl_str(tl, tl->name[e]));
    cp_jw_key(w, "pid");
    cp_jw_int(w, pid_of(tl, t));
    cp_jw_key(w, "tid");
    cp_jw_int(w, gpu ? t->key.stream : t->key.tid);
    jw_ts(w, base_ns, tl->ts_ns[e]);
    if (!(tl->flags[e] & TL_F_INSTANT) && t->key.kind != TL_TRACK_OTHER) {
        cp_jw_key(w, "dur");
        jw_us(w, tl->dur_ns[e]);
    } else if (tl->flags[e] & TL_F_INSTANT) {
        cp_jw_key(w, "s");
        cp_jw_str(w, "t");
    }
    tl_arg args[RP_MAX_ARGS];
    size_t n = tl_event_args(tl, e, args, RP_MAX_ARGS);
    if (n > RP_MAX_ARGS)
        n = RP_MAX_ARGS;
    bool has_corr = false, has_ext = false, has_dev = false, has_stream = false;
    cp_jw_key(w, "args");
    cp_jw_obj_begin(w);
    for (size_t i = 0; i < n; i++) {
        const char *k = tl_str(tl, args[i].key);
        has_corr |= !strcmp(k, "correlation");
        has_ext |= !strcmp(k, "External id");
        has_dev |= !strcmp(k, "device");
        has_stream |= !strcmp(k, "stream");
        cp_jw_key(w, k);
        arg_value(w, tl, &args[i]);
    }
    if (!has_corr && tl->corr[e] >= 0) {
        cp_jw_key(w, "correlation");
        cp_jw_int(w, tl->corr[e]);
    }
    int64_t ext = tl_ext_id(tl, e);
    if (!has_ext && ext >= 0) {
        cp_jw_key(w, "External id");
        cp_jw_int(w, ext);
    }
    if (gpu && !has_dev) {
        cp_jw_key(w, "device");
        cp_jw_int(w, t->key.device);
    }
    if (gpu && !has_stream && !(tl->flags[e] & TL_F_NO_STREAM_ARG)) {
        cp_jw_key(w, "stream");
        cp_jw_int(w, t->key.stream);
    }
    pattern_arg(w, m, e);
    cp_jw_obj_end(w);
    cp_jw_obj_end(w);
}

static void trace_events(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rp_marks *marks)
{
    for (size_t ti = 0; ti < tl->n_tracks; ti++) {
        const tl_track *t = &tl->tracks[ti];
        int64_t pid = pid_of(tl, t), tid = t->key.kind == TL_TRACK_GPU ? t->key.stream : t->key.tid;
        if (t->name)
            meta(w, "__metadata", "thread_name", pid, tid, tl_str(tl, t->name));
        for (size_t e = t->ev_begin; e < t->ev_end; e++)
            event(w, tl, base_ns, t, e, marks ? &marks[t->rank_index] : NULL);
    }
    for (size_t r = 0; r < tl->n_ranks && tl->n_ranks > 1; r++) {
        char name[96];
        snprintf(name, sizeof name, "rank %d", (int)tl->ranks[r].meta.rank);
        for (size_t ti = tl->ranks[r].track_begin; ti < tl->ranks[r].track_end; ti++)
            if (ti == tl->ranks[r].track_begin || pid_of(tl, &tl->tracks[ti]) != pid_of(tl, &tl->tracks[ti - 1]))
                meta(w, "__metadata", "process_name", pid_of(tl, &tl->tracks[ti]), 0, name);
    }
}

/* One overlay span or instant on rank r's chainprof process, thread tid. */
static void overlay_begin(cp_jw *w, int64_t base_ns, const char *ph, const char *cat, const char *name, int32_t rank, int tid,
                          int64_t ts_ns)
{
    cp_jw_obj_begin(w);
    cp_jw_key(w, "ph"); cp_jw_str(w, ph);
    cp_jw_key(w, "cat"); cp_jw_str(w, cat);
    cp_jw_key(w, "name"); cp_jw_str(w, name);
    cp_jw_key(w, "pid"); cp_jw_int(w, RP_OVERLAY_PID(rank < 0 ? 0 : rank));
    cp_jw_key(w, "tid"); cp_jw_int(w, tid);
    jw_ts(w, base_ns, ts_ns);
}

static void layer_tracks(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rp_layer_track *tracks)
{
    for (size_t r = 0; r < tl->n_ranks; r++) {
        int32_t rank = tl->ranks[r].meta.rank;
        char name[64];
        snprintf(name, sizeof name, "chainprof: rank %d", (int)rank);
        meta(w, "chainprof.meta", "process_name", RP_OVERLAY_PID(rank), 0, name);
        meta(w, "chainprof.meta", "thread_name", RP_OVERLAY_PID(rank), 1, "layers (exposed time)");
        meta(w, "chainprof.meta", "thread_name", RP_OVERLAY_PID(rank), 2, "stragglers");
        for (size_t i = 0; i < tracks[r].n; i++) {
            const rp_layer_seg *s = &tracks[r].v[i];
            overlay_begin(w, base_ns, "X", "chainprof.layer", cp_layer_key(s->layer), rank, 1, s->ts_ns);
            cp_jw_key(w, "dur");
            jw_us(w, s->dur_ns);
            cp_jw_key(w, "args");
            cp_jw_obj_begin(w);
            cp_jw_key(w, "layer");
            cp_jw_str(w, cp_layer_key(s->layer));
            cp_jw_obj_end(w);
            cp_jw_obj_end(w);
        }
    }
}

static void counter_tracks(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rp_counters *counters)
{
    for (size_t r = 0; counters && r < tl->n_ranks; r++)
        for (size_t t = 0; t < counters[r].n; t++) {
            const rp_counter_track *c = &counters[r].v[t];
            int64_t pid = c->device + (tl->n_ranks > 1 ? (int64_t)tl->ranks[r].meta.rank * 10000000 : 0);
            for (size_t k = 0; k < c->n; k++) {
                cp_jw_obj_begin(w);
                cp_jw_key(w, "ph"); cp_jw_str(w, "C");
                cp_jw_key(w, "cat"); cp_jw_str(w, "chainprof.counter");
                cp_jw_key(w, "name"); cp_jw_str(w, c->name);
                cp_jw_key(w, "pid"); cp_jw_int(w, pid);
                if (c->stream >= 0) {
                    cp_jw_key(w, "id");
                    cp_jw_int(w, c->stream);
                }
                jw_ts(w, base_ns, c->pts[k].ts_ns);
                cp_jw_key(w, "args");
                cp_jw_obj_begin(w);
                cp_jw_key(w, c->arg);
                cp_jw_double(w, c->pts[k].value);
                cp_jw_obj_end(w);
                cp_jw_obj_end(w);
            }
        }
}

static const rep_node *child(const rep_node *n, const char *key) { return n ? rep_child(n, key) : NULL; }

/* A straggler row: its steps as spans on the stragglers track, the row in args. */
static void stragglers(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rep_report *r)
{
    const rep_node *st = rep_child(r->root, "stragglers"), *ranks = rep_child(r->root, "ranks");
    for (const rep_node *row = st ? st->first : NULL; row; row = row->next) {
        const rep_node *rk = child(row, "rank"), *steps = child(row, "steps");
        if (!rk || rk->type != REP_INT)
            continue;
        int ri = tl_rank_index(tl, (int32_t)rk->v.i);
        const rep_node *rn = NULL; /* the rank's report object: its steps' start and duration */
        for (const rep_node *c = ranks ? ranks->first : NULL; c; c = c->next)
            if (child(c, "rank") && child(c, "rank")->v.i == rk->v.i)
                rn = c;
        for (const rep_node *sid = steps ? steps->first : NULL; sid && ri >= 0; sid = sid->next)
            for (const rep_node *s = child(rn, "steps") ? child(rn, "steps")->first : NULL; s; s = s->next) {
                const rep_node *id = child(s, "id"), *t0 = child(s, "start_ns"), *d = child(s, "dur_ns");
                if (!id || id->type != REP_INT || id->v.i != sid->v.i || !t0 || !d)
                    continue;
                char name[64];
                snprintf(name, sizeof name, "straggler step %" PRId64, id->v.i);
                overlay_begin(w, base_ns, "X", "chainprof.straggler", name, (int32_t)rk->v.i, 2, tl->t0_ns + t0->v.i);
                cp_jw_key(w, "dur");
                jw_us(w, d->v.i);
                cp_jw_key(w, "args");
                cp_jw_obj_begin(w);
                cp_jw_key(w, "straggler");
                render_json_node(w, row);
                cp_jw_obj_end(w);
                cp_jw_obj_end(w);
                break;
            }
    }
}

/* Thread of the critical-path track on each rank's chainprof process (1
 * layers, 2 stragglers). */
#define RP_CP_TID 3

static bool cp_crosses(const rp_critpath *cp, size_t i)
{
    return i + 1 < cp->n && cp->v[i + 1].step == cp->v[i].step && cp->v[i + 1].rank_index != cp->v[i].rank_index;
}

static size_t cp_flows(const rp_critpath *cp)
{
    size_t n = 0;
    for (size_t i = 0; cp && i < cp->n; i++)
        n += cp_crosses(cp, i);
    return n;
}

/* One end of the flow arrow into span i (id i + 1), bound to the span that
 * encloses its ts on the track: the start of the arrow ("s") inside the
 * earlier span, its end ("f", bp "e") inside the later one. */
static void cp_flow(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rp_cp_span *s, const char *ph, size_t id)
{
    overlay_begin(w, base_ns, ph, "chainprof.critical_path", "critical path", tl->ranks[s->rank_index].meta.rank,
                  RP_CP_TID, s->ts_ns + s->dur_ns / 2);
    cp_jw_key(w, "id");
    cp_jw_int(w, (int64_t)id);
    if (*ph == 'f') {
        cp_jw_key(w, "bp");
        cp_jw_str(w, "e");
    }
    cp_jw_obj_end(w);
}

/* The critical path: a track on each rank it visits, one span per segment,
 * a flow where consecutive segments of a step are on different ranks. */
static void critical_path(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rp_critpath *cp)
{
    if (!cp)
        return;
    bool *named = cp_xcalloc(tl->n_ranks + 1, sizeof *named);
    for (size_t i = 0; i < cp->n; i++) {
        const rp_cp_span *s = &cp->v[i];
        int32_t rank = tl->ranks[s->rank_index].meta.rank;
        if (!named[s->rank_index]) {
            named[s->rank_index] = true;
            meta(w, "chainprof.meta", "thread_name", RP_OVERLAY_PID(rank), RP_CP_TID, "critical path");
        }
        overlay_begin(w, base_ns, "X", "chainprof.critical_path", s->name, rank, RP_CP_TID, s->ts_ns);
        cp_jw_key(w, "dur");
        jw_us(w, s->dur_ns);
        cp_jw_key(w, "args");
        cp_jw_obj_begin(w);
        cp_jw_key(w, "step"); cp_jw_int(w, s->step);
        cp_jw_key(w, "edge"); cp_jw_str(w, s->edge);
        cp_jw_key(w, "layer"); cp_jw_str(w, cp_layer_key(s->layer));
        cp_jw_key(w, "rank"); cp_jw_int(w, rank);
        cp_jw_obj_end(w);
        cp_jw_obj_end(w);
        if (i > 0 && cp_crosses(cp, i - 1))
            cp_flow(w, tl, base_ns, s, "f", i);
        if (cp_crosses(cp, i))
            cp_flow(w, tl, base_ns, s, "s", i + 1);
    }
    free(named);
}

/* Every finding as a global instant at the start of the job, args: the row. */
static void findings(cp_jw *w, const tl_timeline *tl, int64_t base_ns, const rep_report *r)
{
    const rep_node *f = rep_child(r->root, "findings");
    int32_t rank0 = tl->n_ranks ? tl->ranks[0].meta.rank : 0;
    for (const rep_node *row = f ? f->first : NULL; row; row = row->next) {
        const rep_node *code = child(row, "code"), *title = child(row, "title");
        char name[320];
        snprintf(name, sizeof name, "%s: %s", code && code->type == REP_STR ? code->v.s : "finding",
                 title && title->type == REP_STR ? title->v.s : "");
        overlay_begin(w, base_ns, "i", "chainprof.finding", name, rank0, 1, tl->t0_ns);
        cp_jw_key(w, "s");
        cp_jw_str(w, "g");
        cp_jw_key(w, "args");
        cp_jw_obj_begin(w);
        cp_jw_key(w, "finding");
        render_json_node(w, row);
        cp_jw_obj_end(w);
        cp_jw_obj_end(w);
    }
}

/* One rank's distributedInfo and deviceProperties, so the overlay of a one-rank trace reads as
 * that rank on its GPUs. */
static void distributed_info(cp_jw *w, const tl_timeline *tl)
{
    if (tl->n_ranks != 1 || tl->ranks[0].meta.rank < 0)
        return;
    const tl_rank_meta *m = &tl->ranks[0].meta;
    cp_jw_key(w, "distributedInfo");
    cp_jw_obj_begin(w);
    cp_jw_key(w, "rank");
    cp_jw_int(w, m->rank);
    if (m->world_size > 0) {
        cp_jw_key(w, "world_size");
        cp_jw_int(w, m->world_size);
    }
    if (m->backend) {
        cp_jw_key(w, "backend");
        cp_jw_str(w, tl_str(tl, m->backend));
    }
    cp_jw_obj_end(w);
    if (m->n_devices <= 0)
        return;
    /* the devices as the trace listed them: the count, device 0's name and memory
     * (all the reader keeps; the others' entries carry only their id) */
    cp_jw_key(w, "deviceProperties");
    cp_jw_arr_begin(w);
    for (int32_t d = 0; d < m->n_devices && d < 4096; d++) {
        cp_jw_obj_begin(w);
        cp_jw_key(w, "id");
        cp_jw_int(w, d);
        if (d == 0 && m->gpu_name) {
            cp_jw_key(w, "name");
            cp_jw_str(w, tl_str(tl, m->gpu_name));
        }
        if (d == 0 && m->gpu_mem_bytes >= 0) {
            cp_jw_key(w, "totalGlobalMem");
            cp_jw_int(w, m->gpu_mem_bytes);
        }
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
}

int render_perfetto(const tl_timeline *tl, const rep_report *r, const rp_layer_track *tracks,
                    const rp_critpath *cp, const rp_extra *extra, cp_buf *out, cp_error *err)
{
    (void)err;
    cp_jw w;
    cp_jw_init(&w, out, 0);
    cp_jw_obj_begin(&w);
    cp_jw_key(&w, "schemaVersion");
    cp_jw_int(&w, 1);
    distributed_info(&w, tl);
    int64_t base_ns = time_base_ns(tl);
    if (base_ns) {
        cp_jw_key(&w, "baseTimeNanoseconds");
        cp_jw_int(&w, base_ns);
    }
    cp_jw_key(&w, "displayTimeUnit");
    cp_jw_str(&w, "ns");
    cp_jw_key(&w, "chainprof");
    cp_jw_obj_begin(&w);
    cp_jw_key(&w, "schema");
    cp_jw_str(&w, "chainprof.perfetto/1");
    const rep_node *v = rep_child(r->root, "verdict");
    if (v)
        render_json_node(&w, v); /* writes its key, "verdict" */
    cp_jw_key(&w, "critical_path"); /* the track's size; the numbers are in the report's critical_path */
    if (cp) {
        cp_jw_obj_begin(&w);
        cp_jw_key(&w, "steps"); cp_jw_int(&w, (int64_t)cp->n_steps);
        cp_jw_key(&w, "spans"); cp_jw_int(&w, (int64_t)cp->n);
        cp_jw_key(&w, "flows"); cp_jw_int(&w, (int64_t)cp_flows(cp));
        cp_jw_key(&w, "truncated"); cp_jw_int(&w, cp->truncated);
        cp_jw_obj_end(&w);
    } else {
        cp_jw_null(&w);
    }
    cp_jw_obj_end(&w);
    cp_jw_key(&w, "traceEvents");
    cp_jw_arr_begin(&w);
    trace_events(&w, tl, base_ns, extra ? extra->marks : NULL);
    layer_tracks(&w, tl, base_ns, tracks);
    stragglers(&w, tl, base_ns, r);
    critical_path(&w, tl, base_ns, cp);
    counter_tracks(&w, tl, base_ns, extra ? extra->counters : NULL);
    findings(&w, tl, base_ns, r);
    cp_jw_arr_end(&w);
    cp_jw_obj_end(&w);
    cp_buf_putc(out, '\n');
    return 0;
}
