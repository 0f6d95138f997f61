#!/bin/bash
# hta_values.sh - every value HTA's own tests assert on the traces in ../shared/data/hta, from the table
# tests/fixtures/hta/values.tsv: runs `chainprof analyze --json` (or `chainprof diff --json BASE -- TEST` for
# a "BASE|TEST" trace) once per (trace, args), reads each value
# at its report path and compares; prints matched / differ / missing (and the critical path rows left
# to that analysis). Fails when a "check" row differs; missing rows are only counted.
set -u
: "${CHAINPROF:?}"
src="${CP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
data=""
for d in "${CHAINPROF_DATA:-}" "${CP_DATA_DIR:-}" "$src/../shared/data" "$src/../../shared/data"; do
  [ -n "$d" ] && [ -d "$d/hta" ] && { data="$d"; break; }
done
[ -n "$data" ] || { echo "skip: ../shared/data/hta is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec python3 - "$CHAINPROF" "$data/hta" "$src/tests/fixtures/hta/values.tsv" "$tmp" <<'PY'
import json, os, subprocess, sys
exe, hta, table, tmp = sys.argv[1:5]
rows = []
for ln, line in enumerate(open(table, encoding="utf-8"), 1):
    if not line.strip() or line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    if len(f) != 8:
        sys.exit(f"{table}:{ln}: expected 8 tab-separated fields, got {len(f)}")
    rows.append((ln, *f))
reports = {}
def report(trace, args):
    key = (trace, args)
    if key not in reports:
        out = os.path.join(tmp, f"r{len(reports)}.json")
        extra = [] if args == "-" else args.split()
        if "|" in trace:  # a trace diff: BASE|TEST
            base, test = trace.split("|")
            cmd = [exe, "diff", "--json", "-o", out] + extra + [os.path.join(hta, base), "--", os.path.join(hta, test)]
        else:
            cmd = [exe, "analyze", "--no-history", "--json", "-o", out] + extra + [os.path.join(hta, trace)]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        reports[key] = json.load(open(out)) if p.returncode == 0 else None
        if p.returncode:
            print(f"analyze {trace} {args} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    return reports[key]
def lookup(node, path):
    for seg in path.split("/"):
        if seg.startswith("#"):
            op, _, col = seg[1:].partition("(")
            col = col.rstrip(")")
            if op == "len":
                return len(node)
            if op == "count":  # rows whose column k is v
                k, _, v = col.partition("=")
                return sum(1 for r in node if str(r.get(k)) == v)
            if op == "contains":  # rows whose column k contains v (pandas str.contains of a literal)
                k, _, v = col.partition("=")
                return sum(1 for r in node if v in str(r.get(k)))
            vals = [r[col] for r in node]
            if op == "set":
                return ",".join(str(v) for v in sorted(set(vals), key=lambda v: (str(type(v)), v)))
            if op == "sum":
                return sum(vals)
            if op == "min":
                return min(vals) if vals else None
            raise KeyError(seg)
        if seg.startswith("["):
            k, _, v = seg[1:-1].partition("=")
            node = next(r for r in node if str(r.get(k)) == v)
        elif isinstance(node, list):
            node = node[int(seg)]
        else:
            node = node[seg]
    return ",".join(str(v) for v in node) if isinstance(node, list) else node
count = {"matched": 0, "differ": 0, "missing": 0, "h16": 0}
for ln, test, trace, args, path, want, scale, tol, status in rows:
    if status in ("missing", "h16"):
        count[status] += 1
        continue
    if not all(os.path.exists(os.path.join(hta, t)) for t in trace.split("|")):
        count["missing"] += 1
        print(f"line {ln}: {test}: trace {trace} absent")
        continue
    rep = report(trace, args)
    try:
        got = lookup(rep, path) if rep is not None else None
    except (KeyError, IndexError, StopIteration, TypeError, ValueError):
        got = None
    ok = False
    if got is not None:
        if tol == "=":
            ok = str(got) == want
        elif tol == "~":  # HTA asserts a substring
            ok = want in str(got)
        else:
            g = float(got) / float(scale)
            ok = g >= float(want) if tol == ">=" else abs(g - float(want)) <= float(tol)
    count["matched" if ok else "differ"] += 1
    if not ok:
        print(f"DIFFER line {ln}: {test} {trace} {path}: HTA {want}, chainprof {got} (scale {scale}, tol {tol})")
total = sum(count.values())
print(f"HTA test values on the traces held: {total}: matched {count['matched']}, differ {count['differ']}, "
      f"missing {count['missing']}, critical path (h16) {count['h16']}")
sys.exit(1 if count["differ"] else 0)
PY
