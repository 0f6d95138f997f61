#!/bin/bash
# bench_model.sh - time `chainprof model` (target < 50 ms) and `chainprof
# plan` over every layout of a 1024-GPU search (target < 5 s). Prints the
# median wall time of N runs of each; not part of the pass/fail suite.
# Usage: bench/bench_model.sh [BUILD_DIR] [RUNS]
set -eu
BUILD=${1:-build}
RUNS=${2:-20}
CP="$BUILD/chainprof"
[ -x "$CP" ] || { echo "bench_model: $CP not built" >&2; exit 1; }

median_ms() { # command... -> median wall ms over $RUNS runs
  local t=()
  for _ in $(seq "$RUNS"); do
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null
    e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
m=$(median_ms "$CP" model --preset llama3-70b --gpus 1024 --gpu H100 --tp 8 --pp 4 --vpp 5 --sp \
      --recompute selective --global-batch 512 --format json)
echo "model  llama3-70b on 1024 H100 (one layout, JSON):      ${m} ms (target < 50 ms)"
p=$(median_ms "$CP" plan --preset llama3-70b --gpus 1024 --gpu H100 --top 10 --format json)
n=$("$CP" plan --preset llama3-70b --gpus 1024 --gpu H100 --format json | grep -o '"evaluated": *[0-9]*' | grep -o '[0-9]*$')
echo "plan   llama3-70b on 1024 H100 ($n layouts):           ${p} ms (target < 5000 ms)"
p=$(median_ms "$CP" plan --preset deepseek-v3 --gpus 1024 --gpu H800 --top 10 --format json)
n=$("$CP" plan --preset deepseek-v3 --gpus 1024 --gpu H800 --format json | grep -o '"evaluated": *[0-9]*' | grep -o '[0-9]*$')
echo "plan   deepseek-v3 on 1024 H800 ($n layouts, MoE+EP):  ${p} ms (target < 5000 ms)"
c=$(median_ms "$CP" model --collective all_reduce --bytes 1e9 --nodes 16 --gpus-per-node 8 --gpu H100 --json)
echo "model  --collective all_reduce 1 GB on 16x8 H100:     ${c} ms"
# the honest calibration: 384 published runs, shipped constants plus one
# refit per left-out source (few runs: it refits ten constants seven times)
D=$(dirname "$0")/..
V=(--validate "$D/../shared/data/model/published_runs.csv" --validate "$D/../shared/data/model/published_runs_more.csv"
   --validate "$D/docs/data/published_runs_nvidia.csv")
if [ -f "$D/../shared/data/model/published_runs.csv" ]; then
  RUNS_SAVED=$RUNS; RUNS=3
  v=$(median_ms "$CP" model "${V[@]}" --json)
  w=$(median_ms "$CP" model "${V[@]}" --no-loso --json)
  RUNS=$RUNS_SAVED
  echo "model  --validate 3 CSVs (384 runs), with LOSO refits: ${v} ms; shipped constants only: ${w} ms"
fi
# in-process cost of one model evaluation, from the planner's own timer
j=$("$CP" plan --preset llama3-70b --gpus 1024 --gpu H100 --format json)
ms=$(printf '%s' "$j" | grep -o '"elapsed_ms": *[0-9.e+-]*' | grep -o '[0-9.e+-]*$')
n=$(printf '%s' "$j" | grep -o '"evaluated": *[0-9]*' | grep -o '[0-9]*$')
awk -v ms="$ms" -v n="$n" 'BEGIN {printf "one model evaluation in-process:                   %.2f us (%d layouts in %.2f ms)\n", ms * 1000 / n, n, ms}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (wall times above include process start-up and contention)"
