#!/usr/bin/env bash
# Sets up, builds (Release) and runs the default sweep: every case bench_ops registers for this
# machine (the GPU shapes on a CUDA device; small CPU shapes, with a notice, without one).
# Writes results/latest/: bench_ops.json (Google Benchmark JSON), gpt_fast_benchmark.csv (experiment
# rows), gpt_fast_benchmark.json (dashboard records, JSON Lines) and summary.md (the rows as markdown).
# On a CUDA device the inductor backend's missing or stale packages are built first
# (--opbench_inductor_build: minutes the first time, nothing once the cache is warm); on the CPU, or
# with OPBENCH_INDUCTOR_BUILD=0, its cases without a package are skipped as unavailable.
# Extra arguments go to bench_ops.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" >/dev/null
build_dir=${BUILD_DIR:-$root/build}
out=${OPBENCH_RESULTS_DIR:-$root/results/latest}
mkdir -p "$out"
rm -f "$out/gpt_fast_benchmark.csv" "$out/gpt_fast_benchmark.json"
build_packages=()
if [ "${OPBENCH_INDUCTOR_BUILD:-1}" != 0 ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  build_packages=(--opbench_inductor_build)
fi
"$build_dir/bench_ops" "${build_packages[@]}" --benchmark_out="$out/bench_ops.json" --benchmark_out_format=json \
  --output "$out/gpt_fast_benchmark.csv" --opbench_markdown "$out/summary.md" "$@"
echo "[run] results in $out" >&2
