/* ev_nccl.c - NCCL log facts: names, queries, free, report entry. */
#include "ev_nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev_rep.h"

static const char *const k_transport_names[] = {
#define X(e, k, s) s,
    EV_NCCL_TRANSPORTS(X)
#undef X
};
static const char *const k_transport_keys[] = {
#define X(e, k, s) k,
    EV_NCCL_TRANSPORTS(X)
#undef X
};
static const char *const k_issue_keys[] = {
#define X(e, k, d) k,
    EV_NCCL_ISSUE_KINDS(X)
#undef X
};

const char *ev_nccl_transport_name(int t) { return t >= 0 && t < EV_NCCL_TR_COUNT ? k_transport_names[t] : "?"; }
const char *ev_nccl_transport_key(int t) { return t >= 0 && t < EV_NCCL_TR_COUNT ? k_transport_keys[t] : "unknown"; }
const char *ev_nccl_issue_key(int kind) { return kind >= 0 && kind < EV_NCCL_ISSUE_COUNT ? k_issue_keys[kind] : "?"; }

const char *ev_nccl_env(const ev_nccl *f, const char *name, long *line)
{
    for (int i = 0; i < f->n_env; i++)
        if (strcmp(f->env[i].name, name) == 0) {
            if (line)
                *line = f->env[i].line;
            return f->env[i].value;
        }
    if (line)
        *line = 0;
    return NULL;
}

int ev_nccl_max_host_ranks(const ev_nccl *f)
{
    int most = 0;
    for (int h = 0; h < f->n_hosts; h++)
        if (f->host_ranks[h] > most)
            most = f->host_ranks[h];
    return most;
}

bool ev_gpu_has_nvls(const char *name)
{
    /* NVLS needs NVLink4+ multicast: Hopper (H100/H800/H200/H20/GH200) and
     * Blackwell (B100/B200/GB200/B300) */
    static const char *const gens[] = {"H100", "H800", "H200", "H20", "GH200", "B100", "B200", "GB200", "B300", "GB300"};
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
        if (strstr(name, gens[i]))
            return true;
    return false;
}

void ev_nccl_free(ev_nccl *f) { free(f); }

void ev_nccl_report(const ev_nccl *f, rep_report *r, rep_node *o)
{
    ev_rep_str(r, o, "nccl_version", "NCCL version", f->version);
    rep_bool(r, o, "rccl", "RCCL (ROCm)", f->rccl);
    ev_rep_str(r, o, "bootstrap", "bootstrap interface", f->bootstrap_if);
    ev_rep_str(r, o, "net_plugin", "net plugin", f->net_plugin);
    static const char *const nets[] = {NULL, "IB", "Socket", "other"};
    ev_rep_str(r, o, "network", "network", f->network[0] ? f->network : nets[f->net & 3]);
    rep_node *devs = rep_arr(r, o, "ib_devices", "IB/RoCE devices");
    for (int d = 0; d < f->n_devs; d++) {
        char buf[96];
        snprintf(buf, sizeof buf, "%s:%d/%s%s", f->devs[d].name, f->devs[d].port, f->devs[d].link,
                 f->devs[d].sharp ? "/SHARP" : "");
        rep_str(r, devs, NULL, NULL, buf);
    }
    ev_rep_int(r, o, "gid_index", "GID index", f->gid_index, NULL);
    static const char *const gdr[] = {NULL, "on", "off"};
    ev_rep_str(r, o, "gdr", "GPU Direct RDMA", gdr[f->gdr % 3]);
    ev_rep_str(r, o, "gdr_reason", "GDR reason", f->gdr_reason);
    rep_node *tr = rep_obj(r, o, "transports", "channel transports");
    for (int t = 0; t < EV_NCCL_TR_COUNT; t++)
        if (f->transports[t])
            rep_int(r, tr, ev_nccl_transport_key(t), ev_nccl_transport_name(t), f->transports[t], NULL);
    rep_int(r, o, "rings", "ring lines", f->rings, NULL);
    rep_int(r, o, "trees", "tree lines", f->trees, NULL);
    ev_rep_int(r, o, "coll_channels", "coll channels", f->coll_channels, NULL);
    ev_rep_int(r, o, "nvls_channels", "nvls channels", f->nvls_channels, NULL);
    if (f->nvls_available < 0)
        rep_null(r, o, "nvls_available", "NVLS available", NULL);
    else
        rep_bool(r, o, "nvls_available", "NVLS available", f->nvls_available == 1);
    ev_rep_int(r, o, "nranks", "ranks", f->nranks > 0 ? f->nranks : -1, NULL);
    ev_rep_int(r, o, "nnodes", "nodes", f->nnodes > 0 ? f->nnodes : -1, NULL);
    rep_int(r, o, "hosts", "hosts seen", f->n_hosts, NULL);
    rep_int(r, o, "warnings", "NCCL WARN lines", f->warn_lines, NULL);
    rep_int(r, o, "issues", "NCCL issues", f->n_issues, NULL);
}
