/* test_rd_kineto_hta.c - the Kineto reader on HTA's own test traces, read in
 * place from ../shared/data/hta (exit 77 = skip when absent). The expected
 * values are those HTA's tests assert, or counts derived from the same rule
 * HTA applies (cited at each test). */
#include "test_util.h"

#include "base/par.h"
#include "base/src.h"
#include "base/util.h"
#include "readers/rd_kineto.h"

#include <dirent.h>

static uint64_t dcount(const tl_builder *b, diag_code c)
{
    return tl_builder_diag((tl_builder *)b)->count[c];
}

static tl_timeline *finish1(tl_builder *b)
{
    tl_timeline *tl = NULL;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    return tl;
}

static long find_ev(const tl_timeline *tl, const char *name, int64_t corr)
{
    for (size_t i = 0; i < tl->n_events; i++)
        if (strcmp(tl_str(tl, tl->name[i]), name) == 0 && (corr < 0 || tl->corr[i] == corr))
            return (long)i;
    return -1;
}

static const tl_track *track_of(const tl_timeline *tl, size_t ev) { return &tl->tracks[tl->track[ev]]; }

static tl_timeline *read_hta(const char *rel)
{
    char p[1024];
    if (!cp_test_data(rel, p, sizeof p))
        return NULL;
    tl_builder *b = tl_builder_new(p);
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_kineto_read(p, b, NULL, &err);
    if (rc != 0)
        fail_msg("%s: %s", rel, err.msg);
    return finish1(b);
}

typedef struct walk {
    int files, traces, rejected;
} walk;

static void walk_dir(const char *dir, walk *w)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            walk_dir(path, w);
            continue;
        }
        if (!cp_str_ends(path, ".gz") && !cp_str_ends(path, ".json"))
            continue;
        w->files++;
        unsigned char head[RD_SNIFF_BYTES];
        ssize_t got = cp_src_peek(path, head, sizeof head, NULL);
        assert_true(got >= 0);
        int conf = rd_kineto_sniff(path, head, (size_t)got);
        tl_builder *b = tl_builder_new(path);
        cp_error err;
        cp_error_clear(&err);
        int rc = rd_kineto_read(path, b, NULL, &err);
        if (conf >= 50) {
            if (rc != 0)
                fail_msg("%s: %s", path, err.msg);
            if (tl_builder_count(b) == 0)
                fail_msg("%s: no events", path);
            assert_int_equal(dcount(b, DIAG_TRUNCATED_FILE) + dcount(b, DIAG_BAD_EVENT), 0);
            w->traces++;
            tl_timeline *tl = finish1(b);
            tl_free(tl);
        } else { /* HTA's execution trace and memory timeline: other formats */
            assert_int_equal(rc, CP_ERR_FORMAT);
            w->rejected++;
            tl_builder_free(b);
        }
    }
    closedir(d);
}

static void test_hta_every_trace_loads(void **state)
{
    (void)state;
    char p[1024];
    assert_non_null(cp_test_data("hta", p, sizeof p));
    walk w = { 0 };
    walk_dir(p, &w);
    assert_true(w.traces >= 30);
    assert_int_equal(w.rejected, 2);
}

static void test_hta_special_files(void **state)
{
    (void)state;
    tl_timeline *tl = read_hta("hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz");
    assert_non_null(tl);
    assert_int_equal(tl->n_events, 2);
    assert_int_equal(tl->diag.count[DIAG_INT_OVERFLOW_ARG], 1);
    assert_int_equal(tl->ranks[0].meta.rank, 70);
    assert_int_equal(tl->ranks[0].meta.rank_source, TL_RANK_FROM_FILENAME);
    long rp = find_ev(tl, "record_param_comms", -1);
    assert_string_equal(tl_arg_str(tl, (size_t)rp, "Comms Id"), "10159970886766084423");
    tl_free(tl);

    static const char *const no_rank[] = { "hta/rank_unavailable/rank_not_found.json.gz",
                                           "hta/distributed_info_unavailable/distributed_info_not_found.json.gz" };
    for (size_t i = 0; i < CP_ARRAY_LEN(no_rank); i++) {
        tl = read_hta(no_rank[i]);
        assert_int_equal(tl->ranks[0].meta.rank_source, TL_RANK_ASSIGNED);
        assert_int_equal(tl->diag.count[DIAG_RANK_UNKNOWN], 1);
        assert_int_equal(tl->n_events, 2467);
        tl_free(tl);
    }

    tl = read_hta("hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    const tl_rank_meta *m = &tl->ranks[0].meta;
    assert_int_equal(m->rank, 34);
    assert_int_equal(m->rank_source, TL_RANK_FROM_TRACE);
    assert_int_equal(m->world_size, 300);
    assert_int_equal(m->vendor, TL_VENDOR_UNKNOWN);
    assert_int_equal(m->n_devices, 0);
    assert_int_equal(m->n_pgs, 11); /* pg_count says 10; pg_config lists 11 */
    assert_int_equal(m->pgs[0].size, 300);
    assert_int_equal(m->pgs[0].ranks[299], 299);
    assert_string_equal(tl_str(tl, m->backend), "gloo");
    for (size_t t = 0; t < tl->n_tracks; t++)
        assert_int_not_equal(tl->tracks[t].key.kind, TL_TRACK_GPU);
    tl_free(tl);

    tl = read_hta("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    assert_int_equal(tl->ranks[0].meta.vendor, TL_VENDOR_AMD);
    assert_true(tl->ranks[0].meta.has_base_time);
    size_t kernels = 0, linked = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        if (tl->kclass[i] == TL_K_COMPUTE) {
            kernels++;
            linked += tl->link[i] >= 0;
        }
    assert_int_equal(kernels, 14);
    assert_int_equal(linked, 14);
    tl_free(tl);

    tl = read_hta("hta/triton_example/triton_example.json.gz");
    long k = find_ev(tl, "triton_poi_fused_add_cos_sin_0", 35); /* a cpu_op has the same name */
    assert_true(k >= 0 && tl->link[k] >= 0);
    assert_string_equal(tl_str(tl, tl->name[tl->link[k]]), "cuLaunchKernel"); /* a driver launch */
    tl_free(tl);

    tl = read_hta("hta/trace_file_list/inference_rank_1.json.gz"); /* old "Kernel"/"Runtime" names */
    size_t old_kernels = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        old_kernels += tl->kclass[i] == TL_K_COMPUTE && tl->link[i] >= 0;
    assert_int_equal(old_kernels, 4);
    assert_int_equal(tl->ranks[0].meta.rank, 1);
    tl_free(tl);
}

static void test_hta_mtia(void **state)
{
    (void)state;
    tl_timeline *tl = read_hta("hta/mtia_trace_single_rank/mtia_rank_0.json.gz");
    assert_non_null(tl);
    assert_int_equal(tl->ranks[0].meta.vendor, TL_VENDOR_MTIA);
    assert_int_equal(tl->ranks[0].meta.n_pgs, 2);
    /* HTA's launch stats for correlation 423: cpu 435.2 us, gpu 124.768 us, delay 0 (+-2) */
    long launch = -1;
    for (size_t i = 0; i < tl->n_events && launch < 0; i++)
        if (tl->corr[i] == 423 && tl->cat[i] == TL_CAT_CUDA_RUNTIME)
            launch = (long)i;
    assert_true(launch >= 0);
    assert_string_equal(tl_str(tl, tl_event_cat_name(tl, launch)), "mtia_runtime");
    CP_ASSERT_NEAR(tl->dur_ns[launch] / 1e3, 435.2, 2.0);
    long gpu = tl->link[launch];
    assert_true(gpu >= 0);
    assert_int_equal(track_of(tl, (size_t)gpu)->key.kind, TL_TRACK_GPU);
    CP_ASSERT_NEAR(tl->dur_ns[gpu] / 1e3, 124.768, 2.0);
    size_t dma = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        dma += tl->kclass[i] == TL_K_MEMCPY && strcmp(tl_str(tl, tl->name[i]), "dma_request") == 0;
    assert_int_equal(dma, 22361);
    tl_free(tl);
}

static void test_hta_ns_resolution(void **state)
{
    (void)state;
    tl_timeline *tl = read_hta("hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    assert_non_null(tl);
    assert_int_equal(tl->ranks[0].meta.vendor, TL_VENDOR_NVIDIA);
    /* timestamps to the ns: "ts": 1712195495505582.988, "dur": 4.928 */
    long k = -1;
    for (size_t i = 0; i < tl->n_events && k < 0; i++)
        if (tl->corr[i] == 135071 && track_of(tl, i)->key.kind == TL_TRACK_GPU)
            k = (long)i;
    assert_true(k >= 0);
    assert_true(tl->ts_ns[k] == 1712195495505582988LL);
    assert_true(tl->dur_ns[k] == 4928);
    /* HTA's get_gpu_kernels_with_user_annotations: 4876 GPU kernels (kernels,
     * memcpys, memsets) launched before the last profiler step, which HTA drops */
    int64_t last_step = INT64_MIN;
    size_t steps = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        if (tl->cat[i] == TL_CAT_USER_ANNOTATION && strncmp(tl_str(tl, tl->name[i]), "ProfilerStep#", 13) == 0) {
            steps++;
            if (tl->ts_ns[i] > last_step)
                last_step = tl->ts_ns[i];
        }
    assert_int_equal(steps, 5);
    size_t gpu = 0, kept = 0;
    for (size_t i = 0; i < tl->n_events; i++) {
        tl_kclass c = (tl_kclass)tl->kclass[i];
        if (c != TL_K_COMPUTE && c != TL_K_COMM && c != TL_K_MEMCPY && c != TL_K_MEMSET)
            continue;
        gpu++;
        kept += tl->link[i] >= 0 && tl->ts_ns[tl->link[i]] < last_step;
    }
    assert_int_equal(gpu, 6095);
    assert_int_equal(kept, 4876);
    tl_free(tl);
}

static void test_hta_trace_filter(void **state)
{
    (void)state;
    tl_timeline *tl = read_hta("hta/trace_filter/sampled_rank-0.json.gz");
    assert_non_null(tl);
    /* HTA TimeRangeFilter: ts >= start and ts + dur <= end, in us */
    const int64_t t0 = 1682725898237042LL * 1000, t1 = 1682725898240570LL * 1000;
    size_t n = 0;
    for (size_t i = 0; i < tl->n_events; i++)
        n += tl->ts_ns[i] >= t0 && tl_end_ns(tl, i) <= t1;
    assert_int_equal(n, 93);
    assert_int_equal(tl->ranks[0].meta.rank, 0);
    assert_int_equal(tl->ranks[0].meta.world_size, 128);
    tl_free(tl);
}

static void test_hta_nccl(void **state)
{
    (void)state;
    tl_timeline *tl = read_hta("hta/nccl_parser_config/nccl_data.json.gz");
    assert_non_null(tl);
    size_t n = 0;
    long longest = -1;
    for (size_t i = 0; i < tl->n_events; i++)
        if (tl->kclass[i] == TL_K_COMM) {
            n++;
            if (longest < 0 || tl->dur_ns[i] > tl->dur_ns[longest])
                longest = (long)i;
        }
    assert_int_equal(n, 21);
    assert_string_equal(tl_arg_str(tl, (size_t)longest, "Collective name"), "allreduce");
    int64_t v;
    assert_true(tl_arg_int(tl, (size_t)longest, "In msg nelems", &v) && v == 2049000);
    assert_true(tl_arg_int(tl, (size_t)longest, "Out msg nelems", &v) && v == 2049000);
    assert_string_equal(tl_arg_str(tl, (size_t)longest, "Process Group Ranks"), "[0, 1]");
    assert_string_equal(tl_arg_str(tl, (size_t)longest, "Process Group Description"), "default_pg");
    /* baseTimeNanoseconds (after traceEvents) is applied: 1711964646 s + 4458676965.734014 ms */
    assert_true(tl->ts_ns[longest] == 1711964646000000000LL + 4458676965734014LL);
    const tl_rank_meta *m = &tl->ranks[0].meta;
    assert_int_equal(m->n_pgs, 1);
    assert_int_equal(m->pgs[0].size, 2);
    assert_int_equal(m->pgs[0].ranks[0], 0);
    assert_int_equal(m->pgs[0].ranks[1], 1);
    assert_string_equal(tl_str(tl, m->nccl_version), "2.17.1");
    tl_free(tl);
}

/* Files read on parallel threads (as analyze does) give exactly what they
 * give one at a time: the reader keeps no state outside its call. */
typedef struct par_job {
    const char *paths[6];
    tl_builder *b[6];
    int rc[6];
} par_job;

static void par_read(void *ctx, size_t i)
{
    par_job *j = ctx;
    j->b[i] = tl_builder_new(j->paths[i]);
    j->rc[i] = rd_kineto_read(j->paths[i], j->b[i], NULL, NULL);
}

static void test_hta_parallel_reads(void **state)
{
    (void)state;
    static const char *const rel[6] = {
        "hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz",
        "hta/nccl_parser_config/nccl_data.json.gz", "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "hta/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
    };
    static char bufs[6][1024];
    par_job j = { 0 };
    for (size_t i = 0; i < 6; i++)
        assert_non_null(j.paths[i] = cp_test_data(rel[i], bufs[i], sizeof bufs[i]));
    cp_par_for(6, 3, par_read, &j);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(j.rc[i], 0);
        tl_builder *one = tl_builder_new(j.paths[i]);
        assert_int_equal(rd_kineto_read(j.paths[i], one, NULL, NULL), 0);
        assert_int_equal(tl_builder_count(one), tl_builder_count(j.b[i]));
        assert_int_equal(diag_total(tl_builder_diag(one)), diag_total(tl_builder_diag(j.b[i])));
        tl_builder_free(one);
    }
    tl_timeline *tl;
    assert_int_equal(tl_finish(j.b, 6, &(tl_finish_opts){ .nthreads = 2 }, &tl, NULL), 0);
    assert_int_equal(tl->n_ranks, 6);
    assert_int_equal(tl->ranks[0].meta.rank, 0);
    assert_int_equal(tl->ranks[1].meta.rank, 1);
    tl_free(tl);
}

int main(void)
{
    char p[1024];
    if (!cp_test_data("hta", p, sizeof p))
        return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hta_every_trace_loads),
        cmocka_unit_test(test_hta_special_files),
        cmocka_unit_test(test_hta_mtia),
        cmocka_unit_test(test_hta_ns_resolution),
        cmocka_unit_test(test_hta_trace_filter),
        cmocka_unit_test(test_hta_nccl),
        cmocka_unit_test(test_hta_parallel_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
