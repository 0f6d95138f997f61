/* ev_torch.h - facts of a PyTorch training/inference job's console log (the
 * failure side): CUDA out-of-memory errors with their numbers and phase,
 * ProcessGroupNCCL watchdog timeouts and progress, desync reports and
 * collective fingerprint mismatches, NCCL errors as PyTorch reports them,
 * fatal signals, CUDA errors and environment messages that name their cause
 * (store unreachable, driver mismatch, DataLoader shared memory, ...).
 *
 * Filled by src/readers/torch_log.c; read by src/analysis/an_rules_torch.c.
 * Each item keeps its line, rank (launcher tag or "[Rank N]") and time.
 * Caps are fixed arrays with a dropped counter. Plain data (ev_torch_free).
 */
#ifndef CP_MODEL_EV_TORCH_H
#define CP_MODEL_EV_TORCH_H

#include <stdbool.h>

#include "ev_base.h"
#include "report.h"

#define EV_TORCH_MAX_ITEMS 32

typedef enum ev_torch_phase {
    EV_TORCH_PHASE_UNKNOWN = 0,
    EV_TORCH_PHASE_FORWARD,
    EV_TORCH_PHASE_BACKWARD,
    EV_TORCH_PHASE_OPTIMIZER,
} ev_torch_phase;
const char *ev_torch_phase_name(int phase);

typedef struct ev_torch_oom {
    int format;              /* 1 old "(GPU 0; ...)", 2 new "GPU 0 has a total capacity" */
    int gpu;                 /* device index in the message; -1 */
    double requested_bytes;  /* "Tried to allocate"; <0 unknown */
    double total_bytes;      /* total capacity */
    double free_bytes;       /* free on the device */
    double in_use_bytes;     /* "this process has X memory in use" (incl. non-PyTorch); <0 */
    double other_procs_bytes; /* "Process N has X memory in use", summed; <0 none listed */
    int n_other_procs;       /* how many such processes */
    long other_pid;          /* the one holding the most; -1 */
    double allocated_bytes;  /* allocated by PyTorch */
    double reserved_unalloc_bytes; /* reserved by PyTorch but unallocated */
    int phase;               /* ev_torch_phase from the traceback above */
    char frame[160];         /* innermost frame outside site-packages: "file:line in func" */
    ev_at at;
} ev_torch_oom;

typedef struct ev_torch_watchdog {
    int format;         /* 1 TensorShape, 2 NumelIn/NumelOut */
    long seq;           /* SeqNum; -1 */
    char op[24];        /* OpType: ALLREDUCE, _ALLGATHER_BASE ... */
    long numel_in, numel_out; /* -1 unknown */
    long timeout_ms;    /* Timeout(ms); -1 */
    long ran_for_ms;    /* "ran for N milliseconds"; -1 */
    ev_at at;
} ev_torch_watchdog;

typedef struct ev_torch_progress { /* "... at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579" */
    long at_work, last_enqueued, last_completed;
    ev_at at;
} ev_torch_progress;

typedef struct ev_torch_desync { /* desync report */
    int lag_rank;      /* "[1] finished collective #2, but didn't join collective #3" */
    long finished_seq, missing_seq;
    ev_at at;
} ev_torch_desync;

/* "Detected mismatch between collectives on ranks. Rank 1 is running
 * collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE,
 * TensorShape=[195812480], ...), but Rank 0 is running collective: ..." */
typedef struct ev_torch_mismatch {
    int rank, other_rank;      /* -1 unknown */
    long seq, other_seq;       /* SequenceNumber; -1 */
    char op[24], other_op[24];
    char shape[48], other_shape[48]; /* TensorShape=[...] as printed; "" */
    ev_at at;
} ev_torch_mismatch;

typedef struct ev_torch_error { /* "NCCL error in: ..., <what>", a signal, a CUDA error */
    char what[96];     /* "unhandled system error", "SIGBUS", "an illegal memory access ..." */
    int signo;         /* for signals; 0 */
    long code;         /* CUDA error number when printed ("(802)", "code=802"); -1 */
    ev_at at;
} ev_torch_error;

/* Messages of the job's environment that name their cause, matched by
 * phrase (each phrase as PyTorch, CUDA, NVML or the DataLoader prints it;
 * the table is in src/readers/torch_log.c). */
#define EV_TORCH_ISSUE_KINDS(X)                                                                     \
    X(STORE_UNREACHABLE, "store_unreachable", "the c10d store (rendezvous) could not be reached")    \
    X(STORE_PORT_IN_USE, "store_port_in_use", "the c10d store could not listen: its port is taken")   \
    X(WATCHDOG_HANG, "watchdog_hang", "ProcessGroupNCCL's watchdog / heartbeat monitor hung")        \
    X(DDP_UNUSED, "ddp_unused_params", "DDP: parameters that took no part in the loss")              \
    X(DATALOADER_SHM, "dataloader_shm", "DataLoader workers out of shared memory")                   \
    X(DRIVER_MISMATCH, "driver_mismatch", "the driver does not match the CUDA runtime or NVML")      \
    X(NO_DEVICE, "no_device", "no CUDA device visible to the process")                               \
    X(CUBLAS_ALLOC, "cublas_alloc", "cuBLAS could not allocate its workspace")                       \
    X(P2P_UNSUPPORTED, "p2p_unsupported", "CUDA peer access not supported between two GPUs")
typedef enum ev_torch_issue_kind {
#define X(e, k, d) EV_TORCH_ISSUE_##e,
    EV_TORCH_ISSUE_KINDS(X)
#undef X
    EV_TORCH_ISSUE__COUNT
} ev_torch_issue_kind;
const char *ev_torch_issue_key(int kind);

typedef struct ev_torch_issue {
    int kind;          /* ev_torch_issue_kind */
    ev_at at;
} ev_torch_issue;

typedef struct ev_torch {
    long lines;
    long tracebacks;
    int n_ooms;
    int n_timeouts;
    int n_progress;
    int n_desyncs;
    int n_mismatches;
    ev_at desync_timeout_at; /* " - [0] Timeout at collective: ALLREDUCE, #3" */
    char desync_op[24];
    long desync_seq;
    int n_nccl_errors;
    int n_signals;
    int n_cuda_errors;
    int n_issues;
    long dropped;      /* items past a cap */
    /* arrays last: only [0, n_x) is ever written or read */
    ev_torch_oom ooms[EV_TORCH_MAX_ITEMS];
    ev_torch_watchdog timeouts[EV_TORCH_MAX_ITEMS];
    ev_torch_progress progress[EV_TORCH_MAX_ITEMS];
    ev_torch_desync desyncs[EV_TORCH_MAX_ITEMS];
    ev_torch_mismatch mismatches[EV_TORCH_MAX_ITEMS];
    ev_torch_error nccl_errors[EV_TORCH_MAX_ITEMS];
    ev_torch_error signals[EV_TORCH_MAX_ITEMS];
    ev_torch_error cuda_errors[EV_TORCH_MAX_ITEMS];
    ev_torch_issue issues[EV_TORCH_MAX_ITEMS];
} ev_torch;

/* True when the reader found anything (an empty facts struct is no evidence). */
bool ev_torch_any(const ev_torch *f);

/* A CUDA error that is the application's own fault ("an illegal memory
 * access was encountered", "misaligned address", "device-side assert
 * triggered"): GPU_APP_FAULT, not CUDA_ERROR. */
bool ev_torch_error_is_access_fault(const ev_torch_error *e);

/* The first issue of a kind, or NULL. */
const ev_torch_issue *ev_torch_issue_of(const ev_torch *f, int kind);
/* An issue of any kind on line `line` (a CUDA error line that names its own
 * cause is that cause's, not CUDA_ERROR's). */
bool ev_torch_issue_on_line(const ev_torch *f, long line);

void ev_torch_free(ev_torch *f);
void ev_torch_report(const ev_torch *f, rep_report *r, rep_node *obj);

#endif
