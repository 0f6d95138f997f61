#!/usr/bin/env python3
"""json_same.py A.json B.json [IGNORE_KEY...] - compare two chainprof reports key by key.

Prints every difference as PATH: A-value != B-value (key order too, since chainprof promises a
stable order) and exits 1 when there is one. The envelope's "tool" and "command" are ignored by
default (they name the build, the process count and the argv); more top-level keys to ignore may
follow the file names. Numbers must be equal exactly: the analysis must not change with the build.
"""
import json
import sys


def walk(a, b, path, out, subset=False):
    """Differences of b from a into out; subset: b may lack keys of a (the rest in a's order)."""
    if type(a) is not type(b):
        out.append(f"{path}: type {type(a).__name__} != {type(b).__name__}")
        return
    if isinstance(a, dict):
        ka, kb = [k for k in a if not subset or k in b], list(b.keys())
        if ka != kb:
            sa, sb = set(ka), set(kb)
            if sa == sb:
                out.append(f"{path}: key order differs")
            for k in ka:
                if k not in sb:
                    out.append(f"{path}.{k}: only in A")
            for k in kb:
                if k not in sa:
                    out.append(f"{path}.{k}: only in B")
        for k in ka:
            if k in b:
                walk(a[k], b[k], f"{path}.{k}", out, subset)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", out, subset)
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        a = json.load(f)
    with open(sys.argv[2]) as f:
        b = json.load(f)
    ignore = {"tool", "command", *sys.argv[3:]}
    for k in ignore:
        a.pop(k, None)
        b.pop(k, None)
    out = []
    walk(a, b, "$", out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
