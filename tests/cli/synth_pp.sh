#!/bin/bash
# synth_pp.sh - `synth --pp`: the pipeline-parallel job in the OSDI'25
# artifact's op-timeline format and its what-if truth. Checked against what
# this test computes from the trace itself: the truth's T_original equals
# the mean over steps of latest op end minus earliest op start; with no
# injection S = 1; a straggler's worker is the one M_W fixes and its stage
# and DP rank have the largest S_stage / S_dp; every forward on a later
# virtual stage starts after the previous one's end; same arguments give the
# same bytes. (M_W may pass 1: the others stay below the mean ideal.) Skips (77) without python3.
. "$(dirname "$0")/lib/py_prelude.sh"
run() { "$CHAINPROF" synth "$@" >/dev/null || { echo "FAIL: synth $*"; fail=1; }; }
run --pp 4 --dp 2 --out "$tmp/plain"
run --pp 4 --dp 2 --out "$tmp/plain2"
cmp -s "$tmp/plain/optrace.json" "$tmp/plain2/optrace.json" || { echo "FAIL: output not deterministic"; fail=1; }
run --pp 4 --dp 4 --chunks 2 --microbatches 8 --inject straggler=1.2:2 --out "$tmp/slow"
run --pp 4 --dp 2 --inject stage-imbalance=3:1.5,seqlen-imbalance=0.2 --out "$tmp/imb"
"$CHAINPROF" synth --pp 3 --chunks 2 --microbatches 4 --out "$tmp/bad" >/dev/null 2>&1 && { echo "FAIL: M % P accepted"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import json, sys, re
root = sys.argv[1]
bad = []
def load(name):
    return json.load(open(f"{root}/{name}/optrace.json")), json.load(open(f"{root}/{name}/synth.json"))
def step_time(ops):
    lo, hi = {}, {}
    for o in ops:
        s = o["args"]["step"]
        t0, t1 = o["ts"] * 1e3, (o["ts"] + o["dur"]) * 1e3
        lo[s] = min(lo.get(s, t0), t0); hi[s] = max(hi.get(s, t1), t1)
    return sum(hi[s] - lo[s] for s in lo) / len(lo)
for name in ("plain", "slow", "imb"):
    tr, t = load(name)
    ops = [o for o in tr if o.get("ph") == "X"]
    w = t["whatif"]
    T = step_time(ops)
    if abs(T - w["t_original_ns"]) > 2:  # the trace's microseconds have 3 decimals
        bad.append(f"{name}: step time from the trace {T} != truth {w['t_original_ns']}")
    P = t["config"]["pp"]
    for o in ops:
        m = re.fullmatch(r"PP rank (\d+), TP rank 0, (compute|pp-comm|dp-comm)", o["tid"])
        if not m or not re.fullmatch(r"DP rank \[\d+\]", o["pid"]):
            bad.append(f"{name}: bad thread {o['pid']} / {o['tid']}"); break
    # forward of (dp, step, mb) on virtual stage v+1 starts after v's end
    f = {}
    for o in ops:
        if o["name"] == "forward-compute":
            p = int(o["tid"].split()[2].rstrip(","))
            a = o["args"]
            f[(o["pid"], a["step"], a["mb_id"], a["model_chunk"] * P + p)] = o
    for (pid, s, mb, v), o in f.items():
        prev = f.get((pid, s, mb, v - 1))
        if prev and o["ts"] < prev["ts"] + prev["dur"] - 1e-6:
            bad.append(f"{name}: forward mb {mb} v{v} starts before v{v-1} ends"); break
_, t = load("plain")
if abs(t["whatif"]["slowdown"] - 1) > 1e-12 or t["whatif"]["worker_metric"] is not None:
    bad.append(f"plain: S {t['whatif']['slowdown']} M_W {t['whatif']['worker_metric']}")
_, t = load("slow")
w = t["whatif"]
if w["workers_fixed"] != [{"dp": 1, "pp": 2}]:
    bad.append(f"slow: fixed {w['workers_fixed']}")
if max(w["by_stage"], key=lambda x: x["slowdown"])["stage"] != 2 or max(w["by_dp_rank"], key=lambda x: x["slowdown"])["rank"] != 1:
    bad.append("slow: the straggler's stage / DP rank is not the slowest")
if not (w["slowdown"] > 1.2 and w["worker_metric"] > 0.9):
    bad.append(f"slow: S {w['slowdown']} M_W {w['worker_metric']}")
_, t = load("imb")
w = t["whatif"]
if not (w["slowdown"] > 1 and w["stage_metric"] > 0):
    bad.append(f"imb: S {w['slowdown']} M_S {w['stage_metric']}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
