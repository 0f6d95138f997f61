#!/bin/sh
# bench_jsontok.sh - JSON tokenizer throughput on a generated Kineto-like trace.
#
#   bench/bench_jsontok.sh [MB] [REPS]     (default 300 MB, best of 3)
#
# Builds bench/bench_jsontok.c with -O2 against src/base, generates the trace
# under ${TMPDIR:-/tmp} (never in the repository), prints MB/s per parser on
# one core, and removes the file. libyajl-dev and libjsmn-dev are compared
# when installed; otherwise their rows say "skipped". Record results in
# docs/PERFORMANCE.md ("JSON tokenizer") together with the machine line below.
set -eu
cd "$(dirname "$0")/.."
MB=${1:-300}
REPS=${2:-3}
TMP=${TMPDIR:-/tmp}
BIN="$TMP/bench_jsontok.$$"
JSON="$TMP/bench_jsontok.$$.json"
trap 'rm -f "$BIN" "$JSON"' EXIT INT TERM

CC=${CC:-gcc}
DEFS=""
LIBS=""
if [ -f /usr/include/yajl/yajl_parse.h ]; then DEFS="$DEFS -DHAVE_YAJL"; LIBS="$LIBS -lyajl"; fi
if [ -f /usr/include/jsmn.h ]; then DEFS="$DEFS -DHAVE_JSMN"; fi
# shellcheck disable=SC2086
$CC -std=c17 -O2 -D_DEFAULT_SOURCE $DEFS -o "$BIN" bench/bench_jsontok.c \
    src/base/jsontok.c src/base/error.c $LIBS

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cpus; compiler: $($CC --version | head -1)"
"$BIN" gen "$JSON" "$MB"
"$BIN" run "$JSON" "$REPS"
