#!/usr/bin/env python3
"""Cross-checks GPU-utilization figures on recorded traces:
  - on every trace: opbench-trace's (opbench_tools.trace_util) busy and mm-busy time against the seed
    algorithm (gpu_util_seed_algorithm.py), seed patterns, to the microsecond;
  - on bench_ops traces: bench_ops' own trace_busy_us / trace_mm_busy_us counters against opbench-trace
    (today's mm patterns, which bench_ops uses).
  gpu_util_crosscheck.py TRACE_DIR [BENCH_OPS.json]      exit 1 when any figure differs by >= 1 us"""
import json
import pathlib
import sys

import gpu_util_seed_algorithm as seed
from opbench_tools import trace_util


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    traces = sorted(pathlib.Path(sys.argv[1]).glob("*.json"))
    counters = {}
    if len(sys.argv) == 3:
        for b in json.load(open(sys.argv[2]))["benchmarks"]:
            if "trace_busy_us" in b:
                counters[b["name"].replace("/", "_") + ".trace.json"] = b
    worst = 0.0
    print(f"{'trace':44} {'check':22} {'ours us':>12} {'other us':>12} {'diff us':>9}")
    for path in traces:
        ours = trace_util.analyze_file(str(path))
        seed_busy, seed_mm = seed.seed_figures(seed.read_events(str(path)))[:2]
        rows = [("busy vs seed", ours.busy_us, seed_busy), ("mm busy vs seed", ours.mm_busy_us, seed_mm)]
        if path.name in counters:
            modern = trace_util.analyze_file(str(path), mm_patterns=trace_util.SEED_MM_PATTERNS +
                                             trace_util.MODERN_MM_PATTERNS)
            b = counters[path.name]
            rows += [("bench_ops busy", b["trace_busy_us"], modern.busy_us),
                     ("bench_ops mm busy", b["trace_mm_busy_us"], modern.mm_busy_us)]
        for check, a, b in rows:
            worst = max(worst, abs(a - b))
            print(f"{path.name[:44]:44} {check:22} {a:12.3f} {b:12.3f} {a - b:+9.3f}")
    print(f"largest difference {worst:.6f} us")
    sys.exit(0 if worst < 1.0 else 1)


if __name__ == "__main__":
    main()
