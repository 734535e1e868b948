#!/usr/bin/env python3
"""A stand-in for bench_ops in the tests of opbench-compare --binaries and opbench-gate-selftest: one process
writes one Google Benchmark JSON repetition of its cases, each time lognormal around its mean with its CV,
seeded by FAKE_BENCH_SEED and the output file's name (the same run gives the same numbers). It honours
--benchmark_filter (a Python regex searched in the name), --benchmark_out, --opbench_inject_slowdown=PCT
(every selected case PCT% slower; bench_ops calibrates a delay to the same effect) and ignores the rest.
FAKE_BENCH_CASES: JSON {name: [mean us, CV]}; FAKE_BENCH_LOG: a file each run appends its filter to. The
JSON's context carries the CUDA_VISIBLE_DEVICES it saw (fake_cuda_visible_devices)."""
import json
import os
import random
import re
import sys
import zlib

CASES = {"Calm/bf16/64/aten": [100.0, 0.002], "Noisy/bf16/64/aten": [50.0, 0.02]}


def main() -> int:
    args = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    cases = json.loads(os.environ.get("FAKE_BENCH_CASES", "null")) or CASES
    out = args["--benchmark_out"]
    seed = zlib.crc32(f"{os.environ.get('FAKE_BENCH_SEED', '0')}:{os.path.basename(out)}".encode())
    rng = random.Random(seed)
    slowdown = 1 + float(args.get("--opbench_inject_slowdown", "0")) / 100
    pattern = re.compile(args.get("--benchmark_filter", "."))
    if os.environ.get("FAKE_BENCH_LOG"):
        with open(os.environ["FAKE_BENCH_LOG"], "a") as log:
            log.write(args.get("--benchmark_filter", ".") + "\n")
    entries = []
    for name, (mean_us, cv) in cases.items():
        if pattern.search(name):
            t = mean_us * slowdown * rng.lognormvariate(0.0, cv)
            entries.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                            "repetition_index": 0, "iterations": 1, "real_time": t, "cpu_time": t,
                            "time_unit": "us"})
    with open(out, "w") as f:
        context = {"opbench_sha": "fake", "fake_cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
        json.dump({"context": context, "benchmarks": entries}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
