#!/bin/bash
# critpath_hta.sh - the critical path on the traces of HTA's own critical
# path tests (../shared/data/hta/critical_path, read in place):
#  - the path's layers, ranks and bound_by add up to its length, and its
#    length is the window (the profiler step, or the whole trace without one);
#  - simple_add and alexnet are CPU bound, as HTA's documentation says of
#    them ("most of the critical path is on the CPU ... cudaMalloc");
#  - the event-sync traces give sync dependency edges (HTA's tests assert
#    SYNC_DEPENDENCY edges on both) and a kernel-launch-delay edge.
# Skips (77) without the data or python3.
set -u
CHAINPROF=${CHAINPROF:?}
D=${CP_DATA_DIR:-${CP_SOURCE_DIR:-.}/../shared/data}/hta/critical_path
[ -d "$D" ] || { echo "skip: $D is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for spec in simple_add/benchmark_result_493459_1694039959_trace.json.gz:cpu \
            alexnet/benchmark_result_2869224_1695835535_trace.json.gz:cpu \
            cuda_event_sync/event_sync_trace.json.gz:sync \
            cuda_event_sync_multi_stream/event_sync_trace.json.gz:sync; do
    f=${spec%%:*} want=${spec##*:}
    [ -f "$D/$f" ] || { echo "skip: $D/$f is absent"; exit 77; }
    "$CHAINPROF" analyze -o "$tmp/r.json" "$D/$f" 2>"$tmp/err" || { echo "FAIL: analyze $f"; cat "$tmp/err"; fail=1; continue; }
    python3 - "$tmp/r.json" "$want" "$f" <<'PY' || fail=1
import json, sys
cp = json.load(open(sys.argv[1]))["critical_path"]; want = sys.argv[2]; ok = True
if not cp["steps"]:
    print("FAIL: %s: no path" % sys.argv[3]); sys.exit(1)
for s in cp["steps"]:
    L = s["length_ns"]
    for what, tot in (("layers", sum(s["layers"].values())), ("ranks", sum(r["ns"] for r in s["ranks"])),
                      ("bound_by", sum(s["bound_by"].values()))):
        if tot != L:
            print("FAIL: %s step %s: %s sum %d != length %d" % (sys.argv[3], s["id"], what, tot, L)); ok = False
    if L != s["step_ns"]:
        print("FAIL: %s step %s: length %d, window %d" % (sys.argv[3], s["id"], L, s["step_ns"])); ok = False
    b = s["bound_by"]
    if want == "cpu" and max(b, key=b.get) != "cpu_bound_ns":
        print("FAIL: %s: not CPU bound: %s" % (sys.argv[3], b)); ok = False
t = cp["graph"]["edges_by_type"]
if want == "sync" and not (t["critical_path_sync_dependency"] > 0 and t["critical_path_kernel_launch_delay"] > 0):
    print("FAIL: %s: edges %s" % (sys.argv[3], t)); ok = False
print("ok" if ok else "mismatch", sys.argv[3])
sys.exit(0 if ok else 1)
PY
done
# a rank of instant events only (a raw memory timeline): no path to report, and no
# step with a start computed from nothing (it was -t0, a date in 1916)
if [ -f "$D/../memory_analysis/memory_timeline.raw.gz" ]; then
    "$CHAINPROF" analyze -o "$tmp/m.json" "$D/../memory_analysis" 2>"$tmp/err" || { echo "FAIL: analyze memory_analysis"; cat "$tmp/err"; fail=1; }
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["critical_path"]["steps"]
sys.exit(0 if s == [] else "FAIL: memory_analysis: steps %s" % s)' "$tmp/m.json" || fail=1
fi
exit $fail
