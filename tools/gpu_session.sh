#!/usr/bin/env bash
# One go on the GPU machine: build, ctest (GPU tests run), the default sweep, and the acceptance
# checks (eager reference, ncu cross-check, wall time). Writes logs and JSON/CSV to $OUT (default
# results/<gpu>/), prints a short table last.  Usage: tools/gpu_session.sh [bench_ops flags...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
out=${OUT:-$root/results/$gpu}
mkdir -p "$out"
log() { echo "[gpu_session] $*" | tee -a "$out/session.log" >&2; }
log "$(date -u +%FT%TZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"

JOBS=16 bash tools/build.sh >"$out/build.log" 2>&1 || { log "build failed"; tail -40 "$out/build.log"; exit 1; }
ctest --test-dir build --output-on-failure -j 4 >"$out/ctest.log" 2>&1; log "ctest exit $?: $(tail -3 "$out/ctest.log" | head -1)"
grep -E "Skipped|Failed|\*\*\*" "$out/ctest.log" | head -20 >&2

start=$(date +%s.%N)
build/bench_ops --benchmark_filter='LayerNorm/bf16/.*' --benchmark_out="$out/layer_norm_bf16.json" \
  --benchmark_out_format=json "$@" >"$out/layer_norm_bf16.txt" 2>&1
log "LayerNorm bf16 sweep: $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s wall, process start included"
python3 tools/eager_reference.py --family layer_norm --compare "$out/layer_norm_bf16.json" \
  --json "$out/eager_layer_norm.json" 2>&1 | tee -a "$out/session.log"

if command -v ncu >/dev/null; then
  ncu --clock-control none --metrics gpu__time_duration.sum -k regex:layer_norm --launch-count 20 --csv \
    build/bench_ops --benchmark_filter='LayerNorm/bf16/4096x8192/aten$' --opbench_max_time=0.5 \
    >"$out/ncu_layer_norm.csv" 2>&1
  python3 - "$out/ncu_layer_norm.csv" "$out/layer_norm_bf16.json" <<'PY' 2>&1 | tee -a "$out/session.log"
import csv, json, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10 and r[-3] == "gpu__time_duration.sum"]
unit = rows[0][-2] if rows else "?"
vals = [float(r[-1].replace(",", "")) for r in rows]
scale = {"ns": 1e-3, "usecond": 1, "us": 1, "nsecond": 1e-3, "msecond": 1e3}.get(unit, 1)
ncu_us = statistics.median(vals) * scale
ours = [b for b in json.load(open(sys.argv[2]))["benchmarks"] if b["name"] == "LayerNorm/bf16/4096x8192/aten"][0]
print(f"ncu median of {len(vals)} kernels: {ncu_us:.2f} us; bench_ops: {ours['real_time']:.2f} us; "
      f"diff {100 * (ours['real_time'] - ncu_us) / ncu_us:+.2f}%")
PY
fi
log "default sweep"
OPBENCH_RESULTS_DIR="$out" bash tools/run.sh "$@" >"$out/sweep.txt" 2>&1
tail -40 "$out/sweep.txt"
