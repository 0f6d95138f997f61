/* ev_launcher.h - facts of the job launcher's own messages in a console log:
 * MPI (Open MPI / mpirun), its UCX transport, and Slurm's srun. A failure
 * there happens before or around the communication library (a UCX error
 * starts no NCCL), so the rule book must not blame NCCL for it.
 *
 * Filled by src/readers/launcher_log.c. Fixed caps with a dropped counter.
 * Plain data (ev_launcher_free).
 */
#ifndef CP_MODEL_EV_LAUNCHER_H
#define CP_MODEL_EV_LAUNCHER_H

#include <stdbool.h>

#include "ev_base.h"
#include "report.h"

#define EV_LAUNCHER_MAX_ITEMS 32

#define EV_LAUNCHER_KINDS(X)                                                             \
    X(UCX_ERROR, "ucx_error", "UCX (MPI's transport) reported an error")                  \
    X(MPI_ABORT, "mpi_abort", "MPI_ABORT was invoked / mpirun saw a rank exit non-zero")  \
    X(SRUN_ERROR, "srun_error", "srun reported an error (task exit, node failure, time limit)")
typedef enum ev_launcher_kind {
#define X(e, k, d) EV_LAUNCHER_##e,
    EV_LAUNCHER_KINDS(X)
#undef X
    EV_LAUNCHER__COUNT
} ev_launcher_kind;
const char *ev_launcher_kind_key(int kind);

typedef struct ev_launcher_item {
    int kind;          /* ev_launcher_kind */
    char device[32];   /* the RDMA device a UCX error names ("mlx5_15"); "" */
    char detail[96];   /* the reason ("No such device", "Exited with exit code 1") */
    ev_at at;
} ev_launcher_item;

typedef struct ev_launcher {
    long lines;
    int n_items;
    long dropped;
    ev_launcher_item items[EV_LAUNCHER_MAX_ITEMS];
} ev_launcher;

void ev_launcher_free(ev_launcher *f);
void ev_launcher_report(const ev_launcher *f, rep_report *r, rep_node *obj);

#endif
