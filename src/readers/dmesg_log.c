/* dmesg_log.c - kernel log reader for GPU/PCIe faults (see dmesg_log.h).
 *
 * Kernel messages may be split across lines: the driver prints "NVRM: The
 * NVIDIA GPU 0000:b3:00.0" and continues on indented lines "NVRM: ... fallen
 * off the bus ...". Instead of joining lines (which needs a buffer whose size
 * the input controls), the reader remembers the last GPU address announced
 * and attaches it to a "fallen off the bus" seen within the next few lines.
 */
#include "dmesg_log.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Meanings and actions follow NVIDIA's Xid documentation (Xid catalog and
 * the "XID Errors" table); wording is ours. Weights rank how likely the Xid
 * is the root cause of a job failure rather than a consequence. */
static const rd_xid_info k_xids[] = {
    {13, "graphics engine exception: usually an out-of-range access or illegal instruction in the application, rarely hardware",
     "gpu_app_fault", "application", "rerun under compute-sanitizer; if it repeats on this GPU only, run dcgmi diag -r 3", 0.55},
    {31, "GPU memory page fault (MMU fault): the application accessed an invalid address; rarely driver or hardware",
     "gpu_app_fault", "application", "rerun under compute-sanitizer; CUDA_LAUNCH_BLOCKING=1 to find the kernel", 0.55},
    {43, "GPU stopped processing: a user application hit a fault and its channel was reset; the GPU stays healthy",
     "gpu_app_fault", "application", "look at the application error printed just before; restart the job", 0.45},
    {45, "preemptive cleanup after an earlier error or a killed process (kill, Ctrl-C, OOM killer)",
     "gpu_xid_secondary", "consequence", "look for an earlier Xid or a killed process; this one is a follow-up", 0.25},
    {48, "double-bit (uncorrectable) ECC error in GPU memory: the application using it is killed",
     "gpu_ecc_uncorrectable", "hardware", "drain the node, reset the GPU (nvidia-smi -r), check nvidia-smi -q -d ECC,ROW_REMAPPER; RMA if it repeats", 0.9},
    {61, "internal micro-controller breakpoint/warning (PMU firmware)",
     "gpu_firmware", "driver/firmware", "reset the GPU; update the driver; report to NVIDIA if it repeats", 0.7},
    {62, "internal micro-controller halt (PMU firmware halted)",
     "gpu_firmware", "driver/firmware", "drain the node and reset the GPU; RMA if it repeats", 0.8},
    {63, "ECC page retirement or row remapping recorded: the fix takes effect at the next GPU reset",
     "gpu_row_remap_pending", "hardware", "drain the node and reset the GPU to apply the remap; check nvidia-smi -q -d ROW_REMAPPER", 0.6},
    {64, "ECC page retirement or row remapper recording failure: the GPU could not record the fault",
     "gpu_row_remap_failure", "hardware", "drain the node and RMA the GPU", 0.85},
    {68, "video processor (NVDEC) exception", "gpu_engine", "hardware or driver", "reset the GPU; update the driver", 0.4},
    {69, "graphics engine class error: invalid work submitted to an engine", "gpu_app_fault", "application or driver",
     "check the application and driver versions; reset the GPU if it repeats", 0.45},
    {74, "NVLink error: a link reported a fatal or replay-threshold error",
     "gpu_nvlink", "hardware", "nvidia-smi nvlink -e and nvidia-smi nvlink -s; reset the GPU; reseat/RMA if the link stays down", 0.8},
    {79, "GPU has fallen off the bus: the GPU is no longer reachable over PCIe (power, thermal, PCIe link or GPU failure)",
     "gpu_fell_off_bus", "hardware", "drain the node; check power/thermals and PCIe (lspci, AER); cold reboot; RMA if it repeats", 0.95},
    {92, "high single-bit ECC error rate", "gpu_ecc_sbe_rate", "hardware",
     "watch nvidia-smi -q -d ECC; plan a GPU reset/RMA if the rate stays high", 0.4},
    {94, "contained ECC error: only the application that touched the memory was affected",
     "gpu_ecc_contained", "hardware", "restart the job; reset the GPU when idle so the row is remapped", 0.75},
    {95, "uncontained ECC error: every application on the GPU is affected",
     "gpu_ecc_uncorrectable", "hardware", "drain the node and reset the GPU (nvidia-smi -r); RMA if it repeats", 0.9},
    {109, "context switch timeout", "gpu_engine", "application or driver",
     "check for long-running kernels; update the driver; reset the GPU if it repeats", 0.5},
    {119, "GSP RPC timeout: the GPU System Processor did not answer the driver",
     "gpu_firmware", "driver/firmware", "reset the GPU or reboot; update the driver", 0.8},
    {120, "GSP error: the GPU System Processor reported an error",
     "gpu_firmware", "driver/firmware", "reset the GPU or reboot; update the driver", 0.8},
    {121, "C2C (chip-to-chip) link corrected error", "gpu_c2c", "hardware",
     "monitor; reset at the next maintenance window if it repeats", 0.35},
    {140, "unrecovered ECC error", "gpu_ecc_uncorrectable", "hardware",
     "drain the node and reset the GPU; RMA if it repeats", 0.85},
    {143, "GPU initialization failure reported by the driver", "gpu_firmware", "driver/firmware",
     "reset or power-cycle the node; check the driver and firmware versions", 0.75},
    {144, "NVLink SAW error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {145, "NVLink RLW error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {146, "NVLink TLW error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {147, "NVLink TREX error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {148, "NVLink NVLPW control error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
    {149, "NVLink NETIR error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; check the NVLink fabric/switch; reset", 0.8},
    {150, "NVLink MSE error", "gpu_nvlink", "hardware", "nvidia-smi nvlink -e; reset the GPU; RMA if it repeats", 0.8},
};

const rd_xid_info *rd_xid_lookup(int code)
{
    for (size_t i = 0; i < sizeof k_xids / sizeof k_xids[0]; i++)
        if (k_xids[i].code == code) return &k_xids[i];
    return NULL;
}

const char *rd_aer_severity_name(int s)
{
    return s == RD_AER_FATAL ? "fatal" : s == RD_AER_NONFATAL ? "non-fatal" : "corrected";
}

enum { K_NVRM, K_AER, K_PCIE, K_OOMKILL };
static const char *const k_keys[] = {"NVRM", "AER", "PCIe Bus Error", "Out of memory"};

void rd_dmesg_init(rd_dmesg_facts *f, const char *file)
{
    memset(f, 0, offsetof(rd_dmesg_facts, xids)); /* the arrays after it are filled as items come */
    rd_keyset_init(&f->keys_, k_keys, (int)(sizeof k_keys / sizeof k_keys[0]));
    f->file = file;
}

static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

static void set_at(rd_dmesg_at *at, const rd_prefix *pfx, const char *line, size_t len, long lineno)
{
    at->line = lineno;
    at->ts = pfx->ts;
    snprintf(at->host, sizeof at->host, "%s", pfx->host);
    rd_copy_trim(at->text, sizeof at->text, line, len);
}

/* "0000:b3:00.0" style token starting at s */
static size_t bdf_len(const char *s, const char *end)
{
    const char *p = s;
    while (p < end && (isxdigit((unsigned char)*p) || *p == ':' || *p == '.')) p++;
    return (size_t)(p - s);
}

static void parse_xid(rd_dmesg_facts *f, const rd_prefix *pfx, const char *k, const char *end,
                      const char *line, size_t len, long lineno)
{
    /* "Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
     * "Xid (43, pid: 5678): ROBUST_CHANNEL_..." (variant seen in tools' output) */
    const char *lp = memchr(k, '(', (size_t)(end - k));
    const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
    if (!lp || !rp) return;
    char pci[24] = "";
    long code = -1, pid = -1;
    const char *q = lp + 1;
    if (end - q > 4 && memcmp(q, "PCI:", 4) == 0) {
        rd_copy_trim(pci, sizeof pci, q + 4, bdf_len(q + 4, rp));
        q = rp + 1;
        while (q < end && (*q == ':' || *q == ' ')) q++;
        if (rd_scan_long(&q, end, &code) != 0) return;
    } else if (rd_scan_long(&q, rp, &code) != 0) {
        return;
    }
    const char *pp = find(q, (size_t)(end - q), "pid");
    if (pp) {
        pp += 3;
        while (pp < end && (*pp == '=' || *pp == ':' || *pp == ' ')) pp++;
        rd_scan_long(&pp, end, &pid);
    }
    if (f->n_xids == RD_DMESG_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    rd_dmesg_xid *x = &f->xids[f->n_xids++];
    x->code = (int)code;
    x->pid = pid;
    snprintf(x->pci, sizeof x->pci, "%s", pci);
    set_at(&x->at, pfx, line, len, lineno);
}

static void parse_aer(rd_dmesg_facts *f, const rd_prefix *pfx, const char *s, const char *end,
                      const char *line, size_t len, long lineno)
{
    size_t n = (size_t)(end - s);
    int sev = find(s, n, "Fatal") && !find(s, n, "Non-Fatal") ? RD_AER_FATAL
              : (find(s, n, "Uncorrected") || find(s, n, "Non-Fatal")) ? RD_AER_NONFATAL
                                                                        : RD_AER_CORRECTED;
    f->aer_total[sev]++;
    if (f->n_aer == RD_DMESG_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    rd_dmesg_aer *a = &f->aer[f->n_aer++];
    memset(a, 0, sizeof *a);
    a->severity = sev;
    /* device: "pcieport 0000:00:01.0: AER: ..." / "nvidia 0000:3b:00.0: PCIe Bus Error" */
    for (const char *p = s; p + 7 < end; p++) {
        if (isxdigit((unsigned char)p[0]) && (p == s || p[-1] == ' ')) {
            size_t L = bdf_len(p, end);
            if (L >= 7 && memchr(p, ':', L)) {
                rd_copy_trim(a->device, sizeof a->device, p, L && p[L - 1] == ':' ? L - 1 : L);
                break;
            }
        }
    }
    const char *t = find(s, n, "type=");
    if (t) {
        t += 5;
        const char *e = t;
        while (e < end && *e != ',') e++;
        rd_copy_trim(a->type, sizeof a->type, t, (size_t)(e - t));
    }
    set_at(&a->at, pfx, line, len, lineno);
}

void rd_dmesg_line_pfx(rd_dmesg_facts *f, const rd_prefix *pfx, const char *line, size_t len,
                       long lineno)
{
    f->lines++;
    const char *s = pfx->msg, *end = pfx->msg + pfx->msg_len;
    size_t n = pfx->msg_len;
    const char *k;
    if (pfx->pid >= 0) return; /* an NCCL-prefixed line is not the kernel's */
    uint32_t mask = rd_keyset_scan(&f->keys_, s, n);
    bool nvrm = (mask & (1u << K_NVRM)) && find(s, n > 40 ? 40 : n, "NVRM") != NULL;
    if (pfx->ts.clock == RD_CLOCK_BOOT || nvrm) f->kernel_lines++;
    if (!nvrm && !(mask & ((1u << K_AER) | (1u << K_PCIE) | (1u << K_OOMKILL)))) return;

    if (nvrm && (k = find(s, n, "Xid (")) != NULL) {
        parse_xid(f, pfx, k, end, line, len, lineno);
        return;
    }
    if (nvrm && (k = find(s, n, "NVIDIA GPU ")) != NULL) {
        const char *b = k + 11;
        rd_copy_trim(f->last_gpu_, sizeof f->last_gpu_, b, bdf_len(b, end));
        f->last_gpu_line_ = lineno;
    }
    if (nvrm && find(s, n, "fallen off the bus")) {
        if (f->n_bus == RD_DMESG_MAX_ITEMS) {
            f->dropped++;
            return;
        }
        rd_dmesg_bus *b = &f->bus[f->n_bus++];
        memset(b, 0, sizeof *b);
        if (f->last_gpu_line_ && lineno - f->last_gpu_line_ <= 3)
            snprintf(b->pci, sizeof b->pci, "%s", f->last_gpu_);
        set_at(&b->at, pfx, line, len, lineno);
        return;
    }
    if (find(s, n, "AER: ") || find(s, n, "PCIe Bus Error")) {
        /* each error is reported by a summary line and a detail line; count
         * the summary ("error received"/"Bus Error") lines only */
        if (find(s, n, "error received") || find(s, n, "PCIe Bus Error"))
            parse_aer(f, pfx, s, end, line, len, lineno);
        return;
    }
    if ((k = find(s, n, "Out of memory: Killed process ")) != NULL) {
        if (f->n_oomkills == RD_DMESG_MAX_ITEMS) {
            f->dropped++;
            return;
        }
        rd_dmesg_oomkill *o = &f->oomkills[f->n_oomkills++];
        memset(o, 0, sizeof *o);
        const char *q = k + 30;
        rd_scan_long(&q, end, &o->pid);
        const char *lp = memchr(q, '(', (size_t)(end - q));
        const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
        if (lp && rp) rd_copy_trim(o->comm, sizeof o->comm, lp + 1, (size_t)(rp - lp - 1));
        set_at(&o->at, pfx, line, len, lineno);
    }
}

void rd_dmesg_line(rd_dmesg_facts *f, const char *line, size_t len, long lineno)
{
    rd_prefix pfx;
    rd_prefix_parse(line, len, &pfx);
    rd_dmesg_line_pfx(f, &pfx, line, len, lineno);
}

void rd_dmesg_finish(rd_dmesg_facts *f) { (void)f; }

static void line_cb(void *ctx, const char *line, size_t len, long lineno)
{
    rd_dmesg_line(ctx, line, len, lineno);
}

void rd_dmesg_parse_buf(rd_dmesg_facts *f, const char *file, const char *buf, size_t len)
{
    rd_dmesg_init(f, file);
    rd_each_line(buf, len, line_cb, f);
    rd_dmesg_finish(f);
}
