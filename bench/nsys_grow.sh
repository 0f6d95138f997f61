#!/usr/bin/env bash
# nsys_grow.sh IN OUT [TIMES] - a real Nsight Systems export grown TIMES-fold in time (default 400).
#
# Issue 19 measures the nsys reader on a real export made long, not on synthetic rows: every table
# with a start column (kernels, runtime calls, memcpys, memsets, syncs, NVTX, overheads) is repeated
# TIMES times, copy k shifted by k x the trace's span (so copies follow each other without overlap) and
# its correlationIds by k x (max correlationId + 1) (so each launch still finds its own kernel).
# Names, processes, streams and the session start stay as they are. Rows are written in start order
# per table, as nsys writes them. Written with sqlite3 to OUT.tmp, then renamed.
set -euo pipefail
in=$1 out=$2 times=${3:-400}
command -v sqlite3 >/dev/null || { echo "nsys_grow: sqlite3 missing (scripts/deps.sh installs it)"; exit 1; }
[ -f "$in" ] || { echo "nsys_grow: $in: no such file"; exit 1; }
rm -f "$out.tmp"
cp "$in" "$out.tmp"
chmod u+w "$out.tmp"
tables=$(sqlite3 "$out.tmp" "SELECT DISTINCT m.name FROM sqlite_master m, pragma_table_info(m.name) p
  WHERE m.type = 'table' AND p.name = 'start'")
span=$(sqlite3 "$out.tmp" "SELECT max(e) - min(s) + 1 FROM ($(for t in $tables; do
  printf 'SELECT min(start) s, max(coalesce(end, start)) e FROM %s UNION ALL ' "$t"; done) SELECT NULL, NULL)")
corr=$(sqlite3 "$out.tmp" "SELECT coalesce(max(c), 0) + 1 FROM ($(for t in $tables; do
  if sqlite3 "$out.tmp" "SELECT 1 FROM pragma_table_info('$t') WHERE name = 'correlationId'" | grep -q 1; then
    printf 'SELECT max(correlationId) c FROM %s UNION ALL ' "$t"; fi; done) SELECT NULL)")
{
  echo "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
  echo "CREATE TEMP TABLE k AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $times - 1) SELECT i FROM n;"
  for t in $tables; do
    cols=$(sqlite3 "$out.tmp" "SELECT group_concat('\"' || name || '\"', ', ') FROM pragma_table_info('$t')")
    sel=$(sqlite3 "$out.tmp" "SELECT group_concat(CASE name
        WHEN 'start' THEN 'start + k.i * $span' WHEN 'end' THEN 'end + k.i * $span'
        WHEN 'correlationId' THEN 'correlationId + k.i * $corr' ELSE '\"' || name || '\"' END, ', ')
      FROM pragma_table_info('$t')")
    echo "CREATE TEMP TABLE o AS SELECT * FROM $t;"
    echo "INSERT INTO $t ($cols) SELECT $sel FROM k, o ORDER BY k.i, o.rowid;"
    echo "DROP TABLE o;"
  done
  echo "COMMIT; VACUUM;"
} | sqlite3 "$out.tmp" >/dev/null
mv "$out.tmp" "$out"
