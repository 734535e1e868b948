#!/bin/bash
# A stand-in for bench_ops: lists two cases; a shard writes its JSON entry for case A at once, then waits;
# on SIGTERM/SIGINT it closes the JSON and exits 143/130.
out=""; list=0
for a in "$@"; do
  case "$a" in --benchmark_list_tests) list=1;; --benchmark_out=*) out="${a#--benchmark_out=}";; esac
done
if [ $list = 1 ]; then echo "A/fp32/1/aten"; echo "B/fp32/1/aten"; exit 0; fi
printf '{"context": {"opbench_device_id": "cpu"}, "benchmarks": [{"name": "A/fp32/1/aten", "run_type": "iteration", "real_time": 1.0, "time_unit": "us"}' > "$out"
finish() { printf ']}\n' >> "$out"; exit $1; }
trap 'finish 143' TERM
trap 'finish 130' INT
echo started >&2
sleep 30 </dev/null >/dev/null 2>&1 & wait $!
finish 0
