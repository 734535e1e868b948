#!/usr/bin/env bash
# On the GPU machine: the x7 32-register norm exploration; to $OUT/x7.tgz.
set -u
d=/tmp/x7; rm -rf $d; mkdir -p $d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $d/gpu.txt
echo "sha $(cat .opbench_sha 2>/dev/null) + working tree" >> $d/gpu.txt
src="benchmarks/common/gemv_kernel.cu benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu lib/cuda/timer_kernels.cu lib/check.cpp"
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/x7/x7.cu $src -o /tmp/x7bin -Xptxas -v > $d/ptxas.txt 2>&1 || { tail -30 $d/ptxas.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
cuobjdump -res-usage /tmp/x7bin > $d/res_usage.txt 2>&1
/tmp/x7bin ${REPS:-40} ${ROUNDS:-3} > $d/x7.csv 2> $d/x7.log
echo "run $(( $(date +%s) - t0 )) s"
python3 scratch/x3/summary.py $d/x7.csv > $d/summary.txt
tar czf $OUT/x7.tgz -C /tmp x7
cat $d/summary.txt | head -300
