/* rd_fio.h - reader for fio's normal (human) output, fio 2.x and 3.x.
 *
 * What is read, per job: the job line ("name: (g=0): rw=write, bs=...,
 * ioengine=psync, iodepth=1"), the result block ("name: (groupid=0, jobs=1):
 * err= 0: pid=..."), one line per direction with IOPS, bandwidth, I/O size and
 * runtime ("write: IOPS=734, BW=734MiB/s (770MB/s)(30.0GiB/41847msec)", or
 * fio 2.x "write: io=30720MB, bw=751234KB/s, iops=733, runt= 41847msec"), the
 * slat/clat/lat lines ("clat (usec): min=185, max=100354, avg=1333.63,
 * stdev=1047.15") and the clat percentiles; the "Run status group" totals;
 * the fio version; "fio: ..." warnings (e.g. a failed fallocate). The live
 * "Jobs:" status line is an instantaneous sample and is ignored.
 *
 * Units: bandwidth in bytes/s (fio's KiB/MiB are 1024-based, its kB/MB
 * 1000-based; fio 2.x prints KB/MB meaning 1024), sizes in bytes, times in
 * microseconds, runtime in milliseconds.
 *
 * Ownership: rd_fio_parse's result owns everything; free with rd_fio_free.
 */
#ifndef CP_READERS_RD_FIO_H
#define CP_READERS_RD_FIO_H

#include <stddef.h>
#include <stdint.h>

#include "../model/report.h"
#include "rd_text.h"

#define RD_FIO_MAX_JOBS 4096
#define RD_FIO_MAX_PCT 32

typedef enum rd_fio_dir { RD_FIO_READ = 0, RD_FIO_WRITE, RD_FIO_TRIM, RD_FIO__DIRS } rd_fio_dir;

typedef struct rd_fio_lat {
    double min_us, max_us, avg_us, stdev_us; /* NaN when not printed */
    uint32_t line;
} rd_fio_lat;

typedef struct rd_fio_io {
    int present;
    double iops;
    double bw_bytes_s;
    double io_bytes;
    double runtime_ms;
    uint32_t line;
    rd_fio_lat slat, clat, lat;
    int n_pct;
    double pct[RD_FIO_MAX_PCT];     /* percentile, e.g. 99.9 */
    double pct_us[RD_FIO_MAX_PCT];  /* clat at that percentile */
} rd_fio_io;

typedef struct rd_fio_job {
    char name[64];
    char rw[24];          /* "write", "randread", ... from the job line */
    char ioengine[24];
    char bs[64];          /* as printed */
    int iodepth;          /* -1 unknown */
    uint32_t def_line;    /* the "(g=N): rw=..." line */
    int groupid, jobs, err;
    int64_t pid;
    uint32_t line;        /* the "(groupid=..." result line; 0 when none */
    rd_fio_io io[RD_FIO__DIRS];
} rd_fio_job;

typedef struct rd_fio_group {
    int id;
    uint32_t line;
    double bw_bytes_s[RD_FIO__DIRS]; /* aggregate bw per direction; NaN absent */
    double io_bytes[RD_FIO__DIRS];
} rd_fio_group;

typedef struct rd_fio {
    char *name;
    char version[32];     /* "fio-3.1" */
    uint32_t version_line;
    rd_fio_job *jobs;
    size_t n_jobs, cap_jobs;
    rd_fio_group *groups;
    size_t n_groups, cap_groups;
    uint32_t n_warnings;  /* "fio: ..." lines */
    uint32_t warning_line;
    char warning[200];    /* the first one */
    diag_set diag;
} rd_fio;

int rd_fio_sniff(const char *buf, size_t len);
/* Fails (CP_ERR_FORMAT) when no job result line and no run status group. */
int rd_fio_parse(const char *data, size_t len, const char *name, rd_fio **out, cp_error *err);
void rd_fio_free(rd_fio *f);

/* The facts analyze reports for this file (evidence[] entry), each with its
 * line, added to obj (evidence_report.c). */
void rd_fio_report(const rd_fio *facts, rep_report *r, rep_node *obj);

/* "734MiB/s" -> 769654784 (bytes/s); "770MB/s" -> 770e6. -1 when not a rate. */
int rd_fio_rate(const char *p, size_t n, double *bytes_s);
/* "30.0GiB" -> bytes; "30720MB" (fio 2.x, 1024-based) -> bytes. */
int rd_fio_size(const char *p, size_t n, int legacy_si_is_binary, double *bytes);

#endif
