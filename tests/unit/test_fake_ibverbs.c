/* test_fake_ibverbs.c - the fake libibverbs (tests/fakes/fake_ibverbs.c)
 * holds a caller to the queue rules of a real RC QP, which is what makes
 * the probe's selective-signaling tests (tests/cli/rdma_fake.sh) mean
 * something: an unsignaled request completes silently, a send-queue slot
 * is freed only by a polled completion at or after it (ENOMEM beyond
 * max_send_wr, as mlx5), a CQ that overflows loses the entry and then
 * fails poll_cq, and FAKE_IBV_CORRUPT changes the data that lands.
 * The library is found next to the chainprof binary (CHAINPROF, set by
 * ctest): build/fakes/ibverbs/libibverbs.so; absent -> exit 77 (skip).
 */
#include "test_util.h"

#include "probe/verbs_abi.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>

typedef struct fake {
    void *h;
    cpv_get_device_list_fn get_device_list;
    cpv_open_device_fn open_device;
    cpv_alloc_pd_fn alloc_pd;
    cpv_reg_mr_fn reg_mr;
    cpv_create_cq_fn create_cq;
    cpv_create_qp_fn create_qp;
    cpv_modify_qp_fn modify_qp;
    cpv_destroy_qp_fn destroy_qp;
    cpv_destroy_cq_fn destroy_cq;
    cpv_dereg_mr_fn dereg_mr;
    cpv_dealloc_pd_fn dealloc_pd;
    cpv_close_device_fn close_device;
    cpv_free_device_list_fn free_device_list;
} fake;

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    assert_non_null(p);
    return p;
}

static bool load(fake *F)
{
    const char *bin = getenv("CHAINPROF");
    char path[4096], dir[4096];
    if (!bin)
        return false;
    snprintf(dir, sizeof dir, "%s", bin);
    snprintf(path, sizeof path, "%s/fakes/ibverbs/libibverbs.so", dirname(dir));
    if (!(F->h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "skip: %s not built\n", path);
        return false;
    }
    /* POSIX: dlsym pointers convert to function pointers */
    *(void **)&F->get_device_list = sym(F->h, "ibv_get_device_list");
    *(void **)&F->open_device = sym(F->h, "ibv_open_device");
    *(void **)&F->alloc_pd = sym(F->h, "ibv_alloc_pd");
    *(void **)&F->reg_mr = sym(F->h, "ibv_reg_mr");
    *(void **)&F->create_cq = sym(F->h, "ibv_create_cq");
    *(void **)&F->create_qp = sym(F->h, "ibv_create_qp");
    *(void **)&F->modify_qp = sym(F->h, "ibv_modify_qp");
    *(void **)&F->destroy_qp = sym(F->h, "ibv_destroy_qp");
    *(void **)&F->destroy_cq = sym(F->h, "ibv_destroy_cq");
    *(void **)&F->dereg_mr = sym(F->h, "ibv_dereg_mr");
    *(void **)&F->dealloc_pd = sym(F->h, "ibv_dealloc_pd");
    *(void **)&F->close_device = sym(F->h, "ibv_close_device");
    *(void **)&F->free_device_list = sym(F->h, "ibv_free_device_list");
    return true;
}

static void to_rts(fake *F, struct cpv_qp *qp, uint32_t dest)
{
    struct cpv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = CPV_QPS_INIT;
    a.port_num = 1;
    assert_int_equal(F->modify_qp(qp, &a, CPV_QP_STATE | CPV_QP_PORT), 0);
    memset(&a, 0, sizeof a);
    a.qp_state = CPV_QPS_RTR;
    a.dest_qp_num = dest;
    assert_int_equal(F->modify_qp(qp, &a, CPV_QP_STATE | CPV_QP_AV | CPV_QP_DEST_QPN), 0);
    memset(&a, 0, sizeof a);
    a.qp_state = CPV_QPS_RTS;
    assert_int_equal(F->modify_qp(qp, &a, CPV_QP_STATE), 0);
}

static int write1(struct cpv_qp *qp, struct cpv_mr *src, struct cpv_mr *dst, uint32_t len, bool signaled,
                  uint64_t id)
{
    struct cpv_sge sge = { (uint64_t)(uintptr_t)src->addr, len, src->lkey };
    struct cpv_send_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = CPV_WR_RDMA_WRITE;
    wr.send_flags = signaled ? CPV_SEND_SIGNALED : 0;
    wr.wr.rdma.remote_addr = (uint64_t)(uintptr_t)dst->addr;
    wr.wr.rdma.rkey = dst->rkey;
    return qp->context->ops.post_send(qp, &wr, &bad);
}

static fake g_fake; /* loaded by main */

static void test_queue_rules(void **state)
{
    (void)state;
    fake F = g_fake;
    int n = 0;
    struct cpv_device **list = F.get_device_list(&n);
    assert_int_equal(n, 1);
    struct cpv_context *ctx = F.open_device(list[0]);
    struct cpv_pd *pd = F.alloc_pd(ctx);
    static char a_buf[4096], b_buf[4096];
    struct cpv_mr *a_mr = F.reg_mr(pd, a_buf, sizeof a_buf, 7), *b_mr = F.reg_mr(pd, b_buf, sizeof b_buf, 7);
    struct cpv_cq *scq = F.create_cq(ctx, 2, NULL, NULL, 0), *rcq = F.create_cq(ctx, 4, NULL, NULL, 0);
    struct cpv_qp_init_attr ia;
    memset(&ia, 0, sizeof ia);
    ia.send_cq = scq;
    ia.recv_cq = rcq;
    ia.qp_type = CPV_QPT_RC;
    ia.cap.max_send_wr = 4;
    ia.cap.max_recv_wr = 4;
    struct cpv_qp *qa = F.create_qp(pd, &ia), *qb = F.create_qp(pd, &ia);
    assert_non_null(qa);
    assert_non_null(qb);
    to_rts(&F, qb, qa->qp_num);
    to_rts(&F, qa, qb->qp_num);
    cpv_poll_cq_fn poll = ctx->ops.poll_cq;
    struct cpv_wc wc[4];

    /* unsignaled requests complete silently, yet the data moved */
    memset(a_buf, 0x11, 64);
    assert_int_equal(write1(qa, a_mr, b_mr, 64, false, 1), 0);
    assert_int_equal(write1(qa, a_mr, b_mr, 64, false, 2), 0);
    assert_int_equal(write1(qa, a_mr, b_mr, 64, false, 3), 0);
    assert_int_equal(poll(scq, 4, wc), 0);
    assert_int_equal((uint8_t)b_buf[63], 0x11);
    /* the 4th fills the send queue (max_send_wr 4); a 5th is refused until a
     * signaled completion at or after the others is polled */
    assert_int_equal(write1(qa, a_mr, b_mr, 64, true, 4), 0);
    assert_int_equal(write1(qa, a_mr, b_mr, 64, true, 5), ENOMEM);
    assert_int_equal(poll(scq, 4, wc), 1);
    assert_int_equal(wc[0].wr_id, 4);
    assert_int_equal(wc[0].status, CPV_WC_SUCCESS);
    /* all four slots are free again */
    for (uint64_t i = 6; i < 9; i++)
        assert_int_equal(write1(qa, a_mr, b_mr, 64, true, i), 0);
    /* ... but the CQ holds 2: the third completion overran it, so after the
     * two it kept, poll_cq fails */
    assert_int_equal(poll(scq, 4, wc), 2);
    assert_int_equal(wc[0].wr_id, 6);
    assert_int_equal(wc[1].wr_id, 7);
    assert_int_equal(poll(scq, 4, wc), -1);

    /* FAKE_IBV_CORRUPT=write: the byte in the middle of what lands changes */
    struct cpv_cq *scq2 = F.create_cq(ctx, 4, NULL, NULL, 0);
    ia.send_cq = scq2;
    struct cpv_qp *qc = F.create_qp(pd, &ia), *qd = F.create_qp(pd, &ia);
    to_rts(&F, qd, qc->qp_num);
    to_rts(&F, qc, qd->qp_num);
    memset(a_buf, 0x22, 64);
    setenv("FAKE_IBV_CORRUPT", "write", 1);
    assert_int_equal(write1(qc, a_mr, b_mr, 64, true, 9), 0);
    unsetenv("FAKE_IBV_CORRUPT");
    assert_int_equal(poll(scq2, 4, wc), 1);
    assert_int_equal((uint8_t)b_buf[31], 0x22);
    assert_int_equal((uint8_t)b_buf[32], 0x22 ^ 0xa5);
    assert_int_equal((uint8_t)b_buf[33], 0x22);
    F.destroy_qp(qa);
    F.destroy_qp(qb);
    F.destroy_qp(qc);
    F.destroy_qp(qd);
    F.destroy_cq(scq);
    F.destroy_cq(scq2);
    F.destroy_cq(rcq);
    F.dereg_mr(a_mr);
    F.dereg_mr(b_mr);
    F.dealloc_pd(pd);
    F.close_device(ctx);
    F.free_device_list(list);
}

int main(void)
{
    if (!load(&g_fake))
        return 77; /* ctest's skip */
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_queue_rules) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
