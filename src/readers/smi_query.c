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
#include <string.h>

#include "log_prefix.h"

#define MAX_DEPTH 6

void rd_smiq_init(rd_smiq_facts *f, const char *file)
{
    memset(f, 0, sizeof *f);
    f->file = file;
}

bool rd_smiq_sniff(const char *buf, size_t len)
{
    size_t n = len > 4096 ? 4096 : len;
    return rd_memmem(buf, n, "NVSMI LOG") || (rd_memmem(buf, n, "Attached GPUs") && rd_memmem(buf, n, "Driver Version"));
}

static rd_smiq_gpu *cur_gpu(rd_smiq_facts *f) { return f->n_gpus ? &f->gpus[f->n_gpus - 1] : NULL; }

static bool in_sect(const rd_smiq_facts *f, const char *title)
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

void rd_smiq_line(rd_smiq_facts *f, const char *line, size_t len, long lineno)
{
    f->lines++;
    const char *s = line, *end = line + len;
    int indent = 0;
    while (s < end && (*s == ' ' || *s == '\t')) s++, indent++;
    if (s == end) return;
    size_t n = (size_t)(end - s);
    if (rd_memmem(s, n, "NVSMI LOG")) f->recognised = true;
    const char *sep = rd_memmem(s, n, " : ");
    if (!sep && n && s[n - 1] == ':') sep = s + n - 1; /* "Key :" with empty value */
    char key[40];
    rd_copy_trim(key, sizeof key, s, sep ? (size_t)(sep - s) : n);
    /* pop titles at the same or deeper indentation */
    while (f->depth_ > 0 && f->indent_[f->depth_ - 1] >= indent) f->depth_--;

    if (indent == 0 && strncmp(key, "GPU ", 4) == 0 && !sep) {
        f->recognised = true;
        if (f->n_gpus == RD_SMIQ_MAX_GPUS) {
            f->gpus_dropped++;
            return;
        }
        rd_smiq_gpu *g = &f->gpus[f->n_gpus++];
        memset(g, 0, sizeof *g);
        rd_copy_trim(g->bus_id, sizeof g->bus_id, key + 4, strlen(key + 4));
        g->line = lineno;
        g->volatile_corr = g->volatile_uncorr = g->aggregate_corr = g->aggregate_uncorr = -1;
        g->retired_sbe = g->retired_dbe = g->remap_corr = g->remap_uncorr = -1;
        g->retire_pending = g->remap_pending = g->remap_failure = -1;
        return;
    }
    if (!sep) { /* a section title */
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
        rd_copy_trim(f->driver, sizeof f->driver, val, strlen(val));
        return;
    }
    if (strcmp(key, "Attached GPUs") == 0) f->recognised = true;
    rd_smiq_gpu *g = cur_gpu(f);
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
        else if (strcmp(key, "Uncorrectable Error") == 0) g->remap_uncorr = num;
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

void rd_smiq_finish(rd_smiq_facts *f) { f->depth_ = 0; }

static void line_cb(void *ctx, const char *line, size_t len, long lineno)
{
    rd_smiq_line(ctx, line, len, lineno);
}

void rd_smiq_parse_buf(rd_smiq_facts *f, const char *file, const char *buf, size_t len)
{
    rd_smiq_init(f, file);
    rd_each_line(buf, len, line_cb, f);
    rd_smiq_finish(f);
}
