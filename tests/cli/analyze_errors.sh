#!/bin/bash
# analyze_errors.sh - inputs that are not traces stop `chainprof analyze` with
# exit 3 and "file:offset: reason" on stderr; a damaged trace is analysed
# with its damage counted (exit 0).
set -u
: "${CHAINPROF:?}" "${CP_FIXTURES:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. no reader recognises it (an execution trace, not a Chrome trace)
f="$CP_FIXTURES/kineto/not_a_trace.json"
"$CHAINPROF" analyze "$f" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] || fail "not_a_trace.json: exit $rc, expected 3"
grep -q "$f:[0-9][0-9]*: " "$tmp/err" || fail "not_a_trace.json: no file:offset: on stderr: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && fail "not_a_trace.json: stdout is not empty"

# 2. looks like Kineto (schemaVersion) but has no traceEvents: the reader says so
f="$CP_FIXTURES/kineto/no_trace_events.json"
"$CHAINPROF" analyze "$f" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] || fail "no_trace_events.json: exit $rc, expected 3"
grep -q "$f:[0-9][0-9]*: .*traceEvents" "$tmp/err" || fail "no_trace_events.json: stderr: $(cat "$tmp/err")"

# 3. plain garbage with a .json name
printf 'this is not json' >"$tmp/garbage.json"
"$CHAINPROF" analyze "$tmp/garbage.json" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] || fail "garbage.json: exit $rc, expected 3"
grep -q "$tmp/garbage.json:[0-9][0-9]*: " "$tmp/err" || fail "garbage.json: stderr: $(cat "$tmp/err")"

# 4. a truncated trace is not an error: it is analysed and its damage counted
head -c 1500 "$CP_FIXTURES/kineto/good.json" >"$tmp/rank-2.json"
"$CHAINPROF" analyze --json "$tmp/rank-2.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || fail "truncated trace: exit $rc: $(cat "$tmp/err")"
grep -q '"truncated_file"' "$tmp/out" || fail "truncated trace: truncated_file not in the diagnostics"
exit 0
