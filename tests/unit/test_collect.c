/* test_collect.c - the collector in process (src/collect's recorder, steps,
 * regions, NCCL profiler plugin and path classes, compiled into this test so
 * the sanitizer build checks them; the libc and CUDA interposers are left
 * out, as they would wrap this very program): record a step with a region
 * and a collective driven through the profiler plugin as NCCL drives it,
 * from two threads, shut down, and read the file back with the cptrace
 * reader into a timeline. */
#include "test_util.h"

#include "collect/col.h"
#include "collect/col_nprof_abi.h"
#include "model/timeline.h"
#include "readers/rd_cptrace.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const np_v5 ncclProfiler_v5;

static char dir[256];

static void nap_ms(int ms)
{
    struct timespec t = { 0, ms * 1000000L };
    nanosleep(&t, NULL);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cp_test_collect.XXXXXX");
    assert_non_null(mkdtemp(dir));
    setenv("CHAINPROF_OUT", dir, 1);
    setenv("CHAINPROF_MODE", "trace", 1);
    setenv("RANK", "3", 1);
    setenv("WORLD_SIZE", "4", 1);
    setenv("CHAINPROF_HOSTNAME", "testhost", 1);
    setenv("CHAINPROF_CLOCK", "2 12345 678", 1);
    setenv("CHAINPROF_CUPTI", "0", 1);
    setenv("CHAINPROF_FLUSH_MS", "5", 1);
    return col_start() == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the NCCL side: a proxy thread sends two steps to peer 1 ---- */

typedef struct proxy_arg {
    void *ctx, *coll;
} proxy_arg;

static void *proxy_main(void *p)
{
    proxy_arg *a = p;
    np_descr_v5 d = { .type = NP_PROXY_OP, .parent = a->coll, .rank = 3 };
    d.proxy_op = (np_proxy_op){ getpid(), 0, 1, 2, 4096, 1 };
    void *op = NULL, *st = NULL;
    ncclProfiler_v5.start_event(a->ctx, &op, &d);
    assert_non_null(op);
    for (int k = 0; k < 2; k++) {
        np_descr_v5 s = { .type = NP_PROXY_STEP, .parent = op, .rank = 3 };
        s.proxy_step.step = k;
        ncclProfiler_v5.start_event(a->ctx, &st, &s);
        np_state_args_v4 args = { .proxy_step = { 4096 } };
        ncclProfiler_v5.record_event_state(st, 20 /* SendPeerWait_v4 */, &args);
        nap_ms(2);
        ncclProfiler_v5.record_event_state(st, 9 /* SendWait */, &args);
        nap_ms(3);
        ncclProfiler_v5.stop_event(st);
    }
    ncclProfiler_v5.stop_event(op);
    return NULL;
}

static void one_collective(void)
{
    void *ctx = NULL, *api = NULL, *coll = NULL;
    int mask = 0;
    assert_int_equal(ncclProfiler_v5.init(&ctx, 0xabc, &mask, "world", 2, 4, 3, NULL), 0);
    assert_true(mask & NP_COLL);
    assert_true(mask & NP_PROXY_STEP);
    np_descr_v5 a = { .type = NP_COLL_API, .rank = 3 };
    a.coll_api.func = "AllReduce", a.coll_api.count = 1024, a.coll_api.datatype = "ncclFloat32";
    a.coll_api.stream = (void *)0x10;
    ncclProfiler_v5.start_event(ctx, &api, &a);
    np_descr_v5 c = { .type = NP_COLL, .parent = api, .rank = 3 };
    c.coll.seq = 5, c.coll.func = "AllReduce", c.coll.count = 1024, c.coll.datatype = "ncclFloat32";
    c.coll.algo = "RING", c.coll.proto = "LL", c.coll.n_channels = 2;
    ncclProfiler_v5.start_event(ctx, &coll, &c);
    ncclProfiler_v5.stop_event(coll); /* enqueued */
    ncclProfiler_v5.stop_event(api);
    proxy_arg pa = { ctx, coll };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, proxy_main, &pa), 0);
    pthread_join(t, NULL);
    ncclProfiler_v5.finalize(ctx);
}

/* ---- reading it back ---- */

static tl_timeline *read_back(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char path[600] = "";
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".cptrace") && !strstr(e->d_name, ".part"))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    closedir(d);
    assert_true(strstr(path, "/rank3.testhost.") != NULL);
    tl_builder *b = tl_builder_new(path);
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(rd_cptrace_read(path, b, NULL, &err), 0);
    tl_timeline *tl = NULL;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    return tl;
}

static size_t find(const tl_timeline *tl, const char *name)
{
    for (size_t i = 0; i < tl->n_events; i++)
        if (!strcmp(tl_str(tl, tl->name[i]), name))
            return i;
    fail_msg("no event %s", name);
    return 0;
}

static int64_t arg_int(const tl_timeline *tl, size_t ev, const char *key)
{
    int64_t v = INT64_MIN;
    if (!tl_arg_int(tl, ev, key, &v))
        fail_msg("event %s has no int arg %s", tl_str(tl, tl->name[ev]), key);
    return v;
}

static void test_roundtrip(void **state)
{
    (void)state;
    assert_int_equal(chainprof_active(), 1);
    uint32_t fwd = chainprof_name("forward");
    assert_int_not_equal(fwd, 0);
    assert_int_equal(chainprof_name("forward"), fwd); /* interned once */
    chainprof_step_begin(7);
    chainprof_region_begin(fwd, CHAINPROF_REGION_GENERIC);
    nap_ms(1);
    chainprof_region_end();
    one_collective();
    chainprof_step_end();
    col_shutdown();
    assert_int_equal(chainprof_active(), 0);

    tl_timeline *tl = read_back();
    assert_int_equal(tl->n_ranks, 1);
    const tl_rank_meta *m = &tl->ranks[0].meta;
    assert_int_equal(m->rank, 3);
    assert_int_equal(m->world_size, 4);
    assert_string_equal(tl_str(tl, m->hostname), "testhost");
    assert_true(m->has_base_time);
    assert_int_equal(diag_total(&tl->diag), 0);

    size_t step = find(tl, "ProfilerStep#7"), region = find(tl, "forward");
    assert_int_equal(tl->cat[step], TL_CAT_USER_ANNOTATION);
    assert_true(tl->dur_ns[region] >= 1000000);
    assert_true(tl->ts_ns[region] >= tl->ts_ns[step] && tl_end_ns(tl, region) <= tl_end_ns(tl, step));
    assert_int_equal(tl->track[step], tl->track[region]);

    /* the operation: Kineto's collective args, timed by its proxy op */
    size_t op = find(tl, "ncclKernel_AllReduce");
    assert_int_equal(tl->kclass[op], TL_K_COMM);
    assert_string_equal(tl_arg_str(tl, op, "Collective name"), "AllReduce");
    assert_string_equal(tl_arg_str(tl, op, "dtype"), "Float");
    assert_string_equal(tl_arg_str(tl, op, "Process Group Name"), "nccl:0000000000000abc");
    assert_string_equal(tl_arg_str(tl, op, "timing"), "proxy");
    assert_string_equal(tl_arg_str(tl, op, "algorithm"), "RING");
    assert_int_equal(arg_int(tl, op, "In msg nelems"), 1024);
    assert_int_equal(arg_int(tl, op, "Group size"), 4);
    assert_int_equal(arg_int(tl, op, "nNodes"), 2);
    assert_int_equal(arg_int(tl, op, "comm_rank"), 3);
    assert_int_equal(arg_int(tl, op, "Seq"), 5);
    assert_true(tl->dur_ns[op] >= 10000000); /* two steps of 2 + 3 ms */

    /* the proxy op: bytes, time on the wire and waiting for the peer */
    size_t px = find(tl, "ncclProxyOp Send");
    assert_int_equal(arg_int(tl, px, "bytes"), 8192);
    assert_int_equal(arg_int(tl, px, "peer"), 1);
    int64_t wire = arg_int(tl, px, "wire_ns"), wait = arg_int(tl, px, "peer_wait_ns");
    assert_true(wire >= 6000000 && wire < tl->dur_ns[px]);
    assert_true(wait >= 4000000 && wait < tl->dur_ns[px]);
    assert_int_not_equal(tl->track[px], tl->track[step]); /* the proxy thread's track */
    tl_free(tl);
}

static void test_classes(void **state)
{
    (void)state;
    snprintf(col_p.ckpt_dirs, sizeof col_p.ckpt_dirs, "/mnt/ck:/scratch/save/");
    snprintf(col_p.data_dirs, sizeof col_p.data_dirs, "/mnt/ds");
    assert_int_equal(col_io_class_of_path("/mnt/ck/x.bin"), CPT_IOC_CHECKPOINT);
    assert_int_equal(col_io_class_of_path("/mnt/ckpt2/x.bin"), CPT_IOC_CHECKPOINT); /* a name, not the prefix */
    assert_int_equal(col_io_class_of_path("/scratch/save/a/b"), CPT_IOC_CHECKPOINT);
    assert_int_equal(col_io_class_of_path("/mnt/ds/shard-0001"), CPT_IOC_DATASET);
    assert_int_equal(col_io_class_of_path("/home/u/Checkpoints/run1/model"), CPT_IOC_CHECKPOINT);
    assert_int_equal(col_io_class_of_path("/data/imagenet/train/0001.jpg"), CPT_IOC_DATASET);
    assert_int_equal(col_io_class_of_path("/data/ckpt/step10"), CPT_IOC_CHECKPOINT); /* checkpoint wins */
    assert_int_equal(col_io_class_of_path("/x/model.safetensors"), CPT_IOC_CHECKPOINT);
    assert_int_equal(col_io_class_of_path("/x/tokens.NPY"), CPT_IOC_DATASET);
    assert_int_equal(col_io_class_of_path("/usr/lib/python3/dist-packages/distutils-precedence.pth"), CPT_IOC_OTHER);
    assert_int_equal(col_io_class_of_path("/w/data/loader.py"), CPT_IOC_OTHER);
    assert_int_equal(col_io_class_of_path("/w/metadata/notes.txt"), CPT_IOC_OTHER);
    assert_int_equal(col_io_class_of_path("/tmp/log.txt"), CPT_IOC_OTHER);
    col_p.ckpt_dirs[0] = col_p.data_dirs[0] = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_classes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
