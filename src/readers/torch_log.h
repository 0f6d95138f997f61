/* torch_log.h - reader of PyTorch training/inference console logs (the
 * failure side); facts in src/model/ev_torch.h.
 *
 * Extracts what a failed or hung PyTorch job prints about its failure:
 *  - CUDA out-of-memory errors, both message formats, with the numbers:
 *    old: "Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity;
 *          14.56 GiB already allocated; 3.44 MiB free; 14.80 GiB reserved in
 *          total by PyTorch)"
 *    new: "Tried to allocate 55.88 GiB. GPU 0 has a total capacity of 178.35
 *          GiB of which 10.00 GiB is free. [Process N has X memory in use.]
 *          [Including non-PyTorch memory,] this process has 168.34 GiB
 *          memory in use. Of the allocated memory 167.64 GiB is allocated by
 *          PyTorch, and 4.62 MiB is reserved by PyTorch but unallocated."
 *    (the "Process N has" entries are the GPU's other processes, from NVML)
 *    and the training phase (forward/backward/optimizer) from the traceback
 *    that precedes it;
 *  - ProcessGroupNCCL watchdog timeouts, both WorkNCCL formats (SeqNum,
 *    OpType, TensorShape=[..] or NumelIn/NumelOut, Timeout(ms)) with "ran for
 *    N milliseconds"; the "last enqueued/completed NCCL work" line; the
 *    TORCH_NCCL_DESYNC_DEBUG report ("[1] finished collective #2, but didn't
 *    join collective #3"); TORCH_DISTRIBUTED_DEBUG=DETAIL's "Detected
 *    mismatch between collectives on ranks" with both fingerprints;
 *  - "NCCL error in: ..., unhandled system error, NCCL version ..." and the
 *    other ncclResult strings; fatal signals ("Signal 9 (SIGKILL) received by
 *    PID", with the rank of torchrun's failure summary; "Bus error"); CUDA
 *    errors ("CUDA error: ...", "cuda runtime error (802) : ...",
 *    "code=802(cudaErrorSystemNotReady)").
 * Each item keeps its line, rank (launcher tag or "[Rank N]") and time.
 * A scan reader of the evidence table (evidence.h).
 */
#ifndef CP_READERS_TORCH_LOG_H
#define CP_READERS_TORCH_LOG_H

#include "evidence.h"

RD_EV_DECLARE(torch);

/* "55.88 GiB" -> bytes; 0 on success, advances *p. Units: B/bytes, KiB..TiB,
 * KB..TB (treated as binary, as PyTorch prints binary values). */
int rd_torch_scan_size(const char **p, const char *end, double *bytes);

#endif
