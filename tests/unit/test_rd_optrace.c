/* test_rd_optrace.c - the op-timeline reader (OSDI'25 artifact format):
 * the artifact's layout (numeric pid/tid named by "M" events written last,
 * args null or -1) read into the timeline as model/optrace.h lays it out,
 * with exact nanoseconds; sniffing against Kineto; each kind of damage
 * counted; a file that is no op timeline refused with its name. */
#include "test_util.h"

#include "base/src.h"
#include "model/optrace.h"
#include "readers/rd_optrace.h"

static int read_mem(const char *data, const char *name, tl_builder **out, cp_error *err)
{
    tl_builder *b = tl_builder_new(name);
    cp_src *s = cp_src_open_mem(data, strlen(data), name);
    cp_error_clear(err);
    int rc = rd_optrace_read_src(s, name, b, err);
    cp_src_close(s);
    *out = b;
    return rc;
}

static tl_timeline *finish1(tl_builder *b)
{
    tl_timeline *tl = NULL;
    assert_int_equal(tl_finish(&b, 1, NULL, &tl, NULL), 0);
    return tl;
}

static long find_ev(const tl_timeline *tl, const char *name, int64_t ts_ns)
{
    for (size_t i = 0; i < tl->n_events; i++)
        if (!strcmp(tl_str(tl, tl->name[i]), name) && tl->ts_ns[i] == ts_ns)
            return (long)i;
    return -1;
}

static void test_artifact_layout(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/optrace/artifact.json", CP_FIXTURES);
    tl_builder *b = tl_builder_new(path);
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(rd_optrace_read(path, b, NULL, &err), 0);
    assert_int_equal(diag_total(tl_builder_diag(b)), 0);
    tl_timeline *tl = finish1(b);
    assert_int_equal(tl->n_ranks, 1);
    assert_string_equal(tl_str(tl, tl->ranks[0].meta.format), OPTRACE_FORMAT);
    assert_int_equal(tl->n_events, 5);
    /* stage 1's forward: 12.25 us, 848671.6747283936 us long (digits below 1 ns truncated) */
    long f1 = find_ev(tl, "forward-compute", 12250);
    assert_true(f1 >= 0);
    assert_int_equal(tl->dur_ns[f1], 848671674);
    const tl_track *t = &tl->tracks[tl->track[f1]];
    assert_int_equal(t->key.kind, TL_TRACK_CPU);
    assert_int_equal(t->key.pid, 0);
    assert_int_equal(optrace_tid_pp(t->key.tid), 1);
    assert_int_equal(optrace_tid_tp(t->key.tid), 0);
    assert_int_equal(optrace_tid_kind(t->key.tid), OPT_COMPUTE);
    assert_string_equal(tl_str(tl, t->name), "PP rank 1, TP rank 0, compute");
    int64_t v;
    assert_true(tl_arg_int(tl, (size_t)f1, "step", &v));
    assert_int_equal(v, 3);
    assert_true(tl_arg_int(tl, (size_t)f1, "mb_id", &v));
    assert_int_equal(v, 0);
    long r = find_ev(tl, "forward-recv", 11750);
    assert_true(r >= 0);
    assert_int_equal(tl->dur_ns[r], 500);
    assert_int_equal(optrace_tid_kind(tl->tracks[tl->track[r]].key.tid), OPT_PP_COMM);
    assert_true(tl_arg_int(tl, (size_t)r, "mb_id", &v)); /* -1 is the artifact's "unknown": kept as written */
    assert_int_equal(v, -1);
    long rs = find_ev(tl, "grads-reduce-scatter", 900000000);
    assert_true(rs >= 0);
    assert_int_equal(optrace_tid_kind(tl->tracks[tl->track[rs]].key.tid), OPT_DP_COMM);
    assert_false(tl_arg_int(tl, (size_t)rs, "mb_id", &v)); /* null: absent */
    assert_true(tl_arg_int(tl, (size_t)rs, "seq_id", &v));
    tl_free(tl);
}

static void test_sniff(void **state)
{
    (void)state;
    const char *synth = "[\n{\"ph\":\"X\",\"name\":\"forward-compute\",\"pid\":\"DP rank [0]\",\"tid\":\"PP rank 0, TP "
                        "rank 0, compute\",\"ts\":0,\"dur\":1}]";
    const char *numeric = "[{\"name\":\"forward-compute\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2,\"ph\":\"X\","
                          "\"args\":{\"step\":1,\"model_chunk\":0,\"mb_id\":0,\"seq_id\":0}}";
    const char *kineto = "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,"
                         "\"ts\":1,\"dur\":2,\"args\":{\"stream\":7}}]}";
    assert_int_equal(rd_optrace_sniff("a", (const unsigned char *)synth, strlen(synth)), 98);
    assert_int_equal(rd_optrace_sniff("a", (const unsigned char *)numeric, strlen(numeric)), 97);
    assert_int_equal(rd_optrace_sniff("a", (const unsigned char *)kineto, strlen(kineto)), 0);
    const rd_trace_reader *r = rd_detect("a", (const unsigned char *)synth, strlen(synth));
    assert_non_null(r);
    assert_string_equal(r->name, "optrace");
    r = rd_detect("a", (const unsigned char *)kineto, strlen(kineto));
    assert_non_null(r);
    assert_string_equal(r->name, "kineto");
}

#define W0 "\"pid\":\"DP rank [0]\",\"tid\":\"PP rank 0, TP rank 0, compute\""

static void test_damage(void **state)
{
    (void)state;
    const char *data = "[{\"ph\":\"X\",\"name\":\"a\"," W0 ",\"ts\":1,\"dur\":2},"
                       "{\"ph\":\"X\",\"name\":\"no-dur\"," W0 ",\"ts\":5},"
                       "{\"ph\":\"X\",\"name\":\"neg\"," W0 ",\"ts\":6,\"dur\":-4},"
                       "{\"ph\":\"X\"," W0 ",\"ts\":7,\"dur\":1},"
                       "{\"ph\":\"X\",\"name\":\"who\",\"pid\":\"DP rank [0]\",\"tid\":\"PP rank 0, TP rank 0, bogus\","
                       "\"ts\":8,\"dur\":1},"
                       "{\"ph\":\"X\",\"name\":\"bad\"," W0 ",\"ts\":9,\"dur\":1 1},"
                       "{\"ph\":\"X\",\"name\":\"after\"," W0 ",\"ts\":10,\"dur\":1},"
                       "{\"ph\":\"X\",\"name\":\"cut\"," W0 ",\"ts\":11,\"du";
    tl_builder *b;
    cp_error err;
    assert_int_equal(read_mem(data, "damaged.json", &b, &err), 0);
    const diag_set *d = tl_builder_diag(b);
    assert_int_equal(d->count[DIAG_MISSING_DUR], 1);
    assert_int_equal(d->count[DIAG_NEGATIVE_DUR], 1);
    assert_int_equal(d->count[DIAG_BAD_EVENT], 2); /* no name; a thread kind that is none */
    assert_int_equal(d->count[DIAG_DAMAGED_JSON], 1);
    assert_int_equal(d->count[DIAG_TRUNCATED_FILE], 1);
    tl_timeline *tl = finish1(b);
    assert_int_equal(tl->n_events, 4); /* a, no-dur, neg, after */
    assert_true(find_ev(tl, "after", 10000) >= 0);
    assert_int_equal(tl->dur_ns[find_ev(tl, "neg", 6000)], 0);
    tl_free(tl);
}

static void test_not_a_timeline(void **state)
{
    (void)state;
    tl_builder *b;
    cp_error err;
    assert_int_equal(read_mem("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":2}]", "k.json", &b, &err),
                     CP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "no X event of a worker"));
    assert_string_equal(err.file, "k.json");
    tl_builder_free(b);
    assert_int_equal(read_mem("\"text\"", "t.json", &b, &err), CP_ERR_FORMAT);
    tl_builder_free(b);
    assert_int_equal(read_mem("{\"other\": []}", "o.json", &b, &err), CP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "traceEvents"));
    tl_builder_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_artifact_layout),
        cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_not_a_timeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
