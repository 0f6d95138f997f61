/* test_dist.c - the pieces `mpirun ... chainprof analyze` is made of, in one
 * process: report subtrees through rep_wire bytes and back (every node
 * field), the merge of two processes' nodes and their order by rank, a
 * damaged message refused, the size split (LPT against a brute-force best
 * on small cases), and the variable gathers of the one-process comm. */
#include "test_util.h"

#include "comm/comm.h"
#include "comm/comm_shard.h"
#include "model/rep_wire.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One rank object as the analyzers write it: leaves of every type, a table. */
static rep_node *rank_obj(rep_report *r, rep_node *parent, int rank)
{
    rep_node *o = rep_obj(r, parent, NULL, NULL);
    rep_int(r, o, "rank", "rank", rank, NULL);
    rep_num(r, o, "idle_pct", "idle", 12.5 + rank, "%")->digits = 2;
    rep_num(r, o, "none_pct", "unknown", NAN, "%");
    rep_str(r, o, "source", "file", rank ? "rank-1.json" : NULL);
    rep_bool(r, o, "gpu", "GPU", rank % 2);
    rep_json(r, o, "segments", "[[1,2,\"x\"]]");
    static const rep_col cols[] = { { "k", "key", NULL, -1 }, { "v_ns", "value", "ns", 0 } };
    rep_node *t = rep_table(r, o, "tab", "a table", cols, 2);
    t->flags |= REP_F_NO_TEXT;
    rep_node *row = rep_row(r, t);
    rep_cell_str(r, row, "a");
    rep_cell_int(r, row, INT64_MIN);
    return o;
}

static void same_tree(const rep_node *a, const rep_node *b)
{
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->digits, b->digits);
    assert_true((a->key == NULL) == (b->key == NULL) && (!a->key || !strcmp(a->key, b->key)));
    assert_true((a->title == NULL) == (b->title == NULL) && (!a->title || !strcmp(a->title, b->title)));
    assert_true((a->unit == NULL) == (b->unit == NULL) && (!a->unit || !strcmp(a->unit, b->unit)));
    if (a->type == REP_INT)
        assert_true(a->v.i == b->v.i);
    if (a->type == REP_NUM)
        assert_memory_equal(&a->v.d, &b->v.d, sizeof a->v.d); /* NaN too */
    if (a->type == REP_STR || a->type == REP_JSON)
        assert_string_equal(a->v.s, b->v.s);
    if (a->type == REP_BOOL)
        assert_int_equal(a->v.b, b->v.b);
    assert_int_equal(a->n_cols, b->n_cols);
    for (size_t i = 0; i < a->n_cols; i++) {
        assert_string_equal(a->cols[i].key, b->cols[i].key);
        assert_int_equal(a->cols[i].digits, b->cols[i].digits);
    }
    assert_int_equal(a->n_children, b->n_children);
    const rep_node *x = a->first, *y = b->first;
    for (; x && y; x = x->next, y = y->next)
        same_tree(x, y);
    assert_null(x);
    assert_null(y);
}

static void test_wire_roundtrip(void **state)
{
    (void)state;
    rep_report *a = rep_new("s/1", 0, NULL), *b = rep_new("s/1", 0, NULL);
    rep_node *ranks = rep_arr(a, a->root, "ranks", "ranks");
    rank_obj(a, ranks, 0);
    rank_obj(a, ranks, 1);
    cp_buf buf = CP_BUF_INIT;
    rep_wire_enc e;
    rep_wire_enc_init(&e, &buf);
    rep_wire_put(&e, ranks);
    rep_wire_put(&e, ranks); /* the second copy all back-references */
    rep_wire_enc_free(&e);
    rep_wire_dec d;
    rep_wire_dec_init(&d, buf.data, buf.len);
    rep_node *got, *got2;
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(rep_wire_get(b, b->root, &d, &got, &err), 0);
    size_t first_len = d.pos;
    assert_int_equal(rep_wire_get(b, b->root, &d, &got2, &err), 0);
    assert_int_equal(d.pos, buf.len);
    same_tree(ranks, got);
    same_tree(ranks, got2);
    assert_true(4 * (buf.len - first_len) < 3 * first_len); /* strings once per message (392 then 261 bytes) */
    rep_wire_dec_free(&d);
    /* every cut of the message is an error, never a crash or a partial read */
    for (size_t cut = 0; cut < first_len; cut++) {
        rep_wire_dec_init(&d, buf.data, cut);
        assert_true(rep_wire_get(b, NULL, &d, NULL, &err) < 0);
        assert_int_equal(d.pos, 0);
        rep_wire_dec_free(&d);
    }
    /* a reference to a string not yet sent */
    unsigned char forged[] = { REP_STR, 0, 9, 0, 0, 0 };
    rep_wire_dec_init(&d, forged, sizeof forged);
    assert_true(rep_wire_get(b, NULL, &d, NULL, &err) < 0);
    rep_wire_dec_free(&d);
    cp_buf_free(&buf);
    rep_free(a);
    rep_free(b);
}

/* Process 0 holds ranks 0 and 3, process 1 rank 1 and 2: merged, the
 * arrays from both are in rank order, objects merge by key, and an array
 * only one process filled keeps its own order. */
static void test_merge_order(void **state)
{
    (void)state;
    rep_report *r = rep_new("s/1", 0, NULL);
    int own[2][2] = { { 0, 3 }, { 1, 2 } };
    for (int p = 0; p < 2; p++) {
        rep_node *h = rep_obj(r, NULL, NULL, NULL);
        rep_node *ranks = rep_arr(r, h, "ranks", "ranks");
        rep_node *slow = rep_obj(r, h, "slowest_step", NULL);
        rep_int(r, slow, "id", "step", 7, NULL);
        rep_node *sr = rep_arr(r, slow, "ranks", NULL);
        for (int k = 0; k < 2; k++) {
            rep_node *o = rank_obj(r, ranks, own[p][k]);
            rep_node *peers = rep_arr(r, o, "peers", NULL); /* one process's own order: kept */
            rep_int(r, rep_obj(r, peers, NULL, NULL), "rank", NULL, 9, NULL);
            rep_int(r, rep_obj(r, peers, NULL, NULL), "rank", NULL, 4, NULL);
            rep_int(r, rep_obj(r, sr, NULL, NULL), "rank", NULL, own[p][k], NULL);
        }
        rep_wire_merge(r->root, h);
    }
    rep_sort_merged(r->root, "rank");
    int64_t want[] = { 0, 1, 2, 3 };
    const rep_node *ranks = rep_child(r->root, "ranks");
    const rep_node *sr = rep_child(rep_child(r->root, "slowest_step"), "ranks");
    assert_int_equal(ranks->n_children, 4);
    assert_int_equal(sr->n_children, 4);
    assert_int_equal(rep_child(r->root, "slowest_step")->n_children, 2); /* id once: merged by key */
    const rep_node *a = ranks->first, *b = sr->first;
    for (int i = 0; i < 4; i++, a = a->next, b = b->next) {
        assert_true(rep_child(a, "rank")->v.i == want[i]);
        assert_true(rep_child(b, "rank")->v.i == want[i]);
        assert_true(rep_child(a, "peers")->first->first->v.i == 9);
    }
    assert_true(ranks->last->next == NULL);
    rep_free(r);
}

/* The best split of small cases by brute force; LPT within 4/3 of it. */
static uint64_t best_makespan(const uint64_t *b, size_t n, int p)
{
    uint64_t best = UINT64_MAX;
    size_t combos = 1;
    for (size_t i = 0; i < n; i++)
        combos *= (size_t)p;
    for (size_t c = 0; c < combos; c++) {
        uint64_t load[4] = { 0 }, mx = 0;
        size_t x = c;
        for (size_t i = 0; i < n; i++, x /= (size_t)p)
            load[x % (size_t)p] += b[i];
        for (int q = 0; q < p; q++)
            mx = load[q] > mx ? load[q] : mx;
        best = mx < best ? mx : best;
    }
    return best;
}

static void test_shard(void **state)
{
    (void)state;
    uint64_t b[] = { 5, 5, 4, 4, 3, 3, 3 }; /* LPT's classic worst case for 3 */
    int32_t owner[7];
    uint64_t load[3];
    comm_shard_by_size(b, 7, 3, owner, load);
    uint64_t sum = 0, mx = 0, check[3] = { 0 };
    for (int i = 0; i < 7; i++) {
        assert_true(owner[i] >= 0 && owner[i] < 3);
        check[owner[i]] += b[i];
    }
    for (int q = 0; q < 3; q++) {
        assert_true(check[q] == load[q]);
        sum += load[q];
        mx = load[q] > mx ? load[q] : mx;
    }
    assert_true(sum == 27);
    assert_true(3 * mx <= 4 * best_makespan(b, 7, 3)); /* 11 vs best 9 */
    unsigned s = 12345;
    for (int t = 0; t < 200; t++) { /* random small cases */
        uint64_t v[8];
        int n = 1 + t % 8, p = 1 + t % 4;
        for (int i = 0; i < n; i++)
            v[i] = (s = s * 1103515245u + 12345u) >> 16 & 1023;
        uint64_t ld[4];
        int32_t ow[8], ow2[8];
        comm_shard_by_size(v, (size_t)n, p, ow, ld);
        comm_shard_by_size(v, (size_t)n, p, ow2, NULL);
        assert_memory_equal(ow, ow2, (size_t)n * sizeof *ow); /* deterministic */
        uint64_t m = 0;
        for (int q = 0; q < p; q++)
            m = ld[q] > m ? ld[q] : m;
        assert_true(3 * m <= 4 * best_makespan(v, (size_t)n, p) + 3);
    }
}

static void test_local_gatherv(void **state)
{
    (void)state;
    comm *c;
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(comm_open(&c, true, 5, &err), 0);
    void *out = NULL;
    size_t sizes[1] = { 99 };
    assert_int_equal(comm_gatherv(c, "abc", 3, 0, &out, sizes, &err), 0);
    assert_true(sizes[0] == 3);
    assert_memory_equal(out, "abc", 3);
    free(out);
    assert_int_equal(comm_allgatherv(c, NULL, 0, &out, sizes, &err), 0);
    assert_true(sizes[0] == 0);
    free(out);
    assert_true(comm_gatherv(c, "abc", 3, 1, &out, sizes, &err) < 0); /* root out of range */
    comm_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_roundtrip),
        cmocka_unit_test(test_merge_order),
        cmocka_unit_test(test_shard),
        cmocka_unit_test(test_local_gatherv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
