#!/usr/bin/env bash
# bench_run.sh - what `chainprof run` costs a job: per-event cost (ns per
# kernel launch and per file write) and the step-time overhead in summary
# and trace mode on a loop of 10,000 kernel launches and file writes per
# second (10 ms steps of fixed host work with 90 launches and 10 writes of
# 4 KiB), over the fake CUDA runtime (tests/fakes). Figures only (not a
# pass/fail test); record them in docs/PERFORMANCE.md ("chainprof run").
#
#   bench/bench_run.sh [BUILD_DIR] [STEPS] [ROUNDS]     (default build 300 3)
#
# Modes, alternated round by round (A/B, the machine may be shared):
#   off        the loop alone
#   inactive   the collector preloaded, CHAINPROF_OUT unset (forwarding only)
#   summary    chainprof run --mode summary
#   trace      chainprof run (trace files written)
# Overhead = mode's median CPU time per step / off's - 1 (process CPU time,
# every thread: the collector's background writer is in it); wall time per
# step is shown too. The load average is printed with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
steps=${2:-300}
rounds=${3:-3}
cp="$build/chainprof"
lib="$build/libchainprof_collect.so"
[ -x "$cp" ] && [ -f "$lib" ] && [ -f "$build/fakes/one/libcudart.so" ] || { echo "build chainprof first ($build)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
${CC:-cc} -O2 -Wall bench/bench_run_loop.c -o "$tmp/loop" -L"$build/fakes/one" -lcudart \
  -Wl,-rpath,"$(cd "$build" && pwd)/fakes/one" -rdynamic -ldl
iters=$("$tmp/loop" "$tmp" calibrate)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; $(date -u +%FT%TZ)"
echo "loop: $steps steps of $iters iterations (10 ms of CPU time here), 90 launches + 10 writes of 4 KiB a step"

run_mode() { # MODE ROUND WHAT ARGS... -> JSON line in $tmp/MODE.WHAT.ROUND
  local m=$1 r=$2 what=$3
  shift 3
  local out="$tmp/$m.$what.$r"
  case $m in
    off) "$tmp/loop" "$tmp" "$what" "$@" > "$out" ;;
    inactive) LD_PRELOAD="$lib" "$tmp/loop" "$tmp" "$what" "$@" > "$out" ;;
    summary) "$cp" run -q --mode summary --out "$tmp/out.$m.$what.$r" -- "$tmp/loop" "$tmp" "$what" "$@" > "$out" ;;
    trace) "$cp" run -q --out "$tmp/out.$m.$what.$r" -- "$tmp/loop" "$tmp" "$what" "$@" > "$out" ;;
  esac
}
modes=(off inactive summary trace)
for r in $(seq "$rounds"); do
  for m in "${modes[@]}"; do run_mode "$m" "$r" events; done
  for m in "${modes[@]}"; do run_mode "$m" "$r" loop "$steps" "$iters"; done
  echo "round $r done; load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
python3 - "$tmp" "$rounds" "${modes[@]}" <<'PY'
import glob, json, os, statistics, sys
tmp, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(m, what):
    return [json.load(open("%s/%s.%s.%d" % (tmp, m, what, r))) for r in range(1, rounds + 1)]
res = {m: [dict(e, **l) for e, l in zip(load(m, "events"), load(m, "loop"))] for m in modes}
med = {m: {k: statistics.median(x[k] for x in v) for k in v[0]} for m, v in res.items()}
off = med["off"]
print("%-9s %10s %10s %14s %14s %9s %9s %10s" % ("mode", "ns/launch", "ns/pwrite", "cpu ms/step", "wall ms/step",
      "cpu +%", "wall +%", "events/s"))
for m in modes:
    x = med[m]
    print("%-9s %10.1f %10.1f %14.4f %14.4f %9.2f %9.2f %10.0f" % (m, x["ns_launch"], x["ns_pwrite"],
          x["cpu_ms_per_step"], x["wall_ms_per_step"], 100 * (x["cpu_ms_per_step"] / off["cpu_ms_per_step"] - 1),
          100 * (x["wall_ms_per_step"] / off["wall_ms_per_step"] - 1), x["events_per_s"]))
for m in ("summary", "trace"):
    print("per-event cost, %s: launch +%.0f ns, pwrite +%.0f ns" % (m, med[m]["ns_launch"] - off["ns_launch"],
          med[m]["ns_pwrite"] - off["ns_pwrite"]))
size = sum(os.path.getsize(f) for f in glob.glob(tmp + "/out.trace.loop.1/*.cptrace"))
n = res["trace"][0]["steps"] * 100
print("trace file of the loop: %.2f MB for %d events (%.1f bytes per event, strings and steps included)" % (
      size / 1e6, n, size / n))
for m in ("summary", "trace"):
    per = med[m]["ns_launch"] - off["ns_launch"]
    print("%s: at 10,000 events/s the per-event cost is %.2f %% of a core's time" % (m, per * 1e4 / 1e9 * 100))
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
