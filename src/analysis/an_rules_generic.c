/* an_rules_generic.c - rule family "generic": errors that name no cause of
 * their own, raised only when no other rule explains the trouble (this
 * family runs last).
 */
#include "rulebook.h"

#include <stdio.h>

#include "../base/util.h"

static void r_nccl_error(rb_ctx *c, const rb_rule *self)
{
    const ev_torch_error *e = NULL;
    const ev_file *ef = NULL;
    RB_EACH(c, EV_TORCH, f)
        if (!e && f->as.torch->n_nccl_errors) {
            e = &f->as.torch->nccl_errors[0];
            ef = f;
        }
    if (!e)
        return;
    for (size_t i = 0; i < c->n; i++) /* a specific cause already explains it */
        if (c->v[i].severity == AN_SEV_CRITICAL && c->v[i].confidence >= 0.6)
            return;
    if (rb_find(c, "NCCL_PEER_CLOSED")) /* the error is the closed connection: its rule says where to look */
        return;
    rb_finding *x = rb_raise(c, self);
    rb_title(x, "NCCL reported \"%s\" without saying why in these logs", e->what);
    rb_rank(x, e->at.rank);
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_nccl_errors; k++)
            rb_cite(x, f, &f->as.torch->nccl_errors[k].at);
    (void)ef;
    rb_step(x, "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and collect every rank's log: the WARN line before the error names the cause");
    rb_step(x, "NCCL_DEBUG_FILE=/tmp/nccl.%%h.%%p to keep one file per process");
}

static const rb_rule k_rules[] = {
    {"NCCL_ERROR", CP_LAYER_INTER, AN_SEV_CRITICAL, 0.5,
     "PyTorch's 'NCCL error in: ..., <ncclResult string>' (unhandled system error, unhandled cuda error, internal error ...) with no more specific cause",
     "https://pytorch.org/docs/stable/distributed.html (NCCL_DEBUG=INFO for details)",
     "NCCL failed and these logs do not say why: rerun with NCCL_DEBUG=INFO and read the WARN line before the error", r_nccl_error},
};

const rb_family rb_family_generic = {.name = "generic",
                                     .summary = "errors without a cause of their own (after every other family)",
                                     .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules)};
