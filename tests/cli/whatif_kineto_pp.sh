#!/bin/bash
# whatif_kineto_pp.sh - the what-if on the Kineto traces of a pipeline job
# (synth --pp writes one per rank beside the op timeline): the stages come
# from the send/recv kernels' process groups, so by_stage, by_dp_rank and
# M_S are the pipeline's, not one stage of one-rank DP groups. Checked
# against synth.json's truth (its schedule replay, src/synth/syn_pp.c):
# the stage count, the slowest stage, the slowest DP rank and the workers
# M_W fixes (rank = stage x D + dp rank, synth's layout) are the truth's.
# The op types are the paper's, from the traces' annotations and the p2p
# kernels' directions (an_whatif_types.c): by_op_type names every type the
# Kineto traces carry, and on 1F1B jobs its slowest type is the truth's;
# T_original is the truth's (a p2p op's span starts with its transfer).
# The values themselves are not: the Kineto replay runs on the critical
# path's graph (launch gaps, kernel order) where the truth runs on the
# artifact's op model. A data-parallel job keeps one stage and M_S null.
# Skips (77) without python3.
. "$(dirname "$0")/lib/py_prelude.sh"
job() { # name, synth args...
    local d=$1; shift
    "$CHAINPROF" synth "$@" --out "$tmp/$d" >/dev/null || { echo "FAIL: synth $*"; fail=1; return; }
    "$CHAINPROF" analyze --no-history --format json -o "$tmp/$d.json" "$tmp/$d"/rank-*.json >/dev/null 2>"$tmp/$d.err" ||
        { echo "FAIL: analyze $d: $(cat "$tmp/$d.err")"; fail=1; }
}
job slow --pp 4 --dp 2 --inject straggler=1.2:1.5
job stage --pp 4 --dp 2 --inject stage-imbalance=2:1.5
job three --pp 3 --dp 2 --microbatches 6 --seed 4 --inject straggler=0.1:1.4
job inter --pp 4 --dp 2 --chunks 2 --microbatches 8 --inject straggler=0.1:1.3
job batched --pp 4 --dp 2 --inject straggler=1.2:1.5 --batched-p2p
"$CHAINPROF" synth --ranks 4 --steps 3 --out "$tmp/dp" >/dev/null || { echo "FAIL: synth dp"; fail=1; }
"$CHAINPROF" analyze --no-history --format json -o "$tmp/dp.json" "$tmp/dp" >/dev/null 2>&1 || { echo "FAIL: analyze dp"; fail=1; }
[ $fail -eq 0 ] || exit 1
python3 - "$tmp" <<'PY' || fail=1
import json, sys
root, bad = sys.argv[1], []
def argmax(rows, key):
    return max(rows, key=lambda r: r["slowdown"])[key]
for name, P, D in (("slow", 4, 2), ("stage", 4, 2), ("three", 3, 2), ("inter", 4, 2)):
    w = json.load(open(f"{root}/{name}.json"))["whatif"]
    t = json.load(open(f"{root}/{name}/synth.json"))["whatif"]
    if "skipped" in w:
        bad.append(f"{name}: skipped: {w['skipped']}"); continue
    if w.get("stages") != P or sorted(r["stage"] for r in w["by_stage"]) != list(range(P)):
        bad.append(f"{name}: stages {w.get('stages')}, by_stage {w['by_stage']}, want {P}")
    if sorted(r["rank"] for r in w["by_dp_rank"]) != list(range(D)):
        bad.append(f"{name}: by_dp_rank {w['by_dp_rank']}, want DP ranks 0..{D - 1}")
    if argmax(w["by_stage"], "stage") != argmax(t["by_stage"], "stage"):
        bad.append(f"{name}: slowest stage {w['by_stage']} vs truth {t['by_stage']}")
    if t["worker_metric"] and argmax(w["by_dp_rank"], "rank") != argmax(t["by_dp_rank"], "rank"):
        bad.append(f"{name}: slowest DP rank {w['by_dp_rank']} vs truth {t['by_dp_rank']}")
    if w["stage_metric"] is None:
        bad.append(f"{name}: M_S null with {P} stages")
    # the step's span starts with the ops, not with recvs posted ahead
    # (only the 1.8 us loss copy after the optimizer is the trace's own)
    if abs(w["t_original_ns"] - t["t_original_ns"]) > 1e-4 * t["t_original_ns"]:
        bad.append(f"{name}: T_original {w['t_original_ns']} vs truth {t['t_original_ns']}")
    types = {r["op"]: r["slowdown"] for r in w["by_op_type"]}
    need = {"forward-compute", "backward-compute", "forward-send/recv", "backward-send/recv",
            "grads-reduce-scatter", "optimizer"}
    if not need <= set(types):
        bad.append(f"{name}: by_op_type {sorted(types)} lacks {sorted(need - set(types))}")
    elif name != "inter":
        truth = {r["op"]: r["slowdown"] for r in t["by_op_type"] if r["op"] in need}
        if max(truth, key=truth.get) != max(need, key=types.get):
            bad.append(f"{name}: slowest op type {types} vs truth {truth}")
    want = sorted(x["pp"] * D + x["dp"] for x in t["workers_fixed"])
    if t["worker_metric"] and sorted(w["workers_fixed"]) != want:
        bad.append(f"{name}: workers fixed {w['workers_fixed']}, truth {want}")
# batched p2p (coalesced SendRecv kernels naming no peer): placed in the
# pipeline by their group, typed by their annotations; their transfers are
# not paired, so only the slowest stage and DP rank are checked
w = json.load(open(f"{root}/batched.json"))["whatif"]
t = json.load(open(f"{root}/batched/synth.json"))["whatif"]
types = {r["op"] for r in w.get("by_op_type", [])}
if w.get("stages") != 4 or argmax(w["by_stage"], "stage") != argmax(t["by_stage"], "stage") or \
        argmax(w["by_dp_rank"], "rank") != argmax(t["by_dp_rank"], "rank") or \
        not {"forward-send/recv", "backward-send/recv"} <= types:
    bad.append(f"batched p2p: stages {w.get('stages')}, by_stage {w.get('by_stage')}, by_dp_rank "
               f"{w.get('by_dp_rank')}, types {sorted(types)}; truth {t['by_stage']} {t['by_dp_rank']}")
w = json.load(open(f"{root}/dp.json"))["whatif"]
if w.get("stages") != 1 or w["stage_metric"] is not None or len(w["by_dp_rank"]) != 4:
    bad.append(f"data-parallel job: stages {w.get('stages')}, M_S {w['stage_metric']}, by_dp_rank {w['by_dp_rank']}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
