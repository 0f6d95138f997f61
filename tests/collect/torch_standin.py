"""A PyTorch-style training loop that knows nothing of chainprof (for
tests/cli/run_python.sh, run with the fake torch of tests/collect/faketorch):
a DataLoader whose items are read from a dataset file, an optimizer step per
batch, torch.save of a checkpoint every few steps. chainprof.autotorch must
find the steps, the data-loader waits and the checkpoint regions on its own.

usage: torch_standin.py DATA_FILE CKPT_DIR STEPS CKPT_EVERY OUT.json
"""
import json
import os
import sys

import torch
from torch.utils.data import DataLoader

data, ckpt_dir, steps, every, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
os.makedirs(os.path.dirname(data), exist_ok=True)
with open(data, "wb") as f:
    f.write(os.urandom(65536 * steps))
os.makedirs(ckpt_dir, exist_ok=True)


class Shards:
    def __len__(self):
        return steps

    def __getitem__(self, i):
        with open(data, "rb") as f:
            f.seek(i * 65536)
            return f.read(65536)


w = [1.0, 0.0]
opt = torch.optim.SGD([w])
saved = 0
for i, batch in enumerate(DataLoader(Shards())):
    x = 0
    for k in range(30000):
        x += k * len(batch)
    w[1] = x % 7
    opt.step()
    if i % every == every - 1:
        torch.save({"w": w, "pad": "x" * 100000}, os.path.join(ckpt_dir, "state-%d.bin" % i))
        saved += 1
json.dump({"steps": steps, "saved": saved}, open(out, "w"))
