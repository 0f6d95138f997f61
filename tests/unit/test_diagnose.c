/* test_diagnose.c - the diagnose engine on logs the project wrote
 * (tests/fixtures/diagnose): cross-rank ordering of the first failure,
 * watchdog classification, GPU faults, unknown and empty input.
 */
#include "test_util.h"

#include "diag/diag.h"

#include <unistd.h>

static dg_ctx *run_paths(const char *const *rel, size_t n)
{
    dg_ctx *c = dg_new();
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/diagnose/%s", CP_FIXTURES, rel[i]);
        cp_error err;
        cp_error_clear(&err);
        if (dg_add_path(c, path, &err) != 0) fail_msg("%s: %s", path, err.msg);
    }
    dg_run(c);
    return c;
}

static const dg_verdict *find_verdict(const dg_ctx *c, const char *code)
{
    for (int v = 0; v < c->n_verdicts; v++)
        if (strcmp(c->verdicts[v].code, code) == 0) return &c->verdicts[v];
    return NULL;
}

static const char *input_base(const dg_ctx *c, int input)
{
    const char *p = strrchr(c->inputs[input].path, '/');
    return p ? p + 1 : c->inputs[input].path;
}

/* rank 2 hits an IB error 10 minutes before every rank's watchdog fires; the
 * files are given in reverse order: the timeline still starts with rank 2 */
static void test_ib_error_first_across_ranks(void **state)
{
    (void)state;
    const char *files[] = {"ib_first/rank3.log", "ib_first/rank2.log", "ib_first/rank1.log", "ib_first/rank0.log"};
    dg_ctx *c = run_paths(files, 4);
    assert_int_equal(c->n_inputs, 4);
    assert_true(c->n_verdicts >= 2);
    assert_string_equal(c->verdicts[0].code, "ib_retry_exceeded");
    assert_true(c->verdicts[0].first_failure);
    assert_int_equal(c->verdicts[0].rank, 2);
    assert_non_null(strstr(c->verdicts[0].title, "gpu-b"));
    /* the timeout verdict is there too, ranked below */
    const dg_verdict *t = find_verdict(c, "nccl_timeout_stall");
    assert_non_null(t);
    assert_true(t->confidence < c->verdicts[0].confidence);
    assert_non_null(strstr(t->title, "4 rank(s)"));
    bool names_first = false;
    for (int s = 0; s < t->n_steps; s++)
        names_first |= strstr(t->steps[s], "rank 2 on gpu-b failed first (nccl_warn at 2024-11-04 10:00:01.734, rank2.log:5)") != NULL;
    assert_true(names_first);
    /* timeline: the IB warning first, then the four timeouts in time order */
    assert_int_equal(c->first_failure, 0);
    assert_string_equal(c->events[0].kind, "nccl_warn");
    assert_int_equal(c->events[0].rank, 2);
    assert_string_equal(input_base(c, c->events[0].input), "rank2.log");
    int expect_rank[] = {0, 1, 3, 2};
    for (int k = 1; k <= 4; k++) {
        assert_string_equal(c->events[k].kind, "watchdog_timeout");
        assert_int_equal(c->events[k].rank, expect_rank[k - 1]);
        assert_int_equal(rd_time_cmp(c->events[k - 1].ts, c->events[k].ts), -1);
    }
    dg_free(c);
}

/* rank 1 runs out of memory in backward; ranks 0 and 2 time out 30 min
 * later. The OOM line has no time of its own: it inherits the time of the
 * line before it in its file, which orders it first. */
static void test_oom_first_across_ranks(void **state)
{
    (void)state;
    const char *dir[] = {"oom_first"};
    dg_ctx *c = run_paths(dir, 1);
    assert_int_equal(c->n_inputs, 3);
    assert_string_equal(c->verdicts[0].code, "oom_fragmentation");
    assert_int_equal(c->verdicts[0].rank, 1);
    assert_non_null(strstr(c->verdicts[0].title, "backward phase"));
    assert_non_null(strstr(c->verdicts[0].title, "15.91 GiB reserved but unallocated"));
    bool expandable = false;
    for (int s = 0; s < c->verdicts[0].n_steps; s++)
        expandable |= strstr(c->verdicts[0].steps[s], "expandable_segments:True") != NULL;
    assert_true(expandable);
    assert_string_equal(c->events[c->first_failure].kind, "cuda_oom");
    assert_int_equal(c->events[c->first_failure].rank, 1);
    assert_int_equal(c->first_failure, 0);
    const dg_verdict *t = find_verdict(c, "nccl_timeout_stall");
    assert_non_null(t);
    assert_non_null(strstr(t->title, "no timeout line from rank(s) 1"));
    dg_free(c);
}

static void test_desync_mismatch(void **state)
{
    (void)state;
    const char *dir[] = {"desync_mismatch"};
    dg_ctx *c = run_paths(dir, 1);
    assert_string_equal(c->verdicts[0].code, "nccl_desync");
    assert_non_null(strstr(c->verdicts[0].title, "ALLREDUCE"));
    assert_non_null(strstr(c->verdicts[0].title, "ALLGATHER"));
    assert_int_equal(c->verdicts[0].n_evidence, 2);
    assert_null(find_verdict(c, "nccl_timeout_stall"));
    dg_free(c);
}

static void test_stalled_process(void **state)
{
    (void)state;
    const char *dir[] = {"stalled"};
    dg_ctx *c = run_paths(dir, 1);
    assert_string_equal(c->verdicts[0].code, "process_stalled");
    assert_int_equal(c->verdicts[0].rank, 5);
    assert_non_null(strstr(c->verdicts[0].title, "4.0x"));
    assert_null(find_verdict(c, "nccl_timeout_stall"));
    dg_free(c);
}

/* dmesg Xid 48 + nvidia-smi -q + a rank's timeout 10 minutes later */
static void test_xid_ecc(void **state)
{
    (void)state;
    const char *dir[] = {"xid_ecc"};
    dg_ctx *c = run_paths(dir, 1);
    const dg_verdict *v = &c->verdicts[0];
    assert_string_equal(v->code, "gpu_ecc_uncorrectable");
    assert_non_null(strstr(v->title, "Xid 48"));
    assert_true(v->first_failure);
    /* dmesg and nvidia-smi -q both testify */
    bool dmesg = false, smi = false;
    for (int e = 0; e < v->n_evidence; e++) {
        dmesg |= strcmp(input_base(c, v->evidence[e].input), "dmesg-gpu-c.txt") == 0;
        smi |= strcmp(input_base(c, v->evidence[e].input), "nvidia-smi-q.txt") == 0;
    }
    assert_true(dmesg && smi);
    const dg_verdict *remap = find_verdict(c, "gpu_row_remap_pending");
    assert_non_null(remap);
    assert_true(remap->confidence < v->confidence);
    const dg_verdict *sec = find_verdict(c, "gpu_xid_secondary");
    assert_non_null(sec);
    assert_true(sec->confidence < 0.5);
    assert_non_null(find_verdict(c, "pcie_aer"));
    /* the kinds each input was recognised as */
    for (int i = 0; i < c->n_inputs; i++) {
        if (strcmp(input_base(c, i), "nvidia-smi-q.txt") == 0) assert_string_equal(c->inputs[i].kinds, "nvidia-smi-q");
        if (strcmp(input_base(c, i), "dmesg-gpu-c.txt") == 0) assert_string_equal(c->inputs[i].kinds, "kernel");
    }
    dg_free(c);
}

static void test_unknown_input(void **state)
{
    (void)state;
    const char *dir[] = {"unknown"};
    dg_ctx *c = run_paths(dir, 1);
    assert_int_equal(c->n_verdicts, 0);
    assert_int_equal(c->n_events, 0);
    assert_int_equal(c->first_failure, -1);
    assert_string_equal(c->inputs[0].kinds, "unknown");
    char buf[300];
    dg_summary(c, buf, sizeof buf);
    assert_non_null(strstr(buf, "no known failure signature found"));
    assert_non_null(strstr(buf, "1 input(s), 5 line(s)"));
    dg_free(c);
}

static void test_empty_and_binary_input(void **state)
{
    (void)state;
    dg_ctx *c = dg_new();
    assert_int_equal(dg_add_buffer(c, "empty.log", "", 0, NULL), 0);
    const char bin[] = {'\0', '\xff', '\n', '[', '\n', 'N', 'C', 'C', 'L', ' ', 'W', 'A', 'R', 'N'};
    assert_int_equal(dg_add_buffer(c, "bin.log", bin, sizeof bin, NULL), 0);
    dg_run(c);
    assert_int_equal(c->inputs[0].lines, 0);
    assert_int_equal(c->inputs[1].lines, 3);
    /* a bare "NCCL WARN" is a warning, never a verdict on its own */
    assert_int_equal(c->n_verdicts, 0);
    dg_free(c);
}

static void test_missing_file(void **state)
{
    (void)state;
    dg_ctx *c = dg_new();
    cp_error err;
    cp_error_clear(&err);
    assert_true(dg_add_path(c, "/nonexistent/chainprof/rank0.log", &err) < 0);
    assert_non_null(strstr(err.file, "rank0.log"));
    dg_free(c);
}

/* Every rule row is documented and has a function. */
static void test_rule_table(void **state)
{
    (void)state;
    assert_true(dg_n_rules >= 10);
    for (size_t r = 0; r < dg_n_rules; r++) {
        assert_non_null(dg_rules[r].fn);
        assert_true(strlen(dg_rules[r].summary) > 10);
        const char *layer = dg_rules[r].layer;
        assert_true(!strcmp(layer, "host") || !strcmp(layer, "compute") || !strcmp(layer, "intra") ||
                    !strcmp(layer, "inter") || !strcmp(layer, "storage"));
    }
}


/* 300 ranks time out on the same collective except rank 137, which never
 * logged one: the verdict counts them all and names the missing rank. */
static void test_many_ranks_missing_one(void **state)
{
    (void)state;
    dg_ctx *c = dg_new();
    for (int r = 0; r < 300; r++) {
        char name[32], buf[512];
        snprintf(name, sizeof name, "rank%d.log", r);
        int n = r == 137 ? snprintf(buf, sizeof buf, "[rank%d]:step 10 loss 2.0\n", r)
                         : snprintf(buf, sizeof buf,
                                    "[rank%d]:[E0101 10:00:%02d.000000000 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective "
                                    "operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, "
                                    "Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n",
                                    r, r % 60, r);
        dg_add_buffer(c, name, buf, (size_t)n, NULL);
    }
    dg_run(c);
    assert_string_equal(c->verdicts[0].code, "nccl_timeout_stall");
    assert_non_null(strstr(c->verdicts[0].title, "299 rank(s) stuck in ALLREDUCE SeqNum=88"));
    assert_non_null(strstr(c->verdicts[0].title, "no timeout line from rank(s) 137 "));
    assert_int_equal(c->n_events, 299);
    dg_free(c);
}

/* A 200 KB line (binary junk, a dumped tensor) is cut and counted; the line
 * after it keeps its number. Also read through a .gz file. */
static void test_long_line_file(void **state)
{
    (void)state;
    char path[] = "/tmp/cp_dg_longXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 200000; i++) fputc('x', f);
    fputs("\na:1:2 [0] misc/socket.cc:1 NCCL WARN Connect to 10.9.9.9<1234> failed : Connection refused\n", f);
    fclose(f);
    dg_ctx *c = dg_new();
    cp_error err;
    cp_error_clear(&err);
    assert_int_equal(dg_add_path(c, path, &err), 0);
    dg_run(c);
    assert_int_equal(c->inputs[0].long_lines, 1);
    assert_int_equal(c->inputs[0].lines, 2);
    assert_string_equal(c->verdicts[0].code, "nccl_connect_failed");
    assert_int_equal(c->verdicts[0].evidence[0].line, 2);
    dg_free(c);
    /* longer than the 1 MiB reading window: cut while streaming */
    f = fopen(path, "w");
    fputs("a:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n", f);
    for (int i = 0; i < 2500000; i++) fputc('y', f);
    fputs("\nb:3:4 [0] misc/socket.cc:1 NCCL WARN Connect to 10.9.9.9<1234> failed : Connection refused\n", f);
    fclose(f);
    c = dg_new();
    assert_int_equal(dg_add_path(c, path, &err), 0);
    dg_run(c);
    assert_int_equal(c->inputs[0].long_lines, 1);
    assert_int_equal(c->inputs[0].lines, 3);
    assert_string_equal(c->verdicts[0].code, "nccl_connect_failed");
    assert_int_equal(c->verdicts[0].evidence[0].line, 3);
    dg_free(c);
    unlink(path);
}

/* an untagged per-rank log takes its rank from the file name */
static void test_rank_from_file_name(void **state)
{
    (void)state;
    const char *log = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; "
                      "14.56 GiB already allocated; 3.44 MiB free; 14.80 GiB reserved in total by PyTorch)\n";
    dg_ctx *c = dg_new();
    dg_add_buffer(c, "job/rank6.log", log, strlen(log), NULL);
    dg_run(c);
    assert_string_equal(c->verdicts[0].code, "oom_oversized");
    assert_int_equal(c->verdicts[0].rank, 6);
    assert_non_null(strstr(c->verdicts[0].title, "on rank 6"));
    assert_int_equal(c->inputs[0].file_rank_lines, 1);
    dg_free(c);
}

/* One small log per rule signature: the top verdict must be that rule's. */
typedef struct rule_case {
    const char *log;
    const char *code;
    const char *title_has;
} rule_case;

static const rule_case k_rule_cases[] = {
    {"a:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n",
     "roce_network_unreachable", "Network is unreachable"},
    {"a:1:2 [0] misc/ibvwrap.cc:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\n",
     "ibv_call_failed", "Connection timed out"},
    {"a:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
     "a:1:2 [1] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-1 (size 9637888)\n",
     "nccl_shm", "/dev/shm"},
    {"a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\nBus error (core dumped)\n",
     "nccl_shm", "SIGBUS"},
    {"a:1:2 [0] transport/nvls.cc:158 NCCL WARN Cuda failure 801 'operation not supported'\n",
     "nvls_setup_failed", "NVLS"},
    {"a:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer with error 5, opcode 0, len 0, vendor err 249 (Recv)\n",
     "ib_completion_error", "error 5"},
    {"n1:5:6 [3] enqueue.cc:1556 NCCL WARN Cuda failure 2 'out of memory'\n", "nccl_cuda_failure", "no memory left"},
    {"[  700.0] Out of memory: Killed process 4242 (python3) total-vm:1000kB\n", "host_oom_killer", "4242 (python3)"},
    {"[  600.0] pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:3b:00.0\n", "pcie_aer", "1 fatal"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 74, pid=1, NVLink: fatal error detected on link 3\n", "gpu_nvlink", "Xid 74"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 119, pid=1, Timeout waiting for RPC from GSP!\n", "gpu_firmware", "Xid 119"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=python, Ch 00000010, MMU Fault\n", "gpu_app_fault", "Xid 31"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 999, pid=1, something new\n", "gpu_xid", "Xid 999"},
    {"[rank2]:RuntimeError: CUDA error: uncorrectable ECC error encountered\n", "gpu_ecc_uncorrectable", "rank 2"},
    {"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n",
     "nccl_error", "unhandled cuda error"},
    {"h1:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)\n"
     "h1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
     "h2:3:4 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0\n",
     "gdr_disabled", "no module"},
    {"[2025-01-02 03:04:05,000] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9)\n"
     "Root Cause (first observed failure):\n[0]:\n  time      : 2025-01-02_03:04:05\n  host      : node7\n"
     "  rank      : 13 (local_rank: 5)\n  exitcode  : -9 (pid: 4242)\n  error_file: <N/A>\n"
     "  traceback : Signal 9 (SIGKILL) received by PID 4242\n",
     "process_killed", "rank 13 was killed by SIGKILL"},
    {"[rank1]: traceback : Signal 11 (SIGSEGV) received by PID 77\n", "process_crashed", "SIGSEGV"},
    {"  traceback : Signal 9 (SIGKILL) received by PID 4242\n[  700.0] Out of memory: Killed process 4242 (python3)\n",
     "host_oom_killer", "4242"},
    {"==============NVSMI LOG==============\nGPU 00000000:07:00.0\n    Product Name : NVIDIA A100-SXM4-80GB\n"
     "    Remapped Rows\n        Pending : No\n        Remapping Failure Occurred : Yes\n",
     "gpu_row_remap_failure", "A100"},
};

static void test_rule_signatures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_rule_cases / sizeof k_rule_cases[0]; i++) {
        const rule_case *rc = &k_rule_cases[i];
        dg_ctx *c = dg_new();
        dg_add_buffer(c, "case.log", rc->log, strlen(rc->log), NULL);
        dg_run(c);
        if (!c->n_verdicts) fail_msg("case %zu: no verdict, expected %s", i, rc->code);
        if (strcmp(c->verdicts[0].code, rc->code) != 0)
            fail_msg("case %zu: top verdict %s, expected %s", i, c->verdicts[0].code, rc->code);
        if (!strstr(c->verdicts[0].title, rc->title_has))
            fail_msg("case %zu: title \"%s\" lacks \"%s\"", i, c->verdicts[0].title, rc->title_has);
        assert_true(c->verdicts[0].n_evidence > 0 && c->verdicts[0].n_steps > 0);
        dg_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ib_error_first_across_ranks),
        cmocka_unit_test(test_oom_first_across_ranks),
        cmocka_unit_test(test_desync_mismatch),
        cmocka_unit_test(test_stalled_process),
        cmocka_unit_test(test_xid_ecc),
        cmocka_unit_test(test_unknown_input),
        cmocka_unit_test(test_empty_and_binary_input),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_rule_table),
        cmocka_unit_test(test_rule_signatures),
        cmocka_unit_test(test_many_ranks_missing_one),
        cmocka_unit_test(test_long_line_file),
        cmocka_unit_test(test_rank_from_file_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
