#!/usr/bin/env bash
# GPU paths of chainprof probe through the fake libraries built from
# tests/fakes: one GPU (rows with peaks derived from the fake NVML), two GPUs
# (P2P matrix), no device, a missing symbol, no library: each says why;
# GEMM rows in bf16/fp16/tf32/fp8 and fp8's reason on a pre-sm_89 GPU.
set -u
command -v python3 >/dev/null || { echo "skip: python3 is needed to check the JSON"; exit 77; }
fakes="$CP_BUILD_DIR/fakes"
[ -f "$fakes/one/libcudart.so" ] || { echo "skip: fake GPU libraries not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() { # variant gpus [probes...] -> JSON in $tmp/out.json
    v=$1 g=$2; shift 2
    CHAINPROF_GPU_LIB_DIR="$fakes/$v" FAKE_GPUS=$g "$CHAINPROF" probe intra memory "$@" --quick --no-history \
        --size 16M --json > "$tmp/out.json" || fail "probe with fake $1 exit $?"
}
run one 1 compute
python3 - "$tmp/out.json" <<'PY' || fail "one GPU"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["topology"]["gpu_runtime"]
assert g["available"] and g["devices"] == 1 and g["nvml"], g
rows = {r["metric"]: r for r in d["results"]}
r = rows["gpu0_device_copy_bandwidth"]
assert abs(r["peak"] - 3352.32) < 1e-6 and r["value"] > 0, r
assert abs(r["efficiency"] - r["value"] / r["peak"]) < 1e-12
for k in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"):
    r = rows["gpu0_%s_bandwidth" % k]
    assert abs(r["peak"] - 32 * 128 / 130 * 16 / 8) < 1e-9 and r["layer"] == "intra", r
assert not any(m.startswith("p2p_") for m in rows)
assert d["topology"]["gpu_devices"][0]["name"] == "H100 80GB HBM3 (fake 0)"
# the fake GEMM sleeps 1 ms: 2 x 4096^3 / 1 ms = 137.4 TFLOP/s is the ceiling
for p in ("bf16", "fp16", "tf32"):
    r = rows["gpu0_gemm_%s_tflops" % p]
    assert 0 < r["value"] <= 137.5 and r["unit"] == "TFLOP/s" and r["layer"] == "compute", r
# the peak is the catalog row the device name resolves to (H100 SXM: 989.4 bf16/fp16, 494.7 tf32)
for p, peak in (("bf16", 989.4), ("fp16", 989.4), ("tf32", 494.7), ("fp8", 1978.9)):
    r = rows["gpu0_gemm_%s_tflops" % p]
    assert r["peak"] == peak and "catalog row H100-SXM5-80GB" in r["method"], r
    assert abs(r["efficiency"] - r["value"] / peak) < 1e-12, r
# fp8 GEMM: the fake accepts it only with E4M3 A/B, TN, scale pointers; 0.5 ms per GEMM
r = rows["gpu0_gemm_fp8_tflops"]
assert 0 < r["value"] <= 275 and r["unit"] == "TFLOP/s" and "fp8 e4m3" in r["method"], r
PY
# a GPU older than sm_89: the fp8 row stays, value null, saying why; the others are measured
FAKE_CC=8.0 run one 1 compute
python3 - "$tmp/out.json" <<'PY' || fail "fp8 on compute capability 8.0"
import json, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["results"]}
r = rows["gpu0_gemm_fp8_tflops"]
assert r["value"] is None and r["efficiency"] is None, r
assert r["method"] == "not measured: needs compute capability 8.9 or newer; GPU 0 is 8.0", r
assert rows["gpu0_gemm_bf16_tflops"]["value"] > 0
PY
run one 2
python3 - "$tmp/out.json" <<'PY' || fail "two GPUs"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["metric"] for r in d["results"]}
assert {"p2p_bandwidth_gpu0_gpu1", "p2p_bandwidth_gpu1_gpu0", "gpu1_device_copy_bandwidth"} <= rows, rows
PY
for v in nodev missing absent; do
    run $v 1
    python3 - "$tmp/out.json" $v <<'PY' || fail "$v"
import json, sys
d = json.load(open(sys.argv[1])); v = sys.argv[2]
g = d["topology"]["gpu_runtime"]
want = {"nodev": "no device:", "missing": "symbol missing: cudaMemcpy", "absent": "library not found:"}[v]
assert not g["available"] and g["reason"].startswith(want), g
assert not any("gpu" in r["metric"] for r in d["results"])
assert any(r["metric"] == "triad_bandwidth" for r in d["results"])
PY
done
echo ok
