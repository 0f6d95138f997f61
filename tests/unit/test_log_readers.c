/* test_log_readers.c - the failure-log readers line by line: prefixes and
 * times, NCCL_DEBUG lines across versions, PyTorch OOM/watchdog/errors,
 * dmesg Xid/AER/OOM killer, nvidia-smi -q. Lines are written here in the
 * formats seen in NCCL/PyTorch sources and public issue threads. */
#include "test_util.h"

#include "model/evidence.h"
#include "readers/dmesg_log.h"
#include "readers/evidence.h"
#include "readers/launcher_log.h"
#include "readers/log_prefix.h"
#include "readers/nccl_log.h"
#include "readers/rd_lspci.h"
#include "readers/smi_query.h"
#include "readers/torch_log.h"

#define LINE(s) s, strlen(s)

static void test_prefixes(void **state)
{
    (void)state;
    rd_prefix p;
    rd_prefix_parse(LINE("[80746] [rank4]:[E321 02:07:08.414640780 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog"), &p);
    assert_int_equal(p.rank, 4);
    assert_int_equal(p.ts.clock, EV_CLOCK_WALL);
    assert_int_equal(p.ts.year, 0);
    assert_int_equal(p.level, 'E');
    char buf[64];
    assert_string_equal(ev_time_format(p.ts, buf, sizeof buf), "03-21 02:07:08.414");
    assert_true(strncmp(p.msg, "[Rank 4] Watchdog", 17) == 0);

    rd_prefix_parse(LINE("12: node7:311:402 [3] NCCL INFO Using network IB"), &p);
    assert_int_equal(p.rank, 12);
    assert_string_equal(p.host, "node7");
    assert_int_equal(p.pid, 311);
    assert_int_equal(p.tid, 402);
    assert_int_equal(p.dev, 3);
    assert_true(strncmp(p.msg, "NCCL INFO", 9) == 0);

    /* Open MPI --tag-output: [job,rank]<stdout>: */
    rd_prefix_parse(LINE("[1,13]<stdout>:w-1:35:89 [5] NCCL WARN NET/OFI Request completed with error"), &p);
    assert_int_equal(p.rank, 13);
    assert_string_equal(p.host, "w-1");
    assert_int_equal(p.dev, 5);
    assert_true(strncmp(p.msg, "NCCL WARN", 9) == 0);

    /* c10d's glog without a time (PyTorch <= 2.1): the message's rank reads */
    rd_prefix_parse(LINE("[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout"), &p);
    assert_int_equal(p.level, 'E');
    assert_int_equal(p.rank, 3);
    assert_true(strncmp(p.msg, "[Rank 3]", 8) == 0);

    /* pasted from a Markdown quote, or indented: the prefix still peels;
     * an indented traceback frame keeps its indent */
    rd_prefix_parse(LINE("> n1:8001:8001 [0] NCCL INFO Using network IB"), &p);
    assert_string_equal(p.host, "n1");
    rd_prefix_parse(LINE("                    n1:8001:8001 [0] NCCL INFO Using network IB"), &p);
    assert_string_equal(p.host, "n1");
    rd_prefix_parse(LINE(">   File \"train.py\", line 3, in <module>"), &p);
    assert_true(strncmp(p.msg, "  File", 6) == 0);

    /* Ray's worker tags are dropped */
    rd_prefix_parse(LINE("(RayWorkerWrapper pid=16018, ip=10.0.0.5) Last error:"), &p);
    assert_true(strncmp(p.msg, "Last error:", 11) == 0);
    rd_prefix_parse(LINE("(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00"), &p);
    assert_string_equal(p.host, "z-pc");
    assert_int_equal(p.pid, 909608);
    rd_prefix_parse(LINE("(see the log) not a tag"), &p);
    assert_true(strncmp(p.msg, "(see the log)", 13) == 0);

    rd_prefix_parse(LINE("[default5]:[2025-02-11 14:00:05,421] ERROR - boom"), &p);
    assert_int_equal(p.local_rank, 5);
    assert_int_equal(p.ts.year, 2025);
    assert_int_equal(p.level, 'E');
    assert_string_equal(ev_time_format(p.ts, buf, sizeof buf), "2025-02-11 14:00:05.421");
    assert_true(strncmp(p.msg, "boom", 4) == 0);

    rd_prefix_parse(LINE("[ 1843.308145] NVRM: Xid"), &p);
    assert_int_equal(p.ts.clock, EV_CLOCK_BOOT);
    assert_true(p.ts.ns == 1843308145000LL);
    rd_prefix_parse(LINE("Jul  8 03:11:57 gpu-node-3 kernel: NVRM: Xid (PCI:0000:ca:00): 79, GPU has fallen off the bus."), &p);
    assert_string_equal(p.host, "gpu-node-3");
    assert_true(strncmp(p.msg, "NVRM:", 5) == 0);
    rd_prefix_parse(LINE("[Tue Jul  8 03:11:57 2025] NVRM: x"), &p);
    assert_int_equal(p.ts.year, 2025);
    assert_true(strncmp(p.msg, "NVRM", 4) == 0);

    /* the outer (collector) stamp wins over an inner glog one */
    rd_prefix q;
    rd_prefix_parse(LINE("2024-11-04T10:10:02.500Z [rank0]:[E1104 10:10:02.510000000 x.cpp:1] m"), &q);
    assert_int_equal(q.ts.year, 2024);
    assert_int_equal(q.rank, 0);
    /* yearless and dated stamps of the same instant compare equal */
    rd_prefix_parse(LINE("[E1104 10:10:02.500000000 x.cpp:1] m"), &p);
    assert_int_equal(ev_time_cmp(p.ts, q.ts), 0);
    /* explicit zones are applied: 12:00+02:00 is 10:00Z */
    rd_prefix_parse(LINE("2025-06-01T12:00:00.000+02:00 a"), &q);
    rd_prefix_parse(LINE("2025-06-01T10:00:00.000Z b"), &p);
    assert_int_equal(ev_time_cmp(p.ts, q.ts), 0);
    rd_prefix_parse(LINE("2025-06-01T05:30:00-0430 c"), &q);
    assert_int_equal(ev_time_cmp(p.ts, q.ts), 0);
    assert_true(strncmp(q.msg, "c", 1) == 0);
    /* NCCL >= 2.26 stamps WARN lines with "[%F %T] " by default */
    rd_prefix_parse(LINE("[2025-03-21 02:07:08] gpu-b:5200:5290 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : x"), &p);
    assert_int_equal(p.ts.year, 2025);
    assert_string_equal(p.host, "gpu-b");
    assert_int_equal(p.dev, 0);
    assert_true(strncmp(p.msg, "transport/net_ib.cc:1696 NCCL WARN", 34) == 0);
    /* not prefixes */
    rd_prefix_parse(LINE("  File \"/a.py\", line 3, in f"), &p);
    assert_int_equal(p.rank, -1);
    assert_int_equal(p.msg_len, strlen("  File \"/a.py\", line 3, in f"));
    rd_prefix_parse(LINE("work = default_pg.barrier(opts=opts)"), &p);
    assert_int_equal(p.pid, -1);
}

static void test_rank_from_name(void **state)
{
    (void)state;
    assert_int_equal(rd_rank_from_name("logs/rank3.log"), 3);
    assert_int_equal(rd_rank_from_name("rank_12.out"), 12);
    assert_int_equal(rd_rank_from_name("job/node0-rank-7.err"), 7);
    assert_int_equal(rd_rank_from_name("worker5.txt"), 5);
    assert_int_equal(rd_rank_from_name("/tmp/tr/attempt_0/3/stderr.log"), 3);
    assert_int_equal(rd_rank_from_name("dmesg.txt"), -1);
    assert_int_equal(rd_rank_from_name("ranking.log"), -1);
    assert_int_equal(rd_rank_from_name("stdout.log"), -1);
    assert_int_equal(rd_rank_from_name("/x/abc/stdout.log"), -1);
}

/* Parse text with one kind's reader into *out (zeroed when the reader
 * found nothing of its kind). */
static void parse_into(ev_kind kind, const char *text, size_t len, void *out, size_t size)
{
    void *facts = NULL;
    memset(out, 0, size);
    if (rd_ev_parse(kind, text, len, "t.log", &facts, NULL, NULL) == 0) {
        memcpy(out, facts, size);
        ev_facts_free(kind, facts);
    }
}

static ev_nccl g_nf;

static void nccl_lines(const char *text) { parse_into(EV_NCCL_LOG, text, strlen(text), &g_nf, sizeof g_nf); }

static void test_nccl_transports_and_topology(void **state)
{
    (void)state;
    nccl_lines("h1:10:20 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
               "h1:10:20 [0] NCCL INFO Channel 01/02 :    0   1   2   3\n"
               "h1:10:20 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1\n"
               "h1:10:20 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
               "h1:10:20 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
               "h1:10:20 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via direct shared memory\n"
               "h1:10:20 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] via SHM/direct/direct\n"
               "h1:10:20 [0] NCCL INFO Channel 00/0 : 3[1] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
               "h1:10:20 [0] NCCL INFO Channel 01/0 : 3[1] -> 0[0] [receive] via NET/IBext_v8/1/GDRDMA\n"
               "h2:11:21 [1] NCCL INFO Channel 00/0 : 0[0] -> 3[1] [send] via NET/Socket/0\n"
               "h2:11:21 [1] NCCL INFO Ring 00 : 1[1] -> 2[2] via P2P/direct pointer\n"
               "h2:11:21 [1] NCCL INFO 24 coll channels, 16 nvls channels, 32 p2p channels, 2 p2p channels per peer\n"
               "h2:11:21 [1] NCCL INFO comm 0x7f rank 3 nRanks 16 nNodes 2 localRanks 8 localRank 3 MNNVL 0\n"
               "h2:11:21 [1] NCCL INFO NVLS comm 0x55 headRank 0 nHeads 8 buffSize 4194304\n");
    assert_int_equal(g_nf.rings, 2);
    assert_int_equal(g_nf.trees, 1);
    assert_int_equal(g_nf.transports[EV_NCCL_TR_P2P_IPC], 1);
    assert_int_equal(g_nf.transports[EV_NCCL_TR_P2P_CUMEM], 1);
    assert_int_equal(g_nf.transports[EV_NCCL_TR_SHM], 2);
    assert_int_equal(g_nf.transports[EV_NCCL_TR_NET_IB_GDR], 2);
    assert_int_equal(g_nf.transports[EV_NCCL_TR_NET_SOCKET], 1);
    assert_int_equal(g_nf.transports[EV_NCCL_TR_P2P_DIRECT], 1);
    assert_int_equal(g_nf.transport_at[EV_NCCL_TR_SHM].line, 6);
    assert_int_equal(g_nf.gdr, EV_NCCL_GDR_ON);
    assert_int_equal(g_nf.coll_channels, 24);
    assert_int_equal(g_nf.nvls_channels, 16);
    assert_int_equal(g_nf.nranks, 16);
    assert_int_equal(g_nf.nnodes, 2);
    assert_int_equal(g_nf.max_rank, 3);
    assert_int_equal(g_nf.nvls_available, 1);
    assert_int_equal(g_nf.n_hosts, 2);
}

static void test_nccl_net_and_gdr(void **state)
{
    (void)state;
    nccl_lines("NCCL version 2.21.5+cuda12.4\n"
               "n1:5:6 [0] NCCL INFO Bootstrap : Using eth0:172.16.121.86<0>\n"
               "n1:5:7 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so\n"
               "n1:5:7 [0] NCCL INFO P2P plugin IBext_v8\n"
               "n1:5:7 [0] NCCL INFO NET/IB : Using [0]irdma0:1/RoCE [1]irdma3:1/RoCE [RO]; OOB eth0:172.16.121.86<0>\n"
               "n1:5:7 [0] NCCL INFO Using network IBext_v8\n"
               "n1:5:7 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 42000 / HCA 0 (distance 6 > 4)\n"
               "n1:5:9 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to 0.\n"
               "n1:5:9 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1047 mtu 5 query_ece={supported=1} GID 0 (80FE/1A8A41FEFF21A75E)\n");
    assert_string_equal(g_nf.version, "2.21.5+cuda12.4");
    assert_string_equal(g_nf.bootstrap_if, "eth0:172.16.121.86<0>");
    assert_string_equal(g_nf.net_plugin, "IBext_v8");
    assert_string_equal(g_nf.network, "IBext_v8");
    assert_int_equal(g_nf.net, EV_NCCL_NET_IB);
    assert_int_equal(g_nf.n_devs, 2);
    assert_string_equal(g_nf.devs[1].name, "irdma3");
    assert_string_equal(g_nf.devs[1].link, "RoCE");
    assert_int_equal(g_nf.gdr, EV_NCCL_GDR_OFF);
    assert_string_equal(g_nf.gdr_reason, "distance 6 > 4");
    assert_int_equal(g_nf.gdr_at.line, 7);
    assert_int_equal(g_nf.gid_index, 0);
    assert_string_equal(ev_nccl_env(&g_nf, "NCCL_IB_GID_INDEX", NULL), "0");
    assert_int_equal(g_nf.n_qps, 1); /* mtu 5 = 4096 bytes (the IB MTU enum) */
    assert_int_equal(g_nf.qps[0].mtu_bytes, 4096);
    assert_int_equal(g_nf.qps[0].gid_index, 0);
    assert_string_equal(g_nf.qps[0].host, "n1");
    assert_int_equal(g_nf.qps[0].line, 9);

    nccl_lines("h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)\n");
    assert_int_equal(g_nf.gdr, EV_NCCL_GDR_OFF);
    assert_string_equal(g_nf.gdr_reason, "no module");
    nccl_lines("h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n");
    assert_int_equal(g_nf.gdr, EV_NCCL_GDR_OFF);
    nccl_lines("h:1:2 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 1a000 / HCA 0 (distance 2 <= 3), read 1\n");
    assert_int_equal(g_nf.gdr, EV_NCCL_GDR_ON);
}

static void test_nccl_warnings(void **state)
{
    (void)state;
    nccl_lines("a:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n"
               "a:1:2 [0] misc/ibvwrap.cc:203 NCCL WARN Call to ibv_modify_qp failed with 101 Network is unreachable, local GID ::ffff:10.0.0.1\n"
               "a:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.2.3<43201> failed : Software caused connection abort\n"
               "a:1:2 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)\n"
               "a:1:2 [0] transport/nvls.cc:158 NCCL WARN Cuda failure 801 'operation not supported'\n"
               "a:1:2 [0] enqueue.cc:100 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n"
               "b:3:4 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB: Got completion from peer 10.0.0.1<42311> with status=transport retry counter exceeded(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0\n"
               "b:3:4 [1] NCCL WARN some other warning\n");
    assert_int_equal(g_nf.n_issues, 8);
    assert_int_equal(g_nf.issues[0].kind, EV_NCCL_ISSUE_IBV_CALL);
    assert_non_null(strstr(g_nf.issues[0].detail, "ibv_modify_qp: Network is unreachable"));
    assert_int_equal(g_nf.issues[1].code, 101);
    assert_int_equal(g_nf.issues[2].kind, EV_NCCL_ISSUE_CONNECT);
    assert_string_equal(g_nf.issues[2].detail, "10.1.2.3<43201>: Software caused connection abort");
    assert_int_equal(g_nf.issues[3].kind, EV_NCCL_ISSUE_SHM);
    assert_int_equal(g_nf.issues[4].kind, EV_NCCL_ISSUE_NVLS);
    assert_int_equal(g_nf.issues[4].code, 801);
    assert_int_equal(g_nf.issues[5].kind, EV_NCCL_ISSUE_CUDA);
    assert_int_equal(g_nf.issues[5].code, 700);
    assert_int_equal(g_nf.issues[6].kind, EV_NCCL_ISSUE_IB_COMPLETION);
    assert_int_equal(g_nf.issues[6].code, 12);
    assert_int_equal(g_nf.issues[6].vendor_err, 129);
    assert_string_equal(g_nf.issues[6].at.host, "b");
    assert_int_equal(g_nf.issues[7].kind, EV_NCCL_ISSUE_OTHER);
    assert_int_equal(g_nf.warn_lines, 8);
}

/* Lines of the failure families issue 13 added, in the forms NCCL prints
 * them (src/transport/net_ib.cc, misc/socket.cc, bootstrap.cc, enqueue.cc). */
static void test_nccl_more_lines(void **state)
{
    (void)state;
    nccl_lines("RCCL version 2.18.3+hip6.0\n"
               "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n"
               "h:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 async fatal event on QP: local access violation work queue error\n"
               "h:1:2 [0] NCCL WARN Bootstrap : no socket interface found\n"
               "h:1:2 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
               "h:1:2 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 0 directMode 1\n"
               "misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]\n");
    assert_true(g_nf.rccl);
    assert_string_equal(g_nf.version, "2.18.3+hip6.0");
    assert_int_equal(g_nf.transports[EV_NCCL_TR_NET_IB_GDR], 1); /* a channel line whose "Channel xx :" was cut */
    assert_int_equal(g_nf.issues[0].kind, EV_NCCL_ISSUE_IB_ASYNC);
    assert_int_equal(g_nf.issues[0].at.line, 3);
    assert_int_equal(g_nf.issues[1].kind, EV_NCCL_ISSUE_NO_SOCKET_IF);
    assert_int_equal(g_nf.shmem_need, 82240);
    assert_int_equal(g_nf.shmem_max, 79856);
    assert_int_equal(g_nf.shmem_at.line, 5);
    assert_int_equal(g_nf.p2p_support, 0);
    assert_int_equal(g_nf.p2p_support_at.line, 6);
    assert_int_equal(g_nf.issues[g_nf.n_issues - 1].kind, EV_NCCL_ISSUE_OTHER); /* NCCL <= 2.4's bare WARN */
    assert_int_equal(g_nf.issues[g_nf.n_issues - 1].at.line, 7);

    /* PyTorch quotes NCCL's last WARN after "Last error:" without its prefix */
    nccl_lines("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
               "Last error:\n"
               "socketStartConnect: Connect to 10.0.0.2<45123> failed : Connection refused\n");
    assert_true(g_nf.n_issues >= 1);
    assert_int_equal(g_nf.issues[g_nf.n_issues - 1].kind, EV_NCCL_ISSUE_CONNECT);
    assert_int_equal(g_nf.issues[g_nf.n_issues - 1].at.line, 3);

    /* the same rank and size on two hosts: separate communicators, not one job */
    nccl_lines("h1:1:2 [0] NCCL INFO comm 0x11 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE\n"
               "h2:3:4 [0] NCCL INFO comm 0x22 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE\n");
    assert_true(g_nf.independent_comms >= 1);
    assert_int_equal(g_nf.independent_at.line, 2);
}

static void test_nccl_sniff(void **state)
{
    (void)state;
    const char *nccl = "n:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                       "n:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n"
                       "NCCL version 2.18.5+cuda12.0\n";
    const char *other = "epoch 1 loss 2.0\nepoch 2 loss 1.9\nNCCL is mentioned here once\n";
    assert_true(rd_nccl_sniff(nccl, strlen(nccl)) >= 80);
    assert_true(rd_nccl_sniff(other, strlen(other)) < 50);
    assert_int_equal(rd_nccl_sniff("", 0), 0);
}

static void test_nccl_caps(void **state)
{
    (void)state;
    size_t n = (EV_NCCL_MAX_ISSUES + 10) * 64;
    char *buf = malloc(n), *p = buf;
    for (int i = 0; i < EV_NCCL_MAX_ISSUES + 10; i++) p += sprintf(p, "h:1:2 [0] NCCL WARN warning %d\n", i);
    parse_into(EV_NCCL_LOG, buf, (size_t)(p - buf), &g_nf, sizeof g_nf);
    assert_int_equal(g_nf.n_issues, EV_NCCL_MAX_ISSUES);
    assert_int_equal(g_nf.issues_dropped, 10);
    free(buf);
}

static ev_torch g_tf;

static void torch_lines(const char *text) { parse_into(EV_TORCH, text, strlen(text), &g_tf, sizeof g_tf); }

static void test_torch_oom_old_format(void **state)
{
    (void)state;
    const char *t =
        "Traceback (most recent call last):\n"
        "  File \"train.py\", line 88, in <module>\n"
        "    optimizer.step()\n"
        "  File \"/usr/lib/python3/dist-packages/torch/optim/adam.py\", line 133, in step\n"
        "    state['exp_avg_sq'] = torch.zeros_like(p)\n"
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 3.44 MiB free; 14.80 GiB reserved in total by PyTorch)\n";
    torch_lines(t);
    assert_int_equal(g_tf.n_ooms, 1);
    const ev_torch_oom *o = &g_tf.ooms[0];
    assert_int_equal(o->format, 1);
    assert_int_equal(o->gpu, 0);
    CP_ASSERT_NEAR(o->requested_bytes, 20.0 * 1048576, 1);
    CP_ASSERT_NEAR(o->total_bytes, 15.78 * 1073741824.0, 1e3);
    CP_ASSERT_NEAR(o->allocated_bytes, 14.56 * 1073741824.0, 1e3);
    CP_ASSERT_NEAR(o->free_bytes, 3.44 * 1048576, 1);
    CP_ASSERT_NEAR(o->reserved_unalloc_bytes, (14.80 - 14.56) * 1073741824.0, 1e3);
    assert_int_equal(o->phase, EV_TORCH_PHASE_OPTIMIZER);
    assert_string_equal(o->frame, "train.py:88 in <module>");
    assert_int_equal(o->at.line, 6);
}

static void test_torch_watchdog_and_errors(void **state)
{
    (void)state;
    const char *t =
        "[rank1]:[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, TensorShape=[1, 2], Timeout(ms)=1800000) ran for 1800483 milliseconds before timing out.\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "[W] torch.distributed.elastic.multiprocessing.api: failed (exitcode: -7) local_rank: 0 (pid: 8123) of binary: python Signal 7 (SIGBUS) received by PID 8123\n"
        "[PG 0 Rank 2] Exception (either an error or timeout) detected by watchdog at work: 12, last enqueued NCCL work: 13, last completed NCCL work: 11.\n";
    torch_lines(t);
    assert_int_equal(g_tf.n_timeouts, 1);
    const ev_torch_watchdog *w = &g_tf.timeouts[0];
    assert_int_equal(w->format, 1);
    assert_int_equal(w->seq, 5);
    assert_string_equal(w->op, "BROADCAST");
    assert_int_equal(w->timeout_ms, 1800000);
    assert_int_equal(w->ran_for_ms, 1800483);
    assert_int_equal(w->numel_in, -1);
    assert_int_equal(w->at.rank, 1);
    assert_int_equal(g_tf.n_nccl_errors, 1);
    assert_string_equal(g_tf.nccl_errors[0].what, "unhandled cuda error");
    assert_int_equal(g_tf.n_cuda_errors, 1);
    assert_string_equal(g_tf.cuda_errors[0].what, "an illegal memory access was encountered");
    assert_int_equal(g_tf.n_signals, 1);
    assert_int_equal(g_tf.signals[0].signo, 7);
    assert_int_equal(g_tf.n_progress, 1);
    assert_int_equal(g_tf.progress[0].last_completed, 11);
    assert_int_equal(g_tf.progress[0].at.rank, 2);
}

/* two ranks' tracebacks interleaved in one launcher log keep their phases */
static void test_torch_interleaved_tracebacks(void **state)
{
    (void)state;
    const char *t =
        "[rank0]: Traceback (most recent call last):\n"
        "[rank1]: Traceback (most recent call last):\n"
        "[rank0]:   File \"/w/train.py\", line 10, in step\n"
        "[rank1]:   File \"/w/train.py\", line 12, in step\n"
        "[rank0]:     out = model(x)\n"
        "[rank1]:     loss.backward()\n"
        "[rank0]:   File \"/w/model.py\", line 40, in forward\n"
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 80.00 GiB of which 0.50 GiB is free.\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 80.00 GiB of which 0.50 GiB is free.\n";
    torch_lines(t);
    assert_int_equal(g_tf.tracebacks, 2);
    assert_int_equal(g_tf.n_ooms, 2);
    assert_int_equal(g_tf.ooms[0].at.rank, 0);
    assert_int_equal(g_tf.ooms[0].phase, EV_TORCH_PHASE_FORWARD);
    assert_string_equal(g_tf.ooms[0].frame, "model.py:40 in forward");
    assert_int_equal(g_tf.ooms[1].at.rank, 1);
    assert_int_equal(g_tf.ooms[1].phase, EV_TORCH_PHASE_BACKWARD);
    assert_string_equal(g_tf.ooms[1].frame, "train.py:12 in step");
}

static void test_dmesg(void **state)
{
    (void)state;
    ev_dmesg *d = malloc(sizeof *d);
    const char *t =
        "[  512.1] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "[  513.2] NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python, Graphics Exception: ESR 0x50\n"
        "Oct 15 12:40:10 server kernel: NVRM: Xid (43, pid: 5678): ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR\n"
        "[  600.0] pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:3b:00.0\n"
        "[  600.1] pcieport 0000:00:03.1: AER: Uncorrected (Non-Fatal) error received: 0000:3b:00.0\n"
        "[  600.2] pcieport 0000:00:03.1: AER:   device [10b5:8747] error status/mask=00004000/00000000\n"
        "[  700.0] Out of memory: Killed process 4242 (python3) total-vm:1000kB\n";
    parse_into(EV_KERNEL, t, strlen(t), d, sizeof *d);
    assert_int_equal(d->n_xids, 3);
    assert_int_equal(d->xids[0].code, 79);
    assert_string_equal(d->xids[0].pci, "0000:3b:00");
    assert_int_equal(d->xids[0].pid, 1234);
    assert_int_equal(d->xids[2].code, 43);
    assert_int_equal(d->xids[2].pid, 5678);
    assert_string_equal(d->xids[2].at.host, "server");
    assert_int_equal(d->n_bus, 0); /* the Xid 79 line is an Xid, not a second event */
    assert_int_equal(d->n_aer, 2);
    assert_int_equal(d->aer[0].severity, EV_AER_FATAL);
    assert_string_equal(d->aer[0].device, "0000:00:03.1");
    assert_int_equal(d->aer[1].severity, EV_AER_NONFATAL);
    assert_int_equal(d->n_oomkills, 1);
    assert_int_equal(d->oomkills[0].pid, 4242);
    assert_string_equal(d->oomkills[0].comm, "python3");
    free(d);
}

static void test_smi_query_old_layout(void **state)
{
    (void)state;
    ev_smiq *s = malloc(sizeof *s);
    const char *t =
        "==============NVSMI LOG==============\n"
        "Driver Version                      : 470.57.02\n"
        "Attached GPUs                       : 1\n"
        "GPU 00000000:00:1E.0\n"
        "    Product Name                    : Tesla V100-SXM2-16GB\n"
        "    ECC Errors\n"
        "        Volatile\n"
        "            Single Bit\n"
        "                Device Memory       : 4\n"
        "                Total               : 4\n"
        "            Double Bit\n"
        "                Device Memory       : 1\n"
        "                Total               : 1\n"
        "        Aggregate\n"
        "            Single Bit\n"
        "                Total               : 10\n"
        "            Double Bit\n"
        "                Total               : 2\n"
        "    Retired Pages\n"
        "        Single Bit ECC              : 0\n"
        "        Double Bit ECC              : 1\n"
        "        Pending Page Blacklist      : Yes\n";
    assert_true(rd_smiq_sniff(t, strlen(t)) >= 50);
    parse_into(EV_SMI_QUERY, t, strlen(t), s, sizeof *s);
    assert_int_equal(s->n_gpus, 1);
    const ev_smiq_gpu *g = &s->gpus[0];
    assert_string_equal(g->bus_id, "00000000:00:1E.0");
    assert_string_equal(g->product, "Tesla V100-SXM2-16GB");
    assert_string_equal(s->driver, "470.57.02");
    assert_int_equal(g->volatile_corr, 4);
    assert_int_equal(g->volatile_uncorr, 1);
    assert_int_equal(g->aggregate_corr, 10);
    assert_int_equal(g->aggregate_uncorr, 2);
    assert_int_equal(g->retired_dbe, 1);
    assert_int_equal(g->retire_pending, 1);
    assert_int_equal(g->line_retire, 22);
    assert_int_equal(g->line_ecc, 13);
    assert_int_equal(g->remap_pending, -1);
    free(s);
}

/* An nvidia-smi -q excerpt (the remapped-rows block people paste, no
 * banner): its GPU is anonymous, the counts still read. */
static void test_smi_query_excerpt(void **state)
{
    (void)state;
    ev_smiq *s = malloc(sizeof *s);
    const char *t = "    Remapped Rows\n"
                    "        Correctable Error             : 0\n"
                    "        Uncorrectable Error           : 3\n"
                    "        Pending                       : Yes\n"
                    "        Remapping Failure Occurred    : No\n";
    parse_into(EV_SMI_QUERY, t, strlen(t), s, sizeof *s);
    assert_int_equal(s->n_gpus, 1);
    assert_string_equal(s->gpus[0].bus_id, "");
    assert_int_equal(s->gpus[0].remap_uncorr, 3);
    assert_int_equal(s->gpus[0].line_remap_uncorr, 3);
    assert_int_equal(s->gpus[0].remap_pending, 1);
    free(s);
}

/* PyTorch lines issue 13 added: other processes holding the GPU in an OOM
 * message (NVML's process list), a collective fingerprint mismatch
 * (TORCH_DISTRIBUTED_DEBUG=DETAIL), CUDA error numbers. */
static void test_torch_more_lines(void **state)
{
    (void)state;
    torch_lines("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
                "of which 1.06 GiB is free. Process 118636 has 71.62 GiB memory in use. Process 4242 has 2.00 GiB memory in use. "
                "Including non-PyTorch memory, this process has 4.45 GiB memory in use. Of the allocated memory 3.90 GiB is "
                "allocated by PyTorch, and 52.15 MiB is reserved by PyTorch but unallocated.\n");
    assert_int_equal(g_tf.n_ooms, 1);
    const ev_torch_oom *o = &g_tf.ooms[0];
    assert_int_equal(o->n_other_procs, 2);
    assert_int_equal(o->other_pid, 118636);
    CP_ASSERT_NEAR(o->other_procs_bytes, 73.62 * 1024 * 1024 * 1024, 1e6);
    CP_ASSERT_NEAR(o->in_use_bytes, 4.45 * 1024 * 1024 * 1024, 1e6);

    torch_lines("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
                "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=Float), "
                "but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=BROADCAST, "
                "TensorShape=[1], TensorDtypes=Float).\n");
    assert_int_equal(g_tf.n_mismatches, 1);
    const ev_torch_mismatch *m = &g_tf.mismatches[0];
    assert_int_equal(m->rank, 1);
    assert_int_equal(m->other_rank, 0);
    assert_int_equal(m->seq, 3104);
    assert_string_equal(m->op, "ALLREDUCE");
    assert_string_equal(m->other_op, "BROADCAST");

    torch_lines("RuntimeError: cuda runtime error (802) : system not yet initialized at /pytorch/aten/src/THC/THCGeneral.cpp:47\n"
                "CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) \"cudaGetDeviceCount(&deviceCount)\"\n");
    assert_int_equal(g_tf.n_cuda_errors, 2);
    assert_int_equal(g_tf.cuda_errors[0].code, 802);
    assert_int_equal(g_tf.cuda_errors[1].code, 802);
}

/* Launcher messages: a UCX error whose device wraps onto the next line,
 * MPI_ABORT, srun. */
static void test_launcher_lines(void **state)
{
    (void)state;
    ev_launcher *f = malloc(sizeof *f);
    const char *t = "[1716392813.442211] [node-7:4242 :0]      ib_iface.c:1012 UCX  ERROR ibv_create_cq(cqe=4096) on\n"
                    "mlx5_15 failed: No such device\n"
                    "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\n"
                    "srun: error: gpu-17: task 5: Exited with exit code 1\n";
    assert_true(rd_launcher_sniff(t, strlen(t)) >= 0);
    parse_into(EV_LAUNCHER, t, strlen(t), f, sizeof *f);
    assert_int_equal(f->n_items, 3);
    assert_int_equal(f->items[0].kind, EV_LAUNCHER_UCX_ERROR);
    assert_string_equal(f->items[0].device, "mlx5_15");
    assert_string_equal(f->items[0].detail, "No such device");
    assert_int_equal(f->items[0].at.line, 1);
    assert_int_equal(f->items[1].kind, EV_LAUNCHER_MPI_ABORT);
    assert_int_equal(f->items[2].kind, EV_LAUNCHER_SRUN_ERROR);
    assert_int_equal(f->items[2].at.line, 4);
    free(f);
}

/* lspci -vv: a full device block and a pasted excerpt (LnkCap/LnkSta only). */
static void test_lspci(void **state)
{
    (void)state;
    ev_lspci *f = malloc(sizeof *f);
    const char *t = "41:00.0 Ethernet controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n"
                    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
                    "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x8 (downgraded)\n"
                    "\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n";
    assert_true(rd_lspci_sniff(t, strlen(t)) >= 50);
    parse_into(EV_LSPCI, t, strlen(t), f, sizeof *f);
    assert_int_equal(f->n_devs, 1);
    assert_string_equal(f->devs[0].bdf, "41:00.0");
    CP_ASSERT_NEAR(f->devs[0].cap_gts, 16, 1e-9);
    assert_int_equal(f->devs[0].cap_width, 16);
    assert_int_equal(f->devs[0].sta_width, 8);
    assert_true(f->devs[0].downgraded);
    assert_int_equal(f->devs[0].lnksta_at.line, 3);
    assert_int_equal(f->devs[0].acs_redirect, 0);
    const char *x = "# lspci -vv -s 3b:00.0 | grep Lnk\n"
                    "LnkCap: Port #0, Speed 8GT/s, Width x16\n"
                    "LnkSta: Speed 2.5GT/s (downgraded), Width x16 (ok)\n";
    parse_into(EV_LSPCI, x, strlen(x), f, sizeof *f);
    assert_int_equal(f->n_devs, 1);
    assert_string_equal(f->devs[0].bdf, "");
    CP_ASSERT_NEAR(f->devs[0].sta_gts, 2.5, 1e-9);
    assert_int_equal(f->devs[0].acs_redirect, -1);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_rank_from_name),
        cmocka_unit_test(test_nccl_transports_and_topology),
        cmocka_unit_test(test_nccl_net_and_gdr),
        cmocka_unit_test(test_nccl_warnings),
        cmocka_unit_test(test_nccl_more_lines),
        cmocka_unit_test(test_nccl_sniff),
        cmocka_unit_test(test_nccl_caps),
        cmocka_unit_test(test_torch_oom_old_format),
        cmocka_unit_test(test_torch_watchdog_and_errors),
        cmocka_unit_test(test_torch_interleaved_tracebacks),
        cmocka_unit_test(test_dmesg),
        cmocka_unit_test(test_smi_query_old_layout),
        cmocka_unit_test(test_smi_query_excerpt),
        cmocka_unit_test(test_torch_more_lines),
        cmocka_unit_test(test_launcher_lines),
        cmocka_unit_test(test_lspci),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
