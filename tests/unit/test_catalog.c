/* test_catalog.c - hardware catalog (model/catalog.h) lookup and spec-sheet numbers. */
#include "test_util.h"

#include "model/catalog.h"

static void aliases_resolve(void **state)
{
    (void)state;
    static const struct {
        const char *q, *name;
    } cases[] = {
        {"V100", "V100-SXM2-32GB"},        {"a100-40gb", "A100-SXM4-40GB"},
        {"A100-80GB", "A100-SXM4-80GB"},   {"A100", "A100-SXM4-80GB"},
        {"H100-SXM", "H100-SXM5-80GB"},    {"h100", "H100-SXM5-80GB"},
        {"H100-PCIE", "H100-PCIE-80GB"},   {"H800", "H800-SXM5-80GB"},
        {"H200", "H200-SXM-141GB"},        {"B200", "B200-SXM-180GB"},
        {"GB200", "GB200-NVL72"},          {"B300", "B300-SXM-288GB"},
        {"GB300", "GB300-NVL72"},          {"MI300X", "MI300X"},
        {"mi300x", "MI300X"},              {"H20", "H20-96GB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const hw_gpu *g = hw_gpu_find(cases[i].q);
        if (!g) fail_msg("'%s' not found", cases[i].q);
        assert_string_equal(g->name, cases[i].name);
    }
}

static void device_names_resolve(void **state)
{
    (void)state;
    static const struct {
        const char *q, *name;
    } cases[] = {
        {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
        {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
        {"NVIDIA A100-PG509-200", "A100-SXM4-80GB"},
        {"NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"},
        {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
        {"NVIDIA H100 PCIe", "H100-PCIE-80GB"},
        {"NVIDIA H100 NVL", "H100-NVL-94GB"},
        {"NVIDIA H200", "H200-SXM-141GB"},
        {"NVIDIA H20", "H20-96GB"},
        {"NVIDIA GB200", "GB200-NVL72"},
        {"NVIDIA B200", "B200-SXM-180GB"},
        {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
        {"AMD Instinct MI300X", "MI300X"},
        {"NVIDIA L40S", "L40S"},
        {"NVIDIA L4", "L4"},
        {"NVIDIA GeForce RTX 4090", "RTX-4090"},
        {"H100 SXM 96GB HBM2e @500W (Grand Teton)", "H100-SXM5-80GB"},
        {"Intel Gaudi 2", "Gaudi2"},
        {"TPU v5p", "TPU-v5p"},
        {"GB200 NVL72", "GB200-NVL72"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const hw_gpu *g = hw_gpu_find(cases[i].q);
        if (!g) fail_msg("'%s' not found", cases[i].q);
        if (strcmp(g->name, cases[i].name) != 0) fail_msg("'%s' -> %s, expected %s", cases[i].q, g->name, cases[i].name);
    }
}

static void unknown_names_fail(void **state)
{
    (void)state;
    assert_null(hw_gpu_find(NULL));
    assert_null(hw_gpu_find(""));
    assert_null(hw_gpu_find("NVIDIA"));
    assert_null(hw_gpu_find("Quadro P1000"));
    assert_null(hw_gpu_find("h1000"));
}

static void spec_numbers(void **state)
{
    (void)state;
    const hw_gpu *a = hw_gpu_find("A100");
    CP_ASSERT_NEAR(hw_gpu_peak_tflops(a, "bf16"), 312, 1e-9);
    CP_ASSERT_NEAR(hw_gpu_peak_tflops(a, "tf32"), 156, 1e-9);
    assert_true(hw_gpu_peak_tflops(a, "fp8") == 0); /* no FP8 on Ampere */
    CP_ASSERT_NEAR(a->scaleup_gbps, 300, 1e-9);
    CP_ASSERT_NEAR(hw_gpu_nic_gbps_per_gpu(a), 25.0, 1e-9); /* 8 x 200 Gb/s over 8 GPUs */
    const hw_gpu *h = hw_gpu_find("H100");
    CP_ASSERT_NEAR(hw_gpu_peak_tflops(h, "fp8"), 2 * hw_gpu_peak_tflops(h, "bf16"), 0.2);
    CP_ASSERT_NEAR(hw_gpu_nic_gbps_per_gpu(h), 50.0, 1e-9);
    const hw_gpu *pcie = hw_gpu_find("H100-PCIE");
    assert_true(pcie->bf16_tflops < h->bf16_tflops); /* caveat 1: not the same part */
    CP_ASSERT_NEAR(hw_gpu_expected_busbw_gbps(a, 8, 0), 240.0, 1e-9);  /* measured 234.9 */
    CP_ASSERT_NEAR(hw_gpu_expected_busbw_gbps(a, 1, 1), 20.0, 1e-9);   /* one rank per node */
    CP_ASSERT_NEAR(hw_gpu_expected_busbw_gbps(a, 8, 1), 160.0, 1e-9);  /* full nodes: 8 NICs */
    CP_ASSERT_NEAR(hw_gpu_expected_busbw_gbps(a, 64, 1), 160.0, 1e-9); /* capped at the node */
    assert_true(hw_gpu_expected_busbw_gbps(NULL, 8, 0) == 0);
    const hw_gpu *gb = hw_gpu_find("GB200");
    assert_int_equal(gb->scaleup_domain, 72);
    const hw_gpu *h800 = hw_gpu_find("H800");
    CP_ASSERT_NEAR(h800->scaleup_gbps, 200, 1e-9); /* export-limited NVLink */
    /* every row is sourced and self-consistent */
    for (size_t i = 0; i < hw_gpu_count(); i++) {
        const hw_gpu *g = hw_gpu_at(i);
        assert_non_null(g->source);
        assert_true(strlen(g->source) > 10);
        assert_true(g->bf16_tflops > 0 || g->fp16_tflops > 0);
        assert_true(g->hbm_bytes > 1e9 && g->hbm_gbps > 100);
        assert_true(g->gpus_per_node > 0 && g->nics_per_node > 0 && g->nic_gbit_s > 0);
        assert_true(g->mamf_frac >= 0 && g->mamf_frac < 1);
        assert_ptr_equal(hw_gpu_find(g->name), g);
    }
    assert_null(hw_gpu_at(hw_gpu_count()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aliases_resolve),
        cmocka_unit_test(device_names_resolve),
        cmocka_unit_test(unknown_names_fail),
        cmocka_unit_test(spec_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
