/* test_an_kseq.c - frequent kernel sequences (an_kseq.c) on a handmade
 * trace, expected patterns worked out by hand (times in us).
 *
 * Main thread: ProfilerStep#1 [0,100), ProfilerStep#2 [100,200) (the last
 * step: HTA's view drops it).
 *   my_op A [10,40): aten::foo [11,20) { launch 1, 2 }, launch 3   -> k_a [20,25) k_b [26,30) k_c [31,40)
 *   my_op B [41,60): launches 4 5 6                                -> k_a [50,51) k_b [52,54) k_c [55,59)
 *   my_op C [61,70): launch 7 -> k_c [66,68) (stream 7), launch 8 -> k_a [65,66) (stream 8): by start k_a, k_c
 *   wrap [71,93): my_op D [72,90): launches 9 10 11 (depth 2: not a root)
 *   ## backward ## [94,99)
 *   my_op E [110,130): launches 12 13 14 -> k_a [140,141) k_b [142,143) k_c [144,150)
 * Backward thread: "autograd::...: my_opBackward" [94,99), launches 15 16 17:
 *   linked under "## backward ##" (depth 2), so not a root; unlinked it
 *   would be the only depth-0 candidate and the only pattern.
 * HTA view, MIN 3: my_op|k_a|k_b|k_c x2, GPU 18+7 = 25, CPU 30+19 = 49;
 * MIN 2 adds my_op|k_a|k_c x1, GPU 3, CPU 9. Exact view, MIN 3: E counts
 * too: x3, GPU 25+8 = 33, CPU 49+20 = 69.
 */
#include "test_util.h"
#include "an_fixture.h"
#include "base/util.h"

typedef struct call {
    int64_t t0, t1, corr;
    const char *k;
    int stream;
    int64_t k0, k1;
} call;

static tl_timeline *fixture(void)
{
    tl_builder *b = tl_builder_new("kseq.json");
    tl_builder_meta(b)->rank = 0;
    tl_track_key main_k = { TL_TRACK_CPU, 1, 1, -1, -1 }, bwd_k = { TL_TRACK_CPU, 1, 2, -1, -1 };
    tl_track_key s7 = { TL_TRACK_GPU, 0, 7, 0, 7 }, s8 = { TL_TRACK_GPU, 0, 8, 0, 8 };
    uint32_t m = tl_builder_track(b, &main_k), w = tl_builder_track(b, &bwd_k);
    uint32_t g7 = tl_builder_track(b, &s7), g8 = tl_builder_track(b, &s8);
    fx_add(b, m, TL_CAT_USER_ANNOTATION, "ProfilerStep#1", 0, 100 * US, -1);
    fx_add(b, m, TL_CAT_USER_ANNOTATION, "ProfilerStep#2", 100 * US, 100 * US, -1);
    static const struct { const char *name; int64_t t0, t1; } ops[] = {
        { "my_op", 10, 40 }, { "aten::foo", 11, 20 }, { "my_op", 41, 60 }, { "my_op", 61, 70 },
        { "wrap", 71, 93 },  { "my_op", 72, 90 },     { "my_op", 110, 130 },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(ops); i++)
        fx_add(b, m, TL_CAT_CPU_OP, ops[i].name, ops[i].t0 * US, (ops[i].t1 - ops[i].t0) * US, -1);
    fx_add(b, m, TL_CAT_USER_ANNOTATION, "## backward ##", 94 * US, 5 * US, -1);
    fx_add(b, w, TL_CAT_CPU_OP, "autograd::engine::evaluate_function: my_opBackward", 94 * US, 5 * US, -1);
    static const call L[] = {
        { 12, 13, 1, "k_a", 7, 20, 25 },   { 14, 15, 2, "k_b", 7, 26, 30 },   { 21, 22, 3, "k_c", 7, 31, 40 },
        { 42, 43, 4, "k_a", 7, 50, 51 },   { 44, 45, 5, "k_b", 7, 52, 54 },   { 46, 47, 6, "k_c", 7, 55, 59 },
        { 62, 63, 7, "k_c", 7, 66, 68 },   { 64, 65, 8, "k_a", 8, 65, 66 },   { 73, 74, 9, "k_a", 7, 80, 81 },
        { 75, 76, 10, "k_b", 7, 82, 83 },  { 77, 78, 11, "k_c", 7, 84, 85 },  { 111, 112, 12, "k_a", 7, 140, 141 },
        { 113, 114, 13, "k_b", 7, 142, 143 }, { 115, 116, 14, "k_c", 7, 144, 150 },
        { 95, 96, 15, "k_a", 7, 96, 97 },  { 96, 97, 16, "k_b", 7, 97, 98 },  { 97, 98, 17, "k_c", 7, 98, 99 },
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(L); i++) {
        fx_add(b, L[i].corr >= 15 ? w : m, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", L[i].t0 * US,
               (L[i].t1 - L[i].t0) * US, L[i].corr);
        fx_add(b, L[i].stream == 7 ? g7 : g8, TL_CAT_KERNEL, L[i].k, L[i].k0 * US, (L[i].k1 - L[i].k0) * US,
               L[i].corr);
    }
    return fx_finish(b);
}

static void run(fx_run *r, const char *op, int64_t min_len)
{
    memset(r, 0, sizeof *r);
    r->tl = fixture();
    r->rep = rep_new("chainprof.analyze/1", 0, NULL);
    r->opts.nthreads = 2;
    r->opts.kseq_op = op;
    r->opts.kseq_min_len = min_len;
    assert_int_equal(an_run_all(&r->ctx, r->tl, r->rep, &r->opts, NULL), 0);
}

static const char *str_at(const fx_run *r, const char *path)
{
    const rep_node *n = rep_path(r->rep, path);
    if (!n || n->type != REP_STR)
        fail_msg("no string at %s", path);
    return n->v.s;
}

static void test_min3(void **state)
{
    (void)state;
    fx_run r;
    run(&r, "my_op", 0);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.min_pattern_len"), 3);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.candidates"), 5);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.min_depth"), 1);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.roots"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.patterns"), 1);
    assert_string_equal(str_at(&r, "ranks.0.kernel_sequences.rows.0.pattern"), "my_op|k_a|k_b|k_c");
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.0.count"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.0.gpu_kernel_time_ns"), 25 * US);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.0.cpu_op_time_ns"), 49 * US);
    /* exact view: the last step's occurrence counts */
    assert_int_equal(fx_num(&r, "ranks.0.exact.kernel_sequences.candidates"), 6);
    assert_int_equal(fx_num(&r, "ranks.0.exact.kernel_sequences.rows.0.count"), 3);
    assert_int_equal(fx_num(&r, "ranks.0.exact.kernel_sequences.rows.0.gpu_kernel_time_ns"), 33 * US);
    assert_int_equal(fx_num(&r, "ranks.0.exact.kernel_sequences.rows.0.cpu_op_time_ns"), 69 * US);
    fx_done(&r);
}

static void test_min2_order(void **state)
{
    (void)state;
    fx_run r;
    run(&r, "my_op", 2);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.patterns"), 2);
    assert_string_equal(str_at(&r, "ranks.0.kernel_sequences.rows.0.pattern"), "my_op|k_a|k_b|k_c");
    assert_string_equal(str_at(&r, "ranks.0.kernel_sequences.rows.1.pattern"), "my_op|k_a|k_c"); /* by start */
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.1.count"), 1);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.1.gpu_kernel_time_ns"), 3 * US);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.1.cpu_op_time_ns"), 9 * US);
    fx_done(&r);
}

/* "aten::" matches only aten::foo (depth 2, two kernels): none with 3,
 * one pattern with 2; an absent operator gives no candidates. */
static void test_other_ops(void **state)
{
    (void)state;
    fx_run r;
    run(&r, "aten::", 0);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.min_depth"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.patterns"), 0);
    fx_done(&r);
    run(&r, "aten::", 2);
    assert_string_equal(str_at(&r, "ranks.0.kernel_sequences.rows.0.pattern"), "aten::foo|k_a|k_b");
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.rows.0.gpu_kernel_time_ns"), 9 * US);
    fx_done(&r);
    run(&r, "nothing_like_this", 0);
    assert_int_equal(fx_num(&r, "ranks.0.kernel_sequences.candidates"), 0);
    assert_true(fx_is_null(&r, "ranks.0.kernel_sequences.min_depth"));
    fx_done(&r);
    run(&r, NULL, 0); /* not requested: no section */
    assert_null(rep_path(r.rep, "ranks.0.kernel_sequences"));
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_min3),
        cmocka_unit_test(test_min2_order),
        cmocka_unit_test(test_other_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
