#!/usr/bin/env bash
# make demo: synthesize a small multi-rank job with a problem injected and analyze it.
set -euo pipefail
bin=${1:-build/chainprof}
out=${DEMO_DIR:-build/demo}
if ! "$bin" synth --help >/dev/null 2>&1; then
  echo "demo: this build has no 'synth' command yet" >&2
  exit 1
fi
rm -rf "$out"
"$bin" synth --out "$out/traces" --ranks 8 --gpus-per-node 4 --steps 6 --seed 7 \
  --inject slow-network=0.4,sync-checkpoint=3 >/dev/null
# the glob keeps the ground truth (traces/synth.json) out of the inputs
"$bin" analyze "$out/traces/rank-*" -o "$out/report.json" --format text
echo
echo "demo: full report in $out/report.json"
