/* an_rules_storage.c - rule family "storage": fio results (facts in
 * ev_fio.h). A data loader that reads the way the slow run reads gets the
 * slow run's bandwidth: when one file's read results differ by an order of
 * magnitude (large sequential against small random reads of the same
 * storage, as people benchmark a dataset's filesystem), the slow pattern is
 * named with the ratio.
 */
#include "rulebook.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/util.h"

#define GAP_RATIO 8.0 /* fastest / slowest read bandwidth of one file */

typedef struct fio_read {
    double bw;        /* bytes/s */
    long line;
    const char *rw;   /* "read", "randread", "" when the excerpt does not say */
    const char *bs;
} fio_read;

/* Read results of a file: per job (with its rw/bs), else the group totals. */
static int reads(const ev_fio *f, fio_read *out, int max)
{
    int n = 0;
    for (size_t j = 0; j < f->n_jobs && n < max; j++) {
        const ev_fio_io *io = &f->jobs[j].io[EV_FIO_READ];
        if (io->present && io->bw_bytes_s > 0)
            out[n++] = (fio_read){io->bw_bytes_s, io->line, f->jobs[j].rw, f->jobs[j].bs};
    }
    if (n)
        return n;
    for (size_t g = 0; g < f->n_groups && n < max; g++)
        if (f->groups[g].bw_bytes_s[EV_FIO_READ] > 0)
            out[n++] = (fio_read){f->groups[g].bw_bytes_s[EV_FIO_READ], (long)f->groups[g].line, "", ""};
    return n;
}

static void r_pattern_gap(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_FIO, f) {
        fio_read r[64];
        int n = reads(f->as.fio, r, 64);
        int lo = -1, hi = -1;
        for (int i = 0; i < n; i++) {
            if (lo < 0 || r[i].bw < r[lo].bw)
                lo = i;
            if (hi < 0 || r[i].bw > r[hi].bw)
                hi = i;
        }
        if (n < 2 || r[hi].bw < GAP_RATIO * r[lo].bw)
            continue;
        rb_finding *x = rb_raise(c, self);
        double ratio = r[hi].bw / r[lo].bw;
        char slow[64] = "", fast[64] = "";
        if (r[lo].rw && r[lo].rw[0])
            snprintf(slow, sizeof slow, " (%s%s%s)", r[lo].rw, r[lo].bs && r[lo].bs[0] ? ", bs=" : "", r[lo].bs ? r[lo].bs : "");
        if (r[hi].rw && r[hi].rw[0])
            snprintf(fast, sizeof fast, " (%s%s%s)", r[hi].rw, r[hi].bs && r[hi].bs[0] ? ", bs=" : "", r[hi].bs ? r[hi].bs : "");
        rb_title(x, "the same storage reads %.1f MiB/s%s in one run and %.0f MiB/s%s in another (%.0fx): a data loader reading the slow way is storage-bound",
                 r[lo].bw / 1048576.0, slow, r[hi].bw / 1048576.0, fast, ratio);
        rb_gain(x, 100 * (1 - 1 / ratio),
                "share of the slow reads' time saved if the data were read the fast way (same bytes at the fast run's bandwidth); not a share of the training step");
        rb_cite_line(x, f, r[lo].line, "read bandwidth %.1f MiB/s", r[lo].bw / 1048576.0);
        rb_cite_line(x, f, r[hi].line, "read bandwidth %.1f MiB/s", r[hi].bw / 1048576.0);
        rb_step(x, "read the dataset sequentially in large blocks: shards (WebDataset, TFRecord, MosaicML streaming) shuffled at shard level, a buffer shuffle in memory");
        rb_step(x, "or stage it on local NVMe / page cache first; more DataLoader workers and prefetch_factor only hide latency, not a random-read ceiling");
    }
}

/* A fio job that ended with an error (its result line's err=, fio's
 * "fio: io_u error on file ...", "fio: pid=..., err=N/..." lines). */
static void r_job_error(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_FIO, f) {
        const ev_fio *fi = f->as.fio;
        const ev_fio_job *bad = NULL;
        for (size_t i = 0; i < fi->n_jobs && !bad; i++)
            if (fi->jobs[i].err > 0)
                bad = &fi->jobs[i];
        bool io_err = fi->n_warnings && (strstr(fi->warning, "io_u error") || strstr(fi->warning, "err="));
        if (!bad && !io_err)
            continue;
        rb_finding *x = rb_raise(c, self);
        if (bad)
            rb_title(x, "fio job %s ended with error %d (%s): the storage returned I/O errors, the test measured nothing valid",
                     bad->name, bad->err, strerror(bad->err));
        else
            rb_title(x, "fio reported an I/O error: %s", fi->warning);
        if (bad)
            rb_cite_line(x, f, bad->line, "%s: err=%d", bad->name, bad->err);
        if (fi->n_warnings)
            rb_cite_line(x, f, fi->warning_line, "%s", fi->warning);
        rb_step(x, "dmesg -T | tail   # the device or filesystem error behind it (NVMe, a network filesystem timeout, ENOSPC)");
        rb_step(x, "df -h and the filesystem's own health (lfs check servers, mount options); rerun fio on local NVMe to compare");
    }
}

static const rb_rule k_rules[] = {
    {"FIO_JOB_ERROR", CP_LAYER_STORAGE, AN_SEV_CRITICAL, 0.7,
     "fio: a job's result line with err= N (N > 0), 'fio: io_u error on file ...: <reason>' / 'fio: pid=..., err=N/file:...'",
     "fio documentation (output: err= is the job's first error, an errno)",
     "the storage failed the test's I/O: find the device or filesystem error at that time before reading any bandwidth", r_job_error},
    {"FIO_ACCESS_PATTERN_GAP", CP_LAYER_STORAGE, AN_SEV_MEDIUM, 0.5,
     "fio read results of one file more than 8x apart (e.g. rw=read bs=1M against rw=randread bs=4k)",
     "fio documentation (rw, bs); PyTorch data loading (torch.utils.data) - random small reads of a networked filesystem",
     "read the way the storage is fast: large sequential reads (sharded datasets), or stage the data locally", r_pattern_gap},
};

const rb_family rb_family_storage = {.name = "storage",
                                     .summary = "fio: storage bandwidth by access pattern",
                                     .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
