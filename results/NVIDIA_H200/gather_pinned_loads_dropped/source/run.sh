#!/usr/bin/env bash
# On the GPU machine: the x6 pinned-load gather exploration; to $OUT/x6.tgz.
set -u
d=/tmp/x6; rm -rf $d; mkdir -p $d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $d/gpu.txt
echo "sha $(cat .opbench_sha 2>/dev/null) + working tree" >> $d/gpu.txt
src="benchmarks/common/gemv_kernel.cu benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu lib/cuda/timer_kernels.cu lib/check.cpp"
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/x6/x6.cu $src -o /tmp/x6bin -Xptxas -v > $d/ptxas.txt 2>&1 || { tail -30 $d/ptxas.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
cuobjdump -res-usage /tmp/x6bin > $d/res_usage.txt 2>&1
/tmp/x6bin ${REPS:-40} ${ROUNDS:-3} > $d/x6.csv 2> $d/x6.log
echo "run $(( $(date +%s) - t0 )) s"
python3 scratch/x3/summary.py $d/x6.csv > $d/summary.txt
tar czf $OUT/x6.tgz -C /tmp x6
cat $d/summary.txt | head -300
