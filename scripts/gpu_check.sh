#!/usr/bin/env bash
# gpu_check.sh - the GPU paths of chainprof on a real GPU machine, in one go.
#
# Meant for a lent machine (e.g. one H200, 16 cores, no network): it builds
# chainprof from this checkout with what is installed (no package installs),
# runs the GPU probes for real and copies every output into $OUT (default
# ./out/gpu-check). Each step has a timeout and a failed step never stops the
# next one; GPU_CHECK_DEADLINE (epoch seconds) caps every step so the whole
# script ends by then (steps that would start with under 5 s left are
# skipped and say so). Steps, most important first:
#   1. environment: nvidia-smi, topology, where the CUDA/cuBLASLt/NCCL/NVML
#      libraries are (toolkit, driver, and the nvidia-* Python wheels under
#      /opt or /usr/local; their directories go on LD_LIBRARY_PATH for dlopen);
#   2. build: cmake Release into build-gpu (target chainprof, and the
#      declaration check against the CUDA/NCCL headers when they exist);
#      a chainprof already built (CHAINPROF_BIN, build-gpu/, build/) is used
#      when cmake or a dependency is missing, or when GPU_CHECK_NO_BUILD=1;
#   3. `chainprof probe compute memory intra coll --quick --json` (GEMM
#      bf16/fp16/tf32/fp8, HBM, H2D/D2H, coll on GPU buffers through NCCL by
#      auto): the figures that must come back, first;
#   4. coll with --backend nccl (a sweep to 64 MiB);
#   5. compute, memory and intra in full (larger GEMMs and arrays);
#   6. with GPU_CHECK_BENCH=1: bench/bench_probe.sh (triad vs STREAM, storage
#      vs fio in GPU_CHECK_STORAGE_DIR) and bench/bench_net.sh (TCP vs iperf3),
#      when those references are on the PATH;
#   7. a Kineto trace of a small training job (scripts/gpu_trace.py, when
#      python3 has torch) and `chainprof analyze` of it;
#   8. coll --backend mpi, under `mpirun -np 1` when mpirun exists, and coll
#      in full;
#   9. summary.txt: the GEMM rows, NCCL status and the worst `wrong`.
# Usage: bash scripts/gpu_check.sh   (OUT=/some/dir to choose the output)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/out/gpu-check}
mkdir -p "$OUT"
log() { echo "[gpu_check $(date -u +%H:%M:%S)] $*" | tee -a "$OUT/steps.log" >&2; }
step() { # name timeout_s command... : stdout -> $OUT/name.out, stderr -> $OUT/name.err
    local name=$1 t=$2; shift 2
    if [ -n "${GPU_CHECK_DEADLINE:-}" ]; then
        local left=$(( GPU_CHECK_DEADLINE - $(date +%s) ))
        [ "$left" -lt "$t" ] && t=$left
        if [ "$t" -lt 5 ]; then log "$name: skipped, ${left}s left before the deadline"; return 124; fi
    fi
    log "$name: $* (timeout ${t}s)"
    timeout --kill-after=10 "$t" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
    local rc=$?
    log "$name: exit $rc"
    echo "$rc" > "$OUT/$name.rc"
    return $rc
}

# ---- 1. environment ----
{
    date -u; uname -a; nproc
    command -v nvidia-smi >/dev/null && nvidia-smi && nvidia-smi topo -m &&
        nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
            --format=csv
    echo "--- compilers/tools"; for t in cmake gcc cc clang mpirun pkg-config python3; do
        printf '%s: %s\n' "$t" "$(command -v $t || echo missing)"; done
} > "$OUT/env.txt" 2>&1
libdirs=""
# the toolkit first, then the driver's own directory, then the Python wheels (nvidia/*/lib)
for pat in 'libcudart.so*' 'libcublasLt.so*' 'libnccl.so*' 'libnvidia-ml.so*'; do
    for f in $(find -H /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/local/nvidia/lib64 \
                 /usr/lib/x86_64-linux-gnu /usr/lib64 -maxdepth 1 -name "$pat" 2>/dev/null | head -20;
               find -H /opt /usr/local/lib /usr/lib/python3 -maxdepth 8 -path '*nvidia*' -name "$pat" 2>/dev/null | head -20); do
        echo "$f" >> "$OUT/env.txt"
        d=$(dirname "$f"); case ":$libdirs:" in *":$d:"*) ;; *) libdirs="$libdirs:$d" ;; esac
    done
done
export LD_LIBRARY_PATH="${libdirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >> "$OUT/env.txt"
log "libraries: ${libdirs#:}"

# ---- 2. build ----
bin=""
if [ "${GPU_CHECK_NO_BUILD:-0}" != 1 ] && command -v cmake >/dev/null; then
    step configure 60 cmake -S "$root" -B "$root/build-gpu" -DCMAKE_BUILD_TYPE=Release &&
        step build 150 cmake --build "$root/build-gpu" -j "$(nproc)" --target chainprof &&
        bin="$root/build-gpu/chainprof"
    # our declarations against the real headers (only configured when they exist)
    grep -q vendor_decls "$root/build-gpu/Makefile" "$root/build-gpu/build.ninja" 2>/dev/null &&
        step vendor_decls 60 cmake --build "$root/build-gpu" --target vendor_decls
fi
if [ -z "$bin" ]; then
    for b in "${CHAINPROF_BIN:-}" "$root/build-gpu/chainprof" "$root/build/chainprof"; do
        [ -n "$b" ] && [ -x "$b" ] && "$b" version > /dev/null 2>&1 && { bin=$b; break; }
    done
fi
if [ -z "$bin" ]; then
    log "no chainprof binary (see configure.err / build.err): nothing to run"
    exit 1
fi
log "binary: $bin"
"$bin" version > "$OUT/version.txt" 2>&1

# ---- 3. the probes, quick ----
common=(--no-history --timeout 40)
step probe 90 "$bin" probe compute memory intra coll --quick "${common[@]}" --json -o "$OUT/probe.html"

# ---- 4. coll on GPU buffers (a short sweep) ----
sweep=(--max-bytes 64M --factor 4 --iters 10 --warmup 3)
step coll_nccl 45 "$bin" probe coll --backend nccl "${common[@]}" "${sweep[@]}" --json

# ---- 5. full measurements, one probe at a time (a slow one loses only itself) ----
for p in compute memory intra; do
    step "full_$p" 60 "$bin" probe "$p" "${common[@]}" --json
done

# ---- 6. the references, side by side (bench/), on this machine's CPUs and disk ----
if [ "${GPU_CHECK_BENCH:-0}" = 1 ]; then
    sdir=${GPU_CHECK_STORAGE_DIR:-$root/out/storage-bench}
    mkdir -p "$sdir"
    { df -T "$sdir"; findmnt -T "$sdir"; lsblk 2>/dev/null; } > "$OUT/storage_dir.txt" 2>&1
    step bench_probe 180 bash "$root/bench/bench_probe.sh" "$(dirname "$bin")" 512 1024 "$sdir" 3
    rm -rf "$sdir"
    step bench_net 90 env BENCH_COLL=0 BENCH_SECONDS=3 BENCH_ROUNDS=2 BENCH_STREAMS="1 4 8" \
        bash "$root/bench/bench_net.sh" "$(dirname "$bin")"
fi

# ---- 7. a real trace from this GPU, analyzed ----
if python3 -c 'import torch' 2>/dev/null; then
    step trace 150 python3 "$root/scripts/gpu_trace.py" "$OUT/trace"
    if [ -s "$OUT/trace/trace.json" ]; then
        step analyze_json 60 "$bin" analyze --no-history --json "$OUT/trace/trace.json"
        step analyze_text 60 "$bin" analyze --no-history -o "$OUT/trace/report.html" "$OUT/trace/trace.json"
    fi
fi

# ---- 8. the other coll back-ends and the full sweep ----
step coll_mpi 30 "$bin" probe coll --backend mpi "${common[@]}" --max-bytes 16M --factor 16 --json
if command -v mpirun >/dev/null; then
    step mpirun_nccl 45 mpirun --allow-run-as-root --oversubscribe -np 1 -x LD_LIBRARY_PATH \
        "$bin" probe coll --backend nccl "${common[@]}" "${sweep[@]}" --json
fi
step full_coll 60 "$bin" probe coll "${common[@]}" --json

# ---- 6. summary ----
if command -v python3 >/dev/null; then
    python3 - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PY'
import json, os, sys
out = sys.argv[1]
for name in ("probe", "coll_nccl", "coll_mpi", "mpirun_nccl", "full_compute", "full_memory", "full_intra",
             "full_coll"):
    p = os.path.join(out, name + ".out")
    try:
        d = json.load(open(p))
    except Exception as e:
        print("%s: no JSON (%s)" % (name, e)); continue
    print("== %s" % name)
    g = d.get("topology", {}).get("gpu_runtime")
    if g: print("gpu_runtime:", g)
    if "coll" in d: print("coll:", d["coll"])
    for r in d.get("results", []):
        if "gemm" in r["metric"] or "device_copy" in r["metric"] or "h2d" in r["metric"]:
            print("  %-32s %10s %s  %s" % (r["metric"], r["value"], r["unit"], r["method"]))
    coll = [r for r in d.get("results", []) if r.get("op")]
    if coll:
        worst = max(coll, key=lambda r: r["wrong"] or 0)
        best = max(coll, key=lambda r: r["busbw_gbps"] or 0)
        print("  coll rows %d, max wrong %s, best busbw %.1f GB/s (%s %d B)" %
              (len(coll), worst["wrong"], best["busbw_gbps"] or 0, best["op"], best["size_bytes"]))
    for k in ("skipped", "errors"):
        for r in d.get(k, []): print("  %s: %s: %s" % (k, r["probe"], r["reason"]))
PY
fi
log "done; outputs in $OUT"
