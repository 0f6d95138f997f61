/* test_rd_nsys.c - the Nsight Systems reader against the real exports under
 * ../shared/data/nsys (four export schema versions), checked against SQL
 * queries run here on the same files, and pipit's expected intervals. */
#include "nsys_testutil.h"
#include "readers/reader.h"

#include <sqlite3.h>
#include <unistd.h>

static sqlite3 *open_db(const char *path)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    return db;
}

static bool has_table(sqlite3 *db, const char *t)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL);
    sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
    bool yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return v;
}

/* Sum of kernel durations per (device, stream) in the timeline vs SQL. */
static void check_kernels(sqlite3 *db, const tl_timeline *tl, const char *name)
{
    int64_t n_sql = q1(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    int64_t n = 0, total = 0, grid = 0, block = 0, g, b;
    for (size_t i = 0; i < tl->n_events; i++)
        if (tl->cat[i] == TL_CAT_KERNEL) {
            n++;
            total += tl->dur_ns[i];
            assert_true(tl_arg_int(tl, i, "grid", &g) && tl_arg_int(tl, i, "block", &b));
            grid += g;
            block += b;
        }
    if (n != n_sql)
        fail_msg("%s: %lld kernels, sqlite3 says %lld", name, (long long)n, (long long)n_sql);
    assert_int_equal(total, q1(db, "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    assert_int_equal(grid, q1(db, "SELECT sum(gridX * gridY * gridZ) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    assert_int_equal(block, q1(db, "SELECT sum(blockX * blockY * blockZ) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT deviceId, streamId, sum(end - start), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL "
                           "GROUP BY deviceId, streamId", -1, &st, NULL);
    int groups = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t dev = sqlite3_column_int64(st, 0), stream = sqlite3_column_int64(st, 1);
        int64_t sum = 0, cnt = 0;
        for (size_t t = 0; t < tl->n_tracks; t++) {
            const tl_track *tr = &tl->tracks[t];
            if (tr->key.kind != TL_TRACK_GPU || tr->key.device != dev || tr->key.stream != stream)
                continue;
            for (size_t i = tr->ev_begin; i < tr->ev_end; i++)
                if (tl->cat[i] == TL_CAT_KERNEL) {
                    sum += tl->dur_ns[i];
                    cnt++;
                }
        }
        assert_int_equal(sum, sqlite3_column_int64(st, 2));
        assert_int_equal(cnt, sqlite3_column_int64(st, 3));
        groups++;
    }
    sqlite3_finalize(st);
    assert_true(groups > 0);
}

static void check_memcpy(sqlite3 *db, const tl_timeline *tl)
{
    if (!has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"))
        return;
    static const struct { tl_copy_dir dir; const char *kinds; } dirs[] = {
        { TL_COPY_H2D, "1, 11" }, { TL_COPY_D2H, "2, 12" }, { TL_COPY_D2D, "8, 13" },
        { TL_COPY_P2P, "10" }, { TL_COPY_H2H, "9" },
    };
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT coalesce(sum(bytes), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN (%s)",
                 dirs[d].kinds);
        int64_t want = q1(db, sql), got = 0;
        for (size_t i = 0; i < tl->n_events; i++) {
            int64_t b;
            if (tl->kclass[i] == TL_K_MEMCPY && tl->copy_dir[i] == dirs[d].dir && tl_arg_int(tl, i, "bytes", &b))
                got += b;
        }
        assert_int_equal(got, want);
    }
}

static void check_nvtx(sqlite3 *db, const tl_timeline *tl)
{
    if (!has_table(db, "NVTX_EVENTS"))
        return;
    int64_t want = q1(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71)");
    int64_t got = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        if ((tl->cat[i] == TL_CAT_NVTX || tl->cat[i] == TL_CAT_CPU_OP || tl->cat[i] == TL_CAT_USER_ANNOTATION) &&
            !(tl->flags[i] & TL_F_INSTANT))
            got++;
    assert_int_equal(got, want);
}

static void test_every_export(void **state)
{
    (void)state;
    char buf[1024];
    if (!cp_test_data("nsys", buf, sizeof buf))
        skip();
    for (size_t f = 0; f < sizeof nsys_exports / sizeof nsys_exports[0]; f++) {
        const char *path = cp_test_data(nsys_exports[f], buf, sizeof buf);
        assert_non_null(path);
        tl_timeline *tl = nsys_load(path);
        sqlite3 *db = open_db(path);
        check_kernels(db, tl, nsys_exports[f]);
        check_memcpy(db, tl);
        check_nvtx(db, tl);
        /* API names lose their version suffix */
        for (size_t i = 0; i < tl->n_events; i++)
            if (tl->cat[i] == TL_CAT_CUDA_RUNTIME)
                assert_null(strstr(tl_str(tl, tl->name[i]), "_v7000"));
        sqlite3_close(db);
        tl_free(tl);
    }
}

static void test_two_rank_h100(void **state)
{
    (void)state;
    char buf[1024];
    const char *files[] = { "nsys/nsys-ai/mfu_2gpu_before.sqlite", "nsys/nsys-ai/h100_2gpu_1s.sqlite" };
    for (int f = 0; f < 2; f++) {
        const char *path = cp_test_data(files[f], buf, sizeof buf);
        if (!path)
            skip();
        tl_timeline *tl = nsys_load(path);
        assert_int_equal(tl->n_ranks, 2);
        assert_true(tl->ranks[0].n_events > 1000 && tl->ranks[1].n_events > 1000);
        size_t sendrecv = 0, comm = 0;
        for (size_t i = 0; i < tl->n_events; i++) {
            if (strstr(tl_str(tl, tl->name[i]), "ncclDevKernel_SendRecv")) {
                sendrecv++;
                assert_int_equal(tl->kclass[i], TL_K_COMM);
            }
            comm += tl->kclass[i] == TL_K_COMM;
        }
        if (f == 0)
            assert_true(sendrecv > 0);
        /* the time-sliced capture has kernels whose launches are outside the window */
        if (f == 1)
            assert_true(tl->diag.count[DIAG_UNMATCHED_CORRELATION] >= 2 * 905);
        (void)comm;
        /* each process is its own rank, on one UTC clock */
        assert_true(tl->ranks[0].meta.has_base_time);
        assert_true(tl->t0_ns > 1700000000000000000LL);
        tl_free(tl);
    }
}

/* pipit's golden intervals: CSV rows Name,...,Event Type,Timestamp (ns) */
static void check_csv(const tl_timeline *tl, const char *csv_path, bool gpu)
{
    FILE *f = fopen(csv_path, "r");
    assert_non_null(f);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, f));
    int64_t base = tl->ranks[0].meta.base_time_ns;
    size_t rows = 0, matched = 0;
    while (fgets(line, sizeof line, f)) {
        char *fields[16];
        int nf = 0;
        for (char *p = line; nf < 16;) {
            fields[nf++] = p;
            char *c = strchr(p, ',');
            if (!c)
                break;
            *c = 0;
            p = c + 1;
        }
        int ev_type = gpu ? 5 : 4, ts_col = gpu ? 6 : 5, match_col = gpu ? 8 : 7;
        if (nf <= match_col || strcmp(fields[ev_type], "Enter") != 0)
            continue;
        rows++;
        int64_t start = strtoll(fields[ts_col], NULL, 10), end = strtoll(fields[match_col], NULL, 10);
        char name[512];
        snprintf(name, sizeof name, "%s", fields[0]);
        if (!gpu)
            rd_nsys_normalize_api(name);
        for (size_t i = 0; i < tl->n_events; i++) {
            if (tl->ts_ns[i] - base != start || tl_end_ns(tl, i) - base != end)
                continue;
            bool on_gpu = tl->tracks[tl->track[i]].key.kind == TL_TRACK_GPU;
            if (on_gpu != gpu)
                continue;
            const char *nm = tl_str(tl, tl->name[i]);
            if (gpu) {
                const char *sn = tl_arg_str(tl, i, "short_name");
                bool is_copy = !strncmp(fields[2], "CUDA_MEMCPY", 11);
                if (is_copy ? tl->kclass[i] != TL_K_MEMCPY : !(sn && !strcmp(sn, name)))
                    continue;
                if (tl->tracks[tl->track[i]].key.stream != strtoll(fields[1], NULL, 10))
                    continue;
            } else if (strcmp(nm, name) != 0) {
                continue;
            }
            matched++;
            break;
        }
    }
    fclose(f);
    assert_true(rows > 1000);
    if (matched != rows)
        fail_msg("%s: %zu of %zu intervals matched", csv_path, matched, rows);
}

static void test_pipit_intervals(void **state)
{
    (void)state;
    char buf[1024], csv[1024];
    const char *path = cp_test_data("nsys/pipit/perlmutter-cloverleaf-cuda.sqlite", buf, sizeof buf);
    if (!path)
        skip();
    tl_timeline *tl = nsys_load(path);
    assert_non_null(cp_test_data("nsys/pipit/cloverleaf_gpu_trace.csv", csv, sizeof csv));
    check_csv(tl, csv, true);
    assert_non_null(cp_test_data("nsys/pipit/cloverleaf-cuda_api_trace.csv", csv, sizeof csv));
    check_csv(tl, csv, false);
    tl_free(tl);
}

static void test_helpers(void **state)
{
    (void)state;
    char a[] = "cudaLaunchKernel_v7000", b[] = "cuLaunchKernel", c[] = "cudaMalloc_v3020", d[] = "foo_v";
    assert_string_equal(rd_nsys_normalize_api(a), "cudaLaunchKernel");
    assert_string_equal(rd_nsys_normalize_api(b), "cuLaunchKernel");
    assert_string_equal(rd_nsys_normalize_api(c), "cudaMalloc");
    assert_string_equal(rd_nsys_normalize_api(d), "foo_v");
    assert_int_equal(rd_nsys_torch_op_len("aten::mm, seq = 3, op_id = 17"), 8);
    assert_int_equal(rd_nsys_torch_op_len("aten::to, op_id = 317177"), 8);
    assert_int_equal(rd_nsys_torch_op_len("forward"), 0);
    assert_int_equal(rd_nsys_torch_op_len("aten::relu"), 10);

    /* NCCL's ncclAllReduce schema: comm id (u64) @0, size (size_t) @8, op @16 */
    rd_nvtx_entry e[] = { { 18, 0, "NCCL communicator ID" }, { 22, 8, "Message size [bytes]" },
                          { 5, 16, "Rank" }, { 20, 20, "too far" } };
    uint8_t blob[24] = { 0 };
    blob[0] = 0xEF;
    blob[8] = 0x00;
    blob[9] = 0x10; /* 4096 */
    blob[16] = 0xFE; /* int32 -2 */
    blob[17] = 0xFF;
    blob[18] = 0xFF;
    blob[19] = 0xFF;
    rd_nvtx_value v[8];
    size_t skipped;
    size_t n = rd_nvtx_decode(e, 4, blob, sizeof blob, v, 8, &skipped);
    assert_int_equal(n, 3);
    assert_int_equal(skipped, 1);
    assert_int_equal(v[0].i, 0xEF);
    assert_int_equal(v[1].i, 4096);
    assert_int_equal(v[2].i, -2);
    uint8_t out[8];
    assert_int_equal(rd_nvtx_blob_bytes((const uint8_t *)"0a1B", 4, 1, out, sizeof out), 2);
    assert_int_equal(out[0], 0x0a);
    assert_int_equal(out[1], 0x1b);
    assert_int_equal(rd_nvtx_blob_bytes((const uint8_t *)"0a1", 3, 1, out, sizeof out), 3);
}

static void test_not_nsys(void **state)
{
    (void)state;
    char path[] = "/tmp/cp_nsys_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", NULL, NULL, NULL);
    sqlite3_close(db);
    tl_builder *b = tl_builder_new(path);
    cp_error err;
    assert_int_equal(rd_nsys_read(path, b, NULL, &err), CP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "without Nsight Systems tables"));
    tl_builder_free(b);
    unlink(path);
    b = tl_builder_new("x.nsys-rep");
    setenv("PATH", "/nonexistent", 1);
    assert_int_equal(rd_nsys_read("job.nsys-rep", b, NULL, &err), CP_ERR_UNAVAILABLE);
    assert_non_null(strstr(err.msg, "nsys export --type sqlite --output job.sqlite job.nsys-rep"));
    tl_builder_free(b);
}

/* Two timelines hold the same events, tracks, strings and args (ids may
 * differ only if the reader interned in a different order: they must not). */
static void assert_same_timeline(const tl_timeline *a, const tl_timeline *b, const char *what)
{
    if (a->n_events != b->n_events || a->n_tracks != b->n_tracks || a->n_ranks != b->n_ranks ||
        a->n_args != b->n_args)
        fail_msg("%s: %zu/%zu events, %zu/%zu tracks, %zu/%zu ranks, %zu/%zu args", what, a->n_events, b->n_events,
                 a->n_tracks, b->n_tracks, a->n_ranks, b->n_ranks, a->n_args, b->n_args);
    assert_int_equal(cp_intern_count(&a->strings), cp_intern_count(&b->strings));
    for (size_t i = 0; i < cp_intern_count(&a->strings); i++)
        assert_string_equal(tl_str(a, (uint32_t)i), tl_str(b, (uint32_t)i));
    for (size_t t = 0; t < a->n_tracks; t++) {
        const tl_track_key *x = &a->tracks[t].key, *y = &b->tracks[t].key;
        assert_true(x->kind == y->kind && x->pid == y->pid && x->tid == y->tid && x->device == y->device &&
                    x->stream == y->stream);
        assert_int_equal(a->tracks[t].name, b->tracks[t].name);
        assert_int_equal(a->tracks[t].ev_begin, b->tracks[t].ev_begin);
    }
    for (size_t i = 0; i < a->n_events; i++) {
        if (a->ts_ns[i] != b->ts_ns[i] || a->dur_ns[i] != b->dur_ns[i] || a->name[i] != b->name[i] ||
            a->corr[i] != b->corr[i] || a->link[i] != b->link[i] || a->cat[i] != b->cat[i] ||
            a->flags[i] != b->flags[i] || a->kclass[i] != b->kclass[i])
            fail_msg("%s: event %zu differs", what, i);
        tl_arg x[64], y[64];
        size_t na = tl_event_args(a, i, x, 64), nb = tl_event_args(b, i, y, 64);
        assert_int_equal(na, nb);
        assert_true(na <= 64);
        if (tl_ext_id(a, i) != tl_ext_id(b, i) || tl_event_cat_name(a, i) != tl_event_cat_name(b, i))
            fail_msg("%s: event %zu's extras differ", what, i);
        for (size_t k = 0; k < na; k++) {
            assert_int_equal(x[k].key, y[k].key);
            assert_int_equal(x[k].type, y[k].type);
            if (x[k].type == TL_ARG_STR)
                assert_int_equal(x[k].v.s, y[k].v.s);
            else
                assert_int_equal(x[k].v.i, y[k].v.i); /* the bits, for NUM too */
        }
    }
}

/* A small export of two processes whose kernel and runtime tables the
 * reader splits into many parts: every split and thread count must give
 * the timeline of one serial read. */
static void write_two_process_export(const char *path, int rows)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT,"
        " correlationId INT, globalPid INT, demangledName INT, shortName INT, gridX INT, gridY INT, gridZ INT,"
        " blockX INT, blockY INT, blockZ INT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, globalTid INT, correlationId INT,"
        " nameId INT);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    char sql[512];
    for (int i = 0; i < 40; i++) { /* kernel names; the later ones first appear late in the table */
        snprintf(sql, sizeof sql, "INSERT INTO StringIds VALUES (%d, 'kernel_%d')", i, i);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_exec(db, "INSERT INTO StringIds VALUES (100, 'cudaLaunchKernel_v7000');"
                     "INSERT INTO StringIds VALUES (101, 'cudaStreamSynchronize_v3020')", NULL, NULL, NULL);
    for (int i = 0; i < rows; i++) {
        int64_t pid = 1000 + i % 2, gpid = pid << 24, gtid = gpid | (int64_t)(i % 3);
        int64_t t = 1000000 + (int64_t)i * 1000 - (i % 7) * 300; /* not in start order */
        snprintf(sql, sizeof sql, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%lld, %lld, %d, %d, %d, %lld, %d, "
                 "%d, %d, 1, 1, 128, 1, 1)", (long long)t + 500, (long long)t + 900 + i % 5, i % 2, 7 + i % 3,
                 i + 1, (long long)gpid, (i * 7) % (1 + i * 40 / rows), i % 40, 1 + i % 9);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
        snprintf(sql, sizeof sql, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%lld, %lld, %lld, %d, %d)",
                 (long long)t, (long long)t + 200, (long long)gtid, i + 1, i % 11 ? 100 : 101);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
}

static void test_split_read(void **state)
{
    (void)state;
    char path[] = "/tmp/cp_nsys_split_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_two_process_export(path, 1000);
    tl_timeline *serial = nsys_load(path);
    assert_int_equal(serial->n_events, 2000);
    assert_int_equal(serial->n_ranks, 2);
    static const struct { int threads; size_t rows; } splits[] = { { 2, 100 }, { 3, 37 }, { 4, 1 }, { 3, 999 } };
    for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
        tl_timeline *split = nsys_load_split(path, splits[k].threads, splits[k].rows);
        assert_same_timeline(serial, split, path);
        tl_free(split);
    }
    tl_free(serial);
    unlink(path);
    /* the real exports, split small */
    for (size_t i = 0; i < sizeof nsys_exports / sizeof nsys_exports[0]; i++) {
        char real[4096];
        if (!cp_test_data(nsys_exports[i], real, sizeof real))
            continue;
        tl_timeline *a = nsys_load(real), *b = nsys_load_split(real, 3, 211);
        assert_same_timeline(a, b, real);
        tl_free(a);
        tl_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers),        cmocka_unit_test(test_not_nsys),
        cmocka_unit_test(test_every_export),   cmocka_unit_test(test_two_rank_h100),
        cmocka_unit_test(test_pipit_intervals), cmocka_unit_test(test_split_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
