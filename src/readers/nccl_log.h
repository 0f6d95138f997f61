/* nccl_log.h - the one reader of NCCL_DEBUG=INFO/WARN logs (NCCL 2.4 .. 2.2x,
 * and RCCL, which prints the same lines): facts in src/model/ev_nccl.h.
 *
 * Input: any text in which NCCL lines appear - a pure NCCL_DEBUG_FILE, a
 * torchrun/srun/mpirun console with "[rank3]:", "[default0]:" or "0: " tags,
 * lines with the usual "host:pid:tid [dev] NCCL INFO" prefix or with it
 * stripped (as users often paste), the "Last error:" text PyTorch prints
 * under an ncclXxxError. Lines that are not NCCL's are ignored, so the same
 * input also goes through the PyTorch, launcher and kernel readers.
 *
 * A scan reader of the evidence table (evidence.h): rd_nccl_begin/line/end;
 * rd_nccl_sniff gives 100 with 3+ NCCL lines or a third of the lines, 60
 * with 1-2, else 0.
 */
#ifndef CP_READERS_NCCL_LOG_H
#define CP_READERS_NCCL_LOG_H

#include "evidence.h"

RD_EV_DECLARE(nccl);

#endif
