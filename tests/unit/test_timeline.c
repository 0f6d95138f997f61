/* test_timeline.c - builders, the finish step (ranks, sorting, clock base,
 * correlation links), classification and argument lookup. */
#include "test_util.h"

#include "model/timeline.h"

static uint32_t S(tl_builder *b, const char *s) { return cp_intern_s(tl_builder_strings(b), s); }

static size_t add(tl_builder *b, uint32_t track, tl_cat cat, const char *name, int64_t ts, int64_t dur,
                  int64_t corr)
{
    tl_ev ev = { .ts_ns = ts, .dur_ns = dur, .name = S(b, name), .cat = cat, .track = track,
                 .corr = corr, .ext_id = -1 };
    return tl_builder_add(b, &ev);
}

static tl_builder *make_rank(int rank, int64_t base)
{
    tl_builder *b = tl_builder_new(rank >= 0 ? "rank.json" : "unknown.json");
    tl_rank_meta *m = tl_builder_meta(b);
    m->rank = rank;
    if (base) {
        m->has_base_time = true;
        m->base_time_ns = base;
    }
    tl_track_key cpu = { TL_TRACK_CPU, 100, 101, -1, -1 };
    tl_track_key gpu = { TL_TRACK_GPU, 0, 7, 0, 7 };
    uint32_t tc = tl_builder_track(b, &cpu), tg = tl_builder_track(b, &gpu);
    /* GPU events written before CPU ones and out of order, as Kineto does */
    add(b, tg, TL_CAT_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 5000, 300, 11);
    tl_builder_arg_int(b, S(b, "stream"), 7);
    tl_builder_arg_str(b, S(b, "Collective name"), S(b, "allreduce"));
    add(b, tg, TL_CAT_KERNEL, "ampere_sgemm_128x64_tn", 2000, 1000, 10);
    add(b, tg, TL_CAT_GPU_MEMCPY, "Memcpy HtoD (Pageable -> Device)", 4000, 100, 12);
    add(b, tg, TL_CAT_KERNEL, "orphan_kernel", 9000, 10, 99);
    add(b, tc, TL_CAT_CPU_OP, "aten::mm", 1000, 900, -1);
    add(b, tc, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 1100, 50, 10);
    add(b, tc, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 1200, 50, 11);
    add(b, tc, TL_CAT_CUDA_RUNTIME, "cudaMemcpyAsync", 1300, 50, 12);
    add(b, tc, TL_CAT_USER_ANNOTATION, "ProfilerStep#1", 1000, 9000, -1);
    return b;
}

static void test_finish_sorts_links_and_classifies(void **state)
{
    (void)state;
    tl_builder *bs[2] = { make_rank(1, 0), make_rank(0, 1000000) };
    tl_timeline *tl;
    assert_int_equal(tl_finish(bs, 2, &(tl_finish_opts){ .nthreads = 2 }, &tl, NULL), 0);
    assert_int_equal(tl->n_ranks, 2);
    assert_int_equal(tl->ranks[0].meta.rank, 0);
    assert_int_equal(tl->ranks[1].meta.rank, 1);
    assert_int_equal(tl->n_events, 18);
    assert_int_equal(tl->n_tracks, 4);
    for (size_t t = 0; t < tl->n_tracks; t++) {
        const tl_track *tr = &tl->tracks[t];
        for (size_t i = tr->ev_begin + 1; i < tr->ev_end; i++)
            assert_true(tl->ts_ns[i - 1] <= tl->ts_ns[i]);
        for (size_t i = tr->ev_begin; i < tr->ev_end; i++)
            assert_int_equal(tl->track[i], t);
    }
    /* rank 0 got its clock base; CPU track sorts before GPU; parent first */
    const tl_track *cpu0 = &tl->tracks[tl->ranks[0].track_begin];
    assert_int_equal(cpu0->key.kind, TL_TRACK_CPU);
    assert_int_equal(tl->ts_ns[cpu0->ev_begin], 1000 + 1000000);
    assert_string_equal(tl_str(tl, tl->name[cpu0->ev_begin]), "ProfilerStep#1");
    assert_int_equal(tl->t0_ns, 1000);

    int links = 0;
    for (size_t i = 0; i < tl->n_events; i++) {
        const char *nm = tl_str(tl, tl->name[i]);
        if (!strcmp(nm, "ampere_sgemm_128x64_tn"))
            assert_int_equal(tl->kclass[i], TL_K_COMPUTE);
        if (!strncmp(nm, "ncclDevKernel", 13)) {
            assert_int_equal(tl->kclass[i], TL_K_COMM);
            int64_t stream;
            assert_true(tl_arg_int(tl, i, "stream", &stream));
            assert_int_equal(stream, 7);
            assert_string_equal(tl_arg_str(tl, i, "Collective name"), "allreduce");
            assert_false(tl_arg_get(tl, i, "missing", NULL));
        }
        if (!strncmp(nm, "Memcpy", 6)) {
            assert_int_equal(tl->kclass[i], TL_K_MEMCPY);
            assert_int_equal(tl->copy_dir[i], TL_COPY_H2D);
            assert_true(tl->flags[i] & TL_F_PAGEABLE);
        }
        if (tl->kclass[i] != TL_K_NONE && strcmp(nm, "orphan_kernel") != 0) {
            int64_t l = tl->link[i];
            assert_true(l >= 0);
            assert_int_equal(tl->corr[l], tl->corr[i]);
            assert_int_equal(tl->tracks[tl->track[l]].rank_index, tl->tracks[tl->track[i]].rank_index);
            assert_int_equal(tl->link[l], (int64_t)i);
            assert_true(tl->flags[l] & TL_F_LAUNCH);
            links++;
        }
    }
    assert_int_equal(links, 6);
    assert_int_equal(tl->diag.count[DIAG_UNMATCHED_CORRELATION], 2); /* orphan per rank */
    assert_int_equal(tl_rank_index(tl, 1), 1);
    assert_int_equal(tl_rank_index(tl, 5), -1);

    size_t *sel;
    tl_kclass k = TL_K_COMPUTE;
    size_t n = tl_rank_select(tl, 0, tl_pred_kclass, &k, &sel);
    assert_int_equal(n, 2);
    assert_true(tl->ts_ns[sel[0]] < tl->ts_ns[sel[1]]);
    free(sel);
    tl_free(tl);
}

static void test_ranks_unknown_and_duplicate(void **state)
{
    (void)state;
    tl_builder *bs[4] = { make_rank(2, 0), make_rank(-1, 0), make_rank(2, 0), make_rank(0, 0) };
    tl_timeline *tl;
    assert_int_equal(tl_finish(bs, 4, NULL, &tl, NULL), 0);
    assert_int_equal(tl->n_ranks, 4);
    int32_t want[] = { 0, 2, 3, 4 };
    for (int i = 0; i < 4; i++)
        assert_int_equal(tl->ranks[i].meta.rank, want[i]);
    assert_int_equal(tl->diag.count[DIAG_RANK_UNKNOWN], 1);
    assert_int_equal(tl->diag.count[DIAG_DUPLICATE_RANK], 1);
    assert_int_equal(tl->ranks[2].meta.rank_source + tl->ranks[3].meta.rank_source,
                     TL_RANK_ASSIGNED + TL_RANK_REASSIGNED);
    tl_free(tl);
}

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(tl_classify(TL_CAT_KERNEL, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"), TL_K_COMM);
    assert_int_equal(tl_classify(TL_CAT_KERNEL, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), TL_K_COMM);
    assert_int_equal(tl_classify(TL_CAT_KERNEL, "void at::native::vectorized_elementwise_kernel<4>"), TL_K_COMPUTE);
    assert_int_equal(tl_classify(TL_CAT_GPU_MEMSET, "Memset (Device)"), TL_K_MEMSET);
    assert_int_equal(tl_classify(TL_CAT_CUDA_SYNC, "Event Sync"), TL_K_SYNC);
    assert_int_equal(tl_classify(TL_CAT_CPU_OP, "aten::add"), TL_K_NONE);
    bool pg;
    assert_int_equal(tl_copy_direction("Memcpy DtoH (Device -> Pinned)", &pg), TL_COPY_D2H);
    assert_false(pg);
    assert_int_equal(tl_copy_direction("Memcpy PtoP (Device -> Device)", &pg), TL_COPY_P2P);
    assert_int_equal(tl_copy_direction("CopyHostToDevice", &pg), TL_COPY_H2D);
    assert_int_equal(tl_cat_from_name("gpu_user_annotation", 19), TL_CAT_GPU_USER_ANNOTATION);
    assert_int_equal(tl_cat_from_name("Kernel", 6), TL_CAT_KERNEL);
    assert_int_equal(tl_cat_from_name("weird", 5), TL_CAT_OTHER);
}

static void test_empty(void **state)
{
    (void)state;
    tl_timeline *tl;
    assert_int_equal(tl_finish(NULL, 0, NULL, &tl, NULL), 0);
    assert_int_equal(tl->n_events, 0);
    tl_free(tl);
    tl_builder *b = tl_builder_new("empty.json");
    tl_builder_arg_int(b, 1, 5); /* no event yet: ignored, no crash */
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    assert_int_equal(tl->n_ranks, 1);
    assert_int_equal(tl->n_events, 0);
    tl_free(tl);
}

/* Events fed to one builder, or the first half to one and the second half
 * to a part absorbed into it, freeze to the same timeline: strings, tracks
 * (a name given in the part fills the track), args (string-valued ones
 * remapped), counted damage. */
static void feed(tl_builder *b, int from, int to)
{
    tl_track_key cpu = { TL_TRACK_CPU, 100, 101, -1, -1 }, gpu = { TL_TRACK_GPU, 0, 7, 0, 7 };
    for (int i = from; i < to; i++) {
        uint32_t tc = tl_builder_track(b, &cpu), tg = tl_builder_track(b, &gpu);
        char name[32];
        snprintf(name, sizeof name, "op_%d", i % 5 + (i >= 6 ? 10 : 0)); /* later names appear late */
        add(b, i % 2 ? tg : tc, i % 2 ? TL_CAT_KERNEL : TL_CAT_CPU_OP, name, 1000 - i * 10, 5 + i, i);
        tl_builder_arg_str(b, S(b, "kind"), S(b, i % 3 ? "a" : "b"));
        tl_builder_arg_int(b, S(b, "n"), i);
        if (i == 7)
            tl_builder_track_name(b, tc, S(b, "main thread"));
        if (i == 8)
            diag_count(tl_builder_diag(b), DIAG_NEGATIVE_DUR, "x", -1);
    }
}

static void test_absorb(void **state)
{
    (void)state;
    tl_builder *one = tl_builder_new("x");
    feed(one, 0, 10);
    tl_builder *two = tl_builder_new("x"), *part = tl_builder_new("x");
    feed(two, 0, 4);
    tl_builder_reserve(part, 64, 64);
    feed(part, 4, 10);
    tl_builder_absorb(two, part);
    assert_int_equal(tl_builder_count(two), 10);
    tl_timeline *a, *b;
    assert_int_equal(tl_finish(&one, 1, NULL, &a, NULL), 0);
    assert_int_equal(tl_finish(&two, 1, NULL, &b, NULL), 0);
    assert_int_equal(cp_intern_count(&a->strings), cp_intern_count(&b->strings));
    for (size_t i = 0; i < cp_intern_count(&a->strings); i++)
        assert_string_equal(tl_str(a, (uint32_t)i), tl_str(b, (uint32_t)i));
    assert_int_equal(a->n_tracks, b->n_tracks);
    for (size_t t = 0; t < a->n_tracks; t++)
        assert_int_equal(a->tracks[t].name, b->tracks[t].name);
    assert_string_equal(tl_str(b, b->tracks[0].name), "main thread");
    assert_int_equal(a->n_events, b->n_events);
    for (size_t i = 0; i < a->n_events; i++) {
        assert_int_equal(a->ts_ns[i], b->ts_ns[i]);
        assert_int_equal(a->name[i], b->name[i]);
        assert_string_equal(tl_arg_str(a, i, "kind"), tl_arg_str(b, i, "kind"));
        int64_t x = -1, y = -2;
        assert_true(tl_arg_int(a, i, "n", &x));
        assert_true(tl_arg_int(b, i, "n", &y));
        assert_int_equal(x, y);
    }
    assert_int_equal(a->diag.count[DIAG_NEGATIVE_DUR], 1);
    assert_int_equal(b->diag.count[DIAG_NEGATIVE_DUR], 1);
    tl_free(a);
    tl_free(b);
}

/* The packed extras: every arg type round-trips (also through absorb), the
 * External id and the raw category come back, an event without extras has
 * none; correlation ids beyond 32 bits are renumbered with their links kept. */
static void add_extras_events(tl_builder *b, uint32_t tg, uint32_t tc)
{
    tl_ev k = { .ts_ns = 100, .dur_ns = 10, .name = S(b, "gemm"), .cat = TL_CAT_KERNEL, .track = tg,
                .corr = INT64_C(5000000000), .ext_id = 77, .cat_name = S(b, "Kernel") };
    tl_builder_add(b, &k);
    tl_arg args[] = { { .key = S(b, "i"), .type = TL_ARG_INT, .v.i = -123456789012345 },
                      { .key = S(b, "d"), .type = TL_ARG_NUM, .v.d = 18.962963 },
                      { .key = S(b, "s"), .type = TL_ARG_STR, .v.s = S(b, "text") },
                      { .key = S(b, "b"), .type = TL_ARG_BOOL, .v.i = 1 } };
    tl_builder_args(b, args, 4);
    tl_ev l = { .ts_ns = 90, .dur_ns = 5, .name = S(b, "cudaLaunchKernel"), .cat = TL_CAT_CUDA_RUNTIME,
                .track = tc, .corr = INT64_C(5000000000), .ext_id = -1, .cat_name = S(b, "cuda_runtime") };
    tl_builder_add(b, &l);
    tl_ev o = { .ts_ns = 95, .dur_ns = 1, .name = S(b, "op"), .cat = TL_CAT_CPU_OP, .track = tc, .corr = 7,
                .ext_id = -1, .cat_name = 0 };
    tl_builder_add(b, &o);
}

static void check_extras(const tl_timeline *tl)
{
    size_t seen = 0;
    for (size_t i = 0; i < tl->n_events; i++) {
        const char *nm = tl_str(tl, tl->name[i]);
        tl_arg a[8];
        size_t n = tl_event_args(tl, i, a, 8);
        if (!strcmp(nm, "gemm")) {
            assert_int_equal(n, 4);
            assert_int_equal(a[0].v.i, -123456789012345);
            assert_true(a[1].type == TL_ARG_NUM && a[1].v.d == 18.962963);
            assert_string_equal(tl_str(tl, a[2].v.s), "text");
            assert_true(a[3].type == TL_ARG_BOOL && a[3].v.i == 1);
            assert_string_equal(tl_arg_str(tl, i, "s"), "text");
            assert_int_equal(tl_ext_id(tl, i), 77);
            assert_string_equal(tl_str(tl, tl_event_cat_name(tl, i)), "Kernel");
            assert_true(tl->link[i] >= 0 && tl->corr[tl->link[i]] == tl->corr[i]);
            seen++;
        } else if (!strcmp(nm, "cudaLaunchKernel")) {
            assert_int_equal(n, 0);
            assert_int_equal(tl_ext_id(tl, i), -1);
            assert_string_equal(tl_str(tl, tl_event_cat_name(tl, i)), "cuda_runtime");
            seen++;
        } else if (!strcmp(nm, "op")) {
            assert_int_equal(tl_event_cat_name(tl, i), 0);
            assert_false(tl_arg_get(tl, i, "i", NULL));
            assert_true(tl->corr[i] >= 0); /* renumbered with the others, still an id */
            seen++;
        }
    }
    assert_int_equal(seen, 3);
    assert_int_equal(tl->diag.count[DIAG_RENUMBERED_ID], 1);
}

static void test_extras_and_renumbering(void **state)
{
    (void)state;
    tl_track_key gpu = { TL_TRACK_GPU, 0, 7, 0, 7 }, cpu = { TL_TRACK_CPU, 1, 1, -1, -1 };
    tl_builder *b = tl_builder_new("x.json");
    add_extras_events(b, tl_builder_track(b, &gpu), tl_builder_track(b, &cpu));
    tl_timeline *tl;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    check_extras(tl);
    tl_free(tl);
    /* the same events absorbed from a part into an empty builder */
    tl_builder *dst = tl_builder_new("x.json"), *part = tl_builder_new("x.json");
    S(dst, "unrelated string first"); /* other ids in dst than in the part */
    add_extras_events(part, tl_builder_track(part, &gpu), tl_builder_track(part, &cpu));
    tl_builder_absorb(dst, part);
    assert_int_equal(tl_finish(&dst, 1, NULL, &tl, NULL), 0);
    check_extras(tl);
    tl_free(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_sorts_links_and_classifies),
        cmocka_unit_test(test_ranks_unknown_and_duplicate),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_absorb),
        cmocka_unit_test(test_extras_and_renumbering),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
