/* test_net.c - address parsing, a loopback TCP session, and the errors a
 * refused port and a silent listener give (code and message). */
#include "test_util.h"

#include "probe/net_tcp.h"

#include <unistd.h>

static void test_split(void **state)
{
    (void)state;
    char buf[128];
    const char *h, *p;
    cp_error err;
    assert_int_equal(net_split_hostport("10.0.0.1:5201", false, buf, sizeof buf, &h, &p, &err), 0);
    assert_string_equal(h, "10.0.0.1");
    assert_string_equal(p, "5201");
    assert_int_equal(net_split_hostport("5201", true, buf, sizeof buf, &h, &p, &err), 0);
    assert_string_equal(h, "");
    assert_string_equal(p, "5201");
    assert_int_equal(net_split_hostport("[::1]:7", false, buf, sizeof buf, &h, &p, &err), 0);
    assert_string_equal(h, "::1");
    assert_string_equal(p, "7");
    assert_int_equal(net_split_hostport("5201", false, buf, sizeof buf, &h, &p, &err), CP_ERR_USAGE);
    assert_int_equal(net_split_hostport("h:70000", false, buf, sizeof buf, &h, &p, &err), CP_ERR_USAGE);
    assert_int_equal(net_split_hostport("h:0", false, buf, sizeof buf, &h, &p, &err), CP_ERR_USAGE);
    assert_int_equal(net_split_hostport(":80", false, buf, sizeof buf, &h, &p, &err), CP_ERR_USAGE);
    assert_int_equal(net_split_hostport("[::1]7", false, buf, sizeof buf, &h, &p, &err), CP_ERR_USAGE);
}

static void test_loopback(void **state)
{
    (void)state;
    net_cfg cfg = {.streams = 2, .seconds = 0.2, .ping_count = 50, .timeout_s = 5};
    net_result r;
    cp_error err;
    cp_error_clear(&err);
    int rc = net_loopback(&cfg, &r, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(r.streams, 2);
    assert_true(r.oneway_gbps > 0 && r.bidir_gbps > 0);
    assert_true(r.oneway_bytes >= 128u << 10); /* at least one write arrived */
    assert_true(r.rtt_min_us > 0 && r.rtt_min_us <= r.rtt_p50_us && r.rtt_p50_us <= r.rtt_p99_us &&
                r.rtt_p99_us <= r.rtt_max_us);
}

static void test_errors(void **state)
{
    (void)state;
    /* a port we held and closed: nothing listens there */
    net_cfg l = {.host = "127.0.0.1", .port = "0", .timeout_s = 1};
    int fd, port;
    cp_error err;
    assert_int_equal(net_listen(&l, &fd, &port, &err), 0);
    char pbuf[16];
    snprintf(pbuf, sizeof pbuf, "%d", port);
    /* listening but nobody connects: accept gives up after the timeout */
    net_result r;
    assert_int_equal(net_serve(fd, &l, &r, &err), CP_ERR_TIMEOUT);
    assert_non_null(strstr(err.msg, "no peer connected within 1 s"));
    close(fd);
    net_cfg c = {.host = "127.0.0.1", .port = pbuf, .timeout_s = 1, .seconds = 0.1};
    assert_int_equal(net_client(&c, &r, &err), CP_ERR_IO);
    assert_non_null(strstr(err.msg, "connection refused"));
    assert_non_null(strstr(err.msg, pbuf));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split), cmocka_unit_test(test_loopback), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
