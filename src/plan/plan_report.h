/* plan_report.h - the performance model's results as report subtrees.
 *
 * `chainprof model` and `chainprof plan` render predictions only through the
 * report model (src/model/report.h), so text and JSON never disagree. These
 * helpers add the `chainprof.model/2` subtrees: model shape, hardware,
 * layout, headline figures, breakdown along the chain, memory and the
 * assumptions the model used. Key names and units are the documented schema
 * (docs/FORMATS.md "chainprof.model/2").
 *
 * Ownership: nodes live in the report's arena; inputs are only read.
 */
#ifndef CP_PLAN_PLAN_REPORT_H
#define CP_PLAN_PLAN_REPORT_H

#include "model/report.h"
#include "model/collmodel.h"
#include "plan/model.h"

const char *plan_recompute_name(plan_recompute rc);

/* Short layout text, e.g. "tp8 pp4 dp8 cp1 ep1 vpp2 mb1 zero1 rc=full sp". */
void plan_layout_text(const plan_inputs *in, const plan_result *res, char *buf, size_t size);

/* Headline figures, breakdown, chain table and memory under parent. */
void plan_report_result(rep_report *r, rep_node *parent, const plan_inputs *in, const plan_result *res);

/* model / hardware / layout / assumptions objects under parent. */
void plan_report_inputs(rep_report *r, rep_node *parent, const char *model_name, const plan_inputs *in,
                        const plan_result *res);

/* A what-if comparison object under parent: baseline vs changed. */
void plan_report_delta(rep_report *r, rep_node *parent, const char *key, const char *changes,
                       const plan_result *base, const plan_result *alt);

/* One modelled collective under parent as the `collective` object
 * (docs/FORMATS.md): the query, the algorithm/protocol the model ran (the
 * tuner's pick under auto), time_us, algbw_gbps, busbw_gbps and the
 * latency/bandwidth terms, then every runnable (algorithm, protocol) pair
 * as the `candidates` table, fastest first. */
void plan_report_collective(rep_report *r, rep_node *parent, const collm_query *q, const collm_topo *t,
                            const collm_result *res);

#endif
