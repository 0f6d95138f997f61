/* test_probe_stats.c - the probes' statistics model, impossible figures,
 * the working-set plateau finder, the OS's caches from captured sysfs
 * trees, and the quietness verdict on captured /proc deltas. */
#include "test_util.h"
#include "base/sysstat.h"
#include "base/util.h"
#include "probe/probe.h"
#include "probe/probe_mem.h"
#include "probe/probe_quiet.h"
#include "probe/probe_stats.h"

#include <math.h>

/* A captured tree of tests/fixtures/fsroot as the root. */
static void fixture(cp_fsroot *fs, const char *name)
{
    char rel[64], dir[1024];
    snprintf(rel, sizeof rel, "fsroot/%s", name);
    cp_fsroot_init(fs, cp_test_fixture(rel, dir, sizeof dir));
}

static void test_stats(void **state)
{
    (void)state;
    const double v[] = { 10, 12, 11, 30, 9 };
    probe_stats st;
    probe_stats_of(v, 5, &st);
    assert_int_equal(st.n, 5);
    CP_ASSERT_NEAR(st.median, 11, 1e-12);
    CP_ASSERT_NEAR(st.min, 9, 1e-12);
    CP_ASSERT_NEAR(st.max, 30, 1e-12);
    CP_ASSERT_NEAR(st.mean, 14.4, 1e-12);
    /* sorted 9 10 11 12 30: p10 at rank 0.4 -> 9.4, p90 at rank 3.6 -> 12 + 0.6 x 18 */
    CP_ASSERT_NEAR(st.p10, 9.4, 1e-12);
    CP_ASSERT_NEAR(st.p90, 22.8, 1e-12);
    /* sample stdev: sum of squares 4.84+16.64+...: 309.2 / 4 = 77.3 */
    CP_ASSERT_NEAR(st.cv, sqrt(77.3) / 14.4, 1e-12);
    CP_ASSERT_NEAR(probe_stats_pick(&st, PROBE_STAT_BEST_MAX), 30, 1e-12);
    CP_ASSERT_NEAR(probe_stats_pick(&st, PROBE_STAT_BEST_MIN), 9, 1e-12);
    CP_ASSERT_NEAR(probe_stats_pick(&st, PROBE_STAT_MEDIAN), 11, 1e-12);
    CP_ASSERT_NEAR(probe_stats_pick(&st, PROBE_STAT_MEAN), 14.4, 1e-12);
    assert_string_equal(probe_stat_name(PROBE_STAT_BEST_MAX), "best");
    /* one sample: no cv; none: NaN everywhere; NaNs are not samples */
    probe_stats_of(v, 1, &st);
    assert_true(isnan(st.cv));
    CP_ASSERT_NEAR(st.p90, 10, 1e-12);
    probe_stats_of(v, 0, &st);
    assert_int_equal(st.n, 0);
    assert_true(isnan(st.median));
    const double w[] = { NAN, 4, NAN };
    probe_stats_of(w, 3, &st);
    assert_int_equal(st.n, 1);
    /* the peak's tolerance: 2 % */
    assert_false(probe_above_peak(101.9, 100));
    assert_true(probe_above_peak(102.1, 100));
    assert_false(probe_above_peak(1e9, NAN));
}

static void test_emit_impossible(void **state)
{
    (void)state;
    probe_ctx ctx;
    probe_ctx_init(&ctx, NULL, NULL);
    ctx.current = probe_find("memory");
    /* two of five rounds above a 100 GB/s peak: left out, counted, said */
    const double v[] = { 40, 257, 42, 41, 180 };
    probe_emit_rounds(&ctx, "triad_bandwidth", v, 5, PROBE_STAT_BEST_MAX, "GB/s", 100, "m");
    const probe_row *r = &ctx.results[0].row;
    assert_false(r->impossible);
    CP_ASSERT_NEAR(r->value, 42, 1e-12);
    assert_int_equal(r->stats.n, 3);
    assert_int_equal(r->stats.rejected, 2);
    CP_ASSERT_NEAR(r->stats.median, 41, 1e-12);
    assert_non_null(strstr(r->method, "2 of 5 rounds above the peak 100 GB/s left out"));
    /* every round above the peak: no measurement at all */
    const double hi[] = { 257, 180 };
    probe_emit_rounds(&ctx, "scale_bandwidth", hi, 2, PROBE_STAT_BEST_MAX, "GB/s", 100, "m");
    r = &ctx.results[1].row;
    assert_true(r->impossible);
    assert_true(isnan(r->value));
    CP_ASSERT_NEAR(r->impossible_value, 257, 1e-12);
    assert_int_equal(r->stats.n, 0);
    assert_non_null(strstr(r->method, "IMPOSSIBLE: 257 GB/s is above the peak 100 GB/s"));
    /* a single figure above its peak, and one below */
    probe_emit_value(&ctx, "gpu0_device_copy_bandwidth", 9000, "GB/s", 4800, "copy");
    assert_true(ctx.results[2].row.impossible);
    assert_true(isnan(ctx.results[2].row.value));
    probe_emit_value(&ctx, "x", 4000, "GB/s", 4800, "copy");
    assert_false(ctx.results[3].row.impossible);
    CP_ASSERT_NEAR(ctx.results[3].row.value, 4000, 1e-12);
    assert_true(isnan(ctx.results[3].row.impossible_value));
    assert_string_equal(ctx.results[3].row.method, "copy");
    /* rounds */
    ctx.opts.quick = true;
    assert_int_equal(probe_rounds(&ctx, 5, 10), 5);
    ctx.opts.rounds = 500;
    assert_int_equal(probe_rounds(&ctx, 5, 10), PROBE_MAX_ROUNDS);
    probe_ctx_free(&ctx);
}

static void curve(probe_sweep_point *p, const double *gbps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (probe_sweep_point){ (64ull << 10) << i, gbps[i], 0.01 };
}

static void test_plateau(void **state)
{
    (void)state;
    probe_sweep_point p[20];
    probe_plateau pl;
    /* 64 KiB .. 32 MiB: L1/L2 200, L3 100, then DRAM 20 from 64 MiB to 1 GiB */
    const double stairs[] = { 200, 205, 198, 120, 101, 99, 100, 98, 60, 35, 21, 20, 19.5, 20.5, 20 };
    curve(p, stairs, 15);
    probe_find_plateau(p, 15, &pl);
    assert_true(pl.found);
    assert_int_equal(pl.first, 10);
    assert_int_equal(pl.start_bytes, 64ull << 20);
    assert_int_equal(pl.cache_bytes, 32ull << 20); /* the 35 GB/s point */
    CP_ASSERT_NEAR(pl.gbps, 20, 1e-12);
    assert_true(probe_sweep_settled(p, 15, 16ull << 20, 256ull << 20));
    assert_false(probe_sweep_settled(p, 15, 512ull << 20, 0)); /* flat, but not 4 x the OS's LLC */
    assert_false(probe_sweep_settled(p, 15, 0, 2ull << 30));   /* flat, but not yet several GiB */
    probe_sweep_run runs[20];
    size_t nr = probe_sweep_runs(p, 15, runs, 20);
    assert_int_equal(nr, 6); /* 200s, 120, 100s, 60, 35, DRAM */
    assert_int_equal(runs[0].last, 2);
    CP_ASSERT_NEAR(runs[2].gbps, 99.5, 1e-12);
    assert_int_equal(runs[5].first, 10);
    assert_int_equal(runs[5].last, 14);

    /* still falling at the end: no DRAM figure */
    const double falling[] = { 200, 150, 100, 70, 50, 36, 26, 19 };
    curve(p, falling, 8);
    probe_find_plateau(p, 8, &pl);
    assert_false(pl.found);
    assert_true(isnan(pl.gbps));
    assert_false(probe_sweep_settled(p, 8, 0, 0));

    /* one noisy point inside DRAM's range is not a cache */
    const double noisy[] = { 100, 100, 60, 30, 31, 40, 30, 29, 30 };
    curve(p, noisy, 9);
    probe_find_plateau(p, 9, &pl);
    assert_true(pl.found);
    assert_int_equal(pl.first, 3);
    assert_int_equal(pl.cache_bytes, p[2].ws_bytes);
    CP_ASSERT_NEAR(pl.gbps, 30, 1e-12);

    /* a GPU copy rising into its plateau: no cache below it */
    const double rising[] = { 100, 300, 900, 2000, 3000, 3100, 3050, 3080 };
    curve(p, rising, 8);
    probe_find_plateau(p, 8, &pl);
    assert_true(pl.found);
    assert_int_equal(pl.first, 4);
    assert_int_equal(pl.cache_bytes, 0);

    /* too few points */
    probe_find_plateau(p, 2, &pl);
    assert_false(pl.found);
}

static void test_caches(void **state)
{
    (void)state;
    cp_fsroot fs;
    fixture(&fs, "vm-a");
    probe_cache c[8];
    size_t n = probe_caches(&fs, c, 8);
    assert_int_equal(n, 3); /* L1d, L2, L3: index1 (instruction) is left out */
    assert_int_equal(c[0].level, 1);
    assert_int_equal(c[0].instance_bytes, 48 << 10);
    assert_int_equal(c[0].instances, 2);
    assert_int_equal(c[1].total_bytes, 2048 << 10);
    assert_int_equal(c[2].instances, 1); /* shared_cpu_list 0-1 on both CPUs: one instance */
    assert_int_equal(c[2].total_bytes, 32ull << 20);
    assert_int_equal(probe_llc_bytes(&fs), 32ull << 20);
    fixture(&fs, "metal");
    n = probe_caches(&fs, c, 8);
    assert_int_equal(n, 3);
    assert_int_equal(c[1].instances, 4);
    assert_int_equal(c[1].total_bytes, 8ull << 20);
    assert_int_equal(probe_llc_bytes(&fs), 16ull << 20);
    /* two DDR5 DIMMs configured at 4800 MT/s x 64 bits, one empty slot: 2 x 38.4 GB/s */
    int dimms;
    CP_ASSERT_NEAR(probe_dmi_mem_peak_gbps(&fs, &dimms), 76.8, 1e-9);
    assert_int_equal(dimms, 2);
    fixture(&fs, "vm-a"); /* no DMI in the guest */
    assert_true(isnan(probe_dmi_mem_peak_gbps(&fs, &dimms)));
    cp_fsroot_init(&fs, "/nonexistent");
    assert_int_equal(probe_llc_bytes(&fs), 0);
    assert_int_equal(probe_parse_cache_size("1024K\n"), 1u << 20);
    assert_int_equal(probe_parse_cache_size("32M"), 32u << 20);
    assert_int_equal(probe_parse_cache_size("K"), 0);
}

static void test_quiet(void **state)
{
    (void)state;
    cp_fsroot fa, fb;
    fixture(&fa, "vm-a");
    fixture(&fb, "vm-b");
    cp_ss_sample a = { 0 }, b = { 0 };
    cp_ss_take(&fa, CP_SS_ALL, &a, NULL);
    cp_ss_take(&fb, CP_SS_ALL, &b, NULL);
    a.mono_ns = 0;
    b.mono_ns = 1585000000;
    cp_ss_delta d;
    cp_ss_delta_of(&a, &b, &d);
    probe_quiet_limits lim;
    probe_quiet_default_limits(&lim);
    probe_quiet_window w;
    probe_quiet_assess("before", 0, &d, &b, &lim, &w);
    assert_false(w.quiet);
    /* user 117 of 317 ticks, none of it this process's (the captures' /proc/self were cp's) */
    CP_ASSERT_NEAR(w.others_cpu_pct, 117.0 / 317 * 100, 1e-9);
    /* vda: (168 + 65552) sectors x 512 over 1.585 s; own writes went backwards (another process): 0 */
    CP_ASSERT_NEAR(w.others_disk_bytes_per_s, (168.0 + 65552) * 512 / 1.585, 1e-6);
    CP_ASSERT_NEAR(w.load1, 2.18, 1e-12);
    assert_non_null(strstr(w.reasons, "other processes used 36.9 % of the 2 CPUs (limit 10 %)"));
    assert_non_null(strstr(w.reasons, "other disk traffic 21.2 MB/s (limit 10 MB/s)"));
    assert_null(strstr(w.reasons, "steal"));
    assert_null(strstr(w.reasons, "PSI")); /* cpu 2.2 %, io 0.1 %: below their limits */

    /* the same window with a looser CPU limit and the disk as the probe's own:
     * only what remains is a reason */
    lim.others_cpu_pct = 50;
    lim.others_disk_bytes_per_s = 100e6;
    probe_quiet_assess("storage", PROBE_OWN_DISK, &d, &b, &lim, &w);
    assert_true(w.quiet);
    assert_string_equal(w.reasons, "");

    /* a run: the verdict names the window and its numbers; clocks that moved too */
    probe_quiet q;
    probe_quiet_init(&q, &fa);
    q.w = cp_xcalloc(2, sizeof *q.w);
    q.cap = 2;
    probe_quiet_default_limits(&lim);
    probe_quiet_assess("before", 0, &d, &b, &lim, &q.w[q.n++]);
    probe_quiet_assess("memory", PROBE_OWN_CPU_PSI, &d, &b, &lim, &q.w[q.n++]);
    q.freq_min_mhz = 2000;
    q.freq_max_mhz = 3400;
    char verdict[2048];
    assert_false(probe_quiet_verdict(&q, verdict, sizeof verdict));
    assert_non_null(strstr(verdict, "the machine was not quiet: before the probes: other processes used 36.9 %"));
    assert_non_null(strstr(verdict, "; during memory: other processes used 36.9 %"));
    assert_non_null(strstr(verdict, "the CPU clock changed between 2000 and 3400 MHz (41.2 %, limit 10 %)"));
    probe_quiet_free(&q);
    cp_ss_sample_free(&a);
    cp_ss_sample_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats),  cmocka_unit_test(test_emit_impossible), cmocka_unit_test(test_plateau),
        cmocka_unit_test(test_caches), cmocka_unit_test(test_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
