/* test_monitor.c - `chainprof monitor`'s pieces against captured trees and
 * the fake NVML: the samples (src/monitor/mon.c), the Prometheus exposition
 * (exact lines for the fixtures' own numbers, worked out in the comments),
 * the alerts through the rule book (the window as evidence), the same
 * alerts from the JSON lines read back as evidence (rd_monitor.c), and the
 * HTTP request judge of the endpoint.
 * Fixtures (tests/fixtures/fsroot): vm-a (a captured VM), ib-a and ib-b
 * (written by hand: three mlx5 ports, the second sample after traffic on
 * mlx5_0 and errors on mlx5_1, whose link runs at 200 Gb/s beside a 400 Gb/s
 * peer). */
#include "test_util.h"
#include "analysis/rulebook.h"
#include "base/util.h"
#include "monitor/mon.h"
#include "monitor/mon_http.h"
#include "readers/evidence.h"

#include <math.h>
#include <string.h>

static const char *fixture(const char *name, char *dir, size_t size)
{
    char rel[64];
    snprintf(rel, sizeof rel, "fsroot/%s", name);
    return cp_test_fixture(rel, dir, size);
}

/* The exposition of one sample of a fixture (no GPU). */
static void expose(const char *name, cp_buf *out)
{
    char dir[1024];
    mon m;
    mon_open(&m, fixture(name, dir, sizeof dir), false);
    mon_sample s = { 0 };
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(mon_take(&m, &s, &err), 0);
    mon_prom(&m, &s, NULL, 0, out);
    mon_sample_free(&s);
    mon_close(&m);
}

static void has_line(const cp_buf *b, const char *line)
{
    char want[512];
    snprintf(want, sizeof want, "\n%s\n", line);
    if (!strstr(cp_buf_str(b), want))
        fail_msg("missing line: %s", line);
}

static void test_host_storage(void **state)
{
    (void)state;
    cp_buf b = { 0 };
    expose("vm-a", &b);
    /* /proc/stat "cpu  58025 121 28446 81878 989 0 1241 348": ticks / 100 */
    has_line(&b, "# TYPE chainprof_cpu_seconds_total counter");
    has_line(&b, "chainprof_cpu_seconds_total{mode=\"user\"} 580.25");
    has_line(&b, "chainprof_cpu_seconds_total{mode=\"idle\"} 818.78");
    has_line(&b, "chainprof_cpu_seconds_total{mode=\"steal\"} 3.48");
    /* vda: 10300978 sectors read x 512, 18874528 written x 512, read 74516 ms, busy 18764 ms */
    has_line(&b, "chainprof_disk_read_bytes_total{device=\"vda\"} 5274100736");
    has_line(&b, "chainprof_disk_written_bytes_total{device=\"vda\"} 9663758336");
    has_line(&b, "chainprof_disk_read_time_seconds_total{device=\"vda\"} 74.516");
    has_line(&b, "chainprof_disk_io_time_seconds_total{device=\"vda\"} 18.764");
    assert_null(strstr(cp_buf_str(&b), "device=\"vda1\"")); /* partitions are their disk's */
    has_line(&b, "# TYPE chainprof_pressure_stalled_seconds_total counter");
    has_line(&b, "# TYPE chainprof_memory_available_bytes gauge");
    has_line(&b, "chainprof_gpu_sampling_up{reason=\"GPU sampling off (--no-gpu)\"} 0");
    /* every family has HELP then TYPE before its samples, and counters end in _total */
    const char *p = cp_buf_str(&b);
    char last_type[128] = "";
    while (*p) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol);
        if (strncmp(p, "# TYPE ", 7) == 0) {
            char name[128], type[16];
            assert_int_equal(sscanf(p, "# TYPE %127s %15s", name, type), 2);
            if (strcmp(type, "counter") == 0)
                assert_true(cp_str_ends(name, "_total"));
            snprintf(last_type, sizeof last_type, "%s", name);
        } else if (*p != '#') {
            size_t n = strlen(last_type);
            assert_true(n > 0 && strncmp(p, last_type, n) == 0 && (p[n] == '{' || p[n] == ' '));
        }
        p = eol + 1;
    }
    cp_buf_free(&b);
}

static void test_infiniband(void **state)
{
    (void)state;
    cp_buf b = { 0 };
    expose("ib-b", &b);
    /* port_xmit_data 5000000000 words x 4 bytes */
    has_line(&b, "chainprof_infiniband_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} 20000000000");
    has_line(&b, "chainprof_infiniband_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} 30000000000");
    /* "200 Gb/sec (4X HDR)" x 1.25e8 bytes/s per Gbit/s */
    has_line(&b, "chainprof_infiniband_port_rate_bytes{device=\"mlx5_1\",port=\"1\"} 25000000000");
    has_line(&b, "chainprof_infiniband_port_symbol_error_total{device=\"mlx5_1\",port=\"1\"} 19");
    has_line(&b, "chainprof_infiniband_port_link_downed_total{device=\"mlx5_1\",port=\"1\"} 2");
    has_line(&b, "chainprof_infiniband_port_info{device=\"mlx5_2\",port=\"1\",link_layer=\"Ethernet\",state=\"ACTIVE\"} 1");
    /* the congestion counters only where the driver has them (mlx5_2's hw_counters) */
    has_line(&b, "chainprof_infiniband_port_cnp_sent_total{device=\"mlx5_2\",port=\"1\"} 1600");
    assert_null(strstr(cp_buf_str(&b), "chainprof_infiniband_port_cnp_sent_total{device=\"mlx5_0\""));
    assert_true(isnan(mon_ib_rate_gbit_s("garbage")));
    assert_true(mon_ib_rate_gbit_s("2.5 Gb/sec (1X SDR)") == 2.5);
    cp_buf_free(&b);
}

static void test_escape(void **state)
{
    (void)state;
    cp_buf b = { 0 };
    mon_prom_escape(&b, "a\"b\\c\nd");
    assert_string_equal(cp_buf_str(&b), "a\\\"b\\\\c\\nd");
    cp_buf_free(&b);
}

/* The codes of the rule book's findings, sorted by code, space-separated. */
static void codes_of(const ev_set *set, char *out, size_t size)
{
    rb_opts o = { 0 };
    rb_ctx *c = rb_run(set, &o);
    const char *v[64];
    size_t n = 0;
    for (size_t i = 0; i < c->n && n < 64; i++)
        v[n++] = c->v[i].code;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            const char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "", v[i]);
    rb_free(c);
}

/* Samples of ib-a then ib-b: the window's alerts, and the same alerts from
 * the JSON lines of the two samples read back as evidence. */
static void test_alerts_and_jsonl(void **state)
{
    (void)state;
    char da[1024], db[1024];
    mon ma, mb;
    mon_open(&ma, fixture("ib-a", da, sizeof da), false);
    mon_open(&mb, fixture("ib-b", db, sizeof db), false);
    mon_sample a = { 0 }, b = { 0 };
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(mon_take(&ma, &a, &err), 0);
    assert_int_equal(mon_take(&mb, &b, &err), 0);
    assert_int_equal(a.n_ib, 3);
    assert_string_equal(a.ib[1].dev, "mlx5_1");
    assert_string_equal(a.ib[1].state, "ACTIVE");

    mon_window w;
    mon_window_init(&w, 4);
    mon_window_push(&w, &a);
    mon_window_push(&w, &b);
    ev_set set;
    ev_set_init(&set);
    mon_window_evidence(&w, &set);
    char live[512];
    codes_of(&set, live, sizeof live);
    /* mlx5_1: symbol_error 7 -> 19, link_downed 1 -> 2, port_rcv_errors 2 -> 5, 200 < 400 Gb/s;
     * mlx5_2 (Ethernet) has no peer of its link layer and no errors */
    assert_string_equal(live, "IB_LINK_DOWNED IB_RCV_ERRORS_RISING IB_SYMBOL_ERRORS_RISING NIC_BELOW_LINE_RATE");
    const ev_file *f = ev_next(&set, EV_COUNTERS, NULL);
    assert_non_null(f);
    ev_set_free(&set);

    cp_buf lines = { 0 };
    mon_json(&ma, NULL, &a, NULL, 0, &lines);
    cp_buf_putc(&lines, '\n');
    mon_json(&mb, &a, &b, NULL, 0, &lines);
    cp_buf_putc(&lines, '\n');
    ev_set_init(&set);
    rd_ev_read_buffer(&set, "node.jsonl", lines.data, lines.len);
    assert_int_equal(ev_count(&set, EV_COUNTERS), 1);
    char replay[512];
    codes_of(&set, replay, sizeof replay);
    assert_string_equal(replay, live);
    ev_set_free(&set);
    cp_buf_free(&lines);
    mon_window_free(&w);
    mon_sample_free(&a);
    mon_sample_free(&b);
    mon_close(&ma);
    mon_close(&mb);
}

/* The fake NVML (tests/fakes/fake_nvml.c): GPU 1 power-capped and hot, its
 * PCIe replays rising, one Xid 79 pending at start. */
static void test_gpu_fake(void **state)
{
    (void)state;
    char lib[1024];
    snprintf(lib, sizeof lib, "%s/fakes/one", CP_BUILD_DIR);
    setenv("CHAINPROF_GPU_LIB_DIR", lib, 1);
    char dir[1024];
    mon m;
    mon_open(&m, fixture("ib-a", dir, sizeof dir), true);
    unsetenv("CHAINPROF_GPU_LIB_DIR");
    if (!m.gpu_ok) {
        fprintf(stderr, "skipping the fake NVML case: %s\n", m.gpu_why);
        mon_close(&m);
        return;
    }
    mon_sample s = { 0 };
    cp_error err;
    cp_error_clear(&err);
    mon_window w;
    mon_window_init(&w, 4);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mon_take(&m, &s, &err), 0);
        mon_window_push(&w, &s);
    }
    assert_int_equal(s.n_gpus, 2);
    assert_true(s.gpus[1].power_w == 700.0);
    assert_int_equal(s.gpus[1].throttle_reasons, 0xc);
    assert_int_equal(s.gpus[1].last_xid, 79);
    cp_buf b = { 0 };
    mon_prom(&m, &s, NULL, 0, &b);
    has_line(&b, "chainprof_gpu_power_watts{gpu=\"1\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000001\"} 700");
    has_line(&b, "chainprof_gpu_power_watts{gpu=\"0\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000000\"} 412.5");
    has_line(&b, "chainprof_gpu_utilization_ratio{gpu=\"0\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000000\"} 0.75");
    has_line(&b, "chainprof_gpu_sm_clock_hertz{gpu=\"1\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000001\"} 1410000000");
    /* NVLink: 8192 KiB received by GPU 0 */
    has_line(&b, "chainprof_gpu_nvlink_received_bytes_total{gpu=\"0\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000000\"} 8388608");
    has_line(&b, "chainprof_gpu_clock_throttled{gpu=\"1\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000001\",reason=\"sw_power_cap\"} 1");
    has_line(&b, "chainprof_gpu_clock_throttled{gpu=\"0\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000000\",reason=\"sw_power_cap\"} 0");
    has_line(&b, "chainprof_gpu_xid_errors_total{gpu=\"1\",uuid=\"GPU-fa4e0000-0000-0000-0000-000000000001\"} 1");
    ev_set set;
    ev_set_init(&set);
    mon_window_evidence(&w, &set);
    char codes[512];
    codes_of(&set, codes, sizeof codes);
    /* GPU 1: throttled (dmon pviol/tviol), 87 C, replays 3 -> 6, one Xid; plus ib-a's slow mlx5_1 */
    assert_string_equal(codes, "DMON_HOT DMON_THROTTLED GPU_PCIE_REPLAY_RISING GPU_XID_REPORTED NIC_BELOW_LINE_RATE");
    ev_set_free(&set);
    cp_buf_free(&b);
    mon_window_free(&w);
    mon_sample_free(&s);
    mon_close(&m);
}

static void test_http_status(void **state)
{
    (void)state;
    bool head;
#define REQ(s) s, strlen(s)
    assert_int_equal(mon_http_status_of(REQ("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), true, &head), 200);
    assert_false(head);
    assert_int_equal(mon_http_status_of(REQ("HEAD /metrics HTTP/1.0\r\n\r\n"), true, &head), 200);
    assert_true(head);
    assert_int_equal(mon_http_status_of(REQ("GET /metrics?x=1 HTTP/1.1\r\n\r\n"), true, &head), 200);
    assert_int_equal(mon_http_status_of(REQ("GET / HTTP/1.1\r\n\r\n"), true, &head), 404);
    assert_int_equal(mon_http_status_of(REQ("GET /metricsx HTTP/1.1\r\n\r\n"), true, &head), 404);
    assert_int_equal(mon_http_status_of(REQ("POST /metrics HTTP/1.1\r\n\r\n"), true, &head), 405);
    assert_int_equal(mon_http_status_of(REQ("hello\r\n\r\n"), true, &head), 400);
    assert_int_equal(mon_http_status_of(REQ("GET /metrics SMTP\r\n\r\n"), true, &head), 400);
    assert_int_equal(mon_http_status_of(REQ("GET /met"), false, &head), 408);
    char big[MON_HTTP_MAX_REQUEST];
    memset(big, 'a', sizeof big);
    assert_int_equal(mon_http_status_of(big, sizeof big, false, &head), 431);
#undef REQ
    mon_http h;
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(mon_http_listen(&h, "not-an-address", &err), CP_ERR_USAGE);
    assert_int_equal(mon_http_listen(&h, "127.0.0.1:0", &err), 0);
    assert_true(strncmp(h.bound, "127.0.0.1:", 10) == 0);
    mon_http_close(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_storage), cmocka_unit_test(test_infiniband),
        cmocka_unit_test(test_escape),       cmocka_unit_test(test_alerts_and_jsonl),
        cmocka_unit_test(test_gpu_fake),     cmocka_unit_test(test_http_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
