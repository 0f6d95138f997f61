/* test_rd_memtl.c - PyTorch's raw memory timeline: sniffing, the reader and
 * the memtl analyzer on tests/fixtures/memtl/small.raw, worked out by hand:
 *   pre-existing (t -1): Parameter +100, Unknown +50
 *   t 1000: Activation +30 (create), Temporary +5
 *   t 2000: Activation -30, Gradient +30 (a version increment)
 *   t 3000: Temporary -5 (destroy)
 * samples (Parameter .. Unknown; the pre-existing one at the first time):
 *   0 @1000 [100,0,0,0,0,0,0,50] = 150   1 @1000 [100,0,0,5,30,0,0,50] = 185
 *   2 @2000 [100,0,0,5,0,30,0,50] = 185  3 @3000 [100,0,0,0,0,30,0,50] = 180
 * peak: sample 1 (the first of the two 185s), Parameter holding most. */
#include "test_util.h"
#include "an_fixture.h"
#include "readers/rd_memtl.h"
#include "readers/reader.h"

static tl_timeline *read_file(const char *file, diag_set *diag_out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/memtl/%s", CP_FIXTURES, file);
    tl_builder *b = tl_builder_new(path);
    cp_src *s = NULL;
    assert_int_equal(cp_src_open(&s, path, NULL), 0);
    assert_int_equal(rd_memtl_read_src(s, path, b, NULL), 0);
    cp_src_close(s);
    if (diag_out)
        *diag_out = *tl_builder_diag(b);
    return fx_finish(b);
}

static void test_sniff(void **state)
{
    (void)state;
    static const char raw[] = " [[-1, 1, 37888, 7], [-1, 1, 512, 7]]";
    static const char kineto_arr[] = "[{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1}]";
    static const char kineto_obj[] = "{\"traceEvents\": [[1]]}";
    assert_true(rd_memtl_sniff("x", (const unsigned char *)raw, sizeof raw - 1) >= 50);
    assert_int_equal(rd_memtl_sniff("x", (const unsigned char *)kineto_arr, sizeof kineto_arr - 1), 0);
    assert_int_equal(rd_memtl_sniff("x", (const unsigned char *)kineto_obj, sizeof kineto_obj - 1), 0);
    assert_int_equal(rd_memtl_sniff("x", (const unsigned char *)"[[\"a\"]]", 7), 0);
    const rd_trace_reader *r = rd_detect("x", (const unsigned char *)raw, sizeof raw - 1);
    assert_non_null(r);
    assert_string_equal(r->name, "memtl");
    r = rd_detect("x", (const unsigned char *)kineto_arr, sizeof kineto_arr - 1);
    assert_non_null(r);
    assert_string_equal(r->name, "kineto");
}

static void test_small(void **state)
{
    (void)state;
    fx_run r;
    fx_run_all(&r, read_file("small.raw", NULL));
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.records"), 7);
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.samples"), 4);
    static const int64_t want[4][8] = { { 100, 0, 0, 0, 0, 0, 0, 50 }, { 100, 0, 0, 5, 30, 0, 0, 50 },
                                        { 100, 0, 0, 5, 0, 30, 0, 50 }, { 100, 0, 0, 0, 0, 30, 0, 50 } };
    static const int64_t t_ns[4] = { 0, 0, 1000, 2000 }, total[4] = { 150, 185, 185, 180 };
    static const char *const keys[8] = { "parameter_bytes", "optimizer_state_bytes", "input_bytes",
                                         "temporary_bytes", "activation_bytes",      "gradient_bytes",
                                         "autograd_bytes",  "unknown_bytes" };
    char p[128];
    for (int s = 0; s < 4; s++) {
        snprintf(p, sizeof p, "ranks.0.memory_timeline.series.%d.sample", s);
        assert_int_equal(fx_num(&r, p), s);
        snprintf(p, sizeof p, "ranks.0.memory_timeline.series.%d.t_ns", s);
        assert_int_equal(fx_num(&r, p), t_ns[s]);
        snprintf(p, sizeof p, "ranks.0.memory_timeline.series.%d.total_bytes", s);
        assert_int_equal(fx_num(&r, p), total[s]);
        for (int c = 0; c < 8; c++) {
            snprintf(p, sizeof p, "ranks.0.memory_timeline.series.%d.%s", s, keys[c]);
            assert_int_equal(fx_num(&r, p), want[s][c]);
        }
    }
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.peak_total_bytes"), 185);
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.peak_sample"), 1);
    assert_string_equal(rep_path(r.rep, "ranks.0.memory_timeline.peak_category")->v.s, "Parameter");
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.categories.4.peak_bytes"), 30);   /* Activation */
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.categories.4.final_bytes"), 0);
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.categories.5.final_bytes"), 30);  /* Gradient */
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.categories.3.at_peak_bytes"), 5); /* Temporary */
    fx_done(&r);
}

/* Damaged records are counted and skipped, a file cut short keeps what it had. */
static void test_damaged(void **state)
{
    (void)state;
    diag_set d;
    fx_run r;
    fx_run_all(&r, read_file("damaged.raw", &d));
    assert_int_equal(d.count[DIAG_BAD_EVENT], 4);
    assert_int_equal(d.count[DIAG_TRUNCATED_FILE], 1);
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.records"), 2);
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.samples"), 2); /* pre-existing, then t 3000 */
    assert_int_equal(fx_num(&r, "ranks.0.memory_timeline.series.1.parameter_bytes"), 100);
    assert_true(fx_num(&r, "ranks.0.memory_timeline.series.1.temporary_bytes") == -5); /* a destroy without its create */
    fx_done(&r);
}

static void test_not_this_format(void **state)
{
    (void)state;
    static const char other[] = "[1, 2, 3]";
    tl_builder *b = tl_builder_new("other");
    cp_src *s = cp_src_open_mem(other, sizeof other - 1, "other");
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(rd_memtl_read_src(s, "other", b, &err), CP_ERR_FORMAT);
    assert_true(err.offset == 1);
    cp_src_close(s);
    tl_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_not_this_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
