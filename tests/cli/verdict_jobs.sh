#!/bin/bash
# verdict_jobs.sh - the verdict knows what job it judges (tests/fixtures/jobs,
# written for this test, and the real traces under $CP_DATA_DIR):
#  - rank 0's trace of an 8-rank DDP job on AMD MI300X: the job is AMD
#    (RCCL over xGMI), no NVLink figure or advice anywhere, and instead of
#    a confident "intra-node collectives are slow" the report says that one
#    rank of eight cannot split wait from transfer, and asks for the others;
#  - a vLLM-style CUDA graph capture trace: no "capture the step in CUDA
#    graphs", no host finding, a note that the trace is the capture;
#  - the same job replaying its graphs: launch-bound advice for graph
#    replay, not "capture in CUDA graphs";
#  - activation checkpointing (torch.utils.checkpoint, FSDP's
#    checkpoint_wrapper) is no storage time and no CKPT_SYNC_STALL, also on
#    the real FSDP export nsys-ai/mfu_2gpu_before.sqlite (when present);
#  - HTA's ROCm trace is seen as AMD.
# Skips (77) without python3 (used to read the JSON).
set -u
CHAINPROF=${CHAINPROF:?}
FIX=${CP_FIXTURES:?}/jobs
DATA=${CP_DATA_DIR:-}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cp_jobs.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect NAME FILE PYTHON-CONDITION...: each condition (over rep, codes, f
# (findings by code), text (the whole JSON as a string)) must hold
expect() {
    local name=$1 file=$2; shift 2
    "$CHAINPROF" analyze "$file" --json >"$tmp/r.json" 2>"$tmp/err" || { echo "FAIL: $name: analyze"; cat "$tmp/err"; fail=1; return; }
    python3 - "$tmp/r.json" "$name" "$@" <<'PY' || fail=1
import json, sys
text = open(sys.argv[1]).read()
rep = json.loads(text)
codes = [x["code"] for x in rep["findings"]]
f = {x["code"]: x for x in rep["findings"]}
ok = True
for cond in sys.argv[3:]:
    try:
        good = eval(cond)
    except Exception as e:
        good = False
        cond += " (%s: %s)" % (type(e).__name__, e)
    if not good:
        print("FAIL: %s: %s (job %s, findings %s)" % (sys.argv[2], cond, rep.get("job"), codes)); ok = False
if ok:
    print("ok: %s %s" % (sys.argv[2], codes))
sys.exit(0 if ok else 1)
PY
}

expect mi300x "$FIX/mi300x_ddp_rank0_of8.json" \
    'rep["job"]["gpu_vendor"] == "AMD"' 'rep["job"]["scaleup_fabric"] == "xGMI"' \
    'rep["job"]["collective_library"] == "RCCL"' 'rep["job"]["catalog_gpu"] == "MI300X"' \
    '"nvlink" not in text.lower()' '"NET_INTRA_SLOW" not in codes' \
    '"COLL_RANKS_MISSING" in codes' '"1 of 8 ranks" in f["COLL_RANKS_MISSING"]["title"]' \
    'f["COLL_RANKS_MISSING"]["estimated_gain_pct"] is None' \
    '"every rank" in f["COLL_RANKS_MISSING"]["recommendation"]' \
    'rep["collectives_summary"]["intra_busbw_lower_bound"] is True'
expect vllm-capture "$FIX/vllm_graph_capture.json" \
    'rep["job"]["kind"] == "inference"' 'rep["job"]["cuda_graphs"] == "capture"' \
    '"capture the step in CUDA graphs" not in text' '"LAUNCH_BOUND" not in codes' \
    '"HOST_WORK_BOUND" not in codes' 'codes[:1] == ["GRAPH_CAPTURE_TRACE"]'
expect vllm-replay "$FIX/vllm_graph_replay.json" \
    'rep["job"]["kind"] == "inference"' 'rep["job"]["cuda_graphs"] == "replay"' \
    '"capture the step in CUDA graphs" not in text' '"LAUNCH_BOUND" in codes' \
    '"replays" in f["LAUNCH_BOUND"]["title"]'
expect activation-ckpt "$FIX/activation_checkpointing.json" \
    'rep["job"]["kind"] == "training"' '"CKPT_SYNC_STALL" not in codes' \
    'all(r["layers"]["storage"]["exposed_ns"] == 0 for r in rep["ranks"])'
if [ -n "$DATA" ] && [ -f "$DATA/nsys/nsys-ai/mfu_2gpu_before.sqlite" ]; then
    expect mfu_2gpu_before "$DATA/nsys/nsys-ai/mfu_2gpu_before.sqlite" \
        'rep["job"]["kind"] == "training"' '"CKPT_SYNC_STALL" not in codes' \
        'all(r["layers"]["storage"]["exposed_ns"] == 0 for r in rep["ranks"])'
fi
if [ -n "$DATA" ] && [ -f "$DATA/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz" ]; then
    expect hta-rocm "$DATA/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz" \
        'rep["job"]["gpu_vendor"] == "AMD"' '"nvlink" not in text.lower()'
fi
exit $fail
