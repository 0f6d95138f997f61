#!/bin/bash
# verdict_evidence.sh - evidence files given to `chainprof analyze` (the
# real-log corpus is corpus.sh's): the project's fixtures for rule variants
# no sample shows (with diagnose giving the same top code), severities,
# evidence-only gains, damage counted in the report's diagnostics, and a
# trace plus evidence in one run. Every finding without a gain says why in
# gain_assumption. Skips (77) without the data or python3.
set -u
CHAINPROF=${CHAINPROF:?}
DATA=${CHAINPROF_DATA:-${CP_DATA_DIR:-}}
if [ -z "$DATA" ] || [ ! -d "$DATA/logs" ]; then
    for d in "${CP_SOURCE_DIR:-.}/../shared/data" "${CP_SOURCE_DIR:-.}/../../shared/data"; do
        [ -d "$d/logs" ] && DATA=$d && break
    done
fi
[ -d "$DATA/logs" ] || { echo "skip: no ../shared/data/logs"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
L="$DATA/logs"
FIX=${CP_FIXTURES:-${CP_SOURCE_DIR:-.}/tests/fixtures}/verdict
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect FILE KIND TOP_CODE|- [ALSO_CODE]: "-" = healthy, nothing above low
expect() {
    local f=$1 kind=$2 top=$3 also=${4:-}
    "$CHAINPROF" analyze --no-history "$f" --json >"$tmp/r.json" 2>"$tmp/err" || { echo "FAIL: $f: $(cat "$tmp/err")"; fail=1; return; }
    python3 - "$tmp/r.json" "$kind" "$top" "$also" "$f" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); kind, top, also, name = sys.argv[2:6]
ev = r["evidence"]; f = r["findings"]
ok = kind in [e["kind"] for e in ev] and kind in r["inputs"][0]["kind"].split(",")
if not ok: print("FAIL: %s detected as %s" % (name, [e["kind"] for e in ev]))
if top == "-":
    bad = [x["code"] for x in f if x["severity"] not in ("info", "low")]
    if bad: print("FAIL: healthy %s raised %s" % (name, bad)); ok = False
else:
    if not f or f[0]["code"] != top:
        print("FAIL: %s: top finding %s, expected %s" % (name, f[0]["code"] if f else None, top)); ok = False
    elif not any(":" in e for e in f[0]["evidence"]):
        print("FAIL: %s: evidence does not cite FILE:LINE" % name); ok = False
if also and also not in [x["code"] for x in f]:
    print("FAIL: %s: no %s finding" % (name, also)); ok = False
for x in f:
    if x["estimated_gain_pct"] is None and not x["gain_assumption"]:
        print("FAIL: %s: %s has no gain and does not say why" % (name, x["code"])); ok = False
print(("ok   " if ok else "BAD  ") + name.rsplit("/", 1)[-1], [(x["code"], x["severity"]) for x in f][:3])
sys.exit(0 if ok else 1)
PY
    # the same rule book in diagnose: the same top code
    "$CHAINPROF" diagnose "$f" --json >"$tmp/d.json" 2>"$tmp/err" || { echo "FAIL: diagnose $f: $(cat "$tmp/err")"; fail=1; return; }
    python3 - "$tmp/r.json" "$tmp/d.json" "$f" <<'PY' || fail=1
import json, sys
a = json.load(open(sys.argv[1]))["findings"]; d = json.load(open(sys.argv[2]))["verdicts"]
ok = (a[0]["code"] if a else None) == (d[0]["code"] if d else None)
if not ok: print("FAIL: %s: analyze top %s, diagnose top %s" % (sys.argv[3], a[0]["code"] if a else None, d[0]["code"] if d else None))
sys.exit(0 if ok else 1)
PY
}

# rule variants no sample shows (fixtures written by the project)
expect "$FIX/nccl_ibv_unreachable.log" nccl_log NCCL_IBV_UNREACHABLE
# NET/IB channels and none via GDRDMA: GDR off, seen line by line (medium)
expect "$FIX/nccl_ib_no_gdr_channels.log" nccl_log NCCL_GDR_DISABLED
# NCCL_IB_HCA narrows NCCL to one NIC for four GPUs: a configuration (medium)
expect "$FIX/nccl_single_nic_ib_hca.log" nccl_log NCCL_SINGLE_NIC
expect "$FIX/dmon_smi_throttled.txt" dmon DMON_THROTTLED DMON_PCIE_BUSY
expect "$FIX/dmon_dcgmi_memory_bound.txt" dmon DMON_MEMORY_BOUND
# issue 3 section 5 rules no sample triggers: P2P not used inside a node, a
# NIC for many GPUs in the matrix, other IB completion errors, a failed test
expect "$FIX/nccl_shm_no_p2p.log" nccl_log NCCL_P2P_NOT_USED
expect "$FIX/topo_4gpu_1nic.txt" nvidia_smi_topo TOPO_FEW_NICS
expect "$FIX/nccl_ib_error5.log" nccl_log NCCL_IB_ERROR
expect "$FIX/nccl_tests_failed.txt" nccl_tests NCCLTESTS_FAILED NCCLTESTS_BELOW_EXPECTED
# issue 13 rule families no sample shows: rccl-tests (MI300X, RCCL advice),
# a busbw dip at one size range, MIG instances in dcgmi dmon, RoCE MTU and
# GID index mismatches across nodes, ACS redirect in lspci -vvv
expect "$FIX/rccl_tests_mi300x_2node_low.txt" nccl_tests NCCLTESTS_BELOW_EXPECTED
expect "$FIX/nccl_tests_busbw_dip.txt" nccl_tests NCCLTESTS_BUSBW_DIP
expect "$FIX/dmon_dcgmi_mig.txt" dmon DMON_LOW_UTIL
expect "$FIX/nccl_roce_mtu_mismatch.log" nccl_log NCCL_ROCE_MTU_MISMATCH
expect "$FIX/nccl_roce_gid_mismatch.log" nccl_log NCCL_ROCE_GID_MISMATCH
expect "$FIX/lspci_acs_redirect.txt" lspci PCIE_ACS_REDIRECT
# vendor awareness: an AMD run gets RCCL / xGMI wording, never NVLink advice
"$CHAINPROF" analyze --no-history "$FIX/rccl_tests_mi300x_2node_low.txt" --json | python3 -c '
import json, sys
x = json.load(sys.stdin)["findings"][0]
t = x["title"] + " " + x["recommendation"]
sys.exit(0 if "rccl-tests" in t and "RCCL" in t and "NVLink" not in t.replace("NVLink, xGMI", "") else 1)' ||
    { echo "FAIL: rccl-tests finding lacks RCCL wording or gives NVLink advice"; fail=1; }
# a MIG file: the instance is named, the parent GPU row is not judged
"$CHAINPROF" diagnose "$FIX/dmon_dcgmi_mig.txt" --json | python3 -c '
import json, sys
v = json.load(sys.stdin)["verdicts"]
sys.exit(0 if v and "GPU-I 2" in v[0]["title"] and not any(x["title"].startswith("GPU 0") for x in v) else 1)' ||
    { echo "FAIL: MIG instance not named, or the parent GPU judged"; fail=1; }
for fx in nccl_ib_no_gdr_channels.log:NCCL_GDR_DISABLED nccl_single_nic_ib_hca.log:NCCL_SINGLE_NIC \
          dmon_smi_throttled.txt:DMON_THROTTLED; do
    "$CHAINPROF" analyze "$FIX/${fx%%:*}" --json | python3 -c '
import json, sys
f = json.load(sys.stdin)["findings"]
sys.exit(0 if f and f[0]["code"] == sys.argv[1] and f[0]["severity"] == "medium" else 1)' "${fx#*:}" ||
        { echo "FAIL: ${fx%%:*}: ${fx#*:} is not medium"; fail=1; }
done
# NCCL_IB_DISABLE=1 over sockets: one finding, from both commands
expect "$FIX/nccl_ib_disable_sockets.log" nccl_log NCCL_SOCKET_FALLBACK
# damage a reader counts reaches the report's diagnostics
"$CHAINPROF" analyze --no-history "$FIX/../nccl-tests/new-2node-allgather-wrong-na.txt" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["diagnostics"]
codes = {c["code"]: c["count"] for c in d["codes"]}
ok = d["total"] == 2 and codes.get("evidence_bad_row") == 1 and codes.get("evidence_bad_value") == 1
print(("ok   " if ok else "FAIL: ") + "nccl-tests damage in diagnostics", d["total"])
sys.exit(0 if ok else 1)' || fail=1
# the absences of the real samples stay low: GDR unseen, one NIC as NCCL sees it
"$CHAINPROF" analyze "$L/nccl/nccl256-ib-no-gdrdma-question-nv-peer-memory56.txt" --json | python3 -c '
import json, sys
f = {x["code"]: x for x in json.load(sys.stdin)["findings"]}
sys.exit(0 if f["NCCL_GDR_DISABLED"]["severity"] == "low" and f["NCCL_SINGLE_NIC"]["severity"] == "low" else 1)' ||
    { echo "FAIL: nccl256: GDR/single-NIC severities"; fail=1; }

# evidence-only gains: a benchmark below its expected rate has a gain (share
# of its own time) with the assumption stated
for f in "$L/nccl-tests/gtx1080x2-macos-port-old-format-all-collectives-poor-busbw.txt:93.3:0.74" \
         "$L/perftest/dgx-spark-cx7-roce-4qp-write-bw.txt:37.9:111.7"; do
    "$CHAINPROF" analyze "${f%%:*}" --json | python3 -c '
import json, sys
x = json.load(sys.stdin)["findings"][0]
g = x["estimated_gain_pct"]
ok = g is not None and abs(g - float(sys.argv[1])) < 0.1 and "1/b" in x["gain_assumption"] and sys.argv[2] in x["title"]
print(("ok   " if ok else "FAIL: ") + "gain", x["code"], g, x["title"])
sys.exit(0 if ok else 1)' "$(echo "$f" | cut -d: -f2)" "$(echo "$f" | cut -d: -f3)" || fail=1
done

# a trace and evidence together: both kinds listed, the measured network
# finding first (it has a gain), the log's socket fallback after it
if "$CHAINPROF" synth --help >/dev/null 2>&1; then
    "$CHAINPROF" synth --out "$tmp/job" --ranks 8 --gpus-per-node 4 --steps 4 --inject slow-network=0.4 >/dev/null
    "$CHAINPROF" analyze "$tmp/job/rank-*.json" "$L/nccl/aws-v100-no-efa-ofi-warn-socket-fallback-nccl248-nccl398.txt" \
        --json >"$tmp/both.json" || { echo "FAIL: analyze trace + log"; fail=1; }
    python3 - "$tmp/both.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
codes = [x["code"] for x in r["findings"]]
kinds = sorted(set(i["kind"] for i in r["inputs"]))
ok = kinds == ["kineto", "nccl_log"] and codes[:2] == ["NET_INTER_SLOW", "NCCL_SOCKET_FALLBACK"]
ok = ok and r["findings"][1]["estimated_gain_pct"] is None and len(r["evidence"]) == 1
print(("ok   " if ok else "FAIL: ") + "trace + log", kinds, codes)
sys.exit(0 if ok else 1)
PY
    # a benchmark's gain is a share of its own time: next to a trace it is
    # kept in words (gain_assumption) and not ranked against step time
    "$CHAINPROF" analyze "$tmp/job/rank-*.json" "$L/perftest/dgx-spark-cx7-roce-4qp-write-bw.txt" --json |
        python3 -c '
import json, sys
f = {x["code"]: x for x in json.load(sys.stdin)["findings"]}
p = f["PERFTEST_BELOW_LINE_RATE"]
ok = p["estimated_gain_pct"] is None and p["gain_assumption"].startswith("37.9 % of the benchmark")
ok = ok and f["NET_INTER_SLOW"]["estimated_gain_pct"] is not None
print(("ok   " if ok else "FAIL: ") + "trace + perftest", p["gain_assumption"][:60])
sys.exit(0 if ok else 1)' || fail=1
fi
exit $fail
