/* test_rd_ncu.c - the Nsight Compute reader on the real outputs under
 * ../shared/data/ncu (read in place; every expected value is read off the
 * file by hand) and on small inline inputs for units and damage. */
#include "readers/rd_ncu.h"
#include "evidence_testutil.h"

/* ncu/<rel> parsed with the ncu reader; NULL (test skipped) when absent. */
static ev_ncu *parse_ncu(const char *rel)
{
    char sub[512], path[1200];
    snprintf(sub, sizeof sub, "ncu/%s", rel);
    if (!cp_test_data(sub, path, sizeof path))
        return NULL;
    size_t len;
    char *data = ev_load(path, &len);
    if (rd_ncu_sniff(data, len) < RD_EV_MIN_CONFIDENCE)
        fail_msg("%s: sniffer confidence %d", rel, rd_ncu_sniff(data, len));
    void *r = NULL;
    cp_error err;
    if (ev_parse_as(EV_NCU, data, len, rel, &r, &err) < 0)
        fail_msg("%s: %s", rel, err.msg);
    free(data);
    return r;
}

static ev_ncu *parse_buf(const char *text)
{
    void *r = NULL;
    cp_error err;
    if (ev_parse_as(EV_NCU, text, strlen(text), "inline.csv", &r, &err) < 0)
        return NULL;
    return r;
}

#define V(l, m) ((l)->v[EV_NCU_##m])
#define NEAR(a, b) CP_ASSERT_NEAR((a), (double)(b), fabs((double)(b)) * 1e-9 + 1e-12)

/* Details CSV of --metrics only: BOM, CRLF, ==PROF== lines and program
 * output before the header, thousands separators, "unnamed>::" names. */
static void test_rtx5070_metrics_csv(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("rtx5070-naive-sgemm-details-csv-cmdline-metrics-bom-gpu-roofline-profiler.csv");
    if (!r)
        skip();
    assert_int_equal(r->form, EV_NCU_FORM_DETAILS_CSV);
    assert_int_equal(r->n, 1);
    const ev_ncu_launch *l = &r->launches[0];
    assert_int_equal(l->id, 0);
    assert_int_equal(l->pid, 52060);
    assert_string_equal(l->name, "unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)");
    assert_int_equal(l->cc_major, 12);
    assert_int_equal(l->cc_minor, 0);
    assert_int_equal(l->grid[0], 64);
    assert_int_equal(l->grid[1], 64);
    assert_int_equal(l->block[0], 32);
    assert_int_equal(l->block[1], 32);
    NEAR(V(l, DRAM_READ_BYTES), 54207744.0);
    NEAR(V(l, DRAM_WRITE_BYTES), 26601216.0);
    NEAR(V(l, DRAM_BYTES), 54207744.0 + 26601216.0);
    NEAR(V(l, DURATION_NS), 9589248.0);
    NEAR(V(l, L1_LD_SECTORS), 1342177280.0);
    NEAR(V(l, L1_ST_SECTORS), 524288.0);
    NEAR(V(l, L2_HIT_PCT), 100.39); /* reported as measured, never clamped */
    NEAR(V(l, SOL_SM_PCT), 97.32);
    NEAR(V(l, ACHIEVED_OCC_PCT), 66.61);
    assert_int_equal(r->values_read, 8);
    assert_int_equal(r->metrics_unmapped, 4);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 0);
    ev_ncu_free(r);
}

/* Details CSV with sections and rule columns: unit prefixes (Mbyte, us,
 * Ghz, Gbyte/s), n/a values, rule rows. */
static void test_rtx5090_sections_csv(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("rtx5090-cutlass-bf16-gemm-details-csv-sections-rules-llm-perf-opt.csv");
    if (!r)
        skip();
    assert_int_equal(r->n, 1);
    const ev_ncu_launch *l = &r->launches[0];
    assert_string_equal(l->name, "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>(Params)");
    assert_int_equal(l->grid[0], 332);
    assert_int_equal(l->block[0], 256);
    NEAR(V(l, DURATION_NS), 111810.0);          /* 111.81 us */
    NEAR(V(l, DRAM_READ_BYTES), 17.50e6);       /* 17.50 Mbyte */
    NEAR(V(l, DRAM_WRITE_BYTES), 0.0);
    NEAR(V(l, SM_FREQ_HZ), 2.00e9);             /* 2.00 Ghz */
    NEAR(V(l, DRAM_BPS), 156.55e9);             /* 156.55 Gbyte/s (Memory Workload Analysis) */
    NEAR(V(l, SOL_MEMORY_PCT), 27.74);          /* the same label in % (Speed Of Light) */
    NEAR(V(l, SOL_SM_PCT), 32.10);
    NEAR(V(l, ELAPSED_CYCLES), 224652.0);
    NEAR(V(l, SM_ACTIVE_CYCLES), 161177.21);
    NEAR(V(l, THEORETICAL_OCC_PCT), 16.67);
    NEAR(V(l, ACHIEVED_OCC_PCT), 16.73);
    NEAR(V(l, LIMIT_REGISTERS), 1);
    NEAR(V(l, LIMIT_SHARED), 1);
    NEAR(V(l, NO_ELIGIBLE_PCT), 90.29);
    NEAR(V(l, TENSOR_OPS), 12532580352.0);      /* sm__ops_path_tensor_src_bf16_dst_fp32.sum */
    assert_true(isnan(V(l, FLOP_SP)));           /* n/a */
    assert_int_equal(r->values_na, 3);
    assert_int_equal(l->n_rules, 4);
    assert_string_equal(l->rules[0].name, "SOLBottleneck");
    assert_string_equal(l->rules[0].type, "OPT");
    NEAR(l->rules[2].speedup_pct, 67.9);
    ev_ncu_free(r);
}

/* Base units (ns, hz, byte/block), the Launch Statistics and Occupancy
 * sections, eight rule rows. */
static void test_b200_base_units_csv(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("b200-class-cublaslt-fp8-cutlass-sm100-gemm-details-csv-rules-base-units-superbenchmark.csv");
    if (!r)
        skip();
    const ev_ncu_launch *l = &r->launches[0];
    assert_int_equal(l->cc_major, 10);
    NEAR(V(l, DURATION_NS), 406240.0);
    NEAR(V(l, SM_FREQ_HZ), 1239496049.13);
    NEAR(V(l, DRAM_FREQ_HZ), 3995313115.40);
    NEAR(V(l, SOL_SM_PCT), 23.59);
    NEAR(V(l, DRAM_PCT), 0.74);
    NEAR(V(l, SM_COUNT), 152);
    NEAR(V(l, WAVES_PER_SM), 1.89);
    NEAR(V(l, REGISTERS), 168);
    NEAR(V(l, SMEM_DYNAMIC_BYTES), 205696);
    NEAR(V(l, THEORETICAL_OCC_PCT), 18.75);
    NEAR(V(l, GRID_SIZE), 288);
    assert_int_equal(l->grid[0], 9);
    assert_int_equal(l->grid[1], 32);
    assert_int_equal(l->n_rules, 8);
    ev_ncu_free(r);
}

/* --set full, 37 launches keyed by ID, multi-kB PyTorch names, Kbyte and
 * cycle/usecond units. */
static void test_l4_full_set_csv(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("l4-cublas-fp16-gemm-2048-details-csv-set-full-gpu-perf-lab.csv");
    if (!r)
        skip();
    assert_int_equal(r->n, 37);
    const ev_ncu_launch *g = &r->launches[2];
    assert_int_equal(g->id, 2);
    assert_string_equal(g->name, "ampere_fp16_s1688gemm_fp16_128x128_ldg8_f2f_stages_32x1_nn");
    NEAR(V(g, SOL_SM_PCT), 85.06);
    NEAR(V(g, SOL_MEMORY_PCT), 55.37);
    NEAR(V(g, DURATION_NS), 415040.0);
    NEAR(V(g, REGISTERS), 234);
    NEAR(V(g, THEORETICAL_OCC_PCT), 16.67);
    NEAR(V(g, SM_COUNT), 58);
    assert_int_equal(g->cc_major, 8);
    assert_int_equal(g->cc_minor, 9);
    const ev_ncu_launch *z = &r->launches[0];
    assert_true(strncmp(z->name, "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4,", 85) == 0);
    NEAR(V(z, SMEM_DRIVER_BYTES), 1020.0);       /* 1.02 Kbyte/block */
    NEAR(V(z, SM_FREQ_HZ), 800.28e6);            /* 800.28 cycle/usecond */
    for (size_t i = 2; i < r->n; i++)
        assert_string_equal(r->launches[i].name, "ampere_fp16_s1688gemm_fp16_128x128_ldg8_f2f_stages_32x1_nn");
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 0);
    ev_ncu_free(r);
}

/* Raw page: 475 columns, a units row, 16 launches, device attributes. */
static void test_b200_raw_csv(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("b200-sdpa-flash-fwd-decode-raw-page-csv-roofline-analysis.csv");
    if (!r)
        skip();
    assert_int_equal(r->form, EV_NCU_FORM_RAW_CSV);
    assert_int_equal(r->n, 16);
    const ev_ncu_launch *l = &r->launches[0];
    assert_string_equal(l->device_name, "NVIDIA B200");
    NEAR(V(l, DURATION_NS), 687488.0);
    NEAR(V(l, REGISTERS), 255);
    NEAR(V(l, SM_COUNT), 148);
    NEAR(V(l, TENSOR_PIPE_PCT), 61.41);
    NEAR(V(l, THEORETICAL_OCC_PCT), 12.50);
    NEAR(V(l, DEV_CLOCK_HZ), 1965000e3);       /* device__attribute_clock_rate, kHz without a unit */
    NEAR(V(l, DEV_MEM_CLOCK_HZ), 3996000e3);
    NEAR(V(l, DEV_BUS_BITS), 7680);
    NEAR(V(l, WAVES_PER_SM), 1.73);
    assert_int_equal(l->grid[1], 64);
    assert_int_equal(l->grid[2], 8);
    NEAR(V(&r->launches[1], DURATION_NS), 685792.0);
    assert_true(isnan(V(l, DRAM_BYTES))); /* no dram__* columns in this run */
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 0);
    ev_ncu_free(r);
}

/* Plain text, --set full: the kernel line with grid, block, Device, CC;
 * column extents from each section's dash lines; rule paragraphs. */
static void test_a100_full_text(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("a100-unrolled-reduction-set-full-details-text-cs5914.txt");
    if (!r)
        skip();
    assert_int_equal(r->form, EV_NCU_FORM_TEXT);
    assert_int_equal(r->n, 1);
    const ev_ncu_launch *l = &r->launches[0];
    assert_string_equal(l->name, "sumReduction(int *, int *, int)");
    assert_int_equal(l->pid, 3793236);
    assert_int_equal(l->grid[0], 488282);
    assert_int_equal(l->block[0], 1024);
    assert_int_equal(l->device, 0);
    assert_int_equal(l->cc_major, 8);
    NEAR(V(l, DURATION_NS), 4.41e6);            /* 4.41 msecond */
    NEAR(V(l, DRAM_PCT), 44.47);
    NEAR(V(l, DRAM_BPS), 906.71e9);             /* Gbyte/second */
    NEAR(V(l, SOL_SM_PCT), 46.77);
    NEAR(V(l, SOL_MEMORY_PCT), 49.18);
    NEAR(V(l, SM_ACTIVE_CYCLES), 5091845.76);
    NEAR(V(l, INST_EXECUTED), 794434814.0);
    NEAR(V(l, WAVES_PER_SM), 2260.56);
    NEAR(V(l, SMEM_DYNAMIC_BYTES), 4100.0);     /* 4.10 Kbyte/block */
    NEAR(V(l, THEORETICAL_OCC_PCT), 100);
    NEAR(V(l, NO_ELIGIBLE_PCT), 63.74);
    assert_int_equal(l->n_rules, 8);
    assert_string_equal(l->rules[0].type, "OPT");
    NEAR(l->rules[4].speedup_pct, 63.74);
    /* the CPIStall paragraph: "spends 12.2 cycles being stalled waiting for a scoreboard ..." */
    assert_int_equal(l->n_stalls, 1);
    assert_string_equal(l->stalls[0].reason,
                        "waiting for a scoreboard dependency on a L1TEX (local, global, surface, texture) operation");
    NEAR(l->stalls[0].cycles, 12.2);
    assert_non_null(strstr(l->rules[0].text, "latency issues"));
    ev_ncu_free(r);
}

/* --metrics in text, one value "(!) n/a". */
static void test_a100_metrics_na_text(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("a100-reduction-cmdline-metrics-with-na-value-text-cs5914.txt");
    if (!r)
        skip();
    const ev_ncu_launch *l = &r->launches[0];
    NEAR(V(l, DRAM_READ_BYTES), 4.00e9);
    NEAR(V(l, L1_BYTES), 4.02e9);
    assert_true(isnan(V(l, L2_BYTES)));
    assert_int_equal(r->metrics_unmapped, 1); /* l2tex__t_bytes.sum (its value n/a) */
    ev_ncu_free(r);
}

/* The oldest layout ("GPU Speed Of Light", SOL FB, Memory [%], SM [%]), the
 * program's stdout inside a ==PROF== line, no Device/CC. */
static void test_p40_old_text(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("p40-pascal-vector-add-sol-memory-workload-text-old-ncu-cuda-training.txt");
    if (!r)
        skip();
    assert_int_equal(r->n, 1);
    const ev_ncu_launch *l = &r->launches[0];
    assert_string_equal(l->name, "vadd(float const *,float const *,float*,int)");
    assert_int_equal(l->cc_major, -1);
    NEAR(V(l, DRAM_PCT), 82.65);
    NEAR(V(l, SOL_MEMORY_PCT), 82.65);
    NEAR(V(l, SOL_SM_PCT), 9.61);
    NEAR(V(l, L1_PCT), 9.61);
    NEAR(V(l, DRAM_FREQ_HZ), 7.22e9);
    NEAR(V(l, DURATION_NS), 1.67e6);
    NEAR(V(l, DRAM_BPS), 286.36e9);
    ev_ncu_free(r);
}

/* 2022 layout: two kernels, a date on the kernel line, no table header. */
static void test_rtx3070_two_kernels_text(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("rtx3070-laptop-row-vs-column-sums-default-sections-text-2022-cuda-training.txt");
    if (!r)
        skip();
    assert_int_equal(r->n, 2);
    assert_string_equal(r->launches[0].name, "row_sums(const float *, float *, unsigned long)");
    assert_string_equal(r->launches[1].name, "column_sums(const float *, float *, unsigned long)");
    NEAR(V(&r->launches[0], DURATION_NS), 11.97e6);
    NEAR(V(&r->launches[0], SM_FREQ_HZ), 775.67e6);
    NEAR(V(&r->launches[0], ACHIEVED_OCC_PCT), 27.92);
    NEAR(V(&r->launches[0], GRID_SIZE), 64);
    NEAR(V(&r->launches[1], DRAM_PCT), 92.97);
    NEAR(V(&r->launches[1], DURATION_NS), 3.02e6);
    NEAR(V(&r->launches[1], THREADS), 16384);
    assert_int_equal(r->launches[1].n_rules, 3);
    ev_ncu_free(r);
}

/* RST-indented excerpt (Volta): lines before the kernel line indented. */
static void test_volta_text(void **state)
{
    (void)state;
    ev_ncu *r = parse_ncu("volta-cc70-curand-pi-default-sections-text-aalto-scicomp.txt");
    if (!r)
        skip();
    const ev_ncu_launch *l = &r->launches[0];
    assert_int_equal(l->pid, 3944692);
    assert_int_equal(l->cc_major, 7);
    NEAR(V(l, DRAM_FREQ_HZ), 877.96e6);
    NEAR(V(l, WAVES_PER_SM), 0.40);
    NEAR(V(l, ACHIEVED_OCC_PCT), 39.97);
    NEAR(V(l, ELAPSED_CYCLES), 10544719);
    ev_ncu_free(r);
}

static void test_units(void **state)
{
    (void)state;
    int dim, ul;
    double m;
    assert_int_equal(rd_ncu_unit("Gbyte/second", 12, &dim, &m, &ul), 0);
    assert_int_equal(dim, EV_NCU_D_RATE);
    NEAR(m, 1e9);
    assert_int_equal(rd_ncu_unit("Kbyte/second", 12, &dim, &m, &ul), 0);
    NEAR(m, 1e3);
    assert_int_equal(rd_ncu_unit("usecond", 7, &dim, &m, &ul), 0);
    assert_int_equal(dim, EV_NCU_D_TIME);
    NEAR(m, 1e3);
    assert_int_equal(rd_ncu_unit("cycle/nsecond", 13, &dim, &m, &ul), 0);
    assert_int_equal(dim, EV_NCU_D_FREQ);
    NEAR(m, 1e9);
    assert_int_equal(rd_ncu_unit("Kbyte/block", 11, &dim, &m, &ul), 0);
    assert_int_equal(dim, EV_NCU_D_BYTES);
    assert_int_equal(rd_ncu_unit("inst", 4, &dim, &m, &ul), 0);
    assert_int_equal(dim, EV_NCU_D_COUNT);
    assert_int_equal(rd_ncu_unit("furlong", 7, &dim, &m, &ul), -1);
    double v;
    assert_int_equal(rd_ncu_value("1,342,177,280", 13, &v), 0);
    NEAR(v, 1342177280.0);
    assert_int_equal(rd_ncu_value("(!) n/a", 7, &v), 1);
    assert_int_equal(rd_ncu_value("12abc", 5, &v), -1);
}

/* Warp-stall counters of the raw page: cycles per issue and PC samples,
 * the *_not_issued variants left out. */
static void test_raw_stalls(void **state)
{
    (void)state;
    const char *t =
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
        "\"Grid Size\",\"Device\",\"CC\",\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
        "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",\"smsp__pcsamp_warps_issue_stalled_barrier\","
        "\"smsp__pcsamp_warps_issue_stalled_barrier_not_issued\"\n"
        "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"inst\",\"\",\"\",\"\"\n"
        "\"0\",\"1\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"7.5\",\"1.25\",\"1,200\",\"90\"\n";
    ev_ncu *r = parse_buf(t);
    assert_non_null(r);
    const ev_ncu_launch *l = &r->launches[0];
    assert_int_equal(l->n_stalls, 2);
    assert_string_equal(l->stalls[0].reason, "long_scoreboard");
    NEAR(l->stalls[0].cycles, 7.5);
    assert_true(isnan(l->stalls[0].samples));
    assert_string_equal(l->stalls[1].reason, "barrier");
    NEAR(l->stalls[1].cycles, 1.25);
    NEAR(l->stalls[1].samples, 1200);
    assert_int_equal(r->metrics_unmapped, 1); /* the _not_issued samples */
    ev_ncu_free(r);
}

/* Damage is counted, never fatal: a value that is no number, a unit of the
 * wrong dimension, an unterminated quote, a row without an ID. */
static void test_bad_csv(void **state)
{
    (void)state;
    const char *t =
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
        "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
        "\"0\",\"1\",\"p\",\"h\",\"k(int)\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"8.0\",\"S\",\"Duration\",\"usecond\",\"1.5\"\n"
        "\"0\",\"1\",\"p\",\"h\",\"k(int)\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"8.0\",\"S\",\"DRAM Throughput\",\"%\",\"abc\"\n"
        "\"0\",\"1\",\"p\",\"h\",\"k(int)\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"8.0\",\"S\",\"Registers Per Thread\",\"usecond\",\"3\"\n"
        "\"0\",\"1\",\"p\",\"h\",\"k(int)\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"8.0\",\"S\",\"Duration\n"
        "\"x\",\"1\",\"p\",\"h\",\"k(int)\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"8.0\",\"S\",\"Duration\",\"ns\",\"1\"\n"
        "\"1\",\"1\",\"p\",\"h\",\"k2\",\"1\",\"7\"\n";
    ev_ncu *r = parse_buf(t);
    assert_non_null(r);
    assert_int_equal(r->n, 1);
    NEAR(V(&r->launches[0], DURATION_NS), 1500.0);
    assert_true(isnan(V(&r->launches[0], DRAM_PCT)));
    assert_true(isnan(V(&r->launches[0], REGISTERS)));
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 2);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_ROW], 3);
    ev_ncu_free(r);
    assert_null(parse_buf("just some text\nwith , Context 1 but nothing else\n"));
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_bad_csv),
        cmocka_unit_test(test_raw_stalls),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_rtx5070_metrics_csv), cmocka_unit_test(test_rtx5090_sections_csv),
        cmocka_unit_test(test_b200_base_units_csv), cmocka_unit_test(test_l4_full_set_csv),
        cmocka_unit_test(test_b200_raw_csv),        cmocka_unit_test(test_a100_full_text),
        cmocka_unit_test(test_a100_metrics_na_text), cmocka_unit_test(test_p40_old_text),
        cmocka_unit_test(test_rtx3070_two_kernels_text), cmocka_unit_test(test_volta_text),
    };
    int f = cmocka_run_group_tests_name("rd_ncu inline", fixtures, NULL, NULL);
    int s = cmocka_run_group_tests_name("rd_ncu samples", samples, NULL, NULL);
    return ev_exit(f, s);
}
