#!/bin/bash
# A: the vector GEMV as at HEAD; B: its programmatic launch loads its first W step into registers before
# griddepcontrol.wait. Both built here, then alternating processes, bf16 decode.
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
build() {   # dir header
  cp "$2" kernels/gemv/gemv_kernels.cuh
  t0=$(date +%s)
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPBENCH_TORCH_PREFIX="$prefix" -DPython_EXECUTABLE=$(command -v python3) >$OUT/cmake_$1.log 2>&1 &&
  cmake --build "$1" -j 16 --target bench_ops >$OUT/build_$1.log 2>&1 || { tail -30 $OUT/build_$1.log; exit 1; }
  echo "built $1 in $(( $(date +%s) - t0 )) s"
}
build build_a scratch/chain/gemv_kernels_orig.cuh
{ echo '#define OPBENCH_GEMV_EARLY_W 1'; cat scratch/chain/gemv_kernels_early.cuh; } > /tmp/early.cuh
build build_b /tmp/early.cuh
cp scratch/chain/gemv_kernels_early.cuh kernels/gemv/gemv_kernels.cuh
F='^(Ceiling/bf16/32768x16384/read_cuda|Llama2/bf16/7b-32L/graph|Llama3/bf16/8b-32L/graph)(/|$)'
for r in 1 2 3; do
  for v in a b; do
    build_$v/bench_ops --benchmark_filter="$F" --opbench_markdown=$OUT/ab_${v}_$r.md --benchmark_out=$OUT/ab_${v}_$r.json >$OUT/ab_${v}_$r.txt 2>&1
    echo "$v round $r rc $?: $(grep -E '^(Llama|Ceiling)' $OUT/ab_${v}_$r.txt | awk '{printf "%s %s %s | ", $1, $2, $3}')"
  done
done
