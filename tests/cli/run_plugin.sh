#!/usr/bin/env bash
# run_plugin.sh - `chainprof run` on a two-rank job over the fake CUDA runtime
# and NCCL (tests/collect/fake_job.c, one host, shared-file transport):
#   - every NCCL profiler interface version (the fake NCCL takes the newest
#     the plugin exports up to FAKE_NCCL_PROFILER_MAX, 6 down to 1): the
#     plugin is loaded from NCCL_PROFILER_PLUGIN and driven in NCCL's order;
#     analyze sees one communication event per NCCL operation of each rank,
#     every one with its collective args, the all-reduces matched across the
#     ranks; kernel-channel events from v3 on, API events from v5 on;
#   - CUPTI (the fake libcupti): a GPU kernel per launch, on the GPU tracks,
#     with compute time in the breakdown;
#   - --steps A-B keeps only those steps; NCCL_PROFILER_PLUGIN=none (the
#     job's own choice) leaves the NCCL calls timed without plugin events.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
CHAINPROF=${CHAINPROF:-$here/../build/chainprof}
BUILD=${CP_BUILD_DIR:-$(dirname "$CHAINPROF")}
JOB="$BUILD/collect/fake_job"
command -v python3 >/dev/null || { echo "skip: python3 needed to read the JSON"; exit 77; }
[ -x "$JOB" ] || { echo "FAIL: $JOB not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
STEPS=6

job2() { # job2 NAME [chainprof run options...]: both ranks, in the background and the foreground
  local name=$1
  shift
  mkdir -p "$tmp/$name/work"
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 FAKE_NCCL_DIR="$tmp/$name/work" timeout 120 "$CHAINPROF" run -q --out "$tmp/$name/out" "$@" -- \
      "$JOB" "$tmp/$name/work" "$STEPS" 4096 3 2> "$tmp/$name/run$r.err" &
  done
  wait
  ls "$tmp/$name/work"/own.0.json "$tmp/$name/work"/own.1.json > /dev/null 2>&1 ||
    { echo "FAIL: $name: the job did not finish"; cat "$tmp/$name"/run*.err; return 1; }
  "$CHAINPROF" analyze "$tmp/$name/out" --json -o "$tmp/$name/a.json" > /dev/null 2> "$tmp/$name/a.err" ||
    { echo "FAIL: $name: analyze"; cat "$tmp/$name/a.err"; return 1; }
}

check() { # check NAME VERSION CUPTI STEPS_EXPECTED [NCCL_OPS_EXPECTED]
  python3 - "$tmp/$1" "$2" "$3" "$4" "$here/collect" "${5:-}" <<'PY'
import glob, json, sys
d, version, cupti, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
sys.path.insert(0, sys.argv[5])
import cptrace
a = json.load(open(d + "/a.json"))
own = {json.load(open(f))["rank"]: json.load(open(f)) for f in glob.glob(d + "/work/own.*.json")}
rows = {r["rank"]: r for r in a["layer_breakdown"]}
assert sorted(rows) == [0, 1], rows
for r in rows.values():
    assert r["steps"] == steps, r
    parts = sum(r[k + "_pct"] for k in ("host", "compute", "intra", "inter", "storage", "idle"))
    assert abs(parts - 100) < 1e-6, r
s = a["collectives_summary"]
ops = int(sys.argv[6]) if sys.argv[6] else sum(o["nccl_ops"] for o in own.values())
if version:
    assert s["kernels"] == ops and s["with_args"] == ops, (s, ops)
    assert s["matched"] >= 2 * steps, s  # every step's all-reduce on both ranks
for f in glob.glob(d + "/out/*.cptrace"):
    h, recs, strs = cptrace.read(f)
    kinds = {r.kind for _, r in recs}
    nev_ops = {r.op for _, r in recs if r.kind == 10}
    comm = [r for _, r in recs if r.kind == 9]
    assert (4 in kinds), "NCCL calls not timed"
    if version:
        assert comm and comm[0].flags == version, (version, comm)
        assert (19 in nev_ops) == (version >= 3), (version, nev_ops)   # kernel channels
        assert (5 in nev_ops) == (version >= 5), (version, nev_ops)    # collective API events
        kch = [r for _, r in recs if r.kind == 10 and r.op == 19]
        assert version < 4 or all(r.c > 0 for r in kch), "no ptimer in v4+ kernel channels"
    else:
        assert 10 not in kinds, "plugin events with NCCL_PROFILER_PLUGIN=none"
    gpu = [r for _, r in recs if r.kind == 12 and r.op == 1]
    if cupti:
        assert len(gpu) == own[h["rank"]]["kernels"], (len(gpu), own[h["rank"]])
        assert h["flags"] & 1, "header lacks the CUPTI flag"
    else:
        assert not gpu, gpu
if cupti:
    assert all(r["compute_pct"] > 0 for r in rows.values()), rows
print("ok: version %d%s, %d steps, %d NCCL operations" % (version, " + CUPTI" if cupti else "", steps, ops))
PY
}

fail=0
for v in 6 5 4 3 2 1; do
  FAKE_NCCL_PROFILER_MAX=$v job2 "v$v" && check "v$v" "$v" 0 "$STEPS" || fail=1
done
CHAINPROF_CUPTI="$BUILD/fakes/cupti/libcupti.so" FAKE_KERNEL_NS=20000 job2 cupti && check cupti 6 1 "$STEPS" || fail=1
# steps 2 and 3: an all-reduce each, and the neighbour exchange (a send and
# a receive) in the odd one: 4 operations a rank
job2 window --steps 2-3 && check window 6 0 2 8 || fail=1
NCCL_PROFILER_PLUGIN=none job2 noplugin && check noplugin 0 0 "$STEPS" || fail=1
exit $fail
