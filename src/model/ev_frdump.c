/* ev_frdump.c - Flight Recorder dump facts: state names, free, report entry. */
#include "ev_frdump.h"

#include <stdlib.h>

#include "ev_rep.h"

const char *ev_fr_state_name(int state)
{
    static const char *const names[] = {"scheduled", "started", "completed", "unknown"};
    return state >= 0 && state <= EV_FR_STATE_UNKNOWN ? names[state] : "unknown";
}

const int32_t *ev_fr_pg_ranks(const ev_frdump *d, const ev_fr_pg *pg, uint32_t *n)
{
    *n = pg->n_ranks;
    return pg->n_ranks ? d->ranks + pg->first_rank : NULL;
}

void ev_frdump_free(ev_frdump *d)
{
    if (!d) return;
    cp_intern_free(&d->strs);
    free(d->pgs);
    free(d->ranks);
    free(d->entries);
    free(d);
}

void ev_frdump_report(const ev_frdump *d, rep_report *r, rep_node *o)
{
    ev_rep_int(r, o, "rank", "rank", d->rank, NULL);
    rep_bool(r, o, "rank_from_file_name", "rank from the file name", d->rank_from_name);
    ev_rep_str(r, o, "version", "dump version", d->version[0] ? d->version : NULL);
    rep_str(r, o, "format", "form", d->format);
    rep_bool(r, o, "damaged", "damaged (truncated or corrupt)", d->damaged);
    ev_rep_str(r, o, "error", "decoding error", d->error[0] ? d->error : NULL);
    rep_int(r, o, "process_groups", "process groups", (int64_t)d->n_pgs, NULL);
    rep_int(r, o, "entries", "entries", (int64_t)d->n_entries, NULL);
    rep_int(r, o, "entries_dropped", "entries past the cap", d->dropped, NULL);
    rep_int(r, o, "bad_entries", "entries skipped (keys missing)", d->bad_entries, NULL);
    rep_int(r, o, "missing_keys", "optional keys missing", d->missing_keys, NULL);
}
