/* test_topo.c - topology model: dedupe of entities, link refinement, JSON
 * save/load and the loader's handling of damaged input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/topo.h"

static topo *two_host_model(void)
{
    topo *t = topo_new();
    assert_non_null(t);
    int32_t f = topo_add_source(t, "probe \"one\".json");
    topo_src src = {f, 7};
    int h0 = topo_add_host(t, "node-a", src), h1 = topo_add_host(t, "node-b", src);
    assert_int_equal(h0, 0);
    assert_int_equal(h1, 1);
    assert_int_equal(topo_add_host(t, "node-a", src), 0); /* existing */
    int s0 = topo_add_socket(t, 0, 0, src);
    int n0 = topo_add_numa(t, 0, 0, src);
    t->numa_nodes[n0].socket = s0;
    snprintf(t->numa_nodes[n0].cpus, sizeof t->numa_nodes[n0].cpus, "0-31");
    int g0 = topo_add_gpu(t, 0, 0, src), g1 = topo_add_gpu(t, 0, 1, src);
    int g2 = topo_add_gpu(t, 1, 0, src);
    assert_int_equal(topo_add_gpu(t, 0, 1, src), g1);
    assert_int_equal(g2, 2); /* same index on another host is another GPU */
    snprintf(t->gpus[g0].name, sizeof t->gpus[g0].name, "NVIDIA H100 80GB HBM3");
    t->gpus[g0].numa = n0;
    int c0 = topo_add_nic(t, 0, "mlx5_0", src), c1 = topo_add_nic(t, 1, "mlx5_0", src);
    t->nics[c0].port_gbps = 50.0;
    topo_ref a = {TOPO_EP_GPU, (uint32_t)g0}, b = {TOPO_EP_GPU, (uint32_t)g1};
    assert_int_equal(topo_add_link(t, TOPO_LINK_NVLINK, a, b, 18, NAN, NAN, src), 0);
    topo_ref na = {TOPO_EP_NIC, (uint32_t)c0}, nb = {TOPO_EP_NIC, (uint32_t)c1};
    assert_int_equal(topo_add_link(t, TOPO_LINK_NET, na, nb, 0, 50.0, 2.5, src), 1);
    return t;
}

static void test_links_refine(void **state)
{
    (void)state;
    topo *t = two_host_model();
    topo_src none = {-1, 0};
    topo_ref a = {TOPO_EP_GPU, 0}, b = {TOPO_EP_GPU, 1};
    /* a probe later measures the NVLink pair: same link, bandwidth filled */
    assert_int_equal(topo_add_link(t, TOPO_LINK_UNKNOWN, b, a, 0, 368.5, NAN, none), 0);
    assert_int_equal(t->n_links, 2);
    const topo_link *l = topo_find_link(t, a, b);
    assert_int_equal(l->kind, TOPO_LINK_NVLINK); /* unknown does not overwrite */
    assert_int_equal(l->lanes, 18);
    assert_true(fabs(l->bandwidth_gbps - 368.5) < 1e-12);
    assert_true(isnan(l->latency_us));
    /* endpoints must exist */
    topo_ref bad = {TOPO_EP_NIC, 99};
    assert_int_equal(topo_add_link(t, TOPO_LINK_PIX, a, bad, 0, NAN, NAN, none), -1);
    assert_int_equal(topo_add_gpu(t, 5, 0, none), -1); /* no host 5 */
    assert_null(topo_find_link(t, a, (topo_ref){TOPO_EP_NIC, 0}));
    topo_free(t);
}

static void test_kinds(void **state)
{
    (void)state;
    for (int k = 0; k < TOPO_LINK__COUNT; k++)
        assert_int_equal(topo_link_kind_from_key(topo_link_kind_key((topo_link_kind)k)), k);
    assert_int_equal(topo_link_kind_from_key("warp"), TOPO_LINK_UNKNOWN);
    assert_true(topo_link_kind_rank(TOPO_LINK_PIX) < topo_link_kind_rank(TOPO_LINK_PXB));
    assert_true(topo_link_kind_rank(TOPO_LINK_NODE) < topo_link_kind_rank(TOPO_LINK_SYS));
    assert_true(topo_link_kind_rank(TOPO_LINK_SYS) < topo_link_kind_rank(TOPO_LINK_UNKNOWN));
}

static void test_json_roundtrip(void **state)
{
    (void)state;
    topo *t = two_host_model();
    cp_buf b = CP_BUF_INIT;
    topo_to_json(t, &b);
    const char *js = b.data;
    size_t n = b.len;
    assert_int_equal(strlen(js), n);
    /* unknowns are null, never 0 or "" */
    assert_non_null(strstr(js, "\"pci_bus\": null"));
    assert_non_null(strstr(js, "\"bandwidth_gbps\": null"));
    assert_non_null(strstr(js, "\"latency_us\": 2.5"));
    assert_non_null(strstr(js, "probe \\\"one\\\".json"));
    topo *u = NULL;
    cp_error err;
    assert_int_equal(topo_from_json(js, n, "t.json", &u, &err), 0);
    assert_int_equal(u->n_hosts, 2);
    assert_int_equal(u->n_gpus, 3);
    assert_int_equal(u->n_nics, 2);
    assert_int_equal(u->n_links, 2);
    assert_string_equal(u->sources[0], "probe \"one\".json");
    assert_string_equal(u->gpus[0].name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(u->gpus[0].numa, 0);
    assert_int_equal(u->gpus[1].numa, -1);
    assert_int_equal(u->numa_nodes[0].socket, 0);
    assert_string_equal(u->numa_nodes[0].cpus, "0-31");
    assert_true(isnan(u->nics[1].port_gbps));
    assert_true(fabs(u->nics[0].port_gbps - 50.0) < 1e-12);
    assert_int_equal(u->links[1].kind, TOPO_LINK_NET);
    assert_int_equal(u->links[1].b.type, TOPO_EP_NIC);
    assert_int_equal(u->links[1].b.index, 1);
    assert_int_equal(u->links[0].src.line, 7);
    cp_buf b2 = CP_BUF_INIT;
    topo_to_json(u, &b2);
    assert_int_equal(n, b2.len);
    assert_memory_equal(js, b2.data, n);
    cp_buf_free(&b);
    cp_buf_free(&b2);
    topo_free(u);
    topo_free(t);
}

static void expect_bad(const char *json, const char *what)
{
    topo *u = (topo *)1;
    cp_error err;
    memset(&err, 0, sizeof err);
    int rc = topo_from_json(json, strlen(json), "bad.json", &u, &err);
    assert_int_equal(rc, CP_ERR_FORMAT);
    assert_null(u);
    if (!strstr(err.msg, what))
        fail_msg("message '%s' lacks '%s'", err.msg, what);
    assert_string_equal(err.file, "bad.json");
}

static void test_json_errors(void **state)
{
    (void)state;
    expect_bad("", "unexpected end");
    expect_bad("{\"schema\":\"chainprof.topo/1\",", "member name");
    expect_bad("[1,2", "expected ',' or ']'");
    expect_bad("{\"schema\":\"other/1\"}", "chainprof.topo/1");
    expect_bad("{\"schema\":\"chainprof.topo/1\"} x", "trailing");
    expect_bad("{\"schema\":\"chainprof.topo/1\",\"hosts\":[{\"name\":\"a\"}],"
               "\"gpus\":[{\"host\":3,\"index\":0}]}", "\"gpus\"");
    expect_bad("{\"schema\":\"chainprof.topo/1\",\"hosts\":[{\"name\":\"a\"}],"
               "\"gpus\":[{\"host\":0,\"index\":0}],"
               "\"links\":[{\"kind\":\"pix\",\"a\":{\"type\":\"gpu\",\"index\":0},"
               "\"b\":{\"type\":\"gpu\",\"index\":9}}]}", "\"links\"");
    expect_bad("\"\\q\"", "bad escape");
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    expect_bad(deep, "nested too deeply");
    /* unknown keys are ignored, so later schema additions still load */
    const char *ok = "{\"schema\":\"chainprof.topo/1\",\"future\":{\"x\":[true,false,null]},"
                     "\"hosts\":[{\"name\":\"h\\u00e9\",\"extra\":1.5e3}]}";
    topo *u = NULL;
    assert_int_equal(topo_from_json(ok, strlen(ok), "ok.json", &u, NULL), 0);
    assert_string_equal(u->hosts[0].name, "h\xc3\xa9");
    topo_free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_links_refine),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_json_errors),
    };
    return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
