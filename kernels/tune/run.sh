#!/usr/bin/env bash
# Builds kernel_tune in the configured CUDA build (${BUILD_DIR:-build}, from the build script) and times
# every configuration of the own kernels on this GPU, each checked against its float64 reference first:
#   kernels/tune/run.sh [kernel_tune flags]   e.g. --only=gemv, --cols=8192, --min_samples=40
# Writes $TUNE_OUT (default <build>/kernel_tune)/kernel_tune.csv and summary.txt and prints the summary:
# per case, the library's launch (its configuration in parentheses) beside the fastest configurations.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
[ -f "$build_dir/CMakeCache.txt" ] || { echo "run.sh: no configured build in $build_dir: build first" >&2; exit 2; }
cmake --build "$build_dir" --target kernel_tune -j "${JOBS:-$(nproc)}" >&2
out=${TUNE_OUT:-$build_dir/kernel_tune}
mkdir -p "$out"
rc=0
"$build_dir/kernel_tune" "$@" >"$out/kernel_tune.csv" || rc=$?
python3 "$root/kernels/tune/summarize.py" "$out/kernel_tune.csv" | tee "$out/summary.txt"
exit $rc
