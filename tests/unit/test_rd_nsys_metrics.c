/* test_rd_nsys_metrics.c - GPU metrics and NIC/IB metric tables of Nsight
 * Systems exports read as counter samples: a database written here with
 * libsqlite3 (two processes on two GPUs, a NIC and an IB switch, damaged
 * and unlisted samples), a schema without the optional tables, and the real
 * exports under ../shared/data/nsys checked against sqlite3 counts. */
#include "nsys_testutil.h"

#include <sqlite3.h>
#include <unistd.h>

static void make_db(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s", msg);
    sqlite3_close(db);
}

/* Kernels of pid 10 on GPU 0 and pid 20 on GPU 1 (globalPid = pid << 24). */
static const char kernels_sql[] =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO StringIds VALUES (1, 'gemm');"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
    "  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 7, 1, 10 << 24, 1, 1);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 3000, 1, 7, 2, 20 << 24, 1, 1);";

static const char metrics_sql[] =
    "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, sourceId INTEGER, typeName TEXT, metricId INTEGER,"
    "  metricName TEXT);"
    "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 0, 'GH100', 3, 'SMs Active [Throughput %]');"
    "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 0, 'GH100', 4, 'DRAM Read Bandwidth [Throughput %]');"
    "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (257, 0, 'GH100', 3, 'SMs Active [Throughput %]');"
    "CREATE TABLE GPU_METRICS (rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER, metricId INTEGER,"
    "  value INTEGER);"
    "INSERT INTO GPU_METRICS VALUES (0, 1100, 256, 3, 87);"
    "INSERT INTO GPU_METRICS VALUES (0, 1100, 257, 3, 12);"
    "INSERT INTO GPU_METRICS VALUES (0, 1100, 256, 4, 40);"
    "INSERT INTO GPU_METRICS VALUES (0, 1200, 256, 3, 91);"
    "INSERT INTO GPU_METRICS VALUES (0, 1200, 257, 9, 5);"      /* not in the dictionary */
    "INSERT INTO GPU_METRICS VALUES (0, NULL, 256, 3, 50);"     /* damaged: no time */
    "INSERT INTO GPU_METRICS VALUES (0, 1300, 257, 3, NULL);"   /* damaged: no value */
    "CREATE TABLE TARGET_INFO_NETWORK_METRICS (metricsListId INTEGER, metricsIdx INTEGER, name TEXT,"
    "  description TEXT, unit TEXT);"
    "INSERT INTO TARGET_INFO_NETWORK_METRICS VALUES (0, 0, 'IB: Bytes sent', '', 'B');"
    "INSERT INTO TARGET_INFO_NETWORK_METRICS VALUES (0, 1, 'IB: Bytes received', '', 'B');"
    "INSERT INTO TARGET_INFO_NETWORK_METRICS VALUES (1, 0, 'Port xmit wait', '', '');"
    "CREATE TABLE TARGET_INFO_NIC_INFO (GUID INTEGER, stateName TEXT, nicId INTEGER, name TEXT, deviceId INTEGER,"
    "  vendorId INTEGER, linkLayer INTEGER);"
    "INSERT INTO TARGET_INFO_NIC_INFO VALUES (1, '', 4, 'mlx5_0', 0, 0, 0);"
    "CREATE TABLE NIC_ID_MAP (nicId INTEGER, globalId INTEGER);"
    "INSERT INTO NIC_ID_MAP VALUES (4, 77);"
    "CREATE TABLE NET_NIC_METRIC (start INTEGER, end INTEGER, globalId INTEGER, portId INTEGER,"
    "  metricsListId INTEGER, metricsIdx INTEGER, value REAL);"
    "INSERT INTO NET_NIC_METRIC VALUES (1500, 1600, 77, 1, 0, 0, 4096.5);"
    "INSERT INTO NET_NIC_METRIC VALUES (1500, 1600, 77, 1, 0, 1, 1024);"
    "INSERT INTO NET_NIC_METRIC VALUES (1600, 1700, 77, 1, 0, 0, NULL);" /* damaged */
    "CREATE TABLE NET_IB_SWITCH_METRIC (start INTEGER, end INTEGER, globalId INTEGER, portId INTEGER,"
    "  metricsListId INTEGER, metricsIdx INTEGER, value INTEGER);"
    "INSERT INTO NET_IB_SWITCH_METRIC VALUES (1800, 1900, 900, 3, 1, 0, 6);";

static int rank_of_pid(const tl_timeline *tl, int64_t pid)
{
    for (size_t t = 0; t < tl->n_tracks; t++)
        if (tl->tracks[t].key.kind == TL_TRACK_GPU && tl->tracks[t].key.pid == pid)
            return (int)tl->tracks[t].rank_index;
    fail_msg("no GPU track of pid %lld", (long long)pid);
    return -1;
}

/* The counter samples (instant events on `other` tracks) named `name` on
 * tracks named `track`: their count, and the first and last one's index. */
static int samples2(const tl_timeline *tl, const char *track, const char *name, size_t *first, size_t *last)
{
    int n = 0;
    for (size_t t = 0; t < tl->n_tracks; t++) {
        const tl_track *tr = &tl->tracks[t];
        if (tr->key.kind != TL_TRACK_OTHER || strcmp(tl_str(tl, tr->name), track) != 0)
            continue;
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++) {
            if (strcmp(tl_str(tl, tl->name[i]), name) != 0)
                continue;
            assert_true(tl->flags[i] & TL_F_INSTANT);
            assert_int_equal(tl->dur_ns[i], 0);
            if (!n++ && first)
                *first = i;
            if (last)
                *last = i;
        }
    }
    return n;
}

static int samples(const tl_timeline *tl, const char *track, const char *name, size_t *first)
{
    return samples2(tl, track, name, first, NULL);
}

static int64_t ival(const tl_timeline *tl, size_t ev, const char *key)
{
    int64_t v;
    if (!tl_arg_int(tl, ev, key, &v))
        fail_msg("event %zu has no int arg %s", ev, key);
    return v;
}

static void test_counters(void **state)
{
    (void)state;
    char path[] = "/tmp/cp_nsys_metrics_XXXXXX";
    close(mkstemp(path));
    char sql[sizeof kernels_sql + sizeof metrics_sql];
    snprintf(sql, sizeof sql, "%s%s", kernels_sql, metrics_sql);
    make_db(path, sql);
    tl_timeline *tl = nsys_load(path);
    unlink(path);
    assert_int_equal(tl->n_ranks, 2);

    /* GPU 0's samples belong to pid 10's rank, GPU 1's to pid 20's */
    size_t i, j;
    assert_int_equal(samples2(tl, "GPU 0 metrics", "SMs Active [Throughput %]", &i, &j), 2);
    assert_int_equal(tl->ts_ns[i], 1100);
    assert_int_equal(ival(tl, i, "value"), 87);
    assert_int_equal(ival(tl, j, "value"), 91);
    assert_int_equal(tl->ts_ns[j], 1200);
    assert_string_equal(tl_str(tl, tl_event_cat_name(tl, i)), "gpu_metrics");
    assert_int_equal(tl->tracks[tl->track[i]].rank_index, rank_of_pid(tl, 10));
    assert_int_equal(tl->tracks[tl->track[i]].key.device, 0);
    assert_int_equal(samples(tl, "GPU 0 metrics", "DRAM Read Bandwidth [Throughput %]", &i), 1);
    assert_int_equal(ival(tl, i, "value"), 40);
    assert_int_equal(samples(tl, "GPU 1 metrics", "SMs Active [Throughput %]", &i), 1);
    assert_int_equal(ival(tl, i, "value"), 12);
    assert_int_equal(tl->tracks[tl->track[i]].rank_index, rank_of_pid(tl, 20));
    assert_int_equal(samples(tl, "GPU 1 metrics", "metric 257/9", &i), 1); /* unlisted: kept, named by id */
    assert_int_equal(ival(tl, i, "value"), 5);

    /* NIC samples: named through the dictionary and NIC_ID_MAP, value as written (REAL stays a number) */
    assert_int_equal(samples(tl, "NIC mlx5_0 port 1", "IB: Bytes sent", &i), 1);
    assert_int_equal(tl->ts_ns[i], 1500);
    double d;
    assert_true(tl_arg_num(tl, i, "value", &d));
    assert_true(d == 4096.5);
    assert_int_equal(ival(tl, i, "port"), 1);
    assert_int_equal(ival(tl, i, "interval_ns"), 100);
    assert_string_equal(tl_str(tl, tl_event_cat_name(tl, i)), "nic_metrics");
    assert_int_equal(samples(tl, "NIC mlx5_0 port 1", "IB: Bytes received", &i), 1);
    assert_true(tl_arg_num(tl, i, "value", &d));
    assert_true(d == 1024);
    assert_int_equal(samples(tl, "IB switch 900 port 3", "Port xmit wait", &i), 1);
    assert_int_equal(ival(tl, i, "value"), 6);
    assert_string_equal(tl_str(tl, tl_event_cat_name(tl, i)), "ib_switch_metrics");

    /* the three damaged samples are counted, not kept */
    assert_int_equal(tl->diag.count[DIAG_BAD_EVENT], 3);
    size_t n_other = 0;
    for (size_t e = 0; e < tl->n_events; e++)
        n_other += tl->tracks[tl->track[e]].key.kind == TL_TRACK_OTHER;
    assert_int_equal(n_other, 8);
    tl_free(tl);
}

/* Dictionaries missing, columns renamed away: samples still read, names by id. */
static void test_partial_schema(void **state)
{
    (void)state;
    char path[] = "/tmp/cp_nsys_metrics_XXXXXX";
    close(mkstemp(path));
    char sql[sizeof kernels_sql + 512];
    snprintf(sql, sizeof sql,
             "%sCREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);"
             "INSERT INTO GPU_METRICS VALUES (5000, 1, 2, 33);"
             "CREATE TABLE NET_NIC_METRIC (start INTEGER, globalId INTEGER, value INTEGER);"
             "INSERT INTO NET_NIC_METRIC VALUES (6000, 3, 44);",
             kernels_sql);
    make_db(path, sql);
    tl_timeline *tl = nsys_load(path);
    unlink(path);
    size_t i;
    assert_int_equal(samples(tl, "GPU 1 metrics", "metric 1/2", &i), 1);
    assert_int_equal(tl->ts_ns[i], 5000);
    assert_int_equal(ival(tl, i, "value"), 33);
    assert_int_equal(samples(tl, "NIC 3 port 0", "metric -1/-1", &i), 1);
    assert_int_equal(ival(tl, i, "value"), 44);
    int64_t v;
    assert_false(tl_arg_int(tl, i, "interval_ns", &v));
    assert_int_equal(tl->diag.count[DIAG_BAD_EVENT], 0);
    tl_free(tl);
}

/* The real exports: as many counter samples as sqlite3 counts valid rows
 * of the metric tables (none of the seven was captured with metrics, so
 * this checks that their absence adds nothing). */
static void test_real_exports(void **state)
{
    (void)state;
    static const char *const tables[][2] = {
        { "GPU_METRICS", "timestamp" }, { "NET_NIC_METRIC", "start" }, { "NET_IB_SWITCH_METRIC", "start" }
    };
    char buf[4096];
    int found = 0;
    for (size_t f = 0; f < sizeof nsys_exports / sizeof nsys_exports[0]; f++) {
        const char *path = cp_test_data(nsys_exports[f], buf, sizeof buf);
        if (!path)
            continue;
        found++;
        sqlite3 *db;
        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        int64_t want = 0;
        for (size_t t = 0; t < 3; t++) {
            char sql[256];
            snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s IS NOT NULL AND value IS NOT NULL",
                     tables[t][0], tables[t][1]);
            sqlite3_stmt *st;
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                want += sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
        sqlite3_close(db);
        tl_timeline *tl = nsys_load(path);
        int64_t got = 0;
        for (size_t e = 0; e < tl->n_events; e++)
            got += tl->tracks[tl->track[e]].key.kind == TL_TRACK_OTHER;
        if (got != want)
            fail_msg("%s: %lld counter samples, sqlite3 counts %lld", nsys_exports[f], (long long)got, (long long)want);
        tl_free(tl);
    }
    if (!found)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_partial_schema),
        cmocka_unit_test(test_real_exports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
