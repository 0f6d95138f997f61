#!/usr/bin/env bash
# storage_ckpt.sh - the storage probe's checkpoint test, asynchronous writer.
# With liburing in the build the asynchronous checkpoint must really go
# through io_uring (the method says so), write exactly the requested bytes,
# and spend less of the loop's time in io_uring calls than the synchronous
# write stalled it (asserted only with O_DIRECT: a buffered io_uring write
# on tmpfs completes inside the submit call). CHAINPROF_NO_IO_URING=1 must
# fall back to the pthread writer and say why. Structural checks only: the
# machine may be loaded, so no timing is compared with a tight bound.
set -u
CHAINPROF=${CHAINPROF:?}
build=${CP_BUILD_DIR:?}
tmp=$(mktemp -d "$build/ckpt-test.XXXXXX")   # on the build's filesystem: O_DIRECT where it allows
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; cat "$tmp"/*.err 2>/dev/null; exit 1; }
uring=0
grep -q '^URING_FOUND:INTERNAL=1' "$build/CMakeCache.txt" 2>/dev/null && uring=1

timeout 120 "$CHAINPROF" probe storage --dir "$tmp" --size 32M --no-history --json > "$tmp/a.json" 2> "$tmp/a.err" ||
  fail "storage probe exited $?"
CHAINPROF_NO_IO_URING=1 timeout 120 "$CHAINPROF" probe storage --dir "$tmp" --size 16M --no-history --json \
  > "$tmp/b.json" 2> "$tmp/b.err" || fail "storage probe (no io_uring) exited $?"
python3 - "$tmp/a.json" "$tmp/b.json" "$uring" <<'PY' || fail "checkpoint rows"
import json, sys
a = {r["metric"]: r for r in json.load(open(sys.argv[1]))["results"]}
b = {r["metric"]: r for r in json.load(open(sys.argv[2]))["results"]}
uring = sys.argv[3] == "1"
m = a["checkpoint_async_stall"]["method"]
if uring:
    assert "io_uring (QD 8" in m, m
    assert "pthread" not in m, m
    io = a["checkpoint_async_io_call_time"]
    assert io["unit"] == "ms" and io["value"] >= 0, io
    if "O_DIRECT" in m:
        assert io["value"] < a["checkpoint_sync_stall"]["value"], (io["value"], a["checkpoint_sync_stall"]["value"])
else:
    assert "a background pthread (io_uring unavailable: this build has no io_uring" in m, m
    assert "checkpoint_async_io_call_time" not in a
assert a["checkpoint_async_bytes"]["value"] == 32 * 2**20, a["checkpoint_async_bytes"]
assert a["checkpoint_async_write_bandwidth"]["value"] > 0
assert a["checkpoint_async_stall"]["value"] >= 0 and a["checkpoint_sync_stall"]["value"] >= 0
assert "32 MiB" in m and "steps ran" in m, m
# the fallback: a pthread, with the reason
mb = b["checkpoint_async_stall"]["method"]
assert "a background pthread (io_uring unavailable: disabled by CHAINPROF_NO_IO_URING)" in mb, mb
assert b["checkpoint_async_bytes"]["value"] == 16 * 2**20
assert "checkpoint_async_io_call_time" not in b
PY
[ -z "$(ls -A "$tmp" | grep -v -e '\.json$' -e '\.err$')" ] || fail "test files left behind: $(ls -A "$tmp")"
echo ok
