/* an_job.c - the `job` analyzer: what kind of job the traces show, so the
 * rules recommend what applies to it.
 *
 * Advice is only right for the job it is given to: "capture the step in
 * CUDA graphs" is wrong for a job that already replays graphs, or whose
 * trace is the graphs' capture (vLLM's warm-up); "make checkpoints
 * asynchronous" and "raise DataLoader num_workers" are wrong for an
 * inference server; an NVLink figure and NVLink advice are wrong on an AMD
 * part, whose GPUs talk RCCL over xGMI. So, from the traces alone:
 *
 * - kind: training when any rank shows a backward pass (autograd engine
 *   functions, *Backward0 ops), an optimizer step, a training-only wrapper
 *   (FSDP, DDP, activation checkpointing) or autograd recording its
 *   sequence numbers (grad mode on: a window of forward passes only still
 *   counts); inference when the
 *   framework ops are there but neither is (serving frameworks' frames,
 *   vllm / sglang / execute_model, confirm it); unknown without framework
 *   ops (a kernels-only export says nothing either way).
 * - vendor: the readers' per-rank vendor (device names, hip* vs cuda*
 *   runtime calls, roctracer/CUPTI versions), agreed over ranks; the
 *   catalog row of the traced GPU is used only when its vendor is the
 *   trace's (hw_vendor_find gives the collective library and the scale-up
 *   fabric's name for titles and advice).
 * - CUDA/HIP graphs: graph launches (cudaGraphLaunch, cuGraphLaunch,
 *   hipGraphLaunch) mean the job replays graphs; stream captures
 *   (cudaStreamBeginCapture, hipStreamBeginCapture) and instantiations
 *   without launches mean the trace records the capture, not the steady
 *   state.
 * - ranks: how many are traced of the world size the traces state, so a
 *   rule can say what a partial set cannot tell.
 *
 * Each name is classified once (a cache per string id) and events are read
 * in one pass. Output: a top-level `job` object (docs/FORMATS.md); typed
 * result an_job_result (an_verdict.h).
 */
#include "an_verdict.h"
#include "../base/util.h"
#include "../model/catalog.h"

#include <stdlib.h>
#include <string.h>

enum {
    NC_SEEN = 1,           /* classified */
    NC_BACKWARD = 2,
    NC_OPTIMIZER = 4,
    NC_DATALOADER = 8,
    NC_SERVING = 16,
    NC_GRAPH_LAUNCH = 32,
    NC_GRAPH_CAPTURE = 64,
    NC_GRAPH_INSTANTIATE = 128,
    NC_TRAINING = 256,     /* a training-only wrapper or autograd recording */
};

/* Name patterns, case-insensitive substrings unless a prefix list says so. */
static const char *const k_backward[] = { "autograd::engine::evaluate_function", "backward0", "backward1",
                                          "## backward ##" };
static const char *const k_optimizer[] = { "optimizer.step", "optimizer.zero_grad", "_fused_adam", "_fused_sgd",
                                           "_fused_adagrad", "_multi_tensor_adam", "_single_tensor_adam" };
/* wrappers only training uses, and autograd's sequence numbers (recorded
 * only with grad enabled: emit_nvtx names ", seq = N"; Kineto's cpu_op
 * "Sequence number" arg is checked apart) */
static const char *const k_training[] = { "fsdp::", "fullyshardeddataparallel", "distributeddataparallel",
                                          "checkpoint_wrapped", ", seq = " };
static const char *const k_serving[] = { "vllm", "sglang", "execute_model", "model_runner", "tensorrt_llm" };
/* runtime/driver entry points (prefixes: nsys appends _v10000 and such) */
static const char *const k_graph_launch[] = { "cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch" };
static const char *const k_graph_capture[] = { "cudaStreamBeginCapture", "cuStreamBeginCapture",
                                               "hipStreamBeginCapture" };
static const char *const k_graph_inst[] = { "cudaGraphInstantiate", "cuGraphInstantiate", "hipGraphInstantiate" };

static bool any_contains(const char *s, const char *const *pat, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cp_str_icontains(s, pat[i]))
            return true;
    return false;
}

static bool any_prefix(const char *s, const char *const *pat, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(s, pat[i], strlen(pat[i])) == 0)
            return true;
    return false;
}

/* Every class a name can have; the framework classes count only on
 * framework events (see count_events). */
static uint16_t classify(const char *s)
{
    uint16_t c = NC_SEEN;
    if (any_prefix(s, k_graph_launch, CP_ARRAY_LEN(k_graph_launch)))
        return c | NC_GRAPH_LAUNCH;
    if (any_prefix(s, k_graph_capture, CP_ARRAY_LEN(k_graph_capture)))
        return c | NC_GRAPH_CAPTURE;
    if (any_prefix(s, k_graph_inst, CP_ARRAY_LEN(k_graph_inst)))
        return c | NC_GRAPH_INSTANTIATE;
    if (any_contains(s, k_backward, CP_ARRAY_LEN(k_backward)))
        c |= NC_BACKWARD;
    if (any_contains(s, k_optimizer, CP_ARRAY_LEN(k_optimizer)))
        c |= NC_OPTIMIZER;
    if (any_contains(s, k_training, CP_ARRAY_LEN(k_training)))
        c |= NC_TRAINING;
    if (any_contains(s, k_serving, CP_ARRAY_LEN(k_serving)))
        c |= NC_SERVING;
    if (an_host_class_of(s) == AN_HC_DATALOADER)
        c |= NC_DATALOADER;
    return c;
}

static const char *vendor_key(tl_gpu_vendor v)
{
    switch (v) {
    case TL_VENDOR_NVIDIA: return "NVIDIA";
    case TL_VENDOR_AMD: return "AMD";
    case TL_VENDOR_MTIA: return "MTIA";
    default: return NULL;
    }
}

/* Vendor agreed by every rank that has one; the traced GPU's catalog row
 * when its vendor is that one. Over the job's ranks (ctx->job: under mpirun
 * also those other processes hold). */
static void hardware(const an_ctx *ctx, an_job_result *j)
{
    tl_gpu_vendor v = TL_VENDOR_UNKNOWN;
    bool mixed = false;
    const an_job_rank *jr = ctx->job;
    for (size_t i = 0; i < ctx->n_job; i++) {
        tl_gpu_vendor r = jr[i].vendor;
        if (r == TL_VENDOR_UNKNOWN)
            continue;
        if (v != TL_VENDOR_UNKNOWN && r != v)
            mixed = true;
        v = r;
    }
    j->vendor = mixed ? TL_VENDOR_UNKNOWN : v;
    for (size_t i = 0; i < ctx->n_job && !j->gpu; i++) {
        if (!jr[i].gpu_name)
            continue;
        if (!j->gpu_name)
            j->gpu_name = jr[i].gpu_name;
        const hw_gpu *g = hw_gpu_find(jr[i].gpu_name);
        if (!g)
            continue;
        if (j->vendor != TL_VENDOR_UNKNOWN && !cp_str_ieq(g->vendor, vendor_key(j->vendor))) {
            j->gpu_vendor_mismatch = true; /* e.g. an AMD trace whose name matches an NVIDIA row */
            continue;
        }
        j->gpu = g;
        if (j->vendor == TL_VENDOR_UNKNOWN && !mixed)
            j->vendor = cp_str_ieq(g->vendor, "AMD") ? TL_VENDOR_AMD
                        : cp_str_ieq(g->vendor, "NVIDIA") ? TL_VENDOR_NVIDIA
                                                          : TL_VENDOR_UNKNOWN;
    }
    j->hw = hw_vendor_find(vendor_key(j->vendor));
    if (!j->hw && j->gpu)
        j->hw = hw_vendor_find(j->gpu->vendor);
    j->world_size = -1;
    for (size_t i = 0; i < ctx->n_job; i++)
        j->world_size = CP_MAX(j->world_size, jr[i].world_size);
    j->ranks_traced = (int32_t)ctx->n_job;
}

/* The counters over every rank (each process counts its own, then the
 * sums). Only whether training_markers is nonzero is used, and that is the
 * same summed: the sequence-number clause counts until something marks
 * training, which is itself a marker. */
static int count_events(const an_ctx *ctx, an_job_result *j)
{
    const tl_timeline *tl = ctx->tl;
    size_t n_str = cp_intern_count(&tl->strings);
    uint16_t *cache = cp_xcalloc(n_str + 1, sizeof *cache);
    uint32_t seq_key = cp_intern_find(&tl->strings, "Sequence number", 15);
    int64_t framework = 0;
    for (size_t i = 0; i < tl->n_events; i++) {
        if (tl->tracks[tl->track[i]].key.kind != TL_TRACK_CPU)
            continue;
        tl_cat c = (tl_cat)tl->cat[i];
        uint32_t id = tl->name[i];
        const char *name = tl_str(tl, id);
        /* the profiler's own step annotations say nothing of the job */
        bool fw = (c == TL_CAT_CPU_OP || c == TL_CAT_USER_ANNOTATION || c == TL_CAT_NVTX ||
                   c == TL_CAT_PYTHON_FUNCTION) &&
                  strncmp(name, "ProfilerStep#", 13) != 0;
        framework += fw;
        if (!cache[id])
            cache[id] = classify(name);
        uint16_t k = cache[id];
        j->backward_ops += fw && (k & NC_BACKWARD);
        /* the sequence-number arg is decoded only until training is known */
        tl_arg seq;
        bool known = j->backward_ops || j->optimizer_ops || j->training_markers;
        j->training_markers += fw && ((k & NC_TRAINING) || (!known && c == TL_CAT_CPU_OP && seq_key != UINT32_MAX &&
                                                            tl_arg_by_id(tl, i, seq_key, &seq)));
        j->optimizer_ops += fw && (k & NC_OPTIMIZER);
        j->dataloader_regions += fw && (k & NC_DATALOADER);
        j->serving_markers += fw && (k & NC_SERVING);
        j->graph_launches += (k & NC_GRAPH_LAUNCH) != 0;
        j->graph_captures += (k & NC_GRAPH_CAPTURE) != 0;
        j->graph_instantiations += (k & NC_GRAPH_INSTANTIATE) != 0;
    }
    free(cache);
    int64_t sum[] = { j->backward_ops, j->optimizer_ops, j->training_markers, j->dataloader_regions,
                      j->serving_markers, j->graph_launches, j->graph_captures, j->graph_instantiations, framework };
    int rc = an_job_sum(ctx, sum, CP_ARRAY_LEN(sum));
    if (rc < 0)
        return rc;
    j->backward_ops = sum[0], j->optimizer_ops = sum[1], j->training_markers = sum[2];
    j->dataloader_regions = sum[3], j->serving_markers = sum[4], j->graph_launches = sum[5];
    j->graph_captures = sum[6], j->graph_instantiations = sum[7], framework = sum[8];
    if (j->backward_ops || j->optimizer_ops || j->training_markers) {
        j->kind = AN_JOB_TRAINING;
        j->kind_why = j->backward_ops    ? "backward ops in the trace"
                      : j->optimizer_ops ? "an optimizer step in the trace"
                                         : "training wrappers (FSDP, DDP, activation checkpointing) or autograd "
                                           "recording (sequence numbers) in the trace";
    } else if (j->serving_markers) {
        j->kind = AN_JOB_INFERENCE;
        j->kind_why = "serving framework frames and no backward pass or optimizer step";
    } else if (framework) {
        j->kind = AN_JOB_INFERENCE;
        j->kind_why = "framework ops but no backward pass or optimizer step";
    } else {
        j->kind = AN_JOB_UNKNOWN;
        j->kind_why = "no framework ops in the trace";
    }
    j->graph_phase = j->graph_launches               ? AN_GRAPH_REPLAY
                     : j->graph_captures || j->graph_instantiations ? AN_GRAPH_CAPTURE
                                                                    : AN_GRAPH_NONE;
    return 0;
}

const char *an_job_kind_name(an_job_kind k)
{
    return k == AN_JOB_TRAINING ? "training" : k == AN_JOB_INFERENCE ? "inference" : "unknown";
}

static const char *graph_phase_name(an_graph_phase p)
{
    return p == AN_GRAPH_REPLAY ? "replay" : p == AN_GRAPH_CAPTURE ? "capture" : "none";
}

const char *an_job_scaleup(const an_job_result *j)
{
    /* a part without a scale-up domain (L40S, L4, RTX 4090) talks over PCIe */
    if (j && j->gpu && j->gpu->scaleup_domain <= 1)
        return "PCIe";
    return j && j->hw ? j->hw->scaleup : "the scale-up link";
}

const char *an_job_ccl(const an_job_result *j)
{
    return j && j->hw && j->hw->ccl ? j->hw->ccl : "the collective library";
}

static void free_result(void *self) { free(self); }

int an_job_run(an_ctx *ctx)
{
    rep_report *rp = ctx->rep;
    an_job_result *j = cp_xcalloc(1, sizeof *j);
    j->free = free_result;
    ctx->results[AN_job] = j;
    hardware(ctx, j);
    int rc = count_events(ctx, j);
    if (rc < 0)
        return rc;

    rep_node *o = rep_obj(rp, rp->root, "job", "job");
    rep_str(rp, o, "kind", "kind", an_job_kind_name(j->kind));
    rep_str(rp, o, "kind_reason", "because", j->kind_why);
    rep_str(rp, o, "gpu_vendor", "GPU vendor", vendor_key(j->vendor));
    rep_str(rp, o, "collective_library", "collective library", j->hw ? j->hw->ccl : NULL);
    rep_str(rp, o, "scaleup_fabric", "scale-up fabric", j->hw ? j->hw->scaleup : NULL);
    rep_str(rp, o, "catalog_gpu", "catalog GPU", j->gpu ? j->gpu->name : NULL);
    rep_int(rp, o, "ranks_traced", "ranks traced", j->ranks_traced, NULL);
    if (j->world_size > 0)
        rep_int(rp, o, "world_size", "world size", j->world_size, NULL);
    else
        rep_null(rp, o, "world_size", "world size", NULL);
    rep_str(rp, o, "cuda_graphs", "CUDA/HIP graphs", graph_phase_name(j->graph_phase));
    rep_int(rp, o, "graph_launches", "graph launches", j->graph_launches, NULL);
    rep_int(rp, o, "graph_captures", "graph captures", j->graph_captures, NULL);
    return 0;
}
