/* torch_log.h - reader of PyTorch training-job console logs (failure side).
 *
 * Extracts what a failed or hung PyTorch job prints about its failure:
 *  - CUDA out-of-memory errors, both message formats, with the numbers:
 *    old: "Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity;
 *          14.56 GiB already allocated; 3.44 MiB free; 14.80 GiB reserved in
 *          total by PyTorch)"
 *    new: "Tried to allocate 55.88 GiB. GPU 0 has a total capacity of 178.35
 *          GiB of which 10.00 GiB is free. ... this process has 168.34 GiB
 *          memory in use. Of the allocated memory 167.64 GiB is allocated by
 *          PyTorch, and 4.62 MiB is reserved by PyTorch but unallocated."
 *    and the training phase (forward/backward/optimizer) from the traceback
 *    that precedes it;
 *  - ProcessGroupNCCL watchdog timeouts, both WorkNCCL formats
 *    (SeqNum, OpType, TensorShape=[..] or NumelIn/NumelOut, Timeout(ms)) with
 *    "ran for N milliseconds"; the "last enqueued/completed NCCL work" line;
 *    the TORCH_NCCL_DESYNC_DEBUG report ("[1] finished collective #2, but
 *    didn't join collective #3");
 *  - "NCCL error in: ..., unhandled system error, NCCL version ..." and the
 *    other ncclResult strings; fatal signals ("Signal 9 (SIGKILL) received by
 *    PID", with the rank of torchrun's failure summary; "Bus error");
 *    "CUDA error: ...".
 * Each item keeps its line, rank (launcher tag or "[Rank N]") and time.
 *
 * Use like nccl_log.h: init, line (or line_pfx) per line, finish. Caps are
 * fixed arrays with *_dropped counters. The facts are plain data owned by the
 * caller; `file` is borrowed.
 */
#ifndef CP_READERS_TORCH_LOG_H
#define CP_READERS_TORCH_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "log_prefix.h"

#define RD_TORCH_TEXT_MAX 200
#define RD_TORCH_MAX_ITEMS 32

typedef struct rd_torch_at {
    long line; /* 1-based; 0 = not seen */
    int rank;  /* -1 unknown */
    rd_time ts;
    char text[RD_TORCH_TEXT_MAX];
} rd_torch_at;

typedef enum rd_torch_phase {
    RD_TORCH_PHASE_UNKNOWN = 0,
    RD_TORCH_PHASE_FORWARD,
    RD_TORCH_PHASE_BACKWARD,
    RD_TORCH_PHASE_OPTIMIZER,
} rd_torch_phase;
const char *rd_torch_phase_name(int phase);

typedef struct rd_torch_oom {
    int format;              /* 1 old "(GPU 0; ...)", 2 new "GPU 0 has a total capacity" */
    int gpu;                 /* device index in the message; -1 */
    double requested_bytes;  /* "Tried to allocate"; <0 unknown */
    double total_bytes;      /* total capacity */
    double free_bytes;       /* free on the device */
    double in_use_bytes;     /* this process incl. non-PyTorch memory (new format) */
    double allocated_bytes;  /* allocated by PyTorch */
    double reserved_unalloc_bytes; /* reserved by PyTorch but unallocated */
    int phase;               /* rd_torch_phase from the traceback above */
    char frame[160];         /* innermost frame outside site-packages: "file:line in func" */
    rd_torch_at at;
} rd_torch_oom;

typedef struct rd_torch_watchdog {
    int format;         /* 1 TensorShape, 2 NumelIn/NumelOut */
    long seq;           /* SeqNum; -1 */
    char op[24];        /* OpType: ALLREDUCE, _ALLGATHER_BASE ... */
    long numel_in, numel_out; /* -1 unknown */
    long timeout_ms;    /* Timeout(ms); -1 */
    long ran_for_ms;    /* "ran for N milliseconds"; -1 */
    rd_torch_at at;
} rd_torch_watchdog;

typedef struct rd_torch_progress { /* "... at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579" */
    long at_work, last_enqueued, last_completed;
    rd_torch_at at;
} rd_torch_progress;

typedef struct rd_torch_desync { /* desync report */
    int lag_rank;      /* "[1] finished collective #2, but didn't join collective #3" */
    long finished_seq, missing_seq;
    rd_torch_at at;
} rd_torch_desync;

typedef struct rd_torch_error { /* "NCCL error in: ..., <what>", a signal, a CUDA error */
    char what[96];     /* "unhandled system error", "SIGBUS", "an illegal memory access ..." */
    int signo;         /* for signals; 0 */
    rd_torch_at at;
} rd_torch_error;

typedef struct rd_torch_tb { /* private reading state of one traceback */
    int key;         /* rank, -2-local_rank, or -1 for untagged lines */
    bool open;
    int phase_flags; /* bit per rd_torch_phase */
    char frame[160]; /* innermost user frame so far */
    long closed_line;
    long used;
} rd_torch_tb;

typedef struct rd_torch_facts {
    const char *file;  /* borrowed */
    long lines;
    long tracebacks;
    int n_ooms;
    int n_timeouts;
    int n_progress;
    int n_desyncs;
    rd_torch_at desync_timeout_at; /* " - [0] Timeout at collective: ALLREDUCE, #3" */
    char desync_op[24];
    long desync_seq;
    int n_nccl_errors;
    int n_signals;
    int n_cuda_errors;
    long dropped;      /* items past a cap */
    rd_keyset keys_;   /* private: phrases looked for, one pass per line */
    int elastic_rank_; /* private: "rank : N" of torchrun's failure summary; -1 */
    /* private: open tracebacks, one slot per rank tag (interleaved ranks in
     * one launcher log each keep their own), least recently used recycled */
    rd_torch_tb tb_[8];
    long tb_tick_;
    /* arrays last: only [0, n_x) is ever written or read, so init leaves
     * them untouched (no memset, no page faults for empty readers) */
    rd_torch_oom ooms[RD_TORCH_MAX_ITEMS];
    rd_torch_watchdog timeouts[RD_TORCH_MAX_ITEMS];
    rd_torch_progress progress[RD_TORCH_MAX_ITEMS];
    rd_torch_desync desyncs[RD_TORCH_MAX_ITEMS];
    rd_torch_error nccl_errors[RD_TORCH_MAX_ITEMS];
    rd_torch_error signals[RD_TORCH_MAX_ITEMS];
    rd_torch_error cuda_errors[RD_TORCH_MAX_ITEMS];
} rd_torch_facts;

void rd_torch_init(rd_torch_facts *f, const char *file);
void rd_torch_line(rd_torch_facts *f, const char *line, size_t len, long lineno);
void rd_torch_line_pfx(rd_torch_facts *f, const rd_prefix *pfx, const char *line, size_t len,
                       long lineno);
void rd_torch_finish(rd_torch_facts *f);
void rd_torch_parse_buf(rd_torch_facts *f, const char *file, const char *buf, size_t len);

/* "55.88 GiB" -> bytes; 0 on success, advances *p. Units: B/bytes, KiB..TiB,
 * KB..TB (treated as binary, as PyTorch prints binary values). */
int rd_torch_scan_size(const char **p, const char *end, double *bytes);

#endif
