#!/bin/bash
# synth_pp_kineto.sh - `synth --pp` also writes one Kineto trace per rank
# (rank = stage x dp + dp rank). Checked against the job's own op timelines
# (optrace.json) and parameters, computed here:
#  - every rank's compute-stream kernels are its worker's compute ops in
#    order, each at the op's time shifted by (step + 1) x step_shift_ns, with
#    its duration;
#  - point-to-point: the sends a->b ("Dst Rank") and the recvs on b from a
#    ("Src Rank") pair one to one in order, and their count per pair is what
#    the schedule implies: M transfers per step for every hop v -> v+1 of the
#    P x V virtual stages, forward and backward; the k-th send and the k-th
#    recv end together; every message is p2p_bytes in the pipeline group;
#  - one reduce-scatter of dp_bytes per rank and step over its DP group;
#  - analyze reads the set with no edge going back in time (no kernel
#    before its launch); same arguments give the same bytes; --gzip writes
#    rank-R.json.gz that analyze reads to the same critical path.
# Skips (77) without python3.
. "$(dirname "$0")/lib/py_prelude.sh"
run() { # NAME -- SYNTH ARGS
    local name=$1; shift 2
    "$CHAINPROF" synth --out "$tmp/$name" --steps 2 "$@" >/dev/null || { echo "FAIL: synth $*"; fail=1; return; }
    "$CHAINPROF" analyze -o "$tmp/$name.json" "$tmp/$name"/rank-*.json* 2>"$tmp/$name.err" ||
        { echo "FAIL: $name: analyze"; cat "$tmp/$name.err"; fail=1; }
}
run plain -- --pp 4 --dp 2
run inter -- --pp 4 --dp 2 --chunks 2 --microbatches 8
run slow -- --pp 3 --dp 3 --gpus-per-node 4 --inject straggler=1.2:1.5
run gz -- --pp 4 --dp 2 --gzip
"$CHAINPROF" synth --out "$tmp/plain2" --steps 2 --pp 4 --dp 2 >/dev/null
cmp -s "$tmp/plain/rank-5.json" "$tmp/plain2/rank-5.json" || { echo "FAIL: Kineto output not deterministic"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import json, sys, re
root = sys.argv[1]
bad = []
for name in ("plain", "inter", "slow"):
    truth = json.load(open(f"{root}/{name}/synth.json"))
    cfg, kin = truth["config"], truth["kineto"]
    P, D, M, V, S = cfg["pp"], cfg["dp"], cfg["microbatches"], cfg["chunks"], cfg["steps"]
    ops = [o for o in json.load(open(f"{root}/{name}/optrace.json")) if o.get("ph") == "X"]
    if len(kin["files"]) != P * D:
        bad.append(f"{name}: {len(kin['files'])} files for {P * D} ranks")
    sends, recvs = {}, {}
    for r, f in enumerate(kin["files"]):
        tr = json.load(open(f"{root}/{name}/{f}"))
        di = tr["distributedInfo"]
        if di["rank"] != r or di["world_size"] != P * D:
            bad.append(f"{name}: {f}: distributedInfo {di['rank']}/{di['world_size']}")
        p, d = r // D, r % D
        # the worker's compute ops in the artifact, in time order
        want = sorted((o for o in ops if o["pid"] == f"DP rank [{d}]" and o["tid"] == f"PP rank {p}, TP rank 0, compute"),
                      key=lambda o: o["ts"])
        ks = [e for e in tr["traceEvents"] if e.get("cat") == "kernel"]
        comp = sorted((e for e in ks if "Collective name" not in e["args"]), key=lambda e: e["ts"])
        if len(comp) != len(want):
            bad.append(f"{name}: rank {r}: {len(comp)} compute kernels, {len(want)} compute ops"); continue
        for e, o in zip(comp, want):
            t = kin["origin_ns"] + round(o["ts"] * 1000) + (o["args"]["step"] + 1) * kin["step_shift_ns"]
            if abs(round(e["ts"] * 1000) - t) > 1 or abs(round(e["dur"] * 1000) - round(o["dur"] * 1000)) > 1:
                bad.append(f"{name}: rank {r}: kernel at {e['ts']} dur {e['dur']} for {o['name']} at {t} ns"); break
        rs = [e for e in ks if e["args"].get("Collective name") == "_reduce_scatter_base"]
        if len(rs) != S or any(max(e["args"]["In msg nelems"], e["args"]["Out msg nelems"]) * 2 != cfg["dp_bytes"] or
                               json.loads(e["args"]["Process Group Ranks"]) != list(range(p * D, p * D + D)) for e in rs):
            bad.append(f"{name}: rank {r}: reduce-scatters {[(e['args']['In msg nelems'], e['args']['Process Group Ranks']) for e in rs]}")
        for e in sorted(ks, key=lambda e: e["ts"]):
            a = e["args"]
            if a.get("Collective name") not in ("send", "recv"):
                continue
            if a["In msg nelems"] * 2 != cfg["p2p_bytes"] or json.loads(a["Process Group Ranks"]) != list(range(d, P * D, D)):
                bad.append(f"{name}: rank {r}: p2p args {a}"); break
            if a["Collective name"] == "send":
                sends.setdefault((r, a["Dst Rank"]), []).append(e)
            else:
                recvs.setdefault((a["Src Rank"], r), []).append(e)
    # the transfers the schedule implies: hop v -> v+1 of the virtual stages, M per step, both ways
    want = {}
    for d in range(D):
        for v in range(P * V - 1):
            a, b = (v % P) * D + d, ((v + 1) % P) * D + d
            if a != b:
                want[(a, b)] = want.get((a, b), 0) + M * S
                want[(b, a)] = want.get((b, a), 0) + M * S
    got = {k: len(v) for k, v in sends.items()}
    if got != want or {k: len(v) for k, v in recvs.items()} != want:
        bad.append(f"{name}: sends {sorted(got.items())[:4]} recvs {sorted((k, len(v)) for k, v in recvs.items())[:4]}, "
                   f"expected {sorted(want.items())[:4]}")
    for k, sv in sends.items():
        for s, rv in zip(sv, recvs.get(k, [])):
            if abs((s["ts"] + s["dur"]) - (rv["ts"] + rv["dur"])) > 0.0015 or rv["ts"] > s["ts"] + 0.0015:
                bad.append(f"{name}: pair {k}: send ends {s['ts'] + s['dur']}, recv [{rv['ts']}, {rv['ts'] + rv['dur']}]"); break
    g = json.load(open(f"{root}/{name}.json"))["critical_path"]["graph"]
    if g["dropped_backward_edges"]:
        bad.append(f"{name}: {g['dropped_backward_edges']} edges back in time")
gz = json.load(open(f"{root}/gz/synth.json"))["kineto"]["files"]
if gz != [f"rank-{r}.json.gz" for r in range(8)]:
    bad.append(f"gz: files {gz}")
if json.load(open(f"{root}/gz.json"))["critical_path"]["steps"] != json.load(open(f"{root}/plain.json"))["critical_path"]["steps"]:
    bad.append("gz: critical path differs from the plain files'")
for b in bad:
    print("FAIL:", b)
print("ok" if not bad else "mismatch")
sys.exit(1 if bad else 0)
PY
exit $fail
