#!/bin/sh
# bench_kineto.sh - Kineto reader throughput (uncompressed JSON into a builder).
#
#   bench/bench_kineto.sh [BUILD_DIR] [MB] [REPS]   (defaults: build, 300 MB, best of 3)
#
# Generates a synthetic trace under ${TMPDIR:-/tmp} (never in the repository)
# with bench/kineto_gen.py, builds bench/bench_kineto.c -O2 against the
# build's static libraries, prints MB/s per core, removes the file.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
MB=${2:-300}
REPS=${3:-3}
TMP=${TMPDIR:-/tmp}
BIN="$TMP/bench_kineto.$$"
JSON="$TMP/bench_kineto.$$.json"
trap 'rm -f "$BIN" "$JSON" "$JSON.gz"' EXIT INT TERM
CC=${CC:-gcc}
$CC -std=c17 -O2 -D_GNU_SOURCE -Isrc -o "$BIN" bench/bench_kineto.c \
    "$BUILD/libcp_readers.a" "$BUILD/libcp_model.a" "$BUILD/libcp_base.a" -lz -lzstd \
    $(pkg-config --libs libisal 2>/dev/null) -lpthread -lm
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cpus; compiler: $($CC --version | head -1)"
python3 bench/kineto_gen.py "$JSON" "$MB"
"$BIN" "$JSON" "$REPS"
if [ "${GZIP_TOO:-0}" = 1 ]; then
    gzip -1 -k "$JSON"
    echo "gzip -1 input:"
    "$BIN" "$JSON.gz" "$REPS"
fi
