#!/usr/bin/env bash
# On the GPU machine: the pipelined-norm and paired-gather exploration; to $OUT/pipe.tgz.
set -u
d=/tmp/pipe; rm -rf $d; mkdir -p $d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $d/gpu.txt
git log -1 --format='sha %H' >> $d/gpu.txt 2>/dev/null; echo "+ scratch/pipe" >> $d/gpu.txt
src="benchmarks/common/gemv_kernel.cu benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu lib/cuda/timer_kernels.cu lib/check.cpp"
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/pipe/pipe.cu $src -o /tmp/pipebin -Xptxas -v > $d/ptxas.txt 2>&1 || { tail -30 $d/ptxas.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
for only in ${ONLY:-all}; do /tmp/pipebin ${REPS:-40} ${ROUNDS:-3} $only >> $d/pipe.csv 2>> $d/pipe.log; done
echo "run $(( $(date +%s) - t0 )) s"
cp scratch/pipe/*.cu scratch/pipe/*.cuh scratch/pipe/*.sh scratch/pipe/*.py $d/ 2>/dev/null
python3 scratch/pipe/summary.py $d/pipe.csv > $d/summary.txt
tar czf $OUT/pipe.tgz -C /tmp pipe
cat $d/summary.txt; grep -v "^pipelined" $d/pipe.log | head; grep "^pipelined" $d/pipe.log | sort -u
