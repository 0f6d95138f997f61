/* dmesg_log.c - kernel log reader for GPU/PCIe faults (see dmesg_log.h).
 *
 * Kernel messages may be split across lines: the driver prints "NVRM: The
 * NVIDIA GPU 0000:b3:00.0" and continues on indented lines "NVRM: ... fallen
 * off the bus ...". Instead of joining lines (which needs a buffer whose size
 * the input controls), the reader remembers the last GPU address announced
 * and attaches it to a "fallen off the bus" seen within the next few lines.
 */
#include "dmesg_log.h"

#include <stdlib.h>

#include "../base/util.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum { K_NVRM, K_AER, K_PCIE, K_OOMKILL };
static const char *const k_keys[] = {"NVRM", "AER", "PCIe Bus Error", "Out of memory"};


static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

static void set_at(ev_at *at, const rd_line *ln)
{
    at->line = ln->no;
    at->rank = -1;
    at->ts = ln->pfx->ts;
    snprintf(at->host, sizeof at->host, "%s", ln->pfx->host);
    rd_copy_trim(at->text, sizeof at->text, ln->text, ln->len);
}

/* "0000:b3:00.0" style token starting at s */
static size_t bdf_len(const char *s, const char *end)
{
    const char *p = s;
    while (p < end && (isxdigit((unsigned char)*p) || *p == ':' || *p == '.')) p++;
    return (size_t)(p - s);
}

static void parse_xid(ev_dmesg *f, const rd_line *ln, const char *k, const char *end)
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
    if (f->n_xids == EV_DMESG_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    ev_dmesg_xid *x = &f->xids[f->n_xids++];
    x->code = (int)code;
    x->pid = pid;
    snprintf(x->pci, sizeof x->pci, "%s", pci);
    set_at(&x->at, ln);
}

static void parse_aer(ev_dmesg *f, const rd_line *ln, const char *s, const char *end)
{
    size_t n = (size_t)(end - s);
    int sev = find(s, n, "Fatal") && !find(s, n, "Non-Fatal") ? EV_AER_FATAL
              : (find(s, n, "Uncorrected") || find(s, n, "Non-Fatal")) ? EV_AER_NONFATAL
                                                                        : EV_AER_CORRECTED;
    f->aer_total[sev]++;
    if (f->n_aer == EV_DMESG_MAX_ITEMS) {
        f->dropped++;
        return;
    }
    ev_dmesg_aer *a = &f->aer[f->n_aer++];
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
    set_at(&a->at, ln);
}

typedef struct dst {
    ev_dmesg *f;
    rd_keyset keys;
    /* last "The NVIDIA GPU <bdf>" seen, for the multi-line message */
    char last_gpu[24];
    long last_gpu_line;
} dst;

void rd_dmesg_line(void *stp, const rd_line *ln)
{
    dst *st = stp;
    ev_dmesg *f = st->f;
    const rd_prefix *pfx = ln->pfx;
    long lineno = ln->no;
    f->lines++;
    const char *s = pfx->msg, *end = pfx->msg + pfx->msg_len;
    size_t n = pfx->msg_len;
    const char *k;
    if (pfx->pid >= 0) return; /* an NCCL-prefixed line is not the kernel's */
    uint32_t mask = rd_keyset_scan(&st->keys, s, n);
    bool nvrm = (mask & (1u << K_NVRM)) && find(s, n > 40 ? 40 : n, "NVRM") != NULL;
    if (pfx->ts.clock == EV_CLOCK_BOOT || nvrm) f->kernel_lines++;
    if (!nvrm && !(mask & ((1u << K_AER) | (1u << K_PCIE) | (1u << K_OOMKILL)))) return;

    if (nvrm && (k = find(s, n, "Xid (")) != NULL) {
        parse_xid(f, ln, k, end);
        return;
    }
    if (nvrm && (k = find(s, n, "NVIDIA GPU ")) != NULL) {
        const char *b = k + 11;
        rd_copy_trim(st->last_gpu, sizeof st->last_gpu, b, bdf_len(b, end));
        st->last_gpu_line = lineno;
    }
    if (nvrm && find(s, n, "fallen off the bus")) {
        if (f->n_bus == EV_DMESG_MAX_ITEMS) {
            f->dropped++;
            return;
        }
        ev_dmesg_bus *b = &f->bus[f->n_bus++];
        memset(b, 0, sizeof *b);
        if (st->last_gpu_line && lineno - st->last_gpu_line <= 3)
            snprintf(b->pci, sizeof b->pci, "%s", st->last_gpu);
        set_at(&b->at, ln);
        return;
    }
    if (find(s, n, "AER: ") || find(s, n, "PCIe Bus Error")) {
        /* each error is reported by a summary line and a detail line; count
         * the summary ("error received"/"Bus Error") lines only */
        if (find(s, n, "error received") || find(s, n, "PCIe Bus Error"))
            parse_aer(f, ln, s, end);
        return;
    }
    if ((k = find(s, n, "Out of memory: Killed process ")) != NULL) {
        if (f->n_oomkills == EV_DMESG_MAX_ITEMS) {
            f->dropped++;
            return;
        }
        ev_dmesg_oomkill *o = &f->oomkills[f->n_oomkills++];
        memset(o, 0, sizeof *o);
        const char *q = k + 30;
        rd_scan_long(&q, end, &o->pid);
        const char *lp = memchr(q, '(', (size_t)(end - q));
        const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
        if (lp && rp) rd_copy_trim(o->comm, sizeof o->comm, lp + 1, (size_t)(rp - lp - 1));
        set_at(&o->at, ln);
    }
}

void *rd_dmesg_begin(const char *name)
{
    (void)name;
    dst *st = cp_xcalloc(1, sizeof *st);
    st->f = cp_xmalloc(sizeof *st->f);
    memset(st->f, 0, offsetof(ev_dmesg, xids)); /* the arrays after it are filled as items come */
    rd_keyset_init(&st->keys, k_keys, (int)CP_ARRAY_LEN(k_keys));
    return st;
}

void *rd_dmesg_end(void *stp, diag_set *diag)
{
    dst *st = stp;
    ev_dmesg *f = st->f;
    free(st);
    if (!ev_dmesg_any(f)) {
        free(f);
        return NULL;
    }
    if (f->dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->dropped, NULL, -1);
    return f;
}

int rd_dmesg_sniff(const char *head, size_t n)
{
    /* a scan reader; the score names a kernel log when nothing else claims it */
    return rd_memmem(head, n, "NVRM: ") || rd_memmem(head, n, "kernel: ") ? 60 : 0;
}
