#!/usr/bin/env bash
# chainprof synth from the command line: usage errors (exit 2, clear
# messages), refusing a non-empty --out without --force, reproducible output.
set -u
bin=${CHAINPROF:?CHAINPROF is not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
small=(--ranks 2 --gpus-per-node 1 --steps 1 --layers 1 --hidden 512 --seq-len 256 --micro-batch 1)

# expect_usage PATTERN ARGS...: exit 2 and PATTERN in stderr
expect_usage() {
  local pat=$1; shift
  "$bin" synth "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "synth $* exited $rc, expected 2: $(cat "$tmp/err")"
  grep -q -- "$pat" "$tmp/err" || fail "synth $*: stderr lacks '$pat': $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || fail "synth $*: wrote to stdout on a usage error"
}

expect_usage "--out DIR is required" --ranks 2
expect_usage "unknown problem" --out "$tmp/a" "${small[@]}" --inject warp-drive=9
expect_usage "slow-network=2" --out "$tmp/a" "${small[@]}" --inject slow-network=2
expect_usage "SECONDS\[@EVERY\]" --out "$tmp/a" "${small[@]}" --inject sync-checkpoint=x
expect_usage "no such rank" --out "$tmp/a" "${small[@]}" --inject straggler=5
expect_usage "fits on one node" --out "$tmp/a" --ranks 2 --gpus-per-node 8 --inject slow-network=0.4
expect_usage "--ranks" --out "$tmp/a" --ranks 0
expect_usage "exclude each other" --out "$tmp/a" --gzip --zstd
expect_usage "tensor-parallel groups stay inside a node" --out "$tmp/a" --ranks 8 --gpus-per-node 4 --tp 8
[ ! -e "$tmp/a" ] || fail "a usage error created the output directory"

# a good run, then refusal to write over it
"$bin" synth --out "$tmp/a" "${small[@]}" --seed 5 --inject straggler=1:1.5 >"$tmp/out" 2>"$tmp/err" \
  || fail "synth failed: $(cat "$tmp/err")"
grep -q "wrote 2 rank traces" "$tmp/out" || fail "no summary line: $(cat "$tmp/out")"
for f in rank-0.json rank-1.json synth.json; do [ -s "$tmp/a/$f" ] || fail "missing $f"; done
cp "$tmp/a/rank-0.json" "$tmp/keep.json"
expect_usage "not empty" --out "$tmp/a" "${small[@]}" --seed 6
cmp -s "$tmp/a/rank-0.json" "$tmp/keep.json" || fail "a refused run changed an existing trace"
ls "$tmp/a" | grep -q tmp && fail "temporary files left behind"

# --force replaces; same seed gives the same bytes
"$bin" synth --out "$tmp/a" "${small[@]}" --seed 5 --inject straggler=1:1.5 --force >/dev/null 2>&1 \
  || fail "synth --force failed"
cmp -s "$tmp/a/rank-0.json" "$tmp/keep.json" || fail "same seed gave different bytes"
grep -q '"kind": "straggler"' "$tmp/a/synth.json" || fail "ground truth lacks the straggler"

# compressed output
"$bin" synth --out "$tmp/z" "${small[@]}" --zstd >/dev/null 2>&1 || fail "synth --zstd failed"
[ -s "$tmp/z/rank-1.json.zst" ] || fail "no rank-1.json.zst"
# end to end: analyze reads the synthesized set (the glob leaves synth.json out)
"$bin" analyze "$tmp/z/rank-*" --json >"$tmp/report.json" 2>"$tmp/err" || fail "analyze failed: $(cat "$tmp/err")"
python3 - "$tmp/report.json" <<'PY' || fail "analyze report of the synthesized set is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["rank"] for x in r["ranks"]] == [0, 1], r["ranks"]
assert r["diagnostics"]["total"] == 0, r["diagnostics"]
PY
"$bin" synth --help | grep -q -- "--inject" || fail "--help lacks --inject"
"$bin" help synth | grep -q "sync-checkpoint=SECONDS" || fail "manual lacks the injections"
exit 0
