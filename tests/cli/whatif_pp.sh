#!/bin/bash
# whatif_pp.sh - the pipeline what-if on op timelines (OSDI'25 artifact
# format) against `synth --pp`'s exact truth: for each scenario (no
# injection: S = 1; straggler; stage imbalance; sequence-length imbalance;
# interleaved chunks; all at once) `analyze DIR/optrace.json` must give
# synth.json's T_original, T_ideal, S, M_W, M_S, S_t per op type, S_w per
# DP rank and per stage (relative 1e-9) and the same workers fixed, and
# (no launch delays in synth) t_trace_ns = T_original, launch_slowdown 1. The
# truth comes from synth's own schedule replay (src/synth/syn_pp.c), not
# from the analyzer. The same timeline rewritten as the artifact writes it
# (object form, numeric pid/tid, "M" name events last, gzip) gives the
# same answer (its sends and recvs without mb_id / model_chunk, matched
# by order as the artifact does); a Kineto trace is not taken for an op timeline; a cut file
# and a damaged event are counted, not fatal; a JSON array without a
# worker-named op is refused (exit 3); two op timelines are not mixed. Skips (77) without python3.
. "$(dirname "$0")/lib/py_prelude.sh"
synth() { local d=$1; shift; "$CHAINPROF" synth "$@" --out "$tmp/$d" >/dev/null || { echo "FAIL: synth $*"; fail=1; }; }
analyze() { "$CHAINPROF" analyze --format json -o "$2" "$1" >/dev/null 2>"$2.err" || { echo "FAIL: analyze $1: $(cat "$2.err")"; fail=1; }; }
synth plain --pp 4 --dp 2
synth slow --pp 4 --dp 4 --microbatches 8 --inject straggler=1.2:2
synth stage --pp 4 --dp 2 --inject stage-imbalance=3:1.5
synth seq --pp 4 --dp 2 --steps 3 --inject seqlen-imbalance=0.3
synth inter --pp 4 --dp 2 --chunks 2 --microbatches 8 --inject straggler=0.1:1.3
synth mix --pp 2 --dp 3 --chunks 3 --microbatches 4 --seed 7 \
    --inject stage-imbalance=0:1.4,seqlen-imbalance=0.2,straggler=2.1:1.5
for d in plain slow stage seq inter mix; do analyze "$tmp/$d/optrace.json" "$tmp/$d.json"; done

# the artifact's own layout of the same ops
python3 - "$tmp/inter/optrace.json" "$tmp/art.json" <<'PY' || fail=1
import json, sys, re, gzip
ev = [e for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"]
kinds = ["compute", "pp-comm", "tp-comm", "dp-comm", "misc"]
out, meta, seen = [], [], set()
for e in ev:
    d = int(re.match(r"DP rank \[(\d+)\]", e["pid"]).group(1))
    p, t, k = re.match(r"PP rank (\d+), TP rank (\d+), (.*)", e["tid"]).groups()
    tid = int(p) * len(kinds) + kinds.index(k)
    e = dict(e, pid=d, tid=tid)
    if k == "pp-comm":  # the artifact does not say which microbatch a send/recv carries
        e["args"] = dict(e["args"], mb_id=-1, model_chunk=-1)
    out.append(e)
    if (d, tid) not in seen:
        seen.add((d, tid))
        meta.append({"ph": "M", "name": "thread_name", "pid": d, "tid": tid, "args": {"name": f"PP rank {p}, TP rank {t}, {k}"}})
        meta.append({"ph": "M", "name": "process_name", "pid": d, "args": {"name": f"DP rank [{d}]"}})
with gzip.open(sys.argv[2] + ".gz", "wt") as f:
    json.dump({"traceEvents": out + meta}, f)
PY
analyze "$tmp/art.json.gz" "$tmp/art.out.json"

# damage: a cut file, a malformed event, a file that is no op timeline
head -c 40000 "$tmp/plain/optrace.json" >"$tmp/cut.json"
analyze "$tmp/cut.json" "$tmp/cut.out.json"
sed '5s/"ts":/"ts":x/' "$tmp/plain/optrace.json" >"$tmp/broken.json"
analyze "$tmp/broken.json" "$tmp/broken.out.json"
echo '[{"ph":"X","name":"forward-compute","pid":"DP rank [0]","tid":"nobody","ts":0,"dur":1}]' >"$tmp/none.json"
"$CHAINPROF" analyze --format json "$tmp/none.json" >/dev/null 2>"$tmp/none.err"
rc=$?
[ $rc -eq 3 ] || { echo "FAIL: no worker-named op: exit $rc, want 3"; fail=1; }
grep -q "none.json" "$tmp/none.err" || { echo "FAIL: the error does not name the file: $(cat "$tmp/none.err")"; fail=1; }

# two op timelines are two jobs: no what-if mixing them
analyze_two() { "$CHAINPROF" analyze --format json -o "$tmp/two.json" "$tmp/plain/optrace.json" "$tmp/stage/optrace.json" >/dev/null 2>&1; }
analyze_two || { echo "FAIL: analyze of two op timelines"; fail=1; }

# a Kineto job stays Kineto
"$CHAINPROF" synth --ranks 2 --steps 2 --out "$tmp/kin" >/dev/null || { echo "FAIL: synth kineto"; fail=1; }
analyze "$tmp/kin" "$tmp/kin.json"

python3 - "$tmp" <<'PY' || fail=1
import json, sys, math
root = sys.argv[1]
bad = []
def close(a, b, what):
    if a is None or b is None:
        if a is not b:
            bad.append(f"{what}: analysis {a}, truth {b}")
        return
    if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
        bad.append(f"{what}: analysis {a!r}, truth {b!r}")
def compare(name, out, truth):
    w = json.load(open(f"{root}/{out}"))["whatif"]
    t = json.load(open(f"{root}/{truth}/synth.json"))["whatif"]
    if "skipped" in w:
        bad.append(f"{name}: skipped: {w['skipped']}")
        return
    for k in ("t_original_ns", "t_ideal_ns", "slowdown", "worker_metric", "stage_metric"):
        close(w.get(k), t.get(k), f"{name} {k}")
    # synth has no launch delays: the trace is its own delay-free replay
    close(w.get("t_trace_ns"), t["t_original_ns"], f"{name} t_trace_ns")
    close(w.get("launch_slowdown"), 1.0, f"{name} launch_slowdown")
    got = {r["op"]: r["slowdown"] for r in w["by_op_type"]}
    for r in t["by_op_type"]:  # a type the trace lacks is one the truth cannot slow down
        close(got.pop(r["op"], 1.0), r["slowdown"], f"{name} S_t {r['op']}")
    if got:
        bad.append(f"{name}: op types the truth lacks: {sorted(got)}")
    for key, idk in (("by_dp_rank", "rank"), ("by_stage", "stage")):
        a = {r[idk]: r["slowdown"] for r in w[key]}
        b = {r[idk]: r["slowdown"] for r in t[key]}
        if a.keys() != b.keys():
            bad.append(f"{name} {key}: ids {sorted(a)} vs {sorted(b)}")
        for i in b:
            close(a.get(i), b[i], f"{name} {key} {i}")
    fa = sorted((x["dp"], x["pp"]) for x in w["workers_fixed"])
    fb = sorted((x["dp"], x["pp"]) for x in t["workers_fixed"])
    if fa != fb:
        bad.append(f"{name} workers_fixed: {fa} vs {fb}")
    return w, t
for n in ("plain", "slow", "stage", "seq", "inter", "mix"):
    compare(n, f"{n}.json", n)
compare("artifact layout", "art.out.json", "inter")
w, t = compare("plain", "plain.json", "plain")
if not math.isclose(w["slowdown"], 1.0, rel_tol=1e-12):
    bad.append(f"plain: S = {w['slowdown']}, want 1")
w, t = compare("slow", "slow.json", "slow")
if t["slowdown"] < 1.05 or [(x["dp"], x["pp"]) for x in w["workers_fixed"]] != [(1, 2)]:
    bad.append(f"slow: the straggler 1.2 is not the worker fixed: {w['workers_fixed']}, S = {w['slowdown']}")
w = json.load(open(f"{root}/stage.json"))["whatif"]
if not (w["stage_metric"] or 0) > 0.5:
    bad.append(f"stage: M_S = {w['stage_metric']}: the last stage's imbalance is not the cause")
def diag(out):
    return {c["code"]: c["count"] for c in json.load(open(f"{root}/{out}"))["diagnostics"]["codes"]}
if "truncated_file" not in diag("cut.out.json"):
    bad.append(f"cut file: no truncated_file in {diag('cut.out.json')}")
if "whatif" not in json.load(open(f"{root}/cut.out.json")):
    bad.append("cut file: no whatif section")
if diag("broken.out.json").get("damaged_json", 0) + diag("broken.out.json").get("bad_event", 0) != 1:
    bad.append(f"malformed event: {diag('broken.out.json')}")
if "several op timelines" not in json.load(open(f"{root}/two.json"))["whatif"].get("skipped", ""):
    bad.append("two op timelines were replayed as one job")
kin = json.load(open(f"{root}/kin.json"))
if kin["whatif"].get("method", "").startswith("op timeline") or "p2p_edges" in kin["whatif"]:
    bad.append("a Kineto job was read as an op timeline")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
exit $fail
