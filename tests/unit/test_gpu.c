/* test_gpu.c - the pure parts of src/gpu: NCCL version codes in both of
 * NCCL's encodings, GEMM precision names and their compute-capability gates,
 * and the peak formulas with hand-computed values. */
#include "test_util.h"

#include "gpu/gpu.h"

#include <math.h>

static void test_nccl_version(void **state)
{
    (void)state;
    char buf[32];
    gpu_nccl_version_str(22809, buf, sizeof buf); /* 2.28.9: X*10000 + Y*100 + Z since 2.9 */
    assert_string_equal(buf, "2.28.9");
    gpu_nccl_version_str(21805, buf, sizeof buf);
    assert_string_equal(buf, "2.18.5");
    gpu_nccl_version_str(2708, buf, sizeof buf); /* 2.7.8: X*1000 + Y*100 + Z before */
    assert_string_equal(buf, "2.7.8");
    gpu_nccl_version_str(0, buf, sizeof buf);
    assert_string_equal(buf, "unknown");
}

static void test_gemm_precisions(void **state)
{
    (void)state;
    assert_string_equal(gpu_gemm_prec_name(GPU_GEMM_FP8), "fp8");
    assert_string_equal(gpu_gemm_prec_name(GPU_GEMM_TF32), "tf32");
    assert_string_equal(gpu_gemm_prec_name(GPU_GEMM_N), "?");
    assert_int_equal(gpu_gemm_min_cc(GPU_GEMM_FP8), 89);
    assert_int_equal(gpu_gemm_min_cc(GPU_GEMM_BF16), 0);
}

static void test_peaks(void **state)
{
    (void)state;
    /* H100 SXM: 5120-bit bus, 2619 MHz: 640 B x 2619e6 x 2 = 3352.32 GB/s */
    CP_ASSERT_NEAR(gpu_hbm_peak_gbps(5120, 2619), 3352.32, 1e-9);
    /* PCIe gen4 x16: 16 GT/s x 128/130 x 16 / 8 = 31.5077 GB/s */
    CP_ASSERT_NEAR(gpu_pcie_gbps(4, 16), 16.0 * 128 / 130 * 16 / 8, 1e-12);
    assert_true(isnan(gpu_pcie_gbps(9, 16)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_version),
        cmocka_unit_test(test_gemm_precisions),
        cmocka_unit_test(test_peaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
