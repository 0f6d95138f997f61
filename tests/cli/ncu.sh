#!/usr/bin/env bash
# analyze on Nsight Compute results: a real export gives kernels_roofline[] and its findings; an .ncu-rep
# is exported through the ncu on PATH (a stand-in here that prints a raw-page CSV); without ncu it exits 5
# with the exact command.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
data=${CHAINPROF_DATA:-$CP_DATA_DIR}
f="$data/ncu/volta-cc70-curand-pi-default-sections-text-aalto-scicomp.txt"
if [ -f "$f" ]; then
  "$CHAINPROF" analyze "$f" --json > "$tmp/out.json" || { echo "analyze failed"; exit 1; }
  $py - "$tmp/out.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernels_roofline"]
assert len(k) == 1 and k[0]["class"] == "small_grid", k
assert k[0]["name"].startswith("throw_dart("), k[0]["name"]
assert [x["code"] for x in d["findings"]] == ["KERNEL_SMALL_GRID"], d["findings"]
assert d["evidence"][0]["kind"] == "ncu"
PY
  "$CHAINPROF" analyze "$f" --format csv > "$tmp/out.csv" || exit 1
  grep -q "^# kernels_roofline" "$tmp/out.csv" || { echo "no kernels_roofline block in CSV"; exit 1; }
fi
# joined with a trace: a synthesized A100 job and an ncu export (written here) of its most used GEMM at
# 40 % of the bf16 tensor peak with full occupancy
"$CHAINPROF" synth --out "$tmp/syn" --ranks 1 --steps 3 > /dev/null || { echo "synth failed"; exit 1; }
k=ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt
row() { echo "\"0\",\"9\",\"python3\",\"127.0.0.1\",\"$k\",\"1\",\"7\",\"(128, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"8.0\",\"$1\",\"$2\",\"$3\",\"$4\""; }
{
  echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
  row "GPU Speed Of Light Throughput" "Duration" "usecond" "4,665.00"
  row "GPU Speed Of Light Throughput" "Compute (SM) Throughput" "%" "42.10"
  row "GPU Speed Of Light Throughput" "Memory Throughput" "%" "30.50"
  row "Occupancy" "Theoretical Occupancy" "%" "100"
  row "Occupancy" "Achieved Occupancy" "%" "97.20"
  row "Launch Statistics" "Waves Per SM" "" "151.70"
  row "Command line profiler metrics" "sm__ops_path_tensor_src_bf16_dst_fp32.sum" "" "582,192,000,000"
  row "Command line profiler metrics" "dram__bytes.sum" "Gbyte" "2.00"
} > "$tmp/gemm.csv"
"$CHAINPROF" analyze "$tmp/syn/rank-0.json" "$tmp/gemm.csv" --json > "$tmp/e2e.json" || { echo "analyze trace + ncu failed"; exit 1; }
$py - "$tmp/e2e.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernels_roofline"][0]
assert k["peak_flops_source"] == "catalog" and k["peak_flops_per_s"] == 312e12, k  # A100 bf16 from the trace's GPU
assert abs(k["roofline_pct"] - 40) < 1e-9, k
assert k["matched_by"] == "name" and k["trace_launches"] > 0, k
assert d["roofline"]["gpu"] == "A100-SXM4-80GB"
f = [x for x in d["findings"] if x["code"] == "KERNEL_BELOW_ROOFLINE"]
assert f and f[0]["layer"] == "compute", d["findings"]
want = 100 * k["trace_time_ns"] / d["verdict"]["amortised_step_time_ns"] * (1 - 0.4 / 0.8)
assert abs(f[0]["estimated_gain_pct"] - want) < 1e-6 or "capped" in f[0]["gain_assumption"], (f[0], want)
PY
# the stand-in ncu: prints a raw-page export for --import FILE --csv --page raw
mkdir -p "$tmp/bin"
cat > "$tmp/bin/ncu" <<'SH'
#!/bin/sh
[ "$1" = "--import" ] && [ "$3" = "--csv" ] && [ "$4" = "--page" ] && [ "$5" = "raw" ] || exit 2
printf '%s\n' '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","dram__bytes.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed","gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed","launch__waves_per_multiprocessor"'
printf '%s\n' '"","","","","","","","","","","","usecond","Mbyte","%","%",""'
printf '%s\n' '"0","7","p","h","scale(float *)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","40.5","12.0","8.1","20.0","0.12"'
SH
chmod +x "$tmp/bin/ncu"
touch "$tmp/job.ncu-rep"
PATH="$tmp/bin:$PATH" "$CHAINPROF" analyze "$tmp/job.ncu-rep" --json > "$tmp/rep.json" || { echo "analyze .ncu-rep failed"; exit 1; }
$py - "$tmp/rep.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernels_roofline"]
assert len(k) == 1 and k[0]["duration_ns"] == 40500 and k[0]["dram_bytes"] == 12e6, k
assert k[0]["class"] == "small_grid", k
assert d["evidence"][0]["form"] == "raw_csv"
PY
PATH=/nonexistent "$CHAINPROF" analyze "$tmp/job.ncu-rep" 2> "$tmp/err"; rc=$?
[ $rc -eq 5 ] || { echo "expected exit 5, got $rc"; cat "$tmp/err"; exit 1; }
grep -q "ncu --import $tmp/job.ncu-rep --csv --page raw > $tmp/job.csv" "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo ok
