#!/bin/bash
# diff.sh - `chainprof diff BEFORE... -- AFTER...` on HTA's trace_compare pair and on two different jobs:
# HTA TraceDiff's op changes, text/JSON/CSV/HTML from one report, --fail-on PCT exits 4 only when the
# step time grew by more than PCT, and usage errors exit 2.
set -u
: "${CHAINPROF:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
data=""
for d in "${CHAINPROF_DATA:-}" "${CP_DATA_DIR:-}" "${CP_SOURCE_DIR:-.}/../shared/data" "${CP_SOURCE_DIR:-.}/../../shared/data"; do
  [ -n "$d" ] && [ -d "$d/hta/trace_compare" ] && { data="$d"; break; }
done
[ -n "$data" ] || { echo "skip: ../shared/data/hta is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base="$data/hta/trace_compare/base" test="$data/hta/trace_compare/test"
slow="$data/hta/negative_queue_length_values_check"

"$CHAINPROF" diff --rank 1 --iteration 1010 -o "$tmp/d.json" -o "$tmp/d.csv" -o "$tmp/d.html" -o "$tmp/d.txt" \
  "$base" -- "$test" 2>"$tmp/err" || fail "diff exited $?: $(cat "$tmp/err")"
grep -q '"schema": "chainprof.diff/1"' "$tmp/d.json" || fail "no diff schema"
python3 - "$tmp/d.json" <<'PY' || fail "JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cpu_ops"]
assert c["names"]["added"] == ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"], c["names"]
assert c["names"]["deleted"] == ["nccl:all_reduce"] and c["n_unchanged"] == 5, c
assert d["gpu_kernels"]["n_deleted"] == 1 and d["base"]["profiler_step"] == 1010
assert {r["layer"] for r in d["layers"]} == {"host", "compute", "intra", "inter", "storage", "idle"}
PY
grep -q '^cpu_ops\.n_added,3' "$tmp/d.csv" || fail "CSV lacks n_added 3"
grep -q 'All2All_Pooled_Req' "$tmp/d.html" || fail "HTML lacks the added op"
grep -q 'All2All_Pooled_Req' "$tmp/d.txt" || fail "text lacks the added op"
# a 4.8x slower job: --fail-on 10 trips (exit 4), the reverse direction does not
"$CHAINPROF" diff --fail-on 10 "$base" -- "$slow" >/dev/null 2>"$tmp/err"
[ $? -eq 4 ] || fail "--fail-on 10 on a slower AFTER did not exit 4"
grep -q 'step time changed by +' "$tmp/err" || fail "no --fail-on message: $(cat "$tmp/err")"
"$CHAINPROF" diff --fail-on 10 "$slow" -- "$base" >/dev/null 2>&1 || fail "--fail-on on a faster AFTER exited $?"
# usage: no separator, empty side, unknown rank
"$CHAINPROF" diff "$base" "$test" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no -- should exit 2"
"$CHAINPROF" diff "$base" -- >/dev/null 2>&1; [ $? -eq 2 ] || fail "empty AFTER should exit 2"
"$CHAINPROF" diff --rank 7 "$base" -- "$test" >/dev/null 2>"$tmp/err"; [ $? -eq 2 ] || fail "unknown rank should exit 2"
grep -q 'rank 7 is not in the base trace set' "$tmp/err" || fail "unknown rank message: $(cat "$tmp/err")"
exit 0
