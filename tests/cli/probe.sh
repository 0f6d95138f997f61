#!/usr/bin/env bash
# chainprof probe end to end: the quick pass gives valid chainprof.probe/1
# JSON with rows for every layer that applies; history records runs and
# compare diffs them (exit 4 on a regression with --fail-on-regression);
# two probes writing at once both land; a writer killed mid-transaction
# leaves a consistent database without a half run; bad directories fail
# with a clear message and exit 1; a machine kept busy is reported not quiet.
set -u
command -v python3 >/dev/null || { echo "skip: python3 is needed to check the JSON"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
db="$tmp/h.db"
P() { "$CHAINPROF" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }

# 1. quick pass: every layer that applies has rows; keys of every row
P probe --dir "$tmp" --size 16M --db "$db" --json -o "$tmp/probe.txt" > "$tmp/q.json" || fail "quick probe exit $?"
[ -s "$tmp/probe.txt" ] || fail "-o probe.txt not written"
python3 - "$tmp/q.json" <<'PY' || fail "quick JSON check"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "chainprof.probe/1", d["schema"]
assert isinstance(d["topology"], dict)
keys = ["probe", "layer", "metric", "value", "unit", "peak", "efficiency", "method", "op", "size_bytes",
        "time_us", "algbw_gbps", "busbw_gbps", "in_place", "wrong", "buffers",
        "stat", "rounds", "median", "min", "max", "p10", "p90", "cv_pct", "rounds_rejected", "impossible",
        "impossible_value"]
layers = {r["layer"] for r in d["results"]}
for r in d["results"]:
    assert list(r.keys()) == keys, r.keys()
    assert r["layer"] in ("compute", "memory", "intra", "inter", "storage")
    assert r["buffers"] in (("host", "device") if r["busbw_gbps"] is not None else (None,)), r
    assert r["value"] is None or r["value"] >= 0, r
    if r["peak"] is None or r["value"] is None: assert r["efficiency"] is None
    else: assert abs(r["efficiency"] - r["value"] / r["peak"]) < 1e-9
ran = {p["probe"] for p in d["probes"]}
for need in ("compute", "memory", "storage"):
    assert need in ran, (need, ran)
for need in ("compute", "memory", "storage"):
    assert need in layers, (need, layers)
metrics = {r["metric"] for r in d["results"]}
for m in ("triad_bandwidth", "cpu_fp64_gflops_1core", "seq_write_buffered_bandwidth", "fsync_latency_p99",
          "checkpoint_sync_stall", "checkpoint_async_stall"):
    assert m in metrics, m
skipped = {s["probe"]: s["reason"] for s in d["skipped"]}
for s in d["skipped"]:
    assert s["reason"], s
# the statistics of every row
for r in d["results"]:
    assert r["stat"] in ("single", "median", "best", "min", "mean", "p50", "p99"), r
    if r["rounds"] is not None and r["value"] is not None:
        assert r["min"] <= r["median"] <= r["max"] and r["p10"] <= r["p90"], r
    assert r["impossible"] in (True, False)
    if r["impossible"]: assert r["value"] is None and r["impossible_value"] is not None
m = {r["metric"]: r for r in d["results"]}
assert m["triad_bandwidth"]["stat"] == "best" and m["triad_bandwidth"]["rounds"] >= 3
assert m["cpu_fp64_gflops_1core"]["stat"] == "median"
assert m["fsync_latency_p99"]["stat"] == "p99" and m["fsync_latency_p99"]["rounds"] >= 10
# the working-set sweep, its levels, and the quietness windows
sw = d["memory"]
assert sw["sweep"] and sw["levels"] and sw["largest_cache_found_bytes"] >= 0, sw
assert m["dram_plateau_bandwidth"]["unit"] == "GB/s"
q = d["quiet"]
assert q["quiet"] in (True, False) and q["verdict"], q
wins = [w["window"] for w in q["windows"]]
assert wins[0] == "before" and "memory" in wins and "storage" in wins, wins
assert list(d.keys()).index("quiet") == list(d.keys()).index("mode") + 1  # the verdict comes first
assert d["storage"]["dir"], d["storage"]
PY

# 2. history and compare
P probe compute --quick --db "$db" > /dev/null || fail "compute probe"
P history --db "$db" --json > "$tmp/h.json" || fail "history"
python3 - "$tmp/h.json" <<'PY' || fail "history JSON"
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert len(runs) == 2, runs
assert runs[0]["id"] > runs[1]["id"] and runs[0]["command"] == "probe" and runs[0]["metrics"] == 4
PY
P compare 1 2 --db "$db" --json > "$tmp/c.json" || fail "compare"
python3 - "$tmp/c.json" <<'PY' || fail "compare JSON"
import json, sys
d = json.load(open(sys.argv[1]))
m = {r["metric"]: r for r in d["metrics"]}
r = m["compute/cpu_fp64_gflops_1core"]
assert r["a"] is not None and r["b"] is not None
assert abs(r["change_pct"] - (r["b"] - r["a"]) / abs(r["a"]) * 100) < 1e-6
assert m["memory/triad_bandwidth"]["b"] is None   # only in run 1
assert d["summary"]["compared"] == 4
assert r["verdict"] in ("no change", "within threshold", "regression", "improvement"), r
assert r["a_rounds"] >= 3 and r["a_p10"] <= r["a_p90"], r        # the spread was recorded
assert r["regression"] == (r["verdict"] == "regression")
if r["verdict"] == "no change": assert "inside the noise of both runs" in r["why"], r
assert d["run_a"]["quiet"] in (True, False) and d["run_a"]["quiet_verdict"]
PY
# a regression is forced with a threshold no real change can stay under:
# --threshold 0 flags any drop, so compare a run with itself (no change) -> 0
P compare 2 2 --db "$db" --threshold 0 --fail-on-regression > /dev/null || fail "self compare flagged"
P compare 2 99 --db "$db" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no run 99" "$tmp/err" || fail "unknown run: rc $rc $(cat "$tmp/err")"

# 3. two writers at once both land
P probe compute --quick --db "$db" > /dev/null & a=$!
P probe compute --quick --db "$db" > /dev/null & b=$!
wait $a || fail "concurrent writer a"
wait $b || fail "concurrent writer b"
n=$(P history --db "$db" -n 0 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
[ "$n" = 4 ] || fail "expected 4 runs after concurrent writers, got $n"

# 4. a writer killed inside its transaction leaves no half run
CHAINPROF_HISTORY_TEST_PAUSE_MS=20000 "$CHAINPROF" probe compute --quick --db "$db" > /dev/null 2>&1 & k=$!
for _ in $(seq 100); do [ -s "$db-wal" ] && break; sleep 0.1; done
sleep 3
kill -9 $k; wait $k 2>/dev/null
P history --db "$db" -n 0 --json > "$tmp/h2.json" || fail "history after kill"
python3 - "$tmp/h2.json" "$db" <<'PY' || fail "database after kill"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert len(d["runs"]) == 4, len(d["runs"])
assert all(r["metrics"] == 4 for r in d["runs"] if "compute" in r["argv"] and "--dir" not in r["argv"]), d["runs"]
c = sqlite3.connect(sys.argv[2])
assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
assert c.execute("SELECT count(*) FROM metrics WHERE run_id NOT IN (SELECT id FROM runs)").fetchone()[0] == 0
PY
P probe compute --quick --db "$db" > /dev/null || fail "writer after the kill"

# 5. bad directories: clear message, exit 1, no hang
timeout 60 "$CHAINPROF" probe storage --dir "$tmp/missing" --no-history > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "missing: cannot create a test directory: No such file" "$tmp/err" || fail "missing dir: rc $rc $(cat "$tmp/err")"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir "$tmp/ro" && chmod 555 "$tmp/ro" && chmod 755 "$tmp"
    timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups "$CHAINPROF" probe storage --dir "$tmp/ro" --no-history > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc -eq 1 ] && grep -q "Permission denied" "$tmp/err" || fail "unwritable dir: rc $rc $(cat "$tmp/err")"
    # a full disk: a 4 MiB tmpfs and a 16 MiB file
    mkdir "$tmp/tiny"
    if mount -t tmpfs -o size=4m tmpfs "$tmp/tiny" 2>/dev/null; then
        timeout 60 "$CHAINPROF" probe storage --dir "$tmp/tiny" --size 16M --no-history > /dev/null 2> "$tmp/err"; rc=$?
        umount "$tmp/tiny"
        [ $rc -eq 1 ] && grep -q "No space left on device" "$tmp/err" || fail "full disk: rc $rc $(cat "$tmp/err")"
    else
        echo "note: cannot mount a tmpfs here; full-disk case not run"
    fi
elif [ -w /dev/full ]; then
    echo "note: not root; unwritable and full-disk cases not run"
fi
P probe nosuchprobe > /dev/null 2> "$tmp/err"; [ $? -eq 2 ] || fail "unknown probe must be a usage error"

# 6. a machine kept busy is "not quiet", with the numbers, in JSON and text (a busy loop per CPU,
# at most 8: other processes then hold at least 1/8 of the CPUs, above the 10 % limit up to 64 CPUs)
n=$(nproc); [ "$n" -gt 8 ] && n=8
busy=()
for _ in $(seq "$n"); do ( while :; do :; done ) & busy+=($!); done
P probe compute --quick --no-history --json > "$tmp/nq.json"; rc1=$?
P probe compute --quick --no-history > "$tmp/nq.txt"; rc2=$?
kill "${busy[@]}"; wait "${busy[@]}" 2>/dev/null
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] || fail "busy probe exit $rc1 $rc2"
if [ "$(nproc)" -le 64 ]; then
    grep -q "the machine was not quiet: before the probes: other processes used" "$tmp/nq.txt" ||
        fail "text has no quietness verdict: $(grep -i quiet "$tmp/nq.txt")"
    python3 - "$tmp/nq.json" <<'PY' || fail "busy JSON"
import json, sys
q = json.load(open(sys.argv[1]))["quiet"]
assert q["quiet"] is False, q
w = q["windows"][0]
assert w["window"] == "before" and w["others_cpu_pct"] > 10 and w["quiet"] is False, w
assert "other processes used" in w["reasons"], w
PY
fi
echo ok
