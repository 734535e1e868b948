#!/usr/bin/env bash
# Sets up, builds and runs every test: ctest (GoogleTest; GPU tests skip without a CUDA device) and
# pytest (the Python tools). The README's test command and what CI (.ci/run) runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
PYTHON=$("$root/scripts/build.sh" | sed -n 's/^PYTHON=//p')
build_dir=${BUILD_DIR:-$root/build}
echo "[test] ctest" >&2
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
echo "[test] pytest" >&2
# The venv has the tools package installed (scripts/setup.sh); the GPU machine's python3 reads it from tools/.
"$PYTHON" -c 'import opbench_tools' 2>/dev/null || export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
# Two workers (pytest-xdist, where installed; an idle one steals queued tests, so the few long ones do not
# leave it waiting) for all but the timing-sensitive tests (marker `serial`),
# which run alone afterwards.
parallel=()
"$PYTHON" -c 'import xdist' 2>/dev/null && parallel=(-n "$(nproc)" --dist worksteal)
OPBENCH_BUILD_DIR="$build_dir" "$PYTHON" -m pytest -q "${parallel[@]}" -m "not serial" "$root/tests/python"
OPBENCH_BUILD_DIR="$build_dir" "$PYTHON" -m pytest -q -m serial "$root/tests/python"
echo "[test] all tests passed in $(( $(date +%s) - start )) s" >&2
