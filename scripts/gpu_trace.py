#!/usr/bin/env python3
"""gpu_trace.py - capture a PyTorch profiler (Kineto) trace of a small
training job on this machine's GPU, for `chainprof analyze` to read.

Why it exists: the bundled examples and the public traces were recorded on
other people's machines; this one records a trace on the machine at hand
(scripts/gpu_check.sh runs it on a lent GPU machine), together with
PyTorch's own per-kernel totals, so chainprof's breakdown can be checked
against the framework's numbers from the same run.

The job: a pre-norm transformer encoder (bf16 autocast, fused AdamW), a
host-side batch built on the CPU and copied from pinned memory every step,
and, when torch.distributed with NCCL starts, one all-reduce of the
flattened gradients per step (world size 1: NCCL still launches its kernel).
The profiler records ACTIVE steps after 2 skipped and 2 warm-up steps.
--gpu-batch builds the batch on the GPU instead (the fix for the host-bound
step the default reproduces), so the two traces make a before/after pair.

Usage: python3 scripts/gpu_trace.py OUT_DIR [--layers N] [--d-model D] [--seq S] [--batch B]
                                            [--active N] [--gpu-batch]
Writes OUT_DIR/trace.json (Chrome trace), OUT_DIR/torch_kernels.txt
(profiler key averages by CUDA time) and OUT_DIR/torch_summary.json (step
times, FLOPs per step, achieved TFLOP/s).
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--d-model", type=int, default=2048)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--active", type=int, default=4)
    ap.add_argument("--gpu-batch", action="store_true")
    args = ap.parse_args()
    import torch
    import torch.nn as nn
    from torch.profiler import ProfilerActivity, profile, schedule

    if not torch.cuda.is_available():
        print("gpu_trace: no CUDA device", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    dev = torch.device("cuda", 0)
    d, L, S, B = args.d_model, args.layers, args.seq, args.batch
    layer = nn.TransformerEncoderLayer(d_model=d, nhead=d // 128, dim_feedforward=4 * d, batch_first=True,
                                       norm_first=True, dropout=0.0)
    model = nn.TransformerEncoder(layer, num_layers=L, enable_nested_tensor=False).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    params = sum(p.numel() for p in model.parameters())

    dist = None
    try:
        import torch.distributed as tdist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        tdist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
        dist = tdist
    except Exception as e:  # the trace is still useful without communication
        print("gpu_trace: no NCCL process group (%s)" % e, file=sys.stderr)

    host_batch = torch.empty(B, S, d, dtype=torch.bfloat16, pin_memory=True)

    def step():
        if args.gpu_batch:
            x = torch.randn(B, S, d, dtype=torch.bfloat16, device=dev)
        else:
            host_batch.normal_()                  # the "data loader": CPU work every step
            x = host_batch.to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = model(x)
            loss = y.float().pow(2).mean()
        loss.backward()
        if dist is not None:
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            flat = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(flat)
            off = 0
            for g in grads:
                g.copy_(flat[off:off + g.numel()].view_as(g))
                off += g.numel()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = []
    A = args.active
    sched = schedule(wait=2, warmup=2, active=A, repeat=1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched) as prof:
        for _ in range(5 + A):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            prof.step()
    prof.export_chrome_trace(os.path.join(args.out, "trace.json"))
    with open(os.path.join(args.out, "torch_kernels.txt"), "w") as f:
        f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
    # Megatron-style count for the matmuls: 6 x params x tokens, plus attention
    # 6 x 2 x B x S^2 x d per layer (QK^T and AV, forward + 2x backward)
    tokens = B * S
    flops = 6 * params * tokens + 12 * B * S * S * d * L
    active = sorted(times[4:4 + A])
    med = (active[(A - 1) // 2] + active[A // 2]) / 2
    summary = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "params": params,
               "layers": L, "d_model": d, "seq": S, "batch": B, "gpu_batch": args.gpu_batch,
               "nccl": dist is not None, "step_s": times, "median_active_step_s": med,
               "flops_per_step": flops, "tflops_median_active": flops / med / 1e12}
    with open(os.path.join(args.out, "torch_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary))
    if dist is not None:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
