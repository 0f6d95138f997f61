/* test_rd_topo.c - nvidia-smi topo -m reader and its filling of the topology
 * model, on the real samples and fixtures. Expected cells are read off the
 * matrices by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "readers/rd_topo.h"
#include "evidence_testutil.h"

EV_DEFINE_PARSE(TOPO, topo, ev_topo)

static topo_link_kind cell(const ev_topo *m, const char *a, const char *b, int *lanes)
{
    int i = ev_topo_find(m, a), j = ev_topo_find(m, b);
    assert_true(i >= 0 && j >= 0);
    const ev_topo_cell *c = ev_topo_cell_at(m, (size_t)i, (size_t)j);
    if (lanes)
        *lanes = c->lanes;
    return c->kind;
}

static int numa_id_of_nic(const topo *t, const char *name)
{
    for (size_t i = 0; i < t->n_nics; i++)
        if (strcmp(t->nics[i].name, name) == 0)
            return t->nics[i].numa < 0 ? -1 : t->numa_nodes[t->nics[i].numa].id;
    fail_msg("nic %s missing", name);
    return -2;
}

/* Round trip through JSON must give the same JSON back. */
static void assert_json_roundtrip(const topo *t)
{
    cp_buf js = CP_BUF_INIT, js2 = CP_BUF_INIT;
    topo_to_json(t, &js);
    topo *back = NULL;
    cp_error err;
    int rc = topo_from_json(js.data, js.len, "rt.json", &back, &err);
    if (rc < 0)
        fprintf(stderr, "%s at %lld\n", err.msg, err.offset);
    assert_int_equal(rc, 0);
    topo_to_json(back, &js2);
    assert_int_equal(js.len, js2.len);
    assert_memory_equal(js.data, js2.data, js.len);
    assert_int_equal(back->n_links, t->n_links);
    cp_buf_free(&js);
    cp_buf_free(&js2);
    topo_free(back);
}

/* DGX-A100-like: tab separated, 8 GPUs NV12, 10 NICs in PXB pairs, NPS4. */
static void test_a100_tab_separated(void **state)
{
    (void)state;
    ev_topo *m = parse("topo/a100-sxm4-8gpu-10nic-nv12-amd-nps4.txt", 1);
    if (!m)
        skip();
    assert_true(m->tab_separated);
    assert_int_equal(m->n_devs, 18);
    assert_int_equal(m->n_gpus, 8);
    assert_int_equal(m->n_nics, 10);
    assert_true(m->has_nic_legend);
    assert_int_equal(m->header_line, 4);
    int lanes;
    assert_int_equal(cell(m, "GPU0", "GPU7", &lanes), TOPO_LINK_NVLINK);
    assert_int_equal(lanes, 12);
    assert_int_equal(cell(m, "GPU0", "NIC0", NULL), TOPO_LINK_PXB);
    assert_int_equal(cell(m, "GPU2", "NIC3", NULL), TOPO_LINK_PXB);
    assert_int_equal(cell(m, "GPU0", "NIC2", NULL), TOPO_LINK_SYS);
    assert_int_equal(cell(m, "NIC8", "NIC9", NULL), TOPO_LINK_PIX);
    assert_int_equal(cell(m, "GPU3", "GPU3", NULL), TOPO_LINK_UNKNOWN); /* X */
    int g0 = ev_topo_find(m, "GPU0"), g4 = ev_topo_find(m, "GPU4");
    assert_string_equal(m->devs[g0].cpu_affinity, "48-63,176-191");
    assert_int_equal(m->devs[g0].numa_affinity, 3);
    assert_int_equal(m->devs[g4].numa_affinity, 7);
    assert_int_equal(m->devs[g0].line, 5);
    int nic9 = ev_topo_find(m, "NIC9");
    assert_string_equal(m->devs[nic9].name, "mlx5_9");
    assert_int_equal(m->devs[nic9].legend_line, 45);
    assert_int_equal(m->devs[nic9].numa_affinity, -1); /* empty cell */
    topo_link_kind k;
    int near = ev_topo_nearest_nic(m, (size_t)g4, &k);
    assert_string_equal(m->devs[near].label, "NIC4");
    assert_int_equal(k, TOPO_LINK_PXB);
    assert_int_equal(diag_total(&ev_last_diag), 0);

    topo *t = topo_new();
    assert_int_equal(rd_topo_fill(m, "topo/a100-sxm4-8gpu-10nic-nv12-amd-nps4.txt", t, "dgx-a", NULL), 0);
    assert_int_equal(t->n_hosts, 1);
    assert_int_equal(t->n_gpus, 8);
    assert_int_equal(t->n_nics, 10);
    assert_int_equal(t->n_numa, 4); /* NUMA 3, 1, 7, 5 */
    assert_int_equal(t->n_links, 18 * 17 / 2);
    assert_string_equal(t->numa_nodes[t->gpus[6].numa].cpus, "80-95,208-223");
    assert_int_equal(numa_id_of_nic(t, "mlx5_0"), 3);  /* PXB to GPU0 */
    assert_int_equal(numa_id_of_nic(t, "mlx5_6"), 5);
    assert_int_equal(numa_id_of_nic(t, "mlx5_8"), -1); /* SYS to every GPU */
    topo_ref a = {TOPO_EP_GPU, 0}, b = {TOPO_EP_GPU, 5};
    const topo_link *l = topo_find_link(t, b, a);
    assert_non_null(l);
    assert_int_equal(l->kind, TOPO_LINK_NVLINK);
    assert_int_equal(l->lanes, 12);
    assert_true(isnan(l->bandwidth_gbps)); /* topo -m does not say */
    assert_int_equal(l->src.line, 5);
    assert_string_equal(t->sources[l->src.file], "topo/a100-sxm4-8gpu-10nic-nv12-amd-nps4.txt");
    assert_json_roundtrip(t);
    topo_free(t);
    ev_topo_free(m);
}

/* H100 HGX: space aligned, NV18, one PIX NIC per GPU, GPU NUMA ID N/A. */
static void test_h100_space_aligned(void **state)
{
    (void)state;
    ev_topo *m = parse("topo/h100-8gpu-8nic-nv18-sglang30401.txt", 1);
    if (!m)
        skip();
    assert_false(m->tab_separated);
    assert_int_equal(m->n_gpus, 8);
    assert_int_equal(m->n_nics, 8);
    int lanes;
    assert_int_equal(cell(m, "GPU5", "GPU2", &lanes), TOPO_LINK_NVLINK);
    assert_int_equal(lanes, 18);
    assert_int_equal(cell(m, "GPU0", "NIC0", NULL), TOPO_LINK_PIX);
    assert_int_equal(cell(m, "GPU0", "NIC1", NULL), TOPO_LINK_NODE);
    assert_int_equal(cell(m, "GPU0", "NIC4", NULL), TOPO_LINK_SYS);
    assert_int_equal(cell(m, "NIC7", "NIC6", NULL), TOPO_LINK_NODE);
    for (int g = 0; g < 8; g++) {
        char lab[8];
        snprintf(lab, sizeof lab, "GPU%d", g);
        int i = ev_topo_find(m, lab);
        assert_true(i >= 0);
        topo_link_kind k;
        int near = ev_topo_nearest_nic(m, (size_t)i, &k);
        assert_true(near >= 0);
        assert_int_equal(m->devs[near].index, g); /* GPUn -> NICn, PIX */
        assert_int_equal(k, TOPO_LINK_PIX);
        assert_int_equal(m->devs[i].numa_affinity, g < 4 ? 0 : 1);
        assert_int_equal(m->devs[i].gpu_numa_id, -1);
    }
    assert_string_equal(m->devs[ev_topo_find(m, "GPU4")].cpu_affinity, "48-95,144-191");
    topo *t = topo_new();
    assert_int_equal(rd_topo_fill(m, "t", t, NULL, NULL), 0);
    assert_string_equal(t->hosts[0].name, "localhost");
    assert_int_equal(t->n_numa, 2);
    assert_int_equal(numa_id_of_nic(t, "mlx5_5"), 1);
    assert_json_roundtrip(t);
    topo_free(t);
    ev_topo_free(m);
}

/* PCIe box: 6 GPUs, no NICs, PIX pairs, NODE and SYS paths. */
static void test_pcie_6gpu(void **state)
{
    (void)state;
    ev_topo *m = parse("topo/pcie-6gpu-2socket-pix-node-sys-pytorch47885.txt", 1);
    if (!m)
        skip();
    assert_int_equal(m->n_gpus, 6);
    assert_int_equal(m->n_nics, 0);
    assert_int_equal(cell(m, "GPU0", "GPU1", NULL), TOPO_LINK_PIX);
    assert_int_equal(cell(m, "GPU0", "GPU2", NULL), TOPO_LINK_NODE);
    assert_int_equal(cell(m, "GPU2", "GPU3", NULL), TOPO_LINK_SYS);
    assert_int_equal(cell(m, "GPU3", "GPU4", NULL), TOPO_LINK_PIX);
    assert_int_equal(ev_topo_nearest_nic(m, 0, NULL), -1);
    assert_string_equal(m->devs[3].cpu_affinity, "18-35,54-71");
    assert_int_equal(m->devs[3].line, 8);
    ev_topo_free(m);
}

/* Fixture: old driver - SOC instead of SYS, NIC rows named mlx5_0, no NUMA
 * column, no legend. */
static void test_fixture_old_driver(void **state)
{
    (void)state;
    ev_topo *m = parse("topo/old-driver-soc-mlx-rows-no-legend.txt", 0);
    assert_int_equal(m->n_gpus, 2);
    assert_int_equal(m->n_nics, 1);
    assert_false(m->has_nic_legend);
    assert_int_equal(cell(m, "GPU0", "GPU1", NULL), TOPO_LINK_SYS);
    assert_int_equal(cell(m, "GPU0", "mlx5_0", NULL), TOPO_LINK_PHB);
    assert_string_equal(m->devs[ev_topo_find(m, "mlx5_0")].name, "mlx5_0");
    assert_string_equal(m->devs[1].cpu_affinity, "12-23");
    assert_int_equal(m->devs[1].numa_affinity, -1);
    topo *t = topo_new();
    assert_int_equal(rd_topo_fill(m, "t", t, "old", NULL), 0);
    assert_int_equal(t->n_numa, 0);
    assert_string_equal(t->nics[0].name, "mlx5_0");
    assert_string_equal(t->nics[0].label, ""); /* label equals name */
    topo_free(t);
    ev_topo_free(m);
}

/* Fixture: one GPU, a NIC row with an unknown cell, GPU NUMA ID column. */
static void test_fixture_bad_cell(void **state)
{
    (void)state;
    ev_topo *m = parse("topo/one-gpu-bad-cell.txt", 0);
    assert_int_equal(m->n_devs, 2);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_VALUE), 3);
    assert_string_equal(m->devs[1].name, "ens1f0np0");
    /* the GPU row still gives the pair */
    topo *t = topo_new();
    assert_int_equal(rd_topo_fill(m, "t", t, "h", NULL), 0);
    assert_int_equal(t->n_links, 1);
    assert_int_equal(t->links[0].kind, TOPO_LINK_PHB);
    assert_int_equal(numa_id_of_nic(t, "ens1f0np0"), 0);
    topo_free(t);
    ev_topo_free(m);
}

/* nvidia-smi topo -p2p r: alone (its legend, GNS cells), and after a
 * topo -m matrix with NICs, listing the GPUs only. */
static void test_p2p_matrix(void **state)
{
    (void)state;
    const char *alone = " \tGPU0\tGPU1\t\n GPU0\tX\tGNS\t\n GPU1\tGNS\tX\t\n\nLegend:\n\n  X    = Self\n"
                        "  OK   = Status Ok\n  CNS  = Chipset not supported\n  GNS  = GPU not supported\n";
    assert_true(rd_topo_sniff(alone, strlen(alone)) >= 50);
    ev_topo *m = NULL;
    assert_int_equal(ev_parse_as(EV_TOPO, alone, strlen(alone), "p2p.txt", (void **)&m, NULL), 0);
    assert_int_equal(m->n_gpus, 2);
    assert_int_equal(ev_topo_pair(m, 0, 1).p2p, EV_TOPO_P2P_GNS);
    assert_int_equal(m->p2p_line, 2);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_topo_free(m);

    const char *both = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n"
                       "GPU0\t X \tPHB\tPIX\t0-63\t0\n"
                       "GPU1\tPHB\t X \tPHB\t0-63\t0\n"
                       "NIC0\tPIX\tPHB\t X \n\nNIC Legend:\n\n  NIC0: mlx5_0\n\n"
                       "\tGPU0\tGPU1\n"
                       "GPU0\tX\tCNS\n"
                       "GPU1\tCNS\tX\n";
    assert_int_equal(ev_parse_as(EV_TOPO, both, strlen(both), "both.txt", (void **)&m, NULL), 0);
    assert_int_equal(m->n_devs, 3);
    assert_int_equal(ev_topo_pair(m, 0, 1).kind, TOPO_LINK_PHB); /* the -m cell stays */
    assert_int_equal(ev_topo_pair(m, 0, 1).p2p, EV_TOPO_P2P_CNS);
    assert_int_equal(ev_topo_pair(m, 0, 2).p2p, EV_TOPO_P2P_UNKNOWN);
    assert_string_equal(m->devs[2].name, "mlx5_0");
    assert_int_equal(m->p2p_line, 11);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_topo_free(m);
}

static void test_not_topo(void **state)
{
    (void)state;
    const char *text = "# gpu pwr sm\n    0  100 50\n";
    ev_topo *m = NULL;
    cp_error err;
    assert_int_equal(ev_parse_as(EV_TOPO, text, strlen(text), "d.txt", (void **)&m, &err), CP_ERR_FORMAT);
    assert_null(m);
    assert_non_null(strstr(err.msg, "topo -m"));
    assert_true(rd_topo_sniff(text, strlen(text)) < 50);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixture_old_driver),
        cmocka_unit_test(test_fixture_bad_cell),
        cmocka_unit_test(test_not_topo),
        cmocka_unit_test(test_p2p_matrix),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_a100_tab_separated),
        cmocka_unit_test(test_h100_space_aligned),
        cmocka_unit_test(test_pcie_6gpu),
    };
    int f = cmocka_run_group_tests_name("rd_topo_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("rd_topo_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
