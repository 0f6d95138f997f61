#!/usr/bin/env bash
# storage_seq.sh - the storage probe's sequential rows say what they
# measured: every write goes to a new file and is timed through fsync (the
# fsync's share is given), and the buffered read starts with none of the
# file's pages cached (counted with mincore) on a disk filesystem; on tmpfs,
# which cannot drop its pages, the method says those pages were read from
# the cache. Structural checks only: no timing bound.
set -u
CHAINPROF=${CHAINPROF:?}
build=${CP_BUILD_DIR:?}
tmp=$(mktemp -d "$build/seq-test.XXXXXX")   # the build's filesystem (a disk, normally)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; cat "$tmp"/*.err 2>/dev/null; exit 1; }
fstype=$(stat -f -c %T "$tmp")

timeout 120 "$CHAINPROF" probe storage --dir "$tmp" --size 8M --rounds 1 --no-history --json > "$tmp/a.json" 2> "$tmp/a.err" ||
  fail "storage probe exited $?"
python3 - "$tmp/a.json" "$fstype" <<'PY' || fail "sequential rows"
import json, re, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["results"]}
tmpfs = sys.argv[2] == "tmpfs"
# O_DIRECT rows exist where the filesystem takes O_DIRECT (tmpfs does since Linux 6.6)
assert tmpfs or "seq_write_direct_bandwidth" in rows, sorted(rows)
for mode in [m for m in ("buffered", "direct") if "seq_write_%s_bandwidth" % m in rows]:
    w = rows["seq_write_%s_bandwidth" % mode]
    assert w["unit"] == "GB/s" and w["value"] > 0 and w["peak"] is None, w
    m = re.search(r"of 8 MiB in 1 MiB blocks to a new file \(no preallocation\) after syncfs, "
                  r"timed through fsync \(fsync ([0-9.]+) s of ([0-9.]+) s\)", w["method"])
    assert m, w["method"]
    fs, total = float(m.group(1)), float(m.group(2))
    assert 0 <= fs <= total, (fs, total)
    # the value is the bytes over the whole timed window, fsync included (method: 3 decimals)
    assert abs(8 * 2**20 / (w["value"] * 1e9) - total) <= 0.0006, (w["value"], total)
    assert rows["seq_read_%s_bandwidth" % mode]["value"] > 0
r = rows["seq_read_buffered_bandwidth"]["method"]
m = re.search(r"after fsync \+ posix_fadvise\(DONTNEED\); mincore: (\d+) of (\d+) pages cached at start", r)
assert m, r
assert int(m.group(2)) * 4096 >= 8 * 2**20, r
if tmpfs:
    assert int(m.group(1)) > 0 and "read from the page cache for those" in r, r
else:
    assert int(m.group(1)) == 0, r
    assert "page cache for those" not in r, r
PY
# --rounds 3: each figure is the median of three rounds, their spread beside it (probe_stats.h)
timeout 120 "$CHAINPROF" probe storage --dir "$tmp" --size 4M --rounds 3 --no-history --json > "$tmp/b.json" \
  2> "$tmp/b.err" || fail "storage probe --rounds 3 exited $?"
python3 - "$tmp/b.json" <<'PY' || fail "--rounds 3"
import json, re, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["results"]}
seq = [k for k in rows if k.startswith("seq_")]
assert len(seq) in (2, 4), seq
for k in seq:
    r = rows[k]
    assert r["method"].endswith("; median of 3 rounds"), r["method"]
    assert r["stat"] == "median" and r["rounds"] == 3 and r["rounds_rejected"] == 0, r
    lo, hi, v = r["min"], r["max"], r["value"]
    assert lo <= r["p10"] <= v <= r["p90"] <= hi and v == r["median"], (k, r)
    assert r["cv_pct"] is not None and r["cv_pct"] >= 0, r
    if k.startswith("seq_write"):
        assert "in the last round)" in rows[k]["method"], rows[k]["method"]
PY
"$CHAINPROF" probe storage --dir "$tmp" --rounds 0 --no-history > /dev/null 2>&1
[ $? -eq 2 ] || fail "--rounds 0 must be a usage error (exit 2)"
[ -z "$(ls -A "$tmp" | grep -v -e '\.json$' -e '\.err$')" ] || fail "test files left behind: $(ls -A "$tmp")"
echo ok
