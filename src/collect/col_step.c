/* col_step.c - steps, regions, the per-step summary lines, and the public
 * chainprof_* API (include/chainprof/chainprof.h).
 *
 * A step belongs to the thread that began it (the training loop's thread,
 * whose time is the step's critical path). At its end:
 *   trace mode    a STEP record on that thread and a CPU record per
 *                 recorded thread (its CPU time then), also at the begin;
 *   summary mode  one JSON line: the step thread's time in file I/O
 *                 (storage), in NCCL calls (intra / inter by the
 *                 communicator's node count, NCCL's profiler plugin tells),
 *                 in CUDA calls that wait for the GPU, and the rest (host),
 *                 which add up to the step's duration; the same classes
 *                 summed over the other threads (overlapped, not exposed);
 *                 CPU time of the step thread and of the process.
 * Metric definitions: docs/METRICS.md ("chainprof run summary").
 */
#include "col.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
    pthread_mutex_t mu;
    int open;
    int64_t id, next_id, t0, cpu0_proc;
    col_thread *owner;
    int fd;
} st = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static int64_t proc_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool in_window(int64_t id)
{
    return (col_p.step_first < 0 || id >= col_p.step_first) && (col_p.step_last < 0 || id <= col_p.step_last);
}

int col_step_init(void)
{
    char stem[700], path[800];
    if (col_p.rank >= 0)
        snprintf(stem, sizeof stem, "%s/rank%d.%s.%d", col_p.out_dir, (int)col_p.rank, col_p.host, (int)col_p.pid);
    else
        snprintf(stem, sizeof stem, "%s/%s.%d", col_p.out_dir, col_p.host, (int)col_p.pid);
    for (int k = 0; k < 100; k++) {
        if (k)
            snprintf(path, sizeof path, "%s-%d.steps.jsonl", stem, k);
        else
            snprintf(path, sizeof path, "%s.steps.jsonl", stem);
        st.fd = col_sys_open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
        if (st.fd >= 0 || errno != EEXIST)
            break;
    }
    return st.fd >= 0 ? 0 : -1;
}

/* CPU records for every live thread (trace mode). */
static void cpu_records(col_thread *self, int64_t t)
{
    for (col_thread *x = col_threads(); x; x = x->next) {
        if (atomic_load_explicit(&x->state, memory_order_acquire) != COL_TS_ALIVE || x->internal)
            continue;
        int64_t c = col_thread_cpu_ns(x->tid);
        if (c < 0)
            continue;
        cpt_rec r = { .kind = CPT_K_CPU, .t_ns = t, .a = x->tid, .b = (uint64_t)c };
        col_push(self, &r);
    }
}

static void snapshot(void)
{
    for (col_thread *x = col_threads(); x; x = x->next) {
        for (int k = 0; k < COL_A__COUNT; k++)
            x->acc_step0[k] = atomic_load_explicit(&x->acc[k], memory_order_relaxed);
        x->cpu_step0_ns = col_thread_cpu_ns(x->tid);
    }
    st.cpu0_proc = proc_cpu_ns();
}

static int64_t delta(const col_thread *x, int k)
{
    return atomic_load_explicit(&x->acc[k], memory_order_relaxed) - x->acc_step0[k];
}

/* One summary line for the step that just ended (caller holds st.mu). */
static void summary_line(int64_t t1)
{
    col_thread *o = st.owner;
    int64_t dur = t1 - st.t0, d[COL_A__COUNT] = { 0 }, other[COL_A__COUNT] = { 0 };
    for (col_thread *x = col_threads(); x; x = x->next) {
        if (x->internal)
            continue;
        int64_t *to = x == o ? d : other;
        for (int k = 0; k < COL_A__COUNT; k++)
            to[k] += delta(x, k);
    }
    int64_t storage = d[COL_A_CKPT] + d[COL_A_DATA] + d[COL_A_IO_OTHER];
    int64_t busy = storage + d[COL_A_INTRA] + d[COL_A_INTER] + d[COL_A_COMM] + d[COL_A_GPU_WAIT];
    int64_t host = dur - busy > 0 ? dur - busy : 0;
    int64_t cpu_o = o ? col_thread_cpu_ns(o->tid) : -1;
    char rank[16], cpu_step[32], line[1800];
    if (col_p.rank >= 0)
        snprintf(rank, sizeof rank, "%d", (int)col_p.rank);
    else
        snprintf(rank, sizeof rank, "null");
    if (o && cpu_o >= 0 && o->cpu_step0_ns >= 0)
        snprintf(cpu_step, sizeof cpu_step, "%lld", (long long)(cpu_o - o->cpu_step0_ns));
    else
        snprintf(cpu_step, sizeof cpu_step, "null");
    int n = snprintf(
        line, sizeof line,
        "{\"schema\":\"chainprof.run.step/1\",\"rank\":%s,\"host\":\"%s\",\"pid\":%d,\"step\":%lld,"
        "\"ts_ns\":%lld,\"dur_ns\":%lld,"
        "\"exposed\":{\"host_ns\":%lld,\"storage_ns\":%lld,\"intra_ns\":%lld,\"inter_ns\":%lld,"
        "\"comm_unscoped_ns\":%lld,\"gpu_wait_ns\":%lld},"
        "\"host\":{\"launch_ns\":%lld,\"dataloader_ns\":%lld},"
        "\"storage\":{\"checkpoint_ns\":%lld,\"dataset_ns\":%lld,\"other_ns\":%lld,\"read_bytes\":%lld,"
        "\"write_bytes\":%lld},"
        "\"calls\":{\"cuda\":%lld,\"nccl\":%lld,\"io\":%lld},"
        "\"other_threads\":{\"storage_ns\":%lld,\"comm_ns\":%lld,\"gpu_wait_ns\":%lld},"
        "\"cpu\":{\"step_thread_ns\":%s,\"process_ns\":%lld}}\n",
        rank, col_p.host, (int)col_p.pid, (long long)st.id, (long long)col_job_ns(st.t0), (long long)dur,
        (long long)host, (long long)storage, (long long)d[COL_A_INTRA], (long long)d[COL_A_INTER],
        (long long)d[COL_A_COMM], (long long)d[COL_A_GPU_WAIT], (long long)d[COL_A_LAUNCH],
        (long long)d[COL_A_LOADER], (long long)d[COL_A_CKPT], (long long)d[COL_A_DATA],
        (long long)d[COL_A_IO_OTHER], (long long)d[COL_A_READ_BYTES], (long long)d[COL_A_WRITE_BYTES],
        (long long)d[COL_A_N_CUDA], (long long)d[COL_A_N_NCCL], (long long)d[COL_A_N_IO],
        (long long)(other[COL_A_CKPT] + other[COL_A_DATA] + other[COL_A_IO_OTHER]),
        (long long)(other[COL_A_INTRA] + other[COL_A_INTER] + other[COL_A_COMM]), (long long)other[COL_A_GPU_WAIT],
        cpu_step, (long long)(proc_cpu_ns() - st.cpu0_proc));
    if (n <= 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (st.fd >= 0)
        col_sys_write(st.fd, line, len);
    if (col_p.summary_stderr)
        col_sys_write(2, line, len);
}

static void end_locked(col_thread *self)
{
    if (!st.open)
        return;
    int64_t t1 = col_now();
    int mode = atomic_load(&col_mode_now);
    bool win = in_window(st.id);
    if (mode == COL_TRACE && win && self) {
        cpt_rec r = { .kind = CPT_K_STEP, .u32 = st.owner ? st.owner->tid : self->tid, .t_ns = st.t0,
                      .dur_ns = t1 - st.t0, .a = (uint64_t)st.id };
        col_push(self, &r);
        cpu_records(self, t1);
    } else if (mode == COL_SUMMARY && win) {
        summary_line(t1);
    }
    atomic_fetch_add(&col_n_steps, 1);
    st.open = 0;
    st.owner = NULL;
    if (col_p.step_first >= 0)
        atomic_store(&col_recording, 0);
}

void col_step_begin(int64_t id)
{
    col_thread *self = col_self();
    if (!self)
        return;
    pthread_mutex_lock(&st.mu);
    end_locked(self);
    st.id = id >= 0 ? id : st.next_id;
    st.next_id = st.id + 1;
    st.open = 1;
    st.owner = self;
    bool win = in_window(st.id);
    if (col_p.step_first >= 0 || col_p.step_last >= 0)
        atomic_store(&col_recording, win ? 1 : 0);
    st.t0 = col_now();
    if (atomic_load(&col_mode_now) == COL_SUMMARY)
        snapshot();
    else if (win)
        cpu_records(self, st.t0);
    pthread_mutex_unlock(&st.mu);
}

void col_step_end(void)
{
    col_thread *self = col_self();
    pthread_mutex_lock(&st.mu);
    end_locked(self);
    pthread_mutex_unlock(&st.mu);
}

void col_step_shutdown(void)
{
    pthread_mutex_lock(&st.mu);
    st.open = 0; /* a step still open at exit is incomplete: not reported */
    st.owner = NULL;
    if (st.fd >= 0)
        col_sys_close(st.fd);
    st.fd = -1;
    pthread_mutex_unlock(&st.mu);
}

/* ---- regions ---- */

static void update_io_class(col_thread *t)
{
    t->io_class = -1;
    for (int i = t->region_depth - 1; i >= 0; i--) {
        int k = t->region_kind[i];
        if (k == CHAINPROF_REGION_CHECKPOINT) {
            t->io_class = CPT_IOC_CHECKPOINT;
            return;
        }
        if (k == CHAINPROF_REGION_DATASET || k == CHAINPROF_REGION_DATALOADER) {
            t->io_class = CPT_IOC_DATASET;
            return;
        }
    }
}

void col_region_begin(uint32_t name, int kind)
{
    col_thread *t = col_self();
    if (!t)
        return;
    if (t->region_depth >= CHAINPROF_MAX_DEPTH) {
        t->region_over++;
        return;
    }
    int d = t->region_depth++;
    t->region_t0[d] = col_now();
    t->region_name[d] = name;
    t->region_kind[d] = (uint8_t)(kind >= 0 && kind <= CHAINPROF_REGION_DATALOADER ? kind : 0);
    if (kind == CHAINPROF_REGION_DATALOADER)
        t->loader_depth++;
    update_io_class(t);
}

void col_region_end(void)
{
    col_thread *t = col_self();
    if (!t)
        return;
    if (t->region_over) {
        t->region_over--;
        return;
    }
    if (t->region_depth == 0)
        return;
    int d = --t->region_depth;
    int64_t t1 = col_now(), dur = t1 - t->region_t0[d];
    int kind = t->region_kind[d];
    if (kind == CHAINPROF_REGION_DATALOADER && --t->loader_depth == 0)
        col_acc(t, COL_A_LOADER, dur);
    update_io_class(t);
    col_count(t, false);
    if (col_tracing()) {
        cpt_rec r = { .kind = CPT_K_REGION, .u32 = t->region_name[d], .t_ns = t->region_t0[d], .dur_ns = dur,
                      .a = (uint64_t)kind, .b = (uint64_t)d };
        col_push(t, &r);
    }
}

/* ---- the public API ---- */

COL_EXPORT int chainprof_api_version(void) { return CHAINPROF_API_VERSION; }
COL_EXPORT int chainprof_active(void) { return atomic_load(&col_mode_now) != COL_OFF; }
COL_EXPORT const char *chainprof_status(void) { return col_status_line(); }
COL_EXPORT uint32_t chainprof_name(const char *name) { return col_intern(name); }
COL_EXPORT void chainprof_step_begin(int64_t step) { col_step_begin(step); }
COL_EXPORT void chainprof_step_end(void) { col_step_end(); }
COL_EXPORT void chainprof_step_mark(void) { col_step_begin(-1); }
COL_EXPORT void chainprof_region_begin(uint32_t name_id, int kind) { col_region_begin(name_id, kind); }
COL_EXPORT void chainprof_region_end(void) { col_region_end(); }
COL_EXPORT void chainprof_flush(void) { col_flush_now(); }
