#!/usr/bin/env bash
# Sets up, builds and runs every test: ctest (GoogleTest; GPU tests skip without a CUDA device) and
# pytest (the Python tools). The README's test command and what CI (.ci/run) runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
build_dir=${BUILD_DIR:-$root/build}
# The fuzz harnesses need no LibTorch: where clang++ is already there, they build in the background, on
# the core the setup's torch install leaves idle, and ctest's fuzz tests reuse them (scripts/fuzz.sh).
fuzz_prebuild=
if command -v "${CLANGXX:-clang++}" >/dev/null; then
  mkdir -p "$build_dir"
  (for target in oplog inputs; do
     FUZZ_DIR="$build_dir/fuzz-$target" "$root/scripts/fuzz.sh" "$target" --build-only
   done) >"$build_dir/fuzz_prebuild.log" 2>&1 &
  fuzz_prebuild=$!
fi
PYTHON=$("$root/scripts/build.sh" | sed -n 's/^PYTHON=//p')
# A failed prebuild is not an error here: ctest's fuzz test builds again and reports it.
[ -z "$fuzz_prebuild" ] || wait "$fuzz_prebuild" || echo "[test] fuzz prebuild failed: $build_dir/fuzz_prebuild.log" >&2
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
