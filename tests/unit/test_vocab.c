/* test_vocab.c - the model's vocabulary: layer keys, collective names and
 * the nccl-tests busbw formulas against hand-computed cases, the free-form
 * collective names of traces, the bandwidth unit helpers. */
#include "test_util.h"

#include "model/catalog.h"
#include "model/vocab.h"

#include <math.h>
#include <string.h>

static void test_busbw_factors(void **state)
{
    (void)state;
    /* 8 ranks: all-reduce 2*7/8 = 1.75, gather-type 7/8 = 0.875, bcast 1 */
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_ALL_REDUCE, 8), 1.75, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_ALL_GATHER, 8), 0.875, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_REDUCE_SCATTER, 8), 0.875, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_ALL_TO_ALL, 8), 0.875, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_BROADCAST, 8), 1.0, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_REDUCE, 8), 1.0, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_SEND_RECV, 8), 1.0, 1e-12);
    /* 4 ranks: 2*3/4 = 1.5 and 3/4; 1 rank: 0 */
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_ALL_REDUCE, 4), 1.5, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_ALL_GATHER, 4), 0.75, 1e-12);
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_ALL_REDUCE, 1), 0.0, 1e-12);
}

static void test_busbw_values(void **state)
{
    (void)state;
    /* 128 MiB all-reduce of float on 8 ranks in 1.5 ms (nccl-tests prints
     * size 134217728, time 1500 us): algbw = 134217728/1.5e-3/1e9 = 89.478485,
     * busbw = 89.478485 * 1.75 = 156.587349 */
    double bytes = coll_bytes(COLL_ALL_REDUCE, 33554432, 4);
    CP_ASSERT_NEAR(bytes, 134217728.0, 0);
    CP_ASSERT_NEAR(coll_algbw_gbps(bytes, 1.5e-3), 89.478485, 1e-6);
    CP_ASSERT_NEAR(coll_busbw_gbps(COLL_ALL_REDUCE, 8, bytes, 1.5e-3), 156.587349, 1e-6);
    /* all-gather of 1 GB total on 16 ranks in 0.1 s: algbw 10, busbw 9.375 */
    CP_ASSERT_NEAR(coll_busbw_gbps(COLL_ALL_GATHER, 16, 1e9, 0.1), 9.375, 1e-9);
    /* broadcast 4 MB in 1 ms: 4 GB/s both */
    CP_ASSERT_NEAR(coll_busbw_gbps(COLL_BROADCAST, 4, 4e6, 1e-3), 4.0, 1e-9);
    assert_true(isnan(coll_algbw_gbps(1e6, 0)));
    assert_int_equal(coll_op_parse("allreduce"), COLL_ALL_REDUCE);
    assert_int_equal(coll_op_parse("reduce-scatter"), COLL_REDUCE_SCATTER);
    assert_int_equal(coll_op_parse("all_to_all"), COLL_ALL_TO_ALL);
    assert_int_equal(coll_op_parse("gather"), -1);
    assert_string_equal(coll_op_name(COLL_SEND_RECV), "send_recv");
}

static void test_layers(void **state)
{
    (void)state;
    static const char *const keys[] = { "host", "compute", "intra", "inter", "storage", "idle" };
    assert_int_equal(CP_LAYER__COUNT, 6);
    for (int i = 0; i < CP_LAYER__COUNT; i++) {
        assert_string_equal(cp_layer_key((cp_layer)i), keys[i]);
        assert_int_equal(cp_layer_parse(keys[i]), i);
        assert_non_null(cp_layer_title((cp_layer)i));
    }
    assert_null(cp_layer_key(CP_LAYER__COUNT));
    assert_int_equal(cp_layer_parse("network"), -1);
    assert_int_equal(cp_layer_parse(NULL), -1);
}

static void test_classify(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        coll_op op;
    } t[] = {
        { "allreduce", COLL_ALL_REDUCE },
        { "_allgather_base", COLL_ALL_GATHER },
        { "all_gather_into_tensor_coalesced", COLL_ALL_GATHER },
        { "reduce_scatter_tensor_coalesced", COLL_REDUCE_SCATTER },
        { "_reduce_scatter_base", COLL_REDUCE_SCATTER },
        { "all_to_allv", COLL_ALL_TO_ALL },
        { "broadcast", COLL_BROADCAST },
        { "reduce", COLL_REDUCE },
        { "send", COLL_SEND_RECV },
        { "recv", COLL_SEND_RECV },
        { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", COLL_ALL_REDUCE },
        { "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", COLL_REDUCE_SCATTER },
        { "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", COLL_SEND_RECV },
        { "barrier", COLL_OTHER },
        { "gather", COLL_OTHER },
        { "", COLL_OTHER },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (coll_op_classify(t[i].name) != t[i].op)
            fail_msg("%s: got %s, want %s", t[i].name, coll_op_name(coll_op_classify(t[i].name)),
                     coll_op_name(t[i].op));
    }
    assert_string_equal(coll_op_name(COLL_OTHER), "other");
    CP_ASSERT_NEAR(coll_busbw_factor(COLL_OTHER, 8), 1.0, 0);
    assert_true(isnan(coll_busbw_factor(COLL_ALL_REDUCE, 0)));
    /* nccl-tests binaries: alltoall_perf, sendrecv_perf */
    assert_int_equal(coll_op_parse("alltoall"), COLL_ALL_TO_ALL);
    assert_int_equal(coll_op_parse("sendrecv"), COLL_SEND_RECV);
    for (int i = 0; i < COLL_N_OPS; i++)
        assert_int_equal(coll_op_parse(coll_op_name((coll_op)i)), i);
}

static void test_units(void **state)
{
    (void)state;
    /* 400 Gbit/s NDR = 50 GB/s; 8 x 200 Gbit/s over 8 GPUs = 25 GB/s each */
    CP_ASSERT_NEAR(cp_gbit_s_to_gbps(400), 50, 1e-12);
    CP_ASSERT_NEAR(cp_gbps_to_gbit_s(25), 200, 1e-12);
    const hw_gpu *a = hw_gpu_find("A100");
    assert_non_null(a);
    CP_ASSERT_NEAR(hw_gpu_nic_gbps_per_gpu(a), cp_gbit_s_to_gbps(a->nic_gbit_s) * a->nics_per_node / a->gpus_per_node,
                   1e-12);
}

static void test_vendors(void **state)
{
    (void)state;
    for (size_t i = 0; i < hw_gpu_count(); i++) {
        const hw_gpu *g = hw_gpu_at(i);
        const hw_vendor *v = hw_vendor_find(g->vendor);
        if (!v)
            fail_msg("%s: vendor %s has no vendor row", g->name, g->vendor);
        assert_non_null(v->scaleup);
    }
    assert_string_equal(hw_vendor_find("amd")->ccl, "RCCL");
    assert_string_equal(hw_vendor_find("AMD")->scaleup, "xGMI");
    assert_string_equal(hw_vendor_find("NVIDIA")->scaleup, "NVLink");
    assert_null(hw_vendor_find("Acme"));
    assert_null(hw_vendor_find(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busbw_factors), cmocka_unit_test(test_busbw_values), cmocka_unit_test(test_layers),
        cmocka_unit_test(test_classify),      cmocka_unit_test(test_units),        cmocka_unit_test(test_vendors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
