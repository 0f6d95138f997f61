# py_prelude.sh - sourced first by the CLI tests that check a report with
# python3 (the pipeline-parallel ones: synth_pp*, critpath_pp, commmatrix_pp,
# whatif_pp, whatif_kineto_pp): strict variables, $CHAINPROF required, a
# skip (77) without python3, a scratch directory $tmp removed on exit, and
# fail=0 for the test to set. Not a test itself (ctest globs tests/cli/*.sh).
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
