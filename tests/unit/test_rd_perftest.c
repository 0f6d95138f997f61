/* test_rd_perftest.c - perftest reader on the real samples and fixtures.
 * Expected values are read off the files by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "readers/rd_perftest.h"
#include "evidence_testutil.h"

EV_DEFINE_PARSE(PERFTEST, perftest, ev_perftest)

/* CX-7 NDR back to back: send bw (MiB/sec), send lat, read bw, write bw. */
static void test_cx7_four_runs(void **state)
{
    (void)state;
    ev_perftest *r = parse("perftest/cx7-ndr400-b2b-send-lat-read-write-new-perftest.txt", 1);
    if (!r)
        skip();
    assert_int_equal(r->n_runs, 4);
    static const char *tools[] = {"ib_send_bw", "ib_send_lat", "ib_read_bw", "ib_write_bw"};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(r->runs[i].tool, tools[i]);
        assert_string_equal(r->runs[i].device, "mlx5_0");
        assert_string_equal(r->runs[i].link_type, "IB");
        assert_int_equal(r->runs[i].mtu_bytes, 4096);
        assert_int_equal(r->runs[i].qps, 1);
        assert_int_equal(r->runs[i].n_rows, 1);
    }
    const ev_pt_run *send = &r->runs[0];
    assert_string_equal(send->test, "Send BW Test");
    assert_string_equal(send->op, "send");
    assert_false(send->is_latency);
    assert_string_equal(send->bw_unit, "MiB/sec");
    assert_int_equal(send->test_line, 7);
    assert_int_equal(send->mtu_line, 16);
    CP_ASSERT_NEAR(send->rows[0].bw_avg_raw, 46557.03, 1e-9);
    /* 46557.03 MiB/s * 2^20 * 8 / 1e9 = 390.549 Gbit/s */
    CP_ASSERT_NEAR(send->rows[0].bw_avg_gbit_s, 46557.03 * 1048576.0 * 8.0 / 1e9, 1e-9);
    CP_ASSERT_NEAR(send->rows[0].bw_avg_gbit_s, 390.55, 0.01);
    CP_ASSERT_NEAR(send->rows[0].msg_rate_mpps, 0.744912, 1e-12);
    assert_int_equal(send->rows[0].bytes, 65536);
    assert_int_equal(send->rows[0].line, 27); /* after the CPU frequency warning */
    const ev_pt_setting *s = ev_pt_setting_get(send, "CQE Poll Batch");
    assert_non_null(s);
    assert_string_equal(s->value, "16");
    assert_int_equal(s->line, 15);

    const ev_pt_run *lat = &r->runs[1];
    assert_true(lat->is_latency);
    assert_string_equal(lat->lat_unit, "usec");
    assert_int_equal(lat->tx_depth, 1);
    assert_int_equal(lat->rows[0].bytes, 2);
    CP_ASSERT_NEAR(lat->rows[0].t_min_us, 1.24, 1e-12);
    CP_ASSERT_NEAR(lat->rows[0].t_max_us, 5.19, 1e-12);
    CP_ASSERT_NEAR(lat->rows[0].t_typical_us, 1.27, 1e-12);
    CP_ASSERT_NEAR(lat->rows[0].t_avg_us, 1.27, 1e-12);
    CP_ASSERT_NEAR(lat->rows[0].t_stdev_us, 0.0, 1e-12);
    CP_ASSERT_NEAR(lat->rows[0].t_p99_us, 1.37, 1e-12);
    CP_ASSERT_NEAR(lat->rows[0].t_p999_us, 5.19, 1e-12);
    assert_int_equal(lat->rows[0].line, 52);

    assert_string_equal(r->runs[2].bw_unit, "Gb/sec");
    CP_ASSERT_NEAR(r->runs[2].rows[0].bw_avg_gbit_s, 328.61, 1e-9);
    CP_ASSERT_NEAR(r->runs[2].rows[0].bw_peak_gbit_s, 328.64, 1e-9);
    const ev_pt_row *w = ev_pt_best_bw(&r->runs[3]);
    assert_non_null(w);
    CP_ASSERT_NEAR(w->bw_avg_gbit_s, 392.34, 1e-9);
    assert_int_equal(w->iterations, 5000);
    assert_int_equal(w->line, 102);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_perftest_free(r);
}

/* DGX Spark RoCE device, 4 QPs through rdma_cm, MTU 1024, ~112 Gb/s. */
static void test_dgx_spark_4qp(void **state)
{
    (void)state;
    ev_perftest *r = parse("perftest/dgx-spark-cx7-roce-4qp-write-bw.txt", 1);
    if (!r)
        skip();
    assert_int_equal(r->n_runs, 1);
    const ev_pt_run *run = &r->runs[0];
    assert_string_equal(run->tool, "ib_write_bw");
    assert_string_equal(run->device, "rocep1s0f1");
    assert_int_equal(run->device_line, 6);
    assert_int_equal(run->qps, 4);
    assert_int_equal(run->n_local_qps, 4);
    assert_int_equal(run->mtu_bytes, 1024);
    assert_int_equal(run->rdma_cm, 1);
    CP_ASSERT_NEAR(run->rows[0].bw_avg_gbit_s, 111.71, 1e-9);
    CP_ASSERT_NEAR(run->rows[0].bw_peak_gbit_s, 111.72, 1e-9);
    assert_int_equal(run->rows[0].iterations, 20000);
    assert_int_equal(run->rows[0].line, 29);
    ev_perftest_free(r);
}

/* Fixture: older perftest, MB/sec, RoCE with GID index, -a sizes, old
 * three-column latency table, one bad row. */
static void test_fixture_old_format(void **state)
{
    (void)state;
    ev_perftest *r = parse("perftest/old-mb-sec-roce-all-sizes.txt", 0);
    assert_int_equal(r->n_runs, 2);
    const ev_pt_run *bw = &r->runs[0];
    assert_string_equal(bw->tool, "ib_write_bw"); /* from the banner */
    assert_string_equal(bw->link_type, "Ethernet");
    assert_int_equal(bw->gid_index, 3);
    assert_int_equal(bw->qps, 2);
    assert_int_equal(bw->n_local_qps, 2);
    assert_string_equal(bw->bw_unit, "MB/sec");
    assert_int_equal(bw->n_rows, 3);
    const ev_pt_row *best = ev_pt_best_bw(bw);
    assert_int_equal(best->bytes, 8388608);
    CP_ASSERT_NEAR(best->bw_avg_gbit_s, 11190.25 * 1048576.0 * 8.0 / 1e9, 1e-9);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_VALUE), 30);
    const ev_pt_run *lat = &r->runs[1];
    assert_string_equal(lat->tool, "ib_read_lat");
    assert_true(lat->is_latency);
    CP_ASSERT_NEAR(lat->rows[0].t_typical_us, 3.02, 1e-12);
    assert_true(isnan(lat->rows[0].t_avg_us)); /* column not printed */
    assert_true(isnan(lat->rows[0].t_p99_us));
    ev_perftest_free(r);
}

/* A results table pasted without its banner or settings, rows commented
 * out with "# " by the poster: a run of its own. */
static void test_table_without_banner(void **state)
{
    (void)state;
    const char *t = "# #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
                    "#  65536      5000             97.62              97.58               0.186118\n";
    assert_true(rd_perftest_sniff(t, strlen(t)) >= 50);
    ev_perftest *p = NULL;
    assert_int_equal(ev_parse_as(EV_PERFTEST, t, strlen(t), "t.txt", (void **)&p, NULL), 0);
    assert_int_equal(p->n_runs, 1);
    assert_int_equal(p->runs[0].n_rows, 1);
    assert_int_equal(p->runs[0].rows[0].bytes, 65536);
    CP_ASSERT_NEAR(p->runs[0].rows[0].bw_avg_gbit_s, 97.58, 1e-9);
    assert_int_equal(p->runs[0].rows[0].line, 2);
    ev_perftest_free(p);
}

static void test_not_perftest(void **state)
{
    (void)state;
    const char *text = "Connecting to host 10.0.0.1, port 5201\n[ ID] Interval  Transfer\n";
    ev_perftest *r = NULL;
    cp_error err;
    assert_int_equal(ev_parse_as(EV_PERFTEST, text, strlen(text), "iperf.txt", (void **)&r, &err), CP_ERR_FORMAT);
    assert_null(r);
    assert_true(rd_perftest_sniff(text, strlen(text)) < 50);
    /* a banner without a results table is not enough */
    const char *half = "                    RDMA_Write BW Test\n Device : mlx5_0\n";
    assert_int_equal(ev_parse_as(EV_PERFTEST, half, strlen(half), "h.txt", (void **)&r, &err), CP_ERR_FORMAT);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixture_old_format),
        cmocka_unit_test(test_not_perftest),
        cmocka_unit_test(test_table_without_banner),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_cx7_four_runs),
        cmocka_unit_test(test_dgx_spark_4qp),
    };
    int f = cmocka_run_group_tests_name("rd_perftest_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("rd_perftest_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
