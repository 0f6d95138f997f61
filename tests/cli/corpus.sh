#!/bin/bash
# corpus.sh - the real-log corpus (../shared/data/logs): every file, both
# commands, one rule book.
#
# Each file has one row below (a file without a row fails the test): the
# code its stated cause (its "#@ problem/resolution" line) maps to, or "-"
# when the file states no problem (a healthy reference: nothing above low
# may be raised). For every file:
#   - `chainprof analyze FILE --json` and `chainprof diagnose FILE --json`
#     both read it (no refusal), and their top items have the same code
#     wherever both report one (the rule book is shared);
#   - that code is the row's, and its evidence cites FILE:LINE;
#   - every finding without a gain says why (gain_assumption).
# A row may carry a known-failure reason (a fourth column starting with
# "known:") while its rule is being written: it is counted and printed,
# not failed. The summary line gives the figures the issue asks for.
# Skips (77) without the data or python3.
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# path under logs/ | expected top code or "-" | [known: reason]
cat >"$tmp/table" <<'EOF'
dmon/dcgmi-dmon-triton-gke-t4-1vs4-instances.txt	DMON_SM_IDLE_WHILE_BUSY
dmon/nvidia-smi-dmon-pucvmet-old-format-deepspeech178.txt	DMON_LOW_UTIL
fio-iperf/fio-osc-scratch-seq-1m-796mibs-vs-randread-4k-22.9mibs-saev.txt	FIO_ACCESS_PATTERN_GAP
fio-iperf/fio-seqwrite-zfs-psync-fio31-fio815.txt	-
fio-iperf/iperf3-old-bandwidth-header-server-and-client-19gbps.txt	-
fio-iperf/iperf3-thunderbolt4-mac-cluster-37.7gbps-near-40g-line-rate-healthy.txt	-
nccl-tests/a100-pcie-2node-ib-tests-built-without-mpi-two-independent-2rank-jobs-ncclt182.txt	NCCLTESTS_NO_MPI
nccl-tests/abci-a100-2node-16gpu-sharp-old-error-column.txt	-
nccl-tests/azure-h200-8gpu-single-node-allreduce-8g-476gbs-busbw-after-driver-upgrade.txt	-
nccl-tests/coreweave-h100-64gpu-ib-sharp-allreduce.txt	-
nccl-tests/dell-xe9680-h100-2node-8x-cx7-ib-allreduce-469gbs-numbers-look-good-ncclt309.txt	-
nccl-tests/gtx1080x2-macos-port-old-format-all-collectives-poor-busbw.txt	NCCLTESTS_BELOW_EXPECTED
nccl-tests/k8s-sriov-pods-different-mlx5-names-ucx-mpi-ibv-create-ah-no-such-device-ncclt327.txt	MPI_UCX_ERROR
nccl-tests/rtx4090x8-stock-driver-p2p-disabled-allreduce-14.5gbs-busbw-p2p-unlocked-blog.txt	NCCLTESTS_BELOW_EXPECTED
nccl/2node-gdrdma-only-one-direction-nv-peer-mem-not-loaded-nccl897.txt	NCCL_GDR_DISABLED
nccl/2node-roce-mlx5-i40iw-error12-vendor129-nics-cannot-talk-gid-pytorch81628.txt	NCCL_IB_ERR12_RETRY
nccl/aws-p6-b300-nvswitch-internal-ib-hca-selected-rem-access-err10-nccl-ib-hca-rdmap-guide.txt	NCCL_IB_ASYNC_ERROR
nccl/aws-v100-no-efa-ofi-warn-socket-fallback-nccl248-nccl398.txt	NCCL_SOCKET_FALLBACK
nccl/docker-bridge-no-usable-ip-interface-socket-creation-failed-unhandled-system-error-ncclt14.txt	NCCL_NO_SOCKET_IF
nccl/h100-5node-ib-error4-vendor81-send-acs-nccl928.txt	NCCL_IB_ERR4_GDR
nccl/h100-nccl2243-nvls-ibext-sharp-no-prefix-nccl1584.txt	-
nccl/h100-nvswitch-fabricmanager-restarted-without-gpu-reset-nvls-invalid-argument-nccl1488.txt	NCCL_NVLS_SETUP_FAILED
nccl/h800-8gpu-nvls-not-available-0-nvls-channels-nccl892.txt	NCCL_NVLS_UNAVAILABLE
nccl/h800-roce-gid3-gdr-error4-vendor81-nccl1052.txt	NCCL_IB_ERR4_GDR
nccl/kubeflow-t4-shm-posix-fallocate-no-space-dev-shm-full-nccl525.txt	NCCL_SHM_EXHAUSTED
nccl/nccl256-ib-no-gdrdma-question-nv-peer-memory56.txt	NCCL_GDR_DISABLED
nccl/roce-error12-vendor129-fixed-gid-index3-nccl426.txt	NCCL_IB_ERR12_RETRY
nccl/rtx5090x2-nccl2251-ncclmaxsharedmem-exceeds-cuda-failure-invalid-argument-ncclt287.txt	NCCL_SHAREDMEM_EXCEEDED
nccl/slurm-2node-ib-container-no-dev-infiniband-net-ib-no-device-socket-pytorch111424.txt	NCCL_SOCKET_FALLBACK
nccl/socket-ifname-eth2-nonexistent-interface-family-neither-af-inet-internal-error-nccl1837.txt	NCCL_NO_SOCKET_IF
perftest/cx5-100g-ib-read-bw-11792mbs-line-rate-baseline-ompi6888.txt	-
perftest/cx5-100g-roce-pcie-gen3-x8-downgraded-56gbps-write-read-send-mark1lab.txt	PCIE_LINK_DOWNGRADED
perftest/cx7-ndr400-b2b-send-lat-read-write-new-perftest.txt	-
perftest/dgx-spark-cx7-roce-4qp-write-bw.txt	PERFTEST_BELOW_LINE_RATE
pytorch/collective-fingerprint-mismatch-allreduce-shape-text-only-batch-ms-swift9443.txt	TORCH_COLLECTIVE_DESYNC
pytorch/cuda-802-system-not-yet-initialized-nvswitch-fabric-manager-pytorch35710.txt	CUDA_SYSTEM_NOT_READY
pytorch/cuda-oom-forward-b200-tried-to-allocate-55gib.txt	CUDA_OOM_OVERSIZED
pytorch/cuda-oom-stale-crashed-process-118636-holds-71gib-after-bus-error-restart-returnn1649.txt	CUDA_OOM_OTHER_PROCESS
pytorch/cuda-oom-vllm-736mib-reserved-unallocated-fragmentation-expandable-segments-kaito976.txt	CUDA_OOM_FRAGMENTATION
pytorch/dmesg-xid94-contained-ecc-gpu-marked-unhealthy-node-reboot-akash244.txt	GPU_ECC_CONTAINED
pytorch/h100-ci-nvls-multicast-bind-cuda-401-fabric-manager-failure-pytorch177472.txt	NCCL_NVLS_SETUP_FAILED
pytorch/nvidia-smi-q-remapped-rows-uncorrectable-4-pending-yes-reset-required-gpud80.txt	GPU_ROW_REMAP_PENDING
pytorch/torchtitan-ci-container-dev-shm-16mb-unhandled-system-error-shm-segment-torchtitan853.txt	NCCL_SHM_EXHAUSTED
pytorch/unhandled-system-error-connection-refused-bad-node.txt	NCCL_CONNECT_FAILED
pytorch/watchdog-1800000ms-seqnum3-allreduce-multi-gpu-eval-slow-rank-lm-eval-harness1404.txt	TORCH_TIMEOUT_LATE_RANK
pytorch/watchdog-600000ms-new-format-last-enqueued-llamafactory7396.txt	NCCL_TIMEOUT_STALL
pytorch/watchdog-timeout-desync-report-collective-mismatch.txt	TORCH_COLLECTIVE_DESYNC
pytorch/xid43-xid31-mmu-fault-repeated-one-gpu-faulty-device-pytorch51382.txt	GPU_FAULTY_REPEATED
pytorch/xid79-fallen-off-bus-multiline-dmesg-nvsentinel155.txt	GPU_FELL_OFF_BUS
topo/a100-sxm4-8gpu-10nic-nv12-amd-nps4.txt	-
topo/h100-8gpu-8nic-nv18-sglang30401.txt	-
topo/pcie-6gpu-2socket-pix-node-sys-pytorch47885.txt	TOPO_GPU_PAIRS_SYS
topo/rtx4090x8-2socket-nps4-all-sys-no-pcie-switch-p2p-unlocked-blog.txt	TOPO_GPU_PAIRS_SYS
topo/rtx5880ada-2gpu-node-acs-root-complex-allreduce-deadlock-nccl2079.txt	TOPO_P2P_VIA_HOST_BRIDGE
EOF

(cd "$L" && find . -type f | sed 's|^\./||' | sort) >"$tmp/files"
i=0
while IFS= read -r rel; do
    i=$((i + 1))
    "$CHAINPROF" analyze --no-history --json "$L/$rel" >"$tmp/$i.a.json" 2>/dev/null; echo $? >"$tmp/$i.a.rc"
    "$CHAINPROF" diagnose --json "$L/$rel" >"$tmp/$i.d.json" 2>/dev/null; echo $? >"$tmp/$i.d.rc"
done <"$tmp/files"

python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
rows = {}
for line in open(os.path.join(tmp, "table")):
    f = line.rstrip("\n").split("\t")
    if len(f) >= 2:
        rows[f[0]] = (f[1], f[2] if len(f) > 2 else "")
files = [l.strip() for l in open(os.path.join(tmp, "files")) if l.strip()]

def load(i, c):
    rc = open(os.path.join(tmp, "%d.%s.rc" % (i, c))).read().strip()
    if rc != "0":
        return None, rc
    try:
        return json.load(open(os.path.join(tmp, "%d.%s.json" % (i, c)))), rc
    except Exception:
        return None, rc

def judge(i, rel):
    if rel not in rows:
        return "FAIL", "-", "no row in the table (read its #@ lines and add one)", ""
    want, note = rows[rel]
    (a, arc), (d, drc) = load(i, "a"), load(i, "d")
    why = []
    if a is None: why.append("analyze failed (exit %s)" % arc)
    if d is None: why.append("diagnose failed (exit %s)" % drc)
    af = a["findings"] if a else []
    dv = d["verdicts"] if d else []
    atop = af[0]["code"] if af else None
    dtop = dv[0]["code"] if dv else None
    if atop and dtop and atop != dtop:
        why.append("analyze top %s != diagnose top %s" % (atop, dtop))
    if want == "-":
        bad = [x["code"] for x in af if x["severity"] not in ("info", "low")]
        bad += [x["code"] for x in dv if x["severity"] not in ("info", "low")]
        if bad: why.append("healthy file raised %s" % sorted(set(bad)))
    else:
        if atop != want: why.append("analyze top %s, expected %s" % (atop, want))
        if dtop != want: why.append("diagnose top %s, expected %s" % (dtop, want))
        if af and not any(rel.rsplit("/", 1)[-1] + ":" in e for e in af[0]["evidence"]):
            why.append("analyze evidence does not cite FILE:LINE")
        if dv and not any(e["line"] for e in dv[0]["evidence"]):
            why.append("diagnose evidence has no line")
    for x in af:
        if x["estimated_gain_pct"] is None and not x["gain_assumption"]:
            why.append("%s has no gain and does not say why" % x["code"])
    state = "ok" if not why else ("KNOWN" if note.startswith("known:") else "FAIL")
    return state, want, "; ".join(why) or (atop or "healthy"), note

res, fail = [], 0
for r in rows:
    if r not in files:
        print("FAIL\t%s\ta row without a file (the corpus lost a sample?)" % r); fail = 1
for i, rel in enumerate(files, 1):
    state, want, what, note = judge(i, rel)
    res.append((state, want))
    print("%s\t%s\t%s\t%s%s" % (state, rel, want, what, "\t" + note if note else ""))
ok = sum(1 for s, w in res if s == "ok")
known = sum(1 for s, w in res if s == "KNOWN")
bad = sum(1 for s, w in res if s == "FAIL")
causes = [(s, w) for s, w in res if w != "-"]
right = sum(1 for s, w in causes if s == "ok")
print("corpus: %d files (%d with a stated cause, %d healthy references); right with both commands: %d of %d "
      "(%d of %d causes as top item); known failures: %d; failures: %d"
      % (len(res), len(causes), len(res) - len(causes), ok, len(res), right, len(causes), known, bad))
sys.exit(1 if bad or fail else 0)
PY
