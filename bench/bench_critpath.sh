#!/bin/bash
# bench_critpath.sh - cost of the cross-rank dependency graph (critpath), the
# what-if replays (whatif) and the communication matrix (commmatrix) on
# many-rank synthesized jobs: prints, per job size, the events, the graph's
# nodes and edges, and each analyzer's CPU seconds as `analyze -vv` reports
# them, plus the whole analyze's wall/CPU time and peak RSS; then the same on
# pipeline-parallel jobs (synth --pp, point-to-point pairs across stages).
# Usage: bash bench/bench_critpath.sh [BUILD_DIR] (default build); RANKS="64 128" PP="4x2 8x8"
set -euo pipefail
build=${1:-build}
bin=$build/chainprof
[ -x "$bin" ] || { echo "bench: $bin is not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# analyze DIR LABEL: time analyze on DIR's rank files and print the figures
measure() {
  local d=$1 label=$2
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$bin" analyze -vv -j 2 -o "$d.json" "$d"/rank-*.json 2>"$tmp/err"
  read -r wall u s rss <"$tmp/time"
  python3 - "$d.json" "$tmp/err" "$label" "$wall" "$u" "$s" "$rss" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1])); err = open(sys.argv[2]).read()
cpu = {m.group(1): float(m.group(2)) for m in re.finditer(r"analysis (\w+): ([0-9.]+) s cpu", err)}
g = rep["critical_path"]["graph"]; ev = sum(r["events"] for r in rep["ranks"])
n, wall, u, s, rss = sys.argv[3:8]
print("%s: %d events, graph %d nodes %d edges (p2p_recv_wait %d); cpu s: collectives %.3f critpath %.3f whatif %.3f "
      "commmatrix %.3f; analyze %s s wall, %.2f s cpu, %.0f MB peak; whatif S %.3f, fixed %s"
      % (n, ev, g["nodes"], g["edges"], g["edges_by_type"].get("p2p_recv_wait", 0), cpu.get("collectives", 0),
         cpu.get("critpath", 0), cpu.get("whatif", 0), cpu.get("commmatrix", 0), wall, float(u) + float(s),
         int(rss) / 1024, rep["whatif"].get("slowdown") or 0, rep["whatif"].get("workers_fixed")))
PY
}
for n in ${RANKS:-32 64 128}; do
  d="$tmp/r$n"
  "$bin" synth --out "$d" --ranks "$n" --gpus-per-node 8 --layers 2 --hidden 1024 --seq-len 512 --steps 3 \
    --inject straggler=$((n / 2 + 1)):1.2 >/dev/null
  measure "$d" "ranks $n"
done
# pipeline jobs (PP="PxD ..."): Kineto traces of synth --pp, 32 microbatches, 4 steps, a straggler at
# DP rank D-1 of stage P/2 (rank P/2 x D + D-1)
for pd in ${PP:-4x2 8x8}; do
  p=${pd%x*} dp=${pd#*x}
  d="$tmp/pp$pd"
  "$bin" synth --out "$d" --pp "$p" --dp "$dp" --microbatches 32 --steps 4 \
    --inject straggler=$((dp - 1)).$((p / 2)):1.3 >/dev/null
  measure "$d" "pp $pd (straggler rank $((p / 2 * dp + dp - 1)))"
done
