/* synth.h - `chainprof synth`: realistic multi-rank PyTorch profiler
 * (Kineto) traces of a simulated data-parallel transformer job, with
 * problems injected on request.
 *
 * Two parts. The job model (syn_job.c) simulates every rank on one true
 * clock in integer nanoseconds: a host thread, an autograd thread, a compute
 * stream and an NCCL stream per rank; kernel times come from FLOPs or bytes
 * at a GPU efficiency, all-reduce times from bytes with the ring busbw factor
 * 2(n-1)/n over NVLink (one node) or the NIC rate (several nodes), and every
 * collective ends at the same instant on all ranks (the last arriver starts
 * the transfer, the others wait inside their NCCL kernel). The Kineto writer
 * (syn_out.c) formats events the way PyTorch 2.x writes them, with one
 * buffered (optionally gzip/zstd) stream per rank, no allocation per event,
 * written to a temporary file and renamed into place when complete.
 *
 * Output is a pure function of the configuration: the same arguments and
 * seed give the same bytes. A ground-truth file DIR/synth.json says what was
 * injected, where, and what the model predicts, so tests can check that the
 * analysis finds it.
 *
 * Ownership: syn_config is plain caller-owned data; nothing here keeps a
 * pointer to it after syn_write_job returns.
 */
#ifndef CP_SYNTH_SYNTH_H
#define CP_SYNTH_SYNTH_H

#include "../base/error.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum syn_compress { SYN_PLAIN = 0, SYN_GZIP, SYN_ZSTD } syn_compress;

/* Limits on what the command line controls (keeps memory and output sane). */
#define SYN_MAX_RANKS 512
#define SYN_MAX_STEPS 100000
#define SYN_MAX_LAYERS 512

typedef struct syn_config {
    /* job */
    int ranks;
    int gpus_per_node;
    int tp;                 /* tensor-parallel size (groups of consecutive ranks in a node) */
    int steps;
    uint64_t seed;
    /* model: GPT-style decoder, data parallel, bf16 */
    int layers;
    int hidden;
    int seq_len;
    int micro_batch;
    int vocab;
    int bucket_mb;          /* DDP gradient bucket size */
    /* hardware (A100-SXM4-80GB defaults) */
    double peak_tflops;     /* dense bf16 */
    double gemm_eff;        /* achieved fraction of peak for GEMMs */
    double hbm_gbps;        /* GB/s, 1e9 B/s */
    double mem_eff;
    double nvlink_busbw_gbps; /* all-reduce busbw inside one node */
    double nic_busbw_gbps;    /* all-reduce busbw across nodes, per GPU */
    /* injected problems (0 / false = not injected) */
    double slow_network;    /* fraction of link bandwidth, (0, 1] */
    double ckpt_s;          /* synchronous checkpoint seconds */
    int ckpt_every;         /* ... every this many steps */
    int straggler_rank;     /* -1 = none */
    double straggler_factor;
    double dl_stall_ms;     /* data loader stall per affected step */
    int dl_every;           /* ... every this many steps */
    double host_work_ms;    /* CPU op on the main thread (aten::normal_ building the batch) */
    int hw_every;           /* ... every this many steps */
    int launch_bound;       /* tiny kernels per step, 0 = none */
    double pageable_mb;     /* pageable synchronous H2D MB per step, 0 = none */
    /* output */
    syn_compress compress;
    bool force;             /* write into a non-empty directory, replace files */
} syn_config;

/* Defaults: 2 ranks on one node, 4 steps, an 8-layer 4096-wide model. */
void syn_config_default(syn_config *c);

/* Parse one --inject value "KIND[=VALUE],..." into c. Kinds: slow-network=F,
 * sync-checkpoint=SECONDS[@EVERY], straggler=RANK[:FACTOR],
 * dataloader-stall=MS[@EVERY], launch-bound[=N], pageable-h2d[=MB],
 * host-work=MS[@EVERY].
 * Returns 0 or CP_ERR_USAGE with a message naming the bad item. */
int syn_parse_inject(syn_config *c, const char *spec, cp_error *err);

/* Check the configuration as a whole (ranks vs injected ranks, one node vs
 * slow-network...). Returns 0 or CP_ERR_USAGE. */
int syn_config_check(const syn_config *c, cp_error *err);

/* Summary of what was written (for the command's output). */
typedef struct syn_result {
    uint64_t json_bytes;   /* uncompressed JSON, all ranks */
    uint64_t file_bytes;   /* on disk, all ranks */
    uint64_t events;       /* trace events, all ranks */
    int64_t mean_step_ns;  /* simulated mean step time on rank 0 */
} syn_result;

/* Write rank-<r>.json[.gz|.zst] for every rank and synth.json into dir
 * (created if missing; refused when it holds files unless c->force).
 * Returns 0 or a negative status with err filled. */
int syn_write_job(const syn_config *c, const char *dir, syn_result *res, cp_error *err);

#endif
