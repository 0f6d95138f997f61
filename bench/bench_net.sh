#!/usr/bin/env bash
# bench_net.sh - TCP loopback bandwidth: chainprof probe net vs iperf3 with the
# same stream count and duration (both as two processes, server and client),
# then collective busbw under mpirun -np 4 on this machine.
# Usage: bench/bench_net.sh [BUILD_DIR] ; prints figures for docs/PERFORMANCE.md.
# Skips the iperf3 comparison when iperf3 is absent (apt-get install iperf3).
set -u
build=${1:-build}
cp=$build/chainprof
secs=${BENCH_SECONDS:-5}
port=$(( 30000 + $$ % 20000 ))
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)"
for streams in 1 4; do
  "$cp" probe net --no-history --listen 127.0.0.1:$port --timeout 30 >/dev/null 2>&1 &
  srv=$!
  sleep 0.3
  ours=$(timeout 120 "$cp" probe net --no-history --connect 127.0.0.1:$port --streams $streams --seconds $secs --json 2>/dev/null |
    python3 -c 'import json,sys; r={x["metric"]:x for x in json.load(sys.stdin)["results"]}; print("%.3f %.1f" % (r["tcp_bandwidth_oneway"]["value"], r["tcp_latency_p50"]["value"]))')
  wait $srv
  if command -v iperf3 >/dev/null; then
    iperf3 -s -1 -p $port >/dev/null 2>&1 &
    isrv=$!
    sleep 0.3
    ref=$(timeout 120 iperf3 -c 127.0.0.1 -p $port -P $streams -t $secs -J 2>/dev/null |
      python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e9))')
    wait $isrv
  else
    ref="n/a (iperf3 not installed)"
  fi
  echo "tcp loopback, $streams stream(s), ${secs}s: chainprof ${ours% *} GB/s (latency p50 ${ours#* } us), iperf3 $ref GB/s"
done
if command -v mpirun >/dev/null; then
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 "$cp" probe coll --no-history --min-bytes 1M --max-bytes 16M --factor 4 \
    --iters 10 --warmup 3 --json 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    if r.get("op") and not r["in_place"] or r.get("op") == "broadcast":
        print("coll np=4 %-14s %9d B  time %9.1f us  algbw %6.3f  busbw %6.3f GB/s  wrong %d" % (
            r["op"], r["size_bytes"], r["time_us"], r["algbw_gbps"], r["busbw_gbps"], r["wrong"]))'
fi
