/* ev_nccl.h - facts of an NCCL_DEBUG (or RCCL_DEBUG-style) log: what the log
 * says about the communication stack and the warnings it printed.
 *
 * Filled by src/readers/nccl_log.c from any text in which NCCL lines appear
 * (a pure NCCL_DEBUG_FILE, a torchrun/srun/mpirun console, an nccl-tests run
 * with NCCL_DEBUG=INFO, lines with their "host:pid:tid [dev]" prefix stripped).
 * Read by the rule book (src/analysis/an_rules_nccl.c) and the reports.
 * Nothing here decides what is a problem.
 *
 * Every fact keeps the line it was seen on (ev_at), so findings cite
 * FILE:LINE. Caps: every list is a fixed array; items past a cap are counted
 * in the *_dropped fields. Plain data: free() it (ev_nccl_free).
 */
#ifndef CP_MODEL_EV_NCCL_H
#define CP_MODEL_EV_NCCL_H

#include <stdbool.h>

#include "ev_base.h"
#include "report.h"

#define EV_NCCL_MAX_ISSUES 64
#define EV_NCCL_MAX_DEVS 16
#define EV_NCCL_MAX_HOSTS 64
#define EV_NCCL_MAX_ENV 32
#define EV_NCCL_MAX_GPUS 64
#define EV_NCCL_MAX_QPS 16 /* distinct (host, dev, mtu, gid) of QP lines */

typedef enum ev_nccl_net {
    EV_NCCL_NET_UNKNOWN = 0,
    EV_NCCL_NET_IB,     /* internal IB verbs transport (IB or RoCE) or IBext */
    EV_NCCL_NET_SOCKET, /* kernel TCP sockets */
    EV_NCCL_NET_OTHER,  /* a plugin such as AWS OFI/EFA */
} ev_nccl_net;

typedef enum ev_nccl_gdr {
    EV_NCCL_GDR_UNKNOWN = 0,
    EV_NCCL_GDR_ON,  /* "GPU Direct RDMA Enabled" or a .../GDRDMA channel */
    EV_NCCL_GDR_OFF, /* "GPU Direct RDMA Disabled ..." or "disabling GDR" */
} ev_nccl_gdr;

/* Transports of "Channel xx/y : a[..] -> b[..] via T" lines. */
#define EV_NCCL_TRANSPORTS(X)                       \
    X(P2P_IPC, "p2p_ipc", "P2P/IPC")                \
    X(P2P_CUMEM, "p2p_cumem", "P2P/CUMEM")          \
    X(P2P_DIRECT, "p2p_direct", "P2P/direct")       \
    X(SHM, "shm", "SHM")                            \
    X(NET_IB, "net_ib", "NET/IB")                   \
    X(NET_IB_GDR, "net_ib_gdrdma", "NET/IB/GDRDMA") \
    X(NET_SOCKET, "net_socket", "NET/Socket")       \
    X(NET_OTHER, "net_other", "NET/other")          \
    X(COLLNET, "collnet", "CollNet")                \
    X(NVLS, "nvls", "NVLS")
typedef enum ev_nccl_transport {
#define X(e, k, s) EV_NCCL_TR_##e,
    EV_NCCL_TRANSPORTS(X)
#undef X
    EV_NCCL_TR_COUNT
} ev_nccl_transport;
const char *ev_nccl_transport_name(int t); /* "P2P/IPC" as NCCL prints it */
const char *ev_nccl_transport_key(int t);  /* "p2p_ipc", for JSON keys */

/* Warnings and errors NCCL prints, classified by signature (the rules decide
 * what each means; docs/FORMATS.md lists the phrases). */
#define EV_NCCL_ISSUE_KINDS(X)                                                              \
    X(IB_COMPLETION, "ib_completion", "NET/IB completion with error (code, vendor err)")    \
    X(IB_ASYNC, "ib_async", "an asynchronous IB event (port, QP or device error)")          \
    X(OFI_COMPLETION, "ofi_completion", "NET/OFI (libfabric, EFA) request completed with error") \
    X(IBV_CALL, "ibv_call", "a verbs call failed (ibv_modify_qp ...)")                      \
    X(CONNECT, "connect", "a socket connect to a peer failed")                              \
    X(NO_SOCKET_IF, "no_socket_if", "no usable network interface for NCCL's sockets")       \
    X(SHM, "shm", "shared memory (/dev/shm) could not be created or extended")              \
    X(NVLS, "nvls", "NVLS (NVLink SHARP) / multicast setup failed")                         \
    X(DUP_GPU, "duplicate_gpu", "two ranks of one communicator on one GPU")                  \
    X(P2P, "p2p", "CUDA peer access (P2P/IPC) not supported between two GPUs")                \
    X(PEER_CLOSED, "peer_closed", "a peer closed or reset its socket (it exited or the link broke)") \
    X(CUDA, "cuda", "a CUDA call inside NCCL failed")                                       \
    X(SYSTEM, "system", "unhandled system error / remote error reported by NCCL")           \
    X(OTHER, "warn", "another NCCL WARN line")
typedef enum ev_nccl_issue_kind {
#define X(e, k, d) EV_NCCL_ISSUE_##e,
    EV_NCCL_ISSUE_KINDS(X)
#undef X
    EV_NCCL_ISSUE_COUNT
} ev_nccl_issue_kind;
const char *ev_nccl_issue_key(int kind);

typedef struct ev_nccl_issue {
    int kind;        /* ev_nccl_issue_kind */
    long code;       /* IB wc status (12, 4 ...), errno of an ibv call, CUDA error; -1 */
    long vendor_err; /* IB vendor syndrome (129, 81 ...); -1 */
    char detail[96]; /* verbs call name, "ip<port>: reason", IB device, CUDA error text */
    int dev;         /* CUDA device of the NCCL prefix; -1 */
    ev_at at;        /* line, rank, host, time, text */
} ev_nccl_issue;

typedef struct ev_nccl_dev {
    char name[32];   /* "mlx5_0", "ibp3" */
    int port;
    char link[16];   /* "IB", "RoCE" */
    bool sharp;      /* "/SHARP" suffix */
} ev_nccl_dev;

/* One distinct QP setting seen on "NET/IB: [NCCL] Dev d ... mtu m ... GID g" lines. */
typedef struct ev_nccl_qp {
    char host[64];
    int dev;
    int mtu_bytes;   /* NCCL prints the IB MTU enum (1..5 = 256..4096 bytes); -1 */
    int gid_index;   /* -1 */
    long line;
} ev_nccl_qp;

typedef struct ev_nccl {
    long lines;                /* lines seen */
    long nccl_lines;           /* lines recognised as NCCL's */
    char version[32];          /* "2.18.5+cuda12.0", "2.18.3+hip6.0"; "" */
    ev_at version_at;
    bool rccl;                 /* RCCL (ROCm): "RCCL version" or a +hip build */
    char bootstrap_if[64];     /* "eth0:172.17.0.2<0>" */
    ev_at bootstrap_at;
    char net_plugin[96];       /* "NCCL RDMA Plugin v8 (v8)", "internal", "IBext_v8" */
    ev_at net_plugin_at;
    char network[32];          /* "Using network X" (IB, Socket, IBext_v8, AWS Libfabric) */
    int net;                   /* ev_nccl_net, from "Using network", NET/IB, NET/Socket */
    ev_at network_at;
    int n_devs;
    ev_at ib_using_at;         /* "NET/IB : Using [0]mlx5_0:1/RoCE ..." */
    ev_at ib_none_at;          /* "NET/IB : No device found." */
    ev_at socket_using_at;     /* "NET/Socket : Using [0]ens5:..." */
    ev_at plugin_fail_at;      /* a plugin WARN, e.g. "NET/OFI Only EFA provider is supported" */
    int gid_index;             /* NCCL_IB_GID_INDEX or "GID n" of a QP line; -1 */
    ev_at gid_at;
    int gdr;                   /* ev_nccl_gdr */
    char gdr_reason[96];       /* "distance 7 > 4", "no module", ... */
    ev_at gdr_at;
    long transports[EV_NCCL_TR_COUNT]; /* channel lines per transport */
    ev_at transport_at[EV_NCCL_TR_COUNT];
    int rings;                 /* "Channel 00/02 : 0 1 2" / "Ring 00 : ..." lines */
    int trees;                 /* "Trees [0] ..." lines */
    int coll_channels;         /* "N coll channels, M nvls channels": -1 unknown */
    int nvls_channels;
    ev_at channels_at;
    int nvls_available;        /* 1 available, 0 not available, -1 not said */
    ev_at nvls_at;
    int p2p_support;           /* "Check P2P Type intraNodeP2pSupport N": 1/0, -1 not said */
    ev_at p2p_support_at;
    long shmem_need;           /* "ncclMaxSharedMem N exceeds device/fn maxSharedMem M": N, M; -1 */
    long shmem_max;
    ev_at shmem_at;
    int nranks;                /* largest "nranks N" of a comm line; 0 unknown */
    int nnodes;                /* largest "nNodes N" of a comm line; 0 unknown */
    int max_rank;              /* largest rank seen in comm lines; -1 */
    int n_versions;            /* "NCCL version" banners (one per communicator's rank 0) */
    int independent_comms;     /* comm lines with the same rank and size on two hosts:
                                * separate communicators (independent jobs) */
    ev_at independent_at;
    int n_hosts;
    long hosts_dropped;
    int n_gpus;
    int n_env;
    int n_qps;
    int n_issues;
    long issues_dropped;
    long warn_lines;           /* all NCCL WARN lines */
    /* arrays last: only [0, n_x) is ever written or read */
    ev_nccl_dev devs[EV_NCCL_MAX_DEVS];
    char hosts[EV_NCCL_MAX_HOSTS][64]; /* distinct hosts of NCCL prefixes */
    int host_ranks[EV_NCCL_MAX_HOSTS]; /* distinct (pid,dev) seen per host */
    char gpus[EV_NCCL_MAX_GPUS][48];   /* GPU names from nccl-tests "# Rank n ... device d [..] NAME" */
    struct { char name[40]; char value[56]; long line; } env[EV_NCCL_MAX_ENV]; /* "X set by environment to Y" */
    ev_nccl_qp qps[EV_NCCL_MAX_QPS];
    ev_nccl_issue issues[EV_NCCL_MAX_ISSUES];
} ev_nccl;

/* Env value NCCL reported as set ("NCCL_IB_GID_INDEX"), or NULL; *line
 * (may be NULL) gets its line. */
const char *ev_nccl_env(const ev_nccl *f, const char *name, long *line);
/* Most ranks seen on one host (distinct pid/device pairs of NCCL prefixes). */
int ev_nccl_max_host_ranks(const ev_nccl *f);
/* Is `name` a GPU generation that has NVLS (NVLink SHARP: Hopper, Blackwell)? */
bool ev_gpu_has_nvls(const char *name);

void ev_nccl_free(ev_nccl *f);
/* The facts as an evidence[] entry's fields. */
void ev_nccl_report(const ev_nccl *f, rep_report *r, rep_node *obj);

#endif
