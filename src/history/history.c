/* history.c - the run history database (see history.h for the contract).
 *
 * Schema (version 3, in PRAGMA user_version):
 *   runs(id INTEGER PRIMARY KEY, time_ns, host, command, version, argv,
 *        quiet, quiet_verdict)
 *   metrics(run_id REFERENCES runs ON DELETE CASCADE, path, value, unit,
 *           buffers, stat, rounds, median, p10, p90, min, max, cv,
 *           PRIMARY KEY(run_id, path))
 * Version 3 added the spread of a probe figure's rounds (stat says which
 * statistic value is; NULL rounds: none) and the run's quietness; a
 * version-2 file gets the columns, its rows none of them (NULL), so compare
 * judges them by the threshold alone.
 * Version 1 had no buffers column and collective paths without the buffer
 * kind (coll/busbw/OP/SIZE/PLACE/STAT). Opening a version-1 database
 * migrates it in one IMMEDIATE transaction (a second process opening it at
 * the same time waits, then finds version 2 and does nothing): the column
 * is added when missing, and every legacy collective path gets its kind
 * from the run's command line: "--backend mpi" host, "--backend nccl"
 * device, otherwise "unknown" (auto picked NCCL where a GPU and libnccl
 * were present, which the old rows do not say), so old rows pair with new
 * ones only when the kind is certain. The migration also repairs a
 * version-2 file that an older chainprof reset to version 1 and wrote
 * legacy rows into.
 * Durability and concurrency come from SQLite itself: WAL journal (readers
 * never block the writer), synchronous=NORMAL (a committed run survives a
 * process crash; only a power loss may drop the very last one), a 10 s busy
 * timeout, and BEGIN IMMEDIATE so a writer takes the write lock before it
 * inserts anything rather than failing halfway on an upgrade.
 *
 * CHAINPROF_HISTORY_TEST_PAUSE_MS makes hist_record sleep inside its
 * transaction after half the metrics, so tests can kill a writer mid-write.
 */
#include "history.h"
#include "../base/util.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HIST_STR_(x) #x
#define HIST_STR(x) HIST_STR_(x) /* a number macro as an SQL literal */

struct hist_db {
    sqlite3 *db;
    char path[4096];
};

static int db_fail(hist_db *db, cp_error *err, const char *what)
{
    return cp_error_set(err, CP_ERR_IO, db->path, 0, 0, -1, "history: %s: %s", what, sqlite3_errmsg(db->db));
}

const char *hist_default_path(char *buf, size_t size)
{
    const char *env = getenv("CHAINPROF_HISTORY_DB");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return buf;
    }
    const char *xdg = getenv("XDG_DATA_HOME");
    if (xdg && *xdg) {
        snprintf(buf, size, "%s/chainprof/history.db", xdg);
        return buf;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    snprintf(buf, size, "%s/.local/share/chainprof/history.db", home);
    return buf;
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path, cp_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return cp_error_sys(err, CP_ERR_IO, dir, "history: cannot create the directory");
        *p = '/';
    }
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return cp_error_sys(err, CP_ERR_IO, dir, "history: cannot create the directory");
    return 0;
}

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL, host TEXT NOT NULL,"
    " command TEXT NOT NULL, version TEXT NOT NULL, argv TEXT NOT NULL, quiet INTEGER, quiet_verdict TEXT);"
    "CREATE TABLE IF NOT EXISTS metrics(run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " path TEXT NOT NULL, value REAL, unit TEXT, buffers TEXT, stat TEXT, rounds INTEGER, median REAL, p10 REAL,"
    " p90 REAL, min REAL, max REAL, cv REAL, PRIMARY KEY(run_id, path)) WITHOUT ROWID;";

/* Columns added after version 1: a database of an older version gets the
 * ones it lacks (CREATE TABLE IF NOT EXISTS leaves an old table as it is). */
static const struct { const char *table, *column, *type; } added_cols[] = {
    { "metrics", "buffers", "TEXT" }, /* version 2 */
    { "metrics", "stat", "TEXT" },    { "metrics", "rounds", "INTEGER" }, { "metrics", "median", "REAL" },
    { "metrics", "p10", "REAL" },     { "metrics", "p90", "REAL" },       { "metrics", "min", "REAL" },
    { "metrics", "max", "REAL" },     { "metrics", "cv", "REAL" },        { "runs", "quiet", "INTEGER" },
    { "runs", "quiet_verdict", "TEXT" }, /* version 3 */
};

static int read_int(void *ctx, int n, char **vals, char **names)
{
    (void)names;
    if (n > 0 && vals[0])
        *(int *)ctx = atoi(vals[0]);
    return 0;
}

int hist_coll_path(char *buf, size_t size, const char *probe, const char *metric, const char *op,
                   const char *buffers, uint64_t size_bytes, bool in_place, const char *stat)
{
    int n = snprintf(buf, size, "%s/%s/%s/%s/%llu/%s/%s", probe, metric, op ? op : "?", buffers ? buffers : "unknown",
                     (unsigned long long)size_bytes, in_place ? "in_place" : "out_of_place", stat);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

/* The buffer kind of a legacy (schema 1) collective row, from its run's
 * command line. */
static const char *legacy_kind(const char *argv)
{
    const char *p = strstr(argv, "--backend");
    if (!p)
        return "unknown";
    p += strlen("--backend");
    p += *p == '=' || *p == ' ';
    return !strncmp(p, "nccl", 4) ? "device" : !strncmp(p, "mpi", 3) ? "host" : "unknown";
}

/* The segments of a legacy collective path coll/METRIC/OP/SIZE/PLACE/STAT
 * (exactly six, the size numeric, the placement known); false when path
 * is not one. */
static bool legacy_coll(const char *path, char seg[6][128])
{
    const char *p = path;
    for (int i = 0; i < 6; i++) {
        const char *e = i < 5 ? strchr(p, '/') : p + strlen(p);
        if (!e || e == p || (size_t)(e - p) >= 128 || (i == 5 && strchr(p, '/')))
            return false;
        memcpy(seg[i], p, (size_t)(e - p));
        seg[i][e - p] = 0;
        p = e + 1;
    }
    return !strcmp(seg[0], "coll") && strspn(seg[3], "0123456789") == strlen(seg[3]) &&
           (!strcmp(seg[4], "in_place") || !strcmp(seg[4], "out_of_place"));
}

typedef struct legacy_row {
    int64_t run_id;
    char *old_path, *new_path;
    const char *kind; /* static */
} legacy_row;

/* Add the columns of added_cols the file lacks. 0, or -1 with *msg set. */
static int add_columns(hist_db *db, char **msg)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(added_cols); i++) {
        int has = 0;
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", added_cols[i].table,
                 added_cols[i].column);
        if (sqlite3_exec(db->db, sql, read_int, &has, msg) != SQLITE_OK)
            return -1;
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", added_cols[i].table, added_cols[i].column,
                 added_cols[i].type);
        if (!has && sqlite3_exec(db->db, sql, NULL, NULL, msg) != SQLITE_OK)
            return -1;
    }
    return 0;
}

/* Bring the schema to HIST_SCHEMA_VERSION (see the top). 0, or -1 with
 * *msg set (sqlite3_free it). */
static int upgrade(hist_db *db, char **msg)
{
    _Static_assert(HIST_SCHEMA_VERSION == 3, "the PRAGMA below sets version 3");
    if (sqlite3_exec(db->db, "BEGIN IMMEDIATE", NULL, NULL, msg) != SQLITE_OK)
        return -1;
    int version = -1, rc = 0;
    legacy_row *rows = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db->db, "PRAGMA user_version", read_int, &version, msg) != SQLITE_OK ||
        sqlite3_exec(db->db, schema_sql, NULL, NULL, msg) != SQLITE_OK || add_columns(db, msg) < 0)
        goto fail;
    if (version >= HIST_SCHEMA_VERSION) { /* another process upgraded it meanwhile, or only the id was missing */
        if (sqlite3_exec(db->db, "PRAGMA application_id = " HIST_STR(HIST_APPLICATION_ID) "; COMMIT", NULL, NULL,
                         msg) != SQLITE_OK)
            goto fail;
        goto out;
    }
    if (version == 2) /* the columns were all it needed */
        goto done;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT m.run_id, m.path, r.argv FROM metrics m JOIN runs r ON r.id = m.run_id"
                           " WHERE m.path LIKE 'coll/%' AND m.buffers IS NULL",
                           -1, &st, NULL) != SQLITE_OK)
        goto fail_db;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 1), *argv = (const char *)sqlite3_column_text(st, 2);
        char seg[6][128];
        if (!path || !legacy_coll(path, seg))
            continue;
        const char *kind = legacy_kind(argv ? argv : "");
        char np[1024];
        if (hist_coll_path(np, sizeof np, seg[0], seg[1], seg[2], kind, strtoull(seg[3], NULL, 10),
                           !strcmp(seg[4], "in_place"), seg[5]) < 0)
            continue;
        cp_xgrow((void **)&rows, &cap, n + 1, sizeof *rows);
        rows[n++] = (legacy_row){ sqlite3_column_int64(st, 0), cp_xstrdup(path), cp_xstrdup(np), kind };
    }
    sqlite3_finalize(st);
    st = NULL;
    if (s != SQLITE_DONE)
        goto fail_db;
    if (sqlite3_prepare_v2(db->db, "UPDATE metrics SET path = ?1, buffers = ?2 WHERE run_id = ?3 AND path = ?4", -1,
                           &st, NULL) != SQLITE_OK)
        goto fail_db;
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, rows[i].new_path, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, rows[i].kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, rows[i].run_id);
        sqlite3_bind_text(st, 4, rows[i].old_path, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            goto fail_db;
    }
done:
    if (sqlite3_exec(db->db, "PRAGMA application_id = " HIST_STR(HIST_APPLICATION_ID) "; PRAGMA user_version = 3; COMMIT",
                     NULL, NULL, msg) != SQLITE_OK)
        goto fail;
    goto out;
fail_db:
    *msg = sqlite3_mprintf("%s", sqlite3_errmsg(db->db));
fail:
    sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
    rc = -1;
out:
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++) {
        free(rows[i].old_path);
        free(rows[i].new_path);
    }
    free(rows);
    return rc;
}

/* What an existing file at the --db path is, decided before anything is
 * written to it (issue 21: a user's Nsight export named by mistake must come
 * out byte for byte as it went in, its journal mode included). */
typedef enum { DB_NEW, DB_OURS, DB_LEGACY, DB_FOREIGN, DB_NEWER } db_kind;

static int count_rows(hist_db *db, const char *sql, int *out, char **msg)
{
    *out = -1;
    return sqlite3_exec(db->db, sql, read_int, out, msg) == SQLITE_OK ? 0 : -1;
}

/* Reads only: application_id, user_version and the table names. A file with
 * no pages is new; one with our application id is ours; one with no
 * application id whose only tables are runs and metrics is a history written
 * before chainprof set the id (it gets it on upgrade); anything else is not
 * ours. -1 with *msg when SQLite cannot read it (not a database). */
static int classify(hist_db *db, db_kind *kind, int *version, char **msg)
{
    int app = 0, pages = 0, tables = 0, ours = 0;
    if (count_rows(db, "PRAGMA page_count", &pages, msg) < 0 ||
        count_rows(db, "PRAGMA application_id", &app, msg) < 0 ||
        count_rows(db, "PRAGMA user_version", version, msg) < 0 ||
        count_rows(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                   &tables, msg) < 0 ||
        count_rows(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('runs', 'metrics')",
                   &ours, msg) < 0)
        return -1;
    if (app == HIST_APPLICATION_ID)
        *kind = *version > HIST_SCHEMA_VERSION ? DB_NEWER : DB_OURS;
    else if (app != 0)
        *kind = DB_FOREIGN;
    else if (pages == 0 || (tables == 0 && *version == 0))
        *kind = DB_NEW;
    else if (tables == 2 && ours == 2)
        *kind = *version > HIST_SCHEMA_VERSION ? DB_NEWER : DB_LEGACY;
    else
        *kind = DB_FOREIGN;
    return 0;
}

static int open_db(const char *path, bool create, hist_db **out, cp_error *err)
{
    *out = NULL;
    char def[4096];
    bool named = path != NULL;
    if (!path && !(path = hist_default_path(def, sizeof def)))
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                            "history: no database path: set HOME or XDG_DATA_HOME, or give --db");
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && !create)
        return cp_error_set(err, named ? CP_ERR_USAGE : CP_ERR_IO, path, 0, 0, -1,
                            "history: no history database here%s",
                            named ? " (a run of analyze or probe creates it)" : ": no run recorded yet");
    if (exists && !S_ISREG(st.st_mode))
        return cp_error_set(err, CP_ERR_USAGE, path, 0, 0, -1, "history: not a regular file");
    if (!exists && make_parent_dirs(path, err) < 0)
        return err ? err->code : CP_ERR_IO;
    hist_db *db = cp_xcalloc(1, sizeof *db);
    snprintf(db->path, sizeof db->path, "%s", path);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (exists ? 0 : SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path, &db->db, flags, NULL) != SQLITE_OK) {
        int rc = db_fail(db, err, "cannot open the database");
        hist_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db->db, 10000);
    char *msg = NULL;
    int version = -1, rc = 0;
    db_kind kind;
    if (classify(db, &kind, &version, &msg) < 0) {
        rc = cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1, "history: not a chainprof history database: %s",
                          msg ? msg : "?");
        goto fail;
    }
    if (kind == DB_FOREIGN) {
        rc = cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1,
                          "history: not a chainprof history database (another application's SQLite file); "
                          "left untouched");
        goto fail;
    }
    if (kind == DB_NEWER) {
        rc = cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1,
                          "history: schema version %d is newer than this chainprof's %d; left untouched "
                          "(use a newer chainprof)",
                          version, HIST_SCHEMA_VERSION);
        goto fail;
    }
    /* WAL only now, on a file that is ours: it needs no lock but a brand-new
     * file is created under a race with a second process, which the busy
     * timeout absorbs */
    if (sqlite3_exec(db->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL,
                     NULL, &msg) != SQLITE_OK ||
        /* the schema write only when needed: a reader must not wait for a writer's lock */
        ((kind != DB_OURS || version < HIST_SCHEMA_VERSION) && upgrade(db, &msg) < 0)) {
        rc = cp_error_set(err, CP_ERR_IO, path, 0, 0, -1, "history: cannot prepare the database: %s",
                          msg ? msg : "?");
        goto fail;
    }
    *out = db;
    return 0;
fail:
    sqlite3_free(msg);
    hist_close(db);
    return rc;
}

int hist_open(const char *path, hist_db **out, cp_error *err)
{
    return open_db(path, true, out, err);
}

int hist_open_existing(const char *path, hist_db **out, cp_error *err)
{
    return open_db(path, false, out, err);
}

void hist_close(hist_db *db)
{
    if (!db)
        return;
    sqlite3_close(db->db);
    free(db);
}

static void join_argv(int argc, char **argv, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < argc && len + 1 < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);
}

/* A number or NULL (NaN is unknown, never 0). */
static void bind_num(sqlite3_stmt *st, int col, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

static void bind_text(sqlite3_stmt *st, int col, const char *s)
{
    if (s && *s)
        sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, col);
}

static void bind_spread(sqlite3_stmt *st, const hist_spread *sp)
{
    bind_text(st, 6, sp->stat);
    if (sp->rounds > 0)
        sqlite3_bind_int64(st, 7, sp->rounds);
    else
        sqlite3_bind_null(st, 7);
    const double v[] = { sp->median, sp->p10, sp->p90, sp->min, sp->max, sp->cv };
    for (int k = 0; k < 6; k++)
        bind_num(st, 8 + k, sp->rounds > 0 ? v[k] : NAN);
}

int hist_record(hist_db *db, const char *command, int argc, char **argv, const hist_metrics *m,
                const hist_run_info *info, int64_t *run_id, cp_error *err)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) < 0)
        strcpy(host, "?");
    char args[4096];
    join_argv(argc, argv, args, sizeof args);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;

    if (sqlite3_exec(db->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(db, err, "cannot start a transaction");
    sqlite3_stmt *run = NULL, *met = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db->db,
                           "INSERT INTO runs(time_ns, host, command, version, argv, quiet, quiet_verdict)"
                           " VALUES(?,?,?,?,?,?,?)",
                           -1, &run, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db->db,
                           "INSERT OR REPLACE INTO metrics(run_id, path, value, unit, buffers, stat, rounds, median,"
                           " p10, p90, min, max, cv) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &met, NULL) != SQLITE_OK) {
        rc = db_fail(db, err, "cannot prepare an insert");
        goto out;
    }
    sqlite3_bind_int64(run, 1, now);
    sqlite3_bind_text(run, 2, host, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(run, 3, command, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(run, 4, CHAINPROF_VERSION, -1, SQLITE_STATIC);
    sqlite3_bind_text(run, 5, args, -1, SQLITE_TRANSIENT);
    if (info && info->quiet >= 0)
        sqlite3_bind_int(run, 6, info->quiet);
    else
        sqlite3_bind_null(run, 6);
    bind_text(run, 7, info ? info->quiet_verdict : NULL);
    if (sqlite3_step(run) != SQLITE_DONE) {
        rc = db_fail(db, err, "cannot insert the run");
        goto out;
    }
    int64_t id = sqlite3_last_insert_rowid(db->db);
    const char *pause = getenv("CHAINPROF_HISTORY_TEST_PAUSE_MS");
    for (size_t i = 0; i < m->n; i++) {
        if (pause && i == m->n / 2)
            usleep((useconds_t)(atol(pause) * 1000));
        sqlite3_reset(met);
        sqlite3_bind_int64(met, 1, id);
        sqlite3_bind_text(met, 2, m->v[i].path, -1, SQLITE_STATIC);
        bind_num(met, 3, m->v[i].value);
        bind_text(met, 4, m->v[i].unit);
        bind_text(met, 5, m->v[i].buffers);
        bind_spread(met, &m->v[i].spread);
        if (sqlite3_step(met) != SQLITE_DONE) {
            rc = db_fail(db, err, "cannot insert a metric");
            goto out;
        }
    }
    if (sqlite3_exec(db->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_fail(db, err, "cannot commit the run");
        goto out;
    }
    if (run_id)
        *run_id = id;
out:
    sqlite3_finalize(run);
    sqlite3_finalize(met);
    if (rc)
        sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static double col_num(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static char *col_dup(sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    return cp_xstrdup(s ? (const char *)s : "");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "host,device" -> "device,host": group_concat has no order. */
static void sort_kinds(char *list)
{
    char *copy = cp_xstrdup(list), *parts[16], *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(copy, ",", &save); t && n < CP_ARRAY_LEN(parts); t = strtok_r(NULL, ",", &save))
        parts[n++] = t;
    qsort(parts, n, sizeof *parts, cmp_str);
    size_t len = 0;
    list[0] = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(list + len, "%s%s", i ? "," : "", parts[i]);
    free(copy);
}

static void fill_run(sqlite3_stmt *st, hist_run *r)
{
    r->id = sqlite3_column_int64(st, 0);
    r->time_ns = sqlite3_column_int64(st, 1);
    r->host = col_dup(st, 2);
    r->command = col_dup(st, 3);
    r->version = col_dup(st, 4);
    r->argv = col_dup(st, 5);
    r->n_metrics = sqlite3_column_int64(st, 6);
    r->buffers = col_dup(st, 7);
    sort_kinds(r->buffers);
    r->quiet = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 8);
    r->quiet_verdict = col_dup(st, 9);
}

#define RUN_COLS "r.id, r.time_ns, r.host, r.command, r.version, r.argv, " \
                 "(SELECT count(*) FROM metrics m WHERE m.run_id = r.id), " \
                 "(SELECT group_concat(DISTINCT m.buffers) FROM metrics m WHERE m.run_id = r.id), " \
                 "r.quiet, r.quiet_verdict"

int hist_list(hist_db *db, const char *command, size_t limit, hist_runs *out, cp_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT " RUN_COLS " FROM runs r WHERE (?1 IS NULL OR r.command = ?1)"
                           " ORDER BY r.id DESC LIMIT ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "cannot list runs");
    if (command)
        sqlite3_bind_text(st, 1, command, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, limit ? (int64_t)limit : -1);
    size_t cap = 0;
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        cp_xgrow((void **)&out->v, &cap, out->n + 1, sizeof *out->v);
        fill_run(st, &out->v[out->n++]);
    }
    if (s != SQLITE_DONE) { /* a damaged file: the caller gets nothing to free */
        int rc = db_fail(db, err, "cannot list runs");
        sqlite3_finalize(st);
        hist_runs_free(out);
        return rc;
    }
    sqlite3_finalize(st);
    return 0;
}

void hist_run_free(hist_run *r)
{
    free(r->host);
    free(r->command);
    free(r->version);
    free(r->argv);
    free(r->buffers);
    free(r->quiet_verdict);
    memset(r, 0, sizeof *r);
}

void hist_runs_free(hist_runs *r)
{
    for (size_t i = 0; i < r->n; i++)
        hist_run_free(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof *r);
}

int hist_get_run(hist_db *db, int64_t run_id, hist_run *out, cp_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db, "SELECT " RUN_COLS " FROM runs r WHERE r.id = ?", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "cannot read a run");
    sqlite3_bind_int64(st, 1, run_id);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW)
        fill_run(st, out);
    sqlite3_finalize(st);
    if (s != SQLITE_ROW)
        return cp_error_set(err, CP_ERR_USAGE, db->path, 0, 0, -1, "history: no run %lld",
                            (long long)run_id);
    return 0;
}

int hist_resolve(hist_db *db, const char *spec, int64_t *run_id, cp_error *err)
{
    char *end;
    long long v = strtoll(spec, &end, 10);
    if (*spec && !*end && v > 0) {
        *run_id = v;
        hist_run r;
        int rc = hist_get_run(db, v, &r, err);
        hist_run_free(&r);
        return rc;
    }
    size_t skip = !strcmp(spec, "last") ? 0 : !strcmp(spec, "prev") ? 1 : (size_t)-1;
    if (skip == (size_t)-1)
        return cp_error_set(err, CP_ERR_USAGE, NULL, 0, 0, -1,
                            "history: bad run '%s' (a run id, 'last' or 'prev')", spec);
    hist_runs rs;
    int rc = hist_list(db, NULL, skip + 1, &rs, err);
    if (rc)
        return rc;
    if (rs.n <= skip)
        rc = cp_error_set(err, CP_ERR_USAGE, db->path, 0, 0, -1, "history: no '%s' run (%zu run%s recorded)", spec,
                          rs.n, rs.n == 1 ? "" : "s");
    else
        *run_id = rs.v[skip].id;
    hist_runs_free(&rs);
    return rc;
}

int hist_metrics_of(hist_db *db, int64_t run_id, hist_metrics *out, cp_error *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT path, value, unit, buffers, stat, rounds, median, p10, p90, min, max, cv"
                           " FROM metrics WHERE run_id = ? ORDER BY path",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "cannot read metrics");
    sqlite3_bind_int64(st, 1, run_id);
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *unit = sqlite3_column_text(st, 2), *buffers = sqlite3_column_text(st, 3);
        hist_spread sp;
        hist_spread_none(&sp);
        const unsigned char *stat = sqlite3_column_text(st, 4);
        snprintf(sp.stat, sizeof sp.stat, "%s", stat ? (const char *)stat : "");
        if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
            sp.rounds = sqlite3_column_int64(st, 5);
            double *v[] = { &sp.median, &sp.p10, &sp.p90, &sp.min, &sp.max, &sp.cv };
            for (int k = 0; k < 6; k++)
                *v[k] = col_num(st, 6 + k);
        }
        hist_metrics_add_spread(out, (const char *)sqlite3_column_text(st, 0), col_num(st, 1), (const char *)unit,
                                (const char *)buffers, &sp);
    }
    sqlite3_finalize(st);
    if (s != SQLITE_DONE)
        return db_fail(db, err, "cannot read metrics");
    return 0;
}

void hist_spread_none(hist_spread *s)
{
    memset(s, 0, sizeof *s);
    s->median = s->p10 = s->p90 = s->min = s->max = s->cv = NAN;
}

void hist_metrics_add_spread(hist_metrics *m, const char *path, double value, const char *unit, const char *buffers,
                             const hist_spread *spread)
{
    cp_xgrow((void **)&m->v, &m->cap, m->n + 1, sizeof *m->v);
    hist_metric *x = &m->v[m->n++];
    *x = (hist_metric){ cp_xstrdup(path ? path : "?"), value, unit ? cp_xstrdup(unit) : NULL,
                        buffers ? cp_xstrdup(buffers) : NULL, { .rounds = 0 } };
    if (spread)
        x->spread = *spread;
    else
        hist_spread_none(&x->spread);
}

void hist_metrics_add_kind(hist_metrics *m, const char *path, double value, const char *unit, const char *buffers)
{
    hist_metrics_add_spread(m, path, value, unit, buffers, NULL);
}

void hist_metrics_add(hist_metrics *m, const char *path, double value, const char *unit)
{
    hist_metrics_add_kind(m, path, value, unit, NULL);
}

void hist_metrics_free(hist_metrics *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].path);
        free(m->v[i].unit);
        free(m->v[i].buffers);
    }
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* Table rows are positions, not identities (row 0 of the kernel table is
 * whichever kernel took longest in that run; the launch table lists up to
 * 1000 outliers), so compare would pair unrelated rows, and recording them
 * made an analyze run up to 100000 rows (3 MB) of history. Tables are left
 * out; the numbers outside them (per rank, per step, the verdict) stay. */
static bool recorded(const rep_node *c) { return !(c->type == REP_ARR && (c->flags & REP_F_TABLE)); }

static void flatten(const rep_node *n, char *path, size_t len, size_t size, hist_metrics *m, size_t cap)
{
    size_t idx = 0;
    for (const rep_node *c = n->first; c && m->n < cap; c = c->next, idx++) {
        size_t l = len;
        if (c->key)
            l += (size_t)snprintf(path + len, size - len, "%s%s", len ? "." : "", c->key);
        else
            l += (size_t)snprintf(path + len, size - len, "%s%zu", len ? "." : "", idx);
        if (l >= size || !recorded(c))
            continue; /* path too deep to store, or a table: leave it out */
        if (c->type == REP_OBJ || c->type == REP_ARR)
            flatten(c, path, l, size, m, cap);
        else if (c->type == REP_NUM && isfinite(c->v.d))
            hist_metrics_add(m, path, c->v.d, c->unit);
        else if (c->type == REP_INT)
            hist_metrics_add(m, path, (double)c->v.i, c->unit);
        path[len] = 0;
    }
}

void hist_flatten_report(const rep_report *r, hist_metrics *m, size_t cap)
{
    char path[1024] = "";
    for (const rep_node *c = r->root->first; c && m->n < cap; c = c->next) {
        if (!c->key || !strcmp(c->key, "tool") || !strcmp(c->key, "command") || !recorded(c))
            continue;
        if (c->type == REP_OBJ || c->type == REP_ARR) {
            int l = snprintf(path, sizeof path, "%s", c->key);
            flatten(c, path, (size_t)l, sizeof path, m, cap);
        } else if (c->type == REP_NUM && isfinite(c->v.d)) {
            hist_metrics_add(m, c->key, c->v.d, c->unit);
        } else if (c->type == REP_INT) {
            hist_metrics_add(m, c->key, (double)c->v.i, c->unit);
        }
    }
}

hist_dir hist_unit_direction(const char *unit)
{
    if (!unit || !*unit)
        return HIST_DIR_UNKNOWN;
    if (cp_str_ends(unit, "/s"))
        return HIST_DIR_HIGHER_BETTER;
    static const char *const times[] = { "ns", "us", "ms", "s" };
    for (size_t i = 0; i < CP_ARRAY_LEN(times); i++)
        if (!strcmp(unit, times[i]))
            return HIST_DIR_LOWER_BETTER;
    return HIST_DIR_UNKNOWN;
}

double hist_change_pct(double a, double b)
{
    if (!isfinite(a) || !isfinite(b) || a == 0)
        return NAN;
    return (b - a) / fabs(a) * 100.0;
}

int hist_is_regression(double a, double b, const char *unit, double threshold_pct)
{
    double c = hist_change_pct(a, b);
    if (!isfinite(c))
        return 0;
    switch (hist_unit_direction(unit)) {
    case HIST_DIR_HIGHER_BETTER:
        return c < -threshold_pct;
    case HIST_DIR_LOWER_BETTER:
        return c > threshold_pct;
    default:
        return 0;
    }
}

bool hist_noise_band(const hist_metric *m, double *lo, double *hi)
{
    const hist_spread *s = &m->spread;
    if (s->rounds >= 2 && isfinite(s->p10) && isfinite(s->p90)) {
        *lo = s->p10;
        *hi = s->p90;
        /* the reported value may be a best round outside p10..p90: the band holds it too */
        if (isfinite(m->value)) {
            *lo = fmin(*lo, m->value);
            *hi = fmax(*hi, m->value);
        }
        return true;
    }
    if (!isfinite(m->value))
        return false;
    *lo = *hi = m->value;
    return true;
}

bool hist_bands_overlap(double lo_a, double hi_a, double lo_b, double hi_b)
{
    return isfinite(lo_a) && isfinite(hi_a) && isfinite(lo_b) && isfinite(hi_b) && lo_a <= hi_b && lo_b <= hi_a;
}

const char *hist_verdict_name(hist_verdict v)
{
    switch (v) {
    case HIST_V_NO_CHANGE: return "no change";
    case HIST_V_WITHIN: return "within threshold";
    case HIST_V_REGRESSION: return "regression";
    case HIST_V_IMPROVEMENT: return "improvement";
    default: return "unknown";
    }
}

static bool has_spread(const hist_metric *m)
{
    return m->spread.rounds >= 2 && isfinite(m->spread.p10) && isfinite(m->spread.p90);
}

hist_verdict hist_judge(const hist_metric *a, const hist_metric *b, double threshold_pct, char *why, size_t size)
{
    why[0] = 0;
    if (!isfinite(a->value) || !isfinite(b->value)) {
        snprintf(why, size, "no value on %s", !isfinite(a->value) ? "side A" : "side B");
        return HIST_V_UNKNOWN;
    }
    double la, ha, lb, hb;
    const char *unit = a->unit ? a->unit : "";
    if ((has_spread(a) || has_spread(b)) && hist_noise_band(a, &la, &ha) && hist_noise_band(b, &lb, &hb) &&
        hist_bands_overlap(la, ha, lb, hb)) {
        snprintf(why, size, "inside the noise of both runs: A %.4g-%.4g, B %.4g-%.4g %s (p10-p90 of %lld and %lld rounds)",
                 la, ha, lb, hb, unit, (long long)a->spread.rounds, (long long)b->spread.rounds);
        return HIST_V_NO_CHANGE;
    }
    double c = hist_change_pct(a->value, b->value);
    if (hist_is_regression(a->value, b->value, a->unit, threshold_pct)) {
        if (has_spread(a) && has_spread(b))
            snprintf(why, size, "%+.1f %%, outside the noise of both runs (A %.4g-%.4g, B %.4g-%.4g %s)", c, la, ha, lb,
                     hb, unit);
        else
            snprintf(why, size, "%+.1f %%, beyond the %g %% threshold (no spread recorded)", c, threshold_pct);
        return HIST_V_REGRESSION;
    }
    hist_dir dir = hist_unit_direction(a->unit);
    if (isfinite(c) && ((dir == HIST_DIR_HIGHER_BETTER && c > threshold_pct) ||
                        (dir == HIST_DIR_LOWER_BETTER && c < -threshold_pct))) {
        snprintf(why, size, "%+.1f %%, beyond the %g %% threshold", c, threshold_pct);
        return HIST_V_IMPROVEMENT;
    }
    if (isfinite(c))
        snprintf(why, size, "%+.1f %%", c);
    return HIST_V_WITHIN;
}
