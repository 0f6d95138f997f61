#!/usr/bin/env bash
# netns_coll.sh - four test hosts (network namespaces on one bridge, see
# tests/netns.sh), one of them with its link throttled by tc tbf to a small
# fraction of the others; `chainprof probe coll` under mpirun across them
# must name that host as slow and its links as slow links, and no other.
#
# mpirun reaches each namespace through a tiny rsh agent (ip netns exec HOST
# sh -c CMD, with CHAINPROF_HOSTNAME=HOST since namespaces share the host
# name); MPI traffic is pinned to the bridge subnet (btl tcp, oob tcp).
# Skips (77) without root, iproute2, namespaces or mpirun. Everything is torn
# down by a trap, also on failure; every wait is bounded (timeout).
set -u
# Open MPI keeps allocations from MPI_Init to exit by design; under the ASan
# build LeakSanitizer would report them as ours. Our own leaks are caught by
# the unit tests and the one-process runs, which keep leak detection on.
mpi_env=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
here=$(cd "$(dirname "$0")/.." && pwd)
CHAINPROF=${CHAINPROF:-$here/../build/chainprof}
source "$here/netns.sh"
netns_can || { echo "skip: network namespaces unavailable"; exit 77; }
command -v mpirun >/dev/null || { echo "skip: mpirun (openmpi-bin) not installed"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 needed to read the JSON"; exit 77; }

P="cpc$$"
P=${P:0:10}
NET="10.213.$(( $$ % 200 + 20 ))"
SLOW=2
tmp=$(mktemp -d)
cleanup() { netns_down "$P" 4; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

netns_up "$P" 4 "$NET" || { echo "FAIL: could not set up the namespaces"; exit 1; }
netns_throttle "$P" "$SLOW" 100mbit || { echo "FAIL: tc tbf on host $SLOW"; exit 1; }

cat > "$tmp/agent" <<'AGENT'
#!/bin/sh
# rsh agent for mpirun: [options] HOST COMMAND... -> run COMMAND in namespace HOST
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1; shift
exec ip netns exec "$host" env CHAINPROF_HOSTNAME="$host" sh -c "$*"
AGENT
chmod +x "$tmp/agent"
for i in 0 1 2 3; do echo "$P$i slots=1"; done > "$tmp/hosts"

run_mpi() {
  timeout 120 "${mpi_env[@]}" mpirun --allow-run-as-root --oversubscribe -np 4 --hostfile "$tmp/hosts" \
    --mca plm_rsh_agent "$tmp/agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "$NET.0/24" --mca btl tcp,self --mca btl_tcp_if_include "$NET.0/24" \
    "$CHAINPROF" probe coll --no-history --min-bytes 1k --max-bytes 64k --factor 8 --iters 3 --warmup 1 --timeout 60 \
    --json -o "$tmp/out.json" > "$tmp/stdout" 2> "$tmp/stderr"
}
run_mpi
rc=$?
# A normal run takes about 10 s. Once in five sanitizer runs on a loaded 2-core machine mpirun's
# start-up over the namespaces hung before chainprof printed anything (exit 124 from timeout, empty
# stderr); the probe's own waits are all bounded. Retry once so that flake does not fail the suite,
# and say so.
if [ $rc -eq 124 ]; then
  echo "note: mpirun start-up timed out; retrying once"
  run_mpi
  rc=$?
fi
if [ $rc -ne 0 ]; then
  echo "FAIL: mpirun chainprof probe coll exited $rc"; cat "$tmp/stderr"; exit 1
fi
python3 - "$tmp/out.json" "$P$SLOW" <<'PY' || { cat "$tmp/stderr"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1])); slow = sys.argv[2]
p = d["p2p"]
print("verdict:", p["verdict"])
assert p["grouped_by"] == "host", p["grouped_by"]
hosts = {h["name"]: h for h in p["hosts"]}
assert len(hosts) == 4, hosts
flagged = sorted(n for n, h in hosts.items() if h["slow"])
assert flagged == [slow], f"slow hosts {flagged}, expected [{slow}]"
links = [l for l in p["links"] if l["slow"]]
assert links and all(slow in (l["a"], l["b"]) for l in links), links
assert len(links) == 3, links
assert slow in p["verdict"]
rows = d["results"]
assert any(r["metric"] == f"slow_host {slow}" for r in rows)
assert all(r["wrong"] == 0 for r in rows if r.get("op")), "collective check failed"
assert any(r.get("op") == "all_reduce" and r["busbw_gbps"] > 0 for r in rows)
PY
echo "ok: throttled host $P$SLOW named"
