#!/bin/bash
# real_h200.sh - two real traces from one H200 (tests/fixtures/h200/README.md):
# the same job with its batch built on the CPU (host-bound) and on the GPU
# (the fix). Checked against what PyTorch itself measured in the same runs:
#  - step p50 within 1 % of the script's own synchronized step times (the
#    ProfilerStep windows run prof.step() to prof.step(), ~0.1 ms more bookkeeping);
#  - the exact view's GPU time (kernels + copies + memsets) equal to the
#    profiler's "Self CUDA time total" (printed to the microsecond);
#  - the host-bound trace's verdict is HOST_WORK_BOUND naming aten::normal_
#    (not LAUNCH_BOUND: it launches nothing), and its estimated gain predicts
#    the fixed job's step time to within 5 %;
#  - the fixed trace has no host-work finding and compute is its largest layer.
set -u
: "${CHAINPROF:?}" "${CP_FIXTURES:?}"
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fx="$CP_FIXTURES/h200"
for v in host gpu; do
    "$CHAINPROF" analyze --no-history --json "$fx/h200-$v-batch.json.gz" > "$tmp/$v.json" ||
        { echo "FAIL: analyze $v exit $?"; exit 1; }
done
python3 - "$tmp" "$fx" <<'PY'
import json, re, statistics, sys
tmp, fx = sys.argv[1], sys.argv[2]
res, torch_step = {}, {}
for v in ("host", "gpu"):
    d = json.load(open("%s/%s.json" % (tmp, v)))
    s = json.load(open("%s/h200-%s-batch.summary.json" % (fx, v)))
    r = d["ranks"][0]
    # the script times steps 5..7 (0-based 4..6) around torch.cuda.synchronize
    want = statistics.median(s["step_s"][4:7]) * 1e9
    got = r["step_time"]["p50_ns"]
    assert abs(got - want) <= 0.01 * want, (v, got, want)
    torch_step[v] = want
    total = float(re.search(r"Self CUDA time total: ([0-9.]+)ms", open("%s/h200-%s-batch.kernels.txt" % (fx, v)).read()).group(1))
    gpu_ns = sum(k["time_ns"] for k in r["exact"]["kernel_types"])
    assert abs(gpu_ns / 1e6 - total) <= 0.0005 + 1e-9, (v, gpu_ns, total)
    res[v] = d
h = res["host"]["findings"][0]
assert h["code"] == "HOST_WORK_BOUND" and "aten::normal_" in h["title"], h
assert res["host"]["verdict"]["bottleneck_layer"] == "host"
step_ns = res["host"]["ranks"][0]["step_time"]["mean_ns"]
predicted = step_ns * (1 - h["estimated_gain_pct"] / 100)
assert abs(predicted - torch_step["gpu"]) <= 0.05 * torch_step["gpu"], (predicted, torch_step["gpu"])
g = res["gpu"]
assert not any(f["code"] == "HOST_WORK_BOUND" for f in g["findings"]), g["findings"]
lb = g["layer_breakdown"][0]
assert lb["compute_pct"] == max(lb[k] for k in ("host_pct", "compute_pct", "intra_pct", "inter_pct", "storage_pct", "idle_pct")), lb
print("ok: step p50 %.3f / %.3f ms, predicted fixed step %.2f ms, measured %.2f ms" %
      (res["host"]["ranks"][0]["step_time"]["p50_ns"] / 1e6, res["gpu"]["ranks"][0]["step_time"]["p50_ns"] / 1e6,
       predicted / 1e6, torch_step["gpu"] / 1e6))
PY
