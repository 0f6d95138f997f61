#!/usr/bin/env bash
# mpi_analyze.sh - `mpirun --oversubscribe -np P chainprof analyze` (issue 19
# item 3) against one process, on synthesized jobs: a multi-node DP job with
# a straggler, host work and pageable copies (host_ops, expert rules; 5 ranks, 2 GPUs a node: 2 and 3 processes hold unequal
# shares), a TP x DP job in gzip, a pipeline job (send/recv pairs), and a job of 2 ranks on 3 processes (one
# process reads nothing) with an nccl-tests output among its files. Checked, field by field (values, types and key
# order, tool and command aside):
#   - -np 2 and -np 3 give exactly the report of -np 1;
#   - every field of the -np 1 report is the one-process report's, except
#     the analyses the report lists under distributed.not_computed, which
#     are absent (never partial); when that list is empty the two reports
#     are equal;
#   - tool.processes is P, and only rank 0 writes a report.
# Then the same on real traces (HTA's test data under ../shared/data, when
# present), and a job whose two files say the same rank is refused.
# Skips (77) without mpirun or python3.
set -u
# Open MPI keeps allocations from MPI_Init to exit by design; under the ASan
# build LeakSanitizer would report them as ours (the one-process runs keep
# leak detection on).
mpi_env=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
CHAINPROF=${CHAINPROF:?}
CP_SOURCE_DIR=${CP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export CP_SOURCE_DIR
command -v mpirun >/dev/null || { echo "skip: mpirun (openmpi-bin) not installed"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 needed to compare the reports"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mpi() { # NP ARGS...
    local np=$1
    shift
    timeout 300 "${mpi_env[@]}" mpirun --allow-run-as-root --oversubscribe -np "$np" --mca btl tcp,vader,self \
        "$CHAINPROF" "$@"
}

compare() { # ONE NP1 NP2 NP3
    python3 - "$@" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["CP_SOURCE_DIR"], "bench"))
from json_same import walk  # the one field-by-field comparison (values, types, key order)
raw = [open(p).read() for p in sys.argv[1:]]
for r, p in zip(raw[1:], sys.argv[2:]):
    assert r.count('"schema"') == 1, p + ": more than one report (only rank 0 writes)"
one, np1, np2, np3 = (json.loads(r) for r in raw)
for d, p in ((one, 1), (np1, 1), (np2, 2), (np3, 3)):
    assert d["tool"]["processes"] == p, (d["tool"], p)
bad = []
for d in (one, np1, np2, np3):
    d.pop("tool"), d.pop("command")
walk(np1, np2, "np2", bad)
walk(np1, np3, "np3", bad)
nc = np1.pop("distributed", {}).get("not_computed", [])
missing = [k for k in one if k not in np1]
if not nc:
    assert not missing, f"not_computed is empty but {missing} are missing"
walk(one, np1, "np1", bad, subset=bool(nc))
assert all(k in one for k in np1), [k for k in np1 if k not in one]
for m in bad[:20]:
    print("DIFF", m)
assert not bad, f"{len(bad)} differences"
print(f"ok: {len(one['ranks'])} ranks, -np 1/2/3 equal; not computed under mpirun: {nc}; absent keys {missing}")
PY
}

run_job() { # NAME [EVIDENCE-FILE] SYNTH-ARGS...
    local name=$1 ev=
    shift
    case ${1:-} in /*) ev=$1; shift ;; esac
    "$CHAINPROF" synth --out "$tmp/$name" "$@" >/dev/null || { echo "FAIL: synth $name"; fail=1; return; }
    [ -z "$ev" ] || cp "$ev" "$tmp/$name/"
    # a pipeline job's optrace.json numbers its ranks as the rank files do: one process keeps them apart,
    # a sharded run refuses (tested below with HTA's trace_compare); the rank files alone are compared
    rm -f "$tmp/$name/optrace.json"
    "$CHAINPROF" analyze "$tmp/$name" --no-history --json >"$tmp/$name.one.json" 2>"$tmp/err" ||
        { echo "FAIL: $name: one process"; cat "$tmp/err"; fail=1; return; }
    for np in 1 2 3; do
        mpi "$np" analyze "$tmp/$name" --no-history --json >"$tmp/$name.np$np.json" 2>"$tmp/err" ||
            { echo "FAIL: $name: mpirun -np $np exited $?"; cat "$tmp/err"; fail=1; return; }
    done
    echo "$name:"
    compare "$tmp/$name.one.json" "$tmp/$name.np1.json" "$tmp/$name.np2.json" "$tmp/$name.np3.json" || fail=1
}

run_job dp5 --ranks 5 --gpus-per-node 2 --steps 3 --inject straggler=3,host-work=20@1,pageable-h2d=64
# the exchanged analyses had rows to compare there
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["stragglers"] and d["host_ops"] and d["expert"]["rules"] and d["collectives"], "dp5: empty tables"' \
    "$tmp/dp5.one.json" || fail=1
run_job tpdp --ranks 4 --gpus-per-node 2 --tp 2 --steps 2 --gzip --inject slow-network=0.3
run_job pp --pp 2 --dp 2 --microbatches 4 --steps 2 # send/recv pairs: p2p matching and the matrix's peers
run_job two "${CP_FIXTURES:-$CP_SOURCE_DIR/tests/fixtures}/nccl-tests/new-2node-allgather-wrong-na.txt" --ranks 2 --steps 2 --inject sync-checkpoint=0.05@1

# real traces (HTA's test data, when ../shared/data is there): -np 2 against one process
data=${CP_DATA_DIR:-$CP_SOURCE_DIR/../shared/data}/hta
if [ -d "$data" ]; then
    for d in trace_filter nccl_parser_config cupti_profiler mixed_files trace_diff critical_path/alexnet amd_trace; do
        [ -d "$data/$d" ] || continue
        n=real_${d//\//_}
        "$CHAINPROF" analyze "$data/$d" --no-history --json >"$tmp/$n.one.json" 2>"$tmp/err" &&
            mpi 1 analyze "$data/$d" --no-history --json >"$tmp/$n.np1.json" 2>>"$tmp/err" &&
            mpi 2 analyze "$data/$d" --no-history --json >"$tmp/$n.np2.json" 2>>"$tmp/err" &&
            mpi 3 analyze "$data/$d" --no-history --json >"$tmp/$n.np3.json" 2>>"$tmp/err" ||
            { echo "FAIL: $d"; cat "$tmp/err"; fail=1; continue; }
        echo "$d:"
        compare "$tmp/$n.one.json" "$tmp/$n.np1.json" "$tmp/$n.np2.json" "$tmp/$n.np3.json" || fail=1
    done
    # two files with one rank number: one process renumbers one of them; a sharded run refuses (exit 3)
    if [ -d "$data/trace_compare" ]; then
        mpi 2 analyze "$data/trace_compare" --no-history --json >/dev/null 2>"$tmp/err"
        rc=$?
        grep -q "is in two files read by different processes" "$tmp/err" && [ $rc -ne 0 ] ||
            { echo "FAIL: duplicate ranks under mpirun (exit $rc)"; cat "$tmp/err"; fail=1; }
    fi
else
    echo "note: $data absent: real traces not compared"
fi

# what a sharded run cannot do is refused with the reason, never half done
out=$(mpi 2 analyze "$tmp/dp5" --no-history --fail-on high 2>&1 >/dev/null)
case $out in *"--fail-on under mpirun is not supported"*) ;; *) echo "FAIL: --fail-on under mpirun: $out"; fail=1 ;; esac
out=$(mpi 2 analyze "$tmp/dp5" --no-history -o "$tmp/x.perfetto.json" 2>&1 >/dev/null)
case $out in *"Perfetto overlay needs every event"*) ;; *) echo "FAIL: perfetto under mpirun: $out"; fail=1 ;; esac
[ ! -e "$tmp/x.perfetto.json" ] || { echo "FAIL: perfetto file written"; fail=1; }
exit $fail
