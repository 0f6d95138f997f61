/* test_an_layers.c - five-layer attribution on timelines built in code:
 * exact exposed/hidden numbers for a hand-computed step, the priority rules
 * (inter over intra, copies under collectives, storage over host), node
 * membership from --gpus-per-node, and the invariant that the exposed times
 * add up to the step time on every rank and step. */
#include "test_util.h"

#include "analysis/an_verdict.h"

static uint32_t S(tl_builder *b, const char *s) { return cp_intern_s(tl_builder_strings(b), s); }

static void add(tl_builder *b, uint32_t track, tl_cat cat, const char *name, int64_t ts, int64_t dur)
{
    tl_ev ev = { .ts_ns = ts, .dur_ns = dur, .name = S(b, name), .cat = cat, .track = track, .corr = -1,
                 .ext_id = -1 };
    tl_builder_add(b, &ev);
}

static tl_builder *rank_trace(int rank)
{
    tl_builder *b = tl_builder_new("rank.json");
    tl_rank_meta *m = tl_builder_meta(b);
    m->rank = rank;
    m->world_size = 2;
    m->n_devices = 1;
    tl_track_key cpu = { TL_TRACK_CPU, 100, 101, -1, -1 };
    tl_track_key gpu = { TL_TRACK_GPU, 0, 7, 0, 7 };
    tl_track_key gpu2 = { TL_TRACK_GPU, 0, 8, 0, 8 };
    uint32_t tc = tl_builder_track(b, &cpu), tg = tl_builder_track(b, &gpu), tg2 = tl_builder_track(b, &gpu2);
    add(b, tc, TL_CAT_USER_ANNOTATION, "ProfilerStep#4", 0, 1000);
    add(b, tc, TL_CAT_USER_ANNOTATION, "ProfilerStep#5", 1000, 1000);
    add(b, tg, TL_CAT_KERNEL, "ampere_sgemm_128x64_tn", 100, 200);
    add(b, tg2, TL_CAT_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 250, 250);
    tl_builder_arg_str(b, S(b, "Process Group Ranks"), S(b, "[0, 1]"));
    add(b, tg, TL_CAT_GPU_MEMCPY, "Memcpy HtoD (Pageable -> Device)", 550, 50);
    add(b, tg, TL_CAT_GPU_MEMSET, "Memset (Device)", 600, 50);
    add(b, tc, TL_CAT_CPU_OP, "aten::foo", 650, 70);
    add(b, tc, TL_CAT_PYTHON_FUNCTION, "torch/serialization.py(400): torch.save", 700, 150);
    add(b, tc, TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", 900, 50);
    add(b, tc, TL_CAT_PYTHON_FUNCTION, "train.py(1): <module>", 0, 3000); /* spans all: not host */
    add(b, tg, TL_CAT_KERNEL, "after_the_steps", 2500, 100);
    return b;
}

static void run(int gpn, tl_timeline **tl, rep_report **rep, an_ctx *ctx)
{
    tl_builder *bs[2] = { rank_trace(0), rank_trace(1) };
    assert_int_equal(tl_finish(bs, 2, &(tl_finish_opts){ .nthreads = 1 }, tl, NULL), 0);
    *rep = rep_new("chainprof.analyze/1", 0, NULL);
    static an_opts o;
    o = (an_opts){ .gpus_per_node = gpn, .nthreads = 1 };
    memset(ctx, 0, sizeof *ctx);
    assert_int_equal(an_run_all(ctx, *tl, *rep, &o, NULL), 0);
}

static void assert_adds_up(const an_layers_result *lr)
{
    for (size_t i = 0; i < lr->n_ranks; i++) {
        int64_t tot = 0;
        for (size_t s = 0; s < lr->ranks[i].n_steps; s++) {
            const an_step_layers *st = &lr->ranks[i].steps[s];
            int64_t sum = 0;
            for (int k = 0; k < CP_LAYER__COUNT; k++) {
                assert_true(st->exposed_ns[k] >= 0 && st->hidden_ns[k] >= 0);
                sum += st->exposed_ns[k];
            }
            assert_int_equal(sum, st->dur_ns);
            tot += st->dur_ns;
        }
        assert_int_equal(tot, lr->ranks[i].total.dur_ns);
    }
}

static void test_exact_attribution_inter(void **state)
{
    (void)state;
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    run(1, &tl, &rep, &ctx); /* one GPU per node: the group [0,1] spans nodes */
    const an_layers_result *lr = ctx.results[AN_layers];
    assert_non_null(lr);
    assert_int_equal(lr->n_nodes, 2);
    assert_adds_up(lr);
    const an_rank_layers *r0 = &lr->ranks[0];
    assert_int_equal(r0->n_steps, 2);
    const an_step_layers *st = &r0->steps[0];
    assert_int_equal(st->id, 4);
    assert_int_equal(st->dur_ns, 1000);
    assert_int_equal(st->exposed_ns[CP_LAYER_COMPUTE], 250); /* gemm 200 + memset 50 */
    assert_int_equal(st->exposed_ns[CP_LAYER_INTER], 200);
    assert_int_equal(st->exposed_ns[CP_LAYER_INTRA], 50);    /* the H2D copy */
    assert_int_equal(st->exposed_ns[CP_LAYER_STORAGE], 150);
    assert_int_equal(st->exposed_ns[CP_LAYER_HOST], 100);    /* aten::foo 50 + launch 50 */
    assert_int_equal(st->exposed_ns[CP_LAYER_IDLE], 250);
    assert_int_equal(st->hidden_ns[CP_LAYER_INTER], 50);     /* under the gemm */
    assert_int_equal(st->hidden_ns[CP_LAYER_HOST], 20);      /* aten::foo under torch.save */
    assert_int_equal(st->hidden_ns[CP_LAYER_COMPUTE], 0);
    assert_int_equal(st->copy_pageable_ns, 50);
    assert_int_equal(st->host_launch_ns, 50);
    assert_int_equal(st->comm_active_ns, 250);
    assert_int_equal(st->comm_overlap_ns, 50);
    /* the empty step is all idle; nothing after the last step is counted */
    assert_int_equal(r0->steps[1].exposed_ns[CP_LAYER_IDLE], 1000);
    assert_int_equal(r0->total.dur_ns, 2000);
    assert_int_equal(r0->total.exposed_ns[CP_LAYER_COMPUTE], 250);
    /* JSON: per rank and per step */
    rep_node *n = rep_path(rep, "ranks.1.layers.inter.exposed_ns");
    assert_non_null(n);
    assert_int_equal(n->v.i, 200);
    n = rep_path(rep, "ranks.0.steps.0.layers.storage.exposed_ns");
    assert_non_null(n);
    assert_int_equal(n->v.i, 150);
    n = rep_path(rep, "ranks.0.steps.1.id");
    assert_int_equal(n->v.i, 5);
    /* the slowest step as segments [offset, length, layer index] */
    n = rep_path(rep, "slowest_step.ranks.0.segments");
    assert_non_null(n);
    assert_string_equal(n->v.s, "[[0,100,5],[100,200,1],[300,200,3],[500,50,5],[550,50,2],[600,50,1],[650,50,0],"
                                "[700,150,4],[850,50,5],[900,50,0],[950,50,5]]");
    an_ctx_free(&ctx);
    rep_free(rep);
    tl_free(tl);
}

static void test_same_node_is_intra(void **state)
{
    (void)state;
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    run(2, &tl, &rep, &ctx);
    const an_layers_result *lr = ctx.results[AN_layers];
    assert_int_equal(lr->n_nodes, 1);
    assert_adds_up(lr);
    const an_step_layers *st = &lr->ranks[1].steps[0];
    assert_int_equal(st->exposed_ns[CP_LAYER_INTER], 0);
    assert_int_equal(st->exposed_ns[CP_LAYER_INTRA], 250); /* collective 200 + copy 50 */
    assert_int_equal(st->hidden_ns[CP_LAYER_INTRA], 50);
    an_ctx_free(&ctx);
    rep_free(rep);
    tl_free(tl);
}

static void test_default_node_size_is_device_count(void **state)
{
    (void)state;
    tl_timeline *tl;
    rep_report *rep;
    an_ctx ctx;
    run(0, &tl, &rep, &ctx); /* each trace lists one device: one rank per node */
    const an_layers_result *lr = ctx.results[AN_layers];
    assert_int_equal(lr->gpus_per_node, 1);
    assert_string_equal(lr->node_source, "device count");
    assert_int_equal(lr->ranks[0].steps[0].exposed_ns[CP_LAYER_INTER], 200);
    an_ctx_free(&ctx);
    rep_free(rep);
    tl_free(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_attribution_inter),
        cmocka_unit_test(test_same_node_is_intra),
        cmocka_unit_test(test_default_node_size_is_device_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
