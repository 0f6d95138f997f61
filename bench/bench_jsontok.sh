#!/bin/sh
# bench_jsontok.sh - JSON tokenizer throughput on a generated Kineto-like trace.
#
#   bench/bench_jsontok.sh [MB] [REPS]     (default 300 MB, best of 3)
#   BUILD=build (the CMake build whose libcp_base.a is linked; built if absent)
#
# Compiles bench/bench_jsontok.c with -O2, generates the trace under
# ${TMPDIR:-/tmp} (never in the repository), prints MB/s per parser on one
# core (process CPU time: the machine may be shared), and removes the file.
# libyajl-dev and libjsmn-dev are compared when installed; otherwise their
# rows say "skipped". Results go to docs/PERFORMANCE.md ("JSON tokenizer").
set -eu
cd "$(dirname "$0")/.."
MB=${1:-300}
REPS=${2:-3}
BUILD=${BUILD:-build}
TMP=${TMPDIR:-/tmp}
BIN="$TMP/bench_jsontok.$$"
JSON="$TMP/bench_jsontok.$$.json"
trap 'rm -f "$BIN" "$JSON"' EXIT INT TERM

if [ ! -f "$BUILD/libcp_base.a" ]; then
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$BUILD" -j 2 --target cp_base >/dev/null
fi
CC=${CC:-gcc}
DEFS=""
LIBS=""
if [ -f /usr/include/yajl/yajl_parse.h ]; then DEFS="$DEFS -DHAVE_YAJL"; LIBS="$LIBS -lyajl"; fi
if [ -f /usr/include/jsmn.h ]; then DEFS="$DEFS -DHAVE_JSMN"; fi
# shellcheck disable=SC2086
$CC -std=c17 -O2 -D_GNU_SOURCE $DEFS -Isrc -o "$BIN" bench/bench_jsontok.c \
    "$BUILD/libcp_base.a" $LIBS -lz -lzstd $(pkg-config --libs libisal 2>/dev/null) -lpthread -lm

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cpus; compiler: $($CC --version | head -1)"
"$BIN" gen "$JSON" "$MB"
"$BIN" run "$JSON" "$REPS"
