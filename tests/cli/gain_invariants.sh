#!/bin/bash
# gain_invariants.sh - gains that are true, on every synth scenario.
#
# For every --inject kind `chainprof synth --help` lists (a kind this test
# has no sample value for fails it: add one below), alone and together
# with the others, and for the reference case (DESIGN.md section 1: a
# 256-rank capture of four steps holding one synchronous 8 s checkpoint,
# the inter-node network at 40 % of the link), the analyze JSON must hold:
#  - every finding with a gain names the layers its fix removes, and its
#    gain is at most their exposed time: per step the maximum over ranks,
#    summed over steps, as % of verdict.amortised_step_time_ns (computed
#    here from the per-rank, per-step layers of the same JSON);
#  - a periodic stall's gain is its cost per occurrence, less what stays,
#    spread over its interval (periodic.*), never the window's share;
#  - the injected problem is found (its code among the findings);
#  - the cap holds on the real traces under $CP_DATA_DIR too (HTA's and
#    Nsight Systems' test traces), when present;
#  - the reference case ranks NET_INTER_SLOW first and CKPT_SYNC_STALL
#    second, and the checkpoint's interval is the stated default (one
#    checkpoint in the window) or --ckpt-every when given.
# Skips (77) without python3 (reads the JSON) or the synth command.
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
"$CHAINPROF" synth --help >/dev/null 2>&1 || { echo "skip: no synth command"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cp_gains.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0

# sample value per kind, and the finding the kind must produce
declare -A value code
value[slow-network]=0.4;           code[slow-network]=NET_INTER_SLOW
value[sync-checkpoint]=2@4;        code[sync-checkpoint]=CKPT_SYNC_STALL
value[straggler]=3:1.3;            code[straggler]=STRAGGLER_RANK
value[dataloader-stall]=40@2;      code[dataloader-stall]=DATALOADER_STALL
value[launch-bound]=;              code[launch-bound]=LAUNCH_BOUND
value[pageable-h2d]=64;            code[pageable-h2d]=PAGEABLE_COPY
value[host-work]=60@2;             code[host-work]=HOST_WORK_BOUND

kinds=$("$CHAINPROF" synth --help 2>&1 | sed -n 's/.*--inject.*problems: //p' | tr ',' '\n' |
        sed -E 's/^ *//; s/[=\[].*//' | grep -v '^$')
[ -n "$kinds" ] || { echo "FAIL: no --inject kinds in chainprof synth --help"; exit 1; }

check() { # JSON EXPECTED_CODE... (a leading '=' pins the order from the first finding)
    python3 - "$@" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
want = sys.argv[2:]
f, v = rep["findings"], rep["verdict"]
basis = v["amortised_step_time_ns"]
ok = True
def bad(msg):
    global ok
    print("FAIL:", msg); ok = False
# per rank: step id -> {layer: exposed_ns}
ranks = [{s["id"]: {k: x["exposed_ns"] for k, x in s["layers"].items()} for s in r.get("steps", []) if "layers" in s}
         for r in rep["ranks"]]
ids = sorted(ranks[0]) if ranks else []
def cap_pct(layers):
    tot = 0
    for sid in ids:
        tot += max(sum(st[sid][l] for l in layers) if sid in st else 0 for st in ranks)
    return 100.0 * tot / basis
for x in f:
    g = x["estimated_gain_pct"]
    if g is None:
        continue
    rm = x.get("removes_layers") or []
    if not rm:
        bad("%s has a gain but names no layer its fix removes" % x["code"]); continue
    c = cap_pct(rm)
    if g > c * (1 + 1e-9) + 1e-9:
        bad("%s claims %.3f %% > the exposed %s time %.3f %%" % (x["code"], g, "+".join(rm), c))
    p = x.get("periodic")
    if p:
        per_step = (p["cost_per_occurrence_ns"] - p["stays_per_occurrence_ns"]) / p["interval_steps"]
        amort = 100.0 * per_step * len(ids) / basis
        if g > amort * (1 + 1e-6) + 1e-9:
            bad("%s claims %.3f %%, more than its amortised share %.3f %%" % (x["code"], g, amort))
        if p["interval_source"] not in ("trace", "--ckpt-every", "default"):
            bad("%s: interval from %r" % (x["code"], p["interval_source"]))
got = [x["code"] for x in f]
order = want and want[0] == "="
if order:
    want = want[1:]
    if got[:len(want)] != want:
        bad("findings start %s, expected %s" % (got[:len(want)], want))
for w in want:
    if w not in got:
        bad("%s not found (findings: %s)" % (w, got))
print("ok" if ok else "mismatch", got[:4])
sys.exit(0 if ok else 1)
PY
}

run() { # NAME EXPECTED... -- SYNTH ARGS [-- ANALYZE ARGS]
    local name=$1; shift
    local want=() aargs=()
    while [ "$1" != "--" ]; do want+=("$1"); shift; done
    shift
    local sargs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do sargs+=("$1"); shift; done
    [ $# -gt 0 ] && { shift; aargs=("$@"); }
    local d="$tmp/$name"
    "$CHAINPROF" synth --out "$d" --zstd "${sargs[@]}" >/dev/null || { echo "FAIL: synth $name"; fail=1; return; }
    "$CHAINPROF" analyze "$d" --json "${aargs[@]}" >"$d.json" 2>/dev/null || { echo "FAIL: analyze $name"; fail=1; return; }
    echo -n "$name: "
    check "$d.json" "${want[@]}" || fail=1
    cp "$d.json" "$tmp/last.json"
    rm -rf "$d" "$d.json"
}

SMALL=(--ranks 8 --gpus-per-node 4 --steps 6)
all=()
for k in $kinds; do
    if [ -z "${code[$k]+x}" ]; then
        echo "FAIL: --inject kind '$k' has no sample value in $0: add one"; fail=1; continue
    fi
    spec=$k${value[$k]:+=${value[$k]}}
    all+=("$spec")
    run "$k" "${code[$k]}" -- "${SMALL[@]}" --inject "$spec"
done
run healthy -- "${SMALL[@]}"
# every kind at once (the straggler is rank 3 of 8)
run everything -- "${SMALL[@]}" --inject "$(IFS=,; echo "${all[*]}")"

# the reference case: 256 ranks, four steps, one 8 s checkpoint in them
REF=(--ranks 256 --gpus-per-node 8 --steps 4 --layers 1 --inject slow-network=0.4,sync-checkpoint=8@4)
run reference = NET_INTER_SLOW CKPT_SYNC_STALL -- "${REF[@]}"
python3 - "$tmp/last.json" default <<'PY' || fail=1
import json, sys
f = {x["code"]: x for x in json.load(open(sys.argv[1]))["findings"]}
p = f["CKPT_SYNC_STALL"]["periodic"]
if p["interval_source"] != sys.argv[2] or abs(p["cost_per_occurrence_ns"] - 8e9) > 0.05e9:
    print("FAIL: checkpoint periodic", p); sys.exit(1)
PY
run reference-every-900 = NET_INTER_SLOW CKPT_SYNC_STALL -- "${REF[@]}" -- --ckpt-every 900
python3 - "$tmp/last.json" --ckpt-every <<'PY' || fail=1
import json, sys
rep = json.load(open(sys.argv[1]))
f = {x["code"]: x for x in rep["findings"]}
c = f["CKPT_SYNC_STALL"]
p = c["periodic"]
if p["interval_source"] != sys.argv[2]:
    print("FAIL: checkpoint interval from", p["interval_source"]); sys.exit(1)
# 8 s every 900 s is about 0.9 % of the time
if not 0.5 < c["estimated_gain_pct"] < 1.5:
    print("FAIL: 8 s every 900 s claimed %.2f %%" % c["estimated_gain_pct"]); sys.exit(1)
PY
# two checkpoints in the window: the trace's interval wins over a default
run ckpt-twice CKPT_SYNC_STALL -- --ranks 8 --gpus-per-node 4 --steps 8 --inject sync-checkpoint=2@4
python3 - "$tmp/last.json" <<'PY' || fail=1
import json, sys
p = {x["code"]: x for x in json.load(open(sys.argv[1]))["findings"]}["CKPT_SYNC_STALL"]["periodic"]
if p["interval_source"] != "trace" or abs(p["interval_steps"] - 4) > 1e-9:
    print("FAIL: two checkpoints 4 steps apart gave", p); sys.exit(1)
PY
# the same invariant on the real traces at hand (HTA's test traces, Nsight
# Systems exports), when the data directory has them
data=${CP_DATA_DIR:-}
if [ -n "$data" ] && [ -d "$data/hta" ]; then
    for t in "$data"/hta/*/*.json* "$data"/nsys/*/*.sqlite; do
        [ -f "$t" ] || continue
        "$CHAINPROF" analyze "$t" --json >"$tmp/real.json" 2>/dev/null || continue # not every sample is a trace
        echo -n "${t#$data/}: "
        check "$tmp/real.json" || fail=1
    done
fi
"$CHAINPROF" analyze "$tmp" --ckpt-every 5minutes >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --ckpt-every 5minutes must be a usage error"; fail=1; }
exit $fail
