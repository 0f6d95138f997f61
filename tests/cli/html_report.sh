#!/bin/bash
# html_report.sh - render a synthesized 2-node job to HTML, open it in
# Debian's headless Chromium, and check that it renders without console
# errors, that every chart is in the DOM, and keep the screenshot as an
# artifact under the build directory (html_report/). Skips (77) when
# chromium or the synth command is absent.
set -u
CHAINPROF=${CHAINPROF:?}
BUILD=${CP_BUILD_DIR:-$PWD}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "skip: chromium is not installed"
    exit 77
fi
if ! "$CHAINPROF" synth --help >/dev/null 2>&1; then
    echo "skip: this build has no synth command"
    exit 77
fi
art="$BUILD/html_report"
rm -rf "$art"
mkdir -p "$art"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$CHAINPROF" synth --out "$tmp/job" --ranks 8 --gpus-per-node 4 --steps 6 --seed 7 \
    --inject slow-network=0.4,straggler=5:1.3 >/dev/null || { echo "FAIL: synth"; exit 1; }
"$CHAINPROF" analyze "$tmp/job/rank-*.json" -o "$art/report.html" -o "$art/report.json" >/dev/null \
    || { echo "FAIL: analyze"; exit 1; }
[ -s "$art/report.html" ] || { echo "FAIL: no html written"; exit 1; }

# self-contained: nothing to fetch
if grep -Eq '(src|href)="(https?:)?//' "$art/report.html"; then
    echo "FAIL: the report references an external resource"
    exit 1
fi

profile=$(mktemp -d)
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --window-size=1000,2400 \
    --screenshot="$art/screenshot.png" "file://$art/report.html" >/dev/null 2>"$art/chromium-screenshot.log"
rc1=$?
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 \
    --dump-dom "file://$art/report.html" >"$art/dom.html" 2>"$art/chromium-dom.log"
rc2=$?
rm -rf "$profile"
if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
    echo "FAIL: chromium exited with $rc1 / $rc2 (logs in $art)"
    exit 1
fi
# console messages are logged as "CONSOLE(line)" / ":CONSOLE:"; any of them
# from our page, or an uncaught error, fails the test
if grep -Ei 'CONSOLE|Uncaught|Refused to' "$art"/chromium-*.log; then
    echo "FAIL: console output while rendering the report"
    exit 1
fi
[ -s "$art/screenshot.png" ] || { echo "FAIL: no screenshot"; exit 1; }
for id in chart-layers chart-slowest-step chart-collectives chart-heatmap findings chainprof-report; do
    if ! grep -q "id=\"$id\"" "$art/dom.html"; then
        echo "FAIL: #$id is not in the rendered DOM"
        exit 1
    fi
done
# the charts are drawn, not replaced by their "no data" notes
for id in chart-layers chart-slowest-step chart-collectives chart-heatmap; do
    grep -q "<svg id=\"$id\"" "$art/dom.html" || { echo "FAIL: #$id has no chart"; exit 1; }
done
grep -q 'NET_INTER_SLOW' "$art/dom.html" || { echo "FAIL: the network finding is not shown"; exit 1; }
echo "ok: report, screenshot and DOM in $art"
