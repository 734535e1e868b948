#!/usr/bin/env bash
# Configures and builds opbench (Release) into ${BUILD_DIR:-build}. Finds LibTorch through the python
# that scripts/setup.sh chose (the venv on CPU machines, the image's python3 on the GPU machine).
# Usage: scripts/build.sh [extra cmake -D options]     env: BUILD_DIR, PYTHON, JOBS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
if [ -z "${PYTHON:-}" ]; then
  PYTHON=$("$root/scripts/setup.sh" | sed -n 's/^PYTHON=//p')
fi
prefix=$("$PYTHON" -c 'import torch; print(torch.utils.cmake_prefix_path)')
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  echo "[build] configuring $build_dir (LibTorch prefix $prefix)" >&2
fi
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DOPBENCH_TORCH_PREFIX="$prefix" -DPython_EXECUTABLE="$PYTHON" "$@" >&2
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" >&2
echo "PYTHON=$PYTHON"
