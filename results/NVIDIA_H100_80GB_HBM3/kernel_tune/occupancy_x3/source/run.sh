#!/usr/bin/env bash
# On the GPU machine: the x3 GEMV exploration and the norm tuner at 4096 and 16384 columns; to $OUT/x3.tgz.
set -u
d=/tmp/x3; rm -rf $d; mkdir -p $d
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $d/gpu.txt
echo "sha $(cat .opbench_sha 2>/dev/null) + working tree" >> $d/gpu.txt
src="benchmarks/common/gemv_kernel.cu benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu lib/cuda/timer_kernels.cu lib/check.cpp"
nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/x3/x3.cu $src -o /tmp/x3bin -Xptxas -v > $d/ptxas.txt 2>&1 || { tail -30 $d/ptxas.txt; exit 1; }
( /tmp/x3bin ${REPS:-40} ${ROUNDS:-2} > $d/x3.csv 2> $d/x3.log ) &
[ -n "${NORM:-}" ] && nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib verify/tune/kernel_tune.cu $src -o /tmp/ktbin > $d/kt_build.txt 2>&1
wait
cuobjdump -sass /tmp/x3bin | awk '/Function : .*vector_kernelIaLi16ELi16ELi1ELi2ELb0ELb0ELb0ELNS0_12GemvEpilogueE0ELi4E/{p=1} /Function : /&&!/vector_kernelIaLi16ELi16ELi1ELi2ELb0ELb0ELb0ELNS0_12GemvEpilogueE0ELi4E/{p=0} p' > $d/sass_int8_w16s2m4.txt
if [ -n "${NORM:-}" ]; then for c in 4096 16384; do /tmp/ktbin 40 norm $c > $d/norm$c.csv 2>> $d/norm.log; done; fi
if [ -n "${BUILD:-}" ]; then
  RESULTS=$d/gs bash verify/gpu_session.sh build > $d/build_step.txt 2>&1
  grep -m3 -o "nvcc[^ ]* .*gemv_kernel.cu" build/build.ninja > $d/cmake_nvcc_cmd.txt 2>/dev/null || grep -rn "CUDA_FLAGS\|FLAGS = " build/build.ninja | grep -i cuda | head -5 > $d/cmake_nvcc_cmd.txt
  for f in $(find build -name 'gemv_kernel.cu.o' -o -name 'rms_norm_kernel.cu.o' -o -name 'layer_norm_kernel.cu.o'); do echo "== $f"; cuobjdump -res-usage "$f" 2>&1 | grep -A1 "Function" | grep -B1 "sm_90\|REG" ; done > $d/cmake_res_usage.txt 2>&1
fi
python3 scratch/x3/summary.py $d/x3.csv $d/norm*.csv > $d/summary.txt
tar czf $OUT/x3.tgz -C /tmp x3
cat $d/summary.txt | head -150
