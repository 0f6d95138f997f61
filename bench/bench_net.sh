#!/usr/bin/env bash
# bench_net.sh - TCP loopback bandwidth: chainprof probe net vs iperf3 with the
# same stream count and duration (server and client as separate processes),
# rounds alternating the programs, then collective busbw under mpirun -np 4.
# Two iperf3 references for N streams:
#   "iperf3 -P N": one client with N streams. iperf3 before 3.16 (Debian 12
#     ships 3.12) runs every stream of a test in ONE thread, so for N > 1 it
#     measures that thread, not N streams;
#   "iperf3 N x -P 1": N client/server pairs on separate ports started at once,
#     one process (and so one thread) per stream, their sum_received summed:
#     the same-stream-count reference for a single-threaded iperf3, as
#     chainprof runs a thread per stream.
# A third reference when qperf is installed (Debian main): "qperf N x tcp_bw",
#   N servers and clients on separate ports, 128 KiB messages, summed. Its
#   receiver loops on recv() alone, where iperf3 3.12's server calls pselect6
#   before every read (counted with strace -c), so it costs the receiver less.
# Usage: bench/bench_net.sh [BUILD_DIR] ; prints figures for docs/PERFORMANCE.md.
# BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_STREAMS ("1 4"), BENCH_COLL=0 skips mpirun.
# Skips the iperf3 / qperf comparisons when they are absent (apt-get install iperf3 qperf).
set -u
build=${1:-build}
cp=$build/chainprof
secs=${BENCH_SECONDS:-5}
rounds=${BENCH_ROUNDS:-3}
port=$(( 30000 + $$ % 20000 ))
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r); $(date -u +%FT%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
command -v iperf3 >/dev/null && echo "reference: $(iperf3 --version | head -1)"
pct() { python3 -c "import sys; o,r=float(sys.argv[1]),float(sys.argv[2]); print('%+.1f' % ((o-r)/r*100))" "$1" "$2" 2>/dev/null || echo n/a; }
# iperf3 PAIRS STREAMS_EACH -> summed sum_received GB/s; pairs on ports port+1..port+PAIRS
iperf_sum() {
  local pairs=$1 each=$2 i srv=() out=()
  for i in $(seq "$pairs"); do
    iperf3 -s -1 -p $((port + i)) >/dev/null 2>&1 & srv+=($!)
  done
  sleep 0.5
  for i in $(seq "$pairs"); do
    out+=("$(mktemp)")
    timeout 120 iperf3 -c 127.0.0.1 -p $((port + i)) -P "$each" -t "$secs" -J > "${out[-1]}" 2>/dev/null &
  done
  wait
  python3 -c 'import json,sys; print("%.3f" % sum(json.load(open(f))["end"]["sum_received"]["bits_per_second"] / 8e9 for f in sys.argv[1:]))' "${out[@]}" 2>/dev/null || echo n/a
  rm -f "${out[@]}"
}
# qperf PAIRS -> summed tcp_bw GB/s (1e9 B/s; qperf prints decimal KB/MB/GB per second)
qperf_sum() {
  local pairs=$1 i srv=() out=()
  for i in $(seq "$pairs"); do
    qperf --listen_port $((port + 100 + i)) >/dev/null 2>&1 & srv+=($!)
  done
  sleep 0.5
  for i in $(seq "$pairs"); do
    out+=("$(mktemp)")
    timeout 120 qperf -lp $((port + 100 + i)) 127.0.0.1 -t "$secs" -m 128K tcp_bw > "${out[-1]}" 2>&1 &
  done
  wait "${!}" 2>/dev/null; sleep 0.2
  kill "${srv[@]}" 2>/dev/null; wait 2>/dev/null
  python3 -c '
import re, sys
mult = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
tot, n = 0.0, 0
for f in sys.argv[1:]:
    m = re.search(r"bw\s*=\s*([0-9.]+)\s*([KMGT]B)/sec", open(f).read())
    if m:
        tot += float(m.group(1)) * mult[m.group(2)]; n += 1
print("%.3f" % (tot / 1e9) if n == len(sys.argv) - 1 else "n/a")' "${out[@]}"
  rm -f "${out[@]}"
}
printf '%-7s %-8s %-26s %-12s %-10s\n' round streams program "one-way GB/s" "chainprof vs"
for round in $(seq "$rounds"); do
  for streams in ${BENCH_STREAMS:-1 4}; do
    "$cp" probe net --no-history --listen 127.0.0.1:$port --timeout 30 >/dev/null 2>&1 &
    srv=$!
    sleep 0.3
    ours=$(timeout 120 "$cp" probe net --no-history --connect 127.0.0.1:$port --streams $streams --seconds $secs --json 2>/dev/null |
      python3 -c 'import json,sys; r={x["metric"]:x for x in json.load(sys.stdin)["results"]}; print("%.3f %.1f" % (r["tcp_bandwidth_oneway"]["value"], r["tcp_latency_p50"]["value"]))')
    wait $srv
    o=${ours% *}
    printf '%-7s %-8s %-26s %-12s %-10s\n' "$round" "$streams" "chainprof (p50 ${ours#* } us)" "$o" ""
    if command -v qperf >/dev/null; then
      ref=$(qperf_sum "$streams")
      printf '%-7s %-8s %-26s %-12s %-10s\n' "$round" "$streams" "qperf $streams x tcp_bw (summed)" "$ref" "$(pct "$o" "$ref")"
    fi
    command -v iperf3 >/dev/null || continue
    ref=$(iperf_sum 1 "$streams")
    printf '%-7s %-8s %-26s %-12s %-10s\n' "$round" "$streams" "iperf3 -P $streams" "$ref" "$(pct "$o" "$ref")"
    if [ "$streams" -gt 1 ]; then
      ref=$(iperf_sum "$streams" 1)
      printf '%-7s %-8s %-26s %-12s %-10s\n' "$round" "$streams" "iperf3 $streams x -P 1 (summed)" "$ref" "$(pct "$o" "$ref")"
    fi
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "${BENCH_COLL:-1}" = 0 ] && exit 0
if command -v mpirun >/dev/null; then
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 "$cp" probe coll --no-history --min-bytes 1M --max-bytes 16M --factor 4 \
    --iters 10 --warmup 3 --json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    if r.get("op") and not r["in_place"] or r.get("op") == "broadcast":
        print("coll np=4 %-14s %9d B  time %9.1f us  algbw %6.3f  busbw %6.3f GB/s  wrong %d" % (
            r["op"], r["size_bytes"], r["time_us"], r["algbw_gbps"], r["busbw_gbps"], r["wrong"]))'
fi
