#!/usr/bin/env bash
# bench_monitor.sh - what `chainprof monitor` costs the node it watches: the
# time one sample of every layer takes (chainprof_monitor_sample_duration_seconds
# as the endpoint reports it), the monitor's own CPU time per sample at a
# 0.1 s interval (utime + stime from /proc/PID/stat over a run), the latency
# of a /metrics scrape and the exposition's size. GPUs through the fake NVML
# (tests/fakes), the rest is this machine's /proc and /sys. Figures only (not a
# pass/fail test); record them in docs/PERFORMANCE.md ("chainprof monitor").
#
#   bench/bench_monitor.sh [BUILD_DIR] [SECONDS] [SCRAPES]     (default build 10 200)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-10}
scrapes=${3:-200}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
CHAINPROF_GPU_LIB_DIR="$build/fakes/one" "$build/chainprof" monitor -q -i 0.1 --prometheus "127.0.0.1:$port" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break; sleep 0.1; done
t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
sleep "$secs"
t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
python3 - "$port" "$scrapes" "$secs" "$t0" "$t1" <<'PY'
import statistics, sys, time, urllib.request
port, n, secs, t0, t1 = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
lat, dur, size, series = [], [], 0, 0
for _ in range(n):
    a = time.perf_counter()
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
    lat.append((time.perf_counter() - a) * 1e3)
    for line in body.splitlines():
        if line.startswith("chainprof_monitor_sample_duration_seconds "):
            dur.append(float(line.split()[1]) * 1e3)
    size, series = len(body), sum(1 for l in body.splitlines() if l and not l.startswith("#"))
samples = secs / 0.1
print("exposition: %d bytes, %d series" % (size, series))
print("sample of every layer: median %.3f ms, max %.3f ms (%d scrapes)" % (statistics.median(dur), max(dur), n))
print("monitor CPU: %.3f ms per sample (%.1f %% of one CPU at -i 0.1, over %.0f s)" % (
    (t1 - t0) * 10 / samples, (t1 - t0) / secs, secs))
print("scrape latency: median %.3f ms, p90 %.3f ms" % (statistics.median(lat), sorted(lat)[int(0.9 * n)]))
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared)"
