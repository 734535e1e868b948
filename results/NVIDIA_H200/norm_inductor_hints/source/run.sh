#!/usr/bin/env bash
# On the GPU machine: the cache-hint exploration; to $OUT/l1x.tgz.
set -u
d=/tmp/l1x; rm -rf $d; mkdir -p $d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $d/gpu.txt
echo "tree $(cat .opbench_sha 2>/dev/null) + scratch/l1x" >> $d/gpu.txt
src="benchmarks/common/gemv_kernel.cu benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu lib/cuda/timer_kernels.cu lib/check.cpp"
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/l1x/l1x.cu $src -o /tmp/l1xbin -Xptxas -v > $d/ptxas.txt 2>&1 || { tail -30 $d/ptxas.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
/tmp/l1xbin ${REPS:-40} ${ROUNDS:-3} ${LIST:-1} > $d/l1x.csv 2> $d/l1x.log
echo "run $(( $(date +%s) - t0 )) s"
cp scratch/l1x/*.cu scratch/l1x/*.cuh scratch/l1x/*.sh $d/
python3 scratch/pipe/summary.py $d/l1x.csv > $d/summary.txt
tar czf $OUT/l1x.tgz -C /tmp l1x
cat $d/summary.txt; grep FAILED $d/l1x.csv | head; tail -3 $d/l1x.log
