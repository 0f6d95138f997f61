/* ev_fio.h - facts of fio's normal output (fio 2.x and 3.x): jobs with their
 * definition (rw, bs, ioengine, iodepth), per-direction results (IOPS,
 * bandwidth, size, runtime, latencies, percentiles), run status groups and
 * warnings. Filled by src/readers/rd_fio.c.
 *
 * Units: bandwidth in bytes/s, sizes in bytes, times in microseconds,
 * runtime in milliseconds. The struct owns its arrays: ev_fio_free.
 */
#ifndef CP_MODEL_EV_FIO_H
#define CP_MODEL_EV_FIO_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_FIO_MAX_JOBS 4096
#define EV_FIO_MAX_PCT 32

typedef enum ev_fio_dir { EV_FIO_READ = 0, EV_FIO_WRITE, EV_FIO_TRIM, EV_FIO__DIRS } ev_fio_dir;

typedef struct ev_fio_lat {
    double min_us, max_us, avg_us, stdev_us; /* NaN when not printed */
    uint32_t line;
} ev_fio_lat;

typedef struct ev_fio_io {
    int present;
    double iops;
    double bw_bytes_s;
    double io_bytes;
    double runtime_ms;
    uint32_t line;
    ev_fio_lat slat, clat, lat;
    int n_pct;
    double pct[EV_FIO_MAX_PCT];     /* percentile, e.g. 99.9 */
    double pct_us[EV_FIO_MAX_PCT];  /* clat at that percentile */
} ev_fio_io;

typedef struct ev_fio_job {
    char name[64];
    char rw[24];          /* "write", "randread", ... from the job line */
    char ioengine[24];
    char bs[64];          /* as printed */
    int iodepth;          /* -1 unknown */
    uint32_t def_line;    /* the "(g=N): rw=..." line */
    int groupid, jobs, err;
    int64_t pid;
    uint32_t line;        /* the "(groupid=..." result line; 0 when none */
    ev_fio_io io[EV_FIO__DIRS];
} ev_fio_job;

typedef struct ev_fio_group {
    int id;
    uint32_t line;
    double bw_bytes_s[EV_FIO__DIRS]; /* aggregate bw per direction; NaN absent */
    double io_bytes[EV_FIO__DIRS];
} ev_fio_group;

typedef struct ev_fio {
    char version[32];     /* "fio-3.1" */
    uint32_t version_line;
    ev_fio_job *jobs;
    size_t n_jobs, cap_jobs;
    ev_fio_group *groups;
    size_t n_groups, cap_groups;
    uint32_t n_warnings;  /* "fio: ..." lines */
    uint32_t warning_line;
    char warning[200];    /* the first one */
} ev_fio;

void ev_fio_free(ev_fio *f);
void ev_fio_report(const ev_fio *f, rep_report *rp, rep_node *obj);

#endif
