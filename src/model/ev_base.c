/* ev_base.c - evidence times (see ev_base.h). */
#include "ev_base.h"

#include <stdio.h>

#define NS_PER_SEC 1000000000LL

static const int k_month_start[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};

int64_t ev_time_wall_ns(int month, int day, int h, int m, int s, int64_t frac_ns)
{
    if (month < 1 || month > 12)
        month = 1;
    int64_t days = k_month_start[month - 1] + (day - 1);
    return ((days * 24 + h) * 60 + m) * 60 * NS_PER_SEC + (int64_t)s * NS_PER_SEC + frac_ns;
}

int ev_time_cmp(ev_time a, ev_time b)
{
    if (a.clock == EV_CLOCK_NONE || a.clock != b.clock)
        return 2;
    if (a.clock == EV_CLOCK_WALL && a.year && b.year && a.year != b.year)
        return a.year < b.year ? -1 : 1;
    return a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0;
}

const char *ev_time_format(ev_time t, char *buf, size_t size)
{
    if (!size)
        return buf;
    buf[0] = '\0';
    if (t.clock == EV_CLOCK_BOOT) {
        snprintf(buf, size, "boot+%lld.%06lld", (long long)(t.ns / NS_PER_SEC),
                 (long long)(t.ns % NS_PER_SEC) / 1000);
    } else if (t.clock == EV_CLOCK_WALL) {
        int64_t sec = t.ns / NS_PER_SEC;
        int ms = (int)((t.ns % NS_PER_SEC) / 1000000);
        int doy = (int)(sec / 86400), rem = (int)(sec % 86400);
        int month = 12;
        while (month > 1 && doy < k_month_start[month - 1])
            month--;
        int day = doy - k_month_start[month - 1] + 1;
        if (t.year)
            snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d.%03d", t.year, month, day, rem / 3600,
                     rem / 60 % 60, rem % 60, ms);
        else
            snprintf(buf, size, "%02d-%02d %02d:%02d:%02d.%03d", month, day, rem / 3600, rem / 60 % 60,
                     rem % 60, ms);
    }
    return buf;
}
