/* test_rd_nccltests.c - nccl-tests reader on the real samples and fixtures.
 * The expected values are read off the files by hand (see each comment). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "readers/rd_nccltests.h"
#include "evidence_testutil.h"

EV_DEFINE_PARSE(NCCL_TESTS, nccltests, ev_nccltests)

/* ABCI: 2 nodes x 8 A100, old columns with "error", SHARP log lines inside. */
static void test_abci_old_error_column(void **state)
{
    (void)state;
    ev_nccltests *r = parse("nccl-tests/abci-a100-2node-16gpu-sharp-old-error-column.txt", 1);
    if (!r)
        skip();
    assert_int_equal(r->n_runs, 1);
    const ev_nt_run *run = &r->runs[0];
    assert_string_equal(run->op, "all_reduce"); /* from ./build/all_reduce_perf */
    assert_int_equal(run->op_line, 11);
    assert_int_equal(run->nthread, 1);
    assert_int_equal(run->ngpus, 1);
    assert_int_equal(run->min_bytes, 8);
    assert_int_equal(run->max_bytes, 2147483648LL);
    assert_int_equal(run->warmup_iters, 50);
    assert_int_equal(run->iters, 50);
    assert_int_equal(run->agg_iters, -1); /* not printed by this version */
    assert_int_equal(run->colset, EV_NT_COLS_OLD_ERROR);
    assert_true(run->has_redop);
    assert_false(run->has_root);
    assert_int_equal(run->n_devices, 16);
    assert_int_equal(run->n_hosts, 2);
    assert_string_equal(run->devices[8].host, "a0001");
    assert_int_equal(run->devices[8].pid, 3868300);
    assert_int_equal(run->devices[8].group, -1);
    assert_string_equal(run->devices[8].bus, "0x27");
    assert_string_equal(run->devices[8].name, "NVIDIA A100-SXM4-40GB");
    assert_int_equal(run->devices[8].line, 24);
    assert_int_equal(run->n_rows, 29);
    assert_int_equal(run->rows[0].size_bytes, 8);
    CP_ASSERT_NEAR(run->rows[0].oop.time_us, 22.54, 1e-9);
    CP_ASSERT_NEAR(run->rows[0].oop.max_error, 4e-07, 1e-12);
    assert_int_equal(run->rows[0].oop.wrong, -1);
    CP_ASSERT_NEAR(run->avg_busbw_gbps, 29.0317, 1e-9);
    assert_int_equal(run->avg_line, 69);
    assert_int_equal(run->oob_values, 0);
    assert_int_equal(run->oob_ok, 1);
    double best;
    const ev_nt_row *row = ev_nt_max_busbw(run, &best);
    assert_non_null(row);
    assert_int_equal(row->size_bytes, 2147483648LL);
    CP_ASSERT_NEAR(best, 105.51, 1e-9); /* in-place busbw of the last row */
    CP_ASSERT_NEAR(row->oop.busbw_gbps, 105.46, 1e-9);
    CP_ASSERT_NEAR(row->oop.time_us, 38180, 1e-9);
    assert_int_equal(row->line, 67);
    assert_int_equal(diag_total(&ev_last_diag), 0); /* SHARP INFO lines are not rows */
    topo *t = topo_new();
    assert_int_equal(rd_nt_fill_topo(r, "t", t, NULL), 0);
    assert_int_equal(t->n_hosts, 2);
    assert_int_equal(t->n_gpus, 16);
    assert_string_equal(t->hosts[t->gpus[9].host].name, "a0001");
    assert_int_equal(t->gpus[9].index, 1);
    assert_string_equal(t->gpus[9].pci_bus, "0x2a");
    assert_string_equal(t->gpus[9].name, "NVIDIA A100-SXM4-40GB");
    assert_int_equal(t->gpus[9].src.line, 25);
    topo_free(t);
    ev_nccltests_free(r);
}

/* CoreWeave: new columns (root, #wrong), device block elided, no command. */
static void test_coreweave_new_columns(void **state)
{
    (void)state;
    ev_nccltests *r = parse("nccl-tests/coreweave-h100-64gpu-ib-sharp-allreduce.txt", 1);
    if (!r)
        skip();
    assert_int_equal(r->n_runs, 1);
    const ev_nt_run *run = &r->runs[0];
    assert_string_equal(run->op, ""); /* the output never names the binary */
    assert_int_equal(run->colset, EV_NT_COLS_NEW_WRONG);
    assert_true(run->has_root);
    assert_int_equal(run->n_devices, 0);
    assert_int_equal(run->n_rows, 5);
    assert_int_equal(run->rows[0].size_bytes, 536870912);
    assert_int_equal(run->rows[0].root, -1);
    assert_int_equal(run->rows[0].oop.wrong, 0);
    assert_true(isnan(run->rows[0].oop.max_error));
    CP_ASSERT_NEAR(run->rows[0].inp.busbw_gbps, 356.60, 1e-9);
    CP_ASSERT_NEAR(run->avg_busbw_gbps, 373.187, 1e-9);
    assert_int_equal(run->avg_line, 16);
    double best;
    const ev_nt_row *row = ev_nt_max_busbw(run, &best);
    assert_int_equal(row->size_bytes, 8589934592LL);
    CP_ASSERT_NEAR(best, 386.56, 1e-9);
    assert_int_equal(row->line, 14);
    ev_nccltests_free(r);
}

/* macOS port: five runs in one file, per-op column sets, poor busbw. */
static void test_gtx1080_all_collectives(void **state)
{
    (void)state;
    ev_nccltests *r = parse("nccl-tests/gtx1080x2-macos-port-old-format-all-collectives-poor-busbw.txt", 1);
    if (!r)
        skip();
    assert_int_equal(r->n_runs, 5);
    assert_string_equal(r->tests_version, ""); /* older nccl-tests do not say */
    assert_int_equal(r->nccl_library, -1);
    static const char *ops[] = {"all_reduce", "all_gather", "broadcast", "reduce", "reduce_scatter"};
    static const double avg[] = {0.414483, 0.347488, 0.698235, 0.716373, 0.328477};
    static const int redop[] = {1, 0, 0, 1, 1}, root[] = {0, 0, 1, 1, 0};
    for (size_t i = 0; i < 5; i++) {
        const ev_nt_run *run = &r->runs[i];
        assert_string_equal(run->op, ops[i]);
        CP_ASSERT_NEAR(run->avg_busbw_gbps, avg[i], 1e-9);
        assert_int_equal(run->has_redop, redop[i]);
        assert_int_equal(run->has_root, root[i]);
        assert_int_equal(run->n_rows, 6); /* the '.......' elisions are skipped */
        assert_int_equal(run->n_devices, 2);
        assert_int_equal(run->n_hosts, 1);
        assert_int_equal(run->ngpus, 2);
    }
    /* all_reduce at 128 MB: 0.87 out-of-place, 0.85 in-place (line 20). */
    const ev_nt_row *last = &r->runs[0].rows[5];
    assert_int_equal(last->size_bytes, 134217728);
    CP_ASSERT_NEAR(last->oop.busbw_gbps, 0.87, 1e-9);
    CP_ASSERT_NEAR(last->inp.busbw_gbps, 0.85, 1e-9);
    assert_int_equal(last->line, 20);
    /* broadcast prints root 0 and no redop. */
    assert_int_equal(r->runs[2].rows[0].root, 0);
    assert_string_equal(r->runs[2].rows[0].redop, "");
    /* all_gather max busbw 0.78 in-place at 128 MB. */
    double best;
    ev_nt_max_busbw(&r->runs[1], &best);
    CP_ASSERT_NEAR(best, 0.78, 1e-9);
    ev_nccltests_free(r);
}

/* Fixture: new format, 2 nodes, Group column, N/A and #wrong, bad rows. */
static void test_fixture_new_format(void **state)
{
    (void)state;
    ev_nccltests *r = parse("nccl-tests/new-2node-allgather-wrong-na.txt", 0);
    assert_string_equal(r->tests_version, "2.13.9");
    assert_int_equal(r->nccl_library, 21903);
    assert_int_equal(r->version_line, 1);
    assert_int_equal(r->n_runs, 1);
    const ev_nt_run *run = &r->runs[0];
    assert_string_equal(run->op, "all_gather");
    assert_int_equal(run->agg_iters, 1);
    assert_int_equal(run->graph, 0);
    assert_int_equal(run->n_devices, 4);
    assert_int_equal(run->n_hosts, 2);
    assert_int_equal(run->devices[2].group, 0);
    assert_string_equal(run->devices[2].host, "node-b");
    assert_string_equal(run->devices[2].bus, "0000:18:00");
    assert_string_equal(run->devices[3].name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(run->n_rows, 3);
    assert_int_equal(run->rows[0].inp.wrong, -1); /* N/A */
    assert_int_equal(run->rows[1].oop.wrong, 2);
    assert_int_equal(run->oob_values, 2);
    assert_int_equal(run->oob_ok, 0);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_VALUE), 17);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_ROW], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_ROW), 18);
    ev_nccltests_free(r);
}

/* Fixture: the run crashed before its table; the failure is kept. */
static void test_fixture_crash(void **state)
{
    (void)state;
    /* parsed directly: the sniffer rightly does not claim a file without a
     * table (see test_evidence), but analyze may still be told its kind */
    char path[1200];
    size_t len;
    char *data = ev_load_fixture("nccl-tests/crash-before-table.txt", &len, path, sizeof path);
    ev_nccltests *r = NULL;
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, data, len, path, (void **)&r, NULL), 0);
    free(data);
    assert_int_equal(r->n_failures, 2);
    assert_int_equal(r->failure_line, 6);
    assert_non_null(strstr(r->failure, "unhandled system error"));
    assert_int_equal(r->n_runs, 1);
    assert_int_equal(r->runs[0].n_rows, 0);
    assert_int_equal(r->runs[0].ngpus, 8);
    ev_nccltests_free(r);
}

/* Fixture: every line tagged by mpirun --tag-output; 2 hosts, 1 GPU each. */
static void test_fixture_mpirun_tags(void **state)
{
    (void)state;
    ev_nccltests *r = parse("nccl-tests/mpirun-tag-output-sendrecv.txt", 0);
    assert_int_equal(r->n_runs, 1);
    const ev_nt_run *run = &r->runs[0];
    assert_int_equal(run->n_devices, 2);
    assert_int_equal(run->n_hosts, 2);
    assert_string_equal(run->devices[1].host, "gpu-b07");
    assert_int_equal(run->n_rows, 3);
    CP_ASSERT_NEAR(run->avg_busbw_gbps, 11.5533, 1e-12);
    double best;
    ev_nt_max_busbw(run, &best);
    CP_ASSERT_NEAR(best, 11.98, 1e-12);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_nccltests_free(r);
    /* srun --label "0: " tags */
    const char *lab = "0: #       size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                      "0:      8  2 float sum -1 9.0 0.00 0.00 0 9.1 0.00 0.00 0\n";
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, lab, strlen(lab), "lab", (void **)&r, NULL), 0);
    assert_int_equal(r->runs[0].n_rows, 1);
    ev_nccltests_free(r);
}

/* rccl-tests (ROCm's fork): its banner names the tool and version; the
 * table is the same. */
static void test_rccl_tests(void **state)
{
    (void)state;
    ev_nccltests *r = parse("verdict/rccl_tests_mi300x_2node_low.txt", 0);
    assert_int_equal(r->rccl, 1);
    assert_int_equal(r->rccl_line, 6); /* "#@" lines count */
    assert_string_equal(r->tests_version, "develop:83d38d9");
    assert_int_equal(r->n_runs, 1);
    assert_int_equal(r->runs[0].n_devices, 16);
    assert_int_equal(r->runs[0].n_hosts, 2);
    assert_string_equal(r->runs[0].devices[0].name, "AMD Instinct MI300X");
    assert_string_equal(r->runs[0].devices[0].bus, "0000:05:00");
    assert_int_equal(r->runs[0].wrong_rows, 0);
    ev_nccltests_free(r);
}

/* Data errors: #wrong above 0, nccl-tests' "*" mark on an old "error"
 * value, "Out of bounds values : N FAILED". */
static void test_wrong_data(void **state)
{
    (void)state;
    const char *t =
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
        "#  Rank  0 Group  0 Pid 1 on h device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n"
        "          16             4     float     sum      -1    10.00    0.00    0.00      4    10.00    0.00    0.00      4\n"
        "          32             8     float     sum      -1    10.00    0.00    0.00      8    10.00    0.00    0.00      0\n"
        "# Out of bounds values : 16 FAILED\n"
        "# Avg bus bandwidth    : 0.001\n";
    ev_nccltests *r = NULL;
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, t, strlen(t), "w.txt", (void **)&r, NULL), 0);
    const ev_nt_run *run = &r->runs[0];
    assert_int_equal(run->wrong_rows, 2);
    assert_int_equal(run->wrong_line, 6);
    assert_int_equal(run->oob_values, 16);
    assert_int_equal(run->oob_ok, 0);
    ev_nccltests_free(r);

    const char *old = /* old columns: a "*" after the error value marks it above the threshold */
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "#                                                     out-of-place                       in-place\n"
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
        "           8             2   float     sum    10.00    0.00    0.00  0e+00    10.00    0.00    0.00  0e+00\n"
        "          16             4   float     sum    10.00    0.00    0.00  2e+00*   10.00    0.00    0.00  0e+00\n";
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, old, strlen(old), "o.txt", (void **)&r, NULL), 0);
    assert_int_equal(r->runs[0].wrong_rows, 1);
    assert_int_equal(r->runs[0].wrong_line, 6);
    ev_nccltests_free(r);
}

/* Started once per process without MPI: every process prints its own sweep
 * into one log, so the sizes restart and each prints an average. */
static void test_size_restarts(void **state)
{
    (void)state;
    const char *row8 = "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
    const char *row16 = "          16             4     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";
    char t[4096];
    snprintf(t, sizeof t,
             "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
             "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
             "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
             "%s%s%s%s# Avg bus bandwidth    : 0.001\n# Avg bus bandwidth    : 0.001\n",
             row8, row16, row8, row16);
    ev_nccltests *r = NULL;
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, t, strlen(t), "r.txt", (void **)&r, NULL), 0);
    assert_int_equal(r->n_runs, 1);
    assert_int_equal(r->runs[0].size_restarts, 1);
    assert_int_equal(r->runs[0].restart_line, 6);
    assert_int_equal(r->runs[0].avg_lines, 2);
    ev_nccltests_free(r);
}

static void test_not_nccltests(void **state)
{
    (void)state;
    const char *text = "hello\nthis is not a benchmark\n# nothing here\n";
    ev_nccltests *r = (ev_nccltests *)1;
    cp_error err;
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, text, strlen(text), "x.txt", (void **)&r, &err), CP_ERR_FORMAT);
    assert_null(r);
    assert_non_null(strstr(err.msg, "no nccl-tests / rccl-tests output found"));
    assert_string_equal(err.file, "x.txt");
    assert_true(rd_nccltests_sniff(text, strlen(text)) < 50);
    assert_int_equal(ev_parse_as(EV_NCCL_TESTS, "", 0, "empty", (void **)&r, NULL), CP_ERR_FORMAT);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixture_new_format),
        cmocka_unit_test(test_fixture_crash),
        cmocka_unit_test(test_fixture_mpirun_tags),
        cmocka_unit_test(test_not_nccltests),
        cmocka_unit_test(test_rccl_tests),
        cmocka_unit_test(test_wrong_data),
        cmocka_unit_test(test_size_restarts),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_abci_old_error_column),
        cmocka_unit_test(test_coreweave_new_columns),
        cmocka_unit_test(test_gtx1080_all_collectives),
    };
    int f = cmocka_run_group_tests_name("rd_nccltests_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("rd_nccltests_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
