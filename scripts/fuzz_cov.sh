#!/usr/bin/env bash
# fuzz_cov.sh - line coverage of each reader by its fuzz target's corpus.
#
# usage: scripts/fuzz_cov.sh [OUT_DIR] [FUZZ_BUILD]
#   OUT_DIR defaults to build-cov, FUZZ_BUILD (whose fuzz-corpus/ scripts/fuzz.sh
#   filled) to build-fuzz.
#
# Builds the libraries once with clang's source-based coverage
# (-fprofile-instr-generate -fcoverage-mapping), links each fuzz target with
# tests/fuzz/replay.c, replays the seeds and the working corpus through it and
# prints one markdown row per reader file with llvm-cov's line and branch
# coverage (docs/TESTING.md). Needs clang and llvm-profdata/llvm-cov (clang-14
# packages).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-build-cov}" && cd "${1:-build-cov}" && pwd)
fuzz=${2:-build-fuzz}
cd "$here"
mkdir -p "$out/obj"
isal=$(pkg-config --exists libisal && echo "-DCP_HAVE_ISAL=1" || true)
cat >"$out/flags" <<EOF
-std=gnu17 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DCHAINPROF_VERSION=\"cov\" $isal -O1 -Isrc -Iinclude
-fprofile-instr-generate -fcoverage-mapping -w
EOF
ls src/base/*.c src/model/*.c src/readers/*.c src/analysis/*.c src/render/*.c |
    xargs -P "$(nproc)" -I{} sh -c 'o="$1/obj/$(echo "$2" | tr / _).o"; [ "$o" -nt "$2" ] || clang @"$1/flags" -c "$2" -o "$o"' _ "$out" {}
rm -f "$out/libcov.a"
ar rcs "$out/libcov.a" "$out"/obj/*.o
libs="-lz -lzstd -lsqlite3 -lm -lpthread"
[ -n "$isal" ] && libs="$libs -lisal"

# target: the files it is meant to cover
declare -A files=(
    [kineto]="readers/rd_kineto.c" [analyze]="readers/rd_kineto.c" [dmon]="readers/rd_dmon.c"
    [fio]="readers/rd_fio.c" [iperf]="readers/rd_iperf.c" [nccltests]="readers/rd_nccltests.c"
    [perftest]="readers/rd_perftest.c" [topo]="readers/rd_topo.c"
    [cptrace]="readers/rd_cptrace.c readers/rd_cptrace_nccl.c" [jsontok]="base/jsontok.c"
    [logs]="readers/nccl_log.c readers/torch_log.c readers/launcher_log.c readers/dmesg_log.c readers/smi_query.c readers/rd_lspci.c"
)
echo "| target | file | lines | missed | line cover | branch cover |"
echo "|---|---|---|---|---|---|"
for t in kineto analyze dmon fio iperf nccltests perftest topo cptrace logs jsontok; do
    clang @"$out/flags" "tests/fuzz/fuzz_$t.c" tests/fuzz/replay.c -Itests/fuzz "$out/libcov.a" $libs -o "$out/cov_$t"
    dirs=("tests/fuzz/corpus/$t")
    [ -d "$fuzz/fuzz-corpus/$t" ] && dirs+=("$fuzz/fuzz-corpus/$t")
    rm -f "$out/$t.profraw"
    LLVM_PROFILE_FILE="$out/$t.profraw" "$out/cov_$t" "${dirs[@]}" >/dev/null 2>&1 || true
    llvm-profdata merge -sparse "$out/$t.profraw" -o "$out/$t.profdata"
    for f in ${files[$t]}; do
        llvm-cov report "$out/cov_$t" -instr-profile="$out/$t.profdata" "src/$f" 2>/dev/null | sed -n 3p |
            awk -v t="fuzz_$t" -v f="src/$f" '{ print "| " t " | " f " | " $8 " | " $9 " | " $10 " | " $13 " |" }'
    done
done
