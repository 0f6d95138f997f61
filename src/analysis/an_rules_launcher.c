/* an_rules_launcher.c - rule family "launcher": the job launcher's own
 * failures (MPI / UCX / Slurm; facts in ev_launcher.h). A UCX error while
 * mpirun wires up its ranks happens before NCCL starts: naming NCCL there
 * would send the user to the wrong library.
 */
#include "rulebook.h"

#include <stdio.h>
#include <string.h>

#include "../base/util.h"

static const ev_launcher_item *first(rb_ctx *c, int kind, const ev_file **ff)
{
    RB_EACH(c, EV_LAUNCHER, f)
        for (int i = 0; i < f->as.launcher->n_items; i++)
            if (f->as.launcher->items[i].kind == kind) {
                *ff = f;
                return &f->as.launcher->items[i];
            }
    return NULL;
}

static void cite_all(rb_ctx *c, rb_finding *x, int kind)
{
    RB_EACH(c, EV_LAUNCHER, f)
        for (int i = 0; i < f->as.launcher->n_items; i++)
            if (f->as.launcher->items[i].kind == kind)
                rb_cite(x, f, &f->as.launcher->items[i].at);
}

static void r_ucx(rb_ctx *c, const rb_rule *self)
{
    const ev_file *f;
    const ev_launcher_item *it = first(c, EV_LAUNCHER_UCX_ERROR, &f);
    if (!it)
        return;
    rb_finding *x = rb_raise(c, self);
    if (it->device[0])
        rb_title(x, "the MPI launcher's UCX transport failed on %s (%s) before NCCL started: the error is MPI's, not NCCL's", it->device,
                 it->detail[0] ? it->detail : "error");
    else
        rb_title(x, "the MPI launcher's UCX transport failed (%s) before NCCL started: the error is MPI's, not NCCL's", it->detail);
    cite_all(c, x, EV_LAUNCHER_UCX_ERROR);
    if (it->device[0])
        rb_step(x, "ibv_devices on every node/pod: %s must exist on the peer too (SR-IOV/pod device names differ from node to node)", it->device);
    rb_step(x, "keep UCX off the RDMA devices MPI does not need: UCX_NET_DEVICES=<eth iface> (or UCX_TLS=tcp,self), or mpirun --mca pml ob1 --mca btl tcp,self");
    rb_step(x, "NCCL picks its own devices (NCCL_IB_HCA); MPI only launches and bootstraps the test");
}

static void r_mpi_abort(rb_ctx *c, const rb_rule *self)
{
    const ev_file *f;
    const ev_launcher_item *it = first(c, EV_LAUNCHER_MPI_ABORT, &f);
    if (!it)
        return;
    rb_finding *x = rb_raise(c, self);
    rb_title(x, "mpirun stopped the job: %s", it->at.text);
    cite_all(c, x, EV_LAUNCHER_MPI_ABORT);
    rb_step(x, "the first rank that exited is the one to read: its own log names the cause");
}

static void r_srun(rb_ctx *c, const rb_rule *self)
{
    const ev_file *f;
    const ev_launcher_item *it = first(c, EV_LAUNCHER_SRUN_ERROR, &f);
    if (!it)
        return;
    rb_finding *x = rb_raise(c, self);
    bool limit = strstr(it->at.text, "TIME LIMIT") != NULL;
    if (limit)
        rb_confidence(x, 0.8);
    rb_title(x, "%s: %s", limit ? "Slurm cancelled the job at its time limit" : "srun reported an error", it->at.text);
    cite_all(c, x, EV_LAUNCHER_SRUN_ERROR);
    rb_step(x, "sacct -j <jobid> -o JobID,State,ExitCode,Elapsed,Timelimit,NodeList");
}

#define FAIL AN_SEV_CRITICAL

static const rb_rule k_rules[] = {
    {"MPI_UCX_ERROR", CP_LAYER_INTER, FAIL, 0.8, "UCX  ERROR <call> ... on <device> failed: <reason> (UCX, Open MPI's transport)",
     "https://github.com/NVIDIA/nccl-tests/issues/327 (maintainer: the error comes from UCX, i.e. MPI, not NCCL)",
     "the launcher failed in its own transport: make UCX use devices that exist on every node (UCX_NET_DEVICES) or TCP for MPI", r_ucx},
    {"MPI_JOB_ABORTED", CP_LAYER_HOST, FAIL, 0.45, "MPI_ABORT was invoked / mpirun noticed that process rank N ... exited / returned a non-zero exit code",
     "Open MPI mpirun(1)", "a rank exited first and mpirun stopped the rest: read that rank's log", r_mpi_abort},
    {"SLURM_JOB_ERROR", CP_LAYER_HOST, FAIL, 0.45, "srun: error: ... / slurmstepd: error: *** JOB ... CANCELLED ... DUE TO TIME LIMIT ***",
     "Slurm srun(1), sacct(1)", "Slurm ended the step: time limit, a failed node or a task's exit code", r_srun},
};

const rb_family rb_family_launcher = {.name = "launcher",
                                      .summary = "MPI, UCX and Slurm launcher failures",
                                      .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
