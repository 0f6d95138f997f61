/* test_an_roofline.c - the roofline analyzer: an inline ncu export joined
 * with fixture A's kernels (FLOP/s, ceilings from ncu's own numbers, class,
 * the join by name and the findings' gains), and the class of every real
 * ncu output under ../shared/data/ncu against what its source says. */
#include "test_util.h"
#include "an_fixture.h"

#include "analysis/an_verdict.h"
#include "model/catalog.h"
#include "model/evidence.h"
#include "readers/evidence.h"
#include "render/render.h"

#define HDR                                                                                                     \
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\"," \
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
#define ROW(id, name, grid, sec, metric, unit, val)                                                          \
    "\"" id "\",\"9\",\"p\",\"h\",\"" name "\",\"1\",\"7\",\"(256, 1, 1)\",\"" grid "\",\"0\",\"8.0\",\"" sec \
    "\",\"" metric "\",\"" unit "\",\"" val "\"\n"

/* gemm_a: 108 SMs x 64 FP32 lanes x 2 x 1.5 GHz = 20.736 TFLOP/s of FP32
 * peak; 4.1472e8 FFMA in 100 us = 8.2944 TFLOP/s = 40 % of it (AI 829.44,
 * so the compute roof applies). elementwise: DRAM at 90 % of peak, no
 * FLOPs. */
static const char k_csv[] =
    HDR
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "S", "Duration", "usecond", "100")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "S", "Compute (SM) Throughput", "%", "70")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "S", "Memory Throughput", "%", "20")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "S", "SM Frequency", "cycle/nsecond", "1.50")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "L", "# SMs", "SM", "108")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "L", "Waves Per SM", "", "8")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "O", "Theoretical Occupancy", "%", "100")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "O", "Achieved Occupancy", "%", "96")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "C",
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", "414,720,000")
    ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "C", "dram__bytes.sum", "Mbyte", "1.00")
    ROW("1", "elementwise(float *)", "(4096, 1, 1)", "S", "Duration", "usecond", "10")
    ROW("1", "elementwise(float *)", "(4096, 1, 1)", "S", "Compute (SM) Throughput", "%", "12")
    ROW("1", "elementwise(float *)", "(4096, 1, 1)", "S", "Memory Throughput", "%", "90")
    ROW("1", "elementwise(float *)", "(4096, 1, 1)", "S", "DRAM Throughput", "%", "90")
    ROW("1", "elementwise(float *)", "(4096, 1, 1)", "M", "Memory Throughput", "Gbyte/second", "1,800")
    ROW("1", "elementwise(float *)", "(4096, 1, 1)", "L", "Waves Per SM", "", "6");

static void run_with(fx_run *r, tl_timeline *tl, const ev_set *set)
{
    memset(r, 0, sizeof *r);
    r->tl = tl;
    r->rep = rep_new("chainprof.analyze/1", 0, NULL);
    r->opts.nthreads = 1;
    r->opts.evidence = set;
    assert_int_equal(an_run_all(&r->ctx, tl, r->rep, &r->opts, NULL), 0);
}

static const rep_node *finding(const rep_report *rep, const char *code)
{
    const rep_node *arr = rep_path(rep, "findings");
    for (const rep_node *o = arr ? arr->first : NULL; o; o = o->next) {
        const rep_node *c = rep_child(o, "code");
        if (c && c->type == REP_STR && strcmp(c->v.s, code) == 0)
            return o;
    }
    return NULL;
}

static double child_num(const rep_node *o, const char *key)
{
    const rep_node *n = rep_child(o, key);
    assert_non_null(n);
    return n->type == REP_INT ? (double)n->v.i : n->type == REP_NUM ? n->v.d : NAN;
}

static const char *child_str(const rep_node *o, const char *key)
{
    const rep_node *n = rep_child(o, key);
    return n && n->type == REP_STR ? n->v.s : NULL;
}

static void test_joined_with_fixture(void **state)
{
    (void)state;
    ev_set set;
    ev_set_init(&set);
    rd_ev_read_buffer(&set, "prof.csv", k_csv, sizeof k_csv - 1);
    assert_int_equal(ev_count(&set, EV_NCU), 1);
    fx_run r;
    run_with(&r, fixture_a(), &set);
    const rep_node *t = rep_path(r.rep, "kernels_roofline");
    assert_non_null(t);
    assert_int_equal(t->n_children, 2);
    const rep_node *g = t->first, *e = t->first->next;
    CP_ASSERT_NEAR(child_num(g, "flops"), 2 * 414720000.0, 1e-3);
    CP_ASSERT_NEAR(child_num(g, "flops_per_s"), 8.2944e12, 1e3);
    CP_ASSERT_NEAR(child_num(g, "fp32_flops_per_s"), 8.2944e12, 1e3);
    assert_true(isnan(child_num(g, "tensor_flops_per_s"))); /* null: no tensor counters */
    CP_ASSERT_NEAR(child_num(g, "peak_flops_per_s"), 108 * 64 * 2 * 1.5e9, 1e3);
    assert_string_equal(child_str(g, "peak_flops_source"), "ncu device attributes");
    CP_ASSERT_NEAR(child_num(g, "arithmetic_intensity"), 829.44, 1e-9);
    CP_ASSERT_NEAR(child_num(g, "roofline_pct"), 40.0, 1e-9);
    assert_string_equal(child_str(g, "class"), "compute_bound");
    /* the trace's gemm_a ([8,18) and [80,95) us) matched by its base name */
    CP_ASSERT_NEAR(child_num(g, "trace_launches"), 2, 0);
    CP_ASSERT_NEAR(child_num(g, "trace_time_ns"), 25000, 0);
    assert_string_equal(child_str(g, "matched_by"), "base name");
    assert_string_equal(child_str(e, "class"), "memory_bound");
    CP_ASSERT_NEAR(child_num(e, "dram_bytes"), 1.8e12 * 10e-6, 1e-3); /* throughput x duration */
    CP_ASSERT_NEAR(child_num(e, "peak_dram_bytes_per_s"), 2.0e12, 1e-3); /* 1,800 GB/s is 90 % */
    CP_ASSERT_NEAR(child_num(e, "trace_time_ns"), 1500, 0);
    /* findings: gains on the step, like every trace finding */
    double step_ns = fx_num(&r, "verdict.amortised_step_time_ns");
    const rep_node *below = finding(r.rep, "KERNEL_BELOW_ROOFLINE");
    assert_non_null(below);
    CP_ASSERT_NEAR(child_num(below, "estimated_gain_pct"), 100 * 25000 / step_ns * (1 - 0.4 / 0.8), 1e-6);
    assert_string_equal(child_str(below, "layer"), "compute");
    /* the elementwise kernel holds 1.5 us of the step: below the 1 % a finding needs */
    assert_null(finding(r.rep, "KERNEL_MEMORY_FUSION"));
    CP_ASSERT_NEAR(fx_num(&r, "roofline.trace_kernels_matched"), 4, 0);
    /* the HTML report draws gemm_a (the one with FLOPs and bytes) on the chart */
    cp_buf h = CP_BUF_INIT;
    render_opts ro = {0};
    assert_int_equal(render_html(r.rep, &h, &ro, NULL), 0);
    const char *svg = strstr(cp_buf_str(&h), "<svg id=\"chart-roofline\"");
    assert_non_null(svg);
    const char *end = strstr(svg, "</svg>");
    const char *dot = strstr(svg, "<circle");
    assert_true(dot && dot < end);
    const char *next = strstr(dot + 1, "<circle");
    assert_true(!next || next > end);
    assert_non_null(strstr(svg, "20.7 TFLOP/s"));
    assert_non_null(strstr(end, "1 of 2 profiled launches"));
    cp_buf_free(&h);
    fx_done(&r);
    ev_set_free(&set);
}

/* No trace: gains are shares of the profiled kernels' own time (110 us). */
static void test_no_trace(void **state)
{
    (void)state;
    ev_set set;
    ev_set_init(&set);
    rd_ev_read_buffer(&set, "prof.csv", k_csv, sizeof k_csv - 1);
    fx_run r;
    run_with(&r, fx_finish(tl_builder_new("none")), &set);
    const rep_node *below = finding(r.rep, "KERNEL_BELOW_ROOFLINE"), *fuse = finding(r.rep, "KERNEL_MEMORY_FUSION");
    assert_non_null(below);
    assert_non_null(fuse);
    CP_ASSERT_NEAR(child_num(below, "estimated_gain_pct"), 100 * 100.0 / 110 * (1 - 0.4 / 0.8), 1e-6);
    CP_ASSERT_NEAR(child_num(fuse, "estimated_gain_pct"), 100 * 10.0 / 110, 1e-6);
    assert_true(fx_is_null(&r, "kernels_roofline.0.trace_time_ns"));
    fx_done(&r);
    ev_set_free(&set);
}

/* One kernel name profiled at two grid sizes: each trace launch goes to
 * the group of its own grid (nsys-style total "grid"/"block" args); the
 * trace's names are the full demangled ones. */
static void test_grid_decides(void **state)
{
    (void)state;
    static const char csv[] =
        HDR
        ROW("0", "void gemm_a<float>(const float *, float *)", "(864, 1, 1)", "S", "Duration", "usecond", "100")
        ROW("1", "void gemm_a<float>(const float *, float *)", "(100, 1, 1)", "S", "Duration", "usecond", "30");
    ev_set set;
    ev_set_init(&set);
    rd_ev_read_buffer(&set, "two.csv", csv, sizeof csv - 1);
    tl_builder *b = tl_builder_new("grid.json");
    tl_builder_meta(b)->rank = 0;
    tl_track_key s7 = {TL_TRACK_GPU, 0, 7, 0, 7};
    uint32_t g7 = tl_builder_track(b, &s7), kg = fx_s(b, "grid"), kb = fx_s(b, "block");
    static const struct { int64_t ts, dur, grid; } ev[] = {{0, 100, 864}, {200, 30, 100}, {300, 31, 100}};
    for (size_t i = 0; i < 3; i++) {
        fx_add(b, g7, TL_CAT_KERNEL, "void gemm_a<float>(const float *, float *)", ev[i].ts * US, ev[i].dur * US, -1);
        tl_builder_arg_int(b, kg, ev[i].grid);
        tl_builder_arg_int(b, kb, 256);
    }
    fx_run r;
    run_with(&r, fx_finish(b), &set);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.trace_launches"), 1, 0);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.trace_time_ns"), 100 * US, 0);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.1.trace_launches"), 2, 0);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.1.trace_time_ns"), 61 * US, 0);
    const rep_node *m = rep_path(r.rep, "kernels_roofline.1.matched_by");
    assert_non_null(m);
    assert_string_equal(m->v.s, "name");
    CP_ASSERT_NEAR(fx_num(&r, "roofline.trace_compute_covered_pct"), 100, 1e-9);
    fx_done(&r);
    ev_set_free(&set);
}

/* No ncu file: no section, no finding, nothing else changes. */
static void test_absent(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    assert_null(rep_path(r.rep, "kernels_roofline"));
    assert_null(finding(r.rep, "KERNEL_BELOW_ROOFLINE"));
    fx_done(&r);
}

/* One real output alone (no trace): its kernels' classes. */
static rep_report *real(const char *rel, fx_run *r, ev_set *set)
{
    char sub[512], path[1200];
    snprintf(sub, sizeof sub, "ncu/%s", rel);
    if (!cp_test_data(sub, path, sizeof path))
        return NULL;
    ev_set_init(set);
    char *paths[1] = {path};
    assert_int_equal(rd_ev_read_files(set, paths, 1, 1, NULL, NULL), 0);
    tl_builder *b = tl_builder_new("none");
    run_with(r, fx_finish(b), set);
    return r->rep;
}

static const char *class_of(const rep_report *rep, int i)
{
    char p[64];
    snprintf(p, sizeof p, "kernels_roofline.%d.class", i);
    const rep_node *n = rep_path(rep, p);
    return n && n->type == REP_STR ? n->v.s : "null";
}

static void test_real_classes(void **state)
{
    (void)state;
    /* file, launch, class: what each source says (ncu/README.md and the files' notes) */
    static const struct { const char *file; int launch; const char *cls; } t[] = {
        /* "the kernel grid is too small ... only 0.4 full waves" */
        {"volta-cc70-curand-pi-default-sections-text-aalto-scicomp.txt", 0, "small_grid"},
        /* SOL FB 82.65 %: memory bound */
        {"p40-pascal-vector-add-sol-memory-workload-text-old-ncu-cuda-training.txt", 0, "memory_bound"},
        /* column_sums: DRAM 92.97 %, memory bound */
        {"rtx3070-laptop-row-vs-column-sums-default-sections-text-2022-cuda-training.txt", 1, "memory_bound"},
        /* ncu's rules: "latency issues" */
        {"a100-unrolled-reduction-set-full-details-text-cs5914.txt", 0, "latency_bound"},
        /* low occupancy (theoretical 16.67 %, block limit registers = shared mem = 1) */
        {"rtx5090-cutlass-bf16-gemm-details-csv-sections-rules-llm-perf-opt.csv", 0, "occupancy_limited"},
        /* "Tensor is the highest-utilized pipeline (88.1%)": a tensor-core-bound GEMM */
        {"l4-cublas-fp16-gemm-2048-details-csv-set-full-gpu-perf-lab.csv", 2, "compute_bound"},
    };
    int ran = 0;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        fx_run r;
        ev_set set;
        if (!real(t[i].file, &r, &set))
            continue;
        ran++;
        if (strcmp(class_of(r.rep, t[i].launch), t[i].cls) != 0)
            fail_msg("%s launch %d: class %s, expected %s", t[i].file, t[i].launch, class_of(r.rep, t[i].launch),
                     t[i].cls);
        fx_done(&r);
        ev_set_free(&set);
    }
    if (!ran)
        skip();
}

/* Values derived from the real files against the files' own numbers. */
static void test_real_values(void **state)
{
    (void)state;
    fx_run r;
    ev_set set;
    if (!real("a100-unrolled-reduction-set-full-details-text-cs5914.txt", &r, &set))
        skip();
    /* 906.71 Gbyte/second x 4.41 msecond: the 4.00 Gbyte the --metrics run
     * of the same kernel measured (dram__bytes_read.sum) */
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.dram_bytes"), 906.71e9 * 4.41e-3, 1);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.dram_bytes"), 4.00e9, 0.01e9);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.l2_throughput_pct"), 46.53, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.l1_throughput_pct"), 49.21, 1e-9);
    /* the top stall: 12.2 of the 33.39 warp cycles per issued instruction
     * (ncu's rule says "about 36.7%" from its unrounded numbers) */
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.top_stall_pct"), 100 * 12.2 / 33.39, 1e-9);
    fx_done(&r);
    ev_set_free(&set);
    if (!real("rtx5090-cutlass-bf16-gemm-details-csv-sections-rules-llm-perf-opt.csv", &r, &set))
        skip();
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.flops"), 12532580352.0, 1e-3);
    assert_true(fx_is_null(&r, "kernels_roofline.0.l2_bytes_per_s")); /* no lts__t_bytes in this run */
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.arithmetic_intensity"), 12532580352.0 / 17.50e6, 1e-9);
    /* 156.55 Gbyte/s at 8.87 % of peak: 1.765 TB/s (the card's 1.79 TB/s spec) */
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.peak_dram_bytes_per_s"), 156.55e9 / 0.0887, 1);
    const rep_node *occ = finding(r.rep, "KERNEL_OCCUPANCY_LIMITED");
    assert_non_null(occ);
    CP_ASSERT_NEAR(child_num(occ, "estimated_gain_pct"), 67.9, 1e-9); /* ncu's TheoreticalOccupancy estimate */
    /* IssueSlotUtilization and TheoreticalOccupancy both say 67.9: the first */
    assert_string_equal(rep_path(r.rep, "kernels_roofline.0.ncu_top_rule")->v.s, "IssueSlotUtilization");
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.0.ncu_top_rule_speedup_pct"), 67.9, 1e-9);
    fx_done(&r);
    ev_set_free(&set);
}

/* The 2022 text layout has no dims on the kernel line: Launch Statistics
 * give the grid (64 blocks) and block (256 threads). */
static void test_real_grid_from_launch_stats(void **state)
{
    (void)state;
    fx_run r;
    ev_set set;
    if (!real("rtx3070-laptop-row-vs-column-sums-default-sections-text-2022-cuda-training.txt", &r, &set))
        skip();
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.1.grid"), 64, 0);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.1.block"), 256, 0);
    CP_ASSERT_NEAR(fx_num(&r, "kernels_roofline.1.id"), 1, 0); /* its order in the file */
    fx_done(&r);
    ev_set_free(&set);
}

static void test_cc_lanes(void **state)
{
    (void)state;
    int fp64;
    assert_int_equal(hw_cc_lanes_per_sm(8, 0, &fp64), 64);
    assert_int_equal(fp64, 32);
    assert_int_equal(hw_cc_lanes_per_sm(8, 9, &fp64), 128);
    assert_int_equal(fp64, 2);
    assert_int_equal(hw_cc_lanes_per_sm(3, 5, &fp64), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joined_with_fixture), cmocka_unit_test(test_no_trace), cmocka_unit_test(test_grid_decides),
        cmocka_unit_test(test_absent), cmocka_unit_test(test_cc_lanes),
        cmocka_unit_test(test_real_classes),        cmocka_unit_test(test_real_values),
        cmocka_unit_test(test_real_grid_from_launch_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
