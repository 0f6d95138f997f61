#!/usr/bin/env bash
# analyze on Nsight Systems input: an export works; a .nsys-rep without nsys on PATH exits 5 with the command.
set -u
data=${CHAINPROF_DATA:-$CP_DATA_DIR}
f="$data/nsys/nsys-ai/mfu_2gpu_before.sqlite"
[ -f "$f" ] || { echo "skip: $f is absent"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$CHAINPROF" analyze "$f" --json > "$tmp/out.json" || { echo "analyze failed"; exit 1; }
grep -q '"kind": "nsys"' "$tmp/out.json" || { echo "input kind not nsys"; exit 1; }
grep -q '"rule": "cuda_api_sync"' "$tmp/out.json" || { echo "expert rule missing"; exit 1; }
[ "$(grep -c '"rank":' "$tmp/out.json")" -ge 2 ] || { echo "expected two ranks"; exit 1; }
touch "$tmp/job.nsys-rep"
PATH=/nonexistent "$CHAINPROF" analyze "$tmp/job.nsys-rep" 2> "$tmp/err"; rc=$?
[ $rc -eq 5 ] || { echo "expected exit 5, got $rc"; cat "$tmp/err"; exit 1; }
grep -q "nsys export --type sqlite --output $tmp/job.sqlite $tmp/job.nsys-rep" "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo ok
