/* test_render_html.c - the HTML writer on a report of a job built in code:
 * every chart present, the findings with their evidence, no external
 * resource, and the JSON embedded verbatim (with "</" escaped). The page is
 * also left in the test's working directory (render_html_unit.html) for a
 * look in a browser. */
#include "test_util.h"

#include "render/render.h"
#include "verdict_job.h"

static void test_html_has_charts_findings_and_json(void **state)
{
    (void)state;
    job_spec j = job_default();
    j.net_frac = 0.4;
    j.ckpt_every = 5;
    j.ckpt_ns = 20000000;
    j.straggler = 3;
    j.straggler_factor = 1.2;
    tl_timeline *tl = job_build(&j);
    rep_report *rep = rep_new("chainprof.analyze/1", 0, NULL);
    an_opts o = { .gpus_per_node = 4, .nthreads = 1 };
    an_ctx ctx = { 0 };
    assert_int_equal(an_run_all(&ctx, tl, rep, &o, NULL), 0);
    rep_str(rep, rep->root, "note", "note", "</script><b>not markup</b>");
    const render_format *f = render_for_path("x/report.html");
    assert_non_null(f);
    assert_string_equal(f->name, "html");
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(f->fn(rep, &b, &(render_opts){ 0 }, NULL), 0);
    const char *h = cp_buf_str(&b);
    assert_non_null(strstr(h, "<!DOCTYPE html>"));
    assert_non_null(strstr(h, "<svg id=\"chart-layers\""));
    assert_non_null(strstr(h, "<svg id=\"chart-slowest-step\""));
    assert_non_null(strstr(h, "<svg id=\"chart-collectives\""));
    assert_non_null(strstr(h, "<svg id=\"chart-heatmap\""));
    assert_non_null(strstr(h, "<ol id=\"findings\">"));
    assert_non_null(strstr(h, "NET_INTER_SLOW"));
    assert_non_null(strstr(h, "Bottleneck layer: inter"));
    assert_true(strstr(h, "NET_INTER_SLOW") < strstr(h, "CKPT_SYNC_STALL"));
    assert_non_null(strstr(h, "<ul class=\"evidence\"><li>inter-node busbw"));
    /* embedded JSON, and the hostile string cannot close the element */
    const char *js = strstr(h, "<script type=\"application/json\" id=\"chainprof-report\">");
    assert_non_null(js);
    assert_non_null(strstr(js, "\"schema\": \"chainprof.analyze/1\""));
    assert_non_null(strstr(js, "<\\/script><b>not markup<\\/b>"));
    assert_int_equal(strstr(js, "</script>") - js, strstr(h, "</script>\n</body>") - js);
    /* nothing is fetched: no http(s) URL in a src/href, no scripts with src */
    assert_null(strstr(h, "src=\"http"));
    assert_null(strstr(h, "href=\"http"));
    assert_null(strstr(h, "<script src"));
    FILE *out = fopen("render_html_unit.html", "w");
    if (out) {
        fwrite(b.data, 1, b.len, out);
        fclose(out);
    }
    cp_buf_free(&b);
    an_ctx_free(&ctx);
    rep_free(rep);
    tl_free(tl);
}

static void test_html_without_data_notes_each_chart(void **state)
{
    (void)state;
    rep_report *rep = rep_new("chainprof.analyze/1", 0, NULL);
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(render_html(rep, &b, &(render_opts){ 0 }, NULL), 0);
    const char *h = cp_buf_str(&b);
    assert_non_null(strstr(h, "id=\"chart-layers\""));
    assert_non_null(strstr(h, "id=\"chart-heatmap\""));
    assert_non_null(strstr(h, "no problem found"));
    cp_buf_free(&b);
    rep_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_has_charts_findings_and_json),
        cmocka_unit_test(test_html_without_data_notes_each_chart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
