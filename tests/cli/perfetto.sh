#!/usr/bin/env bash
# The Perfetto overlay (analyze -o FILE.perfetto.json, --format perfetto):
#   1. a simulated 4-rank job (2 nodes, slow network, a straggler): Chrome
#      trace-event JSON in object form; every trace event kept; per rank a
#      layers track whose spans add up, layer by layer, to the report's
#      exposed_ns exactly; a stragglers track with the straggler's steps; one
#      global instant per finding with the finding in args; ranks on distinct
#      processes; --format perfetto on stdout is the same bytes as -o;
#   2. a one-rank Kineto trace round trip: analyze of its overlay gives the
#      trace's own report (every section but the input's path);
#   3. refusals: an input as -o, perfetto from a command without traces.
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
    assert e["ph"] in "XiCM" and isinstance(e["pid"], int) and isinstance(e["name"], str), e
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
print("overlay: %d events, %d layer spans, %d stragglers, %d findings" % (
    len(ev), sum(1 for e in ev if e.get("cat") == "chainprof.layer"), len(st), len(fi)))
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
# 3. refusals
"$CHAINPROF" analyze --no-history "$tmp/one.perfetto.json" -o "$tmp/one.perfetto.json" 2>/dev/null
[ $? = 2 ] || fail "overwriting the input was not refused"
"$CHAINPROF" model --preset llama3-8b --gpus 8 --gpu H100 --format perfetto > /dev/null 2>&1
[ $? = 2 ] || fail "model --format perfetto was not refused"
echo ok
