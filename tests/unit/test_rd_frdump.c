/* test_rd_frdump.c - the bounded unpickler and JSON tree of rd_pyval.h and
 * the Flight Recorder dump reader on it. Pickles are written out opcode by
 * opcode (values from pickletools' opcode table) so each case shows the
 * bytes a pickler emits; the JSON twin of a pickle must give the same tree.
 */
#include "test_util.h"

#include <string.h>

#include "model/evidence.h"
#include "readers/evidence.h"
#include "readers/rd_pyval.h"
#include "analysis/rulebook.h"

/* {"a": [1, -2, 300, 2**40, -(2**70), 3.5, None, True, "x", b"y", ("t", 2)], "b": <memo of the list>} */
static const unsigned char k_pk[] = {
    0x80, 0x02,                 /* PROTO 2 */
    '}', 'q', 0x00,             /* EMPTY_DICT, BINPUT 0 */
    '(',                        /* MARK */
    'X', 1, 0, 0, 0, 'a',       /* BINUNICODE "a" */
    ']', 'q', 0x01,             /* EMPTY_LIST, BINPUT 1 */
    '(',                        /* MARK */
    'K', 1,                     /* BININT1 1 */
    'J', 0xfe, 0xff, 0xff, 0xff, /* BININT -2 */
    'M', 0x2c, 0x01,            /* BININT2 300 */
    0x8a, 6, 0, 0, 0, 0, 0, 1,  /* LONG1 2**40 */
    0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, /* LONG1 -(2**70): beyond int64 */
    'G', 0x40, 0x0c, 0, 0, 0, 0, 0, 0, /* BINFLOAT 3.5 */
    'N', 0x88,                  /* NONE, NEWTRUE */
    0x8c, 1, 'x',               /* SHORT_BINUNICODE "x" */
    'C', 1, 'y',                /* SHORT_BINBYTES b"y" */
    0x8c, 1, 't', 'K', 2, 0x86, /* "t", 2, TUPLE2 */
    'e',                        /* APPENDS */
    'X', 1, 0, 0, 0, 'b',       /* "b" */
    'h', 0x01,                  /* BINGET 1: the same list */
    'u',                        /* SETITEMS */
    '.',                        /* STOP */
};

static void check_tree(const rd_py *root)
{
    assert_non_null(root);
    assert_int_equal(root->type, RD_PY_DICT);
    const rd_py *a = rd_py_get(root, "a");
    assert_int_equal(rd_py_len(a), 11);
    int64_t v;
    assert_true(rd_py_int(rd_py_at(a, 0), &v) && v == 1);
    assert_true(rd_py_int(rd_py_at(a, 1), &v) && v == -2);
    assert_true(rd_py_int(rd_py_at(a, 2), &v) && v == 300);
    assert_true(rd_py_int(rd_py_at(a, 3), &v) && v == (int64_t)1 << 40);
    assert_int_equal(rd_py_at(a, 5)->type, RD_PY_FLOAT);
    assert_true(rd_py_at(a, 5)->v.f == 3.5);
    assert_int_equal(rd_py_at(a, 6)->type, RD_PY_NONE);
    assert_true(rd_py_int(rd_py_at(a, 7), &v) && v == 1);
    assert_string_equal(rd_py_str(rd_py_at(a, 8)), "x");
    assert_string_equal(rd_py_str(rd_py_at(a, 9)), "y");
    assert_true(rd_py_is_seq(rd_py_at(a, 10)));
    assert_string_equal(rd_py_str(rd_py_at(rd_py_at(a, 10), 0)), "t");
}

static void test_pickle_values(void **state)
{
    (void)state;
    rd_py_doc doc;
    cp_error err;
    bool trunc;
    assert_int_equal(rd_py_pickle((const char *)k_pk, sizeof k_pk, "t.pkl", &doc, &trunc, &err), 0);
    assert_false(trunc);
    check_tree(doc.root);
    const rd_py *a = rd_py_get(doc.root, "a");
    assert_true(rd_py_at(a, 4)->big && rd_py_at(a, 4)->v.i == INT64_MIN); /* clamped, flagged */
    assert_ptr_equal(rd_py_get(doc.root, "b"), a); /* the memo shares the node */
    assert_null(rd_py_get(doc.root, "zz"));
    rd_py_doc_free(&doc);
}

/* The JSON form of the same data gives the same tree. */
static void test_json_same_tree(void **state)
{
    (void)state;
    const char *js = "{\"a\": [1, -2, 300, 1099511627776, -1180591620717411303424, 3.5, null, true, \"x\", \"y\", [\"t\", 2]], \"b\": []}";
    rd_py_doc doc;
    cp_error err;
    assert_int_equal(rd_py_json(js, strlen(js), "t.json", &doc, NULL, &err), 0);
    check_tree(doc.root);
    assert_int_equal(rd_py_at(rd_py_get(doc.root, "a"), 4)->type, RD_PY_FLOAT); /* JSON: beyond int64 is a float */
    rd_py_doc_free(&doc);
}

/* Cut inside the list: an error with the offset, flagged as truncated, and
 * what was decoded before the cut is kept. */
static void test_pickle_truncated(void **state)
{
    (void)state;
    rd_py_doc doc;
    cp_error err;
    bool trunc;
    size_t cut = 30; /* inside LONG1 2**40's payload */
    assert_int_equal(rd_py_pickle((const char *)k_pk, cut, "t.pkl", &doc, &trunc, &err), CP_ERR_FORMAT);
    assert_true(trunc);
    assert_true(err.offset > 0 && err.offset <= (long long)cut);
    assert_non_null(strstr(err.msg, "truncated"));
    const rd_py *a = rd_py_get(doc.root, "a");
    assert_int_equal(rd_py_len(a), 3); /* 1, -2, 300 */
    rd_py_doc_free(&doc);
}

static void test_pickle_rejects(void **state)
{
    (void)state;
    rd_py_doc doc;
    cp_error err;
    bool trunc;
    /* a global that is code, not data: named, with its offset */
    const char g[] = "\x80\x02" "cos\nsystem\n" "X\x02\x00\x00\x00ls" "\x85R.";
    assert_int_equal(rd_py_pickle(g, sizeof g - 1, "g.pkl", &doc, &trunc, &err), CP_ERR_FORMAT);
    assert_false(trunc);
    assert_non_null(strstr(err.msg, "os.system"));
    rd_py_doc_free(&doc);
    /* TorchScript's list helper is the identity on its list */
    const char l[] = "\x80\x02" "ctorch.jit._pickle\nbuild_intlist\n" "]K\x07\x61\x85R.";
    assert_int_equal(rd_py_pickle(l, sizeof l - 1, "l.pkl", &doc, &trunc, &err), 0);
    int64_t v;
    assert_true(rd_py_int(rd_py_at(doc.root, 0), &v) && v == 7);
    rd_py_doc_free(&doc);
    /* nesting past the cap */
    char deep[2 + RD_PY_MAX_DEPTH + 8];
    deep[0] = (char)0x80, deep[1] = 2;
    memset(deep + 2, '(', sizeof deep - 2);
    assert_int_equal(rd_py_pickle(deep, sizeof deep, "d.pkl", &doc, &trunc, &err), CP_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "cap"));
    rd_py_doc_free(&doc);
    /* a memo fetch of an index never stored; no PROTO */
    const char m[] = "\x80\x02h\x05.";
    assert_int_equal(rd_py_pickle(m, sizeof m - 1, "m.pkl", &doc, &trunc, &err), CP_ERR_FORMAT);
    rd_py_doc_free(&doc);
    assert_int_equal(rd_py_pickle("(l.", 3, "p0.pkl", &doc, &trunc, &err), CP_ERR_FORMAT);
    rd_py_doc_free(&doc);
}

/* A JSON dump (dump_json's form): entries, groups, peers, states, counts. */
static void test_frdump_json(void **state)
{
    (void)state;
    const char *js =
        "{\"comm_lib_version\": \"2.21.5\", \"entries\": ["
        "{\"collective_seq_id\": 1, \"input_dtypes\": [\"Float\"], \"input_sizes\": [[4, 8]], \"output_dtypes\": [\"Float\"],"
        " \"output_sizes\": [[4, 8]], \"p2p_seq_id\": 0, \"process_group\": [\"0\", \"default_pg\"], \"profiling_name\": \"nccl:all_reduce\","
        " \"record_id\": 0, \"state\": \"completed\", \"time_created_ns\": 5, \"is_p2p\": false, \"new_key\": 1},"
        "{\"collective_seq_id\": 1, \"input_sizes\": [[16]], \"output_sizes\": [[]], \"process_group\": [\"1\", \"pp\"],"
        " \"profiling_name\": \"nccl:send 0->1\", \"record_id\": 1, \"state\": \"started\", \"p2p_seq_id\": 3},"
        "{\"collective_seq_id\": 2, \"process_group\": [\"0\", \"default_pg\"], \"record_id\": 2}"
        "], \"pg_config\": {\"0\": {\"desc\": \"default_pg\", \"name\": \"0\", \"ranks\": \"[0, 1, 2, 3]\"},"
        " \"1\": {\"desc\": \"pp\", \"name\": \"1\", \"ranks\": \"[2, 3]\"}}, \"version\": \"2.10\"}";
    diag_set diag;
    diag_init(&diag);
    void *facts = NULL;
    cp_error err;
    assert_int_equal(rd_ev_parse(EV_FRDUMP, js, strlen(js), "/tmp/fr/nccl_trace_rank_2", &facts, &diag, &err), 0);
    ev_frdump *d = facts;
    assert_int_equal(d->rank, 2);
    assert_string_equal(d->version, "2.10");
    assert_string_equal(d->format, "json");
    assert_int_equal(d->n_pgs, 2);
    uint32_t n;
    const int32_t *m = ev_fr_pg_ranks(d, &d->pgs[1], &n);
    assert_int_equal(n, 2);
    assert_int_equal(m[0], 2);
    assert_int_equal(d->n_entries, 2);
    assert_int_equal(d->bad_entries, 1); /* no profiling_name, no state */
    const ev_fr_entry *e = &d->entries[0], *s = &d->entries[1];
    assert_string_equal(ev_fr_str(d, e->op), "all_reduce");
    assert_string_equal(ev_fr_str(d, e->sizes), "in [[4, 8]] out [[4, 8]]");
    assert_string_equal(ev_fr_str(d, e->in_dtypes), "Float");
    assert_int_equal(e->state, EV_FR_COMPLETED);
    assert_true(e->has_in && !e->is_p2p);
    assert_string_equal(ev_fr_str(d, s->op), "send");
    assert_true(s->is_p2p && s->src == 0 && s->dst == 1 && s->p2p_seq == 3);
    assert_int_equal(s->state, EV_FR_STARTED);
    assert_false(s->has_out);
    assert_true(d->missing_keys >= 2); /* the send lacks dtypes and time_created_ns */
    ev_facts_free(EV_FRDUMP, facts);
}

static void test_sniff(void **state)
{
    (void)state;
    const rd_ev_reader *r = rd_ev_reader_of(EV_FRDUMP);
    assert_non_null(r);
    assert_true(r->sniff((const char *)k_pk, sizeof k_pk) >= RD_EV_MIN_CONFIDENCE); /* any pickle is claimed */
    const char *js = "{\"comm_lib_version\": \"\", \"pg_config\": {}, \"version\": \"2.5\"}";
    assert_true(r->sniff(js, strlen(js)) >= RD_EV_MIN_CONFIDENCE);
    const char *kineto = "{\"schemaVersion\": 1, \"traceEvents\": []}";
    assert_int_equal(r->sniff(kineto, strlen(kineto)), 0);
}

/* The matcher over two ranks whose sequence numbers jump by 10^15: gaps
 * are skipped (no walk over the numbers in between), the rank that never
 * arrived is named with its lag. */
static void test_match_gap(void **state)
{
    (void)state;
    const char *head = "{\"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", \"ranks\": \"[0, 1]\"}}, \"version\": \"2.5\", \"entries\": [";
    const char *e1 = "{\"record_id\": 0, \"process_group\": [\"0\", \"default_pg\"], \"collective_seq_id\": 1, \"p2p_seq_id\": 0,"
                     " \"profiling_name\": \"nccl:all_reduce\", \"state\": \"completed\", \"input_sizes\": [[4]], \"output_sizes\": [[4]],"
                     " \"input_dtypes\": [\"Float\"], \"output_dtypes\": [\"Float\"], \"time_created_ns\": 1}";
    const char *e2 = "{\"record_id\": 1, \"process_group\": [\"0\", \"default_pg\"], \"collective_seq_id\": 1000000000000001, \"p2p_seq_id\": 0,"
                     " \"profiling_name\": \"nccl:all_reduce\", \"state\": \"started\", \"input_sizes\": [[4]], \"output_sizes\": [[4]],"
                     " \"input_dtypes\": [\"Float\"], \"output_dtypes\": [\"Float\"], \"time_created_ns\": 2}";
    char r0[4096], r1[4096];
    snprintf(r0, sizeof r0, "%s%s, %s]}", head, e1, e2);
    snprintf(r1, sizeof r1, "%s%s]}", head, e1);
    ev_set set;
    ev_set_init(&set);
    rd_ev_read_buffer(&set, "dumps/rank0", r0, strlen(r0));
    rd_ev_read_buffer(&set, "dumps/rank1", r1, strlen(r1));
    assert_int_equal(ev_count(&set, EV_FRDUMP), 2);
    rb_opts o = {0};
    rb_ctx *c = rb_run(&set, &o);
    assert_true(c->n > 0);
    assert_string_equal(c->v[0].code, "FR_RANK_LAGGING");
    assert_int_equal(c->v[0].rank, 1);
    rb_free(c);
    ev_set_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pickle_values), cmocka_unit_test(test_json_same_tree), cmocka_unit_test(test_pickle_truncated),
        cmocka_unit_test(test_pickle_rejects), cmocka_unit_test(test_frdump_json), cmocka_unit_test(test_sniff), cmocka_unit_test(test_match_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
