/* an_rules_nccl.c - rule family "nccl": what NCCL_DEBUG logs say (facts in
 * src/model/ev_nccl.h), failure signatures first, then the transport NCCL
 * chose (sockets, GDR: configuration a user changes), then capacity (one
 * NIC) and the intra-node path. At equal severity and confidence the table
 * order decides, so a misconfiguration comes before a capacity observation.
 *
 * An NCCL log says what is wrong but not how much of the step it costs:
 * these findings carry no gain. Each rule's row names the NCCL message it
 * keys on and where its meaning is documented.
 */
#include "rulebook.h"

#include <stdio.h>
#include <string.h>

#include "../base/util.h"

/* The first issue of a kind over all NCCL logs (earliest in time when the
 * lines have one), with the file it came from and how many there are. */
typedef struct issue_ref {
    const ev_nccl_issue *is;
    const ev_file *f;
    int count;
} issue_ref;

typedef bool (*issue_pred)(const ev_nccl_issue *);

static issue_ref first_issue(rb_ctx *c, int kind, issue_pred pred)
{
    issue_ref best = {NULL, NULL, 0};
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        for (int k = 0; k < n->n_issues; k++) {
            const ev_nccl_issue *is = &n->issues[k];
            if (is->kind != kind || (pred && !pred(is)))
                continue;
            best.count++;
            if (!best.is || ev_time_cmp(is->at.ts, best.is->at.ts) == -1) {
                best.is = is;
                best.f = f;
            }
        }
    }
    return best;
}

/* Cite every issue of a kind (the finding caps its evidence). */
static void cite_issues(rb_ctx *c, rb_finding *x, int kind, issue_pred pred)
{
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        for (int k = 0; k < n->n_issues; k++)
            if (n->issues[k].kind == kind && (!pred || pred(&n->issues[k])))
                rb_cite(x, f, &n->issues[k].at);
    }
}

static const char *where(const ev_nccl_issue *is, char *buf, size_t size)
{
    if (is->at.host[0] && is->at.rank >= 0)
        snprintf(buf, size, " on host %s (rank %d)", is->at.host, is->at.rank);
    else if (is->at.host[0])
        snprintf(buf, size, " on host %s", is->at.host);
    else if (is->at.rank >= 0)
        snprintf(buf, size, " on rank %d", is->at.rank);
    else
        buf[0] = '\0';
    return buf;
}

/* The GID index and its line from any log, or -1. */
static int gid_of(rb_ctx *c, const ev_file **gf)
{
    RB_EACH(c, EV_NCCL_LOG, f)
        if (f->as.nccl->gid_index >= 0) {
            *gf = f;
            return f->as.nccl->gid_index;
        }
    *gf = NULL;
    return -1;
}

static const char *first_hca(rb_ctx *c)
{
    RB_EACH(c, EV_NCCL_LOG, f)
        if (f->as.nccl->n_devs)
            return f->as.nccl->devs[0].name;
    return "<hca>";
}

static bool any_gdr_on(rb_ctx *c)
{
    RB_EACH(c, EV_NCCL_LOG, f)
        if (f->as.nccl->gdr == EV_NCCL_GDR_ON)
            return true;
    return false;
}

/* ---- IB completion errors ---- */

static bool is_err12(const ev_nccl_issue *is) { return is->code == 12; }
static bool is_err4(const ev_nccl_issue *is) { return is->code == 4; }
static bool is_other_completion(const ev_nccl_issue *is) { return is->code != 12 && is->code != 4; }

static void r_ib_err12(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IB_COMPLETION, is_err12);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96], gid[48] = "GID index not shown in the log";
    const ev_file *gf;
    int g = gid_of(c, &gf);
    if (g >= 0)
        snprintf(gid, sizeof gid, "GID index %d", g);
    char vendor[48] = "";
    if (ir.is->vendor_err >= 0)
        snprintf(vendor, sizeof vendor, ", vendor err %ld", ir.is->vendor_err);
    rb_title(x, "IB/RoCE transport retry counter exceeded (completion error 12%s)%s: the NICs cannot reach each other over RDMA (%s)",
             vendor, where(ir.is, w, sizeof w), gid);
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IB_COMPLETION, is_err12);
    if (gf)
        rb_cite(x, gf, &gf->as.nccl->gid_at);
    rb_step(x, "show_gids   # pick the RoCEv2 GID with an IPv4 address, then NCCL_IB_GID_INDEX=<index> on every node (often 3)");
    rb_step(x, "ib_write_bw -d %s -x <gid index> on one node, ib_write_bw -d %s -x <gid index> <peer ip> on the other",
            first_hca(c), first_hca(c));
    rb_step(x, "check both NICs are in the same subnet/VLAN and the switches route RoCE (PFC/ECN, traffic class: NCCL_IB_TC), MTU end to end");
    rb_step(x, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the GID and device each rank uses");
}

static void r_ib_err4(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IB_COMPLETION, is_err4);
    if (!ir.is)
        return;
    bool gdr = any_gdr_on(c);
    rb_finding *x = rb_raise(c, self);
    if (gdr)
        rb_confidence(x, 0.9);
    char w[96], vendor[48] = "";
    if (ir.is->vendor_err >= 0)
        snprintf(vendor, sizeof vendor, ", vendor err %ld", ir.is->vendor_err);
    rb_title(x, "IB local protection error (completion error 4%s)%s with GPU Direct RDMA: PCIe ACS on the switches between GPU and NIC breaks peer-to-peer DMA%s",
             vendor, where(ir.is, w, sizeof w), gdr ? "" : " (GDR use is implied by this signature)");
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IB_COMPLETION, is_err4);
    RB_EACH(c, EV_NCCL_LOG, f)
        if (f->as.nccl->gdr == EV_NCCL_GDR_ON)
            rb_cite(x, f, &f->as.nccl->gdr_at);
    rb_step(x, "sudo lspci -vvv | grep ACSCtl   # 'SrcValid+' on a PCIe switch port means ACS is on");
    rb_step(x, "disable ACS in the BIOS or with setpci on the switch ports (NCCL troubleshooting guide, PCI ACS)");
    rb_step(x, "confirm: rerun with NCCL_NET_GDR_LEVEL=LOC (no GDR); if it passes, ACS/IOMMU is the cause");
    rb_step(x, "cat /proc/cmdline   # IOMMU should be off or passthrough (iommu=pt) for GDR");
}

static void r_ib_async(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IB_ASYNC, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char dev[40] = "";
    const char *colon = strchr(ir.is->detail, ':');
    snprintf(dev, sizeof dev, "%.*s", colon ? (int)(colon - ir.is->detail) : 0, ir.is->detail);
    char w[96];
    rb_title(x, "IB device %s reported a fatal asynchronous event (%s)%s: NCCL uses a device that does not carry this traffic",
             dev[0] ? dev : "?", colon ? colon + 2 : ir.is->detail, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IB_ASYNC, NULL);
    cite_issues(c, x, EV_NCCL_ISSUE_IB_COMPLETION, NULL);
    RB_EACH(c, EV_NCCL_LOG, f)
        rb_cite(x, f, &f->as.nccl->ib_using_at);
    rb_step(x, "ibv_devinfo -v   # port state, link layer and active_mtu of %s: a device cabled to nothing (or an internal port) must not be used", dev[0] ? dev : "the device");
    rb_step(x, "set NCCL_IB_HCA to the devices that reach the other nodes (a prefix such as NCCL_IB_HCA=mlx5 or =rdmap, or =^<dev> to exclude one)");
    rb_step(x, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET: the 'NET/IB : Using' line lists the devices NCCL picked");
}

static void r_ib_other(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IB_COMPLETION, is_other_completion);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96], vendor[48] = "";
    if (ir.is->vendor_err >= 0)
        snprintf(vendor, sizeof vendor, ", vendor err %ld", ir.is->vendor_err);
    rb_title(x, "NET/IB completion error %ld%s%s", ir.is->code, vendor, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IB_COMPLETION, is_other_completion);
    rb_step(x, "ibv_devinfo -v and ibstat on both nodes; port state and errors: perfquery -x");
    rb_step(x, "look the status up in ibv_wc_status (verbs) and the vendor syndrome in the NIC vendor's notes");
    rb_step(x, "ib_write_bw between the two nodes to reproduce outside NCCL");
}

static void r_ofi(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_OFI_COMPLETION, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96], rc[32] = "";
    if (ir.is->code >= 0)
        snprintf(rc, sizeof rc, "RC %ld", ir.is->code);
    rb_title(x, "libfabric (NET/OFI, EFA) requests complete with errors (%s%s%s)%s: the EFA devices cannot exchange traffic - a security group, a device or provider problem",
             rc, rc[0] && ir.is->detail[0] ? ", " : "", ir.is->detail, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_OFI_COMPLETION, NULL);
    rb_step(x, "the instances' security group must allow all inbound and outbound traffic to and from itself (EFA requirement)");
    rb_step(x, "fi_info -p efa   # on every node; FI_LOG_LEVEL=warn shows libfabric's own reason (prov_err) next to NCCL's line");
    rb_step(x, "run the EFA test (fi_pingpong -p efa) between the two nodes, then nccl-tests");
}

/* ---- verbs calls ---- */

static bool is_unreachable(const ev_nccl_issue *is) { return is->code == 101 || strstr(is->detail, "unreachable") != NULL; }
/* a verbs call failing with ENOMEM (ibv_reg_mr and its variants, also
 * ibv_create_cq/_qp, which pin memory too): the locked-memory limit */
static bool is_memlock(const ev_nccl_issue *is)
{
    return is->code == 12 || strstr(is->detail, "Cannot allocate memory") != NULL;
}
static bool is_other_ibv(const ev_nccl_issue *is) { return !is_unreachable(is) && !is_memlock(is); }

static void r_memlock(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IBV_CALL, is_memlock);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96];
    rb_title(x, "registering memory with the NIC failed (%s)%s: the locked-memory limit (ulimit -l) of the process is too low for NCCL's buffers",
             ir.is->detail, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IBV_CALL, is_memlock);
    rb_step(x, "ulimit -l   # inside the job (mpirun/srun/the container), not the login shell: it must be unlimited");
    rb_step(x, "/etc/security/limits.conf: '* soft memlock unlimited' and '* hard memlock unlimited'; docker run --ulimit memlock=-1; Slurm PropagateResourceLimits");
}

static void r_ibv_unreachable(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IBV_CALL, is_unreachable);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96];
    rb_title(x, "RoCE connection setup failed (%s)%s: the GID NCCL uses has no route to the peer - wrong GID index or RoCE interface/subnet",
             ir.is->detail[0] ? ir.is->detail : "Network is unreachable", where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IBV_CALL, is_unreachable);
    const ev_file *gf;
    if (gid_of(c, &gf) >= 0)
        rb_cite(x, gf, &gf->as.nccl->gid_at);
    rb_step(x, "show_gids   # the GID index must be a RoCEv2 GID whose IP is on the peer's subnet; set NCCL_IB_GID_INDEX");
    rb_step(x, "ip -br addr; ip route   # on the RoCE netdev of %s, on both nodes", first_hca(c));
    rb_step(x, "ib_write_bw -d %s -x <gid index> <peer ip>   # reproduce outside NCCL", first_hca(c));
}

static void r_ibv_other(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_IBV_CALL, is_other_ibv);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96];
    rb_title(x, "IB verbs call failed (%s)%s", ir.is->detail, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_IBV_CALL, is_other_ibv);
    rb_step(x, "ibv_devinfo; rdma link show   # device and port state on both nodes");
    rb_step(x, "NCCL_IB_HCA=<working devices> to exclude a bad port; ib_write_bw to test it");
}

/* ---- sockets ---- */

static void r_connect(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_CONNECT, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96], addr[64];
    const char *d = ir.is->detail, *lt = strchr(d, '<'), *colon = strstr(d, ": ");
    snprintf(addr, sizeof addr, "%.*s", (int)(lt ? lt - d : colon ? colon - d : (long)strlen(d)), d);
    rb_title(x, "NCCL could not connect to %s (%d failed connect%s%s%s) - that node's network or NCCL process is down; \"unhandled system error\" is the consequence",
             d, ir.count, ir.count == 1 ? "" : "s", where(ir.is, w, sizeof w)[0] ? ", seen" : "", w);
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_CONNECT, NULL);
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_nccl_errors; k++)
            rb_cite(x, f, &f->as.torch->nccl_errors[k].at);
    rb_step(x, "nslookup %s   # name the node behind the address", addr);
    rb_step(x, "ping -c 3 %s && ip route get %s", addr, addr);
    rb_step(x, "exclude the node and rerun (Slurm: sbatch --exclude=<node>); report it to the cluster admins");
    rb_step(x, "check NCCL_SOCKET_IFNAME picks the same network on every node; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET");
}

static void r_no_socket_if(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_NO_SOCKET_IF, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    const char *ifname = NULL;
    const ev_file *envf = NULL;
    long env_line = 0;
    RB_EACH(c, EV_NCCL_LOG, f)
        if (!ifname && (ifname = ev_nccl_env(f->as.nccl, "NCCL_SOCKET_IFNAME", &env_line)) != NULL)
            envf = f;
    char w[96];
    if (ifname)
        rb_title(x, "NCCL found no usable network interface for its sockets%s: NCCL_SOCKET_IFNAME=%s names no interface with an address on this host",
                 where(ir.is, w, sizeof w), ifname);
    else
        rb_title(x, "NCCL found no usable network interface for its sockets%s (a container without a routable interface, or one NCCL filters out)",
                 where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_NO_SOCKET_IF, NULL);
    if (envf)
        rb_cite_line(x, envf, env_line, "NCCL_SOCKET_IFNAME set by environment to %s", ifname);
    rb_step(x, "ip -br addr   # the interfaces and addresses this host (container) has");
    rb_step(x, "NCCL_SOCKET_IFNAME=<an interface with a routable address> (prefix match; ^docker,lo excludes)");
    rb_step(x, "in a container: --net=host (Docker) or a pod network that gives the pod a routable interface");
}

/* ---- shared memory ---- */

static void r_shm(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_SHM, NULL);
    const ev_torch_error *sig = NULL;
    const ev_file *sigf = NULL;
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_signals && !sig; k++)
            if (f->as.torch->signals[k].signo == 7) { /* SIGBUS */
                sig = &f->as.torch->signals[k];
                sigf = f;
            }
    if (!ir.is && !sig)
        return;
    rb_finding *x = rb_raise(c, self);
    bool nccl_ctx = ir.is || ev_count(c->set, EV_NCCL_LOG) > 0;
    rb_confidence(x, ir.is && sig ? 0.85 : ir.is ? 0.8 : 0);
    if (!ir.is) /* a bare SIGBUS: shared memory is the usual cause in containers, not the only one */
        x->confidence = nccl_ctx ? 0.7 : 0.5;
    bool full = false;
    if (ir.is)
        full = strstr(ir.is->at.text, "No space left") != NULL || strstr(ir.is->at.text, "fallocate") != NULL;
    rb_title(x, "%s: shared memory (/dev/shm) is too small or full for NCCL's SHM transport - typical in containers (Docker's default is 64 MB)",
             !ir.is ? "SIGBUS (bus error)" : full ? "NCCL could not extend its shared-memory segment (No space left on device)"
                                                  : "NCCL could not create its shared-memory segment");
    if (ir.is)
        cite_issues(c, x, EV_NCCL_ISSUE_SHM, NULL);
    if (sig) {
        rb_cite(x, sigf, &sig->at);
        rb_rank(x, sig->at.rank);
    }
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_nccl_errors; k++)
            rb_cite(x, f, &f->as.torch->nccl_errors[k].at);
    rb_step(x, "df -h /dev/shm   # inside the container; ls /dev/shm for stale nccl-* segments of killed jobs");
    rb_step(x, "docker run --shm-size=16g ... (or --ipc=host); Kubernetes: mount an emptyDir with medium: Memory at /dev/shm");
    rb_step(x, "workaround: NCCL_SHM_DISABLE=1 (slower intra-node path)");
}

/* ---- NVLS ---- */

static void r_nvls_failed(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_NVLS, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96], err[160] = "";
    if (ir.is->code >= 0)
        snprintf(err, sizeof err, " (CUDA error %ld%s%s%s)", ir.is->code, ir.is->detail[0] ? " '" : "", ir.is->detail,
                 ir.is->detail[0] ? "'" : "");
    rb_title(x, "NVLS (NVLink SHARP) multicast setup failed%s%s: the Fabric Manager / NVSwitch state does not allow multicast",
             err, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_NVLS, NULL);
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_nccl_errors; k++)
            rb_cite(x, f, &f->as.torch->nccl_errors[k].at);
    rb_step(x, "workaround: NCCL_NVLS_ENABLE=0 (collectives fall back to NVLink rings/trees)");
    rb_step(x, "systemctl status nvidia-fabricmanager   # must run, same version as the driver");
    rb_step(x, "nvidia-smi -q | grep -i -A3 fabric   # fabric state should be Completed/Success");
    rb_step(x, "after a Fabric Manager restart reset the GPUs (or reboot) before running jobs again");
}

/* ---- CUDA inside NCCL ---- */

static void r_sharedmem(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        if (!n->shmem_at.line)
            continue;
        rb_finding *x = rb_raise(c, self);
        issue_ref cuda = first_issue(c, EV_NCCL_ISSUE_CUDA, NULL);
        if (!cuda.is) {
            rb_severity(x, AN_SEV_HIGH);
            x->confidence = 0.6;
        }
        rb_title(x, "NCCL %s asks for %ld bytes of shared memory per block, more than this GPU allows (%ld)%s: a NCCL build that does not fit the GPU",
                 n->version[0] ? n->version : "", n->shmem_need, n->shmem_max,
                 cuda.is ? "; its kernel launches then fail with 'invalid argument'" : "");
        rb_cite(x, f, &n->shmem_at);
        if (cuda.is)
            cite_issues(c, x, EV_NCCL_ISSUE_CUDA, NULL);
        rb_cite(x, f, &n->version_at);
        rb_step(x, "upgrade NCCL to a release that supports this GPU (the one PyTorch/the container bundles may be older than the GPU)");
        rb_step(x, "python -c 'import torch; print(torch.cuda.nccl.version())'   # the NCCL the job really loads");
        return;
    }
}

/* 'system not yet initialized' (802) is CUDA_SYSTEM_NOT_READY's */
static bool is_not_ready(const ev_nccl_issue *is) { return is->code == 802 || strstr(is->detail, "system not yet initialized") != NULL; }
static bool is_other_cuda(const ev_nccl_issue *is) { return !is_not_ready(is); }

static void r_cuda(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_CUDA, is_other_cuda);
    if (!ir.is || rb_find(c, "NCCL_SHAREDMEM_EXCEEDED"))
        return;
    rb_finding *x = rb_raise(c, self);
    const char *what = ir.is->detail;
    bool oom = ir.is->code == 2 || strstr(what, "out of memory") != NULL;
    char w[96], num[32] = "";
    if (ir.is->code >= 0)
        snprintf(num, sizeof num, "error %ld", ir.is->code);
    rb_title(x, "a CUDA call inside NCCL failed (%s%s%s%s%s)%s%s", num, num[0] && what[0] ? " " : "", what[0] ? "'" : "", what,
             what[0] ? "'" : "", where(ir.is, w, sizeof w), oom ? ": the GPU had no memory left for NCCL's buffers" : "");
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_CUDA, is_other_cuda);
    if (oom) {
        rb_step(x, "leave memory for NCCL: lower the framework's memory fraction or batch; NCCL_BUFFSIZE=2097152 shrinks its buffers");
        rb_step(x, "fewer communicators/channels: reuse process groups; NCCL_MAX_NCHANNELS=16");
    } else {
        rb_step(x, "dmesg -T | grep -i xid   # a GPU fault at the same time explains the CUDA error");
        rb_step(x, "check the driver supports the CUDA version NCCL was built with (nvidia-smi, the NCCL version line)");
    }
}

/* ---- configuration failures that name their cause ---- */

static void r_dup_gpu(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_DUP_GPU, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96];
    rb_title(x, "two ranks of one communicator run on the same GPU (%s)%s: each process must select its own device before NCCL starts",
             ir.is->detail, where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_DUP_GPU, NULL);
    rb_step(x, "torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before init_process_group (or init_process_group(device_id=...))");
    rb_step(x, "no more processes per node than GPUs; a CUDA_VISIBLE_DEVICES set for all ranks alike (Ray, a wrapper script) leaves them all on one GPU");
}

/* CUDA peer access (cudaErrorPeerAccessUnsupported, 217) between two GPUs,
 * in NCCL's words or a framework's (vLLM/sglang custom all-reduce). */
static void r_p2p_unsupported(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_P2P, NULL);
    rb_finding *x = NULL;
    if (ir.is) {
        x = rb_raise(c, self);
        rb_rank(x, ir.is->at.rank);
        cite_issues(c, x, EV_NCCL_ISSUE_P2P, NULL);
    }
    RB_EACH(c, EV_TORCH, f)
        for (int k = 0; k < f->as.torch->n_issues; k++)
            if (f->as.torch->issues[k].kind == EV_TORCH_ISSUE_P2P_UNSUPPORTED) {
                if (!x)
                    x = rb_raise(c, self);
                rb_rank(x, f->as.torch->issues[k].at.rank);
                rb_cite(x, f, &f->as.torch->issues[k].at);
            }
    if (!x)
        return;
    rb_title(x, "CUDA peer-to-peer access is not supported between these GPUs (error 217): GeForce cards, GPUs on different PCIe root complexes, or ACS/IOMMU blocking P2P");
    rb_step(x, "NCCL_P2P_DISABLE=1 for every rank (it must reach the worker processes: Ray runtime_env, the launcher's env); vLLM/sglang: --disable-custom-all-reduce");
    rb_step(x, "nvidia-smi topo -m and cuda-samples p2pBandwidthLatencyTest: which pairs can do P2P");
    rb_step(x, "sudo lspci -vvv | grep ACSCtl; cat /proc/cmdline   # ACS or an IOMMU in translation mode blocks P2P on PCIe");
}

static void r_peer_closed(rb_ctx *c, const rb_rule *self)
{
    issue_ref ir = first_issue(c, EV_NCCL_ISSUE_PEER_CLOSED, NULL);
    if (!ir.is)
        return;
    rb_finding *x = rb_raise(c, self);
    char w[96];
    rb_title(x, "a peer closed its NCCL connection%s%s%s%s: that rank exited (crashed, killed, out of memory) or the network between the nodes broke - its own log holds the cause",
             ir.is->detail[0] ? " (" : "", ir.is->detail, ir.is->detail[0] ? ")" : "", where(ir.is, w, sizeof w));
    rb_rank(x, ir.is->at.rank);
    cite_issues(c, x, EV_NCCL_ISSUE_PEER_CLOSED, NULL);
    rb_step(x, "find the rank at %s and read its log first: the first failure in time is there (OOM, Xid, a Python exception, a kill)",
            ir.is->detail[0] ? ir.is->detail : "that address");
    rb_step(x, "dmesg -T on that node (OOM killer, Xid) and the scheduler's record of the job step");
}

/* ---- the transport NCCL chose ---- */

static void r_socket(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        long dis_line = 0;
        const char *ib_disable = ev_nccl_env(n, "NCCL_IB_DISABLE", &dis_line);
        bool disabled = ib_disable && strcmp(ib_disable, "1") == 0;
        bool socket = n->net == EV_NCCL_NET_SOCKET || n->transports[EV_NCCL_TR_NET_SOCKET] > 0;
        /* "NET/IB : No device found" with IB not disabled: NCCL's only
         * internal alternative is sockets (unless a plugin carries it) */
        bool no_ib = n->ib_none_at.line && !disabled && n->net != EV_NCCL_NET_OTHER && !n->ib_using_at.line;
        if (!socket && !no_ib)
            continue;
        bool single_node = n->nnodes == 1 || (n->nranks > 0 && n->nranks <= ev_nccl_max_host_ranks(n) && n->n_hosts == 1);
        bool between = n->transports[EV_NCCL_TR_NET_SOCKET] > 0 || n->n_hosts >= 2 || n->nnodes >= 2;
        if (single_node && !between)
            continue; /* one node: the network transport carries nothing */
        rb_finding *x = rb_raise(c, self);
        if (disabled) {
            rb_severity(x, AN_SEV_MEDIUM);
            rb_title(x, "NCCL_IB_DISABLE=1: NCCL uses TCP sockets between nodes (NET/Socket) on purpose - inter-node bandwidth is a fraction of RDMA");
        } else {
            if (n->ib_none_at.line || n->plugin_fail_at.line)
                rb_confidence(x, 0.7);
            rb_title(x, "NCCL fell back to TCP sockets for inter-node traffic (NET/Socket)%s%s: inter-node bandwidth is a fraction of RDMA",
                     n->ib_none_at.line ? "; no IB/RoCE device was found" : "",
                     n->plugin_fail_at.line ? "; the network plugin gave up" : "");
        }
        if (disabled)
            rb_cite_line(x, f, dis_line, "NCCL_IB_DISABLE set by environment to %s", ib_disable);
        rb_cite(x, f, &n->plugin_fail_at);
        rb_cite(x, f, &n->ib_none_at);
        rb_cite(x, f, &n->socket_using_at);
        rb_cite(x, f, &n->transport_at[EV_NCCL_TR_NET_SOCKET]);
        rb_cite(x, f, &n->network_at);
        if (disabled)
            rb_step(x, "unset NCCL_IB_DISABLE if the nodes have IB/RoCE NICs (ibv_devinfo lists them)");
        rb_step(x, "ibv_devinfo   # are RDMA devices visible (inside the container too: --device=/dev/infiniband, or mount /dev/infiniband)?");
        if (n->plugin_fail_at.line && strstr(n->plugin_fail_at.text, "OFI"))
            rb_step(x, "AWS: fi_info -p efa; use an EFA-enabled instance/interface and the aws-ofi-nccl plugin");
        rb_step(x, "lsmod | grep -e mlx5_ib -e ib_uverbs -e efa   # RDMA kernel modules loaded?");
        rb_step(x, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET; set NCCL_IB_HCA to the devices to use");
    }
}

/* GPU Direct RDMA, by the strength of what the log shows:
 *   - "GPU Direct RDMA Disabled" (NCCL says so, with its reason): medium;
 *   - NET/IB channel lines, some or all without /GDRDMA: medium (the
 *     connections were made without GDR, seen line by line; some with and
 *     some without: one node lacks the peer-memory module);
 *   - IB in use and neither a GDR line nor any channel line: an absence
 *     (an excerpt of the init often ends before the connection lines): low.
 * Not raised when the log holds an IB failure: the failure says more. */
static void r_gdr(rb_ctx *c, const rb_rule *self)
{
    if (rb_find(c, "NCCL_IB_ERR4_GDR") || rb_find(c, "NCCL_IB_ERR12_RETRY") || rb_find(c, "NCCL_IB_ERROR"))
        return;
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        long plain = n->transports[EV_NCCL_TR_NET_IB], gdr = n->transports[EV_NCCL_TR_NET_IB_GDR];
        bool ib = n->net == EV_NCCL_NET_IB || n->ib_using_at.line || plain || gdr;
        if (!ib)
            continue;
        if (n->gdr == EV_NCCL_GDR_OFF && !gdr) {
            rb_finding *x = rb_raise(c, self);
            rb_title(x, "GPU Direct RDMA is disabled%s%s: inter-node traffic is staged through host memory",
                     n->gdr_reason[0] ? ": " : "", n->gdr_reason);
            rb_cite(x, f, &n->gdr_at);
        } else if (plain && gdr) {
            rb_finding *x = rb_raise(c, self);
            rb_title(x, "GPU Direct RDMA is used on some connections only: %ld NET/IB channel line%s via GDRDMA, %ld without - a node without the peer-memory module",
                     gdr, gdr == 1 ? "" : "s", plain);
            rb_cite(x, f, &n->transport_at[EV_NCCL_TR_NET_IB_GDR]);
            rb_cite(x, f, &n->transport_at[EV_NCCL_TR_NET_IB]);
            rb_step(x, "on every node: ls /sys/kernel/mm/memory_peers/nv_mem   # missing where nvidia-peermem is not loaded");
        } else if (plain && !gdr) {
            rb_finding *x = rb_raise(c, self);
            rb_title(x, "GPU Direct RDMA is not used: %ld NET/IB channel line%s, none via GDRDMA", plain, plain == 1 ? "" : "s");
            rb_cite(x, f, &n->transport_at[EV_NCCL_TR_NET_IB]);
            rb_cite(x, f, &n->ib_using_at);
        } else if (n->gdr != EV_NCCL_GDR_ON && !gdr && (n->n_hosts >= 2 || n->nnodes >= 2 || n->n_hosts == 0 || n->net == EV_NCCL_NET_IB)) {
            rb_finding *x = rb_raise(c, self);
            if (x->title[0])
                continue; /* a stronger sign from another file */
            rb_severity(x, AN_SEV_LOW);
            x->confidence = 0.35;
            rb_title(x, "GPU Direct RDMA is not seen in use on the IB transport (no GDR line and no NET/IB/GDRDMA channel in %ld lines)",
                     n->lines);
            rb_cite(x, f, &n->ib_using_at);
        } else {
            continue;
        }
        rb_finding *x = rb_find(c, self->code);
        rb_step(x, "lsmod | grep -e nvidia_peermem -e nv_peer_mem   # load it: sudo modprobe nvidia_peermem");
        rb_step(x, "nvidia-smi topo -m   # GPU-NIC distance: GDR is used up to NCCL_NET_GDR_LEVEL (default PXB)");
        rb_step(x, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and look for 'via NET/IB/<n>/GDRDMA'");
    }
}

/* One IB device for >= 4 GPUs of a host. The log lists the NICs NCCL uses,
 * not the NICs the node has: when NCCL_IB_HCA narrowed the list it is a
 * configuration choice (medium); otherwise it is the node's capacity as NCCL
 * sees it, which the log cannot tell from a container or driver hiding
 * NICs, so low (nvidia-smi topo -m decides: TOPO_FEW_NICS). */
static void r_single_nic(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        int most = ev_nccl_max_host_ranks(n);
        if (n->n_devs != 1 || n->net != EV_NCCL_NET_IB || most < 4)
            continue;
        long hca_line = 0;
        const char *hca = ev_nccl_env(n, "NCCL_IB_HCA", &hca_line);
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "one NIC (%s) serves %d GPUs of a node%s", n->devs[0].name, most, hca ? " (NCCL_IB_HCA selects it)" : "");
        rb_cite(x, f, &n->ib_using_at);
        if (hca) {
            rb_cite_line(x, f, hca_line, "NCCL_IB_HCA set by environment to %s", hca);
        } else {
            rb_severity(x, AN_SEV_LOW);
            x->confidence = 0.3;
            rb_cite_line(x, f, 0, "the NICs NCCL uses, not necessarily all the node has (no NCCL_IB_HCA line)");
        }
    }
}

static void r_p2p(rb_ctx *c, const rb_rule *self)
{
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        long p2p = n->transports[EV_NCCL_TR_P2P_IPC] + n->transports[EV_NCCL_TR_P2P_CUMEM] + n->transports[EV_NCCL_TR_P2P_DIRECT];
        if (!n->transports[EV_NCCL_TR_SHM] || p2p > 0)
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "GPUs inside a node talk through shared host memory (SHM), not P2P/NVLink%s",
                 n->p2p_support == 0 ? ": NCCL found intra-node P2P not supported" : "");
        rb_cite(x, f, &n->transport_at[EV_NCCL_TR_SHM]);
        rb_cite(x, f, &n->p2p_support_at);
        rb_step(x, "nvidia-smi topo -p2p r   # which GPU pairs support peer-to-peer reads");
        rb_step(x, "check that NCCL_P2P_DISABLE is unset, the container has IPC (--ipc=host) and every GPU of the node");
        rb_step(x, "sudo lspci -vvv | grep ACSCtl   # ACS redirecting P2P ('SrcValid+') or an IOMMU in translation mode forces P2P through the CPU");
    }
}

static void r_nvls_unavailable(rb_ctx *c, const rb_rule *self)
{
    if (rb_find(c, "NCCL_NVLS_SETUP_FAILED"))
        return;
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        bool hopper = false;
        for (int g = 0; g < n->n_gpus; g++)
            hopper |= ev_gpu_has_nvls(n->gpus[g]);
        bool said = n->nvls_available == 0;
        bool zero = n->nvls_channels == 0 && n->coll_channels > 0 && n->nvls_available != 1 &&
                    (hopper || n->nvls_available < 0) && ev_nccl_max_host_ranks(n) > 1;
        if (!said && !zero)
            continue;
        if (!said && !hopper && n->n_gpus) /* GPUs without NVLS: nothing to miss */
            continue;
        rb_finding *x = rb_raise(c, self);
        rb_title(x, "NVLS (NVLink SHARP) not used%s%s: %s", n->n_gpus ? " on " : "", n->n_gpus ? n->gpus[0] : "",
                 said ? "the driver reports no multicast support" : "0 nvls channels on a node with several NVLS-capable GPUs");
        rb_cite(x, f, &n->nvls_at);
        rb_cite(x, f, &n->channels_at);
        rb_step(x, "systemctl status nvidia-fabricmanager; nvidia-smi -q | grep -i -A3 fabric");
        rb_step(x, "NVLS needs Hopper or newer with NVSwitch, CUDA >= 12.1 multicast, a driver exposing it, and in containers the fabric/IMEX channels");
        rb_step(x, "nvidia-smi topo -m   # all GPUs should see each other through NVSwitch (NV18)");
    }
}

/* ---- RoCE MTU and GID agreement across the QPs of a job ---- */

static void r_roce_mtu(rb_ctx *c, const rb_rule *self)
{
    int lo = 0, hi = 0;
    const ev_file *lof = NULL, *hif = NULL;
    long lol = 0, hil = 0;
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        for (int q = 0; q < n->n_qps; q++) {
            int m = n->qps[q].mtu_bytes;
            if (m <= 0)
                continue;
            if (!lo || m < lo) {
                lo = m;
                lof = f;
                lol = n->qps[q].line;
            }
            if (m > hi) {
                hi = m;
                hif = f;
                hil = n->qps[q].line;
            }
        }
    }
    if (!lo || lo == hi)
        return;
    rb_finding *x = rb_raise(c, self);
    rb_title(x, "the IB/RoCE path MTU differs between the QPs of the job (%d and %d bytes): a port or switch hop with a smaller MTU", lo, hi);
    rb_cite_line(x, lof, lol, "QP with mtu %d bytes", lo);
    rb_cite_line(x, hif, hil, "QP with mtu %d bytes", hi);
    rb_step(x, "ibv_devinfo | grep -e hca_id -e active_mtu   # on every node: the same active MTU (4096 for RoCE/IB)");
    rb_step(x, "set the interface MTU (ip link set <roce netdev> mtu 9000) and the switch ports alike, end to end");
}

/* Different GID indices across the QPs of a job. Not proof: nodes whose
 * GID tables differ can hold a RoCE v2 IPv4 entry at different indices
 * (and NCCL >= 2.21 picks one itself when NCCL_IB_GID_INDEX is unset), so
 * medium, and the step says how to tell. */
static void r_roce_gid(rb_ctx *c, const rb_rule *self)
{
    const ev_nccl_qp *q0 = NULL, *q1 = NULL;
    const ev_file *f0 = NULL, *f1 = NULL;
    RB_EACH(c, EV_NCCL_LOG, f) {
        const ev_nccl *n = f->as.nccl;
        for (int q = 0; q < n->n_qps && !q1; q++) {
            const ev_nccl_qp *p = &n->qps[q];
            if (p->gid_index < 0)
                continue;
            if (!q0) {
                q0 = p;
                f0 = f;
            } else if (p->gid_index != q0->gid_index) {
                q1 = p;
                f1 = f;
            }
        }
    }
    if (!q1)
        return;
    rb_finding *x = rb_raise(c, self);
    rb_title(x, "the ranks use different RoCE GID indices (%d on %s, %d on %s): unless both entries are the same type (RoCE v2, IPv4), one side cannot reach the other",
             q0->gid_index, q0->host[0] ? q0->host : "one host", q1->gid_index, q1->host[0] ? q1->host : "another");
    rb_cite_line(x, f0, q0->line, "QP with GID index %d", q0->gid_index);
    rb_cite_line(x, f1, q1->line, "QP with GID index %d", q1->gid_index);
    RB_EACH(c, EV_NCCL_LOG, f) {
        long line;
        const char *v = ev_nccl_env(f->as.nccl, "NCCL_IB_GID_INDEX", &line);
        if (v)
            rb_cite_line(x, f, line, "NCCL_IB_GID_INDEX set to %s", v);
    }
    rb_step(x, "show_gids   # on every node: the index of the RoCE v2 IPv4 entry of the NIC NCCL uses");
    rb_step(x, "set NCCL_IB_GID_INDEX to that entry on every node (or leave it unset on NCCL >= 2.21, which picks a RoCE v2 entry of the address family itself)");
}

/* ---- timeline ---- */

static void events(rb_ctx *c, const ev_file *f)
{
    if (f->kind != EV_NCCL_LOG)
        return;
    const ev_nccl *n = f->as.nccl;
    for (int k = 0; k < n->n_issues; k++) {
        const ev_nccl_issue *is = &n->issues[k];
        rb_event_add(c, f, &is->at, "nccl_warn", is->kind == EV_NCCL_ISSUE_OTHER ? RB_EV_WARN : RB_EV_ERROR,
                     is->kind == EV_NCCL_ISSUE_SYSTEM || is->kind == EV_NCCL_ISSUE_PEER_CLOSED);
    }
}

#define FAIL AN_SEV_CRITICAL

static const rb_rule k_rules[] = {
    {"NCCL_IB_ERR12_RETRY", CP_LAYER_INTER, FAIL, 0.85,
     "NET/IB : Got completion from peer ... with error 12 / status=12 / transport retry counter exceeded(12) (IBV_WC_RETRY_EXC_ERR; vendor err 129 on RoCE)",
     "https://github.com/NVIDIA/nccl/issues/426 (maintainer: right away = the NICs cannot talk over RoCE; NCCL_IB_GID_INDEX fixed it)",
     "the peer never acknowledged: on RoCE make NCCL_IB_GID_INDEX select the RoCEv2 GID on every node (show_gids), check PFC/ECN and the MTU end to end; on IB and RoCE check the links and that nothing drops the QP traffic",
     r_ib_err12},
    {"NCCL_IB_ERR4_GDR", CP_LAYER_INTER, FAIL, 0.85,
     "NET/IB : Got completion from peer ... with error 4 (IBV_WC_LOC_PROT_ERR, local protection; vendor err 81) while GPU Direct RDMA is used",
     "https://github.com/NVIDIA/nccl/issues/928 (maintainer: IB error 4 is usually ACS breaking GPU Direct RDMA); NCCL troubleshooting, PCI ACS",
     "the NIC cannot write GPU memory: disable ACS on the PCIe switches between GPU and NIC (BIOS or setpci), check nvidia-peermem matches the driver; NCCL_NET_GDR_LEVEL=LOC (GDR off) should pass",
     r_ib_err4},
    {"NCCL_IB_ASYNC_ERROR", CP_LAYER_INTER, FAIL, 0.8,
     "NET/IB : <dev>:<port> async fatal event ... / Got async event : <event> (ibv_get_async_event on a device NCCL uses)",
     "NCCL net_ib.cc async event thread; NCCL env docs, NCCL_IB_HCA",
     "a device NCCL picked reports errors of its own (a port cabled to nothing, an internal or storage port, a failing HCA): select the devices that reach the other nodes with NCCL_IB_HCA",
     r_ib_async},
    {"NCCL_OFI_COMPLETION_ERROR", CP_LAYER_INTER, FAIL, 0.7,
     "NET/OFI Request ... completed with error. RC: N. Error: ... (aws-ofi-nccl, libfabric EFA provider)",
     "https://github.com/aws/aws-ofi-nccl/issues/156 (maintainer: the security group must accept all traffic within itself); AWS EFA user guide (security group)",
     "EFA traffic between the instances fails: allow all traffic within the security group, check the EFA devices and the libfabric/aws-ofi-nccl versions", r_ofi},
    {"NCCL_IB_ERROR", CP_LAYER_INTER, FAIL, 0.7,
     "NET/IB : Got completion from peer ... with another ibv_wc_status", "ibv_wc_status (libibverbs); NCCL troubleshooting",
     "look the status up in ibv_wc_status and the vendor syndrome in the NIC's notes; check links and GID/MTU configuration",
     r_ib_other},
    {"NCCL_IBV_UNREACHABLE", CP_LAYER_INTER, FAIL, 0.85,
     "Call to ibv_modify_qp failed with [error|101] Network is unreachable",
     "NCCL troubleshooting (RoCE GID selection, NCCL_IB_GID_INDEX)",
     "the QP's address has no route: the GID index selects a GID without a routable address (IPv6 link-local or the wrong VLAN); set NCCL_IB_GID_INDEX to the RoCEv2 IPv4 GID on every node",
     r_ibv_unreachable},
    {"NCCL_IBV_CALL_FAILED", CP_LAYER_INTER, FAIL, 0.7, "Call to ibv_<verb> failed with ...", "libibverbs man pages; NCCL troubleshooting",
     "a verbs call failed on a device: check its state (ibv_devinfo) and exclude a bad port with NCCL_IB_HCA", r_ibv_other},
    {"NCCL_CONNECT_FAILED", CP_LAYER_INTER, FAIL, 0.85, "socketStartConnect / Connect to IP<port> failed : <reason>",
     "stas00/ml-engineering, Broken Network (NCCL_DEBUG=INFO shows the refused address: exclude that node)",
     "one node's network is broken or blocked: resolve the address to its host, test it, exclude the node and report it; check NCCL_SOCKET_IFNAME selects the same network everywhere",
     r_connect},
    {"NCCL_NO_SOCKET_IF", CP_LAYER_INTER, FAIL, 0.8,
     "Socket creation failed / no socket interface found / Bootstrap : no interface / ncclSocketInit ... neither AF_INET nor AF_INET6",
     "https://github.com/NVIDIA/nccl-tests/issues/14 (maintainer: printed when NCCL finds no usable IP interface); NVIDIA/nccl#1837; NCCL env docs, NCCL_SOCKET_IFNAME",
     "NCCL needs an interface with a routable address for its bootstrap and socket transport: point NCCL_SOCKET_IFNAME at one that exists on every host, or give the container one (host networking)",
     r_no_socket_if},
    {"NCCL_SHM_EXHAUSTED", CP_LAYER_INTRA, FAIL, 0.8,
     "Error while creating shared memory segment /dev/shm/nccl-* / Call to posix_fallocate failed : No space left on device (and SIGBUS)",
     "https://github.com/NVIDIA/nccl/issues/525 (maintainer: /dev/shm is likely full); NCCL troubleshooting, Docker shared memory",
     "NCCL's intra-node SHM transport needs room in /dev/shm: give the container a larger /dev/shm (--shm-size, --ipc=host, an emptyDir of medium Memory) or clean stale segments; NCCL_SHM_DISABLE=1 as a workaround",
     r_shm},
    {"NCCL_NVLS_SETUP_FAILED", CP_LAYER_INTRA, FAIL, 0.8,
     "an NVLS WARN: transport/nvls.cc Cuda failure, 'Failed to bind NVLink SHARP (NVLS) Multicast memory ... CUDA error 401', cuMulticast* errors",
     "https://github.com/pytorch/pytorch/pull/177472 (NCCL: usually a Fabric Manager / NVSwitch error; NCCL_NVLS_ENABLE=0 avoids it); NVIDIA/nccl#1488",
     "NVLS multicast needs a healthy Fabric Manager and NVSwitch state: NCCL_NVLS_ENABLE=0 to run now, then fix or reset the node (Fabric Manager running, GPUs reset after it restarts)",
     r_nvls_failed},
    {"NCCL_SHAREDMEM_EXCEEDED", CP_LAYER_COMPUTE, FAIL, 0.85,
     "ncclMaxSharedMem N exceeds device/fn maxSharedMem M (then Cuda failure 1 'invalid argument' at kernel launch)",
     "https://github.com/NVIDIA/nccl-tests/issues/287 (maintainers: fixed in NCCL 2.26; upgrade)",
     "this NCCL asks more shared memory per block than the GPU has: use a NCCL release that supports the GPU", r_sharedmem},
    {"NCCL_DUPLICATE_GPU", CP_LAYER_HOST, FAIL, 0.9,
     "Duplicate GPU detected : rank a and rank b both on CUDA device d (ncclInvalidUsage)",
     "NCCL docs, ncclCommInitRank (each rank uses its own device, set before the call); https://github.com/NVIDIA/Megatron-LM/issues/661",
     "give every rank its own GPU: set the device from LOCAL_RANK before creating the process group, and no more ranks per node than GPUs", r_dup_gpu},
    {"NCCL_P2P_UNSUPPORTED", CP_LAYER_INTRA, FAIL, 0.85,
     "Cuda failure 217 'peer access is not supported between these two devices' / failed to open CUDA IPC handle : 217",
     "https://github.com/NVIDIA/nccl-tests/issues/287 (maintainer: GeForce cards do not support P2P); NCCL troubleshooting (GPU Direct, PCI ACS)",
     "these GPUs cannot reach each other's memory: NCCL_P2P_DISABLE=1 in every rank's environment (NCCL then uses SHM), or fix ACS/IOMMU where P2P should work",
     r_p2p_unsupported},
    {"NCCL_IB_MEMLOCK_LIMIT", CP_LAYER_INTER, FAIL, 0.85,
     "Call to ibv_reg_mr[_iova2|_dmabuf] (or ibv_create_cq/_qp) failed with error Cannot allocate memory (ENOMEM)",
     "NCCL troubleshooting, InfiniBand (locked memory limits); https://github.com/NVIDIA/nccl-tests/issues/206 (maintainer: limits.conf, check ulimit -l inside mpirun)",
     "NCCL registers its buffers with the NIC as locked memory: raise memlock to unlimited for the job's processes", r_memlock},
    {"NCCL_PEER_CLOSED", CP_LAYER_INTER, AN_SEV_HIGH, 0.45,
     "Connection closed by remote peer / socketProgress ... Connection reset by peer / Call to recv from ... failed : Broken pipe (ncclRemoteError: a network error or a remote process exiting prematurely)",
     "NCCL result codes (ncclRemoteError); https://github.com/NVIDIA/nccl/issues/1486 (maintainer: recv returns 0 only when the remote peer closed the socket)",
     "the other side of the connection went away: find that rank's log and its node's kernel log, where the first failure is", r_peer_closed},
    {"NCCL_CUDA_FAILURE", CP_LAYER_COMPUTE, FAIL, 0.65, "NCCL WARN Cuda failure N 'what' (outside NVLS setup)",
     "CUDA runtime error codes; NCCL troubleshooting",
     "a CUDA call inside NCCL failed: out of memory for NCCL's buffers, or a GPU fault (look for an Xid at the same time)", r_cuda},
    {"NCCL_SOCKET_FALLBACK", CP_LAYER_INTER, AN_SEV_HIGH, 0.55,
     "Using network Socket / NET/Socket : Using / channels via NET/Socket between nodes; NET/IB : No device found; a plugin that gives up (NET/OFI ...); NCCL_IB_DISABLE=1",
     "NCCL env docs (NCCL_IB_DISABLE, NCCL_NET); https://github.com/pytorch/pytorch/issues/111424 (no /dev/infiniband in the container)",
     "make NCCL use RDMA: the NIC's verbs stack visible in the container (/dev/infiniband, rdma-core) or the cloud plugin (aws-ofi-nccl with EFA); NCCL_IB_DISABLE unset; NCCL_IB_HCA naming existing devices",
     r_socket},
    {"NCCL_GDR_DISABLED", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.5,
     "GPU Direct RDMA Disabled for ... (reason) / NET/IB channels without /GDRDMA / some channels via NET/IB/<n>/GDRDMA and others not",
     "https://github.com/NVIDIA/nccl/issues/897 (maintainer: nv_peer_mem/nvidia-peermem not loaded on that node); NCCL env docs, NCCL_NET_GDR_LEVEL",
     "load nvidia-peermem (nv_peer_mem on old drivers) on every node, keep GPU and NIC under one PCIe switch (NCCL_NET_GDR_LEVEL); without GDR every inter-node transfer is staged through host memory",
     r_gdr},
    {"NCCL_SINGLE_NIC", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.45, "NET/IB : Using [0]<one device> with 4 or more GPUs of a host",
     "NCCL env docs, NCCL_IB_HCA",
     "give each GPU (or pair) its own NIC: list all HCAs in NCCL_IB_HCA and check the other NICs are up and visible; one NIC caps every GPU at its share of one link",
     r_single_nic},
    {"NCCL_P2P_NOT_USED", CP_LAYER_INTRA, AN_SEV_MEDIUM, 0.45,
     "channels via SHM and none via P2P/IPC, P2P/CUMEM or P2P/direct; Check P2P Type intraNodeP2pSupport 0",
     "NCCL troubleshooting (PCI ACS, IOMMU, containers); NCCL env docs, NCCL_P2P_LEVEL",
     "allow peer access: NCCL_P2P_DISABLE unset, the container with --ipc=host and all GPUs, ACS off and the IOMMU in passthrough; GeForce parts have no P2P",
     r_p2p},
    {"NCCL_NVLS_UNAVAILABLE", CP_LAYER_INTRA, AN_SEV_LOW, 0.45,
     "NVLS multicast support is not available on dev N / N coll channels, 0 nvls channels on NVLS-capable GPUs",
     "https://github.com/NVIDIA/TransformerEngine/issues/1923 (NVLS needs SM90+, NVSwitch, CUDA >= 12.1 multicast)",
     "NVLS needs Hopper or newer with NVSwitch, CUDA >= 12.1 multicast and a driver / Fabric Manager that exposes multicast; inside containers the fabric channels must be visible",
     r_nvls_unavailable},
    {"NCCL_ROCE_MTU_MISMATCH", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.55,
     "NET/IB: [NCCL] Dev d ... qpn q mtu m ... with different mtu values across the QPs of the job",
     "NCCL troubleshooting (RoCE); Mellanox/NVIDIA RoCE configuration (MTU end to end)",
     "set the same MTU on every RoCE port, interface and switch hop (4096-byte IB MTU, 9000-byte Ethernet MTU)", r_roce_mtu},
    {"NCCL_ROCE_GID_MISMATCH", CP_LAYER_INTER, AN_SEV_MEDIUM, 0.45,
     "NET/IB: ... GID g (...) with different GID indices across the QPs of the job; NCCL_IB_GID_INDEX set differently",
     "NCCL env docs, NCCL_IB_GID_INDEX; https://github.com/NVIDIA/nccl/issues/769 (a link-local RoCE v2 GID times out, index 3 works); https://github.com/NVIDIA/nccl/issues/426",
     "every rank must use a GID of the same type (RoCEv2, IPv4) on the routable interface: set NCCL_IB_GID_INDEX to it on all nodes", r_roce_gid},
};

const rb_family rb_family_nccl = {.name = "nccl",
                                  .summary = "NCCL_DEBUG logs: IB/RoCE failures, sockets, shared memory, NVLS, transports",
                                  .rules = k_rules, .n_rules = CP_ARRAY_LEN(k_rules), .events = events};
