/* nccl_log.c - NCCL_DEBUG log reader (see nccl_log.h for what it extracts).
 *
 * One pass, one line at a time. A line is NCCL's when, after the launcher and
 * "host:pid:tid [dev]" prefixes, it carries "NCCL INFO"/"NCCL WARN"/"NCCL
 * ERROR", or - for logs whose prefixes the user stripped - when its body
 * starts with one of the INFO phrases below. Each phrase is matched by a
 * literal substring; NCCL has reworded some across 2.4..2.2x ("Bootstrap :
 * Using [0]ens5" vs "Bootstrap: Using eth0", "Channel 00 :" vs "Channel
 * 00/0 :", "GID 3 (" inside two different QP lines), and each variant seen in
 * the sample logs and in public issue threads is listed next to its matcher.
 */
#include "nccl_log.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_transport_names[] = {
#define X(e, k, s) s,
    RD_NCCL_TRANSPORTS(X)
#undef X
};
static const char *const k_transport_keys[] = {
#define X(e, k, s) k,
    RD_NCCL_TRANSPORTS(X)
#undef X
};
static const char *const k_issue_keys[] = {
#define X(e, k, d) k,
    RD_NCCL_ISSUE_KINDS(X)
#undef X
};

const char *rd_nccl_transport_name(int t)
{
    return t >= 0 && t < RD_NCCL_TR_COUNT ? k_transport_names[t] : "?";
}

const char *rd_nccl_transport_key(int t)
{
    return t >= 0 && t < RD_NCCL_TR_COUNT ? k_transport_keys[t] : "unknown";
}

const char *rd_nccl_issue_key(int kind)
{
    return kind >= 0 && kind < RD_NCCL_ISSUE_COUNT ? k_issue_keys[kind] : "?";
}

/* Phrases whose presence decides which matchers run (rd_keyset); a line
 * without any of them is not NCCL's, unless tagged "NCCL INFO/WARN". */
enum {
    K_NCCL, K_NET, K_BOOTSTRAP, K_P2P_PLUGIN, K_USING_NETWORK, K_GPU_DIRECT, K_GDR, K_CHANNEL,
    K_RING, K_TREE, K_COLL_CHANNELS, K_NVLS, K_NRANKS, K_NRANKS2, K_RANK_HDR, K_VIA, K_VERSION,
};
static const char *const k_keys[] = {
    "NCCL", "NET/", "Bootstrap", "P2P plugin", "Using network", "GPU Direct RDMA ", "disabling GDR",
    "Channel ", "Ring ", "Tree", " coll channels", "NVLS", " nranks ", " nRanks ", " Rank ", " via ",
    "NCCL version ",
};
#define HAS(k) (mask & (1u << (k)))

void rd_nccl_init(rd_nccl_facts *f, const char *file)
{
    memset(f, 0, offsetof(rd_nccl_facts, devs)); /* the arrays after it are filled as items come */
    rd_keyset_init(&f->keys_, k_keys, (int)(sizeof k_keys / sizeof k_keys[0]));
    f->file = file;
    f->gid_index = -1;
    f->coll_channels = f->nvls_channels = -1;
    f->nvls_available = -1;
    f->max_rank = -1;
}

static void set_at(rd_nccl_at *at, const char *line, size_t len, long lineno)
{
    at->line = lineno;
    rd_copy_trim(at->text, sizeof at->text, line, len);
}

/* first time only: keep the earliest evidence of a fact */
static void set_at_once(rd_nccl_at *at, const char *line, size_t len, long lineno)
{
    if (!at->line) set_at(at, line, len, lineno);
}

static const char *find(const char *s, size_t n, const char *needle) { return rd_memmem(s, n, needle); }

static bool starts(const char *s, size_t n, const char *prefix)
{
    size_t m = strlen(prefix);
    return n >= m && memcmp(s, prefix, m) == 0;
}

/* token after `at` up to a space/terminator */
static size_t token_len(const char *s, const char *end, const char *stops)
{
    const char *p = s;
    while (p < end && !strchr(stops, *p)) p++;
    return (size_t)(p - s);
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void note_host(rd_nccl_facts *f, const char *host, long pid, int dev)
{
    if (!host[0]) return;
    int i;
    for (i = 0; i < f->n_hosts; i++)
        if (strcmp(f->hosts[i], host) == 0) break;
    if (i == f->n_hosts) {
        if (f->n_hosts == RD_NCCL_MAX_HOSTS) {
            f->hosts_dropped++;
            return;
        }
        snprintf(f->hosts[i], sizeof f->hosts[i], "%s", host);
        f->host_ranks[i] = 0;
        f->n_hosts++;
    }
    uint32_t h = hash_str(host);
    for (int k = 0; k < f->n_seen_; k++)
        if (f->seen_[k].host_hash == h && f->seen_[k].pid == pid && f->seen_[k].dev == dev) return;
    if (f->n_seen_ < (int)(sizeof f->seen_ / sizeof f->seen_[0])) {
        f->seen_[f->n_seen_].host_hash = h;
        f->seen_[f->n_seen_].pid = pid;
        f->seen_[f->n_seen_].dev = dev;
        f->n_seen_++;
        f->host_ranks[i]++;
    }
}

/* "[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ..." / "[0]ibp0:1/IB/SHARP" */
static void parse_ib_devs(rd_nccl_facts *f, const char *s, const char *end)
{
    const char *semi = memchr(s, ';', (size_t)(end - s));
    if (semi) end = semi;
    while (s < end) {
        const char *lb = memchr(s, '[', (size_t)(end - s));
        if (!lb) break;
        const char *rb = memchr(lb, ']', (size_t)(end - lb));
        if (!rb) break;
        const char *q = lb + 1;
        long idx;
        s = rb + 1;
        if (rd_scan_long(&q, rb, &idx) != 0 || q != rb) continue; /* "[RO]" */
        size_t n = token_len(s, end, " ;");
        const char *colon = memchr(s, ':', n);
        if (!colon) continue;
        if (f->n_devs == RD_NCCL_MAX_DEVS) break;
        rd_nccl_dev *d = &f->devs[f->n_devs];
        memset(d, 0, sizeof *d);
        rd_copy_trim(d->name, sizeof d->name, s, (size_t)(colon - s));
        const char *p = colon + 1;
        long port = 0;
        rd_scan_long(&p, s + n, &port);
        d->port = (int)port;
        if (p < s + n && *p == '/') {
            p++;
            size_t L = token_len(p, s + n, "/");
            rd_copy_trim(d->link, sizeof d->link, p, L);
            d->sharp = find(p, (size_t)(s + n - p), "SHARP") != NULL;
        }
        bool dup = false; /* every rank prints the same list: keep one of each */
        for (int k = 0; k < f->n_devs && !dup; k++)
            dup = f->devs[k].port == d->port && strcmp(f->devs[k].name, d->name) == 0;
        if (!dup) f->n_devs++;
        s += n;
    }
}

/* "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA" */
static int classify_transport(const char *via, const char *end)
{
    size_t n = token_len(via, end, " \t");
    if (starts(via, n, "P2P/IPC")) return RD_NCCL_TR_P2P_IPC;
    if (starts(via, n, "P2P/CUMEM")) return RD_NCCL_TR_P2P_CUMEM;
    if (starts(via, n, "P2P")) return RD_NCCL_TR_P2P_DIRECT;
    if (starts(via, n, "SHM") || starts(via, (size_t)(end - via), "direct shared memory"))
        return RD_NCCL_TR_SHM;
    if (starts(via, n, "NET/IB")) /* NET/IB/0, NET/IBext/1, NET/IBext_v8/0 */
        return find(via, n, "GDRDMA") ? RD_NCCL_TR_NET_IB_GDR : RD_NCCL_TR_NET_IB;
    if (starts(via, n, "NET/Socket")) return RD_NCCL_TR_NET_SOCKET;
    if (starts(via, n, "NET/")) return RD_NCCL_TR_NET_OTHER;
    if (starts(via, n, "COLLNET") || starts(via, n, "CollNet")) return RD_NCCL_TR_COLLNET;
    if (starts(via, n, "NVLS")) return RD_NCCL_TR_NVLS;
    return -1;
}

static void add_issue(rd_nccl_facts *f, const rd_prefix *pfx, int kind, long code, long vendor,
                      const char *detail, size_t detail_len, const char *line, size_t len,
                      long lineno)
{
    if (f->n_issues == RD_NCCL_MAX_ISSUES) {
        f->issues_dropped++;
        return;
    }
    rd_nccl_issue *is = &f->issues[f->n_issues++];
    memset(is, 0, sizeof *is);
    is->kind = kind;
    is->code = code;
    is->vendor_err = vendor;
    rd_copy_trim(is->detail, sizeof is->detail, detail ? detail : "", detail ? detail_len : 0);
    snprintf(is->host, sizeof is->host, "%s", pfx->host);
    is->rank = pfx->rank;
    is->dev = pfx->dev;
    is->ts = pfx->ts;
    set_at(&is->at, line, len, lineno);
}

static void classify_warn(rd_nccl_facts *f, const rd_prefix *pfx, const char *body, const char *end,
                          const char *loc, size_t loc_len, const char *line, size_t len, long lineno)
{
    size_t n = (size_t)(end - body);
    const char *k;
    if ((k = find(body, n, "Got completion")) != NULL) {
        /* three spellings across versions:
         *   "with error 12, opcode 0, len 0, vendor err 129"            (<= 2.18)
         *   "with status=12 opcode=0 len=0 vendor err 129 (Recv)"       (2.19+)
         *   "with status=transport retry counter exceeded(12) ... vendor_err=129" (newest) */
        long code = rd_long_after(k, end, "with error");
        if (code < 0) code = rd_long_after(k, end, "status=");
        if (code < 0) {
            const char *st = find(k, (size_t)(end - k), "status=");
            const char *lp = st ? memchr(st, '(', (size_t)(end - st)) : NULL;
            if (lp) code = rd_long_after(lp, end, "(");
        }
        long vendor = rd_long_after(k, end, "vendor err");
        if (vendor < 0) vendor = rd_long_after(k, end, "vendor_err=");
        const char *dir = find(k, (size_t)(end - k), "(Send)") ? "send"
                          : find(k, (size_t)(end - k), "(Recv)") ? "recv" : "";
        add_issue(f, pfx, RD_NCCL_ISSUE_IB_COMPLETION, code, vendor, dir, strlen(dir), line, len,
                  lineno);
    } else if ((k = find(body, n, "Call to ibv_")) != NULL ||
               ((k = find(body, n, "ibv_")) != NULL && find(body, n, "failed"))) {
        if (starts(k, (size_t)(end - k), "Call to ")) k += 8;
        /* "Call to ibv_modify_qp failed with error Network is unreachable"
         * "Call to ibv_modify_qp failed with 101 Network is unreachable, ..." */
        const char *w = find(k, (size_t)(end - k), "failed with ");
        long code = -1;
        char detail[96];
        size_t call_len = token_len(k, end, " ");
        if (w) {
            w += 12;
            if (starts(w, (size_t)(end - w), "error ")) w += 6;
            const char *q = w;
            long v;
            if (rd_scan_long(&q, end, &v) == 0) {
                code = v;
                w = q;
                while (w < end && *w == ' ') w++;
            }
            size_t rl = token_len(w, end, ",(");
            snprintf(detail, sizeof detail, "%.*s: %.*s", (int)(call_len > 40 ? 40 : call_len), k,
                     (int)(rl > 50 ? 50 : rl), w);
        } else {
            snprintf(detail, sizeof detail, "%.*s", (int)(call_len > 60 ? 60 : call_len), k);
        }
        add_issue(f, pfx, RD_NCCL_ISSUE_IBV_CALL, code, -1, detail, strlen(detail), line, len,
                  lineno);
    } else if ((k = find(body, n, "Connect to ")) != NULL && find(k, (size_t)(end - k), "failed")) {
        /* "Connect to 10.1.2.3<56821> failed : Connection refused" */
        k += 11;
        size_t al = token_len(k, end, " ");
        const char *r = find(k, (size_t)(end - k), "failed");
        r += 6;
        while (r < end && (*r == ' ' || *r == ':')) r++;
        char detail[96];
        snprintf(detail, sizeof detail, "%.*s: %.*s", (int)(al > 48 ? 48 : al), k,
                 (int)((size_t)(end - r) > 40 ? 40 : (size_t)(end - r)), r);
        add_issue(f, pfx, RD_NCCL_ISSUE_CONNECT, -1, -1, detail, strlen(detail), line, len, lineno);
    } else if (find(body, n, "shared memory") || find(body, n, "posix_fallocate") ||
               find(body, n, "/dev/shm")) {
        add_issue(f, pfx, RD_NCCL_ISSUE_SHM, -1, -1, NULL, 0, line, len, lineno);
    } else if (find(body, n, "NVLS") || find(body, n, "nvls") ||
               (loc && find(loc, loc_len, "nvls"))) {
        add_issue(f, pfx, RD_NCCL_ISSUE_NVLS, rd_long_after(body, end, "Cuda failure"), -1, NULL, 0,
                  line, len, lineno);
    } else if ((k = find(body, n, "Cuda failure")) != NULL) {
        add_issue(f, pfx, RD_NCCL_ISSUE_CUDA, rd_long_after(k, end, "Cuda failure"), -1, NULL, 0,
                  line, len, lineno);
    } else if (find(body, n, "unhandled system error") || find(body, n, "remote process exited")) {
        add_issue(f, pfx, RD_NCCL_ISSUE_SYSTEM, -1, -1, NULL, 0, line, len, lineno);
    } else {
        add_issue(f, pfx, RD_NCCL_ISSUE_OTHER, -1, -1, NULL, 0, line, len, lineno);
    }
    /* a net plugin that gives up is the first link of a socket fallback */
    if (find(body, n, "NET/OFI") || find(body, n, "NET/Plugin")) set_at_once(&f->plugin_fail_at, line, len, lineno);
}

static void note_env(rd_nccl_facts *f, const char *body, const char *end, long lineno)
{
    /* "NCCL_IB_GID_INDEX set by environment to 3." / "NCCL_IB_HCA set to mlx5_4" */
    const char *k = find(body, (size_t)(end - body), " set by environment to ");
    size_t kl = 23;
    if (!k) {
        k = find(body, (size_t)(end - body), " set to ");
        kl = 8;
    }
    if (!k || !starts(body, (size_t)(end - body), "NCCL_")) return;
    const char *v = k + kl;
    size_t vl = (size_t)(end - v);
    while (vl && (v[vl - 1] == '.' || v[vl - 1] == ' ')) vl--;
    int i;
    for (i = 0; i < f->n_env; i++)
        if ((size_t)(k - body) == strlen(f->env[i].name) && memcmp(f->env[i].name, body, (size_t)(k - body)) == 0)
            break;
    if (i == f->n_env) {
        if (f->n_env == RD_NCCL_MAX_ENV) return;
        f->n_env++;
    }
    rd_copy_trim(f->env[i].name, sizeof f->env[i].name, body, (size_t)(k - body));
    rd_copy_trim(f->env[i].value, sizeof f->env[i].value, v, vl);
    f->env[i].line = lineno;
}

const char *rd_nccl_env(const rd_nccl_facts *f, const char *name)
{
    for (int i = 0; i < f->n_env; i++)
        if (strcmp(f->env[i].name, name) == 0) return f->env[i].value;
    return NULL;
}

bool rd_nccl_gpu_has_nvls(const char *name)
{
    /* NVLS needs NVLink4+ multicast: Hopper (H100/H800/H200/H20/GH200) and
     * Blackwell (B100/B200/GB200/B300). */
    static const char *const gens[] = {"H100", "H800", "H200", "H20", "GH200", "B100", "B200", "GB200", "B300", "GB300"};
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
        if (strstr(name, gens[i])) return true;
    return false;
}

/* nccl-tests header: "#  Rank  0 Group  0 Pid  33347 on host device  0 [0x0f] NVIDIA H800" */
static bool nccl_tests_rank_line(rd_nccl_facts *f, const char *s, const char *end)
{
    size_t n = (size_t)(end - s);
    if (!starts(s, n, "#") || !find(s, n, " Rank ") || !find(s, n, " Pid ")) return false;
    const char *on = find(s, n, " on ");
    const char *dev = find(s, n, " device ");
    if (!on || !dev || dev < on) return true;
    char host[64];
    rd_copy_trim(host, sizeof host, on + 4, (size_t)(dev - on - 4));
    const char *rb = memchr(dev, ']', (size_t)(end - dev));
    if (host[0]) {
        /* each header line is one rank: count it on its host */
        const char *pidp = find(s, n, " Pid ");
        long pid = -1, d = -1;
        const char *q = pidp + 5;
        while (q < end && *q == ' ') q++;
        rd_scan_long(&q, end, &pid);
        q = dev + 8;
        while (q < end && *q == ' ') q++;
        rd_scan_long(&q, end, &d);
        note_host(f, host, pid, (int)d);
    }
    if (rb && f->n_gpus < RD_NCCL_MAX_GPUS) {
        rd_copy_trim(f->gpus[f->n_gpus], sizeof f->gpus[0], rb + 1, (size_t)(end - rb - 1));
        if (f->gpus[f->n_gpus][0]) f->n_gpus++;
    }
    return true;
}

void rd_nccl_line_pfx(rd_nccl_facts *f, const rd_prefix *pfx, const char *line, size_t len,
                      long lineno)
{
    f->lines++;
    const char *s = pfx->msg, *end = pfx->msg + pfx->msg_len;
    size_t n = pfx->msg_len;
    if (n == 0) return;
    /* fast reject: NCCL phrases all contain one of these letters early; lines
     * of other tools are skipped cheaply when they lack "NCCL"/"NET"/... */
    uint32_t mask = rd_keyset_scan(&f->keys_, s, n);
    if (!mask) return;
    bool tagged = false, warn = false;
    const char *body = s, *loc = NULL;
    size_t loc_len = 0;
    const char *tag = HAS(K_NCCL) ? find(s, n > 160 ? 160 : n, "NCCL ") : NULL;
    if (tag) {
        const char *t = tag + 5;
        if (starts(t, (size_t)(end - t), "INFO")) tagged = true;
        else if (starts(t, (size_t)(end - t), "WARN") || starts(t, (size_t)(end - t), "ERROR"))
            tagged = warn = true;
        if (tagged) {
            if (tag > s) { /* "transport/net_ib.cc:839 NCCL WARN" */
                loc = s;
                loc_len = (size_t)(tag - s);
            }
            body = t + (t[0] == 'E' ? 5 : 4);
            while (body < end && *body == ' ') body++;
        }
    }
    size_t bn = (size_t)(end - body);
    const char *k;

    /* version: "NCCL version 2.18.5+cuda12.0", also inside PyTorch errors */
    if (HAS(K_VERSION) && (k = find(s, n, "NCCL version ")) != NULL) {
        const char *v = k + 13;
        size_t vl = token_len(v, end, " ,)");
        if (vl && isdigit((unsigned char)*v) && !f->version[0]) {
            rd_copy_trim(f->version, sizeof f->version, v, vl);
            set_at(&f->version_at, line, len, lineno);
        }
        f->nccl_lines++;
        return;
    }
    if (HAS(K_RANK_HDR) && nccl_tests_rank_line(f, s, end)) return;

    if (warn) {
        f->nccl_lines++;
        f->warn_lines++;
        note_host(f, pfx->host, pfx->pid, pfx->dev);
        classify_warn(f, pfx, body, end, loc, loc_len, line, len, lineno);
        return;
    }

    bool known = true;
    if (HAS(K_BOOTSTRAP) && starts(body, bn, "Bootstrap") && (k = find(body, bn, "Using ")) != NULL) {
        const char *v = k + 6;
        if (v < end && *v == '[') v = memchr(v, ']', (size_t)(end - v)) ? (const char *)memchr(v, ']', (size_t)(end - v)) + 1 : v;
        if (!f->bootstrap_if[0]) {
            rd_copy_trim(f->bootstrap_if, sizeof f->bootstrap_if, v, token_len(v, end, " "));
            set_at(&f->bootstrap_at, line, len, lineno);
        }
    } else if (starts(body, bn, "NET/Plugin")) {
        if ((k = find(body, bn, "Loaded net plugin ")) != NULL) {
            rd_copy_trim(f->net_plugin, sizeof f->net_plugin, k + 18, (size_t)(end - k - 18));
            set_at(&f->net_plugin_at, line, len, lineno);
        } else if (find(body, bn, "No plugin found") && !f->net_plugin[0]) {
            snprintf(f->net_plugin, sizeof f->net_plugin, "internal");
            set_at(&f->net_plugin_at, line, len, lineno);
        }
    } else if (starts(body, bn, "P2P plugin ")) {
        if (!f->net_plugin[0] || strcmp(f->net_plugin, "internal") == 0) {
            rd_copy_trim(f->net_plugin, sizeof f->net_plugin, body + 11, bn - 11);
            set_at(&f->net_plugin_at, line, len, lineno);
        }
    } else if (starts(body, bn, "Using network ")) {
        rd_copy_trim(f->network, sizeof f->network, body + 14, bn - 14);
        set_at(&f->network_at, line, len, lineno);
        f->net = find(body, bn, "Socket") ? RD_NCCL_NET_SOCKET
                 : find(body, bn, "IB") ? RD_NCCL_NET_IB : RD_NCCL_NET_OTHER;
    } else if (starts(body, bn, "NET/IB") && (k = find(body, bn, "Using ")) != NULL &&
               find(body, bn, "[")) {
        parse_ib_devs(f, k + 6, end);
        set_at_once(&f->ib_using_at, line, len, lineno);
        if (!f->network_at.line) f->net = RD_NCCL_NET_IB;
    } else if (starts(body, bn, "NET/IB") && find(body, bn, "No device found")) {
        set_at_once(&f->ib_none_at, line, len, lineno);
    } else if (starts(body, bn, "NET/Socket") && find(body, bn, "Using ")) {
        set_at_once(&f->socket_using_at, line, len, lineno);
        if (!f->network_at.line && !f->ib_using_at.line) f->net = RD_NCCL_NET_SOCKET;
    } else if (HAS(K_GPU_DIRECT) && (k = find(body, bn, "GPU Direct RDMA ")) != NULL) {
        /* "GPU Direct RDMA Enabled for GPU 1a000 / HCA 0 (distance 2 <= 3), read 1"
         * "GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)"
         * "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)" */
        bool on = starts(k + 16, (size_t)(end - k - 16), "Enabled");
        bool off = starts(k + 16, (size_t)(end - k - 16), "Disabled");
        if (on || off) {
            if (on || f->gdr != RD_NCCL_GDR_ON) { /* any enabled path wins */
                f->gdr = on ? RD_NCCL_GDR_ON : RD_NCCL_GDR_OFF;
                const char *lp = memchr(k, '(', (size_t)(end - k));
                const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
                if (lp && rp) rd_copy_trim(f->gdr_reason, sizeof f->gdr_reason, lp + 1, (size_t)(rp - lp - 1));
                else if (off) snprintf(f->gdr_reason, sizeof f->gdr_reason, "no reason printed (peer memory module not loaded or not supported)");
                set_at(&f->gdr_at, line, len, lineno);
            }
        }
    } else if (HAS(K_GDR)) { /* NET/OFI "disabling GDR" */
        if (f->gdr != RD_NCCL_GDR_ON) {
            f->gdr = RD_NCCL_GDR_OFF;
            rd_copy_trim(f->gdr_reason, sizeof f->gdr_reason, body, bn);
            set_at(&f->gdr_at, line, len, lineno);
        }
    } else if ((starts(body, bn, "Channel ") || starts(body, bn, "Ring ")) && HAS(K_VIA) &&
               (k = find(body, bn, " via ")) != NULL) {
        int t = classify_transport(k + 5, end);
        if (t >= 0) {
            f->transports[t]++;
            set_at_once(&f->transport_at[t], line, len, lineno);
            if (t == RD_NCCL_TR_NET_IB_GDR) {
                f->gdr = RD_NCCL_GDR_ON;
                set_at_once(&f->gdr_at, line, len, lineno);
            }
        }
    } else if (starts(body, bn, "Channel ") || starts(body, bn, "Ring ")) {
        /* ring order lines: "Channel 00/02 :    0   1   2   3" */
        const char *c = memchr(body, ':', bn);
        if (c && find(c, (size_t)(end - c), "->") == NULL) f->rings++;
        else known = false;
    } else if (starts(body, bn, "Trees ") || starts(body, bn, "Tree ")) {
        f->trees++;
    } else if (HAS(K_COLL_CHANNELS) && (k = find(body, bn, " coll channels")) != NULL) {
        /* "16 coll channels, 0 nvls channels, 16 p2p channels, ..." */
        const char *p = body;
        long v;
        if (rd_scan_long(&p, k, &v) == 0) f->coll_channels = (int)v;
        const char *nv = find(body, bn, " nvls channels");
        if (nv) {
            const char *q = nv;
            while (q > body && isdigit((unsigned char)q[-1])) q--;
            if (rd_scan_long(&q, nv, &v) == 0) f->nvls_channels = (int)v;
        }
        set_at(&f->channels_at, line, len, lineno);
    } else if (HAS(K_NVLS) && find(body, bn, "NVLS multicast support is ")) {
        int avail = find(body, bn, "is not available") ? 0 : 1;
        if (f->nvls_available != 0) { /* one device without it is the news */
            f->nvls_available = avail;
            set_at(&f->nvls_at, line, len, lineno);
        }
    } else if (starts(body, bn, "NVLS comm ")) {
        if (f->nvls_available < 0) {
            f->nvls_available = 1;
            set_at(&f->nvls_at, line, len, lineno);
        }
    } else if ((HAS(K_NRANKS) && (k = find(body, bn, " nranks ")) != NULL) ||
               (HAS(K_NRANKS2) && (k = find(body, bn, " nRanks ")) != NULL)) {
        /* "comm 0x.. rank 7 nranks 8 cudaDev 7 ..." */
        long nr = rd_long_after(k, end, k[2] == 'r' ? " nranks" : " nRanks");
        long r = rd_long_after(body, k + 1, " rank ");
        if (nr > f->nranks && nr < 1000000) f->nranks = (int)nr;
        if (r > f->max_rank && r < 1000000) f->max_rank = (int)r;
    } else if (starts(body, bn, "NCCL_")) {
        note_env(f, body, end, lineno);
        if (starts(body, bn, "NCCL_IB_GID_INDEX")) {
            long g = rd_long_after(body, end, " to ");
            if (g >= 0) {
                f->gid_index = (int)g;
                set_at(&f->gid_at, line, len, lineno);
            }
        }
    } else if (starts(body, bn, "NET/IB") && (k = find(body, bn, " GID ")) != NULL) {
        /* "NET/IB: Dev 0 Port 1 qpn 58 mtu 3 GID 3 (0/A10B0A0AFFFF0000)" */
        long g = rd_long_after(k, end, " GID ");
        if (g >= 0 && f->gid_index < 0) {
            f->gid_index = (int)g;
            set_at(&f->gid_at, line, len, lineno);
        }
    } else {
        known = false;
    }
    if (known || tagged) {
        f->nccl_lines++;
        note_host(f, pfx->host, pfx->pid, pfx->dev);
    }
}

void rd_nccl_line(rd_nccl_facts *f, const char *line, size_t len, long lineno)
{
    rd_prefix pfx;
    rd_prefix_parse(line, len, &pfx);
    rd_nccl_line_pfx(f, &pfx, line, len, lineno);
}

void rd_nccl_finish(rd_nccl_facts *f)
{
    /* a socket transport in the channels is the strongest sign of the network */
    if (f->net == RD_NCCL_NET_UNKNOWN) {
        if (f->transports[RD_NCCL_TR_NET_IB] || f->transports[RD_NCCL_TR_NET_IB_GDR]) f->net = RD_NCCL_NET_IB;
        else if (f->transports[RD_NCCL_TR_NET_SOCKET]) f->net = RD_NCCL_NET_SOCKET;
    }
}

static void line_cb(void *ctx, const char *line, size_t len, long lineno)
{
    rd_nccl_line(ctx, line, len, lineno);
}

struct sniff_state {
    rd_nccl_facts *f;
    long lines;
};

static void sniff_cb(void *ctx, const char *line, size_t len, long lineno)
{
    struct sniff_state *st = ctx;
    st->lines++;
    rd_nccl_line(st->f, line, len, lineno);
}

int rd_nccl_sniff(const char *head, size_t n)
{
    rd_nccl_facts *f = malloc(sizeof *f);
    if (!f) return 0;
    rd_nccl_init(f, "");
    struct sniff_state st = {f, 0};
    rd_each_line(head, n, sniff_cb, &st);
    long hits = f->nccl_lines;
    free(f);
    if (hits >= 3 || (st.lines && hits * 3 >= st.lines && hits)) return 100;
    return hits ? 60 : 0;
}

void rd_nccl_parse_buf(rd_nccl_facts *f, const char *file, const char *buf, size_t len)
{
    rd_nccl_init(f, file);
    rd_each_line(buf, len, line_cb, f);
    rd_nccl_finish(f);
}
