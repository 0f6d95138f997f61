/* ev_fio.c - fio facts: free, report entry. */
#include "ev_fio.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

void ev_fio_free(ev_fio *f)
{
    if (!f)
        return;
    free(f->jobs);
    free(f->groups);
    free(f);
}

void ev_fio_report(const ev_fio *facts, rep_report *r, rep_node *o)
{
    static const char *const dirs[EV_FIO__DIRS] = {"read", "write", "trim"};
    const ev_fio *f = facts;
    ev_rep_str(r, o, "version", "fio version", f->version);
    rep_node *jobs = rep_arr(r, o, "jobs", "jobs");
    for (size_t i = 0; i < f->n_jobs; i++) {
        const ev_fio_job *j = &f->jobs[i];
        rep_node *jo = rep_obj(r, jobs, NULL, NULL);
        rep_str(r, jo, "name", "job", j->name);
        ev_rep_str(r, jo, "rw", "rw", j->rw);
        ev_rep_str(r, jo, "ioengine", "ioengine", j->ioengine);
        ev_rep_int(r, jo, "iodepth", "iodepth", j->iodepth, NULL);
        for (int d = 0; d < EV_FIO__DIRS; d++) {
            const ev_fio_io *io = &j->io[d];
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
            ev_rep_line(r, dn, "line", io->line);
        }
    }
    rep_int(r, o, "warnings", "fio warnings", f->n_warnings, NULL);
    if (f->n_warnings) {
        rep_str(r, o, "first_warning", "first warning", f->warning);
        ev_rep_line(r, o, "first_warning_line", f->warning_line);
    }
}
