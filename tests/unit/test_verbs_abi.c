/* test_verbs_abi.c - the owned libibverbs declarations (src/probe/verbs_abi.h)
 * against the real <infiniband/verbs.h>: every size and every offset the
 * probe or the fake touches. Skips (77) where libibverbs-dev is absent; the
 * rates helper is tested either way. */
#include "test_util.h"

#include "probe/net_rdma.h"
#include "probe/verbs_abi.h"

#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define HAVE_REAL 1
#else
#define HAVE_REAL 0
#endif

#define SAME_SIZE(ours, real) assert_int_equal(sizeof(struct ours), sizeof(struct real))
#define SAME_OFF(ours, real, f) assert_int_equal(offsetof(struct ours, f), offsetof(struct real, f))

static void test_abi(void **state)
{
    (void)state;
#if HAVE_REAL
    SAME_SIZE(cpv_context, ibv_context);
    SAME_OFF(cpv_context, ibv_context, ops.poll_cq);
    SAME_OFF(cpv_context, ibv_context, ops.post_send);
    SAME_OFF(cpv_context, ibv_context, ops.post_recv);
    SAME_OFF(cpv_context, ibv_context, cmd_fd);
    assert_int_equal(sizeof(union cpv_gid), sizeof(union ibv_gid));
    SAME_SIZE(cpv_device_attr, ibv_device_attr);
    SAME_OFF(cpv_device_attr, ibv_device_attr, max_qp_rd_atom);
    SAME_OFF(cpv_device_attr, ibv_device_attr, max_qp_wr);
    SAME_OFF(cpv_device_attr, ibv_device_attr, phys_port_cnt);
    SAME_SIZE(cpv_port_attr, ibv_port_attr);
    SAME_OFF(cpv_port_attr, ibv_port_attr, state);
    SAME_OFF(cpv_port_attr, ibv_port_attr, active_mtu);
    SAME_OFF(cpv_port_attr, ibv_port_attr, lid);
    SAME_OFF(cpv_port_attr, ibv_port_attr, active_width);
    SAME_OFF(cpv_port_attr, ibv_port_attr, active_speed);
    SAME_OFF(cpv_port_attr, ibv_port_attr, link_layer);
    SAME_OFF(cpv_port_attr, ibv_port_attr, flags);
    SAME_SIZE(cpv_pd, ibv_pd);
    SAME_SIZE(cpv_mr, ibv_mr);
    SAME_OFF(cpv_mr, ibv_mr, lkey);
    SAME_OFF(cpv_mr, ibv_mr, rkey);
    SAME_SIZE(cpv_cq, ibv_cq);
    SAME_OFF(cpv_cq, ibv_cq, cqe);
    SAME_SIZE(cpv_qp, ibv_qp);
    SAME_OFF(cpv_qp, ibv_qp, qp_num);
    SAME_OFF(cpv_qp, ibv_qp, state);
    SAME_SIZE(cpv_qp_cap, ibv_qp_cap);
    SAME_SIZE(cpv_qp_init_attr, ibv_qp_init_attr);
    SAME_OFF(cpv_qp_init_attr, ibv_qp_init_attr, cap);
    SAME_OFF(cpv_qp_init_attr, ibv_qp_init_attr, qp_type);
    SAME_SIZE(cpv_global_route, ibv_global_route);
    SAME_SIZE(cpv_ah_attr, ibv_ah_attr);
    SAME_OFF(cpv_ah_attr, ibv_ah_attr, dlid);
    SAME_OFF(cpv_ah_attr, ibv_ah_attr, is_global);
    SAME_OFF(cpv_ah_attr, ibv_ah_attr, port_num);
    SAME_SIZE(cpv_qp_attr, ibv_qp_attr);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, dest_qp_num);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, qp_access_flags);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, ah_attr);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, pkey_index);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, max_rd_atomic);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, port_num);
    SAME_OFF(cpv_qp_attr, ibv_qp_attr, rnr_retry);
    SAME_SIZE(cpv_sge, ibv_sge);
    SAME_SIZE(cpv_send_wr, ibv_send_wr);
    SAME_OFF(cpv_send_wr, ibv_send_wr, opcode);
    SAME_OFF(cpv_send_wr, ibv_send_wr, send_flags);
    SAME_OFF(cpv_send_wr, ibv_send_wr, wr.rdma.remote_addr);
    SAME_OFF(cpv_send_wr, ibv_send_wr, wr.rdma.rkey);
    SAME_SIZE(cpv_recv_wr, ibv_recv_wr);
    SAME_SIZE(cpv_wc, ibv_wc);
    SAME_OFF(cpv_wc, ibv_wc, status);
    SAME_OFF(cpv_wc, ibv_wc, opcode);
    SAME_OFF(cpv_wc, ibv_wc, byte_len);
    SAME_OFF(cpv_wc, ibv_wc, qp_num);
    assert_int_equal(CPV_WR_RDMA_READ, IBV_WR_RDMA_READ);
    assert_int_equal(CPV_WR_SEND, IBV_WR_SEND);
    assert_int_equal(CPV_QP_DEST_QPN, IBV_QP_DEST_QPN);
    assert_int_equal(CPV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
    assert_int_equal(CPV_QPS_RTS, IBV_QPS_RTS);
    assert_int_equal(CPV_QPT_RC, IBV_QPT_RC);
    assert_int_equal(CPV_WC_RECV, IBV_WC_RECV);
    assert_int_equal(CPV_PORT_ACTIVE, IBV_PORT_ACTIVE);
    assert_int_equal(CPV_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);
#else
    skip();
#endif
}

/* active_width x active_speed -> Gb/s as the kernel's sysfs `rate` shows it */
static void test_rate(void **state)
{
    (void)state;
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(2, 32), 100.0, 1e-9);   /* 4X EDR */
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(2, 64), 200.0, 1e-9);   /* 4X HDR */
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(2, 128), 400.0, 1e-9);  /* 4X NDR */
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(1, 1), 2.5, 1e-9);      /* 1X SDR */
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(8, 4), 120.0, 1e-9);    /* 12X QDR */
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(2, 16), 56.0, 1e-9);    /* 4X FDR */
    CP_ASSERT_NEAR(rdma_port_rate_gbit_s(16, 64), 100.0, 1e-9);  /* 2X HDR */
    assert_true(rdma_port_rate_gbit_s(3, 32) != rdma_port_rate_gbit_s(3, 32)); /* unknown width: NaN */
    assert_true(rdma_port_rate_gbit_s(2, 3) != rdma_port_rate_gbit_s(2, 3));   /* unknown speed: NaN */
}

/* selective signaling: perftest's cq_mod 100, never more than half the
 * depth; the send CQ holds every signaled request that can be outstanding */
static void test_signaling(void **state)
{
    (void)state;
    assert_int_equal(rdma_signal_interval(64), 32);
    assert_int_equal(rdma_signal_interval(128), 64);
    assert_int_equal(rdma_signal_interval(200), 100);
    assert_int_equal(rdma_signal_interval(1024), 100);
    assert_int_equal(rdma_signal_interval(3), 1);
    assert_int_equal(rdma_signal_interval(1), 1);
    assert_int_equal(rdma_send_cq_entries(1, 64), 3);      /* 64 outstanding hold two multiples of 32 + the last */
    assert_int_equal(rdma_send_cq_entries(4, 1024), 44);   /* 4 x (10 + 1) */
    assert_int_equal(rdma_send_cq_entries(2, 250), 6);     /* 2 x (2 + 1) */
    /* the bound holds for every window of depth requests, iters and depth alike */
    for (int depth = 1; depth <= 300; depth += 7)
        for (int iters = 1; iters <= 700; iters += 13) {
            int sig = rdma_signal_interval(depth), most = 0;
            for (int retired = 0; retired < iters; retired = retired + sig < iters ? retired + sig : iters) {
                int n = 0;
                for (int seq = retired + 1; seq <= retired + depth && seq <= iters; seq++)
                    n += seq % sig == 0 || seq == iters;
                most = n > most ? n : most;
            }
            assert_true(most >= 1 && most <= rdma_send_cq_entries(1, depth));
            /* a full queue always holds a signaled request in its first half */
            assert_true(depth < 2 || sig <= depth / 2);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_abi), cmocka_unit_test(test_rate),
                                        cmocka_unit_test(test_signaling) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
