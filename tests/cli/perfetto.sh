#!/usr/bin/env bash
# The Perfetto overlay (analyze -o FILE.perfetto.json, --format perfetto):
#   1. a simulated 4-rank job (2 nodes, slow network, a straggler): Chrome
#      trace-event JSON in object form; every trace event kept; per rank a
#      layers track whose spans add up, layer by layer, to the report's
#      exposed_ns exactly; a stragglers track with the straggler's steps; one
#      global instant per finding with the finding in args; ranks on distinct
#      processes; the counter tracks (queue length per stream, memory
#      bandwidth per kind) as the report's counter_tracks describe them;
#      --format perfetto on stdout is the same bytes as -o;
#   2. a one-rank Kineto trace round trip: analyze of its overlay gives the
#      trace's own report (every section but the input's path); with
#      --kernel-seq the top patterns' events carry args "Patterns";
#   3. refusals: an input as -o, perfetto from a command without traces;
#   4. the critical-path track, on that job and on one whose straggler is
#      rank 0 (there the path crosses to rank 2 and back in every step; with
#      straggler rank 2 it never leaves rank 2): per step the spans add up to
#      the report's critical_path length_ns exactly and, per rank, to its
#      ranks[].ns; a track's spans do not overlap; each rank change of a
#      step's path is one s/f flow pair from the earlier span to the later.
set -u
command -v python3 >/dev/null || { echo "skip: python3 is needed to check the overlay"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$CHAINPROF" synth --out "$tmp/job" --ranks 4 --gpus-per-node 2 --steps 4 \
    --inject straggler=2:1.5,slow-network=0.4 > /dev/null || fail "synth"
rm -f "$tmp/job/synth.json"
"$CHAINPROF" analyze --no-history --json "$tmp/job" -o "$tmp/o.perfetto.json" > "$tmp/a.json" || fail "analyze -o"
"$CHAINPROF" analyze --no-history --format perfetto "$tmp/job" > "$tmp/stdout.perfetto.json" || fail "--format perfetto"
cmp -s "$tmp/o.perfetto.json" "$tmp/stdout.perfetto.json" || fail "stdout and -o differ"
python3 - "$tmp/o.perfetto.json" "$tmp/a.json" <<'PY' || fail "overlay structure"
import collections, decimal, json, sys
o = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)
a = json.load(open(sys.argv[2]))
ns = lambda us: int(decimal.Decimal(us) * 1000)
assert isinstance(o, dict) and isinstance(o["traceEvents"], list), "object form"
assert o["displayTimeUnit"] == "ns" and o["chainprof"]["schema"] == "chainprof.perfetto/1"
assert o["chainprof"]["verdict"] == a["verdict"]
ev = o["traceEvents"]
for e in ev:
    assert e["ph"] in "XiCMsf" and isinstance(e["pid"], int) and isinstance(e["name"], str), e
    if e["ph"] != "M":
        assert isinstance(e["ts"], decimal.Decimal) or isinstance(e["ts"], int), e
    if e["ph"] == "X":
        assert ns(e["dur"]) >= 0, e
own = [e for e in ev if not e.get("cat", "").startswith("chainprof.") and e["ph"] != "M"]
assert len(own) == sum(r["events"] for r in a["ranks"]), (len(own), [r["events"] for r in a["ranks"]])
# ranks on distinct processes: no pid holds events of two ranks' files
by_rank = {r["rank"]: r for r in a["ranks"]}
names = {(e["pid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
for r in by_rank:
    assert "chainprof: rank %d" % r in names.values(), (r, names)
    assert "rank %d" % r in names.values(), (r, names)
# the layers track adds up to the report's exposed time, exactly
sums = collections.defaultdict(int)
pid_rank = {p: int(n.split()[-1]) for p, n in names.items() if n.startswith("chainprof: rank")}
for e in ev:
    if e.get("cat") == "chainprof.layer":
        sums[(pid_rank[e["pid"]], e["name"])] += ns(e["dur"])
for r, rk in by_rank.items():
    for layer, v in rk["layers"].items():
        assert sums.get((r, layer), 0) == v["exposed_ns"], (r, layer, sums.get((r, layer)), v["exposed_ns"])
# stragglers: one span per straggler step on its rank
st = [e for e in ev if e.get("cat") == "chainprof.straggler"]
want = sum(len(s["steps"]) for s in a["stragglers"])
assert want > 0 and len(st) == want, (len(st), a["stragglers"])
assert all(pid_rank[e["pid"]] == e["args"]["straggler"]["rank"] for e in st)
# findings: one global instant each, the finding in args
fi = [e for e in ev if e.get("cat") == "chainprof.finding"]
assert [e["args"]["finding"]["code"] for e in fi] == [f["code"] for f in a["findings"]], fi
assert all(e["ph"] == "i" and e["s"] == "g" for e in fi)
# counter tracks: each row of a rank's exact counter_tracks is that many counter events of its name
# (and stream id) on the rank's GPU process, in time order, with the row's range; nothing else is a counter
series = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "C":
        assert e.get("cat") == "chainprof.counter" and len(e["args"]) == 1, e
        series[(e["pid"], e["name"], e.get("id"))].append((e["ts"], float(next(iter(e["args"].values())))))
want = {}
for r in a["ranks"]:
    ct = r["exact"]["counter_tracks"]
    assert ct["events"] == sum(t["events"] for t in ct["tracks"]) and ct["events"] > 0, ct
    for t in ct["tracks"]:
        want[(t["device"] + r["rank"] * 10000000, t["name"], t["stream"])] = t
assert set(series) == set(want), (sorted(series, key=str), sorted(want, key=str))
for k, pts in series.items():
    t = want[k]
    assert len(pts) == t["events"] and [p[0] for p in pts] == sorted(p[0] for p in pts), (k, len(pts), t)
    assert abs(min(p[1] for p in pts) - t["min"]) < 1e-9 and abs(max(p[1] for p in pts) - t["max"]) < 1e-9, (k, t)
    if k[1] == "Queue Length":  # every launch is dequeued by its kernel: the queue starts at 1, ends at 0
        assert pts[0][1] == 1 and pts[-1][1] == 0 and t["min"] >= 0, (k, pts[:2], pts[-2:])
print("overlay: %d events, %d layer spans, %d stragglers, %d findings, %d counter events" % (
    len(ev), sum(1 for e in ev if e.get("cat") == "chainprof.layer"), len(st), len(fi),
    sum(len(p) for p in series.values())))
PY
# 2. one rank: the overlay re-read is the trace
"$CHAINPROF" synth --out "$tmp/one" --ranks 1 --steps 3 --inject dataloader-stall=30@1 > /dev/null || fail "synth 1"
"$CHAINPROF" analyze --no-history --json "$tmp/one/rank-0.json" -o "$tmp/one.perfetto.json" > "$tmp/one_a.json" ||
    fail "analyze one rank"
"$CHAINPROF" analyze --no-history --json "$tmp/one.perfetto.json" > "$tmp/one_b.json" || fail "analyze the overlay"
python3 - "$tmp/one_a.json" "$tmp/one_b.json" <<'PY' || fail "round trip"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in a["ranks"] + b["ranks"]:
    r.pop("source")
for k in a:
    if k not in ("command", "inputs"):
        assert a[k] == b[k], k
assert a["findings"] and a["layer_breakdown"][0]["host_pct"] > 0
PY
# 2b. frequent kernel patterns (--kernel-seq) marked on the trace's own events, as HTA's overlaid trace:
# the exact view's rows within --kernel-seq-top, each root's subtree (root, nested ops, launches, kernels)
"$CHAINPROF" analyze --no-history --json "$tmp/one/rank-0.json" --kernel-seq aten::linear --kernel-seq-min 1 \
    -o "$tmp/ks.perfetto.json" > "$tmp/ks.json" || fail "analyze --kernel-seq"
python3 - "$tmp/ks.perfetto.json" "$tmp/ks.json" <<'PY' || fail "pattern marks"
import collections, json, sys
o, a = (json.load(open(p)) for p in sys.argv[1:3])
ks = a["ranks"][0]["exact"]["kernel_sequences"]
rows = {r["pattern"]: r for r in ks["rows"][:ks["top_k"]]}
assert rows, ks
marked = [e for e in o["traceEvents"] if "Patterns" in e.get("args", {})]
per = collections.Counter()
for e in marked:
    (p, c), = e["args"]["Patterns"].items()
    assert p in rows and c == rows[p]["count"], (p, c)
    per[(p, e["cat"], e["name"] == ks["operator"])] += 1
for p, r in rows.items():
    n_kernels = len(p.split("|")) - 1
    assert per[(p, "cpu_op", True)] == r["count"], (p, per)        # the roots
    gpu = sum(v for (q, cat, _), v in per.items() if q == p and cat in ("kernel", "gpu_memcpy", "gpu_memset"))
    assert gpu == r["count"] * n_kernels, (p, gpu, r)               # their GPU events
print("pattern marks: %d events, %d patterns" % (len(marked), len(rows)))
PY
# 3. refusals
"$CHAINPROF" analyze --no-history "$tmp/one.perfetto.json" -o "$tmp/one.perfetto.json" 2>/dev/null
[ $? = 2 ] || fail "overwriting the input was not refused"
"$CHAINPROF" model --preset llama3-8b --gpus 8 --gpu H100 --format perfetto > /dev/null 2>&1
[ $? = 2 ] || fail "model --format perfetto was not refused"
# 4. the critical-path track
"$CHAINPROF" synth --out "$tmp/job0" --ranks 4 --gpus-per-node 2 --steps 4 \
    --inject straggler=0:1.5,slow-network=0.4 > /dev/null || fail "synth job0"
rm -f "$tmp/job0/synth.json"
"$CHAINPROF" analyze --no-history --json "$tmp/job0" -o "$tmp/o0.perfetto.json" > "$tmp/a0.json" || fail "analyze job0"
python3 - "$tmp/o.perfetto.json" "$tmp/a.json" 0 "$tmp/o0.perfetto.json" "$tmp/a0.json" 1 <<'PY' || fail "critical path"
import collections, decimal, json, sys
ns = lambda us: int(decimal.Decimal(us) * 1000)
for op, ap, want_flows in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    o = json.load(open(op), parse_float=decimal.Decimal)
    a = json.load(open(ap))
    ev = o["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    pid_rank = {p: int(n.split()[-1]) for p, n in names.items() if n.startswith("chainprof: rank")}
    tracks = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["tid"] == 3}
    cp = [e for e in ev if e.get("cat") == "chainprof.critical_path"]
    spans = [e for e in cp if e["ph"] == "X"]
    steps = {s["id"]: s for s in a["critical_path"]["steps"]}
    meta = o["chainprof"]["critical_path"]
    assert meta["steps"] == len(steps) and meta["spans"] == len(spans) and meta["truncated"] == 0, meta
    length, per_rank = collections.Counter(), collections.Counter()
    for e in spans:
        assert e["tid"] == 3 and e["pid"] in tracks and pid_rank[e["pid"]] == e["args"]["rank"], e
        assert ns(e["dur"]) > 0 and e["args"]["step"] in steps and e["args"]["layer"] and e["args"]["edge"], e
        length[e["args"]["step"]] += ns(e["dur"])
        per_rank[(e["args"]["step"], e["args"]["rank"])] += ns(e["dur"])
    for i, s in steps.items():
        assert length[i] == s["length_ns"], (i, length[i], s["length_ns"])
        for r in s["ranks"]:
            assert per_rank[(i, r["rank"])] == r["ns"], (i, r, per_rank[(i, r["rank"])])
    by_track = collections.defaultdict(list)
    for e in spans:
        by_track[e["pid"]].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    for p, v in by_track.items():
        v.sort()
        assert all(v[k][1] <= v[k + 1][0] for k in range(len(v) - 1)), "overlapping spans on %s" % names[p]
    # flows: one pair per rank change between consecutive spans of a step
    crossings = 0
    for k in range(len(spans) - 1):
        x, y = spans[k], spans[k + 1]
        if x["args"]["step"] == y["args"]["step"]:
            assert ns(x["ts"]) + ns(x["dur"]) == ns(y["ts"]), (x, y)  # a step's path is contiguous
            crossings += x["pid"] != y["pid"]
    fl = collections.defaultdict(dict)
    for e in cp:
        if e["ph"] in "sf":
            fl[e["id"]][e["ph"]] = e
    assert len(fl) == crossings == meta["flows"], (len(fl), crossings, meta)
    within = lambda f, pid: any(e["pid"] == pid and ns(e["ts"]) <= ns(f["ts"]) < ns(e["ts"]) + ns(e["dur"]) for e in spans)
    for i, f in fl.items():
        assert set(f) == {"s", "f"} and f["f"]["bp"] == "e" and f["s"]["pid"] != f["f"]["pid"], f
        assert ns(f["s"]["ts"]) < ns(f["f"]["ts"]) and within(f["s"], f["s"]["pid"]) and within(f["f"], f["f"]["pid"]), f
    if want_flows == "1":
        assert crossings > 0, "no cross-rank flow on a job with a straggler off the path's last rank"
    print("critical path: %d steps, %d spans, %d flows" % (len(steps), len(spans), len(fl)))
PY
echo ok
