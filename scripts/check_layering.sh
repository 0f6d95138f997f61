#!/bin/bash
# check_layering.sh - the layering lint (ctest lint.layering).
#
# usage: check_layering.sh SRC_DIR LAYERS_FILE [GENERATED_DIR]
#
# Reads every #include of every file under SRC_DIR (.c .h .def .inc), finds
# which src/ directory the included file lives in, and fails on any edge the
# layering does not allow. LAYERS_FILE holds the rows of CP_LAYERS
# (CMakeLists.txt writes it to the build directory as layers.txt), one a
# line: "dir: dep dep ...", "*" for everything. A directory may include
# itself and, transitively, what its row names. An include is resolved as
# the compiler would: next to the including file, then under SRC_DIR (the
# include root every library exports), then under SRC_DIR/../include (the
# public API, pseudo-directory "include", allowed only where a row names
# it), then under GENERATED_DIR (generated files, always allowed). Quoted
# and angle includes are both checked; an angle include that resolves to
# nothing is a system header.
#
# Why a lint: every library exports the one src/ include root, so an
# include across a forbidden edge compiles and links; only this catches it.
# Also fails on a directory without a row, a row whose dependency has no
# row, a cycle in the rows, and a quoted include that resolves to nothing.
set -u
src=${1:?usage: check_layering.sh SRC_DIR LAYERS_FILE [GENERATED_DIR]}
layers=${2:?usage: check_layering.sh SRC_DIR LAYERS_FILE [GENERATED_DIR]}
gen=${3:-}
[ -d "$src" ] || { echo "check_layering: $src: not a directory" >&2; exit 2; }
[ -r "$layers" ] || { echo "check_layering: $layers: cannot read" >&2; exit 2; }
src=$(cd "$src" && pwd)
layers=$(cd "$(dirname "$layers")" && pwd)/$(basename "$layers")
[ -z "$gen" ] || gen=$(cd "$gen" && pwd)
inc_root=$(cd "$src/.." && pwd)/include

files=$(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' -o -name '*.inc' \) | sed 's|^\./||' | LC_ALL=C sort)
[ -n "$files" ] || { echo "check_layering: no sources under $src" >&2; exit 2; }

cd "$src" && printf '%s\n' $files | awk -v layers="$layers" -v src="$src" -v inc_root="$inc_root" -v gen="$gen" '
function exists(p,   t, r) { r = (getline t < p); if (r >= 0) { close(p); return 1 } return 0 }
# p normalised ("a/./b/../c" -> "a/c"); a leading ".." that escapes stays
function norm(p,   n, i, parts, out, k) {
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "" || parts[i] == ".") continue
        if (parts[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
        out[++k] = parts[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
}
function top(p) { sub(/\/.*/, "", p); return p }
function dirname(p) { if (p !~ /\//) return ""; sub(/\/[^\/]*$/, "", p); return p }
function fail(msg) { print msg; bad++ }
# the directory an include from file f lands in: a src/ directory,
# "include", "generated", "" for a system header, "?" when not found
function resolve(f, inc, angle,   d, p) {
    if (!angle) {
        d = dirname(f); p = norm((d != "" ? d "/" : "") inc)
        if (p !~ /^\.\./ && exists(src "/" p)) return top(p)
        if (p ~ /^\.\.\/include\// && exists(src "/" p)) return "include"
    }
    p = norm(inc)
    if (p !~ /^\.\./ && exists(src "/" p) && (top(p) in row)) return top(p)
    if (exists(inc_root "/" p)) return "include"
    if (gen != "" && exists(gen "/" p)) return "generated"
    return angle ? "" : "?"
}
BEGIN {
    while ((getline line < layers) > 0) {
        sub(/#.*/, "", line)
        if (line !~ /:/) continue
        d = line; sub(/:.*/, "", d); gsub(/[ \t]/, "", d)
        deps = line; sub(/^[^:]*:/, "", deps)
        if (!(d in row)) order[++nrows] = d
        row[d] = 1
        n = split(deps, a, /[ \t]+/)
        for (i = 1; i <= n; i++) if (a[i] == "*") all[d] = 1; else if (a[i] != "") dep[d, a[i]] = 1
    }
    close(layers)
    for (k in dep) { split(k, kk, SUBSEP); if (!(kk[2] in row) && kk[2] != "include") fail(layers ": row " kk[1] " names " kk[2] ", which has no row") }
    # transitive closure: ok[d, x] when d may use x
    for (d in row) for (k in dep) { split(k, kk, SUBSEP); if (kk[1] == d) ok[d, kk[2]] = 1 }
    do {
        changed = 0
        for (k in ok) {
            split(k, kk, SUBSEP)
            for (x in row) if ((kk[2], x) in ok && !((kk[1], x) in ok)) { ok[kk[1], x] = 1; changed = 1 }
        }
    } while (changed)
    for (d in row) if ((d, d) in ok) fail(layers ": row " d " depends on itself through its dependencies (a cycle)")
    nfiles = 0
}
{
    f = $0; nfiles++
    d = top(f)
    if (f !~ /\//) { fail("src/" f ": a source file directly under src/ belongs to no layer (put it in a directory)"); next }
    if (!(d in row)) {
        if (!(d in warned)) fail("src/" d "/: no row for this directory in CP_LAYERS (CMakeLists.txt): add \"" d ": <what it uses>\"")
        warned[d] = 1; next
    }
    ln = 0
    while ((getline line < f) > 0) {
        ln++
        if (line !~ /^[ \t]*#[ \t]*include[ \t]*["<]/) continue
        angle = line ~ /^[ \t]*#[ \t]*include[ \t]*</
        inc = line; sub(/^[ \t]*#[ \t]*include[ \t]*["<]/, "", inc); sub(/[">].*$/, "", inc)
        t = resolve(f, inc, angle)
        edges++
        if (t == "" || t == "generated" || t == d || (d in all)) continue
        if (t == "?") { fail("src/" f ":" ln ":1: include \"" inc "\" not found (next to the file, under src/, include/ or the build directory)"); continue }
        if (!((d, t) in ok)) {
            allowed = ""
            for (i = 1; i <= nrows; i++) if ((d, order[i]) in ok) allowed = allowed (allowed != "" ? ", " : "") order[i]
            fail("src/" f ":" ln ":1: include \"" inc "\" crosses the layering: " d " may not use " t \
                 " (it may use: " (allowed != "" ? allowed : "nothing") "; CP_LAYERS in CMakeLists.txt, \"Layering\" in docs/ARCHITECTURE.md)")
        }
    }
    close(f)
}
END {
    if (bad) { printf "check_layering: %d problem(s)\n", bad; exit 1 }
    printf "check_layering: %d files, %d includes, every edge allowed by %s\n", nfiles, edges, layers
}'
