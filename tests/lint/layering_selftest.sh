#!/bin/bash
# layering_selftest.sh - the layering lint fails where it must: on small
# trees written here, a clean tree passes and each kind of violation
# (sibling edge, edge upwards, angle-bracket include, missing row, cycle,
# unknown dependency, unresolved include) fails with its message.
set -u
lint=${1:?usage: layering_selftest.sh scripts/check_layering.sh}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cp_layering.$$.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
mk() { mkdir -p "$(dirname "$tmp/$1")"; printf '%s\n' "$2" > "$tmp/$1"; }
rows() { printf '%s\n' "$@" > "$tmp/layers.txt"; }
# expect RC PATTERN: run the lint on $tmp/src, compare exit status and output
expect() {
    out=$(bash "$lint" "$tmp/src" "$tmp/layers.txt" 2>&1); rc=$?
    if [ "$rc" != "$1" ] || ! grep -qE -- "$2" <<<"$out"; then
        echo "FAIL ($3): want rc $1 and /$2/, got rc $rc:"; echo "$out"; fails=$((fails + 1))
    else
        echo "ok: $3"
    fi
}
base_tree() {
    rm -rf "$tmp/src" "$tmp/include"
    mk src/base/util.h '/* base */'
    mk src/model/report.h '#include "../base/util.h"'
    mk src/model/vocab.def 'X(A)'
    mk src/model/report.c '#include "model/report.h"
#include "vocab.def"
#include <stdio.h>'
    mk src/render/render.c '#include "../model/report.h"
#include "../base/util.h"'
    mk src/analysis/an.c '#include "../model/report.h"'
    mk src/cli/main.c '#include "../render/render.c"
#include "../analysis/an.c"'
    rows "base:" "model: base" "render: model" "analysis: model  # why" "cli: *"
}
base_tree
expect 0 'every edge allowed' "clean tree"
mk src/render/render.c '#include "../analysis/an.c"'
expect 1 'render.c:1:1: include "../analysis/an.c" crosses the layering: render may not use analysis \(it may use: base, model' "sibling edge"
base_tree
mk src/model/report.c '/* x */
#include "../render/render.c"'
expect 1 'report.c:2:1: .*model may not use render' "edge upwards"
base_tree
mk src/render/render.c '#include <analysis/an.c>'
expect 1 'render may not use analysis' "angle-bracket include into src/"
base_tree
mk src/synth/syn.c '#include "../model/report.h"'
expect 1 'src/synth/: no row for this directory' "directory without a row"
base_tree
rows "base: model" "model: base" "render: model" "analysis: model" "cli: *"
expect 1 'row (base|model) depends on itself' "cycle"
base_tree
rows "base:" "model: base" "render: model gpu" "analysis: model" "cli: *"
expect 1 'row render names gpu, which has no row' "unknown dependency"
base_tree
mk src/render/render.c '#include "render_int.h"'
expect 1 'include "render_int.h" not found' "unresolved include"
base_tree
mk include/chainprof/api.h '/* public */'
mk src/analysis/an.c '#include "chainprof/api.h"'
expect 1 'analysis may not use include' "public API only where a row names it"
rows "base:" "model: base" "render: model" "analysis: model include" "cli: *"
expect 0 'every edge allowed' "public API allowed by its row"
[ "$fails" = 0 ] || { echo "$fails case(s) failed"; exit 1; }
