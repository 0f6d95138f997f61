#!/bin/bash
# flight_recorder.sh - PyTorch Flight Recorder dumps written by the project's
# generator (scripts/fr_synth.py: python3 standard library, pickle protocol 2
# and 4 and JSON, dump versions 2.5 to 2.10) with one planted fault each:
# `diagnose` must name the culprit rank(s), the process group, the sequence
# number and the op, in JSON (ranks, pg, seq, op) and in the text table;
# `analyze` must give the same top code. Damaged dumps are counted and the
# verdict comes from the other ranks; a pickle that is not a dump is not
# recognised. Skips (77) without python3.
set -u
CHAINPROF=${CHAINPROF:?}
SRC=${CP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
GEN="$SRC/scripts/fr_synth.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# case NAME CODE RANKS PG SEQ OP -- generator args
case_() {
    local name=$1 code=$2 ranks=$3 pg=$4 seq=$5 op=$6
    shift 7
    local d="$tmp/$name"
    python3 "$GEN" --out "$d" "$@" >/dev/null || { echo "FAIL: $name: generator failed"; fail=1; return; }
    "$CHAINPROF" diagnose --json "$d" >"$tmp/$name.json" 2>"$tmp/$name.err"
    local rc=$?
    [ $rc -le 1 ] || { echo "FAIL: $name: diagnose exit $rc: $(cat "$tmp/$name.err")"; fail=1; return; }
    python3 - "$tmp/$name.json" "$name" "$code" "$ranks" "$pg" "$seq" "$op" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); name, code, ranks, pg, seq, op = sys.argv[2:8]
v = r["verdicts"]
if not v or v[0]["code"] != code:
    sys.exit("FAIL: %s: top verdict %s, expected %s" % (name, v[0]["code"] if v else None, code))
v = v[0]
want = [int(x) for x in ranks.split(",") if x]
if want and v.get("ranks") != want:
    sys.exit("FAIL: %s: ranks %s, expected %s" % (name, v.get("ranks"), want))
for k, w in (("pg", pg), ("seq", seq), ("op", op)):
    if w != "-" and str(v.get(k)) != w:
        sys.exit("FAIL: %s: %s = %s, expected %s" % (name, k, v.get(k), w))
if not v["evidence"] or not v["next_steps"]:
    sys.exit("FAIL: %s: no evidence or next steps" % name)
if want and "flight_recorder" not in r:
    sys.exit("FAIL: %s: no flight_recorder section" % name)
if want and r["flight_recorder"]["ranks"][0]["rank"] != want[0]:
    sys.exit("FAIL: %s: table starts with rank %s" % (name, r["flight_recorder"]["ranks"][0]["rank"]))
PY
}

# every form, each with another dump version
for fv in "pickle 2 2.5" "pickle 4 2.8" "json 2 2.10"; do
    set -- $fv
    form="--form $1 --protocol $2 --version $3"
    tag="_$1$2"
    case_ "lagging$tag" FR_RANK_LAGGING 3 0 10 all_reduce -- --fault lagging --culprit 3 --steps 12 $form
    case_ "missing$tag" FR_RANK_MISSING 5 0 12 all_reduce -- --fault missing --culprit 5 --steps 12 $form
    case_ "dead$tag" FR_RANK_NO_DUMP 6,7 0 12 all_reduce -- --fault dead --culprit 6,7 --steps 12 $form
    case_ "size$tag" FR_SIZE_MISMATCH 2 0 12 all_reduce -- --fault size --culprit 2 --steps 12 $form
    case_ "dtype$tag" FR_DTYPE_MISMATCH 1 0 12 all_reduce -- --fault dtype --culprit 1 --steps 12 $form
    case_ "op$tag" FR_OP_MISMATCH 4 0 12 all_reduce -- --fault op --culprit 4 --steps 12 $form
    case_ "p2p$tag" FR_P2P_UNMATCHED 5 p4 12 send -- --fault p2p --culprit 5 --steps 12 $form
    case_ "stuck$tag" FR_COLLECTIVE_STUCK "" 0 12 all_reduce -- --fault stuck --steps 12 $form
    case_ "healthy$tag" FR_ALL_COMPLETED "" - - - -- --fault healthy --steps 12 $form
done
# ring buffers that dropped old entries: every rank keeps its last 7 of 40 ops
case_ ring FR_RANK_LAGGING 3 0 18 all_reduce -- --fault lagging --culprit 3 --steps 20 --entries 7
# 64 ranks, tp 8, the lagging rank deep inside
case_ wide FR_RANK_LAGGING 45 0 18 all_reduce -- --fault lagging --culprit 45 --ranks 64 --tp 8 --steps 20

# damaged dumps: counted, the verdict from the other ranks
for dmg in truncated corrupt; do
    case_ "$dmg" FR_ALL_COMPLETED "" - - - -- --fault $dmg --culprit 3 --steps 20
    python3 - "$tmp/$dmg.json" "$dmg" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); want = {"truncated": "truncated_file", "corrupt": "corrupt_file"}[sys.argv[2]]
codes = [c["code"] for c in r["diagnostics"]["codes"]]
if want not in codes: sys.exit("FAIL: %s: diagnostics %s lack %s" % (sys.argv[2], codes, want))
bad = [e for e in r["evidence"] if e.get("damaged")]
if len(bad) != 1 or bad[0]["rank"] != 3 or not bad[0]["entries"]:
    sys.exit("FAIL: %s: damaged dumps %s" % (sys.argv[2], bad))
PY
done

# the watchdog lines of the same job join the verdict (and their own verdict goes)
case_ joined FR_RANK_LAGGING 3 0 18 all_reduce -- --fault lagging --culprit 3 --steps 20 --watchdog
python3 - "$tmp/joined.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); v = r["verdicts"][0]
if not any(e["file"].endswith("train.log") and e["line"] for e in v["evidence"]):
    sys.exit("FAIL: joined: no watchdog line in the evidence: %s" % v["evidence"])
left = [x["code"] for x in r["verdicts"] if x["code"] in ("NCCL_TIMEOUT_STALL", "TORCH_TIMEOUT_LATE_RANK")]
if left: sys.exit("FAIL: joined: the watchdog symptom stayed a verdict of its own: %s" % left)
PY

# the culprit's own error (an IB completion error on rank 3) is the cause the
# dumps point at: one verdict, that rule's code, with the FR identity and lines
case_ cause NCCL_IB_ERR12_RETRY 3 0 12 all_reduce -- --fault dead --culprit 3 --steps 12 --watchdog --nccl-warn
python3 - "$tmp/cause.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); v = r["verdicts"][0]
if "FR_RANK_NO_DUMP" in [x["code"] for x in r["verdicts"]]: sys.exit("FAIL: cause: the FR verdict stayed apart")
if not any(e["text"].startswith("Flight Recorder:") for e in v["evidence"]): sys.exit("FAIL: cause: no dump line in %s" % v["evidence"])
PY

# text: the per-rank table at the failing collective
"$CHAINPROF" diagnose "$tmp/lagging_pickle2" >"$tmp/text.txt" 2>&1
grep -q "ranks at the failing collective" "$tmp/text.txt" && grep -Eq "^ +3 +not entered" "$tmp/text.txt" ||
    { echo "FAIL: text table missing: $(head -40 "$tmp/text.txt")"; fail=1; }

# analyze gives the same verdict
"$CHAINPROF" analyze --no-history --json "$tmp/dead_json2"/* >"$tmp/an.json" 2>"$tmp/an.err" || { echo "FAIL: analyze: $(cat "$tmp/an.err")"; fail=1; }
python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); f = r["findings"]
if not f or f[0]["code"] != "FR_RANK_NO_DUMP": sys.exit("FAIL: analyze top finding %s" % (f[0]["code"] if f else None))
' "$tmp/an.json" || fail=1

# a pickle that is not a Flight Recorder dump is not recognised, by name
python3 -c 'import pickle,sys; open(sys.argv[1],"wb").write(pickle.dumps({"weights":[1,2,3]}, protocol=2))' "$tmp/other.pkl"
"$CHAINPROF" diagnose "$tmp/other.pkl" >"$tmp/o.out" 2>"$tmp/o.err"
rc=$?
[ $rc -eq 0 ] && grep -q "other.pkl.*not recognised" "$tmp/o.err" && grep -q "1 not recognised" "$tmp/o.out" ||
    { echo "FAIL: a foreign pickle: exit $rc, $(cat "$tmp/o.err" "$tmp/o.out")"; fail=1; }

[ $fail -eq 0 ] && echo "ok: flight recorder verdicts"
exit $fail
