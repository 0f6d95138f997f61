/* rd_lspci.c - lspci -vv reader (see rd_lspci.h). */
#include "rd_lspci.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

typedef struct pst {
    ev_lspci *f;
} pst;

static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

static void set_at(ev_at *at, const rd_line *ln)
{
    at->line = ln->no;
    at->rank = -1;
    at->ts = ln->pfx->ts;
    rd_copy_trim(at->text, sizeof at->text, ln->text, ln->len);
}

/* "41:00.0" / "0000:41:00.0" at s: its length, 0 when not a BDF */
static size_t bdf_len(const char *s, const char *end)
{
    const char *p = s;
    int colons = 0, dot = 0;
    while (p < end && (isxdigit((unsigned char)*p) || *p == ':' || *p == '.')) {
        colons += *p == ':';
        dot += *p == '.';
        p++;
    }
    return colons >= 1 && dot == 1 && p - s >= 7 && (p == end || *p == ' ') ? (size_t)(p - s) : 0;
}

static ev_lspci_dev *new_dev(ev_lspci *f, const char *bdf, size_t bl, const char *desc, size_t dl, long line)
{
    if (f->n_devs == EV_LSPCI_MAX_DEVS) {
        f->devs_dropped++;
        return NULL;
    }
    ev_lspci_dev *d = &f->devs[f->n_devs++];
    memset(d, 0, sizeof *d);
    rd_copy_trim(d->bdf, sizeof d->bdf, bdf, bl);
    rd_copy_trim(d->desc, sizeof d->desc, desc, dl);
    d->line = line;
    d->acs_redirect = -1;
    return d;
}

/* "Speed 8GT/s (ok), Width x8 (downgraded)" */
static void link(const char *s, const char *end, double *gts, int *width)
{
    const char *sp = find(s, (size_t)(end - s), "Speed ");
    if (sp) {
        const char *q = sp + 6;
        double v;
        if (rd_scan_double(&q, end, &v) == 0)
            *gts = v;
    }
    long w = rd_long_after(s, end, "Width x");
    if (w > 0 && w <= 64)
        *width = (int)w;
}

void rd_lspci_line(void *stp, const rd_line *ln)
{
    pst *st = stp;
    ev_lspci *f = st->f;
    f->lines++;
    const char *s = ln->text, *end = s + ln->len;
    if (s < end && *s == '#') { /* "# LnkSta: ..." pasted as a comment */
        s++;
        while (s < end && *s == ' ')
            s++;
    }
    size_t bl = bdf_len(s, end);
    if (bl && s == ln->text) { /* a device line: unindented BDF + description */
        const char *d = s + bl;
        while (d < end && *d == ' ')
            d++;
        new_dev(f, s, bl, d, (size_t)(end - d), ln->no);
        return;
    }
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    size_t n = (size_t)(end - s);
    bool cap = rd_starts(s, n, "LnkCap:"), sta = rd_starts(s, n, "LnkSta:"), acs = rd_starts(s, n, "ACSCtl:");
    if (!cap && !sta && !acs)
        return;
    ev_lspci_dev *d = f->n_devs ? &f->devs[f->n_devs - 1] : new_dev(f, "", 0, "", 0, ln->no);
    if (!d)
        return;
    if (cap) {
        link(s, end, &d->cap_gts, &d->cap_width);
        set_at(&d->lnkcap_at, ln);
    } else if (sta) {
        link(s, end, &d->sta_gts, &d->sta_width);
        d->downgraded = find(s, n, "downgraded") != NULL;
        set_at(&d->lnksta_at, ln);
    } else {
        d->acs_redirect = find(s, n, "SrcValid+") || find(s, n, "ReqRedir+") || find(s, n, "CmpltRedir+");
        set_at(&d->acs_at, ln);
    }
}

void *rd_lspci_begin(const char *name)
{
    (void)name;
    pst *st = cp_xcalloc(1, sizeof *st);
    st->f = cp_xcalloc(1, sizeof *st->f);
    return st;
}

void *rd_lspci_end(void *stp, diag_set *diag)
{
    pst *st = stp;
    ev_lspci *f = st->f;
    free(st);
    int facts = 0;
    for (int i = 0; i < f->n_devs; i++)
        facts += f->devs[i].lnksta_at.line || f->devs[i].lnkcap_at.line || f->devs[i].acs_at.line;
    if (!facts) {
        free(f);
        return NULL;
    }
    if (f->devs_dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->devs_dropped, NULL, -1);
    return f;
}

int rd_lspci_sniff(const char *head, size_t n)
{
    int s = 0;
    if (rd_memmem(head, n, "LnkSta:") || rd_memmem(head, n, "ACSCtl:"))
        s += 60;
    if (rd_memmem(head, n, "LnkCap:"))
        s += 20;
    if (rd_memmem(head, n, "Capabilities: ["))
        s += 20;
    return s > 100 ? 100 : s;
}
