/* verdict_job.h - a small synchronous data-parallel job built in code, for
 * the verdict analyzers' tests: every step each rank launches, optionally
 * loads data or saves a checkpoint, computes, then all-reduces; the
 * all-reduce transfer starts when the last rank arrives, so wait, stragglers
 * and the network speed are known exactly from the parameters. */
#ifndef CP_TEST_VERDICT_JOB_H
#define CP_TEST_VERDICT_JOB_H

#include "analysis/an_verdict.h"

#include <stdio.h>

typedef struct job_spec {
    int ranks, gpus_per_node, steps;
    int64_t compute_ns, launch_ns, tail_ns;
    int64_t allreduce_bytes;   /* float elements * 4 */
    double link_gbps;          /* expected busbw per GPU, GB/s */
    double net_frac;           /* achieved fraction of it */
    int straggler;             /* rank or -1 */
    double straggler_factor;   /* compute multiplier */
    int ckpt_every;            /* 0 none: rank 0 saves at steps id % every == 0 */
    int64_t ckpt_ns;
    int64_t dataloader_ns;     /* per step on every rank, 0 none */
} job_spec;

static inline job_spec job_default(void)
{
    return (job_spec){ .ranks = 8, .gpus_per_node = 4, .steps = 10, .compute_ns = 10000000, .launch_ns = 200000,
                       .tail_ns = 300000, .allreduce_bytes = 100000000, .link_gbps = 25, .net_frac = 0.9,
                       .straggler = -1, .straggler_factor = 1, .ckpt_every = 0 };
}

static inline uint32_t js_str(tl_builder *b, const char *s) { return cp_intern_s(tl_builder_strings(b), s); }

static inline void js_add(tl_builder *b, uint32_t track, tl_cat cat, const char *name, int64_t ts, int64_t dur)
{
    tl_ev ev = { .ts_ns = ts, .dur_ns = dur, .name = js_str(b, name), .cat = cat, .track = track, .corr = -1,
                 .ext_id = -1 };
    tl_builder_add(b, &ev);
}

static inline int64_t js_transfer_ns(const job_spec *j)
{
    double busbw = j->net_frac * j->link_gbps;                   /* GB/s = bytes/ns */
    double algbw = busbw / (2.0 * (j->ranks - 1) / j->ranks);
    return (int64_t)((double)j->allreduce_bytes / algbw);
}

/* Builds the job; returns the frozen timeline. */
static inline tl_timeline *job_build(const job_spec *j)
{
    tl_builder *bs[256];
    uint32_t tc[256], tg[256], tcomm[256];
    char ranks_s[2048] = "[";
    for (int r = 0; r < j->ranks; r++)
        snprintf(ranks_s + strlen(ranks_s), sizeof ranks_s - strlen(ranks_s), "%s%d", r ? ", " : "", r);
    strcat(ranks_s, "]");
    for (int r = 0; r < j->ranks; r++) {
        bs[r] = tl_builder_new("job.json");
        tl_rank_meta *m = tl_builder_meta(bs[r]);
        m->rank = r;
        m->world_size = j->ranks;
        m->n_devices = j->gpus_per_node;
        m->gpu_name = js_str(bs[r], "NVIDIA A100-SXM4-80GB");
        tl_track_key cpu = { TL_TRACK_CPU, 100, 101, -1, -1 };
        tl_track_key gpu = { TL_TRACK_GPU, 0, 7, 0, 7 };
        tl_track_key comm = { TL_TRACK_GPU, 0, 20, 0, 20 };
        tc[r] = tl_builder_track(bs[r], &cpu);
        tg[r] = tl_builder_track(bs[r], &gpu);
        tcomm[r] = tl_builder_track(bs[r], &comm);
    }
    int64_t T = js_transfer_ns(j), S = 1000000;
    for (int s = 0; s < j->steps; s++) {
        int id = s + 1;
        int64_t ready[256], maxready = 0;
        for (int r = 0; r < j->ranks; r++) {
            int64_t t = S;
            js_add(bs[r], tc[r], TL_CAT_CUDA_RUNTIME, "cudaLaunchKernel", t, j->launch_ns);
            t += j->launch_ns;
            if (j->dataloader_ns) {
                js_add(bs[r], tc[r], TL_CAT_CPU_OP, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t,
                       j->dataloader_ns);
                t += j->dataloader_ns;
            }
            if (j->ckpt_every && r == 0 && id % j->ckpt_every == 0) {
                js_add(bs[r], tc[r], TL_CAT_PYTHON_FUNCTION, "torch/serialization.py(650): save", t, j->ckpt_ns);
                js_add(bs[r], tc[r], TL_CAT_USER_ANNOTATION, "checkpoint_save", t, j->ckpt_ns);
                t += j->ckpt_ns;
            }
            int64_t c = j->compute_ns;
            if (r == j->straggler)
                c = (int64_t)((double)c * j->straggler_factor);
            js_add(bs[r], tg[r], TL_CAT_KERNEL, "sm80_xmma_gemm_bf16bf16_bf16f32", t, c);
            ready[r] = t + c;
            if (ready[r] > maxready)
                maxready = ready[r];
        }
        int64_t end = maxready + T + j->tail_ns;
        char nm[64];
        snprintf(nm, sizeof nm, "ProfilerStep#%d", id);
        for (int r = 0; r < j->ranks; r++) {
            js_add(bs[r], tc[r], TL_CAT_USER_ANNOTATION, nm, S, end - S);
            js_add(bs[r], tcomm[r], TL_CAT_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ready[r],
                   maxready + T - ready[r]);
            tl_builder *b = bs[r];
            tl_builder_arg_str(b, js_str(b, "Collective name"), js_str(b, "allreduce"));
            tl_builder_arg_int(b, js_str(b, "In msg nelems"), j->allreduce_bytes / 4);
            tl_builder_arg_int(b, js_str(b, "Out msg nelems"), j->allreduce_bytes / 4);
            tl_builder_arg_int(b, js_str(b, "Group size"), j->ranks);
            tl_builder_arg_str(b, js_str(b, "dtype"), js_str(b, "Float"));
            tl_builder_arg_str(b, js_str(b, "Process Group Name"), js_str(b, "0"));
            tl_builder_arg_str(b, js_str(b, "Process Group Ranks"), js_str(b, ranks_s));
        }
        S = end;
    }
    tl_timeline *tl = NULL;
    if (tl_finish(bs, (size_t)j->ranks, &(tl_finish_opts){ .nthreads = 1 }, &tl, NULL) < 0)
        return NULL;
    return tl;
}

/* Layers add up to the step time on every rank and step. */
static inline void job_assert_layers_add_up(const an_layers_result *lr)
{
    for (size_t i = 0; i < lr->n_ranks; i++)
        for (size_t s = 0; s < lr->ranks[i].n_steps; s++) {
            const an_step_layers *st = &lr->ranks[i].steps[s];
            int64_t sum = 0;
            for (int k = 0; k < CP_LAYER__COUNT; k++)
                sum += st->exposed_ns[k];
            assert_int_equal(sum, st->dur_ns);
        }
}

#endif
