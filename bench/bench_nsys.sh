#!/usr/bin/env bash
# bench_nsys.sh BUILD [ROWS] - Nsight Systems reader speed against SQLite's own read speed.
#
# 1. The largest real export under ../shared/data/nsys (when present).
# 2. A synthetic export with the nsys schema (kernels, runtime calls, memcpys, NVTX ranges, strings),
#    ROWS kernels (default 2,000,000), written with sqlite3 into the build directory.
# For each: the time `sqlite3` needs to read the rows (the floor: SQLite's read speed), once for two
# columns and once for every column the reader takes from the kernel and runtime tables; the reader
# alone (bench/bench_nsys_read.c: rows into builders, then tl_finish timed apart); and
# `chainprof analyze` (read + all analyses). All CPU time.
set -euo pipefail
build=${1:-build}
rows=${2:-2000000}
bin="$build/chainprof"
[ -x "$bin" ] || { echo "bench_nsys: build first ($bin missing)"; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench_nsys: sqlite3 missing (scripts/deps.sh installs it)"; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
data=${CHAINPROF_DATA:-$here/../shared/data}

cpu() { # cpu seconds (user+sys), wall seconds and peak RSS of a command, output discarded
  /usr/bin/env time -f "%U %S %M %e" -o /tmp/bench_nsys.time "$@" >/dev/null 2>&1 || true
  awk '{printf "%.2f s cpu, %.2f s wall, %d MB peak", $1+$2, $4, $3/1024}' /tmp/bench_nsys.time
}

floor_sql="SELECT count(*), sum(start), sum(end) FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT count(*), sum(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME;
SELECT count(*), sum(length(value)) FROM StringIds;"

floor_cols_sql="SELECT count(*), sum(start), sum(end), sum(deviceId), sum(streamId), sum(correlationId),
  sum(globalPid), sum(demangledName), sum(shortName), sum(gridX*gridY*gridZ), sum(blockX*blockY*blockZ)
  FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT count(*), sum(start), sum(end), sum(globalTid), sum(correlationId), sum(nameId) FROM CUPTI_ACTIVITY_KIND_RUNTIME;"

reader="$build/bench/bench_nsys_read"
# the malloc tunables `chainprof analyze` runs itself with (src/cli/main.c), so the reader alone
# is measured as analyze runs it
tun=glibc.malloc.mmap_threshold=1073741824:glibc.malloc.arena_max=1
tun=$tun:glibc.malloc.trim_threshold=4294967296
mkdir -p "$build/bench"
${CC:-gcc} -std=c17 -O2 -D_GNU_SOURCE -I"$here/src" -o "$reader" "$here/bench/bench_nsys_read.c" \
    "$build/libcp_readers.a" "$build/libcp_model.a" "$build/libcp_base.a" -lsqlite3 -lz -lzstd \
    $(pkg-config --libs libisal 2>/dev/null) -lpthread -lm

run() {
  local f=$1
  local mb; mb=$(du -m "$f" | cut -f1)
  printf '%s (%s MB)\n' "$(basename "$f")" "$mb"
  printf '  sqlite3 reading the rows:  %s\n' "$(cpu sqlite3 -readonly "$f" "$floor_sql")"
  printf '  sqlite3, the reader columns: %s\n' "$(cpu sqlite3 -readonly "$f" "$floor_cols_sql")"
  printf '  reader alone (bench_nsys_read), 1 thread: %s\n' "$(GLIBC_TUNABLES=$tun "$reader" "$f" 1 1 | tr -d '\n')"
  printf '  reader alone (bench_nsys_read), %d threads: %s\n' "$(nproc)" \
    "$(GLIBC_TUNABLES=$tun "$reader" "$f" 1 "$(nproc)" | tr -d '\n')"
  printf '  chainprof analyze --json:  %s\n' "$(cpu "$bin" analyze --no-history --json "$f")"
}

if [ -d "$data/nsys" ]; then
  largest=$(find "$data/nsys" -name '*.sqlite' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
  run "$largest"
fi

syn="$build/bench/nsys_synth_$rows.sqlite"
if [ ! -f "$syn" ]; then
  rm -f "$syn.tmp"
  sqlite3 "$syn.tmp" >/dev/null <<SQL
PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, gridX INTEGER, gridY INTEGER, gridZ INTEGER,
  blockX INTEGER, blockY INTEGER, blockZ INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '', 1000);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199)
INSERT INTO StringIds SELECT i, 'void kernel_' || i || '<float, 128>(float const*, float*, int)' FROM n;
INSERT INTO StringIds VALUES (1000, 'cudaLaunchKernel_v7000');
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $rows - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
SELECT 1000000 + i * 2000, 1000000 + i * 2000 + 1500, 0, 1, 7 + (i % 2), i, (111 << 24),
       i % 200, i % 200, 128, 1, 1, 256, 1, 1 FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $rows - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
SELECT 999000 + i * 2000, 999000 + i * 2000 + 400, 1, (111 << 24) | 111, i, 1000, 0 FROM n;
SQL
  mv "$syn.tmp" "$syn"
fi
run "$syn"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs"
