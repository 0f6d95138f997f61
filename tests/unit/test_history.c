/* test_history.c - the history schema's buffer kind and the migration of
 * version-1 databases (written here with the exact version-1 schema, as a
 * chainprof before the buffer kind left them). */
#include "test_util.h"

#include "history/history.h"

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
    assert_int_equal(hist_record(db, "probe", 2, argv, &add, &id, &err), 0);
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
                   "INSERT INTO runs VALUES(6, 6, 'h', 'probe', '0.1', 'chainprof probe coll --backend mpi');"
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
    exec_sql(path, "INSERT INTO runs VALUES(1, 1, 'h', 'probe', 'x', 'a');"
                   "INSERT INTO metrics(run_id, path, value, unit, buffers) VALUES(1, 'p', 1, 'GB/s', 'host');");
    rm_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_coll_path), cmocka_unit_test(test_migrate_v1),
                                        cmocka_unit_test(test_new_db) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
