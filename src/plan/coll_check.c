/* coll_check.c - nccl-tests facts through the collective cost model (see
 * coll_check.h). A row names its GPU from the catalog; empty NIC columns
 * mean the catalog's reference node; an empty algo means NCCL's choice;
 * sharp=yes makes CollNet available to the tuner. */
#include "plan/coll_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/src.h"
#include "base/util.h"
#include "plan/calib_int.h"
#include "model/collmodel.h"
#include "model/vocab.h"

enum { K_SOURCE, K_OP, K_SIZE, K_NODES, K_GPN, K_GPU, K_NICS, K_NIC, K_ALGO, K_SHARP, K_BUSBW, K_N };
static const char *const k_cols[K_N] = {"source", "collective", "size_bytes", "nodes", "gpus_per_node", "gpu",
                                        "nics_per_node", "nic_gbit_s", "algo", "sharp", "busbw_gbps"};

#define COL(c) (col[c] >= 0 && col[c] < nf ? f[col[c]] : "")

static int check_row(char **f, int nf, const int *col, plan_coll_check_row *r)
{
    const char *src = COL(K_SOURCE);
    size_t sl = strcspn(src, "(");
    while (sl > 0 && src[sl - 1] == ' ') sl--;
    snprintf(r->source, sizeof r->source, "%.*s", (int)(sl < sizeof r->source ? sl : sizeof r->source - 1), src);
    snprintf(r->op, sizeof r->op, "%s", COL(K_OP));
    snprintf(r->gpu, sizeof r->gpu, "%s", COL(K_GPU));
    collm_query q;
    collm_query_init(&q);
    int op = coll_op_parse(COL(K_OP));
    if (op < 0) return snprintf(r->why, sizeof r->why, "unknown collective '%s'", COL(K_OP)), -1;
    q.op = (coll_op)op;
    q.bytes = r->bytes = calib_num(COL(K_SIZE));
    double nodes = calib_num(COL(K_NODES)), gpn = calib_num(COL(K_GPN));
    if (!(q.bytes > 0) || !(nodes >= 1) || !(gpn >= 1) || nodes > 1e6 || gpn > 4096)
        return snprintf(r->why, sizeof r->why, "size, nodes or gpus_per_node missing or out of range"), -1;
    q.nodes = r->nodes = (int)nodes, q.gpus_per_node = r->gpus_per_node = (int)gpn;
    q.gpu = hw_gpu_find(COL(K_GPU));
    if (!q.gpu) return snprintf(r->why, sizeof r->why, "gpu '%s' not in the catalog", COL(K_GPU)), -1;
    double nics = calib_num(COL(K_NICS)), rate = calib_num(COL(K_NIC));
    if (nics >= 1 && nics <= 4096) q.nics_per_node = (int)nics;
    if (rate > 0 && rate < 1e6) q.nic_gbit_s = rate;
    q.algo = collm_algo_parse(COL(K_ALGO));
    if (q.algo == -2) return snprintf(r->why, sizeof r->why, "unknown algorithm '%s'", COL(K_ALGO)), -1;
    const char *sh = COL(K_SHARP);
    q.sharp = cp_str_ieq(sh, "yes") || cp_str_ieq(sh, "true") || !strcmp(sh, "1");
    r->measured_gbps = calib_num(COL(K_BUSBW));
    if (!(r->measured_gbps > 0)) return snprintf(r->why, sizeof r->why, "busbw_gbps missing"), -1;
    collm_result res;
    char err[160];
    if (collm_estimate(&q, &res, err, sizeof err) < 0) return snprintf(r->why, sizeof r->why, "%s", err), -1;
    snprintf(r->algo, sizeof r->algo, "%s", collm_algo_name(res.algo));
    snprintf(r->proto, sizeof r->proto, "%s", collm_proto_name(res.proto));
    r->predicted_gbps = res.busbw_gbps;
    r->err = r->predicted_gbps / r->measured_gbps - 1.0;
    return 0;
}
#undef COL

static int source_index(plan_coll_check_summary *sum, const char *key)
{
    for (int i = 0; i < sum->n_sources; i++)
        if (strcmp(sum->sources[i].key, key) == 0) return i;
    if (sum->n_sources >= PLAN_COLL_CHECK_MAX_SOURCES) return PLAN_COLL_CHECK_MAX_SOURCES - 1;
    plan_coll_check_source *s = &sum->sources[sum->n_sources];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", key);
    return sum->n_sources++;
}

static int load(const char *data, size_t len, const char *name, int file, plan_coll_check_row *rows, int cap,
                plan_coll_check_summary *sum, char *err, int errsz)
{
    const char *p = data, *end = data + len;
    char *line = calib_next_line(&p, end);
    if (!line) return snprintf(err, (size_t)errsz, "%s:1: empty file", name), -1;
    char *f[CALIB_MAXCOLS];
    int nh = calib_split_csv(line, f, CALIB_MAXCOLS), col[K_N];
    for (int c = 0; c < K_N; c++) {
        col[c] = -1;
        for (int i = 0; i < nh; i++)
            if (strcmp(f[i], k_cols[c]) == 0) col[c] = i;
    }
    free(line);
    static const int required[] = {K_OP, K_SIZE, K_NODES, K_GPN, K_GPU, K_BUSBW};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (col[required[i]] < 0)
            return snprintf(err, (size_t)errsz, "%s:1: header lacks column '%s'", name, k_cols[required[i]]), -1;
    for (long lineno = 2; (line = calib_next_line(&p, end)) != NULL; lineno++) {
        if (!line[0]) {
            free(line);
            continue;
        }
        if (sum->rows >= PLAN_COLL_CHECK_MAX_ROWS || (rows && sum->rows >= cap)) {
            sum->truncated = 1;
            free(line);
            break;
        }
        plan_coll_check_row tmp, *r = rows ? &rows[sum->rows] : &tmp;
        memset(r, 0, sizeof *r);
        r->line = lineno, r->file = file, r->err = NAN;
        int nf = calib_split_csv(line, f, CALIB_MAXCOLS);
        if (check_row(f, nf, col, r) == 0) sum->used++;
        else sum->skipped++;
        sum->rows++;
        plan_coll_check_source *s = &sum->sources[source_index(sum, r->source)];
        s->rows++;
        s->used += !isnan(r->err);
        free(line);
    }
    return 0;
}

static void summarise(const plan_coll_check_row *rows, int cap, plan_coll_check_summary *sum)
{
    double *a = cp_xcalloc((size_t)sum->rows + 1, sizeof *a);
    int na = 0;
    double tot = 0;
    for (int s = -1; s < sum->n_sources; s++) {
        na = 0, tot = 0;
        double mx = NAN;
        for (int i = 0; i < sum->rows && i < cap; i++) {
            const plan_coll_check_row *r = &rows[i];
            if (isnan(r->err) || (s >= 0 && strcmp(r->source, sum->sources[s].key) != 0)) continue;
            double e = fabs(r->err);
            a[na++] = e, tot += e;
            if (isnan(mx) || e > mx) {
                mx = e;
                if (s < 0) sum->worst_line = r->line, sum->worst_file = r->file;
            }
        }
        if (s < 0) {
            sum->median_abs_err = calib_median(a, na);
            sum->mean_abs_err = na ? tot / na : NAN;
            sum->max_abs_err = mx;
        } else {
            sum->sources[s].median_abs_err = calib_median(a, na);
            sum->sources[s].max_abs_err = mx;
        }
    }
    free(a);
}

static void init(plan_coll_check_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->median_abs_err = sum->mean_abs_err = sum->max_abs_err = NAN;
}

int plan_coll_check_mem(const char *data, size_t len, const char *name, plan_coll_check_row *rows, int cap,
                        plan_coll_check_summary *sum, char *err, int errsz)
{
    init(sum);
    int own = rows == NULL;
    if (own) rows = cp_xcalloc(PLAN_COLL_CHECK_MAX_ROWS, sizeof *rows), cap = PLAN_COLL_CHECK_MAX_ROWS;
    int rc = load(data, len, name, 0, rows, cap, sum, err, errsz);
    if (rc == 0) summarise(rows, cap, sum);
    if (own) free(rows);
    return rc;
}

int plan_coll_check_files(const char *const *paths, int n, plan_coll_check_row *rows, int cap,
                          plan_coll_check_summary *sum, char *err, int errsz)
{
    init(sum);
    int own = rows == NULL;
    if (own) rows = cp_xcalloc(PLAN_COLL_CHECK_MAX_ROWS, sizeof *rows), cap = PLAN_COLL_CHECK_MAX_ROWS;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        cp_buf buf = CP_BUF_INIT;
        cp_error e;
        cp_error_clear(&e);
        if (cp_src_read_all(paths[i], &buf, 64u << 20, &e) < 0) {
            cp_error_format(&e, err, (size_t)errsz);
            rc = -1;
        } else {
            rc = load(buf.data ? buf.data : "", buf.len, paths[i], i, rows, cap, sum, err, errsz);
        }
        cp_buf_free(&buf);
    }
    if (rc == 0) summarise(rows, cap, sum);
    if (own) free(rows);
    return rc;
}
