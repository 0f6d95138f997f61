/* smi_query.c - `nvidia-smi -q` reader (see smi_query.h).
 *
 * A line is either a section title (no " : ") or "Key : Value". Titles are
 * pushed on a small stack by indentation so a counter such as "Total" can be
 * told apart by its parents ("Volatile" > "Double Bit" > "Total"). Deeper
 * nesting than the stack holds is ignored (never overflows).
 */
#include "smi_query.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_prefix.h"
#include "../base/util.h"

#define MAX_DEPTH 6

typedef struct sst {
    ev_smiq *ev;
    /* section titles by indentation level */
    char sect_[MAX_DEPTH][40];
    int indent_[MAX_DEPTH];
    int depth_;
} sst;

int rd_smiq_sniff(const char *buf, size_t len)
{
    size_t n = len > 4096 ? 4096 : len;
    if (rd_memmem(buf, n, "NVSMI LOG") || (rd_memmem(buf, n, "Attached GPUs") && rd_memmem(buf, n, "Driver Version")))
        return 100;
    /* an excerpt: one of -q's ECC/remap sections with its "Key : Value" lines */
    bool sect = rd_memmem(buf, n, "Remapped Rows") || rd_memmem(buf, n, "Retired Pages") ||
                rd_memmem(buf, n, "ECC Errors");
    bool kv = rd_memmem(buf, n, "Pending") || rd_memmem(buf, n, "Uncorrectable") || rd_memmem(buf, n, "Double Bit");
    return sect && kv && rd_memmem(buf, n, " : ") ? 70 : 0;
}

/* The GPU facts go to; an excerpt without a "GPU <bus id>" line gets one
 * anonymous GPU at its first section. */
static ev_smiq_gpu *new_gpu(ev_smiq *f, const char *bus, long lineno)
{
    if (f->n_gpus == EV_SMIQ_MAX_GPUS) {
        f->gpus_dropped++;
        return NULL;
    }
    ev_smiq_gpu *g = &f->gpus[f->n_gpus++];
    memset(g, 0, sizeof *g);
    rd_copy_trim(g->bus_id, sizeof g->bus_id, bus, strlen(bus));
    g->line = lineno;
    g->volatile_corr = g->volatile_uncorr = g->aggregate_corr = g->aggregate_uncorr = -1;
    g->retired_sbe = g->retired_dbe = g->remap_corr = g->remap_uncorr = -1;
    g->retire_pending = g->remap_pending = g->remap_failure = -1;
    return g;
}

static ev_smiq_gpu *cur_gpu(ev_smiq *f) { return f->n_gpus ? &f->gpus[f->n_gpus - 1] : NULL; }

static bool in_sect(const sst *f, const char *title)
{
    for (int i = 0; i < f->depth_; i++)
        if (strcmp(f->sect_[i], title) == 0) return true;
    return false;
}

/* add v to *acc, treating -1 as unknown */
static void add(long *acc, long v)
{
    if (v < 0) return;
    *acc = (*acc < 0 ? 0 : *acc) + v;
}

void rd_smiq_line(void *stp, const rd_line *ln)
{
    sst *f = stp;
    ev_smiq *ev = f->ev;
    const char *line = ln->text;
    size_t len = ln->len;
    long lineno = ln->no;
    ev->lines++;
    const char *s = line, *end = line + len;
    int indent = 0;
    while (s < end && (*s == ' ' || *s == '\t')) s++, indent++;
    if (s == end) return;
    size_t n = (size_t)(end - s);
    if (rd_memmem(s, n, "NVSMI LOG")) ev->recognised = true;
    const char *sep = rd_memmem(s, n, " : ");
    if (!sep && n && s[n - 1] == ':') sep = s + n - 1; /* "Key :" with empty value */
    char key[40];
    rd_copy_trim(key, sizeof key, s, sep ? (size_t)(sep - s) : n);
    /* pop titles at the same or deeper indentation */
    while (f->depth_ > 0 && f->indent_[f->depth_ - 1] >= indent) f->depth_--;

    if (indent == 0 && strncmp(key, "GPU ", 4) == 0 && !sep) {
        ev->recognised = true;
        new_gpu(ev, key + 4, lineno);
        return;
    }
    if (!sep) { /* a section title */
        if (!ev->n_gpus && (strcmp(key, "Remapped Rows") == 0 || strcmp(key, "Retired Pages") == 0 ||
                            strcmp(key, "ECC Errors") == 0)) {
            ev->recognised = true; /* an excerpt of one GPU's sections */
            new_gpu(ev, "", lineno);
        }
        if (f->depth_ < MAX_DEPTH) {
            snprintf(f->sect_[f->depth_], sizeof f->sect_[0], "%s", key);
            f->indent_[f->depth_++] = indent;
        }
        return;
    }
    const char *v = sep + (sep[0] == ':' ? 1 : 3);
    while (v < end && *v == ' ') v++;
    char val[64];
    rd_copy_trim(val, sizeof val, v, (size_t)(end - v));
    long num = -1;
    const char *q = val;
    if (rd_scan_long(&q, val + strlen(val), &num) != 0) num = -1;
    int yes = strncmp(val, "Yes", 3) == 0 ? 1 : strncmp(val, "No", 2) == 0 ? 0 : -1;

    if (indent == 0 && strcmp(key, "Driver Version") == 0) {
        rd_copy_trim(ev->driver, sizeof ev->driver, val, strlen(val));
        return;
    }
    if (strcmp(key, "Attached GPUs") == 0) ev->recognised = true;
    ev_smiq_gpu *g = cur_gpu(ev);
    if (!g) return;
    if (strcmp(key, "Product Name") == 0) {
        rd_copy_trim(g->product, sizeof g->product, val, strlen(val));
    } else if (in_sect(f, "ECC Errors")) {
        bool vol = in_sect(f, "Volatile"), agg = in_sect(f, "Aggregate");
        if (!vol && !agg) return;
        long *corr = vol ? &g->volatile_corr : &g->aggregate_corr;
        long *unc = vol ? &g->volatile_uncorr : &g->aggregate_uncorr;
        bool old_layout = in_sect(f, "Single Bit") || in_sect(f, "Double Bit");
        if (old_layout) {
            if (strcmp(key, "Total") != 0) return;
            add(in_sect(f, "Double Bit") ? unc : corr, num);
        } else if (strstr(key, "Uncorrectable")) {
            add(unc, num);
        } else if (strstr(key, "Correctable")) {
            add(corr, num);
        } else {
            return;
        }
        if (vol && strstr(key, "Uncorrectable") && num > 0 && !g->line_ecc) {
            g->line_ecc = lineno;
            rd_copy_trim(g->text_ecc, sizeof g->text_ecc, line, len);
        } else if (vol && old_layout && in_sect(f, "Double Bit") && num > 0 && !g->line_ecc) {
            g->line_ecc = lineno;
            rd_copy_trim(g->text_ecc, sizeof g->text_ecc, line, len);
        }
    } else if (in_sect(f, "Retired Pages")) {
        if (strstr(key, "Single Bit")) add(&g->retired_sbe, num);
        else if (strstr(key, "Double Bit")) add(&g->retired_dbe, num);
        else if (strstr(key, "Pending")) {
            g->retire_pending = yes;
            if (yes == 1) {
                g->line_retire = lineno;
                rd_copy_trim(g->text_retire, sizeof g->text_retire, line, len);
            }
        }
    } else if (in_sect(f, "Remapped Rows")) {
        if (strcmp(key, "Correctable Error") == 0) g->remap_corr = num;
        else if (strcmp(key, "Uncorrectable Error") == 0) {
            g->remap_uncorr = num;
            g->line_remap_uncorr = lineno;
        }
        else if (strcmp(key, "Pending") == 0) {
            g->remap_pending = yes;
            if (yes == 1) {
                g->line_remap_pending = lineno;
                rd_copy_trim(g->text_remap, sizeof g->text_remap, line, len);
            }
        } else if (strcmp(key, "Remapping Failure Occurred") == 0) {
            g->remap_failure = yes;
            if (yes == 1) g->line_remap_failure = lineno;
        }
    }
}

void *rd_smiq_begin(const char *name)
{
    (void)name;
    sst *st = cp_xcalloc(1, sizeof *st);
    st->ev = cp_xcalloc(1, sizeof *st->ev);
    return st;
}

void *rd_smiq_end(void *stp, diag_set *diag)
{
    sst *st = stp;
    ev_smiq *f = st->ev;
    free(st);
    if (!f->recognised || !f->n_gpus) {
        free(f);
        return NULL;
    }
    if (f->gpus_dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->gpus_dropped, NULL, -1);
    return f;
}
