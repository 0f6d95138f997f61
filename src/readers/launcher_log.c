/* launcher_log.c - MPI / UCX / Slurm launcher messages (see launcher_log.h). */
#include "launcher_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

typedef struct lst {
    ev_launcher *f;
    int wrap;        /* lines left in which a wrapped UCX message may name its device */
} lst;

static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

/* "... on mlx5_15 failed: No such device" (or, wrapped after "on", a line
 * "mlx5_15 failed: No such device"): device and reason into it. */
static bool device_reason(ev_launcher_item *it, const char *s, const char *end)
{
    const char *f = find(s, (size_t)(end - s), " failed: ");
    if (!f)
        return false;
    const char *on = NULL;
    for (const char *p = s; (p = find(p, (size_t)(f - p), " on ")) != NULL; p += 4)
        on = p;
    if (on)
        rd_copy_trim(it->device, sizeof it->device, on + 4, (size_t)(f - on - 4));
    else if (f > s && !memchr(s, ' ', (size_t)(f - s))) /* wrapped right after "on": "mlx5_15 failed: ..." */
        rd_copy_trim(it->device, sizeof it->device, s, (size_t)(f - s));
    rd_copy_trim(it->detail, sizeof it->detail, f + 9, (size_t)(end - f - 9));
    return true;
}

static ev_launcher_item *add(ev_launcher *f, int kind, const rd_line *ln)
{
    if (f->n_items == EV_LAUNCHER_MAX_ITEMS) {
        f->dropped++;
        return NULL;
    }
    ev_launcher_item *it = &f->items[f->n_items++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->at.line = ln->no;
    it->at.rank = ln->pfx->rank;
    it->at.ts = ln->pfx->ts;
    snprintf(it->at.host, sizeof it->at.host, "%s", ln->pfx->host);
    rd_copy_trim(it->at.text, sizeof it->at.text, ln->text, ln->len);
    return it;
}

void rd_launcher_line(void *stp, const rd_line *ln)
{
    lst *st = stp;
    ev_launcher *f = st->f;
    f->lines++;
    const char *s = ln->text, *end = s + ln->len;
    size_t n = ln->len;
    const char *k;
    if (st->wrap > 0) { /* the wrapped tail of the last UCX error */
        st->wrap--;
        ev_launcher_item *it = &f->items[f->n_items - 1];
        if (!it->device[0] && device_reason(it, s, end))
            st->wrap = 0;
    }
    if ((k = find(s, n, "UCX  ERROR")) != NULL || (k = find(s, n, "UCX ERROR")) != NULL) {
        ev_launcher_item *it = add(f, EV_LAUNCHER_UCX_ERROR, ln);
        if (it && !device_reason(it, k, end)) {
            const char *w = k + 9;
            while (w < end && *w == ' ')
                w++;
            rd_copy_trim(it->detail, sizeof it->detail, w, (size_t)(end - w));
            st->wrap = 2;
        }
    } else if (find(s, n, "MPI_ABORT was invoked") || (find(s, n, "mpirun noticed that process rank") && find(s, n, "exited")) ||
               find(s, n, "returned a non-zero exit code")) {
        add(f, EV_LAUNCHER_MPI_ABORT, ln);
    } else if (find(s, n, "srun: error:") || (find(s, n, "slurmstepd: error:") && find(s, n, "CANCELLED"))) {
        add(f, EV_LAUNCHER_SRUN_ERROR, ln);
    }
}

void *rd_launcher_begin(const char *name)
{
    (void)name;
    lst *st = cp_xcalloc(1, sizeof *st);
    st->f = cp_xcalloc(1, sizeof *st->f);
    return st;
}

void *rd_launcher_end(void *stp, diag_set *diag)
{
    lst *st = stp;
    ev_launcher *f = st->f;
    free(st);
    if (!f->n_items) {
        free(f);
        return NULL;
    }
    if (f->dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->dropped, NULL, -1);
    return f;
}

int rd_launcher_sniff(const char *head, size_t n)
{
    return rd_memmem(head, n, "UCX  ERROR") || rd_memmem(head, n, "MPI_ABORT") || rd_memmem(head, n, "srun: error:") ? 60 : 0;
}
