#!/usr/bin/env bash
# One go on the GPU machine: build, ctest (GPU tests run), the default sweep, and the acceptance
# checks. Writes everything under $RESULTS (default results/<gpu>/) and prints a short table last.
#   gpu_checks/gpu_session.sh [STEP...]   steps: build ctest sweep seed eager compile ncu graph aa trace rows replay
#                                    collective; models models_py timers selftest selftest2pct (not in the default list:
#                                    minutes each);
#                                    tune (kernels/tune/run.sh: every configuration of the own kernels,
#                                    checked against its float64 reference, timed with the harness's timer),
#                                    kernel_tests (the GPU tests of the own kernels and the decode step,
#                                    without the rest of ctest),
#                                    vs_inductor (ROUNDS alternating rounds of the own kernels and torch.compile,
#                                    the median table of gpu_checks/own_kernels_vs_inductor.py),
#                                    inductor, inductor_warm, inductor_ab, inductor_models (the inductor
#                                    backend: packages built and timed beside torch.compile in Python),
#                                    inductor_kernels (the int8 decode package's kernels beside compiled
#                                    Python's, one traced generation each),
#                                    ab_builds (OLD_BENCH against NEW_BENCH, interleaved processes),
#                                    tp_decode (tensor-parallel decode on TP_SIZES GPUs under torchrun, the
#                                    one-GPU graph cases beside; table in tp_decode.md), tp_allreduce_ab
#                                    (the TP step's sums: ncclAllReduce, with an NCCL symmetric window, and
#                                    one kernel over NCCL's device API),
#                                    drift (4 cases on GPU 0: run in every call, compare across machines)
#                                    (default: all, in that order)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The tools package (tools/opbench_tools) runs from the checkout: python3 -m opbench_tools.<tool>, no pip.
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
out=${RESULTS:-$root/results/$gpu}
mkdir -p "$out"
bench=build/bench_ops
log() { echo "[gpu_session] $*" | tee -a "$out/session.log" >&2; }
wall() { local start; start=$(date +%s.%N); "$@"; local rc=$?
         log "$(python3 -c "print(round($(date +%s.%N) - $start, 2))") s wall (rc $rc): $*"; return $rc; }

# A warm device keeps build/, but the tree copied to it can carry mtimes older than build/'s objects, so
# ninja would skip changed sources: every source whose content changed since the last build is touched.
step_build() {
  local sums=build/.source_sums
  find CMakeLists.txt app lib benchmarks kernels replay reporters instr tests third_party -type f -print0 2>/dev/null | sort -z |
    xargs -0 sha1sum >"$out/.source_sums.new"
  [ -f "$sums" ] && diff "$sums" "$out/.source_sums.new" | sed -n 's/^> [0-9a-f]*  //p' | xargs -r touch
  JOBS=16 bash scripts/build.sh >"$out/build.log" 2>&1 || { log "build failed"; tail -40 "$out/build.log"; exit 1; }
  mv "$out/.source_sums.new" "$sums"
}
step_ctest() {  # the fuzz test needs clang, which the GPU image does not have
  ctest --test-dir build --output-on-failure -j 2 -E _fuzz_ >"$out/ctest.log" 2>&1
  log "ctest rc $?: $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
  grep -E "\*\*\*|Skipped|Failed" "$out/ctest.log" | head -20 >&2
}
step_tune() { TUNE_OUT="$out/kernel_tune" wall bash kernels/tune/run.sh >"$out/tune.log" 2>&1; tail -45 "$out/tune.log" >&2; }
step_kernel_tests() {
  wall build/opbench_tests --gtest_filter='*GemvKernel*:*GemvInt4*:*NormKernels*:LaunchRules*:GemvConfigs*:RowNormConfigs*:DecodeKernels*:StreamKernels*:DecodeGpu*:TensorParallel*:Gpu.*' >"$out/kernel_tests.log" 2>&1
  log "kernel tests: $(grep -E '^\[  (PASSED|FAILED)' "$out/kernel_tests.log" | tr '\n' ' ')"
  grep -E "^\[  FAILED" "$out/kernel_tests.log" >&2
}
step_sweep() {  # the default sweep (or SWEEP_FILTER's cases), with experiment rows for this GPU's targets
  OPBENCH_RESULTS_DIR="$out/sweep" wall bash scripts/run.sh ${SWEEP_FILTER:+--benchmark_filter="$SWEEP_FILTER"} \
    >"$out/sweep.txt" 2>&1
}
step_seed() {  # LayerNorm bf16 alone, then the seed's four families (aten), process start included
  wall $bench --benchmark_filter='^LayerNorm/bf16/' >"$out/layer_norm_bf16.txt" 2>&1
  wall $bench --benchmark_filter='^(LayerNorm/bf16|Gemv|GatherGemv|MLP)/.*/aten$' \
    --benchmark_out="$out/seed_aten.json" --benchmark_out_format=json \
    --output "$out/gpt_fast_benchmark.csv" >"$out/seed_aten.txt" 2>&1
}
step_eager() {
  python3 gpu_checks/eager_timings.py --family layer_norm --family gemv --family gather_gemv --family mlp \
    --compare "$out/seed_aten.json" --json "$out/eager.json" 2>&1 | tee -a "$out/session.log"
}
step_ncu() {
  ncu --clock-control none --metrics gpu__time_duration.sum -k regex:layer_norm --launch-count 20 --csv \
    $bench --benchmark_filter='LayerNorm/bf16/4096x8192/aten$' --opbench_max_time=0.5 >"$out/ncu_layer_norm.csv" 2>&1
  python3 gpu_checks/ncu_vs_bench_ops.py "$out/ncu_layer_norm.csv" "$out/seed_aten.json" LayerNorm/bf16/4096x8192/aten \
    2>&1 | tee -a "$out/session.log"
}
step_compile() {  # torch.compile (inductor) and eager beside the own kernels, same timing method
  python3 gpu_checks/torch_compile_timings.py --json "$out/compile.json" --compare "$out/sweep/bench_ops.json" \
    >"$out/compile.txt" 2>&1
  log "compile reference rc $?: $(tail -1 "$out/compile.txt")"
}
step_vs_inductor() {  # ROUNDS (default 3) alternating rounds of bench_ops and torch_compile_timings, then the median table
  local dir="$out/vs_inductor" i
  local filter='^(Ceiling/bf16/[0-9]+x[0-9]+/(read|write|copy)|[A-Za-z]+Norm/bf16/4096x|(Gemv|GatherGemv)/(bf16|int8)/)'
  for i in $(seq "${ROUNDS:-3}"); do
    mkdir -p "$dir/round$i"
    wall $bench --benchmark_filter="$filter" --benchmark_out="$dir/round$i/bench_ops.json" \
      --benchmark_out_format=json >"$dir/round$i/bench_ops.txt" 2>&1
    wall python3 gpu_checks/torch_compile_timings.py --json "$dir/round$i/compile.json" >"$dir/round$i/compile.txt" 2>&1
  done
  python3 gpu_checks/own_kernels_vs_inductor.py "$dir"/round* --markdown "$dir/table.md" | tail -12 >&2
}
step_graph() {
  wall $bench --opbench_timer=graph --benchmark_filter='^(LayerNorm/bf16|Gemv|GatherGemv)/' \
    --benchmark_out="$out/graph.json" --benchmark_out_format=json >"$out/graph.txt" 2>&1
}
step_aa() {  # one build against itself, one process per repetition: must find no regression
  python3 -m opbench_tools.compare --binaries $bench $bench --filter '^(LayerNorm/bf16|Gemv/bf16)/' --repetitions 10 \
    --out-dir "$out/aa" --markdown "$out/aa_compare.md" >"$out/aa_compare.txt" 2>&1
  python3 -m opbench_tools.gate "$out/aa/old.json" "$out/aa/new.json" >"$out/aa_gate.txt" 2>&1
  log "A/A gate rc $? ($(tail -1 "$out/aa_gate.txt"))"
}
step_trace() {
  $bench --benchmark_filter='^(MLP/bf16/4096|LayerNorm/bf16/4096x8192)/aten$' --opbench_trace "$out/traces" \
    --benchmark_out="$out/trace_cases.json" --benchmark_out_format=json >"$out/trace_cases.txt" 2>&1
  python3 gpu_checks/python_profiler_trace.py "$out/traces/python_mlp.trace.json" >>"$out/session.log" 2>&1
  python3 gpu_checks/gpu_util_crosscheck.py "$out/traces" "$out/trace_cases.json" >"$out/trace_check.txt" 2>&1
  log "trace cross-check rc $?: $(tail -1 "$out/trace_check.txt")"
}
step_rows() {  # experiment rows with this GPU's targets (issue 3's acceptance command)
  wall $bench --benchmark_filter='LayerNorm/.*' --output "$out/gpt_fast_benchmark.csv" >"$out/rows.txt" 2>&1
}
step_models() {  # whole-model decode (issue 12): the read ceiling first, then Llama2 and Mixtral, own-kernel backends
  wall $bench --benchmark_filter="${MODELS_FILTER:-^(Ceiling/.*/read(_cuda)?|(Llama2|Mixtral)/.*/(eager|graph|graph_serial))(/|\$)}" --benchmark_out="$out/models.json" \
    --benchmark_out_format=json --output "$out/models_rows.csv" --opbench_markdown "$out/models_rows.md" \
    >"$out/models.txt" 2>&1
  tail -25 "$out/models.txt" >&2
}
step_models_py() {  # the same models in PyTorch, eager and torch.compile(mode="reduce-overhead"), same call
  wall python3 gpu_checks/decode_models_pytorch.py ${MODELS_PY_ARGS:-} --json "$out/models_python.json" --compare "$out/models.json" \
    >"$out/models_python.txt" 2>&1
  tail -20 "$out/models_python.txt" >&2
}
# The inductor backend (issue 36). INDUCTOR_JOBS packages are built at once (default: one per GPU, each on
# its own: concurrent builds on one GPU skew coordinate-descent tuning, which times kernels there).
SEED_INDUCTOR='^([A-Za-z]+Norm/bf16|(Gemv|GatherGemv|MLP)/[^/]+)/[^/]+/'
build_packages() {  # [FILTER [bench_ops flags...]]: the builder over bench_ops' plan, timed
  local filter=$1; shift
  wall python3 inductor/build_packages.py --bench-ops $bench --filter "$filter" ${INDUCTOR_JOBS:+--jobs "$INDUCTOR_JOBS"} -- "$@"
}
step_inductor() {  # the seed's cases and the norms: packages, bench_ops (inductor, cuda, aten), torch.compile in Python
  build_packages "${SEED_INDUCTOR}inductor\$" >"$out/inductor_build.txt" 2>&1
  tail -3 "$out/inductor_build.txt" >&2
  wall $bench --benchmark_filter="^Ceiling/.*/(read|write|copy)|${SEED_INDUCTOR}(inductor|cuda|aten)\$" \
    --benchmark_out="$out/inductor.json" --benchmark_out_format=json --output "$out/inductor_rows.csv" \
    >"$out/inductor.txt" 2>&1
  wall python3 gpu_checks/torch_compile_timings.py --filter "${SEED_INDUCTOR}inductor\$" --json "$out/compile.json" \
    --compare "$out/inductor.json" >"$out/compile.txt" 2>&1
  tail -32 "$out/compile.txt" >&2
}
step_inductor_warm() {  # a second build over a warm cache builds nothing; the sweep's wall time then
  build_packages "${SEED_INDUCTOR}inductor\$" >"$out/inductor_warm_build.txt" 2>&1
  log "warm cache: $(tail -1 "$out/inductor_warm_build.txt")"
  wall $bench --benchmark_filter="${SEED_INDUCTOR}inductor\$" >"$out/inductor_warm.txt" 2>&1
}
step_inductor_ab() {  # two package builds that differ in one setting: compare and gate see where it matters
  local filter=${AB_FILTER:-'^(Gemv|GatherGemv)/[^/]+/[^/]+/inductor$'} side
  python3 -c 'import json,sys; s=json.load(open("inductor/settings.json")); s["coordinate_descent_tuning"]=False; json.dump(s, open(sys.argv[1], "w"), indent=1)' "$out/settings_no_cd.json"
  build_packages "$filter" >"$out/inductor_ab_build_cd.txt" 2>&1
  build_packages "$filter" "--opbench_inductor_settings=$out/settings_no_cd.json" >"$out/inductor_ab_build.txt" 2>&1
  for side in cd no_cd; do
    local flag=""
    [ $side = no_cd ] && flag="--opbench_inductor_settings=$out/settings_no_cd.json"
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$root/$bench" "$flag" >"$out/bench_$side.sh"; chmod +x "$out/bench_$side.sh"
  done
  wall python3 -m opbench_tools.compare --binaries "$out/bench_no_cd.sh" "$out/bench_cd.sh" --filter "$filter" \
    --repetitions "${AB_REPETITIONS:-5}" --out-dir "$out/inductor_ab" --markdown "$out/inductor_ab.md" \
    >"$out/inductor_ab.txt" 2>&1
  python3 -m opbench_tools.gate "$out/inductor_ab/old.json" "$out/inductor_ab/new.json" >"$out/inductor_ab_gate.txt" 2>&1
  log "coordinate descent off (old) vs on (new): gate rc $?"
  tail -22 "$out/inductor_ab.txt" >&2
}
step_inductor_models() {  # the decode models: packages, bench_ops graph and inductor, compiled Python
  local models='^(Llama2/(bf16|int8)|Mixtral/[^/]+)/[^/]+/'
  MODELS_PY_ARGS=${MODELS_PY_ARGS:-"--model llama2_7b_bf16 --model llama2_7b_int8 --model mixtral_8x7b_int8 --backend compile"}
  build_packages "${models}inductor\$" >"$out/models_build.txt" 2>&1
  tail -4 "$out/models_build.txt" >&2
  MODELS_FILTER="^(Ceiling/.*/read(_cuda)?|(Llama2/(bf16|int8)|Mixtral)/.*/(graph|inductor))(/|\$)" step_models
  step_models_py
}
step_inductor_kernels() {  # issue 36: the Llama-2-7B int8 (KERNELS_DTYPE) package's step against compiled Python's,
  # kernel by kernel: one traced generation of each (bench_ops --opbench_trace, decode_models_pytorch --trace)
  local dtype=${KERNELS_DTYPE:-int8}
  build_packages "^Llama2/$dtype/7b-32L/inductor\$" >"$out/kernels_build.txt" 2>&1
  wall $bench --benchmark_filter="^(Ceiling/.*/read(_cuda)?|Llama2/$dtype/7b-32L/inductor)(/|\$)" \
    --opbench_trace "$out/kernels" --opbench_trace_iters 1 --benchmark_out="$out/kernels_bench.json" \
    --benchmark_out_format=json >"$out/kernels_bench.txt" 2>&1
  wall python3 gpu_checks/decode_models_pytorch.py --model "llama2_7b_$dtype" --backend compile --trace "$out/kernels" \
    --json "$out/kernels_python.json" --compare "$out/kernels_bench.json" >"$out/kernels_python.txt" 2>&1
  tail -4 "$out/kernels_python.txt" >&2
  python3 gpu_checks/kernel_times_from_traces.py "$out/kernels" --top 12 | tee "$out/kernels.txt" >&2
}
step_ab_builds() {  # issue 35: OLD_BENCH against NEW_BENCH (two builds), interleaved processes, same GPU
  local kind filter
  for kind in ${AB_ONLY:-norms gemvs}; do   # a filter with one end anchor: older builds honour only the last '$'
    filter='^[A-Za-z]+Norm/[^/]+/4096x(4096|8192|16384)/cuda$'
    [ $kind = gemvs ] && filter='^(Gemv|GatherGemv)/[^/]+/(4096|8192|16384)/cuda$'
    wall python3 -m opbench_tools.compare --binaries "$OLD_BENCH" "$NEW_BENCH" --repetitions "${AB_REPETITIONS:-3}" \
      --filter "$filter" --bench-arg=--opbench_max_time=0.3 --out-dir "$out/ab_$kind" --markdown "$out/ab_$kind.md" \
      >"$out/ab_$kind.txt" 2>&1
    grep -v "^\[runs\]" "$out/ab_$kind.txt" | tail -22 >&2
  done
  [ -n "${AB_ONLY:-}" ] && return
  wall python3 -m opbench_tools.compare --binaries "$OLD_BENCH" "$NEW_BENCH" --repetitions "${AB_MODEL_REPETITIONS:-2}" \
    --filter '^(Llama2|Mixtral)/[^/]+/[^/]+/graph$' \
    --out-dir "$out/ab_models" --markdown "$out/ab_models.md" >"$out/ab_models.txt" 2>&1
  tail -8 "$out/ab_models.txt" >&2
}
TIMER_CASES=(Gemv/bf16/1024/cuda Gemv/bf16/4096/cuda LayerNorm/bf16/4096x4096/cuda LayerNorm/bf16/4096x8192/cuda
             Gemv/bf16/16384/cuda)
step_timers() {  # issue 17: cupti, events and graph against ncu's kernel time, 5 own-kernel cases ~5-200 us
  local filter="^($(IFS='|'; echo "${TIMER_CASES[*]}"))\$"
  for t in events graph cupti; do
    wall $bench --benchmark_filter="$filter" --opbench_timer=$t --benchmark_out="$out/timers_$t.json" \
      --benchmark_out_format=json >"$out/timers_$t.txt" 2>&1
  done
  for c in "${TIMER_CASES[@]}"; do   # --launch-skip: past the reference check and the warm-up
    ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'gemv_vector|vector_kernel|two_pass_kernel' --launch-skip 5 \
      --launch-count 50 --csv $bench --benchmark_filter="^$c\$" --opbench_max_time=0.3 >"$out/ncu_${c//\//_}.csv" 2>&1
  done
  python3 gpu_checks/timers_vs_ncu.py "$out" --json "$out/timers_vs_ncu.json" | tee "$out/timers_vs_ncu.md" >&2
}
step_ncu_spin() {  # issue 17: what ncu's gpu__time_duration reads for kernels of known length (5, 20, 100 us)
  ncu --clock-control none --metrics gpu__time_duration.sum -k regex:spin_kernel --csv \
    build/opbench_tests --gtest_filter=Gpu.SpinKernelsOfKnownLength* >"$out/ncu_spin.csv" 2>&1
  build/opbench_tests --gtest_filter=Gpu.SpinKernelsOfKnownLength* >"$out/cupti_spin.txt" 2>&1
  python3 - "$out/ncu_spin.csv" <<'PY' | tee "$out/ncu_spin.md" >&2
import csv, statistics, sys
vals = [float(r[-1].replace(",", "")) * {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[r[-2]]
        for r in csv.reader(open(sys.argv[1])) if len(r) > 3 and r[-3] == "gpu__time_duration.sum"]
for want in (5, 20, 100):
    near = [v for v in vals if abs(v - want) < 0.5 * want]
    if near:
        print(f"spin {want} us: ncu gpu__time_duration median {statistics.median(near):.3f} us over {len(near)} launches")
PY
  grep "spin .* cupti" "$out/cupti_spin.txt" >&2
}
step_selftest() {  # issue 17: the gate's false alarms and detection of an injected 5% slowdown, 20 rounds
  wall python3 -m opbench_tools.gate_selftest --binary $bench --rounds "${SELFTEST_ROUNDS:-20}" --jobs 4 --slowdown 5 \
    ${SELFTEST_BUDGET_S:+--time-budget "$SELFTEST_BUDGET_S"} \
    --filter '^(LayerNorm/bf16/4096x(8192|16384)|Gemv/bf16/16384)/cuda$' \
    --out-dir /tmp/gate_selftest --json "$out/gate_selftest.json" >"$out/gate_selftest.txt" 2>"$out/gate_selftest.log"
  cat "$out/gate_selftest.txt" >&2
}
step_selftest2pct() {  # issue 39: can the gate catch 2%? 20 rounds, 4 cases of 73-130 us, 2% and 5% injected, the
                       # 1.25% policy, 9 to 30 processes a side (sequential); 50 min at most (docs/compare_and_gate.md);
                       # on a host of several GPUs the rounds run side by side, one on each GPU (--gpus)
  mkdir -p "$out/selftest-2pct"
  local gpus
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)
  wall python3 -m opbench_tools.gate_selftest --binary $bench ${gpus:+--gpus "$gpus"} \
    --filter '^(LayerNorm/bf16/4096x16384/aten|Gemv/bf16/16384/cuda|GatherGemv/bf16/8192/cuda|MLP/bf16/4096/aten)$' \
    --policy tools/opbench_tools/perf-policy-2pct.json --rounds "${SELFTEST_ROUNDS:-20}" --repetitions 9 \
    --max-repetitions 30 --batch 4 --slowdown 2 --slowdown 5 --jobs 4 --time-budget "${SELFTEST_BUDGET_S:-3000}" \
    --out-dir /tmp/selftest-2pct --json "$out/selftest-2pct/selftest.json" >"$out/selftest-2pct/selftest.txt" \
    2>"$out/selftest-2pct/selftest.log"
  cat "$out/selftest-2pct/selftest.txt" >&2
}
step_collective() {  # issue 40: the Collective family over NCCL on 2 and 4 GPUs (those of them the host has; a
                     # host of one GPU: a world of one), each world followed by the Python peer (torch.distributed,
                     # the same ops, dtypes and sizes) with bench_ops' figures beside its own. COLLECTIVE_FILTER
                     # narrows bench_ops' cases (default: all, eager and graph, 8 B .. 1 GiB; ~1-2 min a world).
  export NCCL_NVLS_ENABLE=0   # NVLink multicast off: the lent hosts require it
  local gpus n worlds=() launcher=(torchrun)
  command -v torchrun >/dev/null || launcher=(python3 -m torch.distributed.run)
  gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
  for n in 2 4; do [ "$n" -le "$gpus" ] && worlds+=("$n"); done
  [ ${#worlds[@]} -eq 0 ] && worlds=(1)
  for n in "${worlds[@]}"; do
    wall "${launcher[@]}" --standalone --nproc-per-node="$n" --no-python $bench \
      --benchmark_filter="${COLLECTIVE_FILTER:-^Collective/}" --benchmark_out="$out/collective_n$n.json" \
      --benchmark_out_format=json --output "$out/collective_rows.csv" >"$out/collective_n$n.txt" 2>&1
    log "collective on $n GPU(s): rc $?, $(grep -c '^Collective/' "$out/collective_n$n.txt") case lines, $(grep -c 'skipped' "$out/collective_n$n.txt") skipped"
    wall "${launcher[@]}" --standalone --nproc-per-node="$n" gpu_checks/collectives_torch_distributed.py \
      --compare "$out/collective_n$n.json" --json "$out/collective_torch_n$n.json" >"$out/collective_torch_n$n.txt" 2>&1
    log "python peer on $n GPU(s): rc $?"
    grep -E '^(all_reduce|all_gather) .* 1GiB |^8 B all_reduce' "$out/collective_torch_n$n.txt" >&2
  done
}
step_tp_decode() {  # issue 40: tensor-parallel decode, torchrun over N = TP_SIZES (default "2 4") GPUs of this host,
  # beside the one-GPU graph cases of the same models (the ratio); the read ceiling first in each call
  export NCCL_NVLS_ENABLE=0   # NVLink multicast off: the lent hosts require it
  local n gpus launcher=(torchrun) read='Ceiling/.*/read(_cuda)?'
  gpus=$(nvidia-smi -L | wc -l)
  command -v torchrun >/dev/null || launcher=(python3 -m torch.distributed.run)
  wall $bench --benchmark_filter="^($read|Llama2/(bf16|int8)/7b-32L/graph)(/|\$)" --benchmark_out="$out/tp_n1.json" \
    --benchmark_out_format=json --output "$out/tp_n1_rows.csv" >"$out/tp_n1.txt" 2>&1
  for n in ${TP_SIZES:-2 4}; do
    if [ "$n" -gt "$gpus" ]; then log "tp_decode: tp$n needs $n GPUs, this host has $gpus: not run"; continue; fi
    wall "${launcher[@]}" --standalone --nproc-per-node="$n" --no-python $bench \
      --benchmark_filter="^($read|Llama2(_70b)?TP/.*-tp$n/graph)(/|\$)" --benchmark_out="$out/tp_n$n.json" \
      --benchmark_out_format=json --output "$out/tp_n${n}_rows.csv" >"$out/tp_n$n.txt" 2>&1
  done
  python3 gpu_checks/tp_decode_table.py "$out" | tee "$out/tp_decode.md" >&2
}
step_tp_allreduce_ab() {  # issue 40: the TP step's sums three ways, TP_SIZES (default "2 4") GPUs, graph backend:
  # ncclAllReduce on ordinary memory, with the partials in an NCCL symmetric window (OPBENCH_NCCL_SYMMETRIC=1),
  # and one kernel over NCCL's device API (OPBENCH_TP_ALLREDUCE=lsa, the default where available): tok/s, sum time
  export NCCL_NVLS_ENABLE=0
  local n side launcher=(torchrun)
  command -v torchrun >/dev/null || launcher=(python3 -m torch.distributed.run)
  for n in ${TP_SIZES:-2 4}; do
    for side in nccl symmetric lsa; do
      OPBENCH_NCCL_SYMMETRIC=$([ $side = symmetric ] && echo 1 || echo 0) \
      OPBENCH_TP_ALLREDUCE=$([ $side = lsa ] && echo lsa || echo nccl) \
        wall "${launcher[@]}" --standalone --nproc-per-node="$n" --no-python $bench \
        --benchmark_filter="^(Ceiling/.*/read(_cuda)?|Llama2(_70b)?TP/.*-tp$n/graph)(/|\$)" \
        --benchmark_out="$out/tp_sum_${side}_n$n.json" --benchmark_out_format=json >"$out/tp_sum_${side}_n$n.txt" 2>&1
    done
  done
  python3 - "$out" <<'PY' | tee "$out/tp_allreduce_ab.md" >&2
import glob, json, sys
print("| case | sums | tok/s | sums ms/token | % token | % aggregate bound |\n|---|---|---:|---:|---:|---:|")
for path in sorted(glob.glob(sys.argv[1] + "/tp_sum_*_n*.json")):
    side = path.rsplit("/", 1)[-1].split("_")[2]
    for b in json.load(open(path))["benchmarks"]:
        if "TP/" in b["name"] and "items/s" in b:
            print(f"| {b['name']} | {side} | {b['items/s']:.1f} | {b['allreduce_ms/token']:.3f} | "
                  f"{b['allreduce_%token']:.1f} | {b.get('%ceiling', 0):.1f} |")
PY
}
step_drift() {  # issue 39: the same 4 cases on GPU 0, 3 processes' worth of repetitions, in every device call
  # (drift_<time>.json): their medians from calls on different machines of one kind give the drift
  CUDA_VISIBLE_DEVICES=0 wall $bench \
    --benchmark_filter='^(LayerNorm/bf16/4096x(8192|16384)|Gemv/bf16/16384|GatherGemv/bf16/8192)/cuda$' \
    --benchmark_repetitions=3 --benchmark_out="$out/drift_$(date -u +%H%M%S).json" --benchmark_out_format=json \
    >"$out/drift.txt" 2>&1
}
step_replay() {
  wall $bench --oplog "${OPLOG:-../shared/data/oplogs/BertForMaskedLM_training.txt}" --output "$out/replay_bert.csv" \
    --benchmark_out="$out/replay_bert.json" --benchmark_out_format=json >"$out/replay_bert.txt" 2>&1
  OPBENCH_BUILD_DIR=build python3 -m pytest -q tests/python/test_replay.py >"$out/replay_pytest.txt" 2>&1
  log "replay pytest rc $?: $(tail -1 "$out/replay_pytest.txt")"
}

# The sha the binaries record: .opbench_sha when the tree was copied here with it, else git's HEAD, which a
# copied tree's .git may hold stale (say so: every result would carry the wrong commit).
if [ -s .opbench_sha ]; then
  sha=$(cat .opbench_sha)
else
  sha="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown) (git HEAD: no .opbench_sha; stale if this tree was copied)"
fi
log "$(date -u +%FT%TZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), sha $sha"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build ctest sweep seed eager compile ncu graph aa trace rows replay collective)
for s in "${steps[@]}"; do log "step $s"; "step_$s"; done
# The sweep's last lines, when this call swept (an older sweep.txt in $out is not this call's; without
# one a build-only call exited 1).
if [[ " ${steps[*]} " == *" sweep "* ]]; then tail -25 "$out/sweep.txt"; fi
