/* mon_evidence.c - the monitor's recent samples as evidence facts, so its
 * alerts are the rule book's findings (src/analysis/an_rules_dmon.c for
 * throttling and heat, an_rules_counters.c for rising error counters and
 * slow links), the same rules `analyze` and `diagnose` run on dmon output.
 *
 * The GPU samples become `nvidia-smi dmon` rows with its column names and
 * units (nvidia-smi dmon -s pucvt): sm and mem (%), pwr (W), gtemp (C),
 * rxpci/txpci (MB/s), and pviol/tviol as dmon defines them - the percent of
 * the sample period the clocks were held down by power or by temperature.
 * NVML gives the throttle reasons at the moment of the sample, so a sample
 * counts as 100 % when a power reason (SW power cap, HW power brake) or a
 * thermal reason (SW/HW thermal slowdown, HW slowdown) is set, else 0 %.
 */
#include "mon.h"
#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POWER_REASONS (0x4ULL | 0x80ULL)          /* sw_power_cap, hw_power_brake */
#define THERMAL_REASONS (0x8ULL | 0x20ULL | 0x40ULL) /* hw_slowdown, sw_thermal, hw_thermal */

void mon_window_init(mon_window *w, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->cap = cap ? cap : 1;
    w->e = cp_xcalloc(w->cap, sizeof *w->e);
}

void mon_window_free(mon_window *w)
{
    for (size_t i = 0; i < w->cap; i++) {
        free(w->e[i].gpus);
        free(w->e[i].ib);
    }
    free(w->e);
    memset(w, 0, sizeof *w);
}

void mon_window_push(mon_window *w, const mon_sample *s)
{
    mon_window_entry *e = &w->e[w->next];
    e->mono_ns = s->ss.mono_ns;
    cp_xgrow((void **)&e->gpus, &e->cap_gpus, s->n_gpus + 1, sizeof *e->gpus);
    if (s->n_gpus) /* s->gpus may be NULL when there are none */
        memcpy(e->gpus, s->gpus, s->n_gpus * sizeof *s->gpus);
    e->n_gpus = s->n_gpus;
    cp_xgrow((void **)&e->ib, &e->cap_ib, s->n_ib + 1, sizeof *e->ib);
    if (s->n_ib)
        memcpy(e->ib, s->ib, s->n_ib * sizeof *s->ib);
    e->n_ib = s->n_ib;
    w->next = (w->next + 1) % w->cap;
    w->pushed++;
    if (w->n < w->cap)
        w->n++;
}

/* The i-th oldest entry. */
static const mon_window_entry *at(const mon_window *w, size_t i)
{
    return &w->e[(w->next + w->cap - w->n + i) % w->cap];
}

static const struct { const char *name, *unit; } k_cols[] = {
    { "sm", "%" }, { "mem", "%" }, { "pwr", "W" }, { "gtemp", "C" },
    { "pviol", "%" }, { "tviol", "%" }, { "rxpci", "MB/s" }, { "txpci", "MB/s" },
};

static ev_dmon *gpu_dmon(const mon_window *w)
{
    size_t n_gpus = 0;
    for (size_t i = 0; i < w->n; i++)
        if (at(w, i)->n_gpus > n_gpus)
            n_gpus = at(w, i)->n_gpus;
    if (!n_gpus)
        return NULL;
    ev_dmon *d = cp_xcalloc(1, sizeof *d);
    d->flavor = EV_DMON_NVIDIA_SMI;
    d->n_cols = CP_ARRAY_LEN(k_cols);
    for (size_t c = 0; c < d->n_cols; c++) {
        snprintf(d->cols[c].name, sizeof d->cols[c].name, "%s", k_cols[c].name);
        snprintf(d->cols[c].unit, sizeof d->cols[c].unit, "%s", k_cols[c].unit);
        d->cols[c].line = 1;
    }
    d->first_header_line = 1;
    d->n_entities = d->cap_entities = n_gpus;
    d->entities = cp_xcalloc(n_gpus, sizeof *d->entities);
    for (size_t g = 0; g < n_gpus; g++) {
        snprintf(d->entities[g].name, sizeof d->entities[g].name, "%zu", g);
        d->entities[g].gpu = (int)g;
        d->entities[g].mig = EV_DMON_GPU;
    }
    size_t cap = w->n * n_gpus + 1;
    d->samples = cp_xcalloc(cap, sizeof *d->samples);
    d->values = cp_xcalloc(cap * d->n_cols, sizeof *d->values);
    d->cap_samples = cap;
    for (size_t i = 0; i < w->n; i++) {
        const mon_window_entry *e = at(w, i);
        for (size_t g = 0; g < e->n_gpus && g < n_gpus; g++) {
            const gpu_nvml_dev *v = &e->gpus[g];
            ev_dmon_sample *sm = &d->samples[d->n_samples];
            sm->entity = (uint32_t)g;
            sm->seq = d->entities[g].n_samples++;
            sm->line = (uint32_t)(i + 1);
            double *row = d->values + d->n_samples * d->n_cols;
            bool thr = v->have & GPU_NVH_THROTTLE, pcie = v->have & GPU_NVH_PCIE;
            row[0] = v->have & GPU_NVH_UTIL ? v->util_pct : NAN;
            row[1] = v->have & GPU_NVH_UTIL ? v->mem_util_pct : NAN;
            row[2] = v->have & GPU_NVH_POWER ? v->power_w : NAN;
            row[3] = v->have & GPU_NVH_TEMP ? v->temp_c : NAN;
            row[4] = thr ? (v->throttle_reasons & POWER_REASONS ? 100 : 0) : NAN;
            row[5] = thr ? (v->throttle_reasons & THERMAL_REASONS ? 100 : 0) : NAN;
            row[6] = pcie ? v->pcie_rx_bytes_per_s / 1e6 : NAN;
            row[7] = pcie ? v->pcie_tx_bytes_per_s / 1e6 : NAN;
            d->n_samples++;
        }
    }
    ev_dmon_compute_stats(d);
    return d;
}

/* A counter's value in one entry of the window (false: not in it). */
typedef bool (*value_fn)(const mon_window_entry *e, size_t idx, const char *entity, double *v);

/* zero_base: the counter counts from the monitor's start (Xid events), so
 * while the window holds the first sample its series starts from 0, not
 * from that sample's count. A series of one sample is dropped: a rise
 * needs two. */
static void series(const mon_window *w, ev_counters *k, const char *entity, const char *key, size_t idx, value_fn get,
                   bool zero_base)
{
    size_t before = k->n;
    bool started = false;
    for (size_t i = 0; i < w->n; i++) {
        double v;
        if (!get(at(w, i), idx, entity, &v))
            continue;
        if (!started && zero_base && w->pushed == w->n)
            ev_counters_observe(k, entity, key, 0, at(w, i)->mono_ns, 0);
        started = true;
        ev_counters_observe(k, entity, key, v, at(w, i)->mono_ns, (uint32_t)(i + 1));
    }
    if (k->n > before && k->v[k->n - 1].n_samples < 2)
        k->n--;
}

static const gpu_nvml_dev *gpu_of(const mon_window_entry *e, size_t g, unsigned bit)
{
    return g < e->n_gpus && (e->gpus[g].have & bit) ? &e->gpus[g] : NULL;
}
static bool g_replay(const mon_window_entry *e, size_t g, const char *n, double *v)
{
    (void)n;
    const gpu_nvml_dev *d = gpu_of(e, g, GPU_NVH_REPLAY);
    return d ? (*v = (double)d->pcie_replay_total, true) : false;
}
static bool g_ecc(const mon_window_entry *e, size_t g, const char *n, double *v)
{
    (void)n;
    const gpu_nvml_dev *d = gpu_of(e, g, GPU_NVH_ECC);
    return d ? (*v = (double)d->ecc_uncorrected_total, true) : false;
}
static bool g_xid(const mon_window_entry *e, size_t g, const char *n, double *v)
{
    (void)n;
    const gpu_nvml_dev *d = gpu_of(e, g, GPU_NVH_XID);
    return d ? (*v = (double)d->xid_total, true) : false;
}

/* Ports are matched by name ("mlx5_0 port 1") across samples, with the
 * counter index in idx. */
static bool ib_get(const mon_window_entry *e, size_t idx, const char *entity, double *v)
{
    for (size_t i = 0; i < e->n_ib; i++) {
        char name[96];
        snprintf(name, sizeof name, "%.63s port %u", e->ib[i].dev, e->ib[i].port);
        if (strcmp(name, entity) == 0 && ((e->ib[i].have >> idx) & 1)) {
            *v = (double)e->ib[i].c[idx];
            return true;
        }
    }
    return false;
}

static ev_counters *counters(const mon_window *w)
{
    ev_counters *k = cp_xcalloc(1, sizeof *k);
    snprintf(k->source, sizeof k->source, "%s", MON_WINDOW_INPUT);
    k->n_window = (uint32_t)w->n;
    if (!w->n)
        return k;
    const mon_window_entry *last = at(w, w->n - 1);
    for (size_t g = 0; g < last->n_gpus; g++) {
        char name[32];
        snprintf(name, sizeof name, "GPU %zu", g);
        series(w, k, name, EV_CTR_PCIE_REPLAY, g, g_replay, false);
        series(w, k, name, EV_CTR_ECC_UNCORRECTED, g, g_ecc, false);
        series(w, k, name, EV_CTR_XID, g, g_xid, true);
        if (k->n && strcmp(k->v[k->n - 1].key, EV_CTR_XID) == 0 && (last->gpus[g].have & GPU_NVH_XID))
            k->v[k->n - 1].last_value = last->gpus[g].last_xid;
    }
    static const struct { int idx; const char *key; } ib[] = {
        { MON_IB_SYMBOL_ERR, EV_CTR_SYMBOL_ERROR }, { MON_IB_LINK_DOWNED, EV_CTR_LINK_DOWNED },
        { MON_IB_RCV_ERR, EV_CTR_RCV_ERRORS },
    };
    for (size_t p = 0; p < last->n_ib; p++) {
        const mon_ib_port *port = &last->ib[p];
        ev_link l;
        memset(&l, 0, sizeof l);
        snprintf(l.entity, sizeof l.entity, "%.63s port %u", port->dev, port->port);
        snprintf(l.link_layer, sizeof l.link_layer, "%s", port->link_layer);
        snprintf(l.state, sizeof l.state, "%s", port->state);
        l.rate_gbit_s = port->rate_gbit_s;
        l.line = (uint32_t)w->n;
        ev_counters_add_link(k, &l);
        for (size_t j = 0; j < CP_ARRAY_LEN(ib); j++)
            series(w, k, l.entity, ib[j].key, (size_t)ib[j].idx, ib_get, false);
    }
    return k;
}

void mon_window_evidence(const mon_window *w, ev_set *set)
{
    uint32_t in = ev_set_add_input(set, MON_WINDOW_INPUT);
    set->inputs[in].lines = (long)w->n;
    ev_dmon *d = gpu_dmon(w);
    if (d) {
        ev_set_add_file(set, in, EV_DMON, d, NULL);
    }
    ev_set_add_file(set, in, EV_COUNTERS, counters(w), NULL);
}
