/* verbs_abi.h - the project's own declarations of the libibverbs ABI it uses.
 *
 * Why own declarations and dlopen instead of linking libibverbs-dev: one
 * chainprof binary must build and run where no RDMA stack is installed (the
 * design's rule for every vendor library: dlopen + owned declarations, as
 * src/gpu does for CUDA), and the tests must be able to put a fake
 * libibverbs.so.1 in its place (CHAINPROF_IBVERBS_LIB). The structures below
 * are copies of the stable ABI of <infiniband/verbs.h> (rdma-core; the
 * IBVERBS_1.1 symbol versions), prefixed cpv_ so they can sit next to the
 * real header: tests/unit/test_verbs_abi.c compares every size and offset
 * with the real header when it is installed.
 *
 * ibv_post_send, ibv_post_recv and ibv_poll_cq are static inline functions
 * in the real header that call through context->ops; they are reached here
 * the same way (cpv_context.ops), which is what the real inline code does.
 * ibv_query_port is called through the exported IBVERBS_1.1 symbol, which
 * fills the legacy port structure (everything up to `flags`).
 *
 * Only what net_rdma.c and the test fake need is declared; unused members
 * keep their place as opaque padding of the right size.
 */
#ifndef CP_PROBE_VERBS_ABI_H
#define CP_PROBE_VERBS_ABI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct cpv_device;   /* opaque */
struct cpv_qp;
struct cpv_cq;
struct cpv_wc;
struct cpv_send_wr;
struct cpv_recv_wr;

typedef int (*cpv_poll_cq_fn)(struct cpv_cq *cq, int num_entries, struct cpv_wc *wc);
typedef int (*cpv_post_send_fn)(struct cpv_qp *qp, struct cpv_send_wr *wr, struct cpv_send_wr **bad_wr);
typedef int (*cpv_post_recv_fn)(struct cpv_qp *qp, struct cpv_recv_wr *wr, struct cpv_recv_wr **bad_wr);

/* struct ibv_context_ops: 32 function pointers; three are called */
struct cpv_context_ops {
    void *_before_poll[11];
    cpv_poll_cq_fn poll_cq;             /* index 11 */
    void *_between[13];
    cpv_post_send_fn post_send;         /* index 25 */
    cpv_post_recv_fn post_recv;         /* index 26 */
    void *_after[5];
};

struct cpv_context {
    struct cpv_device *device;
    struct cpv_context_ops ops;
    int cmd_fd;
    int async_fd;
    int num_comp_vectors;
    pthread_mutex_t mutex;
    void *abi_compat;
};

union cpv_gid {
    uint8_t raw[16];
    struct {
        uint64_t subnet_prefix; /* big-endian */
        uint64_t interface_id;
    } global;
};

struct cpv_device_attr {
    char fw_ver[64];
    uint64_t node_guid, sys_image_guid, max_mr_size, page_size_cap;
    uint32_t vendor_id, vendor_part_id, hw_ver;
    int max_qp, max_qp_wr;
    unsigned int device_cap_flags;
    int max_sge, max_sge_rd, max_cq, max_cqe, max_mr, max_pd;
    int max_qp_rd_atom, max_ee_rd_atom, max_res_rd_atom, max_qp_init_rd_atom, max_ee_init_rd_atom;
    int atomic_cap; /* enum */
    int max_ee, max_rdd, max_mw, max_raw_ipv6_qp, max_raw_ethy_qp, max_mcast_grp, max_mcast_qp_attach,
        max_total_mcast_qp_attach, max_ah, max_fmr, max_map_per_fmr, max_srq, max_srq_wr, max_srq_sge;
    uint16_t max_pkeys;
    uint8_t local_ca_ack_delay;
    uint8_t phys_port_cnt;
};

/* struct ibv_port_attr (the legacy part ibv_query_port@IBVERBS_1.1 fills,
 * plus port_cap_flags2 so the size matches the current header) */
struct cpv_port_attr {
    int state;       /* enum ibv_port_state */
    int max_mtu;     /* enum ibv_mtu */
    int active_mtu;
    int gid_tbl_len;
    uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr;
    uint16_t pkey_tbl_len, lid, sm_lid;
    uint8_t lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply;
    uint8_t active_width, active_speed, phys_state, link_layer, flags;
    uint16_t port_cap_flags2;
};

struct cpv_pd {
    struct cpv_context *context;
    uint32_t handle;
};

struct cpv_mr {
    struct cpv_context *context;
    struct cpv_pd *pd;
    void *addr;
    size_t length;
    uint32_t handle, lkey, rkey;
};

struct cpv_cq {
    struct cpv_context *context;
    void *channel;
    void *cq_context;
    uint32_t handle;
    int cqe;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    uint32_t comp_events_completed, async_events_completed;
};

struct cpv_qp {
    struct cpv_context *context;
    void *qp_context;
    struct cpv_pd *pd;
    struct cpv_cq *send_cq, *recv_cq;
    void *srq;
    uint32_t handle, qp_num;
    int state;    /* enum ibv_qp_state */
    int qp_type;  /* enum ibv_qp_type */
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    uint32_t events_completed;
};

struct cpv_qp_cap {
    uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
};

struct cpv_qp_init_attr {
    void *qp_context;
    struct cpv_cq *send_cq, *recv_cq;
    void *srq;
    struct cpv_qp_cap cap;
    int qp_type;
    int sq_sig_all;
};

struct cpv_global_route {
    union cpv_gid dgid;
    uint32_t flow_label;
    uint8_t sgid_index, hop_limit, traffic_class;
};

struct cpv_ah_attr {
    struct cpv_global_route grh;
    uint16_t dlid;
    uint8_t sl, src_path_bits, static_rate, is_global, port_num;
};

struct cpv_qp_attr {
    int qp_state, cur_qp_state, path_mtu, path_mig_state;
    uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
    unsigned int qp_access_flags;
    struct cpv_qp_cap cap;
    struct cpv_ah_attr ah_attr, alt_ah_attr;
    uint16_t pkey_index, alt_pkey_index;
    uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num,
        timeout, retry_cnt, rnr_retry, alt_port_num, alt_timeout;
    uint32_t rate_limit;
};

struct cpv_sge {
    uint64_t addr;
    uint32_t length, lkey;
};

struct cpv_send_wr {
    uint64_t wr_id;
    struct cpv_send_wr *next;
    struct cpv_sge *sg_list;
    int num_sge;
    int opcode;              /* enum ibv_wr_opcode */
    unsigned int send_flags;
    uint32_t imm_data;
    union {
        struct {
            uint64_t remote_addr;
            uint32_t rkey;
        } rdma;
        uint64_t _atomic[4]; /* the largest member: atomic {addr, compare_add, swap, rkey} */
    } wr;
    uint32_t remote_srqn;    /* union qp_type */
    union {
        struct {
            void *mw;
            uint32_t rkey;
            struct {
                void *mr;
                uint64_t addr, length;
                unsigned int mw_access_flags;
            } bind_info;
        } bind_mw;
    } ext;                   /* bind_mw / tso */
};

struct cpv_recv_wr {
    uint64_t wr_id;
    struct cpv_recv_wr *next;
    struct cpv_sge *sg_list;
    int num_sge;
};

struct cpv_wc {
    uint64_t wr_id;
    int status;   /* enum ibv_wc_status */
    int opcode;   /* enum ibv_wc_opcode */
    uint32_t vendor_err, byte_len, imm_data, qp_num, src_qp;
    unsigned int wc_flags;
    uint16_t pkey_index, slid;
    uint8_t sl, dlid_path_bits;
};

/* enum values used (identical to the real header's) */
enum {
    CPV_WR_RDMA_WRITE = 0, CPV_WR_SEND = 2, CPV_WR_RDMA_READ = 4,
    CPV_SEND_SIGNALED = 1 << 1, CPV_SEND_INLINE = 1 << 3,
    CPV_ACCESS_LOCAL_WRITE = 1, CPV_ACCESS_REMOTE_WRITE = 1 << 1, CPV_ACCESS_REMOTE_READ = 1 << 2,
    CPV_QPS_RESET = 0, CPV_QPS_INIT = 1, CPV_QPS_RTR = 2, CPV_QPS_RTS = 3, CPV_QPS_ERR = 6,
    CPV_QPT_RC = 2,
    CPV_QP_STATE = 1 << 0, CPV_QP_ACCESS_FLAGS = 1 << 3, CPV_QP_PKEY_INDEX = 1 << 4, CPV_QP_PORT = 1 << 5,
    CPV_QP_AV = 1 << 7, CPV_QP_PATH_MTU = 1 << 8, CPV_QP_TIMEOUT = 1 << 9, CPV_QP_RETRY_CNT = 1 << 10,
    CPV_QP_RNR_RETRY = 1 << 11, CPV_QP_RQ_PSN = 1 << 12, CPV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
    CPV_QP_MIN_RNR_TIMER = 1 << 15, CPV_QP_SQ_PSN = 1 << 16, CPV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
    CPV_QP_DEST_QPN = 1 << 20,
    CPV_PORT_DOWN = 1, CPV_PORT_ACTIVE = 4,
    CPV_LINK_LAYER_INFINIBAND = 1, CPV_LINK_LAYER_ETHERNET = 2,
    CPV_WC_SUCCESS = 0, CPV_WC_SEND = 0, CPV_WC_RDMA_WRITE = 1, CPV_WC_RDMA_READ = 2, CPV_WC_RECV = 1 << 7,
};

/* The exported functions used, by symbol name. */
typedef struct cpv_device **(*cpv_get_device_list_fn)(int *num);
typedef void (*cpv_free_device_list_fn)(struct cpv_device **list);
typedef const char *(*cpv_get_device_name_fn)(struct cpv_device *dev);
typedef struct cpv_context *(*cpv_open_device_fn)(struct cpv_device *dev);
typedef int (*cpv_close_device_fn)(struct cpv_context *ctx);
typedef int (*cpv_query_device_fn)(struct cpv_context *ctx, struct cpv_device_attr *attr);
typedef int (*cpv_query_port_fn)(struct cpv_context *ctx, uint8_t port, struct cpv_port_attr *attr);
typedef int (*cpv_query_gid_fn)(struct cpv_context *ctx, uint8_t port, int index, union cpv_gid *gid);
typedef struct cpv_pd *(*cpv_alloc_pd_fn)(struct cpv_context *ctx);
typedef int (*cpv_dealloc_pd_fn)(struct cpv_pd *pd);
typedef struct cpv_mr *(*cpv_reg_mr_fn)(struct cpv_pd *pd, void *addr, size_t length, int access);
typedef int (*cpv_dereg_mr_fn)(struct cpv_mr *mr);
typedef struct cpv_cq *(*cpv_create_cq_fn)(struct cpv_context *ctx, int cqe, void *cq_context, void *channel,
                                           int comp_vector);
typedef int (*cpv_destroy_cq_fn)(struct cpv_cq *cq);
typedef struct cpv_qp *(*cpv_create_qp_fn)(struct cpv_pd *pd, struct cpv_qp_init_attr *attr);
typedef int (*cpv_destroy_qp_fn)(struct cpv_qp *qp);
typedef int (*cpv_modify_qp_fn)(struct cpv_qp *qp, struct cpv_qp_attr *attr, int attr_mask);

/* MTU enum (1..5) -> bytes */
static inline int cpv_mtu_bytes(int mtu)
{
    return mtu >= 1 && mtu <= 5 ? 128 << mtu : 0;
}

#endif
