/* test_rd_iperf.c - iperf3 reader on the real sample and a fixture. Expected
 * values are read off the files by hand. */
#include "readers/rd_iperf.h"
#include "evidence_testutil.h"

EV_DEFINE_PARSE(IPERF, iperf, ev_iperf)

/* Older iperf3 ("Bandwidth"): a server excerpt starting mid-run (2 s
 * intervals, zero sender line), then the client with Retr/Cwnd. */
static void test_server_and_client(void **state)
{
    (void)state;
    ev_iperf *r = parse("fio-iperf/iperf3-old-bandwidth-header-server-and-client-19gbps.txt", 1);
    if (!r)
        skip();
    assert_int_equal(r->n_sections, 2);
    assert_string_equal(r->sections[1].remote, "10.24.24.5");
    assert_int_equal(r->sections[1].port, 5000);
    assert_int_equal(r->sections[1].is_server, 0);
    assert_int_equal(r->n_rows, 17);
    const ev_iperf_row *first = &r->rows[0];
    assert_int_equal(first->stream, 5);
    CP_ASSERT_NEAR(first->start_s, 14.0, 1e-12);
    CP_ASSERT_NEAR(first->bytes, 4.44 * 1073741824.0, 1);
    CP_ASSERT_NEAR(first->bits_per_s, 19.1e9, 1);
    const ev_iperf_row *best = ev_iperf_best(r);
    assert_int_equal(best->role, EV_IPERF_RECEIVER); /* not the 0.00 sender line */
    CP_ASSERT_NEAR(best->bits_per_s, 19.1e9, 1);
    CP_ASSERT_NEAR(best->bytes, 66.6 * 1073741824.0, 1);
    assert_int_equal(best->line, 16);
    const ev_iperf_row *c = &r->rows[11];
    assert_int_equal(c->section, 1);
    assert_int_equal(c->retr, 1);
    CP_ASSERT_NEAR(c->cwnd_bytes, 728.0 * 1024.0, 1e-9);
    assert_int_equal(c->line, 21);
    ev_iperf_free(r);
}

/* Newer iperf3 ("Bitrate"), two parallel streams with [SUM], a bad row. */
static void test_fixture_two_streams(void **state)
{
    (void)state;
    ev_iperf *r = parse("iperf/iperf3-bitrate-two-streams.txt", 0);
    assert_int_equal(r->n_sections, 1);
    assert_int_equal(r->n_rows, 11);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_VALUE), 9);
    const ev_iperf_row *best = ev_iperf_best(r);
    assert_int_equal(best->stream, -1); /* [SUM] receiver */
    CP_ASSERT_NEAR(best->bits_per_s, 9.16e9, 1);
    assert_int_equal(r->rows[2].stream, -1);
    assert_int_equal(r->rows[2].retr, 42);
    assert_true(isnan(r->rows[2].cwnd_bytes));
    CP_ASSERT_NEAR(r->rows[0].cwnd_bytes, 1.20 * 1048576.0, 1e-6);
    ev_iperf_free(r);
}

static void test_not_iperf(void **state)
{
    (void)state;
    const char *text = "[ ID] Interval           Transfer     Bitrate\n- - - -\n";
    ev_iperf *r = NULL;
    assert_int_equal(ev_parse_as(EV_IPERF, text, strlen(text), "x", (void **)&r, NULL), CP_ERR_FORMAT);
    assert_null(r);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixture_two_streams),
        cmocka_unit_test(test_not_iperf),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_server_and_client),
    };
    int f = cmocka_run_group_tests_name("rd_iperf_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("rd_iperf_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
