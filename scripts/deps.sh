#!/usr/bin/env bash
# Install the Debian packages chainprof needs to build, test and benchmark.
# Idempotent: installs only what is missing; does nothing when all is there.
# Called by the Makefile targets; safe to run by hand (as root, or with sudo).
set -euo pipefail

packages=(
  cmake make gcc clang pkg-config       # build; clang for the sanitizer build and libFuzzer
  libclang-rt-14-dev llvm-14            # sanitizer/fuzzer runtimes, llvm-symbolizer
  zlib1g-dev libzstd-dev zstd           # compressed traces (.gz, .zst)
  libisal-dev                           # fast inflate of .gz traces (optional: zlib otherwise)
  libsqlite3-dev sqlite3                # nsys exports, run history
  libhwloc-dev                          # machine topology (probe)
  liburing-dev                          # io_uring checkpoint writer (probe storage; optional)
  libopenmpi-dev openmpi-bin            # cluster probes under mpirun
  libcmocka-dev                         # unit tests
  iproute2                              # network-namespace test hosts
  chromium                              # HTML report tests (headless)
  python3                               # a few test helpers compare JSON; `chainprof run`'s Python package
  python3-venv                          # the Python package installed into a venv (pip install ./python)
  time                                  # /usr/bin/time: peak RSS in the benchmarks
  curl python3-prometheus-client        # the monitor's /metrics scraped with real clients (tests/cli/monitor.sh)
  python3-pandas                        # the Python package's DataFrames (tested with and without pandas)
  python3-nbclient python3-nbformat python3-ipykernel  # a real notebook runs the Python package (tests/cli/python_api.sh)
)

missing=()
for p in "${packages[@]}"; do
  [[ $p == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "deps.sh: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# refresh the package lists only when they are missing or older than a day
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
