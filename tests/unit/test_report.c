/* test_report.c - the report tree and its three writers agree. */
#include "test_util.h"

#include "model/report.h"
#include "render/render.h"

#include <math.h>

static rep_report *sample(void)
{
    char *argv[] = { "chainprof", "analyze", "x.json" };
    rep_report *r = rep_new("chainprof.test/1", 3, argv);
    rep_node *o = rep_obj(r, r->root, "temporal", "temporal breakdown");
    rep_int(r, o, "idle_ns", "idle", 1500000, "ns");
    rep_num(r, o, "idle_pct", "idle", 42.38234, "%");
    rep_num(r, o, "overlap_pct", "overlap", NAN, "%");
    static const rep_col cols[] = { { "name", "kernel", NULL, -1 }, { "sum_ns", "total", "ns", -1 },
                                    { "share_pct", "share", "%", 1 } };
    rep_node *t = rep_table(r, r->root, "kernels", "top kernels", cols, 3);
    rep_node *row = rep_row(r, t);
    rep_cell_str(r, row, "gemm, \"big\"");
    rep_cell_int(r, row, 7305597000);
    rep_cell_num(r, row, 54.8123);
    row = rep_row(r, t);
    rep_cell_str(r, row, "add");
    rep_cell_null(r, row);
    rep_cell_num(r, row, 0.5);
    diag_set d;
    diag_init(&d);
    diag_count(&d, DIAG_MISSING_DUR, "x.json", 120);
    diag_count(&d, DIAG_MISSING_DUR, "x.json", 999);
    rep_diagnostics(r, &d);
    return r;
}

static void test_json(void **state)
{
    (void)state;
    rep_report *r = sample();
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(render_json(r, &b, NULL, NULL), 0);
    const char *s = cp_buf_str(&b);
    assert_non_null(strstr(s, "\"schema\": \"chainprof.test/1\""));
    assert_non_null(strstr(s, "\"idle_pct\": 42.38234"));
    assert_non_null(strstr(s, "\"overlap_pct\": null"));
    assert_non_null(strstr(s, "\"name\": \"gemm, \\\"big\\\"\""));
    assert_non_null(strstr(s, "\"sum_ns\": null"));
    assert_non_null(strstr(s, "\"code\": \"missing_dur\""));
    assert_non_null(strstr(s, "\"first\": \"x.json:120\""));
    assert_non_null(strstr(s, "\"count\": 2"));
    /* key order is insertion order */
    assert_true(strstr(s, "\"idle_ns\"") < strstr(s, "\"idle_pct\""));
    cp_buf_free(&b);
    rep_free(r);
}

static void test_text(void **state)
{
    (void)state;
    rep_report *r = sample();
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(render_text(r, &b, NULL, NULL), 0);
    const char *s = cp_buf_str(&b);
    assert_non_null(strstr(s, "idle: 1.500 ms"));
    assert_non_null(strstr(s, "idle: 42.38%"));
    assert_non_null(strstr(s, "overlap: -"));
    assert_non_null(strstr(s, "7.306 s"));
    assert_non_null(strstr(s, "54.8%"));
    assert_null(strstr(s, "\"schema\""));
    cp_buf_free(&b);
    rep_free(r);
}

static void test_csv_and_path(void **state)
{
    (void)state;
    rep_report *r = sample();
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(render_csv(r, &b, NULL, NULL), 0);
    const char *s = cp_buf_str(&b);
    assert_non_null(strstr(s, "temporal.idle_pct,42.382339999999999,%"));
    assert_non_null(strstr(s, "# kernels\nname,sum_ns,share_pct\n\"gemm, \"\"big\"\"\",7305597000,"));
    assert_non_null(strstr(s, "\nadd,,0.5\n"));
    rep_node *n = rep_path(r, "kernels.1.share_pct");
    assert_non_null(n);
    assert_true(n->v.d == 0.5);
    assert_null(rep_path(r, "kernels.7"));
    assert_non_null(render_find("csv"));
    assert_ptr_equal(render_for_path("out/report.json"), render_find("json"));
    assert_null(render_for_path("report.pdf"));
    cp_buf_free(&b);
    rep_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_csv_and_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
