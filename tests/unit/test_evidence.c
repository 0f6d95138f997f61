/* test_evidence.c - the evidence registry (content detection, load) and the
 * shared text plumbing of the readers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "readers/evidence.h"
#include "readers/rd_nccltests.h"
#include "evidence_testutil.h"
#include "readers/rd_perftest.h"
#include "render/render.h"

#include <unistd.h>
#include <zlib.h>

static const char *detect_buf(const char *data, size_t len)
{
    const rd_evidence_kind *k = rd_evidence_detect(data, len, NULL);
    return k ? k->key : "not recognised";
}

static void expect_fixture_kind(const char *rel, const char *key)
{
    char path[1200];
    size_t len;
    char *data = ev_load_fixture(rel, &len, path, sizeof path);
    assert_string_equal(detect_buf(data, len), key);
    free(data);
    int conf = 0;
    cp_error err;
    assert_string_equal(rd_evidence_detect_path(path, &conf, &err), key);
    assert_true(conf >= RD_EVIDENCE_MIN_CONFIDENCE);
}

static void test_fixtures_detected(void **state)
{
    (void)state;
    expect_fixture_kind("nccl-tests/new-2node-allgather-wrong-na.txt", "nccl_tests");
    expect_fixture_kind("perftest/old-mb-sec-roce-all-sizes.txt", "perftest");
    expect_fixture_kind("topo/old-driver-soc-mlx-rows-no-legend.txt", "nvidia_smi_topo");
    expect_fixture_kind("topo/one-gpu-bad-cell.txt", "nvidia_smi_topo");
    expect_fixture_kind("dmon/nvidia-smi-dt-repeated-header.txt", "dmon");
    expect_fixture_kind("dmon/dcgmi-id-line-na-two-gpus.txt", "dmon");
    expect_fixture_kind("fio/fio2-randrw-two-jobs.txt", "fio");
    expect_fixture_kind("fio/fio3-iouring-nsec-k-suffix.txt", "fio");
    expect_fixture_kind("iperf/iperf3-bitrate-two-streams.txt", "iperf3");
}

static void test_not_recognised(void **state)
{
    (void)state;
    const char *text = "Traceback (most recent call last):\n  File \"train.py\", line 3\n";
    assert_string_equal(detect_buf(text, strlen(text)), "not recognised");
    assert_string_equal(detect_buf("", 0), "not recognised");
    /* a parameter block without a table (a crashed run) is not claimed */
    char path[1200];
    size_t len;
    char *data = ev_load_fixture("nccl-tests/crash-before-table.txt", &len, path, sizeof path);
    assert_string_equal(detect_buf(data, len), "not recognised");
    free(data);
    cp_error err;
    int conf = -1;
    assert_string_equal(rd_evidence_detect_path("/nonexistent/x.txt", &conf, &err), "not recognised");
    assert_int_equal(err.code, CP_ERR_IO);
    assert_int_equal(conf, 0);
    const rd_evidence_kind *k;
    void *facts;
    assert_int_equal(rd_evidence_load("/nonexistent/x.txt", &k, &facts, &err), CP_ERR_IO);
}

static void test_registry(void **state)
{
    (void)state;
    size_t n;
    const rd_evidence_kind *ks = rd_evidence_kinds(&n);
    assert_int_equal(n, 6);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(rd_evidence_kind_by_key(ks[i].key), &ks[i]);
        assert_non_null(ks[i].sniff);
        assert_non_null(ks[i].parse);
        assert_non_null(ks[i].free);
    }
    assert_null(rd_evidence_kind_by_key("nope"));
    /* a file holding two formats: both kinds come back, best first */
    const char *two =
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "           8             2     float     sum    25.34    0.00    0.00  0e+00    25.23    0.00    0.00  0e+00\n"
        "# Avg bus bandwidth    : 0.0\n"
        "# gpu   pwr    sm\n# Idx     W     %\n    0   100    50\n";
    const rd_evidence_kind *all[8];
    size_t m = rd_evidence_detect_all(two, strlen(two), all, 8);
    assert_int_equal(m, 2);
    assert_string_equal(all[0]->key, "nccl_tests");
    assert_string_equal(all[1]->key, "dmon");
}

static void test_load_fixture(void **state)
{
    (void)state;
    char path[1200];
    ev_fixture_path("nccl-tests/new-2node-allgather-wrong-na.txt", path, sizeof path);
    const rd_evidence_kind *k;
    void *facts;
    cp_error err;
    assert_int_equal(rd_evidence_load(path, &k, &facts, &err), 0);
    assert_string_equal(k->key, "nccl_tests");
    const rd_nccltests *r = facts;
    assert_int_equal(r->n_runs, 1);
    assert_string_equal(r->name, path);
    k->free(facts);
}

/* Every sample of the formats this registry reads is detected as its kind,
 * parses, and nothing else in logs/ is claimed by these readers. */
static void test_samples_detected(void **state)
{
    (void)state;
    static const struct { const char *rel, *key; } cases[] = {
        {"nccl-tests/abci-a100-2node-16gpu-sharp-old-error-column.txt", "nccl_tests"},
        {"nccl-tests/coreweave-h100-64gpu-ib-sharp-allreduce.txt", "nccl_tests"},
        {"nccl-tests/gtx1080x2-macos-port-old-format-all-collectives-poor-busbw.txt", "nccl_tests"},
        {"perftest/cx7-ndr400-b2b-send-lat-read-write-new-perftest.txt", "perftest"},
        {"perftest/dgx-spark-cx7-roce-4qp-write-bw.txt", "perftest"},
        {"topo/a100-sxm4-8gpu-10nic-nv12-amd-nps4.txt", "nvidia_smi_topo"},
        {"topo/h100-8gpu-8nic-nv18-sglang30401.txt", "nvidia_smi_topo"},
        {"topo/pcie-6gpu-2socket-pix-node-sys-pytorch47885.txt", "nvidia_smi_topo"},
        {"dmon/dcgmi-dmon-triton-gke-t4-1vs4-instances.txt", "dmon"},
        {"dmon/nvidia-smi-dmon-pucvmet-old-format-deepspeech178.txt", "dmon"},
        {"fio-iperf/fio-seqwrite-zfs-psync-fio31-fio815.txt", "fio"},
        {"fio-iperf/iperf3-old-bandwidth-header-server-and-client-19gbps.txt", "iperf3"},
        /* NCCL_DEBUG logs (some of nccl-tests runs without a table) and
         * PyTorch failure logs belong to other readers */
        {"nccl/aws-v100-no-efa-ofi-warn-socket-fallback-nccl248-nccl398.txt", NULL},
        {"nccl/h800-8gpu-nvls-not-available-0-nvls-channels-nccl892.txt", NULL},
        {"nccl/h800-roce-gid3-gdr-error4-vendor81-nccl1052.txt", NULL},
        {"pytorch/watchdog-timeout-desync-report-collective-mismatch.txt", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1200];
        size_t len;
        char *data = ev_load_sample(cases[i].rel, &len, path, sizeof path);
        if (!data)
            skip();
        const rd_evidence_kind *k = rd_evidence_detect(data, len, NULL);
        if (!cases[i].key) {
            if (k)
                fail_msg("%s claimed as %s", cases[i].rel, k->key);
            free(data);
            continue;
        }
        if (!k || strcmp(k->key, cases[i].key) != 0)
            fail_msg("%s detected as %s", cases[i].rel, k ? k->key : "not recognised");
        void *facts = NULL;
        cp_error err;
        if (k->parse(data, len, path, &facts, &err) < 0)
            fail_msg("%s: %s", cases[i].rel, err.msg);
        k->free(facts);
        free(data);
    }
}

static void test_text_plumbing(void **state)
{
    (void)state;
    rd_field f[4];
    int trunc;
    const char *line = "  a\tbb   ccc d e";
    assert_int_equal(rd_split(line, strlen(line), f, 4, &trunc), 4);
    assert_true(trunc);
    assert_int_equal(f[1].col, 5);
    assert_true(rd_feq(&f[2], "ccc"));
    double v;
    assert_int_equal(rd_num("1.5e3", 5, &v), 0);
    assert_true(v == 1500.0);
    assert_int_equal(rd_num("12abc", 5, &v), -1);
    assert_int_equal(rd_num("nan", 3, &v), -1);
    assert_int_equal(rd_num("inf", 3, &v), -1);
    assert_int_equal(rd_num("", 0, &v), -1);
    int64_t x;
    assert_int_equal(rd_i64("-1", 2, &x), 0);
    assert_int_equal(x, -1);
    assert_int_equal(rd_i64("99999999999999999999", 20, &x), -1);
    assert_int_equal(rd_i64("0x10", 4, &x), -1);
    const char *text = "#@ source: x\nkeep\r\n#@ y\n#not@\n#@ last";
    rd_lines it;
    rd_lines_init(&it, text, strlen(text));
    const char *l;
    size_t n;
    assert_true(rd_lines_next(&it, &l, &n)); /* the #@ line is skipped */
    assert_int_equal(n, 4); /* CR dropped */
    assert_memory_equal(l, "keep", 4);
    assert_int_equal(it.lineno, 2);
    assert_true(rd_lines_next(&it, &l, &n));
    assert_int_equal(it.lineno, 4);
    assert_memory_equal(l, "#not@", 5);
    assert_false(rd_lines_next(&it, &l, &n));
    static const struct { const char *in, *out; } tags[] = {
        {"[1,0]<stdout>:# nThread 1", "# nThread 1"}, {"[1,12]<stderr>:x", "x"},
        {"12: #  Rank", "#  Rank"}, {"   8  2 float", "   8  2 float"},
        {"[ ID] Interval", "[ ID] Interval"}, {"[  5] local", "[  5] local"}, {"3:x", "3:x"},
    };
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        const char *tl = tags[i].in;
        size_t tn = strlen(tl);
        rd_strip_launcher_tag(&tl, &tn);
        assert_int_equal(tn, strlen(tags[i].out));
        assert_memory_equal(tl, tags[i].out, tn);
    }
    diag_set d;
    diag_init(&d);
    rd_note(&d, DIAG_EVIDENCE_BAD_ROW, "f.txt", 9);
    rd_note(&d, DIAG_EVIDENCE_BAD_ROW, "f.txt", 12);
    assert_int_equal(d.count[DIAG_EVIDENCE_BAD_ROW], 2);
    assert_string_equal(d.first[DIAG_EVIDENCE_BAD_ROW], "f.txt:9");
    assert_int_equal(ev_first_line(&d, DIAG_EVIDENCE_BAD_ROW), 9);
    assert_string_equal(diag_key(DIAG_EVIDENCE_BAD_ROW), "evidence_bad_row");
    assert_int_equal(diag_total(&d), 2);
}

/* Evidence files may be gzip-compressed; detection and parsing see the
 * decompressed text. */
static void test_gzip_evidence(void **state)
{
    (void)state;
    char src[1200], gz[] = "/tmp/cp_ev_gz_XXXXXX";
    size_t len;
    char *data = ev_load_fixture("perftest/old-mb-sec-roce-all-sizes.txt", &len, src, sizeof src);
    int fd = mkstemp(gz);
    assert_true(fd >= 0);
    gzFile z = gzdopen(fd, "wb");
    assert_non_null(z);
    assert_int_equal(gzwrite(z, data, (unsigned)len), (int)len);
    assert_int_equal(gzclose(z), Z_OK);
    free(data);
    int conf;
    cp_error err;
    assert_string_equal(rd_evidence_detect_path(gz, &conf, &err), "perftest");
    const rd_evidence_kind *k;
    void *facts;
    assert_int_equal(rd_evidence_load(gz, &k, &facts, &err), 0);
    assert_int_equal(((const rd_perftest *)facts)->n_runs, 2);
    k->free(facts);
    unlink(gz);
}

static double num_at(const rep_report *r, const char *path)
{
    const rep_node *n = rep_path(r, path);
    if (!n)
        fail_msg("no %s in the report", path);
    if (n->type == REP_INT)
        return (double)n->v.i;
    if (n->type != REP_NUM)
        fail_msg("%s is not a number", path);
    return n->v.d;
}

/* Each kind's facts land in the report with their lines, and render. */
static void test_reports(void **state)
{
    (void)state;
    static const char *fixtures[] = {
        "nccl-tests/new-2node-allgather-wrong-na.txt", "perftest/old-mb-sec-roce-all-sizes.txt",
        "topo/one-gpu-bad-cell.txt", "dmon/dcgmi-id-line-na-two-gpus.txt",
        "fio/fio2-randrw-two-jobs.txt", "iperf/iperf3-bitrate-two-streams.txt",
    };
    rep_report *r = rep_new("chainprof.test/1", 0, NULL);
    rep_node *arr = rep_arr(r, r->root, "evidence", NULL);
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        char path[1200];
        const rd_evidence_kind *k;
        void *facts;
        cp_error err;
        ev_fixture_path(fixtures[i], path, sizeof path);
        assert_int_equal(rd_evidence_load(path, &k, &facts, &err), 0);
        rep_node *o = rep_obj(r, arr, NULL, NULL);
        rep_str(r, o, "kind", NULL, k->key);
        k->report(facts, r, o);
        assert_non_null(k->diag(facts));
        k->free(facts);
    }
    CP_ASSERT_NEAR(num_at(r, "evidence.0.runs.0.peak_busbw_gbps"), 0.09, 1e-12);
    CP_ASSERT_NEAR(num_at(r, "evidence.0.runs.0.peak_line"), 16, 0);
    CP_ASSERT_NEAR(num_at(r, "evidence.0.runs.0.hosts"), 2, 0);
    assert_string_equal(rep_path(r, "evidence.0.runs.0.op")->v.s, "all_gather");
    CP_ASSERT_NEAR(num_at(r, "evidence.1.runs.0.bw_avg_gbit_s"), 11190.25 * 1048576.0 * 8 / 1e9, 1e-9);
    CP_ASSERT_NEAR(num_at(r, "evidence.1.runs.1.t_typical_us"), 3.02, 1e-12);
    assert_int_equal(rep_path(r, "evidence.1.runs.1.t_p99_us")->type, REP_NUM); /* NaN: null */
    assert_string_equal(rep_path(r, "evidence.2.gpu_paths.0.nic_path")->v.s, "phb");
    CP_ASSERT_NEAR(num_at(r, "evidence.3.columns.0.max"), 0.812, 1e-12);
    CP_ASSERT_NEAR(num_at(r, "evidence.4.jobs.0.read.clat_p99_us"), 4960, 1e-9);
    CP_ASSERT_NEAR(num_at(r, "evidence.5.bits_per_s"), 9.16e9, 1);
    CP_ASSERT_NEAR(num_at(r, "evidence.5.retransmits"), 42, 0);
    cp_buf out = CP_BUF_INIT;
    render_opts ro;
    memset(&ro, 0, sizeof ro);
    cp_error err;
    assert_int_equal(render_json(r, &out, &ro, &err), 0);
    assert_non_null(strstr(out.data, "\"peak_busbw_gbps\""));
    cp_buf_reset(&out);
    assert_int_equal(render_text(r, &out, &ro, &err), 0);
    cp_buf_free(&out);
    rep_free(r);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixtures_detected),
        cmocka_unit_test(test_not_recognised),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_load_fixture),
        cmocka_unit_test(test_text_plumbing),
        cmocka_unit_test(test_reports),
        cmocka_unit_test(test_gzip_evidence),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_samples_detected),
    };
    int f = cmocka_run_group_tests_name("evidence_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("evidence_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
