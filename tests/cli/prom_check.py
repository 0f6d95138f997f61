#!/usr/bin/env python3
"""prom_check.py - strict check of a Prometheus text exposition (format 0.0.4).

usage: prom_check.py FILE [REQUIRED_FAMILY ...]

Fails (exit 1, the reason on stdout) unless every line is a "# HELP name
text", a "# TYPE name type" or a sample "name{label="value",...} value";
each family has exactly one HELP and one TYPE, both before its samples,
and its samples follow them contiguously; names and label names are valid;
label values use only the escapes \\\\, \\" and \\n; values are floats
(NaN, +Inf, -Inf allowed); no series appears twice; every family is
chainprof_*, a counter's name ends in _total; the body ends with a newline.
Then, when the Python Prometheus client is importable, its parser must
read the same families and samples. Every REQUIRED_FAMILY must have at least
one sample.
"""
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def fail(msg):
    print("prom_check: " + msg)
    sys.exit(1)


def parse_labels(text, lineno):
    labels, pos = [], 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            fail("line %d: bad label set {%s}" % (lineno, text))
        labels.append((m.group(1), m.group(2)))
        pos = m.end()
        if pos < len(text):
            if text[pos] != ",":
                fail("line %d: expected ',' between labels" % lineno)
            pos += 1
    names = [k for k, _ in labels]
    if len(set(names)) != len(names):
        fail("line %d: a label given twice" % lineno)
    return tuple(labels)


def check(body):
    if not body.endswith("\n"):
        fail("the body does not end with a newline")
    help_of, type_of, samples, seen, closed = {}, {}, {}, set(), set()
    current = None
    for lineno, line in enumerate(body[:-1].split("\n"), 1):
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) < 3 or parts[0] != "#" or parts[1] not in ("HELP", "TYPE"):
                fail("line %d: a comment that is neither HELP nor TYPE: %r" % (lineno, line))
            name = parts[2]
            if not NAME.match(name):
                fail("line %d: bad metric name %r" % (lineno, name))
            if current and current != name:
                closed.add(current)
            if name in closed:
                fail("line %d: family %s continues after another began" % (lineno, name))
            current = name
            table = help_of if parts[1] == "HELP" else type_of
            if name in table:
                fail("line %d: second %s for %s" % (lineno, parts[1], name))
            if name in samples:
                fail("line %d: %s after samples of %s" % (lineno, parts[1], name))
            if parts[1] == "TYPE":
                if len(parts) != 4 or parts[3] not in TYPES:
                    fail("line %d: bad TYPE %r" % (lineno, line))
                if name not in help_of:
                    fail("line %d: TYPE of %s before its HELP" % (lineno, name))
                table[name] = parts[3]
            else:
                text = parts[3] if len(parts) == 4 else ""
                if re.search(r"\\[^\\n]", text):
                    fail("line %d: HELP with an escape other than \\\\ or \\n" % lineno)
                table[name] = text
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", line)
        if not m:
            fail("line %d: not a sample: %r" % (lineno, line))
        name, labels, value = m.group(1), parse_labels(m.group(3) or "", lineno), m.group(4)
        if name != current or name not in type_of:
            fail("line %d: sample of %s outside its family (HELP/TYPE first, contiguous)" % (lineno, name))
        try:
            float(value)
        except ValueError:
            fail("line %d: bad value %r" % (lineno, value))
        if value.lower() in ("nan", "inf", "+inf", "-inf") and value not in ("NaN", "+Inf", "-Inf"):
            fail("line %d: non-canonical special value %r" % (lineno, value))
        key = (name, labels)
        if key in seen:
            fail("line %d: series given twice: %s" % (lineno, line))
        seen.add(key)
        samples.setdefault(name, []).append((labels, float(value)))
    for name, t in type_of.items():
        if not name.startswith("chainprof_"):
            fail("family %s is not chainprof_*" % name)
        if t == "counter" and not name.endswith("_total"):
            fail("counter %s does not end in _total" % name)
    return type_of, samples


def client_parse(body, type_of, samples):
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        print("prom_check: the Prometheus client is not importable here; strict checks only")
        return
    n = 0
    for fam in text_string_to_metric_families(body):
        for s in fam.samples:
            n += 1
            if s.name not in samples:
                fail("the client read a sample %s we did not write" % s.name)
        want = type_of.get(fam.name) or type_of.get(fam.name + "_total")
        if fam.type != want:
            fail("the client read %s as %s, not %s" % (fam.name, fam.type, want))
    total = sum(len(v) for v in samples.values())
    if n != total:
        fail("the client read %d samples, the body has %d" % (n, total))
    print("prom_check: the Prometheus client parsed %d samples" % n)


def main():
    body = open(sys.argv[1], encoding="utf-8").read()
    type_of, samples = check(body)
    for need in sys.argv[2:]:
        if not samples.get(need):
            fail("no sample of %s" % need)
    client_parse(body, type_of, samples)
    print("prom_check: %d families, %d samples: ok" % (len(type_of), sum(len(v) for v in samples.values())))


if __name__ == "__main__":
    main()
