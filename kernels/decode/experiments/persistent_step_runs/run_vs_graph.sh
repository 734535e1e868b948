#!/bin/bash
# Builds bench_ops on the device, then alternates the product's Llama-2-7B bf16 graph step with the
# persistent-step prototype in one call.
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPBENCH_TORCH_PREFIX="$prefix" -DPython_EXECUTABLE=$(command -v python3) >$OUT/cmake.log 2>&1 || { tail -20 $OUT/cmake.log; exit 1; }
cmake --build build -j 16 --target bench_ops >$OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - start )) s"
F='^(Ceiling/.*/read(_cuda)?|Llama2/bf16/7b-32L/graph)(/|$)'
for r in 1 2; do
  t0=$(date +%s)
  build/bench_ops --benchmark_filter="$F" --opbench_markdown=$OUT/models_$r.md --benchmark_out=$OUT/models_$r.json >$OUT/bench_$r.txt 2>&1
  echo "bench_ops round $r rc $? $(( $(date +%s) - t0 )) s"; grep -E "Llama2|read" $OUT/bench_$r.txt | cut -c1-220
  for b in step_u32 step_kv; do echo "== $b"; scratch/chain/$b 10 | tail -1; done
done
