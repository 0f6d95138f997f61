#!/usr/bin/env bash
# fuzz_campaign.sh - run fuzz targets a few at a time and record, per target,
# what docs/TESTING.md tabulates: cov, ft, total execs, exec/s, the CPU
# seconds the target actually received (user+sys, which on a shared machine
# is far less than the wall time) and the load average at start and end.
#
# usage: scripts/fuzz_campaign.sh BUILD_DIR SECONDS PARALLEL TARGET...
# Each target goes through scripts/fuzz.sh at nice 19 (same corpora, same
# sanitizers, findings in BUILD_DIR/fuzz-findings). One line per target is
# appended to BUILD_DIR/fuzz-campaign.tsv when it ends.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=$1 secs=$2 par=$3
shift 3
out="$build/fuzz-campaign.tsv"
[ -f "$out" ] || printf 'target\trc\tcov\tft\texecs\texec_per_s\tcpu_s\twall_s\tload_start\tload_end\n' >"$out"

one() {
    local t=$1 name=${1#fuzz_} l0 l1 tf log stats
    l0=$(cut -d' ' -f1 /proc/loadavg)
    tf=$(mktemp)
    /usr/bin/time -f '%U %S %e' -o "$tf" nice -n 19 bash "$here/scripts/fuzz.sh" "$build" "$secs" "$t" \
        >"$build/fuzz-findings/$name.summary" 2>&1
    local rc=$?
    l1=$(cut -d' ' -f1 /proc/loadavg)
    log="$build/fuzz-findings/$name.log"
    stats=$(grep -E '^#[0-9]+.*cov:' "$log" | tail -1)
    local cov ft execs eps
    cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$stats")
    ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$stats")
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)
    eps=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log" | tail -1)
    # time(1) puts "Command exited with non-zero status N" first on a finding
    read -r u s e < <(tail -1 "$tf")
    rm -f "$tf"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%s\t%s\n' "$t" "$rc" "${cov:--}" "${ft:--}" \
        "${execs:--}" "${eps:--}" "$(echo "$u + $s" | bc)" "$e" "$l0" "$l1" >>"$out"
}

mkdir -p "$build/fuzz-findings"
for t in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n; done
    one "$t" &
done
wait
