/* evidence_report.c - each evidence kind's facts as a report subtree.
 *
 * analyze lists every evidence file under evidence[] with its detected kind;
 * these functions fill that entry with the facts the findings cite, each
 * with the line it came from, so text, JSON and HTML show the same numbers.
 * Bulky per-row detail is a table marked REP_F_NO_TEXT (JSON/CSV only).
 * Units in keys follow docs/METRICS.md (busbw GB/s, perftest Gbit/s).
 */
#include <math.h>
#include <string.h>

#include "rd_dmon.h"
#include "rd_fio.h"
#include "rd_iperf.h"
#include "rd_nccltests.h"
#include "rd_perftest.h"
#include "rd_topo.h"

/* A line number, or null when unknown (0). */
static void line_leaf(rep_report *r, rep_node *o, const char *key, uint32_t line)
{
    if (line)
        rep_int(r, o, key, NULL, line, NULL);
    else
        rep_null(r, o, key, NULL, NULL);
}

static void str_or_null(rep_report *r, rep_node *o, const char *key, const char *title, const char *s)
{
    if (s && s[0])
        rep_str(r, o, key, title, s);
    else
        rep_null(r, o, key, title, NULL);
}

static void int_or_null(rep_report *r, rep_node *o, const char *key, const char *title, int64_t v,
                        const char *unit)
{
    if (v >= 0)
        rep_int(r, o, key, title, v, unit);
    else
        rep_null(r, o, key, title, unit);
}

void rd_nccltests_report(const rd_nccltests *facts, rep_report *r, rep_node *o)
{
    const rd_nccltests *t = facts;
    str_or_null(r, o, "nccl_tests_version", "nccl-tests version", t->tests_version);
    int_or_null(r, o, "nccl_library_version_code", "NCCL library (version code)", t->nccl_library, NULL);
    rep_node *runs = rep_arr(r, o, "runs", "nccl-tests runs");
    static const rep_col cols[] = {
        {"size_bytes", "size", "B", 0}, {"oop_time_us", "time (oop)", "us", 2},
        {"oop_busbw_gbps", "busbw (oop)", "GB/s", 2}, {"inp_time_us", "time (ip)", "us", 2},
        {"inp_busbw_gbps", "busbw (ip)", "GB/s", 2}, {"line", "line", NULL, 0},
    };
    for (size_t i = 0; i < t->n_runs; i++) {
        const rd_nt_run *run = &t->runs[i];
        rep_node *ro = rep_obj(r, runs, NULL, NULL);
        str_or_null(r, ro, "op", "collective", run->op);
        int_or_null(r, ro, "ranks", "ranks", (int64_t)run->n_devices, NULL);
        int_or_null(r, ro, "hosts", "hosts", run->n_hosts, NULL);
        rep_str(r, ro, "columns", "column set",
                run->colset == RD_NT_COLS_NEW_WRONG ? "wrong" :
                run->colset == RD_NT_COLS_OLD_ERROR ? "error" : "unknown");
        double peak;
        const rd_nt_row *best = rd_nt_max_busbw(run, &peak);
        rep_num(r, ro, "peak_busbw_gbps", "peak busbw", peak, "GB/s");
        int_or_null(r, ro, "peak_size_bytes", "at size", best ? best->size_bytes : -1, "B");
        line_leaf(r, ro, "peak_line", best ? best->line : 0);
        rep_num(r, ro, "avg_busbw_gbps", "avg bus bandwidth", run->avg_busbw_gbps, "GB/s");
        line_leaf(r, ro, "avg_line", run->avg_line);
        int_or_null(r, ro, "out_of_bounds_values", "out of bounds values", run->oob_values, NULL);
        line_leaf(r, ro, "first_line", run->first_line);
        rep_node *tab = rep_table(r, ro, "rows", "rows", cols, sizeof cols / sizeof cols[0]);
        tab->flags |= REP_F_NO_TEXT;
        for (size_t k = 0; k < run->n_rows; k++) {
            const rd_nt_row *w = &run->rows[k];
            rep_node *row = rep_row(r, tab);
            rep_cell_int(r, row, w->size_bytes);
            rep_cell_num(r, row, w->oop.time_us);
            rep_cell_num(r, row, w->oop.busbw_gbps);
            rep_cell_num(r, row, w->inp.time_us);
            rep_cell_num(r, row, w->inp.busbw_gbps);
            rep_cell_int(r, row, w->line);
        }
    }
    rep_int(r, o, "failures", "test failures", t->n_failures, NULL);
    if (t->n_failures) {
        rep_str(r, o, "first_failure", "first failure", t->failure);
        line_leaf(r, o, "first_failure_line", t->failure_line);
    }
}

void rd_perftest_report(const rd_perftest *facts, rep_report *r, rep_node *o)
{
    const rd_perftest *p = facts;
    rep_node *runs = rep_arr(r, o, "runs", "perftest runs");
    for (size_t i = 0; i < p->n_runs; i++) {
        const rd_pt_run *run = &p->runs[i];
        rep_node *ro = rep_obj(r, runs, NULL, NULL);
        str_or_null(r, ro, "tool", "tool", run->tool);
        str_or_null(r, ro, "device", "device", run->device);
        str_or_null(r, ro, "link_type", "link type", run->link_type);
        int_or_null(r, ro, "qps", "QPs", run->qps, NULL);
        int_or_null(r, ro, "mtu_bytes", "MTU", run->mtu_bytes, "B");
        line_leaf(r, ro, "line", run->test_line);
        if (run->is_latency) {
            const rd_pt_row *w = run->n_rows ? &run->rows[0] : NULL;
            rep_num(r, ro, "t_typical_us", "typical latency", w ? w->t_typical_us : NAN, "us");
            rep_num(r, ro, "t_p99_us", "p99 latency", w ? w->t_p99_us : NAN, "us");
            rep_num(r, ro, "t_max_us", "max latency", w ? w->t_max_us : NAN, "us");
            int_or_null(r, ro, "bytes", "message size", w ? w->bytes : -1, "B");
            line_leaf(r, ro, "result_line", w ? w->line : 0);
        } else {
            const rd_pt_row *w = rd_pt_best_bw(run);
            rep_num(r, ro, "bw_avg_gbit_s", "average bandwidth", w ? w->bw_avg_gbit_s : NAN, "Gbit/s");
            rep_num(r, ro, "bw_peak_gbit_s", "peak bandwidth", w ? w->bw_peak_gbit_s : NAN, "Gbit/s");
            rep_num(r, ro, "msg_rate_mpps", "message rate", w ? w->msg_rate_mpps : NAN, "Mpps");
            int_or_null(r, ro, "bytes", "message size", w ? w->bytes : -1, "B");
            line_leaf(r, ro, "result_line", w ? w->line : 0);
        }
    }
}

void rd_topo_report(const rd_topo *facts, rep_report *r, rep_node *o)
{
    const rd_topo *m = facts;
    rep_int(r, o, "gpus", "GPUs", m->n_gpus, NULL);
    rep_int(r, o, "nics", "NICs", m->n_nics, NULL);
    static const rep_col cols[] = {
        {"gpu", "GPU", NULL, 0}, {"numa", "NUMA", NULL, 0}, {"nvlink_peers", "NVLink peers", NULL, 0},
        {"nearest_nic", "nearest NIC", NULL, 0}, {"nic_path", "path", NULL, 0}, {"line", "line", NULL, 0},
    };
    rep_node *tab = rep_table(r, o, "gpu_paths", "GPU paths", cols, sizeof cols / sizeof cols[0]);
    for (size_t i = 0; i < m->n_devs; i++) {
        const rd_topo_dev *dv = &m->devs[i];
        if (!dv->is_gpu)
            continue;
        int peers = 0;
        for (size_t j = 0; j < m->n_devs; j++)
            peers += m->devs[j].is_gpu && rd_topo_cell_at(m, i, j)->kind == TOPO_LINK_NVLINK;
        topo_link_kind k;
        int nic = rd_topo_nearest_nic(m, i, &k);
        rep_node *row = rep_row(r, tab);
        rep_cell_str(r, row, dv->label);
        if (dv->numa_affinity >= 0)
            rep_cell_int(r, row, dv->numa_affinity);
        else
            rep_cell_null(r, row);
        rep_cell_int(r, row, peers);
        if (nic >= 0) {
            rep_cell_str(r, row, m->devs[nic].name);
            rep_cell_str(r, row, topo_link_kind_key(k));
        } else {
            rep_cell_null(r, row);
            rep_cell_null(r, row);
        }
        rep_cell_int(r, row, dv->line);
    }
}

void rd_dmon_report(const rd_dmon *facts, rep_report *r, rep_node *o)
{
    const rd_dmon *d = facts;
    rep_str(r, o, "tool", "tool", d->flavor == RD_DMON_DCGMI ? "dcgmi dmon" : "nvidia-smi dmon");
    rep_int(r, o, "entities", "entities", (int64_t)d->n_entities, NULL);
    rep_int(r, o, "samples", "samples", (int64_t)d->n_samples, NULL);
    static const rep_col cols[] = {
        {"column", "column", NULL, 0}, {"unit", "unit", NULL, 0}, {"n", "n", NULL, 0},
        {"min", "min", NULL, -1}, {"mean", "mean", NULL, -1}, {"max", "max", NULL, -1},
    };
    rep_node *tab = rep_table(r, o, "columns", "columns (all entities)", cols, sizeof cols / sizeof cols[0]);
    for (size_t c = 0; c < d->n_cols; c++) {
        const rd_dmon_stat *s = rd_dmon_stat_of(d, RD_DMON_ALL, c);
        rep_node *row = rep_row(r, tab);
        rep_cell_str(r, row, d->cols[c].name);
        if (d->cols[c].unit[0])
            rep_cell_str(r, row, d->cols[c].unit);
        else
            rep_cell_null(r, row);
        rep_cell_int(r, row, s->n);
        rep_cell_num(r, row, s->min);
        rep_cell_num(r, row, s->mean);
        rep_cell_num(r, row, s->max);
    }
}

void rd_fio_report(const rd_fio *facts, rep_report *r, rep_node *o)
{
    static const char *const dirs[RD_FIO__DIRS] = {"read", "write", "trim"};
    const rd_fio *f = facts;
    str_or_null(r, o, "version", "fio version", f->version);
    rep_node *jobs = rep_arr(r, o, "jobs", "jobs");
    for (size_t i = 0; i < f->n_jobs; i++) {
        const rd_fio_job *j = &f->jobs[i];
        rep_node *jo = rep_obj(r, jobs, NULL, NULL);
        rep_str(r, jo, "name", "job", j->name);
        str_or_null(r, jo, "rw", "rw", j->rw);
        str_or_null(r, jo, "ioengine", "ioengine", j->ioengine);
        int_or_null(r, jo, "iodepth", "iodepth", j->iodepth, NULL);
        for (int d = 0; d < RD_FIO__DIRS; d++) {
            const rd_fio_io *io = &j->io[d];
            if (!io->present)
                continue;
            rep_node *dn = rep_obj(r, jo, dirs[d], dirs[d]);
            rep_num(r, dn, "iops", "IOPS", io->iops, NULL);
            rep_num(r, dn, "bw_bytes_per_s", "bandwidth", io->bw_bytes_s, "B/s");
            rep_num(r, dn, "clat_avg_us", "completion latency (avg)", io->clat.avg_us, "us");
            double p99 = NAN;
            for (int k = 0; k < io->n_pct; k++)
                if (fabs(io->pct[k] - 99.0) < 1e-9)
                    p99 = io->pct_us[k];
            rep_num(r, dn, "clat_p99_us", "completion latency (p99)", p99, "us");
            line_leaf(r, dn, "line", io->line);
        }
    }
    rep_int(r, o, "warnings", "fio warnings", f->n_warnings, NULL);
    if (f->n_warnings) {
        rep_str(r, o, "first_warning", "first warning", f->warning);
        line_leaf(r, o, "first_warning_line", f->warning_line);
    }
}

void rd_iperf_report(const rd_iperf *facts, rep_report *r, rep_node *o)
{
    const rd_iperf *p = facts;
    const rd_iperf_row *best = rd_iperf_best(p);
    rep_num(r, o, "bits_per_s", "throughput", best ? best->bits_per_s : NAN, "bit/s");
    str_or_null(r, o, "role", "measured at", best ? (best->role == RD_IPERF_RECEIVER ? "receiver" : "sender") : NULL);
    line_leaf(r, o, "line", best ? best->line : 0);
    int64_t retr = 0;
    int any = 0;
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].role == RD_IPERF_SENDER && p->rows[i].retr >= 0 && p->rows[i].stream >= 0) {
            retr += p->rows[i].retr;
            any = 1;
        }
    int_or_null(r, o, "retransmits", "TCP retransmits (senders)", any ? retr : -1, NULL);
    rep_int(r, o, "rows", "rows", (int64_t)p->n_rows, NULL);
}
