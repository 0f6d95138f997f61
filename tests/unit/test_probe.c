/* test_probe.c - pure parts of the probes and the history module: peak
 * formulas, STREAM byte counts, chunking, percentiles, stall arithmetic,
 * selection, emitted rows, and history record/compare on a temporary db. */
#include "test_util.h"
#include "gpu/gpu.h"
#include "history/history.h"
#include "probe/probe.h"
#include "probe/probe_cpu.h"
#include "probe/probe_mem.h"
#include "probe/probe_storage.h"

#include <math.h>
#include <unistd.h>

static void test_cpu_peak(void **state)
{
    (void)state;
    /* 64 cores x 2.0 GHz x 2 FMA x 8 fp64 lanes x 2 = 4096 GFLOP/s */
    CP_ASSERT_NEAR(probe_cpu_peak_gflops(64, 2.0, 2, 8), 4096.0, 1e-9);
    /* one AVX2 core at 3.5 GHz, fp32: 3.5 x 2 x 8 x 2 = 112 */
    CP_ASSERT_NEAR(probe_cpu_peak_gflops(1, 3.5, 2, 8), 112.0, 1e-9);
    assert_true(isnan(probe_cpu_peak_gflops(4, NAN, 2, 8)));
    assert_true(isnan(probe_cpu_peak_gflops(0, 2.0, 2, 8)));
}

static void test_gpu_peaks(void **state)
{
    (void)state;
    /* H100 SXM: 5120-bit HBM3 at 2619 MHz -> 3352.32 GB/s */
    CP_ASSERT_NEAR(gpu_hbm_peak_gbps(5120, 2619), 3352.32, 1e-6);
    assert_true(isnan(gpu_hbm_peak_gbps(0, 2619)));
    /* PCIe gen4 x16: 16 GT/s x 128/130 x 16 / 8 = 31.508 GB/s; gen2 x8: 5 x 0.8 x 8 / 8 = 4 */
    CP_ASSERT_NEAR(gpu_pcie_gbps(4, 16), 31.50769230769, 1e-9);
    CP_ASSERT_NEAR(gpu_pcie_gbps(2, 8), 4.0, 1e-12);
    assert_true(isnan(gpu_pcie_gbps(9, 16)));
}

static void test_stream_sizes(void **state)
{
    (void)state;
    assert_int_equal(probe_stream_bytes(PROBE_COPY, 1000), 16000);
    assert_int_equal(probe_stream_bytes(PROBE_SCALE, 1000), 16000);
    assert_int_equal(probe_stream_bytes(PROBE_ADD, 1000), 24000);
    assert_int_equal(probe_stream_bytes(PROBE_TRIAD, 1000), 24000);
    assert_string_equal(probe_stream_name(PROBE_TRIAD), "triad");
    /* explicit size wins; default is max(4 x the cache found, floor), bounded by memory */
    bool capped = true;
    assert_int_equal(probe_stream_array_bytes(1000, 1u << 30, 0, 0, &capped), 960);
    assert_true(capped); /* an explicit size below 4 x the cache is said to be */
    assert_int_equal(probe_stream_array_bytes(1u << 30, 1u << 20, 0, 0, &capped), 1u << 30);
    assert_false(capped);
    assert_int_equal(probe_stream_array_bytes(0, 32u << 20, 0, 0, NULL), 256ull << 20);
    assert_int_equal(probe_stream_array_bytes(0, 100u << 20, 0, 0, NULL), 400ull << 20);
    assert_int_equal(probe_stream_array_bytes(0, 1u << 30, 0, 0, NULL), 4096ull << 20); /* no cap of its own */
    assert_int_equal(probe_stream_array_bytes(0, 8u << 20, 1, 0, NULL), 64ull << 20);
    assert_int_equal(probe_stream_array_bytes(0, 512u << 20, 1, 1ull << 30, &capped), 1024ull << 20);
    assert_true(capped); /* 4 x 512 MiB did not fit in the bound */
    assert_int_equal(probe_stream_array_bytes(0, 8u << 20, 1, 1ull << 30, &capped), 64ull << 20);
    assert_false(capped);
}

static void test_chunks(void **state)
{
    (void)state;
    uint64_t lo, hi, next = 0;
    for (int t = 0; t < 3; t++) {
        probe_chunk(10, t, 3, &lo, &hi);
        assert_int_equal(lo, next);
        assert_true(hi - lo == 3 || hi - lo == 4);
        next = hi;
    }
    assert_int_equal(next, 10);
    probe_chunk(10, 0, 3, &lo, &hi);
    assert_int_equal(hi, 4); /* the remainder goes to the first threads */
}

static void test_stats(void **state)
{
    (void)state;
    double v[] = { 5, 1, 4, 2, 3 };
    CP_ASSERT_NEAR(probe_median(v, 5), 3.0, 1e-12);
    double w[] = { 10, 20, 30, 40 };
    CP_ASSERT_NEAR(probe_percentile(w, 4, 50), 25.0, 1e-12);
    CP_ASSERT_NEAR(probe_percentile(w, 4, 99), 39.7, 1e-9); /* position 0.99 x 3 = 2.97: 30 + 0.97 x 10 */
    CP_ASSERT_NEAR(probe_percentile(w, 4, 100), 40.0, 1e-12);
    assert_true(isnan(probe_percentile(w, 0, 50)));
    CP_ASSERT_NEAR(probe_efficiency(50, 200), 0.25, 1e-12);
    assert_true(isnan(probe_efficiency(50, NAN)));
    CP_ASSERT_NEAR(probe_ckpt_stall_s(1.5, 10, 0.1), 0.5, 1e-12);
    CP_ASSERT_NEAR(probe_ckpt_stall_s(0.9, 10, 0.1), 0.0, 1e-12);
}

static void test_select_and_emit(void **state)
{
    (void)state;
    size_t n;
    const probe_def *t = probe_table(&n);
    bool *sel = calloc(n, sizeof *sel);
    cp_error err;
    const char *names[] = { "memory" };
    assert_int_equal(probe_select(names, 1, sel, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sel[i], t[i].layer == PROBE_L_MEMORY);
    const char *bad[] = { "nosuch" };
    assert_int_equal(probe_select(bad, 1, sel, &err), CP_ERR_USAGE);
    assert_int_equal(probe_select(NULL, 0, sel, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_true(sel[i]);
    free(sel);

    probe_ctx ctx;
    probe_ctx_init(&ctx, NULL, NULL);
    ctx.current = probe_find("storage");
    char metric[32] = "fsync_latency_p50";
    probe_emit_value(&ctx, metric, 12.5, "us", NAN, "m");
    metric[0] = 'X'; /* rows keep their own copy */
    assert_int_equal(ctx.n_results, 1);
    assert_string_equal(ctx.results[0].row.metric, "fsync_latency_p50");
    assert_string_equal(ctx.results[0].probe, "storage");
    assert_int_equal(ctx.results[0].layer, PROBE_L_STORAGE);
    assert_int_equal(ctx.results[0].row.wrong, -1);
    probe_ctx_free(&ctx);
}

static void test_history(void **state)
{
    (void)state;
    char dir[] = "/tmp/cp_hist_XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sub/h.db", dir);
    hist_db *db;
    cp_error err;
    assert_int_equal(hist_open(path, &db, &err), 0);
    hist_metrics a = { 0 }, b = { 0 };
    hist_metrics_add(&a, "memory/triad_bandwidth", 100, "GB/s");
    hist_metrics_add(&a, "storage/fsync_latency_p99", 1000, "us");
    hist_metrics_add(&b, "memory/triad_bandwidth", 90, "GB/s");
    hist_metrics_add(&b, "storage/fsync_latency_p99", 1040, "us");
    char *argv[] = { "chainprof", "probe" };
    int64_t ida, idb;
    assert_int_equal(hist_record(db, "probe", 2, argv, &a, NULL, &ida, &err), 0);
    assert_int_equal(hist_record(db, "probe", 2, argv, &b, NULL, &idb, &err), 0);
    assert_true(idb > ida);
    int64_t id;
    assert_int_equal(hist_resolve(db, "last", &id, &err), 0);
    assert_int_equal(id, idb);
    assert_int_equal(hist_resolve(db, "prev", &id, &err), 0);
    assert_int_equal(id, ida);
    assert_int_equal(hist_resolve(db, "77", &id, &err), CP_ERR_USAGE);
    hist_metrics got = { 0 };
    assert_int_equal(hist_metrics_of(db, ida, &got, &err), 0);
    assert_int_equal(got.n, 2);
    assert_string_equal(got.v[0].path, "memory/triad_bandwidth"); /* sorted */
    CP_ASSERT_NEAR(got.v[0].value, 100, 0);
    assert_string_equal(got.v[1].unit, "us");
    /* -10 % bandwidth is a regression at 5 %, +4 % latency is not */
    CP_ASSERT_NEAR(hist_change_pct(100, 90), -10, 1e-12);
    assert_true(hist_is_regression(100, 90, "GB/s", 5));
    assert_false(hist_is_regression(1000, 1040, "us", 5));
    assert_true(hist_is_regression(1000, 1060, "us", 5));
    assert_false(hist_is_regression(100, 50, "count", 5)); /* unknown direction */
    assert_true(isnan(hist_change_pct(0, 5)));
    hist_runs runs;
    assert_int_equal(hist_list(db, "probe", 0, &runs, &err), 0);
    assert_int_equal(runs.n, 2);
    assert_int_equal(runs.v[0].n_metrics, 2);
    hist_runs_free(&runs);
    hist_metrics_free(&got);
    hist_metrics_free(&a);
    hist_metrics_free(&b);
    hist_close(db);

    /* flattening a report: nested keys, array indexes, the envelope left out */
    char *rargv[] = { "chainprof" };
    rep_report *r = rep_new("x/1", 1, rargv);
    rep_node *o = rep_obj(r, r->root, "ranks", NULL);
    rep_node *arr = rep_arr(r, o, "steps", NULL);
    rep_num(r, arr, NULL, NULL, 1.5, "ms");
    rep_int(r, r->root, "total", NULL, 7, NULL);
    rep_num(r, r->root, "unknown", NULL, NAN, NULL);
    static const rep_col cols[] = { { "name", "name", NULL, -1 }, { "sum_ns", "sum", "ns", -1 } };
    rep_node *t = rep_table(r, o, "kernels", NULL, cols, 2); /* rows are positions: not recorded */
    rep_node *row = rep_row(r, t);
    rep_cell_str(r, row, "gemm");
    rep_cell_int(r, row, 42);
    hist_metrics f = { 0 };
    hist_flatten_report(r, &f, 100);
    assert_int_equal(f.n, 2);
    assert_string_equal(f.v[0].path, "ranks.steps.0");
    assert_string_equal(f.v[0].unit, "ms");
    assert_string_equal(f.v[1].path, "total");
    hist_metrics_free(&f);
    rep_free(r);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_peak), cmocka_unit_test(test_gpu_peaks),    cmocka_unit_test(test_stream_sizes),   cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_stats),       cmocka_unit_test(test_select_and_emit), cmocka_unit_test(test_history),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
