#!/usr/bin/env bash
set -e
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvcc -O3 -std=c++17 -arch=sm_$cc -DOPBENCH_HAVE_CUDA -Ibenchmarks -Ilib scratch/stream/stream.cu benchmarks/common/gemv_kernel.cu \
  benchmarks/common/launch_rules.cpp benchmarks/layer_norm/layer_norm_kernel.cu benchmarks/rms_norm/rms_norm_kernel.cu \
  lib/cuda/timer_kernels.cu lib/check.cpp -o /tmp/stream
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt; echo "sha $(cat .opbench_sha)" >> $OUT/gpu.txt
/tmp/stream ${1:-30} ${2:-2} > $OUT/stream.csv
python3 - $OUT/stream.csv <<'PY'
import csv,sys,collections,statistics
t=collections.defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])): t[(r['kind'],r['config'])].append(float(r['GBps']))
for k,v in t.items(): print(f"{k[0]:5s} {k[1]:18s} {statistics.median(v):7.0f} GB/s  {' / '.join(f'{x:.0f}' for x in v)}")
PY
