#!/bin/bash
# commmatrix_synth.sh - the communication matrix on synthesized jobs, against
# traffic this test computes from the trace files themselves: for every NCCL
# kernel, bytes = max(in, out elements) x dtype size, on the wire
# bytes x 2(n-1)/n for an all-reduce (the nccl-tests factor), sent to the
# next member of "Process Group Ranks"; summed per (from, to) pair. Checked:
# every pair's bytes exactly, the pairs' scope (intra/inter by node), the
# per-layer totals, that the slowest pair is inter-node when the network is
# slow, and the HTML report's matrix (one cell per pair). Jobs: DP on one node, DP on two nodes, TP x DP (two groups).
# Skips (77) without python3 or the synth command.
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
"$CHAINPROF" synth --help >/dev/null 2>&1 || { echo "skip: no synth command"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() { # JSON DIR GPUS_PER_NODE SLOW
    python3 - "$@" <<'PY'
import json, sys, glob
rep = json.load(open(sys.argv[1]))
gpn = int(sys.argv[3]); slow = sys.argv[4] == "slow"
size = {"BFloat16": 2, "Float": 4, "Half": 2}
want = {}
for f in glob.glob(sys.argv[2] + "/rank-*.json"):
    d = json.load(open(f))
    me = d["distributedInfo"]["rank"]
    for e in d["traceEvents"]:
        a = e.get("args", {})
        if e.get("cat") != "kernel" or "Collective name" not in a:
            continue
        assert a["Collective name"] == "allreduce"
        g = json.loads(a["Process Group Ranks"]); n = len(g)
        b = max(a["In msg nelems"], a["Out msg nelems"]) * size[a["dtype"]]
        dst = g[(g.index(me) + 1) % n]
        want[(me, dst)] = want.get((me, dst), 0) + round(b * 2 * (n - 1) / n)
cm = rep["comm_matrix"]
got = {(p["src"], p["dst"]): p for p in cm["pairs"]}
ok = True
if set(got) != set(want):
    print("FAIL: pairs %s, expected %s" % (sorted(got), sorted(want))); ok = False
for k, b in want.items():
    if k in got:
        if got[k]["bytes"] != b:
            print("FAIL: pair %s: %d bytes, expected %d" % (k, got[k]["bytes"], b)); ok = False
        scope = "inter" if k[0] // gpn != k[1] // gpn else "intra"
        if got[k]["scope"] != scope:
            print("FAIL: pair %s scope %s, expected %s" % (k, got[k]["scope"], scope)); ok = False
inter = sum(b for k, b in want.items() if k[0] // gpn != k[1] // gpn)
if cm["layers"]["inter_bytes"] != inter or cm["layers"]["intra_bytes"] != sum(want.values()) - inter:
    print("FAIL: layers %s, expected inter %d of %d" % (cm["layers"], inter, sum(want.values()))); ok = False
if slow and cm["slowest"][0]["scope"] != "inter":
    print("FAIL: slowest pair %s is not inter-node" % cm["slowest"][0]); ok = False
print("ok" if ok else "mismatch", len(want), "pairs")
sys.exit(0 if ok else 1)
PY
}

run() { # NAME GPN SLOW -- SYNTH ARGS
    local name=$1 gpn=$2 slow=$3; shift 4
    local d="$tmp/$name"
    "$CHAINPROF" synth --out "$d" --layers 2 --hidden 1024 --seq-len 512 --steps 2 --gpus-per-node "$gpn" "$@" >/dev/null ||
        { echo "FAIL: $name: synth"; fail=1; return; }
    "$CHAINPROF" analyze -o "$d.json" "$d"/rank-*.json 2>"$d.err" || { echo "FAIL: $name: analyze"; cat "$d.err"; fail=1; return; }
    echo "== $name"
    check "$d.json" "$d" "$gpn" "$slow" || fail=1
}

run dp4 8 no -- --ranks 4
run dp16 8 slow -- --ranks 16 --inject slow-network=0.2
run tp2dp4 8 no -- --ranks 8 --tp 2
# the HTML report draws the matrix: one cell per pair
"$CHAINPROF" analyze -o "$tmp/dp4.html" "$tmp"/dp4/rank-*.json 2>/dev/null
cells=$(sed -n '/<svg id="chart-comm-matrix"/,/<\/svg>/p' "$tmp/dp4.html" | grep -c '<rect')
[ "$cells" = 4 ] || { echo "FAIL: HTML comm matrix has $cells cells, expected 4"; fail=1; }
exit $fail
