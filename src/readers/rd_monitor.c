/* rd_monitor.c - `chainprof monitor` JSON lines -> ev_counters (see
 * rd_monitor.h). Each line is tokenized with base/jsontok; only the keys
 * the counter rules need are kept: time_unix_ns, interval_s (null on a
 * run's first sample: Xid counts start there from 0), gpus[] {gpu,
 * pcie_replay_total, ecc_uncorrected_total, xid_total} and infiniband[]
 * {device, port, link_layer, state, rate_gbit_s, counters{...}} with the
 * counter names of model/ib_counters.def. */
#include "rd_monitor.h"
#include "rd_text.h"
#include "../base/jsontok.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA "chainprof.monitor/1"

static const struct { const char *file, *metric; } k_ib[] = {
#define X(id, dir, file, scale, metric, help) { file, metric },
#include "../model/ib_counters.def"
#undef X
};
/* The counters the rules read, by their sysfs name (= the EV_CTR_ key). */
static const char *const k_ib_keys[] = { EV_CTR_SYMBOL_ERROR, EV_CTR_LINK_DOWNED, EV_CTR_RCV_ERRORS };
#define N_IB_KEYS (sizeof k_ib_keys / sizeof k_ib_keys[0])

typedef struct mst {
    char *name;
    ev_counters *c;
    diag_set local;
    uint32_t samples;
} mst;

/* What one gpus[] or infiniband[] element said. */
typedef struct elem {
    double gpu, replay, ecc, xid, port, rate;
    char dev[64], link_layer[16], state[24];
    double ib[N_IB_KEYS];
} elem;

static void elem_reset(elem *e)
{
    memset(e, 0, sizeof *e);
    e->gpu = e->replay = e->ecc = e->xid = e->port = e->rate = NAN;
    for (size_t i = 0; i < N_IB_KEYS; i++)
        e->ib[i] = NAN;
}

int rd_monitor_sniff(const char *head, size_t n)
{
    static const char lead[] = "{\"schema\":\"" SCHEMA "\"";
    return n >= sizeof lead - 1 && memcmp(head, lead, sizeof lead - 1) == 0 ? 100 : 0;
}

void *rd_monitor_begin(const char *name)
{
    mst *st = cp_xcalloc(1, sizeof *st);
    st->name = cp_xstrdup(name ? name : "");
    st->c = cp_xcalloc(1, sizeof *st->c);
    snprintf(st->c->source, sizeof st->c->source, "chainprof monitor");
    diag_init(&st->local);
    return st;
}

static void copy_str(char *dst, size_t size, const cp_jt_tok *t)
{
    size_t n = t->n < size - 1 ? t->n : size - 1;
    memcpy(dst, t->s, n);
    dst[n] = 0;
}

static double num_of(const cp_jt_tok *t)
{
    double v;
    return t->type == CP_JT_NUMBER && cp_jt_parse_double(t->s, t->n, &v) == 0 ? v : NAN;
}

/* A value inside gpus[]/infiniband[] element (depth 3) or its counters (4). */
static void elem_value(elem *e, const char *key, const char *ckey, unsigned depth, const cp_jt_tok *t)
{
    if (depth == 4) {
        for (size_t i = 0; i < CP_ARRAY_LEN(k_ib); i++)
            if (strcmp(ckey, k_ib[i].metric) == 0)
                for (size_t j = 0; j < N_IB_KEYS; j++)
                    if (strcmp(k_ib[i].file, k_ib_keys[j]) == 0)
                        e->ib[j] = num_of(t);
        return;
    }
    if (t->type == CP_JT_STRING) {
        if (strcmp(key, "device") == 0)
            copy_str(e->dev, sizeof e->dev, t);
        else if (strcmp(key, "link_layer") == 0)
            copy_str(e->link_layer, sizeof e->link_layer, t);
        else if (strcmp(key, "state") == 0)
            copy_str(e->state, sizeof e->state, t);
        return;
    }
    double v = num_of(t);
    if (strcmp(key, "gpu") == 0) e->gpu = v;
    else if (strcmp(key, "pcie_replay_total") == 0) e->replay = v;
    else if (strcmp(key, "ecc_uncorrected_total") == 0) e->ecc = v;
    else if (strcmp(key, "xid_total") == 0) e->xid = v;
    else if (strcmp(key, "port") == 0) e->port = v;
    else if (strcmp(key, "rate_gbit_s") == 0) e->rate = v;
}

static void observe(mst *st, const char *entity, const char *key, double v, int64_t t, uint32_t line)
{
    if (isfinite(v))
        ev_counters_observe(st->c, entity, key, v, t, line);
}

static void elem_commit(mst *st, const elem *e, bool gpus, bool first_of_run, int64_t t, uint32_t line)
{
    char entity[96];
    if (gpus) {
        if (!isfinite(e->gpu))
            return;
        snprintf(entity, sizeof entity, "GPU %.0f", e->gpu);
        observe(st, entity, EV_CTR_PCIE_REPLAY, e->replay, t, line);
        observe(st, entity, EV_CTR_ECC_UNCORRECTED, e->ecc, t, line);
        if (first_of_run && isfinite(e->xid))
            observe(st, entity, EV_CTR_XID, 0, t, 0);
        observe(st, entity, EV_CTR_XID, e->xid, t, line);
        return;
    }
    if (!e->dev[0] || !isfinite(e->port))
        return;
    snprintf(entity, sizeof entity, "%.63s port %.0f", e->dev, e->port);
    for (size_t j = 0; j < N_IB_KEYS; j++)
        observe(st, entity, k_ib_keys[j], e->ib[j], t, line);
    ev_link *l = ev_counters_link(st->c, entity);
    ev_link nl;
    if (!l) {
        memset(&nl, 0, sizeof nl);
        snprintf(nl.entity, sizeof nl.entity, "%s", entity);
        if (!ev_counters_add_link(st->c, &nl))
            return;
        l = ev_counters_link(st->c, entity);
    }
    snprintf(l->link_layer, sizeof l->link_layer, "%s", e->link_layer);
    snprintf(l->state, sizeof l->state, "%s", e->state);
    l->rate_gbit_s = e->rate;
    l->line = line;
}

/* Elements are buffered until the line parsed whole: a cut line adds nothing. */
#define MAX_ELEMS 1024

void rd_monitor_line(void *stp, const rd_line *ln)
{
    mst *st = stp;
    if (!ln->len || ln->text[0] != '{')
        return;
    if (!rd_monitor_sniff(ln->text, ln->len)) {
        rd_note(&st->local, DIAG_EVIDENCE_BAD_ROW, st->name, (uint32_t)ln->no);
        return;
    }
    cp_jt *jt = cp_jt_open_mem(ln->text, ln->len, NULL);
    cp_jt_tok t;
    cp_error err;
    cp_error_clear(&err);
    char k1[32] = "", k3[32] = "", k4[64] = "";
    int64_t time_ns = 0;
    bool first_of_run = false, ok = false;
    static const elem zero;
    elem *es = cp_xcalloc(MAX_ELEMS, sizeof *es);
    bool *is_gpu = cp_xcalloc(MAX_ELEMS, sizeof *is_gpu);
    size_t n = 0;
    while (cp_jt_next(jt, &t, &err) > 0) {
        if (t.type == CP_JT_EOF) {
            ok = true;
            break;
        }
        if (t.type == CP_JT_KEY) {
            char *dst = t.depth == 1 ? k1 : t.depth == 3 ? k3 : t.depth == 4 ? k4 : NULL;
            size_t sz = t.depth == 4 ? sizeof k4 : sizeof k1;
            if (dst)
                copy_str(dst, sz, &t);
            continue;
        }
        bool in_list = strcmp(k1, "gpus") == 0 || strcmp(k1, "infiniband") == 0;
        if (t.type == CP_JT_OBJ_BEGIN && t.depth == 2 && in_list && n < MAX_ELEMS) {
            es[n] = zero;
            elem_reset(&es[n]);
            is_gpu[n++] = strcmp(k1, "gpus") == 0;
        } else if (t.depth == 1 && strcmp(k1, "time_unix_ns") == 0 && t.type == CP_JT_NUMBER) {
            time_ns = strtoll(t.s, NULL, 10);
        } else if (t.depth == 1 && strcmp(k1, "interval_s") == 0) {
            first_of_run = t.type == CP_JT_NULL;
        } else if (in_list && n && (t.depth == 3 || (t.depth == 4 && strcmp(k3, "counters") == 0)) &&
                   t.type != CP_JT_OBJ_BEGIN && t.type != CP_JT_OBJ_END && t.type != CP_JT_ARR_BEGIN &&
                   t.type != CP_JT_ARR_END) {
            elem_value(&es[n - 1], k3, k4, t.depth, &t);
        }
    }
    cp_jt_close(jt);
    if (ok) {
        st->samples++;
        for (size_t i = 0; i < n; i++)
            elem_commit(st, &es[i], is_gpu[i], first_of_run, time_ns, (uint32_t)ln->no);
        st->c->n_window = st->samples;
    } else {
        rd_note(&st->local, DIAG_EVIDENCE_BAD_ROW, st->name, (uint32_t)ln->no);
    }
    free(es);
    free(is_gpu);
}

void *rd_monitor_end(void *stp, diag_set *diag)
{
    mst *st = stp;
    ev_counters *c = st->c;
    if (!st->samples) {
        ev_counters_free(c);
        c = NULL;
    } else {
        /* a series of one sample cannot rise: keep only those with two */
        size_t k = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->v[i].n_samples >= 2)
                c->v[k++] = c->v[i];
        c->n = k;
    }
    diag_merge(diag, &st->local);
    free(st->name);
    free(st);
    return c;
}
