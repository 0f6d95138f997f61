/* probe_stats.c - statistics of a probe's rounds (see probe_stats.h). */
#include "probe_stats.h"
#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double probe_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    if (p <= 0)
        return v[0];
    if (p >= 100)
        return v[n - 1];
    /* linear interpolation between closest ranks (numpy's default) */
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;
    return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

double probe_median(double *v, size_t n)
{
    return probe_percentile(v, n, 50);
}

const char *probe_stat_name(probe_stat s)
{
    static const char *const names[PROBE_STAT_N] = { "single", "median", "best", "min", "mean", "p50", "p99" };
    return (unsigned)s < PROBE_STAT_N ? names[s] : "?";
}

void probe_stats_of(const double *v, size_t n, probe_stats *out)
{
    memset(out, 0, sizeof *out);
    out->median = out->mean = out->min = out->max = out->p10 = out->p90 = out->p99 = out->cv = NAN;
    size_t k = 0;
    double *s = cp_xmalloc((n ? n : 1) * sizeof *s);
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            s[k++] = v[i];
    out->n = k;
    if (k) {
        double sum = 0;
        for (size_t i = 0; i < k; i++)
            sum += s[i];
        out->mean = sum / (double)k;
        double ss = 0;
        for (size_t i = 0; i < k; i++)
            ss += (s[i] - out->mean) * (s[i] - out->mean);
        if (k > 1 && out->mean != 0)
            out->cv = sqrt(ss / (double)(k - 1)) / fabs(out->mean);
        out->p10 = probe_percentile(s, k, 10); /* sorts s */
        out->median = probe_percentile(s, k, 50);
        out->p90 = probe_percentile(s, k, 90);
        out->p99 = probe_percentile(s, k, 99);
        out->min = s[0];
        out->max = s[k - 1];
    }
    free(s);
}

void probe_stats_scale(probe_stats *st, double k)
{
    double *f[] = { &st->median, &st->mean, &st->min, &st->max, &st->p10, &st->p90, &st->p99 };
    for (size_t i = 0; i < CP_ARRAY_LEN(f); i++)
        *f[i] *= k;
}

double probe_stats_pick(const probe_stats *st, probe_stat s)
{
    switch (s) {
    case PROBE_STAT_BEST_MAX: return st->max;
    case PROBE_STAT_BEST_MIN: return st->min;
    case PROBE_STAT_MEAN: return st->mean;
    case PROBE_STAT_P99: return st->p99;
    case PROBE_STAT_SINGLE:
    case PROBE_STAT_MEDIAN:
    case PROBE_STAT_P50:
    default: return st->median;
    }
}

bool probe_above_peak(double v, double peak)
{
    return isfinite(v) && isfinite(peak) && peak > 0 && v > peak * (1 + PROBE_PEAK_TOLERANCE);
}

size_t probe_drop_impossible(const double *v, size_t n, double peak, double *kept)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!probe_above_peak(v[i], peak))
            kept[k++] = v[i];
    return k;
}
