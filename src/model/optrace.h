/* optrace.h - how the op-timeline reader (OSDI'25 artifact format, see
 * docs/FORMATS.md "Op timelines") lays workers out in the timeline, so the
 * pipeline what-if can read them back without knowing the reader.
 *
 * Why a shared encoding: readers and analyzers meet only in the timeline.
 * One input holds every worker (DP rank d, PP rank p, TP rank t) of a job;
 * the reader puts them all in one timeline rank (format "optrace"), each
 * thread on a CPU track with pid = d and tid = optrace_tid(p, t, kind).
 * Events carry the artifact's args step, mb_id, model_chunk, seq_id (int,
 * absent when the trace has none or null).
 */
#ifndef CP_MODEL_OPTRACE_H
#define CP_MODEL_OPTRACE_H

#include <stdint.h>

#define OPTRACE_FORMAT "optrace"

/* Thread kinds, in the artifact's order. */
typedef enum optrace_kind { OPT_COMPUTE = 0, OPT_PP_COMM, OPT_TP_COMM, OPT_DP_COMM, OPT_MISC, OPT_KIND_N } optrace_kind;

static const char *const optrace_kind_name[OPT_KIND_N] = { "compute", "pp-comm", "tp-comm", "dp-comm", "misc" };

#define OPTRACE_MAX_RANK 65535 /* per dimension */

static inline int64_t optrace_tid(int pp, int tp, int kind)
{
    return ((int64_t)pp << 24) | ((int64_t)tp << 4) | kind;
}
static inline int optrace_tid_pp(int64_t tid) { return (int)(tid >> 24); }
static inline int optrace_tid_tp(int64_t tid) { return (int)((tid >> 4) & 0xfffff); }
static inline int optrace_tid_kind(int64_t tid) { return (int)(tid & 0xf); }

#endif
