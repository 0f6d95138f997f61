/* test_an_job.c - what the job is, and the trace-side rules that depend on
 * it, on timelines built in code:
 *  - vendor agreed over ranks; a device name that matches a catalog row of
 *    another vendor is not used (an AMD trace never gets an NVIDIA row);
 *  - training vs inference (backward ops, optimizer, training wrappers,
 *    autograd sequence numbers) and unknown without framework ops;
 *  - CUDA/HIP graph capture vs replay;
 *  - storage from what did I/O: an nsys OS runtime pwrite64/fsync with the
 *    GPU idle is storage, a read inside a data-loader region is data
 *    loading, activation checkpointing is not storage. */
#include "test_util.h"

#include "analysis/an_verdict.h"
#include "model/catalog.h"

#include <math.h>

static uint32_t S(tl_builder *b, const char *s) { return cp_intern_s(tl_builder_strings(b), s); }

static void add(tl_builder *b, uint32_t track, tl_cat cat, const char *name, int64_t ts, int64_t dur)
{
    tl_ev ev = { .ts_ns = ts, .dur_ns = dur, .name = S(b, name), .cat = cat, .track = track, .corr = -1,
                 .ext_id = -1 };
    tl_builder_add(b, &ev);
}

typedef struct rank_spec {
    tl_gpu_vendor vendor;
    const char *gpu;
    const char *const *cpu_names;   /* framework ops in the step, NULL-terminated */
    const char *const *rt_names;    /* runtime calls, NULL-terminated */
    const char *const *osrt_names;  /* OS runtime calls [200, 600) us while the GPU idles */
    const char *region;             /* a host region around the OS calls, NULL none */
    bool busy;                      /* the host launches small ops [160, 900) us (GPU idle) */
    int steps;                      /* 1 ms steps, each the same (0 = 1) */
} rank_spec;

/* One rank, 1 ms steps: a kernel [0, 150) us, then the host alone. */
static tl_builder *rank_trace(int rank, const rank_spec *sp)
{
    tl_builder *b = tl_builder_new("rank.json");
    tl_rank_meta *m = tl_builder_meta(b);
    m->rank = rank;
    m->world_size = 2;
    m->n_devices = 1;
    m->vendor = sp->vendor;
    if (sp->gpu)
        m->gpu_name = S(b, sp->gpu);
    tl_track_key cpu = { TL_TRACK_CPU, 100, 101, -1, -1 }, gpu = { TL_TRACK_GPU, 0, 7, 0, 7 };
    uint32_t tc = tl_builder_track(b, &cpu), tg = tl_builder_track(b, &gpu);
    for (int s = 0; s < (sp->steps > 0 ? sp->steps : 1); s++) {
        int64_t t0 = (int64_t)s * 1000000;
        char step[32];
        snprintf(step, sizeof step, "ProfilerStep#%d", s + 1);
        add(b, tc, TL_CAT_USER_ANNOTATION, step, t0, 1000000);
        add(b, tg, TL_CAT_KERNEL, "ampere_sgemm_128x64_tn", t0, 150000);
        int64_t t = t0 + 10000;
        for (const char *const *n = sp->cpu_names; n && *n; n++, t += 1000)
            add(b, tc, TL_CAT_CPU_OP, *n, t, 500);
        for (const char *const *n = sp->rt_names; n && *n; n++, t += 1000)
            add(b, tc, TL_CAT_CUDA_RUNTIME, *n, t, 500);
        for (int64_t u = t0 + 160000; sp->busy && u < t0 + 900000; u += 1000)
            add(b, tc, TL_CAT_CPU_OP, "aten::add", u, 900);
        if (sp->region)
            add(b, tc, TL_CAT_PYTHON_FUNCTION, sp->region, t0 + 190000, 420000);
        t = t0 + 200000;
        for (const char *const *n = sp->osrt_names; n && *n; n++, t += 100000)
            add(b, tc, TL_CAT_OSRT, *n, t, 100000);
    }
    return b;
}

typedef struct run_t {
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    an_opts o;
} run_t;

static void run(run_t *x, const rank_spec *a, const rank_spec *b)
{
    tl_builder *bs[2] = { rank_trace(0, a), rank_trace(1, b ? b : a) };
    assert_int_equal(tl_finish(bs, 2, &(tl_finish_opts){ .nthreads = 1 }, &x->tl, NULL), 0);
    x->rep = rep_new("chainprof.analyze/1", 0, NULL);
    x->o = (an_opts){ .nthreads = 1 };
    memset(&x->ctx, 0, sizeof x->ctx);
    assert_int_equal(an_run_all(&x->ctx, x->tl, x->rep, &x->o, NULL), 0);
}

static void run_free(run_t *x)
{
    an_ctx_free(&x->ctx);
    rep_free(x->rep);
    tl_free(x->tl);
}

static const an_job_result *job(const run_t *x) { return x->ctx.results[AN_job]; }

static const an_finding *find(const run_t *x, const char *code)
{
    const an_findings_result *fr = x->ctx.results[AN_findings];
    for (size_t i = 0; i < fr->n; i++)
        if (!strcmp(fr->v[i].code, code))
            return &fr->v[i];
    return NULL;
}

static void test_vendor(void **state)
{
    (void)state;
    static const char *const bwd[] = { "autograd::engine::evaluate_function: MmBackward0", NULL };
    run_t x;
    /* an AMD trace whose device name resolves to an NVIDIA row: not used */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_AMD, .gpu = "NVIDIA A100-SXM4-80GB", .cpu_names = bwd }, NULL);
    assert_int_equal(job(&x)->vendor, TL_VENDOR_AMD);
    assert_null(job(&x)->gpu);
    assert_true(job(&x)->gpu_vendor_mismatch);
    assert_string_equal(an_job_scaleup(job(&x)), "xGMI");
    assert_string_equal(an_job_ccl(job(&x)), "RCCL");
    const an_collectives_result *cr = x.ctx.results[AN_collectives];
    assert_true(isnan(cr->expected_intra_gbps)); /* no NVLink figure for an AMD part */
    run_free(&x);
    /* the AMD part itself resolves */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_AMD, .gpu = "AMD Instinct MI300X", .cpu_names = bwd }, NULL);
    assert_non_null(job(&x)->gpu);
    assert_string_equal(job(&x)->gpu->name, "MI300X");
    run_free(&x);
    /* an NVIDIA part without NVLink talks over PCIe */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .gpu = "NVIDIA L40S", .cpu_names = bwd }, NULL);
    assert_string_equal(an_job_scaleup(job(&x)), "PCIe");
    run_free(&x);
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .gpu = "NVIDIA H100 80GB HBM3", .cpu_names = bwd }, NULL);
    assert_string_equal(an_job_scaleup(job(&x)), "NVLink");
    run_free(&x);
    /* ranks that disagree: unknown, generic words */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_AMD }, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA });
    assert_int_equal(job(&x)->vendor, TL_VENDOR_UNKNOWN);
    assert_null(job(&x)->hw);
    assert_string_equal(an_job_scaleup(job(&x)), "the scale-up link");
    run_free(&x);
}

static void test_kind(void **state)
{
    (void)state;
    static const struct {
        const char *names[3];
        an_job_kind kind;
    } t[] = {
        { { "autograd::engine::evaluate_function: AddmmBackward0", NULL }, AN_JOB_TRAINING },
        { { "Optimizer.step#AdamW.step", NULL }, AN_JOB_TRAINING },
        { { "FSDP::pre_forward (blocks.3)", NULL }, AN_JOB_TRAINING },
        { { "aten::mm, seq = 4521, op_id = 9", NULL }, AN_JOB_TRAINING }, /* emit_nvtx under grad mode */
        { { "aten::mm", "vllm::unified_attention", NULL }, AN_JOB_INFERENCE },
        { { "aten::mm", NULL }, AN_JOB_INFERENCE },
        { { NULL }, AN_JOB_UNKNOWN },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        run_t x;
        run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .cpu_names = t[i].names }, NULL);
        if (job(&x)->kind != t[i].kind)
            fail_msg("case %zu (%s): %s, want %s", i, t[i].names[0] ? t[i].names[0] : "none",
                     an_job_kind_name(job(&x)->kind), an_job_kind_name(t[i].kind));
        run_free(&x);
    }
}

static void test_graphs(void **state)
{
    (void)state;
    static const char *const ops[] = { "aten::add", NULL };
    static const char *const capture[] = { "cudaStreamBeginCapture", "cudaLaunchKernel", "cudaStreamEndCapture",
                                           "cudaGraphInstantiateWithFlags", NULL };
    static const char *const replay[] = { "cudaGraphLaunch_v10000", NULL };
    static const char *const hip[] = { "hipGraphLaunch", NULL };
    run_t x;
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .cpu_names = ops, .rt_names = capture, .busy = true }, NULL);
    assert_int_equal(job(&x)->graph_phase, AN_GRAPH_CAPTURE);
    /* the host is busy 85 % of the step: a capture trace makes no host finding */
    assert_null(find(&x, "LAUNCH_BOUND"));
    assert_non_null(find(&x, "GRAPH_CAPTURE_TRACE"));
    run_free(&x);
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .cpu_names = ops, .rt_names = replay, .busy = true }, NULL);
    assert_int_equal(job(&x)->graph_phase, AN_GRAPH_REPLAY);
    assert_int_equal(job(&x)->graph_launches, 2); /* one per rank */
    const an_finding *l = find(&x, "LAUNCH_BOUND");
    assert_non_null(l);
    assert_null(strstr(l->recommendation, "capture the step in CUDA graphs"));
    assert_non_null(strstr(l->title, "CUDA graph replays"));
    run_free(&x);
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_AMD, .cpu_names = ops, .rt_names = hip }, NULL);
    assert_int_equal(job(&x)->graph_phase, AN_GRAPH_REPLAY);
    run_free(&x);
    /* eager inference: graphs recommended, in the serving frameworks' words */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .cpu_names = ops, .busy = true }, NULL);
    l = find(&x, "LAUNCH_BOUND");
    assert_non_null(l);
    assert_non_null(strstr(l->recommendation, "--enforce-eager"));
    run_free(&x);
}

static int64_t storage_ns(const run_t *x)
{
    const an_layers_result *lr = x->ctx.results[AN_layers];
    return lr->ranks[0].total.exposed_ns[CP_LAYER_STORAGE];
}

static void test_storage_from_io(void **state)
{
    (void)state;
    static const char *const writes[] = { "pwrite64", "write", "fsync", "poll", NULL };
    static const char *const reads[] = { "read", "read", NULL };
    run_t x;
    /* three file calls of 100 us with the GPU idle in each of two steps;
     * poll is not I/O: 30 % of every step, the trace's interval of 1 */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .osrt_names = writes, .steps = 2 }, NULL);
    assert_int_equal(storage_ns(&x), 600000);
    const an_finding *c = find(&x, "CKPT_SYNC_STALL");
    assert_non_null(c);
    CP_ASSERT_NEAR(c->gain_pct, 30.0, 1e-6);
    assert_true(c->gain_pct <= c->cap_pct + 1e-9);
    assert_string_equal(c->interval_source, "trace");
    run_free(&x);
    /* once in one step: a 0.3 ms stall amortised over the default 30 min
     * interval is no finding */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .osrt_names = writes }, NULL);
    assert_null(find(&x, "CKPT_SYNC_STALL"));
    run_free(&x);
    /* reads inside the data loader are the data loader's (pipes from workers) */
    run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .osrt_names = reads,
                          .region = "torch/utils/data/dataloader.py(623): __next__" }, NULL);
    assert_int_equal(storage_ns(&x), 0);
    run_free(&x);
    /* activation checkpointing is recomputation, not a checkpoint write */
    static const char *const names[] = {
        "FSDP::post_forward (blocks.10._checkpoint_wrapped_module)", "torch/utils/checkpoint.py(460): checkpoint",
        "CheckpointFunctionBackward", "deepspeed/runtime/activation_checkpointing/checkpointing.py(700): forward",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (an_host_class_of(names[i]) != AN_HC_OTHER)
            fail_msg("%s classed as %d", names[i], an_host_class_of(names[i]));
        run(&x, &(rank_spec){ .vendor = TL_VENDOR_NVIDIA, .region = names[i] }, NULL);
        assert_int_equal(storage_ns(&x), 0);
        assert_null(find(&x, "CKPT_SYNC_STALL"));
        run_free(&x);
    }
    /* ... while real saves are */
    assert_int_equal(an_host_class_of("torch/serialization.py(628): save"), AN_HC_STORAGE);
    assert_int_equal(an_host_class_of("DeepSpeedEngine.save_checkpoint"), AN_HC_STORAGE);
    assert_int_equal(an_host_class_of("checkpoint"), AN_HC_STORAGE);
    assert_true(an_is_file_io_call("pwrite64") && an_is_file_io_call("fdatasync"));
    assert_false(an_is_file_io_call("pthread_cond_wait") || an_is_file_io_call("ioctl"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vendor),
        cmocka_unit_test(test_kind),
        cmocka_unit_test(test_graphs),
        cmocka_unit_test(test_storage_from_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
