/* render_perfetto.h - the Perfetto overlay of a verdict (`analyze -o
 * FILE.perfetto.json`, `--format perfetto`): Chrome trace-event JSON in the
 * object form, which ui.perfetto.dev and chrome://tracing open.
 *
 * It holds the trace's own events (every rank's CPU and GPU tracks with
 * their names, categories, args, correlation and External ids, at their
 * timeline times in µs with ns precision) and, on a process of its own per
 * rank ("chainprof: rank R"), a track of the five layers over time (the
 * layer sweep's segments, an_layers_timeline), a track of its straggler
 * steps, and every finding as a global instant event with its evidence,
 * gain and advice in args. chainprof computes no critical path, so there is
 * no track of one (the metadata says so). Overlay events have categories
 * "chainprof.*", which the Kineto reader skips: analyzing a one-rank
 * overlay gives the numbers of the trace it was made from. The user's trace
 * is never rewritten: the overlay is a new file, written atomically.
 *
 * Inputs are plain data so this writer stays in render: the frozen
 * timeline (model), the report tree (findings, stragglers, steps) and the
 * layer segments per timeline rank.
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

/* pid of rank r's overlay process (above any real pid Linux hands out). */
#define RP_OVERLAY_PID(r) (4194304 + 16 + (int64_t)(r))

/* The overlay into out; tracks[i] is timeline rank i (n = tl->n_ranks). */
int render_perfetto(const tl_timeline *tl, const rep_report *r, const rp_layer_track *tracks, cp_buf *out,
                    cp_error *err);

#endif
