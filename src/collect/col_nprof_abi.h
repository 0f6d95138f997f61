/* col_nprof_abi.h - the collector's own declarations of NCCL's profiler
 * plugin interface (NCCL's ext-profiler headers, versions 1 to 6), written
 * from the interface NCCL documents; nothing is copied.
 *
 * NCCL loads the plugin, looks for the symbols ncclProfiler_v6 ...
 * ncclProfiler_v1 (newest first) and calls through the first it finds.
 * Field order, types and widths below must equal NCCL's exactly:
 * tests/vendor/check_collect_decls.c compares every offset with the real
 * headers when the build machine has them (CP_NCCL_PROFILER_INC).
 * Differences between versions that matter here:
 *   v1      func, datatype, algo, proto are small enums; descriptors carry
 *           the communicator's name and hash; init knows nothing of it
 *   v2, v3  those become strings; v3 adds kernel-channel events
 *   v4      init receives the communicator (name, hash, nodes, ranks,
 *           rank); kernel channels carry GPU timestamps (ptimer); proxy
 *           steps report their transfer size in the state arguments
 *   v5      the type field widens to 64 bits; API events (group, coll,
 *           p2p, kernel launch) parent the operations; init takes the
 *           comm id before the mask
 *   v6      adds copy-engine events (not enabled here); the fields read
 *           here sit where v5 has them
 */
#ifndef CP_COLLECT_COL_NPROF_ABI_H
#define CP_COLLECT_COL_NPROF_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* event type bits (ncclProfile*) */
enum {
    NP_GROUP = 1 << 0, NP_COLL = 1 << 1, NP_P2P = 1 << 2, NP_PROXY_OP = 1 << 3, NP_PROXY_STEP = 1 << 4,
    NP_PROXY_CTRL = 1 << 5, NP_KERNEL_CH = 1 << 6, NP_NET_PLUGIN = 1 << 7, NP_GROUP_API = 1 << 8,
    NP_COLL_API = 1 << 9, NP_P2P_API = 1 << 10, NP_KERNEL_LAUNCH = 1 << 11,
};

typedef void (*np_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

typedef struct np_proxy_op {
    pid_t pid;
    uint8_t channel_id;
    int peer;
    int n_steps;
    int chunk_size;
    int is_send;
} np_proxy_op;

typedef struct np_net_plugin {
    int64_t id;
    void *data;
} np_net_plugin;

/* ---- v1 ---- */
typedef struct np_descr_v1 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            uint8_t func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            uint8_t datatype;
            uint32_t op;
            size_t traffic_bytes;
            uint8_t n_max_channels;
            uint8_t n_warps;
            uint8_t algo;
            uint8_t proto;
            int is_collnet;
            int is_nvls;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            uint8_t func;
            void *buff;
            uint8_t datatype;
            size_t count;
            int peer;
        } p2p;
        np_proxy_op proxy_op;
        struct {
            int step;
        } proxy_step;
    };
} np_descr_v1;

/* state arguments of v1-v3 */
typedef union np_state_args_v1 {
    struct {
        size_t trans_size;
        int steps;
    } proxy_op;
    struct {
        int appended_proxy_ops;
    } proxy_ctrl;
} np_state_args_v1;

/* ---- v2 ---- */
typedef struct np_descr_v2 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            size_t traffic_bytes;
            uint8_t n_max_channels;
            uint8_t n_warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        np_proxy_op proxy_op;
        struct {
            int step;
        } proxy_step;
    };
} np_descr_v2;

/* ---- v3 ---- */
typedef struct np_descr_v3 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            const char *name;
            uint64_t comm_hash;
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t n_max_channels;
            uint8_t n_warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *name;
            uint64_t comm_hash;
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
        } p2p;
        np_proxy_op proxy_op;
        struct {
            int step;
        } proxy_step;
        struct {
            uint8_t channel_id;
        } kernel_ch;
        np_net_plugin net_plugin;
    };
} np_descr_v3;

/* ---- v4 ---- */
typedef struct np_descr_v4 {
    uint8_t type;
    void *parent;
    int rank;
    union {
        struct {
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t n_channels;
            uint8_t n_warps;
            const char *algo;
            const char *proto;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t n_channels;
        } p2p;
        np_proxy_op proxy_op;
        struct {
            int step;
        } proxy_step;
        struct {
            uint8_t channel_id;
            uint64_t ptimer;
        } kernel_ch;
        np_net_plugin net_plugin;
    };
} np_descr_v4;

/* state arguments of v4-v6 */
typedef union np_state_args_v4 {
    struct {
        size_t trans_size;
    } proxy_step;
    struct {
        int appended_proxy_ops;
    } proxy_ctrl;
    struct {
        void *data;
    } net_plugin;
    struct {
        uint64_t ptimer;
    } kernel_ch;
} np_state_args_v4;

/* ---- v5 (and v6, whose descriptor extends the union) ---- */
typedef struct np_descr_v5 {
    uint64_t type;
    void *parent;
    int rank;
    union {
        struct {
            bool graph_captured;
            int group_depth;
        } group_api;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            int root;
            void *stream;
            bool graph_captured;
        } coll_api;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            void *stream;
            bool graph_captured;
        } p2p_api;
        struct {
            void *stream;
        } kernel_launch;
        struct {
            uint64_t seq;
            const char *func;
            const void *send_buff;
            void *recv_buff;
            size_t count;
            int root;
            const char *datatype;
            uint8_t n_channels;
            uint8_t n_warps;
            const char *algo;
            const char *proto;
            void *parent_group;
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t n_channels;
            void *parent_group;
        } p2p;
        np_proxy_op proxy_op;
        struct {
            int step;
        } proxy_step;
        struct {
            uint8_t channel_id;
            uint64_t ptimer;
        } kernel_ch;
        np_net_plugin net_plugin;
    };
} np_descr_v5;

/* ---- the entry-point tables (ncclProfiler_vN) ---- */
typedef struct np_v1 {
    const char *name;
    int (*init)(void **ctx, int *mask);
    int (*start_event)(void *ctx, void **handle, np_descr_v1 *d);
    int (*stop_event)(void *handle);
    int (*record_event_state)(void *handle, int state, np_state_args_v1 *a);
    int (*finalize)(void *ctx);
} np_v1;

typedef struct np_v2 {
    const char *name;
    int (*init)(void **ctx, int *mask);
    int (*start_event)(void *ctx, void **handle, np_descr_v2 *d);
    int (*stop_event)(void *handle);
    int (*record_event_state)(void *handle, int state, np_state_args_v1 *a);
    int (*finalize)(void *ctx);
} np_v2;

typedef struct np_v3 {
    const char *name;
    int (*init)(void **ctx, int *mask);
    int (*start_event)(void *ctx, void **handle, np_descr_v3 *d);
    int (*stop_event)(void *handle);
    int (*record_event_state)(void *handle, int state, np_state_args_v1 *a);
    int (*finalize)(void *ctx);
} np_v3;

typedef struct np_v4 {
    const char *name;
    int (*init)(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash, int n_nodes, int n_ranks,
                int rank, np_logger log);
    int (*start_event)(void *ctx, void **handle, np_descr_v4 *d);
    int (*stop_event)(void *handle);
    int (*record_event_state)(void *handle, int state, np_state_args_v4 *a);
    int (*finalize)(void *ctx);
} np_v4;

typedef struct np_v5 {
    const char *name;
    int (*init)(void **ctx, uint64_t comm_id, int *mask, const char *comm_name, int n_nodes, int n_ranks, int rank,
                np_logger log);
    int (*start_event)(void *ctx, void **handle, np_descr_v5 *d);
    int (*stop_event)(void *handle);
    int (*record_event_state)(void *handle, int state, np_state_args_v4 *a);
    int (*finalize)(void *ctx);
} np_v5;

/* v6 has v5's signatures (its descriptor is v5's with a longer union) */
typedef np_v5 np_v6;

/* NCCL's enum values behind v1's small integers (ncclFunc_t, algorithm and
 * protocol numbers, ncclDataType_t). */
#define NP_V1_FUNCS { "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv", "Send", "Recv" }
#define NP_V1_ALGOS { "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT" }
#define NP_V1_PROTOS { "LL", "LL128", "SIMPLE" }
#define NP_DATATYPES                                                                                   \
    { "ncclInt8", "ncclUint8", "ncclInt32", "ncclUint32", "ncclInt64", "ncclUint64", "ncclFloat16",    \
      "ncclFloat32", "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2" }

#endif
