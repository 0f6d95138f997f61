/* test_an_annotations.c - user annotations on fixture A. HTA view: the last
 * step's ProfilerStep#2 is dropped; gemm_a [8,18) and the NCCL kernel
 * [15,35) both overlap "inner" [8,17), the innermost of "fwd" [7,36). */
#include "test_util.h"
#include "an_fixture.h"

static void test_fixture_a(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, fixture_a());
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.cpu.0.name")->v.s, "ProfilerStep#1");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.cpu.0.sum_ns"), 100 * US);
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.cpu.1.name")->v.s, "## forward ##");
    assert_null(rep_path(r.rep, "ranks.0.annotations.cpu.2"));
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.gpu.0.name")->v.s, "fwd");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.gpu.0.count"), 1);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.gpu.0.sum_ns"), 29 * US);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.gpu_kernels"), 8);
    assert_int_equal(fx_num(&r, "ranks.0.annotations.unattributed_kernels"), 6);
    assert_string_equal(rep_path(r.rep, "ranks.0.annotations.kernels_by_annotation.0.annotation")->v.s, "inner");
    assert_int_equal(fx_num(&r, "ranks.0.annotations.kernels_by_annotation.0.kernels"), 2);
    assert_null(rep_path(r.rep, "ranks.0.annotations.kernels_by_annotation.1"));
    /* exact: every step */
    assert_string_equal(rep_path(r.rep, "ranks.0.exact.annotations.cpu.0.name")->v.s, "ProfilerStep#2");
    assert_int_equal(fx_num(&r, "ranks.0.exact.annotations.gpu_kernels"), 8);
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
