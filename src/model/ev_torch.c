/* ev_torch.c - PyTorch log facts: names, free, report entry. */
#include "ev_torch.h"

#include <stdlib.h>
#include <string.h>

const char *ev_torch_phase_name(int phase)
{
    switch (phase) {
    case EV_TORCH_PHASE_FORWARD: return "forward";
    case EV_TORCH_PHASE_BACKWARD: return "backward";
    case EV_TORCH_PHASE_OPTIMIZER: return "optimizer";
    default: return "unknown";
    }
}

bool ev_torch_any(const ev_torch *f)
{
    return f->n_ooms || f->n_timeouts || f->n_progress || f->n_desyncs || f->n_mismatches || f->n_nccl_errors ||
           f->n_signals || f->n_cuda_errors || f->desync_timeout_at.line || f->dropped;
}

bool ev_torch_error_is_access_fault(const ev_torch_error *e)
{
    return strstr(e->what, "illegal") != NULL || strstr(e->what, "misaligned") != NULL;
}

void ev_torch_free(ev_torch *f) { free(f); }

void ev_torch_report(const ev_torch *f, rep_report *r, rep_node *o)
{
    rep_int(r, o, "ooms", "CUDA out-of-memory errors", f->n_ooms, NULL);
    rep_int(r, o, "watchdog_timeouts", "watchdog timeouts", f->n_timeouts, NULL);
    rep_int(r, o, "desync_reports", "desync reports", f->n_desyncs, NULL);
    rep_int(r, o, "collective_mismatches", "collective mismatches", f->n_mismatches, NULL);
    rep_int(r, o, "nccl_errors", "NCCL errors", f->n_nccl_errors, NULL);
    rep_int(r, o, "signals", "fatal signals", f->n_signals, NULL);
    rep_int(r, o, "cuda_errors", "CUDA errors", f->n_cuda_errors, NULL);
    rep_int(r, o, "tracebacks", "tracebacks", f->tracebacks, NULL);
}
