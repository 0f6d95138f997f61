#!/usr/bin/env bash
# bench_probe.sh - chainprof probe against independent references, side by side:
#   memory triad   vs bench/stream_ref.c (OpenMP STREAM-style), same array size and threads
#   storage seq    vs fio, same block size (1 MiB), file size, direct / buffered + fsync
# Prints a table for docs/PERFORMANCE.md. fio is optional (skipped when absent).
# Usage: bench/bench_probe.sh [BUILD_DIR] [ARRAY_MIB] [FILE_MIB] [DIR]
set -eu
build=${1:-build}; array_mib=${2:-512}; file_mib=${3:-1024}; dir=${4:-/tmp}
cp=$build/chainprof
[ -x "$cp" ] || { echo "build chainprof first ($cp)"; exit 1; }
threads=$(nproc)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $threads CPUs"
n=$((array_mib * 1024 * 1024 / 8))

cc -O2 -fopenmp "$(dirname "$0")/stream_ref.c" -o "$tmp/stream_ref"
pair() { printf '%-34s %12s %12s %8s\n' "$1" "$2" "$3" "$4"; }
pair "figure" "chainprof" "reference" "diff %"
for round in 1 2 3; do
    ref=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread "$tmp/stream_ref" $n 10 | awk '$1=="triad"{print $2}')
    ours=$("$cp" probe memory --size ${array_mib}M --threads $threads --no-history --json |
        python3 -c 'import json,sys; print(round([r["value"] for r in json.load(sys.stdin)["results"] if r["metric"]=="triad_bandwidth"][0],3))')
    pair "triad GB/s (${array_mib} MiB x3, round $round)" "$ours" "$ref" \
        "$(python3 -c "print(round(($ours-$ref)/$ref*100,1))")"
done

if ! command -v fio >/dev/null; then echo "fio not installed: storage comparison skipped"; exit 0; fi
get() { echo "$ours" | python3 -c "import json,sys; print(round([r['value'] for r in json.load(sys.stdin)['results'] if r['metric']=='$1'][0],3))"; }
fiobw() { # rw direct extra-options -> GB/s
    fio --name=b --directory="$dir" --filename=cp_bench_fio --rw=$1 --bs=1M --size=${file_mib}M --direct=$2 \
        --ioengine=psync --numjobs=1 --fallocate=none $3 --output-format=json 2>/dev/null |
        python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; print(round(j['$1']['bw_bytes']/1e9,3))"
}
# alternate chainprof and fio so both see the same background load
for round in 1 2; do
    ours=$("$cp" probe storage --dir "$dir" --size ${file_mib}M --no-history --json)
    w_buf=$(fiobw write 0 "--end_fsync=1")
    r_buf=$(fiobw read 0 "--invalidate=1")   # fio drops the file's cached pages first, as chainprof does
    w_dir=$(fiobw write 1 "")
    r_dir=$(fiobw read 1 "")
    rm -f "$dir/cp_bench_fio"
    for m in "seq_write_buffered_bandwidth:$w_buf" "seq_read_buffered_bandwidth:$r_buf" \
             "seq_write_direct_bandwidth:$w_dir" "seq_read_direct_bandwidth:$r_dir"; do
        k=${m%%:*}; ref=${m#*:}; o=$(get $k)
        pair "${k%_bandwidth} GB/s (round $round)" "$o" "$ref" "$(python3 -c "print(round(($o-$ref)/$ref*100,1))")"
    done
done
