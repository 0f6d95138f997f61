/* syn_files.c - what the synthesizer writes around the events: the trace
 * header (schemaVersion, deviceProperties, distributedInfo with the rank's
 * process groups, metadata events) and footer (traceName, displayTimeUnit,
 * baseTimeNanoseconds after traceEvents, as PyTorch writes them), the output
 * directory check, and the ground truth DIR/synth.json (see synth.h). */
#include "syn_int.h"
#include "../base/afile.h"
#include "../base/buf.h"
#include "../base/jsonw.h"
#include "../base/util.h"
#include "../model/vocab.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void put_meta(syn_out *o, const char *what, int64_t pid, int64_t tid, const char *key, const char *val,
                     int64_t num)
{
    if (!o->first_event)
        SYN_LIT(o, ",");
    o->first_event = 0;
    o->events++;
    SYN_LIT(o, "\n  {\n    \"name\": \"");
    syn_puts(o, what);
    SYN_LIT(o, "\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": ");
    syn_put_i64(o, pid);
    SYN_LIT(o, ", \"tid\": ");
    syn_put_i64(o, tid);
    SYN_LIT(o, ",\n    \"args\": {\n      \"");
    syn_puts(o, key);
    SYN_LIT(o, "\": ");
    if (val) {
        SYN_LIT(o, "\"");
        syn_puts(o, val);
        if (num >= 0)
            syn_put_i64(o, num);
        SYN_LIT(o, "\"");
    } else {
        syn_put_i64(o, num);
    }
    SYN_LIT(o, "\n    }\n  }");
}

/* The header of one rank's file from the rank's identity alone (the DP job
 * and the pipeline job both write it). */
void syn_put_header_ex(syn_out *o, const syn_hdr *h)
{
    SYN_LIT(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    for (int d = 0; d < h->gpus_per_node; d++) {
        syn_puts(o, d ? ",\n    {\n" : "\n    {\n");
        SYN_LIT(o, "      \"id\": ");
        syn_put_i64(o, d);
        SYN_LIT(o, ", \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85100068864,\n"
                   "      \"computeMajor\": 8, \"computeMinor\": 0,\n"
                   "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                   "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
                   "      \"sharedMemPerBlock\": 49152, \"numSms\": 108\n"
                   "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 166912, "
                   "\"sharedMemPerMultiprocessor\": 167936\n    }");
    }
    SYN_LIT(o, "\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
    syn_put_i64(o, h->rank);
    SYN_LIT(o, ", \"world_size\": ");
    syn_put_i64(o, h->world);
    SYN_LIT(o, ", \"pg_count\": ");
    syn_put_i64(o, h->n_pgs);
    SYN_LIT(o, ", \"pg_config\": [");
    for (int i = 0; i < h->n_pgs; i++) {
        SYN_LIT(o, "{\"pg_name\": \"");
        syn_puts(o, h->pgs[i]->name);
        SYN_LIT(o, "\", \"pg_desc\": \"");
        syn_puts(o, h->pgs[i]->desc);
        SYN_LIT(o, "\", \"backend_config\": \"cuda:nccl\", \"pg_size\": ");
        syn_put_i64(o, h->pgs[i]->size);
        SYN_LIT(o, ", \"ranks\": ");
        syn_puts(o, h->pgs[i]->ranks);
        syn_puts(o, i + 1 < h->n_pgs ? "}, " : "}");
    }
    SYN_LIT(o, "], \"nccl_version\": \"2.20.5\"},\n  \"record_shapes\": 0,\n  \"with_stack\": 0,\n"
               "  \"cuda_runtime_version\": 12010,\n  \"cuda_driver_version\": 12020,\n"
               "  \"trace_id\": \"");
    char id[40];
    snprintf(id, sizeof id, "%016llX%04X", (unsigned long long)(h->seed * 0x9e3779b97f4a7c15ULL), h->rank & 0xffff);
    syn_puts(o, id);
    SYN_LIT(o, "\",\n  \"traceEvents\": [");
    put_meta(o, "process_name", h->pid, 0, "name", "python3", -1);
    put_meta(o, "process_labels", h->pid, 0, "labels", "CPU", -1);
    put_meta(o, "thread_name", h->pid, h->tid_main, "name", "thread ", h->tid_main);
    if (h->tid_bw != h->tid_main)
        put_meta(o, "thread_name", h->pid, h->tid_bw, "name", "thread ", h->tid_bw);
    put_meta(o, "process_name", h->dev, 0, "name", "python3", -1);
    put_meta(o, "process_labels", h->dev, 0, "labels", "GPU ", h->dev);
    put_meta(o, "process_sort_index", h->dev, 0, "sort_index", NULL, 5000000 + h->dev);
    for (int i = 0; i < h->n_streams; i++)
        put_meta(o, "thread_name", h->dev, h->streams[i], "name", "stream ", h->streams[i]);
}

void syn_put_header(const job *j, rank_st *r)
{
    const pg_info *pgs[3] = { &j->world, r->tp_pg, r->dp_pg };
    int64_t streams[3] = { SYN_COMPUTE_STREAM }, n_streams = 1;
    if (j->dp > 1)
        streams[n_streams++] = SYN_NCCL_STREAM;
    if (j->tp > 1)
        streams[n_streams++] = SYN_TP_STREAM;
    syn_hdr h = { r->rank, j->c->ranks, j->c->gpus_per_node, j->c->seed, r->pid, r->tid_main, r->tid_bw, r->dev,
                  pgs, j->tp > 1 ? 3 : 1, streams, (int)n_streams };
    syn_put_header_ex(&r->out, &h);
}

void syn_put_footer_ex(syn_out *o, int64_t end_trace_ns, const char *name)
{
    SYN_LIT(o, ",\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
               "    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    syn_put_us(o, end_trace_ns);
    SYN_LIT(o, "\n  }\n],\n  \"traceName\": \"");
    syn_puts(o, name);
    SYN_LIT(o, "\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    syn_put_i64(o, SYN_BASE_TIME_NS);
    SYN_LIT(o, "\n}\n");
    o->events++;
}

void syn_put_footer(rank_st *r, int64_t end_ns, const char *name) { syn_put_footer_ex(&r->out, T(r, end_ns), name); }

/* Create dir (and parents); refuse a non-empty one unless force. */
int syn_prepare_dir(const char *dir, bool force, cp_error *err)
{
    char *p = cp_xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int rc = cp_error_sys(err, CP_ERR_IO, p, "cannot create output directory");
            free(p);
            return rc;
        }
        *s = '/';
    }
    free(p);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cp_error_sys(err, CP_ERR_IO, dir, "cannot create output directory");
    DIR *d = opendir(dir);
    if (!d)
        return cp_error_sys(err, CP_ERR_IO, dir, "cannot open output directory");
    int nonempty = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            nonempty = 1;
    closedir(d);
    if (nonempty && !force)
        return cp_error_set(err, CP_ERR_USAGE, dir, 0, 0, -1,
                            "output directory is not empty: refusing to write into it (use --force)");
    return 0;
}

/* An injections[] entry: kind and layer first ... */
static void inj_begin(cp_jw *w, const char *kind, const char *layer)
{
    cp_jw_obj_begin(w);
    jw_kv_s(w, "kind", kind);
    jw_kv_s(w, "layer", layer);
}

/* ... then ranks (all, or only_rank >= 0) and the steps s with
 * (s + offset) % every == 0. */
static void inj_end(cp_jw *w, const syn_config *c, int only_rank, int every, int offset)
{
    cp_jw_key(w, "ranks");
    cp_jw_arr_begin(w);
    for (int i = 0; i < c->ranks; i++)
        if (only_rank < 0 || i == only_rank)
            cp_jw_int(w, i);
    cp_jw_arr_end(w);
    cp_jw_key(w, "steps");
    cp_jw_arr_begin(w);
    for (int s = 0; s < c->steps; s++)
        if ((s + offset) % every == 0)
            cp_jw_int(w, s);
    cp_jw_arr_end(w);
    cp_jw_obj_end(w);
}

/* The ground truth: what was injected, where, and what the model did. */
int syn_write_truth(const job *j, const char *dir, const char *ext, cp_error *err)
{
    const syn_config *c = j->c;
    cp_buf b = CP_BUF_INIT;
    cp_jw w;
    cp_jw_init(&w, &b, 2);
    cp_jw_obj_begin(&w);
    jw_kv_s(&w, "schema", "chainprof.synth/1");
    cp_jw_key(&w, "config");
    cp_jw_obj_begin(&w);
    jw_kv_i(&w, "ranks", c->ranks);
    jw_kv_i(&w, "gpus_per_node", c->gpus_per_node);
    jw_kv_i(&w, "tp", j->tp);
    jw_kv_i(&w, "dp", j->dp);
    jw_kv_i(&w, "nodes", j->nodes);
    jw_kv_i(&w, "steps", c->steps);
    cp_jw_key(&w, "seed");
    cp_jw_uint(&w, c->seed);
    jw_kv_i(&w, "layers", c->layers);
    jw_kv_i(&w, "hidden", c->hidden);
    jw_kv_i(&w, "seq_len", c->seq_len);
    jw_kv_i(&w, "micro_batch", c->micro_batch);
    jw_kv_i(&w, "vocab", c->vocab);
    jw_kv_i(&w, "bucket_mb", c->bucket_mb);
    jw_kv_s(&w, "gpu", "NVIDIA A100-SXM4-80GB");
    jw_kv_d(&w, "peak_tflops", c->peak_tflops);
    jw_kv_d(&w, "gemm_eff", c->gemm_eff);
    jw_kv_d(&w, "nvlink_busbw_gbps", c->nvlink_busbw_gbps);
    jw_kv_d(&w, "nic_busbw_gbps", c->nic_busbw_gbps);
    jw_kv_s(&w, "allreduce_scope", cp_layer_key(j->nodes > 1 ? CP_LAYER_INTER : CP_LAYER_INTRA));
    jw_kv_d(&w, "allreduce_busbw_gbps", j->coll_gbps);
    jw_kv_i(&w, "base_time_ns", SYN_BASE_TIME_NS);
    cp_jw_obj_end(&w);
    cp_jw_key(&w, "files");
    cp_jw_arr_begin(&w);
    for (int i = 0; i < c->ranks; i++) {
        char name[64];
        snprintf(name, sizeof name, "rank-%d.json%s", i, ext);
        cp_jw_str(&w, name);
    }
    cp_jw_arr_end(&w);
    cp_jw_key(&w, "injections");
    cp_jw_arr_begin(&w);
    if (c->slow_network > 0) {
        inj_begin(&w, "slow-network", cp_layer_key(CP_LAYER_INTER));
        jw_kv_d(&w, "fraction", c->slow_network);
        jw_kv_d(&w, "link_busbw_gbps", c->nic_busbw_gbps);
        jw_kv_d(&w, "achieved_busbw_gbps", j->coll_gbps);
        inj_end(&w, c, -1, 1, 0);
    }
    if (c->ckpt_s > 0) {
        inj_begin(&w, "sync-checkpoint", cp_layer_key(CP_LAYER_STORAGE));
        jw_kv_d(&w, "seconds", c->ckpt_s);
        jw_kv_i(&w, "every", c->ckpt_every);
        inj_end(&w, c, -1, c->ckpt_every, 1);
    }
    if (c->straggler_rank >= 0) {
        inj_begin(&w, "straggler", cp_layer_key(CP_LAYER_COMPUTE));
        jw_kv_d(&w, "factor", c->straggler_factor);
        inj_end(&w, c, c->straggler_rank, 1, 0);
    }
    if (c->dl_stall_ms > 0) {
        inj_begin(&w, "dataloader-stall", cp_layer_key(CP_LAYER_HOST));
        jw_kv_d(&w, "stall_ms", c->dl_stall_ms);
        jw_kv_i(&w, "every", c->dl_every);
        inj_end(&w, c, -1, c->dl_every, 0);
    }
    if (c->host_work_ms > 0) {
        inj_begin(&w, "host-work", cp_layer_key(CP_LAYER_HOST));
        jw_kv_d(&w, "ms", c->host_work_ms);
        jw_kv_i(&w, "every", c->hw_every);
        inj_end(&w, c, -1, c->hw_every, 0);
    }
    if (c->launch_bound > 0) {
        inj_begin(&w, "launch-bound", cp_layer_key(CP_LAYER_HOST));
        jw_kv_i(&w, "tiny_kernels_per_step", c->launch_bound);
        inj_end(&w, c, -1, 1, 0);
    }
    if (c->pageable_mb > 0) {
        inj_begin(&w, "pageable-h2d", cp_layer_key(CP_LAYER_INTRA));
        jw_kv_d(&w, "mb_per_step", c->pageable_mb);
        inj_end(&w, c, -1, 1, 0);
    }
    cp_jw_arr_end(&w);
    cp_jw_key(&w, "ranks");
    cp_jw_arr_begin(&w);
    for (int i = 0; i < c->ranks; i++) {
        const rank_st *r = &j->r[i];
        cp_jw_obj_begin(&w);
        jw_kv_i(&w, "rank", i);
        jw_kv_i(&w, "node", i / c->gpus_per_node);
        jw_kv_i(&w, "clock_skew_ns", r->shift_ns - SYN_ORIGIN_NS);
        jw_kv_i(&w, "compute_kernel_ns", r->compute_kernel_ns);
        jw_kv_i(&w, "nccl_kernel_ns", r->nccl_kernel_ns);
        jw_kv_i(&w, "nccl_wait_ns", r->nccl_wait_ns);
        jw_kv_i(&w, "exposed_comm_ns", r->exposed_comm_ns);
        jw_kv_i(&w, "tp_kernel_ns", r->tp_kernel_ns);
        jw_kv_i(&w, "checkpoint_ns", r->ckpt_ns);
        jw_kv_i(&w, "dataloader_ns", r->dl_ns);
        jw_kv_i(&w, "host_work_ns", r->hw_ns);
        jw_kv_i(&w, "tiny_kernels", r->tiny_kernels);
        jw_kv_i(&w, "mean_step_ns", r->step_sum_ns / c->steps);
        cp_jw_obj_end(&w);
    }
    cp_jw_arr_end(&w);
    cp_jw_obj_end(&w);
    cp_buf_putc(&b, '\n');
    char path[4096];
    snprintf(path, sizeof path, "%s/synth.json", dir);
    int rc = cp_afile_write(path, b.data, b.len, err);
    cp_buf_free(&b);
    return rc;
}
