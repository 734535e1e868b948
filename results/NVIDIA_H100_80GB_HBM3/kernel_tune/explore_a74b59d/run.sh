#!/usr/bin/env bash
# Device call: explore2 (norm L2 policies, pipelined GEMV) and inductor's chosen configs by kernel name.
set -uo pipefail
o=$OUT/ex2; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt
cat .opbench_sha >> $o/gpu.txt
( time nvcc -O3 -std=c++17 -arch=sm_90 -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/ex2/explore2.cu \
  benchmarks/common/gemv_kernel.cu benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu \
  lib/cuda/timer_kernels.cu lib/check.cpp -o /tmp/explore2 ) > $o/nvcc.log 2>&1
( time /tmp/explore2 40 ) > $o/explore2.csv 2> $o/explore2.err
[ -n "${NO_COMPILE:-}" ] && { cd $OUT && tar czf ex2.tgz ex2 && rm -rf ex2; exit 0; }
export TORCHINDUCTOR_CACHE_DIR=/tmp/indcache
( time python3 verify/compile_reference.py --dims ${DIMS:-8192,16384} --json $o/compile.json ) > $o/compile.txt 2>&1
for f in $(find /tmp/indcache -name '*.best_config'); do
  py=$(ls $(dirname $f)/*.py 2>/dev/null | head -1)
  echo "== $(grep -ho 'def triton_[a-z_0-9]*' $(dirname $f)/*.py | head -1) $(grep -ho "size_hints={[^}]*}" $(dirname $f)/*.py | head -1)"
  cat $f; echo
done > $o/inductor_configs.txt 2>&1
cd $OUT && tar czf ex2.tgz ex2 && rm -rf ex2
