/* analyze_dist.c - `mpirun -np P chainprof analyze`: see analyze_dist.h.
 *
 * Design (issue 19 item 3; docs/ARCHITECTURE.md "analyze under mpirun")
 * - Every process expands the same arguments and sniffs every input (a
 *   few KiB each), so all agree on the inputs and fail alike on a bad one.
 *   Rank 0 shares the trace files out by size (comm_shard_by_size) and
 *   broadcasts the split; each process reads only its files into its own
 *   timeline, so its peak memory is its share of the job.
 * - Before analysing, the processes exchange what the per-rank analyzers
 *   need of the whole job (ad_job): every rank's number, host and device
 *   count (node membership) and the job's earliest event (the origin of
 *   every *_ns offset). Each runs the AN_DIST_RANK analyzers
 *   (src/analysis/an_dist.def) on its ranks.
 * - Each process's report nodes travel to rank 0 as rep_wire bytes; rank 0
 *   merges them (objects by key, arrays concatenated) and orders every
 *   array that received elements from two processes by its elements'
 *   `rank`, which is the order one process writes them in. The analyses
 *   that need every rank at once (AN_DIST_JOB) are not computed yet; the
 *   report says which, under distributed.not_computed.
 * - Errors: a collective that fails or times out is reported by the
 *   process that saw it; exit codes are agreed (ad_agree_rc) at each step
 *   where one process may fail alone, so no process waits on a dead peer.
 */
#include "analyze_dist.h"

#include "cli.h"
#include "../base/buf.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../comm/comm_shard.h"
#include "../model/rep_wire.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AD_HOST_MAX 192 /* bytes of a host name in a job record, NUL included */

static int fail(ad_run *d, const cp_error *err)
{
    (void)d;
    return cli_fail(err);
}

int ad_open(ad_run *d, double timeout_s)
{
    memset(d, 0, sizeof *d);
    d->size = 1;
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))
        return 0;
    cp_error err;
    cp_error_clear(&err);
    if (comm_open(&d->cm, false, timeout_s, &err) < 0)
        return cli_fail(&err);
    d->rank = comm_rank(d->cm);
    d->size = comm_size(d->cm);
    return 0;
}

void ad_close(ad_run *d)
{
    comm_close(d->cm);
    free(d->owner);
    free(d->load_bytes);
    free(d->job);
    free(d->job_hosts);
    memset(d, 0, sizeof *d);
}

int ad_threads(const ad_run *d, int cores)
{
    const char *s = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    long local = s ? strtol(s, NULL, 10) : 1;
    if (!ad_on(d) || local < 1)
        return cores;
    return cores / local > 1 ? (int)(cores / local) : 1;
}

int ad_share(ad_run *d, const uint64_t *est_bytes, size_t n)
{
    d->owner = cp_xcalloc(n ? n : 1, sizeof *d->owner);
    d->load_bytes = cp_xcalloc((size_t)d->size, sizeof *d->load_bytes);
    comm_shard_by_size(est_bytes, n, d->size, d->owner, d->load_bytes);
    cp_error err;
    cp_error_clear(&err);
    /* rank 0's split is the split, even where another host saw other sizes */
    if (comm_bcast(d->cm, d->owner, n * sizeof *d->owner, COMM_DT_BYTE, 0, &err) < 0 ||
        comm_bcast(d->cm, d->load_bytes, (size_t)d->size, COMM_DT_I64, 0, &err) < 0)
        return fail(d, &err);
    return 0;
}

int ad_agree_rc(ad_run *d, int rc)
{
    int64_t v = rc;
    cp_error err;
    cp_error_clear(&err);
    if (comm_allreduce_i64(d->cm, &v, 1, COMM_MAX, &err) < 0)
        return fail(d, &err);
    return (int)v;
}

int ad_agree_flags(ad_run *d, int64_t *flags, size_t n)
{
    cp_error err;
    cp_error_clear(&err);
    if (n && comm_allreduce_i64(d->cm, flags, n, COMM_MAX, &err) < 0)
        return fail(d, &err);
    return 0;
}

/* One rank as it travels: fixed size, so the gather needs no parsing. */
typedef struct ad_rank_rec {
    int32_t rank, n_devices, source, has_host, world_size, vendor, has_gpu;
    char host[AD_HOST_MAX], gpu[AD_HOST_MAX];
} ad_rank_rec;

static int rec_cmp(const void *a, const void *b)
{
    const ad_rank_rec *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The ranks of this timeline as records, sorted by rank. */
static ad_rank_rec *own_records(const tl_timeline *tl)
{
    ad_rank_rec *v = cp_xcalloc(tl->n_ranks ? tl->n_ranks : 1, sizeof *v);
    for (size_t i = 0; i < tl->n_ranks; i++) {
        const tl_rank_meta *m = &tl->ranks[i].meta;
        v[i] = (ad_rank_rec){ m->rank, m->n_devices, (int32_t)m->rank_source, m->hostname != 0, m->world_size,
                              (int32_t)m->vendor, m->gpu_name != 0, { 0 }, { 0 } };
        if (m->hostname)
            snprintf(v[i].host, sizeof v[i].host, "%s", tl_str(tl, m->hostname));
        if (m->gpu_name)
            snprintf(v[i].gpu, sizeof v[i].gpu, "%s", tl_str(tl, m->gpu_name));
    }
    return v;
}

/* Renumbered or doubled ranks would be numbered differently in one
 * process (tl_finish assigns them over all files at once), unless one
 * process holds every trace (holders: processes that read any). */
static int check_ranks(const ad_rank_rec *v, size_t n, int holders)
{
    for (size_t i = 0; i < n && holders > 1; i++) {
        if (v[i].source == TL_RANK_ASSIGNED || v[i].source == TL_RANK_REASSIGNED) {
            cp_log_error("rank %d: its trace does not say its rank (or another file has it too), so "
                         "chainprof numbers it over all the files: run without mpirun", v[i].rank);
            return CLI_EXIT_INPUT;
        }
        if (i && v[i].rank == v[i - 1].rank) {
            cp_log_error("rank %d is in two files read by different processes: run without mpirun "
                         "(one process renumbers the duplicate)", v[i].rank);
            return CLI_EXIT_INPUT;
        }
    }
    return 0;
}

int ad_job(ad_run *d, const tl_timeline *tl, int64_t *t0_ns)
{
    cp_error err;
    cp_error_clear(&err);
    ad_rank_rec *own = own_records(tl);
    void *all = NULL;
    size_t *sizes = cp_xcalloc((size_t)d->size, sizeof *sizes), total = 0;
    int rc = comm_allgatherv(d->cm, own, tl->n_ranks * sizeof *own, &all, sizes, &err);
    free(own);
    int holders = 0;
    for (int p = 0; rc == 0 && p < d->size; p++) {
        total += sizes[p];
        holders += sizes[p] > 0;
    }
    free(sizes);
    int64_t t[1] = { tl->n_events ? -tl->t0_ns : INT64_MIN }; /* the minimum as the max of negatives */
    if (rc == 0)
        rc = comm_allreduce_i64(d->cm, t, 1, COMM_MAX, &err);
    if (rc < 0) {
        free(all);
        return fail(d, &err);
    }
    ad_rank_rec *v = all;
    size_t n = total / sizeof *v; /* whole records: each process sent n_ranks of them */
    qsort(v, n, sizeof *v, rec_cmp);
    if ((rc = check_ranks(v, n, holders)) != 0) {
        free(all);
        return rc;
    }
    d->job = cp_xcalloc(n ? n : 1, sizeof *d->job);
    d->n_job = n;
    d->job_hosts = all; /* the names stay in the records */
    for (size_t i = 0; i < n; i++)
        d->job[i] = (an_job_rank){ v[i].rank, v[i].n_devices, v[i].world_size, (tl_gpu_vendor)v[i].vendor,
                                   v[i].has_host ? v[i].host : NULL, v[i].has_gpu ? v[i].gpu : NULL };
    *t0_ns = t[0] == INT64_MIN ? 0 : -t[0];
    return 0;
}

int ad_job_max(void *hook, int64_t *v, size_t n)
{
    ad_run *d = hook;
    int64_t *all = cp_xcalloc(n * (size_t)d->size + 1, sizeof *all);
    memcpy(all + n * (size_t)d->rank, v, n * sizeof *v);
    int rc = comm_allgather(d->cm, NULL, all, n, COMM_DT_I64, &d->err);
    if (rc < 0) {
        d->failed = 1;
        free(all);
        return rc;
    }
    for (int p = 0; p < d->size; p++) {
        const int64_t *t = all + n * (size_t)p;
        size_t k = 0;
        while (k < n && t[k] == v[k])
            k++;
        if (k < n && t[k] > v[k])
            memcpy(v, t, n * sizeof *v);
    }
    free(all);
    return 0;
}

int ad_job_gather(void *hook, const void *mine, size_t bytes, void **all, size_t *all_bytes)
{
    ad_run *d = hook;
    size_t *sizes = cp_xcalloc((size_t)d->size, sizeof *sizes);
    int rc = comm_allgatherv(d->cm, mine, bytes, all, sizes, &d->err);
    *all_bytes = 0;
    for (int p = 0; rc == 0 && p < d->size; p++)
        *all_bytes += sizes[p];
    free(sizes);
    d->exchange_bytes += *all_bytes;
    if (rc < 0)
        d->failed = 1;
    return rc;
}

/* ---- report messages: [diag codes][node count][nodes] ---- */

static void put_diag(cp_buf *b, const diag_set *dg)
{
    uint32_t n = 0;
    for (int i = 0; i < DIAG__COUNT; i++)
        n += dg->count[i] != 0;
    cp_buf_append(b, &n, sizeof n);
    for (uint32_t i = 0; i < DIAG__COUNT; i++) {
        if (!dg->count[i])
            continue;
        cp_buf_append(b, &i, sizeof i);
        cp_buf_append(b, &dg->count[i], sizeof dg->count[i]);
        cp_buf_append(b, dg->first[i], sizeof dg->first[i]);
    }
}

static int get_diag(const unsigned char *p, size_t len, size_t *pos, diag_set *into, cp_error *err)
{
    uint32_t n, code;
    size_t rec = sizeof code + sizeof into->count[0] + sizeof into->first[0];
    if (len - *pos < sizeof n)
        goto bad;
    memcpy(&n, p + *pos, sizeof n);
    *pos += sizeof n;
    if (n > DIAG__COUNT || (len - *pos) / rec < n)
        goto bad;
    diag_set one;
    diag_init(&one);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(&code, p + *pos, sizeof code);
        if (code >= DIAG__COUNT)
            goto bad;
        memcpy(&one.count[code], p + *pos + sizeof code, sizeof one.count[code]);
        memcpy(one.first[code], p + *pos + sizeof code + sizeof one.count[code], sizeof one.first[code]);
        one.first[code][sizeof one.first[code] - 1] = '\0';
        *pos += rec;
    }
    diag_merge(into, &one);
    return 0;
bad:
    return cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, (long long)*pos, "report message: damaged diagnostics");
}

/* The root's children after the envelope (schema, tool, command). */
static const rep_node *after_envelope(const rep_report *r)
{
    const rep_node *c = rep_child(r->root, "command");
    return c ? c->next : r->root->first;
}

void ad_encode(const rep_report *local, const diag_set *diag, cp_buf *msg)
{
    put_diag(msg, diag);
    uint32_t n = 0;
    for (const rep_node *c = after_envelope(local); c; c = c->next)
        n++;
    cp_buf_append(msg, &n, sizeof n);
    rep_wire_enc e;
    rep_wire_enc_init(&e, msg);
    for (const rep_node *c = after_envelope(local); c; c = c->next)
        rep_wire_put(&e, c);
    rep_wire_enc_free(&e);
}

/* One process's message into out (merged by key into the root). */
static int decode(const unsigned char *p, size_t len, rep_report *out, diag_set *merged, cp_error *err)
{
    size_t pos = 0;
    uint32_t n;
    if (get_diag(p, len, &pos, merged, err) < 0)
        return CP_ERR_FORMAT;
    if (len - pos < sizeof n)
        return cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, (long long)pos, "report message: no node count");
    memcpy(&n, p + pos, sizeof n);
    pos += sizeof n;
    rep_wire_dec d;
    rep_wire_dec_init(&d, p + pos, len - pos);
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        rep_node *holder = rep_obj(out, NULL, NULL, NULL); /* detached: merged by key into the root */
        if ((rc = rep_wire_get(out, holder, &d, NULL, err)) == 0)
            rep_wire_merge(out->root, holder);
    }
    if (rc == 0 && d.pos != d.len)
        rc = cp_error_set(err, CP_ERR_FORMAT, NULL, 0, 0, (long long)(pos + d.pos),
                          "report message: %zu bytes left over", d.len - d.pos);
    rep_wire_dec_free(&d);
    return rc;
}

#define AD_TAG_REPORT 19

/* Rank 0 takes the messages one process at a time (its own first), so it
 * holds the merged report and one message, never all of them at once. */
int ad_gather(ad_run *d, cp_buf *msg, rep_report *out, diag_set *merged_diag)
{
    cp_error err;
    cp_error_clear(&err);
    int64_t *sizes = cp_xcalloc((size_t)d->size, sizeof *sizes);
    sizes[d->rank] = msg->len > INT_MAX ? -1 : (int64_t)msg->len; /* MPI counts are int */
    int rc = comm_allgather(d->cm, NULL, sizes, 1, COMM_DT_I64, &err);
    for (int q = 0; rc == 0 && q < d->size; q++)
        if (sizes[q] < 0)
            rc = cp_error_set(&err, CP_ERR_NOMEM, NULL, 0, 0, -1,
                              "the report of process %d is over %d bytes, MPI's limit: use more processes", q, INT_MAX);
    if (rc == 0 && d->rank != 0)
        rc = comm_send(d->cm, msg->data, msg->len, 0, AD_TAG_REPORT, &err);
    for (int q = 0; rc == 0 && d->rank == 0 && q < d->size; q++) {
        unsigned char *p = q == 0 ? (unsigned char *)msg->data : cp_xmalloc((size_t)sizes[q] + 1);
        if (q > 0)
            rc = comm_recv(d->cm, p, (size_t)sizes[q], q, AD_TAG_REPORT, &err);
        if (rc == 0 && decode(p, (size_t)sizes[q], out, merged_diag, &err) < 0) {
            cp_log_error("the report of process %d:", q);
            rc = CP_ERR_FORMAT;
        }
        d->summary_bytes += (size_t)sizes[q];
        if (q == 0)
            cp_buf_free(msg);
        else
            free(p);
    }
    cp_buf_free(msg);
    free(sizes);
    if (rc == 0 && d->rank == 0) /* arrays with elements from two processes, in rank order */
        rep_sort_merged(out->root, "rank");
    return rc < 0 ? fail(d, &err) : 0;
}
