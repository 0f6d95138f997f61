/* test_an_memory.c - the memory analyzer on a hand-built rank, and the
 * membw analyzer's series statistics, both hand-computed.
 *
 * CPU thread: op_a [0,100) us allocates 100 B at 0x10 (t 10) and 50 B at
 * 0x20 (t 20); op_b [100,200) frees 0x10 (t 110), allocates 300 B at 0x10
 * again (t 120: the peak, 350 allocated + 1000 from before the trace) and
 * frees 0x99, an address never allocated in the trace (t 130). The totals
 * carried by the events are the allocator's. At the peak: 0x20 (op_a 50 B)
 * and the new 0x10 (op_b 300 B) are live; 1000 B predate the trace. The
 * device has 4300 B: 4096 reserved is 95 %, a MEM_NEAR_CAPACITY finding. */
#include "test_util.h"
#include "an_fixture.h"

static void mem(tl_builder *b, uint32_t track, int64_t ts_us, int64_t addr, int64_t bytes, int64_t alloc,
                int64_t reserved)
{
    tl_ev ev = { .ts_ns = ts_us * US, .name = fx_s(b, "[memory]"), .cat_name = fx_s(b, "cpu_instant_event"),
                 .cat = TL_CAT_OTHER, .track = track, .corr = -1, .ext_id = -1, .flags = TL_F_INSTANT };
    tl_builder_add(b, &ev);
    tl_builder_arg_int(b, fx_s(b, "Device Type"), 1);
    tl_builder_arg_int(b, fx_s(b, "Device Id"), 3);
    tl_builder_arg_int(b, fx_s(b, "Addr"), addr);
    tl_builder_arg_int(b, fx_s(b, "Bytes"), bytes);
    tl_builder_arg_int(b, fx_s(b, "Total Allocated"), alloc);
    tl_builder_arg_int(b, fx_s(b, "Total Reserved"), reserved);
}

static void test_memory(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("mem.json");
    tl_builder_meta(b)->gpu_mem_bytes = 4300; /* 4096 reserved at the peak: 95 % */
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 };
    uint32_t c = tl_builder_track(b, &cpu);
    fx_add(b, c, TL_CAT_CPU_OP, "op_a", 0, 100 * US, -1);
    fx_add(b, c, TL_CAT_CPU_OP, "op_b", 100 * US, 100 * US, -1);
    mem(b, c, 10, 0x10, 100, 1100, 2048);
    mem(b, c, 20, 0x20, 50, 1150, 2048);
    mem(b, c, 110, 0x10, -100, 1050, 2048);
    mem(b, c, 120, 0x10, 300, 1350, 4096);
    mem(b, c, 130, 0x99, -200, 1150, 4096);
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    assert_string_equal(rep_path(r.rep, "ranks.0.memory.0.device_type")->v.s, "cuda");
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.device"), 3);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.events"), 5);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.peak_allocated_bytes"), 1350);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.peak_allocated_ns"), 120 * US);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.peak_reserved_bytes"), 4096);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.final_allocated_bytes"), 1150);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.held_at_peak_bytes"), 350);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.before_trace_bytes"), 1000);
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.frees_unmatched"), 0); /* 0x99's free is after the peak */
    assert_string_equal(rep_path(r.rep, "ranks.0.memory.0.held_by.0.op")->v.s, "op_b");
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.held_by.0.bytes"), 300);
    assert_string_equal(rep_path(r.rep, "ranks.0.memory.0.held_by.1.op")->v.s, "op_a");
    assert_int_equal(fx_num(&r, "ranks.0.memory.0.held_by.1.bytes"), 50);
    assert_int_equal(rep_path(r.rep, "ranks.0.memory.0.series")->n_children, 5);
    /* the OOM risk finding: 95 % reserved is medium (>= 97 % would be high) */
    const rep_node *fs = rep_path(r.rep, "findings");
    const rep_node *mf = NULL;
    for (const rep_node *x = fs ? fs->first : NULL; x; x = x->next)
        if (!strcmp(rep_child(x, "code")->v.s, "MEM_NEAR_CAPACITY"))
            mf = x;
    assert_non_null(mf);
    assert_string_equal(rep_child(mf, "severity")->v.s, "medium");
    fx_done(&r);
}

/* Two overlapping HtoD copies [0,10) 2 GB/s and [5,15) 4 GB/s (exact: 20000
 * B / 10 us = 2 GB/s, 40000 B = 4 GB/s), one DtoH [20,30): samples of HtoD
 * 2, 6, 4, 0 -> positive 2, 6, 4: mean 4, min 2, max 6. */
static void test_membw(void **state)
{
    (void)state;
    tl_builder *b = tl_builder_new("bw.json");
    tl_track_key cpu = { TL_TRACK_CPU, 1, 1, -1, -1 }, g = { TL_TRACK_GPU, 0, 7, 0, 7 };
    uint32_t c = tl_builder_track(b, &cpu), t = tl_builder_track(b, &g);
    static const struct { const char *name; int64_t t0, t1, bytes; double gbps; } cp[] = {
        { "Memcpy HtoD (Pinned -> Device)", 0, 10, 20000, 2 },
        { "Memcpy HtoD (Pinned -> Device)", 5, 15, 40000, 4 },
        { "Memcpy DtoH (Device -> Pinned)", 20, 30, 10000, 1 },
    };
    for (int k = 0; k < 3; k++) {
        fx_add(b, c, TL_CAT_CUDA_RUNTIME, "cudaMemcpyAsync", cp[k].t0 * US, 500, 50 + k);
        fx_add(b, t, TL_CAT_GPU_MEMCPY, cp[k].name, cp[k].t0 * US, (cp[k].t1 - cp[k].t0) * US, 50 + k);
        tl_builder_arg_int(b, fx_s(b, "bytes"), cp[k].bytes);
        tl_builder_arg_num(b, fx_s(b, "memory bandwidth (GB/s)"), cp[k].gbps);
    }
    fx_run r;
    fx_run_all(&r, fx_finish(b));
    for (int x = 0; x < 2; x++) { /* both views agree on whole-us copies */
        const char *p = x ? "ranks.0.exact.memory_bw" : "ranks.0.memory_bw";
        char k[96];
        snprintf(k, sizeof k, "%s.0.kind", p);
        assert_string_equal(rep_path(r.rep, k)->v.s, "Memcpy DtoH");
        snprintf(k, sizeof k, "%s.1.kind", p);
        assert_string_equal(rep_path(r.rep, k)->v.s, "Memcpy HtoD");
        snprintf(k, sizeof k, "%s.1.count", p);
        assert_int_equal(fx_num(&r, k), 3);
        snprintf(k, sizeof k, "%s.1.mean_gbps", p);
        CP_ASSERT_NEAR(fx_num(&r, k), 4, 1e-12);
        snprintf(k, sizeof k, "%s.1.min_gbps", p);
        CP_ASSERT_NEAR(fx_num(&r, k), 2, 1e-12);
        snprintf(k, sizeof k, "%s.1.max_gbps", p);
        CP_ASSERT_NEAR(fx_num(&r, k), 6, 1e-12);
    }
    fx_done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_membw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
