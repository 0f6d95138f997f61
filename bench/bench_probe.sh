#!/usr/bin/env bash
# bench_probe.sh - chainprof probe against independent references, side by side:
#   memory triad   vs bench/stream_ref.c (OpenMP STREAM-style), same array size and threads
#   storage seq    vs fio, the same defined quantity (docs/METRICS.md, storage): 1 MiB blocks,
#                  same file size, buffered and O_DIRECT, every write to a new file without
#                  preallocation timed through fsync, every read of a file evicted from the page
#                  cache (checked with fincore/mincore), the filesystem synced before each phase
# Prints a table for docs/PERFORMANCE.md. fio is optional (skipped when absent).
# Usage: bench/bench_probe.sh [BUILD_DIR] [ARRAY_MIB] [FILE_MIB] [DIR] [ROUNDS]
# BENCH_SKIP_TRIAD=1 leaves out the memory comparison; STREAM_REF=PATH uses a stream_ref built
# elsewhere (a machine without a C compiler), else it is built here with cc -fopenmp.
set -eu
build=${1:-build}; array_mib=${2:-512}; file_mib=${3:-1024}; dir=${4:-/tmp}; rounds=${5:-3}
cp=$build/chainprof
[ -x "$cp" ] || { echo "build chainprof first ($cp)"; exit 1; }
threads=$(nproc)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $threads CPUs; $(date -u +%FT%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
n=$((array_mib * 1024 * 1024 / 8))

if [ -n "${STREAM_REF:-}" ]; then cp "$STREAM_REF" "$tmp/stream_ref"
else cc -O2 -fopenmp "$(dirname "$0")/stream_ref.c" -o "$tmp/stream_ref"; fi
pair() { printf '%-34s %12s %12s %8s\n' "$1" "$2" "$3" "$4"; }
pair "figure" "chainprof" "reference" "diff %"
for round in $(seq "$rounds"); do
    [ "${BENCH_SKIP_TRIAD:-0}" = 1 ] && break
    ref=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread "$tmp/stream_ref" $n 10 | awk '$1=="triad"{print $2}')
    ours=$("$cp" probe memory --size ${array_mib}M --threads $threads --no-history --json |
        python3 -c 'import json,sys; print(round([r["value"] for r in json.load(sys.stdin)["results"] if r["metric"]=="triad_bandwidth"][0],3))')
    pair "triad GB/s (${array_mib} MiB x3, round $round)" "$ours" "$ref" \
        "$(python3 -c "print(round(($ours-$ref)/$ref*100,1))")"
done

if ! command -v fio >/dev/null; then echo "fio not installed: storage comparison skipped"; exit 0; fi
get() { echo "$ours" | python3 -c "import json,sys; print(round([r['value'] for r in json.load(sys.stdin)['results'] if r['metric']=='$1'][0],3))"; }
f="$dir/cp_bench_fio"
# fio with chainprof's definition (docs/METRICS.md, storage):
#  - before every job `sync -f` (chainprof: syncfs), so no job pays for an earlier one's writeback,
#    journal commit or discard (the filesystem may be mounted with `discard`);
#  - a write starts from a new file (rm, --fallocate=none) and ends with --end_fsync=1 for buffered
#    AND O_DIRECT (fio counts the end fsync inside the job's runtime, as chainprof times through it);
#  - a read starts with the file evicted: fsync + POSIX_FADV_DONTNEED here, checked with fincore (the
#    cached-page count is printed), and --invalidate=1 again at open; --fadvise_hint=0, because chainprof
#    reads with the kernel's default readahead and fio would otherwise add POSIX_FADV_SEQUENTIAL.
fiobw() { # rw direct -> GB/s
    local extra
    if [ "$1" = write ]; then rm -f "$f"; extra="--fallocate=none --end_fsync=1"
    else
        python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$f"
        command -v fincore >/dev/null &&
            echo "fio read direct=$2: $(fincore -n -o PAGES "$f" | tr -d ' ') pages cached before the job" >&2
        extra="--invalidate=1 --fadvise_hint=0"
    fi
    sync -f "$dir"
    fio --name=b --directory="$dir" --filename=cp_bench_fio --rw=$1 --bs=1M --size=${file_mib}M --direct=$2 \
        --ioengine=psync --numjobs=1 $extra --output-format=json 2>/dev/null |
        python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; print(round(j['$1']['bw_bytes']/1e9,3))"
}
# alternate chainprof and fio so both see the same background load, in the order ABBA ABBA...
# (chainprof first in rounds 1, 4, 5, 8, ...): the probe's later phases (fsync, small files, a
# 2 x SIZE checkpoint) load the disk, so whoever comes right after them would always be the same
run_ours() {
    ours=$("$cp" probe storage --dir "$dir" --size ${file_mib}M --no-history --json)
    echo "chainprof round $round: $(echo "$ours" | python3 -c 'import json,sys; print([r["method"].split("mincore: ")[1] for r in json.load(sys.stdin)["results"] if r["metric"]=="seq_read_buffered_bandwidth"][0])')" >&2
}
run_fio() {
    w_buf=$(fiobw write 0)
    r_buf=$(fiobw read 0)
    w_dir=$(fiobw write 1)
    r_dir=$(fiobw read 1)
    rm -f "$f"
}
for round in $(seq "$rounds"); do
    if [ $((round % 4)) -le 1 ]; then run_ours; run_fio; first=chainprof; else run_fio; run_ours; first=fio; fi
    echo "round $round: $first first" >&2
    for m in "seq_write_buffered_bandwidth:$w_buf" "seq_read_buffered_bandwidth:$r_buf" \
             "seq_write_direct_bandwidth:$w_dir" "seq_read_direct_bandwidth:$r_dir"; do
        k=${m%%:*}; ref=${m#*:}; o=$(get $k)
        pair "${k%_bandwidth} GB/s (round $round)" "$o" "$ref" "$(python3 -c "print(round(($o-$ref)/$ref*100,1))")"
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
