/* cptrace.h - the `chainprof run --mode trace` file format (.cptrace): what
 * the collector writes and src/readers/rd_cptrace.c reads. Public so other
 * tools may read it too; docs/FORMATS.md ("chainprof run traces") is the
 * prose version of this header.
 *
 * Why a format of our own (and not Kineto JSON): the collector copies the
 * records its per-thread rings hold to the file as they are, so the
 * background writer spends no time formatting and a record costs 48 bytes on
 * disk (Kineto's JSON spends about four times that and a number-to-text
 * conversion per field); every record has one fixed size, so the rings are
 * plain arrays and a damaged file is skipped record by record. Timestamps
 * are exact nanoseconds of CLOCK_MONOTONIC, mapped to the job's common clock
 * by the header's clock pair and offset.
 *
 * Layout (little-endian, the writer's native layout on x86-64 and aarch64):
 *   cpt_header                         once, at offset 0 (header_bytes long)
 *   { cpt_chunk, n_recs x cpt_rec }    repeated; each chunk holds records of
 *                                      one thread (tid), in the order that
 *                                      thread recorded them
 * A clean close ends with a chunk whose last record is CPT_K_END. A file
 * without it was cut short (the process died): the reader keeps every whole
 * chunk and counts the damage.
 *
 * Strings (paths, region names, NCCL's function/datatype/algorithm names,
 * kernel names) are CPT_K_STR records followed by ceil(len / 48) raw slots
 * holding the bytes; other records refer to them by id (u32, 0 = none).
 * Ids are unique in the file; a string is written before any record of its
 * thread uses it, but another thread may use it in an earlier chunk, so a
 * reader resolves ids after reading every chunk.
 *
 * Worker processes (forked children that did not exec, e.g. PyTorch
 * data-loader workers) write FILE.w<pid> next to their parent's FILE, with
 * role CPT_ROLE_WORKER; the reader reads them into the parent's timeline.
 */
#ifndef CHAINPROF_CPTRACE_H
#define CHAINPROF_CPTRACE_H

#include <stdint.h>

#define CPT_MAGIC "CPTRACE1"
#define CPT_VERSION 1
#define CPT_CHUNK_MAGIC 0x4b435043u /* "CPCK" */
#define CPT_HOST_BYTES 64
#define CPT_NO_COMM 0xffffffffu

enum { CPT_ROLE_MAIN = 0, CPT_ROLE_WORKER = 1 };
/* where the rank came from */
enum { CPT_RANK_NONE = 0, CPT_RANK_ENV_RANK, CPT_RANK_ENV_OMPI, CPT_RANK_ENV_PMIX, CPT_RANK_ENV_SLURM };
/* how clock_offset_ns was found */
enum {
    CPT_SYNC_NONE = 0,  /* no offset: the host's own CLOCK_REALTIME (NTP/PTP-disciplined) */
    CPT_SYNC_LEADER = 1, /* this process's `chainprof run` is the reference */
    CPT_SYNC_TCP = 2,    /* measured against the reference over TCP (rtt in clock_rtt_ns) */
};

typedef struct cpt_header {
    char magic[8];         /* CPT_MAGIC, not NUL-terminated */
    uint32_t version;      /* CPT_VERSION */
    uint32_t header_bytes; /* sizeof(cpt_header) of the writer: chunks start here */
    uint32_t rec_bytes;    /* sizeof(cpt_rec) = 48 */
    uint32_t flags;        /* CPT_HF_* */
    int32_t rank;          /* -1 unknown */
    int32_t world_size;    /* -1 unknown */
    int32_t local_rank;    /* -1 unknown */
    int32_t rank_source;   /* CPT_RANK_* */
    int32_t pid, ppid;
    int32_t role;          /* CPT_ROLE_* */
    int32_t clock_sync;    /* CPT_SYNC_* */
    int64_t mono0_ns;      /* a CLOCK_MONOTONIC reading ... */
    int64_t real0_ns;      /* ... and the CLOCK_REALTIME reading taken with it */
    int64_t clock_offset_ns; /* add to this host's realtime for the job's reference clock */
    int64_t clock_rtt_ns;  /* round trip of the best sync exchange (uncertainty <= rtt/2); -1 none */
    int64_t ring_bytes;    /* per-thread ring capacity */
    int64_t step_first, step_last; /* --steps window, -1 = open */
    char host[CPT_HOST_BYTES]; /* NUL-terminated */
    char job[64];          /* job id from the launcher's environment, "" none */
    char cmd[128];         /* the program (argv[0] of the process) */
    int32_t run_pid;       /* pid of the `chainprof run` that started the job, 0 unknown */
    char reserved[140];
} cpt_header;

#define CPT_HF_CUPTI 0x1u /* CUPTI activity was enabled in this process */

typedef struct cpt_chunk {
    uint32_t magic;  /* CPT_CHUNK_MAGIC */
    uint32_t tid;    /* kernel thread id of the records' thread */
    uint32_t n_recs;
    uint32_t reserved;
} cpt_chunk;

typedef struct cpt_rec {
    uint8_t kind;   /* CPT_K_* */
    uint8_t op;     /* per kind: API id, I/O call, event type */
    uint16_t flags; /* per kind */
    uint32_t u32;   /* per kind */
    int64_t t_ns;   /* CLOCK_MONOTONIC start (or instant) */
    int64_t dur_ns; /* duration; 0 for instants */
    uint64_t a, b, c;
} cpt_rec;

/* Record kinds and what their fields hold (t_ns/dur_ns as above unless
 * said otherwise):
 *   STR      u32 id, a = length; the bytes follow in ceil(a/48) slots
 *   THREAD   u32 = name str id, a = tid: names the thread (first record of
 *            a thread, and again when it renames itself)
 *   CUDA     op = CPT_CUDA_* API, u32 = device, a = stream, b = bytes
 *            (copies, sets) or the kernel function, c = external correlation
 *            id (pairs with CUPTI's correlation, see CORR); flags = CPT_MK_*
 *            copy kind for copies
 *   NCALL    op = CPT_NCCL_* API, u32 = comm index (COMM) of the profiler
 *            events the call made, or CPT_NO_COMM, a = stream, b = count
 *            (nranks for CommInitRank), c = external correlation id (GPU
 *            work the call launched links to it, see CORR); flags = the
 *            datatype (NCCL's ncclDataType_t) or, for CommInitRank, the rank
 *   IO       op = CPT_IO_*, u32 = class CPT_IOC_*, a = fd, b = bytes moved
 *            (opens: the open flags), c = path str id (0 unknown; renames:
 *            the new name); flags CPT_IOF_* (on error b = errno)
 *   STEP     a = step id; the step's [t_ns, t_ns + dur_ns)
 *   REGION   u32 = name str id, a = chainprof_region_kind, b = depth
 *   CPU      a = tid, b = that thread's CPU time (ns) at t_ns (sampled at
 *            every step end, for every thread the process has recorded on)
 *   COMM     u32 = comm index, a = comm id (NCCL's commHash / commId),
 *            b = nranks << 32 | rank, c = nNodes (-1 unknown); flags =
 *            profiler interface version; t_ns when NCCL initialised it;
 *            a STR with the comm name, if any, follows with the same u32
 *   NEV      an NCCL profiler event: op = CPT_NEV_*, u32 = comm index, a =
 *            event id, b = parent event id (0 none), c = per op (below),
 *            flags = state (STATE ops)
 *   NEV2     continuation of the NEV before it (COLL/P2P/PROXYOP starts):
 *            see CPT_NEV_* for what each field holds
 *   GPU      GPU activity from CUPTI: op = CPT_GPU_*, u32 = device, a =
 *            stream, b = CUPTI correlation id, c = kernel name str id or
 *            bytes; flags = CPT_MK_* (copies); t_ns/dur_ns already on
 *            CLOCK_MONOTONIC
 *   CORR     a = external id (CUDA record c), b = CUPTI correlation id
 *   DROP     a = records this thread dropped since the last DROP (ring
 *            full), b = of those, how many were strings
 *   END      last record of a clean close: a = records dropped in all,
 *            b = CLOCK_REALTIME at t_ns (the closing clock pair)
 */
enum {
    CPT_K_STR = 1, CPT_K_THREAD, CPT_K_CUDA, CPT_K_NCALL, CPT_K_IO, CPT_K_STEP, CPT_K_REGION, CPT_K_CPU,
    CPT_K_COMM, CPT_K_NEV, CPT_K_NEV2, CPT_K_GPU, CPT_K_CORR, CPT_K_DROP, CPT_K_END,
    CPT_K__COUNT
};

/* CUDA runtime and driver calls the interposer records:
 * X(ENUM, "name", class). Class says what the call does to the GPU. */
enum { CPT_CC_LAUNCH = 0, CPT_CC_COPY, CPT_CC_COPY_SYNC, CPT_CC_SET, CPT_CC_SYNC, CPT_CC_GRAPH, CPT_CC_OTHER };
#define CPT_CUDA_APIS(X)                                                       \
    X(LAUNCH_KERNEL, "cudaLaunchKernel", CPT_CC_LAUNCH)                        \
    X(LAUNCH_KERNEL_EXC, "cudaLaunchKernelExC", CPT_CC_LAUNCH)                 \
    X(LAUNCH_COOP, "cudaLaunchCooperativeKernel", CPT_CC_LAUNCH)              \
    X(MEMCPY, "cudaMemcpy", CPT_CC_COPY_SYNC)                                  \
    X(MEMCPY_ASYNC, "cudaMemcpyAsync", CPT_CC_COPY)                            \
    X(MEMCPY_PEER, "cudaMemcpyPeer", CPT_CC_COPY_SYNC)                         \
    X(MEMCPY_PEER_ASYNC, "cudaMemcpyPeerAsync", CPT_CC_COPY)                   \
    X(MEMSET, "cudaMemset", CPT_CC_SET)                                        \
    X(MEMSET_ASYNC, "cudaMemsetAsync", CPT_CC_SET)                             \
    X(DEVICE_SYNC, "cudaDeviceSynchronize", CPT_CC_SYNC)                       \
    X(STREAM_SYNC, "cudaStreamSynchronize", CPT_CC_SYNC)                       \
    X(EVENT_SYNC, "cudaEventSynchronize", CPT_CC_SYNC)                         \
    X(STREAM_WAIT_EVENT, "cudaStreamWaitEvent", CPT_CC_OTHER)                  \
    X(GRAPH_LAUNCH, "cudaGraphLaunch", CPT_CC_GRAPH)                           \
    X(SET_DEVICE, "cudaSetDevice", CPT_CC_OTHER)                               \
    X(CU_LAUNCH_KERNEL, "cuLaunchKernel", CPT_CC_LAUNCH)                       \
    X(CU_LAUNCH_KERNEL_EX, "cuLaunchKernelEx", CPT_CC_LAUNCH)                  \
    X(CU_MEMCPY_HTOD, "cuMemcpyHtoD_v2", CPT_CC_COPY_SYNC)                     \
    X(CU_MEMCPY_DTOH, "cuMemcpyDtoH_v2", CPT_CC_COPY_SYNC)                     \
    X(CU_MEMCPY_ASYNC, "cuMemcpyAsync", CPT_CC_COPY)                           \
    X(CU_MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync_v2", CPT_CC_COPY)               \
    X(CU_MEMCPY_DTOH_ASYNC, "cuMemcpyDtoHAsync_v2", CPT_CC_COPY)               \
    X(CU_MEMSET_D8_ASYNC, "cuMemsetD8Async", CPT_CC_SET)                       \
    X(CU_CTX_SYNC, "cuCtxSynchronize", CPT_CC_SYNC)                            \
    X(CU_STREAM_SYNC, "cuStreamSynchronize", CPT_CC_SYNC)                      \
    X(CU_EVENT_SYNC, "cuEventSynchronize", CPT_CC_SYNC)                        \
    X(CU_GRAPH_LAUNCH, "cuGraphLaunch", CPT_CC_GRAPH)
enum {
#define CPT_X(e, name, cls) CPT_CUDA_##e,
    CPT_CUDA_APIS(CPT_X)
#undef CPT_X
    CPT_CUDA__COUNT
};

/* Copy kinds (the runtime's cudaMemcpyKind values, which the driver calls
 * map onto): flags of CUDA and GPU copy records. */
enum { CPT_MK_H2H = 0, CPT_MK_H2D = 1, CPT_MK_D2H = 2, CPT_MK_D2D = 3, CPT_MK_DEFAULT = 4, CPT_MK_P2P = 5 };

/* NCCL API calls the interposer times: X(ENUM, "name"). */
#define CPT_NCCL_APIS(X)                                                       \
    X(ALL_REDUCE, "ncclAllReduce")                                             \
    X(ALL_GATHER, "ncclAllGather")                                             \
    X(REDUCE_SCATTER, "ncclReduceScatter")                                     \
    X(BROADCAST, "ncclBroadcast")                                              \
    X(REDUCE, "ncclReduce")                                                    \
    X(ALL_TO_ALL, "ncclAlltoAll")                                              \
    X(SEND, "ncclSend")                                                        \
    X(RECV, "ncclRecv")                                                        \
    X(GROUP_END, "ncclGroupEnd")                                               \
    X(COMM_INIT_RANK, "ncclCommInitRank")                                      \
    X(COMM_DESTROY, "ncclCommDestroy")
enum {
#define CPT_X(e, name) CPT_NCCL_##e,
    CPT_NCCL_APIS(CPT_X)
#undef CPT_X
    CPT_NCCL__COUNT
};

/* libc file I/O calls the interposer records: X(ENUM, "name", moves data). */
#define CPT_IO_CALLS(X)                                                        \
    X(OPEN, "open", 0)                                                         \
    X(OPENAT, "openat", 0)                                                     \
    X(CREAT, "creat", 0)                                                       \
    X(READ, "read", 1)                                                         \
    X(PREAD, "pread", 1)                                                       \
    X(READV, "readv", 1)                                                       \
    X(PREADV, "preadv", 1)                                                     \
    X(WRITE, "write", 2)                                                       \
    X(PWRITE, "pwrite", 2)                                                     \
    X(WRITEV, "writev", 2)                                                     \
    X(PWRITEV, "pwritev", 2)                                                   \
    X(FSYNC, "fsync", 0)                                                       \
    X(FDATASYNC, "fdatasync", 0)                                               \
    X(CLOSE, "close", 0)                                                       \
    X(RENAME, "rename", 0)                                                     \
    X(RENAMEAT, "renameat", 0)                                                 \
    X(FOPEN, "fopen", 0)                                                       \
    X(FCLOSE, "fclose", 0)                                                     \
    X(FREAD, "fread", 1)                                                       \
    X(FWRITE, "fwrite", 2)
enum {
#define CPT_X(e, name, dir) CPT_IO_##e,
    CPT_IO_CALLS(CPT_X)
#undef CPT_X
    CPT_IO__COUNT
};
/* I/O classes: by what the framework said (a checkpoint or dataset region
 * around the call), else by the file's path (docs/METRICS.md) */
enum { CPT_IOC_OTHER = 0, CPT_IOC_CHECKPOINT = 1, CPT_IOC_DATASET = 2 };
#define CPT_IOF_ERROR 0x1u      /* the call failed (b holds -errno) */
#define CPT_IOF_BY_REGION 0x2u  /* class from an enclosing region, not the path */

/* NCCL profiler plugin events (NEV op). c and NEV2 per op:
 *   GROUP_START/STOP          legacy group (v1-v4 parent of COLL/P2P)
 *   GROUPAPI_START/STOP       c = group depth; STATE: flags = NCCL state
 *   COLLAPI_START             c = count; NEV2: u32 = func str, a = stream,
 *                             b = root, c = datatype str
 *   P2PAPI_START              c = count; NEV2: u32 = func str, a = stream,
 *                             c = datatype str
 *   KLAUNCH_START             c = stream
 *   COLL_START                c = seqNumber; NEV2: u32 = func str, a = count,
 *                             b = root, c = datatype str | algo str << 32,
 *                             t_ns = proto str, dur_ns = nChannels |
 *                             nWarps << 8
 *   P2P_START                 c = peer; NEV2: u32 = func str, a = count,
 *                             b = nChannels, c = datatype str
 *   PROXYOP_START             c = peer; NEV2: u32 = channel, a = nSteps,
 *                             b = chunkSize, c = isSend | (origin pid !=
 *                             this pid) << 1
 *   PROXYSTEP_START           c = step
 *   KCH_START                 c = the kernel's start ptimer (GPU ns); NEV2
 *                             u32 = channel
 *   STATE                     flags = NCCL state; c = transSize (proxy
 *                             steps), ptimer (KernelChStop), appended ops
 *   *_STOP                    the event ended (a = its id)
 */
enum {
    CPT_NEV_GROUP_START = 1, CPT_NEV_GROUP_STOP, CPT_NEV_GROUPAPI_START, CPT_NEV_GROUPAPI_STOP,
    CPT_NEV_COLLAPI_START, CPT_NEV_COLLAPI_STOP, CPT_NEV_P2PAPI_START, CPT_NEV_P2PAPI_STOP,
    CPT_NEV_KLAUNCH_START, CPT_NEV_KLAUNCH_STOP, CPT_NEV_COLL_START, CPT_NEV_COLL_STOP, CPT_NEV_P2P_START,
    CPT_NEV_P2P_STOP, CPT_NEV_PROXYOP_START, CPT_NEV_PROXYOP_STOP, CPT_NEV_PROXYSTEP_START,
    CPT_NEV_PROXYSTEP_STOP, CPT_NEV_KCH_START, CPT_NEV_KCH_STOP, CPT_NEV_PROXYCTRL_START,
    CPT_NEV_PROXYCTRL_STOP, CPT_NEV_STATE, CPT_NEV__COUNT
};

/* NCCL profiler states (ncclProfilerEventState_t values, identical in every
 * interface version that has them). */
enum {
    CPT_NS_PROXYOP_SEND_POSTED = 0, CPT_NS_PROXYOP_SEND_REM_FIFO_WAIT = 1, CPT_NS_PROXYOP_SEND_TRANSMITTED = 2,
    CPT_NS_PROXYOP_SEND_DONE = 3, CPT_NS_PROXYOP_RECV_POSTED = 4, CPT_NS_PROXYOP_RECV_RECEIVED = 5,
    CPT_NS_PROXYOP_RECV_TRANSMITTED = 6, CPT_NS_PROXYOP_RECV_DONE = 7,
    CPT_NS_STEP_SEND_GPU_WAIT = 8, CPT_NS_STEP_SEND_WAIT = 9, CPT_NS_STEP_RECV_WAIT = 10,
    CPT_NS_STEP_RECV_FLUSH_WAIT = 11, CPT_NS_STEP_RECV_GPU_WAIT = 12,
    CPT_NS_PROXYOP_IN_PROGRESS = 19, CPT_NS_STEP_SEND_PEER_WAIT = 20,
    CPT_NS_KCH_STOP = 22,
};

/* GPU activity kinds (GPU op) */
enum { CPT_GPU_KERNEL = 1, CPT_GPU_MEMCPY, CPT_GPU_MEMSET };

_Static_assert(sizeof(cpt_rec) == 48, "cptrace record is 48 bytes");
_Static_assert(sizeof(cpt_chunk) == 16, "cptrace chunk header is 16 bytes");
_Static_assert(sizeof(cpt_header) == 512, "cptrace header is 512 bytes");

#endif
