#!/bin/bash
# verdict_evidence.sh - evidence files given to `chainprof analyze`: each
# real sample under ../shared/data/logs (nccl, nccl-tests, perftest, topo,
# dmon) is detected and parsed; where its #@ lines state a problem the top
# finding names that cause; healthy references raise nothing above low;
# evidence[] lists every file with its kind; a trace plus evidence in one
# run. Skips (77) without the data or python3.
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
    "$CHAINPROF" analyze "$f" --json >"$tmp/r.json" 2>"$tmp/err" || { echo "FAIL: $f: $(cat "$tmp/err")"; fail=1; return; }
    python3 - "$tmp/r.json" "$kind" "$top" "$also" "$f" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); kind, top, also, name = sys.argv[2:6]
ev = r["evidence"]; f = r["findings"]
ok = len(ev) == 1 and ev[0]["kind"] == kind and r["inputs"][0]["kind"] == kind
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
print(("ok   " if ok else "BAD  ") + name.rsplit("/", 1)[-1], [x["code"] for x in f][:3])
sys.exit(0 if ok else 1)
PY
}

expect "$L/nccl/aws-v100-no-efa-ofi-warn-socket-fallback-nccl248-nccl398.txt" nccl_log NCCL_SOCKET_FALLBACK
expect "$L/nccl/roce-error12-vendor129-fixed-gid-index3-nccl426.txt" nccl_log NCCL_IB_ERR12_RETRY
expect "$L/nccl/h800-roce-gid3-gdr-error4-vendor81-nccl1052.txt" nccl_log NCCL_IB_ERR4_GDR
expect "$L/nccl/h800-8gpu-nvls-not-available-0-nvls-channels-nccl892.txt" nccl_log NCCL_NVLS_UNAVAILABLE
# the excerpt shows one NIC for four GPUs (medium) and no sign of GDR (low):
# both are reported, the single NIC first
expect "$L/nccl/nccl256-ib-no-gdrdma-question-nv-peer-memory56.txt" nccl_log NCCL_SINGLE_NIC NCCL_GDR_DISABLED
expect "$L/nccl/h100-nccl2243-nvls-ibext-sharp-no-prefix-nccl1584.txt" nccl_log -
expect "$FIX/nccl_ibv_unreachable.log" nccl_log NCCL_IBV_UNREACHABLE
expect "$L/nccl-tests/gtx1080x2-macos-port-old-format-all-collectives-poor-busbw.txt" nccl_tests NCCLTESTS_BELOW_EXPECTED
expect "$L/nccl-tests/abci-a100-2node-16gpu-sharp-old-error-column.txt" nccl_tests -
expect "$L/nccl-tests/coreweave-h100-64gpu-ib-sharp-allreduce.txt" nccl_tests -
expect "$L/perftest/dgx-spark-cx7-roce-4qp-write-bw.txt" perftest PERFTEST_BELOW_LINE_RATE
expect "$L/perftest/cx7-ndr400-b2b-send-lat-read-write-new-perftest.txt" perftest -
expect "$L/topo/a100-sxm4-8gpu-10nic-nv12-amd-nps4.txt" nvidia_smi_topo -
expect "$L/topo/h100-8gpu-8nic-nv18-sglang30401.txt" nvidia_smi_topo -
# GPUs spread over PIX/NODE/SYS paths with no NVLink: the stated cause
expect "$L/topo/pcie-6gpu-2socket-pix-node-sys-pytorch47885.txt" nvidia_smi_topo TOPO_GPU_PAIRS_SYS
for f in "$L"/dmon/*.txt; do expect "$f" dmon -; done

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
fi
exit $fail
