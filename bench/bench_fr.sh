#!/bin/bash
# bench_fr.sh - time `chainprof diagnose` on Flight Recorder dumps of a
# simulated job: RANKS ranks (default 1024) x ENTRIES entries each (default
# 2000; 1000 steps of a TP all_reduce and a world all_reduce), pickle form
# (what TORCH_NCCL_DUMP_ON_TIMEOUT writes), one rank lagging on the host.
#
#   bench/bench_fr.sh [CHAINPROF] [RANKS] [ENTRIES] [FORM] [THREADS]
#
# Writes the dumps with scripts/fr_synth.py into a temporary directory,
# prints their size, diagnose's wall time, throughput and peak RSS
# (/usr/bin/time), and the verdict (which must name the planted rank).
# fr_trace (PyTorch's own analyzer) needs torch, which this machine lacks:
# the comparison row of docs/PERFORMANCE.md says so. Not part of the test suite.
set -eu
CP=${1:-build/chainprof}
RANKS=${2:-1024}
ENTRIES=${3:-2000}
FORM=${4:-pickle}
THREADS=${5:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
culprit=$((RANKS * 45 / 64))
t0=$(date +%s.%N)
python3 "$SRC/scripts/fr_synth.py" --out "$dir" --ranks "$RANKS" --tp 8 --steps $((ENTRIES / 2)) --entries "$ENTRIES" \
    --fault lagging --culprit "$culprit" --form "$FORM" >/dev/null
t1=$(date +%s.%N)
bytes=$(du -sb "$dir" | cut -f1)
echo "dumps: $RANKS ranks x $ENTRIES entries ($FORM), $((bytes / 1048576)) MiB, generated in $(echo "$t1 - $t0" | bc) s"
jflag=()
[ -n "$THREADS" ] && jflag=(-j "$THREADS")
for run in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$dir.time" "$CP" diagnose "${jflag[@]}" --json "$dir" >"$dir.json"
    read -r wall rss_kb <"$dir.time"
    echo "run $run: wall $wall s, $(echo "scale=1; $bytes / 1048576 / $wall" | bc) MiB/s, peak RSS $((rss_kb / 1024)) MiB"
done
python3 - "$dir.json" "$culprit" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); v = r["verdicts"][0]
print("verdict: %s ranks=%s pg=%s seq=%s op=%s" % (v["code"], v.get("ranks"), v.get("pg"), v.get("seq"), v.get("op")))
if v.get("ranks") != [int(sys.argv[2])]: sys.exit("wrong culprit")
PY
rm -f "$dir.json" "$dir.time"
