#!/bin/bash
# hostops.sh - the host ops the GPU waited for, on a hand-made Kineto trace
# whose answer is known to the microsecond:
#   step [0, 1000) us; main thread: A [0, 600) holding B [100, 500);
#   a second thread: C [200, 300); one kernel [600, 1000).
# The GPU idles over [0, 600): A's self time there is [0, 100) + [500, 600)
# = 200 us, B's 400 us, C's 100 us (threads are credited independently).
# A long op without launches (B here, 400 us of a 1 ms step) is host work:
# with a 1 ms threshold per call it is not, so the verdict stays
# LAUNCH_BOUND; a second trace with B at 4 ms makes it HOST_WORK_BOUND.
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
trace() { # B_END_US STEP_END_US -> $tmp/t.json
    local b=$1 s=$2
    cat > "$tmp/t.json" <<JSON
{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000000, "dur": $s},
  {"ph": "X", "cat": "cpu_op", "name": "A", "pid": 1, "tid": 1, "ts": 1000000, "dur": $((b + 100))},
  {"ph": "X", "cat": "cpu_op", "name": "B", "pid": 1, "tid": 1, "ts": 1000100, "dur": $((b - 100))},
  {"ph": "X", "cat": "cpu_op", "name": "C", "pid": 1, "tid": 2, "ts": 1000200, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": $((1000000 + b + 90)), "dur": 5, "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": $((1000000 + b + 100)), "dur": $((s - b - 100)),
   "args": {"device": 0, "stream": 7, "correlation": 7}}
 ]}
JSON
}
trace 500 1000
"$CHAINPROF" analyze --no-history --json "$tmp/t.json" > "$tmp/a.json" || { echo "FAIL: analyze exit $?"; exit 1; }
python3 - "$tmp/a.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in d["host_ops"]}
want = {"A": 200000, "B": 400000, "C": 100000}
for k, v in want.items():
    assert rows[k]["exposed_ns"] == v and rows[k]["calls"] == 1, (k, rows.get(k))
assert [r["name"] for r in d["host_ops"]] == ["B", "A", "C"], d["host_ops"]
assert abs(rows["B"]["exposed_pct"] - 40.0) < 1e-9, rows["B"]
codes = [f["code"] for f in d["findings"]]
assert codes and codes[0] == "LAUNCH_BOUND" and "HOST_WORK_BOUND" not in codes, codes
assert any("B 40.0 %" in e for e in d["findings"][0]["evidence"]), d["findings"][0]["evidence"]
PY
trace 5000 6000
"$CHAINPROF" analyze --no-history --json "$tmp/t.json" > "$tmp/b.json" || { echo "FAIL: analyze exit $?"; exit 1; }
python3 - "$tmp/b.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"]
assert f[0]["code"] == "HOST_WORK_BOUND" and f[0]["title"] == "the GPU waits for host work in B", f[0]
# B: [100, 5000) us of a 6000 us step = 81.67 %; A's 200 us are left to LAUNCH_BOUND (3.3 % >= 2 %)
assert abs(f[0]["estimated_gain_pct"] - 100 * 4900 / 6000) < 1e-9, f[0]
assert [x["code"] for x in f] == ["HOST_WORK_BOUND", "LAUNCH_BOUND"], [x["code"] for x in f]
assert abs(f[1]["estimated_gain_pct"] - 100 * 200 / 6000) < 1e-9, f[1]
PY
echo ok
