#!/usr/bin/env python3
"""kineto_gen.py - write a large synthetic PyTorch profiler (Kineto) trace for
benchmarks: bench/kineto_gen.py OUT.json SIZE_MB [SEED]

The mix follows real PyTorch 2.x traces: aten ops with shape/type arrays,
runtime launches with correlation ids and ac2g flows, kernels with the full
CUPTI arg set, memcpys, NCCL collectives with record_param_comms args,
ProfilerStep annotations, metadata, fractional microsecond timestamps and
baseTimeNanoseconds after traceEvents. Output never goes into the repository.
"""
import random
import sys

out, size_mb = sys.argv[1], float(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
target = int(size_mb * 1e6)

KERNELS = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>, true>",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
]
OPS = ["aten::linear", "aten::addmm", "aten::add_", "aten::mul", "aten::softmax", "aten::layer_norm",
       "aten::copy_", "aten::empty", "aten::view", "aten::matmul"]

pid, tid, tid2 = 2910249, 2919752, 2910249
buf = []
n = 0
ts = 4458676524648.797
corr = 10000
ext = 1
w = open(out, "w")
w.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", '
        '"totalGlobalMem": 84974239744, "computeMajor": 8, "computeMinor": 0, "numSms": 108}\n  ],\n'
        '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "pg_count": 1, "pg_config": '
        '[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 8, '
        '"ranks": [0, 1, 2, 3, 4, 5, 6, 7]}], "nccl_version": "2.20.5"},\n  "traceEvents": [\n')
written = 300
step = 0
first = True


def emit(s):
    global written, first
    if not first:
        buf.append(",\n")
    first = False
    buf.append(s)
    written += len(s) + 2


gts = ts + 50
while written < target:
    if rng.random() < 0.002:
        emit('  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": %d, "tid": %d, '
             '"ts": %.3f, "dur": %.3f, "args": {"External id": %d, "Record function id": 0, "Ev Idx": %d}}'
             % (step, pid, tid2, ts, 95000.123, ext, ext))
        step += 1
    op = rng.choice(OPS)
    d = rng.uniform(3, 200)
    emit('  {"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %.3f, "dur": %.3f, '
         '"args": {"External id": %d, "Record function id": 0, "Sequence number": %d, "Fwd thread id": 1, '
         '"Ev Idx": %d, "Input Dims": [[8, 1024, 4096], [4096, 4096], []], '
         '"Input type": ["c10::Half", "c10::Half", ""], "Input Strides": [[4194304, 4096, 1], [4096, 1], []]}}'
         % (op, pid, tid, ts, d, ext, ext * 2, ext))
    if rng.random() < 0.6:
        corr += 1
        lts = ts + d * 0.3
        emit('  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d, '
             '"ts": %.3f, "dur": %.3f, "args": {"External id": %d, "cbid": 211, "correlation": %d}}'
             % (pid, tid, lts, 4.871, ext, corr))
        emit('  {"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %.3f, "cat": "ac2g", "name": "ac2g"}'
             % (corr, pid, tid, lts))
        gts = max(gts, lts + 5) + rng.uniform(0.5, 3)
        kd = rng.uniform(2, 900)
        if rng.random() < 0.05:
            emit('  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, '
                 'unsigned long, ncclWork*)", "pid": 0, "tid": 20, "ts": %.3f, "dur": %.3f, "args": {"External id": '
                 '%d, "queued": 0, "device": 0, "context": 1, "stream": 20, "correlation": %d, '
                 '"registers per thread": 96, "shared memory": 87568, "blocks per SM": 0.074074, "warps per SM": '
                 '1.259259, "grid": [8, 1, 1], "block": [544, 1, 1], "est. achieved occupancy %%": 0, '
                 '"Collective name": "allreduce", "In msg nelems": 2049000, "Out msg nelems": 2049000, '
                 '"Group size": 8, "dtype": "Float", "In split size": "[]", "Out split size": "[]", '
                 '"Process Group Name": "0", "Process Group Description": "default_pg", '
                 '"Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}' % (gts, kd * 5, ext, corr))
        elif rng.random() < 0.1:
            emit('  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, '
                 '"tid": 7, "ts": %.3f, "dur": %.3f, "args": {"External id": %d, "device": 0, "context": 1, '
                 '"stream": 7, "correlation": %d, "bytes": 4194304, "memory bandwidth (GB/s)": 21.37}}'
                 % (gts, kd, ext, corr))
        else:
            emit('  {"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, '
                 '"args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, '
                 '"correlation": %d, "registers per thread": 32, "shared memory": 0, "blocks per SM": 75.851852, '
                 '"warps per SM": 303.407407, "grid": [8192, 1, 1], "block": [128, 1, 1], '
                 '"est. achieved occupancy %%": 100}}' % (rng.choice(KERNELS), gts, kd, ext, corr))
        emit('  {"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
             % (corr, gts))
        gts += kd
    ts += d + rng.uniform(0.1, 5)
    ext += 1
    if len(buf) > 4096:
        w.write("".join(buf))
        buf.clear()
w.write("".join(buf))
w.write('\n  ],\n  "traceName": "bench.json",\n  "displayTimeUnit": "ms",\n'
        '  "baseTimeNanoseconds": 1711964646000000000\n}\n')
w.close()
