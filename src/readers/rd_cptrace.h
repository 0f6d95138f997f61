/* rd_cptrace.h - the `chainprof run` trace reader (format:
 * include/chainprof/cptrace.h, docs/FORMATS.md "chainprof run traces").
 *
 * rd_cptrace.c reads the file(s) of one process and turns the plain records
 * (CUDA, NCCL and I/O calls, steps, regions, CPU samples, CUPTI activity)
 * into timeline events; rd_cptrace_nccl.c assembles the NCCL profiler
 * plugin's events, which arrive from several threads, into operations
 * (one GPU-side event each, with Kineto's collective args so the
 * collectives analysis reads them as it reads PyTorch traces) and proxy
 * operations (bytes, time on the wire and waiting for the peer, per peer).
 * State of one file; everything it allocates is freed with the file.
 */
#ifndef CP_READERS_RD_CPTRACE_H
#define CP_READERS_RD_CPTRACE_H

#include "../base/error.h"
#include "../model/timeline.h"
#include "chainprof/cptrace.h"
#include "reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An NCCL profiler event, assembled from its start, states and stop. */
typedef struct cpr_strv { /* a string's bytes in the file */
    const char *p;
    uint32_t n;
} cpr_strv;

typedef struct cpr_nev {
    uint64_t id, parent;
    uint8_t tix;           /* type bit (ncclProfile* = 1 << tix) */
    bool stopped, linked;  /* linked: a CUPTI kernel carries its args */
    uint32_t comm, tid;
    int32_t device;
    int64_t t0, t1;        /* host times (file mono ns) */
    uint64_t seq, count, stream;
    int64_t root_peer;     /* root (coll), peer (p2p, proxy op) */
    uint32_t func, dtype, algo, proto; /* file string ids */
    uint32_t n_channels, n_warps;
    /* proxy op */
    int64_t n_steps, chunk;
    bool is_send, remote;
    uint32_t channel;
    /* proxy step / kernel channel states: first time of each, -1 none */
    int64_t st_gpu_wait, st_peer_wait, st_send_wait, st_recv_wait, st_flush_wait, st_recv_gpu_wait;
    uint64_t trans;        /* largest transSize seen */
    uint64_t ptimer0, ptimer1;
    int64_t kch_stop_host; /* host time of the KernelChStop state */
    /* aggregates (ops and proxy ops) */
    int64_t w0, w1;        /* window from children, -1 none */
    int64_t k0, k1;        /* kernel-channel window (host time) */
    uint64_t bytes;
    int64_t wire_ns, peer_wait_ns, gpu_wait_ns;
    int64_t n_children;
} cpr_nev;

typedef struct cpr_comm {
    bool known;
    uint64_t id;
    int32_t n_ranks, rank, n_nodes;
    uint32_t name; /* file string id */
} cpr_comm;

typedef struct cpr_call { /* an NCCL API call (NCALL) */
    uint32_t tid, comm;
    uint8_t api;
    int64_t t0, t1;
    uint64_t stream, xid, count;
    uint16_t dtype;
} cpr_call;

typedef struct cpr_gpu { /* a CUPTI record, emitted after the plugin events */
    cpt_rec r;
} cpr_gpu;

typedef struct cpr_thr { /* a thread of the file's process */
    uint32_t tid;
    bool has_track;
    uint32_t track;
    int64_t last_nev; /* index of its last plugin start event (a NEV2 continues it), -1 */
} cpr_thr;

typedef struct cpr_cpu { /* a CPU-time sample */
    uint32_t tid;
    int64_t t, cpu;
} cpr_cpu;

typedef struct cpr_step {
    uint32_t tid;
    int64_t t, dur, id;
} cpr_step;

/* uint64 -> uint64 hash map (open addressing; keys stored + 1, 0 = empty). */
typedef struct cpr_map {
    uint64_t *k, *v;
    size_t cap, n;
} cpr_map;
void cpr_map_put(cpr_map *m, uint64_t key, uint64_t val); /* the first value of a key stays */
bool cpr_map_get(const cpr_map *m, uint64_t key, uint64_t *val);
void cpr_map_free(cpr_map *m);

typedef struct cpr_keys {
    uint32_t stream, bytes, device, path, cls, fd, error, count, coll_name, in_n, out_n, dtype, group_size, pg_name,
        seq, algo, proto, n_channels, n_nodes, comm_rank, timing, peer, wire_ns, peer_wait_ns, gpu_wait_ns, steps,
        channel, cpu_ns, proc_cpu_ns, kind, correlation, source, comm, ops;
} cpr_keys;

typedef struct cpr {
    tl_builder *b;
    cp_intern *st;
    diag_set *dg;
    const char *path;
    cpr_keys k;
    /* the file being read */
    const unsigned char *data;
    size_t size;
    const cpt_header *h;
    int64_t shift;         /* add to a record time: the main file's monotonic base */
    /* strings of this file in order of appearance, and id -> index: a map,
     * not a table indexed by id, so a damaged id of 2^28 costs one entry
     * (fuzz_cptrace: a 2 GiB table) */
    cpr_strv *strs;
    size_t n_str, cap_str;
    cpr_map str_by_id;
    /* plugin events: vector + index by id */
    cpr_nev *nev;
    size_t n_nev, cap_nev;
    cpr_map nev_by_id;
    cpr_comm *comms;
    size_t n_comms;
    cpr_call *calls;
    size_t n_calls, cap_calls;
    cpr_gpu *gpu;
    size_t n_gpu, cap_gpu;
    /* CUPTI external correlation, both ways; NCCL calls by external id */
    cpr_map corr_by_xid, xid_by_corr, call_by_xid;
    /* calls and operations sorted by (tid, start) for range lookups */
    size_t *ops_sorted;
    size_t n_ops_sorted;
    cpr_thr *thr;
    size_t n_thr, cap_thr;
    cpr_cpu *cpu;
    size_t n_cpu, cap_cpu;
    cpr_step *steps;
    size_t n_steps, cap_steps;
    bool ended;            /* the END record was seen */
    /* stream pointers -> small ids */
    uint64_t *streams;
    size_t n_streams;
} cpr;

/* The reader's entry points (readers.def row `cptrace`), and the file image
 * already in memory (fuzzing, tests: no worker files are looked for). */
int rd_cptrace_sniff(const char *path, const unsigned char *head, size_t n);
int rd_cptrace_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err);
int rd_cptrace_read_mem(const void *data, size_t size, const char *name, tl_builder *b, cp_error *err);

/* File string by id ("" when unknown); interned into the builder. */
const char *cpr_str(const cpr *r, uint32_t id, size_t *n);
uint32_t cpr_intern(cpr *r, uint32_t id);
/* The state of a thread of this file's process (created on first use). */
cpr_thr *cpr_thread(cpr *r, uint32_t tid);
/* CPU track of a thread of this file's process. */
uint32_t cpr_cpu_track(cpr *r, uint32_t tid);
/* GPU track of (device, stream pointer or CUPTI stream id). */
uint32_t cpr_gpu_track(cpr *r, int32_t device, uint64_t stream, bool cupti_stream);
/* Add an event at a record time (file mono ns). */
size_t cpr_event(cpr *r, uint32_t track, int64_t t_ns, int64_t dur_ns, uint32_t name, tl_cat cat, int64_t corr,
                 uint32_t flags);
/* The CUPTI correlation of an external id, -1 none. */
int64_t cpr_corr_of(const cpr *r, uint64_t xid);

/* rd_cptrace_nccl.c */
void cpr_nev_record(cpr *r, uint32_t tid, const cpt_rec *x);  /* NEV */
void cpr_nev2_record(cpr *r, uint32_t tid, const cpt_rec *x); /* NEV2: continues the thread's last NEV */
/* After every record: link, window, emit the operations and proxy ops;
 * CUPTI kernels are emitted here too (they may carry operation args). */
void cpr_nccl_finish(cpr *r);

#endif
