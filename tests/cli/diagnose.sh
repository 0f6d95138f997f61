#!/bin/bash
# diagnose end to end: text and JSON agree on the top verdict, --fail-on
# gives exit 4, unknown input says so and exits 0, usage errors exit 2,
# a missing file exits with an error naming it, gzip input is read.
set -u
CP=${CHAINPROF:?}
FIX=${CP_FIXTURES:?}/diagnose
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$CP" diagnose "$FIX/ib_first") || fail "exit $? on ib_first"
grep -q "^diagnosis: IB/RoCE transport retry counter exceeded" <<<"$out" || fail "text summary"
"$CP" diagnose --json "$FIX/ib_first" > "$tmp/d.json" || fail "json exit"
python3 - "$tmp/d.json" <<'PY' || fail "json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "chainprof.diagnose/2"
v = d["verdicts"]
assert v[0]["code"] == "NCCL_IB_ERR12_RETRY" and v[0]["layer"] == "inter" and v[0]["severity"] == "critical"
assert v[0]["recommendation"] and "GID" in v[0]["recommendation"]
assert [x["confidence"] for x in v] == sorted([x["confidence"] for x in v], reverse=True)
ev = v[0]["evidence"][0]
assert ev["file"].endswith("rank2.log") and ev["line"] == 5 and "vendor err 129" in ev["text"]
assert v[0]["next_steps"] and d["first_failure"]["rank"] == 2
assert d["events"][0]["kind"] == "nccl_warn" and len(d["inputs"]) == 4
assert v[0]["confidence"] == 0.9 and d["events_total"] == 5
assert [i["kind"] for i in d["inputs"]] == ["nccl_log,pytorch_log"] * 4
nccl = {x["path"].rsplit("/", 1)[-1]: x for x in d["evidence"] if x["kind"] == "nccl_log"}
assert nccl["rank0.log"]["ib_devices"] == ["mlx5_0:1/RoCE"] and nccl["rank0.log"]["network"] == "IB"
assert nccl["rank2.log"]["warnings"] == 1
PY
n=$("$CP" diagnose --json --events 0 "$FIX/ib_first" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["events"]), d["events_total"])')
[ "$n" = "0 5" ] || fail "--events 0: $n"
"$CP" diagnose --format csv "$FIX/oom_first" | grep -q '^verdicts.0.code,CUDA_OOM_FRAGMENTATION' || fail "csv"

"$CP" diagnose --fail-on high "$FIX/ib_first" >/dev/null; [ $? -eq 4 ] || fail "--fail-on high should exit 4"
"$CP" diagnose --fail-on 0.95 "$FIX/ib_first" >/dev/null; [ $? -eq 0 ] || fail "--fail-on 0.95 should exit 0"
"$CP" diagnose --fail-on bogus "$FIX/ib_first" >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --fail-on should exit 2"
"$CP" diagnose >/dev/null 2>&1; [ $? -eq 2 ] || fail "no input should exit 2"

out=$("$CP" diagnose --fail-on any "$FIX/unknown") || fail "unknown input should exit 0"
grep -q "no known failure signature found in 1 input(s), 5 line(s)" <<<"$out" || fail "unknown summary"

err=$("$CP" diagnose /nonexistent/rank0.log 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && grep -q "rank0.log" <<<"$err" || fail "missing file: rc=$rc err=$err"

gzip -c "$FIX/stalled/rank5.log" > "$tmp/rank5.log.gz"
"$CP" diagnose --json "$tmp/rank5.log.gz" | grep -q '"code": *"TORCH_PROCESS_STALLED"' || fail "gzip input"
"$CP" help diagnose | grep -q "fail-on" || fail "man page"

# --rules: the rule book, every row documented
"$CP" diagnose --rules --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "chainprof.rulebook/1", d["schema"]
r = d["rules"]
assert len(r) >= 40 and len({x["code"] for x in r}) == len(r)
assert all(x["keys_on"] and x["source"] and x["advice"] for x in r)' || fail "--rules"
# --nic-gbps: benchmark verdicts judge against it, as analyze does
FIXV=$CP_FIXTURES/verdict
a=$("$CP" analyze --no-history --nic-gbps 800 --json "$FIXV/rccl_tests_mi300x_2node_low.txt" | python3 -c 'import json,sys; f=json.load(sys.stdin)["findings"]; print(f[0]["title"] if f else "")')
d=$("$CP" diagnose --nic-gbps 800 --json "$FIXV/rccl_tests_mi300x_2node_low.txt" | python3 -c 'import json,sys; v=json.load(sys.stdin)["verdicts"]; print(v[0]["title"] if v else "")')
[ -n "$a" ] && [ "$a" = "$d" ] && grep -q "100.0 GB/s" <<<"$d" || fail "--nic-gbps: analyze '$a', diagnose '$d'"
echo ok
