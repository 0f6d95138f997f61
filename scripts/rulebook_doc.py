#!/usr/bin/env python3
"""rulebook_doc.py - rewrite the "Rule book codes" table of docs/FORMATS.md
from the rule book itself.

usage: chainprof diagnose --rules --json | python3 scripts/rulebook_doc.py docs/FORMATS.md

The table sits between the lines "<!-- rulebook:begin -->" and
"<!-- rulebook:end -->"; everything else in the file is left as it is.
tests/unit/test_diagnose.c fails while a code is missing from the file, so
run this after adding a rule (rulebook.h, checklist step 4).
"""
import json
import sys

BEGIN, END = "<!-- rulebook:begin -->", "<!-- rulebook:end -->"


def cell(text):
    return (text or "").replace("|", "\\|").replace("\n", " ")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    rules = json.load(sys.stdin)["rules"]
    rows = ["| code | family | layer | severity | conf. | keys on | documented in |",
            "|---|---|---|---|---|---|---|"]
    for r in rules:
        rows.append("| `%s` | %s | %s | %s | %.2f | %s | %s |" % (
            r["code"], r["family"], r["layer"], r["severity"], r["confidence"], cell(r["keys_on"]), cell(r["source"])))
    text = open(path, encoding="utf-8").read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        sys.exit("%s: no %s ... %s markers" % (path, BEGIN, END))
    text = text[:a + len(BEGIN)] + "\n" + "\n".join(rows) + "\n" + text[b:]
    open(path, "w", encoding="utf-8").write(text)
    print("%s: %d rules" % (path, len(rules)))


if __name__ == "__main__":
    main()
