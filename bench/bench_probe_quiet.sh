#!/usr/bin/env bash
# bench_probe_quiet.sh - does the memory probe tell the truth on a shared VM?
#
# Ten quick passes of `chainprof probe memory --quick` (the memory probe as the quick pass runs it;
# BENCH_FULL_PASS=1 runs the whole `chainprof probe` instead), interleaved with a STREAM-style
# reference (bench/stream_ref.c, OpenMP, independent of the probe's code) whose arrays are each
# 4 x the largest cache that pass found (its working-set sweep), on the same number of threads,
# in ABBA order so both see the same background. Prints, per pass and over the ten:
#   - chainprof's triad figure (STREAM's best round), its median round and its spread,
#   - the sweep's DRAM plateau and the largest cache found,
#   - the reference's triad (best of 6, its own STREAM convention) with the same array rule,
#   - the machine's quietness as the probe judged it (others' CPU before the pass, steal).
# Then the median of each over the passes, their spread (min, max, cv) and the difference of the
# medians. Figures for docs/PERFORMANCE.md; never a pass/fail test.
# Usage: bench/bench_probe_quiet.sh [BUILD_DIR] [PASSES]
set -eu
build=${1:-build}; passes=${2:-10}
cp=$build/chainprof
[ -x "$cp" ] || { echo "build chainprof first ($cp)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON"; exit 1; }
threads=$(nproc)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -fopenmp "$(dirname "$0")/stream_ref.c" -o "$tmp/stream_ref"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $threads CPUs, $(free -g | awk '/Mem:/{print $2}') GiB;" \
     "$(date -u +%FT%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
avail=$(awk '/MemAvailable/{print $2 * 1024}' /proc/meminfo)

ours() { # pass -> $tmp/p$1.json
    if [ "${BENCH_FULL_PASS:-0}" = 1 ]; then "$cp" probe --dir "$tmp" --no-history --json > "$tmp/p$1.json" || true
    else "$cp" probe memory --quick --no-history --json > "$tmp/p$1.json"; fi
}
ref() { # pass, the pass whose cache sizes it -> $tmp/r$1.txt: arrays 4 x that cache, within 1/6 of the available memory
    local cache n
    cache=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory"]["largest_cache_found_bytes"])' "$tmp/p$2.json")
    n=$(python3 -c "c=$cache; a=$avail; b=max(4*c, 64<<20); b=min(b, a//6); print(b//8)")
    echo "$n" > "$tmp/n$1"
    OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread "$tmp/stream_ref" "$n" 6 > "$tmp/r$1.txt"
}
for i in $(seq "$passes"); do
    # ABBA: chainprof first in passes 1, 4, 5, 8, ...; the reference needs the pass's cache, so
    # "reference first" runs it with the previous pass's cache
    if [ $((i % 4)) -le 1 ]; then ours "$i"; ref "$i" "$i"
    else ref "$i" $((i - 1)); ours "$i"; fi
done
python3 - "$tmp" "$passes" <<'PY'
import json, statistics as st, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def pct(v, p):
    v = sorted(v); k = p / 100 * (len(v) - 1); lo = int(k)
    return v[lo] + (k - lo) * (v[min(lo + 1, len(v) - 1)] - v[lo])
rows = []
print("%-4s %9s %9s %6s %9s %10s %9s %10s %6s  %s" % ("pass", "triad", "median", "cv%", "plateau", "cache MiB",
      "ref", "ref MiB", "diff%", "quietness"))
for i in range(1, n + 1):
    d = json.load(open("%s/p%d.json" % (tmp, i)))
    m = {r["metric"]: r for r in d["results"]}
    t, pl = m["triad_bandwidth"], m["dram_plateau_bandwidth"]
    ref = [float(l.split()[1]) for l in open("%s/r%d.txt" % (tmp, i)) if l.startswith("triad")][0]
    ref_mib = int(open("%s/n%d" % (tmp, i)).read()) * 8 >> 20
    q = d["quiet"]
    before = q["windows"][0]
    rows.append((t["value"], t["median"], pl["value"], ref))
    print("%-4d %9.2f %9.2f %6.1f %9s %10d %9.2f %10d %6.1f  %s (others %.0f %%, steal %.1f %% before)" % (
        i, t["value"], t["median"], t["cv_pct"] or 0, "%.2f" % pl["value"] if pl["value"] else "none",
        d["memory"]["largest_cache_found_bytes"] >> 20, ref, ref_mib, (t["value"] - ref) / ref * 100,
        "quiet" if q["quiet"] else "not quiet", before["others_cpu_pct"] or 0, before["steal_pct"] or 0))
def summary(name, v):
    v = [x for x in v if x is not None]
    if not v: return print("%-26s none" % name)
    print("%-26s median %8.2f  min %8.2f  max %8.2f  p10 %8.2f  p90 %8.2f  cv %5.1f %%  (%d passes)" % (
        name, st.median(v), min(v), max(v), pct(v, 10), pct(v, 90),
        (st.stdev(v) / st.mean(v) * 100) if len(v) > 1 else 0, len(v)))
summary("chainprof triad (best)", [r[0] for r in rows])
summary("chainprof triad (median)", [r[1] for r in rows])
summary("chainprof DRAM plateau", [r[2] for r in rows])
summary("stream_ref triad (best)", [r[3] for r in rows])
a, b = st.median([r[0] for r in rows]), st.median([r[3] for r in rows])
print("median triad vs median reference: %+.1f %%" % ((a - b) / b * 100))
pl = [r[2] for r in rows if r[2]]
if pl: print("median plateau vs median reference: %+.1f %%" % ((st.median(pl) - b) / b * 100))
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
