/* test_diagnose.c - the rule book (src/analysis/rulebook.h) on logs the
 * project wrote (tests/fixtures/diagnose) and on one small log per rule
 * signature: cross-rank ordering of the first failure, watchdog
 * classification, GPU faults, unknown and empty input, and that every rule
 * row is documented.
 */
#include "test_util.h"

#include "analysis/rulebook.h"
#include "base/paths.h"
#include "model/evidence.h"
#include "readers/evidence.h"
#include "readers/rd_text.h"

#include <unistd.h>

/* An evidence set and the rule book's run over it. */
typedef struct run {
    ev_set set;
    rb_ctx *c;
} run;

static bool keep_any(const char *path, void *ctx)
{
    (void)path;
    (void)ctx;
    return true;
}

static run *run_new(void)
{
    run *r = calloc(1, sizeof *r);
    ev_set_init(&r->set);
    return r;
}

static void run_free(run *r)
{
    rb_free(r->c);
    ev_set_free(&r->set);
    free(r);
}

static void add_path(run *r, const char *path)
{
    cp_paths ps = {0};
    cp_error err;
    cp_error_clear(&err);
    if (cp_paths_add(&ps, path, keep_any, NULL, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    cp_paths_sort_unique(&ps);
    if (rd_ev_read_files(&r->set, ps.v, ps.n, 1, NULL, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    cp_paths_free(&ps);
}

static void rule(run *r)
{
    rb_free(r->c);
    r->c = rb_run(&r->set, NULL);
}

static run *run_paths(const char *const *rel, size_t n)
{
    run *r = run_new();
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/diagnose/%s", CP_FIXTURES, rel[i]);
        add_path(r, path);
    }
    rule(r);
    return r;
}

static const rb_finding *find_verdict(const run *r, const char *code)
{
    for (size_t v = 0; v < r->c->n; v++)
        if (strcmp(r->c->v[v].code, code) == 0)
            return &r->c->v[v];
    return NULL;
}

static const char *input_base(const run *r, uint32_t input)
{
    const char *p = strrchr(r->set.inputs[input].path, '/');
    return p ? p + 1 : r->set.inputs[input].path;
}

static const char *kinds_of(const run *r, uint32_t input, char *buf, size_t size)
{
    return ev_kinds_str(r->set.inputs[input].kinds, buf, size);
}

/* rank 2 hits an IB error 10 minutes before every rank's watchdog fires; the
 * files are given in reverse order: the timeline still starts with rank 2 */
static void test_ib_error_first_across_ranks(void **state)
{
    (void)state;
    const char *files[] = {"ib_first/rank3.log", "ib_first/rank2.log", "ib_first/rank1.log", "ib_first/rank0.log"};
    run *c = run_paths(files, 4);
    assert_int_equal(c->set.n_inputs, 4);
    assert_true(c->c->n >= 2);
    assert_string_equal(c->c->v[0].code, "NCCL_IB_ERR12_RETRY");
    assert_true(c->c->v[0].first_failure);
    assert_int_equal(c->c->v[0].rank, 2);
    assert_non_null(strstr(c->c->v[0].title, "gpu-b"));
    /* the timeout verdict is there too, ranked below */
    const rb_finding *t = find_verdict(c, "NCCL_TIMEOUT_STALL");
    assert_non_null(t);
    assert_true(t->confidence < c->c->v[0].confidence);
    assert_non_null(strstr(t->title, "4 rank(s)"));
    bool names_first = false;
    for (int s = 0; s < t->n_steps; s++)
        names_first |= strstr(t->steps[s], "rank 2 on gpu-b failed first (nccl_warn at 2024-11-04 10:00:01.734, rank2.log:5)") != NULL;
    assert_true(names_first);
    /* timeline: the IB warning first, then the four timeouts in time order */
    assert_int_equal(c->c->first_failure, 0);
    assert_string_equal(c->c->events[0].kind, "nccl_warn");
    assert_int_equal(c->c->events[0].rank, 2);
    assert_string_equal(input_base(c, c->c->events[0].input), "rank2.log");
    int expect_rank[] = {0, 1, 3, 2};
    for (int k = 1; k <= 4; k++) {
        assert_string_equal(c->c->events[k].kind, "watchdog_timeout");
        assert_int_equal(c->c->events[k].rank, expect_rank[k - 1]);
        assert_int_equal(ev_time_cmp(c->c->events[k - 1].ts, c->c->events[k].ts), -1);
    }
    run_free(c);
}

/* rank 1 runs out of memory in backward; ranks 0 and 2 time out 30 min
 * later. The OOM line has no time of its own: it inherits the time of the
 * line before it in its file, which orders it first. */
static void test_oom_first_across_ranks(void **state)
{
    (void)state;
    const char *dir[] = {"oom_first"};
    run *c = run_paths(dir, 1);
    assert_int_equal(c->set.n_inputs, 3);
    assert_string_equal(c->c->v[0].code, "CUDA_OOM_FRAGMENTATION");
    assert_int_equal(c->c->v[0].rank, 1);
    assert_non_null(strstr(c->c->v[0].title, "backward phase"));
    assert_non_null(strstr(c->c->v[0].title, "15.91 GiB reserved but unallocated"));
    bool expandable = false;
    for (int s = 0; s < c->c->v[0].n_steps; s++)
        expandable |= strstr(c->c->v[0].steps[s], "expandable_segments:True") != NULL;
    assert_true(expandable);
    assert_string_equal(c->c->events[c->c->first_failure].kind, "cuda_oom");
    assert_int_equal(c->c->events[c->c->first_failure].rank, 1);
    assert_int_equal(c->c->first_failure, 0);
    const rb_finding *t = find_verdict(c, "NCCL_TIMEOUT_STALL");
    assert_non_null(t);
    assert_non_null(strstr(t->title, "no timeout line from rank(s) 1"));
    run_free(c);
}

static void test_desync_mismatch(void **state)
{
    (void)state;
    const char *dir[] = {"desync_mismatch"};
    run *c = run_paths(dir, 1);
    assert_string_equal(c->c->v[0].code, "TORCH_COLLECTIVE_DESYNC");
    assert_non_null(strstr(c->c->v[0].title, "ALLREDUCE"));
    assert_non_null(strstr(c->c->v[0].title, "ALLGATHER"));
    assert_int_equal(c->c->v[0].n_cite, 2);
    assert_null(find_verdict(c, "NCCL_TIMEOUT_STALL"));
    run_free(c);
}

static void test_stalled_process(void **state)
{
    (void)state;
    const char *dir[] = {"stalled"};
    run *c = run_paths(dir, 1);
    assert_string_equal(c->c->v[0].code, "TORCH_PROCESS_STALLED");
    assert_int_equal(c->c->v[0].rank, 5);
    assert_non_null(strstr(c->c->v[0].title, "4.0x"));
    assert_null(find_verdict(c, "NCCL_TIMEOUT_STALL"));
    run_free(c);
}

/* dmesg Xid 48 + nvidia-smi -q + a rank's timeout 10 minutes later */
static void test_xid_ecc(void **state)
{
    (void)state;
    const char *dir[] = {"xid_ecc"};
    run *c = run_paths(dir, 1);
    const rb_finding *v = &c->c->v[0];
    assert_string_equal(v->code, "GPU_ECC_UNCORRECTABLE");
    assert_non_null(strstr(v->title, "Xid 48"));
    assert_true(v->first_failure);
    /* dmesg and nvidia-smi -q both testify */
    bool dmesg = false, smi = false;
    for (int e = 0; e < v->n_cite; e++) {
        dmesg |= strcmp(input_base(c, v->cite[e].input), "dmesg-gpu-c.txt") == 0;
        smi |= strcmp(input_base(c, v->cite[e].input), "nvidia-smi-q.txt") == 0;
    }
    assert_true(dmesg && smi);
    const rb_finding *remap = find_verdict(c, "GPU_ROW_REMAP_PENDING");
    assert_non_null(remap);
    assert_true(remap->confidence < v->confidence);
    const rb_finding *sec = find_verdict(c, "GPU_XID_SECONDARY");
    assert_non_null(sec);
    assert_true(sec->confidence < 0.5);
    assert_non_null(find_verdict(c, "PCIE_AER"));
    /* the kinds each input was recognised as */
    for (uint32_t i = 0; i < c->set.n_inputs; i++) {
        char k[96];
        if (strcmp(input_base(c, i), "nvidia-smi-q.txt") == 0) assert_string_equal(kinds_of(c, i, k, sizeof k), "nvidia_smi_q");
        if (strcmp(input_base(c, i), "dmesg-gpu-c.txt") == 0) assert_string_equal(kinds_of(c, i, k, sizeof k), "kernel_log");
    }
    run_free(c);
}

static void test_unknown_input(void **state)
{
    (void)state;
    const char *dir[] = {"unknown"};
    run *c = run_paths(dir, 1);
    assert_int_equal(c->c->n, 0);
    assert_int_equal(c->c->n_events, 0);
    assert_int_equal(c->c->first_failure, -1);
    char k[96];
    assert_string_equal(kinds_of(c, 0, k, sizeof k), "unknown");
    assert_int_equal(c->set.inputs[0].lines, 5);
    run_free(c);
}

static void test_empty_and_binary_input(void **state)
{
    (void)state;
    run *c = run_new();
    rd_ev_read_buffer(&c->set, "empty.log", "", 0);
    const char bin[] = {'\0', '\xff', '\n', '[', '\n', 'N', 'C', 'C', 'L', ' ', 'W', 'A', 'R', 'N'};
    rd_ev_read_buffer(&c->set, "bin.log", bin, sizeof bin);
    rule(c);
    assert_int_equal(c->set.inputs[0].lines, 0);
    assert_int_equal(c->set.inputs[1].lines, 3);
    /* a bare "NCCL WARN" is a warning, never a verdict on its own */
    assert_int_equal(c->c->n, 0);
    run_free(c);
}

static void test_missing_file(void **state)
{
    (void)state;
    ev_set s;
    ev_set_init(&s);
    cp_error err;
    cp_error_clear(&err);
    char *paths[] = {"/nonexistent/chainprof/rank0.log"};
    assert_true(rd_ev_read_files(&s, paths, 1, 1, NULL, &err) < 0);
    assert_non_null(strstr(err.file, "rank0.log"));
    ev_set_free(&s);
}

/* Every rule row names its code, the message or condition it keys on and
 * where that is documented, its advice and a function; codes are unique
 * UPPER_SNAKE_CASE. */
static void test_rule_table(void **state)
{
    (void)state;
    size_t n = 0;
    char docs_path[1024];
    snprintf(docs_path, sizeof docs_path, "%s/../../docs/FORMATS.md", CP_FIXTURES);
    char *docs = NULL;
    size_t docs_len = 0;
    cp_error err;
    if (rd_load_file(docs_path, &docs, &docs_len, &err) < 0)
        fail_msg("%s: %s", docs_path, err.msg);
    for (const rb_family *const *f = rb_families(); *f; f++) {
        assert_true(strlen((*f)->summary) > 10);
        for (size_t i = 0; i < (*f)->n_rules; i++) {
            const rb_rule *r = &(*f)->rules[i];
            n++;
            assert_non_null(r->eval);
            for (const char *p = r->code; *p; p++)
                assert_true((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_');
            if (strlen(r->keys_on) < 15 || strlen(r->source) < 10 || strlen(r->advice) < 20)
                fail_msg("%s: keys_on, source and advice must say something", r->code);
            assert_true(r->confidence > 0 && r->confidence < 1);
            assert_ptr_equal(rb_rule_of(r->code), r); /* one row per code */
            char quoted[64];
            snprintf(quoted, sizeof quoted, "`%s`", r->code);
            if (!strstr(docs, quoted))
                fail_msg("%s is not in docs/FORMATS.md (\"Rule book codes\")", r->code);
        }
    }
    free(docs);
    assert_true(n >= 40);
    assert_null(rb_rule_of("NO_SUCH_CODE"));
}

/* 300 ranks time out on the same collective except rank 137, which never
 * logged one: the verdict counts them all and names the missing rank. */
static void test_many_ranks_missing_one(void **state)
{
    (void)state;
    run *c = run_new();
    for (int r = 0; r < 300; r++) {
        char name[32], buf[512];
        snprintf(name, sizeof name, "rank%d.log", r);
        int n = r == 137 ? snprintf(buf, sizeof buf, "[rank%d]:step 10 loss 2.0\n", r)
                         : snprintf(buf, sizeof buf,
                                    "[rank%d]:[E0101 10:00:%02d.000000000 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective "
                                    "operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, "
                                    "Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n",
                                    r, r % 60, r);
        rd_ev_read_buffer(&c->set, name, buf, (size_t)n);
    }
    rule(c);
    assert_string_equal(c->c->v[0].code, "NCCL_TIMEOUT_STALL");
    assert_non_null(strstr(c->c->v[0].title, "299 rank(s) stuck in ALLREDUCE SeqNum=88"));
    assert_non_null(strstr(c->c->v[0].title, "no timeout line from rank(s) 137 "));
    assert_int_equal(c->c->n_events, 299);
    run_free(c);
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
    run *c = run_new();
    add_path(c, path);
    rule(c);
    assert_non_null(c->set.inputs[0].diag); /* the cut line is counted */
    assert_int_equal(c->set.inputs[0].diag->count[DIAG_LIMIT_REACHED], 1);
    assert_int_equal(c->set.inputs[0].lines, 2);
    assert_string_equal(c->c->v[0].code, "NCCL_CONNECT_FAILED");
    assert_int_equal(c->c->v[0].cite[0].line, 2);
    run_free(c);
    /* longer than the 1 MiB reading window: cut while streaming */
    f = fopen(path, "w");
    fputs("a:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n", f);
    for (int i = 0; i < 2500000; i++) fputc('y', f);
    fputs("\nb:3:4 [0] misc/socket.cc:1 NCCL WARN Connect to 10.9.9.9<1234> failed : Connection refused\n", f);
    fclose(f);
    c = run_new();
    add_path(c, path);
    rule(c);
    assert_int_equal(c->set.inputs[0].diag->count[DIAG_LIMIT_REACHED], 1);
    assert_int_equal(c->set.inputs[0].lines, 3);
    assert_string_equal(c->c->v[0].code, "NCCL_CONNECT_FAILED");
    assert_int_equal(c->c->v[0].cite[0].line, 3);
    run_free(c);
    unlink(path);
}

/* an untagged per-rank log takes its rank from the file name */
static void test_rank_from_file_name(void **state)
{
    (void)state;
    const char *log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; "
                      "14.56 GiB already allocated; 3.44 MiB free; 14.80 GiB reserved in total by PyTorch)\n";
    run *c = run_new();
    rd_ev_read_buffer(&c->set, "job/rank6.log", log, strlen(log));
    rule(c);
    assert_string_equal(c->c->v[0].code, "CUDA_OOM_OVERSIZED");
    assert_int_equal(c->c->v[0].rank, 6);
    assert_non_null(strstr(c->c->v[0].title, "on rank 6"));
    assert_int_equal(c->set.inputs[0].diag->count[DIAG_RANK_FROM_FILENAME], 1);
    run_free(c);
}

/* One small log per rule signature: the top verdict must be that rule's. */
typedef struct rule_case {
    const char *log;
    const char *code;
    const char *title_has;
} rule_case;

static const rule_case k_rule_cases[] = {
    {"a:1:2 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable\n",
     "NCCL_IBV_UNREACHABLE", "Network is unreachable"},
    {"a:1:2 [0] misc/ibvwrap.cc:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out\n",
     "NCCL_IBV_CALL_FAILED", "Connection timed out"},
    {"a:1:2 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
     "a:1:2 [1] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-1 (size 9637888)\n",
     "NCCL_SHM_EXHAUSTED", "/dev/shm"},
    {"a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\nBus error (core dumped)\n",
     "NCCL_SHM_EXHAUSTED", "SIGBUS"},
    {"a:1:2 [0] transport/nvls.cc:158 NCCL WARN Cuda failure 801 'operation not supported'\n",
     "NCCL_NVLS_SETUP_FAILED", "NVLS"},
    {"a:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer with error 5, opcode 0, len 0, vendor err 249 (Recv)\n",
     "NCCL_IB_ERROR", "error 5"},
    {"n1:5:6 [3] enqueue.cc:1556 NCCL WARN Cuda failure 2 'out of memory'\n", "NCCL_CUDA_FAILURE", "no memory left"},
    {"[  700.0] Out of memory: Killed process 4242 (python3) total-vm:1000kB\n", "HOST_OOM_KILLER", "4242 (python3)"},
    {"[  600.0] pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:3b:00.0\n", "PCIE_AER", "1 fatal"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 74, pid=1, NVLink: fatal error detected on link 3\n", "GPU_NVLINK_ERROR", "Xid 74"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 119, pid=1, Timeout waiting for RPC from GSP!\n", "GPU_FIRMWARE", "Xid 119"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 31, pid=1, name=python, Ch 00000010, MMU Fault\n", "GPU_APP_FAULT", "Xid 31"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 999, pid=1, something new\n", "GPU_XID", "Xid 999"},
    {"[rank2]:RuntimeError: CUDA error: uncorrectable ECC error encountered\n", "GPU_ECC_UNCORRECTABLE", "rank 2"},
    {"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n",
     "NCCL_ERROR", "unhandled cuda error"},
    {"h1:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)\n"
     "h1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
     "h2:3:4 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0\n",
     "NCCL_GDR_DISABLED", "no module"},
    {"[2025-01-02 03:04:05,000] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9)\n"
     "Root Cause (first observed failure):\n[0]:\n  time      : 2025-01-02_03:04:05\n  host      : node7\n"
     "  rank      : 13 (local_rank: 5)\n  exitcode  : -9 (pid: 4242)\n  error_file: <N/A>\n"
     "  traceback : Signal 9 (SIGKILL) received by PID 4242\n",
     "TORCH_PROCESS_KILLED", "rank 13 was killed by SIGKILL"},
    {"[rank1]: traceback : Signal 11 (SIGSEGV) received by PID 77\n", "TORCH_PROCESS_CRASHED", "SIGSEGV"},
    {"  traceback : Signal 9 (SIGKILL) received by PID 4242\n[  700.0] Out of memory: Killed process 4242 (python3)\n",
     "HOST_OOM_KILLER", "4242"},
    {"==============NVSMI LOG==============\nGPU 00000000:07:00.0\n    Product Name : NVIDIA A100-SXM4-80GB\n"
     "    Remapped Rows\n        Pending : No\n        Remapping Failure Occurred : Yes\n",
     "GPU_ROW_REMAP_FAILURE", "A100"},
    {"==============NVSMI LOG==============\nAttached GPUs : 1\nGPU 00000000:07:00.0\n    Product Name : NVIDIA A100-SXM4-80GB\n"
     "    ECC Errors\n        Volatile\n            SRAM Correctable : 0\n            SRAM Uncorrectable : 0\n"
     "            DRAM Correctable : 0\n            DRAM Uncorrectable : 0\n        Aggregate\n"
     "            SRAM Correctable : 0\n            SRAM Uncorrectable : 0\n            DRAM Correctable : 12\n"
     "            DRAM Uncorrectable : 2\n",
     "GPU_ECC_HISTORY", "2"},
    {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "CUDA_OOM", "2.00 GiB"},
    {"[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n", "GPU_APP_FAULT", "illegal memory access"},
    {"[rank0]: RuntimeError: CUDA error: invalid device ordinal\n", "CUDA_ERROR", "invalid device ordinal"},
    {"[rank2]: RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution\n", "GPU_NVLINK_ERROR", "rank 2"},
    {"RuntimeError: CUDA error: device-side assert triggered\n", "GPU_APP_FAULT", "device-side assert"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 92, pid=1, High single-bit ECC error rate\n", "GPU_ECC_SBE_RATE", "Xid 92"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 121, pid=1, C2C Link corrected error\n", "GPU_C2C", "Xid 121"},
    {"[ 10.0] NVRM: Xid (PCI:0000:3b:00): 68, pid=1, NVDEC0 Exception: Error code 0\n", "GPU_ENGINE", "Xid 68"},
    {"--------------------------------------------------------------------------\n"
     "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n",
     "MPI_JOB_ABORTED", "rank 3"},
    {"slurmstepd: error: *** JOB 4242 ON gpu-17 CANCELLED AT 2024-05-01T10:00:00 DUE TO TIME LIMIT ***\n",
     "SLURM_JOB_ERROR", "TIME LIMIT"},
    {"[ERROR] torchrun: Bus error (core dumped)\n", "NCCL_SHM_EXHAUSTED", "SIGBUS"},
    /* issue 13's families beyond the corpus, each in the words NCCL / PyTorch / CUDA print */
    {"ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
     "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000\n",
     "NCCL_DUPLICATE_GPU", "same GPU"},
    {"h:1:2 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices\n",
     "NCCL_P2P_UNSUPPORTED", "error 217"},
    {"Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'\n",
     "NCCL_P2P_UNSUPPORTED", "peer-to-peer"},
    {"gpu1:2:3 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n",
     "NCCL_IB_MEMLOCK_LIMIT", "ulimit -l"},
    {"node3:9:10 [2] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer node4<45932>\n",
     "NCCL_PEER_CLOSED", "node4<45932>"},
    {"w:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7f completed with error. RC: 20. Error: unknown error. Completed length: 0\n",
     "NCCL_OFI_COMPLETION_ERROR", "RC 20"},
    {"h:1:2 [0] init.cc:1234 NCCL WARN Cuda failure 'system not yet initialized'\n", "CUDA_SYSTEM_NOT_READY", "802"},
    {"torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect to (10.1.1.5, 29500).\n",
     "TORCH_STORE_UNREACHABLE", "MASTER_ADDR"},
    {"[rank0]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress\n",
     "TORCH_WATCHDOG_HANG", "watchdog itself hung"},
    {"RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.\n",
     "TORCH_DDP_UNUSED_PARAMS", "no part in the loss"},
    {"[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use).\n",
     "TORCH_MASTER_PORT_IN_USE", "MASTER_PORT"},
    {"torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n",
     "TORCH_STORE_UNREACHABLE", "c10d store"},
    {"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n",
     "TORCH_DATALOADER_SHM", "/dev/shm"},
    {"RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n", "CUDA_DRIVER_MISMATCH", "driver"},
    {"Failed to initialize NVML: Driver/library version mismatch\n", "CUDA_DRIVER_MISMATCH", "mismatch"},
    {"RuntimeError: No CUDA GPUs are available\n", "CUDA_NO_DEVICE", "no CUDA device"},
    {"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n", "CUDA_OOM", "cuBLAS"},
    {"$ ib_write_bw -d mlx5_0 -x 3 10.0.0.2\n Couldn't connect to 10.0.0.2:18515\nUnable to open file descriptor for socket connection\n",
     "PERFTEST_FAILED", "could not reach its peer"},
    {"ib_send_bw -d mlx5_1 10.0.0.2\n #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
     "Completion with error at client\nFailed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n",
     "PERFTEST_FAILED", "status 12"},
    {"randread: (g=0): rw=randread, bs=(R) 4096B-4096B, ioengine=libaio, iodepth=32\nfio-3.28\n"
     "fio: pid=1234, err=5/file:io_u.c:1787, func=io_u error, error=Input/output error\n"
     "randread: (groupid=0, jobs=1): err= 5 (file:io_u.c:1787, func=io_u error, error=Input/output error): pid=1234: Mon Jan  1\n"
     "  read: IOPS=1000, BW=3906KiB/s (4000kB/s)(3906KiB/1000msec)\n",
     "FIO_JOB_ERROR", "error 5"},
    {"$ iperf3 -c 10.0.0.2 -P 4\niperf3: error - unable to connect to server: Connection refused\n", "IPERF_FAILED", "Connection refused"},
    {" \tGPU0\tGPU1\t\n GPU0\tX\tGNS\t\n GPU1\tGNS\tX\t\n\nLegend:\n\n  X    = Self\n  GNS  = GPU not supported\n",
     "TOPO_P2P_NOT_SUPPORTED", "GNS"},
};

static void test_rule_signatures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_rule_cases / sizeof k_rule_cases[0]; i++) {
        const rule_case *rc = &k_rule_cases[i];
        run *c = run_new();
        rd_ev_read_buffer(&c->set, "case.log", rc->log, strlen(rc->log));
        rule(c);
        if (!c->c->n) fail_msg("case %zu: no verdict, expected %s", i, rc->code);
        if (strcmp(c->c->v[0].code, rc->code) != 0)
            fail_msg("case %zu: top verdict %s, expected %s", i, c->c->v[0].code, rc->code);
        if (!strstr(c->c->v[0].title, rc->title_has))
            fail_msg("case %zu: title \"%s\" lacks \"%s\"", i, c->c->v[0].title, rc->title_has);
        assert_true(c->c->v[0].n_cite > 0 && c->c->v[0].n_steps > 0);
        run_free(c);
    }
}

/* The API a family about several ranks uses (h14's Flight Recorder
 * verdicts): ranks once each, named fields, family state freed with the ctx. */
static int g_freed;
static void free_state(void *p)
{
    g_freed++;
    free(p);
}

static void test_rb_api(void **state)
{
    (void)state;
    ev_set s;
    ev_set_init(&s);
    rb_ctx *c = rb_run(&s, NULL);
    assert_int_equal(c->n, 0);
    const rb_rule *r = rb_rule_of("NCCL_ERROR");
    assert_non_null(r);
    rb_finding *x = rb_raise(c, r);
    rb_rank(x, 7);
    rb_rank(x, 3);
    rb_rank(x, 7);
    assert_int_equal(x->rank, 7);
    assert_int_equal(x->n_ranks, 2);
    assert_int_equal(x->ranks[1], 3);
    rb_field(x, "pg", "%s", "default_pg");
    rb_field_num(x, "seq", 41);
    rb_field_num(x, "seq", 42);
    assert_int_equal(x->n_fields, 2);
    assert_true(x->fields[1].is_num && x->fields[1].num == 42);
    assert_string_equal(x->fields[0].text, "default_pg");
    assert_null(rb_state(c, "frdump"));
    g_freed = 0;
    rb_set_state(c, "frdump", malloc(16), free_state);
    assert_non_null(rb_state(c, "frdump"));
    rb_set_state(c, "frdump", malloc(16), free_state); /* replaced: the old one freed */
    assert_int_equal(g_freed, 1);
    rb_free(c);
    assert_int_equal(g_freed, 2);
    ev_set_free(&s);
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
        cmocka_unit_test(test_rb_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
