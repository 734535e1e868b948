#!/usr/bin/env bash
# Fuzzes an input reader with libFuzzer + ASan + UBSan for a bounded time.
#   scripts/fuzz.sh oplog  [SECONDS=60] [libFuzzer flags]   the operator-input log parser (replay/oplog)
#   scripts/fuzz.sh inputs [SECONDS=60] [libFuzzer flags]   targets files and the rows CSV reader
#   scripts/fuzz.sh oplog|inputs --build-only                build the harness and its seeds, no fuzzing
# Needs clang++ (Debian package: clang). The oplog seeds: the logs in ../shared/data/oplogs
# (OPBENCH_SHARED_DIR overrides) and a few malformed lines; the inputs seeds: targets/*.json and CSV
# rows. Work dir (build/fuzz-<target>, FUZZ_DIR overrides) keeps the growing corpus between runs; a
# crashing input lands in its artifacts/ folder. A harness newer than every source under tests/fuzz, lib,
# reporters and replay/oplog (and this script) is reused, not rebuilt: scripts/test.sh builds both while
# the setup installs torch, and ctest's fuzz tests then only fuzz.
# Exits 0 when the time ran out with no finding, non-zero on a crash, leak, timeout or build error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: scripts/fuzz.sh oplog|inputs [SECONDS] [libFuzzer flags]}
shift
secs=${1:-60}
shift || true
build_only=0
[ "$secs" = --build-only ] && build_only=1
cxx=${CLANGXX:-clang++}
shared=${OPBENCH_SHARED_DIR:-$root/../shared}
work=${FUZZ_DIR:-$root/build/fuzz-$target}
say() { echo "[fuzz $target] $*" >&2; }

if ! command -v "$cxx" >/dev/null; then
  say "needs $cxx: install the Debian package 'clang' (scripts/setup.sh lists it)"
  exit 2
fi
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
flags=(-std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
dict=()

# Compiles the harness (arguments: sources and include flags) into $work/fuzz unless it is up to date,
# through a temporary name: a build running beside another never leaves a half-written binary.
build_fuzzer() {
  local newer
  if [ -x "$work/fuzz" ]; then
    newer=$(find "$root/tests/fuzz" "$root/lib" "$root/reporters" "$root/replay/oplog" "${BASH_SOURCE[0]}" \
      -newer "$work/fuzz" -print -quit)
    if [ -z "$newer" ]; then
      say "reusing $work/fuzz: no source is newer"
      return
    fi
  fi
  "$cxx" "${flags[@]}" "$@" -o "$work/fuzz.$$"
  mv -f "$work/fuzz.$$" "$work/fuzz"
}

seed_inputs() {
  build_fuzzer -I"$root/lib" -I"$root/reporters" "$root/tests/fuzz/inputs_fuzz.cpp" \
    "$root/lib/targets.cpp" "$root/lib/check.cpp" "$root/reporters/csv_format.cpp"
  local i=0 f
  for f in "$root"/targets/*.json; do { printf '\x00'; cat "$f"; } >"$work/seeds/targets_$i"; i=$((i + 1)); done
  printf '\x01name,metric,target\nx,"a ""q"" b",1e308\n"open\n' >"$work/seeds/csv_0"
  printf '\x00{"devices": ["X"], "rule": "r", "targets": [{"experiment": "e", "metric": "m", "dtype": "int8", "target": 1e400}]}' >"$work/seeds/targets_big"
}

seed_oplog() {
  build_fuzzer -I"$root" "$root/tests/fuzz/oplog_fuzz.cpp" "$root"/replay/oplog/*.cpp
  dict=(-dict="$work/oplog.dict")
  # Seeds: the real logs and one file per malformed line.
if compgen -G "$shared/data/oplogs/*.txt" >/dev/null; then
  cp "$shared"/data/oplogs/*.txt "$work/seeds/"
else
  say "no logs under $shared/data/oplogs: seeding from the malformed lines only"
fi
i=0
while IFS= read -r line; do
  printf 'Operator: aten.add.Tensor\n%s\n' "$line" >"$work/seeds/malformed_$i.txt"
  i=$((i + 1))
done <<'SEEDS'
cnt: 1, ((T([2, 3], f16), T([2, 3], f16)), {}
cnt: 2, ((T([2, 3], f17),), {})
cnt: 3, ((ST([4, 4], f32, torch.sparse_coo, True, 8),), {})
cnt: 4, ((T([2], f16),), {}) trailing
cnt: 5, ((T([2], f16, stride=(1,)), -1e-05, inf, None, 'cuda', "x\n"), {'dtype': f16, 'layout': torch.strided})
cnt: 6, ((T(size=[2, 3], dtype=bf16, stride=[3, 1]), [True, (1,)], -9223372036854775808), {'device': device(type='cuda')})
cnt: 7, (('it\'s', "a \\ b", '\U0001F600\u00e9\x7f\101', -(5), - -2.5e+300, 1e999, .5, 5.), {"k": th.strided})
Operator: add
SEEDS

# Tokens of the format, so mutations produce plausible lines.
cat >"$work/oplog.dict" <<'DICT'
"Operator: aten."
".default"
"cnt: "
"((T(["
"], f16"
", stride=("
"), {})"
"{'dtype': "
"'layout': torch.strided"
"th.contiguous_format"
"torch.float16"
"bf16"
"c128"
"ST("
"None"
"True"
"False"
"inf"
"nan"
"1e-05"
"-9223372036854775808"
"\\x00"
"\\u00e9"
",)"
DICT
}

case "$target" in
  oplog) seed_oplog ;;
  inputs) seed_inputs ;;
  *) say "unknown target '$target' (oplog or inputs)"; exit 2 ;;
esac
if [ "$build_only" = 1 ]; then
  say "harness ready: $work/fuzz"
  exit 0
fi
say "fuzzing for ${secs}s (artifacts: $work/artifacts/)"
set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$work/fuzz" "$work/corpus" "$work/seeds" \
  "${dict[@]}" -max_total_time="$secs" -max_len=8192 -timeout=10 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  say "FAILED (exit $rc): reproduce with $work/fuzz $work/artifacts/<file>"
else
  say "no findings in ${secs}s"
fi
exit "$rc"
