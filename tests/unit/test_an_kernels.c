/* test_an_kernels.c - kernel breakdown: type/overlap times and per-kernel
 * statistics on fixture A, and the top-10 / "others" folding with HTA's
 * statistics-of-sums quirk. */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    /* compute only 23.5 us, comm only 17, both 5 */
    assert_string_equal(rep_path(r.rep, "ranks.0.kernel_types.0.kernel_type")->v.s, "COMPUTATION");
    assert_int_equal(fx_num(&r, "ranks.0.kernel_types.0.time_ns"), 23500);
    assert_string_equal(rep_path(r.rep, "ranks.0.kernel_types.1.kernel_type")->v.s, "COMMUNICATION");
    assert_int_equal(fx_num(&r, "ranks.0.kernel_types.1.time_ns"), 17 * US);
    assert_string_equal(rep_path(r.rep, "ranks.0.kernel_types.2.kernel_type")->v.s,
                        "COMPUTATION overlapping COMMUNICATION");
    assert_int_equal(fx_num(&r, "ranks.0.kernel_types.2.time_ns"), 5 * US);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernel_types.0.pct"), 100 * 23.5 / 45.5, 1e-9);
    assert_int_equal(fx_num(&r, "ranks.0.exact.kernel_types.0.time_ns"), 33500);
    /* rows sorted by (type, name); current HTA types the sync event OTHER,
     * which the kernel breakdown leaves out (before Sept 2025: COMPUTATION) */
    const an_kernels_rank *h = an_dual_get(&r.ctx, AN_kernels, 0, false);
    const an_kernels_rank *e = an_dual_get(&r.ctx, AN_kernels, 0, true);
    assert_int_equal(h->n_rows, 4);
    assert_string_equal(rep_path(r.rep, "ranks.0.kernels.0.name")->v.s, "ncclKernel_AllReduce");
    assert_int_equal(fx_num(&r, "ranks.0.kernels.0.sum_ns"), 22 * US);
    assert_string_equal(rep_path(r.rep, "ranks.0.kernels.1.name")->v.s, "elementwise");
    assert_string_equal(rep_path(r.rep, "ranks.0.kernels.2.name")->v.s, "gemm_a");
    assert_int_equal(fx_num(&r, "ranks.0.kernels.2.count"), 2);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.2.mean_ns"), 12500, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.2.min_ns"), 10000, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.2.max_ns"), 15000, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.2.std_ns"), sqrt(12.5e6), 1e-6);
    assert_int_equal(e->n_rows, 4); /* no sync event */
    assert_string_equal(rep_path(r.rep, "ranks.0.exact.kernels.3.name")->v.s, "gemm_b");
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.exact.kernels.3.sum_ns"), 12000, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.exact.kernels.3.mean_ns"), 6000, 1e-9);
    fx_done(&r);
}

/* 12 kernels "k01".."k12" of 12..1 us, k01 twice (2 x 6 us). Cumulative
 * sums 12, 23, ..., 78; their 0.8 quantile is 74.4, so the kernels past the
 * 9th (3, 2, 1 us) become "others". */
static void test_others(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("many.json");
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 }, g = { TL_TRACK_GPU, 0, 7, 0, 7 };
    uint32_t c = tl_builder_track(b, &cpu), t = tl_builder_track(b, &g);
    int64_t at = 0;
    for (int k = 1; k <= 12; k++) {
        char nm[8];
        snprintf(nm, sizeof nm, "k%02d", k);
        int64_t d = (13 - k) * US;
        int copies = k == 1 ? 2 : 1;
        for (int x = 0; x < copies; x++) {
            fx_add(b, c, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", at, 100, 1000 + k * 10 + x);
            fx_add(b, t, TL_CAT_KERNEL, nm, at + US, copies == 2 ? d / 2 : d, 1000 + k * 10 + x);
            at += 20 * US;
        }
    }
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    const an_kernels_rank *h = an_dual_get(&r.ctx, AN_kernels, 0, false);
    assert_int_equal(h->n_rows, 10); /* k01..k09 + others */
    /* sorted by name: k01 first; HTA reports the kernel's sum as its mean */
    assert_string_equal(rep_path(r.rep, "ranks.0.kernels.0.name")->v.s, "k01");
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.0.mean_ns"), 12000, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.exact.kernels.0.mean_ns"), 6000, 1e-9);
    assert_string_equal(rep_path(r.rep, "ranks.0.kernels.9.name")->v.s, "others");
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.9.sum_ns"), 6000, 1e-9);
    assert_int_equal(fx_num(&r, "ranks.0.kernels.9.count"), 3);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.9.mean_ns"), 2000, 1e-9); /* mean of sums */
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.9.max_ns"), 3000, 1e-9);
    CP_ASSERT_NEAR(fx_num(&r, "ranks.0.kernels.9.std_ns"), 1000, 1e-9);
    fx_done(&r);
}

static void test_labels(void **state)
{
    (void)state;
    char buf[96];
    assert_string_equal(an_ktype_label(AN_KT_ALL, buf, sizeof buf),
                        "COMPUTATION overlapping COMMUNICATION overlapping MEMORY");
    assert_string_equal(an_ktype_label(AN_KT_MEMORY, buf, sizeof buf), "MEMORY");
    assert_int_equal(an_hta_ktype("dma_request"), AN_KT_MEMORY);
    assert_int_equal(an_hta_ktype("Memcpy HtoD (Pinned -> Device)"), AN_KT_MEMORY);
    assert_int_equal(an_hta_ktype("ncclDevKernel_AllGather_RING_LL"), AN_KT_COMM);
    assert_int_equal(an_hta_ktype("ncclKernel_AllReduce"), AN_KT_COMM);
    assert_int_equal(an_hta_ktype("void ncclKernel_AllReduce_RING"), AN_KT_COMM); /* *ncclKernel* */
    assert_int_equal(an_hta_ktype("gloo:all_reduce"), AN_KT_COMPUTE); /* current HTA: no gloo rule */
    assert_int_equal(an_hta_ktype("void at::native::nccl_like"), AN_KT_COMPUTE); /* HTA: prefix only */
    assert_int_equal(an_hta_ktype("hipMemcpyAsync"), AN_KT_COMM); /* HTA's ^hip comes first */
    /* OTHER since Sept 2025: sync and wait events, MTIA bookkeeping, stray copies */
    assert_int_equal(an_hta_ktype("Event Sync"), AN_KT_OTHER);
    assert_int_equal(an_hta_ktype("Context Sync"), AN_KT_OTHER);
    assert_int_equal(an_hta_ktype("Stream Wait Event"), AN_KT_OTHER);
    assert_int_equal(an_hta_ktype("pe_exe"), AN_KT_OTHER);
    assert_int_equal(an_hta_ktype("x Memcpy y"), AN_KT_OTHER);
    assert_int_equal(an_hta_ktype("cudaLaunchKernel"), AN_KT_OTHER);
    assert_int_equal(an_hta_ktype("add-dtype_Float"), AN_KT_COMPUTE);
    /* HTA's shorten_name */
    char sn[128];
    assert_string_equal(an_hta_short_name("void at::native::(anonymous namespace)::k<float, 2>(int, float*)", sn,
                                          sizeof sn),
                        "at::native::::k");
    assert_string_equal(an_hta_short_name("Memcpy DtoD (Device -> Device)", sn, sizeof sn),
                        "Memcpy DtoD (Device -> Device)");
    assert_string_equal(an_hta_short_name("aten::mm", sn, sizeof sn), "aten::mm");
    assert_string_equal(an_hta_short_name("std::vector<int> f(a->b)", sn, sizeof sn), "f");
    /* the float64 reading of decimal microseconds */
    assert_true(an_hta_us_double(1500) == 1.5);
    assert_true(an_hta_us_double(1712195495519689047) == 1712195495519689.0); /* ulp 0.25: .047 -> .0 */
    assert_true(an_hta_us_double(1712195495519695812) == 1712195495519695.75);
    assert_true(an_hta_us_double(1712195495519695875) == 1712195495519696.0); /* tie .875: to even */
    assert_true(an_hta_us_double(1712195495519695625) == 1712195495519695.5); /* tie .625: to even */
    assert_true(an_hta_us_double(-1712195495519689047) == -1712195495519689.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
        cmocka_unit_test(test_others),
        cmocka_unit_test(test_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
