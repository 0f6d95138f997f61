#!/usr/bin/env bash
# probe_nccl.sh - `chainprof probe coll` on GPU buffers through the fake
# NCCL of tests/fakes (host memory, ranks meet in a shared file):
#   one rank: every op's rows, busbw by the nccl-tests factor (0 for the
#     (n-1)/n forms alone), correctness column 0, method naming NCCL and its
#     version; auto picks NCCL; a corrupting NCCL is caught by the check;
#   no libnccl / a missing symbol: --backend nccl exits 5 with the reason,
#     auto falls back to host buffers and says why;
#   a release without ncclAlltoAll: all-to-all through grouped send/recv;
#   device work that never finishes: exit 1 after --timeout, NCCL aborted;
#   a collective whose communicator reports an asynchronous error (a peer
#     died under it; FAKE_NCCL_FAIL=async): exit 1 with NCCL's reason well
#     before the timeout, ncclCommAbort called; a collective that never
#     completes mid-sweep (FAKE_NCCL_FAIL=hang): the timeout, then abort;
#   mpirun -np 2 and 4 (when Open MPI is installed): the same checks with
#     the busbw factors of 2 and 4 ranks.
set -u
command -v python3 >/dev/null || { echo "skip: python3 is needed to check the JSON"; exit 77; }
fakes="$CP_BUILD_DIR/fakes"
[ -f "$fakes/one/libnccl.so" ] || { echo "skip: fake NCCL not built"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export FAKE_NCCL_DIR="$tmp"   # the fake's shared files; none may be left behind
fail() { echo "FAIL: $*"; cat "$tmp/err" 2>/dev/null; exit 1; }
sweep=(--no-history --min-bytes 256 --max-bytes 64k --factor 16 --iters 3 --warmup 1 --timeout 60 --json)
run() { # variant expected-exit [chainprof args...] -> $tmp/out.json
    v=$1 want=$2; shift 2
    CHAINPROF_GPU_LIB_DIR="$fakes/$v" timeout 120 "$CHAINPROF" probe coll "${sweep[@]}" "$@" \
        > "$tmp/out.json" 2> "$tmp/err"
    got=$?
    [ "$got" = "$want" ] || fail "probe coll $* with fake $v: exit $got, wanted $want"
}
# check.py JSON RANKS BACKEND [corrupt|noa2a]: the rows of an NCCL run
cat > "$tmp/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); backend = sys.argv[3]
mode = sys.argv[4] if len(sys.argv) > 4 else ""
c = d["coll"]
assert c["buffers"] == "device" and c["ranks"] == n and c["backend"] == backend, c
assert ("note" in c) == (n == 1) and (n > 1 or c["note"].startswith("one rank: no byte crosses a link")), c
assert c["nccl_version"] == ("2.18.5" if mode == "noa2a" else "2.28.9") and c["nccl"].startswith("used: NCCL "), c
rows = [r for r in d["results"] if r.get("op")]
ops = {r["op"] for r in rows}
want = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"} | ({"send_recv"} if n > 1 else set())
assert ops == want, ops
factor = {"all_reduce": 2 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n,
          "all_to_all": (n - 1) / n, "broadcast": 1.0, "send_recv": 1.0}
call = {"all_reduce": "ncclAllReduce sum", "all_gather": "ncclAllGather", "reduce_scatter": "ncclReduceScatter sum",
        "all_to_all": "grouped ncclSend/ncclRecv to every peer" if mode == "noa2a" else "ncclAlltoAll",
        "broadcast": "ncclBroadcast root 0", "send_recv": "grouped ncclSend/ncclRecv ring"}
for r in rows:
    assert r["method"].startswith(call[r["op"]] + " float32 on %d rank(s) (NCCL %s" % (n, c["nccl_version"])), r
    alg = r["size_bytes"] / (r["time_us"] * 1e-6) / 1e9
    assert abs(r["algbw_gbps"] - alg) <= 1e-6 * alg, r
    assert abs(r["busbw_gbps"] - alg * factor[r["op"]]) <= 1e-6 * alg, r
    if mode == "corrupt" and r["op"] == "all_reduce":
        assert r["wrong"] == n, r   # element 0 off by one on every rank
    else:
        assert r["wrong"] == 0, r
# sizes as nccl-tests rounds them (whole per-rank blocks of float32)
sizes = sorted({r["size_bytes"] for r in rows if r["op"] == "all_gather"})
assert sizes == [256 // (4 * n) * 4 * n, 4096 // (4 * n) * 4 * n, 65536 // (4 * n) * 4 * n], sizes
# in place and out of place for the ops that have both; NCCL has no in-place all-to-all
for op in ("all_reduce", "all_gather", "reduce_scatter"):
    assert {r["in_place"] for r in rows if r["op"] == op} == {True, False}, op
assert {r["in_place"] for r in rows if r["op"] == "all_to_all"} == {False}
assert {r["in_place"] for r in rows if r["op"] == "broadcast"} == {True}
PY

run one 0 --backend nccl
python3 "$tmp/check.py" "$tmp/out.json" 1 local || fail "one rank, --backend nccl"
run one 0
python3 "$tmp/check.py" "$tmp/out.json" 1 local || fail "one rank, auto"
FAKE_NCCL_CORRUPT=1 run one 0 --backend nccl
python3 "$tmp/check.py" "$tmp/out.json" 1 local corrupt || fail "corrupting NCCL not caught"
run noa2a 0 --backend nccl
python3 "$tmp/check.py" "$tmp/out.json" 1 local noa2a || fail "NCCL without ncclAlltoAll"
run one 0 --backend mpi
python3 - "$tmp/out.json" <<'PY' || fail "--backend mpi"
import json, sys
c = json.load(open(sys.argv[1]))["coll"]
assert c["buffers"] == "host" and c["nccl"] == "not requested (--backend mpi)" and c["nccl_version"] is None, c
PY
for v in nonccl ncclsym nodev; do
    run $v 5 --backend nccl
    grep -q "backend nccl: " "$tmp/err" || fail "$v: no reason on stderr"
    run $v 0
    python3 - "$tmp/out.json" $v <<'PY' || fail "$v, auto"
import json, sys
d = json.load(open(sys.argv[1])); v = sys.argv[2]
c = d["coll"]
want = {"nonccl": "unavailable: library not found: ", "ncclsym": "unavailable: symbol missing: ncclCommInitRank",
        "nodev": "unavailable: no GPU: no device:"}[v]
assert c["buffers"] == "host" and c["nccl"].startswith(want), c
rows = [r for r in d["results"] if r.get("op")]
assert rows and all("host buffers" in r["method"] and r["wrong"] == 0 for r in rows)
PY
done
# work that never finishes (a dead peer): the wait gives up at --timeout, aborts NCCL, exit 1
FAKE_STREAM_HANG=1 run one 1 --backend nccl --timeout 1
grep -q "nccl: collective did not finish within 1 s" "$tmp/err" || fail "hung stream: no timeout message"
python3 - "$tmp/out.json" <<'PY' || fail "hung stream: errors[]"
import json, sys
d = json.load(open(sys.argv[1]))
assert [e["probe"] for e in d["errors"]] == ["coll"] and "communicator aborted" in d["errors"][0]["reason"], d["errors"]
assert not [r for r in d["results"] if r.get("op")]
PY
# the 5th collective call of the sweep dies under a peer: NCCL's async error ends it long before --timeout 60
start=$SECONDS
FAKE_NCCL_ABORT_LOG="$tmp/abort" FAKE_NCCL_FAIL=async FAKE_NCCL_FAIL_AT=5 run one 1 --backend nccl --timeout 60
[ $((SECONDS - start)) -lt 30 ] || fail "async error: waited $((SECONDS - start)) s, not reported by ncclCommGetAsyncError"
grep -q "nccl: ncclAllReduce sum of [0-9]* bytes failed while running: remote process exited or there was a network error (fake) (asynchronous error); communicator aborted" \
    "$tmp/err" || fail "async error: message"
[ "$(cat "$tmp/abort")" = "abort rank 0" ] || fail "async error: ncclCommAbort not called once: $(cat "$tmp/abort")"
python3 - "$tmp/out.json" <<'PY' || fail "async error: errors[]"
import json, sys
d = json.load(open(sys.argv[1]))
assert [e["probe"] for e in d["errors"]] == ["coll"] and "asynchronous error" in d["errors"][0]["reason"], d["errors"]
PY
rm -f "$tmp/abort"
# a later collective never completes (no error from NCCL): the timeout, then abort
FAKE_NCCL_ABORT_LOG="$tmp/abort" FAKE_NCCL_FAIL=hang FAKE_NCCL_FAIL_AT=9 run one 1 --backend nccl --timeout 1
grep -q "nccl: collective did not finish within 1 s (a peer died or hangs; .* of [0-9]* bytes); communicator aborted" \
    "$tmp/err" || fail "mid-sweep hang: message"
[ "$(cat "$tmp/abort")" = "abort rank 0" ] || fail "mid-sweep hang: ncclCommAbort not called once"
rm -f "$tmp/abort"
"$CHAINPROF" probe coll --backend bogus > /dev/null 2>&1; [ $? = 2 ] || fail "--backend bogus is not a usage error"

# host and GPU buffers are different metrics: rows say which, history lists the kinds, and compare pairs
# an MPI (host) all-reduce never with an NCCL (device) one of the same size, but two NCCL runs row by row
db="$tmp/hist.db"
hist=(--db "$db" --min-bytes 256 --max-bytes 4k --factor 16 --iters 2 --warmup 1 --timeout 60 --json)
for b in mpi nccl nccl; do
    CHAINPROF_GPU_LIB_DIR="$fakes/one" timeout 120 "$CHAINPROF" probe coll --backend $b "${hist[@]}" \
        > "$tmp/h-$b.json" 2> "$tmp/err" || fail "history run --backend $b: exit $?"
done
"$CHAINPROF" history --db "$db" --json > "$tmp/hist.json" || fail "history"
"$CHAINPROF" compare 1 2 --db "$db" --json > "$tmp/cmp12.json" || fail "compare host/device"
"$CHAINPROF" compare 2 3 --db "$db" --json > "$tmp/cmp23.json" || fail "compare device/device"
python3 - "$tmp" <<'PY' || fail "buffer kinds in rows, history and compare"
import json, sys
t = sys.argv[1]
for b, kind in (("mpi", "host"), ("nccl", "device")):
    rows = [r for r in json.load(open(t + "/h-%s.json" % b))["results"] if r.get("op")]
    assert rows and {r["buffers"] for r in rows} == {kind}, (b, {r["buffers"] for r in rows})
runs = {r["id"]: r for r in json.load(open(t + "/hist.json"))["runs"]}
assert runs[1]["buffers"] == "host" and runs[2]["buffers"] == "device" and runs[3]["buffers"] == "device", runs
m12 = json.load(open(t + "/cmp12.json"))
coll = [r for r in m12["metrics"] if r["metric"].startswith("coll/busbw/")]
ar = [r for r in coll if "/all_reduce/" in r["metric"] and "/256/out_of_place/busbw_gbps" in r["metric"]]
assert sorted(r["metric"] for r in ar) == ["coll/busbw/all_reduce/device/256/out_of_place/busbw_gbps",
                                           "coll/busbw/all_reduce/host/256/out_of_place/busbw_gbps"], ar
# one rank in place moves no data: those busbw rows are kept aside (null), the others have their value
moving = [r for r in coll if not ("/in_place/" in r["metric"] and r["metric"].endswith("/busbw_gbps"))]
for r in coll:   # never side by side: each row is in one run only, and says its kind
    assert r["change_pct"] is None and r["verdict"] == "unknown" and r["why"].startswith("only in run"), r
    assert r["buffers"] == ("host" if r["why"] == "only in run A" else "device") == r["metric"].split("/")[3], r
for r in moving:
    assert (r["a"] is None) != (r["b"] is None), r
assert m12["summary"]["compared"] == 0, m12["summary"]
m23 = json.load(open(t + "/cmp23.json"))
coll = [r for r in m23["metrics"] if r["metric"].startswith("coll/busbw/")]
assert coll and all(r["buffers"] == "device" for r in coll), coll
moving = [r for r in coll if not ("/in_place/" in r["metric"] and r["metric"].endswith("/busbw_gbps"))]
assert moving and all(r["a"] is not None and r["b"] is not None for r in moving), moving
assert m23["summary"]["compared"] == len(coll), m23["summary"]
PY

if command -v mpirun >/dev/null; then
    # Open MPI keeps allocations from MPI_Init to exit by design (see coll_local.sh)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    for np in 2 4; do
        CHAINPROF_GPU_LIB_DIR="$fakes/one" FAKE_GPUS=2 timeout 300 mpirun --allow-run-as-root --oversubscribe \
            -np $np --mca btl tcp,vader,self "$CHAINPROF" probe coll --backend nccl "${sweep[@]}" \
            > "$tmp/out.json" 2> "$tmp/err" || fail "mpirun -np $np exit $?"
        python3 "$tmp/check.py" "$tmp/out.json" $np mpi || fail "mpirun -np $np"
    done
    # every rank's 3rd collective dies under it: each rank reports it and aborts, none hangs
    FAKE_NCCL_ABORT_LOG="$tmp/abort" FAKE_NCCL_FAIL=async FAKE_NCCL_FAIL_AT=3 CHAINPROF_GPU_LIB_DIR="$fakes/one" \
        FAKE_GPUS=2 timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl tcp,vader,self \
        "$CHAINPROF" probe coll --backend nccl "${sweep[@]}" > "$tmp/out.json" 2> "$tmp/err"
    rc=$?; [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "mpirun -np 2, async error: exit $rc"
    grep -q "asynchronous error); communicator aborted" "$tmp/err" || fail "mpirun -np 2, async error: message"
    [ "$(sort "$tmp/abort" | tr '\n' ' ')" = "abort rank 0 abort rank 1 " ] || fail "mpirun -np 2: aborts $(cat "$tmp/abort")"
else
    echo "note: mpirun not installed, multi-rank NCCL runs not tested"
fi
[ -z "$(ls "$tmp" | grep fake_nccl)" ] || fail "fake NCCL segment left behind"
echo ok
