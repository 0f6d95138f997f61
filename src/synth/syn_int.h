/* syn_int.h - what the synthesizer's job model (syn_job.c) and its file
 * writers (syn_files.c) share: per-rank simulation state, process groups,
 * the job. Internal to src/synth.
 *
 * Ownership: a job owns its ranks array and the process groups' rank
 * strings; each rank owns its output stream and pending-bucket array.
 * Everything lives for one syn_write_job call.
 */
#ifndef CP_SYNTH_SYN_INT_H
#define CP_SYNTH_SYN_INT_H

#include "../base/jsonw.h"
#include "syn_out.h"
#include "synth.h"

#include <stdbool.h>
#include <stdint.h>

#define SYN_NUM_SMS 108
#define SYN_COMPUTE_STREAM 7
#define SYN_NCCL_STREAM 20
#define SYN_TP_STREAM 24
#define SYN_ORIGIN_NS INT64_C(4458676000000000)      /* a monotonic-clock origin, like Kineto's */
#define SYN_BASE_TIME_NS INT64_C(1764460800000000000) /* baseTimeNanoseconds written by every rank */

/* ---- per-rank state ----------------------------------------------------- */

typedef struct pend_coll {
    int64_t ready_ns;   /* earliest start on this rank */
    int64_t corr, ext;
    int64_t nelems;
    int64_t start_ns, end_ns;
} pend_coll;

/* A process group as PyTorch names it: "0" is default_pg; new_group() calls
 * number the others in creation order (here the TP groups, then the DP groups). */
typedef struct pg_info {
    char name[16];
    const char *desc;
    char *ranks;        /* owned "[0, 1, ...]" */
    int size, start, stride;
} pg_info;

typedef struct rank_st {
    int rank, dev;
    int64_t pid, tid_main, tid_bw;
    int64_t shift_ns;   /* true clock -> this rank's trace clock */
    uint64_t rng;
    int64_t gpu_ns, comm_ns;
    int64_t corr, ext, rfid, evidx;
    double compute_factor;
    syn_out out;
    pend_coll *pend;    /* this step's DDP buckets */
    size_t n_pend, cap_pend;
    pend_coll tp_pend;  /* the tensor-parallel all-reduce in flight */
    int64_t tp_comm_ns; /* TP NCCL stream free from */
    const pg_info *tp_pg, *dp_pg;
    int64_t cpu_ns, bw_ns, fwd0_ns; /* main and autograd thread cursors; forward start */
    int64_t bk_acc_bytes;           /* gradient bytes not yet in a bucket */
    /* ground truth */
    int64_t compute_kernel_ns, nccl_kernel_ns, nccl_wait_ns, ckpt_ns, dl_ns, hw_ns, tiny_kernels, step_sum_ns;
    int64_t exposed_comm_ns; /* all-reduce time after the backward pass's last kernel */
    int64_t tp_kernel_ns;
    /* first compute-stream start since the mark, for gpu_user_annotation
     * spans (Kineto writes one per annotation and stream with GPU work) */
    int64_t first_gpu_step, first_gpu_opt;
} rank_st;

typedef struct job {
    const syn_config *c;
    rank_st *r;
    int nodes;
    double coll_gbps;     /* DDP all-reduce busbw the transfers run at */
    int tp, dp;           /* tensor- and data-parallel sizes, tp * dp = ranks */
    pg_info world;        /* default_pg */
    pg_info *tp_pgs, *dp_pgs; /* ranks/tp and tp groups, when tp > 1 */
    int64_t tokens;
} job;

/* true clock -> this rank's trace clock */
static inline int64_t T(const rank_st *r, int64_t ns) { return ns + r->shift_ns; }

/* A group of n ranks start, start + stride, ...; pg->ranks is owned. */
void syn_pg_init(pg_info *pg, const char *name, const char *desc, int start, int stride, int n);

/* syn_files.c: the trace header and footer PyTorch writes around
 * traceEvents, the output directory, the ground truth synth.json. */
void syn_put_header(const job *j, rank_st *r);
void syn_put_footer(rank_st *r, int64_t end_ns, const char *name);

/* What the header of one rank's file says (any job): distributedInfo with
 * its process groups, one deviceProperties entry per GPU of the node, the
 * metadata events naming its CPU threads and GPU streams. */
typedef struct syn_hdr {
    int rank, world, gpus_per_node;
    uint64_t seed;
    int64_t pid, tid_main, tid_bw;
    int dev;
    const pg_info *const *pgs;
    int n_pgs;
    const int64_t *streams;
    int n_streams;
} syn_hdr;
void syn_put_header_ex(syn_out *o, const syn_hdr *h);
/* end_trace_ns on the file's own clock */
void syn_put_footer_ex(syn_out *o, int64_t end_trace_ns, const char *name);
int syn_prepare_dir(const char *dir, bool force, cp_error *err);
int syn_write_truth(const job *j, const char *dir, const char *ext, cp_error *err);


/* One key and its value, for the truth files (cp_jw_double writes null for non-finite). */
static inline void jw_kv_d(cp_jw *w, const char *k, double v) { cp_jw_key(w, k); cp_jw_double(w, v); }
static inline void jw_kv_i(cp_jw *w, const char *k, int64_t v) { cp_jw_key(w, k); cp_jw_int(w, v); }
static inline void jw_kv_s(cp_jw *w, const char *k, const char *v) { cp_jw_key(w, k); cp_jw_str(w, v); }

#endif
