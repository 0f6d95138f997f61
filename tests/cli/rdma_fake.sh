#!/usr/bin/env bash
# rdma_fake.sh - `chainprof probe net` RDMA through the fake libibverbs
# (tests/fakes/fake_ibverbs.c: RC QPs between processes over Unix sockets;
# this machine has no RDMA device). A --listen/--connect session with 2 QPs
# must give rows per operation and size whose figures agree with each other
# (BW = size / time per message, message rate = 1 / time per message,
# efficiency = BW / line rate of the fake's 4X EDR port); latency rows are
# ordered (min <= typical <= p99 <= max). The fake's failure modes must end
# with their reason: no device and port down are "unavailable" (exit 5 only
# with --rdma), modify_qp failing on the server reaches the client with the
# errno text, a peer killed mid-test gives a completion error, not a hang.
# The fake holds the probe to real queue rules (completions only for
# signaled requests, send-queue slots freed only by a polled completion,
# CQs that overrun): selective signaling must show in its counters
# (FAKE_IBV_STATS), and a transfer the fake corrupts (FAKE_IBV_CORRUPT) must
# fail the payload check of that operation with its reason.
set -u
CHAINPROF=${CHAINPROF:?}
build=${CP_BUILD_DIR:?}
export CHAINPROF_IBVERBS_LIB="$build/fakes/ibverbs/libibverbs.so"
[ -f "$CHAINPROF_IBVERBS_LIB" ] || { echo "skip: fake libibverbs not built"; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; true; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*.err; do echo "== $f"; cat "$f"; done; exit 1; }
port=$(( 20000 + ($$ * 7) % 20000 ))
source "$(cd "$(dirname "$0")/.." && pwd)/listen.sh"
N=(--no-history --seconds 0.1 --timeout 10)

# 1. a session: 2 QPs, sizes 4 KiB, 32 KiB, 256 KiB; latency at 4 KiB and 32 KiB
timeout 60 "$CHAINPROF" probe net "${N[@]}" --listen 127.0.0.1:$port --json > "$tmp/srv.json" 2> "$tmp/srv.err" &
srv=$!; pids+=($srv)
wait_listen $port
timeout 60 "$CHAINPROF" probe net "${N[@]}" --connect 127.0.0.1:$port --qps 2 --min-bytes 4k --max-bytes 256k \
  --factor 8 --iters 200 --json > "$tmp/cli.json" 2> "$tmp/cli.err" || fail "client exited $?"
wait $srv || fail "server exited $?"
python3 - "$tmp/cli.json" "$tmp/srv.json" <<'PY' || fail "session rows"
import json, sys
c = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert c["net"]["rdma"].startswith("measured: fakeib0 port 1, 2 QP(s)"), c["net"]
assert s["net"]["rdma"].startswith("served: fakeib0 port 1, 2 QP(s)"), s["net"]
rows = [r for r in c["results"] if r["metric"].startswith("rdma_")]
by = {(r["metric"], r["size_bytes"]): r for r in rows}
sizes = [4096, 32768, 262144]
line = 100 / 8  # 4X EDR: 4 x 25 Gb/s
for op in ("write", "read", "send"):
    for sz in sizes:
        bw, pk, mr = by[("rdma_%s_bw" % op, sz)], by[("rdma_%s_bw_peak" % op, sz)], by[("rdma_%s_msg_rate" % op, sz)]
        assert bw["layer"] == "inter" and bw["unit"] == "GB/s" and bw["op"] == "rdma_" + op
        assert bw["peak"] == line and abs(bw["efficiency"] - bw["value"] / line) < 1e-12, bw
        t = bw["time_us"]
        assert t > 0 and abs(bw["value"] - sz / t / 1e3) <= 1e-9 * bw["value"], (bw["value"], sz, t)
        assert abs(mr["value"] - 1 / t) <= 1e-9 * mr["value"] and mr["unit"] == "Mmsg/s", mr
        assert pk["value"] >= bw["value"] * (1 - 1e-9), (pk, bw)
        assert "2 QP(s)" in bw["method"] and ("messages of %d B" % sz) in bw["method"], bw["method"]
        # 200 messages per QP unless the size budget cut it: never more than asked
        n = int(bw["method"].split(" messages of")[0].split()[-1])
        assert 0 < n <= 400, n
for op in ("write", "send"):
    for sz in (4096, 32768):
        g = lambda k: by[("rdma_%s_lat_%s" % (op, k), sz)]["value"]
        assert 0 < g("min") <= g("typical") <= g("p99") <= g("p999") <= g("max"), op
        assert g("min") <= g("avg") <= g("max")
        assert by[("rdma_%s_lat_typical" % op, sz)]["unit"] == "us"
    assert ("rdma_%s_lat_typical" % op, 262144) not in by  # latency stops at 64 KiB
assert len(rows) == 3 * 3 * 3 + 2 * 2 * 7, len(rows)
# the TCP rows are still there
assert any(r["metric"] == "tcp_bandwidth_oneway" for r in c["results"])
PY

# 2. no device / port down: unavailable; an error (exit 5) only with --rdma
for mode in nodev portdown; do
  FAKE_IBV_MODE=$mode timeout 30 "$CHAINPROF" probe net "${N[@]}" --max-bytes 4k --json > "$tmp/$mode.json" 2> "$tmp/$mode.err" ||
    fail "$mode: auto mode exited $?"
  FAKE_IBV_MODE=$mode timeout 30 "$CHAINPROF" probe net "${N[@]}" --max-bytes 4k --rdma > /dev/null 2> "$tmp/$mode-req.err"
  rc=$?; [ $rc -eq 5 ] || fail "$mode --rdma: exit $rc"
done
grep -q '"rdma": "unavailable: no RDMA device' "$tmp/nodev.json" || fail "nodev status"
grep -q "no RDMA device (libibverbs lists none)" "$tmp/nodev-req.err" || fail "nodev message"
grep -q "port 1 of fakeib0 is not active (state DOWN)" "$tmp/portdown-req.err" || fail "portdown message"

# 3. modify_qp fails on the server: both ends say so, with the errno text
FAKE_IBV_MODE=modifyfail timeout 30 "$CHAINPROF" probe net "${N[@]}" --listen 127.0.0.1:$port > /dev/null 2> "$tmp/mf-srv.err" &
srv=$!; pids+=($srv)
wait_listen $port
timeout 30 "$CHAINPROF" probe net "${N[@]}" --connect 127.0.0.1:$port --max-bytes 4k > /dev/null 2> "$tmp/mf.err"
rc=$?; [ $rc -eq 1 ] || fail "modifyfail: client exit $rc"
wait $srv; [ $? -eq 1 ] || fail "modifyfail: server exit"
grep -q "peer 127.0.0.1:$port: modify_qp to RTR on fakeib0 .*: Network is unreachable" "$tmp/mf.err" || fail "modifyfail message"
grep -q "modify_qp to RTR on fakeib0 .*: Network is unreachable" "$tmp/mf-srv.err" || fail "modifyfail server message"

# 4. RoCE: the fake demands a GRH; the default GID index 0 gives one
FAKE_IBV_LINK=eth timeout 30 "$CHAINPROF" probe net "${N[@]}" --max-bytes 4k --min-bytes 4k --iters 50 --json > "$tmp/roce.json" 2> "$tmp/roce.err" ||
  fail "roce exited $?"
grep -q 'RoCE, 100 Gb/s' "$tmp/roce.json" || fail "roce method"

# 5. the server killed in the middle of the RDMA bandwidth tests
"$CHAINPROF" probe net "${N[@]}" --listen 127.0.0.1:$port > /dev/null 2>&1 &   # bounded by --timeout
srv=$!; pids+=($srv)
wait_listen $port
# kill it once its QPs exist (the fake's QPs listen on abstract sockets named after them), so the
# kill lands in the RDMA phase however long the TCP phases took on a loaded machine
( for _ in $(seq 300); do
    [ "$(ss -Hxlp 2>/dev/null | grep chainprof-fakeibv | grep -c "pid=$srv,")" -ge 1 ] && break
    sleep 0.05
  done
  sleep 0.3; kill -9 $srv ) &
pids+=($!)
start=$SECONDS
timeout 60 "$CHAINPROF" probe net --no-history --seconds 0.2 --timeout 5 --connect 127.0.0.1:$port --min-bytes 1M \
  --max-bytes 8M --iters 100000 > /dev/null 2> "$tmp/killed.err"
rc=$?; [ $rc -eq 1 ] || fail "killed peer: exit $rc"
grep -Eq "rdma: .*(completion error|peer closed|no completion|no progress)" "$tmp/killed.err" || fail "killed peer: message"
[ $((SECONDS - start)) -lt 30 ] || fail "killed peer: took too long"
# 6. selective signaling: 2 QPs x 300 bandwidth messages per operation, no latency sizes (128 KiB > 64 KiB);
# depth 64: every 32nd request (half the depth, under perftest's 100) and the last of each QP is signaled:
# 9 + 1 per QP and operation
FAKE_IBV_STATS="$tmp/stats" timeout 60 "$CHAINPROF" probe net "${N[@]}" --qps 2 --min-bytes 128k --max-bytes 128k \
  --iters 300 --json > "$tmp/sig.json" 2> "$tmp/sig.err" || fail "selective signaling: exit $?"
grep -q "overrun\|outstanding" "$tmp/sig.err" && fail "selective signaling: the fake saw a queue overrun"
# both ends live in this process: the last line counts both
read -r _ posted _ signaled _ polled _ maxout < <(tail -n 1 "$tmp/stats")
[ "$posted" = 1800 ] && [ "$signaled" = 60 ] && [ "$polled" = 60 ] && [ "$maxout" -le 64 ] ||
  fail "selective signaling: posted $posted signaled $signaled polled $polled max outstanding $maxout"
python3 - "$tmp/sig.json" <<'PY' || fail "selective signaling rows"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["metric"].startswith("rdma_")]
assert sorted(r["metric"] for r in rows if r["metric"].endswith("_bw")) == ["rdma_read_bw", "rdma_send_bw", "rdma_write_bw"]
for r in rows:
    if r["metric"].endswith("_bw"):
        assert "600 messages of 131072 B" in r["method"], r["method"]
        assert r["value"] > 0 and r["size_bytes"] == 131072
PY

# 7. payload check: a corrupted transfer of one operation fails that test (exit 1) with the reason;
# the operations before it keep their rows
for op in write read send; do
  FAKE_IBV_CORRUPT=$op timeout 60 "$CHAINPROF" probe net "${N[@]}" --qps 2 --min-bytes 4k --max-bytes 16k --iters 50 \
    --json > "$tmp/corrupt-$op.json" 2> "$tmp/corrupt-$op.err"
  rc=$?; [ $rc -eq 1 ] || fail "corrupt $op: exit $rc"
  OP=$(echo $op | tr a-z A-Z)
  want="RDMA $OP bandwidth"; [ $op = send ] && want="SEND bandwidth"
  grep -q "rdma: .*$want: payload check failed on fakeib0 QP [0-9]*: 1 of 4096 bytes differ from what was sent, the first at offset 2048" \
    "$tmp/corrupt-$op.err" || fail "corrupt $op: message"
  python3 - "$tmp/corrupt-$op.json" $op <<'PY' || fail "corrupt $op: rows"
import json, sys
d = json.load(open(sys.argv[1])); op = sys.argv[2]
have = {r["metric"] for r in d["results"] if r["metric"].startswith("rdma_")}
before = {"write": [], "read": ["write"], "send": ["write", "read"]}[op]
assert {m for m in have if m.endswith("_bw")} == {"rdma_%s_bw" % o for o in before}, have
assert any("payload check failed" in e["reason"] for e in d["errors"]), d["errors"]
PY
done
# a clean run over the same sizes passes the check
timeout 60 "$CHAINPROF" probe net "${N[@]}" --qps 2 --min-bytes 4k --max-bytes 16k --iters 50 > /dev/null 2> "$tmp/clean.err" ||
  fail "clean run after the corrupt ones: exit $?"
echo ok
