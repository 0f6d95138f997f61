# pp_job.sh - sourced by the CLI tests on pipeline-parallel synth jobs
# (critpath_pp.sh, commmatrix_pp.sh): pp_run NAME -- SYNTH ARGS writes the
# job into $tmp/NAME (two steps), analyzes its Kineto traces into
# $tmp/NAME.json and calls the test's own check JSON TRUTH [RANKS]; with
# PP_RANKS="0 1 ..." set, only those ranks' files are analyzed (a partial
# trace) and passed on as RANKS. PP_LEGACY rewrites the traces as builds
# that name no peer on the kernel write them: "titles" drops every peer arg
# ("Rank", "Dst Rank", "Src Rank": only the nccl:send A->B / nccl:recv A<-B
# titles remain), "rank" drops "Dst Rank" / "Src Rank" and the titles' ranks
# (only record_param_comms' "Rank" remains). Any failure sets fail=1. Not a
# test itself (ctest globs tests/cli/*.sh only).
pp_run() {
    local name=$1; shift 2
    local d="$tmp/$name"
    "$CHAINPROF" synth --out "$d" --steps 2 "$@" >/dev/null || { echo "FAIL: $name: synth $*"; fail=1; return; }
    case "${PP_LEGACY:-}" in
    titles) sed -i -E 's/, "(Rank|Dst Rank|Src Rank)": [0-9]+//g' "$d"/rank-*.json ;;
    rank) sed -i -E 's/, "(Dst Rank|Src Rank)": [0-9]+//g; s/"nccl:(send|recv) [0-9]+(->|<-)[0-9]+"/"nccl:\1"/' "$d"/rank-*.json ;;
    esac
    local files=("$d"/rank-*.json) r
    if [ -n "${PP_RANKS:-}" ]; then
        files=()
        for r in $PP_RANKS; do files+=("$d/rank-$r.json"); done
    fi
    "$CHAINPROF" analyze -o "$d.json" "${files[@]}" 2>"$d.err" || { echo "FAIL: $name: analyze"; cat "$d.err"; fail=1; return; }
    echo "== $name"
    check "$d.json" "$d/synth.json" ${PP_RANKS:+"$PP_RANKS"} || fail=1
}
