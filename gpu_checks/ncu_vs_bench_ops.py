#!/usr/bin/env python3
"""Compares a bench_ops case's median time with Nsight Compute's kernel time.

  ncu_vs_bench_ops.py NCU.csv BENCH_OPS.json CASE

NCU.csv is `ncu --csv --metrics gpu__time_duration.sum ...` output; the figure is the median over
the profiled kernels. Prints both and the difference of bench_ops from ncu in percent."""
import csv
import statistics
import sys

from opbench_tools import benchmark_json

SCALE_TO_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}


def ncu_median_us(path):
    values = []
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) > 3 and row[-3] == "gpu__time_duration.sum":
                values.append(float(row[-1].replace(",", "")) * SCALE_TO_US[row[-2]])
    if not values:
        sys.exit(f"ncu_vs_bench_ops.py: {path}: no gpu__time_duration.sum rows")
    return statistics.median(values), len(values)


def bench_ops_us(path, case):
    medians = benchmark_json.medians_us(path)
    if case not in medians:
        sys.exit(f"ncu_vs_bench_ops.py: {path}: no successful case {case}")
    return medians[case]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ncu_us, count = ncu_median_us(sys.argv[1])
    ours = bench_ops_us(sys.argv[2], sys.argv[3])
    print(f"{sys.argv[3]}: ncu median of {count} kernels {ncu_us:.2f} us; bench_ops {ours:.2f} us; "
          f"bench_ops - ncu = {ours - ncu_us:+.2f} us ({100 * (ours - ncu_us) / ncu_us:+.2f}%)")


if __name__ == "__main__":
    main()
