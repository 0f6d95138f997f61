/* ev_base.h - what every evidence fact type shares: a time on one of the
 * clocks logs use, and the place a fact was seen (ev_at).
 *
 * Times: a line's time is kept as nanoseconds since the start of its year
 * (wall clocks; `year` is 0 when the format has no year, as glog's) or since
 * boot (dmesg). ev_time_cmp() orders two times only when they are on the same
 * clock; the rule book uses it to find the first failure across ranks. Days
 * are counted without a leap day so that a stamp with a year and one without
 * compare within the year.
 *
 * Plain data: no allocation, no globals.
 */
#ifndef CP_MODEL_EV_BASE_H
#define CP_MODEL_EV_BASE_H

#include <stddef.h>
#include <stdint.h>

#define EV_TEXT_MAX 200 /* bytes of a cited line kept (trimmed, cut) */

typedef enum ev_clock {
    EV_CLOCK_NONE = 0, /* the line carries no time */
    EV_CLOCK_WALL = 1, /* calendar time: ns since Jan 1 00:00 of `year` */
    EV_CLOCK_BOOT = 2, /* kernel time: ns since boot (dmesg without -T) */
} ev_clock;

typedef struct ev_time {
    int64_t ns;    /* see ev_clock */
    int16_t year;  /* 4-digit year, 0 when the stamp has none (glog) */
    uint8_t clock; /* an ev_clock */
} ev_time;

/* -1/0/+1 when a is before/equal/after b; 2 when they cannot be compared
 * (different clocks or a time missing). Two wall times with a known and an
 * unknown year are compared within the year. */
int ev_time_cmp(ev_time a, ev_time b);

/* Format as "YYYY-MM-DD HH:MM:SS.mmm" (wall, year when known, else
 * "MM-DD ...") or "boot+SSSS.ssssss"; "" when there is no time. Returns buf. */
const char *ev_time_format(ev_time t, char *buf, size_t size);

/* ns since Jan 1 of a year for a calendar date (month 1..12, day 1..31),
 * without leap days (see above); the one definition readers build times with. */
int64_t ev_time_wall_ns(int month, int day, int h, int m, int s, int64_t frac_ns);

/* Where a fact was seen: 1-based line, the line's rank/host/time when its
 * prefixes said, and the line's text (trimmed, cut at EV_TEXT_MAX). */
typedef struct ev_at {
    long line;     /* 0 = not seen */
    int rank;      /* global rank (launcher tag, "[Rank N]"), else local rank; -1 */
    ev_time ts;
    char host[64]; /* NCCL or syslog host; "" */
    char text[EV_TEXT_MAX];
} ev_at;

#endif
