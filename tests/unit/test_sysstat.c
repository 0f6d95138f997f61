/* test_sysstat.c - base/fsroot and base/sysstat against captured /proc and
 * /sys trees (tests/fixtures/fsroot: vm-a and vm-b taken 1.6 s apart on the
 * 2-vCPU development VM while a busy loop and a 32 MiB dd ran; metal written
 * by hand: 4 CPUs with cpufreq, no PSI, an NVMe disk with a partition, a dm
 * and a loop device, virtual interfaces). Every expected value is the
 * fixture's own number, worked out by hand in the comments. */
#include "test_util.h"
#include "base/fsroot.h"
#include "base/sysstat.h"

#include <math.h>
#include <unistd.h>

/* A captured tree of tests/fixtures/fsroot as the root. */
static void fixture(cp_fsroot *fs, const char *name)
{
    char rel[64], dir[1024];
    snprintf(rel, sizeof rel, "fsroot/%s", name);
    cp_fsroot_init(fs, cp_test_fixture(rel, dir, sizeof dir));
}

static void test_fsroot(void **state)
{
    (void)state;
    cp_fsroot fs;
    cp_fsroot_init(&fs, "/");
    assert_true(fs.live);
    assert_string_equal(cp_fsroot_name(&fs), "/");
    char buf[256];
    assert_string_equal(cp_fsroot_path(&fs, "/proc/stat", buf, sizeof buf), "/proc/stat");
    assert_null(cp_fsroot_path(&fs, "proc/stat", buf, sizeof buf)); /* relative paths are refused */

    setenv(CP_FSROOT_ENV, "/some/where//", 1);
    cp_fsroot_init(&fs, NULL);
    assert_false(fs.live);
    assert_string_equal(cp_fsroot_path(&fs, "/sys/block", buf, sizeof buf), "/some/where/sys/block");
    cp_fsroot_init(&fs, "/explicit"); /* an explicit root wins over the environment */
    assert_string_equal(cp_fsroot_name(&fs), "/explicit");
    unsetenv(CP_FSROOT_ENV);
    assert_null(cp_fsroot_path(&fs, "/proc/stat", buf, 12)); /* does not fit */

    fixture(&fs, "metal");
    int64_t v = 0;
    assert_true(cp_fsroot_read_i64(&fs, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", &v));
    assert_int_equal(v, 3400000);
    assert_false(cp_fsroot_read_i64(&fs, "/proc/loadavg", &v)); /* not one integer */
    assert_true(cp_fsroot_read_line(&fs, "/sys/devices/system/cpu/online", buf, sizeof buf));
    assert_string_equal(buf, "0-3");
    assert_true(cp_fsroot_readlink(&fs, "/sys/block/dm-0", buf, sizeof buf) > 0);
    assert_string_equal(buf, "../devices/virtual/block/dm-0");
    assert_true(cp_fsroot_exists(&fs, "/sys/class/net/eth0"));
    assert_false(cp_fsroot_exists(&fs, "/proc/pressure/cpu"));
    assert_true(cp_fsroot_read(&fs, "/proc/nothing", buf, sizeof buf) < 0);
    /* links resolve inside the tree */
    assert_string_equal(cp_fsroot_resolve(&fs, "/sys/dev/block/259:1", buf, sizeof buf),
                        "/sys/devices/pci0000:00/0000:00:01.0/nvme/nvme0/nvme0n1/nvme0n1p1");
    assert_string_equal(cp_fsroot_resolve(&fs, "/sys/block/./dm-0", buf, sizeof buf), "/sys/devices/virtual/block/dm-0");
    assert_string_equal(cp_fsroot_resolve(&fs, "/proc/stat", buf, sizeof buf), "/proc/stat");
    assert_null(cp_fsroot_resolve(&fs, "/sys/dev/block/1:1", buf, sizeof buf));
}

static void test_metal(void **state)
{
    (void)state;
    cp_fsroot fs;
    fixture(&fs, "metal");
    cp_ss_sample s = { 0 };
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(cp_ss_take(&fs, CP_SS_ALL, &s, &err), 0);
    /* every source but PSI (the tree has no /proc/pressure) */
    assert_int_equal(s.have, CP_SS_ALL & ~(unsigned)CP_SS_PSI);
    assert_int_equal(s.n_cpus, 4);
    assert_int_equal(s.total.user, 4000);
    assert_int_equal(s.total.irq, 10);
    assert_int_equal(s.cpus[3].cpu, 3);
    assert_int_equal(cp_ss_cpu_ticks(&s.total), 4000 + 100 + 2000 + 90000 + 500 + 10 + 40);
    assert_int_equal(cp_ss_cpu_busy_ticks(&s.total), 4000 + 100 + 2000 + 10 + 40);
    assert_int_equal(s.ctxt, 987654);
    assert_int_equal(s.procs_running, 3);
    assert_int_equal(s.procs_blocked, 1);
    CP_ASSERT_NEAR(s.load.avg1, 0.52, 1e-12);
    assert_int_equal(s.load.runnable, 3);
    assert_int_equal(s.load.tasks, 211);
    assert_int_equal(s.mem.available_bytes, 60000000ll * 1024);
    assert_int_equal(s.mem.anon_huge_bytes, 204800ll * 1024);
    assert_int_equal(s.mem.swap_total_bytes, 0);
    /* cpufreq (kHz / 1000), not cpuinfo's 3000 MHz */
    assert_int_equal(s.freq_source, CP_SS_FREQ_CPUFREQ);
    assert_int_equal(s.n_freqs, 4);
    CP_ASSERT_NEAR(s.freqs[0].cur_mhz, 2000.0, 1e-9);
    CP_ASSERT_NEAR(s.freqs[2].cur_mhz, 2800.0, 1e-9);
    /* disks: nvme0n1 a real disk, its partition not whole, dm and loop virtual */
    assert_int_equal(s.n_disks, 4);
    const cp_ss_disk *d = cp_ss_disk_find(&s, "nvme0n1");
    assert_non_null(d);
    assert_true(d->whole && !d->virt);
    assert_int_equal(d->major, 259);
    assert_int_equal(d->write_sectors, 160000);
    assert_int_equal(d->weighted_ms, 1400);
    assert_int_equal(d->flushes, 0); /* a 15-field (Linux 4.18) line */
    d = cp_ss_disk_find(&s, "nvme0n1p1");
    assert_true(!d->whole && !d->virt);
    d = cp_ss_disk_find(&s, "dm-0");
    assert_true(d->whole && d->virt);
    assert_true(cp_ss_disk_find(&s, "loop0")->virt);
    /* interfaces: eth0 a NIC, the rest virtual ("docker0:300000" has no space after the colon) */
    assert_int_equal(s.n_nets, 4);
    const cp_ss_net *n = cp_ss_net_find(&s, "eth0");
    assert_false(n->virt);
    assert_int_equal(n->rx_bytes, 10000000);
    assert_int_equal(n->rx_drop, 2);
    assert_int_equal(n->tx_packets, 3000);
    assert_true(cp_ss_net_find(&s, "docker0")->virt);
    assert_int_equal(cp_ss_net_find(&s, "docker0")->rx_bytes, 300000);
    assert_true(cp_ss_net_find(&s, "vethab12")->virt);
    assert_true(cp_ss_net_find(&s, "lo")->virt);
    /* /proc/self/stat with "(my (odd) prog)" and tpgid -1 */
    assert_int_equal(s.self.utime, 150);
    assert_int_equal(s.self.stime, 30);
    assert_int_equal(s.self.cutime, 7);
    assert_int_equal(s.self.cstime, 3);
    assert_int_equal(s.self.write_bytes, 1048576);

    /* the sample's arrays are reused: a second take allocates nothing more */
    cp_ss_disk *before = s.disks;
    char *text = s.text;
    assert_int_equal(cp_ss_take(&fs, CP_SS_DISKSTATS, &s, &err), 0);
    assert_ptr_equal(s.disks, before);
    assert_ptr_equal(s.text, text);
    assert_int_equal(s.have, CP_SS_DISKSTATS);
    cp_ss_sample_free(&s);
}

static void test_vm_delta(void **state)
{
    (void)state;
    cp_fsroot fa, fb;
    fixture(&fa, "vm-a");
    fixture(&fb, "vm-b");
    cp_ss_sample a = { 0 }, b = { 0 };
    assert_int_equal(cp_ss_take(&fa, CP_SS_ALL, &a, NULL), 0);
    assert_int_equal(cp_ss_take(&fb, CP_SS_ALL, &b, NULL), 0);
    assert_int_equal(a.have, CP_SS_ALL);
    assert_int_equal(a.n_cpus, 2);
    assert_int_equal(a.freq_source, CP_SS_FREQ_CPUINFO); /* no cpufreq in this VM */
    CP_ASSERT_NEAR(a.freqs[1].cur_mhz, 2596.098, 1e-9);
    assert_true(a.psi[CP_SS_PSI_MEMORY].full.valid);
    assert_int_equal(a.psi[CP_SS_PSI_CPU].some.total_us, 141009112);
    CP_ASSERT_NEAR(a.psi[CP_SS_PSI_CPU].some.avg10, 12.37, 1e-12);
    const cp_ss_disk *vda = cp_ss_disk_find(&a, "vda");
    assert_true(vda->whole && !vda->virt);
    assert_true(cp_ss_disk_find(&a, "zram0")->virt);
    assert_false(cp_ss_net_find(&a, "eth0")->virt);
    assert_true(cp_ss_net_find(&a, "ifb0")->virt);

    /* the samples' clocks are this test's, not the capture's: set them */
    a.mono_ns = 0;
    b.mono_ns = 1585000000; /* 317 ticks on 2 CPUs at 100 Hz */
    cp_ss_delta d;
    cp_ss_delta_of(&a, &b, &d);
    CP_ASSERT_NEAR(d.seconds, 1.585, 1e-12);
    /* user +117, system +54, idle +145, iowait +1: 317 ticks */
    CP_ASSERT_NEAR(d.user_pct, 117.0 / 317 * 100, 1e-9);
    CP_ASSERT_NEAR(d.system_pct, 54.0 / 317 * 100, 1e-9);
    CP_ASSERT_NEAR(d.iowait_pct, 1.0 / 317 * 100, 1e-9);
    CP_ASSERT_NEAR(d.idle_pct, 145.0 / 317 * 100, 1e-9);
    CP_ASSERT_NEAR(d.steal_pct, 0.0, 1e-12);
    CP_ASSERT_NEAR(d.busy_cpu_s, 1.71, 1e-9);
    CP_ASSERT_NEAR(d.cpu_s, 3.17, 1e-9);
    /* vda: 168 sectors read, 65552 written (the 32 MiB dd), weighted ms +87 */
    CP_ASSERT_NEAR(d.disk_read_bytes, 168.0 * 512, 1e-9);
    CP_ASSERT_NEAR(d.disk_write_bytes, 65552.0 * 512, 1e-9);
    CP_ASSERT_NEAR(d.disk_queue_avg, 87.0 / 1585.0, 1e-12);
    CP_ASSERT_NEAR(d.net_rx_bytes, 0.0, 1e-12); /* lo moved, eth0 did not */
    /* PSI: cpu some +34782 us, io some +1655 and full +1621 us over 1.585 s, memory none */
    CP_ASSERT_NEAR(d.psi_some_pct[CP_SS_PSI_CPU], 34782.0 / 1585000.0 * 100, 1e-9);
    CP_ASSERT_NEAR(d.psi_some_pct[CP_SS_PSI_IO], 1655.0 / 1585000.0 * 100, 1e-9);
    CP_ASSERT_NEAR(d.psi_full_pct[CP_SS_PSI_IO], 1621.0 / 1585000.0 * 100, 1e-9);
    CP_ASSERT_NEAR(d.psi_some_pct[CP_SS_PSI_MEMORY], 0.0, 1e-12);
    CP_ASSERT_NEAR(d.freq_min_mhz, 2596.098, 1e-9);
    CP_ASSERT_NEAR(d.freq_max_mhz, 2596.098, 1e-9);

    /* a copy is independent of its source */
    cp_ss_sample c;
    cp_ss_sample_copy(&c, &b);
    b.disks[0].read_sectors = 0;
    assert_int_equal(cp_ss_disk_find(&c, "vda")->read_sectors, 10301146);
    cp_ss_sample_free(&c);

    /* a source missing from one side gives NaN, not a wrong number */
    b.have &= ~(unsigned)CP_SS_DISKSTATS;
    cp_ss_delta_of(&a, &b, &d);
    assert_true(isnan(d.disk_write_bytes));
    assert_false(isnan(d.user_pct));
    cp_ss_sample_free(&a);
    cp_ss_sample_free(&b);
}

static void test_parsers(void **state)
{
    (void)state;
    cp_ss_sample s = { 0 };
    /* a Linux 2.6.11 /proc/stat: 7 CPU columns, no steal */
    assert_int_equal(cp_ss_parse_stat("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n", &s), 0);
    assert_int_equal(s.total.softirq, 7);
    assert_int_equal(s.total.steal, 0);
    assert_int_equal(cp_ss_parse_stat("cpux 1 2 3 4\n", &s), CP_ERR_FORMAT);
    assert_int_equal(cp_ss_parse_stat("ctxt 5\n", &s), CP_ERR_FORMAT); /* no cpu line */
    cp_ss_loadavg l;
    assert_int_equal(cp_ss_parse_loadavg("1.0 2.0\n", &l), CP_ERR_FORMAT);
    cp_ss_psi p;
    assert_int_equal(cp_ss_parse_psi("some avg10=1.50 avg60=0.00 avg300=0.00 total=7\n", &p), 0);
    assert_true(p.some.valid && !p.full.valid);
    assert_int_equal(p.some.total_us, 7);
    assert_int_equal(cp_ss_parse_psi("some avg10=x\n", &p), CP_ERR_FORMAT);
    /* an 11-field diskstats line (Linux 2.6) and a broken one */
    assert_int_equal(cp_ss_parse_diskstats("   8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n", &s), 0);
    assert_int_equal(s.n_disks, 1);
    assert_int_equal(s.disks[0].weighted_ms, 11);
    assert_int_equal(cp_ss_parse_diskstats("   8 0 sda 1 2 3\n", &s), CP_ERR_FORMAT);
    assert_int_equal(cp_ss_parse_netdev("  eth0: 1 2 3\n", &s), CP_ERR_FORMAT);
    cp_ss_self self;
    assert_int_equal(cp_ss_parse_self_stat("12 (x) S 1 2\n", &self), CP_ERR_FORMAT);
    cp_ss_meminfo m;
    assert_int_equal(cp_ss_parse_meminfo("MemTotal: 10 kB\nHugePages_Total: 3\n", &m), 0);
    assert_int_equal(m.total_bytes, 10240);
    assert_int_equal(m.available_bytes, -1); /* before Linux 3.14 */
    cp_ss_sample_free(&s);
}

static void test_malformed_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/cp_ss_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/proc", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/proc/stat", dir);
    FILE *f = fopen(path, "w");
    fputs("garbage\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/proc/loadavg", dir);
    f = fopen(path, "w");
    fputs("0.10 0.20 0.30 1/50 77\n", f);
    fclose(f);
    cp_fsroot fs;
    cp_fsroot_init(&fs, dir);
    cp_ss_sample s = { 0 };
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(cp_ss_take(&fs, CP_SS_STAT | CP_SS_LOADAVG | CP_SS_MEMINFO, &s, &err), CP_ERR_FORMAT);
    assert_string_equal(err.file, "/proc/stat"); /* named as the kernel's path */
    assert_int_equal(s.have, CP_SS_LOADAVG);     /* what parsed is kept; meminfo is absent */
    cp_ss_sample_free(&s);
    unlink(path);
    snprintf(path, sizeof path, "%s/proc/stat", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/proc", dir);
    rmdir(path);
    rmdir(dir);
}

static void test_live(void **state)
{
    (void)state;
    cp_fsroot fs;
    cp_fsroot_init(&fs, "/");
    cp_ss_sample s = { 0 };
    if (cp_ss_take(&fs, CP_SS_ALL, &s, NULL) < 0)
        fail_msg("the live /proc did not parse");
    assert_true(s.have & CP_SS_STAT);
    assert_true(s.n_cpus >= 1);
    assert_true(s.have & CP_SS_SELF);
    cp_ss_sample_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fsroot),  cmocka_unit_test(test_metal),           cmocka_unit_test(test_vm_delta),
        cmocka_unit_test(test_parsers), cmocka_unit_test(test_malformed_file), cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
