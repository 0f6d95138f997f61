#!/bin/bash
# model_plan.sh - `chainprof model` and `chainprof plan` end to end: JSON
# schema keys, --config equals flags, errors name their place, what-if,
# search, capacity, validation against the published runs.
set -u
CP=${CHAINPROF:?CHAINPROF not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# headline keys of chainprof.model/2
$CP model --preset llama3-8b --gpus 8 --gpu H100 --fsdp --micro-batch 1 --recompute full --format json >"$tmp/m.json" || fail "model exit $?"
for k in '"schema": *"chainprof.model/2"' '"step_time_s"' '"tokens_per_s"' '"tflops_per_gpu"' '"mfu"' '"hfu"' \
         '"compute_s"' '"tp_comm_s"' '"cp_comm_s"' '"pp_bubble_s"' '"pp_p2p_s"' '"dp_comm_s"' '"ep_comm_s"' \
         '"optimizer_s"' '"data_s"' '"checkpoint_s"' '"params_bytes"' '"grads_bytes"' '"optimizer_bytes"' \
         '"activations_bytes"' '"total_bytes"' '"hbm_bytes"' '"fits"' '"assumptions"'; do
  grep -q "$k" "$tmp/m.json" || fail "model JSON lacks $k"
done

# --config with the same keys gives the same answer as flags; flags override
cat >"$tmp/c.json" <<'J'
{ "preset": "llama3-8b", "gpus": 8, "gpu": "H100", "fsdp": true,
  "micro_batch": 1, "recompute": "full" }
J
$CP model --config "$tmp/c.json" --format json >"$tmp/c.out" || fail "config exit $?"
a=$(grep -o '"step_time_s": *[0-9.e+-]*' "$tmp/m.json" | head -1)
b=$(grep -o '"step_time_s": *[0-9.e+-]*' "$tmp/c.out" | head -1)
[ "$a" = "$b" ] || fail "config ($b) differs from flags ($a)"
$CP model --config "$tmp/c.json" --gpus 16 --format json | grep -q '"gpus": *16' || fail "flag does not override config"

# errors: unknown config key with its line and column, unknown GPU, bad layout
printf '{\n  "gpus": 8,\n  "tpp": 2\n}\n' >"$tmp/bad.json"
$CP model --config "$tmp/bad.json" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad config key: exit $rc"
grep -q "bad.json:3:3: key 'tpp'" "$tmp/err" || fail "bad config key message: $(cat "$tmp/err")"
$CP model --preset llama3-8b --gpus 8 --gpu Z9000 2>/dev/null; [ $? -eq 2 ] || fail "unknown gpu not a usage error"
$CP model --preset llama3-8b --gpus 8 --tp 3 2>"$tmp/err"; [ $? -eq 2 ] || fail "tp 3 of 8 accepted"
grep -q "not divisible" "$tmp/err" || fail "tp 3 message: $(cat "$tmp/err")"

# what-if: the reference case names the gain of fixing the network and the checkpoint
$CP model --preset gpt3-13b --gpus 256 --gpu A100-80GB --tp 8 --global-batch 1024 --net-efficiency 0.4 \
  --ckpt-every 900 --ckpt sync --what-if net-efficiency=0.95,ckpt=async --format json >"$tmp/w.json" || fail "what-if exit $?"
grep -q '"what_if"' "$tmp/w.json" || fail "no what_if"
grep -q '"speedup"' "$tmp/w.json" || fail "no speedup"
# each change alone, largest gain first: the network before the checkpoint
tr -d ' \n' <"$tmp/w.json" | grep -q '"each":\[{"change":"net-efficiency=0.95"[^]]*},{"change":"ckpt=async"' \
  || fail "what-if does not rank the network fix before the checkpoint"

# plan: search, top K, text output
$CP plan --preset llama3-70b --gpus 64 --gpu H100 --top 3 --format json >"$tmp/p.json" || fail "plan exit $?"
grep -q '"schema": *"chainprof.plan/1"' "$tmp/p.json" || fail "plan schema"
[ "$(grep -o '"rank"' "$tmp/p.json" | wc -l)" -eq 3 ] || fail "plan did not return 3 layouts"
$CP plan --preset llama3-70b --gpus 64 --gpu H100 --top 2 | grep -q "fastest fitting layouts" || fail "plan text"
# capacity: GPUs for 1T tokens in 30 days, and days on a given cluster
$CP plan --preset llama3-8b --gpu H100 --tokens 1e12 --days 30 --format json | grep -q '"gpus": *[0-9]' || fail "capacity gpus"
$CP plan --preset llama3-8b --gpu H100 --gpus 64 --tokens 1e12 --format json | grep -q '"best_layout_days"' || fail "capacity days"
# nothing fits: exit 1 with the overflowing component
$CP plan --preset gpt3-175b --gpus 8 --gpu A100 --format json >"$tmp/nf.json"; rc=$?
[ $rc -eq 1 ] || fail "no-fit plan exit $rc"
grep -q '"overflow"' "$tmp/nf.json" || fail "no-fit overflow"

# the catalog and presets, with sources
$CP model --list --format json >"$tmp/l.json" || fail "list exit $?"
grep -q '"name": *"GB200-NVL72"' "$tmp/l.json" || fail "list lacks GB200"
grep -q '"name": *"deepseek-v3"' "$tmp/l.json" || fail "list lacks deepseek-v3"

# help and man page
$CP help model | grep -q "chainprof model" || fail "help model"
$CP help plan | grep -q "chainprof plan" || fail "help plan"

# one collective: the keys, NCCL's choice, a forced algorithm, what cannot run
$CP model --collective all_reduce --bytes 8G --nodes 1 --gpus-per-node 8 --gpu H100 --json >"$tmp/c1.json" \
  || fail "collective exit $?"
for k in '"busbw_gbps"' '"algbw_gbps"' '"time_us"' '"algorithm": *"nvls"' '"latency_us"' '"bandwidth_us"' \
         '"candidates"'; do
  grep -q "$k" "$tmp/c1.json" || fail "collective JSON lacks $k"
done
$CP model --collective allgather --bytes 1M --nodes 4 --gpus-per-node 8 --gpu A100 --nic-gbps 200 \
  --nics-per-node 8 --algo ring --json | grep -q '"algorithm": *"ring"' || fail "forced ring"
$CP model --collective all_reduce --bytes 1G --gpus-per-node 8 --gpu A100 --algo nvls 2>"$tmp/err"
[ $? -eq 2 ] || fail "nvls on A100 accepted"
grep -q "Hopper" "$tmp/err" || fail "nvls message: $(cat "$tmp/err")"
$CP model --collective all_reduce --gpu H100 2>/dev/null; [ $? -eq 2 ] || fail "--collective without --bytes"

# the collective model against the project's published nccl-tests facts
src=${CP_SOURCE_DIR:-$(dirname "$0")/../..}
$CP model --validate "$src/docs/data/nccl_tests_published.csv" --max-median-error 15 --json >"$tmp/cv.json" \
  || fail "collective validate exit $?"
grep -q '"collective_validation"' "$tmp/cv.json" || fail "collective validate JSON"

# validation against the published runs, leave-one-source-out (skipped without the data)
csv="${CP_DATA_DIR:-}/model/published_runs.csv"
more="${CP_DATA_DIR:-}/model/published_runs_more.csv"
if [ -f "$csv" ] && [ -f "$more" ]; then
  $CP model --validate "$csv" --validate "$more" --validate "$src/docs/data/published_runs_nvidia.csv" \
    --max-median-error 10 --format json >"$tmp/v.json" || fail "validate exit $?"
  for k in '"median_abs_error_pct"' '"loso_median_abs_error_pct"' '"sources"' '"constants"' '"loso_error_pct"'; do
    grep -q "$k" "$tmp/v.json" || fail "validate JSON lacks $k"
  done
  $CP model --validate "$csv" --validate "$src/docs/data/nccl_tests_published.csv" 2>/dev/null
  [ $? -eq 2 ] || fail "mixed CSV kinds accepted"
fi
echo ok
