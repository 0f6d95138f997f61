/* log_prefix.h - the prefixes that launchers, NCCL and the kernel put in front
 * of a log line, peeled off once so every log reader sees the bare message.
 *
 * Real failure logs are rarely one format: torchrun prepends "[rank3]:" or
 * "[default0]:", srun --label prepends "0: ", some launchers prepend their own
 * pid "[80746] ", NCCL prepends "host:pid:tid [dev] ", PyTorch's C++ logging
 * prepends "[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] ", Python
 * logging an ISO date, the kernel "[ 1843.308145] " or a syslog date. The
 * readers (nccl_log, torch_log, dmesg_log) all call rd_prefix_parse() on each
 * line, so the rank, host and time of a line are found the same way for every
 * format, and the message they match against starts at the real text.
 *
 * Times are ev_time (src/model/ev_base.h: wall clock within a year, or
 * boot time). An ISO stamp's explicit zone offset is applied (it becomes UTC); other
 * stamps carry no zone and are taken as they are (all files of one job are
 * assumed to be written in one zone).
 * When a line has several stamps (a log collector's ISO time in front of a
 * glog stamp) the outermost one is kept: it is the one every line has.
 *
 * Everything here is pure: no allocation, no globals; out-structs are plain
 * data owned by the caller and point into the caller's line buffer.
 */
#ifndef CP_READERS_LOG_PREFIX_H
#define CP_READERS_LOG_PREFIX_H

#include "../model/ev_base.h"
#include "rd_text.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rd_prefix {
    int rank;        /* global rank: "[rank3]:", "3: " (srun), "[Rank 3]"; -1 */
    int local_rank;  /* "[default3]:" (torchrun local rank); -1 */
    char host[64];   /* NCCL "host:pid:tid [dev]" or syslog host; "" */
    long pid;        /* from the NCCL prefix; -1 */
    long tid;        /* from the NCCL prefix; -1 */
    int dev;         /* CUDA device in the NCCL prefix "[dev]"; -1 */
    char level;      /* 'I','W','E','F' from glog/NCCL/Python levels; 0 */
    ev_time ts;      /* time of the line, clock NONE when absent */
    const char *msg; /* the line after all prefixes (points into the input) */
    size_t msg_len;
} rd_prefix;

/* Peel every known prefix off line[0..len) (no newline) and fill out. Never
 * fails: an unknown line is returned whole as msg. */
void rd_prefix_parse(const char *line, size_t len, rd_prefix *out);

/* The rank a file's name gives, for logs and traces alike: "rank3.log",
 * "rank_3.out", "rank-3", "Rank7.json", "worker3.txt", "node0-rank12.err",
 * or torchrun --log-dir's ".../3/stdout.log" (a local rank). Only the base
 * name counts. -1 when the name says nothing or the number does not fit. */
int rd_rank_from_name(const char *path);

/* Lines are walked with rd_each_line (rd_text.h), shared with the evidence
 * readers. */

/* A set of up to 32 needles (each >= 3 bytes) found in one pass over a line:
 * rd_keyset_scan() returns a bit per needle present. Readers use it as a
 * gate so a line that holds none of their phrases costs one pass instead of
 * one search per phrase (logs are mostly lines nobody cares about). The
 * tables are plain data built by rd_keyset_init into caller storage. */
typedef struct rd_keyset {
    uint32_t t0[256], t1[256], t2[256]; /* keys with byte b at offset 0/1/2 */
    const char *keys[32];
    uint8_t lens[32];
    int n;
} rd_keyset;
void rd_keyset_init(rd_keyset *ks, const char *const *keys, int n);
uint32_t rd_keyset_scan(const rd_keyset *ks, const char *s, size_t n);

/* Small scanning helpers shared by the log readers (all bounded by len). */
const char *rd_memmem(const char *hay, size_t n, const char *needle);
/* Parse a decimal integer at *p (optional sign); advances *p. 0 on success. */
int rd_scan_long(const char **p, const char *end, long *out);
/* The integer after the first `key` in [s, end) (spaces skipped), or -1. */
long rd_long_after(const char *s, const char *end, const char *key);
/* Parse a decimal number with optional fraction; advances *p. 0 on success. */
int rd_scan_double(const char **p, const char *end, double *out);
/* Copy at most size-1 bytes of s[0..n), trimming spaces, always terminated. */
void rd_copy_trim(char *dst, size_t size, const char *s, size_t n);

#endif
