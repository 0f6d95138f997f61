/* test_base.c - arena, buffers, interning, JSON writer, byte sources, atomic files. */
#include "test_util.h"

#include "base/afile.h"
#include "base/arena.h"
#include "base/buf.h"
#include "base/intern.h"
#include "base/jsonw.h"
#include "base/paths.h"
#include "base/sort.h"
#include "base/src.h"
#include "base/util.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

static void test_arena(void **state)
{
    (void)state;
    cp_arena a;
    cp_arena_init(&a);
    char *p[1000];
    for (int i = 0; i < 1000; i++) {
        p[i] = cp_arena_printf(&a, "item-%d", i);
        assert_int_equal(((uintptr_t)cp_arena_alloc(&a, 8, 8)) % 8, 0);
    }
    void *big = cp_arena_alloc(&a, 1 << 20, 64);
    assert_int_equal((uintptr_t)big % 64, 0);
    memset(big, 1, 1 << 20);
    for (int i = 0; i < 1000; i++) {
        char want[32];
        snprintf(want, sizeof want, "item-%d", i);
        assert_string_equal(p[i], want);
    }
    cp_arena_free(&a);
}

static void test_intern(void **state)
{
    (void)state;
    cp_intern t;
    cp_intern_init(&t);
    assert_int_equal(cp_intern_s(&t, ""), 0);
    uint32_t ids[5000];
    for (int i = 0; i < 5000; i++) {
        char s[32];
        snprintf(s, sizeof s, "kernel_%d", i);
        ids[i] = cp_intern_s(&t, s);
    }
    for (int i = 0; i < 5000; i++) {
        char s[32];
        snprintf(s, sizeof s, "kernel_%d", i);
        assert_int_equal(cp_intern_s(&t, s), ids[i]);
        assert_string_equal(cp_intern_str(&t, ids[i]), s);
        assert_int_equal(cp_intern_find(&t, s, strlen(s)), ids[i]);
    }
    assert_int_equal(cp_intern_count(&t), 5001);
    assert_int_equal(cp_intern_find(&t, "nope", 4), UINT32_MAX);
    /* embedded NUL bytes are part of the key */
    uint32_t a = cp_intern_n(&t, "a\0b", 3), b = cp_intern_n(&t, "a\0c", 3);
    assert_int_not_equal(a, b);
    cp_intern_free(&t);
}

static void test_jsonw(void **state)
{
    (void)state;
    cp_buf b = CP_BUF_INIT;
    cp_jw w;
    cp_jw_init(&w, &b, 0);
    cp_jw_obj_begin(&w);
    cp_jw_key(&w, "s");
    cp_jw_str(&w, "a\"b\\c\n\x01");
    cp_jw_key(&w, "i");
    cp_jw_int(&w, -9223372036854775807LL - 1);
    cp_jw_key(&w, "d");
    cp_jw_double(&w, 0.1);
    cp_jw_key(&w, "whole");
    cp_jw_double(&w, 3);
    cp_jw_key(&w, "nan");
    cp_jw_double(&w, NAN);
    cp_jw_key(&w, "a");
    cp_jw_arr_begin(&w);
    cp_jw_bool(&w, true);
    cp_jw_null(&w);
    cp_jw_arr_end(&w);
    cp_jw_key(&w, "e");
    cp_jw_obj_begin(&w);
    cp_jw_obj_end(&w);
    cp_jw_obj_end(&w);
    assert_string_equal(cp_buf_str(&b), "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"i\":-9223372036854775808,"
                                        "\"d\":0.1,\"whole\":3.0,\"nan\":null,\"a\":[true,null],\"e\":{}}");
    cp_buf_free(&b);
    /* ill-formed UTF-8 (a stray byte, a surrogate, an overlong form, a cut
     * sequence) becomes '?' byte for byte, counted; well-formed passes */
    cp_buf u = CP_BUF_INIT;
    size_t bad = cp_json_escape(&u, "a\xff" "b\xc3\xa9" "\xed\xa0\x80" "\xc0\xaf" "\xe2\x82", 12);
    assert_string_equal(cp_buf_str(&u), "\"a?b\xc3\xa9?????" "??\"");
    assert_int_equal(bad, 8);
    cp_buf_free(&u);
}

static char tmpdir[256];

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void read_back(const char *path, cp_buf *out, bool *truncated)
{
    cp_src *s;
    cp_error err;
    assert_int_equal(cp_src_open(&s, path, &err), 0);
    char chunk[777]; /* odd size: exercises partial reads */
    ssize_t r;
    while ((r = cp_src_read(s, chunk, sizeof chunk, &err)) > 0)
        cp_buf_append(out, chunk, (size_t)r);
    assert_true(r == 0);
    *truncated = cp_src_truncated(s);
    cp_src_close(s);
}

static void test_src_formats(void **state)
{
    (void)state;
    size_t n = 300000;
    char *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + (i * 7 + i / 13) % 26);
    char plain[300], gz[300], zs[300], gz2[300];
    snprintf(plain, sizeof plain, "%s/d.json", tmpdir);
    snprintf(gz, sizeof gz, "%s/d.json.gz", tmpdir);
    snprintf(zs, sizeof zs, "%s/d.json.zst", tmpdir);
    snprintf(gz2, sizeof gz2, "%s/cut.json.gz", tmpdir);
    write_file(plain, data, n);
    /* gzip as two members, as `cat a.gz b.gz` would make */
    gzFile g = gzopen(gz, "wb");
    gzwrite(g, data, (unsigned)(n / 2));
    gzclose(g);
    g = gzopen(gz2, "wb");
    gzwrite(g, data + n / 2, (unsigned)(n - n / 2));
    gzclose(g);
    cp_buf two = CP_BUF_INIT;
    assert_int_equal(cp_src_read_all(gz2, &two, 1 << 30, NULL), 0);
    assert_int_equal(two.len, n - n / 2);
    /* append the second member's compressed bytes to the first file */
    FILE *f2 = fopen(gz2, "rb");
    char raw[1 << 16];
    FILE *f1 = fopen(gz, "ab");
    size_t k;
    while ((k = fread(raw, 1, sizeof raw, f2)) > 0)
        fwrite(raw, 1, k, f1);
    fclose(f1);
    fclose(f2);
    cp_buf_free(&two);
    size_t zcap = ZSTD_compressBound(n);
    void *z = malloc(zcap);
    size_t zn = ZSTD_compress(z, zcap, data, n, 3);
    write_file(zs, z, zn);

    const char *paths[] = { plain, gz, zs };
    for (int i = 0; i < 3; i++) {
        cp_buf b = CP_BUF_INIT;
        bool trunc;
        read_back(paths[i], &b, &trunc);
        assert_int_equal(b.len, n);
        assert_memory_equal(b.data, data, n);
        assert_false(trunc);
        cp_buf_free(&b);
    }
    /* truncated zstd: the prefix comes out and the source says truncated */
    write_file(zs, z, zn / 2);
    cp_buf b = CP_BUF_INIT;
    bool trunc;
    read_back(zs, &b, &trunc);
    assert_true(trunc);
    assert_true(b.len < n);
    assert_memory_equal(b.data, data, b.len);
    cp_buf_free(&b);
    /* truncated gzip (ISA-L or zlib, whichever the build has): the same */
    FILE *fg = fopen(gz, "rb");
    fseek(fg, 0, SEEK_END);
    long gzn = ftell(fg);
    rewind(fg);
    char *gzbytes = malloc((size_t)gzn);
    assert_int_equal(fread(gzbytes, 1, (size_t)gzn, fg), (size_t)gzn);
    fclose(fg);
    write_file(gz, gzbytes, (size_t)gzn / 3);
    b = (cp_buf)CP_BUF_INIT;
    read_back(gz, &b, &trunc);
    assert_true(trunc);
    assert_true(b.len < n);
    assert_memory_equal(b.data, data, b.len);
    cp_buf_free(&b);
    free(gzbytes);
    free(z);
    free(data);
}

static void test_src_missing(void **state)
{
    (void)state;
    cp_src *s;
    cp_error err;
    assert_int_equal(cp_src_open(&s, "/nonexistent/x.json", &err), CP_ERR_IO);
    assert_string_equal(err.file, "/nonexistent/x.json");
    assert_non_null(strstr(err.msg, "No such file"));
    char buf[600];
    assert_non_null(strstr(cp_error_format(&err, buf, sizeof buf), "/nonexistent/x.json: cannot open"));
    assert_int_equal(cp_status_exit_code(CP_ERR_FORMAT), 3);
}

static void test_afile(void **state)
{
    (void)state;
    char p[300];
    snprintf(p, sizeof p, "%s/out.json", tmpdir);
    write_file(p, "old", 3);
    assert_int_equal(cp_afile_write(p, "new content", 11, NULL), 0);
    cp_buf b = CP_BUF_INIT;
    assert_int_equal(cp_src_read_all(p, &b, 100, NULL), 0);
    assert_string_equal(cp_buf_str(&b), "new content");
    cp_buf_free(&b);
    /* a directory that does not exist: error, nothing created */
    cp_error err;
    assert_true(cp_afile_write("/nonexistent-dir/out.json", "x", 1, &err) < 0);
    assert_int_equal(err.code, CP_ERR_IO);
    assert_true(cp_same_file(p, p));
    /* through a symbolic link: the file it names is replaced, the link stays */
    char l[300];
    snprintf(l, sizeof l, "%s/link.json", tmpdir);
    assert_int_equal(symlink(p, l), 0);
    assert_int_equal(cp_afile_write(l, "via link", 8, NULL), 0);
    struct stat st;
    assert_int_equal(lstat(l, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(cp_src_read_all(p, &b, 100, NULL), 0);
    assert_string_equal(cp_buf_str(&b), "via link");
    cp_buf_free(&b);
    /* a dangling link is refused, nothing written */
    snprintf(l, sizeof l, "%s/dangling.json", tmpdir);
    assert_int_equal(symlink("/nonexistent-dir/x.json", l), 0);
    assert_true(cp_afile_write(l, "x", 1, &err) < 0);
    assert_int_equal(lstat(l, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

/* true when dir holds a file whose name contains ".tmp." */
static bool has_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    bool found = false;
    struct dirent *e;
    while (d && (e = readdir(d)))
        found = found || strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return found;
}

/* A writer killed by SIGTERM while its temporary file exists leaves none
 * behind (issue 21): the child writes 256 MiB, the parent kills it as soon
 * as the temporary file appears. */
static void test_afile_signal(void **state)
{
    (void)state;
    char dir[300], p[340];
    snprintf(dir, sizeof dir, "%s/sig", tmpdir);
    mkdir(dir, 0755);
    snprintf(p, sizeof p, "%s/big.json", dir);
    size_t n = (size_t)256 << 20;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *buf = calloc(1, n);
        _exit(buf && cp_afile_write(p, buf, n, NULL) == 0 ? 0 : 2);
    }
    bool seen = false;
    for (int i = 0; i < 2000000 && !seen; i++)
        seen = has_tmp(dir);
    if (seen)
        kill(pid, SIGTERM);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!seen || !WIFSIGNALED(status))
        skip(); /* the write finished before the kill: nothing to check this time */
    assert_false(has_tmp(dir));
    assert_true(access(p, F_OK) != 0); /* and no half-written output */
}

static void test_paths(void **state)
{
    (void)state;
    char d[300], f[400];
    snprintf(d, sizeof d, "%s/traces", tmpdir);
    mkdir(d, 0755);
    for (int i = 3; i >= 0; i--) {
        snprintf(f, sizeof f, "%s/rank-%d.json", d, i);
        write_file(f, "{}", 2);
    }
    snprintf(f, sizeof f, "%s/notes.md", d);
    write_file(f, "x", 1);
    cp_paths p = { 0 };
    assert_int_equal(cp_paths_add(&p, d, NULL, NULL, NULL), 0);
    assert_int_equal(p.n, 5);
    char glob_pat[400];
    snprintf(glob_pat, sizeof glob_pat, "%s/rank-*.json", d);
    assert_int_equal(cp_paths_add(&p, glob_pat, NULL, NULL, NULL), 0);
    cp_paths_sort_unique(&p);
    assert_int_equal(p.n, 5);
    assert_string_equal(cp_path_base(p.v[0]), "notes.md");
    assert_string_equal(cp_path_base(p.v[1]), "rank-0.json");
    cp_error err;
    snprintf(glob_pat, sizeof glob_pat, "%s/none-*.json", d);
    assert_int_equal(cp_paths_add(&p, glob_pat, NULL, NULL, &err), CP_ERR_IO);
    cp_paths_free(&p);
    /* symlink loops are entered once, a file under a second name is taken
     * once, a dangling link is counted as unreadable (issue 21) */
    char l[400];
    snprintf(l, sizeof l, "%s/loop", d);
    assert_int_equal(symlink(".", l), 0);
    snprintf(f, sizeof f, "%s/sub", d);
    mkdir(f, 0755);
    snprintf(l, sizeof l, "%s/sub/up", d);
    assert_int_equal(symlink("..", l), 0);
    snprintf(l, sizeof l, "%s/sub/same.json", d);
    snprintf(f, sizeof f, "%s/rank-0.json", d);
    assert_int_equal(symlink(f, l), 0);
    snprintf(l, sizeof l, "%s/sub/dangling.json", d);
    assert_int_equal(symlink("/nonexistent/x.json", l), 0);
    cp_paths q = { 0 };
    assert_int_equal(cp_paths_add(&q, d, NULL, NULL, NULL), 0);
    assert_int_equal(q.n, 5);
    assert_int_equal(q.n_unreadable, 1);
    assert_string_equal(q.first_skipped, l); /* what the report's unreadable_file names */
    cp_paths_free(&q);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cp_test_base_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static int cmp_kv_ref(const void *a, const void *b)
{
    const cp_kv *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->val > y->val) - (x->val < y->val); /* input position: what a stable sort keeps */
}

/* The radix sort against qsort on a stable reference order: signed keys
 * over the whole range, heavy duplicates, sorted input, small inputs. */
typedef struct pair_rec {
    int32_t a;
    int64_t b;
} pair_rec;

static uint64_t pair_key(const void *rec, int k, const void *ctx)
{
    (void)ctx;
    const pair_rec *r = rec;
    return cp_key_i64(k == 0 ? r->a : r->b);
}

/* reference order of cp_sort_idx2: (k1, k2 descending, index) */
static const int64_t *ref_k1, *ref_k2;
static int cmp_idx2_ref(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (ref_k1[x] != ref_k1[y])
        return ref_k1[x] < ref_k1[y] ? -1 : 1;
    if (ref_k2[x] != ref_k2[y])
        return ref_k2[x] > ref_k2[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* cp_sort_idx2 against qsort on inputs with short tie runs, one tie run
 * longer than the insertion-sort limit, and k1 already in order */
static void test_sort_idx2_random(void **state)
{
    (void)state;
    enum { N = 20000 };
    int64_t *k1 = malloc(N * sizeof *k1), *k2 = malloc(N * sizeof *k2);
    size_t *idx = malloc(N * sizeof *idx), *ref = malloc(N * sizeof *ref);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int mode = 0; mode < 3; mode++) {
        for (size_t i = 0; i < N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            k1[i] = mode == 0 ? (int64_t)(x % 5000) : mode == 1 ? (i < 300 ? 42 : (int64_t)(x % 100000)) : (int64_t)(i / 3);
            k2[i] = (int64_t)(x >> 32 & 7) - 3;
            idx[i] = ref[i] = i;
        }
        ref_k1 = k1, ref_k2 = k2;
        qsort(ref, N, sizeof *ref, cmp_idx2_ref);
        cp_sort_idx2(idx, N, k1, k2, true);
        assert_memory_equal(idx, ref, N * sizeof *idx);
    }
    free(k1), free(k2), free(idx), free(ref);
}

static void test_sort(void **state)
{
    (void)state;
    uint64_t seed = 88172645463325252ull;
    size_t sizes[] = { 0, 1, 2, 63, 64, 65, 1000, 50000 };
    for (size_t si = 0; si < CP_ARRAY_LEN(sizes); si++)
        for (int mode = 0; mode < 4; mode++) {
            size_t n = sizes[si];
            cp_kv *v = malloc((n + 1) * sizeof *v), *ref = malloc((n + 1) * sizeof *ref);
            for (size_t i = 0; i < n; i++) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                /* mode 3: the middle 11-bit digit is the same in every key
                 * (a skipped pass), the digits around it vary */
                int64_t x = mode == 0   ? (int64_t)seed
                            : mode == 1 ? (int64_t)(seed % 7) - 3
                            : mode == 2 ? (int64_t)i
                                        : (int64_t)((seed & 0x7ff) | (UINT64_C(5) << 11) | ((seed >> 40 & 0x7ff) << 22));
                v[i] = (cp_kv){ cp_key_i64(x), i };
            }
            memcpy(ref, v, n * sizeof *v);
            qsort(ref, n, sizeof *ref, cmp_kv_ref);
            uint64_t *u = malloc((n + 1) * sizeof *u);
            for (size_t i = 0; i < n; i++)
                u[i] = v[i].key;
            cp_sort_kv(v, n, NULL);
            assert_memory_equal(v, ref, n * sizeof *v);
            cp_sort_u64(u, n, NULL);
            for (size_t i = 0; i < n; i++)
                assert_true(u[i] == ref[i].key);
            free(u);
            for (size_t i = 1; i < n; i++)
                assert_true(cp_key_to_i64(v[i - 1].key) <= cp_key_to_i64(v[i].key));
            free(v);
            free(ref);
        }
    /* two keys, the second descending, then the index */
    int64_t k1[] = { 5, 1, 5, 1, 5, -2 }, k2[] = { 10, 3, 30, 3, 20, 0 };
    size_t idx[] = { 0, 1, 2, 3, 4, 5 }, want[] = { 5, 1, 3, 2, 4, 0 };
    cp_sort_idx2(idx, 6, k1, k2, true);
    assert_memory_equal(idx, want, sizeof want);
    /* records by two keys */
    pair_rec pr[] = { { 2, 7 }, { -1, 3 }, { 2, -9 }, { -1, 3 }, { 0, 0 } };
    pair_rec pw[] = { { -1, 3 }, { -1, 3 }, { 0, 0 }, { 2, -9 }, { 2, 7 } };
    cp_sort_records(pr, 5, sizeof *pr, 2, pair_key, NULL);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(pr[i].a, pw[i].a);
        assert_int_equal(pr[i].b, pw[i].b);
    }
    /* many records with few distinct keys: the in-place permutation walks
     * long cycles, and equal keys must keep their input order (b counts up) */
    enum { NR = 5000 };
    pair_rec *many = malloc(NR * sizeof *many);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < NR; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        many[i] = (pair_rec){ (int32_t)(x % 37) - 18, i };
    }
    cp_sort_records(many, NR, sizeof *many, 1, pair_key, NULL);
    int seen = 0;
    for (int i = 1; i < NR; i++) {
        assert_true(many[i - 1].a <= many[i].a);
        if (many[i - 1].a == many[i].a)
            assert_true(many[i - 1].b < many[i].b);
    }
    for (int i = 0; i < NR; i++) /* a permutation: every b once */
        seen += many[i].b >= 0 && many[i].b < NR;
    int64_t sum = 0;
    for (int i = 0; i < NR; i++)
        sum += many[i].b;
    assert_int_equal(seen, NR);
    assert_int_equal(sum, (int64_t)NR * (NR - 1) / 2);
    free(many);
    double d[] = { 2.5, -1.0, 0.0, -0.5, 1e300, -1e300 }, dw[] = { -1e300, -1.0, -0.5, 0.0, 2.5, 1e300 };
    cp_sort_f64(d, 6);
    assert_memory_equal(d, dw, sizeof dw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena),       cmocka_unit_test(test_intern),
        cmocka_unit_test(test_jsonw),       cmocka_unit_test(test_src_formats),
        cmocka_unit_test(test_src_missing), cmocka_unit_test(test_afile),
        cmocka_unit_test(test_afile_signal),
        cmocka_unit_test(test_paths),       cmocka_unit_test(test_sort), cmocka_unit_test(test_sort_idx2_random),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
