/* col_rec.c - the recorder: configuration, per-thread rings, strings, the
 * background drainer, the trace file, fork and exit (design in col.h).
 *
 * The trace file is created as NAME.part when the process starts (that
 * fixes a name no other process holds, which forked workers derive theirs
 * from) and renamed to NAME when the process ends, if it recorded anything
 * worth keeping; a process that only started and exited (a shell, a
 * launcher's helper) leaves no file. Crashed processes leave NAME.part,
 * which the reader accepts when named explicitly.
 */
#include "col.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

_Atomic int col_mode_now;
_Atomic int col_recording;
_Atomic uint64_t col_n_steps;
col_proc col_p;

#define DEFAULT_RING_KB 256
#define OUT_BUF_BYTES (1u << 20)
#define STR_MAX 4096 /* longest string recorded (paths are cut there) */

static struct {
    int mode;
    int fd;                 /* trace file, -1 none */
    char main_base[704];    /* NAME of the main process (forked workers derive theirs) */
    char base[768];         /* NAME of this process's file */
    char part[800];         /* NAME.part, while it is written */
    int role;
    int32_t ppid;
    int64_t mono0, real0;
    int clock_sync;
    int64_t clock_offset, clock_rtt;
    uint64_t ring_bytes;
    int flush_ms;
    int32_t run_pid;        /* the `chainprof run` that started the job, 0 unknown */
    char job[64], cmd[128];
    _Atomic(col_thread *) threads;
    _Atomic uint32_t n_threads;
    _Atomic uint32_t next_str;
    _Atomic int kick;
    _Atomic int stop;
    _Atomic int drainer_state; /* 0 not started, 1 starting/running */
    pthread_t drainer;
    pthread_mutex_t drain_mu;  /* one drain at a time (drainer, flush, shutdown) */
    pthread_mutex_t name_mu;   /* the intern tables */
    _Atomic int shut;
    char status[1024];
    unsigned char *out;
    size_t out_n;
    uint64_t dropped_total;
} g = { .fd = -1, .drain_mu = PTHREAD_MUTEX_INITIALIZER, .name_mu = PTHREAD_MUTEX_INITIALIZER };

/* initial-exec TLS: one load from the thread pointer, no __tls_get_addr
 * call per event; a few bytes, which the static TLS surplus holds also when
 * the library is dlopened (the Python package without `chainprof run`) */
__thread col_thread *col_tls_self __attribute__((tls_model("initial-exec")));
static __thread int tls_internal __attribute__((tls_model("initial-exec"))); /* the drainer's thread */
static pthread_key_t exit_key;
#define tls_self col_tls_self

/* ---- raw system calls (never interposed) ---- */

int col_sys_open(const char *path, int flags, int mode)
{
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

long col_sys_write(int fd, const void *p, size_t n)
{
    const char *c = p;
    size_t done = 0;
    while (done < n) {
        long w = syscall(SYS_write, fd, c + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return (long)done;
}

int col_sys_close(int fd) { return (int)syscall(SYS_close, fd); }

static int64_t ts_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A CLOCK_MONOTONIC / CLOCK_REALTIME pair taken as close together as the
 * machine allows: the tightest of a few tries. */
static void clock_pair(int64_t *mono, int64_t *real)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        int64_t m1 = ts_ns(CLOCK_MONOTONIC), r = ts_ns(CLOCK_REALTIME), m2 = ts_ns(CLOCK_MONOTONIC);
        if (m2 - m1 < best) {
            best = m2 - m1;
            *mono = m1 + (m2 - m1) / 2;
            *real = r;
        }
    }
}

int64_t col_thread_cpu_ns(uint32_t tid)
{
    /* the kernel's per-thread CPU clock id (what pthread_getcpuclockid
     * builds): works for any thread of this process by tid, and fails
     * cleanly once that thread is gone */
    clockid_t c = (clockid_t)((~(unsigned)tid << 3) | 6u);
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- configuration ---- */

static int env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < -1 || x > 100000000)
        return 0;
    *out = (int)x;
    return 1;
}

static void find_rank(void)
{
    static const struct { const char *rank, *size, *local; } t[] = {
#define X(r, s, l) { r, s, l },
        COL_RANK_VARS(X)
#undef X
    };
    col_p.rank = col_p.world_size = col_p.local_rank = -1;
    col_p.rank_source = CPT_RANK_NONE;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int r;
        if (env_int(t[i].rank, &r) && r >= 0) {
            col_p.rank = r;
            col_p.rank_source = (int32_t)i + 1;
            int v;
            if (env_int(t[i].size, &v))
                col_p.world_size = v;
            if (env_int(t[i].local, &v))
                col_p.local_rank = v;
            return;
        }
    }
}

static void find_host(void)
{
    const char *h = getenv(COL_ENV_HOST);
    if (h && *h) {
        snprintf(col_p.host, sizeof col_p.host, "%s", h);
        return;
    }
    struct utsname u;
    const char *n = uname(&u) == 0 ? u.nodename : "unknown";
    size_t k = strnlen(n, sizeof col_p.host - 1);
    memcpy(col_p.host, n, k);
    col_p.host[k] = 0;
}

static void parse_steps(const char *s)
{
    col_p.step_first = col_p.step_last = -1;
    if (!s || !*s)
        return;
    char *end;
    const char *dash = strchr(s, '-');
    if (dash != s)
        col_p.step_first = strtoll(s, &end, 10);
    if (!dash)
        col_p.step_last = col_p.step_first;
    else if (dash[1])
        col_p.step_last = strtoll(dash + 1, &end, 10);
}

static void read_clock_env(void)
{
    g.clock_sync = CPT_SYNC_NONE;
    g.clock_offset = 0;
    g.clock_rtt = -1;
    const char *v = getenv(COL_ENV_CLOCK);
    long long off, rtt;
    int sync;
    if (v && sscanf(v, "%d %lld %lld", &sync, &off, &rtt) == 3 && sync >= 0 && sync <= CPT_SYNC_TCP) {
        g.clock_sync = sync;
        g.clock_offset = off;
        g.clock_rtt = rtt;
    }
}

static void copy_env(char *dst, size_t n, const char *name)
{
    const char *v = getenv(name);
    snprintf(dst, n, "%s", v ? v : "");
}

static void read_cmd(void)
{
    int fd = col_sys_open("/proc/self/cmdline", O_RDONLY, 0);
    g.cmd[0] = 0;
    if (fd < 0)
        return;
    long n = syscall(SYS_read, fd, g.cmd, sizeof g.cmd - 1);
    col_sys_close(fd);
    g.cmd[n > 0 ? n : 0] = 0;
}

/* ---- the trace file ---- */

static bool exists(const char *p) { return access(p, F_OK) == 0; }

/* Create base.part exclusively under a base name no file has yet. */
static int create_part(const char stem[640])
{
    for (int k = 0; k < 100; k++) {
        if (k)
            snprintf(g.main_base, sizeof g.main_base, "%s-%d.cptrace", stem, k);
        else
            snprintf(g.main_base, sizeof g.main_base, "%s.cptrace", stem);
        snprintf(g.base, sizeof g.base, "%s", g.main_base);
        snprintf(g.part, sizeof g.part, "%s.part", g.base);
        if (exists(g.base))
            continue;
        int fd = col_sys_open(g.part, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

static void fill_header(cpt_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CPT_MAGIC, 8);
    h->version = CPT_VERSION;
    h->header_bytes = sizeof *h;
    h->rec_bytes = sizeof(cpt_rec);
    h->flags = col_cupti_enabled() ? CPT_HF_CUPTI : 0;
    h->rank = col_p.rank;
    h->world_size = col_p.world_size;
    h->local_rank = col_p.local_rank;
    h->rank_source = col_p.rank_source;
    h->pid = col_p.pid;
    h->ppid = g.ppid;
    h->role = g.role;
    h->clock_sync = g.clock_sync;
    h->mono0_ns = g.mono0;
    h->real0_ns = g.real0;
    h->clock_offset_ns = g.clock_offset;
    h->clock_rtt_ns = g.clock_rtt;
    h->ring_bytes = (int64_t)g.ring_bytes;
    h->step_first = col_p.step_first;
    h->step_last = col_p.step_last;
    snprintf(h->host, sizeof h->host, "%s", col_p.host);
    snprintf(h->job, sizeof h->job, "%s", g.job);
    snprintf(h->cmd, sizeof h->cmd, "%s", g.cmd);
    h->run_pid = g.run_pid;
}

/* Open the file of this process (main: at init; worker: at its first
 * drain) and write the header. */
static int open_trace(void)
{
    if (g.fd >= 0)
        return 0;
    if (g.role == CPT_ROLE_WORKER) {
        snprintf(g.base, sizeof g.base, "%s.w%d", g.main_base, (int)col_p.pid);
        snprintf(g.part, sizeof g.part, "%s.part", g.base);
        g.fd = col_sys_open(g.part, O_WRONLY | O_CREAT | O_EXCL, 0644);
    } else {
        char stem[640];
        if (col_p.rank >= 0)
            snprintf(stem, sizeof stem, "%s/rank%d.%s.%d", col_p.out_dir, (int)col_p.rank, col_p.host,
                     (int)col_p.pid);
        else
            snprintf(stem, sizeof stem, "%s/%s.%d", col_p.out_dir, col_p.host, (int)col_p.pid);
        g.fd = create_part(stem);
    }
    if (g.fd < 0)
        return -1;
    cpt_header h;
    fill_header(&h);
    return col_sys_write(g.fd, &h, sizeof h) < 0 ? -1 : 0;
}

static void out_flush(void)
{
    if (g.out_n && g.fd >= 0)
        col_sys_write(g.fd, g.out, g.out_n);
    g.out_n = 0;
}

static void out_put(const void *p, size_t n)
{
    if (g.out_n + n > OUT_BUF_BYTES)
        out_flush();
    if (n > OUT_BUF_BYTES) { /* a large ring's range: straight to the file */
        if (g.fd >= 0)
            col_sys_write(g.fd, p, n);
        return;
    }
    memcpy(g.out + g.out_n, p, n);
    g.out_n += n;
}

/* One chunk of n records of thread tid, from a ring that may wrap. */
static void out_chunk(uint32_t tid, const cpt_rec *a, size_t na, const cpt_rec *b, size_t nb)
{
    cpt_chunk c = { CPT_CHUNK_MAGIC, tid, (uint32_t)(na + nb), 0 };
    out_put(&c, sizeof c);
    out_put(a, na * sizeof *a);
    if (nb)
        out_put(b, nb * sizeof *b);
}

/* ---- threads ---- */

col_thread *col_threads(void) { return atomic_load_explicit(&g.threads, memory_order_acquire); }

static void thread_exit(void *p)
{
    col_thread *t = p;
    tls_self = COL_SELF_GONE;
    if (t)
        atomic_store_explicit(&t->state, COL_TS_DEAD, memory_order_release);
}

static void reset_thread(col_thread *t)
{
    atomic_store_explicit(&t->head, 0, memory_order_relaxed);
    atomic_store_explicit(&t->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&t->dropped_str, 0, memory_order_relaxed);
    t->dropped_seen = 0;
    t->tid = (uint32_t)syscall(SYS_gettid);
    /* next_id keeps counting across the threads that reuse this record:
     * event ids stay unique in the process */
    t->depth = t->internal = 0;
    t->cur_comm = CPT_NO_COMM;
    t->cur_inter = -1;
    t->device = 0;
    t->region_depth = t->region_over = 0;
    t->io_class = -1;
    t->loader_depth = 0;
    for (int k = 0; k < COL_A__COUNT; k++) {
        atomic_store_explicit(&t->acc[k], 0, memory_order_relaxed);
        t->acc_step0[k] = 0;
    }
    for (int k = 0; k < COL_C__COUNT; k++)
        atomic_store_explicit(&t->counts[k], 0, memory_order_relaxed);
    t->cpu_step0_ns = 0;
}

/* A thread record: a drained one of an exited thread when there is one,
 * else a new mapping (pushed onto the registry, never unmapped). */
static col_thread *new_thread(void)
{
    for (col_thread *t = col_threads(); t; t = t->next) {
        int want = COL_TS_FREE;
        if (atomic_compare_exchange_strong(&t->state, &want, COL_TS_CLAIMING)) {
            reset_thread(t);
            return t;
        }
    }
    size_t ring = (size_t)g.ring_bytes;
    size_t hdr = (sizeof(col_thread) + 4095) & ~(size_t)4095;
    void *m = mmap(NULL, hdr + ring, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    col_thread *t = m;
    t->ring = (cpt_rec *)(void *)((char *)m + hdr);
    t->mask = ring / sizeof(cpt_rec) - 1;
    t->map_bytes = hdr + ring;
    t->index = atomic_fetch_add(&g.n_threads, 1) + 1;
    t->next_id = 1;
    reset_thread(t);
    atomic_store_explicit(&t->state, COL_TS_CLAIMING, memory_order_relaxed);
    col_thread *head = atomic_load(&g.threads);
    do
        t->next = head;
    while (!atomic_compare_exchange_weak(&g.threads, &head, t));
    return t;
}

static void name_thread(col_thread *t)
{
    char path[64], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", t->tid);
    int fd = col_sys_open(path, O_RDONLY, 0);
    if (fd >= 0) {
        long n = syscall(SYS_read, fd, name, sizeof name - 1);
        col_sys_close(fd);
        if (n > 0) {
            name[n] = 0;
            name[strcspn(name, "\n")] = 0;
        }
    }
    uint32_t id = name[0] ? col_str(t, name, strlen(name)) : 0;
    cpt_rec r = { .kind = CPT_K_THREAD, .u32 = id, .t_ns = col_now(), .a = t->tid };
    col_push(t, &r);
}

col_thread *col_self_slow(void)
{
    col_thread *t = tls_self;
    if (t)
        return t == COL_SELF_GONE ? NULL : t;
    if (g.mode == COL_OFF) /* the configured mode: records may still arrive while the file closes (CUPTI) */
        return NULL;
    tls_self = COL_SELF_GONE; /* while we set up: recursion (our own mmap, reads) sees "no recording" */
    t = new_thread();
    if (!t)
        return NULL; /* stays "gone": no retry per call after a failed mapping */
    t->internal = tls_internal;
    atomic_store_explicit(&t->state, COL_TS_ALIVE, memory_order_release);
    pthread_setspecific(exit_key, t);
    tls_self = t;
    if (atomic_load(&col_mode_now) == COL_TRACE && !t->internal)
        name_thread(t);
    return t;
}

uint64_t col_new_id(col_thread *t) { return (uint64_t)t->index << 40 | t->next_id++; }

/* ---- records ---- */

static void start_drainer(void);

bool col_push(col_thread *t, const cpt_rec *r)
{
    uint64_t h = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tl = atomic_load_explicit(&t->tail, memory_order_acquire);
    uint64_t cap = t->mask + 1;
    if (h - tl >= cap) {
        atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return false;
    }
    t->ring[h & t->mask] = *r;
    atomic_store_explicit(&t->head, h + 1, memory_order_release);
    if (__builtin_expect(h - tl == cap / 2, 0) || __builtin_expect(!atomic_load_explicit(&g.drainer_state,
                                                                                          memory_order_relaxed), 0)) {
        if (r->kind != CPT_K_IO || r->op != CPT_IO_CLOSE)
            start_drainer();
        col_kick();
    }
    return true;
}

uint32_t col_str(col_thread *t, const char *s, size_t n)
{
    if (n > STR_MAX)
        n = STR_MAX;
    size_t slots = (n + sizeof(cpt_rec) - 1) / sizeof(cpt_rec);
    uint64_t h = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tl = atomic_load_explicit(&t->tail, memory_order_acquire);
    uint64_t cap = t->mask + 1;
    if (h - tl + 1 + slots > cap) {
        atomic_store_explicit(&t->dropped_str, atomic_load_explicit(&t->dropped_str, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return 0;
    }
    uint32_t id = atomic_fetch_add(&g.next_str, 1) + 1;
    cpt_rec r = { .kind = CPT_K_STR, .u32 = id, .t_ns = 0, .a = n };
    t->ring[h & t->mask] = r;
    for (size_t k = 0; k < slots; k++) {
        cpt_rec slot;
        memset(&slot, 0, sizeof slot);
        size_t off = k * sizeof slot, len = n - off < sizeof slot ? n - off : sizeof slot;
        memcpy(&slot, s + off, len);
        t->ring[(h + 1 + k) & t->mask] = slot;
    }
    atomic_store_explicit(&t->head, h + 1 + slots, memory_order_release);
    return id;
}

/* ---- interning (rare: names, NCCL's static strings) ---- */

#define NAME_SLOTS 4096
typedef struct name_slot {
    uint64_t hash;
    uint32_t id;
    char *s;
} name_slot;
static name_slot names[NAME_SLOTS];
static struct {
    _Atomic(const char *) p;
    _Atomic uint32_t id;
} ptrs[NAME_SLOTS];

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint32_t col_intern(const char *s)
{
    if (!s || atomic_load(&col_mode_now) == COL_OFF)
        return 0;
    col_thread *t = col_self();
    if (!t)
        return 0;
    uint64_t h = hash_str(s);
    uint32_t id = 0;
    pthread_mutex_lock(&g.name_mu);
    for (size_t i = h % NAME_SLOTS, k = 0; k < NAME_SLOTS; k++, i = (i + 1) % NAME_SLOTS) {
        if (!names[i].s) {
            size_t n = strlen(s);
            char *copy = malloc(n + 1);
            if (!copy)
                break;
            memcpy(copy, s, n + 1);
            id = atomic_load(&col_mode_now) == COL_TRACE ? col_str(t, s, n) : 1;
            if (id) {
                names[i] = (name_slot){ h, id, copy };
            } else {
                free(copy);
            }
            break;
        }
        if (names[i].hash == h && strcmp(names[i].s, s) == 0) {
            id = names[i].id;
            break;
        }
    }
    pthread_mutex_unlock(&g.name_mu);
    return id;
}

uint32_t col_intern_ptr(const char *s)
{
    if (!s)
        return 0;
    uintptr_t h = (uintptr_t)s * 0x9e3779b97f4a7c15ull;
    size_t i0 = (size_t)(h >> 20) % NAME_SLOTS;
    for (size_t i = i0, k = 0; k < 64; k++, i = (i + 1) % NAME_SLOTS) {
        const char *p = atomic_load_explicit(&ptrs[i].p, memory_order_acquire);
        if (p == s) {
            uint32_t id = atomic_load_explicit(&ptrs[i].id, memory_order_acquire);
            if (id)
                return id;
            break; /* being filled: intern by content below */
        }
        if (!p) {
            uint32_t id = col_intern(s);
            const char *want = NULL;
            if (id && atomic_compare_exchange_strong(&ptrs[i].p, &want, s))
                atomic_store_explicit(&ptrs[i].id, id, memory_order_release);
            return id;
        }
    }
    return col_intern(s);
}

/* ---- draining ---- */

static void drain_thread(col_thread *t)
{
    int st = atomic_load_explicit(&t->state, memory_order_acquire);
    if (st != COL_TS_ALIVE && st != COL_TS_DEAD)
        return;
    uint64_t tl = atomic_load_explicit(&t->tail, memory_order_relaxed);
    uint64_t h = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    if (h != tl) {
        size_t n = (size_t)(h - tl), at = (size_t)(tl & t->mask), cap = (size_t)t->mask + 1;
        size_t na = n < cap - at ? n : cap - at;
        /* the bytes of a string never straddle chunks: a chunk is the
         * whole drained range, wrapped or not */
        out_chunk(t->tid, t->ring + at, na, t->ring, n - na);
        atomic_store_explicit(&t->tail, h, memory_order_release);
    }
    if (dropped != t->dropped_seen) {
        cpt_rec r = { .kind = CPT_K_DROP, .t_ns = col_now(), .a = dropped - t->dropped_seen,
                      .b = atomic_load_explicit(&t->dropped_str, memory_order_relaxed) };
        out_chunk(t->tid, &r, 1, NULL, 0);
        g.dropped_total += dropped - t->dropped_seen;
        t->dropped_seen = dropped;
    }
    if (st == COL_TS_DEAD && atomic_load_explicit(&t->head, memory_order_acquire) == h)
        atomic_store_explicit(&t->state, COL_TS_FREE, memory_order_release);
}

static void drain_all(void)
{
    pthread_mutex_lock(&g.drain_mu);
    if (g.mode == COL_TRACE && g.out && !atomic_load(&g.shut) && (g.fd >= 0 || open_trace() == 0)) {
        for (col_thread *t = col_threads(); t; t = t->next)
            drain_thread(t);
        out_flush();
    }
    pthread_mutex_unlock(&g.drain_mu);
}

void col_kick(void)
{
    if (atomic_exchange_explicit(&g.kick, 1, memory_order_acq_rel) == 0)
        syscall(SYS_futex, &g.kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *drainer_main(void *arg)
{
    (void)arg;
    tls_internal = 1;
    while (!atomic_load(&g.stop)) {
        struct timespec to = { g.flush_ms / 1000, (long)(g.flush_ms % 1000) * 1000000L };
        if (!atomic_load(&g.kick))
            syscall(SYS_futex, &g.kick, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
        atomic_store(&g.kick, 0);
        col_cupti_flush();
        drain_all();
    }
    return NULL;
}

static void start_drainer(void)
{
    if (g.mode != COL_TRACE || atomic_load(&g.shut))
        return;
    int want = 0;
    if (!atomic_compare_exchange_strong(&g.drainer_state, &want, 1))
        return;
    col_thread *t = col_self();
    int saved = t ? t->internal : 0;
    if (t)
        t->internal = 1; /* pthread_create's own mmap/reads are not the job's */
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 * 1024);
    if (pthread_create(&g.drainer, &a, drainer_main, NULL) != 0)
        atomic_store(&g.drainer_state, 2); /* no drainer: flushes happen at exit only */
    pthread_attr_destroy(&a);
    if (t)
        t->internal = saved;
}

void col_flush_now(void)
{
    col_cupti_flush();
    drain_all();
}

/* ---- exit ---- */

static uint64_t sum_counts(int k)
{
    uint64_t s = 0;
    for (col_thread *t = col_threads(); t; t = t->next)
        s += atomic_load_explicit(&t->counts[k], memory_order_relaxed);
    return s;
}

/* Whether this process's file is worth keeping (see the top). */
static bool keep_file(void)
{
    return sum_counts(COL_C_WORTHY) > 0 || atomic_load(&col_n_steps) > 0;
}

void col_shutdown(void)
{
    if (atomic_exchange(&g.shut, 1))
        return;
    int mode = atomic_exchange(&col_mode_now, COL_OFF);
    if (mode == COL_OFF)
        return;
    col_thread *self = col_self();
    if (self)
        self->internal = 1;
    col_step_shutdown();
    if (mode != COL_TRACE)
        return;
    atomic_store(&g.stop, 1);
    if (atomic_load(&g.drainer_state) == 1 && !pthread_equal(pthread_self(), g.drainer)) {
        col_kick();
        pthread_join(g.drainer, NULL);
    }
    col_cupti_flush();
    bool keep = keep_file();
    if (!keep) {
        if (g.fd >= 0) {
            col_sys_close(g.fd);
            unlink(g.part);
        }
        g.fd = -1;
        return;
    }
    pthread_mutex_lock(&g.drain_mu);
    if (g.fd >= 0 || open_trace() == 0) {
        for (col_thread *t = col_threads(); t; t = t->next)
            drain_thread(t);
        int64_t m, r;
        clock_pair(&m, &r);
        uint64_t steps = atomic_load(&col_n_steps), gpu = sum_counts(COL_C_GPU);
        cpt_rec end = { .kind = CPT_K_END, .u32 = steps > UINT32_MAX ? UINT32_MAX : (uint32_t)steps, .t_ns = m,
                        .a = g.dropped_total, .b = (uint64_t)r, .c = gpu };
        out_chunk(self ? self->tid : (uint32_t)syscall(SYS_gettid), &end, 1, NULL, 0);
        out_flush();
        cpt_header h; /* again: what became known while running (CUPTI) */
        fill_header(&h);
        syscall(SYS_pwrite64, g.fd, &h, sizeof h, (off_t)0);
        syscall(SYS_fsync, g.fd);
        col_sys_close(g.fd);
        g.fd = -1;
        /* link + unlink: never replaces a file of that name */
        if (link(g.part, g.base) == 0)
            unlink(g.part);
    }
    pthread_mutex_unlock(&g.drain_mu);
}

static void at_exit(void) { col_shutdown(); }

/* ---- fork ---- */

static void fork_prepare(void)
{
    pthread_mutex_lock(&g.name_mu);
    pthread_mutex_lock(&g.drain_mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g.drain_mu);
    pthread_mutex_unlock(&g.name_mu);
}

/* The child of a fork that has not exec'd: a worker of its parent. Only
 * the forking thread exists here; the other threads' records belong to
 * the parent, which writes them. */
static void fork_child(void)
{
    pthread_mutex_init(&g.drain_mu, NULL);
    pthread_mutex_init(&g.name_mu, NULL);
    if (atomic_load(&col_mode_now) == COL_OFF)
        return;
    col_thread *self = tls_self == COL_SELF_GONE ? NULL : tls_self;
    for (col_thread *t = col_threads(); t; t = t->next)
        if (t != self) {
            atomic_store(&t->head, 0);
            atomic_store(&t->tail, 0);
            atomic_store(&t->state, COL_TS_FREE);
        }
    if (self) {
        int internal = self->internal;
        reset_thread(self);
        self->internal = internal;
    }
    g.ppid = col_p.pid;
    col_p.pid = (int32_t)getpid();
    g.role = CPT_ROLE_WORKER;
    if (g.fd >= 0)
        col_sys_close(g.fd);
    g.fd = -1;
    g.dropped_total = 0;
    atomic_store(&g.drainer_state, 0);
    atomic_store(&g.stop, 0);
    atomic_store(&g.kick, 0);
    atomic_store(&col_n_steps, 0);
    col_step_shutdown(); /* the parent's open step is not ours */
    if (g.mode == COL_SUMMARY)
        atomic_store(&col_mode_now, COL_OFF); /* workers have no steps to summarise */
}

/* ---- init ---- */

const char *col_status_line(void) { return g.status; }

int col_configured_mode(void) { return g.mode; }

int64_t col_job_ns(int64_t mono_ns) { return mono_ns - g.mono0 + g.real0 + g.clock_offset; }

int col_start(void)
{
    if (atomic_load(&col_mode_now) != COL_OFF || atomic_load(&g.shut))
        return 0;
    const char *out = getenv(COL_ENV_OUT);
    if (!out || !*out) {
        snprintf(g.status, sizeof g.status, "inactive: %s is not set (run the job under `chainprof run`)",
                 COL_ENV_OUT);
        return -1;
    }
    const char *mode = getenv(COL_ENV_MODE);
    g.mode = mode && !strcmp(mode, "summary") ? COL_SUMMARY : COL_TRACE;
    snprintf(col_p.out_dir, sizeof col_p.out_dir, "%s", out);
    col_p.pid = (int32_t)getpid();
    g.ppid = (int32_t)getppid();
    find_rank();
    find_host();
    parse_steps(getenv(COL_ENV_STEPS));
    read_clock_env();
    copy_env(g.job, sizeof g.job, COL_ENV_JOB);
    copy_env(col_p.ckpt_dirs, sizeof col_p.ckpt_dirs, COL_ENV_CKPT_DIRS);
    copy_env(col_p.data_dirs, sizeof col_p.data_dirs, COL_ENV_DATA_DIRS);
    const char *se = getenv(COL_ENV_STDERR);
    col_p.summary_stderr = se && *se == '1';
    read_cmd();
    int rp = 0;
    env_int(COL_ENV_RUN_PID, &rp);
    g.run_pid = rp;
    int kb = DEFAULT_RING_KB;
    env_int(COL_ENV_RING_KB, &kb);
    if (kb < 16)
        kb = 16;
    uint64_t n = 256; /* records: a power of two (the ring index is a mask) */
    while (n * 2 * sizeof(cpt_rec) <= (uint64_t)kb * 1024 && n < ((uint64_t)1 << 26))
        n *= 2;
    g.ring_bytes = n * sizeof(cpt_rec);
    g.flush_ms = 20;
    env_int(COL_ENV_FLUSH_MS, &g.flush_ms);
    if (g.flush_ms < 1)
        g.flush_ms = 1;
    clock_pair(&g.mono0, &g.real0);
    if (pthread_key_create(&exit_key, thread_exit) != 0)
        return -1;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    if (g.mode == COL_TRACE) {
        g.out = mmap(NULL, OUT_BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (g.out == MAP_FAILED) {
            g.out = NULL;
            return -1;
        }
        if (open_trace() < 0) {
            snprintf(g.status, sizeof g.status, "inactive: cannot create a trace file in %s: %s", col_p.out_dir,
                     strerror(errno));
            return -1;
        }
        snprintf(g.status, sizeof g.status, "trace to %s", g.base);
    } else if (col_step_init() < 0) {
        snprintf(g.status, sizeof g.status, "inactive: cannot create a summary file in %s: %s", col_p.out_dir,
                 strerror(errno));
        return -1;
    } else {
        snprintf(g.status, sizeof g.status, "summary to %s", col_p.out_dir);
    }
    atomic_store(&col_recording, col_p.step_first < 0 ? 1 : 0);
    atomic_store(&col_mode_now, g.mode);
    atexit(at_exit);
    return 0;
}

__attribute__((constructor)) static void col_init(void) { col_start(); }

__attribute__((destructor)) static void col_fini(void) { col_shutdown(); }
