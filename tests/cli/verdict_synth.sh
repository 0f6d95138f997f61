#!/bin/bash
# verdict_synth.sh - the verdict on synthesized jobs, checked against the
# ground truth synth.json:
#  - the reference case (13B-class model, inter-node all-reduce at 40 % of
#    the link, synchronous 8 s checkpoint every 5 steps) at three sizes
#    (2, 4 and 4 nodes): network first, checkpoint second, each with a gain;
#  - every injectable problem alone is the top finding, on its layer (and
#    on the straggler's rank);
#  - several problems at once come out in the order of their cost in the
#    ground truth;
#  - --fail-on exits 4 when a finding at the level exists, 0 otherwise.
# Skips (77) without python3 (used to read the JSON) or the synth command.
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
"$CHAINPROF" synth --help >/dev/null 2>&1 || { echo "skip: no synth command"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# check JSON TRUTH EXPECTED_CODES...: the findings start with EXPECTED_CODES in
# order; CODE may be CODE@RANK; layers must match the ground truth's.
check() {
    python3 - "$@" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
want = sys.argv[3:]
layer_of = {"NET_INTER_SLOW": "inter", "CKPT_SYNC_STALL": "storage", "STRAGGLER_RANK": "compute",
            "DATALOADER_STALL": "host", "LAUNCH_BOUND": "host", "HOST_WORK_BOUND": "host", "PAGEABLE_COPY": "intra"}
f = rep["findings"]
got = [x["code"] for x in f]
ok = True
for i, w in enumerate(want):
    code, _, rank = w.partition("@")
    if i >= len(f) or f[i]["code"] != code:
        print("FAIL: finding %d is %s, expected %s (all: %s)" % (i, got[i] if i < len(got) else None, code, got))
        ok = False
        continue
    if f[i]["layer"] != layer_of[code]:
        print("FAIL: %s on layer %s, expected %s" % (code, f[i]["layer"], layer_of[code])); ok = False
    if not f[i]["estimated_gain_pct"] or f[i]["estimated_gain_pct"] <= 0 or not f[i]["evidence"]:
        print("FAIL: %s without a gain or evidence" % code); ok = False
    if rank and ("rank %s " % rank) not in f[i]["title"]:
        print("FAIL: %s names the wrong rank: %s" % (code, f[i]["title"])); ok = False
# the injected layers agree with the ground truth
inj = {j["kind"]: j["layer"] for j in truth.get("injections", [])}
for w in want:
    code = w.partition("@")[0]
    kind = {"NET_INTER_SLOW": "slow-network", "CKPT_SYNC_STALL": "sync-checkpoint", "STRAGGLER_RANK": "straggler",
            "DATALOADER_STALL": "dataloader-stall", "LAUNCH_BOUND": "launch-bound", "HOST_WORK_BOUND": "host-work",
            "PAGEABLE_COPY": "pageable-h2d"}[code]
    if kind in inj and inj[kind] != layer_of[code]:
        print("FAIL: ground truth puts %s on %s, the finding on %s" % (kind, inj[kind], layer_of[code])); ok = False
# host work: the finding names the op, and its gain is the injected share of step time
hw = [x for x in f if x["code"] == "HOST_WORK_BOUND"]
if hw and "host-work" in inj:
    share = 100.0 * sum(r["host_work_ns"] / (r["mean_step_ns"] * truth["config"]["steps"] if "config" in truth else 1)
                        for r in truth["ranks"]) / len(truth["ranks"])
    if "aten::normal_" not in hw[0]["title"] or abs(hw[0]["estimated_gain_pct"] - share) > 0.1 * share:
        print("FAIL: HOST_WORK_BOUND %s, gain %.2f %%, injected %.2f %%" % (hw[0]["title"], hw[0]["estimated_gain_pct"], share))
        ok = False
# layers add up to the step time on every rank and step
for r in rep["ranks"]:
    for s in r.get("steps", []):
        if "layers" in s:
            tot = sum(v["exposed_ns"] for v in s["layers"].values())
            if tot != s["dur_ns"]:
                print("FAIL: rank %d step %s: layers %d != step %d" % (r["rank"], s["id"], tot, s["dur_ns"])); ok = False
print("ok" if ok else "mismatch", got[:4])
sys.exit(0 if ok else 1)
PY
}

run() { # NAME EXPECTED... -- SYNTH ARGS
    local name=$1; shift
    local want=()
    while [ "$1" != "--" ]; do want+=("$1"); shift; done
    shift
    local d="$tmp/$name"
    "$CHAINPROF" synth --out "$d" "$@" >/dev/null || { echo "FAIL: synth $name"; fail=1; return; }
    "$CHAINPROF" analyze "$d/rank-*.json" --json >"$d.json" || { echo "FAIL: analyze $name"; fail=1; return; }
    echo -n "$name: "
    check "$d.json" "$d/synth.json" "${want[@]}" || fail=1
    rm -rf "$d"
}

REF=(--layers 4 --hidden 16384 --micro-batch 1 --bucket-mb 400 --steps 10
     --inject slow-network=0.4,sync-checkpoint=8@5)
run ref-16x8 NET_INTER_SLOW CKPT_SYNC_STALL -- --ranks 16 --gpus-per-node 8 "${REF[@]}"
run ref-16x4 NET_INTER_SLOW CKPT_SYNC_STALL -- --ranks 16 --gpus-per-node 4 "${REF[@]}"
run ref-32x8 NET_INTER_SLOW CKPT_SYNC_STALL -- --ranks 32 --gpus-per-node 8 "${REF[@]}"

SMALL=(--ranks 8 --gpus-per-node 4 --steps 6)
run straggler STRAGGLER_RANK@3 -- "${SMALL[@]}" --inject straggler=3:1.25
run straggler10 STRAGGLER_RANK@6 -- --ranks 8 --gpus-per-node 8 --steps 6 --inject straggler=6:1.12
run dataloader DATALOADER_STALL -- "${SMALL[@]}" --inject dataloader-stall=50
run launch LAUNCH_BOUND -- "${SMALL[@]}" --inject launch-bound
run hostwork HOST_WORK_BOUND -- "${SMALL[@]}" --inject host-work=60
run pageable PAGEABLE_COPY -- "${SMALL[@]}" --inject pageable-h2d
run checkpoint CKPT_SYNC_STALL -- "${SMALL[@]}" --inject sync-checkpoint=1@3
run network NET_INTER_SLOW -- "${SMALL[@]}" --inject slow-network=0.4
# several at once, in the order of their cost: a 1.5x straggler costs ~half
# a step every step, the 40 ms data-loader stall less, the 8 MB pageable
# copy least
run several STRAGGLER_RANK@2 DATALOADER_STALL PAGEABLE_COPY -- "${SMALL[@]}" \
    --inject straggler=2:1.5,dataloader-stall=40,pageable-h2d=64

# --fail-on
d="$tmp/failon"
"$CHAINPROF" synth --out "$d" "${SMALL[@]}" --inject straggler=3:1.25 >/dev/null
"$CHAINPROF" analyze "$d/rank-*.json" --fail-on high -o "$tmp/f.json" >/dev/null 2>&1
rc=$?
[ $rc -eq 4 ] || { echo "FAIL: --fail-on high exited $rc, expected 4"; fail=1; }
[ -s "$tmp/f.json" ] || { echo "FAIL: --fail-on must still write the outputs"; fail=1; }
"$CHAINPROF" analyze "$d/rank-*.json" --fail-on critical >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --fail-on critical exited $rc, expected 0"; fail=1; }
"$CHAINPROF" analyze "$d/rank-*.json" --fail-on bogus >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --fail-on bogus exited $rc, expected 2"; fail=1; }
exit $fail
