/* rd_fio.h - reader for fio's normal (human) output, fio 2.x and 3.x; facts
 * in src/model/ev_fio.h.
 *
 * What is read, per job: the job line ("name: (g=0): rw=write, bs=...,
 * ioengine=psync, iodepth=1"), the result block ("name: (groupid=0, jobs=1):
 * err= 0: pid=..."), one line per direction with IOPS, bandwidth, I/O size and
 * runtime ("write: IOPS=734, BW=734MiB/s (770MB/s)(30.0GiB/41847msec)", or
 * fio 2.x "write: io=30720MB, bw=751234KB/s, iops=733, runt= 41847msec"), the
 * slat/clat/lat lines ("clat (usec): min=185, max=100354, avg=1333.63,
 * stdev=1047.15") and the clat percentiles; the "Run status group" totals
 * (also their "READ: bw=..." lines pasted alone, one group each); the fio
 * version; "fio: ..." warnings (e.g. a failed fallocate). The live "Jobs:"
 * status line is an instantaneous sample and is ignored.
 *
 * Units: bandwidth in bytes/s (fio's KiB/MiB are 1024-based, its kB/MB
 * 1000-based; fio 2.x prints KB/MB meaning 1024), sizes in bytes, times in
 * microseconds, runtime in milliseconds. A table reader of the evidence
 * table (evidence.h).
 */
#ifndef CP_READERS_RD_FIO_H
#define CP_READERS_RD_FIO_H

#include "evidence.h"

RD_EV_DECLARE(fio);

/* "734MiB/s" -> 769654784 (bytes/s); "770MB/s" -> 770e6. -1 when not a rate. */
int rd_fio_rate(const char *p, size_t n, double *bytes_s);
/* "30.0GiB" -> bytes; "30720MB" (fio 2.x, 1024-based) -> bytes. */
int rd_fio_size(const char *p, size_t n, int legacy_si_is_binary, double *bytes);

#endif
