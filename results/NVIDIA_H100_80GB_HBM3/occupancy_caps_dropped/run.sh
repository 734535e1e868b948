#!/usr/bin/env bash
# On the GPU machine: build scratch/occ/occ.cu and run it; CSV + summary to $OUT.
set -e
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvcc -O3 -std=c++17 -arch=sm_$cc -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/occ/occ.cu benchmarks/common/gemv_kernel.cu \
  benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu \
  lib/cuda/timer_kernels.cu lib/check.cpp -o /tmp/occ
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt
git_sha=$(cat .opbench_sha 2>/dev/null); echo "sha $git_sha" >> $OUT/gpu.txt
/tmp/occ ${1:-60} ${2:-3} ${3:-} > $OUT/occ.csv 2> $OUT/occ.log
python3 scratch/occ/summary.py $OUT/occ.csv | tee $OUT/summary.txt
