/* nccl_log.c - NCCL_DEBUG log reader (see nccl_log.h; facts in ev_nccl.h).
 *
 * One pass, one line at a time. A line is NCCL's when, after the launcher and
 * "host:pid:tid [dev]" prefixes, it carries "NCCL INFO"/"NCCL WARN"/"NCCL
 * ERROR" (or the bare "file.cc:N WARN" of NCCL <= 2.4), or - for logs whose
 * prefixes the user stripped - when its body starts with one of the INFO
 * phrases below, or holds one of NCCL's failure phrases (FAIL_PHRASES). The
 * line after PyTorch's "Last error:" is NCCL's last WARN text
 * (ncclGetLastError) and is classified as a warning.
 *
 * Each phrase is matched by a literal substring; NCCL has reworded some
 * across 2.4..2.2x ("Bootstrap : Using [0]ens5" vs "Bootstrap: Using eth0",
 * "Channel 00 :" vs "Channel 00/0 :", "GID 3 (" inside two different QP
 * lines), and each variant seen in public logs is listed next to its matcher.
 */
#include "nccl_log.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"

/* Phrases whose presence decides which matchers run (rd_keyset); a line
 * without any of them is not NCCL's. */
enum {
    K_NCCL, K_NET, K_BOOTSTRAP, K_P2P_PLUGIN, K_USING_NETWORK, K_GPU_DIRECT, K_GDR, K_CHANNEL,
    K_RING, K_TREE, K_COLL_CHANNELS, K_NVLS, K_NRANKS, K_NRANKS2, K_RANK_HDR, K_VIA, K_VERSION,
    K_WARN, K_LAST_ERROR, K_CHECK_P2P, K_SHMEM, K_RCCL, K_FAIL,
};
static const char *const k_keys[] = {
    "NCCL", "NET/", "Bootstrap", "P2P plugin", "Using network", "GPU Direct RDMA ", "disabling GDR",
    "Channel ", "Ring ", "Tree", " coll channels", "NVLS", " nranks ", " nRanks ", " Rank ", " via ",
    "NCCL version ", " WARN ", "Last error", "intraNodeP2pSupport", "ncclMaxSharedMem", "RCCL",
    /* K_FAIL: first words of the failure phrases below (one gate bit) */
    "ompletion", "async", "ibv_", "Connect to", "shared memory", "fallocate", "ulticast", "Socket",
    "socket interface", "AF_INET",
};
#define HAS(k) (mask & (1u << (k)))
#define FAIL_BITS (~0u << K_FAIL)

/* Failure phrases NCCL prints that identify a line as NCCL's even without
 * its prefix (a pasted excerpt, PyTorch's "Last error:" text). */
static const char *const k_fail_phrases[] = {
    "Got completion from peer", "async fatal event", "Call to ibv_", "Error while creating shared memory segment",
    "posix_fallocate failed", "NVLink SHARP", "cuMulticast", "Socket creation failed", "no socket interface found",
    "neither AF_INET", "No usable listening interface",
};

#define MAX_SEEN 256
#define MAX_COMM_RANKS 64

typedef struct nst {
    ev_nccl *f;
    rd_keyset keys;
    bool last_error;   /* the previous non-empty line was "Last error:" */
    int n_seen;        /* distinct (host, pid, dev) */
    struct { uint32_t host_hash; long pid; int dev; } seen[MAX_SEEN];
    int n_comm;        /* (rank, nranks, host) of comm lines, for independent jobs */
    struct { int rank, nranks; uint32_t host_hash; } comm[MAX_COMM_RANKS];
} nst;

static void set_at(ev_at *at, const rd_line *ln)
{
    at->line = ln->no;
    at->rank = ln->pfx->rank >= 0 ? ln->pfx->rank : ln->pfx->local_rank;
    at->ts = ln->pfx->ts;
    snprintf(at->host, sizeof at->host, "%s", ln->pfx->host);
    rd_copy_trim(at->text, sizeof at->text, ln->text, ln->len);
}

/* first time only: keep the earliest evidence of a fact */
static void set_at_once(ev_at *at, const rd_line *ln)
{
    if (!at->line)
        set_at(at, ln);
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
    while (p < end && !strchr(stops, *p))
        p++;
    return (size_t)(p - s);
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void note_host(nst *s, const char *host, long pid, int dev)
{
    ev_nccl *f = s->f;
    if (!host[0])
        return;
    int i;
    for (i = 0; i < f->n_hosts; i++)
        if (strcmp(f->hosts[i], host) == 0)
            break;
    if (i == f->n_hosts) {
        if (f->n_hosts == EV_NCCL_MAX_HOSTS) {
            f->hosts_dropped++;
            return;
        }
        snprintf(f->hosts[i], sizeof f->hosts[i], "%s", host);
        f->host_ranks[i] = 0;
        f->n_hosts++;
    }
    uint32_t h = hash_str(host);
    for (int k = 0; k < s->n_seen; k++)
        if (s->seen[k].host_hash == h && s->seen[k].pid == pid && s->seen[k].dev == dev)
            return;
    if (s->n_seen < MAX_SEEN) {
        s->seen[s->n_seen].host_hash = h;
        s->seen[s->n_seen].pid = pid;
        s->seen[s->n_seen].dev = dev;
        s->n_seen++;
        f->host_ranks[i]++;
    }
}

/* "[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ..." / "[0]ibp0:1/IB/SHARP" */
static void parse_ib_devs(ev_nccl *f, const char *s, const char *end)
{
    const char *semi = memchr(s, ';', (size_t)(end - s));
    if (semi)
        end = semi;
    while (s < end) {
        const char *lb = memchr(s, '[', (size_t)(end - s));
        if (!lb)
            break;
        const char *rb = memchr(lb, ']', (size_t)(end - lb));
        if (!rb)
            break;
        const char *q = lb + 1;
        long idx;
        s = rb + 1;
        if (rd_scan_long(&q, rb, &idx) != 0 || q != rb)
            continue; /* "[RO]" */
        size_t n = token_len(s, end, " ;");
        const char *colon = memchr(s, ':', n);
        if (!colon)
            continue;
        if (f->n_devs == EV_NCCL_MAX_DEVS)
            break;
        ev_nccl_dev *d = &f->devs[f->n_devs];
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
        if (!dup)
            f->n_devs++;
        s += n;
    }
}

/* "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA" */
static int classify_transport(const char *via, const char *end)
{
    size_t n = token_len(via, end, " \t");
    if (starts(via, n, "P2P/IPC"))
        return EV_NCCL_TR_P2P_IPC;
    if (starts(via, n, "P2P/CUMEM"))
        return EV_NCCL_TR_P2P_CUMEM;
    if (starts(via, n, "P2P"))
        return EV_NCCL_TR_P2P_DIRECT;
    if (starts(via, n, "SHM") || starts(via, (size_t)(end - via), "direct shared memory"))
        return EV_NCCL_TR_SHM;
    if (starts(via, n, "NET/IB")) /* NET/IB/0, NET/IBext/1, NET/IBext_v8/0 */
        return find(via, n, "GDRDMA") ? EV_NCCL_TR_NET_IB_GDR : EV_NCCL_TR_NET_IB;
    if (starts(via, n, "NET/Socket"))
        return EV_NCCL_TR_NET_SOCKET;
    if (starts(via, n, "NET/"))
        return EV_NCCL_TR_NET_OTHER;
    if (starts(via, n, "COLLNET") || starts(via, n, "CollNet"))
        return EV_NCCL_TR_COLLNET;
    if (starts(via, n, "NVLS"))
        return EV_NCCL_TR_NVLS;
    return -1;
}

static void add_issue(ev_nccl *f, const rd_line *ln, int kind, long code, long vendor, const char *detail,
                      size_t detail_len)
{
    if (f->n_issues == EV_NCCL_MAX_ISSUES) {
        f->issues_dropped++;
        return;
    }
    ev_nccl_issue *is = &f->issues[f->n_issues++];
    memset(is, 0, sizeof *is);
    is->kind = kind;
    is->code = code;
    is->vendor_err = vendor;
    rd_copy_trim(is->detail, sizeof is->detail, detail ? detail : "", detail ? detail_len : 0);
    is->dev = ln->pfx->dev;
    set_at(&is->at, ln);
}

/* "Got completion from peer ..." in its three spellings:
 *   "with error 12, opcode 0, len 0, vendor err 129"                     (<= 2.18)
 *   "with status=12 opcode=0 len=0 vendor err 129 (Recv)"                (2.19+)
 *   "with status=transport retry counter exceeded(12) ... vendor_err=129" (newest)
 *   "with status=IBV_WC_REM_ACCESS_ERR(10)"                              (ibv names) */
static void warn_completion(ev_nccl *f, const rd_line *ln, const char *k, const char *end)
{
    long code = rd_long_after(k, end, "with error");
    if (code < 0)
        code = rd_long_after(k, end, "status=");
    if (code < 0) {
        const char *st = find(k, (size_t)(end - k), "status=");
        const char *lp = st ? memchr(st, '(', (size_t)(end - st)) : NULL;
        if (lp)
            code = rd_long_after(lp, end, "(");
    }
    long vendor = rd_long_after(k, end, "vendor err");
    if (vendor < 0)
        vendor = rd_long_after(k, end, "vendor_err=");
    const char *dir = find(k, (size_t)(end - k), "(Send)") ? "send" : find(k, (size_t)(end - k), "(Recv)") ? "recv" : "";
    add_issue(f, ln, EV_NCCL_ISSUE_IB_COMPLETION, code, vendor, dir, strlen(dir));
}

/* "Call to ibv_modify_qp failed with error Network is unreachable"
 * "Call to ibv_modify_qp failed with 101 Network is unreachable, ..." */
static void warn_ibv(ev_nccl *f, const rd_line *ln, const char *k, const char *end)
{
    if (starts(k, (size_t)(end - k), "Call to "))
        k += 8;
    const char *w = find(k, (size_t)(end - k), "failed with ");
    long code = -1;
    char detail[96];
    size_t call_len = token_len(k, end, " ");
    if (w) {
        w += 12;
        if (starts(w, (size_t)(end - w), "error "))
            w += 6;
        const char *q = w;
        long v;
        if (rd_scan_long(&q, end, &v) == 0) {
            code = v;
            w = q;
            while (w < end && *w == ' ')
                w++;
        }
        size_t rl = token_len(w, end, ",(");
        snprintf(detail, sizeof detail, "%.*s: %.*s", (int)(call_len > 40 ? 40 : call_len), k, (int)(rl > 50 ? 50 : rl),
                 w);
    } else {
        snprintf(detail, sizeof detail, "%.*s", (int)(call_len > 60 ? 60 : call_len), k);
    }
    add_issue(f, ln, EV_NCCL_ISSUE_IBV_CALL, code, -1, detail, strlen(detail));
}

/* "Connect to 10.1.2.3<56821> failed : Connection refused" */
static void warn_connect(ev_nccl *f, const rd_line *ln, const char *k, const char *end)
{
    k += 11;
    size_t al = token_len(k, end, " ");
    const char *r = find(k, (size_t)(end - k), "failed");
    r += 6;
    while (r < end && (*r == ' ' || *r == ':'))
        r++;
    char detail[96];
    snprintf(detail, sizeof detail, "%.*s: %.*s", (int)(al > 48 ? 48 : al), k,
             (int)((size_t)(end - r) > 40 ? 40 : (size_t)(end - r)), r);
    add_issue(f, ln, EV_NCCL_ISSUE_CONNECT, -1, -1, detail, strlen(detail));
}

/* "NET/IB : ibp198s0f0:1 async fatal event on QP: local access violation ..."
 * "NET/IB : Got async event : port error" */
static void warn_async(ev_nccl *f, const rd_line *ln, const char *body, const char *k, const char *end)
{
    char detail[96] = "";
    const char *colon = find(body, (size_t)(k - body), " : ");
    const char *dev = colon ? colon + 3 : body;
    if (starts(dev, (size_t)(k - dev), "NET/IB"))
        dev = k;
    size_t dl = token_len(dev, k, ": ");
    const char *what = find(k, (size_t)(end - k), ": ");
    what = what ? what + 2 : k;
    snprintf(detail, sizeof detail, "%.*s%s%.*s", (int)(dl > 32 ? 32 : dl), dev, dl ? ": " : "",
             (int)((size_t)(end - what) > 60 ? 60 : (size_t)(end - what)), what);
    add_issue(f, ln, EV_NCCL_ISSUE_IB_ASYNC, -1, -1, detail, strlen(detail));
}

/* The CUDA error number of "Cuda failure 401 '...'" / "CUDA error 401 '...'". */
static long cuda_code(const char *s, const char *end)
{
    long c = rd_long_after(s, end, "Cuda failure");
    if (c < 0)
        c = rd_long_after(s, end, "CUDA error");
    if (c < 0)
        c = rd_long_after(s, end, "cuda failure");
    return c;
}

/* The quoted CUDA error string ('invalid argument'), or "". */
static void quoted(const char *s, const char *end, char *out, size_t size)
{
    const char *q = memchr(s, '\'', (size_t)(end - s));
    const char *q2 = q ? memchr(q + 1, '\'', (size_t)(end - q - 1)) : NULL;
    if (q && q2)
        rd_copy_trim(out, size, q + 1, (size_t)(q2 - q - 1));
    else
        out[0] = '\0';
}

static void classify_warn(ev_nccl *f, const rd_line *ln, const char *body, const char *end, const char *loc,
                          size_t loc_len)
{
    size_t n = (size_t)(end - body);
    const char *k;
    char what[96];
    if ((k = find(body, n, "Got completion")) != NULL) {
        warn_completion(f, ln, k, end);
    } else if (find(body, n, "NET/OFI") && (k = find(body, n, "completed with error")) != NULL) {
        /* aws-ofi-nccl: "NET/OFI Request 0x7f.. completed with error. RC: 20. Error: unknown error. ..." */
        long rc = rd_long_after(k, end, "RC:");
        const char *e = find(k, (size_t)(end - k), "Error: ");
        add_issue(f, ln, EV_NCCL_ISSUE_OFI_COMPLETION, rc, -1, e ? e + 7 : NULL, e ? token_len(e + 7, end, ".") : 0);
    } else if ((k = find(body, n, "async fatal event")) != NULL || (k = find(body, n, "Got async event")) != NULL) {
        warn_async(f, ln, body, k, end);
    } else if ((k = find(body, n, "Call to ibv_")) != NULL ||
               ((k = find(body, n, "ibv_")) != NULL && find(body, n, "failed"))) {
        warn_ibv(f, ln, k, end);
    } else if ((k = find(body, n, "Connect to ")) != NULL && find(k, (size_t)(end - k), "failed")) {
        warn_connect(f, ln, k, end);
    } else if (find(body, n, "Socket creation failed") || find(body, n, "no socket interface found") ||
               find(body, n, "neither AF_INET") || find(body, n, "No usable listening interface") ||
               (find(body, n, "Bootstrap") && find(body, n, "no interface"))) {
        add_issue(f, ln, EV_NCCL_ISSUE_NO_SOCKET_IF, -1, -1, body, n);
    } else if (find(body, n, "shared memory") || find(body, n, "posix_fallocate") || find(body, n, "/dev/shm")) {
        add_issue(f, ln, EV_NCCL_ISSUE_SHM, -1, -1, NULL, 0);
    } else if (find(body, n, "NVLS") || find(body, n, "nvls") || find(body, n, "ulticast") ||
               (loc && find(loc, loc_len, "nvls"))) {
        quoted(body, end, what, sizeof what);
        add_issue(f, ln, EV_NCCL_ISSUE_NVLS, cuda_code(body, end), -1, what, strlen(what));
    } else if ((k = find(body, n, "Duplicate GPU detected")) != NULL) {
        /* "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000" (init.cc) */
        add_issue(f, ln, EV_NCCL_ISSUE_DUP_GPU, -1, -1, k, (size_t)(end - k));
    } else if (find(body, n, "peer access is not supported") || find(body, n, "failed to open CUDA IPC handle") ||
               cuda_code(body, end) == 217) {
        /* "Cuda failure 217 'peer access is not supported between these two devices'",
         * "transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access ..." */
        add_issue(f, ln, EV_NCCL_ISSUE_P2P, 217, -1, NULL, 0);
    } else if (find(body, n, "Connection closed by remote peer") || find(body, n, "Connection reset by peer") ||
               (find(body, n, "Call to recv from") && find(body, n, "Broken pipe"))) {
        /* "Net : Connection closed by remote peer 10.0.0.4<45932>" (a host name too),
         * "socketProgressOpt: Call to recv from 10.0.0.4<45932> failed : Connection reset by peer",
         * "Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe" */
        const char *k2 = find(body, n, "remote peer ");
        const char *peer = k2 ? k2 + 12 : (k2 = find(body, n, " from ")) != NULL ? k2 + 6 : NULL;
        add_issue(f, ln, EV_NCCL_ISSUE_PEER_CLOSED, -1, -1, peer, peer ? token_len(peer, end, " :,") : 0);
    } else if ((k = find(body, n, "Cuda failure")) != NULL || (k = find(body, n, "CUDA error")) != NULL) {
        quoted(k, end, what, sizeof what);
        add_issue(f, ln, EV_NCCL_ISSUE_CUDA, cuda_code(k, end), -1, what, strlen(what));
    } else if (find(body, n, "unhandled system error") || find(body, n, "remote process exited")) {
        add_issue(f, ln, EV_NCCL_ISSUE_SYSTEM, -1, -1, NULL, 0);
    } else {
        add_issue(f, ln, EV_NCCL_ISSUE_OTHER, -1, -1, NULL, 0);
    }
    /* a net plugin that gives up is the first link of a socket fallback */
    if (find(body, n, "NET/OFI") || find(body, n, "NET/Plugin"))
        set_at_once(&f->plugin_fail_at, ln);
}

static void note_env(ev_nccl *f, const char *body, const char *end, long lineno)
{
    /* "NCCL_IB_GID_INDEX set by environment to 3." / "NCCL_IB_HCA set to mlx5_4" */
    const char *k = find(body, (size_t)(end - body), " set by environment to ");
    size_t kl = 23;
    if (!k) {
        k = find(body, (size_t)(end - body), " set to ");
        kl = 8;
    }
    if (!k || !starts(body, (size_t)(end - body), "NCCL_"))
        return;
    const char *v = k + kl;
    size_t vl = (size_t)(end - v);
    while (vl && (v[vl - 1] == '.' || v[vl - 1] == ' '))
        vl--;
    int i;
    for (i = 0; i < f->n_env; i++)
        if ((size_t)(k - body) == strlen(f->env[i].name) && memcmp(f->env[i].name, body, (size_t)(k - body)) == 0)
            break;
    if (i == f->n_env) {
        if (f->n_env == EV_NCCL_MAX_ENV)
            return;
        f->n_env++;
    }
    rd_copy_trim(f->env[i].name, sizeof f->env[i].name, body, (size_t)(k - body));
    rd_copy_trim(f->env[i].value, sizeof f->env[i].value, v, vl);
    f->env[i].line = lineno;
}

/* nccl-tests header: "#  Rank  0 Group  0 Pid  33347 on host device  0 [0x0f] NVIDIA H800" */
static bool nccl_tests_rank_line(nst *st, const char *s, const char *end)
{
    ev_nccl *f = st->f;
    size_t n = (size_t)(end - s);
    if (!starts(s, n, "#") || !find(s, n, " Rank ") || !find(s, n, " Pid "))
        return false;
    const char *on = find(s, n, " on ");
    const char *dev = find(s, n, " device ");
    if (!on || !dev || dev < on)
        return true;
    char host[64];
    rd_copy_trim(host, sizeof host, on + 4, (size_t)(dev - on - 4));
    const char *rb = memchr(dev, ']', (size_t)(end - dev));
    if (host[0]) {
        /* each header line is one rank: count it on its host */
        const char *pidp = find(s, n, " Pid ");
        long pid = -1, d = -1;
        const char *q = pidp + 5;
        while (q < end && *q == ' ')
            q++;
        rd_scan_long(&q, end, &pid);
        q = dev + 8;
        while (q < end && *q == ' ')
            q++;
        rd_scan_long(&q, end, &d);
        note_host(st, host, pid, (int)d);
    }
    if (rb && f->n_gpus < EV_NCCL_MAX_GPUS) {
        rd_copy_trim(f->gpus[f->n_gpus], sizeof f->gpus[0], rb + 1, (size_t)(end - rb - 1));
        if (f->gpus[f->n_gpus][0])
            f->n_gpus++;
    }
    return true;
}

/* "comm 0x.. rank 7 nranks 8 cudaDev 7 ..." / "comm 0x.. rank 0 nRanks 2 nNodes 1 localRanks 2" */
static void comm_line(nst *st, const rd_line *ln, const char *body, const char *k, const char *end)
{
    ev_nccl *f = st->f;
    long nr = rd_long_after(k, end, k[2] == 'r' ? " nranks" : " nRanks");
    long r = rd_long_after(body, k + 1, " rank ");
    long nn = rd_long_after(k, end, " nNodes ");
    if (nr > f->nranks && nr < 1000000)
        f->nranks = (int)nr;
    if (r > f->max_rank && r < 1000000)
        f->max_rank = (int)r;
    if (nn > f->nnodes && nn < 1000000)
        f->nnodes = (int)nn;
    /* the same rank of a same-sized communicator on two hosts: two
     * communicators, i.e. independent jobs (nccl-tests built without MPI) */
    if (r < 0 || nr <= 0 || !ln->pfx->host[0])
        return;
    uint32_t h = hash_str(ln->pfx->host);
    for (int i = 0; i < st->n_comm; i++)
        if (st->comm[i].rank == r && st->comm[i].nranks == nr) {
            if (st->comm[i].host_hash != h && !f->independent_at.line) {
                f->independent_comms++;
                set_at(&f->independent_at, ln);
            }
            return;
        }
    if (st->n_comm < MAX_COMM_RANKS) {
        st->comm[st->n_comm].rank = (int)r;
        st->comm[st->n_comm].nranks = (int)nr;
        st->comm[st->n_comm].host_hash = h;
        st->n_comm++;
    }
}

/* "NET/IB: Dev 0 Port 1 qpn 58 mtu 3 GID 3 (0/A10B0A0AFFFF0000)"
 * "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 query_ece={...} GID 0 (...)" */
static void qp_line(nst *st, const rd_line *ln, const char *body, const char *end)
{
    ev_nccl *f = st->f;
    long dev = rd_long_after(body, end, " Dev ");
    long mtu = rd_long_after(body, end, " mtu ");
    long gid = rd_long_after(body, end, " GID ");
    if (gid >= 0 && f->gid_index < 0) {
        f->gid_index = (int)gid;
        set_at(&f->gid_at, ln);
    }
    static const int mtu_bytes[] = {0, 256, 512, 1024, 2048, 4096};
    int mb = mtu >= 1 && mtu <= 5 ? mtu_bytes[mtu] : -1;
    for (int i = 0; i < f->n_qps; i++)
        if (f->qps[i].dev == dev && f->qps[i].mtu_bytes == mb && f->qps[i].gid_index == gid &&
            strcmp(f->qps[i].host, ln->pfx->host) == 0)
            return;
    if (f->n_qps == EV_NCCL_MAX_QPS)
        return;
    ev_nccl_qp *q = &f->qps[f->n_qps++];
    snprintf(q->host, sizeof q->host, "%s", ln->pfx->host);
    q->dev = (int)dev;
    q->mtu_bytes = mb;
    q->gid_index = (int)gid;
    q->line = ln->no;
}

/* A channel line whose "Channel xx :" the user cut: "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA". */
static bool bare_channel(const char *s, size_t n)
{
    const char *p = s, *end = s + n;
    while (p < end && isdigit((unsigned char)*p))
        p++;
    return p > s && p < end && *p == '[' && find(p, (size_t)(end - p), "] -> ") != NULL;
}

/* The INFO lines; returns false when the line is not one NCCL prints. */
static bool info_line(nst *st, const rd_line *ln, uint32_t mask, const char *body, const char *end)
{
    ev_nccl *f = st->f;
    size_t bn = (size_t)(end - body);
    const char *k;
    if (HAS(K_BOOTSTRAP) && starts(body, bn, "Bootstrap") && (k = find(body, bn, "Using ")) != NULL) {
        const char *v = k + 6;
        const char *rb = v < end && *v == '[' ? memchr(v, ']', (size_t)(end - v)) : NULL;
        if (rb)
            v = rb + 1;
        if (!f->bootstrap_if[0]) {
            rd_copy_trim(f->bootstrap_if, sizeof f->bootstrap_if, v, token_len(v, end, " "));
            set_at(&f->bootstrap_at, ln);
        }
    } else if (starts(body, bn, "NET/Plugin")) {
        if ((k = find(body, bn, "Loaded net plugin ")) != NULL) {
            rd_copy_trim(f->net_plugin, sizeof f->net_plugin, k + 18, (size_t)(end - k - 18));
            set_at(&f->net_plugin_at, ln);
        } else if ((find(body, bn, "No plugin found") || find(body, bn, "internal network plugin") ||
                    find(body, bn, "using internal implementation")) &&
                   !f->net_plugin[0]) {
            snprintf(f->net_plugin, sizeof f->net_plugin, "internal");
            set_at(&f->net_plugin_at, ln);
        }
    } else if (starts(body, bn, "P2P plugin ")) {
        if (!f->net_plugin[0] || strcmp(f->net_plugin, "internal") == 0) {
            rd_copy_trim(f->net_plugin, sizeof f->net_plugin, body + 11, bn - 11);
            set_at(&f->net_plugin_at, ln);
        }
    } else if (starts(body, bn, "Using network ")) {
        rd_copy_trim(f->network, sizeof f->network, body + 14, bn - 14);
        set_at(&f->network_at, ln);
        f->net = find(body, bn, "Socket") ? EV_NCCL_NET_SOCKET : find(body, bn, "IB") ? EV_NCCL_NET_IB : EV_NCCL_NET_OTHER;
    } else if (starts(body, bn, "NET/IB") && (k = find(body, bn, "Using ")) != NULL && find(body, bn, "[")) {
        parse_ib_devs(f, k + 6, end);
        set_at_once(&f->ib_using_at, ln);
        if (!f->network_at.line)
            f->net = EV_NCCL_NET_IB;
    } else if (starts(body, bn, "NET/IB") && find(body, bn, "No device found")) {
        set_at_once(&f->ib_none_at, ln);
    } else if (starts(body, bn, "NET/Socket") && find(body, bn, "Using ")) {
        set_at_once(&f->socket_using_at, ln);
        if (!f->network_at.line && !f->ib_using_at.line)
            f->net = EV_NCCL_NET_SOCKET;
    } else if (HAS(K_GPU_DIRECT) && (k = find(body, bn, "GPU Direct RDMA ")) != NULL) {
        /* "GPU Direct RDMA Enabled for GPU 1a000 / HCA 0 (distance 2 <= 3), read 1"
         * "GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)"
         * "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)" */
        bool on = starts(k + 16, (size_t)(end - k - 16), "Enabled");
        bool off = starts(k + 16, (size_t)(end - k - 16), "Disabled");
        if ((on || off) && (on || f->gdr != EV_NCCL_GDR_ON)) { /* any enabled path wins */
            f->gdr = on ? EV_NCCL_GDR_ON : EV_NCCL_GDR_OFF;
            const char *lp = memchr(k, '(', (size_t)(end - k));
            const char *rp = lp ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
            if (lp && rp)
                rd_copy_trim(f->gdr_reason, sizeof f->gdr_reason, lp + 1, (size_t)(rp - lp - 1));
            else if (off)
                snprintf(f->gdr_reason, sizeof f->gdr_reason,
                         "no reason printed (peer memory module not loaded or not supported)");
            set_at(&f->gdr_at, ln);
        }
    } else if (HAS(K_GDR)) { /* NET/OFI "disabling GDR" */
        if (f->gdr != EV_NCCL_GDR_ON) {
            f->gdr = EV_NCCL_GDR_OFF;
            rd_copy_trim(f->gdr_reason, sizeof f->gdr_reason, body, bn);
            set_at(&f->gdr_at, ln);
        }
    } else if ((starts(body, bn, "Channel ") || starts(body, bn, "Ring ") || bare_channel(body, bn)) && HAS(K_VIA) &&
               (k = find(body, bn, " via ")) != NULL) {
        int t = classify_transport(k + 5, end);
        if (t < 0)
            return false;
        f->transports[t]++;
        set_at_once(&f->transport_at[t], ln);
        if (t == EV_NCCL_TR_NET_IB_GDR) {
            f->gdr = EV_NCCL_GDR_ON;
            set_at_once(&f->gdr_at, ln);
        }
    } else if (starts(body, bn, "Channel ") || starts(body, bn, "Ring ")) {
        /* ring order lines: "Channel 00/02 :    0   1   2   3" */
        const char *c = memchr(body, ':', bn);
        if (!c || find(c, (size_t)(end - c), "->") != NULL)
            return false;
        f->rings++;
    } else if (starts(body, bn, "Trees ") || starts(body, bn, "Tree ")) {
        f->trees++;
    } else if (HAS(K_COLL_CHANNELS) && (k = find(body, bn, " coll channels")) != NULL) {
        /* "16 coll channels, 0 nvls channels, 16 p2p channels, ..." */
        const char *p = body;
        long v;
        if (rd_scan_long(&p, k, &v) == 0)
            f->coll_channels = (int)v;
        const char *nv = find(body, bn, " nvls channels");
        if (nv) {
            const char *q = nv;
            while (q > body && isdigit((unsigned char)q[-1]))
                q--;
            if (rd_scan_long(&q, nv, &v) == 0)
                f->nvls_channels = (int)v;
        }
        set_at(&f->channels_at, ln);
    } else if (HAS(K_NVLS) && find(body, bn, "NVLS multicast support is ")) {
        int avail = find(body, bn, "is not available") ? 0 : 1;
        if (f->nvls_available != 0) { /* one device without it is the news */
            f->nvls_available = avail;
            set_at(&f->nvls_at, ln);
        }
    } else if (starts(body, bn, "NVLS comm ")) {
        if (f->nvls_available < 0) {
            f->nvls_available = 1;
            set_at(&f->nvls_at, ln);
        }
    } else if (HAS(K_CHECK_P2P) && (k = find(body, bn, "intraNodeP2pSupport ")) != NULL) {
        /* "Check P2P Type intraNodeP2pSupport 0 directMode 1" (2.2x) */
        long v = rd_long_after(k, end, "intraNodeP2pSupport");
        if (v == 0 || v == 1) {
            if (f->p2p_support != 0) { /* one rank without it is the news */
                f->p2p_support = (int)v;
                set_at(&f->p2p_support_at, ln);
            }
        }
    } else if (HAS(K_SHMEM) && (k = find(body, bn, "ncclMaxSharedMem ")) != NULL && find(body, bn, " exceeds ")) {
        /* "ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856" */
        f->shmem_need = rd_long_after(k, end, "ncclMaxSharedMem");
        f->shmem_max = rd_long_after(k + 17, end, "maxSharedMem");
        set_at_once(&f->shmem_at, ln);
    } else if ((HAS(K_NRANKS) && (k = find(body, bn, " nranks ")) != NULL) ||
               (HAS(K_NRANKS2) && (k = find(body, bn, " nRanks ")) != NULL)) {
        comm_line(st, ln, body, k, end);
    } else if (starts(body, bn, "NCCL_")) {
        note_env(f, body, end, ln->no);
        if (starts(body, bn, "NCCL_IB_GID_INDEX")) {
            long g = rd_long_after(body, end, " to ");
            if (g >= 0) {
                f->gid_index = (int)g;
                set_at(&f->gid_at, ln);
            }
        }
    } else if (starts(body, bn, "NET/IB") && find(body, bn, " qpn ")) {
        qp_line(st, ln, body, end);
    } else if (starts(body, bn, "NET/IB") && (k = find(body, bn, " GID ")) != NULL) {
        long g = rd_long_after(k, end, " GID ");
        if (g >= 0 && f->gid_index < 0) {
            f->gid_index = (int)g;
            set_at(&f->gid_at, ln);
        }
    } else {
        return false;
    }
    return true;
}

/* "NCCL version 2.18.5+cuda12.0" (also inside PyTorch errors), "RCCL version 2.18.3+hip6.0" */
static bool version_line(ev_nccl *f, const rd_line *ln, const char *s, const char *end)
{
    size_t n = (size_t)(end - s);
    const char *k = find(s, n, "CCL version ");
    if (!k || k == s || (k[-1] != 'N' && k[-1] != 'R'))
        return false;
    const char *v = k + 12;
    size_t vl = token_len(v, end, " ,)");
    if (!vl || !isdigit((unsigned char)*v))
        return false;
    if (k[-1] == 'R' || find(v, vl, "hip"))
        f->rccl = true;
    if (!f->version[0]) {
        rd_copy_trim(f->version, sizeof f->version, v, vl);
        set_at(&f->version_at, ln);
    }
    /* the banner NCCL prints once per communicator's rank 0 (a bare line or
     * "NCCL INFO NCCL version"), not PyTorch's ", NCCL version 2.21.5" */
    if (k - 1 == s || find(s, (size_t)(k - s), "INFO "))
        f->n_versions++;
    return true;
}

/* The "NCCL WARN" / "NCCL INFO" tag after the prefix, or the bare
 * "file.cc:123 WARN " of old NCCL; sets *warn, *body (the message after
 * the tag) and the location before it. */
static bool find_tag(const char *s, const char *end, uint32_t mask, bool *warn, const char **body, const char **loc,
                     size_t *loc_len)
{
    size_t n = (size_t)(end - s);
    const char *tag = HAS(K_NCCL) ? find(s, n > 160 ? 160 : n, "NCCL ") : NULL, *b = NULL;
    if (tag) {
        const char *t = tag + 5;
        if (starts(t, (size_t)(end - t), "INFO"))
            b = t + 4;
        else if (starts(t, (size_t)(end - t), "WARN"))
            b = t + 4;
        else if (starts(t, (size_t)(end - t), "ERROR"))
            b = t + 5;
        *warn = b && t[0] != 'I';
    }
    if (!b && HAS(K_WARN)) { /* "misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]" */
        const char *w = find(s, n > 160 ? 160 : n, " WARN ");
        if (w && w > s && isdigit((unsigned char)w[-1]) && memchr(s, ':', (size_t)(w - s)) &&
            (find(s, (size_t)(w - s), ".c") || find(s, (size_t)(w - s), ".h"))) {
            tag = w + 1;
            b = w + 6;
            *warn = true;
        }
    }
    if (!b)
        return false;
    if (tag > s) { /* "transport/net_ib.cc:839 NCCL WARN" */
        *loc = s;
        *loc_len = (size_t)(tag - s);
    }
    while (b < end && *b == ' ')
        b++;
    *body = b;
    return true;
}

static bool fail_phrase(const char *s, size_t n)
{
    for (size_t i = 0; i < CP_ARRAY_LEN(k_fail_phrases); i++)
        if (find(s, n, k_fail_phrases[i]))
            return true;
    return false;
}

void rd_nccl_line(void *stp, const rd_line *ln)
{
    nst *st = stp;
    ev_nccl *f = st->f;
    f->lines++;
    const char *s = ln->pfx->msg, *end = s + ln->pfx->msg_len;
    size_t n = ln->pfx->msg_len;
    while (n && (*s == ' ' || *s == '\t')) { /* "  Error while creating ..." under "Last error:" */
        s++;
        n--;
    }
    if (n == 0)
        return;
    bool after_last_error = st->last_error;
    st->last_error = false;
    /* fast reject: a line holding none of the phrases is not NCCL's */
    uint32_t mask = rd_keyset_scan(&st->keys, s, n);
    if (!mask && !after_last_error)
        return;
    if (HAS(K_LAST_ERROR) && starts(s, n, "Last error")) {
        st->last_error = true; /* the next line is NCCL's last WARN text */
        return;
    }
    bool warn = false;
    const char *body = s, *loc = NULL;
    size_t loc_len = 0;
    bool tagged = find_tag(s, end, mask, &warn, &body, &loc, &loc_len);
    if (!tagged && (after_last_error || ((mask & FAIL_BITS) && fail_phrase(s, n)))) {
        tagged = warn = true; /* an untagged failure line: NCCL's words, prefix stripped */
        body = s;
    }
    if (HAS(K_VERSION) || HAS(K_RCCL)) {
        if (version_line(f, ln, s, end)) {
            f->nccl_lines++;
            return;
        }
    }
    if (HAS(K_RANK_HDR) && nccl_tests_rank_line(st, s, end))
        return;
    if (warn) {
        f->nccl_lines++;
        f->warn_lines++;
        note_host(st, ln->pfx->host, ln->pfx->pid, ln->pfx->dev);
        classify_warn(f, ln, body, end, loc, loc_len);
        return;
    }
    if (info_line(st, ln, mask, body, end) || tagged) {
        f->nccl_lines++;
        note_host(st, ln->pfx->host, ln->pfx->pid, ln->pfx->dev);
    }
}

void *rd_nccl_begin(const char *name)
{
    (void)name;
    nst *st = cp_xcalloc(1, sizeof *st);
    ev_nccl *f = cp_xmalloc(sizeof *f);
    memset(f, 0, offsetof(ev_nccl, devs)); /* the arrays after it are filled as items come */
    f->gid_index = -1;
    f->coll_channels = f->nvls_channels = -1;
    f->nvls_available = -1;
    f->p2p_support = -1;
    f->shmem_need = f->shmem_max = -1;
    f->max_rank = -1;
    st->f = f;
    rd_keyset_init(&st->keys, k_keys, (int)CP_ARRAY_LEN(k_keys));
    return st;
}

void *rd_nccl_end(void *stp, diag_set *diag)
{
    nst *st = stp;
    ev_nccl *f = st->f;
    free(st);
    if (!f->nccl_lines && !f->n_issues) {
        free(f);
        return NULL;
    }
    /* a socket transport in the channels is the strongest sign of the network */
    if (f->net == EV_NCCL_NET_UNKNOWN) {
        if (f->transports[EV_NCCL_TR_NET_IB] || f->transports[EV_NCCL_TR_NET_IB_GDR])
            f->net = EV_NCCL_NET_IB;
        else if (f->transports[EV_NCCL_TR_NET_SOCKET])
            f->net = EV_NCCL_NET_SOCKET;
    }
    if (f->issues_dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->issues_dropped, NULL, -1);
    if (f->hosts_dropped)
        diag_count_n(diag, DIAG_LIMIT_REACHED, (uint64_t)f->hosts_dropped, NULL, -1);
    return f;
}

int rd_nccl_sniff(const char *head, size_t n)
{
    void *st = rd_nccl_begin("");
    rd_lines it;
    rd_lines_init(&it, head, n);
    const char *line;
    size_t len;
    long lines = 0;
    while (rd_lines_next(&it, &line, &len)) {
        rd_prefix pfx;
        rd_prefix_parse(line, len, &pfx);
        rd_line ln = {line, len, (long)it.lineno, &pfx};
        rd_nccl_line(st, &ln);
        lines++;
    }
    long hits = ((nst *)st)->f->nccl_lines;
    free(((nst *)st)->f);
    free(st);
    if (hits >= 3 || (lines && hits * 3 >= lines && hits))
        return 100;
    return hits ? 60 : 0;
}
