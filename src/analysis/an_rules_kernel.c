/* an_rules_kernel.c - rule family "kernel": GPU and host faults from kernel
 * logs (Xid events, a GPU fallen off the bus, PCIe AER, the OOM killer; facts
 * in src/model/ev_dmesg.h), nvidia-smi -q (ECC and row remapping;
 * ev_smiq.h) and the CUDA errors PyTorch prints that name a GPU fault.
 *
 * The Xid table maps each code NVIDIA documents to the rule code of its
 * bucket, so every GPU_* rule below is one row that gathers its Xids and
 * the other evidence of the same fault (nvidia-smi -q counters, a CUDA
 * error string). Weights rank how likely an Xid is the root cause of a job
 * failure rather than a consequence; they are the findings' confidence.
 */
#include "rulebook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

typedef struct xid_info {
    int code;
    const char *meaning; /* what NVIDIA documents the Xid to mean */
    const char *rule;    /* the rule code of its bucket */
    const char *cause;   /* "hardware", "application", "driver/firmware", ... */
    const char *action;  /* what to do first */
    double weight;       /* how strongly it explains a job failure, 0..1 */
} xid_info;

/* Meanings and actions follow NVIDIA's Xid documentation (Xid catalog and
 * the "XID Errors" table); wording is ours. Weights rank how likely the Xid
 * is the root cause of a job failure rather than a consequence. */
static const xid_info k_xids[] = {
    {13, "graphics engine exception: usually an out-of-range access or illegal instruction in the application, rarely hardware",
     "GPU_APP_FAULT", "application", "rerun under compute-sanitizer; if it repeats on this GPU only, run dcgmi diag -r 3", 0.55},
    {31, "GPU memory page fault (MMU fault): the application accessed an invalid address; rarely driver or hardware",
     "GPU_APP_FAULT", "application", "rerun under compute-sanitizer; CUDA_LAUNCH_BLOCKING=1 to find the kernel", 0.55},
    {43, "GPU stopped processing: a user application hit a fault and its channel was reset; the GPU stays healthy",
     "GPU_APP_FAULT", "application", "look at the application error printed just before; restart the job", 0.45},
    {45, "preemptive cleanup after an earlier error or a killed process (kill, Ctrl-C, OOM killer)",
     "GPU_XID_SECONDARY", "consequence", "look for an earlier Xid or a killed process; this one is a follow-up", 0.25},
    {48, "double-bit (uncorrectable) ECC error in GPU memory: the application using it is killed",
     "GPU_ECC_UNCORRECTABLE", "hardware", "drain the node, reset the GPU (nvidia-smi -r), check nvidia-smi -q -d ECC,ROW_REMAPPER; RMA if it repeats", 0.9},
    {61, "internal micro-controller breakpoint/warning (PMU firmware)",
     "GPU_FIRMWARE", "driver/firmware", "reset the GPU; update the driver; report to NVIDIA if it repeats", 0.7},
    {62, "internal micro-controller halt (PMU firmware halted)",
     "GPU_FIRMWARE", "driver/firmware", "drain the node and reset the GPU; RMA if it repeats", 0.8},
    {63, "ECC page retirement or row remapping recorded: the fix takes effect at the next GPU reset",
     "GPU_ROW_REMAP_PENDING", "hardware", "drain the node and reset the GPU to apply the remap; check nvidia-smi -q -d ROW_REMAPPER", 0.6},
    {64, "ECC page retirement or row remapper recording failure: the GPU could not record the fault",
     "GPU_ROW_REMAP_FAILURE", "hardware", "drain the node and RMA the GPU", 0.85},
    {68, "video processor (NVDEC) exception", "GPU_ENGINE", "hardware or driver", "reset the GPU; update the driver", 0.4},
    {69, "graphics engine class error: invalid work submitted to an engine", "GPU_APP_FAULT", "application or driver",
     "check the application and driver versions; reset the GPU if it repeats", 0.45},
    {74, "NVLink error: a link reported a fatal or replay-threshold error",
     "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e and nvidia-smi nvlink -s; reset the GPU; reseat/RMA if the link stays down", 0.8},
    {79, "GPU has fallen off the bus: the GPU is no longer reachable over PCIe (power, thermal, PCIe link or GPU failure)",
     "GPU_FELL_OFF_BUS", "hardware", "drain the node; check power/thermals and PCIe (lspci, AER); cold reboot; RMA if it repeats", 0.95},
    {92, "high single-bit ECC error rate", "GPU_ECC_SBE_RATE", "hardware",
     "watch nvidia-smi -q -d ECC; plan a GPU reset/RMA if the rate stays high", 0.4},
    {94, "contained ECC error: only the application that touched the memory was affected",
     "GPU_ECC_CONTAINED", "hardware", "restart the job; reset the GPU when idle so the row is remapped", 0.75},
    {95, "uncontained ECC error: every application on the GPU is affected",
     "GPU_ECC_UNCORRECTABLE", "hardware", "drain the node and reset the GPU (nvidia-smi -r); RMA if it repeats", 0.9},
    {109, "context switch timeout", "GPU_ENGINE", "application or driver",
     "check for long-running kernels; update the driver; reset the GPU if it repeats", 0.5},
    {119, "GSP RPC timeout: the GPU System Processor did not answer the driver",
     "GPU_FIRMWARE", "driver/firmware", "reset the GPU or reboot; update the driver", 0.8},
    {120, "GSP error: the GPU System Processor reported an error",
     "GPU_FIRMWARE", "driver/firmware", "reset the GPU or reboot; update the driver", 0.8},
    {121, "C2C (chip-to-chip) link corrected error", "GPU_C2C", "hardware",
     "monitor; reset at the next maintenance window if it repeats", 0.35},
    {140, "unrecovered ECC error", "GPU_ECC_UNCORRECTABLE", "hardware",
     "drain the node and reset the GPU; RMA if it repeats", 0.85},
    {143, "GPU initialization failure reported by the driver", "GPU_FIRMWARE", "driver/firmware",
     "reset or power-cycle the node; check the driver and firmware versions", 0.75},
    {144, "NVLink SAW error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {145, "NVLink RLW error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {146, "NVLink TLW error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {147, "NVLink TREX error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {148, "NVLink NVLPW control error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {149, "NVLink NETIR error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; check the NVLink fabric/switch; reset", 0.8},
    {150, "NVLink MSE error", "GPU_NVLINK_ERROR", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
};


static const xid_info *xid_lookup(int code)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(k_xids); i++)
        if (k_xids[i].code == code)
            return &k_xids[i];
    return NULL;
}

static const char *xid_rule(int code)
{
    const xid_info *xi = xid_lookup(code);
    return xi ? xi->rule : "GPU_XID";
}

/* Every Xid of the rule's bucket: the strongest one names the finding. */
static rb_finding *xid_findings(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = NULL;
    double best = -1;
    RB_EACH(c, EV_KERNEL, f)
        for (int k = 0; k < f->as.dmesg->n_xids; k++) {
            const ev_dmesg_xid *xd = &f->as.dmesg->xids[k];
            if (strcmp(xid_rule(xd->code), self->code) != 0)
                continue;
            const xid_info *xi = xid_lookup(xd->code);
            if (!x)
                x = rb_raise(c, self);
            double w = xi ? xi->weight : 0.5;
            if (w > best) {
                best = w;
                x->confidence = w;
                rb_title(x, "Xid %d on GPU %s%s%s: %s", xd->code, xd->pci[0] ? xd->pci : "?", xd->at.host[0] ? " of host " : "",
                         xd->at.host, xi ? xi->meaning : "not in chainprof's Xid table; see NVIDIA's Xid catalog");
            }
            rb_cite(x, f, &xd->at);
            if (xi)
                rb_step(x, "Xid %d (%s cause): %s", xd->code, xi->cause, xi->action);
        }
    if (x) {
        rb_step(x, "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT   # on that node");
        rb_step(x, "dcgmi diag -r 3   # after draining the node");
    }
    return x;
}

static void r_xid(rb_ctx *c, const rb_rule *self) { xid_findings(c, self); }

/* Xid 74/144-150, or the CUDA error an NVLink fault raises in the
 * application ("uncorrectable NVLink error detected during the execution",
 * cudaErrorNvlinkUncorrectable). */
static void r_nvlink(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = xid_findings(c, self);
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_cuda_errors; k++) {
            const ev_torch_error *e = &f->as.torch->cuda_errors[k];
            if (!strstr(e->what, "NVLink"))
                continue;
            if (!x) {
                x = rb_raise(c, self);
                rb_rank(x, e->at.rank);
                if (e->at.rank >= 0)
                    rb_title(x, "an uncorrectable NVLink error reached the application on rank %d: %s", e->at.rank, e->what);
                else
                    rb_title(x, "an uncorrectable NVLink error reached the application: %s", e->what);
                rb_step(x, "nvidia-smi nvlink -s; nvidia-smi nvlink -e   # link state and error counters on that node; dmesg -T | grep -i xid");
                rb_step(x, "drain the node, reset the GPUs (or reboot); reseat or RMA when a link stays down");
            }
            rb_cite(x, f, &e->at);
        }
}

static void r_fell_off_bus(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = xid_findings(c, self);
    RB_EACH(c, EV_KERNEL, f)
        for (int k = 0; k < f->as.dmesg->n_bus; k++) {
            const ev_dmesg_bus *b = &f->as.dmesg->bus[k];
            if (!x) {
                x = rb_raise(c, self);
                rb_title(x, "GPU %s has fallen off the bus (no Xid line, the same meaning as Xid 79): the GPU is unreachable over PCIe",
                         b->pci[0] ? b->pci : "?");
            }
            rb_cite(x, f, &b->at);
            rb_step(x, "drain the node; check power, thermals and the PCIe link: lspci -vvv -s %s | grep -e LnkSta -e ACS",
                    b->pci[0] ? b->pci : "<bdf>");
            rb_step(x, "cold reboot (power cycle); RMA the GPU if it falls off again");
            rb_step(x, "dmesg -T | grep -i -e xid -e aer   # earlier PCIe errors point at the slot or riser");
        }
}

static void r_ecc_uncorrectable(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = xid_findings(c, self);
    RB_EACH(c, EV_SMI_QUERY, f)
        for (int g = 0; g < f->as.smiq->n_gpus; g++) {
            const ev_smiq_gpu *gp = &f->as.smiq->gpus[g];
            if (gp->volatile_uncorr <= 0)
                continue;
            if (!x) {
                x = rb_raise(c, self);
                x->confidence = 0.75;
                rb_title(x, "GPU %s (%s): %ld uncorrectable ECC error(s) since the driver loaded", gp->bus_id, gp->product, gp->volatile_uncorr);
            }
            rb_cite_line(x, f, gp->line_ecc, "%s", gp->text_ecc);
            rb_step(x, "drain the node, reset the GPU (nvidia-smi -r -i %s) and rerun dcgmi diag -r 3", gp->bus_id[0] ? gp->bus_id : "<gpu>");
        }
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_cuda_errors; k++) {
            const ev_torch_error *e = &f->as.torch->cuda_errors[k];
            if (!strstr(e->what, "ECC"))
                continue;
            if (!x) {
                x = rb_raise(c, self);
                x->confidence = 0.7;
                rb_rank(x, e->at.rank);
                rb_title(x, "CUDA error on rank %d: %s", e->at.rank, e->what);
            }
            rb_cite(x, f, &e->at);
            rb_step(x, "nvidia-smi -q -d ECC,ROW_REMAPPER   # on that node; drain and reset the GPU");
        }
}

static void r_remap_pending(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = xid_findings(c, self);
    RB_EACH(c, EV_SMI_QUERY, f)
        for (int g = 0; g < f->as.smiq->n_gpus; g++) {
            const ev_smiq_gpu *gp = &f->as.smiq->gpus[g];
            if (gp->remap_pending != 1 && gp->retire_pending != 1)
                continue;
            if (!x || x->confidence < 0.65) {
                if (!x)
                    x = rb_raise(c, self);
                x->confidence = 0.65;
                char what[96];
                if (gp->remap_pending == 1 && gp->remap_uncorr > 0)
                    snprintf(what, sizeof what, "%ld row(s) remapped for uncorrectable errors, the remap pending", gp->remap_uncorr);
                else
                    snprintf(what, sizeof what, "%s pending", gp->remap_pending == 1 ? "row remapping" : "page retirement");
                rb_title(x, "GPU %s%s%s%s: %s - the repair takes effect only after a GPU reset", gp->bus_id[0] ? gp->bus_id : "(unnamed)",
                         gp->product[0] ? " (" : "", gp->product, gp->product[0] ? ")" : "", what);
            }
            if (gp->line_remap_uncorr && gp->remap_uncorr > 0)
                rb_cite_line(x, f, gp->line_remap_uncorr, "Uncorrectable Error : %ld", gp->remap_uncorr);
            if (gp->line_remap_pending)
                rb_cite_line(x, f, gp->line_remap_pending, "%s", gp->text_remap);
            if (gp->line_retire)
                rb_cite_line(x, f, gp->line_retire, "%s", gp->text_retire);
            rb_step(x, "drain the node and reset the GPU: nvidia-smi -r -i %s (or reboot)", gp->bus_id[0] ? gp->bus_id : "<gpu>");
            rb_step(x, "nvidia-smi -q -d ROW_REMAPPER,PAGE_RETIREMENT   # confirm Pending : No afterwards");
        }
}

static void r_remap_failure(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = xid_findings(c, self);
    RB_EACH(c, EV_SMI_QUERY, f)
        for (int g = 0; g < f->as.smiq->n_gpus; g++) {
            const ev_smiq_gpu *gp = &f->as.smiq->gpus[g];
            if (gp->remap_failure != 1)
                continue;
            if (!x) {
                x = rb_raise(c, self);
                rb_title(x, "GPU %s (%s): row remapping failed - the memory fault cannot be repaired", gp->bus_id, gp->product);
            }
            rb_cite_line(x, f, gp->line_remap_failure, "Remapping Failure Occurred : Yes");
            rb_step(x, "drain the node and RMA the GPU");
        }
}

static void r_ecc_history(rb_ctx *c, const rb_rule *self)
{
    if (rb_find(c, "GPU_ECC_UNCORRECTABLE") || rb_find(c, "GPU_ROW_REMAP_PENDING"))
        return;
    RB_EACH(c, EV_SMI_QUERY, f)
        for (int g = 0; g < f->as.smiq->n_gpus; g++) {
            const ev_smiq_gpu *gp = &f->as.smiq->gpus[g];
            if (gp->aggregate_uncorr <= 0 || gp->volatile_uncorr > 0)
                continue;
            rb_finding *x = rb_raise(c, self);
            rb_title(x, "GPU %s (%s): %ld uncorrectable ECC error(s) in its lifetime, none since the driver loaded", gp->bus_id, gp->product,
                     gp->aggregate_uncorr);
            rb_cite_line(x, f, gp->line, "%s", gp->bus_id);
            rb_step(x, "watch it: nvidia-smi -q -d ECC after each job; RMA if the count grows");
        }
}

static void r_app_fault(rb_ctx *c, const rb_rule *self)
{
    rb_finding *x = xid_findings(c, self);
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_cuda_errors; k++) {
            const ev_torch_error *e = &f->as.torch->cuda_errors[k];
            if (!ev_torch_error_is_access_fault(e))
                continue;
            if (!x) {
                x = rb_raise(c, self);
                rb_rank(x, e->at.rank);
                if (e->at.rank >= 0)
                    rb_title(x, "the application's kernel faulted on rank %d (CUDA error: %s)", e->at.rank, e->what);
                else
                    rb_title(x, "the application's kernel faulted (CUDA error: %s)", e->what);
            }
            rb_cite(x, f, &e->at);
            rb_step(x, "rerun with CUDA_LAUNCH_BLOCKING=1, then compute-sanitizer python train.py to find the kernel");
        }
}

/* Memory page faults and engine exceptions (Xid 31, 13) are usually the
 * application's; NVIDIA lists hardware among their causes. The same GPU
 * faulting under several different processes, while it is one GPU of the
 * node, points at the GPU. */
#define FAULTY_MIN_PIDS 3

static void r_faulty_gpu(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_KERNEL, f) {
        const ev_dmesg *d = f->as.dmesg;
        for (int k = 0; k < d->n_xids; k++) {
            const ev_dmesg_xid *a = &d->xids[k];
            if ((a->code != 31 && a->code != 13) || !a->pci[0])
                continue;
            long pids[EV_DMESG_MAX_ITEMS];
            int np = 0, first = k;
            bool earlier = false;
            for (int j = 0; j < d->n_xids; j++) {
                const ev_dmesg_xid *b = &d->xids[j];
                if (b->code != a->code || strcmp(b->pci, a->pci) != 0)
                    continue;
                if (j < k)
                    earlier = true;
                bool dup = false;
                for (int p = 0; p < np; p++)
                    dup |= pids[p] == b->pid;
                if (!dup && b->pid >= 0)
                    pids[np++] = b->pid;
            }
            if (earlier || np < FAULTY_MIN_PIDS)
                continue;
            rb_finding *x = rb_raise(c, self);
            if (!x->title[0])
                rb_title(x, "GPU %s faults again and again under %d different processes (Xid %d): the GPU, not one application, is the likely cause",
                         a->pci, np, a->code);
            for (int j = first; j < d->n_xids; j++)
                if (d->xids[j].code == a->code && strcmp(d->xids[j].pci, a->pci) == 0)
                    rb_cite(x, f, &d->xids[j].at);
            rb_step(x, "confirm: run the job with CUDA_VISIBLE_DEVICES set to exclude that GPU, and once on it alone");
            rb_step(x, "drain the GPU and run dcgmi diag -r 3 on it; RMA it if the fault follows the GPU");
        }
    }
}

static void r_aer(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_KERNEL, f) {
        const ev_dmesg *d = f->as.dmesg;
        if (!d->n_aer)
            continue;
        long fatal = d->aer_total[EV_AER_FATAL], nonfatal = d->aer_total[EV_AER_NONFATAL], corr = d->aer_total[EV_AER_CORRECTED];
        rb_finding *x = rb_raise(c, self);
        rb_confidence(x, fatal ? 0.75 : nonfatal ? 0.65 : corr >= 100 ? 0.4 : 0.3);
        if (!fatal && !nonfatal)
            rb_severity(x, corr >= 100 ? AN_SEV_MEDIUM : AN_SEV_LOW);
        const ev_dmesg_aer *a = &d->aer[0];
        for (int k = 0; k < d->n_aer; k++)
            if (d->aer[k].severity > a->severity)
                a = &d->aer[k];
        rb_title(x, "PCIe AER errors: %ld fatal, %ld non-fatal, %ld corrected (worst on %s%s%s)", fatal, nonfatal, corr,
                 a->device[0] ? a->device : "?", a->type[0] ? ", " : "", a->type);
        for (int k = 0; k < d->n_aer && x->n_cite < 4; k++)
            if (d->aer[k].severity == a->severity)
                rb_cite(x, f, &d->aer[k].at);
        rb_step(x, "lspci -vvv -s %s   # LnkSta speed/width vs LnkCap, error status", a->device[0] ? a->device : "<bdf>");
        rb_step(x, "nvidia-smi -q -d PCIE   # current vs max link generation and width; replay counters");
        rb_step(x, "reseat the GPU/riser or move it to another slot if errors follow the slot");
    }
}

static void r_host_oom(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_KERNEL, f) {
        const ev_dmesg *d = f->as.dmesg;
        if (!d->n_oomkills)
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "the kernel OOM killer killed process %ld (%s): host memory ran out", d->oomkills[0].pid, d->oomkills[0].comm);
        for (int k = 0; k < d->n_oomkills; k++)
            rb_cite(x, f, &d->oomkills[k].at);
        rb_step(x, "free -g; check the job's memory limit (cgroup / Slurm --mem)");
        rb_step(x, "fewer DataLoader workers, smaller prefetch_factor, no full-dataset copies per rank; CPU offload uses host memory too");
    }
}

/* ---- timeline ---- */

static void events(rb_ctx *c, const ev_file *f)
{
    if (f->kind == EV_KERNEL) {
        const ev_dmesg *d = f->as.dmesg;
        for (int k = 0; k < d->n_xids; k++)
            rb_event_add(c, f, &d->xids[k].at, "xid", RB_EV_ERROR, !strcmp(xid_rule(d->xids[k].code), "GPU_XID_SECONDARY"));
        for (int k = 0; k < d->n_bus; k++)
            rb_event_add(c, f, &d->bus[k].at, "gpu_fell_off_bus", RB_EV_ERROR, false);
        for (int k = 0; k < d->n_aer; k++)
            rb_event_add(c, f, &d->aer[k].at, "pcie_aer", d->aer[k].severity == EV_AER_CORRECTED ? RB_EV_WARN : RB_EV_ERROR, false);
        for (int k = 0; k < d->n_oomkills; k++)
            rb_event_add(c, f, &d->oomkills[k].at, "host_oom_kill", RB_EV_ERROR, false);
    } else if (f->kind == EV_SMI_QUERY) {
        for (int g = 0; g < f->as.smiq->n_gpus; g++) {
            const ev_smiq_gpu *gp = &f->as.smiq->gpus[g];
            ev_at at = {0};
            at.rank = -1;
            if (gp->line_ecc) {
                at.line = gp->line_ecc;
                snprintf(at.text, sizeof at.text, "%s", gp->text_ecc);
                rb_event_add(c, f, &at, "ecc_state", RB_EV_ERROR, false);
            }
            if (gp->line_remap_pending) {
                at.line = gp->line_remap_pending;
                snprintf(at.text, sizeof at.text, "%s", gp->text_remap);
                rb_event_add(c, f, &at, "row_remap_pending", RB_EV_WARN, false);
            }
        }
    }
}

#define FAIL AN_SEV_CRITICAL
#define XID_CATALOG "NVIDIA Xid catalog (https://docs.nvidia.com/deploy/xid-errors/)"

static const rb_rule k_rules[] = {
    {"GPU_FELL_OFF_BUS", CP_LAYER_COMPUTE, FAIL, 0.95, "NVRM: Xid 79, or 'The NVIDIA GPU <bdf> ... has fallen off the bus and is not responding to commands'",
     XID_CATALOG "; https://github.com/NVIDIA/NVSentinel/issues/155 (the message without an Xid means the same)",
     "the GPU is unreachable over PCIe (power, thermal, PCIe link or GPU failure): drain the node, cold reboot, RMA if it repeats", r_fell_off_bus},
    {"GPU_ECC_UNCORRECTABLE", CP_LAYER_COMPUTE, FAIL, 0.9,
     "Xid 48/95/140 (uncorrectable / uncontained / unrecovered ECC), 'CUDA error: uncorrectable ECC error encountered', nvidia-smi -q volatile uncorrectable counts",
     XID_CATALOG "; NVIDIA A100/H100 memory error management",
     "uncorrectable memory errors: drain the node, reset the GPU, check row remapping; RMA if they repeat", r_ecc_uncorrectable},
    {"GPU_ECC_CONTAINED", CP_LAYER_COMPUTE, FAIL, 0.75, "Xid 94 (contained ECC error)", XID_CATALOG,
     "a contained uncorrectable ECC error killed the application that touched the memory: restart the job; reset the GPU when idle so the row is remapped",
     r_xid},
    {"GPU_ROW_REMAP_FAILURE", CP_LAYER_COMPUTE, FAIL, 0.85, "Xid 64, nvidia-smi -q 'Remapping Failure Occurred : Yes'",
     XID_CATALOG "; NVIDIA memory error management (row remapping)", "the GPU could not repair a memory fault: drain the node and RMA the GPU", r_remap_failure},
    {"GPU_ROW_REMAP_PENDING", CP_LAYER_COMPUTE, FAIL, 0.6,
     "Xid 63, nvidia-smi -q Remapped Rows 'Pending : Yes' (or 'Pending Page Blacklist/Retirement : Yes')",
     "NVIDIA memory error management (a remap takes effect at the next GPU reset); https://github.com/leptonai/gpud/pull/80",
     "a memory repair waits for a GPU reset: drain the node and reset the GPU (or reboot), then confirm Pending : No", r_remap_pending},
    {"GPU_NVLINK_ERROR", CP_LAYER_INTRA, FAIL, 0.8,
     "Xid 74, 144-150 (NVLink errors); CUDA error: uncorrectable NVLink error detected during the execution (cudaErrorNvlinkUncorrectable)",
     XID_CATALOG,
     "an NVLink reported a fatal error: nvidia-smi nvlink -e / -s, reset the GPU; reseat/RMA if the link stays down", r_nvlink},
    {"GPU_FIRMWARE", CP_LAYER_COMPUTE, FAIL, 0.8, "Xid 61, 62, 119, 120, 143 (PMU/GSP firmware errors, init failure)", XID_CATALOG,
     "the GPU's firmware stopped: reset the GPU or reboot; update the driver; RMA if it repeats", r_xid},
    {"GPU_FAULTY_REPEATED", CP_LAYER_COMPUTE, FAIL, 0.7,
     "the same Xid 31 (MMU fault) or 13 (engine exception) on one GPU from 3 or more different processes",
     XID_CATALOG " (hardware among the causes of Xid 13/31); https://github.com/pytorch/pytorch/issues/51382 (one GPU faulty)",
     "one GPU faults under every process that uses it: exclude it (CUDA_VISIBLE_DEVICES), run dcgmi diag on it, RMA it", r_faulty_gpu},
    {"GPU_APP_FAULT", CP_LAYER_COMPUTE, FAIL, 0.6,
     "Xid 13, 31, 43, 69 (application faults), CUDA error: an illegal memory access was encountered / misaligned address / illegal instruction / device-side assert triggered", XID_CATALOG,
     "a kernel accessed memory it does not own: usually the application (find the kernel with compute-sanitizer), hardware when one GPU faults under every job",
     r_app_fault},
    {"GPU_ECC_SBE_RATE", CP_LAYER_COMPUTE, AN_SEV_MEDIUM, 0.4, "Xid 92 (high single-bit ECC error rate)", XID_CATALOG,
     "the GPU corrects many memory errors: watch it, plan a reset/RMA if the rate stays high", r_xid},
    {"GPU_ENGINE", CP_LAYER_COMPUTE, FAIL, 0.5, "Xid 68, 109 (video engine exception, context switch timeout)", XID_CATALOG,
     "an engine of the GPU failed: reset the GPU; update the driver", r_xid},
    {"GPU_C2C", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.35, "Xid 121 (C2C link corrected error)", XID_CATALOG,
     "a chip-to-chip link corrected errors: monitor; reset at the next maintenance window if it repeats", r_xid},
    {"GPU_XID_SECONDARY", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.25, "Xid 45 (preemptive cleanup after an earlier error or a killed process)", XID_CATALOG,
     "a follow-up of an earlier error or a killed process: look for that one", r_xid},
    {"GPU_XID", CP_LAYER_COMPUTE, FAIL, 0.5, "an NVRM Xid code not in chainprof's table", XID_CATALOG,
     "look the Xid up in NVIDIA's catalog; drain the node if it repeats", r_xid},
    {"GPU_ECC_HISTORY", CP_LAYER_COMPUTE, AN_SEV_LOW, 0.3, "nvidia-smi -q aggregate (lifetime) uncorrectable ECC counts above 0, none volatile",
     "NVIDIA memory error management", "the GPU had memory errors before: watch the counters after each job, RMA if they grow", r_ecc_history},
    {"PCIE_AER", CP_LAYER_INTRA, FAIL, 0.65, "kernel AER: Corrected / Uncorrected (Non-Fatal) / Uncorrected (Fatal) error received, PCIe Bus Error",
     "Linux PCIe AER documentation (Documentation/PCI/pcieaer-howto)",
     "the PCIe link of a device reports errors: check its width/speed (lspci LnkSta), reseat the card or riser, move it if the errors follow the slot",
     r_aer},
    {"HOST_OOM_KILLER", CP_LAYER_HOST, FAIL, 0.8, "kernel: Out of memory: Killed process N (comm)", "Linux OOM killer (mm/oom_kill.c)",
     "host memory ran out: check the job's memory limit, fewer data-loader workers, no full-dataset copies per rank", r_host_oom},
};

const rb_family rb_family_kernel = {.name = "kernel",
                                    .summary = "kernel logs and nvidia-smi -q: Xid, fallen off the bus, ECC, row remapping, AER, OOM killer",
                                    .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules), .events = events};
