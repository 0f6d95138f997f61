#!/usr/bin/env bash
# net.sh - `chainprof probe net` end to end on loopback: a --listen/--connect
# session reports bandwidth and latency on both ends; a refused port, a
# silent listener, a peer killed mid-test, a bad address and (in a network
# namespace, when one can be made) an unreachable peer each end with a clear
# message and exit status 1 (2 for usage), within the timeout, never a hang.
set -u
CHAINPROF=${CHAINPROF:?}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; [ -n "${NS:-}" ] && ip netns del "$NS" 2>/dev/null; true; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }
port=$(( 20000 + $$ % 20000 ))
source "$here/listen.sh"

# 1. a whole session, two streams
timeout 30 "$CHAINPROF" probe net --no-history --listen 127.0.0.1:$port --timeout 10 --json > "$tmp/srv.json" 2> "$tmp/srv.err" &
srv=$!; pids+=($srv)
wait_listen $port
timeout 30 "$CHAINPROF" probe net --no-history --connect 127.0.0.1:$port --streams 2 --seconds 0.5 --json > "$tmp/cli.json" 2> "$tmp/cli.err" ||
  fail "client session exited $?"
wait $srv || fail "server session exited $?"
python3 - "$tmp/cli.json" "$tmp/srv.json" <<'PY' || fail "session rows"
import json, sys
c = {r["metric"]: r for r in json.load(open(sys.argv[1]))["results"]}
s = {r["metric"]: r for r in json.load(open(sys.argv[2]))["results"]}
for k in ("tcp_bandwidth_oneway", "tcp_bandwidth_bidir", "tcp_latency_p50", "tcp_latency_p99"):
    assert c[k]["value"] > 0, k
assert c["tcp_latency_p99"]["value"] >= c["tcp_latency_p50"]["value"]
assert "2 stream(s)" in c["tcp_bandwidth_oneway"]["method"]
assert s["tcp_bandwidth_oneway"]["value"] > 0
# both ends computed one-way bandwidth from the same receiver-side numbers
assert abs(s["tcp_bandwidth_oneway"]["value"] - c["tcp_bandwidth_oneway"]["value"]) <= 1e-6 * c["tcp_bandwidth_oneway"]["value"]
PY

# 2. refused port (nothing listens there any more)
timeout 20 "$CHAINPROF" probe net --no-history --connect 127.0.0.1:$port --timeout 5 > /dev/null 2> "$tmp/refused.err"
rc=$?; [ $rc -eq 1 ] || fail "refused: exit $rc"
grep -q "connection refused" "$tmp/refused.err" || fail "refused: message"

# 3. a listener nobody connects to gives up after its timeout
timeout 20 "$CHAINPROF" probe net --no-history --listen 127.0.0.1:$port --timeout 1 > /dev/null 2> "$tmp/accept.err"
rc=$?; [ $rc -eq 1 ] || fail "accept timeout: exit $rc"
grep -q "no peer connected within" "$tmp/accept.err" || fail "accept timeout: message"

# 4. the server killed in the middle of the bandwidth phase
"$CHAINPROF" probe net --no-history --listen 127.0.0.1:$port --timeout 10 > /dev/null 2>&1 &   # bounded by --timeout
srv=$!; pids+=($srv)
wait_listen $port
( sleep 1.2; kill -9 $srv ) &
pids+=($!)
start=$SECONDS
timeout 30 "$CHAINPROF" probe net --no-history --connect 127.0.0.1:$port --seconds 5 --timeout 5 > /dev/null 2> "$tmp/killed.err"
rc=$?; [ $rc -eq 1 ] || fail "killed peer: exit $rc"
grep -Eq "peer closed the connection|connection refused|no progress" "$tmp/killed.err" || fail "killed peer: message"
[ $((SECONDS - start)) -lt 15 ] || fail "killed peer: took too long"

# 5. usage: a connect address without a port
timeout 10 "$CHAINPROF" probe net --no-history --connect localhost > /dev/null 2> "$tmp/usage.err"
rc=$?; [ $rc -eq 2 ] || fail "usage: exit $rc"

# 6. unreachable peer: a namespace whose only route leads nowhere
source "$here/netns.sh"
if netns_can 2>/dev/null; then
  NS="cpnet$$"; NS=${NS:0:12}
  ip netns add "$NS" && ip -n "$NS" link set lo up && ip -n "$NS" link add d0 type veth peer name d1 && ip -n "$NS" link set d1 up &&
    ip -n "$NS" addr add 10.213.250.1/24 dev d0 && ip -n "$NS" link set d0 up || fail "netns setup"
  start=$SECONDS
  timeout 20 ip netns exec "$NS" "$CHAINPROF" probe net --no-history --connect 10.213.250.9:$port --timeout 2 > /dev/null 2> "$tmp/unreach.err"
  rc=$?; [ $rc -eq 1 ] || fail "unreachable: exit $rc"
  grep -Eq "unreachable|no answer|No route" "$tmp/unreach.err" || fail "unreachable: message"
  [ $((SECONDS - start)) -lt 10 ] || fail "unreachable: took too long"
else
  echo "note: network namespaces unavailable, unreachable-peer case skipped"
fi
echo ok
