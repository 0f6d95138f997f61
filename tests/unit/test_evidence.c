/* test_evidence.c - the evidence model and the one reading loop
 * (src/model/evidence.h, src/readers/evidence.h): which kinds an input
 * yields (one input may yield several), damage merged into the set's
 * diagnostics, compressed inputs, the kinds' report entries, the loop's
 * line handling, and the shared text plumbing of the readers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "evidence_testutil.h"
#include "model/evidence.h"
#include "readers/evidence.h"
#include "render/render.h"

#include <unistd.h>
#include <zlib.h>

/* The kinds the loop finds in a buffer, as "nccl_log,nccl_tests". */
static const char *kinds_of_buf(const char *name, const char *data, size_t len, char *buf, size_t size)
{
    ev_set s;
    ev_set_init(&s);
    rd_ev_read_buffer(&s, name, data, len);
    ev_kinds_str(s.inputs[0].kinds, buf, size);
    ev_set_free(&s);
    return buf;
}

static const char *kinds_of_path(const char *path, char *buf, size_t size)
{
    ev_set s;
    ev_set_init(&s);
    cp_error err;
    char *paths[] = {(char *)path};
    if (rd_ev_read_files(&s, paths, 1, 1, NULL, &err) < 0)
        fail_msg("%s: %s", path, err.msg);
    ev_kinds_str(s.inputs[0].kinds, buf, size);
    ev_set_free(&s);
    return buf;
}

static void expect_fixture_kind(const char *rel, const char *kinds)
{
    char path[1200], buf[128];
    ev_fixture_path(rel, path, sizeof path);
    if (strcmp(kinds_of_path(path, buf, sizeof buf), kinds) != 0)
        fail_msg("%s: kinds %s, expected %s", rel, buf, kinds);
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
    expect_fixture_kind("diagnose/xid_ecc/nvidia-smi-q.txt", "nvidia_smi_q");
    expect_fixture_kind("diagnose/xid_ecc/dmesg-gpu-c.txt", "kernel_log");
}

static void test_not_recognised(void **state)
{
    (void)state;
    char buf[128];
    const char *text = "Traceback (most recent call last):\n  File \"train.py\", line 3\n";
    assert_string_equal(kinds_of_buf("t.txt", text, strlen(text), buf, sizeof buf), "unknown");
    assert_string_equal(kinds_of_buf("e.txt", "", 0, buf, sizeof buf), "unknown");
    const char *prose = "epoch 1 loss 2.0\nthe NCCL library is mentioned once\n";
    assert_string_equal(kinds_of_buf("p.txt", prose, strlen(prose), buf, sizeof buf), "unknown");
    ev_set s;
    ev_set_init(&s);
    cp_error err;
    cp_error_clear(&err);
    char *missing[] = {"/nonexistent/x.txt"};
    assert_true(rd_ev_read_files(&s, missing, 1, 1, NULL, &err) < 0);
    assert_int_equal(err.code, CP_ERR_IO);
    ev_set_free(&s);
}

/* Every kind has one reader and a stable key; a second reader of a kind is
 * only a whole-file converter claimed by its file name (.ncu-rep). */
static void test_tables(void **state)
{
    (void)state;
    size_t n;
    const rd_ev_reader *rs = rd_ev_readers(&n);
    size_t converters = 0;
    for (size_t i = 0; i < n; i++)
        if (rd_ev_reader_of(rs[i].kind) != &rs[i]) {
            assert_non_null(rs[i].file);
            assert_non_null(rs[i].ext);
            converters++;
        }
    assert_int_equal(n - converters, EV__COUNT);
    for (int k = 0; k < EV__COUNT; k++) {
        assert_int_equal(ev_kind_by_key(ev_kind_key((ev_kind)k)), k);
        const rd_ev_reader *r = rd_ev_reader_of((ev_kind)k);
        assert_non_null(r);
        assert_true(r >= rs && r < rs + n);
        assert_int_equal(r->sniff("", 0), 0);
    }
    assert_int_equal(ev_kind_by_key("nope"), -1);
}

/* One input, several kinds: nccl-tests with NCCL_DEBUG=INFO interleaved,
 * and a table followed by dmon samples. */
static void test_several_kinds(void **state)
{
    (void)state;
    const char *nt =
        "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
        "#  Rank  0 Group  0 Pid   4766 on   n1 device  0 [0x21] NVIDIA A100-SXM4-80GB\n"
        "n1:4766:4766 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "n1:4766:4780 [0] NCCL INFO Using network Socket\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "n1:4766:4787 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\n"
        "           8             2     float     sum      -1    38.83    0.00    0.00      0    40.43    0.00    0.00      0\n"
        "          16             4     float     sum      -1    38.73    0.00    0.00      0    38.59    0.00    0.00      0\n"
        "# Out of bounds values : 0 OK\n"
        "# Avg bus bandwidth    : 0.00\n";
    char buf[128];
    assert_string_equal(kinds_of_buf("nt.log", nt, strlen(nt), buf, sizeof buf), "nccl_log,nccl_tests");
    ev_set s;
    ev_set_init(&s);
    rd_ev_read_buffer(&s, "nt.log", nt, strlen(nt));
    const ev_file *t = ev_next(&s, EV_NCCL_TESTS, NULL), *l = ev_next(&s, EV_NCCL_LOG, NULL);
    assert_non_null(t);
    assert_non_null(l);
    assert_int_equal(t->as.nccltests->runs[0].n_rows, 2);
    assert_int_equal(l->as.nccl->transports[EV_NCCL_TR_SHM], 1);
    assert_string_equal(l->path, t->path);
    assert_int_equal(ev_count(&s, EV_NCCL_LOG), 1);
    ev_set_free(&s);
    const char *two =
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
        "           8             2     float     sum    25.34    0.00    0.00  0e+00    25.23    0.00    0.00  0e+00\n"
        "# Avg bus bandwidth    : 0.0\n"
        "# gpu   pwr    sm\n# Idx     W     %\n    0   100    50\n";
    assert_string_equal(kinds_of_buf("two.txt", two, strlen(two), buf, sizeof buf), "nccl_tests,dmon");
}

/* Damage a reader counts reaches the set's diagnostics (and so the report's). */
static void test_damage_merged(void **state)
{
    (void)state;
    char path[1200];
    ev_fixture_path("nccl-tests/new-2node-allgather-wrong-na.txt", path, sizeof path);
    ev_set s;
    ev_set_init(&s);
    char *paths[] = {path};
    assert_int_equal(rd_ev_read_files(&s, paths, 1, 1, NULL, NULL), 0);
    diag_set d;
    diag_init(&d);
    ev_set_diag(&s, &d);
    assert_int_equal(d.count[DIAG_EVIDENCE_BAD_VALUE], 1);
    assert_int_equal(d.count[DIAG_EVIDENCE_BAD_ROW], 1);
    assert_non_null(strstr(d.first[DIAG_EVIDENCE_BAD_ROW], "new-2node-allgather-wrong-na.txt:18"));
    ev_set_free(&s);
}

/* The loop skips "#@" lines (numbers still count them), cuts nothing short,
 * strips CR, and gives untimed lines the last time of their input. */
static void test_loop_lines(void **state)
{
    (void)state;
    const char *log = "#@ source: a note that quotes NCCL WARN NET/IB : Got completion from peer with error 12\n"
                      "[2025-03-21 02:07:08] a:1:2 [0] misc/socket.cc:1 NCCL WARN Connect to 10.9.9.9<1234> failed : refused\r\n"
                      "b:3:4 [0] misc/socket.cc:1 NCCL WARN Connect to 10.9.9.8<1234> failed : refused\n";
    ev_set s;
    ev_set_init(&s);
    rd_ev_read_buffer(&s, "rank4.log", log, strlen(log));
    const ev_file *f = ev_next(&s, EV_NCCL_LOG, NULL);
    assert_non_null(f);
    const ev_nccl *n = f->as.nccl;
    assert_int_equal(n->n_issues, 2); /* the quoted error 12 of the #@ line is not one */
    assert_int_equal(n->issues[0].at.line, 2);
    assert_int_equal(n->issues[0].kind, EV_NCCL_ISSUE_CONNECT);
    assert_int_equal(n->issues[0].at.ts.year, 2025);
    assert_int_equal(n->issues[1].at.ts.year, 2025); /* inherited */
    assert_int_equal(n->issues[1].at.rank, 4);       /* from the file name */
    assert_null(strchr(n->issues[0].at.text, '\r'));
    assert_int_equal(s.inputs[0].lines, 3);
    ev_set_free(&s);
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

/* Junk before a log (binary lines, a line past RD_EV_MAX_LINE_BYTES) is left
 * out of what the sniffers judge and counted; the log is still recognised and
 * its line numbers stay those of the file: the same from a buffer and a file. */
static void junk_head_check(ev_set *s, const char *what)
{
    char kinds[128];
    ev_kinds_str(s->inputs[0].kinds, kinds, sizeof kinds);
    if (strcmp(kinds, "nccl_tests") != 0)
        fail_msg("%s: kinds %s", what, kinds);
    diag_set d;
    diag_init(&d);
    ev_set_diag(s, &d);
    assert_int_equal(d.count[DIAG_UNPARSED_LINE], 4);
    assert_int_equal(d.count[DIAG_LIMIT_REACHED], 1);
    assert_non_null(strstr(d.first[DIAG_EVIDENCE_BAD_ROW], "wrong-na.txt:23")); /* 18 + 5 junk lines */
}

static void test_junk_head(void **state)
{
    (void)state;
    char src[1200], tmp[] = "/tmp/cp_ev_junk_XXXXXX";
    size_t len;
    char *log = ev_load_fixture("nccl-tests/new-2node-allgather-wrong-na.txt", &len, src, sizeof src);
    static const char bin[] = "\x01\x02\x03\x04 b\n\x05\x06\x07\n\x08\x0e\x0f\n\0\0\0\n";
    size_t nb = sizeof bin - 1, nlong = RD_EV_MAX_LINE_BYTES + 10, n = nb + nlong + 1 + len;
    char *buf = malloc(n);
    assert_non_null(buf);
    memcpy(buf, bin, nb);
    memset(buf + nb, 'x', nlong);
    buf[nb + nlong] = '\n';
    memcpy(buf + nb + nlong + 1, log, len);
    ev_set s;
    ev_set_init(&s);
    rd_ev_read_buffer(&s, "wrong-na.txt", buf, n);
    junk_head_check(&s, "buffer");
    ev_set_free(&s);
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, n), (ssize_t)n);
    close(fd);
    char named[64];
    snprintf(named, sizeof named, "%s-wrong-na.txt", tmp);
    assert_int_equal(rename(tmp, named), 0);
    ev_set_init(&s);
    char *paths[] = {named};
    assert_int_equal(rd_ev_read_files(&s, paths, 1, 1, NULL, NULL), 0);
    junk_head_check(&s, "file");
    ev_set_free(&s);
    unlink(named);
    free(buf);
    free(log);
}

/* Evidence files may be gzip-compressed; the loop reads the decompressed text. */
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
    ev_set s;
    ev_set_init(&s);
    char *paths[] = {gz};
    assert_int_equal(rd_ev_read_files(&s, paths, 1, 1, NULL, NULL), 0);
    const ev_file *f = ev_next(&s, EV_PERFTEST, NULL);
    assert_non_null(f);
    assert_int_equal(f->as.perftest->n_runs, 2);
    assert_int_equal(s.inputs[0].bytes, (long long)len);
    ev_set_free(&s);
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
        "diagnose/xid_ecc/nvidia-smi-q.txt", "diagnose/xid_ecc/dmesg-gpu-c.txt", "diagnose/ib_first/rank2.log",
    };
    ev_set s;
    ev_set_init(&s);
    char paths[sizeof fixtures / sizeof fixtures[0]][1200];
    char *pv[sizeof fixtures / sizeof fixtures[0]];
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        ev_fixture_path(fixtures[i], paths[i], sizeof paths[i]);
        pv[i] = paths[i];
    }
    assert_int_equal(rd_ev_read_files(&s, pv, sizeof fixtures / sizeof fixtures[0], 2, NULL, NULL), 0);
    rep_report *r = rep_new("chainprof.test/1", 0, NULL);
    rep_node *arr = rep_arr(r, r->root, "evidence", NULL);
    for (size_t i = 0; i < s.n_files; i++) {
        rep_node *o = rep_obj(r, arr, NULL, NULL);
        rep_str(r, o, "kind", NULL, ev_kind_key(s.files[i].kind));
        ev_file_report(&s.files[i], r, o);
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
    assert_string_equal(rep_path(r, "evidence.6.kind")->v.s, "nvidia_smi_q");
    assert_string_equal(rep_path(r, "evidence.7.kind")->v.s, "kernel_log");
    assert_string_equal(rep_path(r, "evidence.8.kind")->v.s, "nccl_log");
    assert_string_equal(rep_path(r, "evidence.8.network")->v.s, "IB");
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
    ev_set_free(&s);
}

/* The readers' kinds of some real samples: tables their kind, logs theirs. */
static void test_samples_detected(void **state)
{
    (void)state;
    static const struct { const char *rel, *kinds; } cases[] = {
        {"nccl-tests/abci-a100-2node-16gpu-sharp-old-error-column.txt", "nccl_tests"},
        {"nccl-tests/coreweave-h100-64gpu-ib-sharp-allreduce.txt", "nccl_tests"},
        {"nccl-tests/gtx1080x2-macos-port-old-format-all-collectives-poor-busbw.txt", "nccl_tests"},
        {"nccl-tests/a100-pcie-2node-ib-tests-built-without-mpi-two-independent-2rank-jobs-ncclt182.txt", "nccl_log,nccl_tests"},
        {"nccl/rtx5090x2-nccl2251-ncclmaxsharedmem-exceeds-cuda-failure-invalid-argument-ncclt287.txt", "nccl_log,nccl_tests"},
        {"perftest/cx7-ndr400-b2b-send-lat-read-write-new-perftest.txt", "perftest"},
        {"perftest/cx5-100g-roce-pcie-gen3-x8-downgraded-56gbps-write-read-send-mark1lab.txt", "perftest,lspci"},
        {"topo/h100-8gpu-8nic-nv18-sglang30401.txt", "nvidia_smi_topo"},
        {"dmon/dcgmi-dmon-triton-gke-t4-1vs4-instances.txt", "dmon"},
        {"fio-iperf/fio-seqwrite-zfs-psync-fio31-fio815.txt", "fio"},
        {"fio-iperf/fio-osc-scratch-seq-1m-796mibs-vs-randread-4k-22.9mibs-saev.txt", "fio"},
        {"fio-iperf/iperf3-old-bandwidth-header-server-and-client-19gbps.txt", "iperf3"},
        {"nccl/aws-v100-no-efa-ofi-warn-socket-fallback-nccl248-nccl398.txt", "nccl_log"},
        {"nccl-tests/k8s-sriov-pods-different-mlx5-names-ucx-mpi-ibv-create-ah-no-such-device-ncclt327.txt", "launcher_log"},
        {"pytorch/watchdog-timeout-desync-report-collective-mismatch.txt", "pytorch_log"},
        {"pytorch/h100-ci-nvls-multicast-bind-cuda-401-fabric-manager-failure-pytorch177472.txt", "nccl_log,pytorch_log"},
        {"pytorch/xid79-fallen-off-bus-multiline-dmesg-nvsentinel155.txt", "kernel_log"},
        {"pytorch/nvidia-smi-q-remapped-rows-uncorrectable-4-pending-yes-reset-required-gpud80.txt", "nvidia_smi_q"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1200], buf[128];
        char sub[600];
        snprintf(sub, sizeof sub, "logs/%s", cases[i].rel);
        if (!cp_test_data(sub, path, sizeof path))
            skip();
        if (strcmp(kinds_of_path(path, buf, sizeof buf), cases[i].kinds) != 0)
            fail_msg("%s: kinds %s, expected %s", cases[i].rel, buf, cases[i].kinds);
    }
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixtures_detected),
        cmocka_unit_test(test_not_recognised),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_several_kinds),
        cmocka_unit_test(test_damage_merged),
        cmocka_unit_test(test_loop_lines),
        cmocka_unit_test(test_text_plumbing),
        cmocka_unit_test(test_reports),
        cmocka_unit_test(test_gzip_evidence),
        cmocka_unit_test(test_junk_head),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_samples_detected),
    };
    int f = cmocka_run_group_tests_name("evidence_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("evidence_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
