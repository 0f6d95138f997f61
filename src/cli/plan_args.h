/* plan_args.h - options shared by `chainprof model` and `chainprof plan`.
 *
 * Both commands describe the same thing (a model, a layout, hardware, a job)
 * with the same flags, the same `--config FILE.json` keys (a flat JSON object
 * whose keys are the long option names: {"preset": "llama3-70b", "gpus": 256,
 * "swiglu": true}) and the same `--what-if KEY=VALUE[,KEY=VALUE]` keys. One
 * table and one applier serve all three, so a key means the same everywhere.
 *
 * Ownership: plan_args_build copies nothing it does not own; the model name
 * points at a preset (static) or is NULL.
 */
#ifndef CP_CLI_PLAN_ARGS_H
#define CP_CLI_PLAN_ARGS_H

#include "cli.h"
#include "../plan/model.h"

#include <stddef.h>

/* Option ids 200..299 belong to this table. */
extern const cli_opt plan_model_opts[];
extern const size_t plan_n_model_opts;

typedef struct plan_args {
    plan_inputs in;
    const char *model_name;  /* preset name or NULL */
    int gpus_given;          /* flags the planner must keep pinned */
    int tp, pp, cp, ep, etp, vpp, micro_batch, zero, recompute, sp;
} plan_args;

/* A command's own options followed by the shared ones; *n gets the count.
 * The caller frees the array (the strings are static). */
cli_opt *plan_cli_table(const cli_opt *own, size_t n_own, size_t *n);

/* Option id of --config (for listing the file among the report's inputs). */
int plan_config_opt_id(void);

/* Build inputs from --config (if any), then the command line in order; a
 * preset is applied first so explicit keys override it. Returns 0 or an exit
 * code after printing the error. */
int plan_args_build(const cli_ctx *ctx, plan_args *pa);

/* Apply a comma-separated KEY=VALUE list (option names without "--") to
 * pa. Returns 0 or an exit code after printing the error. */
int plan_args_apply_list(const cli_ctx *ctx, plan_args *pa, const char *list);

#endif
