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

/* One rule for list cells in every CSV table: a list's items joined with
 * "; ", an object as key=value, cells found by column key so an extra or a
 * missing child never shifts the row. */
static void test_csv_list_cells(void **state)
{
    (void)state;
    char *argv[] = { "chainprof" };
    rep_report *r = rep_new("chainprof.test/1", 1, argv);
    static const rep_col cols[] = { { "rank", "rank", NULL, -1 }, { "steps", "steps", NULL, -1 },
                                    { "layer", "layer", NULL, -1 } };
    rep_node *t = rep_table(r, r->root, "stragglers", "stragglers", cols, 3);
    rep_node *row = rep_row(r, t);
    rep_cell_int(r, row, 3);
    rep_node *steps = rep_arr(r, row, "steps", "steps");
    rep_int(r, steps, NULL, NULL, 4, NULL);
    rep_int(r, steps, NULL, NULL, 9, NULL);
    rep_str(r, steps, NULL, NULL, "a, \"b\"");
    rep_cell_str(r, row, "compute");
    rep_node *extra = rep_obj(r, row, "layers", "layers");
    rep_node *host = rep_obj(r, extra, "host", "host");
    rep_int(r, host, "exposed_ns", NULL, 5, "ns");
    rep_num(r, host, "share_pct", NULL, NAN, "%");
    row = rep_row(r, t); /* an empty list, no extra key */
    rep_cell_int(r, row, 7);
    rep_node *empty = rep_arr(r, row, "steps", "steps");
    (void)empty;
    rep_cell_str(r, row, "host");
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(render_csv(r, &b, NULL, NULL), 0);
    const char *s = cp_buf_str(&b);
    assert_non_null(strstr(s, "# stragglers\nrank,steps,layer,layers\n"));
    assert_non_null(strstr(s, "\n3,\"4; 9; a, \"\"b\"\"\",compute,host.exposed_ns=5; host.share_pct=\n"));
    assert_non_null(strstr(s, "\n7,,host,\n"));
    cp_buf_free(&b);
    rep_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_csv_and_path),
        cmocka_unit_test(test_csv_list_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
