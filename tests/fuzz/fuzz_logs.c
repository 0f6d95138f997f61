/* fuzz_logs.c - fuzz target for the reading loop and the rule book: the
 * same bytes go through every evidence reader (the scan readers always, the
 * table readers when their sniffers claim the head), then through the whole
 * rule book (events, ordering, every rule), twice as two ranks so the
 * cross-input rules and the ordering run too. Any crash, overflow or
 * sanitizer report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rulebook.h"
#include "model/evidence.h"
#include "readers/evidence.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    ev_set s;
    ev_set_init(&s);
    rd_ev_read_buffer(&s, "rank0.log", buf, size);
    rd_ev_read_buffer(&s, "rank1.log", buf, size / 2);
    /* every reader on its own too, whatever its sniffer says */
    for (int k = 0; k < EV__COUNT; k++) {
        void *facts = NULL;
        if (rd_ev_parse((ev_kind)k, buf, size, "fuzz", &facts, NULL, NULL) == 0)
            ev_facts_free((ev_kind)k, facts);
    }
    rb_ctx *c = rb_run(&s, NULL);
    char tmp[64];
    for (size_t i = 0; i < c->n_events; i++)
        ev_time_format(c->events[i].ts, tmp, sizeof tmp);
    rep_report *r = rep_new("chainprof.fuzz/1", 0, NULL);
    rep_node *arr = rep_arr(r, r->root, "evidence", NULL);
    for (size_t i = 0; i < s.n_files; i++)
        ev_file_report(&s.files[i], r, rep_obj(r, arr, NULL, NULL));
    rep_free(r);
    rb_free(c);
    ev_set_free(&s);
    return 0;
}
