"""A training-loop stand-in for the `chainprof run` tests (real python3, no
torch): per step busy host work, a read of a dataset file, and every few
steps a checkpoint written and fsync'ed; in step 1 a forked worker reads
the whole dataset file. It times its own storage calls and
counts its own bytes, and writes them to the JSON file given last, so the
test can hold chainprof's figures against the job's own.

usage: train_standin.py DATA_DIR CKPT_DIR STEPS CKPT_EVERY OUT.json
"""
import json
import os
import sys
import time

import chainprof

data_dir, ckpt_dir, steps, every, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
os.makedirs(data_dir, exist_ok=True)
os.makedirs(ckpt_dir, exist_ok=True)
shard = os.path.join(data_dir, "shard0.bin")
with open(shard, "wb") as f:  # before the first step: not part of any step
    f.write(os.urandom(1 << 20))

own = {"storage_ns": 0, "write_bytes": 0, "read_bytes": 0, "steps": steps, "ckpt_writes": 0, "step_ns": [],
       "worker_read_bytes": 0}


def timed(fn, *a):
    t0 = time.perf_counter_ns()
    r = fn(*a)
    own["storage_ns"] += time.perf_counter_ns() - t0
    return r


for s in range(steps):
    t_step = time.perf_counter_ns()
    with chainprof.step(s):
        with chainprof.region("forward"):
            x = 0
            for i in range(60000):  # busy host work
                x += i * i
        fd = timed(os.open, shard, os.O_RDONLY)
        for k in range(4):
            b = timed(os.pread, fd, 65536, k * 65536)
            own["read_bytes"] += len(b)
        timed(os.close, fd)
        if s == 1:  # a forked worker (as a data-loader worker) reads the shard and leaves through os._exit
            pid = os.fork()
            if pid == 0:
                with open(shard, "rb") as f:
                    f.read()
                os._exit(0)
            os.waitpid(pid, 0)
            own["worker_read_bytes"] = 1 << 20
        if s % every == every - 1:
            path = os.path.join(ckpt_dir, "step%d.pt" % s)
            blob = os.urandom(4 * 1024 * 1024 + s)
            fd = timed(os.open, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            n = timed(os.write, fd, blob)
            own["write_bytes"] += n
            timed(os.fsync, fd)
            timed(os.close, fd)
            own["ckpt_writes"] += 1
    own["step_ns"].append(time.perf_counter_ns() - t_step)

with open(out, "w") as f:
    json.dump(own, f)
