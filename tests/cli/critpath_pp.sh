#!/bin/bash
# critpath_pp.sh - the cross-rank critical path on pipeline-parallel synth
# jobs (`synth --pp`, Kineto traces), where it must cross stages through the
# point-to-point pairs (the k-th send a->b with the k-th recv on b from a):
#  - every step's path adds up: layers, ranks and bound_by each sum to
#    length_ns, and length_ns lies within 3 % of the step time;
#  - the path visits every stage of one pipeline (it crosses stages), and no
#    edge goes back in time;
#  - a straggler worker (synth.json: straggler_dp, straggler_pp; rank = stage
#    x dp + dp rank) carries the most path time in every step; with stage
#    imbalance, a rank of the slow stage does; an interleaved schedule too;
#    so do traces that name the peer only in the nccl:send/recv titles
#    (PP_LEGACY, lib/pp_job.sh).
# Skips (77) without python3.
. "$(dirname "$0")/lib/py_prelude.sh"

check() { # JSON TRUTH
    python3 - "$@" <<'PY'
import json, sys
rep, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cfg = truth["config"]
P, D = cfg["pp"], cfg["dp"]
cp = rep["critical_path"]
ok = True
def bad(msg):
    global ok
    print("FAIL:", msg); ok = False
if cp["graph"]["dropped_backward_edges"]:
    bad("%d edges back in time" % cp["graph"]["dropped_backward_edges"])
if len(cp["steps"]) != cfg["steps"]:
    bad("%d steps on the path" % len(cp["steps"]))
want = None
if cfg["straggler_dp"] >= 0:
    want = ("rank", cfg["straggler_pp"] * D + cfg["straggler_dp"])
elif cfg["imbalanced_stage"] >= 0:
    want = ("stage", cfg["imbalanced_stage"])
for s in cp["steps"]:
    L = s["length_ns"]
    for what, tot in (("layers", sum(s["layers"].values())), ("ranks", sum(r["ns"] for r in s["ranks"])),
                      ("bound_by", sum(s["bound_by"].values()))):
        if tot != L:
            bad("step %s: %s add up to %d, length %d" % (s["id"], what, tot, L))
    if not (0.97 * s["step_ns"] <= L <= 1.03 * s["step_ns"]):
        bad("step %s: length %d vs step %d" % (s["id"], L, s["step_ns"]))
    stages = {r["rank"] // D for r in s["ranks"] if r["ns"] > 0}
    if stages != set(range(P)):
        bad("step %s: path on stages %s of %d" % (s["id"], sorted(stages), P))
    top = s["ranks"][0]["rank"]
    if want and want[0] == "rank" and top != want[1]:
        bad("step %s carried by rank %d, straggler rank %d" % (s["id"], top, want[1]))
    if want and want[0] == "stage" and top // D != want[1]:
        bad("step %s carried by rank %d (stage %d), slow stage %d" % (s["id"], top, top // D, want[1]))
print("ok" if ok else "mismatch", cp.get("carrier"))
sys.exit(0 if ok else 1)
PY
}

. "$(dirname "$0")/lib/pp_job.sh"

pp_run plain -- --pp 4 --dp 2
pp_run straggler -- --pp 4 --dp 2 --inject straggler=1.2:1.5
pp_run straggler0 -- --pp 4 --dp 2 --inject straggler=1.0:1.3
pp_run imbalance -- --pp 4 --dp 2 --inject stage-imbalance=1:1.5
pp_run nodes -- --pp 4 --dp 4 --gpus-per-node 4 --inject straggler=3.1:1.4
pp_run interleaved -- --pp 4 --dp 2 --chunks 2 --inject straggler=0.1:1.5
PP_LEGACY=titles pp_run legacy -- --pp 4 --dp 2 --inject straggler=0.2:1.5
exit $fail
