#!/usr/bin/env bash
# chainprof monitor end to end: the /metrics endpoint scraped with real
# clients (curl, python3's urllib, the Prometheus Python client's parser when
# Debian's python3-prometheus-client is installed) and checked strictly
# (tests/cli/prom_check.py); every layer's series on this machine with the
# fake NVML; exact values from a captured tree (--fsroot ib-b); HTTP errors,
# the bound address, a clean stop on SIGTERM; the JSON lines and their
# alerts read back by diagnose through the same rule book.
set -u
command -v curl >/dev/null || { echo "skip: curl is needed to scrape the endpoint"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
fakes="$CP_BUILD_DIR/fakes"
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }
# the python that has the Prometheus client (Debian's), else any
PY=python3
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import prometheus_client' 2>/dev/null; then PY=$p; break; fi
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # args... : start the monitor in the background on $port, wait for /metrics
    port=$(free_port)
    "$CHAINPROF" monitor --prometheus "127.0.0.1:$port" "$@" 2> "$tmp/err" &
    pid=$!
    for _ in $(seq 100); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && return 0
        kill -0 "$pid" 2>/dev/null || fail "monitor exited early"
        sleep 0.1
    done
    fail "no /metrics on port $port"
}
stop() { # SIGTERM: a clean exit 0, within 3 s
    kill -TERM "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && fail "still running 3 s after SIGTERM"
    wait "$pid"; rc=$?
    pid=
    [ "$rc" = 0 ] || fail "exit $rc after SIGTERM"
}

# 0. the checker rejects what breaks the format (so its passes below mean something)
bad() { printf '%b' "$1" > "$tmp/bad"; "$PY" "$here/prom_check.py" "$tmp/bad" >/dev/null && fail "prom_check accepted: $1"; }
bad 'chainprof_x 1\n'                                                   # a sample without HELP/TYPE
bad '# HELP chainprof_x h\n# TYPE chainprof_x gauge\nchainprof_x{a="\\q"} 1\n' # a bad escape
bad '# HELP chainprof_x h\n# TYPE chainprof_x gauge\nchainprof_x 1\nchainprof_x 2\n' # a series twice
bad '# HELP chainprof_x h\n# TYPE chainprof_x counter\nchainprof_x 1\n'   # a counter without _total
bad '# HELP chainprof_x h\n# TYPE chainprof_x gauge\nchainprof_x 1'       # no final newline

# 1. this machine, GPUs through the fake NVML
[ -f "$fakes/one/libnvidia-ml.so" ] || { echo "skip: fake NVML not built"; exit 77; }
CHAINPROF_GPU_LIB_DIR="$fakes/one" start -i 0.2 --json-lines "$tmp/m.jsonl"
sleep 0.5 # a few samples: rates and rising counters
curl -sS -D "$tmp/headers" "http://127.0.0.1:$port/metrics" > "$tmp/metrics" || fail "curl"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$tmp/headers" || fail "content type: $(cat "$tmp/headers")"
need="chainprof_gpu_utilization_ratio chainprof_gpu_sm_clock_hertz chainprof_gpu_clock_throttled
 chainprof_gpu_memory_used_bytes chainprof_gpu_power_watts chainprof_gpu_temperature_celsius
 chainprof_gpu_pcie_transmit_bytes_per_second chainprof_gpu_pcie_replay_total chainprof_gpu_nvlink_received_bytes_total
 chainprof_gpu_ecc_uncorrected_errors_total chainprof_gpu_remapped_rows_correctable chainprof_gpu_xid_errors_total
 chainprof_network_receive_bytes_total chainprof_network_transmit_bytes_total chainprof_disk_read_bytes_total
 chainprof_disk_io_time_seconds_total chainprof_cpu_seconds_total chainprof_load_average
 chainprof_memory_available_bytes chainprof_alert chainprof_monitor_sample_duration_seconds"
[ -r /proc/pressure/cpu ] && need="$need chainprof_pressure_stalled_seconds_total"
"$PY" "$here/prom_check.py" "$tmp/metrics" $need || fail "exposition of this machine"
grep -q '^chainprof_alert{code="DMON_THROTTLED",layer="compute",severity="medium"} 1$' "$tmp/metrics" ||
    fail "no throttling alert for the fake power-capped GPU"
grep -q '^chainprof_alert{code="GPU_PCIE_REPLAY_RISING",layer="intra",severity="medium"} 1$' "$tmp/metrics" ||
    fail "no replay alert"
# a second client: python's urllib, and the HTTP errors
python3 - "$port" <<'PY' || fail "urllib / HTTP errors"
import socket, sys, urllib.error, urllib.request
port = int(sys.argv[1])
base = "http://127.0.0.1:%d" % port
body = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
assert body.startswith("# HELP chainprof_"), body[:80]
for path, code in (("/", 404), ("/metricsx", 404)):
    try:
        urllib.request.urlopen(base + path, timeout=5)
        raise SystemExit("%s answered 200" % path)
    except urllib.error.HTTPError as e:
        assert e.code == code, (path, e.code)
try:
    urllib.request.urlopen(urllib.request.Request(base + "/metrics", data=b"x", method="POST"), timeout=5)
    raise SystemExit("POST answered 200")
except urllib.error.HTTPError as e:
    assert e.code == 405 and e.headers["Allow"] == "GET, HEAD", e
head = urllib.request.urlopen(urllib.request.Request(base + "/metrics", method="HEAD"), timeout=5)
assert head.status == 200 and head.read() == b"" and int(head.headers["Content-Length"]) > 1000
# an endless request line: answered 431 at 8 KiB, not read forever
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET /" + b"a" * 9000)
assert s.recv(100).startswith(b"HTTP/1.1 431"), "oversized request"
s.close()
# only the address given is bound: 127.0.0.2 is loopback too, but not listened on
try:
    socket.create_connection(("127.0.0.2", port), timeout=2).close()
    raise SystemExit("127.0.0.2 accepted a connection")
except ConnectionRefusedError:
    pass
PY
stop
python3 - "$tmp/m.jsonl" <<'PY' || fail "JSON lines"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 2 and all(d["schema"] == "chainprof.monitor/1" for d in lines)
assert lines[0]["interval_s"] is None and lines[1]["interval_s"] > 0
g = lines[-1]["gpus"]
assert len(g) == 2 and g[1]["power_w"] == 700 and g[1]["throttle_reasons"] == 12, g
codes = {a["code"] for a in lines[-1]["alerts"]}
assert {"DMON_THROTTLED", "DMON_HOT", "GPU_PCIE_REPLAY_RISING", "GPU_XID_REPORTED"} <= codes, codes
PY
# the counter alerts again, from the file, through diagnose's rule book
"$CHAINPROF" diagnose --json "$tmp/m.jsonl" > "$tmp/d.json" || fail "diagnose of the JSON lines: exit $?"
python3 - "$tmp/d.json" <<'PY' || fail "diagnose verdicts"
import json, sys
codes = {v["code"] for v in json.load(open(sys.argv[1]))["verdicts"]}
assert {"GPU_PCIE_REPLAY_RISING", "GPU_XID_REPORTED"} <= codes, codes
PY

# 2. a captured tree: exact values through the endpoint
start -i 0.2 --no-gpu --fsroot "$CP_FIXTURES/fsroot/ib-b"
curl -sS "http://127.0.0.1:$port/metrics" > "$tmp/ib"
"$PY" "$here/prom_check.py" "$tmp/ib" chainprof_infiniband_port_symbol_error_total || fail "exposition of ib-b"
for l in 'chainprof_infiniband_port_symbol_error_total{device="mlx5_1",port="1"} 19' \
         'chainprof_infiniband_port_data_transmitted_bytes_total{device="mlx5_0",port="1"} 20000000000' \
         'chainprof_infiniband_port_rate_bytes{device="mlx5_0",port="1"} 50000000000' \
         'chainprof_infiniband_port_ecn_marked_packets_total{device="mlx5_2",port="1"} 4800' \
         'chainprof_alert{code="NIC_BELOW_LINE_RATE",layer="inter",severity="medium"} 1'; do
    grep -qxF "$l" "$tmp/ib" || fail "missing: $l"
done
stop

# 3. usage and runtime errors
"$CHAINPROF" monitor --prometheus nonsense -n 1 --no-gpu 2>/dev/null; [ $? = 2 ] || fail "bad address not a usage error"
"$CHAINPROF" monitor --interval 0 -n 1 2>/dev/null; [ $? = 2 ] || fail "interval 0 not a usage error"
python3 -c 'import socket,subprocess,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1)
r=subprocess.run([sys.argv[1],"monitor","--no-gpu","-n","1","--prometheus","127.0.0.1:%d" % s.getsockname()[1]],stderr=subprocess.PIPE)
assert r.returncode == 1 and b"cannot listen" in r.stderr, r' "$CHAINPROF" || fail "port in use"
echo "ok"
