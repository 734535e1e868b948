#!/usr/bin/env bash
# Fuzzes the operator-input log parser (lib/oplog) with libFuzzer + ASan + UBSan for a bounded time.
#   tools/fuzz_oplog.sh [SECONDS=60] [extra libFuzzer flags, e.g. -jobs=2]
# Needs clang++ (Debian package: clang). Seeds: the logs in ../shared/data/oplogs (OPBENCH_SHARED_DIR
# overrides) and a few malformed lines. Work dir (build/fuzz-oplog, OPLOG_FUZZ_DIR overrides) keeps
# the growing corpus between runs; a crashing input lands in its artifacts/ folder.
# Exits 0 when the time ran out with no finding, non-zero on a crash, leak, timeout or build error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
shift || true
cxx=${CLANGXX:-clang++}
shared=${OPBENCH_SHARED_DIR:-$root/../shared}
work=${OPLOG_FUZZ_DIR:-$root/build/fuzz-oplog}
say() { echo "[fuzz_oplog] $*" >&2; }

if ! command -v "$cxx" >/dev/null; then
  say "needs $cxx: install the Debian package 'clang' (tools/setup.sh lists it)"
  exit 2
fi
mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"

say "building $work/oplog_fuzz with $cxx"
"$cxx" -std=c++17 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$root/lib" "$root/tests/fuzz/oplog_fuzz.cpp" "$root"/lib/oplog/*.cpp -o "$work/oplog_fuzz"

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

say "fuzzing for ${secs}s (artifacts: $work/artifacts/)"
set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$work/oplog_fuzz" "$work/corpus" "$work/seeds" \
  -dict="$work/oplog.dict" -max_total_time="$secs" -max_len=8192 -timeout=10 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  say "FAILED (exit $rc): reproduce with $work/oplog_fuzz $work/artifacts/<file>"
else
  say "no findings in ${secs}s"
fi
exit "$rc"
