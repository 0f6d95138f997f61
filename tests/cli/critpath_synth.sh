#!/bin/bash
# critpath_synth.sh - the cross-rank critical path on synthesized jobs:
#  - on every scenario, every step's path adds up: its layers, its ranks and
#    HTA's bound_by classes each sum to length_ns, and length_ns lies within
#    a few percent of the step time;
#  - a straggler rank (ground truth synth.json) carries the path of every step
#    inside a node, and holds all the compute on the path across nodes (where
#    the inter-node all-reduces, queued on the NCCL stream, carry the rest);
#  - a slow inter-node network puts inter first among the path's layers;
#  - a synchronous checkpoint step puts storage on its path;
#  - the what-if (OSDI'25) names the straggler: the largest S_w and the worker
#    M_W fixes, with M_W > 0.5; an evenly slow network has S < 1.05.
# Skips (77) without python3 (used to read the JSON) or the synth command.
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
"$CHAINPROF" synth --help >/dev/null 2>&1 || { echo "skip: no synth command"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() { # JSON TRUTH EXPECT
    python3 - "$@" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
expect = sys.argv[3]
cp = rep["critical_path"]
ok = True
steps = cp["steps"]
if len(steps) != truth["config"]["steps"]:
    print("FAIL: %d steps on the path" % len(steps)); ok = False
for s in steps:
    L = s["length_ns"]
    for what, tot in (("layers", sum(s["layers"].values())), ("ranks", sum(r["ns"] for r in s["ranks"])),
                      ("bound_by", sum(s["bound_by"].values()))):
        if tot != L:
            print("FAIL: step %s: %s add up to %d, length %d" % (s["id"], what, tot, L)); ok = False
    if not (0.97 * s["step_ns"] <= L <= 1.03 * s["step_ns"]):
        print("FAIL: step %s: length %d vs step %d" % (s["id"], L, s["step_ns"])); ok = False
inj = {j["kind"]: j for j in truth.get("injections", [])}
if expect.startswith("straggler"):
    sr = inj["straggler"]["ranks"][0]
    # the compute on the path is the straggler's
    for s in steps:
        other = [e for e in s["events"] if e["layer"] == "compute" and e["rank"] != sr]
        if other or not any(e["layer"] == "compute" for e in s["events"]):
            print("FAIL: step %s: compute on the path of other ranks: %s" % (s["id"], other[:2])); ok = False
    # and, when compute dominates (no slow network to queue behind), the path itself
    if expect == "straggler":
        if cp["carrier"]["rank"] != sr:
            print("FAIL: carrier rank %s, straggler %s" % (cp["carrier"]["rank"], sr)); ok = False
        for s in steps:
            if s["ranks"][0]["rank"] != sr:
                print("FAIL: step %s carried by rank %s, straggler %s" % (s["id"], s["ranks"][0]["rank"], sr)); ok = False
elif expect == "inter":
    tot = {}
    for s in steps:
        for k, v in s["layers"].items():
            tot[k] = tot.get(k, 0) + v
    top = max(tot, key=tot.get)
    if top != "inter_ns":
        print("FAIL: top layer on the path %s (%s)" % (top, tot)); ok = False
elif expect == "storage":
    if not any(s["layers"]["storage_ns"] > 0.5 * s["length_ns"] for s in steps):
        print("FAIL: no step whose path is mostly storage: %s" % [s["layers"] for s in steps]); ok = False
# the what-if: a straggler is the worker whose S_w stands out and that M_W fixes
wi = rep["whatif"]
if "skipped" in wi:
    print("FAIL: whatif skipped: %s" % wi["skipped"]); ok = False
elif expect.startswith("straggler"):
    sr = inj["straggler"]["ranks"][0]
    by = sorted(wi["by_dp_rank"], key=lambda x: -x["slowdown"])
    if by[0]["rank"] != sr or wi["workers_fixed"][0] != sr or not wi["slowdown"] > 1.02:
        print("FAIL: what-if names rank %s (fixed %s, S %.4f), straggler %s" % (by[0]["rank"], wi["workers_fixed"], wi["slowdown"], sr)); ok = False
    if not (wi["worker_metric"] and wi["worker_metric"] > 0.5):
        print("FAIL: M_W %s for a single slow worker" % wi["worker_metric"]); ok = False
elif expect == "inter":
    # every worker equally slow: no straggler to remove
    if not wi["slowdown"] < 1.05:
        print("FAIL: S %.4f on an evenly slow network" % wi["slowdown"]); ok = False
print("ok" if ok else "mismatch", expect, cp.get("carrier"), "S=%.4f" % wi.get("slowdown", 0) if wi.get("slowdown") else "")
sys.exit(0 if ok else 1)
PY
}

run() { # NAME EXPECT -- SYNTH ARGS
    local name=$1 expect=$2; shift 3
    local d="$tmp/$name"
    if ! "$CHAINPROF" synth --out "$d" --layers 2 --hidden 1024 --seq-len 512 --steps 3 "$@" >/dev/null; then
        echo "FAIL: $name: synth $*"; fail=1; return
    fi
    if ! "$CHAINPROF" analyze -o "$d.json" "$d"/rank-*.json 2>"$d.err"; then
        echo "FAIL: $name: analyze"; cat "$d.err"; fail=1; return
    fi
    echo "== $name"
    check "$d.json" "$d/synth.json" "$expect" || fail=1
}

run baseline any -- --ranks 4
run tp any -- --ranks 8 --tp 2
run straggler straggler -- --ranks 4 --inject straggler=2:1.5
run straggler8 straggler -- --ranks 8 --inject straggler=5:1.2
run straggler60 straggler-compute -- --ranks 8 --gpus-per-node 4 --steps 60 --inject straggler=5:1.15
run straggler16 straggler-compute -- --ranks 16 --gpus-per-node 8 --inject straggler=11:1.3
run slownet inter -- --ranks 16 --gpus-per-node 8 --inject slow-network=0.2
run ckpt storage -- --ranks 4 --inject sync-checkpoint=0.5@2
run dataloader any -- --ranks 4 --inject dataloader-stall=40@2
run launch any -- --ranks 2 --inject launch-bound=2000
exit $fail
