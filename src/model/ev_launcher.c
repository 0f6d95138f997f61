/* ev_launcher.c - launcher facts: names, free, report entry. */
#include "ev_launcher.h"

#include <stdlib.h>

static const char *const k_keys[] = {
#define X(e, k, d) k,
    EV_LAUNCHER_KINDS(X)
#undef X
};

const char *ev_launcher_kind_key(int kind) { return kind >= 0 && kind < EV_LAUNCHER__COUNT ? k_keys[kind] : "?"; }

void ev_launcher_free(ev_launcher *f) { free(f); }

void ev_launcher_report(const ev_launcher *f, rep_report *r, rep_node *o)
{
    rep_node *a = rep_arr(r, o, "messages", "launcher messages");
    for (int i = 0; i < f->n_items; i++) {
        rep_node *x = rep_obj(r, a, NULL, NULL);
        rep_str(r, x, "kind", "kind", ev_launcher_kind_key(f->items[i].kind));
        rep_int(r, x, "line", "line", f->items[i].at.line, NULL);
        rep_str(r, x, "text", "text", f->items[i].at.text);
    }
}
