#!/usr/bin/env python3
"""Summary of verify/tune/kernel_tune's CSV: per case, the library's own launch (the configuration
`launch`: what bench_ops runs) beside the fastest configurations, and every failed check."""
import csv
import sys
from collections import defaultdict


def main(path):
    by_case = defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            by_case[(row["kind"], row["dtype"], row["case"])].append(row)
    failed = [(k, r["config"]) for k, rows in by_case.items() for r in rows if r["check"] != "ok"]
    print(f"{'case':40} {'launch us':>9} {'best':>10} {'us':>8} {'GB/s':>6} {'gain':>6}  next")
    for key, rows in by_case.items():
        ok = sorted((r for r in rows if r["check"] == "ok" and not r["config"].startswith("launch")),
                    key=lambda r: float(r["us"]))
        mine = next((r for r in rows if r["check"] == "ok" and r["config"] == "launch"), None)
        if not ok:   # a case of launch rows only: each of them
            print(f"{key[1] + ' ' + key[2]:40} " + " ".join(f"{r['config']}:{float(r['us']):.2f}" for r in rows))
            continue
        best = ok[0]
        gain = f"{(float(mine['us']) / float(best['us']) - 1) * 100:+.1f}%" if mine else "-"
        nxt = " ".join(f"{r['config']}:{float(r['us']):.2f}" for r in ok[1:4])
        print(f"{key[1] + ' ' + key[2]:40} {mine['us'] if mine else '-':>9} {best['config']:>10} "
              f"{float(best['us']):8.2f} {best['GBps']:>6} {gain:>6}  {nxt}")
    for key, config in failed:
        print(f"FAILED check: {key} {config}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
