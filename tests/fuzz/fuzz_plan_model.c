/* fuzz_plan_model.c - plan_model on arbitrary shapes and layouts.
 * The bytes become small integers for every shape and layout field (and a
 * catalog GPU); the model must either refuse the inputs with a message or
 * return finite, positive figures, without sanitizer reports. */
#include "plan/model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two bytes modulo scale; in "wide" mode (first input byte odd) four bytes
 * unreduced, to reach the model's range caps. */
static int g_wide;
static int take(const uint8_t **p, const uint8_t *end, int scale)
{
    if (g_wide) {
        uint32_t v = 0;
        if (*p + 3 < end) v = (uint32_t)(*p)[0] | (uint32_t)(*p)[1] << 8 | (uint32_t)(*p)[2] << 16 | (uint32_t)(*p)[3] << 24, *p += 4;
        return (int)(v & 0x7fffffffu);
    }
    int v = 0;
    if (*p + 1 < end) v = (*p)[0] | (*p)[1] << 8, *p += 2;
    return v % scale;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    g_wide = size > 0 && (data[0] & 1);
    if (size > 0) p++;
    plan_inputs in;
    plan_inputs_init(&in);
    plan_shape *m = &in.shape;
    m->layers = take(&p, end, 200);
    m->hidden = take(&p, end, 40000);
    m->heads = take(&p, end, 300);
    m->kv_heads = take(&p, end, 300);
    m->head_dim = take(&p, end, 300);
    m->ffn_hidden = take(&p, end, 60000);
    m->gated = take(&p, end, 2);
    m->seq = take(&p, end, 300000);
    m->vocab = take(&p, end, 300000);
    m->experts = take(&p, end, 300);
    m->topk = take(&p, end, 16);
    m->moe_ffn_hidden = take(&p, end, 20000);
    m->shared_experts = take(&p, end, 4);
    m->dense_layers = take(&p, end, 10);
    in.gpus = take(&p, end, 65536);
    in.tp = take(&p, end, 64);
    in.pp = take(&p, end, 128);
    in.cp = take(&p, end, 32);
    in.ep = take(&p, end, 256);
    in.vpp = take(&p, end, 8);
    in.sp = take(&p, end, 2);
    in.micro_batch = take(&p, end, 64);
    in.global_batch = take(&p, end, 65536);
    in.recompute = (plan_recompute)take(&p, end, 3);
    in.recompute_layers = take(&p, end, 200);
    in.zero = take(&p, end, 4);
    in.fsdp = take(&p, end, 2);
    in.offload = take(&p, end, 2);
    in.fp8 = take(&p, end, 2);
    in.attn = (plan_attn)take(&p, end, 2);
    in.gpus_per_node = take(&p, end, 80);
    in.power_w = take(&p, end, 2000);
    in.net_efficiency = (take(&p, end, 1000) % 1000) / 1000.0;
    in.ckpt_every_s = take(&p, end, 10000);
    in.ckpt_async = take(&p, end, 2);
    in.data_stall_ms = take(&p, end, 1000);
    size_t gi = (size_t)take(&p, end, 64);
    in.recompute = (plan_recompute)((int)in.recompute % 3);
    in.attn = (plan_attn)((int)in.attn % 2);
    in.zero %= 4;
    in.gpu = hw_gpu_at(gi % hw_gpu_count());
    plan_result r;
    char err[256];
    if (plan_model(&in, &r, err, sizeof err) == 0) {
        if (!(r.step_time_s > 0) || !isfinite(r.step_time_s) || !isfinite(r.mfu) || !isfinite(r.memory.total_bytes))
            abort();
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
