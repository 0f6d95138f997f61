/* test_history.c - the history schema's buffer kind and the migration of
 * version-1 databases (written here with the exact version-1 schema, as a
 * chainprof before the buffer kind left them). */
#include "test_util.h"

#include "history/history.h"

#include <math.h>
#include <sqlite3.h>
#include <unistd.h>

static const char v1_schema[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, host TEXT NOT NULL,"
    " command TEXT NOT NULL, version TEXT NOT NULL, argv TEXT NOT NULL);"
    "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " path TEXT NOT NULL, value REAL, unit TEXT, PRIMARY KEY(run_id, path)) WITHOUT ROWID;"
    "PRAGMA user_version = 1;";

/* runs 1..4 as a version-1 chainprof recorded them */
static const char v1_rows[] =
    "INSERT INTO runs VALUES(1, 1, 'h', 'probe', '0.1', 'chainprof probe coll --backend mpi');"
    "INSERT INTO runs VALUES(2, 2, 'h', 'probe', '0.1', 'chainprof probe coll --backend=nccl');"
    "INSERT INTO runs VALUES(3, 3, 'h', 'probe', '0.1', 'chainprof probe coll');"
    "INSERT INTO runs VALUES(4, 4, 'h', 'probe', '0.1', 'chainprof probe memory');"
    "INSERT INTO metrics VALUES(1, 'coll/busbw/all_reduce/1048576/out_of_place/busbw_gbps', 10, 'GB/s');"
    "INSERT INTO metrics VALUES(1, 'coll/busbw/all_reduce/1048576/out_of_place/time_us', 100, 'us');"
    "INSERT INTO metrics VALUES(1, 'coll/p2p_min_bandwidth', 3, 'GB/s');"
    "INSERT INTO metrics VALUES(2, 'coll/busbw/all_reduce/1048576/in_place/busbw_gbps', 200, 'GB/s');"
    "INSERT INTO metrics VALUES(3, 'coll/busbw/broadcast/4096/in_place/busbw_gbps', 5, 'GB/s');"
    "INSERT INTO metrics VALUES(4, 'memory/triad_bandwidth', 50, 'GB/s');";

static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *s;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(s, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "sql: %s\n", msg ? msg : "?");
    sqlite3_free(msg);
    assert_int_equal(rc, SQLITE_OK);
    sqlite3_close(s);
}

static int user_version(const char *path)
{
    sqlite3 *s;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(s);
    return v;
}

/* The metric of run `id` at `path`, or NULL. */
static const hist_metric *find(hist_db *db, int64_t id, const char *path, hist_metrics *m)
{
    cp_error err;
    hist_metrics_free(m);
    assert_int_equal(hist_metrics_of(db, id, m, &err), 0);
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].path, path))
            return &m->v[i];
    return NULL;
}

/* A fresh directory (dir, a mkdtemp template) and the database path in it. */
static void tmp_db(char *dir, char *path, size_t size)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, size, "%s/h.db", dir);
}

static void rm_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void assert_kind(const hist_metric *x, const char *kind)
{
    assert_non_null(x);
    if (kind)
        assert_string_equal(x->buffers, kind);
    else
        assert_null(x->buffers);
}

static void test_coll_path(void **state)
{
    (void)state;
    char p[128];
    assert_int_equal(hist_coll_path(p, sizeof p, "coll", "busbw", "all_reduce", "device", 1048576, false,
                                     "busbw_gbps"),
                     (int)strlen("coll/busbw/all_reduce/device/1048576/out_of_place/busbw_gbps"));
    assert_string_equal(p, "coll/busbw/all_reduce/device/1048576/out_of_place/busbw_gbps");
    hist_coll_path(p, sizeof p, "coll", "busbw", "all_gather", "host", 64, true, "time_us");
    assert_string_equal(p, "coll/busbw/all_gather/host/64/in_place/time_us");
    assert_int_equal(hist_coll_path(p, 16, "coll", "busbw", "all_gather", "host", 64, true, "time_us"), -1);
}

static void test_migrate_v1(void **state)
{
    (void)state;
    char dir[] = "/tmp/cp_histmig_XXXXXX", path[128];
    tmp_db(dir, path, sizeof path);
    exec_sql(path, v1_schema);
    exec_sql(path, v1_rows);

    hist_db *db;
    cp_error err;
    assert_int_equal(hist_open(path, &db, &err), 0);
    assert_int_equal(user_version(path), HIST_SCHEMA_VERSION);
    hist_metrics m = { 0 };
    /* the kind comes from --backend; auto runs are "unknown"; other rows keep their path */
    assert_kind(find(db, 1, "coll/busbw/all_reduce/host/1048576/out_of_place/busbw_gbps", &m), "host");
    CP_ASSERT_NEAR(find(db, 1, "coll/busbw/all_reduce/host/1048576/out_of_place/time_us", &m)->value, 100, 0);
    assert_null(find(db, 1, "coll/busbw/all_reduce/1048576/out_of_place/busbw_gbps", &m));
    assert_kind(find(db, 1, "coll/p2p_min_bandwidth", &m), NULL);
    assert_kind(find(db, 2, "coll/busbw/all_reduce/device/1048576/in_place/busbw_gbps", &m), "device");
    assert_kind(find(db, 3, "coll/busbw/broadcast/unknown/4096/in_place/busbw_gbps", &m), "unknown");
    assert_kind(find(db, 4, "memory/triad_bandwidth", &m), NULL);
    assert_int_equal(m.n, 1);

    /* a new run records its kind, and pairs (same path) with the migrated host run only */
    hist_metrics add = { 0 };
    char p[256];
    hist_coll_path(p, sizeof p, "coll", "busbw", "all_reduce", "host", 1048576, false, "busbw_gbps");
    hist_metrics_add_kind(&add, p, 11, "GB/s", "host");
    hist_coll_path(p, sizeof p, "coll", "busbw", "all_reduce", "device", 1048576, false, "busbw_gbps");
    hist_metrics_add_kind(&add, p, 190, "GB/s", "device");
    char *argv[] = { "chainprof", "probe" };
    int64_t id;
    assert_int_equal(hist_record(db, "probe", 2, argv, &add, NULL, &id, &err), 0);
    assert_int_equal(id, 5);
    assert_kind(find(db, 5, "coll/busbw/all_reduce/host/1048576/out_of_place/busbw_gbps", &m), "host");
    assert_kind(find(db, 5, "coll/busbw/all_reduce/device/1048576/out_of_place/busbw_gbps", &m), "device");
    hist_runs runs;
    assert_int_equal(hist_list(db, NULL, 0, &runs, &err), 0);
    assert_int_equal(runs.n, 5);
    assert_string_equal(runs.v[0].buffers, "device,host"); /* run 5: sorted */
    assert_string_equal(runs.v[1].buffers, "");            /* run 4: no collective */
    assert_string_equal(runs.v[2].buffers, "unknown");
    assert_string_equal(runs.v[3].buffers, "device");
    assert_string_equal(runs.v[4].buffers, "host");
    hist_runs_free(&runs);
    hist_close(db);

    /* an older chainprof opening the file puts version 1 back and adds a
     * legacy row: the next open migrates it again, the column already there */
    exec_sql(path, "PRAGMA user_version = 1;"
                   "INSERT INTO runs(id, time_ns, host, command, version, argv)"
                   " VALUES(6, 6, 'h', 'probe', '0.1', 'chainprof probe coll --backend mpi');"
                   "INSERT INTO metrics(run_id, path, value, unit) VALUES(6,"
                   " 'coll/busbw/all_gather/65536/out_of_place/busbw_gbps', 7, 'GB/s');");
    assert_int_equal(hist_open(path, &db, &err), 0);
    assert_int_equal(user_version(path), HIST_SCHEMA_VERSION);
    assert_kind(find(db, 6, "coll/busbw/all_gather/host/65536/out_of_place/busbw_gbps", &m), "host");
    assert_kind(find(db, 1, "coll/busbw/all_reduce/host/1048576/out_of_place/busbw_gbps", &m), "host");
    hist_close(db);
    /* opening again changes nothing */
    assert_int_equal(hist_open(path, &db, &err), 0);
    assert_kind(find(db, 2, "coll/busbw/all_reduce/device/1048576/in_place/busbw_gbps", &m), "device");
    assert_int_equal(m.n, 1);
    hist_close(db);

    hist_metrics_free(&m);
    hist_metrics_free(&add);
    rm_dir(dir);
}

/* a brand-new database starts at the current version with the column */
static void test_new_db(void **state)
{
    (void)state;
    char dir[] = "/tmp/cp_histnew_XXXXXX", path[128];
    tmp_db(dir, path, sizeof path);
    hist_db *db;
    cp_error err;
    assert_int_equal(hist_open(path, &db, &err), 0);
    hist_close(db);
    assert_int_equal(user_version(path), HIST_SCHEMA_VERSION);
    exec_sql(path, "INSERT INTO runs(id, time_ns, host, command, version, argv) VALUES(1, 1, 'h', 'probe', 'x', 'a');"
                   "INSERT INTO metrics(run_id, path, value, unit, buffers) VALUES(1, 'p', 1, 'GB/s', 'host');");
    rm_dir(dir);
}

/* a version-2 file (the buffer kind, no spread) as the chainprof before
 * schema 3 left it */
static const char v2_schema[] =
    "CREATE TABLE runs(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, host TEXT NOT NULL,"
    " command TEXT NOT NULL, version TEXT NOT NULL, argv TEXT NOT NULL);"
    "CREATE TABLE metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " path TEXT NOT NULL, value REAL, unit TEXT, buffers TEXT, PRIMARY KEY(run_id, path)) WITHOUT ROWID;"
    "INSERT INTO runs VALUES(1, 1, 'h', 'probe', '0.1', 'chainprof probe memory');"
    "INSERT INTO metrics VALUES(1, 'memory/triad_bandwidth', 50, 'GB/s', NULL);"
    "PRAGMA user_version = 2;";

static void test_migrate_v2_spread(void **state)
{
    (void)state;
    char dir[] = "/tmp/cp_histv2_XXXXXX", path[128];
    tmp_db(dir, path, sizeof path);
    exec_sql(path, v2_schema);
    hist_db *db;
    cp_error err;
    assert_int_equal(hist_open(path, &db, &err), 0);
    assert_int_equal(user_version(path), 3);
    hist_metrics m = { 0 };
    const hist_metric *x = find(db, 1, "memory/triad_bandwidth", &m);
    CP_ASSERT_NEAR(x->value, 50, 0);
    assert_int_equal(x->spread.rounds, 0); /* recorded before the spread existed */
    assert_true(isnan(x->spread.p10));
    hist_run r;
    assert_int_equal(hist_get_run(db, 1, &r, &err), 0);
    assert_int_equal(r.quiet, -1);
    assert_string_equal(r.quiet_verdict, "");
    hist_run_free(&r);

    /* a new run with its spread and its quietness */
    hist_metrics add = { 0 };
    hist_spread sp;
    hist_spread_none(&sp);
    snprintf(sp.stat, sizeof sp.stat, "best");
    sp.rounds = 5;
    sp.median = 41, sp.p10 = 38, sp.p90 = 45, sp.min = 37, sp.max = 46, sp.cv = 0.07;
    hist_metrics_add_spread(&add, "memory/triad_bandwidth", 46, "GB/s", NULL, &sp);
    hist_metrics_add(&add, "memory/largest_cache_found", 33554432, "bytes");
    char *argv[] = { "chainprof", "probe" };
    hist_run_info info = { 0, "the machine was not quiet: before the probes: other processes used 40.0 %" };
    int64_t id;
    assert_int_equal(hist_record(db, "probe", 2, argv, &add, &info, &id, &err), 0);
    x = find(db, id, "memory/triad_bandwidth", &m);
    assert_string_equal(x->spread.stat, "best");
    assert_int_equal(x->spread.rounds, 5);
    CP_ASSERT_NEAR(x->spread.p90, 45, 0);
    CP_ASSERT_NEAR(x->spread.cv, 0.07, 0);
    x = find(db, id, "memory/largest_cache_found", &m);
    assert_int_equal(x->spread.rounds, 0);
    assert_string_equal(x->spread.stat, "");
    assert_int_equal(hist_get_run(db, id, &r, &err), 0);
    assert_int_equal(r.quiet, 0);
    assert_non_null(strstr(r.quiet_verdict, "other processes used 40.0 %"));
    hist_run_free(&r);
    hist_close(db);
    hist_metrics_free(&m);
    hist_metrics_free(&add);
    rm_dir(dir);
}

static hist_metric metric(double value, const char *unit, int64_t rounds, double p10, double p90)
{
    hist_metric x = { .value = value, .unit = (char *)unit };
    hist_spread_none(&x.spread);
    x.spread.rounds = rounds;
    if (rounds) {
        x.spread.p10 = p10;
        x.spread.p90 = p90;
    }
    return x;
}

static void test_judge(void **state)
{
    (void)state;
    char why[256];
    /* -11 % but the bands overlap: inside the noise, never a regression */
    hist_metric a = metric(45, "GB/s", 5, 38, 46), b = metric(40, "GB/s", 5, 36, 44);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_NO_CHANGE);
    assert_string_equal(why, "inside the noise of both runs: A 38-46, B 36-44 GB/s (p10-p90 of 5 and 5 rounds)");
    /* bands apart: a regression, with both bands said */
    b = metric(30, "GB/s", 5, 28, 32);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_REGRESSION);
    assert_non_null(strstr(why, "-33.3 %, outside the noise of both runs (A 38-46, B 28-32 GB/s)"));
    assert_int_equal(hist_judge(&b, &a, 5, why, sizeof why), HIST_V_IMPROVEMENT);
    /* no spread on either side: the threshold alone, as before schema 3 */
    a = metric(100, "GB/s", 0, 0, 0), b = metric(90, "GB/s", 0, 0, 0);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_REGRESSION);
    assert_non_null(strstr(why, "no spread recorded"));
    b = metric(98, "GB/s", 0, 0, 0);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_WITHIN);
    /* one side with a spread that holds the other's single figure */
    a = metric(100, "us", 50, 80, 130), b = metric(120, "us", 0, 0, 0);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_NO_CHANGE);
    b = metric(200, "us", 0, 0, 0);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_REGRESSION); /* latency doubled */
    /* a best-of value outside its own p10-p90 widens its band */
    double lo, hi;
    a = metric(50, "GB/s", 5, 38, 45);
    assert_true(hist_noise_band(&a, &lo, &hi));
    CP_ASSERT_NEAR(hi, 50, 0);
    b = metric(NAN, "GB/s", 0, 0, 0);
    assert_int_equal(hist_judge(&a, &b, 5, why, sizeof why), HIST_V_UNKNOWN);
    assert_false(hist_bands_overlap(1, 2, 3, NAN));
    assert_string_equal(hist_verdict_name(HIST_V_NO_CHANGE), "no change");
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_coll_path), cmocka_unit_test(test_migrate_v1),
                                        cmocka_unit_test(test_new_db),
                                        cmocka_unit_test(test_migrate_v2_spread), cmocka_unit_test(test_judge) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
