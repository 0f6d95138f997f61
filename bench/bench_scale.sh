#!/bin/bash
# bench_scale.sh - issue 19 item 4: what `mpirun -np P chainprof analyze`
# costs per rank, so the cost of 4,096 and 16,384 ranks can be projected
# (docs/PERFORMANCE.md, "Issue 19 items 3-4"). For each synthesized job of
# RANKS ranks (default 8 64 256; `chainprof synth`, 8 GPUs a node) it runs
# analyze in one process and under mpirun -np 1 and -np NP (default 2), each
# process under /usr/bin/time, and prints per job:
#   - input bytes per rank; one process's wall, CPU and peak RSS, and its CPU
#     per rank (read + every analyzer + output);
#   - under mpirun: each process's CPU and peak RSS, rank 0's CPU in the
#     gather-and-merge phase (`-vv`), the report-message bytes rank 0
#     received (tool.summary_bytes) per rank, the report's size per rank,
#     and the peak RSS per process of -np NP over one process's;
#   - the bytes every process received through the analyzers' exchanges
#     (tool.exchange_bytes) per rank, rank 0's output CPU;
#   - whether -np NP's report equals -np 1's (bench/json_same.py).
# Figures only; it never fails on a number. Usage:
#   bash bench/bench_scale.sh [BUILD_DIR] (default build); RANKS="8 64", NP=2,
#   STEPS=4, KEEP=DIR (keep and reuse the synthesized jobs there)
set -euo pipefail
build=${1:-build}
bin=$(cd "$(dirname "$build/chainprof")" && pwd)/chainprof
[ -x "$bin" ] || { echo "bench: $bin is not built" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench: mpirun (openmpi-bin) is not installed" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
np=${NP:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=${KEEP:-$tmp}
mkdir -p "$jobs"
mpi=(mpirun --allow-run-as-root --oversubscribe --mca btl tcp,vader,self)
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"

# one process's run, timed: wall user sys maxrss_kb into $tmp/t.one
timed_one() { # DIR OUT
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/t.one" "$bin" analyze --no-history -j 1 -vv --json "$1" >"$2" 2>"$tmp/e.one"
}

# mpirun's processes, each timed into $tmp/t.P.RANK and its -vv into $tmp/e.P.RANK
timed_mpi() { # P DIR OUT
    local p=$1
    "${mpi[@]}" -np "$p" sh -c 'exec /usr/bin/time -f "%e %U %S %M" -o "$0/t.$1.$OMPI_COMM_WORLD_RANK" \
        "$2" analyze --no-history -j 1 -vv --json "$3" 2>"$0/e.$1.$OMPI_COMM_WORLD_RANK"' "$tmp" "$p" "$bin" "$2" >"$3"
}

for n in ${RANKS:-8 64 256}; do
    d="$jobs/scale$n"
    [ -f "$d/rank-$((n - 1)).json" ] ||
        "$bin" synth --out "$d" --force --ranks "$n" --gpus-per-node 8 --steps "${STEPS:-4}" --inject straggler=$((n / 2)) >/dev/null
    timed_one "$d" "$tmp/one.json"
    timed_mpi 1 "$d" "$tmp/np1.json"
    timed_mpi "$np" "$d" "$tmp/npP.json"
    same=$(python3 "$here/json_same.py" "$tmp/np1.json" "$tmp/npP.json" >/dev/null && echo yes || echo NO)
    python3 - "$tmp" "$d" "$n" "$np" "$same" <<'PY'
import glob, json, os, re, sys
tmp, d, n, np, same = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def t(path):
    wall, u, s, rss = open(path).read().split()[-4:]
    return float(wall), float(u) + float(s), int(rss) / 1024
def phase(path, name):
    m = re.search(name + r": ([0-9.]+) s cpu", open(path).read())
    return float(m.group(1)) if m else float("nan")
inb = sum(os.path.getsize(f) for f in glob.glob(d + "/rank-*.json"))
w1, c1, r1 = t(tmp + "/t.one")
procs = [t(f"{tmp}/t.{np}.{q}") for q in range(np)]
rep = json.load(open(tmp + "/npP.json"))
sb = rep["tool"]["summary_bytes"]
xb = rep["tool"]["exchange_bytes"]
out_b = os.path.getsize(tmp + "/one.json")
g0 = phase(f"{tmp}/e.{np}.0", "gather and merge")
o0 = phase(f"{tmp}/e.{np}.0", "output")
o1 = phase(tmp + "/e.one", "output")
print(f"ranks {n}: input {inb / n / 1e6:.2f} MB/rank ({inb / 1e6:.0f} MB); one process {w1:.2f} s wall, {c1:.2f} s cpu "
      f"({c1 / n * 1e3:.1f} ms cpu/rank), peak {r1:.0f} MB; report {out_b / n / 1e3:.0f} kB/rank")
print(f"  -np {np}: cpu " + " ".join(f"{c:.2f}" for _, c, _ in procs) + " s, peak " +
      " ".join(f"{r:.0f}" for _, _, r in procs) + f" MB (max/one process {max(r for _, _, r in procs) / r1:.2f}), "
      f"wall {max(w for w, _, _ in procs):.2f} s; summaries {sb / n / 1e3:.0f} kB/rank ({sb / 1e6:.1f} MB), "
      f"exchanges {xb / n / 1e3:.1f} kB/rank ({xb / 1e6:.2f} MB to every process); "
      f"rank 0 gather+merge {g0:.3f} s cpu ({g0 / n * 1e3:.2f} ms/rank), output {o0:.3f} s cpu "
      f"({o0 / n * 1e3:.2f} ms/rank; one process {o1:.3f} s); equal to -np 1: {same}")
print(f"  sharded part (all processes' cpu - rank 0's gather+merge and output) "
      f"{(sum(c for _, c, _ in procs) - g0 - o0) / n * 1e3:.1f} ms cpu/rank")
PY
done
