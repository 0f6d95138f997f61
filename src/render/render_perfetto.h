/* render_perfetto.h - the Perfetto overlay of a verdict (`analyze -o
 * FILE.perfetto.json`, `--format perfetto`): Chrome trace-event JSON in the
 * object form, which ui.perfetto.dev and chrome://tracing open.
 *
 * It holds the trace's own events (every rank's CPU and GPU tracks with
 * their names, categories, args, correlation and External ids, at their
 * timeline times in µs with ns precision) and, on a process of its own per
 * rank ("chainprof: rank R"), a track of the five layers over time (the
 * layer sweep's segments, an_layers_timeline), a track of its straggler
 * steps, a track of the critical path where it ran on that rank (one span
 * per segment of the walked path, flow arrows where it crosses ranks), and
 * every finding as a global instant event with its evidence,
 * gain and advice in args, and the counter tracks (queue length per stream,
 * memory bandwidth per kind) as counter events on the GPU's process, and
 * on the trace's own events of a frequent kernel pattern (analyze
 * --kernel-seq) the pattern in args "Patterns". Overlay events have categories
 * "chainprof.*", which the Kineto reader skips: analyzing a one-rank
 * overlay gives the numbers of the trace it was made from. The user's trace
 * is never rewritten: the overlay is a new file, written atomically.
 *
 * Inputs are plain data so this writer stays in render: the frozen
 * timeline (model), the report tree (findings, stragglers, steps), the
 * layer segments per timeline rank and the critical path's segments.
 */
#ifndef CP_RENDER_RENDER_PERFETTO_H
#define CP_RENDER_RENDER_PERFETTO_H

#include "../base/buf.h"
#include "../base/error.h"
#include "../model/report.h"
#include "../model/timeline.h"
#include "../model/vocab.h"

typedef struct rp_layer_seg {
    int64_t ts_ns, dur_ns;
    cp_layer layer;
} rp_layer_seg;

typedef struct rp_layer_track {
    const rp_layer_seg *v;
    size_t n;
} rp_layer_track;

/* One segment of a step's critical path (an_critpath's hop): name is the
 * event holding the time, or the edge for a wait no event holds. */
typedef struct rp_cp_span {
    int64_t ts_ns, dur_ns;
    int64_t step;
    uint32_t rank_index;        /* timeline rank carrying the segment */
    const char *name, *edge;
    cp_layer layer;
} rp_cp_span;

/* Every step's segments, step after step, each step's forward in time
 * (consecutive segments of a step meet). */
typedef struct rp_critpath {
    const rp_cp_span *v;
    size_t n;
    size_t n_steps;
    int64_t truncated;          /* segments left out (the per-step cap) */
} rp_critpath;

/* A counter track (analysis' an_counter_track, copied field by field):
 * written as Chrome counter events ("ph":"C", category chainprof.counter)
 * on the GPU's process, one per point, the value under args[arg], "id" the
 * stream when stream >= 0 (HTA's trace with counters). */
typedef struct rp_counter_pt {
    int64_t ts_ns;
    double value;
} rp_counter_pt;

typedef struct rp_counter_track {
    const char *name, *arg;
    int64_t stream;             /* -1: none */
    int32_t device;
    const rp_counter_pt *pts;
    size_t n;
} rp_counter_track;

/* The counter tracks of one timeline rank. */
typedef struct rp_counters {
    const rp_counter_track *v;
    size_t n;
} rp_counters;

/* Frequent kernel patterns (kseq) marked on one timeline rank's own events:
 * event base + i, i < n_ev, with ev_row[i] >= 0 gets args "Patterns"
 * {pattern[row]: count[row]} (HTA's overlaid trace). */
typedef struct rp_marks {
    size_t base, n_ev;
    const int32_t *ev_row;
    const char *const *pattern;
    const int64_t *count;
} rp_marks;

/* What the analyses add to the overlay beyond the report; each array has
 * tl->n_ranks entries, NULL when not computed. */
typedef struct rp_extra {
    const rp_counters *counters;
    const rp_marks *marks;
} rp_extra;

/* pid of rank r's overlay process (above any real pid Linux hands out). */
#define RP_OVERLAY_PID(r) (4194304 + 16 + (int64_t)(r))

/* The overlay into out; tracks[i] is timeline rank i (n = tl->n_ranks);
 * cp the critical path, extra the counter tracks and pattern marks, each
 * NULL when not computed. */
int render_perfetto(const tl_timeline *tl, const rep_report *r, const rp_layer_track *tracks,
                    const rp_critpath *cp, const rp_extra *extra, cp_buf *out, cp_error *err);

#endif
