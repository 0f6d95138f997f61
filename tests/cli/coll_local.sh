#!/usr/bin/env bash
# coll_local.sh - `mpirun --oversubscribe -np 4 chainprof probe coll` on one
# machine: every collective row passes its correctness check, busbw follows
# the nccl-tests factor of its op, only rank 0 reports, the pair matrix has
# every ordered pair; and one process alone runs too (busbw 0 by definition except broadcast, factor 1).
set -u
# Open MPI keeps allocations from MPI_Init to exit by design; under the ASan
# build LeakSanitizer would report them as ours. Our own leaks are caught by
# the unit tests and the one-process runs, which keep leak detection on.
mpi_env=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
CHAINPROF=${CHAINPROF:?}
command -v mpirun >/dev/null || { echo "skip: mpirun (openmpi-bin) not installed"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 needed to read the JSON"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 300 "${mpi_env[@]}" mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl tcp,vader,self \
  "$CHAINPROF" probe coll --no-history --min-bytes 256 --max-bytes 256k --factor 16 --iters 3 --warmup 1 --timeout 60 \
  --json > "$tmp/out.json" 2> "$tmp/err" || { echo "FAIL: mpirun exited $?"; cat "$tmp/err"; exit 1; }
timeout 60 "$CHAINPROF" probe coll --no-history --max-bytes 4k --json > "$tmp/one.json" 2> "$tmp/err1" ||
  { echo "FAIL: one process"; cat "$tmp/err1"; exit 1; }
python3 - "$tmp/out.json" "$tmp/one.json" <<'PY'
import json, sys
raw = open(sys.argv[1]).read()
assert raw.count('"schema"') == 1, "more than one rank reported"
d = json.loads(raw)
assert d["coll"]["backend"] == "mpi" and d["coll"]["ranks"] == 4
rows = [r for r in d["results"] if r.get("op")]
ops = {r["op"] for r in rows}
assert ops == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv"}, ops
factor = {"all_reduce": 1.5, "all_gather": 0.75, "reduce_scatter": 0.75, "all_to_all": 0.75,
          "broadcast": 1.0, "send_recv": 1.0}
for r in rows:
    assert r["wrong"] == 0, r
    alg = r["size_bytes"] / (r["time_us"] * 1e-6) / 1e9
    assert abs(r["algbw_gbps"] - alg) <= 1e-6 * alg, r
    assert abs(r["busbw_gbps"] - alg * factor[r["op"]]) <= 1e-6 * alg, r
assert {r["in_place"] for r in rows if r["op"] == "all_reduce"} == {True, False}
assert sorted({r["size_bytes"] for r in rows if r["op"] == "all_reduce"}) == [256, 4096, 65536]
p2p = [r for r in d["results"] if r["metric"].startswith("p2p_bandwidth")]
assert len(p2p) == 12 and all(r["value"] > 0 for r in p2p), p2p
assert d["p2p"]["grouped_by"] == "rank" and len(d["p2p"]["links"]) == 6
one = json.load(open(sys.argv[2]))
assert one["coll"]["backend"] == "local"
assert all((r["busbw_gbps"] == 0 or r["op"] == "broadcast") and r["wrong"] == 0 for r in one["results"] if r.get("op"))
print("ok:", len(rows), "collective rows,", len(p2p), "pairs")
PY
