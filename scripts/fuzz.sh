#!/usr/bin/env bash
# fuzz.sh - run every libFuzzer target of a fuzz build for a bounded time.
#
# usage: scripts/fuzz.sh [BUILD_DIR] [SECONDS_PER_TARGET] [TARGET...]
#   BUILD_DIR defaults to build-fuzz (configured with -DCP_FUZZ=ON
#   -DCP_SANITIZE=ON by `make fuzz`), SECONDS to $FUZZ_SECONDS or 60.
#
# Each target starts from a working corpus under BUILD_DIR/fuzz-corpus/<name>
# (kept between runs, never in the repository), its seed corpus
# tests/fuzz/corpus/<name>, and the real files of ../shared/data that fit it
# (read in place, never copied; skipped with a message when absent). A
# finding is left as BUILD_DIR/fuzz-findings/<name>/crash-* and the script
# exits 1: minimise it, add it to tests/fuzz/corpus/<name>/ as regress-*,
# and ctest replays it from then on. The last line of each target's log
# (cov: and ft: counters) is printed, so coverage can be compared between
# runs (docs/TESTING.md).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-fuzz}
secs=${2:-${FUZZ_SECONDS:-60}}
shift $(( $# > 2 ? 2 : $# ))
data="$here/../shared/data"

# seed directories from the shared data for a corpus name
seeds_for() {
    [ -d "$data" ] || return 0
    case "$1" in
        kineto|analyze|jsontok) echo "$data/hta" ;;
        nccltests|perftest|topo|dmon|fio|iperf|logs) echo "$data/logs" ;;
    esac
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$here"/tests/fuzz/fuzz_*.c; do
        targets+=("$(basename "$f" .c)")
    done
fi
[ -d "$data" ] || echo "fuzz.sh: $data absent: seeds from tests/fuzz/corpus only"

status=0
for t in "${targets[@]}"; do
    bin="$build/tests/$t"
    if [ ! -x "$bin" ]; then
        echo "fuzz.sh: $bin not built (make fuzz)" >&2
        status=1
        continue
    fi
    name=${t#fuzz_}
    work="$build/fuzz-corpus/$name"
    found="$build/fuzz-findings/$name"
    mkdir -p "$work" "$found"
    dirs=("$work" "$here/tests/fuzz/corpus/$name")
    for s in $(seeds_for "$name"); do
        [ -d "$s" ] && dirs+=("$s")
    done
    log="$build/fuzz-findings/$name.log"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$found/" -print_final_stats=1 "${dirs[@]}" >"$log" 2>&1
    rc=$?
    last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
    echo "$t: rc=$rc ${last}"
    if [ $rc -ne 0 ]; then
        status=1
        grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log"
    fi
done
exit $status
