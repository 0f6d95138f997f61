/* probe_stats.h - one statistics model for every probe's rounds.
 *
 * fio's lesson again: one statistics struct, several outputs. A probe
 * measures a figure N times (rounds: whole repetitions of the measurement,
 * or the samples of a distribution such as 1000 ping round trips) and hands
 * the samples to probe_emit_samples(); this module turns them into the
 * row's `value` and its spread, which every writer shows beside it:
 *   n       samples kept; rejected: samples above the hardware's peak,
 *           which are not measurements (a cache hit or a timer error) and
 *           are left out of every figure
 *   median, mean, min, max, p10, p90 (linear interpolation, numpy's default)
 *   cv      coefficient of variation, stdev / mean (sample stdev, n - 1)
 * and `value` is the statistic the field's convention asks for
 * (probe_stat): the median unless the field says otherwise - STREAM
 * reports the best round (PROBE_STAT_BEST_MAX), nccl-tests the mean time of
 * a batch (PROBE_STAT_MEAN), latencies a percentile (PROBE_STAT_P50/P99),
 * a ping floor the minimum (PROBE_STAT_BEST_MIN). Whatever `value` is, the
 * median and the spread stand beside it, so a best-of figure never hides
 * how far the other rounds were.
 */
#ifndef CP_PROBE_PROBE_STATS_H
#define CP_PROBE_PROBE_STATS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum probe_stat {
    PROBE_STAT_SINGLE,   /* one figure, no rounds (a line rate, a byte count) */
    PROBE_STAT_MEDIAN,   /* the default */
    PROBE_STAT_BEST_MAX, /* the highest round (STREAM: the minimum time) */
    PROBE_STAT_BEST_MIN, /* the lowest round (a latency floor) */
    PROBE_STAT_MEAN,     /* nccl-tests: the mean over a batch */
    PROBE_STAT_P50,
    PROBE_STAT_P99,
    PROBE_STAT_N
} probe_stat;

/* "single", "median", "best", "min", "mean", "p50", "p99". */
const char *probe_stat_name(probe_stat s);

typedef struct probe_stats {
    size_t n;        /* samples kept; 0 = no statistics (a single figure) */
    size_t rejected; /* samples above the peak, left out */
    double median, mean, min, max, p10, p90, p99;
    double cv;       /* stdev / mean; NaN for n < 2 or mean 0 */
} probe_stats;

/* Percentile p in [0,100] of v[n] (sorted in place), linear interpolation
 * between the closest ranks (numpy's default); NaN for n = 0. */
double probe_percentile(double *v, size_t n, double p);
double probe_median(double *v, size_t n);

/* Statistics of v[n] (not modified). All NaN with n = 0. */
void probe_stats_of(const double *v, size_t n, probe_stats *out);
/* Every figure of st multiplied by k > 0 (a unit change, RTT -> one-way);
 * cv does not change. */
void probe_stats_scale(probe_stats *st, double k);
/* The statistic s of out (SINGLE: the median, which for one sample is it). */
double probe_stats_pick(const probe_stats *st, probe_stat s);

/* Peaks are theoretical (nominal clocks, rounded link rates, datasheet
 * numbers), good to about this fraction: a sample above peak x (1 + it) is
 * impossible. */
#define PROBE_PEAK_TOLERANCE 0.02
/* Whether v is above what peak allows (false when either is unknown). */
bool probe_above_peak(double v, double peak);

/* How many samples to keep of v[n] (written to kept[], in order) that are
 * not above peak. */
size_t probe_drop_impossible(const double *v, size_t n, double peak, double *kept);

#endif
