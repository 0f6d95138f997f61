#!/usr/bin/env bash
# coll_fault.sh - a peer lost in the middle of a collective never hangs the job:
#  - a rank killed (SIGKILL): mpirun ends the job with a non-zero status;
#  - a rank stopped (SIGSTOP, alive but silent): the other ranks' waits time
#    out after --timeout, rank 0 reports "no completion after N s (peer dead
#    or stuck)" and aborts the job with exit status 1.
# Only the processes this test starts are signalled, by their ids.
set -u
CHAINPROF=${CHAINPROF:?}
command -v mpirun >/dev/null || { echo "skip: mpirun (openmpi-bin) not installed"; exit 77; }
command -v pgrep >/dev/null || { echo "skip: pgrep (procps) needed"; exit 77; }
tmp=$(mktemp -d)
mp=""
victim=""
cleanup() { [ -n "$victim" ] && kill -CONT "$victim" 2>/dev/null; [ -n "$mp" ] && kill "$mp" 2>/dev/null; rm -rf "$tmp"; true; }
trap cleanup EXIT INT TERM

run_case() { # signal expected_rc_check
  local sig=$1
  env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    mpirun --allow-run-as-root --oversubscribe -np 4 --mca btl tcp,vader,self \
    "$CHAINPROF" probe coll --no-history --min-bytes 1M --max-bytes 8M --iters 500 --warmup 1 --timeout 3 \
    > "$tmp/out" 2> "$tmp/err" &
  mp=$!
  victim=""
  local t
  for ((t = 0; t < 100; t++)); do   # wait (bounded) for the ranks
    [ -n "$victim" ] && break
    sleep 0.1
    [ "$(pgrep -P "$mp" -x chainprof | wc -l)" -eq 4 ] && victim=$(pgrep -P "$mp" -x chainprof | sed -n 2p)
  done
  [ -n "$victim" ] || { echo "FAIL: ranks did not start"; cat "$tmp/err"; exit 1; }
  # strike in the middle of the sweep, not during MPI_Init (which has no
  # timeout of ours): wait (bounded) until the victim has used 1 s of CPU
  local hz ticks
  hz=$(getconf CLK_TCK)
  for ((t = 0; t < 300; t++)); do
    ticks=$(awk '{print $14 + $15}' "/proc/$victim/stat" 2>/dev/null || echo 0)
    [ "${ticks:-0}" -ge "$hz" ] && break
    sleep 0.1
  done
  kill -"$sig" "$victim"
  local start=$SECONDS
  for ((t = 0; t < 240; t++)); do kill -0 "$mp" 2>/dev/null || break; sleep 0.25; done
  if kill -0 "$mp" 2>/dev/null; then echo "FAIL: SIG$sig: job still running after 60 s"; exit 1; fi
  wait "$mp"; rc=$?
  mp=""
  kill -CONT "$victim" 2>/dev/null
  echo "SIG$sig: exit $rc after $((SECONDS - start)) s"
}

run_case KILL
[ "$rc" -ne 0 ] || { echo "FAIL: killed rank: job exited 0"; exit 1; }
run_case STOP
[ "$rc" -eq 1 ] || { echo "FAIL: stopped rank: exit $rc, expected 1"; cat "$tmp/err"; exit 1; }
grep -q "no completion after 3 s (peer dead or stuck)" "$tmp/err" || { echo "FAIL: stopped rank: message"; cat "$tmp/err"; exit 1; }
echo ok
