#!/usr/bin/env bash
# On the GPU machine: build scratch/i8/i8.cu and run it; CSV + summary to $OUT.
set -e
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvcc -O3 -std=c++17 -arch=sm_$cc -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/i8/i8.cu benchmarks/common/gemv_kernel.cu \
  benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu \
  lib/cuda/timer_kernels.cu lib/check.cpp benchmarks/ceiling/stream_kernels.cu -o /tmp/i8 -Xptxas -v 2> $OUT/ptxas.txt || { tail -30 $OUT/ptxas.txt; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/gpu.txt
echo "sha $(cat .opbench_sha 2>/dev/null)" >> $OUT/gpu.txt
/tmp/i8 ${1:-40} ${2:-3} > $OUT/i8.csv 2> $OUT/i8.log
python3 scratch/i8/summary.py $OUT/i8.csv | tee $OUT/summary.txt
