/* launcher_log.h - reader of the job launcher's own messages in a console:
 * Open MPI / mpirun, its UCX transport, Slurm's srun and slurmstepd; facts
 * in src/model/ev_launcher.h.
 *
 * Recognised (literal phrases of those tools):
 *   UCX:   "UCX  ERROR <what>" (ib_device.c, ucp_ep.c ...), with the RDMA
 *          device of "... on mlx5_15 failed: No such device" (also on the
 *          next line, where a pasted message wraps);
 *   MPI:   "MPI_ABORT was invoked on rank N", "mpirun noticed that process
 *          rank N ... exited on signal S", "... process returned a non-zero
 *          exit code";
 *   Slurm: "srun: error: ...", "slurmstepd: error: ... CANCELLED ... DUE TO
 *          TIME LIMIT".
 * A scan reader of the evidence table (evidence.h).
 */
#ifndef CP_READERS_LAUNCHER_LOG_H
#define CP_READERS_LAUNCHER_LOG_H

#include "evidence.h"

RD_EV_DECLARE(launcher);

#endif
