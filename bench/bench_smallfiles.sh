#!/bin/bash
# bench_smallfiles.sh - issue 21 item 10: what a set of many tiny Kineto
# traces costs. Writes N (default 10,000) one-rank traces of ~250 bytes (a
# ProfilerStep annotation and one kernel each, rank i) into a directory and
# runs `chainprof analyze --json DIR` under /usr/bin/time, in the default heap
# mode and with CHAINPROF_NO_THP=1, printing wall, user, sys, peak RSS and
# the peak per file. Figures only; it never fails on a number.
# Usage: bash bench/bench_smallfiles.sh [BUILD_DIR] (default build);
#   N=10000, KEEP=DIR (keep and reuse the set there), RUNS=1
set -euo pipefail
build=${1:-build}
bin=$(cd "$(dirname "$build/chainprof")" && pwd)/chainprof
[ -x "$bin" ] || { echo "bench: $bin is not built" >&2; exit 1; }
n=${N:-10000}
runs=${RUNS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set_dir=${KEEP:-$tmp/set}
mkdir -p "$set_dir"

# one file per rank; written once (a kept set is reused when complete)
if [ "$(find "$set_dir" -name 'rank-*.json' | wc -l)" -ne "$n" ]; then
    rm -f "$set_dir"/rank-*.json
    awk -v n="$n" -v d="$set_dir" 'BEGIN {
        for (i = 0; i < n; i++) {
            f = sprintf("%s/rank-%05d.json", d, i)
            printf "{\"distributedInfo\": {\"rank\": %d, \"world_size\": %d}, \"traceEvents\": [\n", i, n > f
            printf "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 90},\n" > f
            printf "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": %d}\n]}\n", 5 + i % 7 > f
            close(f)
        }
    }'
fi
bytes=$(cat "$set_dir"/rank-*.json | wc -c)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $n files, $bytes bytes ($((bytes / n)) a file)"
for mode in default no_thp; do
    for ((r = 0; r < runs; r++)); do
        if [ "$mode" = no_thp ]; then env=(CHAINPROF_NO_THP=1); else env=(); fi
        env "${env[@]}" CHAINPROF_NO_HISTORY=1 /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" \
            "$bin" analyze --json "$set_dir" >"$tmp/out.json" 2>"$tmp/err" || {
            echo "bench: analyze failed ($mode)" >&2; tail -5 "$tmp/err" >&2; exit 1; }
        read -r wall user sys rss_kb <"$tmp/t"
        printf '%-8s wall %6.2f s  user %5.2f s  sys %5.2f s  peak RSS %7.1f MB  %6.1f KB a file  report %s bytes\n' \
            "$mode" "$wall" "$user" "$sys" "$(echo "$rss_kb / 1024" | bc -l)" \
            "$(echo "$rss_kb * 1.024 / $n" | bc -l)" "$(wc -c <"$tmp/out.json")"
    done
done
