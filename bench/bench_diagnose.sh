#!/bin/bash
# bench_diagnose.sh - time `chainprof diagnose` on generated failure logs.
#
#   bench/bench_diagnose.sh [CHAINPROF] [TOTAL_MB] [RANKS]
#
# Writes RANKS per-rank console logs totalling about TOTAL_MB (default 1024)
# into a temporary directory: NCCL_DEBUG=INFO init (channels, rings, trees),
# then training-step lines with ISO timestamps and periodic NCCL INFO lines,
# and at the end an IB completion error on one rank followed by watchdog
# timeouts on all - so the whole file is parsed and the verdict needs the
# cross-rank order. Prints size, wall time, throughput and the top verdict.
# Not part of the test suite.
set -eu
CP=${1:-build/chainprof}
TOTAL_MB=${2:-1024}
RANKS=${3:-8}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" "$TOTAL_MB" "$RANKS" <<'PY'
import os, sys
d, total_mb, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per_rank = total_mb * 1024 * 1024 // ranks
for r in range(ranks):
    host, dev = "node%d" % (r // 8), r % 8
    p = "%s:%d:%d [%d] NCCL INFO " % (host, 4000 + r, 4100 + r, dev)
    with open(os.path.join(d, "rank%d.log" % r), "w") as f:
        head = [p + "Bootstrap : Using eth0:10.0.%d.1<0>" % (r // 8),
                p + "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
                p + "Using network IB"]
        head += [p + "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read" % (c, r, dev, (r + 1) % ranks, (dev + 1) % 8) for c in range(32)]
        head += [p + "Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA" % (c, r, dev, (r + 8) % ranks, dev, c % 2) for c in range(32)]
        head += [p + "Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1"]
        f.write("\n".join("[rank%d]:%s" % (r, x) for x in head) + "\n")
        written, step, sec = f.tell(), 0, 0
        block = []
        while written < per_rank - 4096:
            step += 1
            sec += 1
            ts = "2025-03-%02d %02d:%02d:%02d,%03d" % (1 + sec // 86400 % 28, sec // 3600 % 24, sec // 60 % 60, sec % 60, step % 1000)
            line = "[rank%d]:[%s] INFO - step %d loss %.4f lr 3.0e-4 grad_norm 1.02 tokens/s 51234.5 mem 61.2GiB\n" % (r, ts, step, 2.0 + (step % 97) / 1000)
            if step % 10 == 0:
                line += "[rank%d]:%sChannel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n" % (r, p, step % 32, r, dev, (r + 1) % ranks, dev)
            block.append(line)
            if len(block) == 2000:
                s = "".join(block)
                f.write(s)
                written += len(s)
                block = []
        f.write("".join(block))
        end = "2025-03-29 10:00:%02d" % (r % 60)
        if r == ranks // 2:
            f.write("[rank%d]:[2025-03-29 09:50:00,000] INFO - step %d\n" % (r, step + 1))
            f.write("[rank%d]:%s".replace("NCCL INFO ", "") % (r, p.replace("NCCL INFO ", "")) +
                    "transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n")
        f.write("[rank%d]:[E329 10:00:%02d.000000000 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: "
                "WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.\n"
                % (r, r % 60, r, step))
PY

bytes=$(du -cb "$dir"/*.log | tail -1 | cut -f1)
lines=$(cat "$dir"/*.log | wc -l)
# wall time and CPU time (user+sys) of the diagnose process: on a shared,
# loaded machine the CPU time is the figure that does not depend on the load
python3 - "$CP" "$dir" "$bytes" "$lines" "$RANKS" <<'PY'
import json, resource, subprocess, sys, time
cp, d, b, n, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
t0 = time.time()
out = subprocess.run([cp, "diagnose", "--json", d], check=True, capture_output=True).stdout
wall = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
res = json.loads(out)
print("inputs: %s files, %.1f MB, %d lines" % (ranks, b / 1e6, n))
print("wall: %.2f s (%.0f MB/s)  cpu: %.2f s user+sys (%.0f MB/s, %.1f M lines/s)  max rss: %.0f MB"
      % (wall, b / 1e6 / wall, cpu, b / 1e6 / cpu, n / 1e6 / cpu, ru.ru_maxrss / 1024))
print("top verdict: %s (%.2f), first failure rank %s"
      % (res["verdicts"][0]["code"], res["verdicts"][0]["confidence"], res["first_failure"]["rank"]))
PY
