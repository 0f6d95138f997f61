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
           f->n_signals || f->n_cuda_errors || f->n_issues || f->desync_timeout_at.line || f->dropped;
}

const char *ev_torch_issue_key(int kind)
{
    static const char *const keys[] = {
#define X(e, k, d) k,
        EV_TORCH_ISSUE_KINDS(X)
#undef X
    };
    return kind >= 0 && kind < EV_TORCH_ISSUE__COUNT ? keys[kind] : "?";
}

const ev_torch_issue *ev_torch_issue_of(const ev_torch *f, int kind)
{
    for (int i = 0; i < f->n_issues; i++)
        if (f->issues[i].kind == kind)
            return &f->issues[i];
    return NULL;
}

bool ev_torch_issue_on_line(const ev_torch *f, long line)
{
    for (int i = 0; i < f->n_issues; i++)
        if (f->issues[i].at.line == line)
            return true;
    return false;
}

bool ev_torch_error_is_access_fault(const ev_torch_error *e)
{
    return strstr(e->what, "illegal") != NULL || strstr(e->what, "misaligned") != NULL ||
           strstr(e->what, "device-side assert") != NULL;
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
    rep_node *is = rep_arr(r, o, "issues", "environment messages");
    for (int i = 0; i < f->n_issues; i++) {
        rep_node *x = rep_obj(r, is, NULL, NULL);
        rep_str(r, x, "kind", "kind", ev_torch_issue_key(f->issues[i].kind));
        rep_int(r, x, "line", "line", f->issues[i].at.line, NULL);
    }
}
