/* rd_cptrace.c - `chainprof run --mode trace` files (.cptrace) into the
 * timeline (format: include/chainprof/cptrace.h; what becomes what:
 * docs/FORMATS.md, "chainprof run traces").
 *
 * Design
 * - The file is mapped and read in two passes over its chunks: the first
 *   collects the strings (a thread may use a string another thread's later
 *   chunk defines), the second turns records into events. Records of one
 *   thread are in its chunks' order; chunks of different threads interleave,
 *   which the timeline's sort undoes.
 * - One process per file, plus its forked workers (FILE.w<pid>, found next
 *   to it), read into the same builder: the rank's timeline holds the data
 *   loader workers' reads as tracks of their own pids. Times are put on the
 *   main file's monotonic base; meta.base_time_ns carries that base to the
 *   job's common clock (the header's clock pair and the offset `chainprof
 *   run` measured), so ranks on different hosts line up.
 * - What each record becomes:
 *     CUDA    cuda_runtime / cuda_driver call on its thread (launch and sync
 *             flags), correlated with CUPTI's GPU record through CORR
 *     NCALL   a cpu_op named after the NCCL call
 *     IO      an osrt call (read, write, fsync, ...) with bytes, path and
 *             storage class args
 *     STEP    the user_annotation ProfilerStep#N on the step's thread, with
 *             the thread's and the process's CPU time in it; and a cpu_op
 *             "step thread: framework code" over the same span: the step
 *             thread runs framework code whenever it is in no traced call,
 *             which is host time (when no GPU work overlaps it)
 *     REGION  a user_annotation with the region's name
 *     GPU     kernel / gpu_memcpy / gpu_memset on (device, stream)
 *     NEV     see rd_cptrace_nccl.c
 * - Damage: a bad chunk header ends the file (what came before is kept), a
 *   missing END record is a truncated file, unknown record kinds are bad
 *   events, records the collector dropped (full rings) are counted.
 */
#include "rd_cptrace.h"
#include "reader.h"
#include "../base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const cuda_names[CPT_CUDA__COUNT] = {
#define CPT_X(e, name, cls) name,
    CPT_CUDA_APIS(CPT_X)
#undef CPT_X
};
static const uint8_t cuda_class[CPT_CUDA__COUNT] = {
#define CPT_X(e, name, cls) cls,
    CPT_CUDA_APIS(CPT_X)
#undef CPT_X
};
static const char *const nccl_names[CPT_NCCL__COUNT] = {
#define CPT_X(e, name) name,
    CPT_NCCL_APIS(CPT_X)
#undef CPT_X
};
static const char *const io_names[CPT_IO__COUNT] = {
#define CPT_X(e, name, dir) name,
    CPT_IO_CALLS(CPT_X)
#undef CPT_X
};
static const char *const io_classes[] = { "other", "checkpoint", "dataset" };

int rd_cptrace_sniff(const char *path, const unsigned char *head, size_t n)
{
    (void)path;
    return n >= 8 && memcmp(head, CPT_MAGIC, 8) == 0 ? 100 : 0;
}

/* ---- helpers shared with rd_cptrace_nccl.c ---- */

const char *cpr_str(const cpr *r, uint32_t id, size_t *n)
{
    uint64_t i;
    if (id == 0 || !cpr_map_get(&r->str_by_id, id, &i)) {
        *n = 0;
        return "";
    }
    *n = r->strs[i].n;
    return r->strs[i].p;
}

uint32_t cpr_intern(cpr *r, uint32_t id)
{
    size_t n;
    const char *s = cpr_str(r, id, &n);
    return n ? cp_intern_n(r->st, s, n) : cp_intern_s(r->st, "?");
}

cpr_thr *cpr_thread(cpr *r, uint32_t tid)
{
    for (size_t i = 0; i < r->n_thr; i++)
        if (r->thr[i].tid == tid)
            return &r->thr[i];
    cp_xgrow((void **)&r->thr, &r->cap_thr, r->n_thr + 1, sizeof *r->thr);
    cpr_thr *t = &r->thr[r->n_thr++];
    *t = (cpr_thr){ tid, false, 0, -1 };
    return t;
}

uint32_t cpr_cpu_track(cpr *r, uint32_t tid)
{
    cpr_thr *t = cpr_thread(r, tid);
    if (!t->has_track) {
        tl_track_key k = { TL_TRACK_CPU, r->h->pid, tid, -1, -1 };
        t->track = tl_builder_track(r->b, &k);
        t->has_track = true;
    }
    return t->track;
}

uint32_t cpr_gpu_track(cpr *r, int32_t device, uint64_t stream, bool cupti_stream)
{
    int64_t s = (int64_t)stream;
    if (!cupti_stream && stream) { /* stream pointers: small ids in order of appearance, after CUPTI's */
        size_t i = 0;
        while (i < r->n_streams && r->streams[i] != stream)
            i++;
        if (i == r->n_streams) {
            r->streams = cp_xrealloc(r->streams, (r->n_streams + 1) * sizeof *r->streams);
            r->streams[r->n_streams++] = stream;
        }
        s = 1000 + (int64_t)i;
    }
    tl_track_key k = { TL_TRACK_GPU, device, s, device, s };
    return tl_builder_track(r->b, &k);
}

size_t cpr_event(cpr *r, uint32_t track, int64_t t_ns, int64_t dur_ns, uint32_t name, tl_cat cat, int64_t corr,
                 uint32_t flags)
{
    /* an end before the start or past int64 is damage (counted); the event
     * stays, clamped, because the caller attaches its args to it */
    if (dur_ns < 0 || t_ns > INT64_MAX - dur_ns)
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
    tl_ev e = { cp_sat_add_i64(t_ns, r->shift), dur_ns < 0 ? 0 : dur_ns, name, 0, cat, track, corr, -1, flags };
    return tl_builder_add(r->b, &e);
}

int64_t cpr_corr_of(const cpr *r, uint64_t xid)
{
    uint64_t c;
    return cpr_map_get(&r->corr_by_xid, xid, &c) ? (int64_t)c : -1;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

void cpr_map_put(cpr_map *m, uint64_t key, uint64_t val)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        uint64_t *k = cp_xcalloc(cap, sizeof *k), *v = cp_xmalloc(cap * sizeof *v);
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->k[i])
                continue;
            size_t j = mix64(m->k[i]) & (cap - 1);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = m->k[i];
            v[j] = m->v[i];
        }
        free(m->k);
        free(m->v);
        m->k = k, m->v = v, m->cap = cap;
    }
    uint64_t kk = key + 1;
    size_t j = mix64(kk) & (m->cap - 1);
    while (m->k[j] && m->k[j] != kk)
        j = (j + 1) & (m->cap - 1);
    if (m->k[j])
        return;
    m->k[j] = kk;
    m->v[j] = val;
    m->n++;
}

bool cpr_map_get(const cpr_map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return false;
    uint64_t kk = key + 1;
    size_t j = mix64(kk) & (m->cap - 1);
    while (m->k[j]) {
        if (m->k[j] == kk) {
            *val = m->v[j];
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

void cpr_map_free(cpr_map *m)
{
    free(m->k);
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* ---- pass 1: strings ---- */

static void add_str(cpr *r, uint32_t id, const char *p, uint32_t n)
{
    uint64_t i;
    if (cpr_map_get(&r->str_by_id, id, &i)) { /* ids are unique: a second one is damage; the last wins */
        r->strs[i] = (cpr_strv){ p, n };
        return;
    }
    cp_xgrow((void **)&r->strs, &r->cap_str, r->n_str + 1, sizeof *r->strs);
    r->strs[r->n_str] = (cpr_strv){ p, n };
    cpr_map_put(&r->str_by_id, id, r->n_str++);
}

/* Walk the chunks; fn(r, chunk, records) for each whole one. Returns the
 * offset where walking stopped (== size when every chunk was whole). */
typedef void (*chunk_fn)(cpr *r, const cpt_chunk *c, const cpt_rec *recs);

static size_t walk(cpr *r, chunk_fn fn)
{
    size_t off = r->h->header_bytes;
    while (off + sizeof(cpt_chunk) <= r->size) {
        cpt_chunk c;
        memcpy(&c, r->data + off, sizeof c);
        if (c.magic != CPT_CHUNK_MAGIC || (r->size - off - sizeof c) / sizeof(cpt_rec) < c.n_recs)
            return off;
        fn(r, &c, (const cpt_rec *)(const void *)(r->data + off + sizeof c));
        off += sizeof c + (size_t)c.n_recs * sizeof(cpt_rec);
    }
    return off;
}

/* The slots of the STR record at recs[i] (its bytes), or -1 when they do
 * not fit in the chunk or it is no string record. */
static long str_slots(const cpt_rec *recs, uint32_t i, uint32_t n)
{
    uint64_t len = recs[i].a, slots = (len + sizeof(cpt_rec) - 1) / sizeof(cpt_rec);
    return recs[i].kind == CPT_K_STR && len <= 65536 && slots <= n - i - 1 ? (long)slots : -1;
}

static void strings_of(cpr *r, const cpt_chunk *c, const cpt_rec *recs)
{
    for (uint32_t i = 0; i < c->n_recs; i++) {
        if (recs[i].kind != CPT_K_STR)
            continue;
        long slots = str_slots(recs, i, c->n_recs);
        if (slots < 0 || recs[i].u32 == 0 || recs[i].u32 > (1u << 28)) {
            diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
            continue;
        }
        add_str(r, recs[i].u32, (const char *)(recs + i + 1), (uint32_t)recs[i].a);
        i += (uint32_t)slots;
    }
}

/* ---- pass 2: records ---- */

static void arg_str(cpr *r, uint32_t key, const char *s) { tl_builder_arg_str(r->b, key, cp_intern_s(r->st, s)); }

static void cuda_record(cpr *r, uint32_t tid, const cpt_rec *x)
{
    if (x->op >= CPT_CUDA__COUNT) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    const char *name = cuda_names[x->op];
    bool drv = name[0] == 'c' && name[1] == 'u' && name[2] != 'd';
    int cls = cuda_class[x->op];
    uint32_t fl = cls == CPT_CC_SYNC || cls == CPT_CC_COPY_SYNC ? TL_F_SYNC_CALL : 0;
    if (cls != CPT_CC_SYNC && cls != CPT_CC_OTHER)
        fl |= TL_F_LAUNCH;
    cpr_event(r, cpr_cpu_track(r, tid), x->t_ns, x->dur_ns, cp_intern_s(r->st, name),
              drv ? TL_CAT_CUDA_DRIVER : TL_CAT_CUDA_RUNTIME, cpr_corr_of(r, x->c), fl);
    tl_builder_arg_int(r->b, r->k.device, (int64_t)x->u32);
    if (x->a)
        tl_builder_arg_int(r->b, r->k.stream, (int64_t)x->a);
    if (cls == CPT_CC_COPY || cls == CPT_CC_COPY_SYNC || cls == CPT_CC_SET)
        tl_builder_arg_int(r->b, r->k.bytes, (int64_t)x->b);
}

static void io_record(cpr *r, uint32_t tid, const cpt_rec *x)
{
    if (x->op >= CPT_IO__COUNT || x->u32 > CPT_IOC_DATASET) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    cpr_event(r, cpr_cpu_track(r, tid), x->t_ns, x->dur_ns, cp_intern_s(r->st, io_names[x->op]), TL_CAT_OSRT, -1, 0);
    arg_str(r, r->k.cls, io_classes[x->u32]);
    if (x->flags & CPT_IOF_ERROR)
        tl_builder_arg_int(r->b, r->k.error, (int64_t)x->b);
    else if (x->op != CPT_IO_OPEN && x->op != CPT_IO_OPENAT && x->op != CPT_IO_CREAT && x->op != CPT_IO_FOPEN)
        tl_builder_arg_int(r->b, r->k.bytes, (int64_t)x->b);
    if ((int64_t)x->a >= 0)
        tl_builder_arg_int(r->b, r->k.fd, (int64_t)x->a);
    if (x->c)
        tl_builder_arg_str(r->b, r->k.path, cpr_intern(r, (uint32_t)x->c));
}

static void gpu_defer(cpr *r, const cpt_rec *x)
{
    cp_xgrow((void **)&r->gpu, &r->cap_gpu, r->n_gpu + 1, sizeof *r->gpu);
    r->gpu[r->n_gpu++].r = *x;
}

static void call_record(cpr *r, uint32_t tid, const cpt_rec *x)
{
    if (x->op >= CPT_NCCL__COUNT) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    cpr_event(r, cpr_cpu_track(r, tid), x->t_ns, x->dur_ns, cp_intern_s(r->st, nccl_names[x->op]), TL_CAT_CPU_OP,
              cpr_corr_of(r, x->c), 0);
    tl_builder_arg_int(r->b, r->k.count, (int64_t)x->b);
    cp_xgrow((void **)&r->calls, &r->cap_calls, r->n_calls + 1, sizeof *r->calls);
    r->calls[r->n_calls++] = (cpr_call){ tid, x->u32, x->op, x->t_ns, x->t_ns + x->dur_ns, x->a, x->c, x->b, x->flags };
}

static void comm_record(cpr *r, const cpt_rec *x)
{
    if (x->u32 > 65536) {
        diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
        return;
    }
    if (x->u32 >= r->n_comms) {
        size_t n = (size_t)x->u32 + 1;
        r->comms = cp_xrealloc(r->comms, n * sizeof *r->comms);
        memset(r->comms + r->n_comms, 0, (n - r->n_comms) * sizeof *r->comms);
        r->n_comms = n;
    }
    cpr_comm *c = &r->comms[x->u32];
    *c = (cpr_comm){ true, x->a, (int32_t)(x->b >> 32), (int32_t)(uint32_t)x->b, (int32_t)(int64_t)x->c,
                     (uint32_t)x->dur_ns };
}

/* Records that are a span [t_ns, t_ns + dur_ns): their ends are computed
 * (NCALL call ends, STEP ends, the events' ends), so a negative duration or an
 * end past int64 is a damaged record, counted and dropped here once
 * (fuzz_cptrace: signed overflow in call_record's t_ns + dur_ns). */
static bool span_ok(cpr *r, const cpt_rec *x)
{
    switch (x->kind) {
    case CPT_K_CUDA: case CPT_K_NCALL: case CPT_K_IO: case CPT_K_STEP: case CPT_K_REGION: case CPT_K_GPU: break;
    default: return true;
    }
    if (x->dur_ns >= 0 && x->t_ns <= INT64_MAX - x->dur_ns)
        return true;
    diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1);
    return false;
}

static void one_record(cpr *r, uint32_t tid, const cpt_rec *x)
{
    if (!span_ok(r, x))
        return;
    switch (x->kind) {
    case CPT_K_THREAD: {
        uint32_t tr = cpr_cpu_track(r, tid);
        if (x->u32)
            tl_builder_track_name(r->b, tr, cpr_intern(r, x->u32));
        break;
    }
    case CPT_K_CUDA: cuda_record(r, tid, x); break;
    case CPT_K_NCALL: call_record(r, tid, x); break;
    case CPT_K_IO: io_record(r, tid, x); break;
    case CPT_K_STEP:
        cp_xgrow((void **)&r->steps, &r->cap_steps, r->n_steps + 1, sizeof *r->steps);
        r->steps[r->n_steps++] = (cpr_step){ x->u32 ? x->u32 : tid, x->t_ns, x->dur_ns, (int64_t)x->a };
        break;
    case CPT_K_REGION:
        cpr_event(r, cpr_cpu_track(r, tid), x->t_ns, x->dur_ns, cpr_intern(r, x->u32), TL_CAT_USER_ANNOTATION, -1, 0);
        tl_builder_arg_int(r->b, r->k.kind, (int64_t)x->a);
        break;
    case CPT_K_CPU:
        cp_xgrow((void **)&r->cpu, &r->cap_cpu, r->n_cpu + 1, sizeof *r->cpu);
        r->cpu[r->n_cpu++] = (cpr_cpu){ (uint32_t)x->a, x->t_ns, (int64_t)x->b };
        break;
    case CPT_K_COMM: comm_record(r, x); break;
    case CPT_K_NEV: cpr_nev_record(r, tid, x); break;
    case CPT_K_NEV2: cpr_nev2_record(r, tid, x); break;
    case CPT_K_GPU: gpu_defer(r, x); break;
    case CPT_K_CORR: break; /* collected before pass 2 */
    case CPT_K_DROP:
        if (x->a)
            diag_count_n(r->dg, DIAG_RECORDS_DROPPED, x->a, r->path, -1);
        break;
    case CPT_K_END: r->ended = true; break;
    default: diag_count(r->dg, DIAG_BAD_EVENT, r->path, -1); break;
    }
}

static void records_of(cpr *r, const cpt_chunk *c, const cpt_rec *recs)
{
    for (uint32_t i = 0; i < c->n_recs; i++) {
        if (recs[i].kind == CPT_K_STR) {
            long slots = str_slots(recs, i, c->n_recs);
            i += slots > 0 ? (uint32_t)slots : 0;
            continue;
        }
        one_record(r, c->tid, &recs[i]);
    }
}

static void corr_of(cpr *r, const cpt_chunk *c, const cpt_rec *recs)
{
    for (uint32_t i = 0; i < c->n_recs; i++) {
        if (recs[i].kind == CPT_K_STR) {
            long slots = str_slots(recs, i, c->n_recs);
            i += slots > 0 ? (uint32_t)slots : 0;
            continue;
        }
        if (recs[i].kind != CPT_K_CORR)
            continue;
        cpr_map_put(&r->corr_by_xid, recs[i].a, recs[i].b);
        cpr_map_put(&r->xid_by_corr, recs[i].b, recs[i].a);
    }
}

static int cpu_cmp(const void *a, const void *b)
{
    const cpr_cpu *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* First sample at time t (samples sorted by (t, tid)), or n. */
static size_t cpu_first(const cpr *r, int64_t t)
{
    size_t lo = 0, hi = r->n_cpu;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->cpu[mid].t < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* CPU time of tid at exactly time t (the step code samples every thread at
 * the step's begin and end with those very timestamps), -1 none. */
static int64_t cpu_at(const cpr *r, uint32_t tid, int64_t t)
{
    for (size_t i = cpu_first(r, t); i < r->n_cpu && r->cpu[i].t == t; i++)
        if (r->cpu[i].tid == tid)
            return r->cpu[i].cpu;
    return -1;
}

static void emit_steps(cpr *r)
{
    if (r->n_cpu > 1)
        qsort(r->cpu, r->n_cpu, sizeof *r->cpu, cpu_cmp);
    uint32_t host_name = cp_intern_s(r->st, "step thread: framework code");
    for (size_t s = 0; s < r->n_steps; s++) {
        const cpr_step *st = &r->steps[s];
        uint32_t tr = cpr_cpu_track(r, st->tid);
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)st->id);
        cpr_event(r, tr, st->t, st->dur, cp_intern_s(r->st, name), TL_CAT_USER_ANNOTATION, -1, 0);
        int64_t t1 = st->t + st->dur, c0 = cpu_at(r, st->tid, st->t), c1 = cpu_at(r, st->tid, t1);
        if (c0 >= 0 && c1 >= c0)
            tl_builder_arg_int(r->b, r->k.cpu_ns, c1 - c0);
        int64_t proc = 0;
        bool any = false;
        for (size_t i = cpu_first(r, st->t); i < r->n_cpu && r->cpu[i].t == st->t; i++) {
            int64_t e = cpu_at(r, r->cpu[i].tid, t1);
            if (e >= r->cpu[i].cpu) {
                proc += e - r->cpu[i].cpu;
                any = true;
            }
        }
        if (any)
            tl_builder_arg_int(r->b, r->k.proc_cpu_ns, proc);
        cpr_event(r, tr, st->t, st->dur, host_name, TL_CAT_CPU_OP, -1, 0);
    }
}

static void init_keys(cpr *r)
{
    cp_intern *s = r->st;
    cpr_keys *k = &r->k;
    k->stream = cp_intern_s(s, "stream"), k->bytes = cp_intern_s(s, "bytes"), k->device = cp_intern_s(s, "device");
    k->path = cp_intern_s(s, "path"), k->cls = cp_intern_s(s, "class"), k->fd = cp_intern_s(s, "fd");
    k->error = cp_intern_s(s, "errno"), k->count = cp_intern_s(s, "count");
    k->coll_name = cp_intern_s(s, "Collective name"), k->in_n = cp_intern_s(s, "In msg nelems");
    k->out_n = cp_intern_s(s, "Out msg nelems"), k->dtype = cp_intern_s(s, "dtype");
    k->group_size = cp_intern_s(s, "Group size"), k->pg_name = cp_intern_s(s, "Process Group Name");
    k->seq = cp_intern_s(s, "Seq"), k->algo = cp_intern_s(s, "algorithm"), k->proto = cp_intern_s(s, "protocol");
    k->n_channels = cp_intern_s(s, "nChannels"), k->n_nodes = cp_intern_s(s, "nNodes");
    k->comm_rank = cp_intern_s(s, "comm_rank"), k->timing = cp_intern_s(s, "timing");
    k->peer = cp_intern_s(s, "peer"), k->wire_ns = cp_intern_s(s, "wire_ns");
    k->peer_wait_ns = cp_intern_s(s, "peer_wait_ns"), k->gpu_wait_ns = cp_intern_s(s, "gpu_wait_ns");
    k->steps = cp_intern_s(s, "steps"), k->channel = cp_intern_s(s, "channel"), k->cpu_ns = cp_intern_s(s, "cpu_ns");
    k->proc_cpu_ns = cp_intern_s(s, "process_cpu_ns"), k->kind = cp_intern_s(s, "kind");
    k->correlation = cp_intern_s(s, "correlation"), k->source = cp_intern_s(s, "source");
    k->comm = cp_intern_s(s, "comm"), k->ops = cp_intern_s(s, "ops");
}

static void free_file_state(cpr *r)
{
    free(r->strs), free(r->nev), free(r->comms);
    cpr_map_free(&r->str_by_id), cpr_map_free(&r->nev_by_id);
    free(r->calls), free(r->gpu), free(r->streams), free(r->thr), free(r->ops_sorted);
    cpr_map_free(&r->corr_by_xid), cpr_map_free(&r->xid_by_corr), cpr_map_free(&r->call_by_xid);
    free(r->cpu), free(r->steps);
    cpr keep = { .b = r->b, .st = r->st, .dg = r->dg, .path = r->path, .k = r->k };
    *r = keep;
}

/* Check the header; 0 or CP_ERR_FORMAT. */
static int check_header(const unsigned char *data, size_t size, const char *name, cp_error *err)
{
    if (size < sizeof(cpt_header) || memcmp(data, CPT_MAGIC, 8) != 0)
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, 0, "not a chainprof run trace: no %s header", "CPTRACE1");
    cpt_header h;
    memcpy(&h, data, sizeof h);
    if (h.version != CPT_VERSION)
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, 8, "chainprof run trace version %u: this build reads %d",
                            h.version, CPT_VERSION);
    if (h.rec_bytes != sizeof(cpt_rec) || h.header_bytes < sizeof(cpt_header) || h.header_bytes > size ||
        h.header_bytes % 8) /* chunks stay 8-byte aligned */
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, 16, "chainprof run trace header: record size %u, header "
                            "size %u (expected %zu and at least %zu)", h.rec_bytes, h.header_bytes, sizeof(cpt_rec),
                            sizeof(cpt_header));
    return 0;
}

static int64_t base_of(const cpt_header *h)
{
    return cp_sat_add_i64(cp_sat_sub_i64(h->real0_ns, h->mono0_ns), h->clock_offset_ns);
}

/* One file of the process (main or a worker): both passes. */
static void read_file(cpr *r, const unsigned char *data, size_t size, int64_t main_base)
{
    r->data = data;
    r->size = size;
    r->h = (const cpt_header *)(const void *)data;
    r->shift = cp_sat_sub_i64(base_of(r->h), main_base);
    tl_builder_reserve(r->b, tl_builder_count(r->b) + size / sizeof(cpt_rec), 3 * (size / sizeof(cpt_rec)));
    size_t stop = walk(r, strings_of);
    walk(r, corr_of);
    walk(r, records_of);
    cpr_nccl_finish(r);
    emit_steps(r);
    if (stop < size || !r->ended)
        diag_count(r->dg, DIAG_TRUNCATED_FILE, r->path, (long long)stop);
    free_file_state(r);
}

static void fill_meta(tl_builder *b, const cpt_header *h)
{
    tl_rank_meta *m = tl_builder_meta(b);
    cp_intern *st = tl_builder_strings(b);
    m->rank = h->rank;
    m->rank_source = h->rank >= 0 ? TL_RANK_FROM_TRACE : TL_RANK_ASSIGNED;
    m->world_size = h->world_size;
    m->has_base_time = true;
    m->base_time_ns = base_of(h);
    char host[CPT_HOST_BYTES + 1];
    memcpy(host, h->host, CPT_HOST_BYTES);
    host[CPT_HOST_BYTES] = 0;
    if (host[0])
        m->hostname = cp_intern_s(st, host);
    m->format = cp_intern_s(st, "cptrace");
}

int rd_cptrace_read_mem(const void *data, size_t size, const char *name, tl_builder *b, cp_error *err)
{
    int rc = check_header(data, size, name, err);
    if (rc < 0)
        return rc;
    cpt_header h;
    memcpy(&h, data, sizeof h);
    fill_meta(b, &h);
    cpr r = { .b = b, .st = tl_builder_strings(b), .dg = tl_builder_diag(b), .path = name };
    init_keys(&r);
    read_file(&r, data, size, base_of(&h));
    return 0;
}

/* ---- files ---- */

typedef struct mapped {
    unsigned char *p;
    size_t n;
} mapped;

static int map_file(const char *path, mapped *m, cp_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return cp_error_sys(err, CP_ERR_IO, path, "cannot stat");
    }
    m->n = (size_t)st.st_size;
    m->p = m->n ? mmap(NULL, m->n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (m->n && m->p == MAP_FAILED)
        return cp_error_sys(err, CP_ERR_IO, path, "cannot map");
    return 0;
}

static void unmap(mapped *m)
{
    if (m->n && m->p && m->p != MAP_FAILED)
        munmap(m->p, m->n);
}

/* Worker files of path: DIR/BASE.w<digits>[.part], sorted by name. */
static size_t find_workers(const char *path, char ***out)
{
    *out = NULL;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    const char *base = slash ? slash + 1 : path;
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0, cap = 0, bl = strlen(base);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        if (strncmp(s, base, bl) != 0 || strncmp(s + bl, ".w", 2) != 0)
            continue;
        const char *p = s + bl + 2;
        size_t digits = strspn(p, "0123456789");
        if (!digits || (p[digits] && strcmp(p + digits, ".part") != 0))
            continue;
        cp_xgrow((void **)out, &cap, n + 1, sizeof **out);
        size_t len = strlen(dir) + strlen(s) + 2;
        (*out)[n] = cp_xmalloc(len);
        snprintf((*out)[n], len, "%s/%s", dir, s);
        n++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* insertion sort: few workers */
        for (size_t j = i; j > 0 && strcmp((*out)[j - 1], (*out)[j]) > 0; j--) {
            char *t = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = t;
        }
    return n;
}

int rd_cptrace_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    (void)o;
    mapped m = { 0 };
    int rc = map_file(path, &m, err);
    if (rc < 0)
        return rc;
    rc = check_header(m.p, m.n, path, err);
    if (rc < 0) {
        unmap(&m);
        return rc;
    }
    cpt_header h;
    memcpy(&h, m.p, sizeof h);
    fill_meta(b, &h);
    cpr r = { .b = b, .st = tl_builder_strings(b), .dg = tl_builder_diag(b), .path = path };
    init_keys(&r);
    int64_t base = base_of(&h);
    read_file(&r, m.p, m.n, base);
    unmap(&m);
    char **workers;
    size_t nw = find_workers(path, &workers);
    for (size_t i = 0; i < nw; i++) {
        mapped w = { 0 };
        cp_error werr;
        if (map_file(workers[i], &w, &werr) == 0 && check_header(w.p, w.n, workers[i], &werr) == 0) {
            r.path = workers[i];
            read_file(&r, w.p, w.n, base);
        } else {
            diag_count(r.dg, DIAG_BAD_EVENT, workers[i], -1);
        }
        unmap(&w);
        free(workers[i]);
    }
    free(workers);
    return 0;
}
