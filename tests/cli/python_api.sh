#!/usr/bin/env bash
# python_api.sh - the Python package's notebook API (tests/python/test_api.py,
# python3's unittest) against the CLI's own JSON:
#   1. from the checkout, with pandas (Debian's python3-pandas, when the python
#      has it: tables are DataFrames) and with CHAINPROF_NO_PANDAS=1 (lists);
#   2. with every other python3 on PATH (pyenv's has no pandas);
#   3. a notebook of three lines executed in a real Jupyter kernel
#      (tests/python/notebook.py; Debian's python3-nbclient, -ipykernel);
#   4. from a venv where `pip install --no-index ./python` installed the
#      package (no package index: the stdlib-only build backend), run from
#      outside the checkout, the binary named by CHAINPROF_BIN.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/lib/pythons.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export CHAINPROF CP_FIXTURES CP_PY_TMP="$tmp"
fail=0
runtests() { # label python [env...]
  local label=$1 py=$2; shift 2
  if ! (cd "$here/python" && env "$@" PYTHONPATH="$here/../python" "$py" -m unittest -q test_api) > "$tmp/log" 2>&1; then
    echo "FAIL: $label ($py)"; cat "$tmp/log"; fail=1
  else
    echo "ok: $label ($py): $(tail -1 "$tmp/log")"
  fi
}
for py in "${pythons[@]}"; do
  if "$py" -c 'import pandas' 2>/dev/null; then
    runtests "with pandas" "$py" CHAINPROF_NO_PANDAS=
  fi
  runtests "without pandas" "$py" CHAINPROF_NO_PANDAS=1
done
# a real notebook in a Jupyter kernel, when Debian's nbclient/ipykernel are installed
if /usr/bin/python3 -c 'import nbclient, nbformat, ipykernel' 2>/dev/null; then
  "$CHAINPROF" synth --out "$tmp/nbjob" --ranks 4 --gpus-per-node 2 --steps 3 --inject slow-network=0.4 > /dev/null &&
    rm -f "$tmp/nbjob/synth.json" &&
    "$CHAINPROF" analyze --no-history --json "$tmp/nbjob" > "$tmp/nb_cli.json" || { echo "FAIL: notebook job"; exit 1; }
  if ! (cd "$tmp" && CHAINPROF_BIN="$CHAINPROF" /usr/bin/python3 "$here/python/notebook.py" "$tmp/nbjob" \
        "$tmp/nb_cli.json" "$here/../python") > "$tmp/nb.log" 2>&1; then
    echo "FAIL: the notebook"; cat "$tmp/nb.log"; fail=1
  else
    echo "ok: $(tail -1 "$tmp/nb.log")"
  fi
else
  echo "note: python3-nbclient/ipykernel not installed: the Jupyter notebook case is skipped"
fi
# the installed package
py=${pythons[0]}
if "$py" -m venv "$tmp/venv" > "$tmp/venv.log" 2>&1 && [ -x "$tmp/venv/bin/pip" ]; then
  "$tmp/venv/bin/pip" install -q --no-index "$here/../python" > "$tmp/pip.log" 2>&1 ||
    { echo "FAIL: pip install --no-index ./python"; cat "$tmp/pip.log"; exit 1; }
  mkdir -p "$tmp/elsewhere" && cp "$here/python/test_api.py" "$tmp/elsewhere/"
  if ! (cd "$tmp/elsewhere" && env -u CHAINPROF CHAINPROF_BIN="$CHAINPROF" CHAINPROF="$CHAINPROF" \
        "$tmp/venv/bin/python" -c 'import chainprof, sys; assert "site-packages" in chainprof.__file__, chainprof.__file__' &&
        CHAINPROF_NO_PANDAS=1 "$tmp/venv/bin/python" -m unittest -q test_api) > "$tmp/log" 2>&1; then
    echo "FAIL: the installed package"; cat "$tmp/log"; fail=1
  else
    echo "ok: installed with pip --no-index: $(tail -1 "$tmp/log")"
  fi
else
  echo "note: no venv with pip here ($py -m venv failed); the installed-package case is skipped"
fi
exit $fail
