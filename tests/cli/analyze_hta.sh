#!/bin/bash
# analyze_hta.sh - `chainprof analyze` on two ranks of HTA's test traces:
# text, JSON and CSV come from one report (the same numbers), the
# HTA-compatible keys and the exact ones are present, and the values match
# what HTA's tests assert (rank 0: idle 53.56 %, overlap 11.81 %).
set -u
: "${CHAINPROF:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
data=""
for d in "${CHAINPROF_DATA:-}" "${CP_DATA_DIR:-}" "${CP_SOURCE_DIR:-.}/../shared/data" "${CP_SOURCE_DIR:-.}/../../shared/data"; do
  [ -n "$d" ] && [ -d "$d/hta/trace_filter" ] && { data="$d"; break; }
done
[ -n "$data" ] || { echo "skip: ../shared/data/hta is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$CHAINPROF" analyze -o "$tmp/r.json" -o "$tmp/r.csv" "$data/hta/trace_filter" 2>"$tmp/err" ||
  fail "analyze exited $?: $(cat "$tmp/err")"
"$CHAINPROF" analyze "$data/hta/trace_filter" >"$tmp/r.txt" 2>"$tmp/err" || fail "analyze (text) exited $?"
grep -q '"schema": "chainprof.analyze/1"' "$tmp/r.json" || fail "no schema in JSON"
for k in hta_preprocessing steps step_time temporal overlap_pct idle_breakdown kernel_types kernels \
         launch_stats queue_length annotations exact; do
  grep -q "\"$k\":" "$tmp/r.json" || fail "JSON lacks $k"
done
grep -q '"idle_pct": 53\.55' "$tmp/r.json" || fail "rank 0 idle_pct is not 53.55..: $(grep -m1 idle_pct "$tmp/r.json")"
grep -q '^ranks\.0\.overlap_pct,11\.8' "$tmp/r.csv" || fail "CSV overlap_pct of rank 0 is not 11.8.."
grep -q '^ranks\.1\.temporal\.compute_pct,22\.56' "$tmp/r.csv" || fail "CSV compute_pct of rank 1 is not 22.56.."
grep -q '^ranks\.0\.exact\.temporal\.idle_pct,' "$tmp/r.csv" || fail "CSV lacks the exact values"
# text rounds for display: the same number
grep -q 'idle: 53\.56%' "$tmp/r.txt" || fail "text does not show idle 53.56%"
grep -q 'communication hidden under compute: 11\.81%' "$tmp/r.txt" || fail "text does not show the overlap"
exit 0
