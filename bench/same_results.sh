#!/usr/bin/env bash
# same_results.sh OLD_BIN NEW_BIN [BENCH_DIR] - do two chainprof binaries give the same analysis?
#
# Speed work must not change one number. This runs `chainprof analyze --json` with both binaries on
#   - every HTA test trace under ../shared/data/hta (each directory of traces, one run per directory),
#   - every Nsight Systems export under ../shared/data/nsys,
#   - the bench set of bench/run.sh (BENCH_DIR, default build/bench: plain/ and gz/) when present,
# and compares the two JSON reports key by key (bench/json_same.py). Only the envelope's "tool"
# object (it names the build and the process count) and "command" (the argv) may differ.
# Extra arguments for both runs: SAME_ARGS (e.g. "-j 1"); NEW_PREFIX runs the new binary under
# a launcher (e.g. "mpirun -np 2"). Exit 0 when every report is the same, 1 otherwise.
set -uo pipefail
old=${1:?usage: same_results.sh OLD_BIN NEW_BIN [BENCH_DIR]}
new=${2:?usage: same_results.sh OLD_BIN NEW_BIN [BENCH_DIR]}
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${3:-$here/build/bench}
data=${CHAINPROF_DATA:-$here/../shared/data}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/same_results.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
read -r -a extra <<<"${SAME_ARGS:-}"
read -r -a prefix <<<"${NEW_PREFIX:-}"
n=0 bad=0

check() { # NAME INPUT...
  local name=$1
  shift
  n=$((n + 1))
  "$old" analyze --no-history --json "${extra[@]}" "$@" >"$tmp/a.json" 2>"$tmp/a.err"
  local ra=$?
  "${prefix[@]}" "$new" analyze --no-history --json "${extra[@]}" "$@" >"$tmp/b.json" 2>"$tmp/b.err"
  local rb=$?
  if [ "$ra" != "$rb" ]; then
    echo "DIFF $name: exit $ra vs $rb ($(head -c 200 "$tmp/b.err"))"
    bad=$((bad + 1))
    return
  fi
  [ "$ra" = 0 ] || { echo "same $name (both exit $ra)"; return; }
  if python3 "$here/bench/json_same.py" "$tmp/a.json" "$tmp/b.json" >"$tmp/d.txt"; then
    echo "same $name"
  else
    echo "DIFF $name:"
    head -20 "$tmp/d.txt" | sed 's/^/  /'
    bad=$((bad + 1))
  fi
}

if [ -d "$data/hta" ]; then
  while IFS= read -r d; do
    check "hta/${d#"$data/hta/"}" "$d"
  done < <(find "$data/hta" -type f \( -name '*.json' -o -name '*.json.gz' \) -printf '%h\n' | sort -u)
fi
if [ -d "$data/nsys" ]; then
  while IFS= read -r f; do
    check "nsys/${f#"$data/nsys/"}" "$f"
  done < <(find "$data/nsys" -name '*.sqlite' | sort)
fi
[ -d "$bench/plain" ] && check "bench/plain" "$bench/plain/rank-*.json"
[ -d "$bench/gz" ] && check "bench/gz" "$bench/gz/rank-*.json.gz"
[ -f "$bench/nsys_synth_2000000.sqlite" ] && check "bench/nsys_synth" "$bench/nsys_synth_2000000.sqlite"
echo "$((n - bad)) of $n reports the same"
[ "$bad" = 0 ]
