/* nccl_log.h - the one reader of NCCL_DEBUG=INFO/WARN logs (NCCL 2.4 .. 2.2x).
 *
 * Input: any text in which NCCL lines appear - a pure NCCL_DEBUG_FILE, a
 * torchrun/srun/mpirun console with "[rank3]:", "[default0]:" or "0: " tags,
 * lines with the usual "host:pid:tid [dev] NCCL INFO" prefix or with it
 * stripped (as users often paste). Lines that are not NCCL's are ignored, so
 * the same file can also go through the PyTorch and dmesg readers.
 *
 * Output: rd_nccl_facts, a plain struct of what the log says about the
 * communication stack - version, bootstrap interface, NET plugin and network,
 * IB/RoCE devices and GID index, socket fallback, GPU Direct RDMA state and
 * why, channel transports, rings/trees, NVLS, hosts and ranks - and the
 * warnings/errors with their codes. Every fact keeps the line (rd_nccl_at) of
 * its evidence so `diagnose` verdicts and `analyze` findings can cite
 * FILE:LINE. Both commands use this reader; nothing here decides what is a
 * problem (that is the rules' job).
 *
 * Use: rd_nccl_init(); rd_nccl_line() for each line (1-based numbers, no
 * newline; streaming, O(1) memory); rd_nccl_finish(). rd_nccl_parse_buf()
 * does all three over a buffer. Caps: every list is a fixed array; items past
 * a cap are counted in the *_dropped fields, never stored.
 *
 * Ownership: the facts struct is plain data owned by the caller (no heap);
 * `file` points at the caller's string, which must outlive the facts.
 */
#ifndef CP_READERS_NCCL_LOG_H
#define CP_READERS_NCCL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_prefix.h"

#define RD_NCCL_TEXT_MAX 200
#define RD_NCCL_MAX_ISSUES 64
#define RD_NCCL_MAX_DEVS 16
#define RD_NCCL_MAX_HOSTS 64
#define RD_NCCL_MAX_ENV 32
#define RD_NCCL_MAX_GPUS 64

/* Where a fact was seen: 1-based line and the line's text (trimmed). */
typedef struct rd_nccl_at {
    long line; /* 0 = not seen */
    char text[RD_NCCL_TEXT_MAX];
} rd_nccl_at;

typedef enum rd_nccl_net {
    RD_NCCL_NET_UNKNOWN = 0,
    RD_NCCL_NET_IB,     /* internal IB verbs transport (IB or RoCE) or IBext */
    RD_NCCL_NET_SOCKET, /* kernel TCP sockets */
    RD_NCCL_NET_OTHER,  /* a plugin such as AWS OFI/EFA */
} rd_nccl_net;

typedef enum rd_nccl_gdr {
    RD_NCCL_GDR_UNKNOWN = 0,
    RD_NCCL_GDR_ON,  /* "GPU Direct RDMA Enabled" or a .../GDRDMA channel */
    RD_NCCL_GDR_OFF, /* "GPU Direct RDMA Disabled ..." or "disabling GDR" */
} rd_nccl_gdr;

/* Transports of "Channel xx/y : a[..] -> b[..] via T" lines. */
#define RD_NCCL_TRANSPORTS(X)                       \
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
typedef enum rd_nccl_transport {
#define X(e, k, s) RD_NCCL_TR_##e,
    RD_NCCL_TRANSPORTS(X)
#undef X
    RD_NCCL_TR_COUNT
} rd_nccl_transport;
const char *rd_nccl_transport_name(int t); /* "P2P/IPC" as NCCL prints it */
const char *rd_nccl_transport_key(int t);  /* "p2p_ipc", for JSON keys */

/* Warnings and errors NCCL prints, classified by signature. */
#define RD_NCCL_ISSUE_KINDS(X)                                                       \
    X(IB_COMPLETION, "ib_completion", "NET/IB completion with error (code, vendor err)") \
    X(IBV_CALL, "ibv_call", "a verbs call failed (ibv_modify_qp ...)")                \
    X(CONNECT, "connect", "a socket connect to a peer failed")                         \
    X(SHM, "shm", "shared memory (/dev/shm) could not be created or extended")         \
    X(NVLS, "nvls", "NVLS (NVLink SHARP) setup failed")                                \
    X(CUDA, "cuda", "a CUDA call inside NCCL failed")                                  \
    X(SYSTEM, "system", "unhandled system error / remote error reported by NCCL")      \
    X(OTHER, "warn", "another NCCL WARN line")
typedef enum rd_nccl_issue_kind {
#define X(e, k, d) RD_NCCL_ISSUE_##e,
    RD_NCCL_ISSUE_KINDS(X)
#undef X
    RD_NCCL_ISSUE_COUNT
} rd_nccl_issue_kind;
const char *rd_nccl_issue_key(int kind);

typedef struct rd_nccl_issue {
    int kind;        /* rd_nccl_issue_kind */
    long code;       /* IB wc status (12, 4 ...), errno of ibv call, CUDA error; -1 */
    long vendor_err; /* IB vendor syndrome (129, 81 ...); -1 */
    char detail[96]; /* verbs call name, "ip<port>", reason ("Connection refused") */
    char host[64];
    int rank;        /* from a launcher tag; -1 */
    int dev;         /* CUDA device of the NCCL prefix; -1 */
    rd_time ts;
    rd_nccl_at at;
} rd_nccl_issue;

typedef struct rd_nccl_dev {
    char name[32];   /* "mlx5_0", "ibp3" */
    int port;
    char link[16];   /* "IB", "RoCE" */
    bool sharp;      /* "/SHARP" suffix */
} rd_nccl_dev;

typedef struct rd_nccl_facts {
    const char *file;          /* borrowed */
    long lines;                /* lines seen */
    long nccl_lines;           /* lines recognised as NCCL's */
    char version[32];          /* "2.18.5+cuda12.0"; "" */
    rd_nccl_at version_at;
    char bootstrap_if[64];     /* "eth0:172.17.0.2<0>" */
    rd_nccl_at bootstrap_at;
    char net_plugin[96];       /* "NCCL RDMA Plugin v8 (v8)", "internal", "IBext_v8" */
    rd_nccl_at net_plugin_at;
    char network[32];          /* "Using network X" (IB, Socket, IBext_v8, AWS Libfabric) */
    int net;                   /* rd_nccl_net, from "Using network", NET/IB, NET/Socket */
    rd_nccl_at network_at;
    int n_devs;
    rd_nccl_at ib_using_at;    /* "NET/IB : Using [0]mlx5_0:1/RoCE ..." */
    rd_nccl_at ib_none_at;     /* "NET/IB : No device found." */
    rd_nccl_at socket_using_at; /* "NET/Socket : Using [0]ens5:..." */
    rd_nccl_at plugin_fail_at; /* a plugin WARN, e.g. "NET/OFI Only EFA provider is supported" */
    int gid_index;             /* NCCL_IB_GID_INDEX or "GID n" of a QP line; -1 */
    rd_nccl_at gid_at;
    int gdr;                   /* rd_nccl_gdr */
    char gdr_reason[96];       /* "distance 7 > 4", "no module", ... */
    rd_nccl_at gdr_at;
    long transports[RD_NCCL_TR_COUNT]; /* channel lines per transport */
    rd_nccl_at transport_at[RD_NCCL_TR_COUNT];
    int rings;                 /* "Channel 00/02 : 0 1 2" / "Ring 00 : ..." lines */
    int trees;                 /* "Trees [0] ..." lines */
    int coll_channels;         /* "N coll channels, M nvls channels": -1 unknown */
    int nvls_channels;
    rd_nccl_at channels_at;
    int nvls_available;        /* 1 available, 0 not available, -1 not said */
    rd_nccl_at nvls_at;
    int nranks;                /* largest "nranks N" of a comm line; 0 unknown */
    int max_rank;              /* largest rank seen in comm lines; -1 */
    int n_hosts;
    long hosts_dropped;
    int n_gpus;
    int n_env;
    int n_issues;
    long issues_dropped;
    long warn_lines;           /* all NCCL WARN lines */
    rd_keyset keys_;           /* private: phrases looked for, one pass per line */
    int n_seen_;               /* private: entries of seen_ */
    /* arrays last: only [0, n_x) is ever written or read (init skips them) */
    rd_nccl_dev devs[RD_NCCL_MAX_DEVS];
    char hosts[RD_NCCL_MAX_HOSTS][64]; /* distinct hosts of NCCL prefixes */
    int host_ranks[RD_NCCL_MAX_HOSTS]; /* distinct (pid,dev) seen per host */
    char gpus[RD_NCCL_MAX_GPUS][48];  /* GPU names from nccl-tests "# Rank n ... device d [..] NAME" */
    struct { char name[40]; char value[56]; long line; } env[RD_NCCL_MAX_ENV]; /* "X set by environment to Y" */
    rd_nccl_issue issues[RD_NCCL_MAX_ISSUES];
    struct { uint32_t host_hash; long pid; int dev; } seen_[256]; /* private: distinct (host,pid,dev) */
} rd_nccl_facts;

void rd_nccl_init(rd_nccl_facts *f, const char *file);
/* Feed one line (no newline) with its 1-based number. */
void rd_nccl_line(rd_nccl_facts *f, const char *line, size_t len, long lineno);
/* Same, with the prefix already parsed by the caller (saves a second parse
 * when several readers see the same line). */
void rd_nccl_line_pfx(rd_nccl_facts *f, const rd_prefix *pfx, const char *line, size_t len,
                      long lineno);
void rd_nccl_finish(rd_nccl_facts *f);
/* init + every line of buf + finish. */
void rd_nccl_parse_buf(rd_nccl_facts *f, const char *file, const char *buf, size_t len);

/* Confidence 0..100 that head[0..n) (the start of a file) is an NCCL_DEBUG
 * log or a console holding one: 100 with 3+ NCCL lines or a third of the
 * lines, 60 with 1-2, else 0. For content detection in `analyze`. */
int rd_nccl_sniff(const char *head, size_t n);
/* Is `name` a GPU generation that has NVLS (NVLink SHARP: Hopper, Blackwell)? */
bool rd_nccl_gpu_has_nvls(const char *name);
/* Env value NCCL reported as set ("NCCL_IB_GID_INDEX"), or NULL. */
const char *rd_nccl_env(const rd_nccl_facts *f, const char *name);

#endif
