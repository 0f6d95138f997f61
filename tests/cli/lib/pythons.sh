# pythons.sh - sourced by the CLI tests that run real python3 (run_python.sh,
# python_api.sh): the interpreters to test with, in $pythons: Debian's
# /usr/bin/python3 (which has the Debian python3-* packages) and, when another
# python3 comes first on PATH (pyenv, a venv), that one too. Exits 77 (skip)
# when there is none. Not a test itself (ctest globs tests/cli/*.sh only).
[ -x /usr/bin/python3 ] || command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
pythons=()
[ -x /usr/bin/python3 ] && pythons+=(/usr/bin/python3)
other=$(command -v python3 || true)
if [ -n "$other" ] && [ "$(readlink -f "$other")" != "$(readlink -f /usr/bin/python3 2>/dev/null)" ]; then
  pythons+=("$other")
fi
