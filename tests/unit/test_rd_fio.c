/* test_rd_fio.c - fio reader on the real sample and fixtures. Expected
 * values are read off the files by hand. */
#include "readers/rd_fio.h"
#include "evidence_testutil.h"

EV_DEFINE_PARSE(FIO, fio, ev_fio)

/* fio 3.1 sequential 1 MiB writes on ZFS: the final summary, not the live
 * "Jobs:" line, is the result. */
static void test_zfs_seqwrite(void **state)
{
    (void)state;
    ev_fio *f = parse("fio-iperf/fio-seqwrite-zfs-psync-fio31-fio815.txt", 1);
    if (!f)
        skip();
    assert_string_equal(f->version, "fio-3.1");
    assert_int_equal(f->n_warnings, 1);
    assert_int_equal(f->warning_line, 9);
    assert_non_null(strstr(f->warning, "native_fallocate"));
    assert_int_equal(f->n_jobs, 1);
    const ev_fio_job *j = &f->jobs[0];
    assert_string_equal(j->name, "seqwrite");
    assert_string_equal(j->rw, "write");
    assert_string_equal(j->ioengine, "psync");
    assert_int_equal(j->iodepth, 1);
    assert_int_equal(j->def_line, 5);
    assert_int_equal(j->line, 11);
    assert_int_equal(j->pid, 14175);
    assert_int_equal(j->err, 0);
    assert_int_equal(j->jobs, 1);
    assert_false(j->io[EV_FIO_READ].present);
    const ev_fio_io *w = &j->io[EV_FIO_WRITE];
    assert_true(w->present);
    assert_int_equal(w->line, 12);
    CP_ASSERT_NEAR(w->iops, 734, 1e-9);
    CP_ASSERT_NEAR(w->bw_bytes_s, 734.0 * 1048576.0, 1e-3); /* 734MiB/s, not the 636 of "Jobs:" */
    CP_ASSERT_NEAR(w->io_bytes, 30.0 * 1073741824.0, 1);
    CP_ASSERT_NEAR(w->runtime_ms, 41847, 1e-9);
    CP_ASSERT_NEAR(w->clat.avg_us, 1333.63, 1e-9);
    CP_ASSERT_NEAR(w->clat.max_us, 100354, 1e-9);
    CP_ASSERT_NEAR(w->lat.stdev_us, 1048.58, 1e-9);
    assert_int_equal(w->n_pct, 4);
    CP_ASSERT_NEAR(w->pct[3], 20.0, 1e-12);
    CP_ASSERT_NEAR(w->pct_us[3], 1303, 1e-9);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_fio_free(f);
}

/* fio 2.x: lower-case keys, 1024-based KB/MB, aggrb group line, msec clat. */
static void test_fixture_fio2(void **state)
{
    (void)state;
    ev_fio *f = parse("fio/fio2-randrw-two-jobs.txt", 0);
    assert_string_equal(f->version, "fio-2.2.10");
    const ev_fio_job *j = &f->jobs[0];
    assert_int_equal(j->jobs, 2);
    assert_int_equal(j->iodepth, 32);
    assert_string_equal(j->bs, "4K-4K/4K-4K/4K-4K");
    const ev_fio_io *r = &j->io[EV_FIO_READ], *w = &j->io[EV_FIO_WRITE];
    CP_ASSERT_NEAR(r->bw_bytes_s, 52428.0 * 1024.0, 1e-6);
    CP_ASSERT_NEAR(r->io_bytes, 3072.0 * 1048576.0, 1e-3);
    CP_ASSERT_NEAR(r->slat.avg_us, 4.10, 1e-12);
    assert_int_equal(r->n_pct, 8);
    CP_ASSERT_NEAR(r->pct[6], 99.9, 1e-12);
    CP_ASSERT_NEAR(r->pct_us[6], 9536, 1e-9);
    CP_ASSERT_NEAR(w->clat.avg_us, 2500, 1e-9); /* 2.50 msec */
    assert_true(isnan(w->lat.stdev_us));        /* "nope" */
    assert_int_equal(f->n_groups, 1);
    CP_ASSERT_NEAR(f->groups[0].bw_bytes_s[EV_FIO_WRITE], 12800.0 * 1024.0, 1e-6);
    CP_ASSERT_NEAR(f->groups[0].io_bytes[EV_FIO_READ], 3072.0 * 1048576.0, 1e-3);
    ev_fio_free(f);
}

/* fio 3.36: nsec latencies, "12.3k" IOPS, "1200k" max. */
static void test_fixture_fio3_nsec(void **state)
{
    (void)state;
    ev_fio *f = parse("fio/fio3-iouring-nsec-k-suffix.txt", 0);
    const ev_fio_io *w = &f->jobs[0].io[EV_FIO_WRITE];
    CP_ASSERT_NEAR(w->iops, 12300, 1e-9);
    CP_ASSERT_NEAR(w->clat.max_us, 1200.0, 1e-9); /* 1200k nsec */
    CP_ASSERT_NEAR(w->clat.avg_us, 5.0005, 1e-12);
    CP_ASSERT_NEAR(w->pct_us[1], 8.096, 1e-12);
    CP_ASSERT_NEAR(f->groups[0].bw_bytes_s[EV_FIO_WRITE], 1536.0 * 1048576.0, 1e-3);
    double b;
    assert_int_equal(rd_fio_rate("770MB/s", 7, &b), 0);
    CP_ASSERT_NEAR(b, 770e6, 1e-6);
    assert_int_equal(rd_fio_rate("770MB", 5, &b), -1);
    ev_fio_free(f);
}

/* Group totals pasted alone (no job blocks, no "Run status group" line). */
static void test_bare_group_lines(void **state)
{
    (void)state;
    const char *t = "   READ: bw=796MiB/s (835MB/s), 796MiB/s-796MiB/s (835MB/s-835MB/s), io=23.3GiB (25.0GB), run=30001-30001msec\n"
                    "  WRITE: bw=98.5MiB/s (103MB/s), 98.5MiB/s-98.5MiB/s (103MB/s-103MB/s), io=2955MiB (3099MB), run=30001-30001msec\n";
    assert_true(rd_fio_sniff(t, strlen(t)) >= 50);
    ev_fio *f = NULL;
    assert_int_equal(ev_parse_as(EV_FIO, t, strlen(t), "g.txt", (void **)&f, NULL), 0);
    assert_int_equal(f->n_jobs, 0);
    assert_true(f->n_groups >= 1);
    CP_ASSERT_NEAR(f->groups[0].bw_bytes_s[EV_FIO_READ], 796.0 * 1024 * 1024, 1);
    CP_ASSERT_NEAR(f->groups[f->n_groups - 1].bw_bytes_s[EV_FIO_WRITE], 98.5 * 1024 * 1024, 1);
    assert_int_equal(f->groups[0].id, -1);
    assert_int_equal(f->groups[0].line, 1);
    ev_fio_free(f);
}

static void test_not_fio(void **state)
{
    (void)state;
    const char *text = "Jobs: 1 (f=1): [W(1)][100.0%][w=636MiB/s]\n";
    ev_fio *f = NULL;
    assert_int_equal(ev_parse_as(EV_FIO, text, strlen(text), "x", (void **)&f, NULL), CP_ERR_FORMAT);
    assert_null(f);
    assert_true(rd_fio_sniff(text, strlen(text)) < 50);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixture_fio2),
        cmocka_unit_test(test_fixture_fio3_nsec),
        cmocka_unit_test(test_not_fio),
        cmocka_unit_test(test_bare_group_lines),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_zfs_seqwrite),
    };
    int f = cmocka_run_group_tests_name("rd_fio_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("rd_fio_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
