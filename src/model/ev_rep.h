/* ev_rep.h - small helpers the kinds' report functions share (ev_*.c):
 * a line number, string or count that is null when unknown. Defined in
 * evidence.c. Internal to src/model.
 */
#ifndef CP_MODEL_EV_REP_H
#define CP_MODEL_EV_REP_H

#include <stdint.h>

#include "ev_base.h"
#include "report.h"

/* A line number, or null when unknown (0). */
void ev_rep_line(rep_report *r, rep_node *o, const char *key, long line);
/* A string, or null when NULL or empty. */
void ev_rep_str(rep_report *r, rep_node *o, const char *key, const char *title, const char *s);
/* A count, or null when negative. */
void ev_rep_int(rep_report *r, rep_node *o, const char *key, const char *title, int64_t v, const char *unit);
/* An ev_at as {"line", "text"} under key, or null when not seen. */
void ev_rep_at(rep_report *r, rep_node *o, const char *key, const char *title, const ev_at *at);

#endif
