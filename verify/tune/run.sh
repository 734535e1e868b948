#!/usr/bin/env bash
# Builds verify/tune/kernel_tune.cu for this GPU and times every GEMV and row-norm configuration:
#   verify/tune/run.sh [REPS [gemv|norm [COLS]]]   writes $TUNE_OUT (default results/<gpu>/kernel_tune)/kernel_tune.csv
# (COLS: the norms of that width alone)
# and prints, per case, the library's launch (what launch_gemv / the norm launches pick) beside the fastest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
out=${TUNE_OUT:-$root/results/$gpu/kernel_tune}
mkdir -p "$out" build
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvcc -O3 -std=c++17 -arch=sm_"$cc" -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib verify/tune/kernel_tune.cu \
  benchmarks/common/gemv_kernel.cu benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu \
  lib/cuda/timer_kernels.cu lib/check.cpp -o build/kernel_tune
build/kernel_tune "${1:-40}" ${2:-} ${3:-} >"$out/kernel_tune.csv"
python3 verify/tune/summarize.py "$out/kernel_tune.csv" | tee "$out/summary.txt"
